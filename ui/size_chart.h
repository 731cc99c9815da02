// A line chart over message size: x is log2(bytes) on an axis labelled in
// human units (8 B, 1 KiB, 1 MiB, 1 GiB); y is whatever the subclass
// measures. Hovering a series shows the exact values of the nearest point.
#pragma once

#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include <QCategoryAxis>
#include <QLineSeries>

#include "calib/fit.h"
#include "ui/chart_panel.h"

namespace scin::ui {

class MeasuredOverlay;

/// A log2 size axis from `min_bytes` to `max_bytes` with a label on powers of
/// two (every 2nd or 4th when the range is wide). x values are log2(bytes).
/// `step` > 0 labels every step-th power of two (and both ends), for narrow charts.
QCategoryAxis* makeSizeAxis(std::uint64_t min_bytes, std::uint64_t max_bytes, int step = 0);

class SizeChart : public ChartPanel {
  Q_OBJECT
 public:
  using ChartPanel::ChartPanel;
  /// The most curves drawn: Qt Charts' cost grows with the square of the series
  /// (10^4 one-point curves froze the tab for minutes). The note names the rest;
  /// csv() and the Analysis tab have every curve.
  static constexpr std::size_t kMaxCurves = 200;
  QString csv() const override;
  /// The (bytes, value) pairs a series plots, for tests: exactly what the chart holds.
  std::vector<std::pair<double, double>> seriesData(const QString& name) const;
  /// Overlays the measured points `overlay` picks (markers without lines, one
  /// series per algorithm and system: "measured ring (HGX H200 ...)") and adds
  /// its picker to the controls. Not owned.
  void setMeasured(MeasuredOverlay* overlay);
  /// Names of the measured series drawn.
  QStringList measuredSeriesNames() const;
  /// The tooltip of the point of series `name` nearest `bytes` (HTML), as hovering it shows:
  /// the exact values, and the note a result carries (e.g. NVLS on 2 GPUs, which NCCL does not run).
  QString pointTip(const QString& name, std::uint64_t bytes) const;
  /// The tooltip of a measured marker of series `name` at `bytes`: measured and model
  /// times, the note of a row modelled as what NCCL runs instead, the source line.
  QString measuredTip(const QString& name, std::uint64_t bytes) const;
  /// A measured series' name: "measured ALGO (SYSTEM)", and " − T harness" when its points are drawn
  /// less the harness offset their system takes (collective_us).
  QString measuredSeriesName(const RowError& e) const;

 protected:
  void redraw() override;
  /// The y value of point `i` of `c`, or nullopt to leave it out.
  virtual std::optional<double> value(const Curve& c, std::size_t i) const = 0;
  /// Creates the y axis (log or linear, titled with its unit).
  virtual QAbstractAxis* makeYAxis(double lo, double hi) const = 0;
  /// The label of a tick on a log-scale y axis (default: tickNumber).
  virtual QString tickLabel(double v) const { return tickNumber(v); }
  /// The tooltip line for a value: "12.3 µs".
  virtual QString valueText(double v) const = 0;
  /// CSV column name for the value, with its unit: "time_us".
  virtual QString csvColumn() const = 0;
  /// Hook for subclasses that add series after the curves (e.g. a reference line).
  virtual void extraSeries(double /*x_lo*/, double /*x_hi*/) {}
  /// The y value of a measured row in this chart's metric, or nullopt when
  /// the metric has no measured counterpart (default).
  virtual std::optional<double> measuredValue(const RowError& /*row*/) const { return std::nullopt; }

 private:
  /// The notes of the results themselves (curves left out, a result's note).
  QStringList resultNotes(std::size_t drawn) const;
  /// When the chart already shows the same curves (names, styles) on the same
  /// axes, replaces their points and returns true: a live preview refining or
  /// following an edit does not rebuild every series and axis (Qt Charts'
  /// largest cost per update), and a zoom is kept. False: redraw from scratch.
  bool updateInPlace();

  /// What the last full redraw drew, for updateInPlace(): each curve's label,
  /// algorithm, group and overlay flag; the x range; the y axis's kind and range.
  struct Drawn {
    std::vector<std::tuple<QString, std::string, QString, bool>> curves;
    std::uint64_t min_b = 0, max_b = 0;
    QString y_title;
    int y_type = -1;
    double y_min = 0, y_max = 0;
    bool operator==(const Drawn&) const = default;
  };
  std::optional<Drawn> drawn_;

  MeasuredOverlay* measured_ = nullptr;
  QStringList measuredNames_;
};

}  // namespace scin::ui
