#include "ui/charts_measured.h"

#include <algorithm>
#include <set>

#include <QtConcurrent/QtConcurrent>

#include "base/error.h"
#include "calib/compare.h"
#include "base/json_input.h"
#include "fabric/preset.h"
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

// Harness offsets (µs per measured system) the preset's calibration recorded,
// as `scin validate --preset NAME` applies them: a Python timing loop adds a
// fixed cost to every row of its system that the fabric model must not carry.
// TODO(calib merge): one core function for this and the CLI's copy.
std::map<std::string, double> presetOffsets(const std::string& preset) {
  std::map<std::string, double> out;
  try {
    for (const auto& info : list_presets()) {
      if (info.name != preset) continue;
      const auto pj = read_json_document(info.file);
      if (pj.contains("calibration") && pj["calibration"].contains("harness_offsets_us"))
        for (const auto& [k, v] : pj["calibration"]["harness_offsets_us"].items()) out[k] = v.at("value").get<double>();
    }
  } catch (const std::exception&) {
    // No recorded offsets: the model alone.
  }
  return out;
}

}  // namespace

QString MeasuredChoice::label() const {
  const int n = systems.isEmpty() ? 0 : static_cast<int>(systems.count(QStringLiteral("; "))) + 1;
  return n > 1 ? QObject::tr("#%1 %2 (%3 systems)").arg(run_id).arg(name).arg(n)
               : QStringLiteral("#%1 %2 (%3)").arg(run_id).arg(name, systems);
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
    const Config cfg = run_base_config(run);
    const SweepSpec spec = sweep_spec_from_run(run);
    m.gpus = cfg.fabric.gpus;
    m.fabric = QStringLiteral("%1 (%2, %3 GPUs)")
                   .arg(QString::fromStdString(spec.base.preset.empty() ? cfg.name : spec.base.preset),
                        QString::fromStdString(cfg.accelerator.name))
                   .arg(m.gpus);
    const std::map<std::string, double> offsets = presetOffsets(spec.base.preset);
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
      std::vector<PointRecord> same;
      std::set<std::string> systems;
      for (PointRecord& p : s.points(r.id)) {
        if (p.kind != PointKind::Measured || p.status != PointStatus::Ok || p.gpus != m.gpus) continue;
        if (!tableMatches && !mentions(p.system, names)) continue;
        systems.insert(p.system);
        same.push_back(std::move(p));
      }
      const std::vector<MeasuredRow> rows = measured_rows(same);
      if (rows.empty()) continue;
      MeasuredChoice c;
      c.run_id = r.id;
      c.name = QString::fromStdString(r.name);
      QStringList sys;
      for (const auto& x : systems) sys << QString::fromStdString(x);
      c.systems = sys.join(QStringLiteral("; "));
      // What `scin validate --preset P` reports on these rows (analytic engine, the preset's offsets).
      c.report = validate_rows(cfg, rows, offsets);
      c.offsets = offsets;
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
  for (std::size_t i = 0; i < match_.choices.size(); ++i) {
    box->addItem(tr("measured: %1").arg(match_.choices[i].label()), static_cast<int>(i));
    box->setItemData(box->count() - 1, match_.choices[i].systems, Qt::ToolTipRole);
  }
  box->setCurrentIndex(current_ + 1);
  box->setVisible(!match_.choices.empty());
}

}  // namespace scin::ui
