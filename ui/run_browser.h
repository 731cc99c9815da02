// The run browser dock: every run in the experiment database with its name,
// date, engine, status, point count and tags. Rename (edit the name in place),
// annotate, tag, delete (with confirmation); select several to overlay them;
// Resume an interrupted or cancelled run (the main window runs it).
//
// The list is read on a worker thread through a read-only connection of its
// own (QtConcurrent); a reload superseded by a newer one is dropped. Edits run
// on the GUI thread through the store's connection, each one short
// transaction (see run_browser.cc), then the list reloads in the background.
#pragma once

#include <map>

#include <QLabel>
#include <QTimer>
#include <QTreeWidget>
#include <QWidget>

#include "store/store.h"

namespace scin::ui {

class RunBrowser : public QWidget {
  Q_OBJECT
 public:
  explicit RunBrowser(QWidget* parent = nullptr);

  /// The database to show (not owned; may be null). Reloads.
  void setStore(Store* store);
  /// Re-reads the list on a worker; the tree updates (keeping the selection)
  /// when it finishes, and emits listLoaded. Only the newest reload is shown.
  void reload();
  /// The newest reload has not arrived yet (older ones still running are
  /// dropped when they finish and do not count).
  bool busy() const { return waiting_; }
  /// Selected run ids, in list order.
  std::vector<std::int64_t> selectedRuns() const;
  /// Selects only `id` and emits selectionChanged; while a reload is in
  /// flight, does so once the new list is shown.
  void selectRun(std::int64_t id);
  QTreeWidget* tree() const { return tree_; }
  /// Another connection (the CLI, another app) committed to the file since the
  /// last reload: reloads and returns true. A timer calls it every
  /// pollInterval() ms (SQLite's data_version: one trivial PRAGMA per tick).
  bool checkExternalChanges();
  /// With two or more runs selected: the configuration parameters whose values
  /// differ from the first selected run (core's config_diff, as `scin diff`),
  /// shown under the list. Empty otherwise.
  QStringList differingParameters() const { return differing_; }
  /// The text shown under the list.
  QString differencesText() const { return diff_->text(); }
  void setPollInterval(int ms);
  int pollInterval() const;

  // Editing actions (also on the context menu). Each refreshes the list and
  // returns false with a message in the status tip if the store refuses.
  bool renameRun(std::int64_t id, const QString& name);
  bool annotateRun(std::int64_t id, const QString& notes);
  bool tagRun(std::int64_t id, const QStringList& tags);
  /// The run can be resumed: listed as interrupted or cancelled, and the file is writable.
  bool canResume(std::int64_t id) const;
  /// Asks for confirmation unless `confirm` is false.
  bool deleteRuns(const std::vector<std::int64_t>& ids, bool confirm = true);

 Q_SIGNALS:
  void selectionChanged(const std::vector<std::int64_t>& ids);
  /// A store operation failed; the message says why.
  void error(const QString& message);
  void runsChanged();
  /// The user chose Resume on an interrupted or cancelled run.
  void resumeRequested(std::int64_t id);
  /// A reload finished and the tree shows the new list.
  void listLoaded();

 private:
  void contextMenu(const QPoint& pos);
  void populate(const std::vector<RunInfo>& runs);
  void updateDifferences();

  Store* store_ = nullptr;
  QTreeWidget* tree_;
  QTimer* poll_;
  QLabel* diff_;
  QStringList differing_;
  std::map<std::int64_t, nlohmann::json> configs_;  // recorded configuration by run id (null: not recorded)
  std::int64_t seenVersion_ = -1;  // store_->data_version() at the last reload
  bool loading_ = false;        // the tree is being filled: selection signals are ours
  bool waiting_ = false;        // the newest reload is in flight
  quint64 generation_ = 0;      // newest reload; older results are dropped
  std::int64_t selectAfterLoad_ = -1;  // selectRun() asked during a reload
};

}  // namespace scin::ui
