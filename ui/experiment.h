// The UI's view of an experiment: what to sweep and what came back.
// Plain structs over core types, shared by the sweep editor, the preview, the
// run controller and the charts.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <QMetaType>
#include <QString>

#include "model/config.h"
#include "sim/simulate.h"

namespace scin::ui {

/// What the sweep editor describes: sizes x algorithms (x one optional extra axis).
struct SweepRequest {
  std::uint64_t min_bytes = 8;
  std::uint64_t max_bytes = 1ull << 30;
  std::uint64_t factor = 2;
  std::vector<std::string> algorithms;   // empty: every algorithm the fabric supports
  std::string engine = "analytic";
  std::string dtype = "bf16";
  std::string axis_path;                 // extra axis: a registry path, or empty
  std::vector<std::string> axis_values;  // values as the CLI would take them

  std::vector<std::uint64_t> sizes() const;
  /// Total points (sizes x algorithms x axis values) for `cfg`.
  std::size_t point_count(const Config& cfg) const;
  /// The algorithms this request runs on `cfg` (requested and supported).
  std::vector<std::string> effective_algorithms(const Config& cfg) const;
  /// One line for the status bar and reports: "8 B – 1 GiB ×2, 8 algorithms, bf16, analytic".
  QString summary(const Config& cfg) const;
};

/// One curve: an algorithm (at one extra-axis value) over message sizes.
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
