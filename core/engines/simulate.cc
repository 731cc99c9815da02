#include "engines/simulate.h"

#include <algorithm>
#include <fmt/format.h>

#include "base/cancel.h"
#include "base/error.h"
#include "base/units.h"
#include "engines/analytic/analytic.h"
#include "engines/analytic/nvls_alike.h"
#include "engines/analytic/nvls_tiers.h"
#include "engines/analytic/ring_alike.h"
#include "engines/analytic/scin_alike.h"
#include "engines/analytic/scin_tiers.h"
#include "engines/analytic/shot_alike.h"
#include "fabric/params.h"
#include "model/cost_grid.h"
#include "model/cost_model.h"
#include "schedule/builder.h"
#include "schedule/compile_options.h"
#include "schedule/nvls_policy.h"

namespace scin {

std::vector<std::uint64_t> size_range(std::uint64_t min_bytes, std::uint64_t max_bytes,
                                      std::uint64_t factor) {
  if (min_bytes == 0) throw Error("minbytes: must be at least 1 byte");
  if (max_bytes < min_bytes)
    throw Error(fmt::format("maxbytes: {} ({} bytes) is below minbytes {} ({} bytes)", format_size_bytes(max_bytes),
                            max_bytes, format_size_bytes(min_bytes), min_bytes));
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
  std::string variant;  // the schedule's, when there is no schedule
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
    analytic_step_cost(cfg, s, rm, st, c);  // (the costs the engine books: a bound on its time)
    double d = 0;
    for (const ResourceUse& u : c.uses)
      if (u.amount_bytes > 0) d = std::max(d, u.amount_bytes / u.rate_GBps);
    t += c.fixed_ns + d + c.latency_total_ns();
  }
  return t;
}

// The ring by ranks alike (run_analytic_ring, analytic.h), without compiling
// it: the protocol `cfg` names, or with Auto the fastest of the three (ties to
// LL, LL128, Simple in that order, as timing all three below does). False if
// the fast path's condition fails for any protocol tried.
bool resolve_ring_alike(const Config& cfg, const Collective& c, const RunContext& ctx, Resolved& out) {
  if (cfg.ring.protocol != RingProtocol::Auto) {
    std::optional<AnalyticResult> a = run_analytic_ring(cfg, c, ctx);
    if (!a) return false;
    out.analytic = std::move(*a);
    out.have_analytic = true;
    return true;
  }
  // The three protocols share the ring's form and representatives (ring_alike.h):
  // the same choice and result as run_analytic_ring() once per protocol.
  std::optional<RingChoice> best = run_analytic_ring_fastest(cfg, c, ctx);
  if (!best) return false;
  out.analytic = std::move(best->result);
  out.cfg.ring.protocol = best->protocol;
  out.have_analytic = true;
  return true;
}

