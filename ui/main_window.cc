#include "ui/main_window.h"

#include <algorithm>
#include <utility>

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QDialog>
#include <QDialogButtonBox>
#include <QDir>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QFutureWatcher>
#include <QEventLoop>
#include <QInputDialog>
#include <QLineEdit>
#include <QProxyStyle>
#include <QPushButton>
#include <QLabel>
#include <QKeySequence>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QSettings>
#include <QSpinBox>
#include <QStandardPaths>
#include <QStatusBar>
#include <QStyleFactory>
#include <QTimer>
#include <QToolBar>
#include <QUndoStack>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include <sqlite3.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "base/error.h"
#include "fabric/preset.h"
#include "base/version.h"
#include "analysis/table.h"
#include "calib/compare.h"
#include "ui/analysis_view.h"
#include "analysis/combine.h"
#include "ui/charts.h"
#include "ui/charts_measured.h"
#include "ui/exporter.h"
#include "ui/fabric_doc.h"
#include "ui/fabric_editor.h"
#include "ui/format.h"
#include "ui/preview.h"
#include "ui/run_browser.h"
#include "ui/run_controller.h"
#include "ui/spec_bridge.h"
#include "ui/sweep_editor.h"
#include "ui/topology_view.h"
#include "ui/quant_chart.h"
#include "ui/timeline_chart.h"
#include "ui/validation_view.h"

