// Ring-q8's booking in closed order (ring_closed.h).
#include "engines/analytic/ring_closed.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "base/big_alloc.h"
#include "engines/analytic/book.h"
#include "engines/analytic/book_in_order.h"
#include "engines/analytic/ring_closed_parts.h"
#include "engines/analytic/ring_sparse.h"
#include "model/cost_grid.h"

namespace scin::shot {

namespace {

using Use = AnalyticWorkspace::Use;

using Ids = RingQIds;  // (shot_steps.h)

enum Kind : std::uint8_t { kQuantiseFirst, kQuantise, kSend, kSum, kGather, kDequantise, kKinds };

Kind kind_of_rec(const Rec& r) {
  switch (r.what) {
    case What::QzHop: return r.first_hop ? kQuantiseFirst : kQuantise;
    case What::RsSend: return kSend;
    case What::QzSum: return kSum;
    case What::AgSend: return kGather;
    default: return kDequantise;
  }
}

}  // namespace

bool book_ring_closed(const Config& cfg, Shape& x, CostClasses& classes, const ResourceMap& rm, bool one_plane,
                      const RunContext& ctx, AnalyticResult& res, bool only_by_leaves) {
  const Schedule& s = x.b.s;
  const auto n = static_cast<std::size_t>(s.gpus);
  const bool tiers = rm.topology == Topology::TwoTier;
  if (n < 2 || !x.ring || (rm.topology != Topology::Star && !tiers) || x.chunks.size() != n) return false;
  ctx.check();
  res = AnalyticResult{};
  const Ids ids(n);
  StepCost c;
  auto cost_of = [&](const Rec& r, StepCost& to) {
    auto full = [&](StepCost& f) { return analytic_step_cost(cfg, s, rm, x.fill(r), f, one_plane, false); };
    if (r.what == What::Launch) return full(to);
    return classes.cost(r, x.count_of(r), rm, to, full);
  };

  // Launches: no resource; each finishes at its fixed cost plus latency.
  std::vector<double> launch(n);
  for (std::size_t r = 0; r < n; ++r) {
    if (!cost_of(ids.rec(ids.reps(), r), c) || !c.uses.empty() || !(c.fixed_ns >= 0) || !(c.latency_total_ns() >= 0))
      return false;
    launch[r] = (0.0 + c.fixed_ns) + c.latency_total_ns();
  }
  // The chunks' sizes (build::split() makes a few), each chunk's among them.
  std::vector<std::uint64_t> sizes;
  for (const Span& ch : x.chunks) sizes.push_back(ch.count);
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  std::vector<std::uint8_t> size_of(n);
  if (sizes.size() > 8) return false;
  for (std::size_t ch = 0; ch < n; ++ch)
    size_of[ch] = static_cast<std::uint8_t>(std::lower_bound(sizes.begin(), sizes.end(), x.chunks[ch].count) - sizes.begin());
  const bool alike = !tiers && sizes.size() == 1 &&
                     std::all_of(launch.begin(), launch.end(), [&](double l) { return l == launch[0]; });
  // Two tiers: a send between leaves (the last rank of a leaf to the first of
  // the next) crosses a leaf's uplink and a spine's downlink, and is costed
  // alone (`crossing`).
  auto crossing = [&](std::size_t r) { return tiers && s.leaf_of(static_cast<NodeId>(r)) != s.leaf_of(static_cast<NodeId>(ids.next(r))); };

  // Each kind's cost per chunk size, from its first step of that size (on a
  // star every step of one kind and size costs alike on its own ranks'
  // resources: CostClasses; on two tiers so does every send within a leaf:
  // up to the leaf switch and down, on the two ports); a use elsewhere
  // fails. A send between leaves is costed alone, into `across`.
  std::vector<KindCost> kinds(kKinds * sizes.size());
  std::vector<char> costed(kinds.size(), 0);
  KindCost across;
  auto kind_cost = [&](const Rec& r) -> const KindCost* {
    const std::size_t at = kind_of_rec(r) * sizes.size() + size_of[static_cast<std::size_t>(r.c)];
    const bool send = r.what == What::RsSend || r.what == What::AgSend;
    const bool alone = send && crossing(static_cast<std::size_t>(r.a));
    if (!alone && costed[at]) return &kinds[at];
    if (!cost_of(r, c)) return nullptr;
    KindCost& k = alone ? across : kinds[at];
    k = KindCost{};
    k.fixed = c.fixed_ns;
    k.latency = c.latency_total_ns();
    if (!(k.fixed >= 0) || !(k.latency >= 0)) return nullptr;
    for (const ResourceUse& u : c.uses) {
      int base = 0, stride = 0;
      const int gpu = accel_rank_of(rm, u.resource, base, stride);
      const ResourceKind kind = rm.kind(u.resource);
      const bool books = u.amount_bytes > 0;
      if (u.fed_by_transfers) return nullptr;
      if (gpu < 0) {
        if (!alone || (kind != ResourceKind::Uplink && kind != ResourceKind::Downlink)) return nullptr;
        k.u.push_back({kind, false, u.resource, u.amount_bytes / u.rate_GBps, books});
        continue;
      }
      const bool receiver = gpu != r.a;
      if (receiver && (gpu != r.b || !send)) return nullptr;
      if (books && kind == ResourceKind::Hbm) {
        if (k.hbm >= 0) return nullptr;  // (two on one step: none of these builders')
        k.hbm = static_cast<int>(k.u.size());
      }
      k.u.push_back({kind, receiver, base, u.amount_bytes / u.rate_GBps, books});
    }
    if (!alone) costed[at] = 1;
    return &k;
  };
  auto kind_of_step = [&](std::size_t t, std::size_t r) { return kind_cost(ids.rec(t, r)); };

  // The kinds' uses, checked once per kind and size: the quantise steps,
  // the sum and the dequantise on their rank's HBM alone; the sends on the
  // sender's egress and the receiver's ingress (the reduce-scatter's also
  // on the receiver's HBM).
  auto own_hbm_only = [](const KindCost& k) {
    for (const KindCost::U& u : k.u)
      if (u.books && (u.kind != ResourceKind::Hbm || u.receiver)) return false;
    return true;
  };
  // A trunk's sender (two tiers: -1 none yet): a trunk two ranks' sends
  // crossed could queue (a leaf's uplink serves its last rank's sends alone).
  std::vector<int> trunk_sender(tiers ? static_cast<std::size_t>(rm.count() - rm.hbm(rm.gpus)) : 0, -1);
  auto ports = [&](const KindCost& k, bool hbm, std::size_t from) {
    for (const KindCost::U& u : k.u) {
      if (!u.books) continue;
      if (u.kind == ResourceKind::Uplink || u.kind == ResourceKind::Downlink) {
        int& who = trunk_sender[static_cast<std::size_t>(u.base - rm.hbm(rm.gpus))];
        if (who >= 0 && who != static_cast<int>(from)) return false;
        who = static_cast<int>(from);
        continue;
      }
      const bool ok = (u.kind == ResourceKind::Egress && !u.receiver) || (u.kind == ResourceKind::Ingress && u.receiver) ||
                      (hbm && u.kind == ResourceKind::Hbm && u.receiver);
      if (!ok) return false;
    }
    return true;
  };

  // Fewer blocks than ranks on a star (every chunk one block or none, no two
  // full ones neighbours, launches alike): every finish in closed form, O(N)
  // (ring_sparse.h). Each kind's cost per class from one step of it (the
  // step's rank chosen so that it carries a chunk of that class), with the
  // checks below; an empty chunk's steps book no HBM.
  std::optional<RingSparse> sparse;
  if (!alike && !tiers && n >= 3 && sizes.size() == 2 && sizes[0] == 0 &&
      std::all_of(launch.begin(), launch.end(), [&](double l) { return l == launch[0]; })) {
    sparse.emplace();
    RingSparse& sp = *sparse;
    sp.n = n;
    sp.launch = launch[0];
    // Kind `kd`'s cost at step t of a rank carrying chunk c, the rank `c + shift`.
    auto cost = [&](std::size_t t, std::size_t c, std::size_t shift, Kind kd, double& out) {
      const std::size_t r = (c + shift) % n;
      const KindCost* k = kind_of_step(t, r);
      if (!k) return false;
      const bool ok = kd == kSend ? ports(*k, true, r) : kd == kGather ? ports(*k, false, r) : own_hbm_only(*k);
      if (!ok || (kd != kDequantise && size_of[c] == 0 && k->hbm >= 0)) return false;
      out = k->fixed + k->longest() + k->latency;
      return true;
    };
    std::vector<std::uint8_t> full(n);
    std::size_t of[2] = {n, n};  // a chunk of each class
    for (std::size_t c = 0; c < n; ++c) {
      full[c] = size_of[c];
      if (of[size_of[c]] == n) of[size_of[c]] = c;
    }
    bool ok = of[0] < n && of[1] < n;
    for (std::size_t q = 0; q < 2 && ok; ++q)
      ok = cost(0, of[q], 0, kQuantiseFirst, sp.qf[q]) && cost(2, of[q], 1, kQuantise, sp.q[q]) &&
           cost(1, of[q], 0, kSend, sp.s[q]) && cost(ids.sum_rep(), of[q], n - 1, kSum, sp.sum[q]) &&
           cost(ids.ag_rep(0), of[q], n - 1, kGather, sp.g[q]);
    ok = ok && cost(ids.dequant_rep(), 0, 0, kDequantise, sp.dq);
    ok = ok && sp.holds(full);
    if (ok) ++ring_q_sparse_total();
    else sparse.reset();
  }

  // Step by step on a star, the ranks repeat every w chunks where the
  // chunks' sizes and the launches do (build::split() spreads two sizes in a
  // pattern of N / gcd(N, blocks) chunks): rank r + w's steps carry chunks w
  // on from rank r's, of the same sizes, on its own resources, so they end
  // when r's do and meet the same checks. Only ranks 0..w-1 are booked, in
  // a ring of w (`red`: their steps' places; w = N: every rank).
  std::size_t w = n;
  for (std::size_t p = 1; !alike && !sparse && !tiers && p < n && w == n; ++p) {
    if (n % p != 0) continue;
    bool repeats = true;
    for (std::size_t r = p; r < n && repeats; ++r) repeats = launch[r] == launch[r - p] && size_of[r] == size_of[r - p];
    if (repeats) w = p;
  }
  // On two tiers the same by leaves (m ranks a leaf, one after another):
  // where the chunks' sizes and the launches repeat every m, and each leaf's
  // last rank's send into the next leaf costs as leaf 0's on trunks no other
  // rank's send crosses, rank r + m's steps are rank r's, so leaf 0's ranks
  // stand for all (O(mN), as book_ring_leaves books them); their HBM uses
  // are booked on queues (`queues`, below).
  auto leaf_period = [&]() {
    const auto m = static_cast<std::size_t>(s.gpus_per_leaf());
    if (m < 2 || m >= n || n % m != 0) return false;
    for (std::size_t r = 0; r < n; ++r)
      if (static_cast<std::size_t>(s.leaf_of(static_cast<NodeId>(r))) != r / m) return false;
    for (std::size_t r = m; r < n; ++r)
      if (launch[r] != launch[r - m] || size_of[r] != size_of[r - m]) return false;
    // Each leaf's sends into the next (the reduce-scatter's and the
    // gather's, once per chunk size) against leaf 0's (same_across); `ports`
    // checks that no two ranks' sends cross one trunk.
    std::vector<char> seen(2 * sizes.size(), 0);
    for (std::size_t j = 0; j + 1 < n; ++j)  // round j: leaf 0's last rank sends chunk m - 1 - j, gathers m - j
      for (int g = 0; g < 2; ++g) {
        const std::size_t ch = (m - 1 + g + n - j) % n, t = g ? ids.ag_rep(j) : 2 * j + 1;
        char& done = seen[2 * size_of[ch] + static_cast<std::size_t>(g)];
        if (done) continue;
        done = 1;
        const KindCost* k0 = kind_cost(ids.rec(t, m - 1));
        if (!k0) return false;
        const KindCost first = *k0;
        for (std::size_t r = 2 * m - 1; r < n; r += m) {
          const KindCost* k = kind_cost(ids.rec(t, r));
          if (!k || !same_across(first, *k) || !ports(*k, g == 0, r)) return false;
        }
      }
    return true;
  };
  if (tiers && ring_q_closed_by_leaves() && leaf_period()) w = static_cast<std::size_t>(s.gpus_per_leaf());
  if (tiers && only_by_leaves && w == n) return false;
  const Ids red(n, w);
  auto prev_w = [w](std::size_t r) { return r == 0 ? w - 1 : r - 1; };
  auto next_w = [w](std::size_t r) { return r + 1 == w ? 0 : r + 1; };

  // Every step's finish: by representative (ranks alike) or one by one.
  std::vector<double> fin_rep;
  // (Huge pages, not zeroed: every entry from w on is written before it is read.)
  std::vector<double, BigAllocator<double>> fin_all;
  auto fin = [&](StepId i) {
    std::size_t t = 0, r = 0;
    ids.of(i, t, r);
    if (t == ids.reps()) return launch[r];
    if (sparse) return sparse->finish(ids, t, r);
    return alike ? fin_rep[t] : fin_all[w == n ? i : red.id(t, r % w)];
  };
  auto ready_of = [&](std::size_t t, std::size_t r) {
    StepId d[3];
    const int nd = ids.deps(t, r, d);
    double ready = 0;
    for (int k = 0; k < nd; ++k) ready = std::max(ready, fin(d[k]));
    return ready;
  };
  // A step's finish from its ready time, no use queueing (each starts at t0).
  auto finish = [](const KindCost& k, double ready) {
    const double t0 = ready + k.fixed;
    double end = t0;
    for (const KindCost::U& u : k.u)
      if (u.books) end = std::max(end, t0 + u.d);
    return end + k.latency;
  };

  // By leaves on two tiers: the HBMs booked as book() books them
  // (ring_closed_parts.h), their uses taken in the order of ready times.
  const bool queues = tiers && w < n;
  RanksHbm hbms;
  if (queues) hbms.reset(w);
  if (alike) {
    // Ranks alike: one rank's steps stand for every rank's. Rank 0's queues
    // (its ports and HBM, by resource) check that each use starts at or
    // after the last one ended (no holder, start times that never
    // decrease): then no use overlaps another on any rank's queue.
    std::vector<std::pair<int, analytic::QueueTail>> queues;
    auto queue = [&](int base) -> analytic::QueueTail& {
      for (auto& [b, q] : queues)
        if (b == base) return q;
      queues.emplace_back(base, analytic::QueueTail{});
      return queues.back().second;
    };
    fin_rep.assign(ids.reps(), 0.0);
    for (std::size_t t = 0; t < ids.reps(); ++t) {
      const KindCost* k = kind_of_step(t, 0);
      if (!k) return false;
      const double ready = ready_of(t, 0), t0 = ready + k->fixed;
      for (std::size_t u = 0; u < k->u.size(); ++u) {
        if (!k->u[u].books) continue;
        Use rec;
        if (!analytic::append_use(queue(k->u[u].base), ready, t0, k->u[u].d, static_cast<StepId>(t), static_cast<int>(u), rec) ||
            rec.holder != kNoStep)
          return false;
      }
      fin_rep[t] = finish(*k, ready);
    }
  } else if (!sparse) {
    // Rank by rank, round by round. Ports never queue: a rank's sends (its
    // egress, its receiver's ingress; on two tiers a leaf's uplink and
    // downlink, which its last rank's sends alone cross) follow one another
    // through their deps. Rank r's HBM serves two chains: its quantise steps
    // Q_k and the fused reduce of the send into it S_k (round k); Q_k+1
    // waits for S_k and Q_k, S_k+1 for S_k, its sum for S_N-2, its
    // dequantise for everything. So every Q_j starts after every S before
    // it ends, and no use queues (every use starts at its t0 whatever order
    // book() takes them in) if no S_k, nor the sum, overlaps a Q_j, j <= k:
    // checked per rank against the Q_j that end after the last S started.
    if (3 * static_cast<double>(n) * static_cast<double>(w) > 4e8) return false;  // (the finishes: 8 bytes a step)
    if (w < n) ++ring_q_ranks_period_total();
    fin_all.resize(3 * n * w);
    std::vector<Window> quantises(w);
    std::vector<char> checked(kinds.size(), 0);
    std::vector<Brief> briefs(kinds.size());
    Brief alone_brief;
    const std::size_t ns = sizes.size();
    // Step (t, r) of kind `kd` on chunk `ch`, ready at `ready`: its finish recorded, its cost returned.
    // (The first step of a kind and size, and on two tiers each send between leaves, costed and
    // checked (on two tiers every step comes here, to find those sends); kept apart
    // so that the step below, taken 3N^2 times, stays small enough to be inlined.)
    auto first_of_kind = [&](std::size_t t, std::size_t r, Kind kd, std::size_t at) -> const Brief* {
      const bool alone = tiers && (kd == kSend || kd == kGather) && crossing(r);
      if (!alone && checked[at]) return &briefs[at];
      const KindCost* k = kind_of_step(t, r);
      if (!k || !(kd == kSend ? ports(*k, true, r) : kd == kGather ? ports(*k, false, r) : own_hbm_only(*k))) return nullptr;
      if (!alone) checked[at] = 1;
      Brief& to = alone ? alone_brief : briefs[at];
      to = brief(*k);
      return &to;
    };
    auto step = [&](std::size_t t, std::size_t r, Kind kd, std::size_t ch, double ready) -> const Brief* {
      const std::size_t at = kd * ns + size_of[ch];
      const Brief* b = !tiers && checked[at] ? &briefs[at] : first_of_kind(t, r, kd, at);
      if (!b) return nullptr;
      fin_all[red.id(t, r)] = ((ready + b->fixed) + b->longest) + b->latency;
      return b;
    };
    auto send_fin = [&](std::size_t round, std::size_t r) { return fin_all[w + 2 * (w * round + r) + 1]; };
    auto gather_fin = [&](std::size_t j, std::size_t r) { return fin_all[red.b2 + w * j + r]; };
    // (queues) Step (t, r), its brief `b` found by step() ready at `ready`, on its HBM's queue
    // (its own rank's, or a send's receiver's): its finish recorded again, as book() finds it:
    // the latest of its uses' ends (the HBM's from where the queue put it) + latency.
    auto on_hbm = [&](std::size_t t, std::size_t r, const Brief& b, double ready) {
      if (!b.on) return true;  // (no HBM use: an empty chunk's)
      const bool send = t < ids.sum_rep() && t % 2 == 1;
      const double t0 = ready + b.fixed;
      double start = t0;
      if (!hbms.book(send ? next_w(r) : r, static_cast<StepId>(red.id(t, r)), ready, t0, b.hbm, start)) return false;
      if (start == t0) return true;  // (step() recorded it so)
      double end = t0;
      const KindCost* k = kind_of_step(t, r);
      for (std::size_t u = 0; k && u < k->u.size(); ++u)
        if (k->u[u].books) end = std::max(end, (static_cast<int>(u) == k->hbm ? start : t0) + k->u[u].d);
      fin_all[red.id(t, r)] = end + b.latency;
      return true;
    };
    // (queues) The quantise steps, the reduce-scatter's sends and the sums, in the order of
    // their ready times, as book() takes them: a step is pushed when its deps have ended,
    // never before the time taken last (its ready time is their latest end). The sends
    // into a rank and from it end round after round; the chain of sends can run ahead of
    // another rank's quantise steps by rounds. Then the gathers, which use no HBM.
    if (queues) {
      using Ev = std::pair<double, std::size_t>;  // (ready, (round x w + rank) x 2 + 1 for a send; sums from `sums`)
      std::vector<Ev> heap;
      const auto later = [](const Ev& a, const Ev& b) { return a > b; };
      const auto push = [&](double ready, std::size_t code) {
        heap.emplace_back(ready, code);
        std::push_heap(heap.begin(), heap.end(), later);
      };
      const std::size_t sums = 2 * (n - 1) * w;
      std::vector<std::size_t> recv(w, 0), sent(w, 0), next_q(w, 1);  // rounds of sends done; the next quantise
      for (std::size_t r = 0; r < w; ++r) push(launch[r], 2 * r);
      std::size_t taken = 0;
      while (!heap.empty()) {
        std::pop_heap(heap.begin(), heap.end(), later);
        const auto [ready, code] = heap.back();
        heap.pop_back();
        if ((++taken & 0xffff) == 0) ctx.check();
        if (code >= sums) {
          const std::size_t r = code - sums;
          const Brief* k = step(ids.sum_rep(), r, kSum, ids.next(r), ready);
          if (!k || !on_hbm(ids.sum_rep(), r, *k, ready)) return false;
          continue;
        }
        const std::size_t round = code / 2 / w, r = code / 2 % w, t = 2 * round + code % 2;
        const bool send = code % 2 == 1;
        const std::size_t ch = (n - round + r) % n;  // rank r's chunk this round
        const Brief* k = step(t, r, send ? kSend : round == 0 ? kQuantiseFirst : kQuantise, ch, ready);
        if (!k || !on_hbm(t, r, *k, ready)) return false;
        if (!send) {
          push(std::max(fin_all[red.id(t, r)], launch[next_w(r)]), code + 1);
          continue;
        }
        ++sent[r];
        if (++recv[next_w(r)] == n - 1) push(fin_all[red.id(t, r)], sums + next_w(r));  // (its last send into it)
        for (const std::size_t x : {r, next_w(r)}) {  // a quantise step whose two sends of the round before have ended
          for (; next_q[x] < n - 1 && recv[x] >= next_q[x] && sent[x] >= next_q[x]; ++next_q[x])
            push(std::max(send_fin(next_q[x] - 1, prev_w(x)), send_fin(next_q[x] - 1, x)), 2 * (next_q[x] * w + x));
        }
      }
    }
    for (std::size_t round = 0; !queues && round + 1 < n; ++round) {
      ctx.check();
      ctx.report(static_cast<double>(round) / static_cast<double>(2 * n));
      const std::size_t ch0 = (n - round) % n;  // rank 0's chunk this round
      for (std::size_t r = 0, ch = ch0; r < w; ++r, ch = ch + 1 == n ? 0 : ch + 1) {  // the quantise steps
        const double ready = round == 0 ? launch[r] : std::max(send_fin(round - 1, prev_w(r)), send_fin(round - 1, r));
        const Brief* k = step(2 * round, r, round == 0 ? kQuantiseFirst : kQuantise, ch, ready);
        if (!k) return false;
        quantises[r].push(hbm_span(*k, ready));
      }
      for (std::size_t r = 0, ch = ch0; r < w; ++r, ch = ch + 1 == n ? 0 : ch + 1) {  // the sends, into r + 1
        const std::size_t to = next_w(r);
        const double ready = std::max(fin_all[w + 2 * (w * round + r)], launch[to]);
        const Brief* k = step(2 * round + 1, r, kSend, ch, ready);
        if (!k) return false;
        if (!quantises[to].clear_of(hbm_span(*k, ready))) return false;
      }
    }
    for (std::size_t r = 0; !queues && r < w; ++r) {  // the sums, after every quantise step
      const double ready = send_fin(n - 2, prev_w(r));
      const Brief* k = step(ids.sum_rep(), r, kSum, ids.next(r), ready);
      if (!k) return false;
      if (!quantises[r].clear_of(hbm_span(*k, ready))) return false;
    }
    for (std::size_t j = 0; j + 1 < n; ++j) {
      ctx.check();
      for (std::size_t r = 0, ch = (1 + n - j) % n; r < w; ++r, ch = ch + 1 == n ? 0 : ch + 1) {
        const double before = j == 0 ? std::max(fin_all[red.b1 + r], send_fin(n - 2, r))
                                     : std::max(gather_fin(j - 1, prev_w(r)), gather_fin(j - 1, r));
        if (!step(ids.ag_rep(j), r, kGather, ch, std::max(before, launch[next_w(r)]))) return false;
      }
    }
    for (std::size_t r = 0; r < w; ++r) {
      const double ready = std::max(gather_fin(n - 2, prev_w(r)), gather_fin(n - 2, r));
      const Brief* k = step(ids.dequant_rep(), r, kDequantise, 0, ready);
      if (!k || (queues && !on_hbm(ids.dequant_rep(), r, *k, ready))) return false;
    }
  }

  // The first of the latest to finish (with ranks alike, rank 0's copy of
  // the latest representative: its smallest index).
  double best = -1;
  StepId last = kNoStep;
  if (sparse) {
    last = sparse->last(ids, best);
    if (std::vector<double>* out = ring_q_sparse_finishes()) {
      out->resize(3 * n * n);
      for (std::size_t i = 0; i < out->size(); ++i) (*out)[i] = fin(static_cast<StepId>(i));
    }
  } else if (alike) {
    for (std::size_t t = 0; t <= ids.reps(); ++t) {
      const StepId i = ids.id(t, 0);
      if (fin(i) > best || (fin(i) == best && i < last)) best = fin(i), last = i;
    }
  } else {
    // The first of the greatest in id order (launches, then steps from n):
    // the greatest first, in four independent maxima (a scan updating one
    // best per step is a chain of dependent compares: 30% of a 1024-GPU
    // point), then its first occurrence. With a period w, ranks 0..w-1's
    // steps hold every value, and each first (t, r) in `red`'s order is
    // first in the whole's (the same order of step, then rank).
    for (std::size_t r = 0; r < w; ++r) best = std::max(best, launch[r]);
    double m0 = best, m1 = best, m2 = best, m3 = best;
    const std::size_t end = 3 * n * w;
    const double* f = fin_all.data();
    std::size_t i = w;
    for (; i + 4 <= end; i += 4) {
      m0 = f[i] > m0 ? f[i] : m0;
      m1 = f[i + 1] > m1 ? f[i + 1] : m1;
      m2 = f[i + 2] > m2 ? f[i + 2] : m2;
      m3 = f[i + 3] > m3 ? f[i + 3] : m3;
    }
    for (; i < end; ++i) m0 = f[i] > m0 ? f[i] : m0;
    best = std::max(std::max(m0, m1), std::max(m2, m3));
    for (std::size_t r = 0; r < w && last == kNoStep; ++r)
      if (launch[r] == best) last = static_cast<StepId>(r);
    const auto from = fin_all.begin() + static_cast<std::ptrdiff_t>(w), to = fin_all.begin() + static_cast<std::ptrdiff_t>(end);
    if (const auto at = std::find(from, to, best); last == kNoStep && at != to) {
      std::size_t t = 0, r = 0;
      red.of(static_cast<StepId>(at - fin_all.begin()), t, r);
      last = ids.id(t, r);
    }
  }

  // max_link_bytes as link_bytes() adds it: rank r sends every chunk but
  // r + 1 in the reduce-scatter and every chunk but r + 2 in the gather, and
  // its receiver takes the same bytes in (exact integer sums: any order).
  {
    std::vector<std::uint64_t> rs(n), ag(n);
    std::uint64_t rs_all = 0, ag_all = 0;
    for (std::size_t ch = 0; ch < n; ++ch) {
      const Rec send{What::RsSend, false, 0, 1, static_cast<std::int32_t>(ch)};
      rs_all += rs[ch] = region_bytes(s, x.fill(send).srcs[0]);
      const Rec gather{What::AgSend, false, 0, 1, static_cast<std::int32_t>(ch)};
      ag_all += ag[ch] = region_bytes(s, x.fill(gather).srcs[0]);
    }
    std::uint64_t m = 0;
    for (std::size_t r = 0; r < n; ++r) m = std::max(m, (rs_all - rs[(r + 1) % n]) + (ag_all - ag[(r + 2) % n]));
    if (m >= (std::uint64_t{1} << 53)) return false;
    res.max_link_bytes = static_cast<double>(m);
  }

  // The walk: no use queued, so each use ran from its step's t0 for its
  // duration, and each step was bound by its last use or its latest dep.
  struct View {
    const Ids& ids;
    decltype(cost_of)& costf;
    bool cost(StepId i, StepCost& to) const {
      std::size_t t = 0, r = 0;
      ids.of(i, t, r);
      return costf(ids.rec(t, r), to);
    }
  } view{ids, cost_of};
  struct Records {
    const Ids& ids;
    decltype(kind_of_step)& kind_of;
    decltype(ready_of)& ready;
    decltype(fin)& fin_of;
    const RanksHbm* hbms;  // (by leaves) the HBM uses that queued
    const Ids& red;
    std::size_t w;
    mutable Use scratch;
    // Step (t, r)'s HBM use if it queued (null: it started at its t0).
    const RanksHbm::Rec* queued(std::size_t t, std::size_t r) const {
      if (!hbms || hbms->queued.empty()) return nullptr;
      const auto it = hbms->queued.find(static_cast<StepId>(red.id(t, r % w)));
      return it == hbms->queued.end() ? nullptr : &it->second;
    }
    // The step's kind cost and t0 (a launch: none).
    const KindCost* at(StepId i, double& t0) const {
      std::size_t t = 0, r = 0;
      ids.of(i, t, r);
      if (t == ids.reps()) return nullptr;
      const KindCost* k = kind_of(t, r);
      t0 = ready(t, r) + k->fixed;
      return k;
    }
    int bound_use(StepId i) const {
      double t0 = 0;
      const KindCost* k = at(i, t0);
      std::size_t t = 0, r = 0;
      ids.of(i, t, r);
      const RanksHbm::Rec* rec = k && k->hbm >= 0 ? queued(t, r) : nullptr;
      int b = -1;
      double end = t0;
      for (std::size_t u = 0; k && u < k->u.size(); ++u) {
        const double e = (rec && static_cast<int>(u) == k->hbm ? rec->start : t0) + k->u[u].d;
        if (k->u[u].books && e > end) end = e, b = static_cast<int>(u);
      }
      return b;
    }
    const Use& use(StepId i, int u, const StepCost& /*c*/) const {
      double t0 = 0;
      const KindCost* k = at(i, t0);
      const KindCost::U x = k->u[static_cast<std::size_t>(u)];
      std::size_t t = 0, r = 0;
      ids.of(i, t, r);
      const RanksHbm::Rec* rec = u == k->hbm ? queued(t, r) : nullptr;
      if (!rec) {
        scratch = Use{t0, x.books ? t0 + x.d : t0, kNoStep, -1};
        return scratch;
      }
      // It waited for a step on the same HBM: its rank's own, or the send into it (from the rank before).
      std::size_t ht = 0, hr = 0;
      red.of(rec->holder, ht, hr);
      const std::size_t owner = t < ids.sum_rep() && t % 2 == 1 ? ids.next(r) : r;
      hr = ht < ids.sum_rep() && ht % 2 == 1 ? ids.prev(owner) : owner;
      scratch = Use{rec->start, rec->start + x.d, ids.id(ht, hr), kind_of(ht, hr)->hbm};
      return scratch;
    }
    StepId bound_dep(StepId i) const {  // the first latest finishing dep (book.h)
      std::size_t t = 0, r = 0;
      ids.of(i, t, r);
      StepId d[3];
      const int nd = ids.deps(t, r, d);
      StepId b = kNoStep;
      double most = -1;
      for (int k = 0; k < nd; ++k)
        if (fin_of(d[k]) > most) most = fin_of(d[k]), b = d[k];
      return b;
    }
  } records{ids, kind_of_step, ready_of, fin, queues ? &hbms : nullptr, red, w, {}};
  if (last == kNoStep) return false;
  if (queues && !hbms.queued.empty()) ++ring_q_hbm_queued_total();
  analytic::walk_from(view, c, records, last, best, res);
  return true;
}

}  // namespace scin::shot
