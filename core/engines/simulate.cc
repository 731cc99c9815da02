#include "engines/simulate.h"

#include <fmt/format.h>

#include "base/cancel.h"
#include "base/error.h"
#include "base/units.h"
#include "engines/analytic/analytic.h"
#include "fabric/params.h"

namespace scin {

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

// As NCCL's tuner does: predict each ring protocol with the analytic model and
// keep the fastest. Returns the schedule and its analytic result.
struct Resolved {
  Config cfg;
  Schedule schedule;
  AnalyticResult analytic;
  bool have_analytic = false;
};

Resolved resolve(const Config& cfg, Algorithm algo, const Collective& c, const RunContext& ctx) {
  Resolved out{cfg, {}, {}, false};
  if (!info(algo).ring_protocol || cfg.ring.protocol != RingProtocol::Auto) {
    out.schedule = compile(cfg, algo, c);
    return out;
  }
  for (RingProtocol p : {RingProtocol::LL, RingProtocol::LL128, RingProtocol::Simple}) {
    Config trial = cfg;
    trial.ring.protocol = p;
    Schedule candidate = compile(trial, algo, c);
    AnalyticResult a = run_analytic(trial, candidate, ctx);
    if (!out.have_analytic || a.time_ns < out.analytic.time_ns) {
      out.analytic = std::move(a);
      out.schedule = std::move(candidate);
      out.cfg.ring.protocol = p;
      out.have_analytic = true;
    }
  }
  return out;
}

void check_inputs(const Config& cfg, Algorithm algo) {
  validate(cfg);
  require_supported(cfg, algo);
}

}  // namespace

Schedule schedule_for(const Config& cfg, Algorithm algo, const Collective& c, Config* cfg_out) {
  check_inputs(cfg, algo);
  Resolved r = resolve(cfg, algo, c, {});
  if (cfg_out) *cfg_out = r.cfg;
  return std::move(r.schedule);
}

WorkEstimate estimate(const Config& cfg, Algorithm algo, const Collective& c, EngineId engine_id) {
  const Engine& e = engine(engine_id);
  check_inputs(cfg, algo);
  Config run_cfg = cfg;
  if (info(algo).ring_protocol && cfg.ring.protocol == RingProtocol::Auto)
    run_cfg.ring.protocol = RingProtocol::Simple;  // every protocol has the same steps
  return e.estimate(run_cfg, compile(run_cfg, algo, c));
}

SimResult simulate(const Config& cfg, Algorithm algo, const Collective& c, EngineId engine_id,
                   const RunContext& ctx) {
  const TimingEngine& e = timing_engine(engine_id);
  check_inputs(cfg, algo);
  Resolved run = resolve(cfg, algo, c, ctx);
  SimResult r;
  if (run.have_analytic && engine_id == EngineId::Analytic) {
    r.engine = e.name();
    r.time_ns = run.analytic.time_ns;
    r.breakdown = run.analytic.breakdown;
    r.max_link_bytes = run.analytic.max_link_bytes;
  } else {
    r = e.run(run.cfg, run.schedule, ctx);
  }
  const Schedule& s = run.schedule;
  r.algorithm = to_string(algo);
  r.variant = s.variant;
  r.bytes = c.bytes;
  r.dtype = c.dtype;
  r.gpus = cfg.fabric.gpus;
  r.algbw_GBps = bandwidth_GBps(static_cast<double>(c.bytes), r.time_ns);
  r.busbw_GBps = r.algbw_GBps * busbw_factor(cfg.fabric.gpus);
  if (r.max_link_bytes == 0) r.max_link_bytes = link_bytes(s).max_link_bytes();
  return r;
}

SimResult simulate(const Config& cfg, const std::string& algo, const Collective& c, const std::string& engine,
                   const RunContext& ctx) {
  const Algorithm a = parse_algorithm(algo);
  const EngineId e = parse_timing_engine(engine);
  return simulate(cfg, a, c, e, ctx);
}

// The signature from before RunContext: a caller that installed a CancelScope
// (base/cancel.h) on this thread still gets its run cancelled, through the
// progress sink the engines call while they run. Callers that can pass a
// RunContext should.
SimResult simulate(const Config& cfg, const std::string& algo, const Collective& c, const std::string& engine) {
  RunContext ctx;
  ctx.progress = [](double) {
    if (cancel_requested()) throw Cancelled();
  };
  return simulate(cfg, algo, c, engine, ctx);
}

}  // namespace scin
