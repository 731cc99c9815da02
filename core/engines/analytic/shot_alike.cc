// Two-shot, two-shot-q8 and ring-q8 booked from their builders' structure
// (shot_alike.h): the same steps as build_two_shot / build_ring_q, as compact
// records, through the engine's own booking (book.h).
#include "engines/analytic/shot_alike.h"

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <vector>

#include "engines/analytic/book.h"
#include "engines/analytic/book_in_order.h"
#include "engines/analytic/planes.h"
#include "model/cost_grid.h"
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
  Signal,     // signal a -> b (both phases)
  Wait,       // wait on a (both phases)
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
  bool ring = false;      // ring-q8 (else two-shot or one-shot)
  bool one_shot = false;  // one-shot: every "shard" is the whole message, no gather
  // two-shot
  std::vector<Span> shards;
  std::uint64_t shard_max = 0;
  std::vector<BufferId> scratch, qin, gather;
  // ring-q8
  std::vector<Span> chunks;
  std::vector<BufferId> partial, qtx, qout;

  // One step per kind of record, its constant fields set once (as the
  // builder sets them); fill() writes the rest in place.
  Step launch, push, signal, wait, quant, reduce, dequant, qz, rs_send, ag_send;

  Shape(const Config& c, build::Builder& bb) : cfg(c), b(bb) {
    launch.kind = StepKind::Launch;
    launch.protocol = RingProtocol::Simple;
    push.kind = StepKind::Write;  // Builder::push
    push.via = b.via;
    push.op = DataOp::Copy;
    push.srcs.resize(1);
    push.dsts.resize(1);
    signal.kind = StepKind::Signal;  // Builder::signal between accelerators
    signal.unit = Unit::AccelSm;
    signal.via = b.via;
    wait.kind = StepKind::Wait;
    wait.unit = Unit::AccelSm;
    for (Step* st : {&quant, &reduce, &dequant, &qz}) {  // Builder::compute
      st->kind = StepKind::Compute;
      st->unit = Unit::AccelSm;
      st->accum = Format::Fp32;
      st->op = DataOp::Copy;
      st->srcs.resize(1);
      st->dsts.resize(1);
    }
    reduce.op = DataOp::Reduce;
    rs_send.kind = ag_send.kind = StepKind::Write;  // Builder::ring_send (Simple)
    build::fill_ring_send(rs_send, b.via, RingProtocol::Simple, DataOp::Reduce, SrcList{Region{}, Region{}}, Region{});
    build::fill_ring_send(ag_send, b.via, RingProtocol::Simple, DataOp::Copy, SrcList{Region{}}, Region{});
  }

  void shapes_done() {  // after the buffers: the ring launches, reduce's sources
    launch.ring_step = ring;
    reduce.srcs.resize(static_cast<std::size_t>(b.n()));
  }

  Region slot(int owner, int from) const {
    return Region{scratch[static_cast<std::size_t>(owner)], static_cast<std::uint64_t>(from) * shard_max,
                  shards[static_cast<std::size_t>(owner)].count};
  }
  // The element count a step's cost depends on besides its kind (its
  // regions' counts: a shard's or a chunk's; 0: the whole message or none).
  std::uint64_t count_of(const Rec& r) const {
    switch (r.what) {
      case What::RsPush: return shards[static_cast<std::size_t>(r.b)].count;
      case What::AgPush:
      case What::Reduce: return shards[static_cast<std::size_t>(r.a)].count;
      case What::QzHop:
      case What::QzSum:
      case What::RsSend:
      case What::AgSend: return chunks[static_cast<std::size_t>(r.c)].count;
      default: return 0;
    }
  }
  BufferId rs_source(std::size_t r) const { return quantised ? qin[r] : b.s.input[r]; }
  BufferId ag_buffer(std::size_t r) const { return quantised ? gather[r] : b.s.output[r]; }

  const Step& fill(const Rec& r) {
    const Schedule& s = b.s;
    const auto ua = static_cast<std::size_t>(r.a);
    const Span all{0, s.elems};
    switch (r.what) {
      case What::Launch:
        launch.initiator = r.a;
        return launch;
      case What::Quant:
        quant.initiator = r.a;
        quant.srcs[0] = at(s.input[ua], all);
        quant.dsts[0] = at(qin[ua], all);
        return quant;
      case What::RsPush:
        push.initiator = r.a;
        push.srcs[0] = at(rs_source(ua), shards[static_cast<std::size_t>(r.b)]);
        push.dsts[0] = slot(r.b, r.a);
        return push;
      case What::Signal:
        signal.initiator = r.a;
        signal.target = r.b;
        return signal;
      case What::Wait:
        wait.initiator = r.a;
        return wait;
      case What::Reduce: {
        reduce.initiator = r.a;
        const int n = b.n();
        for (int k = 0; k < n; ++k)
          reduce.srcs[static_cast<std::size_t>(k)] = k == r.a ? at(rs_source(ua), shards[ua]) : slot(r.a, k);
        reduce.dsts[0] = at(ag_buffer(ua), shards[ua]);
        return reduce;
      }
      case What::AgPush:
        push.initiator = r.a;
        push.srcs[0] = at(ag_buffer(ua), shards[ua]);
        push.dsts[0] = at(ag_buffer(static_cast<std::size_t>(r.b)), shards[ua]);
        return push;
      case What::Dequant:
        dequant.initiator = r.a;
        dequant.srcs[0] = at(ring ? qout[ua] : gather[ua], all);
        dequant.dsts[0] = at(s.output[ua], all);
        return dequant;
      case What::QzHop:
      case What::QzSum: {
        const Span ch = chunks[static_cast<std::size_t>(r.c)];
        qz.initiator = r.a;
        if (r.what == What::QzHop) {
          qz.srcs[0] = at(r.first_hop ? s.input[ua] : partial[ua], ch);
          qz.dsts[0] = at(qtx[ua], ch);
        } else {
          qz.srcs[0] = at(partial[ua], ch);
          qz.dsts[0] = at(qout[ua], ch);
        }
        return qz;
      }
      case What::RsSend: {
        const Span ch = chunks[static_cast<std::size_t>(r.c)];
        const auto to = static_cast<std::size_t>(r.b);
        rs_send.initiator = r.a;
        rs_send.srcs[0] = at(qtx[ua], ch);
        rs_send.srcs[1] = at(s.input[to], ch);
        rs_send.dsts[0] = at(partial[to], ch);
        return rs_send;
      }
      case What::AgSend: {
        const Span ch = chunks[static_cast<std::size_t>(r.c)];
        ag_send.initiator = r.a;
        ag_send.srcs[0] = at(qout[ua], ch);
        ag_send.dsts[0] = at(qout[static_cast<std::size_t>(r.b)], ch);
        return ag_send;
      }
    }
    return wait;
  }
};

