// Several stored runs as one analysis table, so a plot compares them: the
// run becomes an axis column ("run", values "#3 name") that splits series
// like any other axis, and the legend names the differing run.
#pragma once

#include <vector>

#include "analysis/table.h"

namespace scin::analysis {

/// The key of the run axis a combined table adds.
inline constexpr const char* kRunAxis = "run";

/// One table holding the rows of every table in `tables`, which must be of one
/// point kind (Error otherwise): the union of their axis and metric columns
/// (a column a run lacks reads "–" / NaN there), plus the axis `run` right
/// after the algorithm. The summary is the first run's, named after all of
/// them ("a + #5 b"). One table is returned unchanged.
AnalysisTable combine_tables(const std::vector<AnalysisTable>& tables);

}  // namespace scin::analysis
