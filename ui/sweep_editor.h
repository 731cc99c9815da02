// The sweep editor dock: message-size range, algorithms, engine, dtype and one
// optional extra axis over any registry parameter (the same dotted paths the
// CLI's --set and `scin sweep` use). Emits changed() on every edit; the main
// window turns that into a preview.
#pragma once

#include <map>
#include <string>

#include <QCheckBox>
#include <QComboBox>
#include <QLabel>
#include <QLineEdit>
#include <QSpinBox>
#include <QWidget>

#include "ui/experiment.h"
#include "ui/fabric_doc.h"

namespace scin::ui {

class SweepEditor : public QWidget {
  Q_OBJECT
 public:
  explicit SweepEditor(FabricDoc* doc, QWidget* parent = nullptr);

  SweepRequest request() const;
  void setRequest(const SweepRequest& r);
  QCheckBox* algorithmBox(const std::string& name) const;

 Q_SIGNALS:
  void changed();

 private:
  void updateAvailability();
  void updateCount();

  FabricDoc* doc_;
  QComboBox* min_ = nullptr;
  QComboBox* max_ = nullptr;
  QSpinBox* factor_ = nullptr;
  QComboBox* engine_ = nullptr;
  QComboBox* dtype_ = nullptr;
  QComboBox* axis_ = nullptr;
  QLineEdit* axisValues_ = nullptr;
  QLabel* count_ = nullptr;
  std::map<std::string, QCheckBox*> algos_;
};

}  // namespace scin::ui
