// MainWindow, part three: the document (open, save as, recent files, drag and
// drop, title) and SQLite I/O off the GUI thread.
#include "ui/main_window.h"
#include <algorithm>
#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QDialog>
#include <QDialogButtonBox>
#include <QDir>
#include <QDockWidget>
#include <QFile>
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
#include "analysis/table.h"
#include "ui/analysis_view.h"
#include "ui/charts.h"
#include "ui/exporter.h"
#include "ui/fabric_doc.h"
#include "calib/import.h"
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
  // Only the default database is created on demand; a mistyped path is an error.
  const bool isDefault = QFileInfo(path).absoluteFilePath() == QFileInfo(defaultDatabasePath()).absoluteFilePath();
  return openStore(path, isDefault ? Access::Create : Access::Auto);
}

bool MainWindow::createDatabase(const QString& path) { return openStore(path, Access::Create); }

QString MainWindow::withDbExtension(const QString& typed) {
  return typed.endsWith(QLatin1String(kDbExtension)) ? typed : typed + QLatin1String(kDbExtension);
}

bool MainWindow::newDatabaseAt(const QString& typed, const std::function<bool(const QString&)>& confirmOverwrite) {
  const QString path = withDbExtension(typed);
  if (QFileInfo::exists(path)) {
    if (QFileInfo(path).absoluteFilePath() == QFileInfo(databasePath()).absoluteFilePath()) {
      showError(tr("New experiment database"), tr("%1 is the open database; choose another name.").arg(path));
      return false;
    }
    if (!confirmOverwrite || !confirmOverwrite(path)) return false;
    if (runner_->running() || ioDepth_ > 0) {
      showError(tr("New experiment database"), tr("Wait for the run to finish before replacing a file."));
      return false;
    }
    for (const QString& f : {path, path + QStringLiteral("-wal"), path + QStringLiteral("-shm")})
      if (QFileInfo::exists(f) && !QFile::remove(f)) {
        showError(tr("New experiment database"), tr("Could not replace %1").arg(f));
        return false;
      }
  }
  return createDatabase(path);
}

bool MainWindow::askOverwrite(const QString& path) {
  return QMessageBox::question(this, tr("Replace file?"),
                               tr("%1 already exists. Replace it? Its runs will be lost.").arg(path),
                               QMessageBox::Yes | QMessageBox::Cancel, QMessageBox::Cancel) == QMessageBox::Yes;
}

