// The run browser dock: every run in the experiment database with its name,
// date, engine, status, point count and tags. Rename (edit the name in place),
// annotate, tag, delete (with confirmation); select several to overlay them.
#pragma once

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
  void reload();
  /// Selected run ids, in list order.
  std::vector<std::int64_t> selectedRuns() const;
  void selectRun(std::int64_t id);
  QTreeWidget* tree() const { return tree_; }

  // Editing actions (also on the context menu). Each refreshes the list and
  // returns false with a message in the status tip if the store refuses.
  bool renameRun(std::int64_t id, const QString& name);
  bool annotateRun(std::int64_t id, const QString& notes);
  bool tagRun(std::int64_t id, const QStringList& tags);
  /// Asks for confirmation unless `confirm` is false.
  bool deleteRuns(const std::vector<std::int64_t>& ids, bool confirm = true);

 Q_SIGNALS:
  void selectionChanged(const std::vector<std::int64_t>& ids);
  /// A store operation failed; the message says why.
  void error(const QString& message);
  void runsChanged();

 private:
  void contextMenu(const QPoint& pos);

  Store* store_ = nullptr;
  QTreeWidget* tree_;
  bool loading_ = false;
};

}  // namespace scin::ui