namespace scin::ui {

namespace {

// The chart tabs with half the style's padding beside each label: with the
// docks at their narrowest useful width, the eight tabs fit a 1280-pixel
// laptop screen without scroll arrows (which hid Timeline and half of Quant
// error there).
class CompactTabStyle : public QProxyStyle {
 public:
  using QProxyStyle::QProxyStyle;
  int pixelMetric(PixelMetric m, const QStyleOption* o, const QWidget* w) const override {
    const int v = QProxyStyle::pixelMetric(m, o, w);
    return m == PM_TabBarTabHSpace ? std::max(8, v / 2) : v;
  }
};

// "with 2 changed parameters (links.bandwidth_GBps, fabric.gpus)", at most
// three named; empty when nothing changed.
QString changedParamsPhrase(const std::vector<std::string>& changed) {
  if (changed.empty()) return {};
  QStringList names;
  for (std::size_t i = 0; i < changed.size() && i < 3; ++i) names << QString::fromStdString(changed[i]);
  if (changed.size() > 3) names << QStringLiteral("…");
  const QString list = names.join(QStringLiteral(", "));
  if (changed.size() == 1) return QObject::tr("with 1 changed parameter (%1)").arg(list);
  return QObject::tr("with %1 changed parameters (%2)").arg(changed.size()).arg(list);
}
constexpr const char* kDefaultPreset = "hgx-h200-8";

// The header's list of what is compared: the algorithms `shown` (every one the
// tool has when empty), in the table's order, each with what it is: "software
// <b>ring</b> / <b>two-shot</b>, NVLink SHARP <b>nvls</b>, and <b>scin-inq</b>
// (INT8 in-network quantisation)".
// Appends `a` to `list` unless it is there (an order of first appearance).
void addOnce(std::vector<std::string>& list, const std::string& a) {
  if (std::find(list.begin(), list.end(), a) == list.end()) list.push_back(a);
}

QString algorithmsPhrase(const std::vector<std::string>& shown) {
  const auto has = [&](const char* a) { return shown.empty() || std::find(shown.begin(), shown.end(), a) != shown.end(); };
  const auto bold = [](const char* a) { return QStringLiteral("<b>%1</b>").arg(QLatin1String(a)); };
  QStringList parts, software, q8;
  for (const char* a : {"ring", "one-shot", "two-shot"})
    if (has(a)) software << bold(a);
  if (!software.isEmpty()) parts << QObject::tr("software %1").arg(software.join(QStringLiteral(" / ")));
  if (has("nvls")) parts << QObject::tr("NVLink SHARP %1").arg(bold("nvls"));
  if (has("scin")) parts << QObject::tr("SCIN's in-switch accelerator %1").arg(bold("scin"));
  if (has("scin-inq")) parts << QObject::tr("%1 (INT8 in-network quantisation)").arg(bold("scin-inq"));
  if (!shown.empty()) {  // (the quantised baselines and the two-tier variant only when shown)
    for (const char* a : {"ring-q8", "two-shot-q8"})
      if (has(a)) q8 << bold(a);
    if (!q8.isEmpty()) parts << QObject::tr("%1 (software, INT8 payloads)").arg(q8.join(QStringLiteral(" / ")));
    if (has("scin-inq-uplink"))
      parts << QObject::tr("%1 (INT8 on the leaf-spine links only)").arg(bold("scin-inq-uplink"));
  }
  if (parts.size() < 2) return parts.join(QString());
  const QString last = parts.takeLast();
  return QObject::tr("%1, and %2").arg(parts.join(QStringLiteral(", ")), last);
}
}

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent), doc_(new FabricDoc(this)) {
  setObjectName(QStringLiteral("MainWindow"));
  setAcceptDrops(true);
  setDockNestingEnabled(true);
  qRegisterMetaType<scin::ui::ResultSet>();

  preview_ = new Preview(this);
  runner_ = new RunController(this);
  redrawTimer_ = new QTimer(this);
  redrawTimer_->setSingleShot(true);
  redrawTimer_->setInterval(40);
  connect(redrawTimer_, &QTimer::timeout, this, &MainWindow::redrawCharts);
  // The tabs not in front follow a complete live preview once the edits pause
  // (a user dragging a value gets no hidden tab repainted between previews:
  // refreshing three of them took ~40 ms of the GUI thread and held back the
  // next preview), a stored run in the next turn of the event loop; then one
  // tab per turn. A tab brought to the front is refreshed at once
  // (currentChanged, below), as are the charts an export or a test asks for
  // (charts()).
  staleTimer_ = new QTimer(this);
  staleTimer_->setSingleShot(true);
  connect(staleTimer_, &QTimer::timeout, this, [this] {
    if (staleCharts_.empty()) return;
    ChartPanel* c = staleCharts_.front();
    staleCharts_.erase(staleCharts_.begin());
    refreshChart(c);
    if (!staleCharts_.empty()) staleTimer_->start(0);
  });

  // Central: what the charts show, then the chart tabs.
  auto* central = new QWidget;
  auto* cl = new QVBoxLayout(central);
  cl->setContentsMargins(4, 4, 4, 0);
  showing_ = new QLabel;
  showing_->setObjectName(QStringLiteral("shownHeader"));
  showing_->setWordWrap(true);
  showing_->setTextFormat(Qt::RichText);
  cl->addWidget(showing_);
  tabs_ = new QTabWidget;
  tabs_->setDocumentMode(true);
  {
    auto* style = new CompactTabStyle(QStyleFactory::create(QApplication::style()->name()));
    style->setParent(tabs_->tabBar());
    tabs_->tabBar()->setStyle(style);
  }
  analysis_ = new AnalysisView;
  tabs_->addTab(analysis_, tr("Analysis"));
  tabs_->setTabToolTip(0, tr("Any axis of the stored run on x, any metric on y, panels per value of an axis"));
  latency_ = new LatencyChart;
  bandwidth_ = new BandwidthChart;
  speedup_ = new SpeedupChart;
  breakdown_ = new BreakdownChart;
  tabs_->addTab(latency_, tr("Latency"));
  tabs_->addTab(bandwidth_, tr("Bandwidth"));
  tabs_->addTab(speedup_, tr("Speedup"));
  tabs_->addTab(breakdown_, tr("Breakdown"));
  tabs_->setTabToolTip(tabs_->indexOf(latency_), tr("Latency vs message size per rank, one curve per algorithm"));
  tabs_->setTabToolTip(tabs_->indexOf(bandwidth_), tr("Bus bandwidth vs message size per rank, one curve per algorithm"));
  tabs_->setTabToolTip(tabs_->indexOf(speedup_), tr("Each algorithm's speedup over a baseline, at each message size"));
  tabs_->setTabToolTip(tabs_->indexOf(breakdown_), tr("What each algorithm's time is made of, term by term, at one message size"));
  // Measured runs of the same fabric: markers on latency and bandwidth, and the Validation tab.
  measured_ = new MeasuredOverlay(this);
  latency_->setMeasured(measured_);
  bandwidth_->setMeasured(measured_);
  validation_ = new ValidationView(measured_);
  tabs_->addTab(validation_, tr("Validation"));
  tabs_->setTabToolTip(tabs_->count() - 1, tr("The model of the stored run shown against measured runs of the same fabric"));
  quant_ = new QuantChart(doc_);
  // Short tab names, so the eight tabs fit beside the docks on a 1366-px laptop
  // screen instead of hiding the last ones behind scroll arrows.
  tabs_->addTab(quant_, tr("Quant error"));
  tabs_->setTabToolTip(tabs_->count() - 1, tr("Quantisation error vs block size, computed live by the data engine for the editors' fabric"));
  const auto engines = engine_names();
  if (std::find(engines.begin(), engines.end(), "packet") != engines.end()) {
    timeline_ = new TimelineChart(doc_);
    tabs_->addTab(timeline_, tr("Timeline"));
    tabs_->setTabToolTip(tabs_->count() - 1, tr("Link timeline: a packet-engine run of the editors' fabric, each link's use over time"));
  }
  cl->addWidget(tabs_, 1);
  connect(tabs_, &QTabWidget::currentChanged, this, [this](int i) {
    auto* c = qobject_cast<ChartPanel*>(tabs_->widget(i));
    if (c && std::find(staleCharts_.begin(), staleCharts_.end(), c) != staleCharts_.end()) {
      std::erase(staleCharts_, c);
      refreshChart(c);
    }
  });
  setCentralWidget(central);

  buildDocks();
  buildActions();
  buildStatusBar();

  connect(preview_, &Preview::ready, this, [this](const ResultSet& rs) {
    if (!showingPreview_ || runner_->running()) return;
    partialPreview_ = !preview_->status().complete;
    setShown(rs, QString());
    partialPreview_ = false;
  });
  connect(preview_, &Preview::progress, this, &MainWindow::onPreviewProgress);
  // The topology's heat map follows the last packet-engine result: the link timeline's run...
  if (auto* tl = qobject_cast<TimelineChart*>(timeline_))
    connect(tl, &TimelineChart::computed, this, [this](const SimResult& r) {
      topology_->setLinkLoads(r, QStringLiteral("%1, %2 per rank").arg(QString::fromStdString(r.algorithm), sizeText(r.bytes)));
    });
  // An edit switches the charts back to the live preview of the edited experiment.
  auto edited = [this] {
    setModified(true);
    if (!runner_->running()) runBrowser_->tree()->clearSelection();
    requestPreview();
  };
  connect(doc_, &FabricDoc::changed, this, edited);
  connect(sweepEditor_, &SweepEditor::changed, this, edited);
  connect(runner_, &RunController::pointsArrived, this, &MainWindow::onPoints);
  connect(runner_, &RunController::progress, this, &MainWindow::onProgress);
  connect(runner_, &RunController::finished, this, &MainWindow::onRunFinished);
  connect(runner_, &RunController::estimated, this, [this](const QString& text) {
    runEstimate_ = text;
    rate_->setText(tr("starting… (%1)").arg(text));
    rate_->setToolTip(tr("The sweep's %1 on one core, as `scin sweep` estimates it.").arg(text));
  });
  connect(runBrowser_, &RunBrowser::selectionChanged, this, [this](const std::vector<std::int64_t>& ids) {
    if (runner_->running()) return;
    if (ids.empty()) showPreview();
    else showRuns(ids);
  });
  connect(runBrowser_, &RunBrowser::resumeRequested, this, [this](std::int64_t id) { resumeRun(id); });
  connect(runBrowser_, &RunBrowser::error, this, [this](const QString& m) { showError(tr("Run browser"), m); });

  // Start on the default experiment: the seed's comparison on an 8-GPU H200-class fabric.
  try {
    doc_->resetConfig(load_preset(kDefaultPreset));
  } catch (const Error& e) {
    lastError_ = QString::fromUtf8(e.what());
  }
  restoreSettings();
  setModified(false);
  requestPreview();
}