StepKind kind_of(What w) {
  switch (w) {
    case What::Launch: return StepKind::Launch;
    case What::Signal: return StepKind::Signal;
    case What::Wait: return StepKind::Wait;
    case What::RsPush:
    case What::AgPush:
    case What::RsSend:
    case What::AgSend: return StepKind::Write;
    default: return StepKind::Compute;
  }
}

// build_two_shot's steps, in its order, with its dependency lists; with
// x.one_shot, build_one_shot's: the same launches, pushes, signals, waits and
// reduces, each push carrying the whole message into its slot of the peer's
// scratch (slot r at r x elems), and no gather.
void two_shot_steps(Shape& x, Steps& st) {
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

// Costs by class. On a star, what step_cost() charges a step of these
// builders depends on its ranks only through the resources it names (the
// initiator's egress ports and HBM, the receiver's ingress ports and HBM):
// the latencies, the rate factors and the amounts depend on the kind of step
// and on its regions' element counts and formats, which are the same for every
// rank at one shard or chunk count. (Launches are the exception:
// accelerator.gpus_per_process makes a launch's cost depend on its rank; they
// are costed one by one.) So a step is costed once per (kind, count) on its
// first occurrence, each use's resource is recorded as the initiator's or the
// receiver's (decoded from the resource map's star layout: an egress or
// ingress port is gpu x planes + plane, an HBM is a base + gpu), and another
// rank's step gets the same cost with its own ranks' resources, the same
// port planes, in the same order. A use on any other resource makes that
// class costed step by step.
class CostClasses {
 public:
  void reset() { entries_.clear(); }

  // `r`'s cost into `c`; `full` costs a step with step_cost().
  template <class Full>
  bool cost(const Rec& r, std::uint64_t count, const ResourceMap& rm, StepCost& c, Full full) {
    Entry* e = nullptr;
    for (Entry& x : entries_)
      if (x.what == r.what && x.first_hop == r.first_hop && x.count == count) {
        e = &x;
        break;
      }
    if (!e) {
      entries_.push_back(Entry{r.what, r.first_hop, count, true, {}, {}});
      e = &entries_.back();
      const bool ok = full(e->c);
      if (!ok) return false;
      e->ok = classify(r, rm, *e);
    }
    if (!e->ok) return full(c);
    c.fixed_ns = e->c.fixed_ns;
    c.fixed_term = e->c.fixed_term;
    for (int t = 0; t < kTermCount; ++t) c.latency_ns[t] = e->c.latency_ns[t];
    c.uses.assign(e->c.uses.begin(), e->c.uses.end());
    for (std::size_t k = 0; k < c.uses.size(); ++k) {
      const Role& ro = e->role[k];
      c.uses[k].resource = ro.base + (ro.of_receiver ? r.b : r.a) * ro.stride;
    }
    return true;
  }

 private:
  struct Role {
    int base = 0, stride = 0;  // resource = base + rank x stride
    bool of_receiver = false;
  };
  struct Entry {
    What what;
    bool first_hop;
    std::uint64_t count;
    bool ok;
    StepCost c;
    std::vector<Role> role;
  };
  static bool has_receiver(What w) {
    return w == What::RsPush || w == What::AgPush || w == What::RsSend || w == What::AgSend || w == What::Signal;
  }
  static bool classify(const Rec& r, const ResourceMap& rm, Entry& e) {
    if (rm.topology != Topology::Star) return false;
    e.role.resize(e.c.uses.size());
    const int P = rm.planes;
    for (std::size_t k = 0; k < e.c.uses.size(); ++k) {
      const int res = e.c.uses[k].resource;
      int gpu = -1, stride = 0, base = 0;
      switch (rm.kind(res)) {
        case ResourceKind::Egress:
          gpu = res / P;
          stride = P;
          base = res - gpu * P;
          break;
        case ResourceKind::Ingress:
          gpu = (res - rm.gpus * P) / P;
          stride = P;
          base = res - gpu * P;
          break;
        case ResourceKind::Hbm:
          gpu = res - rm.hbm(0);
          stride = 1;
          base = rm.hbm(0);
          break;
        default: return false;
      }
      Role& ro = e.role[k];
      ro.base = base;
      ro.stride = stride;
      if (gpu == r.a) ro.of_receiver = false;
      else if (has_receiver(r.what) && gpu == r.b) ro.of_receiver = true;
      else return false;
    }
    return true;
  }
  std::vector<Entry> entries_;
};

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
  // book_in_order's phases: the scatter's pushes, the gather's; ring-q8's
  // chains are not of that shape.
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
  if (cfg.fabric.topology != Topology::Star || !cfg.fabric.graph_file.empty()) return false;
  if (cfg.fabric.gpus < 2 || !unsupported_reason(cfg, algo).empty()) return false;
  // More steps than a StepId counts: compile() (which fails there too).
  return 3 * static_cast<double>(cfg.fabric.gpus) * cfg.fabric.gpus + 2 * static_cast<double>(cfg.fabric.gpus) < 4e9;
}

}  // namespace

