#include "ui/charts_measured.h"

#include <algorithm>
#include <set>

#include <QtConcurrent/QtConcurrent>

#include "base/error.h"
#include "fabric/params.h"
#include "store/store.h"
#include "sweep/sweep.h"

namespace scin::ui {
namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

bool mentions(const std::string& text, const std::vector<std::string>& names) {
  const std::string t = lower(text);
  for (const auto& n : names)
    if (!n.empty() && t.find(n) != std::string::npos) return true;
  return false;
}

// The base configuration a run was computed from: its recorded base preset
// plus base.set (sweep axes are not applied).
// TODO(calib merge): core's run_base_config() (calib/compare.h) replaces this.
Config baseConfig(const RunInfo& run) {
  const SweepSpec spec = sweep_spec_from_run(run);
  auto it = spec.recorded_presets.find(spec.base.preset);
  if (it == spec.recorded_presets.end())
    throw Error("run " + std::to_string(run.id) + ": the recorded configuration lacks its base preset '" +
                spec.base.preset + "'");
  Config c = it->second;
  for (const auto& [path, value] : spec.base.set) set_param(c, path, value);
  return c;
}

MeasuredRow toRow(const PointRecord& p) {
  MeasuredRow r;
  r.system = p.system;
  r.gpus = p.gpus;
  r.algorithm = p.algorithm;
  r.bytes = p.bytes;
  r.measured_us = p.measured_us;
  r.busbw_GBps = p.busbw_GBps > 0 ? p.busbw_GBps : -1;
  if (!p.dtype.empty()) r.dtype = p.dtype;
  r.source = p.source;
  if (p.extra.is_object()) {
    if (auto it = p.extra.find("gpus_per_process"); it != p.extra.end() && it->is_number_integer())
      r.gpus_per_process = it->get<int>();
    if (auto it = p.extra.find("in_place_us"); it != p.extra.end() && it->is_number()) r.in_place_us = it->get<double>();
  }
  return r;
}

}  // namespace

QString MeasuredChoice::label() const {
  return QStringLiteral("#%1 %2 (%3)").arg(run_id).arg(name, systems);
}

MeasuredMatch matchMeasured(const std::filesystem::path& db, std::int64_t run_id) {
  MeasuredMatch m;
  m.run_id = run_id;
  try {
    Store s = Store::open(db, Access::ReadOnly);
    const RunInfo run = s.get_run(run_id);
    if (run.kind != PointKind::Collective) {
      m.error = QStringLiteral("run #%1 is a %2 run, not a timing run").arg(run_id).arg(QString::fromLatin1(to_string(run.kind)));
      return m;
    }
    if (!run.config_recorded()) {
      m.error = QStringLiteral("run #%1 did not record its configuration (an older database): no model to compare").arg(run_id);
      return m;
    }
    const Config cfg = baseConfig(run);
    const SweepSpec spec = sweep_spec_from_run(run);
    m.gpus = cfg.fabric.gpus;
    m.fabric = QStringLiteral("%1 (%2, %3 GPUs)")
                   .arg(QString::fromStdString(spec.base.preset.empty() ? cfg.name : spec.base.preset),
                        QString::fromStdString(cfg.accelerator.name))
                   .arg(m.gpus);
    const std::vector<std::string> names{lower(cfg.accelerator.name), lower(spec.base.preset), lower(cfg.name)};
    for (const RunInfo& r : s.list_runs()) {
      if (r.kind != PointKind::Measured || !r.problem.empty()) continue;
      // nccl-tests tables name their device; a table without one is taken as the run's system.
      bool tableMatches = false;
      if (r.spec.is_object() && r.spec.value("format", std::string()) == "nccl-tests") {
        tableMatches = true;
        if (auto t = r.spec.find("tables"); t != r.spec.end() && t->is_array())
          for (const auto& tab : *t) {
            const std::string dev = tab.value("device", std::string());
            if (!dev.empty() && !mentions(dev, names)) tableMatches = false;
          }
      }
      std::vector<MeasuredRow> rows;
      std::set<std::string> systems;
      for (const PointRecord& p : s.points(r.id)) {
        if (p.kind != PointKind::Measured || p.status != PointStatus::Ok || p.gpus != m.gpus) continue;
        if (!tableMatches && !mentions(p.system, names)) continue;
        rows.push_back(toRow(p));
        systems.insert(p.system);
      }
      if (rows.empty()) continue;
      MeasuredChoice c;
      c.run_id = r.id;
      c.name = QString::fromStdString(r.name);
      QStringList sys;
      for (const auto& x : systems) sys << QString::fromStdString(x);
      c.systems = sys.join(QStringLiteral("; "));
      // TODO(calib merge): compare_runs() (calib/compare.h) with the run's engine.
      c.report = validate_rows(cfg, rows);
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
  box->setSizeAdjustPolicy(QComboBox::AdjustToContents);
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
  for (std::size_t i = 0; i < match_.choices.size(); ++i)
    box->addItem(tr("measured: %1").arg(match_.choices[i].label()), static_cast<int>(i));
  box->setCurrentIndex(current_ + 1);
  box->setVisible(!match_.choices.empty());
}

}  // namespace scin::ui
