#include "ui/main_window.h"

#include <algorithm>

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
#include <QKeySequence>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QSettings>
#include <QSpinBox>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTimer>
#include <QToolBar>
#include <QUndoStack>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include <sqlite3.h>

#include "base/error.h"
#include "fabric/preset.h"
#include "base/version.h"
#include "ui/charts.h"
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

namespace scin::ui {

namespace {
constexpr const char* kDefaultPreset = "hgx-h200-8";
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

  // Central: what the charts show, then the chart tabs.
  auto* central = new QWidget;
  auto* cl = new QVBoxLayout(central);
  cl->setContentsMargins(4, 4, 4, 0);
  showing_ = new QLabel;
  showing_->setWordWrap(true);
  showing_->setTextFormat(Qt::RichText);
  cl->addWidget(showing_);
  tabs_ = new QTabWidget;
  tabs_->setDocumentMode(true);
  latency_ = new LatencyChart;
  bandwidth_ = new BandwidthChart;
  speedup_ = new SpeedupChart;
  breakdown_ = new BreakdownChart;
  tabs_->addTab(latency_, tr("Latency"));
  tabs_->addTab(bandwidth_, tr("Bandwidth"));
  tabs_->addTab(speedup_, tr("Speedup"));
  tabs_->addTab(breakdown_, tr("Breakdown"));
  quant_ = new QuantChart(doc_);
  tabs_->addTab(quant_, tr("Quantisation error"));
  const auto engines = engine_names();
  if (std::find(engines.begin(), engines.end(), "packet") != engines.end()) {
    timeline_ = new TimelineChart(doc_);
    tabs_->addTab(timeline_, tr("Link timeline"));
  }
  cl->addWidget(tabs_, 1);
  setCentralWidget(central);

  buildDocks();
  buildActions();
  buildStatusBar();

