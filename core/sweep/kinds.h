// What each point kind contributes to a sweep (internal to core/sweep): the
// settings it adds to a spec (`input.*` for quant, `inference.*` for
// inference), how it checks them, what a spec of that kind must give, and how
// one resolved point is evaluated. The store side of a kind (its table and
// columns) is store/point_kinds.h. A new kind adds one kind_*.cc file here.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/run_context.h"
#include "engines/engine.h"
#include "sweep/sweep.h"

namespace scin::sweep_detail {

struct KindOps {
  PointKind kind;
  std::string group;                   // settings "GROUP.KEY" ("" = none)
  std::vector<std::string> keys;       // allowed KEYs
  bool needs_algorithm = true;         // base.collective.algorithm or an axis
  bool needs_bytes = true;             // base.collective.bytes or an axis
  std::uint64_t default_bytes = 0;     // collective.bytes when not given
  /// Checks GROUP.KEY = v; returns it canonical. Throws Error naming `field`.
  nlohmann::json (*check_setting)(const std::string& key, const nlohmann::json& v, const std::string& field) = nullptr;
  bool (*integer_setting)(const std::string& key) = nullptr;
  /// Fills the result fields of `p` (status Skipped with the reason when the
  /// model does not support the point). Throws Error / Cancelled.
  /// `ctx` carries the stop request down to the engine.
  void (*evaluate)(PointRecord& p, const ResolvedPoint& r, const RunContext& ctx) = nullptr;
  /// What evaluate() will cost, estimated without running it (engines/simulate.h
  /// estimate()); nullptr: the kind has no estimate. Throws Error as estimate() does.
  WorkEstimate (*work)(const ResolvedPoint& r) = nullptr;
};

/// The sweepable kinds; Error for a kind that is not (measured points are imported).
const KindOps& kind_ops(PointKind k);
/// The kind whose settings group `path` belongs to ("input.seed" -> quant), or nullptr.
const KindOps* kind_of_setting(const std::string& path);

/// Registration (one per kind_*.cc).
const KindOps& timing_kind();
const KindOps& quant_kind();
const KindOps& inference_kind();

/// Marks `p` skipped if the fabric cannot run `r.algorithm`; returns true then.
bool skip_unsupported(PointRecord& p, const ResolvedPoint& r);

}  // namespace scin::sweep_detail
