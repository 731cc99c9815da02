// One-shot's and the two-shots' booking in closed order (shot_closed.h).
#include "engines/analytic/shot_closed.h"

#include <algorithm>
#include <cstdint>
#include <deque>
#include <limits>
#include <numeric>
#include <unordered_map>
#include <utility>
#include <vector>

#include "engines/analytic/book.h"
#include "engines/analytic/book_in_order.h"
#include "engines/analytic/shot_flat.h"
#include "engines/analytic/shot_star.h"
#include "fabric/graph.h"
#include "model/cost_grid.h"

namespace scin::shot {

namespace {

using Use = AnalyticWorkspace::Use;

using analytic::append_use;
using Tail = analytic::QueueTail;

// At most this many uses per push (a push on every plane of a star whose
// planes are not alike has two per plane, on two tiers up to four).
constexpr std::size_t kMaxUses = 128;

// One booking's arrays, kept per thread for the next (freeing a 1024-GPU point's ~0.6 MB made glibc
// give the heap's top back and the next point fault it in again: performance.md section 95).
struct ClosedWork {
  std::vector<std::uint32_t> leaf_tab, rs_shape, ag_shape;
  std::vector<Tail> hbm;
  std::vector<Use> hbm_rec;
  std::vector<int> hbm_bound;
  std::vector<double> ready_fin, w1max, fin_red, w2max;
  std::vector<std::size_t> w1arg, order, w2arg;
  std::vector<star::Push> star_rs, star_ag;
  star::Queues star_q;
  star::Latest star_l;
  FlatPushes flat;
  // The walk's replayed queues' records, kept with their capacity (a deque: one's address stays while
  // another is added); past 2^16 records (two tiers' trunks) released at the next booking.
  std::deque<std::vector<std::pair<StepId, Use>>> replays;
};

// The first use that ends last (book()'s bound use), from t0; -1: none.
int bound_of(const Use* rec, std::size_t uses, double t0) {
  double end = t0;
  int bound = -1;
  for (std::size_t k = 0; k < uses; ++k)
    if (rec[k].end > end) {
      end = rec[k].end;
      bound = static_cast<int>(k);
    }
  return bound;
}

}  // namespace

bool book_closed(const Config& cfg, Shape& x, CostClasses& classes, const ResourceMap& rm, bool one_plane,
                 const RunContext& ctx, AnalyticResult& res) {
  const Schedule& s = x.b.s;
  const std::size_t n = static_cast<std::size_t>(s.gpus);
  // A star: a push's uses are its sender's and receiver's ports (checked per
  // shape below) and every pair's pushes of one shard size cost alike. Two
  // tiers: so do the pushes within a leaf, and those between leaves, whose
  // uses add the trunks of the spine ECMP picks for the pair (each cost is
  // checked below against that pair's route).
  const bool tiers = rm.topology == Topology::TwoTier;
  if (n < 2 || x.ring || (rm.topology != Topology::Star && !tiers)) return false;
  res = AnalyticResult{};
  const bool q = x.quantised, one = x.one_shot;
  // A rank's leaf (a star: one), the first rank of a leaf, and whether a pair crosses the spines.
  const std::size_t per_leaf = tiers ? static_cast<std::size_t>(s.gpus_per_leaf()) : n;
  if (per_leaf == 0 || n % per_leaf != 0) return false;
  const std::size_t leaves = n / per_leaf;
  if (tiers && static_cast<std::size_t>(rm.leaves) != leaves) return false;
  // (A table: a division per lookup was a tenth of a push at 1024 GPUs.)
  thread_local ClosedWork work;
  auto fresh = [](auto& a, std::size_t m, auto v) -> auto& {  // one of work's arrays: m copies of v
    a.assign(m, v);
    return a;
  };
  auto& leaf_tab = fresh(work.leaf_tab, n, std::uint32_t{0});
  for (std::size_t r = 0; r < n; ++r) leaf_tab[r] = static_cast<std::uint32_t>(r / per_leaf);
  auto leaf = [&](std::size_t r) { return static_cast<std::size_t>(leaf_tab[r]); };
  auto crossing = [&](std::size_t a, std::size_t b) { return leaf(a) != leaf(b); };
  const ShotIds ids(n, q);
  StepCost c;
  auto cost = [&](const Rec& r, StepCost& to) {
    auto full = [&](StepCost& f) { return analytic_step_cost(cfg, s, rm, x.fill(r), f, one_plane, false); };
    if (r.what == What::Launch) return full(to);
    return classes.cost(r, x.count_of(r), rm, to, full);
  };
  auto rec_of = [](What w, std::size_t a, std::size_t b) {
    return Rec{w, false, static_cast<std::int32_t>(a), static_cast<std::int32_t>(b), 0};
  };
  // The first of the latest to finish (book()'s last step).
  double best = -1;
  StepId last = kNoStep;
  auto seen = [&](StepId i, double fin) {
    if (fin > best || (fin == best && i < last)) {
      best = fin;
      last = i;
    }
  };
  // A step without uses: its finish from its ready time (false: a negative part).
  auto free_fin = [&](const Rec& r, double ready, double& fin) {
    if (!cost(r, c) || !c.uses.empty() || !(c.fixed_ns >= 0) || !(c.latency_total_ns() >= 0)) return false;
    fin = (ready + c.fixed_ns) + c.latency_total_ns();
    return true;
  };
  // A rank's compute on its own HBM: its record and bound use are kept (3 per rank).
  auto& hbm = fresh(work.hbm, n, Tail{});
  auto& hbm_rec = fresh(work.hbm_rec, 3 * n, Use{});
  auto& hbm_bound = fresh(work.hbm_bound, 3 * n, -1);
  auto compute_fin = [&](const Rec& r, std::size_t slot, StepId id, double ready, double& fin) {
    if (!cost(r, c) || c.uses.size() > 1 || !(c.fixed_ns >= 0) || !(c.latency_total_ns() >= 0)) return false;
    const double t0 = ready + c.fixed_ns;
    const auto rank = static_cast<std::size_t>(r.a);
    Use& u = hbm_rec[3 * rank + slot];
    u = Use{t0, t0, kNoStep, -1};
    if (!c.uses.empty()) {
      const ResourceUse& ru = c.uses[0];
      if (ru.fed_by_transfers || ru.resource != rm.hbm(r.a)) return false;
      if (ru.amount_bytes > 0 && !append_use(hbm[rank], ready, t0, ru.amount_bytes / ru.rate_GBps, id, 0, u)) return false;
    }
    hbm_bound[3 * rank + slot] = bound_of(&u, c.uses.size(), t0);
    fin = std::max(t0, u.end) + c.latency_total_ns();
    return true;
  };

  // Launches (and quantise steps): every rank ready at once.
  auto& ready_fin = fresh(work.ready_fin, n, 0.0);
  for (std::size_t r = 0; r < n; ++r) {
    double fin = 0;
    if (!free_fin(rec_of(What::Launch, r, 0), 0.0, fin)) return false;
    seen(ShotIds::id(q ? 2 * r : r), fin);
    if (q) {
      const double l = fin;
      if (!compute_fin(rec_of(What::Quant, r, 0), 0, ids.ready(r), l, fin)) return false;
      seen(ids.ready(r), fin);
    }
    ready_fin[r] = fin;
    if (fin != ready_fin[0]) return false;
  }
  const double T = ready_fin[0];

  // The pushes' shapes, per phase, shard size and whether the pair crosses
  // the spines (a scatter push to shard j, a gather push of shard j), from
  // one push of that kind: each use's role and, for a port, its stride per
  // rank. A pair's uses are in the order step_cost() lists them: a star's
  // as the shape's, two tiers' by plane, then by resource (routed::write_cost
  // books each plane's links sorted).
  const int port_stride = rm.egress(1, 0) - rm.egress(0, 0);
  std::vector<PushShape> shapes;
  struct Key {
    What w;
    std::uint64_t count;
    bool crossing;
    bool operator==(const Key&) const = default;
  };
  std::vector<Key> shape_key;
  // Use k of a pair's push: its resource, in the order step_cost() lists them (`order`: the shape's uses).
  // A pair's spine ECMP pick (0 within a leaf or on a star), and the resource
  // of a shape's use for the pair (a trunk's as ResourceMap::uplink and
  // downlink number them, without the call).
  const int trunk0 = tiers ? rm.uplink(0, 0, 0) : 0;
  const int spines = rm.spines, leaves_i = static_cast<int>(leaves);
  auto spine_of = [&](std::size_t from, std::size_t to) {
    return tiers && crossing(from, to) ? ecmp_pick(static_cast<int>(from), static_cast<int>(to), spines) : 0;
  };
  auto resource_of = [&](const PushShape::U& u, std::size_t from, std::size_t to, int spine) {
    switch (u.role) {
      case PushShape::Role::Sender: return u.base + static_cast<int>(from) * u.stride;
      case PushShape::Role::Receiver: return u.base + static_cast<int>(to) * u.stride;
      case PushShape::Role::Up: return trunk0 + 2 * ((u.plane * leaves_i + static_cast<int>(leaf(from))) * spines + spine);
      case PushShape::Role::Down: return trunk0 + 2 * ((u.plane * leaves_i + static_cast<int>(leaf(to))) * spines + spine) + 1;
    }
    return 0;
  };
  auto place = [&](const PushShape& p, std::size_t from, std::size_t to, int* res_of, std::uint8_t* order) {
    const int spine = spine_of(from, to);
    const std::size_t m = p.u.size();
    for (std::size_t k = 0; k < m; ++k) {
      res_of[k] = resource_of(p.u[k], from, to, spine);
      order[k] = static_cast<std::uint8_t>(k);
    }
    if (!tiers) return;
    for (std::size_t k = 1; k < m; ++k)  // (insertion sort: at most four uses per plane)
      for (std::size_t i = k; i > 0; --i) {
        const PushShape::U &a = p.u[order[i - 1]], &b = p.u[order[i]];
        if (a.plane < b.plane || (a.plane == b.plane && res_of[order[i - 1]] < res_of[order[i]])) break;
        std::swap(order[i - 1], order[i]);
      }
  };
  // Another rank than `j` in j's leaf (cross = false) or in another leaf; -1: none.
  auto partner = [&](std::size_t j, bool cross) -> long {
    if (!cross) return per_leaf < 2 ? -1 : static_cast<long>(j % per_leaf == 0 ? j + 1 : j - j % per_leaf);
    return leaves < 2 ? -1 : static_cast<long>(((leaf(j) + 1) % leaves) * per_leaf);
  };
  auto shape_of = [&](What w, std::size_t j, bool cross, std::uint32_t& out) {
    const Key key{w, x.shards[j].count, cross};
    for (std::size_t k = 0; k < shapes.size(); ++k)
      if (shape_key[k] == key) {
        out = static_cast<std::uint32_t>(k);
        return true;
      }
    const long other = tiers ? partner(j, cross) : (j == 0 ? 1 : 0);
    if (other < 0) return true;  // (no such pair)
    const auto o = static_cast<std::size_t>(other);
    const Rec r = w == What::RsPush ? rec_of(w, o, j) : rec_of(w, j, o);
    if (!cost(r, c) || c.uses.size() > kMaxUses) return false;
    PushShape p;
    p.fixed = c.fixed_ns;
    p.latency = c.latency_total_ns();
    if (!(p.fixed >= 0) || !(p.latency >= 0)) return false;
    const auto from = static_cast<std::size_t>(r.a), to = static_cast<std::size_t>(r.b);
    for (const ResourceUse& u : c.uses) {
      if (u.fed_by_transfers) return false;
      const ResourceKind kind = rm.kind(u.resource);
      PushShape::U pu{PushShape::Role::Sender, 0, port_stride, 0, u.amount_bytes / u.rate_GBps, u.amount_bytes > 0};
      if (is_port(kind)) {
        const bool sender = kind == ResourceKind::Egress;
        pu.role = sender ? PushShape::Role::Sender : PushShape::Role::Receiver;
        const int rank = sender ? r.a : r.b;
        pu.base = u.resource - rank * port_stride;
        const int first = sender ? rm.egress(0, 0) : rm.ingress(0, 0);
        if (pu.base < first || pu.base >= first + port_stride) return false;  // (another rank's port)
        pu.plane = pu.base - first;
      } else if (int trunk_leaf = 0; tiers && trunk_of(rm, u.resource, pu.plane, trunk_leaf)) {
        pu.role = kind == ResourceKind::Uplink ? PushShape::Role::Up : PushShape::Role::Down;
      } else {
        return false;
      }
      p.u.push_back(pu);
    }
    // The pair's own uses, placed from the roles: the resources step_cost() named, in its order.
    int placed[kMaxUses];
    std::uint8_t order[kMaxUses];
    place(p, from, to, placed, order);
    for (std::size_t k = 0; k < p.u.size(); ++k)
      if (order[k] != k || placed[k] != c.uses[k].resource) return false;
    out = static_cast<std::uint32_t>(shapes.size());
    shapes.push_back(std::move(p));
    shape_key.push_back(key);
    return true;
  };
  // shape[2 j + crossing]: the scatter's pushes to shard j, the gather's of shard j.
  auto& rs_shape = fresh(work.rs_shape, 2 * n, std::uint32_t{0});
  auto& ag_shape = fresh(work.ag_shape, 2 * n, std::uint32_t{0});
  for (std::size_t j = 0; j < n; ++j)
    for (int cross = 0; cross < (tiers ? 2 : 1); ++cross)
      if (!shape_of(What::RsPush, j, cross, rs_shape[2 * j + cross]) ||
          (!one && !shape_of(What::AgPush, j, cross, ag_shape[2 * j + cross])))
        return false;
  auto rs_of = [&](std::size_t from, std::size_t to) -> const PushShape& {
    return shapes[rs_shape[2 * to + (crossing(from, to) ? 1 : 0)]];
  };
  auto ag_of = [&](std::size_t from, std::size_t to) -> const PushShape& {
    return shapes[ag_shape[2 * from + (crossing(from, to) ? 1 : 0)]];
  };
  // A signal's cost: a star's one; two tiers' within a leaf and between leaves.
  double sig_fixed[2] = {0, 0}, sig_latency[2] = {0, 0};
  for (int cross = 0; cross < (tiers ? 2 : 1); ++cross) {
    const long other = tiers ? partner(0, cross) : 1;
    if (other < 0) continue;
    double f = 0;
    if (!free_fin(rec_of(What::Signal, 0, static_cast<std::size_t>(other)), 0.0, f)) return false;
    sig_fixed[cross] = c.fixed_ns;
    sig_latency[cross] = c.latency_total_ns();
  }
  auto flag_of = [&](double fin, std::size_t from, std::size_t to) {
    const int cross = crossing(from, to) ? 1 : 0;
    return (fin + sig_fixed[cross]) + sig_latency[cross];
  };

  // The booking pass's queues, one per resource (allocated when a phase is booked push by push).
  std::vector<Tail> queues;
  std::size_t pushes = 0;
  auto tick = [&] {  // a push done: a stop request is seen every 4096
    if ((++pushes & 0xfff) == 0) {
      ctx.check();
      ctx.report(0.5);
    }
  };
  // One push replayed on the queue `q` of resource `only`, the others left
  // alone: `out` receives the records in the pair's use order (only the
  // replayed queue's are meaningful).
  auto push = [&](const PushShape& p, std::size_t from, std::size_t to, StepId id, double ready, Tail& q, int only,
                  Use* out, int* res_of, std::uint8_t* order) {
    place(p, from, to, res_of, order);
    const double t0 = ready + p.fixed;
    for (std::size_t k = 0; k < p.u.size(); ++k) {
      Use rec{t0, t0, kNoStep, -1};
      if (p.u[order[k]].books && only == res_of[order[k]])
        append_use(q, ready, t0, p.u[order[k]].d, id, static_cast<int>(k), rec);  // (the booking pass checked it)
      out[k] = rec;
    }
    tick();
  };

  // The same push in the booking pass, where no use record is kept: its uses
  // are appended in the shape's order, not step_cost()'s. Each is on its own
  // queue (two on one queue keep their relative order: place() sorts
  // stably), so every queue sees the same uses at the same times and the
  // finish is the same; only the use index a queue remembers differs, and
  // the booking pass never reads it (the walk replays).
  auto push_main = [&](const PushShape& p, std::size_t from, std::size_t to, StepId id, double ready, double& fin) {
    const double t0 = ready + p.fixed;
    double end = t0;
    const int spine = spine_of(from, to);
    const int k_max = static_cast<int>(p.u.size());
    for (int k = 0; k < k_max; ++k) {
      const PushShape::U& u = p.u[static_cast<std::size_t>(k)];
      if (!u.books) continue;
      const int r = resource_of(u, from, to, spine);
      Use rec;
      if (!append_use(queues[static_cast<std::size_t>(r)], ready, t0, u.d, id, k, rec)) return false;
      end = std::max(end, rec.end);
    }
    fin = end + p.latency;
    tick();
    return true;
  };

  // The booking pass on flat queues where the shapes allow (shot_flat.h).
  FlatPushes& flat = work.flat;
  const bool fast = flat.prepare(shapes);
  auto flat_row = [&](std::size_t from, double ready, bool gather, auto&& each) {
    flat.row(from, ready, leaf_tab.data(), gather ? ag_shape.data() : rs_shape.data(), gather, each);
    const std::size_t before = pushes;
    pushes += n - 1;
    if ((before >> 12) != (pushes >> 12)) {  // (tick(): a stop request is seen every 4096 pushes)
      ctx.check();
      ctx.report(0.5);
    }
  };

  // The scatter: every push ready at T, taken in index order. On a star in
  // closed form (shot_star.h: O(N)) where it holds, else push by push.
  auto& w1max = fresh(work.w1max, n, -1.0);
  auto& fin_red = fresh(work.fin_red, n, 0.0);
  auto& w1arg = fresh(work.w1arg, n, std::size_t{0});
  auto scatter = [&] {
    if (fast) {
      flat.reset(n, leaves, spines);
      for (std::size_t r = 0; r < n; ++r)
        flat_row(r, T, false, [&](std::size_t j, bool cross, double fin) {
          const StepId id = ids.pair(ids.base_rs, r, j);
          seen(id, fin);
          const double flag = (fin + sig_fixed[cross]) + sig_latency[cross];  // (flag_of)
          seen(id + 1, flag);
          if (flag > w1max[j]) w1max[j] = flag, w1arg[j] = r;
        });
      return true;
    }
    queues.assign(static_cast<std::size_t>(rm.count()), Tail{});
    for (std::size_t r = 0; r < n; ++r)
      for (std::size_t j = 0; j < n; ++j) {
        if (j == r) continue;
        const StepId id = ids.pair(ids.base_rs, r, j);
        double fin = 0;
        if (!push_main(rs_of(r, j), r, j, id, T, fin)) return false;
        seen(id, fin);
        const double flag = flag_of(fin, r, j);
        seen(id + 1, flag);
        if (flag > w1max[j]) w1max[j] = flag, w1arg[j] = r;  // (the first latest in the wait's dep order)
      }
    return true;
  };
  // Per receiver, the latest push (the first sender with it) and its flag.
  auto latest = [&](const star::Latest& l, std::size_t base, std::vector<double>& wmax, std::vector<std::size_t>& warg) {
    for (std::size_t to = 0; to < n; ++to) {
      const std::size_t from = l.from[to];
      const StepId id = ids.pair(base, from, to);
      seen(id, l.fin[to]);
      wmax[to] = flag_of(l.fin[to], from, to);
      warg[to] = from;
      seen(id + 1, wmax[to]);
    }
  };
  std::vector<star::Push>& star_rs = work.star_rs;
  std::vector<star::Push>& star_ag = work.star_ag;
  star::Queues& star_q = work.star_q;
  star::Latest& star_l = work.star_l;
  const bool star_scatter = !tiers && star::pushes(shapes, rs_shape, n, star_rs) && star::scatter(T, star_rs, star_l, star_q);
  if (star_scatter) latest(star_l, ids.base_rs, w1max, w1arg), ++star::phases_in_closed_form();
  else if (!scatter()) return false;
  for (std::size_t j = 0; j < n; ++j) {
    double wfin = 0;
    if (!free_fin(rec_of(What::Wait, j, 0), std::max(w1max[j], ready_fin[j]), wfin)) return false;
    seen(ids.wait1(j), wfin);
    if (!compute_fin(rec_of(What::Reduce, j, 0), 1, ids.reduce(j), wfin, fin_red[j])) return false;
    seen(ids.reduce(j), fin_red[j]);
  }

  // The gather: shard j's pushes ready when its reduce ends, taken by (that time, index).
  auto& order = fresh(work.order, one ? 0 : n, std::size_t{0});
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t u, std::size_t v) { return fin_red[u] < fin_red[v]; });
  auto& w2max = fresh(work.w2max, n, -1.0);
  auto& w2arg = fresh(work.w2arg, n, std::size_t{0});
  if (star_scatter && !one && star::pushes(shapes, ag_shape, n, star_ag) && star::gather(fin_red, order, star_ag, star_q, star_l)) {
    latest(star_l, ids.base_ag, w2max, w2arg);
    ++star::phases_in_closed_form();
  } else if (!one) {
    if (star_scatter && !scatter()) return false;  // (the gather push by push starts from the scatter's queues)
    for (std::size_t j : order) {
      if (fast) {
        flat_row(j, fin_red[j], true, [&](std::size_t r, bool cross, double fin) {
          const StepId id = ids.pair(ids.base_ag, j, r);
          seen(id, fin);
          const double flag = (fin + sig_fixed[cross]) + sig_latency[cross];  // (flag_of)
          seen(id + 1, flag);
          if (flag > w2max[r] || (flag == w2max[r] && j < w2arg[r])) w2max[r] = flag, w2arg[r] = j;
        });
        continue;
      }
      for (std::size_t r = 0; r < n; ++r) {
        if (r == j) continue;
        const StepId id = ids.pair(ids.base_ag, j, r);
        double fin = 0;
        if (!push_main(ag_of(j, r), j, r, id, fin_red[j], fin)) return false;
        seen(id, fin);
        const double flag = flag_of(fin, j, r);
        seen(id + 1, flag);
        if (flag > w2max[r] || (flag == w2max[r] && j < w2arg[r])) w2max[r] = flag, w2arg[r] = j;
      }
    }
  }
  for (std::size_t r = 0; r < n && !one; ++r) {
    double wfin = 0;
    if (!free_fin(rec_of(What::Wait, r, 0), std::max(w2max[r], fin_red[r]), wfin)) return false;
    seen(ids.wait2(r), wfin);
    if (q) {
      double dfin = 0;
      if (!compute_fin(rec_of(What::Dequant, r, 0), 2, ids.wait2(r) + 1, wfin, dfin)) return false;
      seen(ids.wait2(r) + 1, dfin);
    }
  }

  // max_link_bytes as link_bytes() adds it (exact integer sums: any order).
  {
    std::vector<std::uint64_t> rs_bytes(n), ag_bytes(n);
    for (std::size_t j = 0; j < n; ++j) {
      const std::size_t other = j == 0 ? 1 : 0;
      rs_bytes[j] = region_bytes(s, x.fill(rec_of(What::RsPush, other, j)).srcs[0]);
      if (!one) ag_bytes[j] = region_bytes(s, x.fill(rec_of(What::AgPush, j, other)).srcs[0]);
    }
    const std::uint64_t rs_all = std::accumulate(rs_bytes.begin(), rs_bytes.end(), std::uint64_t{0});
    const std::uint64_t ag_all = std::accumulate(ag_bytes.begin(), ag_bytes.end(), std::uint64_t{0});
    std::uint64_t m = 0;
    for (std::size_t r = 0; r < n; ++r) {
      const std::uint64_t egress = (rs_all - rs_bytes[r]) + (n - 1) * ag_bytes[r];
      const std::uint64_t ingress = (n - 1) * rs_bytes[r] + (ag_all - ag_bytes[r]);
      m = std::max({m, egress, ingress});
    }
    if (m >= (std::uint64_t{1} << 53)) return false;
    res.max_link_bytes = static_cast<double>(m);
  }

  // The walk. A push's use records come from replaying the queue it is on:
  // the pushes that use it (a port's: its rank's; a trunk's: those from or
  // to its leaf), in the engine's order, kept by step.
  for (auto& recs : work.replays)
    if (recs.capacity() > (std::size_t{1} << 16)) recs = {};
  std::unordered_map<int, std::size_t> replayed;  // a resource -> its records in work.replays
  auto replay = [&](int res_k) -> const std::vector<std::pair<StepId, Use>>& {
    auto [it, fresh] = replayed.try_emplace(res_k, replayed.size());
    if (!fresh) return work.replays[it->second];
    if (work.replays.size() <= it->second) work.replays.emplace_back();
    std::vector<std::pair<StepId, Use>>& recs = work.replays[it->second];
    recs.clear();
    std::size_t from0 = 0, from1 = n, to0 = 0, to1 = n;
    int trunk_spine = -1;  // a trunk's spine: only the pairs between leaves the ECMP sends through it use it
    const ResourceKind kind = rm.kind(res_k);
    if (is_port(kind)) {
      int base = 0, stride = 0;
      const auto g = static_cast<std::size_t>(accel_rank_of(rm, res_k, base, stride));
      if (kind == ResourceKind::Egress) from0 = g, from1 = g + 1;
      else to0 = g, to1 = g + 1;
    } else {  // a trunk: the pushes from its leaf (an uplink) or to it (a downlink)
      int plane = 0, trunk_leaf = 0;
      trunk_of(rm, res_k, plane, trunk_leaf, &trunk_spine);
      const std::size_t l = static_cast<std::size_t>(trunk_leaf);
      if (kind == ResourceKind::Uplink) from0 = l * per_leaf, from1 = from0 + per_leaf;
      else to0 = l * per_leaf, to1 = to0 + per_leaf;
    }
    Tail queue;
    Use out[kMaxUses];
    int res_of[kMaxUses];
    std::uint8_t ord[kMaxUses];
    auto one_push = [&](const PushShape& p, std::size_t from, std::size_t to, StepId id, double ready) {
      if (trunk_spine >= 0 && (!crossing(from, to) || spine_of(from, to) != trunk_spine))
        return;  // (its uses leave this queue alone)
      push(p, from, to, id, ready, queue, res_k, out, res_of, ord);
      for (std::size_t k = 0; k < p.u.size(); ++k)
        if (p.u[ord[k]].books && res_of[ord[k]] == res_k) recs.emplace_back(id, out[k]);
    };
    recs.reserve(2 * (from1 - from0) * (to1 - to0));  // (at most: each pair's push in both phases)
    for (std::size_t r = from0; r < from1; ++r)
      for (std::size_t j = to0; j < to1; ++j)
        if (j != r) one_push(rs_of(r, j), r, j, ids.pair(ids.base_rs, r, j), T);
    for (std::size_t j : order)
      if (j >= from0 && j < from1)
        for (std::size_t r = to0; r < to1; ++r)
          if (r != j) one_push(ag_of(j, r), j, r, ids.pair(ids.base_ag, j, r), fin_red[j]);
    std::sort(recs.begin(), recs.end(), [](const auto& u, const auto& v) { return u.first < v.first; });
    return recs;
  };
  // The shape of push step `r`.
  auto shape_at = [&](const Rec& r) -> const PushShape& {
    const auto a = static_cast<std::size_t>(r.a), b = static_cast<std::size_t>(r.b);
    return r.what == What::RsPush ? rs_of(a, b) : ag_of(a, b);
  };
  auto push_use = [&](StepId i, int k) -> Use {
    const Rec r = ids.rec(i);
    const PushShape& p = shape_at(r);
    int res_of[kMaxUses];
    std::uint8_t ord[kMaxUses];
    place(p, static_cast<std::size_t>(r.a), static_cast<std::size_t>(r.b), res_of, ord);
    const PushShape::U& u = p.u[ord[static_cast<std::size_t>(k)]];
    const double t0 = (r.what == What::RsPush ? T : fin_red[static_cast<std::size_t>(r.a)]) + p.fixed;
    if (!u.books) return Use{t0, t0, kNoStep, -1};
    const auto& recs = replay(res_of[ord[static_cast<std::size_t>(k)]]);
    const auto at = std::lower_bound(recs.begin(), recs.end(), i, [](const auto& e, StepId v) { return e.first < v; });
    if (at != recs.end() && at->first == i) return at->second;
    return Use{t0, t0, kNoStep, -1};  // (never: every booked use is replayed)
  };
  auto cost_of_rec = cost;
  struct Walk {
    const ShotIds& ids;
    decltype(cost_of_rec)& costf;
    bool cost(StepId i, StepCost& to) const { return costf(ids.rec(i), to); }
  } view{ids, cost_of_rec};
  Use scratch;
  struct Records {
    const ShotIds& ids;
    decltype(shape_at)& shape_of;
    decltype(push_use)& use_of;
    const std::vector<Use>& hbm_rec;
    const std::vector<int>& hbm_bound;
    const std::vector<double>& ready_fin;
    const std::vector<double>& w1max;
    const std::vector<std::size_t>& w1arg;
    const std::vector<double>& fin_red;
    const std::vector<double>& w2max;
    const std::vector<std::size_t>& w2arg;
    double T;
    Use& scratch;
    static int slot(What w) { return w == What::Quant ? 0 : w == What::Reduce ? 1 : 2; }
    int bound_use(StepId i) const {
      const Rec r = ids.rec(i);
      if (r.what == What::RsPush || r.what == What::AgPush) {
        const PushShape& p = shape_of(r);
        Use u[kMaxUses];
        for (std::size_t k = 0; k < p.u.size(); ++k) u[k] = use_of(i, static_cast<int>(k));
        const double t0 = (r.what == What::RsPush ? T : fin_red[static_cast<std::size_t>(r.a)]) + p.fixed;
        return bound_of(u, p.u.size(), t0);
      }
      if (r.what == What::Quant || r.what == What::Reduce || r.what == What::Dequant)
        return hbm_bound[3 * static_cast<std::size_t>(r.a) + static_cast<std::size_t>(slot(r.what))];
      return -1;
    }
    const Use& use(StepId i, int k, const StepCost& /*c*/) const {
      const Rec r = ids.rec(i);
      if (r.what == What::RsPush || r.what == What::AgPush) return scratch = use_of(i, k);
      return hbm_rec[3 * static_cast<std::size_t>(r.a) + static_cast<std::size_t>(slot(r.what))];
    }
    StepId bound_dep(StepId i) const {
      const Rec r = ids.rec(i);
      const auto a = static_cast<std::size_t>(r.a), b = static_cast<std::size_t>(r.b);
      switch (r.what) {
        case What::Launch: return kNoStep;
        case What::Quant: return i - 1;
        case What::RsPush: return ready_fin[b] > ready_fin[a] ? ids.ready(b) : ids.ready(a);
        case What::AgPush: return ids.reduce(a);
        case What::Signal: return i - 1;
        case What::Wait:
          if (i < ids.base_ag) return ready_fin[a] > w1max[a] ? ids.ready(a) : ids.pair(ids.base_rs, w1arg[a], a) + 1;
          return fin_red[a] > w2max[a] ? ids.reduce(a) : ids.pair(ids.base_ag, w2arg[a], a) + 1;
        default: return i - 1;  // a reduce or dequantise: its wait
      }
    }
  } records{ids, shape_at, push_use, hbm_rec, hbm_bound, ready_fin, w1max, w1arg,
            fin_red, w2max, w2arg, T, scratch};
  if (last == kNoStep) return false;
  analytic::walk_from(view, c, records, last, best, res);
  return true;
}

}  // namespace scin::shot