  connect(preview_, &Preview::ready, this, [this](const ResultSet& rs) {
    if (showingPreview_ && !runner_->running()) setShown(rs, QString());
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
  connect(runBrowser_, &RunBrowser::selectionChanged, this, [this](const std::vector<std::int64_t>& ids) {
    if (runner_->running()) return;
    if (ids.empty()) showPreview();
    else showRuns(ids);
  });
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
  QDockWidget* fab = dock(tr("Fabric"), QStringLiteral("fabricDock"), fabricEditor_, Qt::LeftDockWidgetArea);
  QDockWidget* topo = dock(tr("Topology"), QStringLiteral("topologyDock"), topology_, Qt::LeftDockWidgetArea);
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
  statusBar()->addPermanentWidget(rate_);
  statusBar()->addPermanentWidget(progress_);
  statusBar()->addPermanentWidget(cancel_);
}

// --- preview and charts -----------------------------------------------------

void MainWindow::requestPreview() {
  preview_->request(doc_->config(), sweepEditor_->request());
  if (!runner_->running()) showingPreview_ = true;
}

void MainWindow::showPreview() {
  showingPreview_ = true;
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
  what += tr("<br><span style=\"color:#555\">All-Reduce per rank on %1 accelerators: software "
             "<b>ring</b> / <b>one-shot</b> / <b>two-shot</b>, NVLink SHARP <b>nvls</b>, SCIN's in-switch "
             "accelerator <b>scin</b>, and <b>scin-inq</b> (INT8 in-network quantisation). "
             "Edit the fabric on the left; the curves follow.</span>")
              .arg(doc_->config().fabric.gpus);
  showing_->setText(what);
  if (!redrawTimer_->isActive()) redrawTimer_->start();
}

void MainWindow::redrawCharts() {
  for (ChartPanel* c : charts())
    if (c != quant_ && c != timeline_) c->setResults(shown_);
  Q_EMIT chartsUpdated();
}

std::vector<ChartPanel*> MainWindow::charts() const {
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
  ChartPanel* c = chart(id);
  if (!c) return false;
  tabs_->setCurrentWidget(c);
  return true;
}

QString MainWindow::currentTab() const {
  auto* c = qobject_cast<ChartPanel*>(tabs_->currentWidget());
  return c ? c->id() : QString();
}

QString MainWindow::shownLabel() const { return shownLabel_.isEmpty() ? tr("Preview") : shownLabel_; }

bool MainWindow::loadPreset(const QString& name) { return fabricEditor_->selectPreset(name); }

// --- runs ---------------------------------------------------------------------

bool MainWindow::isRunning() const { return runner_->running(); }

bool MainWindow::ioBusy() const { return ioDepth_ > 0 || loading_ || (runBrowser_ && runBrowser_->busy()); }

bool MainWindow::startRun(const QString& name) {
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
  runListed_ = false;
  runner_->start(databasePath(), spec, runName);
  progress_->setRange(0, static_cast<int>(req.point_count(doc_->config())));
  progress_->setValue(0);
  progress_->setVisible(true);
  cancel_->setVisible(true);
  cancelAction_->setEnabled(true);
  runAction_->setEnabled(false);
  rate_->setText(tr("starting…"));
  return true;
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
  QString eta = p.eta_s > 0 ? tr(", ETA %1 s").arg(p.eta_s, 0, 'f', p.eta_s < 10 ? 1 : 0) : QString();
  rate_->setText(tr("%1/%2 points, %3 points/s%4").arg(p.done).arg(p.total).arg(p.rate_points_per_s, 0, 'f', 0).arg(eta));
}

void MainWindow::onRunFinished(qint64 id, const QString& status, const QString& error) {
  progress_->setVisible(false);
  cancel_->setVisible(false);
  cancelAction_->setEnabled(false);
  runAction_->setEnabled(true);
  lastStatus_ = status;
  lastRunId_ = id;
  if (!error.isEmpty()) showError(tr("Run failed"), error);
  rate_->setText(tr("run #%1 %2").arg(id).arg(status));
  statusBar()->showMessage(tr("Run #%1 %2 and stored in %3").arg(id).arg(status, QFileInfo(databasePath()).fileName()), 8000);
  setModified(false);
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
    std::string error;
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
    } catch (const std::exception& e) {
      out.error = e.what();
    }
    return out;
  }));
}

void MainWindow::setIoBusy(bool busy, const QString& what) {
  // Everything but the status bar is disabled while SQLite works off the GUI thread.
  const bool enable = !busy && ioDepth_ == 0 && !loading_;
  if (centralWidget()) centralWidget()->setEnabled(enable);
  menuBar()->setEnabled(enable);
  for (QDockWidget* d : findChildren<QDockWidget*>()) d->setEnabled(enable);
  for (QToolBar* t : findChildren<QToolBar*>()) t->setEnabled(enable);
  if (busy) {
    statusBar()->showMessage(what);
    if (!QApplication::overrideCursor()) QApplication::setOverrideCursor(Qt::BusyCursor);
  } else if (enable) {
    while (QApplication::overrideCursor()) QApplication::restoreOverrideCursor();
    statusBar()->clearMessage();
  }
}

QString MainWindow::runOffGui(const QString& what, std::function<QString()> work) {
  ++ioDepth_;
  setIoBusy(true, what);
  QFutureWatcher<QString> watcher;
  QEventLoop loop;
  connect(&watcher, &QFutureWatcher<QString>::finished, &loop, &QEventLoop::quit);
  watcher.setFuture(QtConcurrent::run([work = std::move(work)] {
    try {
      return work();
    } catch (const std::exception& e) {
      return QString::fromUtf8(e.what());
    }
  }));
  if (!watcher.isFinished()) loop.exec(QEventLoop::ExcludeUserInputEvents);
  --ioDepth_;
  setIoBusy(false, {});
  return watcher.result();
}

// --- document -------------------------------------------------------------------

