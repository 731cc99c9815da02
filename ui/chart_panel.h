// Base of every chart tab: a QChartView with zoom (rubber band, wheel), pan
// (arrow keys, middle-drag), reset, clickable legend markers that toggle
// series, and the data behind the chart as CSV. Subclasses draw one kind.
#pragma once

#include <functional>

#include <QCategoryAxis>
#include <QChart>
#include <QChartView>
#include <QLogValueAxis>
#include <QHBoxLayout>
#include <QLabel>
#include <QStackedWidget>
#include <QWidget>

#include "ui/experiment.h"

namespace scin::ui {

/// A number for an axis label, as a person writes it: 1, 20, 1000, 0.5, 0.002;
/// only very large or small values use an exponent ("2e-5", "3e7").
QString tickNumber(double v);

/// Tick values of a log10 axis from `lo` to `hi`: 1, 2, 5 per decade (1, 3 or
/// only 1 when there are many decades).
std::vector<double> logTicks(double lo, double hi);

/// QLogValueAxis labels only the powers of its base. This adds `log` to
/// `chart` hidden (the series attach to it) and, in its place, a category axis
/// with the same title and readable labels at logTicks() (powers of two for a
/// base-2 axis) formatted by
/// `label` (default tickNumber), that follows the log axis when it zooms.
/// Returns the visible label axis.
QCategoryAxis* addLogAxis(QChart* chart, QLogValueAxis* log, Qt::Alignment align,
                          const std::function<QString(double)>& label = {});

/// Keeps the labels of `axis` inside its visible range: whenever the range
/// changes (zoom, pan), the categories are rebuilt from `labels(lo, hi)`
/// ((text, position) pairs), so no label piles up at an edge and a zoom in
/// gets finer labels.
void followRange(QCategoryAxis* axis, std::function<std::vector<std::pair<QString, double>>(double lo, double hi)> labels);

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
  /// Shows `text` in the chart area instead of the chart ("" shows the chart).
  void setEmptyText(const QString& text);
  QString emptyText() const { return emptyText_; }
  /// A line above the chart that qualifies what it shows ("" hides it).
  void setNote(const QString& text);
  QString note() const;
  /// The chart has at least one point to show (reports omit the others).
  virtual bool hasData() const;
  /// Whether the chart holds points, whatever the empty text says.
  bool hasDataIgnoringText() const;

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
  QStackedWidget* stack_;
  QLabel* empty_;
  QLabel* note_;
  QString emptyText_;
};

}  // namespace scin::ui
