// book()'s result without its ready queue, for views whose resource uses
// arrive in a known order (shot_alike.cc: one-shot and the two-shots).
// Internal to the analytic engine.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "engines/analytic/book.h"

namespace scin::analytic {

/// A queue as book() leaves it when its uses arrive in book()'s order at start
/// times that never decrease (book_in_order, below): its last use is all a
/// later use needs. `from` and `ready`: that use's start time (ready + fixed)
/// and its step's ready time.
struct QueueTail {
  double end = 0, from = 0, ready = 0;
  StepId step = kNoStep;  // (kNoStep: no use yet)
  int use = -1;
};

/// Use `k` of `step` (ready at `r`, from `t0` = r + fixed, `d` long) on `q`:
/// `rec` as book() writes it (behind the last use if that ends after t0), and
/// `q` advanced. False where the engine's order would differ (a ready time or
/// start time before the last use's: an earlier gap could take it).
inline bool append_use(QueueTail& q, double r, double t0, double d, StepId step, int k, AnalyticWorkspace::Use& rec) {
  if (q.step != kNoStep && (r < q.ready || t0 < q.from)) return false;
  rec = AnalyticWorkspace::Use{t0, t0, kNoStep, -1};
  if (q.step != kNoStep && q.end > t0) {
    rec.start = q.end;
    rec.holder = q.step;
    rec.holder_use = q.use;
  }
  rec.end = rec.start + d;
  q = QueueTail{rec.end, t0, r, step, k};
  return true;
}

// book() (book.h) without the ready queue (issue 14: one-shot and two-shot at
// 1024 GPUs booked 2-4 million steps through book()'s heap and gap searches,
// 2-3 s a point). The view has book()'s interface and phase(i): 0 for a step
// taken in index order, k > 0 for a step of phase k (taken with the rest of
// its phase when the first is reached), -1 for a step this booking cannot
// take. In one-shot and the two-shots the phases are the scatter's and the
// gather's pushes (the only steps that use ports) and a rank's own quantise,
// reduce and dequantise steps use its HBM one after another through their
// deps; launches, signals and waits use nothing.
// book() takes steps in order of (ready time, index) and gives each use the
// earliest gap from (ready + fixed cost) on that is long enough. Where every
// queue's uses arrive in that order with start times (ready + fixed) that never
// decrease, no gap can take a later use (a gap ends where a use started at its
// own start time, at or before the later use's), so each use starts at the
// later of its start time and the end of the queue's last use, behind that use
// if it ended later: a queue is its last end and last user. The steps are then
// taken in index order (deps come first), except the steps of each phase,
// which are taken together once their deps are final, in the engine's order:
// by ready time, then index (the pushes are already in that order when every
// rank is ready at once). The use records, bound uses and times
// are book()'s, and walk_back() (book.h) walks them as book() does, so the
// result is book()'s to the last bit. Returns false where a condition fails
// (a negative fixed cost or latency, a fed unit, a queue whose start times
// would decrease, a resource used both in and out of phases, a step of phase
// -1, a false cost()): the caller books with book() then.
template <class View>
bool book_in_order(View& v, const RunContext& ctx, AnalyticWorkspace& ws, AnalyticResult& res) {
  const std::size_t n = v.size();
  res = AnalyticResult{};
  res.steps.resize(n);
  if (n == 0) return true;
  auto& first_use = ws.first_use;
  first_use.assign(n, 0);
  auto& bound_use = ws.bound_use;
  bound_use.assign(n, -1);
  auto& uses = ws.uses;
  uses.clear();
  auto& ready = ws.ready;
  ready.assign(n, 0);
  struct Tail {
    QueueTail last;
    bool in_phase = false;  // used by a phase's steps (else by steps taken in index order)
  };
  std::vector<Tail> tails(static_cast<std::size_t>(v.resources()));
  StepCost& c = ws.cost;
  std::vector<std::uint8_t> taken(n, 0);
  std::size_t done = 0;
  auto deps_final = [&](std::size_t i) {  // false: a dep not taken yet (a phase before its deps)
    double r = 0;
    for (StepId d : v.deps(i)) {
      if (!taken[d]) return false;
      r = std::max(r, res.steps[d].finish_ns);
    }
    ready[i] = r;
    return true;
  };
  auto take = [&](std::size_t i) {
    if ((++done & 0xfff) == 0) {
      ctx.check();
      ctx.report(static_cast<double>(done) / static_cast<double>(n));
    }
    taken[i] = 1;
    const auto id = static_cast<StepId>(i);
    if (!v.cost(id, c)) return false;
    const double l = c.latency_total_ns();
    if (!(c.fixed_ns >= 0) || !(l >= 0)) return false;
    const double r = ready[i];
    const double t0 = r + c.fixed_ns;
    first_use[i] = uses.size;
    if (!c.uses.empty()) uses.grow_to(uses.size + c.uses.size());
    double end = t0;
    for (std::size_t k = 0; k < c.uses.size(); ++k) {
      const auto& u = c.uses[k];
      AnalyticWorkspace::UseRec& kept = uses[first_use[i] + k];
      kept = AnalyticWorkspace::UseRec{t0, kNoStep, -1};
      if (u.fed_by_transfers) return false;
      if (u.amount_bytes <= 0) continue;
      AnalyticWorkspace::Use rec;
      Tail& q = tails[static_cast<std::size_t>(u.resource)];
      // A resource is used by phases' steps or by steps taken in index order,
      // never both (the two orders would meet on it).
      const bool in_phase = v.phase(i) > 0;
      if (q.last.step != kNoStep && q.in_phase != in_phase) return false;
      // In the engine's order (ready, then index: ties keep this order), and
      // no earlier gap can take it.
      if (!append_use(q.last, r, t0, u.amount_bytes / u.rate_GBps, id, static_cast<int>(k), rec)) return false;
      kept = AnalyticWorkspace::UseRec{rec.start, rec.holder, rec.holder_use};  // (rec.end: use_end(), book.h)
      q.in_phase = in_phase;
      if (rec.end > end) {
        end = rec.end;
        bound_use[i] = static_cast<int>(k);
      }
    }
    res.steps[i].start_ns = r;
    res.steps[i].finish_ns = end + l;
    return true;
  };
  // A phase's steps, from the first one on: all of that phase, ready times
  // final, taken by (ready, index).
  std::vector<StepId> batch;
  auto take_phase = [&](std::size_t first, int phase) {
    batch.clear();
    for (std::size_t i = first; i < n; ++i)
      if (v.phase(i) == phase) {
        if (!deps_final(i)) return false;
        batch.push_back(static_cast<StepId>(i));
      }
    auto before = [&](StepId a, StepId b) { return ready[a] < ready[b] || (ready[a] == ready[b] && a < b); };
    if (!std::is_sorted(batch.begin(), batch.end(), before)) std::sort(batch.begin(), batch.end(), before);
    for (StepId i : batch)
      if (!take(i)) return false;
    return true;
  };
  for (std::size_t i = 0; i < n; ++i) {
    if (taken[i]) continue;
    const int phase = v.phase(i);
    if (phase < 0) return false;
    if (phase > 0) {
      if (!take_phase(i, phase)) return false;
      continue;
    }
    if (!deps_final(i) || !take(i)) return false;
  }
  walk_back(v, ws, res);
  return true;
}

}  // namespace scin::analytic
