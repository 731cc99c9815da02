#include "engines/analytic/analytic.h"

#include <algorithm>
#include <span>
#include <fmt/format.h>

#include "base/error.h"
#include "engines/analytic/book.h"
#include "engines/analytic/joins.h"
#include "engines/analytic/planes.h"
#include "model/cost_grid.h"

namespace scin {

// ------------------------------------------------------------ the engine

// Every switch plane alike: planes.h (analytic_detail).
using analytic_detail::fabric_has_planes_alike;
using analytic_detail::step_planes_alike;

bool planes_alike(const Schedule& s) {
  if (!fabric_has_planes_alike(s)) return false;
  for (const Step& st : s.steps)
    if (!step_planes_alike(s, st)) return false;
  return true;
}

// Ranks alike (the ring): ring_alike.cc.

AnalyticResult run_analytic(const Config& cfg, const Schedule& s, const RunContext& ctx) {
  AnalyticWorkspace ws;
  return run_analytic(cfg, s, ctx, ws);
}

namespace {

// A compiled schedule as book()'s view (book.h). With `port_classes`
// (ports_alike() passed) each step's ports are costed by class (step_cost's
// port_classes); book() returns false as soon as a step fails that condition
// (`res` is then incomplete and the caller books again without it).
// The shared long dep lists go through joins after the steps (joins.h).
struct ScheduleView {
  const Config& cfg;
  const Schedule& s;
  const ResourceMap& rm;
  const analytic::Joins& joins;
  bool one_plane, port_classes;
  std::size_t size() const { return s.steps.size() + joins.lists.size(); }
  std::span<const StepId> deps(std::size_t i) const {
    const std::size_t n = s.steps.size();
    const DepList& d = i < n ? s.steps[i].deps : *joins.lists[i - n];
    if (i < n && !joins.join_of.empty())
      if (const int j = joins.join_of[i]; j >= 0) return {&joins.id[static_cast<std::size_t>(j)], 1};
    return {d.data(), d.size()};
  }
  StepKind kind(std::size_t i) const { return i < s.steps.size() ? s.steps[i].kind : StepKind::Launch; }
  bool cost(StepId i, StepCost& c) const {
    if (i >= s.steps.size()) {
      analytic::no_resource_cost(c, 0.0);
      return true;
    }
    return analytic_step_cost(cfg, s, rm, s.steps[i], c, one_plane, port_classes);
  }
  int resources() const { return rm.count(); }
  const std::string& name() const { return s.algorithm; }
};

bool book(const Config& cfg, const Schedule& s, const ResourceMap& rm, const analytic::Joins& joins,
          const RunContext& ctx, AnalyticWorkspace& ws, bool one_plane, bool port_classes, AnalyticResult& res) {
  ScheduleView v{cfg, s, rm, joins, one_plane, port_classes};
  if (!analytic::book(v, ctx, ws, res)) return false;
  // (The joins: out of the timings and the path.)
  res.steps.resize(s.steps.size());
  std::erase_if(res.critical_path, [&](StepId i) { return i >= s.steps.size(); });
  return true;
}

// link_bytes(s).max_link_bytes() of a schedule booked by port classes, in
// O(steps): every transfer is an ISA read taking the same bytes from every
// accelerator (its egress) or an ISA multicast to every accelerator (its
// ingress), as the booking checked, so every accelerator's egress (ingress)
// adds the same amounts in the same order of steps as link_bytes() adds them.
// Nothing if a read delivers to an accelerator (link_bytes() counts that
// accelerator's ingress alone).
std::optional<double> class_max_link_bytes(const Schedule& s) {
  if (s.topology != Topology::Star) return std::nullopt;  // (two tiers: trunks too)
  double egress = 0, ingress = 0;
  for (const Step& st : s.steps) {
    if (st.via == kNoNode) continue;
    if (st.kind == StepKind::Write) {
      ingress += static_cast<double>(region_bytes(s, st.srcs[0]));
    } else if (st.kind == StepKind::Read) {
      if (!s.is_switch(s.buffers[st.dsts[0].buffer].node)) return std::nullopt;
      egress += static_cast<double>(region_bytes(s, st.srcs[0]));
    }
  }
  return std::max({0.0, egress, ingress});
}

// ports_alike(s) without its planes_alike(s) test (the caller knows it is false).
bool ports_alike_unless_planes(const Schedule& s) {
  if ((s.topology != Topology::Star && !s.two_tier()) || s.gpus < 2) return false;
  // Ports are used by class only by transfers a switch issues (step_cost's
  // port_classes); one an accelerator issues across a plane fails at once.
  bool any = false;
  for (const Step& st : s.steps) {
    if (st.kind != StepKind::Write && st.kind != StepKind::Read) continue;
    if (st.via == kNoNode) continue;  // local (HBM)
    if (!s.is_switch(st.initiator)) return false;
    any = true;
  }
  return any;
}
}  // namespace

bool ports_alike(const Schedule& s) {
  if ((s.topology != Topology::Star && !s.two_tier()) || s.gpus < 2 || planes_alike(s)) return false;
  return ports_alike_unless_planes(s);
}

namespace {
AnalyticResult run_booked(const Config& cfg, const Schedule& s, const RunContext& ctx, AnalyticWorkspace& ws,
                          bool with_joins, bool with_link_bytes = true) {
  const ResourceMap rm = resource_map(s);
  AnalyticResult res;
  const bool one_plane = planes_alike(s);  // (one pass over the steps, for both tests)
  const analytic::Joins joins = with_joins ? analytic::find_joins(s, 0, s.steps.size(), s.steps.size()) : analytic::Joins{};
  const bool by_class =
      !one_plane && ports_alike_unless_planes(s) && book(cfg, s, rm, joins, ctx, ws, false, true, res);
  if (!by_class) book(cfg, s, rm, joins, ctx, ws, one_plane, false, res);
  if (s.steps.empty() || !with_link_bytes) return res;
  std::optional<double> m;
  if (by_class) m = class_max_link_bytes(s);
  res.max_link_bytes = m ? *m : link_bytes(s).max_link_bytes();
  return res;
}
}  // namespace

AnalyticResult run_analytic(const Config& cfg, const Schedule& s, const RunContext& ctx, AnalyticWorkspace& ws) {
  return run_booked(cfg, s, ctx, ws, true);
}

AnalyticResult run_analytic_without_link_bytes(const Config& cfg, const Schedule& s, const RunContext& ctx) {
  AnalyticWorkspace ws;
  return run_booked(cfg, s, ctx, ws, true, false);
}

AnalyticResult run_analytic_unjoined(const Config& cfg, const Schedule& s) {
  AnalyticWorkspace ws;
  return run_booked(cfg, s, {}, ws, false);
}

}  // namespace scin
