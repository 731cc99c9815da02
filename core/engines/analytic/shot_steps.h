// The records of one-shot's, the two-shots' and ring-q8's steps, their
// shapes and their costs by class: shared by their booking from the
// builders' structure (shot_alike.cc) and its closed form (shot_closed.cc).
// Internal to the analytic engine.
#pragma once

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <vector>

#include "engines/analytic/analytic.h"
#include "schedule/builder.h"

namespace scin::shot {

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

inline StepKind kind_of(What w) {
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

// build_two_shot's (and build_one_shot's) step indices: launches (and
// quantise steps), scatter pushes and signals in pairs (sender-major, the
// receiver skipping the sender), a wait and a reduce per rank; then gather
// pushes and signals (owner-major), a wait (and a dequantise) per rank.
struct ShotIds {
  std::size_t n, base_rs, base_w, base_ag, base_w2;
  bool q;
  ShotIds(std::size_t n_, bool q_) : n(n_), q(q_) {
    base_rs = n * (q ? 2 : 1);
    base_w = base_rs + 2 * n * (n - 1);
    base_ag = base_w + 2 * n;
    base_w2 = base_ag + 2 * n * (n - 1);
  }
  static StepId id(std::size_t v) { return static_cast<StepId>(v); }
  StepId ready(std::size_t r) const { return id(q ? 2 * r + 1 : r); }
  StepId pair(std::size_t base, std::size_t a, std::size_t b) const {
    return id(base + 2 * (a * (n - 1) + b - (b > a ? 1 : 0)));
  }
  StepId wait1(std::size_t j) const { return id(base_w + 2 * j); }
  StepId reduce(std::size_t j) const { return id(base_w + 2 * j + 1); }
  StepId wait2(std::size_t r) const { return id(base_w2 + (q ? 2 * r : r)); }
  Rec rec(StepId i) const {
    const std::size_t v = i;
    auto R = [](What w, std::size_t a, std::size_t b) {
      return Rec{w, false, static_cast<std::int32_t>(a), static_cast<std::int32_t>(b), 0};
    };
    auto in_pairs = [&](std::size_t base, What push) {
      const std::size_t k = (v - base) / 2, a = k / (n - 1), bb = k % (n - 1);
      return R((v - base) % 2 ? What::Signal : push, a, bb + (bb >= a ? 1 : 0));
    };
    if (v < base_rs) return q ? R(v % 2 ? What::Quant : What::Launch, v / 2, 0) : R(What::Launch, v, 0);
    if (v < base_w) return in_pairs(base_rs, What::RsPush);
    if (v < base_ag) return R((v - base_w) % 2 ? What::Reduce : What::Wait, (v - base_w) / 2, 0);
    if (v < base_w2) return in_pairs(base_ag, What::AgPush);
    const std::size_t o = v - base_w2;
    return q ? R(o % 2 ? What::Dequant : What::Wait, o / 2, 0) : R(What::Wait, o, 0);
  }
};

// build_ring_q's step indices (ring_leaves.h, ring_q_steps: launches; per
// reduce-scatter round k a (quantise, send) pair per rank; a sum per rank;
// per gather round j a send per rank; a dequantise per rank) and their
// representatives: t = 2k (round k's quantise) and 2k + 1 (its send) for
// k < N - 1, then the sums, the gather's rounds, the dequantise steps. A
// step is (representative, rank); t == reps() stands for a launch. `ranks`:
// the ranks ring_q_steps generated (the first `ranks` of the ring's n; the
// layout's index is theirs); rec() and deps() are the whole ring's (ranks = n).
struct RingQIds {
  std::size_t n, ranks, b1, b2, b3;
  explicit RingQIds(std::size_t n_, std::size_t ranks_ = 0) : n(n_), ranks(ranks_ ? ranks_ : n_) {
    b1 = ranks + 2 * ranks * (n - 1);
    b2 = b1 + ranks;
    b3 = b2 + ranks * (n - 1);
  }
  std::size_t sum_rep() const { return 2 * (n - 1); }
  std::size_t ag_rep(std::size_t j) const { return 2 * (n - 1) + 1 + j; }
  std::size_t dequant_rep() const { return 3 * (n - 1) + 1; }
  std::size_t reps() const { return 3 * (n - 1) + 2; }
  std::size_t prev(std::size_t r) const { return r == 0 ? n - 1 : r - 1; }
  std::size_t next(std::size_t r) const { return r + 1 == n ? 0 : r + 1; }
  StepId id(std::size_t t, std::size_t r) const {
    std::size_t v = b3 + r;
    if (t == reps()) v = r;
    else if (t < sum_rep()) v = ranks + 2 * (ranks * (t / 2) + r) + t % 2;
    else if (t == sum_rep()) v = b1 + r;
    else if (t < dequant_rep()) v = b2 + ranks * (t - ag_rep(0)) + r;
    return static_cast<StepId>(v);
  }
  void of(StepId i, std::size_t& t, std::size_t& r) const {
    const std::size_t v = i;
    if (v < ranks) {
      t = reps(), r = v;
    } else if (v < b1) {
      const std::size_t o = v - ranks, p = o / 2;
      t = 2 * (p / ranks) + o % 2, r = p % ranks;
    } else if (v < b2) {
      t = sum_rep(), r = v - b1;
    } else if (v < b3) {
      t = ag_rep((v - b2) / ranks), r = (v - b2) % ranks;
    } else {
      t = dequant_rep(), r = v - b3;
    }
  }
  // The record ring_q_steps makes.
  Rec rec(std::size_t t, std::size_t r) const {
    auto R = [](What w, bool first, std::size_t a, std::size_t b, std::size_t c) {
      return Rec{w, first, static_cast<std::int32_t>(a), static_cast<std::int32_t>(b), static_cast<std::int32_t>(c)};
    };
    if (t == reps()) return R(What::Launch, false, r, 0, 0);
    if (t < sum_rep()) {
      const std::size_t k = t / 2, c = (r + n - k) % n;
      return t % 2 ? R(What::RsSend, false, r, next(r), c) : R(What::QzHop, k == 0, r, 0, c);
    }
    if (t == sum_rep()) return R(What::QzSum, false, r, 0, next(r));
    if (t < dequant_rep()) return R(What::AgSend, false, r, next(r), (r + 1 + n - (t - ag_rep(0))) % n);
    return R(What::Dequant, false, r, 0, 0);
  }
  // Its deps, in ring_q_steps's order; returns how many.
  int deps(std::size_t t, std::size_t r, StepId (&d)[3]) const {
    const std::size_t launch = reps();
    auto two = [&](std::size_t u) {
      d[0] = id(u, prev(r)), d[1] = id(u, r);
      return 2;
    };
    if (t == launch) return 0;
    if (t < sum_rep() && t % 2 == 0) {
      if (t > 0) return two(t - 1);
      d[0] = d[1] = id(launch, r);
      return 2;
    }
    if (t < sum_rep()) {
      d[0] = id(t - 1, r), d[1] = id(launch, next(r));
      return 2;
    }
    if (t == sum_rep()) {
      d[0] = id(t - 1, prev(r));
      return 1;
    }
    if (t < dequant_rep()) {
      if (t == ag_rep(0)) d[0] = id(sum_rep(), r), d[1] = id(sum_rep() - 1, r);
      else two(t - 1);
      d[2] = id(launch, next(r));
      return 3;
    }
    return two(t - 1);
  }
};

// On a star or two tiers, the accelerator whose egress port, ingress port or
// HBM `res` is (its resource map's layout: a port is gpu x planes + plane,
// an HBM a base + gpu), with `base` and `stride` such that res = base + gpu x
// stride, so that another accelerator's same resource is base + its rank x
// stride; -1 for any other resource (a switch's unit, a trunk) or a mesh.
inline int accel_rank_of(const ResourceMap& rm, int res, int& base, int& stride) {
  if (rm.topology == Topology::Mesh) return -1;
  const int P = rm.planes;
  int gpu = -1;
  switch (rm.kind(res)) {
    case ResourceKind::Egress:
      gpu = res / P;
      stride = P;
      break;
    case ResourceKind::Ingress:
      gpu = (res - rm.gpus * P) / P;
      stride = P;
      break;
    case ResourceKind::Hbm:
      gpu = res - rm.hbm(0);
      stride = 1;
      break;
    default: return -1;
  }
  base = res - gpu * stride;
  return gpu;
}

// On two tiers, the plane and leaf of trunk `res`: an uplink from that leaf or
// a downlink to it (the inverse of ResourceMap::uplink / downlink, whose
// layout is ((plane x leaves + leaf) x spines + spine) x 2 + direction after
// the HBMs), and with `spine` its spine. False for any other resource.
inline bool trunk_of(const ResourceMap& rm, int res, int& plane, int& leaf, int* spine = nullptr) {
  const ResourceKind k = rm.kind(res);
  if (k != ResourceKind::Uplink && k != ResourceKind::Downlink) return false;
  const int pair = (res - rm.uplink(0, 0, 0)) / 2;
  const int spines = std::max(1, rm.spines);
  leaf = pair / spines % rm.leaves;
  plane = pair / spines / rm.leaves;
  if (spine) *spine = pair % spines;
  return true;
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
    // (Two tiers: a pair's route decides even a step's latencies, with or without uses.)
    if (rm.topology != Topology::Star) return false;
    e.role.resize(e.c.uses.size());
    for (std::size_t k = 0; k < e.c.uses.size(); ++k) {
      Role& ro = e.role[k];
      const int gpu = accel_rank_of(rm, e.c.uses[k].resource, ro.base, ro.stride);
      if (gpu < 0) return false;
      if (gpu == r.a) ro.of_receiver = false;
      else if (has_receiver(r.what) && gpu == r.b) ro.of_receiver = true;
      else return false;
    }
    return true;
  }
  std::vector<Entry> entries_;
};

}  // namespace scin::shot
