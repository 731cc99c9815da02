// Base of every chart tab: a QChartView with zoom (rubber band, wheel), pan
// (arrow keys, middle-drag), reset, clickable legend markers that toggle
// series, and the data behind the chart as CSV. Subclasses draw one kind.
#pragma once

#include <QChart>
#include <QChartView>
#include <QHBoxLayout>
#include <QWidget>

#include "ui/experiment.h"

namespace scin::ui {

class ZoomChartView : public QChartView {
  Q_OBJECT
 public:
  using QChartView::QChartView;

 protected:
  void wheelEvent(QWheelEvent* e) override;
  void keyPressEvent(QKeyEvent* e) override;
  void mousePressEvent(QMouseEvent* e) override;
  void mouseMoveEvent(QMouseEvent* e) override;
  void mouseReleaseEvent(QMouseEvent* e) override;

 private:
  bool panning_ = false;
  QPointF last_;
};

class ChartPanel : public QWidget {
  Q_OBJECT
 public:
  ChartPanel(const QString& id, const QString& title, QWidget* parent = nullptr);

  /// Short name used by --tab, file names and the report: "latency", "bandwidth", ...
  QString id() const { return id_; }
  QString title() const { return title_; }
  QChart* chart() const { return chart_; }
  QChartView* view() const { return view_; }

  void setResults(const ResultSet& rs);
  const ResultSet& results() const { return rs_; }
  /// The numbers the chart shows, as CSV with a header naming units.
  virtual QString csv() const = 0;
  /// Visible-in-legend series names (tests and exports).
  QStringList seriesNames() const;
  /// Hides or shows a series by name, as clicking its legend marker does.
  void setSeriesVisible(const QString& name, bool visible);

 public Q_SLOTS:
  void resetZoom();

 protected:
  virtual void redraw() = 0;
  QHBoxLayout* controls() const { return controls_; }
  /// Clears series and axes, keeping the chart object.
  void clearChart();
  /// Makes legend markers toggle their series; call after adding series.
  void connectLegend();
  /// Shows `text` near the cursor.
  static void showTip(const QString& text);

  ResultSet rs_;

 private:
  QString id_, title_;
  QChart* chart_;
  ZoomChartView* view_;
  QHBoxLayout* controls_;
};

}  // namespace scin::ui