MainWindow::~MainWindow() {
  preview_->cancel();  // never waits: a preview worker drops its result
  runner_->cancel();
  runner_->wait();
}

// --- construction -----------------------------------------------------------

void MainWindow::buildDocks() {
  auto dock = [this](const QString& title, const QString& name, QWidget* w, Qt::DockWidgetArea area) {
    auto* d = new QDockWidget(title, this);
    d->setObjectName(name);
    d->setWidget(w);
    addDockWidget(area, d);
    return d;
  };
  fabricEditor_ = new FabricEditor(doc_);
  topology_ = new TopologyView(doc_);
  sweepEditor_ = new SweepEditor(doc_);
  runBrowser_ = new RunBrowser;
  // Above the editors, while a stored run is shown: the run's fabric, one click from the editors.
  auto* fabPane = new QWidget;
  auto* fabLayout = new QVBoxLayout(fabPane);
  fabLayout->setContentsMargins(0, 0, 0, 0);
  fabLayout->setSpacing(2);
  runFabricBar_ = new QWidget;
  runFabricBar_->setObjectName(QStringLiteral("runFabricBar"));
  auto* barLayout = new QVBoxLayout(runFabricBar_);
  barLayout->setContentsMargins(4, 4, 4, 4);
  runFabricText_ = new QLabel;
  runFabricText_->setWordWrap(true);
  runFabricText_->setStyleSheet(QStringLiteral("QLabel { background: #eef4fb; border: 1px solid #b8cce4; padding: 4px; }"));
  auto* useFabric = new QPushButton(tr("Use this run's fabric"));
  useFabric->setObjectName(QStringLiteral("useRunFabric"));
  useFabric->setToolTip(tr("Put the stored run's fabric (its preset with its overrides) in the editors: an undoable "
                           "edit; the live preview follows when no run is selected."));
  connect(useFabric, &QPushButton::clicked, this, [this] {
    if (runFabric_) doc_->loadConfig(*runFabric_, tr("fabric of run #%1").arg(runFabricId_));
  });
  barLayout->addWidget(runFabricText_);
  barLayout->addWidget(useFabric, 0, Qt::AlignLeft);
  runFabricBar_->hide();
  fabLayout->addWidget(runFabricBar_);
  fabLayout->addWidget(fabricEditor_, 1);
  QDockWidget* fab = dock(tr("Fabric"), QStringLiteral("fabricDock"), fabPane, Qt::LeftDockWidgetArea);
  // The picture, and under it what it shows in words (TopologyView::caption).
  auto* topoPane = new QWidget;
  auto* topoLayout = new QVBoxLayout(topoPane);
  topoLayout->setContentsMargins(0, 0, 0, 0);
  topoLayout->setSpacing(2);
  auto* topoCaption = new QLabel;
  topoCaption->setObjectName(QStringLiteral("topologyCaption"));
  topoCaption->setWordWrap(true);
  topoCaption->setAlignment(Qt::AlignHCenter);
  topoCaption->setStyleSheet(QStringLiteral("QLabel { color: #333; padding: 0 4px 2px 4px; }"));
  auto showCaption = [topoCaption](const QString& caption, const QString& grouping) {
    topoCaption->setText(caption);
    topoCaption->setToolTip(grouping.isEmpty() ? caption : caption + QStringLiteral("\n") + grouping);
  };
  showCaption(topology_->caption(), topology_->grouping());
  connect(topology_, &TopologyView::captionChanged, topoCaption, showCaption);
  topoLayout->addWidget(topology_, 1);
  topoLayout->addWidget(topoCaption);
  QDockWidget* topo = dock(tr("Topology"), QStringLiteral("topologyDock"), topoPane, Qt::LeftDockWidgetArea);
  QDockWidget* sweep = dock(tr("Sweep"), QStringLiteral("sweepDock"), sweepEditor_, Qt::RightDockWidgetArea);
  QDockWidget* runs = dock(tr("Runs"), QStringLiteral("runsDock"), runBrowser_, Qt::RightDockWidgetArea);
  splitDockWidget(sweep, runs, Qt::Vertical);
  splitDockWidget(fab, topo, Qt::Vertical);
  resizeDocks({fab, topo}, {560, 300}, Qt::Vertical);
  connect(topology_, &TopologyView::groupSelected, fabricEditor_, [this](const QString& g) {
    fabricEditor_->focusGroup(g);
  });
}