bool MainWindow::openStore(const QString& path, Access access) {
  if (runner_->running()) {
    showError(tr("Open"), tr("Wait for the run to finish (or cancel it) before opening another database."));
    return false;
  }
  if (ioDepth_ > 0) return false;  // another open / save is in progress
  // Opening checks the file, migrates and recovers crashed runs: a worker does it.
  auto opened = std::make_shared<std::unique_ptr<Store>>();
  const std::string file = path.toStdString();
  QString err = runOffGui(tr("Opening %1…").arg(QFileInfo(path).fileName()), [opened, file, access] {
    *opened = std::make_unique<Store>(Store::open(file, access));
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
  // The dialog would confirm the typed name, not the final one (with the
  // extension): we ask ourselves, about the final path.
  QString path = QFileDialog::getSaveFileName(this, tr("New experiment database"), QString(),
                                              tr("Experiment databases (*.scindb)"), nullptr,
                                              QFileDialog::DontConfirmOverwrite);
  if (path.isEmpty()) return;
  newDatabaseAt(path, [this](const QString& p) { return askOverwrite(p); });
}

void MainWindow::openDialog() {
  QString path = QFileDialog::getOpenFileName(this, tr("Open experiment database"), QString(),
                                              tr("Experiment databases (*.scindb);;All files (*)"));
  if (!path.isEmpty()) openDatabase(path);
}

void MainWindow::saveAsDialog() {
  QString path = QFileDialog::getSaveFileName(this, tr("Save experiment database as"), QString(),
                                              tr("Experiment databases (*.scindb)"), nullptr,
                                              QFileDialog::DontConfirmOverwrite);
  if (path.isEmpty()) return;
  path = withDbExtension(path);
  if (QFileInfo::exists(path) && QFileInfo(path).absoluteFilePath() != QFileInfo(databasePath()).absoluteFilePath() &&
      !askOverwrite(path))
    return;
  saveDatabaseAs(path);
}

bool MainWindow::isMeasurementFile(const QString& path) {
  const QString ext = QFileInfo(path).suffix().toLower();
  if (ext == QLatin1String("json")) {  // an nccl-tests JSON report (all_reduce_perf -J), not another JSON file
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return false;
    const QByteArray head = f.read(1 << 20);
    return head.trimmed().startsWith('{') && head.contains("\"results\"") && head.contains("\"config\"");
  }
  return ext == QLatin1String("log") || ext == QLatin1String("csv") || ext == QLatin1String("txt") ||
         ext == QLatin1String("out");
}

std::vector<std::int64_t> MainWindow::importMeasurements(const QStringList& files) {
  std::vector<std::int64_t> ids;
  if (files.isEmpty()) return ids;
  if (!store_) {
    showError(tr("Import measurements"), tr("Open or create an experiment database first."));
    return ids;
  }
  if (store_->read_only()) {
    showError(tr("Import measurements"), tr("%1 is open read-only: save a copy (File > Save As) to import into it.")
                                             .arg(QFileInfo(databasePath()).fileName()));
    return ids;
  }
  const std::filesystem::path db = store_->path();
  std::vector<std::filesystem::path> paths;
  for (const QString& f : files) paths.emplace_back(f.toStdString());
  struct Imported {
    std::vector<std::int64_t> ids;
    std::size_t points = 0, skipped_lines = 0, skipped_tables = 0;
  };
  auto out = std::make_shared<Imported>();
  const QString err = runOffGui(tr("Importing %n measurement file(s)…", nullptr, static_cast<int>(files.size())),
                                [db, paths, out] {
                                  // Parse everything first: a malformed file writes nothing.
                                  std::vector<MeasuredFile> parsed;
                                  for (const auto& p : paths) parsed.push_back(load_measured(p));
                                  Store s = Store::open(db, Access::ReadWrite);
                                  for (const auto& m : parsed) {
                                    out->ids.push_back(import_measured(s, m));
                                    out->points += m.rows.size();
                                    out->skipped_tables += m.skipped_tables.size();
                                    out->skipped_lines += m.ignored.size();
                                  }
                                  return QString();
                                });
  if (!err.isEmpty()) {
    showError(tr("Import measurements"), err);
    return ids;
  }
  ids = out->ids;
  statusBar()->showMessage(
      tr("Imported %1 measured run(s), %2 points%3; compare with a simulated run of the same fabric in the Validation tab")
          .arg(ids.size())
          .arg(out->points)
          .arg(out->skipped_tables || out->skipped_lines
                   ? tr(" (skipped %1 other benchmark table(s), %2 other line(s): listed in the run's spec)")
                         .arg(out->skipped_tables)
                         .arg(out->skipped_lines)
                   : QString()),
      15000);
  runBrowser_->reload();
  return ids;
}

void MainWindow::importMeasurementsDialog() {
  const QStringList files = QFileDialog::getOpenFileNames(
      this, tr("Import measurements"), QString(),
      tr("nccl-tests logs, JSON reports and measurement CSV (*.log *.txt *.out *.json *.csv);;All files (*)"));
  importMeasurements(files);
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
  // Measurement files are imported into the open database; anything else is opened as one.
  QStringList measurements;
  for (const QUrl& u : e->mimeData()->urls())
    if (u.isLocalFile() && isMeasurementFile(u.toLocalFile())) measurements << u.toLocalFile();
  if (!measurements.isEmpty()) {
    e->acceptProposedAction();
    importMeasurements(measurements);
    return;
  }
  for (const QUrl& u : e->mimeData()->urls())
    if (u.isLocalFile()) {
      openDatabase(u.toLocalFile());
      e->acceptProposedAction();
      return;
    }
}

}  // namespace scin::ui
