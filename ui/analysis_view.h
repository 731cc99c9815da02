// The analysis view: any stored run (timing, quant, inference) plotted from
// its analysis table (core/analysis). Pickers for X (any axis), Y (any
// metric), the fields that split series, a facet axis (small multiples), the
// speedup baseline, log/linear per axis, value filters per axis; a legend that
// scrolls and wraps beside the plot; a nearest-point tracker; rubber-band and
// wheel zoom with Reset; a sortable, copyable table of the points. Plots are
// computed on a worker (QtConcurrent), and so is a new table's query (its
// default, auto_facet): the GUI thread only receives the finished plot and
// paints. Each request (a table, a query) supersedes the ones before it: a
// stale result arriving late is dropped. Workers hold shared_ptrs to const
// data, so replacing the table (or closing the view) while one runs is safe.
#pragma once

#include <functional>
#include <memory>
#include <optional>

#include <QComboBox>
#include <QFutureWatcher>
#include <QLabel>
#include <QListWidget>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QTabWidget>
#include <QToolButton>
#include <QWidget>

#include "analysis/plot.h"
#include "ui/figure.h"
#include "ui/figure_export.h"

namespace scin::ui {

/// Paints a plot and tracks the mouse: hover snaps to the nearest point of any
/// series; drag zooms to a rectangle; wheel zooms; right or double click resets.
class FigureCanvas : public QWidget {
  Q_OBJECT
 public:
  explicit FigureCanvas(QWidget* parent = nullptr);
  void setPlot(std::shared_ptr<const analysis::AnalysisTable> table, std::shared_ptr<const analysis::PlotData> plot);
  void setLog(bool x, bool y);
  void resetZoom();
  bool zoomed() const { return view_.has_value(); }
  const std::optional<ViewRange>& view() const { return view_; }
  void setView(const std::optional<ViewRange>& v);
  /// Series (by key) left out of the drawing, the tracker and exports.
  void setHidden(const std::set<std::string>& keys);
  FigureOptions options() const;
  /// The tracker text of the point nearest `pos` (widget pixels), "" if none; moves the tracker there.
  QString trackAt(const QPoint& pos);
  QString trackerText() const { return tracker_; }
  double fontPt() const { return fontPt_; }

 Q_SIGNALS:
  void zoomChanged();

 protected:
  void paintEvent(QPaintEvent* e) override;
  void mouseMoveEvent(QMouseEvent* e) override;
  void mousePressEvent(QMouseEvent* e) override;
  void mouseReleaseEvent(QMouseEvent* e) override;
  void mouseDoubleClickEvent(QMouseEvent* e) override;
  void wheelEvent(QWheelEvent* e) override;
  void leaveEvent(QEvent* e) override;

 private:
  double ptPerPx() const;
  int panelAt(const QPointF& pt) const;

  std::shared_ptr<const analysis::AnalysisTable> table_;
  std::shared_ptr<const analysis::PlotData> plot_;
  bool logX_ = false, logY_ = false;
  double fontPt_ = 9;
  std::optional<ViewRange> view_;
  std::set<std::string> hidden_;
  FigureLayout layout_;
  // hover
  int hiFacet_ = -1;
  const analysis::Series* hiSeries_ = nullptr;
  std::size_t hiPoint_ = 0;
  QString tracker_;
  QPointF trackerPos_;
  // rubber band (points)
  bool dragging_ = false;
  QPointF dragFrom_, dragTo_;
  int dragPanel_ = -1;
};

class AnalysisView : public QWidget {
  Q_OBJECT
 public:
  explicit AnalysisView(QWidget* parent = nullptr);

  /// Short name for --tab, file names and the report.
  QString id() const { return QStringLiteral("analysis"); }
  QString title() const { return tr("Analysis of the stored run"); }

