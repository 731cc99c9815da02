// Ranks alike: the ring's analytic result without compiling it (analytic.h,
// run_analytic_ring), and the fastest protocol by the same path (ring_alike.h).
#include "engines/analytic/ring_alike.h"

#include <algorithm>

#include "base/big_alloc.h"
#include "engines/analytic/planes.h"
#include "engines/analytic/ring_chunks.h"
#include "model/cost_grid.h"
#include "schedule/builder.h"

namespace scin {

using analytic_detail::fabric_has_planes_alike;
using analytic_detail::step_planes_alike;

namespace {

// What does not depend on the protocol: the form, the resource map, the chunk
// size classes, one send per rank, phase and chunk size (the representatives)
// and the launches. Each protocol then only costs these steps (ring_costs).
struct RingShape {
  RingForm f;
  ResourceMap rm;
  bool one_plane = false;
  int classes = 0;
  std::vector<std::uint8_t> cls;  // per chunk: its size class
  std::vector<Step> rep_steps;    // per representative: its send (when has_rep)
  std::vector<char> has_rep;
  std::vector<Step> launches;     // per rank, unlabelled
  std::size_t rep_index(int r, int phase, int q) const {
    return (static_cast<std::size_t>(r) * 2 + static_cast<std::size_t>(phase)) * static_cast<std::size_t>(classes) +
           static_cast<std::size_t>(q);
  }
  void set_protocol(RingProtocol p) {
    f.protocol = p;
    f.head.variant = to_string(p);
    for (Step& st : rep_steps) st.protocol = p;
    for (Step& st : launches) st.protocol = p;
  }
};

// The cost of each representative send, and the launches' finish times, for one protocol.
struct RingCosts {
  struct Rep {
    double fixed = 0, latency = 0, longest = -1, bytes = 0;  // longest: the longest booked use (-1: none)
  };
  std::vector<Rep> reps;
  std::vector<double> launch_finish;
};

// The shape for `cfg` (a concrete ring.protocol); nothing where run_analytic_ring refuses the ring
// whatever the costs (fewer than 2 ranks, no transfer path, more than two chunk sizes).
std::optional<RingShape> ring_shape(const Config& cfg, const Collective& coll) {
  RingShape sh{ring_form(cfg, coll), {}, false, 0, {}, {}, {}, {}};
  const RingForm& f = sh.f;
  const Schedule& s = f.head;
  const int n = f.n();
  if (n < 2 || f.via == kNoNode) return std::nullopt;
  const auto un = static_cast<std::size_t>(n);
  sh.rm = resource_map(s);

  // Chunk sizes (split() makes at most two) and a few chunks of each, so that
  // every rank finds one it sends in each phase (a rank skips one chunk per phase).
  std::vector<std::uint64_t> sizes(f.chunk_count);
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  if (sizes.size() > 2) return std::nullopt;
  sh.classes = static_cast<int>(sizes.size());
  sh.cls.resize(un);
  std::vector<int> some[2];
  for (int c = 0; c < n; ++c) {
    const auto q = static_cast<std::size_t>(
        std::lower_bound(sizes.begin(), sizes.end(), f.chunk_count[static_cast<std::size_t>(c)]) - sizes.begin());
    sh.cls[static_cast<std::size_t>(c)] = static_cast<std::uint8_t>(q);
    if (some[q].size() < 3) some[q].push_back(c);
  }

  // One send per rank, phase and chunk size, costed as the engine would cost
  // it (plane 0 alone when the compiled ring's planes are alike: every send
  // travels f.via from an accelerator, so the representatives decide it).
  const std::size_t reps = un * 2 * static_cast<std::size_t>(sh.classes);
  sh.rep_steps.resize(reps);
  sh.has_rep.assign(reps, 0);
  sh.one_plane = fabric_has_planes_alike(s);
  for (int r = 0; r < n; ++r)
    for (int phase = 0; phase < 2; ++phase)
      for (int q = 0; q < sh.classes; ++q)
        for (int c : some[static_cast<std::size_t>(q)]) {
          // The send of rank r in this phase that carries chunk c, if any.
          const int k = phase == 0 ? ((r - c) % n + n) % n : ((r + 1 - c) % n + n) % n;
          if (k > n - 2) continue;
          const int t = phase == 0 ? k : n - 1 + k;
          const std::size_t i = sh.rep_index(r, phase, q);
          sh.rep_steps[i] = f.send(r, t);
          sh.has_rep[i] = 1;
          if (!step_planes_alike(s, sh.rep_steps[i])) sh.one_plane = false;
          break;
        }
  sh.launches.reserve(un);
  for (int r = 0; r < n; ++r) sh.launches.push_back(build::launch_step(r, true, f.protocol, false));
  return sh;
}

// Costs the representatives and launches for protocol `p` (`cfg`'s) and checks
// conditions (a) and (b) of analytic.h; false if either fails.
bool ring_costs(const Config& cfg, RingShape& sh, RingProtocol p, RingCosts& out) {
  sh.set_protocol(p);
  const Schedule& s = sh.f.head;
  const ResourceMap& rm = sh.rm;
  const int n = sh.f.n();
  out.reps.assign(sh.rep_steps.size(), RingCosts::Rep{});
  StepCost c;
  // The rank whose sends use each resource (-1: none yet): a resource two ranks use fails (a).
  std::vector<int> owner(static_cast<std::size_t>(rm.count()), -1);
  for (std::size_t i = 0; i < sh.rep_steps.size(); ++i) {
    if (!sh.has_rep[i]) continue;
    const Step& st = sh.rep_steps[i];
    analytic_step_cost(cfg, s, rm, st, c, sh.one_plane);
    RingCosts::Rep& rep = out.reps[i];
    rep.fixed = c.fixed_ns;
    rep.latency = c.latency_total_ns();
    rep.bytes = static_cast<double>(region_bytes(s, st.srcs[0]));
    if (!(rep.fixed >= 0) || !(rep.latency >= 0)) return false;
    for (const ResourceUse& u : c.uses) {
      if (u.fed_by_transfers) return false;
      if (u.resource < 0 || u.resource >= rm.count()) return false;
      int& o = owner[static_cast<std::size_t>(u.resource)];
      if (o >= 0 && o != st.initiator) return false;
      o = st.initiator;
      if (u.amount_bytes > 0) rep.longest = std::max(rep.longest, u.amount_bytes / u.rate_GBps);
    }
  }

  // Launches: no resource, so each finishes at its fixed cost plus latency.
  out.launch_finish.resize(static_cast<std::size_t>(n));
  for (int r = 0; r < n; ++r) {
    analytic_step_cost(cfg, s, rm, sh.launches[static_cast<std::size_t>(r)], c, sh.one_plane);
    if (!c.uses.empty() || !(c.fixed_ns >= 0) || !(c.latency_total_ns() >= 0)) return false;
    const double t0 = 0.0 + c.fixed_ns;
    out.launch_finish[static_cast<std::size_t>(r)] = t0 + c.latency_total_ns();
  }
  return true;
}

// The least period p < N (p divides N) with which the ranks repeat: chunk
// c + p of the size of chunk c (one size; two sizes in a pattern that
// repeats, as build::split() spreads them: every N / gcd(N, elements)
// chunks), rank r + p's launch ending when r's does and its send of each
// phase and chunk size costing what r's does (a star: 1 or the chunks'
// period; launches serialised per process: the GPUs a process drives; two
// tiers: the ranks of a leaf, or a multiple). Rank r + p then sends chunk
// r + p - t where r sends r - t, of the same size. 0: none.
std::size_t sends_period(const RingShape& sh, const RingCosts& k) {
  const int n = sh.f.n();
  auto same = [&](int r, int q) {
    if (k.launch_finish[static_cast<std::size_t>(r)] != k.launch_finish[static_cast<std::size_t>(q)]) return false;
    if (sh.cls[static_cast<std::size_t>(r)] != sh.cls[static_cast<std::size_t>(q)]) return false;
    for (int phase = 0; phase < 2; ++phase)
      for (int c = 0; c < sh.classes; ++c) {
        const std::size_t i = sh.rep_index(r, phase, c), j = sh.rep_index(q, phase, c);
        const RingCosts::Rep &a = k.reps[i], &b = k.reps[j];
        if (sh.has_rep[i] != sh.has_rep[j] || a.fixed != b.fixed || a.latency != b.latency || a.longest != b.longest ||
            a.bytes != b.bytes)
          return false;
      }
    return true;
  };
  for (int p = 1; p < n; ++p) {
    if (n % p != 0) continue;
    bool periodic = true;
    for (int r = p; r < n && periodic; ++r) periodic = same(r, r - p);
    if (periodic) return static_cast<std::size_t>(p);
  }
  return 0;
}

// Two chunk sizes on ranks otherwise alike (a star below N blocks): every
// send's finish in closed form. Chunk c moves one rank on at every step (rank
// r's send t carries what r - 1's send t - 1 did), so in the chunks' frame the
// recurrence is G(t, c) = cost(phase of t, size of c) + max(G(t-1, c),
// G(t-1, c+1)) from G(-1, .) = the launches' end L: a longest path that at
// each step stays on its chunk or comes from the next one. Where a big chunk
// costs no less than a small one in either phase, the longest path to (t, c)
// waits on the nearest big chunk at or after c, d chunks on (d = to_big[c]),
// for its first t - d + 1 steps and then walks the d small chunks to c: G =
// L + the big sends' costs over steps 0..t-d + the small sends' over the d
// steps after (all small when d > t). Costs are cost-grid multiples and every
// time stays below 2^33 ns, so these sums are the recurrence's own to the bit
// (cost_grid.h). O(N) per ring instead of O(N^2).
struct TwoSizes {
  int n = 0;
  double launch = 0;
  double cost[2][2] = {};         // [phase][size class]: fixed + longest use + latency
  double bytes[2][2] = {};        // [phase][size class]: a send's bytes
  std::vector<int> to_big;        // per chunk: chunks on (c, c+1, ...) to the nearest of size class 1
  double sum(int q, int rows) const {  // steps 0..rows-1 all of size class q
    const int first = std::min(rows, n - 1);
    return first * cost[0][q] + (rows - first) * cost[1][q];
  }
  double finish(int t, int c) const {
    const int big_rows = std::max(0, t + 1 - to_big[static_cast<std::size_t>(c)]);
    return launch + sum(1, big_rows) + (sum(0, t + 1) - sum(0, big_rows));
  }
};

std::optional<TwoSizes> two_sizes(const RingShape& sh, const RingCosts& k) {
  const int n = sh.f.n();
  if (sh.classes != 2) return std::nullopt;
  TwoSizes two;
  two.n = n;
  two.launch = k.launch_finish[0];
  for (double l : k.launch_finish)
    if (l != two.launch) return std::nullopt;
  const RingCosts::Rep* first[2][2] = {};
  for (int r = 0; r < n; ++r)
    for (int phase = 0; phase < 2; ++phase)
      for (int q = 0; q < 2; ++q) {
        const std::size_t i = sh.rep_index(r, phase, q);
        if (!sh.has_rep[i]) continue;
        const RingCosts::Rep& a = k.reps[i];
        const RingCosts::Rep*& b = first[phase][q];
        if (!b) b = &a;
        if (a.fixed != b->fixed || a.latency != b->latency || a.longest != b->longest || a.bytes != b->bytes)
          return std::nullopt;
      }
  double most = 0;
  for (int phase = 0; phase < 2; ++phase) {
    for (int q = 0; q < 2; ++q) {
      if (!first[phase][q]) return std::nullopt;
      const RingCosts::Rep& v = *first[phase][q];
      two.cost[phase][q] = v.fixed + std::max(v.longest, 0.0) + v.latency;
      two.bytes[phase][q] = v.bytes;
    }
    // (Strictly positive: each send ends after the sends it waits for, so the last step ends last.)
    if (!(two.cost[phase][0] > 0) || two.cost[phase][1] < two.cost[phase][0]) return std::nullopt;
    most = std::max(most, two.cost[phase][1]);
  }
  if (!(two.launch >= 0) || two.launch + most * (2.0 * n) >= 0x1p33) return std::nullopt;
  two.to_big = analytic_detail::chunks_to_marked(sh.cls);  // (class 1: the big chunks, one at least)
  return two;
}

// The recurrence, in the compiled schedule's step order (so the last step to
// finish is found as the engine finds it: the first of the latest). Sets
// res.time_ns, res.max_link_bytes and with_steps res.steps; `finish` gets every
// send's finish time and `last` the step that finishes last. Without
// per-step timings, where the ranks repeat with a period p < N
// (sends_period), rank r + p's sends finish when rank r's do (the same
// operations on the same figures): `finish` gets the first p ranks' times
// per step (O(p x steps per rank), not O(N x steps per rank)), the first of
// the latest is among them, and it returns p; else 0. Where two_sizes()
// holds (tried first), `two` gets it and `finish` stays empty: each
// send's finish is two->finish() (O(N) without per-step timings); the last
// step is the last send of a rank (every send ends after those it waits for).
std::size_t ring_recur(const RingShape& sh, const RingCosts& k, const RunContext& ctx, bool with_steps,
                       AnalyticResult& res, BigVector<double>& finish, StepId& last, std::optional<TwoSizes>& two) {
  const RingForm& f = sh.f;
  const int n = f.n();
  const int sends = f.sends();
  two = two_sizes(sh, k);  // (before a period: O(N), where a period of p costs O(pN))
  const std::size_t period = with_steps || two ? 0 : sends_period(sh, k);
  if (period > 0) ++ring_sends_alike_total();
  if (two) {
    ++ring_two_sizes_total();
    ctx.check();
    if (with_steps) {
      const double l = k.launch_finish[0];
      res.steps.assign(static_cast<std::size_t>(n) * static_cast<std::size_t>(sends + 1), StepTiming{0.0, l});
      for (int t = 0; t < sends; ++t) {
        if ((t & 15) == 0) ctx.check();
        for (int r = 0; r < n; ++r) {
          const double ready = t == 0 ? l
                                      : std::max(two->finish(t - 1, f.chunk(r == 0 ? n - 1 : r - 1, t - 1)),
                                                 two->finish(t - 1, f.chunk(r, t - 1)));
          res.steps[static_cast<std::size_t>(f.send_id(r, t))] = StepTiming{ready, two->finish(t, f.chunk(r, t))};
        }
      }
    }
    const int t = sends - 1;
    double total[2] = {0, 0};
    for (int c = 0; c < n; ++c)
      for (int phase = 0; phase < 2; ++phase) total[phase] += two->bytes[phase][sh.cls[static_cast<std::size_t>(c)]];
    last = 0;
    double last_finish = k.launch_finish[0];
    for (int r = 0; r < n; ++r) {
      const double end = two->finish(t, f.chunk(r, t));
      if (end > last_finish) {
        last_finish = end;
        last = f.send_id(r, t);
      }
      // Rank r sends every chunk but r + 1 while reducing and every chunk but r + 2 while gathering.
      const double egress = (total[0] - two->bytes[0][sh.cls[static_cast<std::size_t>((r + 1) % n)]]) +
                            (total[1] - two->bytes[1][sh.cls[static_cast<std::size_t>((r + 2) % n)]]);
      res.max_link_bytes = std::max(res.max_link_bytes, egress);
    }
    res.time_ns = last_finish;
    return 0;
  }
  // The recurrence over the first `w` ranks: all of them, or one period.
  const int w = period > 0 ? static_cast<int>(period) : n;
  const auto un = static_cast<std::size_t>(w);
  const auto& launch_finish = k.launch_finish;
  const std::size_t total = un + un * static_cast<std::size_t>(sends);  // (with_steps: w = n)
  if (with_steps) res.steps.resize(total);
  // (Not zeroed: every entry is written below before it is read. On huge
  // pages: at 1024 GPUs each protocol's array is 16 MB, and zeroing and
  // faulting in three of them was three quarters of a 1 GiB point.)
  finish.resize(un * static_cast<std::size_t>(sends));
  std::vector<double> egress(un, 0.0);
  last = 0;
  double last_finish = launch_finish[0];
  for (int r = 0; r < w; ++r) {
    if (with_steps) res.steps[static_cast<std::size_t>(r)] = StepTiming{0.0, launch_finish[static_cast<std::size_t>(r)]};
    if (launch_finish[static_cast<std::size_t>(r)] > last_finish) {
      last_finish = launch_finish[static_cast<std::size_t>(r)];
      last = r;
    }
  }
  for (int t = 0; t < sends; ++t) {
    if ((t & 15) == 0) {
      ctx.check();
      ctx.report(static_cast<double>(t) / static_cast<double>(sends));
    }
    const int phase = f.reduce_scatter(t) ? 0 : 1;
    int chunk = f.chunk(0, t);
    const double* prev = t > 0 ? &finish[static_cast<std::size_t>(t - 1) * un] : nullptr;
    double* row = &finish[static_cast<std::size_t>(t) * un];
    for (int r = 0; r < w; ++r, chunk = chunk + 1 == n ? 0 : chunk + 1) {
      const auto ur = static_cast<std::size_t>(r);
      const double next_launch = launch_finish[r + 1 == w ? 0 : ur + 1];
      // The engine's ready time: the latest finish of the deps (from 0).
      double ready = 0;
      if (prev) {
        ready = std::max(ready, prev[r == 0 ? un - 1 : ur - 1]);
        ready = std::max(ready, prev[ur]);
      } else {
        ready = std::max(ready, launch_finish[ur]);
      }
      ready = std::max(ready, next_launch);
      const RingCosts::Rep& v = k.reps[sh.rep_index(r, phase, sh.cls[static_cast<std::size_t>(chunk)])];
      const double t0 = ready + v.fixed;
      const double end = v.longest >= 0 ? t0 + v.longest : t0;  // rounding is monotone: the latest use end
      row[ur] = end + v.latency;
      egress[ur] += v.bytes;
      const StepId id = f.send_id(r, t);
      if (with_steps) res.steps[static_cast<std::size_t>(id)] = StepTiming{ready, row[ur]};
      if (row[ur] > last_finish) {
        last_finish = row[ur];
        last = id;
      }
    }
  }
  res.time_ns = last_finish;
  // Each send's bytes leave r's egress and enter r+1's ingress: the same sums.
  for (double b : egress) res.max_link_bytes = std::max(res.max_link_bytes, b);
  return period;
}

// The critical path and its breakdown, walked back as the engine walks it (no
// use ever queues, so every step is bound by its latest dep). `sh` holds the
// protocol of `cfg` and `k` (set_protocol). `period` (ring_recur's): `finish` holds the first p ranks' times per step.
void ring_walk(const Config& cfg, const RingShape& sh, const RingCosts& k, const BigVector<double>& finish,
               std::size_t period, const std::optional<TwoSizes>& two, StepId last, AnalyticResult& res) {
  const RingForm& f = sh.f;
  const Schedule& s = f.head;
  const int n = f.n();
  const auto& launch_finish = k.launch_finish;
  StepCost c;
  const auto sn = static_cast<StepId>(n);
  auto finish_of = [&](StepId id) {
    if (id < sn) return launch_finish[static_cast<std::size_t>(id)];
    if (two) {
      const int t = static_cast<int>((id - sn) / sn), r = static_cast<int>((id - sn) % sn);
      return two->finish(t, f.chunk(r, t));
    }
    if (period == 0) return finish[static_cast<std::size_t>(id - sn)];
    const std::size_t t = (id - sn) / sn, r = (id - sn) % sn;
    return finish[t * period + r % period];
  };
  std::vector<StepId> path;
  for (StepId cur = last; cur != kNoStep;) {
    path.push_back(cur);
    const bool is_launch = cur < sn;
    const int r = static_cast<int>(is_launch ? cur : (cur - sn) % sn);
    const int t = is_launch ? -1 : static_cast<int>((cur - sn) / sn);
    analytic_step_cost(cfg, s, sh.rm, is_launch ? sh.launches[static_cast<std::size_t>(r)] : f.send(r, t), c, sh.one_plane);
    StepId bound = kNoStep;
    double ready = 0, best = -1;
    if (!is_launch)
      for (StepId d : f.send_deps(r, t)) {
        ready = std::max(ready, finish_of(d));
        if (finish_of(d) > best) {
          best = finish_of(d);
          bound = d;
        }
      }
    for (int q = 0; q < kTermCount; ++q) res.breakdown.ns[q] += c.latency_ns[q];
    const double t0 = ready + c.fixed_ns;
    double end = t0;
    int bound_use = -1;
    for (std::size_t q = 0; q < c.uses.size(); ++q) {
      const ResourceUse& u = c.uses[q];
      if (u.amount_bytes <= 0) continue;
      const double e = t0 + u.amount_bytes / u.rate_GBps;
      if (e > end) {
        end = e;
        bound_use = static_cast<int>(q);
      }
    }
    if (bound_use >= 0) res.breakdown[c.uses[static_cast<std::size_t>(bound_use)].term] += end - t0;
    res.breakdown[c.fixed_term] += c.fixed_ns;
    cur = bound;
  }
  std::reverse(path.begin(), path.end());
  res.critical_path = std::move(path);
}

}  // namespace

bool ring_ranks_alike(const Config& cfg, const Collective& c, std::size_t* period) {
  std::optional<RingShape> sh = ring_shape(cfg, c);
  RingCosts k;
  const bool ok = sh && ring_costs(cfg, *sh, cfg.ring.protocol, k);
  if (period) *period = !ok ? 0 : two_sizes(*sh, k) ? 1 : sends_period(*sh, k);
  return ok;
}

std::optional<AnalyticResult> run_analytic_ring(const Config& cfg, const Collective& coll, const RunContext& ctx,
                                                bool with_steps) {
  std::optional<RingShape> sh = ring_shape(cfg, coll);
  RingCosts k;
  if (!sh || !ring_costs(cfg, *sh, cfg.ring.protocol, k)) return std::nullopt;
  AnalyticResult res;
  BigVector<double> finish;
  StepId last = 0;
  std::optional<TwoSizes> two;
  const std::size_t period = ring_recur(*sh, k, ctx, with_steps, res, finish, last, two);
  ring_walk(cfg, *sh, k, finish, period, two, last, res);
  return res;
}

std::optional<RingChoice> run_analytic_ring_fastest(const Config& cfg, const Collective& coll, const RunContext& ctx) {
  constexpr RingProtocol kOrder[3] = {RingProtocol::LL, RingProtocol::LL128, RingProtocol::Simple};
  Config trial = cfg;
  trial.ring.protocol = kOrder[0];
  std::optional<RingShape> sh = ring_shape(trial, coll);
  if (!sh) return std::nullopt;
  RingCosts k[3];
  AnalyticResult res[3];
  BigVector<double> finish[3];
  StepId last[3] = {0, 0, 0};
  std::size_t period[3] = {0, 0, 0};
  std::optional<TwoSizes> two[3];
  int best = -1;
  // In order, as run_analytic_ring once per protocol: the first of the smallest time wins.
  for (int i = 0; i < 3; ++i) {
    trial.ring.protocol = kOrder[i];
    if (!ring_costs(trial, *sh, kOrder[i], k[i])) return std::nullopt;
    period[i] = ring_recur(*sh, k[i], ctx, false, res[i], finish[i], last[i], two[i]);
    if (best < 0 || res[i].time_ns < res[best].time_ns) best = i;
  }
  trial.ring.protocol = kOrder[best];
  sh->set_protocol(kOrder[best]);
  ring_walk(trial, *sh, k[best], finish[best], period[best], two[best], last[best], res[best]);
  return RingChoice{std::move(res[best]), kOrder[best]};
}

}  // namespace scin
