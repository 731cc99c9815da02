// Two-shot, two-shot-q8 and ring-q8 booked from their builders' structure
// (shot_alike.h): the same steps as build_two_shot / build_ring_q, as compact
// records, through the engine's own booking (book.h).
#include "engines/analytic/shot_alike.h"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "engines/analytic/book.h"
#include "engines/analytic/planes.h"
#include "schedule/builder.h"

namespace scin {

namespace {

using build::at;
using build::Span;

// What a step is (the builder call that made it).
enum class What : std::uint8_t {
  Launch,     // launch(a)                         (ring-q8: ring launch, Simple)
  Quant,      // two-shot-q8: quantise a's input into qin[a]
  RsPush,     // two-shot: push a -> b of shard b
  RsSignal,   // signal a -> b
  RsWait,     // wait on a
  Reduce,     // a sums shard a
  AgPush,     // push a -> b of shard a
  Dequant,    // a's gather buffer into its output
  QzHop,      // ring-q8: a quantises chunk c (from its input at hop 0, else its partial) into qtx[a]
  RsSend,     // ring-q8: a sends qtx[a] chunk c to a+1, fused reduce with a+1's input into partial[a+1]
  QzSum,      // ring-q8: a quantises partial[a] chunk c into qout[a]
  AgSend,     // ring-q8: a sends qout[a] chunk c to qout[a+1]
};

struct Rec {
  What what;
  bool first_hop;  // QzHop: from the input (hop 0)
  std::int32_t a, b, c;
};

struct DepRange {
  const StepId* b_;
  const StepId* e_;
  std::size_t size() const { return static_cast<std::size_t>(e_ - b_); }
  const StepId* begin() const { return b_; }
  const StepId* end() const { return e_; }
};

// The steps of one schedule: records and dependency lists (CSR), kept per
// thread for the next point.
struct Steps {
  std::vector<Rec> rec;
  std::vector<std::uint32_t> dep_first;  // step i's deps: deps[dep_first[i] .. dep_first[i + 1])
  std::vector<StepId> deps;
  void clear() {
    rec.clear();
    dep_first.assign(1, 0);
    deps.clear();
  }
  StepId add(Rec r, std::initializer_list<StepId> d) {
    rec.push_back(r);
    deps.insert(deps.end(), d.begin(), d.end());
    dep_first.push_back(static_cast<std::uint32_t>(deps.size()));
    return static_cast<StepId>(rec.size() - 1);
  }
  // A step whose deps the caller appends to `deps` itself.
  StepId add_open(Rec r) {
    rec.push_back(r);
    return static_cast<StepId>(rec.size() - 1);
  }
  void close() { dep_first.push_back(static_cast<std::uint32_t>(deps.size())); }
};

// The schedule's head (buffers, regions) and one step per kind, filled with a
// record's fields as the builder fills them (schedule/builder.h).
struct Shape {
  const Config& cfg;
  build::Builder& b;
  bool quantised = false;
  bool ring = false;  // ring-q8 (else two-shot)
  // two-shot
  std::vector<Span> shards;
  std::uint64_t shard_max = 0;
  std::vector<BufferId> scratch, qin, gather;
  // ring-q8
  std::vector<Span> chunks;
  std::vector<BufferId> partial, qtx, qout;

  Step launch, push, signal, wait, compute, send;

  Shape(const Config& c, build::Builder& bb) : cfg(c), b(bb) {
    launch.kind = StepKind::Launch;
    push.kind = StepKind::Write;
    push.via = b.via;
    push.op = DataOp::Copy;
    signal.kind = StepKind::Signal;
    signal.unit = Unit::AccelSm;
    signal.via = b.via;  // (accelerator to accelerator)
    wait.kind = StepKind::Wait;
    wait.unit = Unit::AccelSm;
    compute.kind = StepKind::Compute;
    compute.unit = Unit::AccelSm;
    compute.accum = Format::Fp32;
    send.kind = StepKind::Write;
  }

