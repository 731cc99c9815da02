// The analytic engine: critical path of a schedule with alpha-beta costs and
// link occupancy, plus a per-term breakdown that explains the number.
//
// Each step occupies the resources it uses (accelerator link ports per plane
// and direction, switch reduction / INQ units, accelerator HBM) for
// amount / rate, once its deps have finished and the resources are free.
// Latency (wire, switch traversal, memory access) is added after the
// occupancy and does not hold resources, so chunks pipeline. What a step costs
// comes from the shared cost model (model/cost_model.h).
#pragma once

#include <vector>

#include "base/run_context.h"
#include "fabric/config.h"
#include "model/cost_model.h"
#include "model/result.h"
#include "schedule/schedule.h"

namespace scin {

struct AnalyticResult {
  double time_ns = 0;
  Breakdown breakdown;               // sums to time_ns along the critical path
  std::vector<StepTiming> steps;     // per step
  std::vector<StepId> critical_path; // first to last
  double max_link_bytes = 0;         // busiest accelerator link direction
};

/// Runs `s` on `cfg`; polls ctx.stop between steps (throws Cancelled).
AnalyticResult run_analytic(const Config& cfg, const Schedule& s, const RunContext& ctx = {});

}  // namespace scin
