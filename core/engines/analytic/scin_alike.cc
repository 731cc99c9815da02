// SCIN and SCIN+INQ by classes of ports (scin_alike.h): build_scin's star
// schedule timed without compiling its steps of N regions each.
#include "engines/analytic/scin_alike.h"

#include <algorithm>

#include "engines/analytic/scin_steps.h"
#include "engines/analytic/walk_repeat.h"

namespace scin {

namespace {

using namespace scin_steps;
using part::Part;
using part::Rec;
using part::WalkRepeat;

#define SCIN_WALK_INLINE __attribute__((always_inline))

std::optional<AnalyticResult> scin_alike(const Config& cfg, const Collective& coll, bool inq, const RunContext& ctx,
                                         bool with_steps, std::size_t* steps_only) {  // (steps_only: total, booked)
  if (cfg.fabric.topology != Topology::Star || !cfg.fabric.graph_file.empty()) return std::nullopt;
  const Algorithm algo = inq ? Algorithm::ScinInq : Algorithm::Scin;
  if (!unsupported_reason(cfg, algo).empty()) return std::nullopt;
  thread_local Schedule storage;  // (the head's lists, kept for the next run)
  Scin x(cfg, coll, inq, &storage);
  Schedule& s = x.s;
  const int n = x.n = x.b.n();
  const int planes = x.planes = s.planes;
  if (n < 2 || planes < 1 || cfg.sw.isa.waves < 1) return std::nullopt;
  const auto un = static_cast<std::size_t>(n), up = static_cast<std::size_t>(planes);
  x.F = cfg.sw.isa.waves;
  x.per_wave = inq ? 3 : 2;
  const Format q = codec_format(cfg.quant.codec);
  const std::uint64_t align = inq ? x.b.align() : 1;
  x.stripes = build::split(s.elems, planes, align);
  x.split_layouts(align);
  // Buffers in build_scin's order (quantise_inputs, then each plane's ISA buffers).
  if (inq)
    for (int r = 0; r < n; ++r) {
      x.qin.push_back(x.b.buffer("qin", r, s.elems, q));
      x.qout.push_back(x.b.buffer("qout", r, s.elems, q));
    }
  for (int p = 0; p < planes; ++p) {
    const NodeId sw = s.switch_node(p);
    const std::uint64_t count = x.stripes[static_cast<std::size_t>(p)].count;
    x.acc.push_back(x.b.buffer("isa.acc", sw, count, inq ? Format::Fp32 : x.b.data_format));
    if (inq) x.qacc.push_back(x.b.buffer("isa.q", sw, count, q));
  }
  x.rm = resource_map(s);
  const ResourceMap& rm = x.rm;
  // Step indices.
  x.base.push_back(inq ? static_cast<StepId>(un * (1 + x.wtot)) : 0);
  for (int p = 0; p < planes; ++p)
    x.base.push_back(x.base.back() + static_cast<StepId>(3 * n + 2 + x.per_wave * x.W[static_cast<std::size_t>(p)]));
  x.total = x.base.back() + un * (inq ? 2 : 1);
  if (x.total >= static_cast<std::size_t>(kNoStep)) return std::nullopt;

  // The waves' distinct sizes (sorted), each wave's among them, and per plane
  // and size its first wave and how many; each plane's read, requantise and
  // multicast costed once per size.
  std::vector<std::size_t> lfirst, lwaves_of;  // [layout][size]
  if (!x.size_layouts(lfirst, lwaves_of)) return std::nullopt;
  const std::size_t ns = x.sizes.size();
  std::vector<std::size_t> first_wave(up * ns, 0), waves_of(up * ns, 0);  // [plane][size]
  for (std::size_t pp = 0; pp < up; ++pp)
    for (std::size_t z = 0; z < ns; ++z) {
      const auto L = static_cast<std::size_t>(x.layout[pp]);
      waves_of[pp * ns + z] = lwaves_of[L * ns + z];
      first_wave[pp * ns + z] = x.plane_start[pp] + lfirst[L * ns + z];
    }
  std::vector<Cost> wave_cost(up * ns * static_cast<std::size_t>(x.per_wave));  // [plane][size][sub]
  StepCost c;
  for (int p = 0; p < planes; ++p)
    for (std::size_t z = 0; z < ns; ++z) {
      const std::size_t ps = static_cast<std::size_t>(p) * ns + z;
      if (waves_of[ps] == 0) continue;
      const std::size_t k = first_wave[ps];
      Cost* wc = &wave_cost[ps * static_cast<std::size_t>(x.per_wave)];
      const int E = rm.egress(0, p), I = rm.ingress(0, p), R = rm.isa_reduce(p), Q = rm.isa_inq(p);
      if (!x.cost(x.make_wave(p, k, 0), c)) return std::nullopt;
      // The read: the egress class, the reduce unit fed (INQ: and the INQ unit fed).
      if (!(inq ? local_cost(c, {E, R, Q}, wc[0]) : local_cost(c, {E, R}, wc[0]))) return std::nullopt;
      if (c.uses[0].fed_by_transfers || !c.uses[1].fed_by_transfers || (inq && !c.uses[2].fed_by_transfers)) return std::nullopt;
      wc[0].q = {0, 2, 3, 0};
      if (inq) {
        if (!x.cost(x.make_wave(p, k, 1), c) || !local_cost(c, {Q}, wc[1]) || c.uses[0].fed_by_transfers) return std::nullopt;
        wc[1].q = {3, 0, 0, 0};
      }
      Cost& wr = wc[x.per_wave - 1];
      if (!x.cost(x.make_wave(p, k, x.per_wave - 1), c) || !local_cost(c, {I}, wr) || c.uses[0].fed_by_transfers)
        return std::nullopt;
      wr.q = {1, 0, 0, 0};
    }

  // INQ: launches per rank; quantise steps costed per size (every rank's the
  // same but for its HBM); ranks whose launches end together form a class.
  std::vector<double> launch_fin;
  std::vector<int> class_of, class_first;
  std::vector<Cost> quant_cost(ns);
  if (inq) {
    launch_fin.resize(un);
    class_of.resize(un);
    std::vector<std::size_t> wave_of_size(ns, 0);  // the first wave of each size
    for (std::size_t ps = up * ns; ps-- > 0;)
      if (waves_of[ps] > 0) wave_of_size[ps % ns] = first_wave[ps];
    for (int r = 0; r < n; ++r) {
      if (!x.cost(x.make({K::Launch, 0, r, 0}), c) || !c.uses.empty()) return std::nullopt;
      const double f = (0.0 + c.fixed_ns) + c.latency_total_ns();
      launch_fin[static_cast<std::size_t>(r)] = f;
      std::size_t cls = 0;
      while (cls < class_first.size() && launch_fin[static_cast<std::size_t>(class_first[cls])] != f) ++cls;
      if (cls == class_first.size()) class_first.push_back(r);
      if (class_first.size() > 64) return std::nullopt;
      class_of[static_cast<std::size_t>(r)] = static_cast<int>(cls);
      // Every rank's quantise of each size costs the same, on its own HBM.
      for (std::size_t z = 0; z < ns; ++z) {
        if (!x.cost(x.make({K::Quant, 0, r, static_cast<int>(wave_of_size[z])}), c)) return std::nullopt;
        if (!c.uses.empty() && (c.uses.size() != 1 || c.uses[0].resource != rm.hbm(r) || c.uses[0].fed_by_transfers))
          return std::nullopt;
        if (r == 0) {
          if (!local_cost(c, {}, quant_cost[z]) && !local_cost(c, {rm.hbm(0)}, quant_cost[z])) return std::nullopt;
        } else if (!same_cost(c, quant_cost[z].c)) {
          return std::nullopt;
        }
      }
    }
  }
  if (steps_only) {
    steps_only[0] = x.total;
    steps_only[1] = x.wtot * static_cast<std::size_t>(x.per_wave) + class_first.size() * x.wtot;
    return AnalyticResult{};
  }
  // ---- Booking. INQ: each launch class's quantise chains (one per plane,
  // from the launch) on one HBM queue.
  const std::size_t uw = x.wtot;
  std::vector<std::uint8_t> chain_start(uw, 0);
  for (int p = 0; p < planes; ++p) chain_start[x.plane_start[static_cast<std::size_t>(p)]] = 1;
  // The parts' storage: per thread, kept for the next run (a small point then
  // allocates little) unless it grew past 2^16 steps (~5 MB; simulate()'s spare schedule likewise).
  thread_local std::vector<Part> part_pool;
  if (part_pool.size() < class_first.size() + up) part_pool.resize(class_first.size() + up);
  struct Release {
    ~Release() {
      std::size_t held = 0;
      for (const Part& pt : part_pool) held += pt.cost.capacity();
      if (held > (std::size_t{1} << 16)) part_pool = {};
    }
  } release;
  Part* const chains = part_pool.data();
  Part* const sims = part_pool.data() + class_first.size();
  std::size_t nsims = 0;
  thread_local std::vector<int> wave_next;
  for (std::size_t cl = 0; cl < class_first.size(); ++cl) {
    Part& pt = chains[cl];
    pt.cost.resize(uw);  // (every entry written below, or, of one size, none: lay_chains)
    const double l = launch_fin[static_cast<std::size_t>(class_first[cl])];
    for (int p = 0; p < planes && ns != 1; ++p) {
      const std::size_t k0 = x.plane_start[static_cast<std::size_t>(p)];
      const std::uint8_t* const zs = &x.lsize[x.lwave(p, 0)];
      for (std::size_t w = 0; w < static_cast<std::size_t>(x.W[static_cast<std::size_t>(p)]); ++w) pt.cost[k0 + w] = &quant_cost[zs[w]];
    }
    pt.lay_chains(chain_start.data(), std::max(0.0, l), ns == 1 ? &quant_cost[0] : nullptr);  // (ready, pending, records; checked)
    if (!pt.run_chains(chain_start.data(), ctx))
      pt.run(1, [&](std::size_t k) { return k + 1 < uw && !chain_start[k + 1] ? static_cast<long long>(k + 1) : -1LL; }, ctx);
  }
  auto quant_fin = [&](int r, std::size_t k) { return part::step_finish(chains[static_cast<std::size_t>(class_of[static_cast<std::size_t>(r)])], k); };

  // Per plane: arrives, the counter wait, the waves (booked once per plane
  // alike: the same stripe, costs and start), acks, their wait, flags.
  std::vector<double> arr_fin(up * un), ack_fin(up * un), flag_fin(up * un);
  std::vector<double> go_ready(up), go_fin(up), wmax(up), acked_ready(up), acked_fin(up);
  std::vector<int> wfirst(up), sim_of(up);
  Step free_step;
  auto free_fin = [&](const Id& d, double ready) {
    x.set_free(free_step, d);
    if (!x.cost(free_step, c) || !c.uses.empty()) return -1.0;
    return (ready + c.fixed_ns) + c.latency_total_ns();
  };
  const int pw = x.per_wave;
  for (int p = 0; p < planes; ++p) {
    const auto pp = static_cast<std::size_t>(p);
    double go = 0;
    for (int r = 0; r < n; ++r) {
      const double ready = inq ? std::max(0.0, quant_fin(r, x.plane_start[pp])) : 0.0;
      const double f = free_fin({K::Arrive, p, r, 0}, ready);
      if (!(f >= 0)) return std::nullopt;
      arr_fin[pp * un + static_cast<std::size_t>(r)] = f;
      go = std::max(go, f);
    }
    go_ready[pp] = go;
    go_fin[pp] = free_fin({K::Go, p, 0, 0}, go);
    if (!(go_fin[pp] >= 0)) return std::nullopt;
    const int Wp = x.W[pp];
    sim_of[pp] = -1;
    if (!inq)
      for (int o = 0; o < p && sim_of[pp] < 0; ++o) {
        const auto po = static_cast<std::size_t>(o);
        if (x.stripes[po].count != x.stripes[pp].count || go_fin[po] != go_fin[pp]) continue;
        // (the same stripe: the same waves, so the same sizes in the same order)
        bool same = true;
        for (std::size_t z = 0; z < ns && same; ++z)
          for (int sub = 0; sub < pw && waves_of[pp * ns + z] > 0; ++sub)
            same = same && same_cost(wave_cost[(po * ns + z) * static_cast<std::size_t>(pw) + static_cast<std::size_t>(sub)].c,
                                     wave_cost[(pp * ns + z) * static_cast<std::size_t>(pw) + static_cast<std::size_t>(sub)].c);
        if (same) sim_of[pp] = sim_of[po];
      }
    if (sim_of[pp] < 0) {
      sim_of[pp] = static_cast<int>(nsims);
      Part& pt = sims[nsims++];
      const std::size_t m = static_cast<std::size_t>(pw) * static_cast<std::size_t>(Wp);
      const std::uint8_t* const zs = x.lsize.data() + x.lwave(p, 0);
      const Cost* const wcp = wave_cost.data() + pp * ns * static_cast<std::size_t>(pw);
      const double ready0 = std::max(0.0, go_fin[pp]);
      const auto uW = static_cast<std::size_t>(Wp);
      if (!inq) {  // (SCIN: a read and a multicast per wave, reads ready at the go)
        const Part::ReadsTold told{ready0, nullptr};
        pt.lay_waves<2>(uW, x.F, wcp, ns, zs, [ready0](std::size_t) { return ready0; }, &told);
      } else if (class_first.size() == 1) {  // (one launch class: its chains' finishes, lazy where they jumped)
        const Part& ch = chains[0];
        const std::size_t off = x.plane_start[pp];
        const Part::ReadsTold told{ready0, ch.finish.data() + off, &ch, off};
        pt.lay_waves<3>(uW, x.F, wcp, ns, zs, [ready0, &ch, off](std::size_t w) { return std::max(ready0, part::step_finish(ch, off + w)); },
                        &told);
      } else {
        pt.lay_waves<3>(uW, x.F, wcp, ns, zs, [&](std::size_t w) {
          double ready = ready0;
          for (int cl : class_first) ready = std::max(ready, quant_fin(cl, x.plane_start[pp] + w));
          return ready;
        });
      }
      if (!pt.run_waves(pw, x.F, ctx)) {
        pt.latest_write_at = -1;
        pt.lay_all();  // (run() reads every step's cost, pending and ready)
        // Successors: a read's requantise or multicast, a requantise's
        // multicast, a multicast's read F waves on (-1: none).
        auto& next = wave_next;
        next.resize(m);
        for (int w = 0; w < Wp; ++w) {
          const std::size_t i = static_cast<std::size_t>(pw * w);
          for (int sub = 0; sub + 1 < pw; ++sub) next[i + static_cast<std::size_t>(sub)] = static_cast<int>(i) + sub + 1;
          next[i + static_cast<std::size_t>(pw - 1)] = w + x.F < Wp ? pw * (w + x.F) : -1;
        }
        pt.run(4, [&](std::size_t i) { return next[i]; }, ctx);
      }
    }
    const Part& pt = sims[static_cast<std::size_t>(sim_of[pp])];
    double best = -1;
    if (pt.latest_write_at >= 0) {  // (run_waves kept it)
      best = pt.latest_write;
      wfirst[pp] = static_cast<int>(pt.latest_write_at);
    } else {
      for (int w = 0; w < Wp; ++w)
        if (const double f = pt.finish[static_cast<std::size_t>(pw * w + pw - 1)]; f > best) best = f, wfirst[pp] = w;
    }
    wmax[pp] = std::max(0.0, best);
    double acked = 0;
    for (int r = 0; r < n; ++r) {
      const double f = free_fin({K::Ack, p, r, 0}, wmax[pp]);
      if (!(f >= 0)) return std::nullopt;
      ack_fin[pp * un + static_cast<std::size_t>(r)] = f;
      acked = std::max(acked, f);
    }
    acked_ready[pp] = acked;
    acked_fin[pp] = free_fin({K::Acked, p, 0, 0}, acked);
    if (!(acked_fin[pp] >= 0)) return std::nullopt;
    for (int r = 0; r < n; ++r) {
      const double f = free_fin({K::Flag, p, r, 0}, acked_fin[pp]);
      if (!(f >= 0)) return std::nullopt;
      flag_fin[pp * un + static_cast<std::size_t>(r)] = f;
    }
    ctx.check();
    ctx.report(static_cast<double>(p + 1) / static_cast<double>(planes + 1));
  }
  // Each rank's flag wait (INQ: and its dequantise, whose HBM is free by then:
  // every quantise step of every rank ended before the flags).
  std::vector<double> wait_ready(un), wait_fin(un), deq_fin(un);
  std::vector<Rec> deq_rec(un);
  std::vector<std::int8_t> deq_bound(un, -1);
  double hbm_free = 0;
  for (std::size_t cl = 0; cl < class_first.size(); ++cl)
    hbm_free = std::max(hbm_free, chains[cl].latest_rec_end);  // (every record's end, max'ed as it was booked)
  for (int r = 0; r < n; ++r) {
    const auto ur = static_cast<std::size_t>(r);
    double ready = 0;
    for (std::size_t p = 0; p < up; ++p) ready = std::max(ready, flag_fin[p * un + ur]);
    wait_ready[ur] = ready;
    wait_fin[ur] = free_fin({K::Wait, 0, r, 0}, ready);
    if (!(wait_fin[ur] >= 0)) return std::nullopt;
    if (!inq) continue;
    if (!x.cost(x.make({K::Dequant, 0, r, 0}), c) || c.uses.size() > 1) return std::nullopt;
    const double t0 = std::max(0.0, wait_fin[ur]) + c.fixed_ns;
    double end = t0;
    deq_rec[ur] = {t0, t0, -1, -1};
    if (!c.uses.empty()) {
      const ResourceUse& u = c.uses[0];
      if (u.resource != rm.hbm(r) || u.fed_by_transfers || !(t0 >= hbm_free)) return std::nullopt;
      if (u.amount_bytes > 0) {
        deq_rec[ur].end = t0 + u.amount_bytes / u.rate_GBps;
        if (deq_rec[ur].end > end) end = deq_rec[ur].end, deq_bound[ur] = 0;
      }
    }
    deq_fin[ur] = end + c.latency_total_ns();
  }
  ctx.check();

  // What a step is (x.decode), the waves of the plane decoded last told
  // without the search over the planes (the critical path walks through them).
  StepId wlo = 1, whi = 0;  // that plane's waves [wlo, whi)
  int wplane = 0;
  auto decode = [&](StepId id) __attribute__((always_inline)) -> Id {
    if (id >= wlo && id < whi) {
      const StepId off = id - wlo;
      const auto upw = static_cast<StepId>(pw);
      const auto wq = static_cast<StepId>(part::div_small(off, upw));  // (pw: 2 or 3)
      const int w = static_cast<int>(wq), sub = static_cast<int>(off - wq * upw);
      return {sub == 0 ? K::Read : sub == pw - 1 ? K::Write : K::Requant, wplane, 0, w};
    }
    const Id d = x.decode(id);
    if (d.k == K::Read || d.k == K::Requant || d.k == K::Write) {
      wplane = d.p;
      wlo = x.wave_id(d.p, 0, 0);
      whi = wlo + static_cast<StepId>(pw * x.W[static_cast<std::size_t>(d.p)]);
    }
    return d;
  };
  // Every step's start (its ready time) and finish, from its index.
  auto wave_part = [&](const Id& d) -> const Part& { return sims[static_cast<std::size_t>(sim_of[static_cast<std::size_t>(d.p)])]; };
  auto times = [&](StepId id) -> std::pair<double, double> {
    const Id d = decode(id);
    const auto pr = static_cast<std::size_t>(d.p) * un + static_cast<std::size_t>(d.r);
    const auto pp = static_cast<std::size_t>(d.p), ur = static_cast<std::size_t>(d.r);
    switch (d.k) {
      case K::Launch: return {0.0, launch_fin[ur]};
      case K::Quant: {
        const Part& pt = chains[static_cast<std::size_t>(class_of[ur])];
        return {part::step_start(pt, static_cast<std::size_t>(d.w)), part::step_finish(pt, static_cast<std::size_t>(d.w))};
      }
      case K::Arrive: return {inq ? std::max(0.0, quant_fin(d.r, x.plane_start[pp])) : 0.0, arr_fin[pr]};
      case K::Go: return {go_ready[pp], go_fin[pp]};
      case K::Read:
      case K::Requant:
      case K::Write: {
        const Part& pt = wave_part(d);
        const std::size_t i = static_cast<std::size_t>(pw * d.w) + (d.k == K::Read ? 0 : d.k == K::Write ? static_cast<std::size_t>(pw - 1) : 1);
        return {part::step_start(pt, i), part::step_finish(pt, i)};
      }
      case K::Ack: return {wmax[pp], ack_fin[pr]};
      case K::Acked: return {acked_ready[pp], acked_fin[pp]};
      case K::Flag: return {acked_fin[pp], flag_fin[pr]};
      case K::Wait: return {wait_ready[ur], wait_fin[ur]};
      default: return {wait_fin[ur], deq_fin[ur]};
    }
  };
  AnalyticResult res;
  // The last step to finish (the first of the latest): quantise steps by their
  // class's first rank (the others' are the same, later).
  double best = -1;
  StepId last = 0;
  auto consider = [&](StepId id, double f) {
    if (f > best || (f == best && id < last)) best = f, last = id;
  };
  for (int r = 0; r < n && inq; ++r) consider(x.run_of(r), launch_fin[static_cast<std::size_t>(r)]);
  for (std::size_t cl = 0; cl < class_first.size(); ++cl)  // (a chain part's latest finish, the first one)
    if (chains[cl].latest_at >= 0) consider(x.run_of(class_first[cl]) + 1 + static_cast<StepId>(chains[cl].latest_at), chains[cl].latest);
  for (int p = 0; p < planes; ++p) {
    const auto pp = static_cast<std::size_t>(p);
    for (int r = 0; r < n; ++r) consider(x.base[pp] + static_cast<StepId>(r), arr_fin[pp * un + static_cast<std::size_t>(r)]);
    consider(x.base[pp] + static_cast<StepId>(n), go_fin[pp]);
    const Part& pt = sims[static_cast<std::size_t>(sim_of[pp])];  // its latest finish, the first one
    if (!pt.finish.empty()) consider(x.wave_id(p, 0, 0) + static_cast<StepId>(pt.latest_at), pt.latest);
    const StepId a0 = x.after_waves(p);
    for (int r = 0; r < n; ++r) consider(a0 + static_cast<StepId>(r), ack_fin[pp * un + static_cast<std::size_t>(r)]);
    consider(a0 + static_cast<StepId>(n), acked_fin[pp]);
    for (int r = 0; r < n; ++r) consider(a0 + static_cast<StepId>(n + 1 + r), flag_fin[pp * un + static_cast<std::size_t>(r)]);
  }
  for (int r = 0; r < n; ++r) {
    consider(x.final_id(r), wait_fin[static_cast<std::size_t>(r)]);
    if (inq) consider(x.final_id(r) + 1, deq_fin[static_cast<std::size_t>(r)]);
  }
  res.time_ns = best;
  if (with_steps) {
    res.steps.resize(x.total);
    for (StepId id = 0; id < static_cast<StepId>(x.total); ++id) {
      const auto [st, f] = times(id);
      res.steps[id] = StepTiming{st, f};
    }
  }
  // max_link_bytes as class_max_link_bytes (analytic.cc) adds it: every ISA
  // read's bytes on each egress, every multicast's on each ingress. Sums of
  // whole byte counts below 2^53 are exact in any order: counted per size.
  {
    std::uint64_t egress = 0, ingress = 0;
    for (int p = 0; p < planes; ++p) {
      const BufferDecl& src = s.buffers[inq ? x.qin[0] : s.input[0]];
      const BufferDecl& out = s.buffers[inq ? x.qacc[static_cast<std::size_t>(p)] : x.acc[static_cast<std::size_t>(p)]];
      for (std::size_t z = 0; z < ns; ++z) {
        egress += waves_of[static_cast<std::size_t>(p) * ns + z] * region_bytes(src, x.sizes[z]);
        ingress += waves_of[static_cast<std::size_t>(p) * ns + z] * region_bytes(out, x.sizes[z]);
      }
    }
    if (!(std::max(egress, ingress) < (std::uint64_t{1} << 53))) return std::nullopt;
    res.max_link_bytes = std::max({0.0, static_cast<double>(egress), static_cast<double>(ingress)});
  }

  // The critical path, walked back as run_analytic walks it.
  auto latest = [&](StepId& bound, double& top, StepId id, double f) {
    if (f > top) top = f, bound = id;
  };
  auto bound_dep = [&](StepId i) -> StepId {
    const Id d = decode(i);
    const auto pp = static_cast<std::size_t>(d.p), ur = static_cast<std::size_t>(d.r);
    StepId b = kNoStep;
    double top = -1;
    switch (d.k) {
      case K::Launch: return kNoStep;
      case K::Quant: return chain_start[static_cast<std::size_t>(d.w)] ? x.run_of(d.r) : i - 1;
      case K::Arrive: return inq ? x.quant_id(d.r, d.p, 0) : kNoStep;
      case K::Go:
        for (int r = 0; r < n; ++r) latest(b, top, x.base[pp] + static_cast<StepId>(r), arr_fin[pp * un + static_cast<std::size_t>(r)]);
        return b;
      case K::Read:
        latest(b, top, x.base[pp] + static_cast<StepId>(n), go_fin[pp]);
        if (d.w >= x.F) latest(b, top, x.wave_id(d.p, d.w - x.F, pw - 1), times(x.wave_id(d.p, d.w - x.F, pw - 1)).second);
        // (every rank of a launch class has its class's quantise finishes, and
        // classes are numbered in the order of their first ranks: the first
        // rank with the latest is a class's first)
        for (std::size_t cl = 0; inq && cl < class_first.size(); ++cl) {
          const int j = class_first[cl];
          latest(b, top, x.quant_id(j, d.p, d.w), part::step_finish(chains[cl], x.plane_start[pp] + static_cast<std::size_t>(d.w)));
        }
        return b;
      case K::Requant:
      case K::Write: return i - 1;
      case K::Ack: return x.wave_id(d.p, wfirst[pp], pw - 1);
      case K::Acked:
        for (int r = 0; r < n; ++r) latest(b, top, x.after_waves(d.p) + static_cast<StepId>(r), ack_fin[pp * un + static_cast<std::size_t>(r)]);
        return b;
      case K::Flag: return x.after_waves(d.p) + static_cast<StepId>(n);
      case K::Wait:
        for (int p = 0; p < planes; ++p)
          latest(b, top, x.after_waves(p) + static_cast<StepId>(n + 1 + d.r), flag_fin[static_cast<std::size_t>(p) * un + ur]);
        return b;
      default: return i - 1;
    }
  };
  // The path walked (latest first), in a buffer kept per thread; copied out reversed.
  thread_local std::vector<StepId> path;
  std::size_t np = 0;
  StepId cur = last;
  int use = -2;  // -2: the whole step (latency and last use); >= 0: only that use
  bool queued = false;  // `use` was reached as the reservation another step's use queued behind (book.h)
  StepCost own;
  WalkRepeat rep;  // (the walk over a part's lazy translates, a period at a time)
  auto add = [&](Term t, double v) SCIN_WALK_INLINE {
    res.breakdown[t] += v;
    if (rep.pt && v != 0) rep.note(static_cast<int>(t), v);
  };
  while (cur != kNoStep) {
    bool pushed = false;
    if (np == 0 || path[np - 1] != cur) {
      if (np == path.size()) path.resize(std::max<std::size_t>(1024, 2 * np));
      path[np++] = cur;
      pushed = true;
    }
    const Id d = decode(cur);
    // The step's cost, and for steps with uses their records (holders as indices).
    const StepCost* sc = &own;
    part::RecView recs;  // (a step the jump did not write: its records translated where read)
    int bound = -1;
    StepId offset = 0;  // local holder -> index
    const Part* in = nullptr;  // (a part's step: the part and its local index)
    std::size_t li = 0;
    if (d.k == K::Read || d.k == K::Requant || d.k == K::Write) {
      const Part& pt = wave_part(d);
      const std::size_t i = static_cast<std::size_t>(cur - x.wave_id(d.p, 0, 0));
      sc = &pt.cost_at(i)->c;
      recs = part::step_view(pt, i, bound);
      offset = x.wave_id(d.p, 0, 0);
      in = &pt, li = i;
    } else if (d.k == K::Quant) {
      const Part& pt = chains[static_cast<std::size_t>(class_of[static_cast<std::size_t>(d.r)])];
      const auto k = static_cast<std::size_t>(d.w);
      sc = &pt.cost_at(k)->c;
      recs = part::step_view(pt, k, bound);
      offset = x.run_of(d.r) + 1;
      in = &pt, li = k;
    } else {
      x.cost(x.make(d), own);
      if (d.k == K::Dequant) {
        recs.x = &deq_rec[static_cast<std::size_t>(d.r)];
        bound = deq_bound[static_cast<std::size_t>(d.r)];
      }
    }
    if (rep.pt) {
      if (pushed && rep.back_at(in, offset, li, use)) {  // (a period of the walk: the rest of the range at once)
        const std::size_t R = rep.repeats(li);
        if (R > 0) {
          const auto D = static_cast<StepId>(rep.k0 - li);
          const std::size_t L = np - rep.np0;  // (path[np0 - 1] the start, path[np - 1] here)
          if (np + R * L > path.size()) path.resize(std::max<std::size_t>(2 * path.size(), np + R * L + 1024));
          for (std::size_t r = 1; r <= R; ++r)
            for (std::size_t j = 1; j <= L; ++j) path[np + (r - 1) * L + j - 1] = path[rep.np0 - 1 + j] - static_cast<StepId>(r) * D;
          np += R * L;
          rep.replay(res.breakdown, R);
          rep.pt = nullptr;
          cur = path[np - 1];
          continue;  // (the same use, R periods back)
        }
        rep.pt = nullptr;
      } else if (!rep.visit(in, offset, li)) {
        rep.pt = nullptr;
      }
    }
    if (!rep.pt && pushed && in && !in->lazy.empty()) rep.start(in, offset, li, use, np);
    const StepCost& sc_ = *sc;
    // (bound_dep: the step before in its chain for these, within the part)
    const bool dep_within = d.k == K::Requant || d.k == K::Write || (d.k == K::Quant && !chain_start[static_cast<std::size_t>(d.w)]);
    if (use == -2) {
      for (int t = 0; t < kTermCount; ++t) res.breakdown.ns[t] += sc_.latency_ns[t];
      for (int t = 0; rep.pt && t < kTermCount; ++t)
        if (sc_.latency_ns[t] != 0) rep.note(t, sc_.latency_ns[t]);
      use = bound;
      if (use < 0) {
        add(sc_.fixed_term, sc_.fixed_ns);
        if (!dep_within) rep.pt = nullptr;
        cur = bound_dep(cur);
        use = -2;
        continue;
      }
    }
    const Rec rec = recs[static_cast<std::size_t>(use)];
    const ResourceUse& ru = sc_.uses[static_cast<std::size_t>(use)];
    // (a fed unit's lead, as book.h's walk adds and takes it)
    auto lead = [&](double sign) SCIN_WALK_INLINE { sc_.each_fed_lead([&](Term t, double v) { add(t, sign * v); }); };
    if (queued && ru.fed_by_transfers) lead(1);
    const StepId holder = rec.holder < 0 ? kNoStep : offset + static_cast<StepId>(rec.holder);
    const double from = holder == cur ? std::min(rec.end, recs[static_cast<std::size_t>(rec.holder_use)].end) : rec.start;
    add(ru.term, rec.end - from);
    if (holder != kNoStep) {
      queued = holder != cur;
      if (queued && ru.fed_by_transfers) lead(-1);
      cur = holder;
      use = rec.holder_use;
      continue;
    }
    queued = false;
    add(sc_.fixed_term, sc_.fixed_ns);
    if (!dep_within) rep.pt = nullptr;
    cur = bound_dep(cur);
    use = -2;
  }
  res.critical_path.assign(path.rend() - static_cast<std::ptrdiff_t>(np), path.rend());
  if (path.size() > (std::size_t{1} << 16)) path = {};  // (a long walk's buffer not kept)
  return res;
}

}  // namespace

std::optional<AnalyticResult> run_analytic_scin(const Config& cfg, const Collective& c, bool inq,
                                                const RunContext& ctx, bool with_steps) {
  return scin_alike(cfg, c, inq, ctx, with_steps, nullptr);
}

std::size_t scin_alike_steps(const Config& cfg, const Collective& c, bool inq, std::size_t* booked) {
  std::size_t steps[2] = {0, 0};
  if (!scin_alike(cfg, c, inq, {}, false, steps)) return 0;
  if (booked) *booked = steps[1];
  return steps[0];
}

}  // namespace scin
