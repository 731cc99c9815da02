// Ring-q8 on two tiers by leaves alike (ring_leaves.h).
#include "engines/analytic/ring_leaves.h"

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <tuple>
#include <vector>

#include "engines/analytic/book.h"
#include "model/cost_grid.h"

namespace scin::shot {

bool ring_leaves_apply(const Config& cfg, const Collective& coll, std::size_t* steps) {
  const auto& f = cfg.fabric;
  if (f.topology != Topology::TwoTier || !f.graph_file.empty() || f.leaves < 2 || f.gpus % f.leaves != 0) return false;
  const int m = f.gpus / f.leaves;
  if (m < 3 || launches_serialised(cfg)) return false;
  // Whole blocks, cut by build::split() into chunks whose counts repeat
  // every m: chunk i has floor((i + 1) u / N) - floor(i u / N) of the u
  // blocks, a pattern of period N / gcd(u, N), which must divide m.
  const std::uint64_t elems = element_count(coll.bytes, coll.dtype);
  const auto block = static_cast<std::uint64_t>(std::max(1, cfg.quant.block_elems));
  const auto n = static_cast<std::uint64_t>(f.gpus);
  if (elems == 0 || elems % block != 0) return false;
  if (static_cast<std::uint64_t>(m) % (n / std::gcd(elems / block, n)) != 0) return false;
  if (steps) *steps = 3 * static_cast<std::size_t>(m) * static_cast<std::size_t>(n);
  return true;
}

// (Outside the anonymous namespace: shot_alike.cc generates the full ring with it.)
void ring_q_steps(Shape& x, Steps& st, int m) {
  const int n = x.b.n();
  const auto um = static_cast<std::size_t>(m);
  st.clear();
  st.rec.reserve(3 * um * static_cast<std::size_t>(n));
  std::vector<StepId> launches(um);
  for (int r = 0; r < m; ++r) launches[static_cast<std::size_t>(r)] = st.add({What::Launch, false, r, 0, 0}, {});
  std::vector<StepId> last(launches), sent(launches), delivered(um);
  for (int k = 0; k < n - 1; ++k) {
    for (int r = 0; r < m; ++r) {
      const auto ur = static_cast<std::size_t>(r), to = static_cast<std::size_t>((r + 1) % m);
      const int c = ((r - k) % n + n) % n;
      const StepId qz = st.add({What::QzHop, k == 0, r, 0, c}, {last[ur], sent[ur]});
      const StepId id = st.add({What::RsSend, false, r, (r + 1) % n, c}, {qz, launches[to]});
      delivered[to] = id;
      sent[ur] = id;
    }
    last.swap(delivered);
  }
  std::vector<StepId> ready(um);
  for (int r = 0; r < m; ++r)
    ready[static_cast<std::size_t>(r)] = st.add({What::QzSum, false, r, 0, (r + 1) % n}, {last[static_cast<std::size_t>(r)]});
  last = ready;
  for (int j = 0; j < n - 1; ++j) {
    for (int r = 0; r < m; ++r) {
      const auto ur = static_cast<std::size_t>(r), to = static_cast<std::size_t>((r + 1) % m);
      const int c = ((r + 1 - j) % n + n) % n;
      const StepId id = st.add({What::AgSend, false, r, (r + 1) % n, c}, {last[ur], sent[ur], launches[to]});
      delivered[to] = id;
      sent[ur] = id;
    }
    last.swap(delivered);
  }
  for (int r = 0; r < m; ++r)
    st.add({What::Dequant, false, r, 0, 0}, {last[static_cast<std::size_t>(r)], sent[static_cast<std::size_t>(r)]});
}

namespace {

// The steps as book()'s view: each costed as step_cost() costs it, rank m's
// ports and HBM booked as rank 0's (false: a use on anything else).
struct LeafView {
  const Config& cfg;
  const Schedule& s;
  const ResourceMap& rm;
  bool one_plane;
  const Steps& st;
  Shape& x;
  int m;
  std::size_t size() const { return st.rec.size(); }
  DepRange deps(std::size_t i) const { return {st.deps.data() + st.dep_first[i], st.deps.data() + st.dep_first[i + 1]}; }
  StepKind kind(std::size_t i) const { return kind_of(st.rec[i].what); }
  bool cost(StepId i, StepCost& c) const {
    if (!analytic_step_cost(cfg, s, rm, x.fill(st.rec[i]), c, one_plane, false)) return false;
    for (ResourceUse& u : c.uses) {
      int base = 0, stride = 0, plane = 0, leaf = 0;
      const int gpu = accel_rank_of(rm, u.resource, base, stride);
      if (gpu == m) u.resource = base;
      else if (gpu < 0 ? !trunk_of(rm, u.resource, plane, leaf) : gpu > m) return false;
    }
    return true;
  }
  int resources() const { return rm.count(); }
  const std::string& name() const { return s.algorithm; }
};

}  // namespace

bool book_ring_leaves(const Config& cfg, Shape& x, const ResourceMap& rm, bool one_plane, const RunContext& ctx,
                      AnalyticResult& res) {
  const Schedule& s = x.b.s;
  const Collective coll{s.bytes, s.dtype};
  if (!x.ring || !ring_leaves_apply(cfg, coll) || rm.topology != Topology::TwoTier) return false;
  const int n = s.gpus, m = s.gpus_per_leaf();
  const auto un = static_cast<std::size_t>(n), um = static_cast<std::size_t>(m);
  for (std::size_t c = 0; c < un; ++c)
    if (x.chunks[c].count != x.chunks[(c + um) % un].count) return false;
  // Every launch costs as its turned rank's (accelerator.gpus_per_process).
  {
    StepCost a, b;
    for (int r = m; r < n; ++r) {
      if (!analytic_step_cost(cfg, s, rm, x.fill({What::Launch, false, r % m, 0, 0}), a, one_plane, false) ||
          !analytic_step_cost(cfg, s, rm, x.fill({What::Launch, false, r, 0, 0}), b, one_plane, false))
        return false;
      if (a.fixed_ns != b.fixed_ns || a.fixed_term != b.fixed_term || !a.uses.empty() || !b.uses.empty()) return false;
      for (int t = 0; t < kTermCount; ++t)
        if (a.latency_ns[t] != b.latency_ns[t]) return false;
    }
  }
  thread_local Steps steps;
  thread_local AnalyticWorkspace ws;
  struct Release {  // (a large point's memory is not kept, as run_analytic_shot's)
    ~Release() {
      if (steps.rec.capacity() <= (std::size_t{1} << 16)) return;
      steps = Steps{};
      ws = AnalyticWorkspace{};
    }
  } release;
  ring_q_steps(x, steps, m);
  LeafView v{cfg, s, rm, one_plane, steps, x, m};
  if (!analytic::book(v, ctx, ws, res)) return false;

  // The one order the turn changes: rank m-1's sends against rank 0's own
  // steps on rank 0's resources, ready at the same instant (book() would take
  // them in the other order at rank m). Decline where that happens.
  {
    std::vector<std::tuple<int, double, int>> on0;  // (resource, ready, rank of the step)
    StepCost c;
    for (std::size_t i = 0; i < steps.rec.size(); ++i) {
      const Rec& r = steps.rec[i];
      if (r.a != 0 && r.a != m - 1) continue;
      if (!v.cost(static_cast<StepId>(i), c)) return false;
      for (const ResourceUse& u : c.uses) {
        int base = 0, stride = 0;
        if (u.amount_bytes > 0 && accel_rank_of(rm, u.resource, base, stride) == 0)
          on0.emplace_back(u.resource, res.steps[i].start_ns, r.a);
      }
    }
    std::sort(on0.begin(), on0.end());
    for (std::size_t k = 1; k < on0.size(); ++k)
      if (std::get<0>(on0[k]) == std::get<0>(on0[k - 1]) && std::get<1>(on0[k]) == std::get<1>(on0[k - 1]) &&
          std::get<2>(on0[k]) != std::get<2>(on0[k - 1]))
        return false;
  }

  // The path in the full schedule: ranks followed back from the last step.
  const RingQIds leaf_ids(un, um), full_ids(un);
  std::vector<StepId>& path = res.critical_path;
  int rank = -1, prev = -1;  // the current step's rank in the full ring, and in the leaf
  for (std::size_t k = path.size(); k-- > 0;) {
    std::size_t t = 0, r = 0;
    leaf_ids.of(path[k], t, r);
    const int in_leaf = static_cast<int>(r);
    if (rank < 0) {
      rank = in_leaf;
    } else {
      int d = ((in_leaf - prev) % m + m) % m;  // 0, 1 or m - 1
      if (d == m - 1) d = -1;
      else if (d > 1) return false;  // (never: a step waits for its own rank or a neighbour)
      rank = ((rank + d) % n + n) % n;
    }
    prev = in_leaf;
    path[k] = full_ids.id(t, static_cast<std::size_t>(rank));
  }
  // max_link_bytes as link_bytes() adds it: each send's bytes on its
  // sender's egress and its receiver's ingress. Rank r sends chunk r - k in
  // reduce-scatter round k and r + 1 - j in all-gather round j and receives
  // rank r - 1's, so over ranks 0..m-1 (rank r + m's chunks are as large)
  // the egress sums are every rank's and every ingress sum is one of them.
  {
    std::vector<double> rs(un), ag(un);
    for (int c = 0; c < n; ++c) {
      rs[static_cast<std::size_t>(c)] = static_cast<double>(region_bytes(s, x.fill({What::RsSend, false, 0, 1, c}).srcs[0]));
      ag[static_cast<std::size_t>(c)] = static_cast<double>(region_bytes(s, x.fill({What::AgSend, false, 0, 1, c}).srcs[0]));
    }
    double most = 0;
    for (int r = 0; r < m; ++r) {
      double e = 0;
      for (int k = 0; k < n - 1; ++k) e += rs[static_cast<std::size_t>(((r - k) % n + n) % n)];
      for (int j = 0; j < n - 1; ++j) e += ag[static_cast<std::size_t>(((r + 1 - j) % n + n) % n)];
      most = std::max(most, e);
    }
    res.max_link_bytes = most;
  }
  res.steps.clear();
  return true;
}

}  // namespace scin::shot