QString MainWindow::defaultDatabasePath() {
  QString dir = QStandardPaths::writableLocation(QStandardPaths::AppDataLocation);
  QDir().mkpath(dir);
  return QDir(dir).filePath(QStringLiteral("experiments.scindb"));
}

QString MainWindow::databasePath() const {
  return store_ ? QString::fromStdString(store_->path().string()) : QString();
}

bool MainWindow::openDatabase(const QString& path) {
  if (runner_->running()) {
    showError(tr("Open"), tr("Wait for the run to finish (or cancel it) before opening another database."));
    return false;
  }
  if (ioDepth_ > 0) return false;  // another open / save is in progress
  // Opening checks the file, migrates and recovers crashed runs: a worker does it.
  auto opened = std::make_shared<std::unique_ptr<Store>>();
  const std::string file = path.toStdString();
  QString err = runOffGui(tr("Opening %1…").arg(QFileInfo(path).fileName()), [opened, file] {
    *opened = std::make_unique<Store>(Store::open(file, std::filesystem::exists(file) ? Access::Auto : Access::Create));
    return QString();
  });
  if (!err.isEmpty() || !*opened) {
    showError(tr("Cannot open experiment database"), err);
    return false;
  }
  // A run selection still loading belongs to the old database.
  ++loadGeneration_;
  if (loading_) {
    loading_ = false;
    setIoBusy(false, {});
  }
  store_ = std::move(*opened);
  runBrowser_->setStore(store_.get());
  addRecent(databasePath());
  setModified(false);
  updateTitle();
  if (!store_->recovered_runs().empty())
    statusBar()->showMessage(tr("%n run(s) left running by a crashed session were marked interrupted", "",
                                static_cast<int>(store_->recovered_runs().size())), 8000);
  // Show the newest run, with the fabric and sweep it was run with.
  try {
    auto runs = store_->list_runs();
    if (!runs.empty()) {
      Config cfg;
      SweepRequest req;
      if (fromSweepSpec(runs.back().spec, &cfg, &req)) {
        doc_->resetConfig(cfg);
        sweepEditor_->setRequest(req);
        setModified(false);
      }
      runBrowser_->selectRun(runs.back().id);
    } else {
      showPreview();
    }
  } catch (const std::exception& e) {
    showError(tr("Open"), QString::fromUtf8(e.what()));
  }
  return true;
}

