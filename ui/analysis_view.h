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
#include <QTableView>
#include <QTabWidget>
#include <QToolButton>
#include <QWidget>

#include "analysis/plot.h"
#include "ui/figure.h"
#include "ui/field_combo.h"
#include "ui/figure_export.h"
#include "ui/points_model.h"

namespace scin::ui {

/// Paints a plot and tracks the mouse: hover snaps to the nearest point of any
/// series; drag zooms to a rectangle; wheel zooms; right or double click resets.
/// The figure is drawn once per plot, size, zoom, scales and hidden series into
/// a picture that paint events only copy (hover, the rubber band and the
/// read-out are drawn over it). Each series is drawn reduced to the pixels of
/// its panel (analysis/decimate.h). A plot of more than kSyncPoints points is
/// drawn on a worker: meanwhile the previous picture is shown (stretched to the
/// new size) and the canvas says it is drawing; the GUI thread never paints
/// such a plot itself.
class FigureCanvas : public QWidget {
  Q_OBJECT
 public:
  /// Plots with at most this many points are drawn on the GUI thread, when
  /// painted (a few ms); larger ones on a worker.
  static constexpr std::size_t kSyncPoints = 4000;

  explicit FigureCanvas(QWidget* parent = nullptr);
  void setPlot(std::shared_ptr<const analysis::AnalysisTable> table, std::shared_ptr<const analysis::PlotData> plot);
  void setLog(bool x, bool y);
  /// FigureOptions::free_y: each panel its own y range.
  void setFreeY(bool on);
  bool freeY() const { return freeY_; }
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
  /// A picture of the current plot, size and zoom is still being drawn on a worker
  /// (or is owed: the canvas is shown and its picture is out of date).
  bool rendering() const;
  /// What the current picture drew, per panel and series (analysis::Decimation);
  /// empty before the first picture.
  const FigureLayout& shownLayout() const { return frame_.layout; }
  /// Series drawn reduced in the current picture: how many, their points, the points drawn.
  struct Reduced {
    std::size_t series = 0, points = 0, drawn = 0;
  };
  Reduced reduced() const;

 Q_SIGNALS:
  void zoomChanged();
  /// A new picture is shown (reduced() may have changed).
  void rendered();

 protected:
  void paintEvent(QPaintEvent* e) override;
  void mouseMoveEvent(QMouseEvent* e) override;
  void mousePressEvent(QMouseEvent* e) override;
  void mouseReleaseEvent(QMouseEvent* e) override;
  void mouseDoubleClickEvent(QMouseEvent* e) override;
  void wheelEvent(QWheelEvent* e) override;
  void leaveEvent(QEvent* e) override;
  void resizeEvent(QResizeEvent* e) override;
  void showEvent(QShowEvent* e) override;

 private:
  /// What a picture depends on.
  struct Key {
    const analysis::PlotData* plot = nullptr;
    QSize pixels;
    qreal dpr = 1;
    int dpi = 96;
    FigureOptions options;  // highlight unset
    bool operator==(const Key& o) const;
  };
  struct Frame {
    Key key;
    std::shared_ptr<const analysis::PlotData> plot;  // keeps key.plot alive (and unique)
    QImage image;
    FigureLayout layout;
  };
  double ptPerPx() const;
  int panelAt(const QPointF& pt) const;
  Key currentKey() const;
  bool current() const { return frame_.key == currentKey() && !frame_.image.isNull(); }
  bool drawsOnWorker() const;
  /// Draws the picture of `key` (any thread).
  static Frame draw(const Key& key, std::shared_ptr<const analysis::PlotData> plot);
  std::size_t pointCount() const;
  void startDrawing();
  /// A picture is owed (the plot, size or view changed): draws it from the event
  /// loop (several changes in a row make one picture) when the canvas is shown
  /// with a size and the plot is drawn on a worker.
  void owePicture();

