#include "ui/charts_measured.h"

#include <QtConcurrent/QtConcurrent>

#include "calib/compare.h"
#include "store/store.h"

namespace scin::ui {

QString MeasuredChoice::label() const {
  const int n = systems.isEmpty() ? 0 : static_cast<int>(systems.count(QStringLiteral("; "))) + 1;
  // (The preset first where the run varies it: the one part that tells its entries apart.)
  const QString at = preset.isEmpty() ? QString() : QStringLiteral("%1 · ").arg(preset);
  return n > 1 ? QObject::tr("%4#%1 %2 (%3 systems)").arg(run_id).arg(name).arg(n).arg(at)
               : QStringLiteral("%4#%1 %2 (%3)").arg(run_id).arg(name, systems, at);
}

MeasuredMatch matchMeasured(const std::filesystem::path& db, std::int64_t run_id) {
  MeasuredMatch m;
  m.run_id = run_id;
  try {
    Store s = Store::open(db, Access::ReadOnly);
    MeasuredRunMatches found = match_measured_runs(s, run_id);
    auto fabric = [](const std::string& preset, const Config& cfg) {
      return QStringLiteral("%1 (%2, %3 GPUs)")
          .arg(QString::fromStdString(preset.empty() ? cfg.name : preset), QString::fromStdString(cfg.accelerator.name))
          .arg(cfg.fabric.gpus);
    };
    m.presetAxis = found.presets.size() > 1;
    if (m.presetAxis) {
      QStringList each;
      for (const std::string& p : found.presets) each << QString::fromStdString(p);
      m.fabric = QObject::tr("any of its presets (%1)").arg(each.join(QStringLiteral(", ")));
    } else {
      m.gpus = found.config.fabric.gpus;
      m.fabric = fabric(found.preset, found.config);
    }
    for (MeasuredRunMatch& r : found.runs) {
      MeasuredChoice c;
      c.fabric = fabric(r.preset, r.config);
      if (m.presetAxis) c.preset = QString::fromStdString(r.preset);
      c.run_id = r.run_id;
      c.name = QString::fromStdString(r.name);
      QStringList sys;
      for (const auto& x : r.systems) sys << QString::fromStdString(x);
      c.systems = sys.join(QStringLiteral("; "));
      c.report = std::move(r.report);
      c.offsets = std::move(r.offsets);
      m.choices.push_back(std::move(c));
    }
  } catch (const std::exception& e) {
    m.error = QString::fromUtf8(e.what());
  }
  return m;
}

MeasuredOverlay::MeasuredOverlay(QObject* parent) : QObject(parent) {}

void MeasuredOverlay::setRun(const QString& db, std::int64_t run_id) {
  const quint64 gen = ++generation_;
  ++pending_;
  auto* watcher = new QFutureWatcher<MeasuredMatch>(this);
  connect(watcher, &QFutureWatcher<MeasuredMatch>::finished, this, [this, watcher, gen] {
    watcher->deleteLater();
    --pending_;
    if (gen != generation_) return;
    const std::int64_t keep = chosen() ? chosen()->run_id : -1;
    const bool same = match_.run_id == watcher->result().run_id;
    match_ = watcher->result();
    // Keep the pick across reloads of the same run; else the first match.
    current_ = match_.choices.empty() ? -1 : 0;
    if (same && keep < 0 && !match_.choices.empty()) current_ = -1;
    for (std::size_t i = 0; i < match_.choices.size(); ++i)
      if (match_.choices[i].run_id == keep) current_ = static_cast<int>(i);
    for (QComboBox* b : combos_) fill(b);
    Q_EMIT changed();
  });
  const std::filesystem::path path = db.toStdString();
  watcher->setFuture(QtConcurrent::run([path, run_id] { return matchMeasured(path, run_id); }));
}

void MeasuredOverlay::clear() {
  ++generation_;
  match_ = {};
  current_ = -1;
  for (QComboBox* b : combos_) fill(b);
  Q_EMIT changed();
}

void MeasuredOverlay::setCurrent(int i) {
  if (i < -1 || i >= static_cast<int>(match_.choices.size())) i = -1;
  if (i == current_) return;
  current_ = i;
  for (QComboBox* b : combos_) fill(b);
  Q_EMIT changed();
}

const MeasuredChoice* MeasuredOverlay::chosen() const {
  return current_ >= 0 && current_ < static_cast<int>(match_.choices.size()) ? &match_.choices[static_cast<std::size_t>(current_)]
                                                                              : nullptr;
}

QComboBox* MeasuredOverlay::makeCombo(QWidget* parent) {
  auto* box = new QComboBox(parent);
  box->setObjectName(QStringLiteral("measuredCombo"));
  // As wide as ~24 characters, not as its longest entry (a file name and its systems): the
  // chart tabs' control rows must fit a 1280-pixel screen; the full entry is in its tooltip.
  box->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
  box->setMinimumContentsLength(24);
  box->setToolTip(tr("Measured runs of the same fabric (same GPU count, a system naming its accelerator or "
                     "preset), imported with scin import: their points are drawn as markers"));
  combos_.push_back(box);
  connect(box, &QObject::destroyed, this, [this, box] { std::erase(combos_, box); });
  connect(box, &QComboBox::activated, this, [this, box](int i) { setCurrent(box->itemData(i).toInt()); });
  fill(box);
  return box;
}

void MeasuredOverlay::fill(QComboBox* box) const {
  QSignalBlocker block(box);
  box->clear();
  box->addItem(tr("no measured points"), -1);
  for (std::size_t i = 0; i < match_.choices.size(); ++i) {
    box->addItem(tr("measured: %1").arg(match_.choices[i].label()), static_cast<int>(i));
    box->setItemData(box->count() - 1,
                     tr("%1: %2, compared with %3").arg(match_.choices[i].label(), match_.choices[i].systems,
                                                        match_.choices[i].fabric),
                     Qt::ToolTipRole);
  }
  box->setCurrentIndex(current_ + 1);
  box->setVisible(!match_.choices.empty());
}

}  // namespace scin::ui
