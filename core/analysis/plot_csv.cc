// CSV exports of an analysis table and of a plot's points (core/analysis/plot.h).
#include <sstream>

#include <fmt/format.h>

#include "analysis/plot.h"
#include "base/csv.h"

namespace scin::analysis {

std::string plot_csv(const AnalysisTable& t, const PlotData& p) {
  std::ostringstream out;
  out << "# SCIN Explorer chart data (RFC 4180 CSV after these comment lines)\n";
  for (const auto& [k, v] : t.run.lines()) out << "# " << k << ": " << v << "\n";
  out << "# x: " << p.x.key << (p.x.unit.empty() ? "" : " (" + p.x.unit + ")") << "\n";
  out << "# y: " << p.y.key << (p.y.unit.empty() ? "" : " (" + p.y.unit + ")") << "\n";
  for (const auto& n : p.notes) out << "# note: " << n << "\n";
  if (p.empty()) {
    out << "# empty: " << p.empty_reason << "\n";
    return out.str();
  }
  std::vector<std::string> fields_header;
  const Series* first = p.facets.front().series.empty() ? nullptr : &p.facets.front().series.front();
  std::vector<std::string> head{"point_index"};
  if (!p.facets.front().value.empty()) head.push_back("facet");
  for (const auto& k : p.facet_riders) head.push_back(k);
  head.push_back("series");
  if (first)
    for (const auto& f : first->fields) head.push_back(f.first);
  head.push_back(p.x.key);
  head.push_back(p.y.key);
  out << csv_record(head) << "\n";
  const int xi = t.axis_index(p.x.key);
  for (const Facet& f : p.facets)
    for (const Series& s : f.series)
      for (const SeriesPoint& pt : s.points) {
        std::vector<std::string> rec{std::to_string(t.rows[pt.row].point_index)};
        if (!f.value.empty()) rec.push_back(f.value);
        for (const auto& rv : f.riders) rec.push_back(rv.second);
        rec.push_back(s.label);
        for (const auto& fld : s.fields) rec.push_back(fld.second);
        const AxisValue& xv = t.rows[pt.row].axes[static_cast<std::size_t>(xi)];
        rec.push_back(p.x_categorical ? xv.text : fmt::format("{:.17g}", xv.number));
        rec.push_back(fmt::format("{:.17g}", pt.y));
        out << csv_record(rec) << "\n";
      }
  return out.str();
}

std::string table_csv(const AnalysisTable& t) {
  std::ostringstream out;
  for (const auto& [k, v] : t.run.lines()) out << "# " << k << ": " << v << "\n";
  std::vector<std::string> head{"point_index"};
  for (const Column& c : t.axes) head.push_back(c.key);
  for (const Column& c : t.metrics)
    if (c.derived == Derived::None) head.push_back(c.key);
  out << csv_record(head) << "\n";
  for (const Row& r : t.rows) {
    std::vector<std::string> rec{std::to_string(r.point_index)};
    for (std::size_t a = 0; a < t.axes.size(); ++a)
      rec.push_back(t.axes[a].numeric ? fmt::format("{:.17g}", r.axes[a].number) : r.axes[a].text);
    for (std::size_t m = 0; m < t.metrics.size(); ++m)
      if (t.metrics[m].derived == Derived::None) rec.push_back(fmt::format("{:.17g}", r.metrics[m]));
    out << csv_record(rec) << "\n";
  }
  return out.str();
}

}  // namespace scin::analysis
