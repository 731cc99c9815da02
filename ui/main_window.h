// The main window: the experiment database is the document (title shows its
// name and modified state), docks for the fabric, the topology, the sweep and
// the runs, chart tabs in the centre, run progress in the status bar.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include <QLabel>
#include <QMainWindow>
#include <QProgressBar>
#include <QPushButton>
#include <QTabWidget>

#include "store/store.h"
#include "sweep/sweep.h"
#include "ui/experiment.h"

namespace scin::ui {

class FabricDoc;
class FabricEditor;
class TopologyView;
class SweepEditor;
class RunBrowser;
class RunController;
class Preview;
struct PreviewStatus;
class ChartPanel;
class LatencyChart;
class BandwidthChart;
class SpeedupChart;
class BreakdownChart;
class AnalysisView;
class MeasuredOverlay;
class ValidationView;

class MainWindow : public QMainWindow {
  Q_OBJECT
 public:
  explicit MainWindow(QWidget* parent = nullptr);
  ~MainWindow() override;

  // --- the document ---------------------------------------------------------
  /// Opens an existing experiment database; on failure (a missing file too:
  /// opening never creates, except the default database) shows an error box,
  /// keeps the current document and returns false.
  bool openDatabase(const QString& path);
  /// Opens `path`, creating an empty database if it is missing (File > New).
  bool createDatabase(const QString& path);
  /// File > New without the dialog: the final path is `typed` with the
  /// .scindb extension; if that file exists, `confirmOverwrite(finalPath)`
  /// decides — false leaves it untouched and returns false.
  bool newDatabaseAt(const QString& typed, const std::function<bool(const QString&)>& confirmOverwrite);
  /// `typed` with the .scindb extension appended unless it has it.
  static QString withDbExtension(const QString& typed);
  /// Writes a copy of the current database to `path` and makes it the document.
  bool saveDatabaseAs(const QString& path);
  QString databasePath() const;
  Store* store() const { return store_.get(); }
  /// File > Import measurements without the dialog: reads nccl-tests logs or CSV files
  /// (core's load_measured) and stores each as a measured run in the open database, on
  /// a worker; a malformed file imports nothing and is shown as an error. Returns the new
  /// runs' ids (empty on failure or a read-only database).
  std::vector<std::int64_t> importMeasurements(const QStringList& files);
  /// A dropped or opened file that is a measurement (.log, .csv, .txt, .out), not a database.
  static bool isMeasurementFile(const QString& path);
  /// The default database (AppDataLocation/experiments.scindb), created on demand.
  static QString defaultDatabasePath();

  // --- the experiment -----------------------------------------------------
  FabricDoc* fabric() const { return doc_; }
  FabricEditor* fabricEditor() const { return fabricEditor_; }
  SweepEditor* sweepEditor() const { return sweepEditor_; }
  TopologyView* topology() const { return topology_; }
  RunBrowser* runBrowser() const { return runBrowser_; }
  RunController* runner() const { return runner_; }
  Preview* preview() const { return preview_; }
  bool loadPreset(const QString& name);
  /// The fabric has edits not yet stored in a run nor saved as a preset.
  bool fabricDirty() const;
  /// Saves the fabric as user preset `name` (scin presets lists it). If that
  /// preset exists, `confirmOverwrite(file)` decides. False with `error` set on
  /// a refusal or a bad name; false with `error` empty when declined.
  bool saveFabricAsPreset(const QString& name, const std::function<bool(const QString&)>& confirmOverwrite,
                          QString* error);
  /// What quitting with a dirty fabric asks (tests replace the dialog).
  enum class UnsavedChoice { Save, Discard, Cancel };
  void setUnsavedPrompt(std::function<UnsavedChoice()> prompt) { unsavedPrompt_ = std::move(prompt); }

