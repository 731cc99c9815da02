// Two analytic results of the same schedule booked two ways (a shortcut of the
// engine against the full booking): the same to the last bit. Shared by the
// tests of ranks alike, ports alike, NVLS and SCIN by classes.
#pragma once

#include <cstddef>

#include <gtest/gtest.h>

#include "engines/analytic/analytic.h"

/// Time, every breakdown term, the critical path, max_link_bytes and the start
/// and finish of the first `steps` steps (both results must list them).
inline void expect_same_booking(const scin::AnalyticResult& a, const scin::AnalyticResult& b, std::size_t steps) {
  EXPECT_EQ(a.time_ns, b.time_ns);
  for (int t = 0; t < scin::kTermCount; ++t) EXPECT_EQ(a.breakdown.ns[t], b.breakdown.ns[t]) << "term " << t;
  EXPECT_EQ(a.critical_path, b.critical_path);
  EXPECT_EQ(a.max_link_bytes, b.max_link_bytes);
  ASSERT_GE(a.steps.size(), steps);
  ASSERT_GE(b.steps.size(), steps);
  std::size_t differ = 0;
  for (std::size_t i = 0; i < steps; ++i)
    differ += a.steps[i].start_ns != b.steps[i].start_ns || a.steps[i].finish_ns != b.steps[i].finish_ns;
  EXPECT_EQ(differ, 0u);
}
