// The analytic engine's ready queue (book() in analytic.cc): steps ordered by
// (ready time, step index), the smallest first.
//
// A binary min-heap over the workspace's vector of (time, index) pairs, as
// std::push_heap / std::pop_heap with std::greater kept it, but with a
// comparison that compiles to flag arithmetic instead of branches (the
// comparison of std::pair goes through operator<=> and a partial ordering,
// and its branches mispredict on random times: the heap was 9-13% of a point
// at 8 GPUs, docs/performance.md section 24). Every key is distinct (a step
// is pushed once) and no time is NaN (a ready time is the max of +0.0 and
// finish times, and max() keeps its first argument against a NaN), so the
// order is total and the sequence of pops is the same as std::pop_heap's,
// whatever the heap's inner layout.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

#include "schedule/schedule.h"

namespace scin::ready_queue {

using Item = std::pair<double, StepId>;

/// (a.first, a.second) < (b.first, b.second), without branches.
inline bool before(const Item& a, const Item& b) {
  return static_cast<bool>(static_cast<int>(a.first < b.first) |
                           (static_cast<int>(a.first == b.first) & static_cast<int>(a.second < b.second)));
}

/// Places `x` at the hole `k`, moving it up past larger parents.
inline void sift_up(std::vector<Item>& h, std::size_t k, const Item& x) {
  while (k > 0) {
    const std::size_t p = (k - 1) / 2;
    if (!before(x, h[p])) break;
    h[k] = h[p];
    k = p;
  }
  h[k] = x;
}

inline void push(std::vector<Item>& h, double t, StepId i) {
  const Item x{t, i};
  h.push_back(x);
  sift_up(h, h.size() - 1, x);
}

/// Removes and returns the smallest item (`h` not empty). Bottom-up: the hole
/// left at the root goes down to a leaf along the smaller children, and the
/// last item is placed there and moved up (as std::pop_heap does).
inline Item pop(std::vector<Item>& h) {
  const Item top = h.front();
  const Item x = h.back();
  h.pop_back();
  const std::size_t n = h.size();
  if (n == 0) return top;
  std::size_t k = 0;
  for (std::size_t c = 1; c < n; c = 2 * k + 1) {
    if (c + 1 < n) c += static_cast<std::size_t>(before(h[c + 1], h[c]));
    h[k] = h[c];
    k = c;
  }
  sift_up(h, k, x);
  return top;
}

}  // namespace scin::ready_queue
