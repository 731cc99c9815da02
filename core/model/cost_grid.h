// The analytic engine's cost grid (docs/model.md section 3, "exact ties"):
// every fixed cost, latency and use duration the analytic engine books is a
// multiple of cost_grid_ns. The packet engine does not use it (it costs steps
// with step_cost() itself).
#pragma once

#include <cmath>

#include "model/cost_model.h"

namespace scin {

/// The grid, 2^-20 ns (about 1e-6 ns). A sum of multiples of it whose
/// partial sums stay below 2^33 ns (8.6 s) is exact in double precision (53
/// bits span 2^-20 .. 2^33), so the engine's ready and finish times are exact
/// sums of the booked costs: times that are equal in exact arithmetic are
/// equal bit for bit, whatever order they were added in, and the engine's
/// order (ready time, then schedule order) is decided by the schedule at every
/// tie, never by a rounding. Translating a booking by a multiple of the grid
/// is exact too (nvls_alike.cc's periodic jump relies on it).
inline constexpr double cost_grid_ns = 0x1p-20;

/// `ns` rounded to the nearest multiple of cost_grid_ns (halves to even, the
/// default rounding mode); a positive value never becomes 0 (it takes one
/// grid step). Scaling by 2^20 is exact, so this is one rounding: below 2^51
/// grid steps (2^31 ns), adding and taking away 1.5 x 2^52 rounds to an
/// integer as std::nearbyint does (the sum lies where the ulp is 1), without
/// its library call (every cost of every step goes through here).
inline double on_cost_grid_ns(double ns) {
  const double y = ns * 0x1p20;
  const double r = std::fabs(y) < 0x1p51 ? (y + 0x1.8p52) - 0x1.8p52 : std::nearbyint(y);
  const double g = r * cost_grid_ns;
  return g == 0 && ns > 0 ? cost_grid_ns : g;
}

/// A multiple of cost_grid_ns below 2^32 ns in size (so finite): sums of two
/// such stay exact.
inline bool within_cost_grid(double v) {
  const double y = v * 0x1p20;
  return std::fabs(v) < 0x1p32 && y == std::trunc(y);
}

/// Puts `c` on the grid: its fixed cost and each latency term rounded
/// (on_cost_grid_ns), and each use of positive amount restated as its
/// duration on the grid at 1 GB/s (1 byte per ns): amount_bytes becomes
/// on_cost_grid_ns(amount_bytes / rate_GBps) and rate_GBps 1, so every
/// amount / rate the engine divides is that duration exactly. (The analytic
/// engine reads a use's amount only through that ratio and its sign.)
inline void put_on_cost_grid(StepCost& c) {
  c.fixed_ns = on_cost_grid_ns(c.fixed_ns);
  for (double& l : c.latency_ns)
    if (l != 0) l = on_cost_grid_ns(l);  // (most terms of most steps are 0, on the grid already)
  for (ResourceUse& u : c.uses)
    if (u.amount_bytes > 0) {
      u.amount_bytes = on_cost_grid_ns(u.amount_bytes / u.rate_GBps);
      u.rate_GBps = 1;
    }
}

/// What the analytic engine books for a step: step_cost() (cost_model.h, the
/// same arguments and result) put on the grid. Every analytic booking path
/// (run_analytic's book(), the ring by ranks alike, NVLS and SCIN by classes,
/// two-shot without compiling) costs its steps through this function.
inline bool analytic_step_cost(const Config& cfg, const Schedule& s, const ResourceMap& rm, const Step& st, StepCost& out,
                               bool first_plane_only = false, bool port_classes = false) {
  const bool ok = step_cost(cfg, s, rm, st, out, first_plane_only, port_classes);
  put_on_cost_grid(out);
  return ok;
}

}  // namespace scin
