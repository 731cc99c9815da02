// What an engine run reports: the total, nccl-tests style figures and a
// breakdown into terms that add up to the total. Engines, simulate(), the
// store and the GUI all speak these types; this header depends on no engine.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "schedule/schedule.h"

namespace scin {

/// Terms of the breakdown; they add up to the total time.
enum class Term {
  Launch,          // kernel launch / stream-op overheads
  Sync,            // barriers, flag polls, protocol per-step handshakes
  LinkLatency,     // wire/PHY traversals
  SwitchLatency,   // switch port-to-port traversals
  MemoryLatency,   // remote HBM accesses
  Serialisation,   // bytes / link bandwidth
  Reduction,       // arithmetic throughput (ISA, NVLS, accelerator HBM)
  Quantisation,    // (de)quantisation throughput
  Count
};
constexpr int kTermCount = static_cast<int>(Term::Count);
const char* to_string(Term t);
/// A sentence explaining what the term covers, for --explain and tooltips.
const char* describe(Term t);

struct Breakdown {
  double ns[kTermCount] = {};
  double total_ns() const;
  double& operator[](Term t) { return ns[static_cast<int>(t)]; }
  double operator[](Term t) const { return ns[static_cast<int>(t)]; }
};

/// When a step started (deps met) and finished, in ns from the collective's start.
struct StepTiming {
  double start_ns = 0;
  double finish_ns = 0;
};

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

/// nccl-tests bus-bandwidth factor for All-Reduce: 2(N-1)/N.
double busbw_factor(int gpus);

nlohmann::json to_json(const SimResult& r);
nlohmann::json to_json(const Breakdown& b);

}  // namespace scin
