// NVLS on two tiers from its form (nvls_tiers.h).
#include "engines/analytic/nvls_tiers.h"

#include <algorithm>
#include <span>

#include "engines/analytic/book.h"
#include "engines/analytic/joins.h"
#include "engines/analytic/planes.h"
#include "model/cost_grid.h"
#include "schedule/builder.h"

namespace scin {

namespace {

using Form = build::NvlsTiersForm;

bool answers(const Config& cfg) {
  return cfg.fabric.topology == Topology::TwoTier && cfg.fabric.graph_file.empty() &&
         unsupported_reason(cfg, Algorithm::Nvls).empty();
}

// The form's steps as book()'s view (book.h), then the two barriers' joins
// (ids size() and size() + 1: Launch steps of no cost depending on the
// barrier's arrives; its waits depend on the join alone). Costs as
// run_analytic's ScheduleView gives them (planes alike: plane 0's uses).
// While `counting`, each transfer costed adds its bytes to `lb` (book() costs
// a transfer once, when it is taken; the walk costs again with counting off).
struct FormView {
  const Config& cfg;
  const Schedule& s;  // the form's buffers, no steps
  const ResourceMap& rm;
  const Form& f;
  bool one_plane;
  std::vector<StepId> arrives[2];
  StepId join_id[2];
  mutable std::vector<StepId> dep_buf;
  Step st;  // the step last costed
  bool counting = true;
  LinkBytes lb;

  std::size_t size() const { return f.size() + 2; }
  std::span<const StepId> deps(std::size_t i) const {
    if (i >= f.size()) {
      const auto& a = arrives[i - f.size()];
      return {a.data(), a.size()};
    }
    const Form::Id id = f.decode(static_cast<StepId>(i));
    if (id.part == Form::Part::Wait) return {&join_id[id.barrier], 1};
    f.deps(static_cast<StepId>(i), dep_buf);
    return {dep_buf.data(), dep_buf.size()};
  }
  StepKind kind(std::size_t i) const {
    if (i >= f.size()) return StepKind::Launch;
    switch (f.decode(static_cast<StepId>(i)).part) {
      case Form::Part::Launch: return StepKind::Launch;
      case Form::Part::Arrive: return StepKind::Signal;
      case Form::Part::Wait: return StepKind::Wait;
      case Form::Part::Leaf:
      case Form::Part::Spine: return StepKind::Read;
      case Form::Part::Store: return StepKind::Write;
    }
    return StepKind::Launch;
  }
  bool cost(StepId i, StepCost& c) {
    if (i >= f.size()) {
      analytic::no_resource_cost(c, 0.0);
      return true;
    }
    f.fill(s, i, st);
    // (Every step of the form crosses kAllPlanes from an accelerator, or is a
    // launch, signal or wait: planes alike whenever the fabric has them.)
    if (one_plane && !analytic_detail::step_planes_alike(s, st)) return false;
    if (counting && (st.kind == StepKind::Read || st.kind == StepKind::Write)) add_link_bytes(s, st, 1.0, lb);
    return analytic_step_cost(cfg, s, rm, st, c, one_plane, false);
  }
  int resources() const { return rm.count(); }
  const std::string& name() const { return s.algorithm; }
};

}  // namespace

std::size_t nvls_tiers_steps(const Config& cfg, const Collective& c) {
  if (!answers(cfg)) return 0;
  const build::NvlsTiersCounts k = build::nvls_tiers_counts(c.bytes, cfg.fabric.gpus, cfg.fabric.leaves);
  return k.steps + 2;
}

std::optional<AnalyticResult> run_analytic_nvls_tiers(const Config& cfg, const Collective& coll, const RunContext& ctx) {
  if (!answers(cfg)) return std::nullopt;
  build::Builder b(cfg, info(Algorithm::Nvls).name, coll);
  b.labels = false;
  const Form f = build::nvls_tiers_form(b);
  const Schedule& s = b.s;
  const ResourceMap rm = resource_map(s);
  FormView v{cfg, s, rm, f, analytic_detail::fabric_has_planes_alike(s), {}, {}, {}, {}, true, {}};
  const auto total = static_cast<StepId>(f.size());
  for (int bar = 0; bar < 2; ++bar) {
    for (int r = 0; r < f.n; ++r) v.arrives[bar].push_back(f.arrive_id(bar, r));
    v.join_id[bar] = total + static_cast<StepId>(bar);
  }
  v.lb.egress_bytes.assign(static_cast<std::size_t>(s.gpus), 0.0);
  v.lb.ingress_bytes.assign(static_cast<std::size_t>(s.gpus), 0.0);
  // The engine's working memory, per thread; a large point's is released.
  thread_local AnalyticWorkspace ws;
  struct Release {
    ~Release() {
      if (ws.uses.size > (std::size_t{1} << 16)) ws = AnalyticWorkspace{};
    }
  } release;
  AnalyticResult res;
  if (!analytic::book(v, ctx, ws, res, false)) return std::nullopt;
  v.counting = false;
  analytic::walk_back(v, ws, res);
  // (The joins: out of the timings and the path.)
  res.steps.resize(f.size());
  std::erase_if(res.critical_path, [&](StepId i) { return i >= total; });
  res.max_link_bytes = v.lb.max_link_bytes();
  return res;
}

}  // namespace scin