void MainWindow::buildActions() {
  QMenu* file = menuBar()->addMenu(tr("&File"));
  file->addAction(tr("&New experiment database…"), QKeySequence::New, this, &MainWindow::newDatabase);
  file->addAction(tr("&Open…"), QKeySequence::Open, this, &MainWindow::openDialog);
  recentMenu_ = file->addMenu(tr("Open &recent"));
  file->addAction(tr("Save &As…"), QKeySequence::SaveAs, this, &MainWindow::saveAsDialog);
  file->addAction(tr("&Import measurements (nccl-tests, CSV)…"), this, &MainWindow::importMeasurementsDialog)
      ->setToolTip(tr("Store nccl-tests all_reduce_perf logs or measurement CSV files as measured runs of this "
                      "database, as scin import does; they are overlaid on simulated runs of the same fabric"));
  file->addSeparator();
  file->addAction(tr("&Export chart (PNG, SVG, PDF)…"), QKeySequence(Qt::CTRL | Qt::Key_E), this,
                  &MainWindow::exportCurrentChart);
  file->addAction(tr("Export chart &data (CSV)…"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_E), this,
                  &MainWindow::exportCurrentCsv);
  file->addAction(tr("Export &report (HTML, PDF)…"), this, &MainWindow::exportReport);
  file->addSeparator();
  file->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);

  QMenu* edit = menuBar()->addMenu(tr("&Edit"));
  QAction* undo = doc_->undoStack()->createUndoAction(this, tr("&Undo"));
  undo->setShortcut(QKeySequence::Undo);
  QAction* redo = doc_->undoStack()->createRedoAction(this, tr("&Redo"));
  redo->setShortcut(QKeySequence::Redo);
  edit->addAction(undo);
  edit->addAction(redo);

  QMenu* fabricMenu = menuBar()->addMenu(tr("F&abric"));
  fabricMenu->addAction(tr("&Save as user preset…"), this, [this] { savePresetDialog(); });

  QMenu* run = menuBar()->addMenu(tr("&Run"));
  runAction_ = run->addAction(tr("&Run sweep"), QKeySequence(Qt::CTRL | Qt::Key_R), this, [this] { startRun(); });
  runAction_->setToolTip(tr("Run the sweep on worker threads and store it in the experiment database (Ctrl+R)"));
  cancelAction_ = run->addAction(tr("&Cancel run"), QKeySequence(Qt::Key_Escape), this, &MainWindow::cancelRun);
  cancelAction_->setEnabled(false);
  run->addAction(tr("Show live &preview"), QKeySequence(Qt::CTRL | Qt::Key_P), this, &MainWindow::showPreview);

  QMenu* view = menuBar()->addMenu(tr("&View"));
  for (QDockWidget* d : findChildren<QDockWidget*>()) view->addAction(d->toggleViewAction());
  view->addSeparator();
  view->addAction(tr("Reset &zoom"), QKeySequence(Qt::CTRL | Qt::Key_0), this, [this] {
    if (auto* c = qobject_cast<ChartPanel*>(tabs_->currentWidget())) c->resetZoom();
  });

  QMenu* help = menuBar()->addMenu(tr("&Help"));
  help->addAction(tr("&About SCIN Explorer"), this, [this] {
    QMessageBox::about(this, tr("About SCIN Explorer"),
                       tr("<b>SCIN Explorer %1</b> (git %2)<br>Design-space explorer for All-Reduce in "
                          "scale-up fabrics: software ring, one-shot, two-shot, NVLink SHARP, and SCIN's "
                          "in-switch accelerator with in-network quantisation.<br>"
                          "Bandwidths are GB/s = 10<sup>9</sup> bytes/s; sizes are binary (KiB, MiB).")
                           .arg(QString::fromLatin1(version()), QString::fromLatin1(git_revision())));
  });

  QToolBar* tb = addToolBar(tr("Main"));
  tb->setObjectName(QStringLiteral("mainToolbar"));
  tb->setToolButtonStyle(Qt::ToolButtonTextOnly);
  tb->addAction(undo);
  tb->addAction(redo);
  tb->addSeparator();
  tb->addAction(runAction_);
  tb->addAction(cancelAction_);
}

void MainWindow::buildStatusBar() {
  progress_ = new QProgressBar;
  progress_->setMaximumWidth(220);
  progress_->setVisible(false);
  rate_ = new QLabel;
  cancel_ = new QPushButton(tr("Cancel"));
  cancel_->setVisible(false);
  cancel_->setToolTip(tr("Stop the run; the points computed so far stay stored (Esc)"));
  connect(cancel_, &QPushButton::clicked, this, &MainWindow::cancelRun);
  previewState_ = new QLabel;
  previewState_->setObjectName(QStringLiteral("previewState"));
  previewState_->setVisible(false);
  previewAll_ = new QPushButton(tr("Preview all sizes"));
  previewAll_->setObjectName(QStringLiteral("previewAll"));
  previewAll_->setToolTip(tr("Compute the points the preview left out because each would take long"));
  previewAll_->setVisible(false);
  connect(previewAll_, &QPushButton::clicked, this, [this] { preview_->computeAll(); });
  previewStop_ = new QPushButton(tr("Stop preview"));
  previewStop_->setObjectName(QStringLiteral("previewStop"));
  previewStop_->setToolTip(tr("Stop computing the preview; the curves so far stay shown"));
  previewStop_->setVisible(false);
  connect(previewStop_, &QPushButton::clicked, this, [this] { preview_->cancel(); });
  previewSlow_ = new QTimer(this);
  previewSlow_->setSingleShot(true);
  previewSlow_->setInterval(300);
  connect(previewSlow_, &QTimer::timeout, this, [this] { onPreviewProgress(preview_->status()); });
  statusBar()->addPermanentWidget(previewState_);
  statusBar()->addPermanentWidget(previewAll_);
  statusBar()->addPermanentWidget(previewStop_);
  statusBar()->addPermanentWidget(rate_);
  statusBar()->addPermanentWidget(progress_);
  statusBar()->addPermanentWidget(cancel_);
}

// --- preview and charts -----------------------------------------------------

void MainWindow::requestPreview() {
  staleTimer_->stop();  // (the hidden tabs wait for the edits to pause)
  preview_->request(doc_->config(), sweepEditor_->request());
  previewSlow_->start();
  if (!runner_->running()) showingPreview_ = true;
}

