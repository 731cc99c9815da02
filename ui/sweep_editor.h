// The sweep editor dock: message-size range, algorithms, engine, dtype and any
// number of extra axes over registry parameters (the same dotted paths the
// CLI's --set and `scin sweep` use), crossed as a Cartesian product or zipped
// with the axis above. Each axis takes a list ("450, 900") or a range
// ("100..300 step 50", "225..1800 x2", "0..1 count 5"), checked against the
// registry's range as it is typed. Emits changed() on every edit; the main
// window turns that into a preview.
#pragma once

#include <map>
#include <optional>
#include <string>

#include <QCheckBox>
#include <QComboBox>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QToolButton>
#include <QVBoxLayout>
#include <QWidget>

#include "ui/experiment.h"
#include "store/store.h"
#include "ui/fabric_doc.h"

namespace scin::ui {

class SweepEditor : public QWidget {
  Q_OBJECT
 public:
  explicit SweepEditor(FabricDoc* doc, QWidget* parent = nullptr);

  /// The editor's sweep (also while the widgets show a stored run's).
  SweepRequest request() const;
  /// Replaces the request without an undo step (opening a document). Edits
  /// made in the widgets are undo steps on the fabric's stack (one per change).
  void setRequest(const SweepRequest& r);
  QCheckBox* algorithmBox(const std::string& name) const;

  // --- extra axes (tests drive these widgets) ---------------------------------
  int axisCount() const { return static_cast<int>(rows_.size()); }
  /// Adds an axis row (empty: the user picks the parameter); returns its index.
  int addAxis(const ExtraAxis& a = {});
  void removeAxis(int i);
  QPushButton* addAxisButton() const { return addAxis_; }
  QComboBox* axisPathBox(int i) const { return rows_.at(static_cast<std::size_t>(i)).path; }
  QLineEdit* axisValuesEdit(int i) const { return rows_.at(static_cast<std::size_t>(i)).values; }
  QLabel* axisUnitLabel(int i) const { return rows_.at(static_cast<std::size_t>(i)).unit; }
  QCheckBox* axisZipBox(int i) const { return rows_.at(static_cast<std::size_t>(i)).zip; }
  QToolButton* axisRemoveButton(int i) const { return rows_.at(static_cast<std::size_t>(i)).remove; }
  /// The validation message of the extra axes, empty when they are valid.
  QString axisError() const;
  /// "N points: …" (or why the sweep cannot run).
  QString countText() const { return count_->text(); }

  // --- a stored run shown (the dock shows its sweep, read-only) ----------------
  /// Shows the sweep of stored run `run` (the primary of those selected;
  /// `overlaid` more are drawn dashed) in the widgets, read-only, with a
  /// banner naming it; the editor's own sweep is kept and comes back with
  /// showEditing(). Emits nothing: the charts keep showing the run.
  void showStoredRun(const RunInfo& run, int overlaid = 0);
  /// Back to the editor's own sweep (the live preview).
  void showEditing();
  bool showingStored() const { return stored_; }
  /// The banner over the widgets while a stored run is shown.
  QString storedText() const { return banner_->text(); }

 Q_SIGNALS:
  void changed();

 private:
  friend class SetSweepCommand;
  void applyRequest(const SweepRequest& r);
  /// Applies `r` from the undo stack (no new undo step).
  void restore(const SweepRequest& r);
  /// changed(): pushes the edit since the last state onto the undo stack.
  void recordEdit();
  void updateAvailability();
  void updateCount();
  void updateAxisRow(int i);
  void clearAxes();

  struct AxisRow {
    QWidget* box = nullptr;
    QComboBox* path = nullptr;
    QLabel* unit = nullptr;
    QLineEdit* values = nullptr;
    QCheckBox* zip = nullptr;
    QToolButton* remove = nullptr;
  };

  FabricDoc* doc_;
  QComboBox* min_ = nullptr;
  QComboBox* max_ = nullptr;
  QSpinBox* factor_ = nullptr;
  QComboBox* engine_ = nullptr;
  QComboBox* dtype_ = nullptr;
  std::vector<AxisRow> rows_;
  QVBoxLayout* axesLayout_ = nullptr;
  QPushButton* addAxis_ = nullptr;
  QLabel* count_ = nullptr;
  std::map<std::string, QCheckBox*> algos_;
  void setInputsEnabled(bool on);

  QWidget* inputs_ = nullptr;       // every editing widget
  QLabel* banner_ = nullptr;        // "Stored run #3 … (read-only)"
  QPushButton* editCopy_ = nullptr;
  bool stored_ = false;             // a stored run's sweep is shown
  SweepRequest editing_;            // the editor's own sweep while a stored one is shown
  std::optional<SweepRequest> storedRequest_;  // the stored run's sweep, when it is a timing sweep
  QString storedCount_;
  SweepRequest last_;      // the state the newest undo step leads to
  bool applying_ = false;  // changed() comes from setRequest/restore, not an edit
};

}  // namespace scin::ui
