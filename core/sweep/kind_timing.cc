// Point kind "collective": the timing of one All-Reduce (simulate()).
#include <fmt/format.h>

#include "base/error.h"
#include "engines/simulate.h"
#include "sweep/kinds.h"

namespace scin::sweep_detail {

namespace {
void evaluate_timing(PointRecord& p, const ResolvedPoint& r, const RunContext& ctx) {
  if (skip_unsupported(p, r)) return;
  SimResult s = simulate(r.config, r.algorithm, r.collective, r.engine, ctx);
  p.variant = s.variant;
  p.time_us = s.time_us();
  p.algbw_GBps = s.algbw_GBps;
  p.busbw_GBps = s.busbw_GBps;
  p.max_link_bytes = s.max_link_bytes;
  p.breakdown = s.breakdown;
  if (!s.extra.is_null()) p.extra = s.extra;
}
WorkEstimate timing_work(const ResolvedPoint& r) {
  return estimate(r.config, parse_algorithm(r.algorithm), r.collective, parse_engine(r.engine));
}
}  // namespace

const KindOps& timing_kind() {
  static const KindOps k = [] {
    KindOps o;
    o.kind = PointKind::Collective;
    o.evaluate = evaluate_timing;
    o.work = timing_work;
    return o;
  }();
  return k;
}

bool skip_unsupported(PointRecord& p, const ResolvedPoint& r) {
  if (auto why = unsupported_reason(r.config, r.algorithm); !why.empty()) {
    p.status = PointStatus::Skipped;
    p.message = why;
    return true;
  }
  return false;
}

const KindOps& kind_ops(PointKind k) {
  for (const KindOps* o : {&timing_kind(), &quant_kind(), &inference_kind()})
    if (o->kind == k) return *o;
  throw Error(fmt::format("kind: '{}' points are imported, not swept; allowed collective, quant, inference",
                          to_string(k)));
}

const KindOps* kind_of_setting(const std::string& path) {
  for (const KindOps* o : {&quant_kind(), &inference_kind()})
    if (!o->group.empty() && path.rfind(o->group + ".", 0) == 0) return o;
  return nullptr;
}

}  // namespace scin::sweep_detail

namespace scin {

WorkEstimate point_work(PointKind kind, const ResolvedPoint& r) {
  const sweep_detail::KindOps& k = sweep_detail::kind_ops(kind);
  return k.work ? k.work(r) : WorkEstimate{};
}

}  // namespace scin
