// SCIN on two tiers by planes alike (issue 14: a 1024-GPU two-tier point
// compiled and booked every plane's waves). Internal to the analytic engine
// and simulate().
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

#include "base/run_context.h"
#include "engines/analytic/analytic.h"
#include "fabric/config.h"
#include "schedule/algorithms.h"

namespace scin {

/// The analytic result of build_scin_tiers' SCIN, SCIN+INQ or scin-inq-uplink
/// schedule (`algo`; any other algorithm: nothing) on a two-tier fabric with
/// its planes alike booked once: time, every breakdown
/// term, the critical path (the full schedule's step indices) and
/// max_link_bytes as run_analytic() on the compiled schedule gives them, to
/// the last bit; no per-step timings (`steps` stays empty).
///
/// Each plane reduces its stripe of the message on its own switches, ports
/// and trunks, from the ranks' arrives (which wait for nothing) to its flags;
/// no resource is shared between planes (the ISA reads no HBM), so a plane's
/// steps are booked alike whatever the others do, and planes with stripes of
/// the same element count have the same steps, costs and times. Only the
/// first plane of each stripe size is compiled and booked (split() makes one
/// or two sizes: 1 GiB over 18 planes, two), then each rank's final wait on
/// those planes' flags: its time is the latest flag's, and its first latest
/// flag (book()'s bound dependency) is the first plane of the latest size,
/// as over every plane. With INQ each rank first quantises every plane's
/// waves on its own HBM (one chain per plane from its launch: the planes meet
/// there, a later plane's chain queueing behind the earlier ones', so no
/// two planes start alike); where every launch ends together every rank's
/// chains have the same times, so only each leaf's first rank quantises and
/// the others' arrives and their leaf's reads wait for its steps (the reads'
/// first latest dep is that rank's, as over the leaf's). Its planes of a
/// size have the same steps at other times: one block of each size is
/// compiled and booked once per plane against that plane's quantise times
/// (scin_inq_planes.h; it also declines where the last step is not a
/// rank's dequantise, and the caller compiles every plane). Scin-inq-uplink
/// quantises in the switches only (each leaf's partial, the spine's sum; the
/// leaves dequantise it on their own ISA), on each plane's own units: its
/// planes are alike as SCIN's.
/// The path's indices are moved to the full schedule's (the ranks' quantise
/// runs, each plane's block in plane order, then each rank's wait and
/// dequantise), and each transfer's bytes count once per plane of its size
/// (link_bytes). Returns nothing for SCIN+INQ with launches serialised, a
/// star, a graph file, one plane, nothing alike, or where the algorithm is
/// unsupported: the caller compiles every plane then.
std::optional<AnalyticResult> run_analytic_scin_tiers(const Config& cfg, const Collective& c, Algorithm algo,
                                                      const RunContext& ctx = {});

/// The schedule run_analytic_scin_tiers() compiles and books (no labels), or
/// nothing where it declines. For tests of the estimate.
std::optional<Schedule> compile_scin_tiers(const Config& cfg, const Collective& c, Algorithm algo);

/// link_bytes(s, plane_weight).max_link_bytes() of a build_scin_tiers
/// schedule (full or reduced) in O(steps): each step's first accelerator
/// stands for all (every accelerator's links carry the same bytes); nothing
/// where a transfer is of another shape than that builder's.
std::optional<double> scin_tiers_max_link_bytes(const Schedule& s, const std::vector<double>& plane_weight);

/// The regions (sources and destinations) of build_scin_tiers' schedule: the
/// full one's and the one run_analytic_scin_tiers() compiles.
struct ScinTiersRegions {
  std::size_t total = 0, booked = 0;
};

/// For estimates, without compiling: the steps run_analytic_scin_tiers()
/// compiles and books for `cfg` and `c` if it answers, else 0. `total`
/// (optional): the full schedule's; `regions` (optional): both schedules'
/// regions. O(planes).
std::size_t scin_tiers_steps(const Config& cfg, const Collective& c, Algorithm algo, std::size_t* total = nullptr,
                             ScinTiersRegions* regions = nullptr);

}  // namespace scin
