// SCIN and SCIN+INQ by classes of ports (docs/model.md, "Alike planes and
// alike ranks"): the analytic result of the one-switch star's SCIN schedule
// without compiling it. Internal to the analytic engine and simulate().
#pragma once

#include <cstddef>
#include <optional>

#include "base/run_context.h"
#include "engines/analytic/analytic.h"
#include "fabric/config.h"
#include "schedule/algorithms.h"

namespace scin {

/// The analytic result of build_scin's schedule (`inq`: SCIN+INQ) on a star,
/// from its structure: per plane, N arrives, the counter wait, W waves of an
/// ISA read of every accelerator (INQ: a requantise) and a multicast to every
/// accelerator, N write acks, the acks' wait and N flags; then each rank's
/// flag wait (INQ: after N launches and each rank's quantise chains, and
/// before its dequantise). The engine books the ports by class (ports_alike,
/// analytic.h): every read uses the plane's egress class once per
/// accelerator, every multicast its ingress class, so each plane's four
/// queues (egress and ingress representatives, ISA reduce and INQ units) are
/// used by that plane's waves alone, and each accelerator's HBM (INQ) by its
/// own quantise steps alone. Steps are taken in order of (ready time, index)
/// whatever else is queued (costs are >= 0, deps come first), so each of
/// these parts is booked alone, as book() books it, in that order: the same
/// reservations, to the last bit. Planes with the same stripe, costs and
/// start are booked once; ranks whose launches end together share their
/// quantise chains. The other steps hold nothing: their times are maxima and
/// sums, computed per rank and plane. The critical path is walked back as
/// run_analytic walks it.
/// Returns nothing where the fabric or the steps' costs are not of that shape
/// (two tiers, a mesh, a graph file, the ISA off, a negative cost, an
/// unexpected use): the caller compiles and books then. The result equals
/// run_analytic() on the compiled schedule bit for bit (time, every breakdown
/// term, the critical path, max_link_bytes; with `with_steps`, every step's
/// start and finish).
std::optional<AnalyticResult> run_analytic_scin(const Config& cfg, const Collective& c, bool inq,
                                                const RunContext& ctx = {}, bool with_steps = false);

/// The compiled schedule's step count if run_analytic_scin() answers for
/// `cfg` and `c` (it books only the planes' waves, once per plane alike, and
/// INQ's quantise steps once per class of ranks), else 0. Checks what
/// run_analytic_scin checks before booking (its booking then always
/// answers): O(N) step costs, no booking. For estimates. `booked` (optional):
/// at most how many steps it books through queues (every plane's waves, INQ's
/// quantise steps once per class of ranks).
std::size_t scin_alike_steps(const Config& cfg, const Collective& c, bool inq, std::size_t* booked = nullptr);

}  // namespace scin
