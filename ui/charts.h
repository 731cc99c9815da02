// The chart kinds, one class each: latency, bandwidth (algbw / busbw / real
// bytes on the busiest link), speedup over a baseline, latency breakdown.
#pragma once

#include <QComboBox>
#include <QTimer>

#include "ui/size_chart.h"

namespace scin::ui {

/// All-Reduce time vs message size, log-log, in µs.
class LatencyChart : public SizeChart {
  Q_OBJECT
 public:
  explicit LatencyChart(QWidget* parent = nullptr);

 protected:
  std::optional<double> value(const Curve& c, std::size_t i) const override;
  QAbstractAxis* makeYAxis(double lo, double hi) const override;
  QString valueText(double v) const override;
  QString csvColumn() const override { return QStringLiteral("time_us"); }
  std::optional<double> measuredValue(const RowError& row) const override;
};

/// Bus bandwidth, algorithm bandwidth, or the real bytes on the busiest link.
class BandwidthChart : public SizeChart {
  Q_OBJECT
 public:
  enum Metric { BusBw, AlgBw, LinkBytes, LinkBytesRatio };
  explicit BandwidthChart(QWidget* parent = nullptr);
  void setMetric(Metric m);
  Metric metric() const { return static_cast<Metric>(metric_->currentIndex()); }

 protected:
  std::optional<double> value(const Curve& c, std::size_t i) const override;
  QAbstractAxis* makeYAxis(double lo, double hi) const override;
  QString valueText(double v) const override;
  QString tickLabel(double v) const override;
  QString csvColumn() const override;
  std::optional<double> measuredValue(const RowError& row) const override;

 private:
  QComboBox* metric_;
};

/// Speedup of each algorithm over a chosen baseline: baseline time / time.
class SpeedupChart : public SizeChart {
  Q_OBJECT
 public:
  explicit SpeedupChart(QWidget* parent = nullptr);
  void setBaseline(const QString& algorithm);
  QString baseline() const;

 protected:
  void redraw() override;
  std::optional<double> value(const Curve& c, std::size_t i) const override;
  QAbstractAxis* makeYAxis(double lo, double hi) const override;
  QString valueText(double v) const override;
  QString tickLabel(double v) const override;
  QString csvColumn() const override;
  void extraSeries(double x_lo, double x_hi) override;

 private:
  QComboBox* baseline_;
};

/// The latency breakdown (stacked terms that sum to the time) of each
/// algorithm at one chosen message size.
class BreakdownChart : public ChartPanel {
  Q_OBJECT
 public:
  explicit BreakdownChart(QWidget* parent = nullptr);
  QString csv() const override;
  void setSize(std::uint64_t bytes);
  std::uint64_t size() const;
  /// The bar value of `term` for `algorithm` (µs, or % of its total in the
  /// share view; a bar's label is "ALGORITHM · TOTAL"), for tests.
  double barValue(const QString& algorithm, const QString& term) const;
  /// Show each bar as shares of its own total (100%) instead of times: at 576
  /// GPUs the ring's 1.4 ms left SCIN's 5 us bars invisible on one time axis.
  void setShares(bool on);
  bool shares() const;

 protected:
  void redraw() override;
  /// The bars' labels are fitted to the room the panel's width leaves them:
  /// drawn again (once the resizing settles) when the width changes.
  void resizeEvent(QResizeEvent* e) override;

 private:
  QComboBox* size_;
  QComboBox* scale_;
  std::uint64_t wanted_ = 1ull << 20;
  QTimer* refit_ = nullptr;
  int fittedWidth_ = 0;  // the panel's width when the labels were fitted
};

}  // namespace scin::ui