bool MainWindow::saveDatabaseAs(const QString& path) {
  if (!store_) return false;
  if (runner_->running()) {
    showError(tr("Save As"), tr("Wait for the run to finish before saving a copy."));
    return false;
  }
  if (QFileInfo(path).absoluteFilePath() == QFileInfo(databasePath()).absoluteFilePath()) return true;
  if (ioDepth_ > 0) return false;
  // VACUUM INTO writes a consistent, compact copy even with the WAL open; a
  // worker does it through a read-only connection of its own.
  const std::string src = store_->path().string();
  const QString dest = path;
  QString err = runOffGui(tr("Saving a copy as %1…").arg(QFileInfo(path).fileName()), [src, dest] {
    QFile::remove(dest);
    sqlite3* h = nullptr;
    if (sqlite3_open_v2(src.c_str(), &h, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
      QString msg = QString::fromUtf8(h ? sqlite3_errmsg(h) : "cannot open");
      sqlite3_close(h);
      return msg;
    }
    std::string sql = "VACUUM INTO '" + QString(dest).replace(QLatin1Char('\''), QStringLiteral("''")).toStdString() + "'";
    char* e = nullptr;
    QString msg;
    if (sqlite3_exec(h, sql.c_str(), nullptr, nullptr, &e) != SQLITE_OK) msg = QString::fromUtf8(e ? e : "unknown error");
    sqlite3_free(e);
    sqlite3_close(h);
    return msg;
  });
  if (!err.isEmpty()) {
    showError(tr("Save As"), tr("Could not write %1: %2").arg(path, err));
    return false;
  }
  return openDatabase(path);
}

void MainWindow::newDatabase() {
  QString path = QFileDialog::getSaveFileName(this, tr("New experiment database"), QString(),
                                              tr("Experiment databases (*.scindb)"));
  if (path.isEmpty()) return;
  if (!path.endsWith(QLatin1String(kDbExtension))) path += QLatin1String(kDbExtension);
  if (QFileInfo::exists(path)) QFile::remove(path);
  openDatabase(path);
}

void MainWindow::openDialog() {
  QString path = QFileDialog::getOpenFileName(this, tr("Open experiment database"), QString(),
                                              tr("Experiment databases (*.scindb);;All files (*)"));
  if (!path.isEmpty()) openDatabase(path);
}

void MainWindow::saveAsDialog() {
  QString path = QFileDialog::getSaveFileName(this, tr("Save experiment database as"), QString(),
                                              tr("Experiment databases (*.scindb)"));
  if (path.isEmpty()) return;
  if (!path.endsWith(QLatin1String(kDbExtension))) path += QLatin1String(kDbExtension);
  saveDatabaseAs(path);
}

void MainWindow::updateTitle() {
  QString name = store_ ? QFileInfo(databasePath()).fileName() : tr("(no database)");
  if (store_ && store_->read_only()) name += tr(" (read-only)");
  setWindowTitle(QStringLiteral("%1[*] — SCIN Explorer").arg(name));
  setWindowModified(modified_);
}

void MainWindow::setModified(bool m) {
  modified_ = m;
  updateTitle();
}

void MainWindow::showError(const QString& title, const QString& message) {
  lastError_ = message;
  statusBar()->showMessage(message, 10000);
  // Non-modal: the app (and scripted runs) keep going.
  auto* box = new QMessageBox(QMessageBox::Critical, title, message, QMessageBox::Ok, this);
  box->setObjectName(QStringLiteral("errorBox"));
  box->setAttribute(Qt::WA_DeleteOnClose);
  box->open();
}

void MainWindow::addRecent(const QString& path) {
  QSettings s;
  QStringList recent = s.value(QStringLiteral("recentFiles")).toStringList();
  recent.removeAll(path);
  recent.prepend(path);
  while (recent.size() > 8) recent.removeLast();
  s.setValue(QStringLiteral("recentFiles"), recent);
  rebuildRecentMenu();
}

void MainWindow::rebuildRecentMenu() {
  recentMenu_->clear();
  QSettings s;
  for (const QString& p : s.value(QStringLiteral("recentFiles")).toStringList())
    recentMenu_->addAction(QFileInfo(p).fileName() + QStringLiteral("  —  ") + p, this, [this, p] { openDatabase(p); });
  recentMenu_->setEnabled(!recentMenu_->isEmpty());
}

void MainWindow::dragEnterEvent(QDragEnterEvent* e) {
  for (const QUrl& u : e->mimeData()->urls())
    if (u.isLocalFile()) {
      e->acceptProposedAction();
      return;
    }
}

void MainWindow::dropEvent(QDropEvent* e) {
  for (const QUrl& u : e->mimeData()->urls())
    if (u.isLocalFile()) {
      openDatabase(u.toLocalFile());
      e->acceptProposedAction();
      return;
    }
}

// --- settings ---------------------------------------------------------------------

void MainWindow::restoreSettings() {
  QSettings s;
  resize(1500, 950);
  if (!restoreGeometry(s.value(QStringLiteral("window/geometry")).toByteArray()) ||
      !restoreState(s.value(QStringLiteral("window/state")).toByteArray())) {
    // First start: keep the docks narrow, the charts get the room (once the
    // window has its real size).
    QTimer::singleShot(0, this, [this] {
      resizeDocks({findChild<QDockWidget*>(QStringLiteral("fabricDock")),
                   findChild<QDockWidget*>(QStringLiteral("sweepDock"))},
                  {380, 300}, Qt::Horizontal);
    });
  }
  rebuildRecentMenu();
  showTab(s.value(QStringLiteral("window/tab"), QStringLiteral("latency")).toString());
}

void MainWindow::saveSettings() {
  QSettings s;
  s.setValue(QStringLiteral("window/geometry"), saveGeometry());
  s.setValue(QStringLiteral("window/state"), saveState());
  s.setValue(QStringLiteral("lastDatabase"), databasePath());
  if (auto* c = qobject_cast<ChartPanel*>(tabs_->currentWidget())) s.setValue(QStringLiteral("window/tab"), c->id());
}

void MainWindow::closeEvent(QCloseEvent* e) {
  if (runner_->running()) {
    // Nothing is lost: the points so far are committed and the run is stored as cancelled.
    runner_->cancel();
    runner_->wait();
  }
  saveSettings();
  e->accept();
}

// --- exports -------------------------------------------------------------------------

namespace {

bool askSize(QWidget* parent, QSize* size) {
  QDialog d(parent);
  d.setWindowTitle(QObject::tr("Figure size"));
  auto* f = new QFormLayout(&d);
  auto* w = new QSpinBox;
  auto* h = new QSpinBox;
  w->setRange(200, 8000);
  h->setRange(150, 8000);
  w->setValue(size->width());
  h->setValue(size->height());
  w->setSuffix(QStringLiteral(" px"));
  h->setSuffix(QStringLiteral(" px"));
  f->addRow(QObject::tr("Width (PNG at 2× for print; SVG/PDF are vector)"), w);
  f->addRow(QObject::tr("Height"), h);
  auto* bb = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel);
  QObject::connect(bb, &QDialogButtonBox::accepted, &d, &QDialog::accept);
  QObject::connect(bb, &QDialogButtonBox::rejected, &d, &QDialog::reject);
  f->addRow(bb);
  if (d.exec() != QDialog::Accepted) return false;
  *size = QSize(w->value(), h->value());
  return true;
}

}  // namespace

