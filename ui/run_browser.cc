#include "ui/run_browser.h"

#include <QApplication>
#include <QFutureWatcher>
#include <QHeaderView>
#include <QInputDialog>
#include <QMenu>
#include <QMessageBox>
#include <QSignalBlocker>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>
#include <algorithm>

#include "sweep/sweep.h"
#include <utility>

namespace scin::ui {
namespace {
// What a narrow dock shows first: which run, whether it finished, how much of it is stored.
enum Col { kId, kName, kStatus, kPoints, kDate, kEngine, kTags, kNotes };
}

RunBrowser::RunBrowser(QWidget* parent) : QWidget(parent) {
  auto* lay = new QVBoxLayout(this);
  lay->setContentsMargins(2, 2, 2, 2);
  tree_ = new QTreeWidget;
  tree_->setHeaderLabels({tr("#"), tr("Name"), tr("Status"), tr("Points"), tr("Started (UTC)"), tr("Engine"),
                          tr("Tags"), tr("Notes")});
  tree_->setRootIsDecorated(false);
  tree_->setSelectionMode(QAbstractItemView::ExtendedSelection);
  tree_->setEditTriggers(QAbstractItemView::DoubleClicked | QAbstractItemView::EditKeyPressed);
  tree_->setContextMenuPolicy(Qt::CustomContextMenu);
  tree_->setToolTip(tr("Runs stored in this experiment database. Select several to overlay them; "
                       "double-click a name to rename; right-click for notes, tags and delete."));
  tree_->header()->setSectionResizeMode(QHeaderView::ResizeToContents);
  lay->addWidget(tree_);
  diff_ = new QLabel;
  diff_->setObjectName(QStringLiteral("runDifferences"));
  diff_->setTextFormat(Qt::PlainText);
  diff_->setWordWrap(true);
  diff_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  diff_->setVisible(false);
  lay->addWidget(diff_);
  connect(tree_, &QTreeWidget::itemSelectionChanged, this, [this] {
    if (!loading_) updateDifferences();
    if (!loading_) Q_EMIT selectionChanged(selectedRuns());
  });
  connect(tree_, &QTreeWidget::itemChanged, this, [this](QTreeWidgetItem* it, int col) {
    if (loading_ || col != kName) return;
    renameRun(it->data(kId, Qt::UserRole).toLongLong(), it->text(kName));
  });
  connect(tree_, &QTreeWidget::customContextMenuRequested, this, &RunBrowser::contextMenu);
  // Edits from the CLI (or another app) while the file is open appear without a restart.
  poll_ = new QTimer(this);
  poll_->setInterval(1000);
  connect(poll_, &QTimer::timeout, this, [this] { checkExternalChanges(); });
  poll_->start();
}

void RunBrowser::updateDifferences() {
  differing_.clear();
  const std::vector<std::int64_t> sel = selectedRuns();
  QStringList lines;
  if (sel.size() >= 2) {
    auto config = [this](std::int64_t id) {
      auto it = configs_.find(id);
      return it == configs_.end() ? nlohmann::json() : it->second;
    };
    auto text = [](const nlohmann::json& v) {
      if (v.is_null()) return QStringLiteral("(absent)");
      return QString::fromStdString(v.is_string() ? v.get<std::string>() : v.dump());
    };
    const nlohmann::json first = config(sel[0]);
    for (std::size_t i = 1; i < sel.size(); ++i) {
      const nlohmann::json other = config(sel[i]);
      if (first.is_null() || other.is_null()) {
        lines << tr("#%1 vs #%2: configuration not recorded").arg(sel[0]).arg(sel[i]);
        continue;
      }
      const auto diffs = config_diff(first, other);
      if (diffs.empty()) lines << tr("#%1 vs #%2: same fabric").arg(sel[0]).arg(sel[i]);
      for (const auto& d : diffs) {
        const QString path = QString::fromStdString(d.path);
        if (!differing_.contains(path)) differing_ << path;
        lines << tr("#%1 vs #%2: %3 = %4 → %5 %6")
                     .arg(sel[0]).arg(sel[i])
                     .arg(path, text(d.a), text(d.b), QString::fromStdString(d.unit))
                     .trimmed();
      }
    }
  }
  diff_->setText(lines.join(QLatin1Char('\n')));
  diff_->setVisible(!lines.isEmpty());
}

void RunBrowser::setPollInterval(int ms) {
  if (ms <= 0) {
    poll_->stop();
    return;
  }
  poll_->start(ms);
}

int RunBrowser::pollInterval() const { return poll_->isActive() ? poll_->interval() : 0; }

bool RunBrowser::checkExternalChanges() {
  // A name being edited in place would be lost by a reload: wait until it is done.
  QWidget* focus = QApplication::focusWidget();
  const bool editing = focus && focus != tree_ && focus != tree_->viewport() && tree_->isAncestorOf(focus);
  if (!store_ || waiting_ || editing) return false;
  std::int64_t v = -1;
  try {
    v = store_->data_version();
  } catch (const std::exception&) {
    return false;  // the next reload reports the problem
  }
  if (v == seenVersion_) return false;
  reload();
  return true;
}

void RunBrowser::setStore(Store* store) {
  store_ = store;
  // Rows of the previous database must not be edited through the new one.
  loading_ = true;
  tree_->clear();
  loading_ = false;
  selectAfterLoad_ = -1;
  reload();
}

void RunBrowser::reload() {
  const quint64 gen = ++generation_;
  if (!store_) {
    loading_ = true;
    tree_->clear();
    loading_ = false;
    selectAfterLoad_ = -1;
    waiting_ = false;
    return;
  }
  // The list is read through a read-only connection of its own on a worker;
  // the GUI thread only fills the tree.
  struct Listed {
    std::vector<RunInfo> runs;
    std::string error;
  };
  const std::filesystem::path path = store_->path();
  // Whatever was committed before this point is in the list read below.
  try {
    seenVersion_ = store_->data_version();
  } catch (const std::exception&) {
    seenVersion_ = -1;
  }
  waiting_ = true;
  auto* watcher = new QFutureWatcher<Listed>(this);
  connect(watcher, &QFutureWatcher<Listed>::finished, this, [this, watcher, gen] {
    watcher->deleteLater();
    if (gen != generation_) return;  // a newer reload (or another database) superseded this one
    waiting_ = false;
    Listed out = watcher->result();
    if (!out.error.empty()) {
      selectAfterLoad_ = -1;
      Q_EMIT error(QString::fromStdString(out.error));
      return;
    }
    populate(out.runs);
  });
  watcher->setFuture(QtConcurrent::run([path] {
    Listed out;
    try {
      out.runs = Store::open(path, Access::ReadOnly).list_runs();
    } catch (const std::exception& e) {
      out.error = e.what();
    }
    return out;
  }));
}

void RunBrowser::populate(const std::vector<RunInfo>& runs) {
  loading_ = true;
  const std::vector<std::int64_t> keep = selectedRuns();
  tree_->clear();
  configs_.clear();
  for (const RunInfo& r : runs) configs_[r.id] = r.config;
  const bool editable = store_ && !store_->read_only();
  for (const RunInfo& r : runs) {
    auto* it = new QTreeWidgetItem(tree_);
    it->setData(kId, Qt::UserRole, QVariant::fromValue<qlonglong>(r.id));
    it->setText(kId, QString::number(r.id));
    it->setText(kName, QString::fromStdString(r.name));
    // (to the minute; the seconds in the tooltip)
    const QString started = QString::fromStdString(r.started_at).replace(QLatin1Char('T'), QLatin1Char(' '));
    it->setText(kDate, started.left(16));
    it->setToolTip(kDate, started);
    it->setText(kEngine, QString::fromStdString(r.engine));
    it->setText(kStatus, QString::fromLatin1(to_string(r.status)));
    it->setData(kStatus, Qt::UserRole, static_cast<int>(r.status));
    if (r.status == RunStatus::Interrupted || r.status == RunStatus::Cancelled)
      it->setToolTip(kStatus, tr("%1 of %2 points stored; right-click > Resume computes the rest")
                                  .arg(r.points_stored)
                                  .arg(r.points_total));
    it->setText(kPoints, QStringLiteral("%1/%2").arg(r.points_stored).arg(r.points_total));
    QStringList tags;
    for (const auto& t : r.tags) tags << QString::fromStdString(t);
    it->setText(kTags, tags.join(QStringLiteral(", ")));
    it->setText(kNotes, QString::fromStdString(r.notes).section(QLatin1Char('\n'), 0, 0));
    it->setToolTip(kNotes, QString::fromStdString(r.notes));
    // A stored spec is whatever the file holds: read it only if it is an object with a string description.
    QString description;
    if (!r.spec.is_object()) {
      description = tr("spec unreadable (not a JSON object)");
      it->setText(kStatus, it->text(kStatus) + tr(", spec unreadable"));
    } else if (auto d = r.spec.find("description"); d != r.spec.end() && d->is_string()) {
      description = QString::fromStdString(d->get<std::string>());
    }
    it->setToolTip(kName, QStringLiteral("%1\nversion %2 (%3)")
                              .arg(description,
                                   QString::fromStdString(r.tool_version),
                                   QString::fromStdString(r.git_revision)));
    if (r.status != RunStatus::Done)
      it->setForeground(kStatus, r.status == RunStatus::Running ? QColor(0x1f, 0x77, 0xb4) : QColor(0xb0, 0x00, 0x20));
    it->setFlags(it->flags() | (editable ? Qt::ItemIsEditable : Qt::NoItemFlags));
    if (std::find(keep.begin(), keep.end(), r.id) != keep.end()) it->setSelected(true);
  }
  loading_ = false;
  updateDifferences();
  const std::int64_t select = std::exchange(selectAfterLoad_, -1);
  if (select >= 0) {
    selectRun(select);
  } else if (selectedRuns() != keep) {
    // Selected runs are gone (deleted, or another database): say so.
    Q_EMIT selectionChanged(selectedRuns());
  }
  Q_EMIT listLoaded();
}

std::vector<std::int64_t> RunBrowser::selectedRuns() const {
  std::vector<std::int64_t> out;
  for (int i = 0; i < tree_->topLevelItemCount(); ++i) {
    QTreeWidgetItem* it = tree_->topLevelItem(i);
    if (it->isSelected()) out.push_back(it->data(kId, Qt::UserRole).toLongLong());
  }
  return out;
}

void RunBrowser::selectRun(std::int64_t id) {
  if (busy()) {
    selectAfterLoad_ = id;  // the row may not be listed yet: select it once the list is
    return;
  }
  {
    loading_ = true;
    tree_->clearSelection();
    for (int i = 0; i < tree_->topLevelItemCount(); ++i) {
      QTreeWidgetItem* it = tree_->topLevelItem(i);
      if (it->data(kId, Qt::UserRole).toLongLong() == id) {
        it->setSelected(true);
        tree_->scrollToItem(it);
      }
    }
    loading_ = false;
  }
  updateDifferences();
  Q_EMIT selectionChanged(selectedRuns());
}

// The edits below stay on the GUI thread, through the store's connection (it
// is opened NOMUTEX, so no worker may share it); only the list refresh that
// follows goes to a worker. Each is small: rename and notes are one UPDATE of
// one row by primary key; tags are one transaction of a DELETE and a few
// INSERTs on run_tags. Deleting is one DELETE of one row per run, but its
// points go with it (ON DELETE CASCADE), so its cost grows with the run's
// point count; it is still one short transaction for runs of typical size.

bool RunBrowser::renameRun(std::int64_t id, const QString& name) {
  try {
    if (store_) store_->rename_run(id, name.toStdString());
  } catch (const std::exception& e) {
    Q_EMIT error(QString::fromUtf8(e.what()));
    reload();
    return false;
  }
  reload();
  Q_EMIT runsChanged();
  return true;
}

bool RunBrowser::annotateRun(std::int64_t id, const QString& notes) {
  try {
    if (store_) store_->set_notes(id, notes.toStdString());
  } catch (const std::exception& e) {
    Q_EMIT error(QString::fromUtf8(e.what()));
    return false;
  }
  reload();
  return true;
}

bool RunBrowser::tagRun(std::int64_t id, const QStringList& tags) {
  try {
    std::vector<std::string> t;
    for (const QString& s : tags)
      if (!s.trimmed().isEmpty()) t.push_back(s.trimmed().toStdString());
    if (store_) store_->set_tags(id, t);
  } catch (const std::exception& e) {
    Q_EMIT error(QString::fromUtf8(e.what()));
    return false;
  }
  reload();
  return true;
}

bool RunBrowser::deleteRuns(const std::vector<std::int64_t>& ids, bool confirm) {
  if (!store_ || ids.empty()) return false;
  if (confirm) {
    auto answer = QMessageBox::question(
        this, tr("Delete runs"),
        tr("Delete %n run(s) and all their points from %1? This cannot be undone.", "", static_cast<int>(ids.size()))
            .arg(QString::fromStdString(store_->path().filename().string())),
        QMessageBox::Yes | QMessageBox::Cancel, QMessageBox::Cancel);
    if (answer != QMessageBox::Yes) return false;
  }
  try {
    for (auto id : ids) store_->delete_run(id);
  } catch (const std::exception& e) {
    Q_EMIT error(QString::fromUtf8(e.what()));
    reload();
    return false;
  }
  reload();  // emits selectionChanged when the new list no longer holds the selected runs
  Q_EMIT runsChanged();
  return true;
}

bool RunBrowser::canResume(std::int64_t id) const {
  if (!store_ || store_->read_only()) return false;
  for (int i = 0; i < tree_->topLevelItemCount(); ++i) {
    QTreeWidgetItem* it = tree_->topLevelItem(i);
    if (it->data(kId, Qt::UserRole).toLongLong() != id) continue;
    const auto st = static_cast<RunStatus>(it->data(kStatus, Qt::UserRole).toInt());
    return st == RunStatus::Interrupted || st == RunStatus::Cancelled;
  }
  return false;
}

void RunBrowser::contextMenu(const QPoint& pos) {
  QTreeWidgetItem* it = tree_->itemAt(pos);
  if (!it || !store_) return;
  std::int64_t id = it->data(kId, Qt::UserRole).toLongLong();
  QMenu menu(this);
  QAction* resume = menu.addAction(tr("Resume"));
  resume->setToolTip(tr("Continue this run: compute only the points it lacks (as scin sweep --resume)"));
  resume->setEnabled(canResume(id));
  menu.addSeparator();
  QAction* rename = menu.addAction(tr("Rename…"));
  QAction* notes = menu.addAction(tr("Notes…"));
  QAction* tags = menu.addAction(tr("Tags…"));
  menu.addSeparator();
  QAction* del = menu.addAction(tr("Delete selected…"));
  for (QAction* a : {rename, notes, tags, del}) a->setEnabled(!store_->read_only());
  QAction* chosen = menu.exec(tree_->viewport()->mapToGlobal(pos));
  if (chosen == resume) {
    Q_EMIT resumeRequested(id);
  } else if (chosen == rename) {
    tree_->editItem(it, kName);
  } else if (chosen == notes) {
    bool ok = false;
    QString text = QInputDialog::getMultiLineText(this, tr("Run notes"), tr("Notes for run #%1").arg(id),
                                                  it->toolTip(kNotes), &ok);
    if (ok) annotateRun(id, text);
  } else if (chosen == tags) {
    bool ok = false;
    QString text = QInputDialog::getText(this, tr("Run tags"), tr("Comma-separated tags for run #%1").arg(id),
                                         QLineEdit::Normal, it->text(kTags), &ok);
    if (ok) tagRun(id, text.split(QLatin1Char(',')));
  } else if (chosen == del) {
    deleteRuns(selectedRuns());
  }
}

}  // namespace scin::ui
