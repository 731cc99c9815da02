// Parts of ring-q8's booking in closed order (ring_closed.cc): a kind of
// step's cost, its HBM uses, and (by leaves) the HBMs booked as book() books them.
// Internal to the analytic engine.
#pragma once

#include <algorithm>
#include <cstddef>
#include <deque>
#include <limits>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "engines/analytic/analytic.h"
#include "engines/analytic/reserve.h"
#include "model/cost_model.h"

namespace scin::shot {

// A kind of step's cost (one per kind and chunk size), with its uses: use k
// is on the step's rank's (receiver = false) or its receiver's resource of
// `kind`, `base` + rank x stride (the base: any rank's), for d ns (books =
// false: an amount <= 0 books nothing); or, for a send across two tiers'
// spines (costed alone), on a trunk: `base` is then the resource itself.
struct KindCost {
  struct U {
    ResourceKind kind;
    bool receiver;
    int base;
    double d;
    bool books;
  };
  double fixed = 0, latency = 0;
  std::vector<U> u;
  int hbm = -1;  // the use on an HBM that books (-1: none)
  double longest() const {  // the longest use that books (0: none)
    double d = 0;
    for (const U& x : u)
      if (x.books) d = std::max(d, x.d);
    return d;
  }
};

// Two sends between leaves that cost alike: the same fixed cost, latency and
// uses (kind, side, duration; a rank's on the same kind of resource), in any
// order (a trunk's id, so its place among the uses, depends on its leaf and
// spine; a step's finish and its HBM use do not depend on the order).
inline bool same_across(const KindCost& a, const KindCost& b) {
  if (a.fixed != b.fixed || a.latency != b.latency || (a.hbm < 0) != (b.hbm < 0) || a.u.size() != b.u.size())
    return false;
  const auto key = [](const KindCost& k) {
    std::vector<std::tuple<int, bool, double, bool, int>> v;
    for (const KindCost::U& x : k.u) {
      const bool trunk = x.kind == ResourceKind::Uplink || x.kind == ResourceKind::Downlink;
      v.emplace_back(static_cast<int>(x.kind), x.receiver, x.d, x.books, trunk ? -1 : x.base);
    }
    std::sort(v.begin(), v.end());
    return v;
  };
  return key(a) == key(b);
}

// A kind's cost in brief: its finish is ((ready + fixed) + longest) +
// latency, as finish() gives it (adding is monotone, so t0 + the longest
// use is the latest of t0 + each; none: + 0), and its HBM use.
struct Brief {
  double fixed = 0, longest = 0, latency = 0, hbm = 0;
  bool on = false;
};
inline Brief brief(const KindCost& k) {
  Brief b{k.fixed, k.longest(), k.latency, 0, k.hbm >= 0};
  if (b.on) b.hbm = k.u[static_cast<std::size_t>(k.hbm)].d;
  return b;
}

// A use of an HBM in time (on = false: none; `from` is still its t0).
struct Span2 {
  double from = 0, to = 0;
  bool on = false;
};
// A step's use of an HBM, ready at `ready`.
inline Span2 hbm_span(const Brief& k, double ready) {
  Span2 sp;
  sp.from = sp.to = ready + k.fixed;
  if (!k.on) return sp;
  sp.to = sp.from + k.hbm;
  sp.on = true;
  return sp;
}
// Per rank, its quantise steps' HBM uses that may still meet an S (in
// order: the S chain can run ahead by a few rounds, as on two tiers,
// where a send between leaves uses the receiver's HBM from its start and
// finishes a spine's latency later).
struct Window {
  std::deque<Span2> q;
  void push(const Span2& x) {
    if (x.on) q.push_back(x);
  }
  // An S (or the sum) overlaps none; the Q that end by its t0 go (every
  // later S starts after this one ends, with or without a use).
  bool clear_of(const Span2& sp) {
    while (!q.empty() && q.front().to <= sp.from) q.pop_front();
    return !sp.on || q.empty() || !(q.front().from < sp.to);
  }
};

// By leaves on two tiers, the ranks' HBMs booked as book() books them: at
// large chunks the send into a leaf's first rank from the leaf before,
// slower by a spine's latency, reduces there while the rank quantises, one
// queues behind the other, and the delay moves on along the leaf. Each
// HBM's uses (its rank's quantise steps, the sends into it, its sum and
// dequantise) go on one FCFS queue (reserve.h) in the order of their ready
// times, each at the first gap from its t0. The uses that queued keep their
// start and the step they waited for (by its id among the ranks booked), for
// the walk; the others started at their t0.
struct RanksHbm {
  struct Rec {
    double start = 0;
    StepId holder = kNoStep;
  };
  std::vector<AnalyticWorkspace::Queue> q;
  std::vector<double> last_ready;
  struct Tied {
    double t0, start, end;
  };
  std::vector<std::vector<Tied>> tied;  // per rank: the uses booked at last_ready
  std::unordered_map<StepId, Rec> queued;  // by the step's id among the ranks booked

  void reset(std::size_t ranks) {
    q.assign(ranks, AnalyticWorkspace::Queue{});
    last_ready.assign(ranks, -std::numeric_limits<double>::infinity());
    tied.assign(ranks, {});
    queued.clear();
  }
  /// Books `d` ns on rank r's HBM for step `id`, ready at `ready`, from `t0`;
  /// its start in `start`. False where it is ready before the last use booked
  /// there (book() would take them in another order), or tied with one it
  /// overlaps (book() takes those by step id, which differs between leaf 0
  /// and the others): the caller declines.
  /// Uses tied in ready time may come in any order where neither lies in
  /// the stretch the other searched, from its t0 to its end: each then finds
  /// the gap it would find in the other order, behind the same reservation.
  bool book(std::size_t r, StepId id, double ready, double t0, double d, double& start) {
    if (ready < last_ready[r]) return false;
    if (ready > last_ready[r]) tied[r].clear();
    last_ready[r] = ready;
    start = t0;
    StepId holder = kNoStep;
    int holder_use = -1;
    analytic::reserve(q[r], ready, start, d, holder, holder_use, id, 0);
    const double end = start + d;
    for (const Tied& o : tied[r])
      if ((o.start < end && t0 < o.end) || (start < o.end && o.t0 < end)) return false;
    tied[r].push_back(Tied{t0, start, end});
    if (holder != kNoStep) queued[id] = Rec{start, holder};
    return true;
  }
};

}  // namespace scin::shot
