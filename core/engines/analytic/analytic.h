// The analytic engine: critical path of a schedule with alpha-beta costs and
// link occupancy, plus a per-term breakdown that explains the number.
//
// Each step occupies the resources it uses (accelerator link ports per plane
// and direction, switch reduction / INQ units, accelerator HBM) for
// amount / rate, once its deps have finished and the resources are free.
// Latency (wire, switch traversal, memory access) is added after the
// occupancy and does not hold resources, so chunks pipeline.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "fabric/config.h"
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
const char* to_string(Term t);
/// A sentence explaining what the term covers, for --explain and tooltips.
const char* describe(Term t);

struct Breakdown {
  double ns[static_cast<int>(Term::Count)] = {};
  double total_ns() const;
  double& operator[](Term t) { return ns[static_cast<int>(t)]; }
  double operator[](Term t) const { return ns[static_cast<int>(t)]; }
};

struct StepTiming {
  double start_ns = 0;
  double finish_ns = 0;
};

struct AnalyticResult {
  double time_ns = 0;
  Breakdown breakdown;               // sums to time_ns along the critical path
  std::vector<StepTiming> steps;     // per step
  std::vector<StepId> critical_path; // first to last
  double max_link_bytes = 0;         // busiest accelerator link direction
};

/// Per-step cost model shared by the engines: latency parts and resource use.
struct StepCost {
  double fixed_ns = 0;               // before occupancy: launch, poll, protocol overhead
  Term fixed_term = Term::Sync;
  double latency_ns[static_cast<int>(Term::Count)] = {};  // after occupancy (link/switch/memory)
  struct Use { int resource; double amount_bytes; double rate_GBps; Term term; };
  std::vector<Use> uses;             // resources held for amount/rate
};

/// Resource indices for a schedule on a config (ports, units, HBM).
struct ResourceMap {
  int gpus = 0, planes = 0;
  Topology topology = Topology::Star;
  int egress(int gpu, int plane_or_peer) const;
  int ingress(int gpu, int plane_or_peer) const;
  int nvls(int plane) const;
  int isa_reduce(int plane) const;
  int isa_inq(int plane) const;
  int hbm(int gpu) const;
  int ports() const;
  int count() const;
  std::string name(int r) const;
};

ResourceMap resource_map(const Schedule& s);
StepCost step_cost(const Config& cfg, const Schedule& s, const ResourceMap& rm, const Step& st);

AnalyticResult run_analytic(const Config& cfg, const Schedule& s);

/// Bytes per element of a collective dtype, as a double for rate arithmetic.
double dtype_bytes_of(DType t);

}  // namespace scin
