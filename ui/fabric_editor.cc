#include "ui/fabric_editor.h"

#include <cmath>

#include <QCheckBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QLineEdit>
#include <QScrollArea>
#include <QScrollBar>
#include <QSignalBlocker>
#include <QTimer>
#include <QVBoxLayout>

#include "base/error.h"
#include "fabric/preset.h"
#include "ui/format.h"

namespace scin::ui {

QString groupOf(const std::string& path) {
  auto dot = path.rfind('.');
  return QString::fromStdString(dot == std::string::npos ? path : path.substr(0, dot));
}

QString groupTitle(const QString& prefix) {
  static const std::map<QString, QString> titles = {
      {QStringLiteral("fabric"), QStringLiteral("Fabric shape")},
      {QStringLiteral("accelerator"), QStringLiteral("Accelerator (GPU)")},
      {QStringLiteral("links"), QStringLiteral("Links (per accelerator)")},
      {QStringLiteral("switch"), QStringLiteral("Switch")},
      {QStringLiteral("switch.nvls"), QStringLiteral("Switch: NVLink SHARP (NVLS)")},
      {QStringLiteral("switch.isa"), QStringLiteral("Switch: in-switch accelerator (SCIN ISA, INQ)")},
      {QStringLiteral("packet"), QStringLiteral("Packet engine")},
      {QStringLiteral("ring"), QStringLiteral("Software ring (NCCL)")},
      {QStringLiteral("quant"), QStringLiteral("Quantisation (INQ and q8 algorithms)")},
  };
  auto it = titles.find(prefix);
  return it == titles.end() ? prefix : it->second;
}

namespace {

constexpr int kDescriptionRole = Qt::UserRole + 1;

QString tooltipFor(const ParamInfo& p) {
  QString unit = p.unit.empty() ? QString() : QStringLiteral(" [%1]").arg(unitSuffix(p.unit));
  return QStringLiteral("<b>%1</b>%2<br><code>%3</code><br>%4<br>Allowed: %5")
      .arg(QString::fromStdString(p.label), unit, QString::fromStdString(p.path),
           QString::fromStdString(p.help).toHtmlEscaped(),
           QString::fromStdString(format_range(p)).toHtmlEscaped());
}

int decimalsFor(const ParamInfo& p) {
  if (p.type == ParamType::Int) return 0;
  if (p.max <= 1.0) return 3;
  if (p.max <= 100.0) return 2;
  return 1;
}

}  // namespace

FabricEditor::FabricEditor(FabricDoc* doc, QWidget* parent) : QWidget(parent), doc_(doc) {
  build();
  connect(doc_, &FabricDoc::changed, this, &FabricEditor::refresh);
  refresh(QString());
}

void FabricEditor::build() {
  auto* outer = new QVBoxLayout(this);
  outer->setContentsMargins(4, 4, 4, 4);
  auto* top = new QFormLayout;
  // A dock is too narrow for "name — description" (a laptop's always): the
  // closed box shows the name, and the description is wrapped beneath it.
  preset_ = new FieldCombo(nullptr, FieldCombo::Keep::Key);
  preset_->setShortAlways(true);
  preset_->setObjectName(QStringLiteral("preset"));
  preset_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
  preset_->setMinimumContentsLength(18);
  preset_->setPurpose(tr("Load a preset fabric (resources/presets/*.json). Undoable."));
  preset_->addItem(tr("— choose a preset —"), QString());
  try {
    for (const auto& pr : list_presets()) {
      preset_->addItem(QStringLiteral("%1 — %2").arg(QString::fromStdString(pr.name),
                                                     QString::fromStdString(pr.description)),
                       QString::fromStdString(pr.name));
      preset_->setItemData(preset_->count() - 1, preset_->itemText(preset_->count() - 1), Qt::ToolTipRole);
      preset_->setItemData(preset_->count() - 1, QString::fromStdString(pr.description), kDescriptionRole);
    }
  } catch (const Error&) {
  }
  connect(preset_, &QComboBox::activated, this, [this](int i) {
    QString name = preset_->itemData(i).toString();
    if (!name.isEmpty()) selectPreset(name);
  });
  connect(preset_, &QComboBox::currentIndexChanged, this, [this] { showPresetDescription(); });
  presetAbout_ = new ClampedLabel(4);  // (a laptop's dock has room for few fields: the tooltip has it whole)
  presetAbout_->setObjectName(QStringLiteral("presetDescription"));
  presetAbout_->setForegroundRole(QPalette::PlaceholderText);
  top->addRow(tr("Preset"), preset_);
  top->addRow(QString(), presetAbout_);
  outer->addLayout(top);
  showPresetDescription();

  auto* body = new QWidget;
  auto* bl = new QVBoxLayout(body);
  bl->setContentsMargins(0, 0, 0, 0);
  QFormLayout* form = nullptr;
  QString current;
  for (const auto& p : params()) {
    QString g = groupOf(p.path);
    if (g != current || !form) {
      current = g;
      auto* box = new QGroupBox(groupTitle(g));
      box->setObjectName(g);
      form = new QFormLayout(box);
      form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
      form->setRowWrapPolicy(QFormLayout::WrapLongRows);  // a narrow dock puts a value under its label
      bl->addWidget(box);
      groups_[g] = box;
    }
    QWidget* f = makeField(p);
    QString label = QString::fromStdString(p.label);
    auto* l = new QLabel(label);
    l->setToolTip(tooltipFor(p));
    l->setBuddy(f);
    form->addRow(l, f);
    fields_[p.path] = f;
  }
  bl->addStretch(1);
  scroll_ = new QScrollArea;
  scroll_->setWidgetResizable(true);
  scroll_->setWidget(body);
  // Never narrower than its widest label or value (a narrow dock puts a value under its label, the
  // editor scrolls vertically only), so a smaller window or a restored layout cannot cut values off.
  scroll_->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  scroll_->setMinimumWidth(body->minimumSizeHint().width() + scroll_->verticalScrollBar()->sizeHint().width() +
                           2 * scroll_->frameWidth());
  outer->addWidget(scroll_, 1);
  status_ = new QLabel;
  status_->setWordWrap(true);
  status_->setStyleSheet(QStringLiteral("color: #b00020;"));
  outer->addWidget(status_);
}

QWidget* FabricEditor::makeField(const ParamInfo& p) {
  const std::string path = p.path;
  QWidget* w = nullptr;
  switch (p.type) {
    case ParamType::Bool: {
      auto* cb = new QCheckBox;
      connect(cb, &QCheckBox::toggled, this, [this, path](bool on) { commit(path, ParamValue(on)); });
      w = cb;
      break;
    }
    case ParamType::Enum: {
      auto* cb = new QComboBox;
      for (const auto& c : p.choices) cb->addItem(QString::fromStdString(c));
      connect(cb, &QComboBox::activated, this, [this, path, cb](int) {
        commit(path, ParamValue(cb->currentText().toStdString()));
      });
      w = cb;
      break;
    }
    case ParamType::String: {
      auto* le = new QLineEdit;
      connect(le, &QLineEdit::editingFinished, this,
              [this, path, le] { commit(path, ParamValue(le->text().toStdString())); });
      w = le;
      break;
    }
    case ParamType::Int:
    case ParamType::Real: {
      auto* sb = new QDoubleSpinBox;
      sb->setDecimals(decimalsFor(p));
      sb->setRange(p.min, p.max);
      sb->setKeyboardTracking(false);
      sb->setStepType(QAbstractSpinBox::AdaptiveDecimalStepType);
      if (p.type == ParamType::Int) sb->setSingleStep(1);
      QString u = unitSuffix(p.unit);
      if (!u.isEmpty()) sb->setSuffix(QStringLiteral(" ") + u);
      sb->setAccelerated(true);
      bool integer = p.type == ParamType::Int;
      connect(sb, &QDoubleSpinBox::valueChanged, this, [this, path, integer](double v) {
        if (integer) commit(path, ParamValue(static_cast<std::int64_t>(std::llround(v))));
        else commit(path, ParamValue(v));
      });
      w = sb;
      break;
    }
  }
  w->setObjectName(QString::fromStdString(p.path));
  w->setToolTip(tooltipFor(p));
  w->setWhatsThis(tooltipFor(p));
  return w;
}

void FabricEditor::commit(const std::string& path, const ParamValue& v) {
  QString err;
  if (!doc_->setParam(path, v, &err)) {
    status_->setText(err);
    refreshField(param(path));
  }
}

bool FabricEditor::selectPreset(const QString& name, QString* error) {
  try {
    Config cfg = load_preset(name.toStdString());
    doc_->loadConfig(cfg, tr("load preset %1").arg(name));
  } catch (const Error& e) {
    status_->setText(QString::fromUtf8(e.what()));
    if (error) *error = QString::fromUtf8(e.what());
    return false;
  }
  return true;
}

QWidget* FabricEditor::fieldFor(const std::string& path) const {
  auto it = fields_.find(path);
  return it == fields_.end() ? nullptr : it->second;
}

void FabricEditor::refreshField(const ParamInfo& p) {
  QWidget* w = fieldFor(p.path);
  if (!w) return;
  QSignalBlocker block(w);
  ParamValue v = p.get(doc_->config());
  if (auto* cb = qobject_cast<QCheckBox*>(w)) cb->setChecked(std::get<bool>(v));
  else if (auto* co = qobject_cast<QComboBox*>(w))
    co->setCurrentText(QString::fromStdString(std::get<std::string>(v)));
  else if (auto* le = qobject_cast<QLineEdit*>(w))
    le->setText(QString::fromStdString(std::get<std::string>(v)));
  else if (auto* sb = qobject_cast<QDoubleSpinBox*>(w))
    sb->setValue(get_param_number(doc_->config(), p.path));
}

void FabricEditor::showPresetDescription() {
  const QString about = preset_->currentData(kDescriptionRole).toString();
  presetAbout_->setFullText(about);
  presetAbout_->setVisible(!about.isEmpty());
}

void FabricEditor::refresh(const QString& path) {
  if (path.isEmpty()) {
    for (const auto& p : params()) refreshField(p);
    QSignalBlocker block(preset_);
    int i = preset_->findData(QString::fromStdString(doc_->config().name));
    preset_->setCurrentIndex(i < 0 ? 0 : i);
    preset_->updateToolTip();
    showPresetDescription();
  } else if (const ParamInfo* p = find_param(path.toStdString())) {
    refreshField(*p);
  }
  // ISA fields only matter with an ISA; NVLS fields only with NVLS.
  const Config& c = doc_->config();
  if (auto* g = groups_[QStringLiteral("switch.isa")])
    for (auto* w : g->findChildren<QWidget*>())
      if (w->objectName() != QLatin1String("switch.isa.enabled") && qobject_cast<QAbstractSpinBox*>(w))
        w->setEnabled(c.sw.isa.enabled);
  status_->setText(doc_->validationError());
}

void FabricEditor::focusGroup(const QString& prefix) {
  auto it = groups_.find(prefix);
  if (it == groups_.end()) return;
  QGroupBox* box = it->second;
  scroll_->ensureWidgetVisible(box, 0, 0);
  // Bring the box's top into view, then flash it so the eye finds it.
  scroll_->ensureWidgetVisible(box->findChildren<QWidget*>().value(0, box));
  box->setStyleSheet(QStringLiteral("QGroupBox { border: 2px solid #d62728; border-radius: 4px; margin-top: 1.2em; }"
                                    "QGroupBox::title { subcontrol-origin: margin; left: 6px; }"));
  QTimer::singleShot(1200, box, [box] { box->setStyleSheet(QString()); });
}

}  // namespace scin::ui
