// The UI's view of an experiment: what to sweep and what came back.
// Plain structs over core types, shared by the sweep editor, the preview, the
// run controller and the charts.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <QMetaType>
#include <QString>

#include <nlohmann/json.hpp>

#include "fabric/config.h"
#include "engines/simulate.h"

namespace scin::ui {

/// One extra sweep axis over a registry parameter, as the user typed it.
/// `values` is either a comma-separated list ("450, 900, 1800") or a range
/// "MIN..MAX step S" (linear), "MIN..MAX x F" (geometric, F > 1) or
/// "MIN..MAX count N" (N evenly spaced values); for whole-number parameters
/// "MIN..MAX" alone steps by 1.
struct ExtraAxis {
  std::string path;     // registry path (core/fabric/params.h)
  std::string values;   // list or range text, in the parameter's unit
  bool zip = false;     // moves together with the axis above (same length) instead of crossing it
  bool operator==(const ExtraAxis&) const = default;
};

/// The parsed form of an ExtraAxis: explicit values, or a range for the spec.
struct ParsedAxis {
  std::vector<nlohmann::json> values;   // always filled: the expanded, registry-checked values
  bool is_range = false;
  double min = 0, max = 0, factor = 0, step = 0;
  int count = 0;
};

/// Parses and checks `a` against the registry (path exists, every value in the
/// parameter's allowed range). Throws scin::Error with a message naming the
/// path and the allowed range.
ParsedAxis parseExtraAxis(const ExtraAxis& a);

/// The range text of a stored range axis ("100..300 step 50"), the inverse of parseExtraAxis.
std::string rangeText(double min, double max, double factor, double step, int count);

/// What the sweep editor describes: sizes x algorithms (x extra axes).
struct SweepRequest {
  std::uint64_t min_bytes = 8;
  std::uint64_t max_bytes = 1ull << 30;
  std::uint64_t factor = 2;
  std::vector<std::string> algorithms;   // empty: every algorithm the fabric supports
  std::string engine = "analytic";
  std::string dtype = "bf16";
  /// Extra axes, crossed as a Cartesian product (first slowest); an axis with
  /// zip set moves together with the one above it.
  std::vector<ExtraAxis> axes;

  bool operator==(const SweepRequest&) const = default;
  std::vector<std::uint64_t> sizes() const;
  /// Checks the extra axes; empty if valid, else a message naming the axis
  /// (its path and allowed range).
  QString axisError() const;
  /// Number of combinations of the extra axes (1 with none; 0 if invalid).
  std::size_t axis_combinations() const;
  /// Total points (sizes x algorithms x axis combinations) for `cfg`; 0 if invalid.
  std::size_t point_count(const Config& cfg) const;
  /// The algorithms this request runs on `cfg` (requested and supported).
  std::vector<std::string> effective_algorithms(const Config& cfg) const;
  /// One line for the status bar and reports: "8 B – 1 GiB ×2, 8 algorithms, bf16, analytic".
  QString summary(const Config& cfg) const;
};

/// One curve: an algorithm (at one combination of extra-axis values) over message sizes.
struct Curve {
  std::string algorithm;
  QString label;                 // legend text: "scin" or "scin links.bandwidth_GBps=900"
  QString group;                 // curves sharing a group compare with each other
                                 // (axis value and/or run name); "" for the main set
  std::vector<SimResult> points; // ascending size
  bool overlay = false;          // drawn dashed: from a run selected for comparison
};

/// Everything a chart draws.
struct ResultSet {
  QString title;                 // "Preview" or the run's name
  std::vector<Curve> curves;
  std::vector<std::string> errors;  // algorithms that could not run, with the reason
  bool empty() const { return curves.empty(); }
  /// The curve of `algorithm` with no axis suffix, or nullptr.
  const Curve* find(const std::string& algorithm) const;
};

/// Computes every point of `req` on `cfg` with the analytic engine (no threads,
/// no Qt event loop): what the preview runs on its worker.
ResultSet computeAnalytic(const Config& cfg, const SweepRequest& req);

}  // namespace scin::ui

Q_DECLARE_METATYPE(scin::ui::ResultSet)
