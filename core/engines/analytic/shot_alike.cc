// One-shot, two-shot, two-shot-q8 and ring-q8 booked from their builders'
// structure (shot_alike.h): the same steps as build_one_shot / build_two_shot
// / build_ring_q, as compact records, through the engine's own booking
// (book.h), in order (book_in_order.h) or in closed order (shot_closed.h).
#include "engines/analytic/shot_alike.h"

#include <algorithm>
#include <numeric>
#include <cstdint>
#include <initializer_list>
#include <vector>

#include "engines/analytic/book.h"
#include "engines/analytic/book_in_order.h"
#include "engines/analytic/planes.h"
#include "engines/analytic/ring_closed.h"
#include "engines/analytic/ring_leaves.h"
#include "engines/analytic/shot_closed.h"
#include "engines/analytic/shot_steps.h"
#include "model/cost_grid.h"
#include "schedule/builder.h"

namespace scin {

namespace {

using namespace shot;

// build_two_shot's head (shards and buffers, in its order); with x.one_shot,
// build_one_shot's (every "shard" the whole message, a scratch slot per peer).
void two_shot_head(Shape& x) {
  build::Builder& b = x.b;
  Schedule& s = b.s;
  const int n = b.n();
  const bool quantised = x.quantised;
  const Format q = codec_format(b.cfg.quant.codec);
  const Format wire = quantised ? q : b.data_format;
  x.shards = x.one_shot ? std::vector<Span>(static_cast<std::size_t>(n), Span{0, s.elems})
                        : build::split(s.elems, n, quantised ? b.align() : 1);
  x.shard_max = std::max_element(x.shards.begin(), x.shards.end(), [](auto& u, auto& v) { return u.count < v.count; })->count;
  if (quantised) x.shard_max = (x.shard_max + b.align() - 1) / b.align() * b.align();
  for (int r = 0; r < n; ++r) {
    x.scratch.push_back(b.buffer("scratch", r, x.shard_max * static_cast<std::uint64_t>(n), wire));
    if (quantised) {
      x.qin.push_back(b.buffer("qin", r, s.elems, q));
      x.gather.push_back(b.buffer("qout", r, s.elems, q));
    }
  }
}

// build_two_shot's steps, in its order, with its dependency lists; with
// x.one_shot, build_one_shot's: the same launches, pushes, signals, waits and
// reduces, each push carrying the whole message into its slot of the peer's
// scratch (slot r at r x elems), and no gather. After two_shot_head().
void two_shot_steps(Shape& x, Steps& st) {
  const int n = x.b.n();
  const bool quantised = x.quantised;
  const auto un = static_cast<std::size_t>(n);
  st.clear();
  st.rec.reserve(x.one_shot ? 2 * un * un + un : 4 * un * un + (quantised ? 2 * un : 0));
  // Deps: a scatter push 2 and its signal 1, a wait N, a reduce 1; a gather
  // push and its signal 1 each, a wait N; with quantisation 1 more per rank.
  st.dep_first.reserve(st.rec.capacity() + 1);
  st.deps.reserve(x.one_shot ? 4 * un * un : 7 * un * un + 2 * un);
  std::vector<StepId> ready(un);
  for (int r = 0; r < n; ++r) {
    StepId l = st.add({What::Launch, false, r, 0, 0}, {});
    if (quantised) l = st.add({What::Quant, false, r, 0, 0}, {l});
    ready[static_cast<std::size_t>(r)] = l;
  }
  // The rs signals into rank j, in the order build_two_shot lists them (then ready[j]).
  std::vector<StepId> arrived(un * un);
  for (int r = 0; r < n; ++r)
    for (int j = 0; j < n; ++j) {
      if (j == r) continue;
      const StepId w = st.add({What::RsPush, false, r, j, 0}, {ready[static_cast<std::size_t>(r)], ready[static_cast<std::size_t>(j)]});
      arrived[static_cast<std::size_t>(j) * un + static_cast<std::size_t>(r)] = st.add({What::Signal, false, r, j, 0}, {w});
    }
  std::vector<StepId> reduced(un);
  for (int j = 0; j < n; ++j) {
    const auto uj = static_cast<std::size_t>(j);
    st.add_open({What::Wait, false, j, 0, 0});
    for (int r = 0; r < n; ++r)
      if (r != j) st.deps.push_back(arrived[uj * un + static_cast<std::size_t>(r)]);
    st.deps.push_back(ready[uj]);
    st.close();
    const StepId w = static_cast<StepId>(st.rec.size() - 1);
    reduced[uj] = st.add({What::Reduce, false, j, 0, 0}, {w});
  }
  if (x.one_shot) return;
  for (int j = 0; j < n; ++j)
    for (int r = 0; r < n; ++r) {
      if (r == j) continue;
      const StepId w = st.add({What::AgPush, false, j, r, 0}, {reduced[static_cast<std::size_t>(j)]});
      arrived[static_cast<std::size_t>(r) * un + static_cast<std::size_t>(j)] = st.add({What::Signal, false, j, r, 0}, {w});
    }
  for (int r = 0; r < n; ++r) {
    const auto ur = static_cast<std::size_t>(r);
    st.add_open({What::Wait, false, r, 0, 0});
    for (int j = 0; j < n; ++j)
      if (j != r) st.deps.push_back(arrived[ur * un + static_cast<std::size_t>(j)]);
    st.deps.push_back(reduced[ur]);
    st.close();
    const StepId w = static_cast<StepId>(st.rec.size() - 1);
    if (quantised) st.add({What::Dequant, false, r, 0, 0}, {w});
  }
}

// build_ring_q's head (chunks and buffers, in its order).
void ring_q_head(Shape& x) {
  build::Builder& b = x.b;
  Schedule& s = b.s;
  const int n = b.n();
  const Format q = codec_format(b.cfg.quant.codec);
  x.chunks = build::split(s.elems, n, b.align());
  for (int r = 0; r < n; ++r) {
    x.partial.push_back(b.buffer("partial", r, s.elems, Format::Fp32));
    x.qtx.push_back(b.buffer("qtx", r, s.elems, q));
    x.qout.push_back(b.buffer("qout", r, s.elems, q));
  }
}

// The generated steps as book()'s view (book.h).
struct StepsView {
  const Config& cfg;
  const Schedule& s;  // the head: buffers, no steps
  const ResourceMap& rm;
  bool one_plane;
  const Steps& st;
  Shape& x;
  CostClasses& classes;
  std::size_t size() const { return st.rec.size(); }
  DepRange deps(std::size_t i) const { return {st.deps.data() + st.dep_first[i], st.deps.data() + st.dep_first[i + 1]}; }
  StepKind kind(std::size_t i) const { return kind_of(st.rec[i].what); }
  bool cost(StepId i, StepCost& c) const {
    const Rec& r = st.rec[i];
    auto full = [&](StepCost& to) { return analytic_step_cost(cfg, s, rm, x.fill(r), to, one_plane, false); };
    if (r.what == What::Launch) return full(c);
    return classes.cost(r, x.count_of(r), rm, c, full);
  }
  int resources() const { return rm.count(); }
  const std::string& name() const { return s.algorithm; }
  // book_in_order's phases: the scatter's pushes, the gather's. Ring-q8's
  // chains are left to book(): a send's fused reduce uses the receiver's HBM,
  // which the receiver's own quantise step, though later in index order, is
  // often ready for first (book_in_order's checks declined every size above 8 B).
  int phase(std::size_t i) const {
    switch (st.rec[i].what) {
      case What::RsPush: return 1;
      case What::AgPush: return 2;
      case What::QzHop:
      case What::RsSend:
      case What::QzSum:
      case What::AgSend: return -1;
      default: return 0;
    }
  }
};

}  // namespace

namespace {

// Whether run_analytic_shot() answers for `cfg` and `algo` (its booking then always does).
bool shot_alike_answers(const Config& cfg, Algorithm algo) {
  if (algo != Algorithm::OneShot && algo != Algorithm::TwoShot && algo != Algorithm::TwoShotQ8 && algo != Algorithm::RingQ8)
    return false;
  // A star or two tiers (there every step is costed alone: a pair's route
  // decides its uses; one-shot's and the two-shots' pushes queue in order
  // there too, book_in_order).
  if ((cfg.fabric.topology != Topology::Star && cfg.fabric.topology != Topology::TwoTier) || !cfg.fabric.graph_file.empty())
    return false;
  if (cfg.fabric.gpus < 2 || !unsupported_reason(cfg, algo).empty()) return false;
  // More steps than a StepId counts: compile() (which fails there too).
  return 3 * static_cast<double>(cfg.fabric.gpus) * cfg.fabric.gpus + 2 * static_cast<double>(cfg.fabric.gpus) < 4e9;
}

}  // namespace

std::size_t shot_alike_steps(const Config& cfg, Algorithm algo, bool* closed, const Collective* coll,
                             std::size_t* closed_steps) {
  const auto n = static_cast<std::size_t>(std::max(0, cfg.fabric.gpus));
  const bool star = cfg.fabric.topology == Topology::Star;
  // (Ring-q8 on two tiers is booked in closed order too where its HBM uses
  // do not overlap, which at large sizes they do: estimated as queued.)
  const bool tiers = cfg.fabric.topology == Topology::TwoTier;
  if (closed) *closed = algo == Algorithm::RingQ8 ? star : (star || tiers) && !launches_serialised(cfg);
  if (closed_steps) {
    *closed_steps = 3 * n * n;
    // (Ring-q8 on two tiers by leaves alike, ring_leaves.h: 3mN steps booked.)
    if (algo == Algorithm::RingQ8 && tiers && coll) ring_leaves_apply(cfg, *coll, closed_steps);
    if (algo == Algorithm::RingQ8 && star && !launches_serialised(cfg) && coll) {
      // Ranks alike (ring_closed.h): every chunk the same whole blocks, as build::split() cuts them;
      // one block or none a chunk, no two full ones neighbours (ring_sparse.h): O(N) too; else
      // whole blocks in a pattern of w = N / gcd(N, blocks) chunks: w ranks' steps.
      const std::uint64_t elems = element_count(coll->bytes, coll->dtype);
      const auto block = static_cast<std::uint64_t>(std::max(1, cfg.quant.block_elems));
      const std::uint64_t blocks = (elems + block - 1) / block;
      if (n > 0 && elems > 0 && elems % block == 0 && blocks % n == 0) *closed_steps = 3 * n - 1;
      else if (n >= 3 && elems > 0 && 2 * blocks <= n && (blocks == 1 || elems % block == 0)) *closed_steps = 3 * n;
      else if (n > 0 && elems > 0 && elems % block == 0) *closed_steps = 3 * n * (n / std::gcd(n, blocks));
    }
  }
  if (!shot_alike_answers(cfg, algo)) return 0;
  switch (algo) {
    case Algorithm::OneShot: return 2 * n * n + n;    // launches, N(N-1) pushes and signals, waits, reduces
    case Algorithm::RingQ8: return 3 * n * n;         // launches, N-1 rounds of (quantise, send), sums, N-1 rounds of sends, dequantise
    case Algorithm::TwoShot: return 4 * n * n;        // launches, N(N-1) pushes and signals each way, waits, reduces
    default: return 4 * n * n + 2 * n;                // two-shot-q8: and a quantise and a dequantise per rank
  }
}

std::optional<AnalyticResult> run_analytic_shot(const Config& cfg, const Collective& coll, Algorithm algo,
                                                const RunContext& ctx, bool with_steps, ShotBooking* how) {
  if (!shot_alike_answers(cfg, algo)) return std::nullopt;
  // The head's lists, the records and the engine's working memory: per
  // thread, kept for the next point unless the point had more than 2^16
  // steps (a large point's memory is released, as simulate()'s spare schedule).
  thread_local Schedule storage;
  thread_local Steps steps;
  thread_local AnalyticWorkspace ws;
  struct Release {
    ~Release() {
      if (steps.rec.capacity() <= (std::size_t{1} << 16)) return;
      steps = Steps{};
      ws = AnalyticWorkspace{};
      storage = Schedule{};
    }
  } release;
  build::Builder b(cfg, info(algo).name, coll, &storage);
  b.labels = false;
  Shape x(cfg, b);
  x.quantised = algo == Algorithm::TwoShotQ8 || algo == Algorithm::RingQ8;
  x.ring = algo == Algorithm::RingQ8;
  x.one_shot = algo == Algorithm::OneShot;
  if (algo != Algorithm::RingQ8) two_shot_head(x);
  else ring_q_head(x);
  x.shapes_done();
  const Schedule& s = b.s;
  const ResourceMap rm = resource_map(s);
  // planes_alike(s): every transfer crosses kAllPlanes and every compute is an
  // accelerator's, so the steps all pass; the fabric decides.
  const bool one_plane = analytic_detail::fabric_has_planes_alike(s);
  thread_local CostClasses classes;
  classes.reset();
  AnalyticResult res;
  // (Ring-q8 on two tiers: in closed order by leaves where it holds, a few
  // additions a step; else one leaf's steps booked by book().)
  if (!with_steps && x.ring && rm.topology == Topology::TwoTier &&
      book_ring_closed(cfg, x, classes, rm, one_plane, ctx, res, true)) {
    if (how) *how = ShotBooking::ClosedLeaves;
    storage = std::move(b.s);
    return res;
  }
  if (!with_steps && x.ring && rm.topology == Topology::TwoTier && book_ring_leaves(cfg, x, rm, one_plane, ctx, res)) {
    if (how) *how = ShotBooking::Leaves;
    storage = std::move(b.s);
    return res;
  }
  if (!with_steps && (x.ring ? book_ring_closed(cfg, x, classes, rm, one_plane, ctx, res)
                             : book_closed(cfg, x, classes, rm, one_plane, ctx, res))) {
    if (how) *how = ShotBooking::Closed;
    storage = std::move(b.s);
    return res;
  }
  if (algo == Algorithm::RingQ8) ring_q_steps(x, steps, s.gpus);
  else two_shot_steps(x, steps);
  StepsView v{cfg, s, rm, one_plane, steps, x, classes};
  const bool ordered = algo != Algorithm::RingQ8 && analytic::book_in_order(v, ctx, ws, res);
  if (how) *how = ordered ? ShotBooking::InOrder : ShotBooking::Queue;
  if (!ordered && !analytic::book(v, ctx, ws, res)) return std::nullopt;  // (never: no class condition to fail)
  // max_link_bytes as link_bytes() adds it: each transfer's bytes on its
  // sender's egress and its receiver's ingress, in step order.
  {
    const auto un = static_cast<std::size_t>(s.gpus);
    std::vector<double> egress(un, 0.0), ingress(un, 0.0);
    for (const Rec& r : steps.rec) {
      if (kind_of(r.what) != StepKind::Write) continue;
      const Step& w = x.fill(r);
      const double bytes = static_cast<double>(region_bytes(s, w.srcs[0]));
      egress[static_cast<std::size_t>(w.initiator)] += bytes;
      ingress[static_cast<std::size_t>(s.buffers[w.dsts[0].buffer].node)] += bytes;
    }
    double m = 0;
    for (double e : egress) m = std::max(m, e);
    for (double e : ingress) m = std::max(m, e);
    res.max_link_bytes = m;
  }
  storage = std::move(b.s);
  return res;
}

}  // namespace scin
