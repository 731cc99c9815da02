// The fabric being edited: a scin::Config plus the QUndoStack every edit goes
// through. Widgets never change the Config directly; they call setParam() or
// loadConfig(), which push one small command each (consecutive edits of the
// same parameter merge into one undo step, as spin-box arrows produce many).
#pragma once

#include <string>

#include <QObject>
#include <QString>
#include <QUndoStack>

#include "fabric/config.h"
#include "fabric/params.h"

namespace scin::ui {

class FabricDoc : public QObject {
  Q_OBJECT
 public:
  explicit FabricDoc(QObject* parent = nullptr);

  const Config& config() const { return cfg_; }
  QUndoStack* undoStack() { return &undo_; }

  /// Sets one registry parameter through the undo stack. Returns false (and
  /// leaves the fabric unchanged) if the value is out of range; `error` says why.
  bool setParam(const std::string& path, const ParamValue& value, QString* error = nullptr);
  /// Replaces the whole fabric (preset load) as one undo step.
  void loadConfig(const Config& cfg, const QString& what);
  /// Replaces the fabric without an undo step (opening a document).
  void resetConfig(const Config& cfg);

  /// The fabric differs from the last one saved: opened (resetConfig), loaded
  /// as a preset (loadConfig), stored with a run or saved as a preset (markSaved).
  bool dirty() const;
  void markSaved();
  /// Empty when the fabric passes scin::validate, else the message.
  QString validationError() const;

  // Used by the undo commands.
  void applyParam(const std::string& path, const ParamValue& value);
  void applyConfig(const Config& cfg);

 Q_SIGNALS:
  /// The fabric changed; `path` is the parameter, or empty when everything may have.
  void changed(const QString& path);

 private:
  Config cfg_;
  QUndoStack undo_;
  std::string saved_;  // the saved fabric, serialised (config_to_json)
};

}  // namespace scin::ui