  Region slot(int owner, int from) const {
    return Region{scratch[static_cast<std::size_t>(owner)], static_cast<std::uint64_t>(from) * shard_max,
                  shards[static_cast<std::size_t>(owner)].count};
  }

  const Step& fill(const Rec& r) {
    const Schedule& s = b.s;
    const auto ua = static_cast<std::size_t>(r.a);
    const Span all{0, s.elems};
    switch (r.what) {
      case What::Launch:
        launch.initiator = r.a;
        launch.ring_step = ring;  // ring-q8: ring launches (Simple)
        launch.protocol = RingProtocol::Simple;
        return launch;
      case What::Quant:
        compute.initiator = r.a;
        compute.op = DataOp::Copy;
        compute.srcs = {at(s.input[ua], all)};
        compute.dsts = {at(qin[ua], all)};
        return compute;
      case What::RsPush:
        push.initiator = r.a;
        push.srcs = {at(quantised ? qin[ua] : s.input[ua], shards[static_cast<std::size_t>(r.b)])};
        push.dsts = {slot(r.b, r.a)};
        return push;
      case What::RsSignal:
        signal.initiator = r.a;
        signal.target = r.b;
        return signal;
      case What::RsWait:
        wait.initiator = r.a;
        return wait;
      case What::Reduce: {
        compute.initiator = r.a;
        compute.op = DataOp::Reduce;
        const int n = b.n();
        SrcList& srcs = compute.srcs;
        srcs.clear();
        srcs.reserve(static_cast<std::size_t>(n));
        for (int k = 0; k < n; ++k)
          srcs.push_back(k == r.a ? at(quantised ? qin[ua] : s.input[ua], shards[ua]) : slot(r.a, k));
        compute.dsts = {at(quantised ? gather[ua] : s.output[ua], shards[ua])};
        return compute;
      }
      case What::AgPush: {
        const auto ub = static_cast<std::size_t>(r.b);
        push.initiator = r.a;
        push.srcs = {at(quantised ? gather[ua] : s.output[ua], shards[ua])};
        push.dsts = {at(quantised ? gather[ub] : s.output[ub], shards[ua])};
        return push;
      }
      case What::Dequant:
        compute.initiator = r.a;
        compute.op = DataOp::Copy;
        compute.srcs = {at(ring ? qout[ua] : gather[ua], all)};
        compute.dsts = {at(s.output[ua], all)};
        return compute;
      case What::QzHop:
      case What::QzSum: {
        const Span ch = chunks[static_cast<std::size_t>(r.c)];
        compute.initiator = r.a;
        compute.op = DataOp::Copy;
        if (r.what == What::QzHop) {
          compute.srcs = {at(r.first_hop ? s.input[ua] : partial[ua], ch)};
          compute.dsts = {at(qtx[ua], ch)};
        } else {
          compute.srcs = {at(partial[ua], ch)};
          compute.dsts = {at(qout[ua], ch)};
        }
        return compute;
      }
      case What::RsSend:
      case What::AgSend: {
        const Span ch = chunks[static_cast<std::size_t>(r.c)];
        const auto to = static_cast<std::size_t>(r.b);
        send.initiator = r.a;
        if (r.what == What::RsSend)
          build::fill_ring_send(send, b.via, RingProtocol::Simple, DataOp::Reduce,
                                {at(qtx[ua], ch), at(s.input[to], ch)}, at(partial[to], ch));
        else
          build::fill_ring_send(send, b.via, RingProtocol::Simple, DataOp::Copy, {at(qout[ua], ch)}, at(qout[to], ch));
        return send;
      }
    }
    return wait;
  }
};

StepKind kind_of(What w) {
  switch (w) {
    case What::Launch: return StepKind::Launch;
    case What::RsSignal: return StepKind::Signal;
    case What::RsWait: return StepKind::Wait;
    case What::RsPush:
    case What::AgPush:
    case What::RsSend:
    case What::AgSend: return StepKind::Write;
    default: return StepKind::Compute;
  }
}

// build_two_shot's steps, in its order, with its dependency lists.
void two_shot_steps(Shape& x, Steps& st) {
  build::Builder& b = x.b;
  Schedule& s = b.s;
  const int n = b.n();
  const bool quantised = x.quantised;
  const Format q = codec_format(b.cfg.quant.codec);
  const Format wire = quantised ? q : b.data_format;
  x.shards = build::split(s.elems, n, quantised ? b.align() : 1);
  x.shard_max = std::max_element(x.shards.begin(), x.shards.end(), [](auto& u, auto& v) { return u.count < v.count; })->count;
  if (quantised) x.shard_max = (x.shard_max + b.align() - 1) / b.align() * b.align();
  for (int r = 0; r < n; ++r) {
    x.scratch.push_back(b.buffer("scratch", r, x.shard_max * static_cast<std::uint64_t>(n), wire));
    if (quantised) {
      x.qin.push_back(b.buffer("qin", r, s.elems, q));
      x.gather.push_back(b.buffer("qout", r, s.elems, q));
    }
  }
  const auto un = static_cast<std::size_t>(n);
  st.clear();
  st.rec.reserve(4 * un * un + (quantised ? 2 * un : 0));
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
      arrived[static_cast<std::size_t>(j) * un + static_cast<std::size_t>(r)] = st.add({What::RsSignal, false, r, j, 0}, {w});
    }
  std::vector<StepId> reduced(un);
  for (int j = 0; j < n; ++j) {
    const auto uj = static_cast<std::size_t>(j);
    st.add_open({What::RsWait, false, j, 0, 0});
    for (int r = 0; r < n; ++r)
      if (r != j) st.deps.push_back(arrived[uj * un + static_cast<std::size_t>(r)]);
    st.deps.push_back(ready[uj]);
    st.close();
    const StepId w = static_cast<StepId>(st.rec.size() - 1);
    reduced[uj] = st.add({What::Reduce, false, j, 0, 0}, {w});
  }
  for (int j = 0; j < n; ++j)
    for (int r = 0; r < n; ++r) {
      if (r == j) continue;
      const StepId w = st.add({What::AgPush, false, j, r, 0}, {reduced[static_cast<std::size_t>(j)]});
      arrived[static_cast<std::size_t>(r) * un + static_cast<std::size_t>(j)] = st.add({What::RsSignal, false, j, r, 0}, {w});
    }
  for (int r = 0; r < n; ++r) {
    const auto ur = static_cast<std::size_t>(r);
    st.add_open({What::RsWait, false, r, 0, 0});
    for (int j = 0; j < n; ++j)
      if (j != r) st.deps.push_back(arrived[ur * un + static_cast<std::size_t>(j)]);
    st.deps.push_back(reduced[ur]);
    st.close();
    const StepId w = static_cast<StepId>(st.rec.size() - 1);
    if (quantised) st.add({What::Dequant, false, r, 0, 0}, {w});
  }
}

// build_ring_q's steps, in its order, with its dependency lists.
void ring_q_steps(Shape& x, Steps& st) {
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
  const auto un = static_cast<std::size_t>(n);
  st.clear();
  st.rec.reserve(3 * un * un);
  std::vector<StepId> launches(un);
  for (int r = 0; r < n; ++r) launches[static_cast<std::size_t>(r)] = st.add({What::Launch, false, r, 0, 0}, {});
  std::vector<StepId> last(launches), sent(launches), delivered(un);
  for (int k = 0; k < n - 1; ++k) {
    for (int r = 0; r < n; ++r) {
      const auto ur = static_cast<std::size_t>(r);
      const int c = ((r - k) % n + n) % n;
      const int to = (r + 1) % n;
      const StepId qz = st.add({What::QzHop, k == 0, r, 0, c}, {last[ur], sent[ur]});
      const StepId id = st.add({What::RsSend, false, r, to, c}, {qz, launches[static_cast<std::size_t>(to)]});
      delivered[static_cast<std::size_t>(to)] = id;
      sent[ur] = id;
    }
    last.swap(delivered);
  }
  std::vector<StepId> ready(un);
  for (int r = 0; r < n; ++r)
    ready[static_cast<std::size_t>(r)] = st.add({What::QzSum, false, r, 0, (r + 1) % n}, {last[static_cast<std::size_t>(r)]});
  last = ready;
  for (int j = 0; j < n - 1; ++j) {
    for (int r = 0; r < n; ++r) {
      const auto ur = static_cast<std::size_t>(r);
      const int c = ((r + 1 - j) % n + n) % n;
      const int to = (r + 1) % n;
      const StepId id = st.add({What::AgSend, false, r, to, c}, {last[ur], sent[ur], launches[static_cast<std::size_t>(to)]});
      delivered[static_cast<std::size_t>(to)] = id;
      sent[ur] = id;
    }
    last.swap(delivered);
  }
  for (int r = 0; r < n; ++r)
    st.add({What::Dequant, false, r, 0, 0}, {last[static_cast<std::size_t>(r)], sent[static_cast<std::size_t>(r)]});
}

// The generated steps as book()'s view (book.h).
struct StepsView {
  const Config& cfg;
  const Schedule& s;  // the head: buffers, no steps
  const ResourceMap& rm;
  bool one_plane;
  const Steps& st;
  Shape& x;
  std::size_t size() const { return st.rec.size(); }
  DepRange deps(std::size_t i) const { return {st.deps.data() + st.dep_first[i], st.deps.data() + st.dep_first[i + 1]}; }
  StepKind kind(std::size_t i) const { return kind_of(st.rec[i].what); }
  bool cost(StepId i, StepCost& c) const { return step_cost(cfg, s, rm, x.fill(st.rec[i]), c, one_plane, false); }
  int resources() const { return rm.count(); }
  const std::string& name() const { return s.algorithm; }
};

}  // namespace