// `need_schedule`: the caller runs or inspects the schedule (the packet engine,
// schedule_for()); otherwise the ring may be timed without one.
// `storage` (optional): lists to compile into (CompileOptions::storage).
Resolved resolve(const Config& cfg, Algorithm algo, const Collective& c, const RunContext& ctx, bool need_schedule,
                 Schedule* storage = nullptr) {
  Resolved out{cfg, {}, {}, false, {}};
  // Without a caller that shows steps, the schedule is only timed: no labels.
  const CompileOptions opt{need_schedule, storage};
  auto compile = [&](const Config& at, Algorithm a, const Collective& coll, const RunContext& x) {
    return scin::compile(at, a, coll, x, opt);
  };
  const bool auto_protocol = info(algo).ring_protocol && cfg.ring.protocol == RingProtocol::Auto;
  if (algo == Algorithm::Ring && (auto_protocol || !need_schedule)) {
    Resolved alike = out;
    if (resolve_ring_alike(cfg, c, ctx, alike)) {
      alike.variant = to_string(alike.cfg.ring.protocol);
      if (need_schedule) alike.schedule = compile(alike.cfg, algo, c, ctx);
      return alike;
    }
  }
  if (algo == Algorithm::Nvls && !need_schedule) {
    // NVLS by classes of ports (run_analytic_nvls, analytic.h): no schedule,
    // unless a member's own use would stand in a shared use's place.
    // Two tiers: from its form, booked as compiled (run_analytic_nvls_tiers, nvls_tiers.h).
    std::optional<AnalyticResult> a = run_analytic_nvls(cfg, c, ctx);
    if (!a) a = run_analytic_nvls_tiers(cfg, c, ctx);
    if (a) {
      out.analytic = std::move(*a);
      out.have_analytic = true;
      return out;
    }
  }
  if ((algo == Algorithm::Scin || algo == Algorithm::ScinInq || algo == Algorithm::ScinInqUplink) && !need_schedule) {
    // SCIN by classes of ports (run_analytic_scin, scin_alike.h): no schedule.
    // Two tiers: planes alike compiled and booked once (scin_tiers.h; scin-inq-uplink only there).
    const bool inq = algo == Algorithm::ScinInq, uplink = algo == Algorithm::ScinInqUplink;
    std::optional<AnalyticResult> a = uplink ? std::nullopt : run_analytic_scin(cfg, c, inq, ctx);
    if (!a) a = run_analytic_scin_tiers(cfg, c, algo, ctx);
    if (a) {
      out.analytic = std::move(*a);
      out.have_analytic = true;
      // (build_scin's and build_scin_tiers' variant: the codec and block size.)
      if (inq || uplink)
        out.variant = fmt::format("{} G={}{}", to_string(cfg.quant.codec), cfg.quant.block_elems, uplink ? " uplink" : "");
      return out;
    }
  }
  if ((algo == Algorithm::OneShot || algo == Algorithm::TwoShot || algo == Algorithm::TwoShotQ8 || algo == Algorithm::RingQ8) &&
      !need_schedule) {
    // One-shot, two-shot, two-shot-q8 and ring-q8 from their builders' structure
    // (run_analytic_shot, shot_alike.h): the same booking, no schedule.
    if (std::optional<AnalyticResult> a = run_analytic_shot(cfg, c, algo, ctx, false)) {
      out.analytic = std::move(*a);
      out.have_analytic = true;
      // (build_two_shot's and build_ring_q's variant with quantisation: the codec and block size.)
      if (algo == Algorithm::TwoShotQ8 || algo == Algorithm::RingQ8) out.variant = fmt::format("{} G={}", to_string(cfg.quant.codec), cfg.quant.block_elems);
      return out;
    }
  }
  if (!info(algo).ring_protocol || cfg.ring.protocol != RingProtocol::Auto) {
    out.schedule = compile(cfg, algo, c, ctx);
    return out;
  }
  constexpr RingProtocol kOrder[3] = {RingProtocol::LL, RingProtocol::LL128, RingProtocol::Simple};
  Config trial = cfg;
  AnalyticWorkspace ws;  // one working memory for the runs
  if (algo != Algorithm::Ring) {
    for (RingProtocol p : kOrder) {
      trial.ring.protocol = p;
      Schedule candidate = compile(trial, algo, c, ctx);
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
  Schedule candidate = compile(trial, algo, c, ctx);
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
  Resolved r = resolve(cfg, algo, c, {}, true);
  if (cfg_out) *cfg_out = r.cfg;
  return std::move(r.schedule);
}

namespace {

// The work of compiling a schedule and holding it (measured on the 1024-GPU
// ring, one-shot, two-shot and NVLS schedules: about 1 us per step and 0.1 us
// per region; memory is the steps, regions and dependencies themselves).
WorkEstimate schedule_cost(const Schedule& s) {
  // A step's first regions and dependencies live inside it (SrcList, DstList,
  // DepList in schedule.h); only longer lists hold a heap block of their own.
  auto outside = [](const auto& list) {
    return list.is_inline() ? 0.0 : static_cast<double>(list.size() * sizeof(list[0]));
  };
  double regions = 0, heap = 0, label = 0;
  for (const Step& st : s.steps) {
    regions += static_cast<double>(st.srcs.size() + st.dsts.size());
    heap += outside(st.srcs) + outside(st.dsts) + outside(st.deps);
    if (st.label.size() > 15) label += static_cast<double>(st.label.size() + 1);
  }
  const double steps = static_cast<double>(s.steps.size());
  WorkEstimate w;
  w.seconds = steps * 1e-6 + regions * 1e-7;
  w.memory_bytes = steps * static_cast<double>(sizeof(Step)) + heap + label;
  return w;
}

WorkEstimate estimate_compiled(const Config& cfg, Algorithm algo, const Collective& c, const Engine& e) {
  // Compiled as the run will compile it: the analytic engine's runs carry no
  // step labels (resolve()), so neither does their estimate (formatting them
  // was a fifth of `scin run`'s CPU).
  const CompileOptions opt{e.id() != EngineId::Analytic};
  const Schedule s = compile(cfg, algo, c, {}, opt);
  WorkEstimate w = e.estimate(cfg, s);
  const WorkEstimate sc = schedule_cost(s);
  w.seconds += sc.seconds;
  w.memory_bytes += sc.memory_bytes;
  return w;
}

// Through (x1,y1), (x2,y2), (x3,y3): the parabola's value at x.
double quadratic_at(const double (&x)[3], const double (&y)[3], double at) {
  double v = 0;
  for (int i = 0; i < 3; ++i) {
    double t = y[i];
    for (int j = 0; j < 3; ++j)
      if (j != i) t *= (at - x[j]) / (x[i] - x[j]);
    v += t;
  }
  return v;
}

}  // namespace

// Compiling a large fabric's schedule is itself the expensive part (a 1024-GPU
// ring has 2 million steps: seconds and half a GB), so beyond 128 GPUs the
// estimate compiles the same fabric at 16, 32 and 64 GPUs with one and with two
// switch planes, and extrapolates: every algorithm's steps, regions,
// dependencies and resource uses are at most quadratic in the GPU count and
// affine in the plane count (exact for ring, one-shot, two-shot, NVLS, SCIN and
// SCIN+INQ at a fixed size per rank, tests/core/test_budget.cc). Packet events
// are off by the rounding of chunks to packets: 0.5-3.5x of the count from the
// compiled schedule on nvl576-style (docs/performance.md section 107).
WorkEstimate estimate(const Config& cfg, Algorithm algo, const Collective& c, EngineId engine_id) {
  const Engine& e = engine(engine_id);
  check_inputs(cfg, algo);
  Config run_cfg = cfg;
  if (info(algo).ring_protocol && cfg.ring.protocol == RingProtocol::Auto)
    run_cfg.ring.protocol = RingProtocol::Simple;  // every protocol has the same steps
  const int gpus = cfg.fabric.gpus;
  if (std::size_t period = 0;
      engine_id == EngineId::Analytic && algo == Algorithm::Ring && ring_ranks_alike(run_cfg, c, &period)) {
    // Ranks alike (run_analytic_ring): no schedule; a few ns per step of the
    // recurrence, a few us per rank for its costed sends, 8 bytes per step;
    // where the ranks repeat with a period p, p ranks' steps.
    const double n = gpus, steps = n * (2 * n - 1), computed = period > 0 ? static_cast<double>(period) * 2 * n : steps;
    return {steps, "steps", computed * 5e-9 + n * 1e-5, computed * 8 + n * 256};
  }
  if (engine_id == EngineId::Analytic && algo == Algorithm::Nvls)
    if (const std::size_t booked = nvls_alike_steps(run_cfg, c); booked > 0) {
      // NVLS by classes of ports (run_analytic_nvls, as resolve() runs it): no
      // schedule; about 0.5-0.8 us per step booked by groups of members, a few
      // us per rank for its costed steps; per step its times and records
      // (measured at 1024 GPUs, 1 GiB and 16 GiB: ~130 bytes per step).
      const double n = gpus, steps = static_cast<double>(booked);
      return {steps, "steps", steps * 8e-7 + n * 2e-6, steps * 128 + n * 1024};
    }
  if (engine_id == EngineId::Analytic && (algo == Algorithm::Scin || algo == Algorithm::ScinInq))
    if (std::size_t booked = 0; const std::size_t total = scin_alike_steps(run_cfg, c, algo == Algorithm::ScinInq, &booked)) {
      // SCIN by classes of ports (run_analytic_scin, as resolve() runs it): no
      // schedule; ~0.1 us per step booked (the planes' waves, INQ's quantise
      // steps per class of ranks; the other steps are maxima and sums) and
      // under 1 us per rank and plane for costing its signals (measured at
      // 1024 GPUs and 1 GiB: 1.3 ms SCIN, 2.6 ms SCIN+INQ); memory per step
      // booked (its records) and per rank and plane.
      const double n = gpus, planes = std::max(1, cfg.fabric.planes), b = static_cast<double>(booked);
      return {static_cast<double>(total), "steps", b * 1e-7 + n * planes * 1e-6, b * 128 + n * planes * 64};
    }
  if (std::size_t computed = 0; engine_id == EngineId::Analytic)
    if (bool closed = false; const std::size_t steps = shot_alike_steps(run_cfg, algo, &closed, &c, &computed)) {
      // One-shot, two-shot, two-shot-q8 and ring-q8 from their builders'
      // structure (run_analytic_shot, as resolve() runs it): no schedule. In
      // closed order (every rank ready at once) a few additions per push on two tiers and
      // O(N) memory (1024 GPUs, 1 GiB: 0.03-0.05 s CPU, 18 MB as a process);
      // else records and their booking, 0.1-0.5 us and about 100 bytes per
      // step (two-shot at load 4-5: 26 us at 8 GPUs, 18 ms at 128, 0.39-0.54 s
      // and 110 MB of peak memory at 512).
      // Ring-q8 in closed order: 3N - 1 steps with ranks alike (1024 GPUs,
      // 1 GiB: 0.01 s and 9 MB as a process), else every step's finish.
      const double n = gpus, k = static_cast<double>(steps);
      if (closed && algo == Algorithm::RingQ8)
        return {k, "steps", static_cast<double>(computed) * 2e-8 + n * 2e-6, static_cast<double>(computed) * 8 + n * 4096};
      // On a star, one-shot's and the two-shots' phases in closed form (shot_star.h): O(N), ~1.5 us per
      // rank at 1024 GPUs (BM_AnalyticScale, section 95 of performance.md).
      const bool star = run_cfg.fabric.topology == Topology::Star && algo != Algorithm::RingQ8;
      if (closed) return {k, "steps", star ? n * 2e-6 : k * 2e-8 + n * 1e-6, n * 4096};
      if (algo == Algorithm::RingQ8 && computed < steps) {
        // Two tiers, leaves alike (ring_leaves.h): one leaf's 3mN steps booked
        // by book(), ~0.4 us and ~160 bytes of peak heap each (1024 GPUs, 1
        // GiB, heaptrack: 31.5 MB for 196,608 steps on 16 leaves, 18.0 MB for
        // 98,304 on 32).
        const double b = static_cast<double>(computed);
        return {k, "steps", b * 4e-7 + n * 1e-6, b * 160 + n * 1024};
      }
      // Two tiers otherwise (chunk sizes whose pattern does not divide a leaf: below N blocks, as
      // 8-512 B at 1024 GPUs on leaves of 64): in closed order, every step's finish kept, ~13 ns
      // and 8 bytes a step (1024 GPUs, 8 B: 0.04 s, 34 MB as a process; estimated as queued it
      // was 1.3 s and 350 MB a point), for chunks under 64 KiB. Large chunks can make a send
      // between leaves overlap its receiver's quantising (nvl36x2 from 256 MiB: chunks of 3.6
      // MiB), and book() books the records then: estimated as queued.
      if (algo == Algorithm::RingQ8 && run_cfg.fabric.topology == Topology::TwoTier &&
          c.bytes / static_cast<std::uint64_t>(std::max(1, gpus)) < (std::uint64_t{1} << 16))
        return {k, "steps", k * 2e-8 + n * 2e-6, k * 8 + n * 4096};
      return {k, "steps", k * 4e-7 + n * 1e-6, k * 112 + n * 1024};
    }
  if (engine_id == EngineId::Analytic &&
      (algo == Algorithm::Scin || algo == Algorithm::ScinInq || algo == Algorithm::ScinInqUplink)) {
    // SCIN on two tiers by planes alike (run_analytic_scin_tiers, as resolve()
    // runs it): the planes of one stripe size compiled and booked once, from
    // their step and region counts (compiling every plane to estimate it cost
    // 90% of a 1024-GPU point). About 0.5 us per step (most are signals and
    // waits, which book nothing), its Step and 88 bytes of booking records;
    // 0.15 us and a Region per region (compiled, then costed; its ports are
    // booked per leaf, by class). SCIN+INQ compiles rank 0's quantise run
    // and one block per stripe size and books that block once per plane
    // (scin_inq_planes.h), its costs kept: those bookings are not counted.
    // Measured at 1024 GPUs on 32 leaves, 1 GiB, SCIN+INQ: 0.18 s and 53 MB
    // estimated, 0.28 s wall, 0.28 s CPU and 70 MB RSS as a process without
    // huge pages (91 ms in BM_AnalyticTwoTier). A
    // region also takes ~12 bytes of booking records (peak heap of SCIN at 1
    // GiB, heaptrack: 40.5 MB at 1024 GPUs on 16 leaves, 24.9 MB at 576, 11.8
    // MB at 144, against 29.5 / 18.8 / 8.4 MB estimated without them).
    // SCIN+INQ books one leaf's per-leaf steps for all (CompileOptions::leaves_once), and its last
    // booking holds every rank's flag of every plane, its wait and dequantise: ~128 bytes of
    // records each (1024 GPUs on 32 leaves of nvl576-style, 1 GiB: 24 MB estimated, 24 MB of
    // heap at its peak as a process, VmHWM less a one-point run's).
    std::size_t total = 0;
    ScinTiersRegions regions;
    if (const std::size_t booked = scin_tiers_steps(run_cfg, c, algo, &total, &regions)) {
      const double k = static_cast<double>(booked), r = static_cast<double>(regions.booked);
      const double finals = algo == Algorithm::ScinInq ? static_cast<double>(gpus) * (cfg.fabric.planes + 2) * 128.0 : 0.0;
      return {static_cast<double>(total), "steps", k * 5e-7 + r * 1.5e-7,
              k * (static_cast<double>(sizeof(Step)) + 88) + r * (static_cast<double>(sizeof(Region)) + 12) + finals};
    }
  }
  if (engine_id == EngineId::Analytic && algo == Algorithm::Nvls)
    if (const std::size_t booked = nvls_tiers_steps(run_cfg, c); booked > 0) {
      // NVLS on two tiers from its form (run_analytic_nvls_tiers, as resolve()
      // runs it): no schedule; its step and region counts (compiling it to
      // estimate it cost ~40% of a 1024-GPU point). Each region is a resource
      // use booked, ~25 ns (a store's uses copied from its class's template
      // since performance.md section 98: least squares over 56 points of
      // nvl576-style at 256-1024 GPUs and nvl36x2, 8 B-512 MiB, gave 23 ns a
      // region and 0.16 us a step; with 1 us a step this estimate is 1-2x the
      // time taken, where 0.1 us a region made it 3-4x) and ~18 bytes of
      // records and queues (peak heap, heaptrack, nvl576-style at 1 GiB: 22 MB
      // for 1.13M regions at 1024 GPUs, 44 MB for 2.51M at 256, 41 MB for
      // 2.25M at 576); per step ~1 us (its costed lists) and its times and
      // booking lists.
      const build::NvlsTiersCounts k = build::nvls_tiers_counts(c.bytes, gpus, cfg.fabric.leaves, cfg.sw.nvls.tiers_max_destinations);
      const double steps = static_cast<double>(booked), r = static_cast<double>(k.regions);
      return {static_cast<double>(k.steps), "steps", steps * 1e-6 + r * 2.5e-8, steps * 128 + r * 18};
    }
  if (gpus <= 128) return estimate_compiled(run_cfg, algo, c, e);
  const int planes = cfg.fabric.planes;
  const double n[3] = {16, 32, 64};
  double amount[3], seconds[3], memory[3], uses[3], steps[3], width[3];
  double flows[3], queued[3], isa[3], copies[3];  // the packet engine's held terms (packet_held_bytes)
  const char* unit = "";
  try {
    for (int k = 0; k < 3; ++k) {
      WorkEstimate at_planes[2];
      for (int p = 0; p < (planes > 1 ? 2 : 1); ++p) {
        Config small = run_cfg;
        set_param(small, "fabric.gpus", n[k]);
        set_param(small, "fabric.planes", static_cast<double>(p + 1));
        validate(small);
        at_planes[p] = estimate_compiled(small, algo, c, e);
        // The packet engine's memory of the steps that run together is bounded
        // by the fabric's buffers (packet_held_bytes): it is taken out here,
        // its terms extrapolated apart and bounded anew on the large fabric.
        if (engine_id == EngineId::Packet) {
          WorkEstimate& x = at_planes[p];
          x.memory_bytes -= packet_held_bytes(small, x.held_flows_bytes, x.held_queued_bytes, x.held_isa_bytes, x.held_copies);
        }
      }
      // Affine in the plane count: from 1 plane and 2 to `planes`.
      const double dp = planes > 1 ? planes - 1 : 0;
      const auto affine = [&](double WorkEstimate::*term) {
        return at_planes[0].*term + dp * (at_planes[1].*term - at_planes[0].*term);
      };
      amount[k] = affine(&WorkEstimate::amount), seconds[k] = affine(&WorkEstimate::seconds);
      memory[k] = affine(&WorkEstimate::memory_bytes);
      uses[k] = affine(&WorkEstimate::uses), steps[k] = affine(&WorkEstimate::steps), width[k] = affine(&WorkEstimate::width);
      flows[k] = affine(&WorkEstimate::held_flows_bytes), queued[k] = affine(&WorkEstimate::held_queued_bytes);
      isa[k] = affine(&WorkEstimate::held_isa_bytes), copies[k] = at_planes[0].held_copies;
      unit = at_planes[0].unit;
    }
  } catch (const Error&) {
    return estimate_compiled(run_cfg, algo, c, e);  // a fabric that needs its own GPU or plane count
  }
  WorkEstimate w;
  w.unit = unit;
  // The parabola, or where it bends down (a regime the small fabrics leave at 64
  // GPUs: on nvl576-style's 16 leaves, 1-4 GPUs a leaf, NVLS's packet events
  // grow by 131 K a GPU from 16 to 32 and 66 K from 32 to 64, then ~70 K a GPU
  // on to 576, where the parabola went negative) the line through the last two.
  const double at = static_cast<double>(gpus);
  auto extrapolate = [&](const double (&y)[3]) {
    return std::max({y[2], quadratic_at(n, y, at), y[2] + (y[2] - y[1]) / (n[2] - n[1]) * (at - n[2])});
  };
  w.amount = extrapolate(amount);
  w.seconds = extrapolate(seconds);
  w.memory_bytes = extrapolate(memory);
  if (engine_id == EngineId::Packet) {
    // Its seconds are not quadratic in GPUs (a cost per event that grows with
    // the width): its terms are, and give them; the rest (compiling) is.
    const bool two_tier = cfg.fabric.topology == Topology::TwoTier;
    double rest[3];
    for (int k = 0; k < 3; ++k) rest[k] = seconds[k] - packet_seconds(two_tier, amount[k], uses[k], steps[k], width[k]);
    w.uses = extrapolate(uses), w.steps = extrapolate(steps), w.width = extrapolate(width);
    w.held_flows_bytes = extrapolate(flows), w.held_queued_bytes = extrapolate(queued);
    w.held_isa_bytes = extrapolate(isa), w.held_copies = extrapolate(copies);
    w.memory_bytes = std::max(0.0, w.memory_bytes) +
                     packet_held_bytes(run_cfg, w.held_flows_bytes, w.held_queued_bytes, w.held_isa_bytes, w.held_copies);
    w.seconds = packet_seconds(two_tier, w.amount, w.uses, w.steps, w.width) + std::max(0.0, extrapolate(rest));
  }
  return w;
}

namespace {
// The storage of the last schedule simulate() timed on this thread (its step,
// buffer, input and output lists, emptied), compiled into by the next point:
// a point then allocates no step list (issue 14, small points). Kept only up
// to kKeepSteps steps (~1.8 MB), so a large point's memory is released.
thread_local Schedule spare_schedule;
constexpr std::size_t kKeepSteps = 8192;

void keep_storage(Schedule&& s) {
  // (A point that compiled nothing, the ring timed by ranks alike, left the spare as it was.)
  if (s.steps.capacity() > kKeepSteps || s.steps.capacity() <= spare_schedule.steps.capacity()) return;
  s.steps.clear();  // (frees the wide steps' lists and the labels now)
  s.buffers.clear();
  spare_schedule = std::move(s);
}
}  // namespace

SimResult simulate(const Config& cfg, Algorithm algo, const Collective& c, EngineId engine_id,
                   const RunContext& ctx) {
  const TimingEngine& e = timing_engine(engine_id);
  check_inputs(cfg, algo);
  // Only the analytic engine's schedules go back to the spare storage (the
  // packet engine's are large and run for long).
  const bool analytic = engine_id == EngineId::Analytic;
  Resolved run = resolve(cfg, algo, c, ctx, !analytic, analytic ? &spare_schedule : nullptr);
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
  r.variant = run.variant.empty() ? s.variant : run.variant;
  r.bytes = c.bytes;
  r.dtype = c.dtype;
  r.gpus = cfg.fabric.gpus;
  r.algbw_GBps = bandwidth_GBps(static_cast<double>(c.bytes), r.time_ns);
  r.busbw_GBps = r.algbw_GBps * busbw_factor(cfg.fabric.gpus);
  if (r.max_link_bytes == 0) r.max_link_bytes = link_bytes(s).max_link_bytes();
  // The mechanism is modelled at any GPU count; NCCL runs it from switch.nvls.nccl_min_gpus on.
  if (algo == Algorithm::Nvls) {
    std::vector<std::string> notes;
    if (std::string note = nccl_nvls_note(cfg); !note.empty())
      notes.push_back(note + "; this result is the multimem mechanism itself");
    // Two tiers: where the schedule's size cap leaves fewer chunks than NCCL's.
    // (On two tiers the analytic engine books NVLS from its form: no compiled schedule to ask.)
    if (cfg.fabric.topology == Topology::TwoTier) {
      const int per_leaf = cfg.fabric.gpus / std::max(1, cfg.fabric.leaves);
      if (build::nvls_tiers_chunks(c.bytes, cfg.fabric.gpus, per_leaf, cfg.sw.nvls.tiers_max_destinations) <
          build::nvls_tiers_nominal_chunks(c.bytes, per_leaf))
        notes.push_back(fmt::format(
            "fewer, larger chunks than NCCL's 128 KiB ones (the two-tier schedule is capped at {} multicast "
            "destinations, switch.nvls.tiers_max_destinations), so it pipelines less and this time is high: on "
            "nvl576-style +23% at 64 MiB, +65% at 1 GiB with the default 2M; raising the cap costs time and memory "
            "(docs/model.md, two-tier NVLS)",
            cfg.sw.nvls.tiers_max_destinations));
    }
    // The packet engine takes the size ramp (fitted with the analytic engine) as slower read
    // packets; at mid sizes that runs it slower than the analytic engine (docs/model.md section 4:
    // hgx-h200-8 +6.5% at 256 KiB, +27% at 1 MiB, +6% at 8 MiB; below 256 KiB within 5%).
    if (!analytic && c.bytes >= (std::uint64_t{256} << 10) &&
        ramp_fraction(cfg.tuning.nvls, static_cast<double>(c.bytes)) < 0.6)
      notes.push_back(
          "the packet engine applies the NVLS size ramp, calibrated with the analytic engine, as slower read "
          "packets: at mid sizes its NVLS runs up to 27% slower than the analytic engine, which matches the "
          "measurements (hgx-h200-8 at 1 MiB; docs/model.md section 4, NVLS at mid sizes)");
    if (!notes.empty()) {
      std::string all = notes.front();
      for (std::size_t k = 1; k < notes.size(); ++k) all += "; " + notes[k];
      r.extra["note"] = all;
    }
  }
  if (analytic) keep_storage(std::move(run.schedule));
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
