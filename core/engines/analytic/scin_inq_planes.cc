// SCIN+INQ on two tiers, its planes booked one at a time (scin_inq_planes.h).
#include "engines/analytic/scin_inq_planes.h"

#include <algorithm>
#include <limits>
#include <span>

#include "engines/analytic/book.h"
#include "engines/analytic/joins.h"
#include "engines/analytic/jump_counters.h"
#include "model/cost_grid.h"
#include "schedule/builder.h"

namespace scin::analytic {

namespace {

struct Costs {
  const Config& cfg;
  const Schedule& s;
  const ResourceMap& rm;
  bool classes;
  bool cost(std::size_t i, StepCost& c) const { return analytic_step_cost(cfg, s, rm, s.steps[i], c, false, classes); }
};

// Rank 0's quantise run (the reduced schedule's first `runs` steps) and, after
// them, `flags` stand-ins (rank r's flag of plane p at r x planes + p) and the
// final steps with their deps in this view's ids (`final_deps`). Without
// flags: the runs alone.
struct FinalView {
  Costs k;
  std::size_t runs, flags, finals_from;  // finals_from: the first final step in `s`
  const std::vector<DepList>* final_deps;
  const std::vector<double>* flag_finish;
  std::size_t size() const { return runs + flags + (final_deps ? final_deps->size() : 0); }
  std::span<const StepId> deps(std::size_t i) const {
    const DepList* d = nullptr;
    if (i < runs) d = &k.s.steps[i].deps;
    else if (i >= runs + flags) d = &(*final_deps)[i - runs - flags];
    if (!d) return {};
    return {d->data(), d->size()};
  }
  StepKind kind(std::size_t i) const { return i < runs ? k.s.steps[i].kind : i < runs + flags ? StepKind::Launch : k.s.steps[finals_from + i - runs - flags].kind; }
  bool cost(std::size_t i, StepCost& c) const {
    if (i < runs) return k.cost(i, c);
    if (i < runs + flags) {
      no_resource_cost(c, (*flag_finish)[i - runs]);  // (ready at 0)
      return true;
    }
    return k.cost(finals_from + i - runs - flags, c);
  }
  int resources() const { return k.rm.count(); }
  const std::string& name() const { return k.s.algorithm; }
};

// What the bookings of a built block share: its steps' kinds, deps (in a
// plane view's ids, one flat list: reading them from the compiled steps,
// 208 bytes apart, was a third of a plane's booking) and costs (by place in
// the block: the same steps, the same costs for every plane of its size),
// and its joins (joins.h).
struct Block {
  std::vector<StepKind> kinds;         // per step of the block
  std::vector<std::uint32_t> first;    // per view step (stand-ins, the block, joins): its deps in `deps`
  std::vector<StepId> deps;
  std::vector<StepCost> costs;
  Joins joins;
};

// Fills b.kinds, b.first and b.deps for the built plane `p` (its joins found
// first). A plane view's ids: the quantise step of the plane's wave w (rank
// 0's run) is the stand-in w, the block's step at start + j is stand_ins + j,
// a join (id start + n + k, joins.h) stand_ins + n + k.
void flatten(const Schedule& s, const InqPlanes& L, std::size_t p, Block& b) {
  const std::size_t start = L.block[p], n = L.steps[p], stand_ins = L.waves[p], first = 1 + L.plane_start[p];
  auto map = [&](StepId d) {
    return static_cast<StepId>(d >= start ? stand_ins + (d - start) : d - first);
  };
  b.kinds.resize(n);
  b.first.assign(stand_ins + 1, 0);
  b.deps.clear();
  auto add = [&](const StepId* d, std::size_t k) {
    for (std::size_t x = 0; x < k; ++x) b.deps.push_back(map(d[x]));
    b.first.push_back(static_cast<std::uint32_t>(b.deps.size()));
  };
  for (std::size_t i = 0; i < n; ++i) {
    const Step& st = s.steps[start + i];
    b.kinds[i] = st.kind;
    if (const int j = b.joins.join_of.empty() ? -1 : b.joins.join_of[i]; j >= 0)
      add(&b.joins.id[static_cast<std::size_t>(j)], 1);
    else
      add(st.deps.data(), st.deps.size());
  }
  for (const DepList* d : b.joins.lists) add(d->data(), d->size());
}

// Plane `plane` as the block of the built plane `built` of its size: its
// quantise deps stand in first (finishing when plane `plane`'s do), then the
// block's steps, then its joins.
struct PlaneView {
  Costs k;
  const InqPlanes& L;
  std::size_t plane, built;
  const std::vector<double>* quantised;
  const Block* block;
  std::size_t stand_ins() const { return L.waves[built]; }
  std::size_t joins_from() const { return stand_ins() + L.steps[built]; }
  std::size_t size() const { return joins_from() + block->joins.lists.size(); }
  std::span<const StepId> deps(std::size_t i) const {
    return {block->deps.data() + block->first[i], block->first[i + 1] - block->first[i]};
  }
  StepKind kind(std::size_t i) const {
    if (i < stand_ins() || i >= joins_from()) return StepKind::Launch;
    return block->kinds[i - stand_ins()];
  }
  bool cost(std::size_t i, StepCost& c) const {
    const std::size_t n = stand_ins();
    if (i >= joins_from()) {
      no_resource_cost(c, 0.0);
    } else if (i >= n) {
      c = block->costs[i - n];
    } else {
      no_resource_cost(c, (*quantised)[1 + L.plane_start[plane] + i]);  // (ready at 0)
    }
    return true;
  }
  int resources() const { return k.rm.count(); }
  const std::string& name() const { return k.s.algorithm; }
};

// The reduced schedule's shape, checked: rank 0's run, each built block's
// deps (its own steps, or its plane's quantise steps), each rank's wait on the
// built planes' flags in plane order and what follows it. Fills `flag_of`
// (per built plane and rank: its flag's place in the block) and the final
// steps' deps in FinalView's ids. False if it is not of that shape.
bool check_shape(const Schedule& s, const InqPlanes& L, std::vector<std::vector<std::size_t>>& flag_of,
                 std::vector<DepList>& final_deps) {
  const std::size_t planes = L.stands_on.size(), nq = L.per_rank;
  if (L.finals > s.steps.size() || nq > L.finals) return false;
  for (std::size_t i = 0; i < nq; ++i)
    for (StepId d : s.steps[i].deps)
      if (d >= i) return false;
  std::vector<std::size_t> built;
  for (std::size_t p = 0; p < planes; ++p) {
    if (L.stands_on[p] != p) continue;
    built.push_back(p);
    const std::size_t start = L.block[p], end = start + L.steps[p];
    if (start < nq || end > L.finals) return false;
    const std::size_t lo = 1 + L.plane_start[p], hi = lo + L.waves[p];
    for (std::size_t i = start; i < end; ++i)
      for (StepId d : s.steps[i].deps) {
        if (d >= start && d < i) continue;
        if (d < lo || d >= hi) return false;
      }
  }
  flag_of.assign(planes, std::vector<std::size_t>(L.ranks, std::numeric_limits<std::size_t>::max()));
  final_deps.clear();
  const std::size_t stand_ins = L.ranks * planes;
  for (std::size_t j = L.finals; j < s.steps.size(); ++j) {
    const Step& st = s.steps[j];
    DepList d;
    if (!st.deps.empty() && st.deps[0] < L.finals) {  // a rank's wait on the built planes' flags
      const auto r = static_cast<std::size_t>(st.initiator);
      if (st.kind != StepKind::Wait || r >= L.ranks || st.deps.size() != built.size()) return false;
      for (std::size_t k = 0; k < built.size(); ++k) {
        const std::size_t p = built[k], f = st.deps[k];
        if (f < L.block[p] || f >= L.block[p] + L.steps[p] || flag_of[p][r] != std::numeric_limits<std::size_t>::max())
          return false;
        flag_of[p][r] = f - L.block[p];
      }
      for (std::size_t p = 0; p < planes; ++p) d.push_back(static_cast<StepId>(nq + r * planes + p));
    } else {
      for (StepId x : st.deps) {
        if (x < L.finals || x >= j) return false;
        d.push_back(static_cast<StepId>(nq + stand_ins + (x - L.finals)));
      }
    }
    final_deps.push_back(std::move(d));
  }
  for (std::size_t p : built)
    for (std::size_t f : flag_of[p])
      if (f == std::numeric_limits<std::size_t>::max()) return false;
  return true;
}

// Plane p's steps in the full schedule (its block's where no size is given).
std::size_t full_steps(const InqPlanes& L, std::size_t p) {
  return L.full_steps.empty() ? L.steps[p] : L.full_steps[p];
}

enum class Outcome { Done, ClassesFailed, Declined };

Outcome book_planes(const Config& cfg, const Schedule& s, const InqPlanes& L, const RunContext& ctx, bool classes,
                    const std::vector<std::vector<std::size_t>>& flag_of, const std::vector<DepList>& final_deps,
                    AnalyticResult& out) {
  const ResourceMap rm = resource_map(s);
  const Costs k{cfg, s, rm, classes};
  const std::size_t planes = L.stands_on.size(), nq = L.per_rank;
  AnalyticWorkspace ws, ws_final;
  AnalyticResult booked, final;
  // Rank 0's quantise run (every rank's: every launch ends together): its finishes.
  FinalView q{k, nq, 0, L.finals, nullptr, nullptr};
  // (Progress is the planes' share: the other bookings are small and only poll for a stop.)
  const RunContext quiet{ctx.stop, {}};
  if (!book(q, quiet, ws, booked, false)) return Outcome::ClassesFailed;
  std::vector<double> quantised(nq);
  for (std::size_t i = 0; i < nq; ++i) quantised[i] = booked.steps[i].finish_ns;
  // Each built block's step costs, joins and flat deps.
  std::vector<Block> blocks(planes);
  for (std::size_t p = 0; p < planes; ++p) {
    if (L.stands_on[p] != p) continue;
    blocks[p].costs.resize(L.steps[p]);
    for (std::size_t i = 0; i < L.steps[p]; ++i)
      if (!k.cost(L.block[p] + i, blocks[p].costs[i])) return Outcome::ClassesFailed;
    blocks[p].joins = find_joins(s, L.block[p], L.steps[p], L.block[p] + L.steps[p]);
    flatten(s, L, p, blocks[p]);
  }
  // Each plane: its flags' finishes, and the latest finish of any of its steps.
  std::vector<double> flag_finish(L.ranks * planes);
  double latest = -1;
  auto plane_view = [&](std::size_t p) {
    return PlaneView{k, L, p, L.stands_on[p], &quantised, &blocks[L.stands_on[p]]};
  };
  // A plane whose quantise finishes are all those of a booked plane of its
  // size, later by one grid multiple, books as that plane later by it
  // (nothing else enters its booking; cost_grid.h: exact), so it is not
  // booked again (hgx-h200-8 made two-tier: one booking, not four; where
  // waves come in two sizes, the waves queued between two planes' on the HBM
  // change their difference from wave to wave, and each plane is booked).
  struct Booked {
    std::size_t plane = 0;
    double latest = -1;
    std::vector<double> flags;  // per rank
  };
  std::vector<std::vector<Booked>> booked_of(planes);  // per built plane
  auto later_by = [&](std::size_t p, const Booked& b, double& d) {
    const double* qp = quantised.data() + 1 + L.plane_start[p];
    const double* qb = quantised.data() + 1 + L.plane_start[b.plane];
    d = qp[0] - qb[0];
    if (!(d >= 0) || !within_cost_grid(d) || !(b.latest + d < 0x1p32)) return false;
    for (std::size_t w = 0; w < L.waves[p]; ++w)
      if (!within_cost_grid(qb[w]) || qp[w] != qb[w] + d) return false;
    return true;
  };
  auto translated = [&](std::size_t p) {
    for (const Booked& b : booked_of[L.stands_on[p]])
      if (double d = 0; later_by(p, b, d)) {
        latest = std::max(latest, b.latest + d);
        for (std::size_t r = 0; r < L.ranks; ++r) flag_finish[r * planes + p] = b.flags[r] + d;
        return true;
      }
    return false;
  };
  for (std::size_t p = 0; p < planes; ++p) {
    if (translated(p)) {
      ctx.check();
      ++part::translated_planes_total();
      ctx.report(static_cast<double>(p + 1) / static_cast<double>(planes));
      continue;
    }
    RunContext part{ctx.stop, {}};
    if (ctx.progress) part.progress = [&](double f) { ctx.report((static_cast<double>(p) + f) / static_cast<double>(planes)); };
    PlaneView v = plane_view(p);
    if (!book(v, part, ws, booked, false)) return Outcome::ClassesFailed;
    const std::size_t n = v.stand_ins();
    double plane_latest = -1;
    for (std::size_t i = n; i < v.joins_from(); ++i) plane_latest = std::max(plane_latest, booked.steps[i].finish_ns);
    latest = std::max(latest, plane_latest);
    for (std::size_t r = 0; r < L.ranks; ++r) flag_finish[r * planes + p] = booked.steps[n + flag_of[v.built][r]].finish_ns;
    ctx.report(static_cast<double>(p + 1) / static_cast<double>(planes));
    Booked& b = booked_of[L.stands_on[p]].emplace_back();
    b.plane = p;
    b.latest = plane_latest;
    b.flags.resize(L.ranks);
    for (std::size_t r = 0; r < L.ranks; ++r) b.flags[r] = flag_finish[r * planes + p];
  }
  // The run again, each rank's wait on every plane's flag, its dequantise.
  FinalView f{k, nq, L.ranks * planes, L.finals, &final_deps, &flag_finish};
  if (!book(f, quiet, ws_final, final, false)) return Outcome::ClassesFailed;
  const StepId last = last_to_finish(final);
  const double end = final.steps[last].finish_ns;
  // (The full schedule's last step must be a final one: the first of the latest.)
  if (last < nq + L.ranks * planes || !(end > latest)) return Outcome::Declined;

  // The critical path: back through the final steps to a flag, through that
  // plane to a quantise step, through the run (standing for the rank whose
  // step the plane's path left from); one breakdown, summed in the walk's
  // order.
  AnalyticResult acc;
  StepCost c;
  BookedRecords<FinalView> rf{f, ws_final, final, nq, nq + L.ranks * planes};
  walk_from(f, c, rf, last, end, acc);
  const std::vector<StepId> path_final = std::move(acc.critical_path);
  std::vector<StepId> path_plane, path_runs;
  std::size_t plane = 0, stand_ins = 0, run_of = 0;  // run_of: the rank whose run the path visits
  if (rf.entered != kNoStep) {
    const std::size_t e = rf.entered - nq, r = e / planes;
    plane = e % planes;
    PlaneView v = plane_view(plane);
    stand_ins = v.stand_ins();
    if (!book(v, quiet, ws, booked, false)) return Outcome::ClassesFailed;
    BookedRecords<PlaneView> rp{v, ws, booked, 0, stand_ins};
    const auto from = static_cast<StepId>(stand_ins + flag_of[v.built][r]);
    walk_from(v, c, rp, from, booked.steps[from].finish_ns, acc);
    path_plane = std::move(acc.critical_path);
    if (rp.entered != kNoStep) {
      // An arrive waits for its rank's step, a leaf's read first for its first source's rank's.
      if (path_plane.front() < stand_ins || path_plane.front() >= v.joins_from()) return Outcome::Declined;
      const Step& st = s.steps[L.block[v.built] + path_plane.front() - stand_ins];
      if (st.kind == StepKind::Signal) run_of = static_cast<std::size_t>(st.initiator);
      else if (st.kind == StepKind::Read && !st.srcs.empty()) run_of = static_cast<std::size_t>(s.buffers[st.srcs[0].buffer].node);
      else return Outcome::Declined;
      if (run_of >= L.ranks || s.is_switch(static_cast<NodeId>(run_of))) return Outcome::Declined;
      const auto qi = static_cast<StepId>(1 + L.plane_start[plane] + rp.entered);
      BookedRecords<FinalView> rq{f, ws_final, final};
      walk_from(f, c, rq, qi, final.steps[qi].finish_ns, acc);
      path_runs = std::move(acc.critical_path);
    }
  }

  // To the full schedule's ids: every rank's run, every plane's block, the final steps.
  const std::size_t full_runs = L.ranks * L.per_rank;
  std::vector<std::size_t> full_first(planes + 1, full_runs);
  for (std::size_t p = 0; p < planes; ++p) full_first[p + 1] = full_first[p] + full_steps(L, p);
  // A block step's place in the full block (one leaf's block: the leaf of
  // rank `tail_rank` for the acks, wait and flags, the first leaf else).
  const std::size_t tail_rank = rf.entered != kNoStep ? (rf.entered - nq) / planes : 0;
  auto in_full_block = [&](std::size_t j) -> std::size_t {
    if (full_steps(L, plane) == L.steps[plane]) return j;
    return build::scin_tiers_full_step(j, L.per_leaf, L.leaves, L.waves[plane], true, false, tail_rank / L.per_leaf);
  };
  auto from_final = [&](StepId i) {  // (a step of the run: rank 0's, as the last booking's HBM queues)
    if (i < nq) return i;
    return static_cast<StepId>(full_first[planes] + (i - nq - L.ranks * planes));
  };
  out = AnalyticResult{};
  out.time_ns = end;
  out.breakdown = acc.breakdown;
  auto& path = out.critical_path;
  path.reserve(path_runs.size() + path_plane.size() + path_final.size());
  for (StepId i : path_runs) path.push_back(static_cast<StepId>(run_of * L.per_rank + i));
  for (StepId i : path_plane)
    if (i < stand_ins + L.steps[L.stands_on[plane]])
      path.push_back(static_cast<StepId>(full_first[plane] + in_full_block(i - stand_ins)));
  for (StepId i : path_final) path.push_back(from_final(i));
  return Outcome::Done;
}

}  // namespace

std::optional<AnalyticResult> book_inq_planes(const Config& cfg, const Schedule& s, const InqPlanes& L,
                                              const RunContext& ctx) {
  const std::size_t planes = L.stands_on.size();
  if (L.ranks == 0 || L.per_rank == 0 || planes == 0 ||
      L.plane_start.size() != planes || L.waves.size() != planes || L.block.size() != planes || L.steps.size() != planes)
    return std::nullopt;
  for (std::size_t p = 0; p < planes; ++p)
    if (L.stands_on[p] > p || L.stands_on[L.stands_on[p]] != L.stands_on[p] || L.waves[p] != L.waves[L.stands_on[p]] ||
        L.steps[p] != L.steps[L.stands_on[p]] || L.waves[p] == 0)
      return std::nullopt;
  if (!L.full_steps.empty()) {
    if (L.full_steps.size() != planes || L.per_leaf * L.leaves != L.ranks) return std::nullopt;
    for (std::size_t p = 0; p < planes; ++p)
      if (L.full_steps[p] < L.steps[p]) return std::nullopt;
  }
  std::vector<std::vector<std::size_t>> flag_of;
  std::vector<DepList> final_deps;
  if (!check_shape(s, L, flag_of, final_deps)) return std::nullopt;
  AnalyticResult res;
  for (const bool classes : {true, false}) {
    const Outcome o = book_planes(cfg, s, L, ctx, classes, flag_of, final_deps, res);
    if (o == Outcome::Done) return res;
    if (o == Outcome::Declined) return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace scin::analytic
