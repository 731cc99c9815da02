// book() (analytic.cc) over a part of a schedule whose resources no other
// step uses (scin_alike.cc). Internal to the analytic engine.
//
// Steps are taken in order of (ready time, index) and every dep has a smaller
// key than its step (costs >= 0, deps have smaller indices), so the engine
// takes steps in the order of their keys whatever else is queued; the steps
// of a part, restricted to their own queues, are then booked as the whole
// schedule's booking books them: the same reservations, ends and holders.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

#include "base/run_context.h"
#include "engines/analytic/ready_queue.h"
#include "engines/analytic/reserve.h"
#include "model/cost_model.h"

namespace scin::part {

/// A use's record as book() keeps it; holder: a local step (-1: none).
struct Rec {
  double start = 0, end = 0;
  int holder = -1, holder_use = -1;
};

/// A step's cost, with each use's resource as a local queue.
struct Cost {
  StepCost c;
  std::array<int, 4> q{};  // queue of use k (at most 4 uses)
  double l = 0;            // c.latency_total_ns(), summed as book() sums it
};

/// Local steps 0..m-1 in the order of their schedule indices. `ready` starts
/// at the latest finish of each step's deps outside the part; its deps inside
/// are counted in `pending` and released by the caller's `next(i, finish)`
/// through release().
struct Part {
  std::vector<const Cost*> cost;
  std::vector<double> ready, start, finish;
  std::vector<int> pending;
  std::vector<std::uint32_t> first;  // step i's records from first[i]
  std::vector<std::int8_t> bound;    // the use that ended last (-1: none)
  std::vector<Rec> recs;

  void resize(std::size_t m) {
    cost.assign(m, nullptr);
    ready.assign(m, 0.0);
    pending.assign(m, 0);
  }
  void release(std::size_t j, double f) {
    ready[j] = std::max(ready[j], f);
    if (--pending[j] == 0) ready_queue::push(heap_, ready[j], static_cast<StepId>(j));
  }

  template <class Next>
  void run(int queues, Next next, const RunContext& ctx) {
    auto& qs = qs_;
    qs.resize(static_cast<std::size_t>(queues));
    for (Queue& qu : qs) {
      qu.v.clear();
      qu.head = 0;
    }
    const std::size_t m = cost.size();
    start.assign(m, 0.0);
    finish.assign(m, 0.0);
    bound.assign(m, -1);
    // Records by step index (book() appends them in the order taken; only
    // where they are differs, not what they hold).
    first.resize(m);
    std::size_t all = 0;
    for (std::size_t i = 0; i < m; ++i) {
      first[i] = static_cast<std::uint32_t>(all);
      all += cost[i]->c.uses.size();
    }
    recs.resize(all);
    heap_.clear();
    for (std::size_t i = 0; i < m; ++i)
      if (pending[i] == 0) ready_queue::push(heap_, ready[i], static_cast<StepId>(i));
    std::size_t taken = 0;
    while (!heap_.empty()) {
      const auto [r, id] = ready_queue::pop(heap_);
      const auto i = static_cast<std::size_t>(id);
      if ((++taken & 0x3ff) == 0) ctx.check();
      const Cost& k = *cost[i];
      const StepCost& c = k.c;
      const double t0 = r + c.fixed_ns;
      double end = t0, fed_end = t0;
      int fed_by = -1;
      for (std::size_t u = 0; u < c.uses.size(); ++u) {
        const ResourceUse& us = c.uses[u];
        Rec& rec = recs[first[i] + u];
        rec = Rec{t0, t0, -1, -1};
        if (us.amount_bytes <= 0) continue;
        Queue& qu = qs[static_cast<std::size_t>(k.q[u])];
        const double d = us.amount_bytes / us.rate_GBps;
        double st = t0;
        int holder = -1, holder_use = -1;
        if (us.fed_by_transfers && fed_end - d > st) {
          st = fed_end - d;
          holder = static_cast<int>(i);
          holder_use = fed_by;
        }
        analytic::reserve(qu, r, st, d, holder, holder_use, static_cast<int>(i), static_cast<int>(u));
        rec = Rec{st, st + d, holder, holder_use};
        if (!us.fed_by_transfers && rec.end > fed_end) {
          fed_end = rec.end;
          fed_by = static_cast<int>(u);
        }
        if (rec.end > end) {
          end = rec.end;
          bound[i] = static_cast<std::int8_t>(u);
        }
      }
      start[i] = r;
      finish[i] = end + k.l;
      next(i, finish[i]);
    }
  }

 private:
  struct Busy {
    double start, end;
    int step, use;
  };
  struct Queue {
    std::vector<Busy> v;
    std::size_t head = 0;
  };
  std::vector<Queue> qs_;  // (kept with the heap for the next run)
  std::vector<ready_queue::Item> heap_;
};

}  // namespace scin::part