  // --- charts -------------------------------------------------------------
  std::vector<ChartPanel*> charts() const;
  ChartPanel* chart(const QString& id) const;
  /// Selects a tab by id ("latency", "bandwidth", "speedup", "breakdown", "quant").
  bool showTab(const QString& id);
  /// Id of the chart tab in front.
  QString currentTab() const;
  /// The analysis view over the stored run shown (tab "analysis").
  AnalysisView* analysisView() const { return analysis_; }
  /// The measured runs matching the stored run shown (overlaid on latency and bandwidth; tab "validation").
  MeasuredOverlay* measuredOverlay() const { return measured_; }
  /// Writes the report (.html or .pdf) of what is shown; every chart with data
  /// is computed and included, whether or not its tab was opened.
  bool exportReportTo(const QString& path, QString* error);
  /// What the charts currently show.
  const ResultSet& shown() const { return shown_; }
  QString shownLabel() const;
  /// The same as plain text (no markup): "Stored run #3 isa-waves (done)".
  QString shownPlainLabel() const;

  // --- running ------------------------------------------------------------
  /// Starts the sweep of the editors into the database. False if one runs.
  /// The sweep is estimated first (on the worker); above the budget (5 min of
  /// CPU on one core, as `scin sweep`'s default --max-work, or more memory than
  /// is available) it does not start: a box ("budgetBox") gives the estimate
  /// and offers Run anyway (`force`: start it without that check).
  bool startRun(const QString& name = {}, bool force = false);
  void cancelRun();
  /// Continues the interrupted or cancelled run `id` in the background (the
  /// run browser's Resume); progress in the status bar as for a new run.
  /// False if a run is going, the file is read-only or the run cannot resume.
  bool resumeRun(std::int64_t id);
  bool isRunning() const;
  /// Status text of the last finished run ("done", "cancelled", "failed",
  /// "refused": above the budget, nothing stored).
  QString lastRunStatus() const { return lastStatus_; }
  qint64 lastRunId() const { return lastRunId_; }

  /// Shows every run in `ids` (first as primary, the rest as dashed overlays).
  void showRuns(const std::vector<std::int64_t>& ids);
  /// Back to the live preview of the editors.
  void showPreview();

  /// Last error shown to the user (tests check it).
  QString lastError() const { return lastError_; }

  /// True while a database is opened/copied or a run's points load on a
  /// worker thread (the window is disabled meanwhile), or the run browser's
  /// list reloads on one (the window stays enabled).
  bool ioBusy() const;

 Q_SIGNALS:
  void runFinished(qint64 run_id, const QString& status);
  void chartsUpdated();

 protected:
  void closeEvent(QCloseEvent* e) override;
  void showEvent(QShowEvent* e) override;
  void dragEnterEvent(QDragEnterEvent* e) override;
  void dropEvent(QDropEvent* e) override;

 private:
  void buildActions();
  void buildDocks();
  void buildStatusBar();
  void requestPreview();
  void onPreviewProgress(const PreviewStatus& st);
  void setShown(const ResultSet& rs, const QString& label);
  void redrawCharts();
  /// The chart tabs, without bringing stale ones up to date.
  std::vector<ChartPanel*> chartWidgets() const;
  /// Gives the charts not in front the results they missed (charts() and a tab change do).
  void flushStaleCharts() const;
  /// Gives one timing chart the results shown, and the reason it is empty (emptyWhy_).
  void refreshChart(ChartPanel* c) const;
  void updateTitle();
  void setModified(bool m);
  void showError(const QString& title, const QString& message);
  void addRecent(const QString& path);
  void rebuildRecentMenu();
  void restoreSettings();
  QRect availableScreen() const;
  /// Shrinks and moves the window so it lies inside the available screen.
  void fitToScreen();
  void saveSettings();
  void onPoints(const std::vector<PointRecord>& pts);
  void onProgress(const SweepProgress& p);
  void onRunFinished(qint64 id, const QString& status, const QString& error);
  void exportCurrentChart();
  void exportCurrentCsv();
  void exportReport();
  void newDatabase();
  void openDialog();
  void saveAsDialog();
  void importMeasurementsDialog();
  /// Runs `work` (SQLite I/O) on a worker thread with the window disabled and a
  /// busy cursor, processing events until it is done. `work` must not touch
  /// widgets; it returns an error message or "".
  QString runOffGui(const QString& what, std::function<QString()> work);
  void setIoBusy(bool busy, const QString& what);
  bool openStore(const QString& path, Access access);
  /// The status-bar state of a run that just started (new or resumed).
  void showRunStarted(std::size_t points);
  /// Asks (modal) whether to replace the existing file `path`.
  bool askOverwrite(const QString& path);
  /// Fabric > Save as user preset…: asks for a name; true once saved.
  bool savePresetDialog();
  std::function<UnsavedChoice()> unsavedPrompt_;

