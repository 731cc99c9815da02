#include "analysis/combine.h"
#include "base/text.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "base/error.h"

namespace scin::analysis {
namespace {

int index_of(const std::vector<Column>& cols, const std::string& key) {
  for (std::size_t i = 0; i < cols.size(); ++i)
    if (cols[i].key == key) return static_cast<int>(i);
  return -1;
}

void add_column(std::vector<Column>& cols, const Column& c) {
  const int i = index_of(cols, c.key);
  if (i < 0)
    cols.push_back(c);
  else
    cols[static_cast<std::size_t>(i)].log_default |= c.log_default;
}

}  // namespace

AnalysisTable combine_tables(const std::vector<AnalysisTable>& tables) {
  if (tables.empty()) return {};
  if (tables.size() == 1) return tables.front();
  const AnalysisTable& first = tables.front();
  for (const AnalysisTable& t : tables)
    if (t.kind != first.kind)
      throw Error(fmt::format("runs: #{} is {} run and #{} {} run; only runs of one kind plot together",
                              first.run.id, with_article(first.run.kind), t.run.id, with_article(t.run.kind)));
  AnalysisTable out;
  out.kind = first.kind;
  out.run = first.run;
  std::vector<std::string> names;
  for (const AnalysisTable& t : tables) names.push_back(fmt::format("#{} {}", t.run.id, t.run.name));

  Column run;
  run.key = kRunAxis;
  run.label = "Run";
  run.short_name = "run";
  run.numeric = false;
  run.description = "the stored run the point belongs to";
  // Algorithm first, then the run, then every other axis in first-seen order.
  for (const AnalysisTable& t : tables)
    if (const int a = t.axis_index("collective.algorithm"); a >= 0 && out.axes.empty())
      out.axes.push_back(t.axes[static_cast<std::size_t>(a)]);
  out.axes.push_back(run);
  for (const AnalysisTable& t : tables)
    for (const Column& c : t.axes) add_column(out.axes, c);
  for (const AnalysisTable& t : tables)
    for (const Column& c : t.metrics) add_column(out.metrics, c);

  std::set<std::string> reasons;
  for (std::size_t k = 0; k < tables.size(); ++k) {
    const AnalysisTable& t = tables[k];
    std::vector<int> axis_from(out.axes.size()), metric_from(out.metrics.size());
    for (std::size_t a = 0; a < out.axes.size(); ++a) axis_from[a] = t.axis_index(out.axes[a].key);
    for (std::size_t m = 0; m < out.metrics.size(); ++m) metric_from[m] = t.metric_index(out.metrics[m].key);
    for (const Row& r : t.rows) {
      Row o;
      o.point_index = r.point_index;
      for (std::size_t a = 0; a < out.axes.size(); ++a) {
        if (out.axes[a].key == kRunAxis)
          o.axes.push_back(AxisValue{names[k], kNaN});
        else if (axis_from[a] >= 0)
          o.axes.push_back(r.axes[static_cast<std::size_t>(axis_from[a])]);
        else
          o.axes.push_back(AxisValue{"–", kNaN});
      }
      for (std::size_t m = 0; m < out.metrics.size(); ++m)
        o.metrics.push_back(metric_from[m] >= 0 ? r.metrics[static_cast<std::size_t>(metric_from[m])] : kNaN);
      out.rows.push_back(std::move(o));
    }
    out.skipped += t.skipped;
    for (const auto& why : t.skip_reasons)
      if (out.skip_reasons.size() < 5 && reasons.insert(why).second) out.skip_reasons.push_back(why);
    if (k > 0) {
      out.run.name += fmt::format(" + #{} {}", t.run.id, t.run.name);
      out.run.points_total += t.run.points_total;
      out.run.points_stored += t.run.points_stored;
      out.run.points_skipped += t.run.points_skipped;
      for (const auto& a : t.run.algorithms)
        if (std::find(out.run.algorithms.begin(), out.run.algorithms.end(), a) == out.run.algorithms.end())
          out.run.algorithms.push_back(a);
    }
  }
  // An axis stays numeric only if every run's values are numbers.
  for (std::size_t a = 0; a < out.axes.size(); ++a)
    if (out.axes[a].numeric)
      out.axes[a].numeric = std::all_of(out.rows.begin(), out.rows.end(),
                                        [a](const Row& r) { return std::isfinite(r.axes[a].number); });
  out.index_values();
  return out;
}

}  // namespace scin::analysis
