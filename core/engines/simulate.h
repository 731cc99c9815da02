// The one entry point that runs a collective: compile the algorithm's schedule,
// execute it on the chosen engine, and report nccl-tests style figures.
// The CLI, sweeps, inference and the GUI all call this.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/run_context.h"
#include "engines/engine.h"
#include "fabric/config.h"
#include "model/result.h"
#include "schedule/algorithms.h"

namespace scin {

/// Runs `algo` on `cfg` with a timing engine. Validates everything first;
/// throws Error for bad input and Cancelled once ctx.stop is requested. With
/// ring.protocol = auto the ring runs with the protocol the analytic engine
/// predicts fastest (NCCL's own tuner picks by its cost model: calib/nccl_tuning.h);
/// SimResult.variant names it.
SimResult simulate(const Config& cfg, Algorithm algo, const Collective& c, EngineId engine,
                   const RunContext& ctx = {});
/// The same with names (parsed once; errors name the field and the allowed values).
SimResult simulate(const Config& cfg, const std::string& algo, const Collective& c, const std::string& engine,
                   const RunContext& ctx);
SimResult simulate(const Config& cfg, const std::string& algo, const Collective& c,
                   const std::string& engine = "analytic");

/// The schedule simulate() runs: the algorithm compiled for `cfg`, with a ring's
/// protocol resolved. `cfg_out` (optional) receives the config it was compiled for.
Schedule schedule_for(const Config& cfg, Algorithm algo, const Collective& c, Config* cfg_out = nullptr);

/// What simulate() will cost on `engine`, without running it (compiles the schedule).
WorkEstimate estimate(const Config& cfg, Algorithm algo, const Collective& c, EngineId engine);

/// Sizes from min to max multiplying by factor (nccl-tests -b/-e/-f).
std::vector<std::uint64_t> size_range(std::uint64_t min_bytes, std::uint64_t max_bytes,
                                      std::uint64_t factor);

}  // namespace scin