void MainWindow::onPreviewProgress(const PreviewStatus& st) {
  // Small previews finish within a frame or two: say nothing. A large one says
  // how much work it is, how far it got, and what its cap left out.
  constexpr double kMentionS = 1.0;
  // So does any preview still computing after a moment (previewSlow_).
  const bool slow = !st.complete && preview_->busy() && !previewSlow_->isActive();
  const bool big = st.estimated_s >= kMentionS || st.points_capped > 0 || slow;
  QString text;
  if (st.cancelled) {
    text = tr("Preview stopped at %1 of %2 points").arg(st.points_done).arg(st.points_total);
  } else if (!st.complete && big && st.points_done == 0) {
    text = tr("Computing the preview of %1 accelerators… (the curves shown are of the previous inputs)")
               .arg(doc_->config().fabric.gpus);
  } else if (!st.complete && big) {
    text = tr("Preview: %1 of %2 points (%3%), up to ~%4 s of work on one core")
               .arg(st.points_done)
               .arg(st.points_total)
               .arg(static_cast<int>(st.fraction * 100))
               .arg(st.estimated_s, 0, 'f', st.estimated_s < 10 ? 1 : 0);
  } else if (st.complete && st.points_capped > 0) {
    // One short line; which points, and how long each would take, are in the tooltip.
    text = (st.points_capped == 1 ? tr("Preview leaves out 1 slow point (estimated over %2 s)")
                                  : tr("Preview leaves out %1 slow points (estimated over %2 s each)")
                                        .arg(st.points_capped))
               .arg(preview_->pointCapSeconds(), 0, 'g', 3);
  }
  previewState_->setText(text);
  previewState_->setToolTip(st.capped_text.isEmpty() ? QString()
                                                     : tr("Left out: %1.\nEach is estimated by the engine to take "
                                                          "longer than %2 s; run the sweep or press \"Preview all "
                                                          "sizes\" to compute them.")
                                                           .arg(st.capped_text)
                                                           .arg(preview_->pointCapSeconds(), 0, 'g', 3));
  previewState_->setVisible(!text.isEmpty());
  previewAll_->setVisible(st.complete && !st.cancelled && st.points_capped > 0);
  previewStop_->setVisible(!st.complete && big);
}

void MainWindow::showPreview() {
  showingPreview_ = true;
  shownPlain_.clear();
  shownGpus_.clear();
  shownAlgorithms_.clear();
  runFabric_.reset();
  runFabricBar_->hide();
  kindNote_.clear();
  measured_->clear();
  sweepEditor_->showEditing();
  analysis_->setTable(nullptr);
  analysis_->setMessage(tr("The live preview is not stored: run the sweep (Ctrl+R) or select a stored run in the "
                           "Runs dock to analyse it here."));
  requestPreview();
}

void MainWindow::setShown(const ResultSet& rs, const QString& label) {
  shown_ = rs;
  shownLabel_ = label;
  QString what = label.isEmpty()
                     ? tr("<b>Live preview</b> (analytic engine, not stored) of <b>%1</b>: %2")
                           .arg(QString::fromStdString(doc_->config().name).toHtmlEscaped(),
                                sweepEditor_->request().summary(doc_->config()).toHtmlEscaped())
                     : label;
  if (!rs.errors.empty()) {
    QStringList errs;
    for (const auto& e : rs.errors) errs << QString::fromStdString(e).toHtmlEscaped();
    what += QStringLiteral("<br><span style=\"color:#b00020\">%1</span>").arg(errs.join(QStringLiteral("<br>")));
  }
  // One line that says what the tool compares, for someone who has never seen it.
  // The algorithms of the curves or, for a run that draws none here (a quant or an
  // inference run: its points are in the Analysis tab), of its points.
  std::vector<std::string> algorithms;
  for (const auto& c : rs.curves) addOnce(algorithms, c.algorithm);
  if (algorithms.empty()) algorithms = shownAlgorithms_;
  what += tr("<br><span style=\"color:#555\">All-Reduce per rank on %1 accelerators: %2. %3</span>")
              .arg(shownGpus_.isEmpty() ? QString::number(doc_->config().fabric.gpus) : shownGpus_,
                   algorithmsPhrase(algorithms),
                   shownGpus_.isEmpty() ? tr("Edit the fabric on the left; the curves follow.")
                                        : tr("The run's fabric is stored with it (<i>scin show</i>); the Fabric "
                                             "dock edits the live preview, shown when no run is selected."));
  showing_->setText(what);
  if (label.isEmpty() && showingPreview_) {
    // The live preview repaints at once: it is what the user is dragging.
    redrawTimer_->stop();
    redrawCharts();
  } else if (!redrawTimer_->isActive()) {
    redrawTimer_->start();
  }
}

void MainWindow::redrawCharts() {
  for (ChartPanel* c : chartWidgets()) {
    if (c == quant_ || c == timeline_) continue;
    if (c == tabs_->currentWidget()) {
      std::erase(staleCharts_, c);
    } else if (std::find(staleCharts_.begin(), staleCharts_.end(), c) == staleCharts_.end()) {
      staleCharts_.push_back(c);
    }
  }
  if (!partialPreview_ && !staleCharts_.empty())
    staleTimer_->start(showingPreview_ && shownLabel_.isEmpty() ? kStaleChartsDelayMs : 0);
  // The timing tabs say why they are empty, in the chart area.
  QString why = kindNote_;
  if (why.isEmpty() && shown_.empty())
    why = showingPreview_       ? tr("The preview has no result for this fabric and sweep (see the message above).")
          : runner_ && runner_->running() ? tr("Running: no point has finished yet (progress in the status bar).")
                               : tr("The run shown has no timing point: every point was skipped or failed.");
  // The quantisation and timeline tabs compute live for the editors' fabric: say so when a stored run is shown.
  const QString live = showingPreview_ ? QString()
                                       : tr("Live computation for the fabric in the editors, not read from the stored run "
                                            "shown; the run's own points are plotted in the Analysis tab.");
  for (ChartPanel* c : {quant_, timeline_})
    if (c) c->setNote(live);
  emptyWhy_ = why;
  if (auto* front = qobject_cast<ChartPanel*>(tabs_->currentWidget()); front && front != quant_ && front != timeline_)
    refreshChart(front);
  // A stale chart keeps its old results until shown, but says at once why it will be empty.
  for (ChartPanel* c : std::initializer_list<ChartPanel*>{latency_, bandwidth_, speedup_, breakdown_})
    if (!why.isEmpty()) c->setEmptyText(why);
  Q_EMIT chartsUpdated();
}

void MainWindow::refreshChart(ChartPanel* c) const {
  c->setResults(shown_);  // clears the empty text; the chart's redraw may set its own
  if (!emptyWhy_.isEmpty()) c->setEmptyText(emptyWhy_);
}

void MainWindow::flushStaleCharts() const {
  for (ChartPanel* c : std::exchange(staleCharts_, {})) refreshChart(c);
}

std::vector<ChartPanel*> MainWindow::charts() const {
  flushStaleCharts();
  return chartWidgets();
}

