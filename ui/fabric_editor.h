// The fabric editor dock: a preset chooser and one field per registry
// parameter, grouped by path prefix. Labels, units, ranges and tooltips all
// come from scin::params(); every edit goes through FabricDoc's undo stack.
#pragma once

#include <map>
#include <string>

#include <QComboBox>
#include <QGroupBox>
#include <QLabel>
#include <QScrollArea>
#include <QWidget>

#include "ui/fabric_doc.h"
#include "ui/field_combo.h"

namespace scin::ui {

class FabricEditor : public QWidget {
  Q_OBJECT
 public:
  explicit FabricEditor(FabricDoc* doc, QWidget* parent = nullptr);

  /// Scrolls to and highlights the group of parameters under `prefix`
  /// ("links", "switch", "switch.isa", "accelerator"): what selecting an item
  /// in the topology view does.
  void focusGroup(const QString& prefix);
  /// The editing widget of a parameter (tests use it to type values).
  QWidget* fieldFor(const std::string& path) const;
  FieldCombo* presetBox() const { return preset_; }
  /// The chosen preset's description under the box (hidden when none is chosen).
  ClampedLabel* presetDescription() const { return presetAbout_; }
  /// Loads a preset by name through the undo stack; false with a message box-free error otherwise.
  bool selectPreset(const QString& name, QString* error = nullptr);

 private:
  void build();
  void refresh(const QString& path);
  void refreshField(const ParamInfo& p);
  void showPresetDescription();
  QWidget* makeField(const ParamInfo& p);
  void commit(const std::string& path, const ParamValue& v);

  FabricDoc* doc_;
  FieldCombo* preset_ = nullptr;
  ClampedLabel* presetAbout_ = nullptr;  // the chosen preset's description, wrapped, in 4 lines
  QScrollArea* scroll_ = nullptr;
  QLabel* status_ = nullptr;
  std::map<std::string, QWidget*> fields_;
  std::map<QString, QGroupBox*> groups_;
};

/// "switch.isa.waves" -> "switch.isa"; "links.latency_ns" -> "links".
QString groupOf(const std::string& path);
/// The group box title for a prefix: "Links", "Switch: in-switch accelerator (SCIN ISA)".
QString groupTitle(const QString& prefix);

}  // namespace scin::ui
