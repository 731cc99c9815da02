// The Validation tab: the model of the simulated run shown against the
// measured run picked (MeasuredOverlay), as `scin validate` reports it —
// model vs measured time over message size, the error (%) over size per
// algorithm, and MAPE / bias / max |error| per size regime (<= 64 KiB,
// 64 KiB - 64 MiB, >= 64 MiB), per algorithm and overall in a small table.
// The numbers come from core (calib: validate_rows); this only draws them.
#pragma once

#include <QChart>
#include <QChartView>
#include <QLabel>
#include <QSplitter>
#include <QTableWidget>

#include "ui/chart_panel.h"

namespace scin::ui {

class MeasuredOverlay;

class ValidationView : public ChartPanel {
  Q_OBJECT
 public:
  explicit ValidationView(MeasuredOverlay* overlay, QWidget* parent = nullptr);

  /// Rows: algorithm, system, gpus, bytes, measured_us, model_us, error_pct, regime, source, note
  /// (what NCCL runs instead when the row is modelled as another algorithm, else empty).
  QString csv() const override;
  bool hasData() const override;
  /// The error (%) vs size chart beside the model-vs-measured one.
  QChart* errorChart() const { return errorChart_; }
  QChartView* errorView() const { return errorView_; }
  /// Per regime, per algorithm and overall: rows, MAPE %, bias %, max |error| %.
  QTableWidget* statsTable() const { return stats_; }
  /// Series names of the error chart.
  QStringList errorSeriesNames() const;
  /// The tooltip of the measured (or error) marker of `algorithm` at `bytes` whose
  /// measured time is `measured_us`: measured and model times, the error, the row's
  /// note (a row modelled as what NCCL runs instead), the source line. "" if none.
  QString rowTip(const QString& algorithm, std::uint64_t bytes, double measured_us) const;
  /// Reports show the error chart after the model-vs-measured one ...
  std::vector<QChart*> extraCharts() const override;
  /// ... and under them the model line, the table of MAPE / bias per regime,
  /// algorithm and overall, and how the error is defined.
  QString reportHtml() const override;

 protected:
  void redraw() override;
  void resizeEvent(QResizeEvent* e) override;

 private:
  void drawError();
  void fillStats();
  /// Gives the table's rows their height below the charts, the charts the rest
  /// (until the user drags the border).
  void fitBelow();

  MeasuredOverlay* overlay_;
  QChart* errorChart_;
  QChartView* errorView_;
  QTableWidget* stats_;
  QLabel* model_;
  QLabel* how_;
  QSplitter* vsplit_ = nullptr;
  QWidget* words_ = nullptr;
  bool userSized_ = false;
};

}  // namespace scin::ui