std::vector<ChartPanel*> MainWindow::chartWidgets() const {
  std::vector<ChartPanel*> out;
  for (int i = 0; i < tabs_->count(); ++i)
    if (auto* c = qobject_cast<ChartPanel*>(tabs_->widget(i))) out.push_back(c);
  return out;
}

ChartPanel* MainWindow::chart(const QString& id) const {
  for (ChartPanel* c : charts())
    if (c->id() == id) return c;
  return nullptr;
}

bool MainWindow::showTab(const QString& id) {
  if (id == analysis_->id()) {
    tabs_->setCurrentWidget(analysis_);
    return true;
  }
  ChartPanel* c = chart(id);
  if (!c) return false;
  tabs_->setCurrentWidget(c);
  return true;
}

QString MainWindow::currentTab() const {
  if (tabs_->currentWidget() == analysis_) return analysis_->id();
  auto* c = qobject_cast<ChartPanel*>(tabs_->currentWidget());
  return c ? c->id() : QString();
}

QString MainWindow::shownPlainLabel() const { return shownPlain_.isEmpty() ? tr("Live preview (not stored)") : shownPlain_; }

QString MainWindow::shownLabel() const { return shownLabel_.isEmpty() ? tr("Preview") : shownLabel_; }

bool MainWindow::loadPreset(const QString& name) { return fabricEditor_->selectPreset(name); }

bool MainWindow::fabricDirty() const { return doc_->dirty(); }

bool MainWindow::saveFabricAsPreset(const QString& name, const std::function<bool(const QString&)>& confirmOverwrite,
                                    QString* error) {
  if (error) error->clear();
  try {
    // A few hundred bytes of JSON: written on the GUI thread.
    const auto file = user_preset_dir() / (name.toStdString() + ".json");
    const bool exists = std::filesystem::exists(file);
    if (exists && (!confirmOverwrite || !confirmOverwrite(QString::fromStdString(file.string())))) return false;
    save_user_preset(doc_->config(), name.toStdString(), exists);
  } catch (const std::exception& e) {
    if (error) *error = QString::fromUtf8(e.what());
    return false;
  }
  doc_->markSaved();
  statusBar()->showMessage(tr("Saved user preset %1").arg(name), 8000);
  return true;
}

bool MainWindow::savePresetDialog() {
  bool ok = false;
  const QString name = QInputDialog::getText(this, tr("Save as user preset"),
                                             tr("Preset name (letters, digits, '-', '_', '.'):"), QLineEdit::Normal,
                                             QString(), &ok);
  if (!ok || name.isEmpty()) return false;
  QString err;
  const bool saved = saveFabricAsPreset(name, [this](const QString& file) {
    return QMessageBox::question(this, tr("Replace preset?"),
                                 tr("The user preset %1 exists. Replace it?").arg(file),
                                 QMessageBox::Yes | QMessageBox::Cancel, QMessageBox::Cancel) == QMessageBox::Yes;
  }, &err);
  if (!saved && !err.isEmpty()) showError(tr("Save as user preset"), err);
  return saved;
}

// --- runs ---------------------------------------------------------------------

bool MainWindow::isRunning() const { return runner_->running(); }

bool MainWindow::ioBusy() const {
  return ioDepth_ > 0 || loading_ || (runBrowser_ && runBrowser_->busy()) || (measured_ && measured_->busy());
}

bool MainWindow::startRun(const QString& name, bool force) {
  if (runner_->running()) return false;
  if (!store_) {
    showError(tr("Run"), tr("No experiment database is open."));
    return false;
  }
  if (store_->read_only()) {
    showError(tr("Run"), tr("%1 is read-only; use Save As to make a writable copy.").arg(databasePath()));
    return false;
  }
  SweepRequest req = sweepEditor_->request();
  SweepSpec spec;
  QString runName = name.isEmpty()
                        ? QStringLiteral("%1 %2").arg(QString::fromStdString(doc_->config().name),
                                                      QString::fromStdString(req.engine))
                        : name;
  try {
    spec = toSweepSpec(doc_->config(), req, runName.toStdString());
  } catch (const std::exception& e) {
    showError(tr("Run"), QString::fromUtf8(e.what()));
    return false;
  }
  ResultSet empty;
  showingPreview_ = false;
  setShown(empty, tr("<b>Running</b> %1: %2").arg(runName.toHtmlEscaped(), req.summary(doc_->config()).toHtmlEscaped()));
  lastStatus_.clear();
  lastRunName_ = name;
  statusBar()->clearMessage();   // (a refusal's message, when this is its Run anyway)
  runListed_ = false;
  runner_->start(databasePath(), spec, runName, force);
  showRunStarted(req.point_count(doc_->config()));
  rate_->setText(tr("estimating the work…"));
  return true;
}

bool MainWindow::resumeRun(std::int64_t id) {
  if (runner_->running()) return false;
  if (!store_ || store_->read_only() || !runBrowser_->canResume(id)) {
    showError(tr("Resume"), tr("Run #%1 cannot be resumed: only an interrupted or cancelled run in a writable "
                               "database can.").arg(id));
    return false;
  }
  RunInfo info;
  try {
    info = store_->get_run(id);  // one row by primary key
  } catch (const std::exception& e) {
    showError(tr("Resume"), QString::fromUtf8(e.what()));
    return false;
  }
  showingPreview_ = false;
  ResultSet empty;
  setShown(empty, tr("<b>Resuming</b> run #%1 %2: %3 of %4 points stored; computing the rest")
                      .arg(id)
                      .arg(QString::fromStdString(info.name).toHtmlEscaped())
                      .arg(info.points_stored)
                      .arg(info.points_total));
  lastStatus_.clear();
  runListed_ = false;
  runner_->resume(databasePath(), id);
  showRunStarted(static_cast<std::size_t>(info.points_total));
  progress_->setValue(static_cast<int>(info.points_stored));
  return true;
}

