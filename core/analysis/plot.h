// A plot over an analysis table: X = any axis column, Y = any metric, series =
// algorithm x the remaining axes, one facet (panel) per value of a chosen
// axis, value filters per axis. Pure data; the GUI and the exports draw it.
//
// Series identity and encoding: the fields that split series are ordered
// (algorithm first, then axes in spec order, or as the query lists them); of
// those that actually differ between the series of the plot, the first picks
// the colour and the second the line style / marker (with one differing field
// both follow it, so curves stay apart in greyscale). Legend labels name only
// the differing values: "scin · waves=4 · paced".
#pragma once

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "analysis/table.h"

namespace scin::analysis {

struct PlotQuery {
  std::string x = "collective.bytes";   // axis column key ("bytes" is accepted too)
  std::string y = "time_us";            // metric column key
  /// Fields that split series, in encoding order. Empty: every axis but x and
  /// the facet. Listed fields only: the other varying axes are held at their
  /// first shown value (PlotData::notes says so).
  std::vector<std::string> series;
  std::string facet;                    // "" = one panel
  /// Allowed values (text) per axis key; an axis not listed shows every value.
  std::map<std::string, std::set<std::string>> filters;
  std::string baseline = "ring";        // for speedups
};

struct SeriesPoint {
  double x = 0;          // numeric x, or the category index for a text axis
  double y = 0;
  std::size_t row = 0;   // index into AnalysisTable::rows
};

struct Series {
  std::string key;       // identity: all split-field values, "algorithm=scin|switch.isa.waves=4"
  std::string label;     // legend text: only the values that differ
  std::string algorithm;
  std::vector<std::pair<std::string, std::string>> fields;  // (axis key, value text) that split
  int color = 0;         // index into the palette (value index of the colour field)
  int style = 0;         // index into markers / dashes
  std::vector<SeriesPoint> points;   // ascending x
  /// Key of an earlier series of the same facet with the same points (equal x,
  /// y within kSameValuesRel relative), which this one covers when drawn over
  /// it: drawn dashed so that both stay visible. "" when there is none.
  std::string same_as;
};

/// Values closer than this (relative) count as the same for Series::same_as.
inline constexpr double kSameValuesRel = 1e-9;
/// Pairs of such curves named one by one in PlotData::notes; more are counted in one note.
inline constexpr std::size_t kSameValuesPairsNamed = 2;
/// Whether two values are the same in that sense (equal, or within kSameValuesRel).
inline bool same_value(double a, double b) {
  return a == b || std::fabs(a - b) <= kSameValuesRel * std::max(std::fabs(a), std::fabs(b));
}

struct Facet {
  std::string value;     // the facet axis value ("" without a facet)
  std::string shown;     // the value with its axis's unit: "100 ns", "paced", "64 KiB"
  std::string title;     // "regulation = paced", "latency_ns = 100 ns"
  /// Axes zipped with the facet axis (one value per panel) and their values in
  /// this panel, in PlotData::facet_riders order; `shown` and `title` name them too.
  std::vector<std::pair<std::string, std::string>> riders;
  std::vector<Series> series;
};

struct PlotData {
  Column x, y;
  bool x_categorical = false;            // x is a text axis: positions 0..n-1
  std::vector<std::string> x_categories; // labels of those positions
  std::vector<Facet> facets;
  std::string color_field, style_field;  // axis keys encoded by colour / style ("" if none)
  /// Keys of the axes that move with the facet axis (zipped with it): they split
  /// no series and are named in each panel's title (Facet::riders).
  std::vector<std::string> facet_riders;
  /// Labels of the facet axis and its riders, "Link bandwidth · Link latency" ("" without panels).
  std::string facet_label;
  std::string title;                     // "Latency vs waves — #3 isa-waves"
  std::vector<std::string> notes;        // fields held fixed, points left out, baseline
  /// Why nothing can be drawn ("" when there is something): shown in the chart area.
  std::string empty_reason;
  std::size_t point_count() const;
  bool empty() const { return !empty_reason.empty(); }
  /// All series of every facet with the same key share colour/style; legend
  /// entries are those distinct series (first facet order).
  std::vector<const Series*> legend() const;
};

/// The metrics a kind offers, the axis keys, and the default query of a table
/// (x = size for a timing run with sizes, else the first varying numeric axis;
/// panels by auto_facet when one panel would hold too many curves).
PlotQuery default_query(const AnalysisTable& t);

/// The most curves one panel of a default view holds before it is split into panels.
inline constexpr std::size_t kMaxCurvesPerPanel = 12;
/// The most panels an automatic split makes (an exported 3.5 x 2.5 in figure stays legible).
inline constexpr std::size_t kMaxAutoPanels = 6;

/// A facet axis for q when a single panel would hold more than max_curves
/// curves: the varying axis (not x, not the algorithm, at most kMaxAutoPanels values) that
/// leaves the fewest curves in the fullest panel, fewer panels on a tie. ""
/// when one panel is readable or no axis helps.
std::string auto_facet(const AnalysisTable& t, const PlotQuery& q, std::size_t max_curves = kMaxCurvesPerPanel);

/// Builds the plot. Bad keys give empty_reason naming the key and what exists.
PlotData make_plot(const AnalysisTable& t, const PlotQuery& q);

/// The plot's points as CSV (RFC 4180, core/base/csv.h): a header block of
/// "# key: value" comment lines (run, tool version, configuration, the query),
/// then facet, series, the split fields, x and y columns named with units.
std::string plot_csv(const AnalysisTable& t, const PlotData& p);

/// The whole table as CSV: one line per row with every axis and metric column.
std::string table_csv(const AnalysisTable& t);

}  // namespace scin::analysis
