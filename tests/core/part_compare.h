// Comparing a part booked by a shortcut with Part::run() of the same part
// (core/engines/analytic/part_booking.h), shared by test_scin_alike.cc and
// test_scin_jump.cc.
#pragma once

#include <cstddef>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "engines/analytic/part_booking.h"

namespace scin::part_test {

// `fast` (run_waves or run_chains, answered true; a jump may have left steps
// lazy) against run() of the same part, step by step and use for use, read
// through the accessors. `same_first`: the records' offsets too (a jumped
// part's lazy steps have none). Fatal failures return from here: callers test
// HasFatalFailure() or wrap the call in ASSERT_NO_FATAL_FAILURE.
inline void expect_same_part(const part::Part& fast, const part::Part& full, bool same_first = true) {
  const std::size_t m = full.cost.size();
  ASSERT_EQ(fast.finish.size(), m);
  for (std::size_t i = 0; i < m; ++i) {
    SCOPED_TRACE(fmt::format("step {} of {}", i, m));
    ASSERT_EQ(part::step_start(fast, i), full.start[i]);
    ASSERT_EQ(part::step_finish(fast, i), full.finish[i]);
    ASSERT_EQ(part::step_bound(fast, i), full.bound[i]);
    if (same_first) {
      ASSERT_EQ(fast.first[i], full.first[i]);
    }
    for (std::size_t u = 0; u < full.cost[i]->n; ++u) {
      const part::Rec a = part::step_rec(fast, i, u);
      const part::Rec& b = full.recs[full.first[i] + u];
      ASSERT_EQ(a.start, b.start);
      ASSERT_EQ(a.end, b.end);
      ASSERT_EQ(a.holder, b.holder);
      ASSERT_EQ(a.holder_use, b.holder_use);
    }
  }
  ASSERT_EQ(fast.latest, full.latest);
  ASSERT_EQ(fast.latest_at, full.latest_at);
  ASSERT_EQ(fast.latest_rec_end, full.latest_rec_end);
}

}  // namespace scin::part_test