void MainWindow::showRunStarted(std::size_t points) {
  runEstimate_.clear();
  progress_->setRange(0, static_cast<int>(points));
  progress_->setValue(0);
  progress_->setVisible(true);
  cancel_->setVisible(true);
  cancelAction_->setEnabled(true);
  runAction_->setEnabled(false);
  rate_->setText(tr("starting…"));
}

void MainWindow::cancelRun() {
  if (!runner_->running()) return;
  runner_->cancel();
  rate_->setText(tr("cancelling…"));
}

void MainWindow::onPoints(const std::vector<PointRecord>& pts) {
  appendPoints(shown_, pts);
  if (!redrawTimer_->isActive()) redrawTimer_->start();
}

void MainWindow::onProgress(const SweepProgress& p) {
  if (!runListed_) {
    // The run row exists from the runner's first commit on: list it as running.
    runListed_ = true;
    runBrowser_->reload();
  }
  progress_->setRange(0, static_cast<int>(p.total));
  progress_->setValue(static_cast<int>(p.done));
  QString eta = p.eta_s > 0 ? tr(", ETA %1").arg(durationText(p.eta_s)) : QString();
  rate_->setText(tr("%1/%2 points, %3 points/s%4%5")
                     .arg(p.done)
                     .arg(p.total)
                     .arg(p.rate_points_per_s, 0, 'f', 0)
                     .arg(eta, runEstimate_.isEmpty() ? QString() : tr(" (%1)").arg(runEstimate_)));
}

void MainWindow::onRunFinished(qint64 id, const QString& status, const QString& error) {
  progress_->setVisible(false);
  cancel_->setVisible(false);
  cancelAction_->setEnabled(false);
  runAction_->setEnabled(true);
  lastStatus_ = status;
  lastRunId_ = id;
  if (status == QLatin1String("refused")) {
    // Above the budget: nothing ran or was stored. Non-modal, as showError (scripted runs go on).
    rate_->setText(tr("not started: above the work budget"));
    statusBar()->showMessage(error, 10000);
    showPreview();
    auto* box = new QMessageBox(QMessageBox::Warning, tr("Large sweep"),
                                tr("%1.\n\nRun it anyway? It can be cancelled at any time, and the points "
                                   "computed until then are kept.").arg(error),
                                QMessageBox::NoButton, this);
    box->setObjectName(QStringLiteral("budgetBox"));
    box->setAttribute(Qt::WA_DeleteOnClose);
    QPushButton* anyway = box->addButton(tr("Run anyway"), QMessageBox::AcceptRole);
    anyway->setObjectName(QStringLiteral("runAnyway"));
    box->addButton(QMessageBox::Cancel);
    box->setDefaultButton(QMessageBox::Cancel);
    const QString name = lastRunName_;
    connect(anyway, &QPushButton::clicked, this, [this, name] { startRun(name, /*force=*/true); });
    box->open();
    Q_EMIT runFinished(id, status);
    return;
  }
  if (!error.isEmpty()) showError(tr("Run failed"), error);
  rate_->setText(tr("run #%1 %2").arg(id).arg(status));
  statusBar()->showMessage(tr("Run #%1 %2 and stored in %3").arg(id).arg(status, QFileInfo(databasePath()).fileName()), 8000);
  setModified(false);
  if (id > 0) doc_->markSaved();  // the run stored this fabric
  runBrowser_->reload();
  if (id > 0) runBrowser_->selectRun(id);
  Q_EMIT runFinished(id, status);
}

