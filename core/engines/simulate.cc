#include "engines/simulate.h"

#include <algorithm>
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

// A lower bound on the ring's analytic time: rank 0's launch and its 2(N-1)
// sends form one chain (every send depends on the rank's previous send), and a
// step lasts at least its fixed cost, its longest resource use and its latency.
double ring_chain_lower_bound_ns(const Config& cfg, const Schedule& s) {
  const ResourceMap rm = resource_map(s);
  StepCost c;
  double t = 0;
  for (const Step& st : s.steps) {
    if (st.initiator != 0) continue;
    if (st.kind != StepKind::Launch && !(st.kind == StepKind::Write && st.ring_step)) continue;
    step_cost(cfg, s, rm, st, c);
    double d = 0;
    for (const ResourceUse& u : c.uses)
      if (u.amount_bytes > 0) d = std::max(d, u.amount_bytes / u.rate_GBps);
    t += c.fixed_ns + d + c.latency_total_ns();
  }
  return t;
}

Resolved resolve(const Config& cfg, Algorithm algo, const Collective& c, const RunContext& ctx) {
  Resolved out{cfg, {}, {}, false};
  if (!info(algo).ring_protocol || cfg.ring.protocol != RingProtocol::Auto) {
    out.schedule = compile(cfg, algo, c);
    return out;
  }
  constexpr RingProtocol kOrder[3] = {RingProtocol::LL, RingProtocol::LL128, RingProtocol::Simple};
  Config trial = cfg;
  AnalyticWorkspace ws;  // one working memory for the runs
  if (algo != Algorithm::Ring) {
    for (RingProtocol p : kOrder) {
      trial.ring.protocol = p;
      Schedule candidate = compile(trial, algo, c);
      AnalyticResult a = run_analytic(trial, candidate, ctx, ws);
      if (!out.have_analytic || a.time_ns < out.analytic.time_ns) {
        out.analytic = std::move(a);
        out.schedule = std::move(candidate);
        out.cfg.ring.protocol = p;
        out.have_analytic = true;
      }
    }
    return out;
  }
  // The ring: its steps are the same for every protocol (only their costs
  // differ), so it is compiled once and re-targeted. The protocols are timed
  // in order of a cheap lower bound, and one whose bound already exceeds the
  // best time found cannot win and is not timed. The choice is the one timing
  // all three gives: the fastest, ties to the first in LL, LL128, Simple order.
  trial.ring.protocol = RingProtocol::LL;
  Schedule candidate = compile(trial, algo, c);
  double bound[3];
  for (int k = 0; k < 3; ++k) {
    trial.ring.protocol = kOrder[k];
    set_ring_protocol(candidate, kOrder[k]);
    bound[k] = ring_chain_lower_bound_ns(trial, candidate);
  }
  int order[3] = {0, 1, 2};
  std::stable_sort(order, order + 3, [&](int a, int b) { return bound[a] < bound[b]; });
  int best = -1;
  for (int k : order) {
    // A margin far above rounding (the engine sums in another order).
    if (best >= 0 && bound[k] * (1 - 1e-9) > out.analytic.time_ns) continue;
    trial.ring.protocol = kOrder[k];
    set_ring_protocol(candidate, kOrder[k]);
    AnalyticResult a = run_analytic(trial, candidate, ctx, ws);
    if (best < 0 || a.time_ns < out.analytic.time_ns || (a.time_ns == out.analytic.time_ns && k < best)) {
      out.analytic = std::move(a);
      best = k;
    }
  }
  out.cfg.ring.protocol = kOrder[best];
  out.have_analytic = true;
  set_ring_protocol(candidate, kOrder[best]);
  out.schedule = std::move(candidate);
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

// Without a RunContext: the run cannot be stopped and reports no progress.
SimResult simulate(const Config& cfg, const std::string& algo, const Collective& c, const std::string& engine) {
  return simulate(cfg, algo, c, engine, RunContext{});
}

}  // namespace scin
