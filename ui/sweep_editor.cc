#include "ui/sweep_editor.h"

#include <QFormLayout>
#include <QGridLayout>
#include <QGroupBox>
#include <QSignalBlocker>
#include <QVBoxLayout>

#include "model/algorithms.h"
#include "model/params.h"
#include "sim/simulate.h"
#include "ui/format.h"

namespace scin::ui {

SweepEditor::SweepEditor(FabricDoc* doc, QWidget* parent) : QWidget(parent), doc_(doc) {
  auto* outer = new QVBoxLayout(this);
  outer->setContentsMargins(4, 4, 4, 4);
  auto* sizes = new QGroupBox(tr("Message size per rank"));
  auto* sf = new QFormLayout(sizes);
  min_ = new QComboBox;
  max_ = new QComboBox;
  for (int e = 1; e <= 34; ++e) {
    std::uint64_t b = 1ull << e;
    min_->addItem(sizeText(b), QVariant::fromValue<qulonglong>(b));
    max_->addItem(sizeText(b), QVariant::fromValue<qulonglong>(b));
  }
  min_->setToolTip(tr("Smallest message per rank (nccl-tests -b)."));
  max_->setToolTip(tr("Largest message per rank (nccl-tests -e)."));
  factor_ = new QSpinBox;
  factor_->setRange(2, 1024);
  factor_->setPrefix(QStringLiteral("×"));
  factor_->setToolTip(tr("Multiply the size by this factor at each step (nccl-tests -f)."));
  sf->addRow(tr("From"), min_);
  sf->addRow(tr("To"), max_);
  sf->addRow(tr("Step"), factor_);
  outer->addWidget(sizes);

  auto* algos = new QGroupBox(tr("Algorithms"));
  auto* ag = new QGridLayout(algos);
  int i = 0;
  for (const auto& a : algorithms()) {
    auto* cb = new QCheckBox(QString::fromStdString(a.name));
    cb->setObjectName(QString::fromStdString("algo." + a.name));
    cb->setChecked(true);
    QPixmap swatch(10, 10);
    swatch.fill(algorithmColor(QString::fromStdString(a.name)));
    cb->setIcon(QIcon(swatch));
    cb->setToolTip(QString::fromStdString(a.description));
    ag->addWidget(cb, i / 2, i % 2);
    algos_[a.name] = cb;
    connect(cb, &QCheckBox::toggled, this, [this] { updateCount(); Q_EMIT changed(); });
    ++i;
  }
  outer->addWidget(algos);

  auto* run = new QGroupBox(tr("Run"));
  auto* rf = new QFormLayout(run);
  engine_ = new QComboBox;
  for (const auto& e : engine_names()) engine_->addItem(QString::fromStdString(e));
  engine_->setToolTip(tr("analytic: critical path with alpha-beta costs (instant); "
                         "packet: packet-level discrete-event simulation (slower, shows congestion)."));
  dtype_ = new QComboBox;
  dtype_->addItems({QStringLiteral("bf16"), QStringLiteral("fp16"), QStringLiteral("fp32")});
  dtype_->setToolTip(tr("Element type of the reduced values."));
  axis_ = new QComboBox;
  axis_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
  axis_->setMinimumContentsLength(14);
  axis_->addItem(tr("(none)"), QString());
  for (const auto& p : params())
    if (p.type == ParamType::Int || p.type == ParamType::Real || p.type == ParamType::Enum ||
        p.type == ParamType::Bool)
      axis_->addItem(QStringLiteral("%1 — %2").arg(QString::fromStdString(p.path),
                                                   QString::fromStdString(p.label)),
                     QString::fromStdString(p.path));
  axis_->setToolTip(tr("An extra sweep axis over any fabric parameter (the dotted path the CLI uses)."));
  axisValues_ = new QLineEdit;
  axisValues_->setPlaceholderText(tr("values, e.g. 450, 900, 1800"));
  axisValues_->setToolTip(tr("Comma-separated values of the extra axis, in the parameter's unit."));
  rf->addRow(tr("Engine"), engine_);
  rf->addRow(tr("Data type"), dtype_);
  rf->addRow(tr("Extra axis"), axis_);
  rf->addRow(tr("Axis values"), axisValues_);
  outer->addWidget(run);
  count_ = new QLabel;
  count_->setWordWrap(true);
  outer->addWidget(count_);
  outer->addStretch(1);

  {
    QSignalBlocker quiet(this);
    setRequest(SweepRequest{});
  }
  auto emitChanged = [this] { updateCount(); Q_EMIT changed(); };
  connect(min_, &QComboBox::currentIndexChanged, this, emitChanged);
  connect(max_, &QComboBox::currentIndexChanged, this, emitChanged);
  connect(factor_, &QSpinBox::valueChanged, this, emitChanged);
  connect(engine_, &QComboBox::currentIndexChanged, this, emitChanged);
  connect(dtype_, &QComboBox::currentIndexChanged, this, emitChanged);
  connect(axis_, &QComboBox::currentIndexChanged, this, [this, emitChanged] {
    const ParamInfo* p = find_param(axis_->currentData().toString().toStdString());
    axisValues_->setEnabled(p != nullptr);
    if (p) {
      axisValues_->setToolTip(QStringLiteral("%1 [%2]: %3. Allowed %4")
                                  .arg(QString::fromStdString(p->label), unitSuffix(p->unit),
                                       QString::fromStdString(p->help),
                                       QString::fromStdString(format_range(*p))));
      if (axisValues_->text().isEmpty())
        axisValues_->setText(QString::fromStdString(get_param_text(doc_->config(), p->path)));
    }
    emitChanged();
  });
  connect(axisValues_, &QLineEdit::editingFinished, this, emitChanged);
  connect(doc_, &FabricDoc::changed, this, [this] { updateAvailability(); });
  updateAvailability();
}

SweepRequest SweepEditor::request() const {
  SweepRequest r;
  r.min_bytes = min_->currentData().toULongLong();
  r.max_bytes = max_->currentData().toULongLong();
  if (r.max_bytes < r.min_bytes) r.max_bytes = r.min_bytes;
  r.factor = static_cast<std::uint64_t>(factor_->value());
  for (const auto& [name, cb] : algos_)
    if (cb->isChecked()) r.algorithms.push_back(name);
  // Keep display order.
  std::vector<std::string> ordered;
  for (const auto& a : algorithms())
    if (std::find(r.algorithms.begin(), r.algorithms.end(), a.name) != r.algorithms.end())
      ordered.push_back(a.name);
  r.algorithms = ordered;
  if (r.algorithms.empty()) r.algorithms.push_back("none");  // explicit: nothing selected
  r.engine = engine_->currentText().toStdString();
  r.dtype = dtype_->currentText().toStdString();
  r.axis_path = axis_->currentData().toString().toStdString();
  if (!r.axis_path.empty())
    for (const QString& v : axisValues_->text().split(QLatin1Char(','), Qt::SkipEmptyParts))
      r.axis_values.push_back(v.trimmed().toStdString());
  return r;
}

void SweepEditor::setRequest(const SweepRequest& r) {
  QSignalBlocker b1(min_), b2(max_), b3(factor_), b4(engine_), b5(dtype_), b6(axis_), b7(axisValues_);
  // Sizes that are not powers of two (from a CLI spec) are added to the lists.
  for (auto [box, bytes] : {std::pair{min_, r.min_bytes}, std::pair{max_, r.max_bytes}}) {
    int i = box->findData(QVariant::fromValue<qulonglong>(bytes));
    if (i < 0) {
      box->addItem(sizeText(bytes), QVariant::fromValue<qulonglong>(bytes));
      i = box->count() - 1;
    }
    box->setCurrentIndex(i);
  }
  factor_->setValue(static_cast<int>(r.factor));
  engine_->setCurrentText(QString::fromStdString(r.engine));
  dtype_->setCurrentText(QString::fromStdString(r.dtype));
  int ai = axis_->findData(QString::fromStdString(r.axis_path));
  axis_->setCurrentIndex(ai < 0 ? 0 : ai);
  QStringList v;
  for (const auto& x : r.axis_values) v << QString::fromStdString(x);
  axisValues_->setText(v.join(QStringLiteral(", ")));
  axisValues_->setEnabled(!r.axis_path.empty());
  for (const auto& [name, cb] : algos_) {
    QSignalBlocker b(cb);
    cb->setChecked(r.algorithms.empty() ||
                   std::find(r.algorithms.begin(), r.algorithms.end(), name) != r.algorithms.end());
  }
  updateCount();
  Q_EMIT changed();
}

QCheckBox* SweepEditor::algorithmBox(const std::string& name) const {
  auto it = algos_.find(name);
  return it == algos_.end() ? nullptr : it->second;
}

void SweepEditor::updateAvailability() {
  for (const auto& [name, cb] : algos_) {
    std::string why = unsupported_reason(doc_->config(), name);
    const AlgorithmInfo* info = find_algorithm(name);
    QString desc = info ? QString::fromStdString(info->description) : QString();
    cb->setToolTip(why.empty() ? desc : desc + QStringLiteral("\n\nNot on this fabric: ") +
                                            QString::fromStdString(why));
    QFont f = cb->font();
    f.setStrikeOut(!why.empty());
    cb->setFont(f);
  }
  updateCount();
}

void SweepEditor::updateCount() {
  SweepRequest r = request();
  count_->setText(tr("%1 points: %2").arg(r.point_count(doc_->config())).arg(r.summary(doc_->config())));
}

}  // namespace scin::ui