  std::shared_ptr<const analysis::AnalysisTable> table_;
  std::shared_ptr<const analysis::PlotData> plot_;
  bool logX_ = false, logY_ = false;
  bool freeY_ = false;
  double fontPt_ = 9;
  std::optional<ViewRange> view_;
  std::set<std::string> hidden_;
  Frame frame_;
  bool drawing_ = false;  // a worker draws a picture
  bool owed_ = false;     // owePicture() was called; the event loop starts the drawing
  std::size_t points_ = 0;  // plot_->point_count()
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
  /// Each panel its own y range: chosen by the user ("y per panel"), or else on
  /// where the panels' largest values differ 20x or more on a linear y axis.
  void setFreeY(bool on);
  bool freeY() const { return canvas_->freeY(); }
  /// The newest plot (after busy() turns false). Its table is shownTable(), which is
  /// table() once busy() is false.
  std::shared_ptr<const analysis::PlotData> plot() const { return plot_; }
  std::shared_ptr<const analysis::AnalysisTable> shownTable() const { return shownTable_; }
  /// A plot is being worked out, or its picture drawn (a large plot is drawn on a worker).
  bool busy() const { return pending_ > 0 || canvas_->rendering(); }
  bool hasData() const { return plot_ && !plot_->empty(); }
  /// Legend texts in order, exactly as shown.
  QStringList legendTexts() const;
  /// Whether the legend has an entry per colour and one per marker (a sweep of two
  /// fields with 8 curves or more, as factoredLegend() finds it) rather than one per curve.
  bool legendFactored() const { return factoredLegend_; }
  /// Hides or shows the series of this label (clicking a per-curve legend entry does).
  void setSeriesVisible(const QString& label, bool visible);
  /// What the chart area says when nothing can be drawn ("" when something is drawn).
  QString emptyText() const;
  /// The notes line above the chart, as shown.
  QString notesText() const;
  /// The notes that qualify the plot's numbers (a report's, without the note
  /// on the picture's screen resolution).
  QStringList dataNotes() const;
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
    std::shared_ptr<const PointsModel::Content> points;  // the points table's rows
    bool nonPositiveX = false;                           // some x <= 0 (not drawn on a log x axis)
    double panelSpread = 0;                              // the panels' largest y values, largest / smallest (0: one panel)
    double logPanelShare = 1;  // on a log y: the widest panel's own decades / all panels' (1: one panel)
  };
  /// The plot of `q` on `table`, with what showing it needs (on a worker).
  static Job makeJob(const analysis::AnalysisTable& table, std::shared_ptr<const analysis::AnalysisTable> shared,
                     const analysis::PlotQuery& q);
  void replot();
  /// Runs `work` on a worker as the newest request; `newTable`: it also chose the
  /// query of a table just set (the pickers are filled from it).
  void start(std::function<Job()> work, bool newTable);
  void setPickersEnabled(bool on);
  /// logX_ / logY_ from query_'s columns in `t` (unless setLog() chose them).
  void logDefaults(const analysis::AnalysisTable& t);
  /// Free y where the panels' largest values differ this much (linear y only).
  static constexpr double kFreeYSpread = 20;
  /// Free y as chosen, for the canvas and the button.
  void applyFreeY(bool on);
  /// Unless setFreeY() chose: free y on a linear axis whose panels' largest values differ kFreeYSpread x,
  /// or on a log axis whose panels each span a small share of the shared decades (analysis_view.cc).
  void autoFreeY();
  void fillPickers();
  void showPlot(std::shared_ptr<const analysis::AnalysisTable> table, Job job);
  /// The notes line: the plot's notes and, when the picture reduced series, that it did.
  void updateNotes();
  void fillLegend();
  void styleLegend();  // strike out the entries whose curves are all hidden; the canvas hides them
  void fillPointsTable(std::shared_ptr<const PointsModel::Content> content);
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
  bool freeYByCaller_ = false;     // setFreeY() since setTable(): no automatic choice
  QString message_;
  double panelSpread_ = 0;         // the shown plot's Job::panelSpread
  double logPanelShare_ = 1;       // its Job::logPanelShare
  std::set<std::string> hidden_;   // series keys hidden through the legend
  bool factoredLegend_ = false;    // the legend has an entry per colour and per marker (fillLegend)

  FieldCombo *x_, *facet_;
  QComboBox *y_, *baseline_;
  QToolButton *logXBtn_, *logYBtn_, *freeYBtn_, *seriesBtn_, *filterBtn_;
  QLabel* notes_;
  QStringList plotNotes_;          // the notes of the plot shown (updateNotes adds the picture's)
  FigureCanvas* canvas_;
  QListWidget* legend_;
  QTableView* points_;
  PointsModel* pointsModel_;
  QTabWidget* inner_;
};

}  // namespace scin::ui
