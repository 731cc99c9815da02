#include "ui/analysis_view.h"

#include <algorithm>

#include <QAction>
#include <QApplication>
#include <QClipboard>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QKeySequence>
#include <QLocale>
#include <QMenu>
#include <QPainter>
#include <QPushButton>
#include <QShortcut>
#include <QSplitter>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include "base/csv.h"

namespace scin::ui {

using analysis::AnalysisTable;
using analysis::PlotData;
using analysis::PlotQuery;

namespace {

// A legend entry's icon: a line of the curve's colour and dash, its marker on it (none: -1).
QIcon legendIcon(const QColor& color, Qt::PenStyle dash, int marker, bool covering) {
  QPixmap pm(36, 16);
  pm.fill(Qt::transparent);
  QPainter p(&pm);
  p.setRenderHint(QPainter::Antialiasing);
  QPen pen(color, 2);
  pen.setStyle(dash);
  if (covering) setCoveringDash(pen);
  p.setPen(pen);
  p.drawLine(QPointF(1, 8), QPointF(35, 8));
  if (marker >= 0) drawMarker(&p, marker, QPointF(18, 8), 8, color);
  return QIcon(pm);
}

// The query a new table is shown with: its defaults, keeping the user's
// choices (`picked` x, the previous query's y and facet) when the table has them.
PlotQuery resolveQuery(const AnalysisTable& t, const PlotQuery& byDefault, const std::string& pickedX, const PlotQuery& prev) {
  PlotQuery q = byDefault;
  // (Only an x the user picked: the default of another run, e.g. algorithm for
  // a run of one size, is not a choice to keep.)
  if (!pickedX.empty() && t.axis_index(pickedX) >= 0 && t.distinct(t.axis_index(pickedX)).size() > 1) q.x = pickedX;
  if (t.metric_index(prev.y) >= 0) q.y = prev.y;
  if (!prev.facet.empty() && t.axis_index(prev.facet) >= 0 && prev.facet != q.x)
    q.facet = prev.facet;
  else if (q.x != byDefault.x)
    q.facet = analysis::auto_facet(t, q);  // the default's panels were chosen for another x
  return q;
}

QToolButton* toolButton(const QString& text, const QString& tip) {
  auto* b = new QToolButton;
  b->setText(text);
  b->setToolTip(tip);
  b->setToolButtonStyle(Qt::ToolButtonTextOnly);
  return b;
}

}  // namespace

AnalysisView::AnalysisView(QWidget* parent) : QWidget(parent) {
  setObjectName(QStringLiteral("analysis"));
  auto* lay = new QVBoxLayout(this);
  lay->setContentsMargins(2, 2, 2, 2);
  // Pickers, in two rows so they fit a narrow window.
  auto* row1 = new QHBoxLayout;
  auto* row2 = new QHBoxLayout;
  x_ = new FieldCombo;
  y_ = new QComboBox;
  facet_ = new FieldCombo;
  baseline_ = new QComboBox;
  for (QComboBox* c : {static_cast<QComboBox*>(x_), y_, static_cast<QComboBox*>(facet_), baseline_})
    c->setSizeAdjustPolicy(QComboBox::AdjustToContents);
  x_->setObjectName(QStringLiteral("analysisX"));
  facet_->setObjectName(QStringLiteral("analysisFacet"));
  x_->setPurpose(tr("The x axis: message size or any swept parameter"));
  y_->setToolTip(tr("The metric on the y axis, with its unit"));
  facet_->setPurpose(tr("One panel per value of this axis (small multiples)"));
  baseline_->setToolTip(tr("Speedups are baseline time ÷ time at the same other axis values"));
  logXBtn_ = toolButton(tr("log x"), tr("Logarithmic x axis (off: linear)"));
  logYBtn_ = toolButton(tr("log y"), tr("Logarithmic y axis (off: linear)"));
  freeYBtn_ = toolButton(tr("y per panel"),
                         tr("Each panel its own y scale (on by itself where the panels' largest values differ 20x or "
                            "more on a linear axis); off: one scale to compare panels"));
  for (QToolButton* b : {logXBtn_, logYBtn_, freeYBtn_}) b->setCheckable(true);
  seriesBtn_ = toolButton(tr("Series…"), tr("Fields that split curves; the others are held at one value"));
  filterBtn_ = toolButton(tr("Filter…"), tr("Which values of each axis are shown"));
  for (QToolButton* b : {seriesBtn_, filterBtn_}) {
    b->setPopupMode(QToolButton::InstantPopup);
    // (The "…" says it opens a menu; the style's arrow was drawn over it.)
    b->setStyleSheet(QStringLiteral("QToolButton::menu-indicator { image: none; width: 0px; }"));
  }
  auto* reset = new QPushButton(tr("Reset zoom"));
  row1->addWidget(new QLabel(tr("Y")));
  row1->addWidget(y_);
  row1->addWidget(logYBtn_);
  row1->addSpacing(8);
  row1->addWidget(new QLabel(tr("X")));
  row1->addWidget(x_);
  row1->addWidget(logXBtn_);
  row1->addStretch(1);
  row1->addWidget(reset);
  row2->addWidget(new QLabel(tr("Panels by")));
  row2->addWidget(facet_);
  row2->addWidget(freeYBtn_);
  row2->addWidget(seriesBtn_);
  row2->addWidget(filterBtn_);
  row2->addWidget(new QLabel(tr("Speedup baseline")));
  row2->addWidget(baseline_);
  row2->addStretch(1);
  lay->addLayout(row1);
  lay->addLayout(row2);
  notes_ = new QLabel;
  notes_->setWordWrap(true);
  notes_->setStyleSheet(QStringLiteral("color:#555"));
  lay->addWidget(notes_);

  inner_ = new QTabWidget;
  inner_->setDocumentMode(true);
  auto* split = new QSplitter(Qt::Horizontal);
  canvas_ = new FigureCanvas;
  legend_ = new QListWidget;
  legend_->setObjectName(QStringLiteral("analysisLegend"));
  legend_->setWordWrap(true);  // long entries wrap; nothing is elided
  legend_->setTextElideMode(Qt::ElideNone);
  legend_->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  legend_->setResizeMode(QListView::Adjust);
  legend_->setIconSize(QSize(36, 16));
  legend_->setMinimumWidth(120);
  legend_->setSelectionMode(QAbstractItemView::NoSelection);
  legend_->setToolTip(tr("Click an entry to hide or show its curves"));
  // Hundreds of wrapped entries are laid out a batch per event, not in one block.
  legend_->setLayoutMode(QListView::Batched);
  legend_->setBatchSize(64);
  // An entry stands for one curve, or (a factored legend) for every curve of its colour or
  // marker: a click hides them all, or shows them all where all were hidden.
  connect(legend_, &QListWidget::itemClicked, this, [this](QListWidgetItem* it) {
    const QStringList keys = it->data(Qt::UserRole).toStringList();
    const bool allHidden = std::all_of(keys.begin(), keys.end(), [this](const QString& k) { return hidden_.count(k.toStdString()) > 0; });
    for (const QString& k : keys) {
      if (allHidden) hidden_.erase(k.toStdString());
      else hidden_.insert(k.toStdString());
    }
    styleLegend();
  });
  split->addWidget(canvas_);
  split->addWidget(legend_);
  split->setStretchFactor(0, 1);
  split->setStretchFactor(1, 0);
  split->setSizes({700, 200});
  split->setChildrenCollapsible(false);
  inner_->addTab(split, tr("Chart"));
  points_ = new QTableView;
  points_->setObjectName(QStringLiteral("analysisPoints"));
  pointsModel_ = new PointsModel(this);
  points_->setModel(pointsModel_);  // sorts itself (no proxy: 10^5 rows install in O(1))
  points_->setSortingEnabled(true);
  // Column widths from the first rows only (a new plot of 10^5 points would
  // otherwise measure a thousand rows of every column on the GUI thread).
  points_->horizontalHeader()->setResizeContentsPrecision(100);
  points_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  points_->setSelectionBehavior(QAbstractItemView::SelectItems);
  points_->setContextMenuPolicy(Qt::ActionsContextMenu);
  auto* copy = new QAction(tr("Copy (tab-separated)"), points_);
  copy->setShortcut(QKeySequence::Copy);
  copy->setShortcutContext(Qt::WidgetShortcut);
  connect(copy, &QAction::triggered, this, &AnalysisView::copySelection);
  points_->addAction(copy);
  auto* copyAll = new QAction(tr("Copy all points"), points_);
  connect(copyAll, &QAction::triggered, this, [this] {
    points_->selectAll();
    copySelection();
  });
  points_->addAction(copyAll);
  inner_->addTab(points_, tr("Points"));
  lay->addWidget(inner_, 1);

  auto changed = [this] {
    if (filling_ || resolving_) return;
    query_.x = x_->currentData().toString().toStdString();
    pickedX_ = query_.x;
    query_.y = y_->currentData().toString().toStdString();
    query_.facet = facet_->currentData().toString().toStdString();
    query_.baseline = baseline_->currentText().toStdString();
    replot();
  };
  for (QComboBox* c : {static_cast<QComboBox*>(x_), y_, static_cast<QComboBox*>(facet_), baseline_})
    connect(c, &QComboBox::activated, this, changed);
  connect(logXBtn_, &QToolButton::toggled, this, [this](bool on) { setLog(on, logY_); });
  connect(logYBtn_, &QToolButton::toggled, this, [this](bool on) { setLog(logX_, on); });
  connect(freeYBtn_, &QToolButton::toggled, this, &AnalysisView::setFreeY);
  connect(reset, &QPushButton::clicked, canvas_, &FigureCanvas::resetZoom);
  connect(canvas_, &FigureCanvas::rendered, this, &AnalysisView::updateNotes);
  setMessage(tr("Select a stored run in the Runs dock (or run the sweep, Ctrl+R) to analyse it here."));
}

void AnalysisView::setMessage(const QString& text) {
  message_ = text;
  if (table_) return;
  auto p = std::make_shared<PlotData>();
  p->empty_reason = text.toStdString();
  showPlot(nullptr, Job{query_, p, PointsModel::build(nullptr, p), false});
}

void AnalysisView::setTable(std::shared_ptr<const AnalysisTable> table, std::optional<PlotQuery> defaults) {
  table_ = std::move(table);
  hidden_.clear();
  if (!table_) {
    ++generation_;  // a plot of the previous table still on a worker is not shown
    resolving_ = false;
    setPickersEnabled(true);
    setMessage(message_);
    return;
  }
  // The query (the defaults, the user's axes kept when the new run has them)
  // and its plot are worked out on a worker; the pickers wait for them.
  resolving_ = true;
  logByCaller_ = false;
  freeYByCaller_ = false;
  setPickersEnabled(false);
  start([table = table_, defaults = std::move(defaults), picked = pickedX_, prev = query_]() -> Job {
          const PlotQuery q = resolveQuery(*table, defaults ? *defaults : analysis::default_query(*table), picked, prev);
          return makeJob(*table, table, q);
        },
        true);
}

void AnalysisView::setPickersEnabled(bool on) {
  for (QWidget* w : std::initializer_list<QWidget*>{x_, y_, facet_, baseline_, seriesBtn_, filterBtn_}) w->setEnabled(on);
}

void AnalysisView::fillPickers() {
  filling_ = true;
  x_->clear();
  y_->clear();
  facet_->clear();
  baseline_->clear();
  facet_->addItem(tr("(one panel)"), QString());
  if (table_) {
    for (const auto& c : table_->axes) {
      const int idx = table_->axis_index(c.key);
      const auto n = table_->distinct(idx).size();
      const QString text = QStringLiteral("%1 — %2 (%3 values)").arg(QString::fromStdString(c.key), QString::fromStdString(c.label)).arg(n);
      x_->addItem(text, QString::fromStdString(c.key));
      if (n > 1) facet_->addItem(text, QString::fromStdString(c.key));
    }
    for (const auto& c : table_->metrics)
      y_->addItem(QStringLiteral("%1 (%2)").arg(QString::fromStdString(c.label),
                                                 c.unit.empty() ? QString::fromStdString(c.key) : QString::fromStdString(c.unit)),
                  QString::fromStdString(c.key));
    for (const auto& v : table_->distinct(table_->axis_index("collective.algorithm")))
      baseline_->addItem(QString::fromStdString(v.text));
  }
  x_->setCurrentIndex(std::max(0, x_->findData(QString::fromStdString(query_.x))));
  y_->setCurrentIndex(std::max(0, y_->findData(QString::fromStdString(query_.y))));
  facet_->setCurrentIndex(std::max(0, facet_->findData(QString::fromStdString(query_.facet))));
  baseline_->setCurrentText(QString::fromStdString(query_.baseline));
  {
    QSignalBlocker a(logXBtn_), b(logYBtn_);
    logXBtn_->setChecked(logX_);
    logYBtn_->setChecked(logY_);
  }
  filling_ = false;
}

void AnalysisView::rebuildMenus() {
  delete seriesBtn_->menu();
  delete filterBtn_->menu();
  auto* sm = new QMenu(seriesBtn_);
  auto* fm = new QMenu(filterBtn_);
  seriesBtn_->setMenu(sm);
  filterBtn_->setMenu(fm);
  if (!table_) return;
  sm->addSection(tr("Split curves by (unchecked: held at one value)"));
  for (const auto& c : table_->axes) {
    const auto& values = table_->distinct(table_->axis_index(c.key));
    if (values.size() < 2) continue;
    QAction* a = sm->addAction(QString::fromStdString(c.key));
    a->setCheckable(true);
    a->setChecked(query_.series.empty() ||
                  std::find(query_.series.begin(), query_.series.end(), c.key) != query_.series.end());
    connect(a, &QAction::toggled, this, [this, sm] {
      if (resolving_) return;  // the menus are rebuilt for the new table
      query_.series.clear();
      bool all = true;
      for (QAction* x : sm->actions())
        if (x->isCheckable()) {
          if (x->isChecked()) query_.series.push_back(x->text().toStdString());
          else all = false;
        }
      if (all) query_.series.clear();
      replot();
    });
    // Filled when first opened, with at most kMaxListed values: an axis of 50000
    // values would otherwise make as many actions on the GUI thread for every plot.
    QMenu* sub = fm->addMenu(QString::fromStdString(c.key));
    connect(sub, &QMenu::aboutToShow, this, [this, sub, key = c.key] {
      if (!sub->isEmpty() || !table_) return;
      constexpr std::size_t kMaxListed = 200;
      const auto& values = table_->distinct(table_->axis_index(key));
      const auto f = query_.filters.find(key);
      for (std::size_t i = 0; i < values.size() && i < kMaxListed; ++i) {
        QAction* va = sub->addAction(QString::fromStdString(values[i].text));
        va->setCheckable(true);
        va->setChecked(f == query_.filters.end() || f->second.count(values[i].text));
        connect(va, &QAction::toggled, this, [this, sub, key] {
          if (resolving_ || !table_) return;
          // Listed values as checked; the values not listed stay as they were.
          std::map<std::string, bool> listed;
          for (QAction* x : sub->actions())
            if (x->isCheckable()) listed[x->text().toStdString()] = x->isChecked();
          const auto before = query_.filters.find(key);
          std::set<std::string> on;
          bool all = true;
          for (const auto& v : table_->distinct(table_->axis_index(key))) {
            const auto l = listed.find(v.text);
            const bool in = l != listed.end() ? l->second : (before == query_.filters.end() || before->second.count(v.text) > 0);
            if (in) on.insert(v.text);
            else all = false;
          }
          if (all) query_.filters.erase(key);
          else query_.filters[key] = on;
          replot();
        });
      }
      if (values.size() > kMaxListed)
        sub->addAction(tr("+ %1 more values, not listed").arg(QLocale().toString(static_cast<qulonglong>(values.size() - kMaxListed))))
            ->setEnabled(false);
    });
  }
}

void AnalysisView::setQuery(const PlotQuery& q) {
  query_ = q;
  pickedX_ = q.x;
  if (resolving_) {
    // Given before the new table's own query was worked out: this one wins
    // (replot() supersedes that job), with the log scales of its columns.
    resolving_ = false;
    setPickersEnabled(true);
    if (table_) logDefaults(*table_);
  }
  fillPickers();
  rebuildMenus();
  replot();
}

void AnalysisView::logDefaults(const AnalysisTable& t) {
  if (logByCaller_) return;  // setLog() chose the scales
  const analysis::Column* xc = t.find(query_.x == "bytes" ? std::string("collective.bytes") : query_.x);
  const analysis::Column* yc = t.find(query_.y);
  logX_ = xc && xc->log_default;
  logY_ = yc && yc->log_default;
}

void AnalysisView::setLog(bool x, bool y) {
  logByCaller_ = true;
  logX_ = x;
  logY_ = y;
  {
    QSignalBlocker a(logXBtn_), b(logYBtn_);
    logXBtn_->setChecked(x);
    logYBtn_->setChecked(y);
  }
  canvas_->setLog(x, y);
  autoFreeY();
  updateNotes();
}

namespace {
// The largest of the panels' largest y values over the smallest (0: one panel,
// or a panel with no positive value).
double panelSpread(const PlotData& plot) {
  if (plot.facets.size() < 2) return 0;
  double lo = INFINITY, hi = 0;
  for (const auto& f : plot.facets) {
    double top = 0;
    for (const auto& s : f.series)
      for (const auto& pt : s.points)
        if (std::isfinite(pt.y)) top = std::max(top, pt.y);
    if (!(top > 0)) return 0;
    lo = std::min(lo, top);
    hi = std::max(hi, top);
  }
  return hi / lo;
}

// On a log y, free y where every panel spans at most this share of the decades all
// of them span together, and those are kLogFreeYDecades or more: a shared axis then
// leaves each panel a flat band (a sweep of a small effect at sizes 10^5 apart).
constexpr double kLogFreeYShare = 0.4, kLogFreeYDecades = 2;

// On a log y axis: the widest panel's own span in decades over the span of all
// panels together (1: one panel, or values not all positive).
double logPanelShare(const PlotData& plot) {
  if (plot.facets.size() < 2) return 1;
  double lo = INFINITY, hi = 0, widest = 0;
  for (const auto& f : plot.facets) {
    double flo = INFINITY, fhi = 0;
    for (const auto& s : f.series)
      for (const auto& pt : s.points)
        if (std::isfinite(pt.y)) {
          if (!(pt.y > 0)) return 1;
          flo = std::min(flo, pt.y);
          fhi = std::max(fhi, pt.y);
        }
    if (!(fhi > 0)) continue;
    widest = std::max(widest, std::log10(fhi / flo));
    lo = std::min(lo, flo);
    hi = std::max(hi, fhi);
  }
  const double all = hi > 0 ? std::log10(hi / lo) : 0;
  return all >= kLogFreeYDecades ? widest / all : 1;
}
}  // namespace

void AnalysisView::setFreeY(bool on) {
  freeYByCaller_ = true;
  applyFreeY(on);
  updateNotes();
}

void AnalysisView::applyFreeY(bool on) {
  {
    QSignalBlocker b(freeYBtn_);
    freeYBtn_->setChecked(on);
  }
  canvas_->setFreeY(on);
}

void AnalysisView::autoFreeY() {
  freeYBtn_->setEnabled(plot_ && plot_->facets.size() > 1);
  if (freeYByCaller_ || !plot_) return;
  applyFreeY(logY_ ? logPanelShare_ <= kLogFreeYShare : panelSpread_ >= kFreeYSpread);
}

void AnalysisView::replot() {
  if (!table_ || resolving_) return;  // (a new table's job plots its own query)
  start([table = table_, q = query_]() -> Job { return makeJob(*table, table, q); }, false);
}

void AnalysisView::start(std::function<Job()> work, bool newTable) {
  const quint64 gen = ++generation_;
  ++pending_;
  auto* watcher = new QFutureWatcher<Job>(this);
  connect(watcher, &QFutureWatcher<Job>::finished, this, [this, watcher, gen, newTable, table = table_] {
    watcher->deleteLater();
    --pending_;
    if (gen != generation_) return;  // a newer table or query superseded this one
    Job job = watcher->result();
    if (newTable) {
      query_ = std::move(job.query);
      logDefaults(*table);
      resolving_ = false;
      fillPickers();
      rebuildMenus();
      setPickersEnabled(true);
    }
    showPlot(table, std::move(job));
    Q_EMIT plotReady();
  });
  watcher->setFuture(QtConcurrent::run(std::move(work)));
}

AnalysisView::Job AnalysisView::makeJob(const AnalysisTable& table, std::shared_ptr<const AnalysisTable> shared,
                                        const PlotQuery& q) {
  Job job;
  job.query = q;
  auto plot = std::make_shared<const PlotData>(analysis::make_plot(table, q));
  if (!plot->empty() && !plot->x_categorical)
    for (const auto& f : plot->facets)
      for (const auto& s : f.series)
        for (const auto& pt : s.points) job.nonPositiveX = job.nonPositiveX || !(pt.x > 0);
  job.panelSpread = panelSpread(*plot);
  job.logPanelShare = logPanelShare(*plot);
  job.points = PointsModel::build(std::move(shared), plot);
  job.plot = std::move(plot);
  return job;
}

void AnalysisView::showPlot(std::shared_ptr<const AnalysisTable> table, Job job) {
  shownTable_ = std::move(table);
  plot_ = std::move(job.plot);
  panelSpread_ = job.panelSpread;
  logPanelShare_ = job.logPanelShare;
  canvas_->setLog(logX_, logY_);
  autoFreeY();
  canvas_->setPlot(shownTable_, plot_);
  plotNotes_.clear();
  if (shownTable_ && shownTable_->skipped > 0) {
    // Each distinct reason (the table keeps up to five), not the first alone: the fabrics
    // example skips NVLS on the FPGA preset and every in-switch algorithm on the mesh.
    QStringList why;
    for (const std::string& r : shownTable_->skip_reasons) why << QString::fromStdString(r);
    plotNotes_ << tr("%n point(s) skipped or failed", "", static_cast<int>(shownTable_->skipped)) +
                      (why.isEmpty() ? QString() : QStringLiteral(" (%1)").arg(why.join(QStringLiteral("; "))));
  }
  for (const auto& n : plot_->notes) plotNotes_ << QString::fromStdString(n);
  if (!plot_->empty() && logX_ && job.nonPositiveX) plotNotes_ << tr("values ≤ 0 are not drawn on a log axis");
  updateNotes();
  fillLegend();
  fillPointsTable(std::move(job.points));
}

QString AnalysisView::notesText() const { return notes_->text(); }

QStringList AnalysisView::dataNotes() const {
  QStringList notes = plotNotes_;
  // Panels on scales of their own must not be compared by height: say so.
  if (freeY() && plot_ && plot_->facets.size() > 1) {
    const double spread = panelSpread_;
    notes << (spread > 0 ? tr("each panel has its own y scale (their largest values differ %1x); 'y per panel' off "
                              "puts them on one").arg(QString::number(spread, 'f', spread >= 10 ? 0 : 1))
                         : tr("each panel has its own y scale; 'y per panel' off puts them on one"));
  }
  return notes;
}

void AnalysisView::updateNotes() {
  QStringList notes = dataNotes();
  // The picture drew some series at screen resolution: say so (the tracker says it per series).
  const FigureCanvas::Reduced r = canvas_->reduced();
  if (r.series > 0 && plot_ && !plot_->empty()) {
    const QLocale loc;
    // (No count that follows the canvas's size: the line's height must not change
    // with the picture, or a resize would draw again, and again.)
    notes << tr("%n series drawn at screen resolution (%1 points; zoom in for detail, the Points tab lists every point)", "",
                static_cast<int>(r.series))
                 .arg(loc.toString(static_cast<qulonglong>(r.points)));
  }
  const QString text = notes.join(QStringLiteral(" · "));
  if (text != notes_->text()) notes_->setText(text);
  notes_->setVisible(!notes.isEmpty());
}

void AnalysisView::fillLegend() {
  legend_->clear();
  factoredLegend_ = false;
  if (!plot_ || plot_->empty()) return;
  const std::vector<const analysis::Series*> curves = plot_->legend();
  // Many curves whose colour and marker each follow one field (a sweep of two axes): an
  // entry per colour and one per marker, as the exported figure's legend has them, not a
  // wrapped entry per curve ("regulation=paced · waves=16 (= regulation=none)" took three
  // lines, twelve times).
  const std::vector<LegendItem> factored = curves.size() >= 8 ? factoredLegend(*plot_, curves) : std::vector<LegendItem>{};
  if (!factored.empty()) {
    factoredLegend_ = true;
    std::map<std::string, QString> labelOf;
    for (const auto* s : curves) labelOf[s->key] = QString::fromStdString(s->label);
    for (const LegendItem& item : factored) {
      QStringList keys, labels;
      for (const std::string& k : item.keys) {
        keys << QString::fromStdString(k);
        labels << labelOf[k];
      }
      auto* it = new QListWidgetItem(legendIcon(item.color, item.dash, item.marker, item.covering), item.text);
      // (Qt::UserRole: the keys of the curves the entry stands for)
      it->setData(Qt::UserRole, keys);
      it->setToolTip(tr("%n curve(s): %1 (click to hide or show them all)", nullptr, static_cast<int>(keys.size()))
                         .arg(labels.join(QStringLiteral("; "))));
      legend_->addItem(it);
    }
  } else {
    // One icon per look (colour, marker, dash): 800 curves share a few dozen.
    std::map<std::tuple<QRgb, int, int>, QIcon> icons;
    for (const auto* s : curves) {
      const SeriesLook look = seriesLook(*plot_, *s);
      QIcon& icon = icons[{look.color.rgba(), look.marker, s->same_as.empty() ? static_cast<int>(look.dash) : -1}];
      if (icon.isNull()) icon = legendIcon(look.color, look.dash, look.marker, !s->same_as.empty());
      auto* it = new QListWidgetItem(icon, legendText(*plot_, *s));
      it->setData(Qt::UserRole, QStringList{QString::fromStdString(s->key)});
      legend_->addItem(it);
    }
  }
  // Keys hidden before stay hidden if the new plot has them.
  std::set<std::string> keep;
  for (const auto* s : curves)
    if (hidden_.count(s->key)) keep.insert(s->key);
  hidden_ = keep;
  styleLegend();
}

void AnalysisView::styleLegend() {
  // An entry is struck out when every curve it stands for is hidden.
  for (int i = 0; i < legend_->count(); ++i) {
    QListWidgetItem* it = legend_->item(i);
    const QStringList keys = it->data(Qt::UserRole).toStringList();
    const bool off = !keys.isEmpty() && std::all_of(keys.begin(), keys.end(), [this](const QString& k) {
      return hidden_.count(k.toStdString()) > 0;
    });
    QFont f = it->font();
    f.setStrikeOut(off);
    it->setFont(f);
    it->setForeground(off ? QColor(0x99, 0x99, 0x99) : palette().color(QPalette::Text));
  }
  canvas_->setHidden(hidden_);
}

void AnalysisView::setSeriesVisible(const QString& label, bool visible) {
  if (!plot_) return;
  for (const auto* s : plot_->legend()) {
    if (QString::fromStdString(s->label) != label) continue;
    if (visible) hidden_.erase(s->key);
    else hidden_.insert(s->key);
  }
  styleLegend();
}

QStringList AnalysisView::legendTexts() const {
  QStringList out;
  for (int i = 0; i < legend_->count(); ++i) out << legend_->item(i)->text();
  return out;
}

QString AnalysisView::emptyText() const {
  return plot_ && plot_->empty() ? QString::fromStdString(plot_->empty_reason) : QString();
}

void AnalysisView::fillPointsTable(std::shared_ptr<const PointsModel::Content> content) {
  pointsModel_->setContent(std::move(content));
  points_->resizeColumnsToContents();
}

void AnalysisView::copySelection() {
  QModelIndexList sel = points_->selectionModel()->selectedIndexes();
  std::sort(sel.begin(), sel.end(), [](const QModelIndex& a, const QModelIndex& b) {
    return a.row() != b.row() ? a.row() < b.row() : a.column() < b.column();
  });
  if (!sel.isEmpty()) QApplication::clipboard()->setText(PointsModel::copyText(sel));
}

bool AnalysisView::exportFigure(const QString& path, const FigureSize& size, bool title, QString* error) const {
  if (!shownTable_ || !plot_) {
    if (error) *error = message_.isEmpty() ? tr("no stored run is shown") : message_;
    return false;
  }
  FigureOptions o = canvas_->options();
  o.legend = true;
  o.title = title;
  return exportPlot(*shownTable_, *plot_, o, size, path, error);
}

QImage AnalysisView::render(const FigureSize& size, double dpi) const {
  if (!plot_) return {};
  FigureOptions o = canvas_->options();
  o.legend = true;
  return renderPlot(*plot_, o, size, dpi);
}

}  // namespace scin::ui
