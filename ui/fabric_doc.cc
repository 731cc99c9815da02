#include "ui/fabric_doc.h"

#include <QUndoCommand>

#include "base/error.h"
#include "fabric/preset.h"

namespace scin::ui {
namespace {

class SetParamCommand : public QUndoCommand {
 public:
  SetParamCommand(FabricDoc* doc, std::string path, ParamValue before, ParamValue after)
      : doc_(doc), path_(std::move(path)), before_(std::move(before)), after_(std::move(after)) {
    const ParamInfo& p = param(path_);
    setText(QStringLiteral("set %1").arg(QString::fromStdString(p.label)));
  }
  void undo() override { doc_->applyParam(path_, before_); }
  void redo() override { doc_->applyParam(path_, after_); }
  int id() const override { return 1; }
  bool mergeWith(const QUndoCommand* other) override {
    auto* o = static_cast<const SetParamCommand*>(other);
    if (o->path_ != path_) return false;
    after_ = o->after_;
    return true;
  }

 private:
  FabricDoc* doc_;
  std::string path_;
  ParamValue before_, after_;
};

class SetConfigCommand : public QUndoCommand {
 public:
  SetConfigCommand(FabricDoc* doc, Config before, Config after, const QString& what)
      : doc_(doc), before_(std::move(before)), after_(std::move(after)) {
    setText(what);
  }
  void undo() override { doc_->applyConfig(before_); }
  void redo() override { doc_->applyConfig(after_); }

 private:
  FabricDoc* doc_;
  Config before_, after_;
};

}  // namespace

FabricDoc::FabricDoc(QObject* parent) : QObject(parent) {}

bool FabricDoc::setParam(const std::string& path, const ParamValue& value, QString* error) {
  const ParamInfo& p = param(path);
  // Check the value on a copy first, so an invalid edit never reaches the stack.
  Config trial = cfg_;
  try {
    if (p.type == ParamType::Int || p.type == ParamType::Real) {
      double x = std::holds_alternative<double>(value)
                     ? std::get<double>(value)
                     : static_cast<double>(std::get<std::int64_t>(value));
      set_param(trial, path, x);
    } else {
      p.set(trial, value);
    }
  } catch (const Error& e) {
    if (error) *error = QString::fromUtf8(e.what());
    return false;
  }
  ParamValue before = p.get(cfg_);
  ParamValue after = p.get(trial);
  if (before == after) return true;
  undo_.push(new SetParamCommand(this, path, before, after));
  return true;
}

void FabricDoc::loadConfig(const Config& cfg, const QString& what) {
  undo_.push(new SetConfigCommand(this, cfg_, cfg, what));
  markSaved();  // a preset just loaded is saved (as that preset): not an unsaved edit
}

bool FabricDoc::dirty() const { return config_to_json(cfg_).dump() != saved_; }

void FabricDoc::markSaved() { saved_ = config_to_json(cfg_).dump(); }

void FabricDoc::resetConfig(const Config& cfg) {
  undo_.clear();
  applyConfig(cfg);
  markSaved();
}

QString FabricDoc::validationError() const {
  try {
    validate(cfg_);
  } catch (const Error& e) {
    return QString::fromUtf8(e.what());
  }
  return {};
}

void FabricDoc::applyParam(const std::string& path, const ParamValue& value) {
  param(path).set(cfg_, value);
  Q_EMIT changed(QString::fromStdString(path));
}

void FabricDoc::applyConfig(const Config& cfg) {
  cfg_ = cfg;
  Q_EMIT changed(QString());
}

}  // namespace scin::ui
