#include "model/result.h"

namespace scin {

const char* to_string(Term t) {
  switch (t) {
    case Term::Launch: return "launch";
    case Term::Sync: return "sync";
    case Term::LinkLatency: return "link_latency";
    case Term::SwitchLatency: return "switch_latency";
    case Term::MemoryLatency: return "memory_latency";
    case Term::Serialisation: return "serialisation";
    case Term::Reduction: return "reduction";
    case Term::Quantisation: return "quantisation";
    case Term::Count: break;
  }
  return "?";
}

const char* describe(Term t) {
  switch (t) {
    case Term::Launch: return "kernel launches and stream operations on the accelerators";
    case Term::Sync: return "barriers, flag and counter polls, protocol handshakes per step";
    case Term::LinkLatency: return "wire and PHY traversals between accelerators and switches";
    case Term::SwitchLatency: return "port-to-port traversals of switch planes";
    case Term::MemoryLatency: return "HBM access latency of remote reads";
    case Term::Serialisation: return "bytes divided by the link bandwidth left for payload";
    case Term::Reduction: return "summing: ISA / NVLS reduction units or accelerator HBM passes";
    case Term::Quantisation: return "(de)quantising: INQ unit or accelerator HBM passes";
    case Term::Count: break;
  }
  return "";
}

double Breakdown::total_ns() const {
  double t = 0;
  for (double x : ns) t += x;
  return t;
}

double busbw_factor(int gpus) { return 2.0 * (gpus - 1) / gpus; }

nlohmann::json to_json(const Breakdown& b) {
  nlohmann::json j = nlohmann::json::object();
  for (int t = 0; t < kTermCount; ++t) j[std::string(to_string(static_cast<Term>(t))) + "_ns"] = b.ns[t];
  return j;
}

nlohmann::json to_json(const SimResult& r) {
  nlohmann::json j;
  j["algorithm"] = r.algorithm;
  if (!r.variant.empty()) j["variant"] = r.variant;
  j["engine"] = r.engine;
  j["bytes"] = r.bytes;
  j["dtype"] = to_string(r.dtype);
  j["time_us"] = r.time_us();
  j["algbw_GBps"] = r.algbw_GBps;
  j["busbw_GBps"] = r.busbw_GBps;
  j["max_link_bytes"] = r.max_link_bytes;
  j["breakdown"] = to_json(r.breakdown);
  if (!r.extra.is_null()) j["extra"] = r.extra;
  return j;
}

}  // namespace scin
