// Options of compile() for callers that need less than the full schedule.
// Kept out of schedule/algorithms.h (included by most of the tree).
#pragma once

#include "schedule/algorithms.h"

namespace scin {

struct CompileOptions {
  /// False: every Step::label is left empty; the steps are otherwise exactly
  /// compile()'s (same order, kinds, nodes, regions, deps). For a caller that
  /// only times the schedule (simulate() on the analytic engine): labels are
  /// read only to show steps (critical path, `scin explain`, timelines, errors).
  bool labels = true;
};

/// compile(cfg, algo, c, ctx) with `opt`.
Schedule compile(const Config& cfg, Algorithm algo, const Collective& c, const RunContext& ctx,
                 const CompileOptions& opt);

}  // namespace scin
