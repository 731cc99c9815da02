// NVLS by classes of ports, for estimates (simulate.cc's estimate()): what
// run_analytic_nvls (analytic.h) will do, without doing it.
#pragma once

#include <cstddef>
#include <optional>

#include "engines/analytic/analytic.h"
#include "fabric/config.h"
#include "schedule/algorithms.h"

namespace scin {

/// The number of steps run_analytic_nvls() books for `cfg` and `c` (the
/// compiled NVLS schedule's, 5N + 2NC) if it answers, else 0 (then the
/// schedule is compiled and booked). Checks what run_analytic_nvls checks
/// before booking (the fabric, the steps' costs and their shape; its booking
/// then always answers): O(N) step costs per chunk size, no booking.
std::size_t nvls_alike_steps(const Config& cfg, const Collective& c);

/// run_analytic_nvls() (analytic.h) with its periodic jump on or off (tests:
/// with it, the result must be the booking's without it, bit for bit).
/// `jumped_chunks` (optional): the chunks per rank the jump did not book
/// (0 where it did not apply). `repeats` (optional, two ints): the periods the
/// critical path's walk repeated through the jumped chunks, and the member
/// uses of the copies it read as translates (members alone: the records the
/// booking kept; with `skip_copies` false, the member replays that skipped
/// the copies, nvls_walk.h). `skip_copies` false: the members the walk visits
/// are replayed (as for member groups), booking the copies as they do where
/// their queues do not repeat (the copies' records are then written and the
/// walk does not repeat).
std::optional<AnalyticResult> run_analytic_nvls_jump(const Config& cfg, const Collective& c, bool with_steps, bool jump,
                                                     int* jumped_chunks = nullptr, int* repeats = nullptr,
                                                     bool skip_copies = true);

}  // namespace scin