void MainWindow::exportCurrentChart() {
  auto* c = qobject_cast<ChartPanel*>(tabs_->currentWidget());
  if (!c) return;
  QString path = QFileDialog::getSaveFileName(this, tr("Export chart"), c->id() + QStringLiteral(".svg"),
                                              tr("SVG (*.svg);;PDF (*.pdf);;PNG (*.png)"));
  if (path.isEmpty()) return;
  QSettings s;
  QSize size = s.value(QStringLiteral("export/size"), QSize(1200, 750)).toSize();
  if (!askSize(this, &size)) return;
  s.setValue(QStringLiteral("export/size"), size);
  QString err;
  if (!Exporter::exportChart(c, path, size, 2.0, &err)) showError(tr("Export"), err);
  else statusBar()->showMessage(tr("Wrote %1").arg(path), 5000);
}

void MainWindow::exportCurrentCsv() {
  auto* c = qobject_cast<ChartPanel*>(tabs_->currentWidget());
  if (!c) return;
  QString path = QFileDialog::getSaveFileName(this, tr("Export chart data"), c->id() + QStringLiteral(".csv"),
                                              tr("CSV (*.csv)"));
  if (path.isEmpty()) return;
  QString err;
  if (!Exporter::exportCsv(c, path, &err)) showError(tr("Export"), err);
  else statusBar()->showMessage(tr("Wrote %1").arg(path), 5000);
}

void MainWindow::exportReport() {
  QString path = QFileDialog::getSaveFileName(this, tr("Export report"), QStringLiteral("report.html"),
                                              tr("HTML (*.html);;PDF (*.pdf)"));
  if (path.isEmpty()) return;
  ReportInput in{doc_->config(), sweepEditor_->request(), shownLabel(), charts()};
  QString err;
  if (!Exporter::exportReport(in, path, &err)) showError(tr("Export"), err);
  else statusBar()->showMessage(tr("Wrote %1").arg(path), 5000);
}

}  // namespace scin::ui
