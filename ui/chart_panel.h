// Base of every chart tab: a QChartView with zoom (rubber band, wheel), pan
// (arrow keys, middle-drag), reset, clickable legend markers that toggle
// series, and the data behind the chart as CSV. Subclasses draw one kind.
#pragma once

#include <functional>
#include <vector>

#include <QCategoryAxis>
#include <QChart>
#include <QChartView>
#include <QLogValueAxis>
#include <QHBoxLayout>
#include <QLabel>
#include <QScrollArea>
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

/// Exponents of powers of two to label on an axis from 2^e0 to 2^e1: both
/// ends always, and the multiples of `step` between them that keep at least
/// step/2 away from an end (so the labels cover the whole range and do not
/// crowd). `step` <= 0 picks 1, 2 or 5 from the width of the range (so each
/// whole KiB / MiB / GiB stays labelled).
std::vector<int> pow2Exponents(int e0, int e1, int step = 0);

/// QLogValueAxis labels only the powers of its base. This adds `log` to
/// `chart` hidden (the series attach to it) and, in its place, a category axis
/// with the same title and readable labels at logTicks() (powers of two for a
/// base-2 axis) formatted by
/// `label` (default tickNumber), that follows the log axis when it zooms.
/// Returns the visible label axis.
QCategoryAxis* addLogAxis(QChart* chart, QLogValueAxis* log, Qt::Alignment align,
                          const std::function<QString(double)>& label = {});

/// Properties of a measured points' series (objectName "measured"): its
/// algorithm and measured system, which its legend entry keeps when the whole
/// name is too wide to stand beside the plot.
inline constexpr const char* kMeasuredAlgorithm = "scinMeasuredAlgorithm";
inline constexpr const char* kMeasuredSystem = "scinMeasuredSystem";

/// Keeps the labels of `axis` inside its visible range: whenever the range
/// changes (zoom, pan), the categories are rebuilt from `labels(lo, hi)`
/// ((text, position) pairs), so no label piles up at an edge and a zoom in
/// gets finer labels.
void followRange(QCategoryAxis* axis, std::function<std::vector<std::pair<QString, double>>(double lo, double hi)> labels);

/// For a horizontal axis made with followRange and added to `chart`: keeps
/// only the labels that fit side by side at the plot's current width (both ends
/// always), again whenever the plot area changes, so a narrow chart shows fewer
/// whole labels instead of elided ones ("32 ...").
void fitLabelsToWidth(QChart* chart, QCategoryAxis* axis);

/// For a series already in `chart`: if its pen is dashed or dotted, its legend
/// entry shows its line (dash and all) instead of a colour swatch, which reads
/// as the solid curve of the same colour. Not for a custom dash (a curve drawn
/// over its twin, setCoveringDash: a short sample of it may be all gap; its
/// entry names the twin).
void showDashInLegend(QChart* chart, QAbstractSeries* series);

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
  /// Legend entries as shown, in order: the curves' names, then (when the
  /// legend is capped) the summary line "+ N more curves ...".
  QStringList legendTexts() const;
  /// How many curves the legend lists before summarising the rest (0: all).
  int legendCap() const { return legendCap_; }
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
  /// The least height (px) at which the chart reads (0: any): a chart with
  /// many categories (the breakdown's bars) needs a row of label per
  /// category. Below it the tab scrolls, and figures are exported at least
  /// this tall.
  int minimumChartHeight() const;
  /// Charts beside the main one that a report shows after it (the Validation
  /// tab's error chart); none by default.
  virtual std::vector<QChart*> extraCharts() const { return {}; }
  /// HTML a report puts under the panel's charts: the note above the chart,
  /// and what else qualifies the numbers (the Validation tab's table).
  virtual QString reportHtml() const;

 public Q_SLOTS:
  void resetZoom();

 protected:
  virtual void redraw() = 0;
  QHBoxLayout* controls() const { return controls_; }
  /// Clears series and axes, keeping the chart object.
  void clearChart();
  /// Makes legend markers toggle their series and caps the legend; call after adding series.
  void connectLegend();
  /// Lists at most as many curves as fit the chart's height (the legend's
  /// share of the chart is capped, as in exported figures); the others are
  /// counted in one last entry. Runs again when the chart is resized.
  void capLegend();
  /// Leaves `s` out of the legend (e.g. a reference line, or a model line
  /// whose colour another entry names); call after adding it.
  void unlist(QAbstractSeries* s);
  bool eventFilter(QObject* o, QEvent* e) override;
  /// Shows `text` near the cursor.
  static void showTip(const QString& text);
  /// A worker's progress sink (RunContext::progress, any thread): calls `step`
  /// with the percentage in steps of 2%, only when it moves (engines report
  /// far more often than a chart can repaint).
  static std::function<void(double)> percentSteps(std::function<void(int)> step);
  /// Sets minimumChartHeight() (0: none).
  void setMinimumChartHeight(int px);

  ResultSet rs_;

 private:
  QString id_, title_;
  QChart* chart_;
  ZoomChartView* view_;
  QHBoxLayout* controls_;
  QStackedWidget* stack_;
  QScrollArea* scroll_;  // holds view_: scrolls when the chart needs more height than the tab has
  QLabel* empty_;
  QLabel* note_;
  QString emptyText_;
  int legendCap_ = 0;
  QAbstractSeries* legendMore_ = nullptr;   // the summary entry (no points), or null
  QAbstractSeries* legendKeys_ = nullptr;   // the entry naming compacted curves' keys (no points), or null
  QList<QAbstractSeries*> unlisted_;        // series kept out of the legend
};

/// Names that read whole in a narrow place (a breakdown's bar labels, a side legend):
/// a sweep's "scin (switch.isa.regulation=none switch.isa.waves=4)" names each value by
/// its axis's short name, and where a name and the `reserve` px after it are still wider
/// than `room` and every name reads "algorithm (a=1 b=2)" with the same keys in the same
/// order, by its values alone ("scin (none, 4)"), `keys` naming them once ("regulation,
/// waves"). Neither where two names would then read alike.
struct CompactLabels {
  QStringList labels;
  QString keys;  // empty: the labels name their axes
};
CompactLabels compactLabels(const QStringList& labels, const QFontMetrics& fm, int reserve = 0, int room = 260);

}  // namespace scin::ui