void MainWindow::showRuns(const std::vector<std::int64_t>& ids) {
  if (!store_ || ids.empty()) return;
  // The points load on a worker through a connection of its own (read-only);
  // only the newest request is shown.
  struct Loaded {
    std::vector<RunInfo> infos;
    std::vector<std::vector<PointRecord>> points;
    std::shared_ptr<const analysis::AnalysisTable> table;  // every run of the first one's kind
    std::optional<analysis::PlotQuery> defaults;             // its default query (auto_facet included)
    QStringList leftOut;   // runs of another kind than the first
    std::string error;
    std::optional<Config> fabric;  // the first run's base fabric (none: it varies the preset, or unknown)
    QString fabricText;            // what the Fabric dock says of it
    QString fabricChanges;         // "with N changed parameter(s) (a, b, c)", or empty
  };
  const std::filesystem::path path = store_->path();
  const quint64 gen = ++loadGeneration_;
  loading_ = true;
  setIoBusy(true, tr("Loading run…"));
  auto* watcher = new QFutureWatcher<Loaded>(this);
  connect(watcher, &QFutureWatcher<Loaded>::finished, this, [this, watcher, ids, gen] {
    watcher->deleteLater();
    if (gen != loadGeneration_) return;  // a newer selection superseded this one
    loading_ = false;
    setIoBusy(false, {});
    Loaded out = watcher->result();
    if (!out.error.empty()) {
      showError(tr("Run browser"), QString::fromStdString(out.error));
      return;
    }
    if (runner_->running()) return;
    ResultSet rs;
    QStringList names;
    for (std::size_t k = 0; k < out.infos.size(); ++k) {
      const RunInfo& info = out.infos[k];
      QString label = QStringLiteral("#%1 %2").arg(info.id).arg(QString::fromStdString(info.name));
      names << QStringLiteral("%1 (%2)").arg(label.toHtmlEscaped(), QString::fromLatin1(to_string(info.status)));
      appendPoints(rs, out.points[k], k == 0 ? QString() : label, k > 0);
      if (k == 0) rs.title = label;
    }
    showingPreview_ = false;
    const RunInfo& first = out.infos.front();
    int fewest = 0, most = 0;
    shownAlgorithms_.clear();
    for (const PointRecord& p : out.points.front()) {
      if (!p.algorithm.empty()) addOnce(shownAlgorithms_, p.algorithm);
      if (p.gpus > 0) {
        fewest = fewest == 0 ? p.gpus : std::min(fewest, p.gpus);
        most = std::max(most, p.gpus);
      }
    }
    shownGpus_ = most == 0 ? tr("the stored run's")
                 : fewest == most ? QString::number(most)
                                  : QStringLiteral("%1–%2").arg(fewest).arg(most);
    shownPlain_ = tr("Stored run #%1 %2 (%3)").arg(first.id).arg(QString::fromStdString(first.name),
                                                                  QString::fromLatin1(to_string(first.status)));
    kindNote_.clear();
    if (first.kind != PointKind::Collective) {
      const QString kind = QString::fromLatin1(to_string(first.kind));
      const bool vowel = QStringLiteral("aeiou").contains(kind.left(1));   // "an inference run"
      kindNote_ = (vowel ? tr("Run #%1 is an %2 run: it stores %3, not simulated All-Reduce timings. Its points are plotted in "
                              "the Analysis tab.")
                         : tr("Run #%1 is a %2 run: it stores %3, not simulated All-Reduce timings. Its points are plotted in "
                              "the Analysis tab."))
                      .arg(first.id)
                      .arg(kind,
                           first.kind == PointKind::Quant       ? tr("quantisation error")
                           : first.kind == PointKind::Measured ? tr("imported measurements (overlay them on a "
                                                                    "simulated run of the same fabric)")
                                                               : tr("TTFT and TPOT"));
      showTab(analysis_->id());
    } else if (!out.table->rows.empty() && out.table->varying_axes().size() > 2 && currentTab() != analysis_->id()) {
      statusBar()->showMessage(tr("This run sweeps several axes: the Analysis tab plots any of them on x"), 8000);
    }
    // ... or a stored packet run: its largest point of the first algorithm.
    const SimResult* packet = nullptr;
    for (const Curve& c : rs.curves)
      for (const SimResult& p : c.points)
        if (p.engine == "packet" && p.extra.contains("links") && (!packet || (p.algorithm == packet->algorithm && p.bytes > packet->bytes)))
          packet = &p;
    if (packet)
      topology_->setLinkLoads(*packet, tr("#%1 %2, %3 per rank")
                                           .arg(first.id)
                                           .arg(QString::fromStdString(packet->algorithm), sizeText(packet->bytes)));
    analysis_->setTable(out.table, std::move(out.defaults));
    if (!out.leftOut.isEmpty())
      statusBar()->showMessage(tr("The Analysis tab plots runs of one kind together; left out: %1").arg(out.leftOut.join(QStringLiteral(", "))), 8000);
    if (first.kind == PointKind::Collective) measured_->setRun(databasePath(), first.id);
    else measured_->clear();
    sweepEditor_->showStoredRun(first, static_cast<int>(out.infos.size()) - 1);
    runFabric_ = out.fabric;
    runFabricId_ = first.id;
    runFabricChanges_ = out.fabricChanges;
    runFabricText_->setText(out.fabricText);
    runFabricBar_->setVisible(!out.fabricText.isEmpty());
    if (QWidget* b = runFabricBar_->findChild<QPushButton*>(QStringLiteral("useRunFabric"))) b->setVisible(out.fabric.has_value());
    setShown(rs, tr("<b>Stored run</b> %1%2")
                     .arg(names.value(0), names.size() > 1 ? tr(", overlaid (dashed): %1").arg(names.mid(1).join(QStringLiteral(", ")))
                                                           : QString()));
  });
  watcher->setFuture(QtConcurrent::run([path, ids] {
    Loaded out;
    try {
      Store s = Store::open(path, Access::ReadOnly);
      for (std::int64_t id : ids) {
        out.infos.push_back(s.get_run(id));
        out.points.push_back(s.points(id));
      }
      // Every selected run of the first one's kind, the run as a series field.
      std::vector<analysis::AnalysisTable> tables;
      for (std::size_t k = 0; k < out.infos.size(); ++k) {
        if (out.infos[k].kind == out.infos[0].kind)
          tables.push_back(analysis::build_table(out.infos[k], out.points[k]));
        else
          out.leftOut << QStringLiteral("#%1 (%2)").arg(out.infos[k].id).arg(QString::fromLatin1(to_string(out.infos[k].kind)));
      }
      out.table = std::make_shared<const analysis::AnalysisTable>(analysis::combine_tables(tables));
      // Its default plot query (auto_facet plots it several times) here, off the GUI thread.
      out.defaults = analysis::default_query(*out.table);
      // The first run's fabric: its preset with its overrides, when the sweep does not vary the preset.
      const analysis::RunSummary& sum = tables.front().run;
      if (out.infos.front().kind != PointKind::Measured && tables.front().axis_index("preset") < 0) {
        try {
          std::vector<std::string> changed;
          Config c = run_base_config(out.infos.front(), &changed);
          std::vector<std::string> axes;
          for (int a : tables.front().varying_axes()) {
            const std::string& k = tables.front().axes[static_cast<std::size_t>(a)].key;
            if (k != "collective.algorithm" && k != "collective.bytes") axes.push_back(k);
          }
          // What the run changed from its preset, not how many values it
          // recorded (the app records every parameter of its Fabric dock).
          out.fabricChanges = changedParamsPhrase(changed);
          out.fabricText = QObject::tr("Run #%1 ran on <b>%2</b>%3%4.")
                               .arg(out.infos.front().id)
                               .arg(QString::fromStdString(sum.preset.empty() ? std::string("registry defaults") : sum.preset).toHtmlEscaped(),
                                    out.fabricChanges.isEmpty() ? QString() : QStringLiteral(" ") + out.fabricChanges.toHtmlEscaped(),
                                    axes.empty() ? QString()
                                                 : QObject::tr("; its axes vary %1 on top of it")
                                                       .arg(QString::fromStdString(fmt::format("{}", fmt::join(axes, ", ")))
                                                                .toHtmlEscaped()));
          out.fabric = std::move(c);
        } catch (const std::exception& e) {
          out.fabricText = QObject::tr("Run #%1's fabric cannot be rebuilt here: %2")
                               .arg(out.infos.front().id)
                               .arg(QString::fromUtf8(e.what()).toHtmlEscaped());
        }
      }
    } catch (const std::exception& e) {
      out.error = e.what();
    }
    return out;
  }));
}

}  // namespace scin::ui
