#include "ui/sweep_editor.h"
#include "base/text.h"

#include <QUndoCommand>
#include <utility>

#include <QFormLayout>
#include <QGridLayout>
#include <QGroupBox>
#include <QScrollArea>
#include <QScrollBar>
#include <QSignalBlocker>
#include <QVBoxLayout>

#include "schedule/algorithms.h"
#include "fabric/params.h"
#include "engines/simulate.h"
#include "analysis/table.h"
#include "ui/format.h"
#include "ui/spec_bridge.h"

namespace scin::ui {

SweepEditor::SweepEditor(FabricDoc* doc, QWidget* parent) : QWidget(parent), doc_(doc) {
  auto* top = new QVBoxLayout(this);
  top->setContentsMargins(4, 4, 4, 4);
  // A stored run shown: a banner over its (read-only) sweep.
  banner_ = new QLabel;
  banner_->setObjectName(QStringLiteral("storedSweep"));
  banner_->setWordWrap(true);
  banner_->setTextFormat(Qt::RichText);
  banner_->setStyleSheet(QStringLiteral("background:#eef4fb; border:1px solid #9db8d9; padding:4px"));
  banner_->setVisible(false);
  banner_->setAlignment(Qt::AlignLeft | Qt::AlignTop);
  // (Its height follows its width: a quant or inference run's spec is many
  // lines in a narrow dock, shown whole, at the top.)
  banner_->setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Minimum);
  top->addWidget(banner_);
  editCopy_ = new QPushButton(tr("Edit a copy of this sweep"));
  editCopy_->setObjectName(QStringLiteral("editStoredSweep"));
  editCopy_->setToolTip(tr("Put this run's sweep in the editor (an undoable edit) to change and run it again."));
  editCopy_->setVisible(false);
  connect(editCopy_, &QPushButton::clicked, this, [this] {
    const std::optional<SweepRequest> r = storedRequest_;
    showEditing();
    if (r) applyRequest(*r);  // an edit: recorded for undo; the charts return to the preview
  });
  top->addWidget(editCopy_, 0, Qt::AlignLeft);
  // The inputs scroll when the window is short (a banner above them must not
  // make the window taller than the screen).
  inputs_ = new QWidget;
  auto* scroll = new QScrollArea;
  scroll->setObjectName(QStringLiteral("sweepScroll"));
  scroll->setWidgetResizable(true);
  scroll->setFrameShape(QFrame::NoFrame);
  scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  scroll->setWidget(inputs_);
  top->addWidget(scroll, 1);
  top->addStretch(0);  // (takes the room the scroll area leaves when it is hidden)
  auto* outer = new QVBoxLayout(inputs_);
  outer->setContentsMargins(0, 0, 0, 0);
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
  rf->addRow(tr("Engine"), engine_);
  rf->addRow(tr("Data type"), dtype_);
  outer->addWidget(run);

  auto* axes = new QGroupBox(tr("Extra axes"));
  axes->setToolTip(tr("Sweep fabric parameters too: every axis multiplies the points (Cartesian "
                      "product, first axis slowest) unless it is zipped with the axis above."));
  auto* axv = new QVBoxLayout(axes);
  axv->setContentsMargins(4, 4, 4, 4);
  axesLayout_ = new QVBoxLayout;
  axesLayout_->setSpacing(6);
  axv->addLayout(axesLayout_);
  addAxis_ = new QPushButton(tr("Add axis"));
  addAxis_->setObjectName(QStringLiteral("addAxis"));
  addAxis_->setToolTip(tr("Add a sweep axis over a fabric parameter."));
  connect(addAxis_, &QPushButton::clicked, this, [this] { addAxis(); });
  axv->addWidget(addAxis_, 0, Qt::AlignLeft);
  outer->addWidget(axes);
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
  connect(doc_, &FabricDoc::changed, this, [this] { updateAvailability(); });
  updateAvailability();
  last_ = request();
  connect(this, &SweepEditor::changed, this, &SweepEditor::recordEdit);
  // Never narrower than the inputs (they scroll vertically only).
  if (auto* scroll = findChild<QScrollArea*>(QStringLiteral("sweepScroll")))
    scroll->setMinimumWidth(inputs_->minimumSizeHint().width() + scroll->verticalScrollBar()->sizeHint().width());
}

