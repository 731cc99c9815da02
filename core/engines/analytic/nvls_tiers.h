// NVLS on two tiers without compiling it (issue 14: at 1024 GPUs its compiled
// schedule held a million multicast destinations and a million barrier deps,
// half of a 1 GiB point's time in first touches of that memory). Internal to
// the analytic engine and simulate().
#pragma once

#include <cstddef>
#include <optional>

#include "base/run_context.h"
#include "engines/analytic/analytic.h"
#include "fabric/config.h"
#include "schedule/algorithms.h"

namespace scin {

/// The analytic result of build_nvls_tiers' schedule (NVLS on a two-tier
/// fabric) as run_analytic() gives it on the compiled schedule, to the last
/// bit: time, every breakdown term, the critical path, every step's start and
/// finish, max_link_bytes. Its steps come from NvlsTiersForm
/// (schedule/builder.h), the form the builder emits them from, one at a time
/// as book() takes them: the same steps, deps and costs in the same order, so
/// the same booking. Each barrier's waits depend on one join of its arrives
/// (joins.h), as run_analytic books long shared dep lists. What is not kept is
/// the schedule: no Step per step, no list of n destinations per store, no
/// copy of the n arrives per wait (O(n) memory besides the booking's records).
/// Nothing for another fabric, a graph file, or where NVLS is unsupported
/// (the caller compiles, and compile() says why).
std::optional<AnalyticResult> run_analytic_nvls_tiers(const Config& cfg, const Collective& c, const RunContext& ctx = {});

/// The steps run_analytic_nvls_tiers() books for `cfg` and `c` (the form's
/// 5N + 3NC and two joins) if it answers, else 0.
std::size_t nvls_tiers_steps(const Config& cfg, const Collective& c);

/// Tests: stores and reads costed from their class's template (nvls_tiers.cc)
/// so far, and the reads among them; with the check on, each of them also
/// costed in full and compared, the differences counted.
std::size_t& nvls_tiers_templated_total();
std::size_t& nvls_tiers_templated_reads();
bool& nvls_tiers_check_templates();
std::size_t& nvls_tiers_template_mismatches();

}  // namespace scin