std::optional<AnalyticResult> run_analytic_shot(const Config& cfg, const Collective& coll, Algorithm algo,
                                                const RunContext& ctx) {
  if (algo != Algorithm::TwoShot && algo != Algorithm::TwoShotQ8 && algo != Algorithm::RingQ8) return std::nullopt;
  if (cfg.fabric.topology != Topology::Star || !cfg.fabric.graph_file.empty()) return std::nullopt;
  if (cfg.fabric.gpus < 2 || !unsupported_reason(cfg, algo).empty()) return std::nullopt;
  // More steps than a StepId counts: compile() (which fails there too).
  if (3 * static_cast<double>(cfg.fabric.gpus) * cfg.fabric.gpus + 2 * static_cast<double>(cfg.fabric.gpus) >= 4e9)
    return std::nullopt;
  thread_local Schedule storage;  // the head's lists, kept for the next point
  thread_local Steps steps;
  thread_local AnalyticWorkspace ws;
  build::Builder b(cfg, info(algo).name, coll, &storage);
  b.labels = false;
  Shape x(cfg, b);
  x.quantised = algo != Algorithm::TwoShot;
  x.ring = algo == Algorithm::RingQ8;
  if (algo == Algorithm::RingQ8) ring_q_steps(x, steps);
  else two_shot_steps(x, steps);
  const Schedule& s = b.s;
  const ResourceMap rm = resource_map(s);
  // planes_alike(s): every transfer crosses kAllPlanes and every compute is an
  // accelerator's, so the steps all pass; the fabric decides.
  const bool one_plane = analytic_detail::fabric_has_planes_alike(s);
  StepsView v{cfg, s, rm, one_plane, steps, x};
  AnalyticResult res;
  analytic::book(v, ctx, ws, res);
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