// One sweep edit on the fabric's undo stack: Edit > Undo walks back through
// fabric and sweep edits in the order they were made.
class SetSweepCommand : public QUndoCommand {
 public:
  SetSweepCommand(SweepEditor* ed, SweepRequest before, SweepRequest after)
      : QUndoCommand(SweepEditor::tr("edit sweep")), ed_(ed), before_(std::move(before)), after_(std::move(after)) {}
  void undo() override { ed_->restore(before_); }
  void redo() override {
    if (std::exchange(first_, false)) return;  // pushed after the widgets changed
    ed_->restore(after_);
  }

 private:
  SweepEditor* ed_;
  SweepRequest before_, after_;
  bool first_ = true;
};

void SweepEditor::recordEdit() {
  if (applying_) return;
  SweepRequest now = request();
  if (now == last_) return;
  doc_->undoStack()->push(new SetSweepCommand(this, last_, now));
  last_ = std::move(now);
}

void SweepEditor::restore(const SweepRequest& r) {
  if (stored_) {  // the widgets show a stored run: the editor's own sweep changes underneath
    editing_ = r;
    last_ = r;
    return;
  }
  applying_ = true;
  applyRequest(r);
  applying_ = false;
  last_ = request();
}

void SweepEditor::setRequest(const SweepRequest& r) { restore(r); }

SweepRequest SweepEditor::request() const {
  // While a stored run is shown the widgets hold its sweep; the editor's is kept aside.
  if (stored_) return editing_;
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
  for (const AxisRow& row : rows_)
    r.axes.push_back(ExtraAxis{row.path->currentData().toString().toStdString(),
                               row.values->text().trimmed().toStdString(), row.zip->isChecked()});
  return r;
}