std::size_t shot_alike_steps(const Config& cfg, Algorithm algo) {
  if (!shot_alike_answers(cfg, algo)) return 0;
  const auto n = static_cast<std::size_t>(cfg.fabric.gpus);
  switch (algo) {
    case Algorithm::OneShot: return 2 * n * n + n;    // launches, N(N-1) pushes and signals, waits, reduces
    case Algorithm::RingQ8: return 3 * n * n;         // launches, N-1 rounds of (quantise, send), sums, N-1 rounds of sends, dequantise
    case Algorithm::TwoShot: return 4 * n * n;        // launches, N(N-1) pushes and signals each way, waits, reduces
    default: return 4 * n * n + 2 * n;                // two-shot-q8: and a quantise and a dequantise per rank
  }
}

std::optional<AnalyticResult> run_analytic_shot(const Config& cfg, const Collective& coll, Algorithm algo,
                                                const RunContext& ctx, bool* in_order) {
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
  if (algo == Algorithm::RingQ8) ring_q_steps(x, steps);
  else two_shot_steps(x, steps);
  x.shapes_done();
  const Schedule& s = b.s;
  const ResourceMap rm = resource_map(s);
  // planes_alike(s): every transfer crosses kAllPlanes and every compute is an
  // accelerator's, so the steps all pass; the fabric decides.
  const bool one_plane = analytic_detail::fabric_has_planes_alike(s);
  thread_local CostClasses classes;
  classes.reset();
  StepsView v{cfg, s, rm, one_plane, steps, x, classes};
  AnalyticResult res;
  const bool ordered = algo != Algorithm::RingQ8 && analytic::book_in_order(v, ctx, ws, res);
  if (in_order) *in_order = ordered;
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