  /// Shows a stored run's table (null: nothing stored is shown) and plots its default
  /// query, keeping the user's axes when the run has them. Returns at once: the query
  /// (default_query, auto_facet) and the plot are worked out on a worker; busy() until
  /// they are shown, then plotReady(). The pickers are disabled meanwhile. `defaults`:
  /// analysis::default_query(*table) when the caller's worker computed it already (the
  /// run loader does), so it is not computed again.
  void setTable(std::shared_ptr<const analysis::AnalysisTable> table,
                std::optional<analysis::PlotQuery> defaults = std::nullopt);
  /// Shown in the chart area when there is no table (e.g. the live preview).
  void setMessage(const QString& text);
  std::shared_ptr<const analysis::AnalysisTable> table() const { return table_; }

  void setQuery(const analysis::PlotQuery& q);
  const analysis::PlotQuery& query() const { return query_; }
  void setLog(bool x, bool y);
  bool logX() const { return logX_; }
  bool logY() const { return logY_; }
  /// The newest plot (after busy() turns false). Its table is shownTable(), which is
  /// table() once busy() is false.
  std::shared_ptr<const analysis::PlotData> plot() const { return plot_; }
  std::shared_ptr<const analysis::AnalysisTable> shownTable() const { return shownTable_; }
  bool busy() const { return pending_ > 0; }
  bool hasData() const { return plot_ && !plot_->empty(); }
  /// Legend texts in order, exactly as shown.
  QStringList legendTexts() const;
  /// Hides or shows a series by legend text, as clicking its legend entry does.
  void setSeriesVisible(const QString& label, bool visible);
  /// What the chart area says when nothing can be drawn ("" when something is drawn).
  QString emptyText() const;
  FigureCanvas* canvas() const { return canvas_; }
  QTableView* pointsTable() const { return points_; }

  bool exportFigure(const QString& path, const FigureSize& size, bool title, QString* error) const;
  QImage render(const FigureSize& size, double dpi) const;

 Q_SIGNALS:
  void plotReady();

 private:
  /// What a worker hands back: the plot and the query it was made for.
  struct Job {
    analysis::PlotQuery query;
    std::shared_ptr<const analysis::PlotData> plot;
  };
  void replot();
  /// Runs `work` on a worker as the newest request; `newTable`: it also chose the
  /// query of a table just set (the pickers are filled from it).
  void start(std::function<Job()> work, bool newTable);
  void setPickersEnabled(bool on);
  /// logX_ / logY_ from query_'s columns in `t` (unless setLog() chose them).
  void logDefaults(const analysis::AnalysisTable& t);
  void fillPickers();
  void showPlot(std::shared_ptr<const analysis::AnalysisTable> table, std::shared_ptr<const analysis::PlotData> p);
  void fillLegend();
  void fillPointsTable();
  void rebuildMenus();
  void copySelection();

  std::shared_ptr<const analysis::AnalysisTable> table_;        // the newest table set
  std::shared_ptr<const analysis::AnalysisTable> shownTable_;   // the table plot_ was made from
  std::shared_ptr<const analysis::PlotData> plot_;
  analysis::PlotQuery query_;
  std::string pickedX_;            // the x the user chose (kept across runs that have it)
  bool logX_ = true, logY_ = true;
  int pending_ = 0;
  quint64 generation_ = 0;
  bool filling_ = false;
  bool resolving_ = false;         // a new table's query is being worked out (pickers disabled)
  bool logByCaller_ = false;       // setLog() since setTable(): the new run's log defaults do not override it
  QString message_;
  std::set<std::string> hidden_;   // series keys hidden through the legend

  QComboBox *x_, *y_, *facet_, *baseline_;
  QToolButton *logXBtn_, *logYBtn_, *seriesBtn_, *filterBtn_;
  QLabel* notes_;
  FigureCanvas* canvas_;
  QListWidget* legend_;
  QTableView* points_;
  class PointsModel* pointsModel_;
  QSortFilterProxyModel* pointsProxy_;
  QTabWidget* inner_;
};

}  // namespace scin::ui
