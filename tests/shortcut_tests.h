// For the tests of the analytic engine's shortcuts (ranks alike, ports alike,
// NVLS and SCIN by classes): the fabrics they run on, and the comparison of a
// shortcut's result with the full booking.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include <gtest/gtest.h>

#include "engines/analytic/analytic.h"
#include "engines/simulate.h"
#include "fabric/params.h"
#include "fabric/preset.h"
#include "schedule/algorithms.h"

/// A one-switch star of `gpus` accelerators (switch ports raised to fit them).
inline scin::Config star_of(const char* preset, int gpus) {
  scin::Config c = scin::load_preset(preset);
  scin::set_param(c, "fabric.gpus", gpus);
  scin::set_param(c, "switch.ports", std::max(64, gpus));
  scin::validate(c);
  return c;
}

/// Two analytic results of the same schedule booked two ways: the same to the last bit.

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

/// simulate() of (c, a, bytes in BF16) on the analytic engine, whatever path it
/// takes, gives what booking the compiled schedule gives (and its variant).
inline void expect_simulate_books_as_compiled(const scin::Config& c, scin::Algorithm a, std::uint64_t bytes) {
  const scin::Collective coll{bytes, scin::DType::Bf16};
  const scin::SimResult r = scin::simulate(c, a, coll, scin::EngineId::Analytic);
  const scin::Schedule s = scin::compile(c, a, coll);
  const scin::AnalyticResult full = scin::run_analytic(c, s);
  EXPECT_EQ(r.time_ns, full.time_ns) << bytes;
  for (int t = 0; t < scin::kTermCount; ++t) EXPECT_EQ(r.breakdown.ns[t], full.breakdown.ns[t]) << "term " << t;
  EXPECT_EQ(r.max_link_bytes, full.max_link_bytes);
  EXPECT_EQ(r.variant, s.variant);
}
