// Long dep lists that several steps share, booked through one join each
// (analytic.cc's run_analytic, scin_inq_planes.cc). Internal to the analytic
// engine.
//
// A join is a step after the view's own, with no resource and no cost,
// waiting for the shared list: it finishes when the last of those deps does
// (ready + 0 + 0: that finish exactly), and each step that shared the list
// depends on the join alone. Its steps keep their ready times, nothing is
// taken in another order (a join books nothing, so it never enters the ready
// queue), and the walk goes through the join to the same first latest dep,
// adding 0 to every term; the join is left out of the critical path. A join
// never is the first of the latest to finish: it finishes with one of its
// deps, which comes first. What it saves: an NVLS barrier's n waits on n
// arrives (n^2 dep edges), SCIN's write acks on every wave's multicast.
#pragma once

#include <algorithm>
#include <cstddef>
#include <iterator>
#include <vector>

#include "model/cost_model.h"
#include "schedule/schedule.h"

namespace scin::analytic {

struct Joins {
  std::vector<int> join_of;           // per step of the range: its join (-1: its own deps)
  std::vector<const DepList*> lists;  // per join: the deps it waits for
  std::vector<StepId> id;             // per join: its id in the view's deps (base + j)
};

/// Joins for the long lists (16 deps or more) that two or more steps of
/// s.steps[start, start + count) share in a row (steps with short lists
/// between them); join j gets id base + j.
inline Joins find_joins(const Schedule& s, std::size_t start, std::size_t count, std::size_t base) {
  constexpr std::size_t kLong = 16;
  Joins J;
  const DepList* prev = nullptr;  // the last long list
  std::size_t prev_at = 0;
  for (std::size_t i = 0; i < count; ++i) {
    const DepList& d = s.steps[start + i].deps;
    if (d.size() < kLong) continue;
    if (prev && std::equal(d.begin(), d.end(), prev->begin(), prev->end())) {
      if (J.join_of.empty()) J.join_of.assign(count, -1);
      if (J.join_of[prev_at] < 0) {
        J.join_of[prev_at] = static_cast<int>(J.lists.size());
        J.id.push_back(static_cast<StepId>(base + J.lists.size()));
        J.lists.push_back(prev);
      }
      J.join_of[i] = J.join_of[prev_at];
    }
    prev = &d;
    prev_at = i;
  }
  return J;
}

/// A step with no resource that finishes `finish` after it is ready (a
/// join: 0; a stand-in for a step booked elsewhere, ready at 0: its finish).
inline void no_resource_cost(StepCost& c, double finish) {
  c.uses.clear();
  c.fixed_ns = finish;
  c.fixed_term = Term::Sync;
  std::fill(std::begin(c.latency_ns), std::end(c.latency_ns), 0.0);
}

}  // namespace scin::analytic
