// book() of the analytic engine (analytic.cc) over a view of a schedule's
// steps: a compiled Schedule (analytic.cc), or steps generated from an
// algorithm's structure without compiling them (shot_alike.cc). Internal to
// the analytic engine. One booking for both, so a shortcut that presents the
// same steps (the same deps in the same order, the same costs) gets the same
// result to the last bit by construction.
//
// A View has: size(); deps(i) (a range of StepId with size(), in the step's
// order); kind(i); cost(i, StepCost&) -> bool (step_cost with the caller's
// flags; false: the booking stops, as for a failed class check); resources()
// (the resource map's count); name() (the algorithm, for errors).
#pragma once

#include <algorithm>
#include <limits>
#include <vector>
#include <fmt/format.h>

#include "base/error.h"
#include "engines/analytic/analytic.h"
#include "engines/analytic/ready_queue.h"
#include "engines/analytic/reserve.h"

namespace scin::analytic {

// The critical path and breakdown from step `last` (the first of the latest
// to finish), as the engine walks them: through the dependency that made a
// step ready (its first latest finishing dep: `rec.bound_dep(i)`), or through
// the reservation a use queued behind, attributing every nanosecond. `rec`
// gives a step's use records (`rec.use(i, k, c)`, in the order of its cost's
// uses, `c` holding step i's cost) and `rec.bound_use(i)`, the use that ended
// last (-1: none); `v.cost` gives its cost. Sets res.time_ns (= `last_finish`), res.breakdown and
// res.critical_path.
template <class View, class Records>
void walk_from(View& v, StepCost& c, Records& rec, StepId last, double last_finish, AnalyticResult& res) {
  using Use = AnalyticWorkspace::Use;
  res.time_ns = last_finish;
  std::vector<StepId> path;
  StepId cur = last;
  int use = -2;  // -2: the whole step (latency and last use); >=0: only that use
  StepId costed = kNoStep;  // the step `c` holds the cost of
  bool queued = false;      // `use` was reached as the reservation another step's use queued behind
  while (cur != kNoStep) {
    if (path.empty() || path.back() != cur) path.push_back(cur);
    if (costed != cur) {
      v.cost(cur, c);
      costed = cur;
    }
    if (use == -2) {
      for (int t = 0; t < static_cast<int>(Term::Count); ++t) res.breakdown.ns[t] += c.latency_ns[t];
      use = rec.bound_use(cur);
      if (use < 0) {  // no resource: fixed cost, then the latest dep
        res.breakdown[c.fixed_term] += c.fixed_ns;
        cur = rec.bound_dep(cur);
        use = -2;
        continue;
      }
    }
    const Use u = rec.use(cur, use, c);
    const ResourceUse& ru = c.uses[static_cast<std::size_t>(use)];
    // A fed unit's reservation is its record's lead later (StepCost::fed_lead_terms):
    // the next user started after its end plus the lead.
    if (queued && ru.fed_by_transfers) add_fed_lead(res.breakdown.ns, c, 1);
    // Fed by a transfer of its own step: only the time past that transfer's end is its own.
    const double from = u.holder == cur ? std::min(u.end, rec.use(cur, u.holder_use, c).end) : u.start;
    res.breakdown[ru.term] += u.end - from;
    if (u.holder != kNoStep) {  // queued behind the previous user of this resource
      queued = u.holder != cur;
      // ... and it started at that user's end, its lead after its record's start.
      if (queued && ru.fed_by_transfers) add_fed_lead(res.breakdown.ns, c, -1);
      cur = u.holder;
      use = u.holder_use;
      continue;
    }
    queued = false;
    res.breakdown[c.fixed_term] += c.fixed_ns;
    cur = rec.bound_dep(cur);
    use = -2;
  }
  std::reverse(path.begin(), path.end());
  res.critical_path = std::move(path);
}

// The end of a use from `start` as book() finds it: start + its duration (a
// use of no bytes ends where it starts). The records keep only the start
// (AnalyticWorkspace::UseRec).
inline double use_end(double start, const ResourceUse& u) {
  return u.amount_bytes <= 0 ? start : start + u.amount_bytes / u.rate_GBps;
}

// A booked view's records for walk_from() (book(), book_in_order.h): every
// step's start and finish in `res.steps`, its use records in ws.uses from
// ws.first_use[i], and ws.bound_use[i]. A walk that reaches a dep in
// [stop_from, stop_to) (a stand-in for a step booked in another view:
// scin_inq_planes.cc) ends there and leaves it in `entered`.
template <class View>
struct BookedRecords {
  View& v;
  AnalyticWorkspace& ws;
  const AnalyticResult& res;
  std::size_t stop_from = 0, stop_to = 0;
  StepId entered = kNoStep;
  int bound_use(StepId i) const { return ws.bound_use[i]; }
  AnalyticWorkspace::Use use(StepId i, int k, const StepCost& c) const {
    const AnalyticWorkspace::UseRec& r = ws.uses[ws.first_use[i] + static_cast<std::size_t>(k)];
    return {r.start, use_end(r.start, c.uses[static_cast<std::size_t>(k)]), r.holder, r.holder_use};
  }
  // The dep a step waited for last (its first latest finishing dep; kNoStep:
  // none), found only for the steps of the critical path: the deps' finishes
  // are final once the step is taken, so the walk finds what booking would.
  StepId bound_dep(StepId i) {
    StepId bound = kNoStep;
    double best = -1;
    for (StepId d : v.deps(i))
      if (res.steps[d].finish_ns > best) {
        best = res.steps[d].finish_ns;
        bound = d;
      }
    if (bound != kNoStep && bound >= stop_from && bound < stop_to) {
      entered = bound;
      return kNoStep;
    }
    return bound;
  }
};

// The step a walk over a booked view starts from: the first of the latest to
// finish.
inline StepId last_to_finish(const AnalyticResult& res) {
  StepId last = 0;
  for (std::size_t i = 0; i < res.steps.size(); ++i)
    if (res.steps[i].finish_ns > res.steps[last].finish_ns) last = static_cast<StepId>(i);
  return last;
}

// walk_from() over a booked view from its last step.
template <class View>
void walk_back(View& v, AnalyticWorkspace& ws, AnalyticResult& res) {
  if (v.size() == 0) return;
  BookedRecords<View> rec{v, ws, res};
  const StepId last = last_to_finish(res);
  walk_from(v, ws.cost, rec, last, res.steps[last].finish_ns, res);
}

// Books the view's steps into `res` (run_analytic) and walks its critical
// path (`walk`; without, the caller walks it: BookedRecords). Returns false as
// soon as a step's cost() does (`res` is then incomplete and the caller books
// again without the class condition that failed).
template <class View>
bool book(View& v, const RunContext& ctx, AnalyticWorkspace& ws, AnalyticResult& res, bool walk = true) {
  const std::size_t n = v.size();
  res = AnalyticResult{};
  res.steps.resize(n);
  if (n == 0) return true;

  // Successors in one flat array (CSR) and remaining-dependency counts.
  auto& succ_first = ws.succ_first;
  succ_first.assign(n + 1, 0);
  auto& pending = ws.pending;
  pending.assign(n, 0);
  for (std::size_t i = 0; i < n; ++i) {
    const auto& deps = v.deps(i);
    pending[i] = static_cast<int>(deps.size());
    for (StepId d : deps) ++succ_first[d + 1];
  }
  for (std::size_t i = 0; i < n; ++i) succ_first[i + 1] += succ_first[i];
  auto& succ = ws.succ;
  succ.resize(succ_first[n]);
  {
    auto& fill = ws.fill;
    fill.assign(succ_first.begin(), succ_first.end() - 1);
    for (std::size_t i = 0; i < n; ++i)
      for (StepId d : v.deps(i)) succ[fill[d]++] = static_cast<StepId>(i);
  }

  // Each resource is a FCFS queue: a step's use of it starts once the step is
  // ready (deps finished, fixed cost paid) and the previous user is done. The
  // uses of one step proceed independently (an egress port and an ingress port
  // drain in parallel), and the step's data has arrived once its last use has
  // ended and the latency has passed.
  // A use's holder is the reservation it queued behind, or for a unit fed by
  // the step's transfers (holder = the step itself), the transfer that fed it last.
  // Step costs are computed when a step is taken (one reused StepCost, no
  // per-step allocation) and again for the steps of the critical path only;
  // the use records are appended in the order steps are taken.
  using UseRec = AnalyticWorkspace::UseRec;
  auto& first_use = ws.first_use;
  first_use.assign(n, 0);
  auto& uses = ws.uses;
  uses.clear();
  // A resource's reservations, sorted and disjoint. A use takes the earliest
  // gap at or after its ready time that is long enough: a unit or port serves
  // whoever is ready while reservations made for later data wait (backfilling),
  // which is what lets a multicast use a port between chunks of reads.
  // Steps are taken in order of ready time r, and every use starts at or after
  // its step's r, so reservations that end by the current r can never be
  // queued behind again: `head` skips them and the list is compacted, which
  // keeps each list as short as the reservations still ahead.
  using Queue = AnalyticWorkspace::Queue;
  auto& resources = ws.resources;
  resources.resize(static_cast<std::size_t>(v.resources()));
  for (Queue& qu : resources) {
    qu.v.clear();
    qu.head = 0;
  }
  auto& ready = ws.ready;
  ready.assign(n, 0);
  auto& bound_use = ws.bound_use;
  bound_use.assign(n, -1);  // the use that ended last (-1: none)
  StepCost& c = ws.cost;
  // Planes alike: book plane 0's copy of each use only. The other planes'
  // queues see the same uses at the same times, so they end at the same
  // instants; plane 0's uses come first in a step's list, so the use that ends
  // last (and the critical path through it) is the same one.
  // Ports alike (port_classes): every member of a class of ports sees the
  // same uses at the same times (each step that uses one uses all, for the
  // same time), so every member's queue is its representative's: only that
  // one is booked. A step's class use stands where the class's first use
  // stood, so the use that ends last (the first of the latest) and the
  // critical path through it are the same.
  // (one_plane: planes_alike(s), found once by the caller.)
  auto cost = [&](StepId i) { return v.cost(i, c); };

  // The ready queue: (ready time, index), smallest first (ready_queue.h):
  // FCFS at resources, ties by order.
  auto& heap = ws.heap;
  heap.clear();
  auto push = [&](double t, StepId i) { ready_queue::push(heap, t, i); };
  // A launch, signal or wait with no use, fixed cost and latency >= 0 is finished when ready,
  // without the queue: it books nothing, and its successors' keys (time >= its finish >= its
  // ready time, index > its own) exceed its key, so no step is taken earlier or in another
  // order than through the queue. `free_ready` (the CSR's fill list, now unused) holds them.
  std::size_t done = 0, taken = 0, polled_uses = 0;
  bool classes_ok = true;
  auto& free_ready = ws.fill;
  free_ready.clear();
  auto release = [&](StepId nx) {  // every dep of nx has finished
    const StepKind k = v.kind(nx);
    if (k == StepKind::Launch || k == StepKind::Signal || k == StepKind::Wait) {
      classes_ok = classes_ok && cost(nx);
      const double l = c.latency_total_ns();
      if (c.uses.empty() && c.fixed_ns >= 0 && l >= 0) {
        res.steps[nx].start_ns = ready[nx];
        res.steps[nx].finish_ns = (ready[nx] + c.fixed_ns) + l;
        first_use[nx] = uses.size;
        ++done;
        free_ready.push_back(nx);
        return;
      }
    }
    push(ready[nx], nx);
  };
  auto finished = [&](StepId i) {  // i's finish is final: update its successors
    for (std::uint32_t k = succ_first[i]; k < succ_first[i + 1]; ++k) {
      const StepId nx = succ[k];
      ready[nx] = std::max(ready[nx], res.steps[i].finish_ns);
      if (--pending[nx] == 0) release(nx);
    }
  };
  auto release_free = [&] {
    for (StepId j; !free_ready.empty();) j = free_ready.back(), free_ready.pop_back(), finished(j);
    return classes_ok;
  };
  for (std::size_t i = 0; i < n; ++i)
    if (pending[i] == 0) release(static_cast<StepId>(i));
  if (!release_free()) return false;

  // A step whose units are fed by its transfers with a lead (an ISA read,
  // StepCost::fed_lead_terms) is taken twice: its transfers are booked when it
  // is ready, its fed units when its data arrives (its second event, in time
  // order with every other step), as the switch's unit serves what has arrived.
  auto& waiting = ws.waiting;  // (by step, sized at the first such step: most schedules have none)
  waiting.clear();
  // Paced reads waiting in step with an earlier one are not queued (paced_chains.h).
  auto& chains = ws.chains;
  chains.clear(resources.size());
  auto& probes = ws.probes;
  probes.clear();
  // Unit q reserved by step s taken at r: its chain's shadows still to be taken
  // at r after s are queued there (they see the reservation, as they would have).
  // And a head whose probe at (r, head) was taken ahead, right after the head
  // before it (ahead_of), is queued there again if s comes between them: its
  // entry queued from that probe is dropped when taken (Waiting::stale_key).
  auto touched = [&](int q, double r, StepId s) {
    const int id = chains.owner[static_cast<std::size_t>(q)];
    if (id < 0) return;
    PacedChain& ch = chains.chains[static_cast<std::size_t>(id)];
    if (r != ch.key) return;
    if (ch.ahead_of != kNoStep && s > ch.ahead_of && s < ch.head) {
      waiting[ch.head].stale_key = ch.next_key;
      ch.next_key = r;
      ch.ahead_of = kNoStep;
      push(r, ch.head);
      ++chains.undone;
      return;
    }
    if (!ch.has_shadows() || s <= ch.head || s >= ch.last()) return;
    const auto from = std::upper_bound(ch.shadows.begin() + static_cast<std::ptrdiff_t>(ch.first), ch.shadows.end(), s);
    chains.requeued += static_cast<std::size_t>(ch.shadows.end() - from);
    for (auto k = from; k != ch.shadows.end(); ++k) push(r, *k);
    ch.shadows.erase(from, ch.shadows.end());
  };
  // A paced read's probe at r: how far past its wanted start the first gap of
  // its slowest fed unit lies (0: every one free then) and the reservation it
  // would wait for (bs, bu).
  double shift = 0;
  StepId bs = kNoStep;
  int bu = -1;
  auto probe = [&](double r, int q, double d, double base) {
    const double want = std::max(r, base);
    StepId s1 = kNoStep;
    int u1 = -1;
    const double at = analytic::first_fit(resources[static_cast<std::size_t>(q)], want, d, s1, u1);
    if (at - want > shift) shift = at - want, bs = s1, bu = u1;
  };
  auto probe_kept = [&](double r, const FedProbe& p) {
    shift = 0, bs = kNoStep, bu = -1;
    for (std::uint8_t k = 0; k < p.n; ++k) probe(r, p.q[k], p.d[k], p.base[k]);
  };
  while (!heap.empty()) {
    const auto [r, i] = ready_queue::pop(heap);
    if (!waiting.empty() && waiting[i].second) {
      AnalyticWorkspace::Waiting& w = waiting[i];
      if (r == w.stale_key) {  // (queued from a probe taken ahead and undone)
        w.stale_key = -1;
        continue;
      }
      int promote = -1;
      if (w.probe >= 0) {  // paced (the units start when their data is there and they are free: else taken again then)
        const FedProbe& units = probes[static_cast<std::size_t>(w.probe)];
        PacedChain* ch = nullptr;
        if (w.chain >= 0) {  // a chain's head: its shadows are taken at r too
          ch = &chains.chains[static_cast<std::size_t>(w.chain)];
          ch->key = r;
          ch->ahead_of = kNoStep;
        }
        if (units.kept()) {
          probe_kept(r, units);
        } else {
          if (!cost(i)) return false;
          shift = 0, bs = kNoStep, bu = -1;
          for (const auto& u : c.uses)
            if (u.fed_by_transfers && u.amount_bytes > 0)
              probe(r, u.resource, u.duration_ns(), std::max(w.t0, w.fed_end - u.duration_ns()) + c.fed_lead_ns());
        }
        if (shift > 0) {
          const double next = r + shift;
          w.blocker = bs, w.blocker_use = bu;
          if (ch) {
            ch->next_key = next;
          } else if (ws.chain_paced && units.kept() && units.max_base() <= next) {
            // In step with a chain's head (waiting until `next` on the same units, its shadows
            // before i): a shadow. On free units: a chain's head.
            if (const int id = chains.owner_of(units); id >= 0) {
              PacedChain& o = chains.chains[static_cast<std::size_t>(id)];
              if (o.head < i && o.next_key == next && (!o.has_shadows() || o.last() < i) && o.units.same_units(units)) {
                o.shadows.push_back(i);
                ++chains.joined;
                continue;
              }
            } else if (id == -1) {
              w.chain = chains.open(i, r, next, units);
            }
          }
          push(next, i);
          continue;
        }
        if (ch) {  // the head takes its units: its next shadow heads the chain (below)
          promote = w.chain;
          w.chain = -1;
        }
      }
      w.second = false;
      if (!cost(i)) return false;
      const double t0 = w.t0, lead = c.fed_lead_ns(), fed_end = w.fed_end;
      const int fed_by = w.fed_by;
      double end = w.end;
      for (std::size_t k = 0; k < c.uses.size(); ++k) {
        const auto& u = c.uses[k];
        if (!u.fed_by_transfers || u.amount_bytes <= 0) continue;
        UseRec& rec = uses[first_use[i] + k];
        Queue& qu = resources[static_cast<std::size_t>(u.resource)];
        const double d = u.duration_ns();
        double start = t0;
        StepId holder = kNoStep;
        int holder_use = -1;
        if (fed_end - d > start) {
          start = fed_end - d;
          holder = i;
          holder_use = fed_by;
        }
        if (c.fed_paced && r > start + lead) {  // (taken again: it waited for the unit's blocker)
          start = r - lead;
          holder = w.blocker;
          holder_use = w.blocker_use;
        }
        const double want = start + lead;
        double at = want;
        analytic::reserve(qu, r, at, d, holder, holder_use, i, static_cast<int>(k));
        touched(u.resource, r, i);
        if (at != want) start = at - lead;
        rec = UseRec{start, holder, holder_use};
        const double rec_end = start + d;
        if (rec_end > end) {
          end = rec_end;
          bound_use[i] = static_cast<int>(k);
        }
      }
      if (promote >= 0) {
        // The next shadow is taken at r, after i: its probe is taken now, ahead (it
        // finds the units i took; touched() queues it at r should a step between them
        // reserve them). No shadow left: the chain closes.
        PacedChain& pc = chains.chains[static_cast<std::size_t>(promote)];
        if (pc.has_shadows()) {
          const StepId j = pc.shadows[pc.first++];
          AnalyticWorkspace::Waiting& wj = waiting[j];
          wj.chain = promote;
          pc.head = j;
          probe_kept(r, probes[static_cast<std::size_t>(wj.probe)]);
          if (shift > 0) {
            wj.blocker = bs, wj.blocker_use = bu;
            pc.next_key = r + shift;
            pc.ahead_of = i;
          } else {
            pc.next_key = r;
          }
          push(pc.next_key, j);
        } else {
          chains.close(promote);
        }
      }
      res.steps[i].finish_ns = end + c.latency_total_ns();
      finished(i);
      if (!release_free()) return false;
      continue;
    }
    ++done;
    // Every 4096 steps, or sooner when steps are wide (an NVLS step at 1024 GPUs x 64 planes books
    // thousands of uses): a stop request is seen within ~2^18 uses (milliseconds).
    if ((++taken & 0xfff) == 0 || uses.size - polled_uses > (1u << 18)) {
      polled_uses = uses.size;
      ctx.check();
      ctx.report(static_cast<double>(done) / static_cast<double>(n));
    }
    if (!cost(i)) return false;
    first_use[i] = uses.size;
    if (const std::size_t want = uses.size + c.uses.size(); want <= uses.blocks.size() * uses.kBlock)
      uses.size = want;  // (grow_to's work when no block is added)
    else
      uses.grow_to(want);
    const double t0 = r + c.fixed_ns;
    double end = t0;
    double fed_end = t0;  // when the step's transfers have delivered everything
    int fed_by = -1;      // the transfer use that ends last
    const double lead = c.fed_lead_terms ? c.fed_lead_ns() : 0.0;
    bool defer = false;
    for (std::size_t k = 0; k < c.uses.size(); ++k) {
      const auto& u = c.uses[k];
      UseRec& rec = uses[first_use[i] + k];
      rec = UseRec{t0, kNoStep, -1};
      if (u.amount_bytes <= 0) continue;
      if (u.fed_by_transfers && lead > 0) {
        defer = true;
        continue;
      }
      Queue& qu = resources[static_cast<std::size_t>(u.resource)];
      const double d = u.amount_bytes / u.rate_GBps;
      double start = t0;
      StepId holder = kNoStep;
      int holder_use = -1;
      // A unit fed by the transfers works in step with them: it finishes with the
      // last data (or later if it is slower) and leaves the time before free.
      if (u.fed_by_transfers && fed_end - d > start) {
        start = fed_end - d;
        holder = i;
        holder_use = fed_by;
      }
      analytic::reserve(qu, r, start, d, holder, holder_use, i, static_cast<int>(k));
      touched(u.resource, r, i);
      rec = UseRec{start, holder, holder_use};
      const double rec_end = start + d;  // (use_end())
      if (!u.fed_by_transfers && rec_end > fed_end) {
        fed_end = rec_end;
        fed_by = static_cast<int>(k);
      }
      if (rec_end > end) {
        end = rec_end;
        bound_use[i] = static_cast<int>(k);
      }
    }
    res.steps[i].start_ns = r;
    if (defer) {
      double T = std::numeric_limits<double>::infinity();
      for (const auto& u : c.uses)
        if (u.fed_by_transfers && u.amount_bytes > 0)
          T = std::min(T, lead + std::max(t0, fed_end - u.duration_ns()));
      if (waiting.empty()) waiting.resize(n);
      AnalyticWorkspace::Waiting& w = waiting[i];
      w = AnalyticWorkspace::Waiting{};
      w.t0 = t0, w.end = end, w.fed_end = fed_end, w.fed_by = fed_by, w.second = true;
      if (c.fed_paced) {
        w.probe = static_cast<int>(probes.size());
        FedProbe& p = probes.emplace_back();
        for (const auto& u : c.uses) {
          if (!u.fed_by_transfers || u.amount_bytes <= 0) continue;
          if (p.n == FedProbe::kMax) {
            p.n = FedProbe::kNone;
            break;
          }
          const double d = u.duration_ns();
          p.q[p.n] = u.resource, p.d[p.n] = d;
          p.base[p.n++] = std::max(t0, fed_end - d) + lead;
        }
      }
      push(T, i);
      continue;
    }
    const double l = c.latency_total_ns();
    res.steps[i].finish_ns = end + l;
    finished(i);
    if (!release_free()) return false;
  }
  if (done != n) throw Error(fmt::format("schedule {}: dependency cycle", v.name()));

  if (walk) walk_back(v, ws, res);
  return true;
}

}  // namespace scin::analytic