void SweepEditor::applyRequest(const SweepRequest& r) {
  QSignalBlocker b1(min_), b2(max_), b3(factor_), b4(engine_), b5(dtype_);
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
  {
    QSignalBlocker quiet(this);
    clearAxes();
    for (const ExtraAxis& a : r.axes) addAxis(a);
  }
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

int SweepEditor::addAxis(const ExtraAxis& a) {
  AxisRow row;
  const int index = static_cast<int>(rows_.size());
  row.box = new QWidget;
  auto* g = new QGridLayout(row.box);
  g->setContentsMargins(0, 0, 0, 0);
  g->setHorizontalSpacing(4);
  g->setVerticalSpacing(2);
  row.path = new QComboBox;
  row.path->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
  row.path->setMinimumContentsLength(14);
  row.path->addItem(tr("(choose a parameter)"), QString());
  for (const auto& p : params())
    if (p.type == ParamType::Int || p.type == ParamType::Real || p.type == ParamType::Enum ||
        p.type == ParamType::Bool)
      row.path->addItem(QStringLiteral("%1 — %2").arg(QString::fromStdString(p.path),
                                                      QString::fromStdString(p.label)),
                        QString::fromStdString(p.path));
  row.path->setToolTip(tr("The fabric parameter this axis sweeps (the dotted path the CLI uses)."));
  row.remove = new QToolButton;
  row.remove->setText(QStringLiteral("✕"));
  row.remove->setToolTip(tr("Remove this axis."));
  row.values = new QLineEdit;
  row.values->setPlaceholderText(tr("450, 900 or 100..300 step 50"));
  row.unit = new QLabel;
  row.unit->setMinimumWidth(fontMetrics().horizontalAdvance(QStringLiteral("bytes")));
  row.zip = new QCheckBox(tr("zip with the axis above"));
  row.zip->setToolTip(tr("Move together with the axis above (same number of values) instead of "
                         "multiplying the points."));
  g->addWidget(row.path, 0, 0, 1, 2);
  g->addWidget(row.remove, 0, 2);
  g->addWidget(row.values, 1, 0);
  g->addWidget(row.unit, 1, 1, 1, 2);
  g->addWidget(row.zip, 2, 0, 1, 3);
  g->setColumnStretch(0, 1);
  int pi = row.path->findData(QString::fromStdString(a.path));
  row.path->setCurrentIndex(pi < 0 ? 0 : pi);
  row.values->setText(QString::fromStdString(a.values));
  row.zip->setChecked(a.zip);
  axesLayout_->addWidget(row.box);
  rows_.push_back(row);

  QWidget* box = row.box;
  auto indexOf = [this, box] {
    for (std::size_t i = 0; i < rows_.size(); ++i)
      if (rows_[i].box == box) return static_cast<int>(i);
    return -1;
  };
  connect(row.path, &QComboBox::currentIndexChanged, this, [this, indexOf] {
    int i = indexOf();
    AxisRow& r = rows_[static_cast<std::size_t>(i)];
    const ParamInfo* p = find_param(r.path->currentData().toString().toStdString());
    if (p) {  // start from the fabric's current value
      QSignalBlocker b(r.values);
      r.values->setText(QString::fromStdString(get_param_text(doc_->config(), p->path)));
    }
    updateAxisRow(i);
    updateCount();
    Q_EMIT changed();
  });
  connect(row.values, &QLineEdit::textChanged, this, [this, indexOf] {
    updateAxisRow(indexOf());
    updateCount();
  });
  connect(row.values, &QLineEdit::editingFinished, this, [this] { Q_EMIT changed(); });
  connect(row.zip, &QCheckBox::toggled, this, [this] {
    updateCount();
    Q_EMIT changed();
  });
  connect(row.remove, &QToolButton::clicked, this, [this, indexOf] { removeAxis(indexOf()); });
  for (std::size_t i = 0; i < rows_.size(); ++i) updateAxisRow(static_cast<int>(i));
  updateCount();
  Q_EMIT changed();
  return index;
}

void SweepEditor::removeAxis(int i) {
  if (i < 0 || i >= axisCount()) return;
  delete rows_[static_cast<std::size_t>(i)].box;
  rows_.erase(rows_.begin() + i);
  for (std::size_t k = 0; k < rows_.size(); ++k) updateAxisRow(static_cast<int>(k));
  updateCount();
  Q_EMIT changed();
}

void SweepEditor::clearAxes() {
  for (AxisRow& r : rows_) delete r.box;
  rows_.clear();
}

void SweepEditor::updateAxisRow(int i) {
  if (i < 0 || i >= axisCount()) return;
  AxisRow& r = rows_[static_cast<std::size_t>(i)];
  r.zip->setVisible(i > 0);
  const std::string path = r.path->currentData().toString().toStdString();
  const ParamInfo* p = find_param(path);
  r.values->setEnabled(p != nullptr);
  r.unit->setText(p ? (p->unit.empty() ? tr("(no unit)") : unitSuffix(p->unit)) : QString());
  QString err;
  if (p) {
    try {
      parseExtraAxis(ExtraAxis{path, r.values->text().trimmed().toStdString(), false});
    } catch (const std::exception& e) {
      err = QString::fromUtf8(e.what());
    }
  }
  r.values->setStyleSheet(err.isEmpty() ? QString() : QStringLiteral("QLineEdit { border: 1px solid #c0392b; }"));
  QString tip = p ? QStringLiteral("%1 [%2]: %3\nAllowed %4.\nType a list (450, 900, 1800) or a range "
                                   "(100..300 step 50, 225..1800 x2, 0..1 count 5).")
                        .arg(QString::fromStdString(p->label), unitSuffix(p->unit),
                             QString::fromStdString(p->help), QString::fromStdString(format_range(*p)))
                  : tr("Choose a parameter first.");
  r.values->setToolTip(err.isEmpty() ? tip : err + QStringLiteral("\n\n") + tip);
}

QString SweepEditor::axisError() const { return request().axisError(); }

void SweepEditor::setInputsEnabled(bool on) {
  for (QWidget* w : inputs_->findChildren<QWidget*>(Qt::FindDirectChildrenOnly))
    if (w != count_) w->setEnabled(on);
}

void SweepEditor::showStoredRun(const RunInfo& run, int overlaid) {
  if (!stored_) editing_ = request();
  stored_ = true;
  Config cfg;
  SweepRequest r;
  const bool timing = run.kind == PointKind::Collective && fromSweepSpec(run.spec, &cfg, &r);
  storedRequest_ = timing ? std::optional<SweepRequest>(r) : std::nullopt;
  QString what = tr("<b>Stored run #%1 %2</b> (%3, read-only)%4")
                     .arg(run.id)
                     .arg(QString::fromStdString(run.name).toHtmlEscaped(), QString::fromLatin1(to_string(run.status)),
                          overlaid > 0 ? tr("; %1 more overlaid").arg(overlaid) : QString());
  if (timing) {
    what += tr(": the sweep it ran. Select no run to edit your own.");
  } else {
    // Not a sweep the editor can hold (quant, inference, measured): its spec as text.
    const analysis::RunSummary sum = analysis::summarize_run(run, {});
    QStringList lines;
    lines << tr("%1 run").arg(QString::fromStdString(with_article(sum.kind)));
    for (const auto& a : sum.axes) lines << QString::fromStdString(a).toHtmlEscaped();
    for (const auto& b : sum.base) lines << QString::fromStdString(b).toHtmlEscaped();
    what += QStringLiteral(":<br>") + lines.join(QStringLiteral("<br>"));
  }
  banner_->setText(what);
  banner_->setVisible(true);
  editCopy_->setVisible(timing);
  inputs_->setVisible(timing);
  inputs_->parentWidget()->parentWidget()->setVisible(timing);  // the scroll area
  storedCount_ = tr("%1 of %2 points stored (%3 skipped or failed), %4 engine")
                     .arg(run.points_stored)
                     .arg(run.points_total)
                     .arg(run.points_skipped)
                     .arg(QString::fromStdString(run.engine));
  if (timing) {
    QSignalBlocker quiet(this);  // not an edit: no undo step, no preview
    applying_ = true;
    applyRequest(r);
    applying_ = false;
  }
  setInputsEnabled(false);
  updateCount();
}

void SweepEditor::showEditing() {
  if (!stored_) return;
  stored_ = false;
  storedRequest_.reset();
  banner_->setVisible(false);
  editCopy_->setVisible(false);
  inputs_->setVisible(true);
  inputs_->parentWidget()->parentWidget()->setVisible(true);
  setInputsEnabled(true);
  {
    QSignalBlocker quiet(this);
    applying_ = true;
    applyRequest(editing_);
    applying_ = false;
  }
  last_ = request();
  updateAvailability();
}

void SweepEditor::updateCount() {
  if (stored_) {
    count_->setStyleSheet(QString());
    count_->setText(storedCount_);
    return;
  }
  SweepRequest r = request();
  const QString err = r.axisError();
  if (!err.isEmpty()) {
    count_->setStyleSheet(QStringLiteral("color: #c0392b;"));
    count_->setText(tr("Cannot run: %1").arg(err));
    return;
  }
  count_->setStyleSheet(QString());
  count_->setText(tr("%1 points: %2").arg(r.point_count(doc_->config())).arg(r.summary(doc_->config())));
}

}  // namespace scin::ui
