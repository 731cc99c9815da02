#include "engines/simulate.h"

#include <fmt/format.h>

#include "base/error.h"
#include "base/units.h"
#include "fabric/params.h"
#include "engines/packet/packet_engine.h"

namespace scin {

std::vector<std::string> engine_names() {
  return {"analytic", "packet"};
}

double busbw_factor(int gpus) { return 2.0 * (gpus - 1) / gpus; }

std::vector<std::uint64_t> size_range(std::uint64_t min_bytes, std::uint64_t max_bytes,
                                      std::uint64_t factor) {
  if (min_bytes == 0) throw Error("minbytes: must be at least 1 byte");
  if (max_bytes < min_bytes)
    throw Error(fmt::format("maxbytes: {} is below minbytes {}", max_bytes, min_bytes));
  if (factor < 2) throw Error(fmt::format("stepfactor: {} must be at least 2", factor));
  std::vector<std::uint64_t> out;
  for (std::uint64_t s = min_bytes; s <= max_bytes; s *= factor) {
    out.push_back(s);
    if (s > max_bytes / factor) break;
    if (out.size() > 4096) throw Error("size range: more than 4096 sizes; raise the factor");
  }
  return out;
}

namespace {

SimResult run_engine(const Config& cfg, const Schedule& s, const std::string& engine) {
  SimResult r;
  r.engine = engine;
  if (engine == "analytic") {
    AnalyticResult a = run_analytic(cfg, s);
    r.time_ns = a.time_ns;
    r.breakdown = a.breakdown;
    r.max_link_bytes = a.max_link_bytes;
    return r;
  }
  if (engine == "packet") return run_packet_sim(cfg, s);
  throw Error(fmt::format("engine: '{}' is not available; allowed {}", engine,
                          fmt::join(engine_names(), ", ")));
}

}  // namespace

SimResult simulate(const Config& cfg, const std::string& algo, const Collective& c,
                   const std::string& engine) {
  validate(cfg);
  if (!find_algorithm(algo)) {
    std::vector<std::string> names;
    for (const auto& a : algorithms()) names.push_back(a.name);
    throw Error(fmt::format("algo: unknown algorithm '{}'; allowed {}", algo, fmt::join(names, ", ")));
  }
  if (auto why = unsupported_reason(cfg, algo); !why.empty()) throw Error(fmt::format("algo: {}", why));
  bool known_engine = false;
  for (const auto& e : engine_names()) known_engine |= (e == engine);
  if (!known_engine)
    throw Error(fmt::format("engine: '{}' is not available; allowed {}", engine,
                            fmt::join(engine_names(), ", ")));

  Config run_cfg = cfg;
  Schedule s;
  SimResult r;
  if (algo == "ring" && cfg.ring.protocol == RingProtocol::Auto) {
    // As NCCL's tuner does: predict each protocol with the analytic model, keep the fastest.
    AnalyticResult best;
    for (RingProtocol p : {RingProtocol::LL, RingProtocol::LL128, RingProtocol::Simple}) {
      Config trial = cfg;
      trial.ring.protocol = p;
      Schedule candidate = compile(trial, algo, c);
      AnalyticResult a = run_analytic(trial, candidate);
      if (s.steps.empty() || a.time_ns < best.time_ns) {
        best = std::move(a);
        s = std::move(candidate);
        run_cfg.ring.protocol = p;
      }
    }
    if (engine == "analytic") {
      r.engine = engine;
      r.time_ns = best.time_ns;
      r.breakdown = best.breakdown;
      r.max_link_bytes = best.max_link_bytes;
    } else {
      r = run_engine(run_cfg, s, engine);
    }
  } else {
    s = compile(run_cfg, algo, c);
    r = run_engine(run_cfg, s, engine);
  }
  r.algorithm = algo;
  r.variant = s.variant;
  r.bytes = c.bytes;
  r.dtype = c.dtype;
  r.gpus = cfg.fabric.gpus;
  r.algbw_GBps = bandwidth_GBps(static_cast<double>(c.bytes), r.time_ns);
  r.busbw_GBps = r.algbw_GBps * busbw_factor(cfg.fabric.gpus);
  if (r.max_link_bytes == 0) r.max_link_bytes = link_bytes(s).max_link_bytes();
  return r;
}

nlohmann::json to_json(const Breakdown& b) {
  nlohmann::json j = nlohmann::json::object();
  for (int t = 0; t < static_cast<int>(Term::Count); ++t)
    j[std::string(to_string(static_cast<Term>(t))) + "_ns"] = b.ns[t];
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
