// The one entry point that runs a collective: compile the algorithm's schedule,
// execute it on the chosen engine, and report nccl-tests style figures.
// The CLI, sweeps, inference and the GUI all call this.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "schedule/algorithms.h"
#include "engines/analytic/analytic.h"
#include "fabric/config.h"

namespace scin {

struct SimResult {
  std::string algorithm;
  std::string variant;            // e.g. the ring protocol auto picked ("LL")
  std::string engine;             // "analytic" | "packet"
  std::uint64_t bytes = 0;        // message size per rank
  DType dtype = DType::Bf16;
  int gpus = 0;
  double time_ns = 0;
  double algbw_GBps = 0;          // bytes / time
  double busbw_GBps = 0;          // algbw * 2(N-1)/N, as nccl-tests defines it
  double max_link_bytes = 0;      // real bytes on the busiest accelerator link direction
  Breakdown breakdown;            // sums to time_ns
  nlohmann::json extra;           // engine-specific results (packet statistics, ...)
  double time_us() const { return time_ns / 1e3; }
};

/// Engines available in this build ("analytic", and "packet" once linked in).
std::vector<std::string> engine_names();

/// Runs `algo` on `cfg`. Validates everything first; throws Error for bad input.
SimResult simulate(const Config& cfg, const std::string& algo, const Collective& c,
                   const std::string& engine = "analytic");

/// nccl-tests bus-bandwidth factor for All-Reduce: 2(N-1)/N.
double busbw_factor(int gpus);

/// Sizes from min to max multiplying by factor (nccl-tests -b/-e/-f).
std::vector<std::uint64_t> size_range(std::uint64_t min_bytes, std::uint64_t max_bytes,
                                      std::uint64_t factor);

nlohmann::json to_json(const SimResult& r);
nlohmann::json to_json(const Breakdown& b);

}  // namespace scin