  FabricDoc* doc_;
  FabricEditor* fabricEditor_ = nullptr;
  TopologyView* topology_ = nullptr;
  SweepEditor* sweepEditor_ = nullptr;
  RunBrowser* runBrowser_ = nullptr;
  RunController* runner_ = nullptr;
  Preview* preview_ = nullptr;
  QTabWidget* tabs_ = nullptr;
  LatencyChart* latency_ = nullptr;
  BandwidthChart* bandwidth_ = nullptr;
  SpeedupChart* speedup_ = nullptr;
  BreakdownChart* breakdown_ = nullptr;
  AnalysisView* analysis_ = nullptr;
  MeasuredOverlay* measured_ = nullptr;
  ValidationView* validation_ = nullptr;
  ChartPanel* quant_ = nullptr;     // quantisation error (with scin_numerics)
  ChartPanel* timeline_ = nullptr;  // link utilisation (with the packet engine)
  QLabel* showing_ = nullptr;
  QProgressBar* progress_ = nullptr;
  QLabel* rate_ = nullptr;
  QPushButton* cancel_ = nullptr;
  QLabel* previewState_ = nullptr;       // a large or capped preview says so here
  QPushButton* previewAll_ = nullptr;    // computes the points the preview's cap left out
  QPushButton* previewStop_ = nullptr;   // stops a long preview
  QTimer* previewSlow_ = nullptr;        // a preview not done after a moment says it is computing
  QMenu* recentMenu_ = nullptr;
  QAction* runAction_ = nullptr;
  QAction* cancelAction_ = nullptr;
  QTimer* redrawTimer_ = nullptr;
  // While a live preview refines, charts not in front get its partial results
  // only when shown or asked for: one chart repaints per partial result, not four.
  mutable std::vector<ChartPanel*> staleCharts_;
  static constexpr int kStaleChartsDelayMs = 250;  // after the last complete result, before the hidden tabs follow
  QString emptyWhy_;              // why the timing charts are empty ("" when they are not)
  bool partialPreview_ = false;  // the results shown are a partial preview (front chart only)
  QTimer* staleTimer_ = nullptr;  // complete results reach the other tabs right after the front one is painted

  std::unique_ptr<Store> store_;
  ResultSet shown_;
  QString shownLabel_;
  QString shownPlain_;
  std::vector<std::string> shownAlgorithms_;  // the stored run's algorithms (its points'); empty: the live preview
  QString shownGpus_;          // the stored run's accelerator counts ("72", "4-8"); empty: the live preview's
  QString kindNote_;          // why the timing tabs are empty for the stored run shown
  // The stored run's fabric (its preset with its overrides), offered in the Fabric dock.
  QWidget* runFabricBar_ = nullptr;
  QLabel* runFabricText_ = nullptr;
  std::optional<Config> runFabric_;
  qint64 runFabricId_ = 0;
  QString runFabricChanges_;   // what run runFabricId_ changed from its preset (changedParamsPhrase)
  bool showingPreview_ = true;
  bool sizeDocksOnShow_ = false;  // first start (no saved layout): give the docks their widths once shown
  bool modified_ = false;
  bool runListed_ = false;
  QString lastStatus_;
  qint64 lastRunId_ = 0;
  QString lastRunName_;        // the name startRun() gave the run (Run anyway starts it again under it)
  QString runEstimate_;        // the running sweep's estimate ("estimated 7 min of CPU"), shown with its progress
  QString lastError_;
  int ioDepth_ = 0;
  bool loading_ = false;      // a run's points are loading (showRuns)
  quint64 loadGeneration_ = 0;  // newest showRuns request; older results are dropped
};

}  // namespace scin::ui
