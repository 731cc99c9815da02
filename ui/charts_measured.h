// Measured runs (imported with `scin import`) next to a simulated run of the
// same fabric: which stored measured runs match it (same GPU count, a system
// naming the run's accelerator or preset), the user's pick among them, and
// the model-vs-measured comparison of the pick (core's validate_rows, the
// numbers `scin validate` prints). The latency and bandwidth charts overlay
// the pick's points; the Validation tab charts the comparison. Everything is
// read and computed on a worker thread; the GUI thread only receives it.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <vector>

#include <QComboBox>
#include <QFutureWatcher>
#include <QObject>
#include <QString>

#include "calib/fit.h"

namespace scin::ui {

/// One stored measured run that matches the simulated run shown.
struct MeasuredChoice {
  std::int64_t run_id = 0;
  QString name;                 // the run's name (usually the imported file)
  QString systems;              // the systems measured, "; "-joined
  /// The matching rows with the model next to each (rows the model cannot
  /// evaluate have modelled = false and say why), and MAPE per regime and
  /// algorithm over the modelled ones.
  ValidationReport report;
  /// Harness offsets (µs per system) the run's preset recorded and model_us includes, as scin validate.
  std::map<std::string, double> offsets;
  /// The model its rows are compared with: "hgx-h200-8 (H200, 8 GPUs)", the simulated
  /// run's configuration at the preset the rows name (a run may vary the preset).
  QString fabric;
  QString preset;               // that preset, where the run varies the preset (else empty)
  /// "#7 h200.csv (HGX H200 (stas00 all_reduce_bench))" for combos and legends.
  QString label() const;
};

/// What the overlay knows about the simulated run shown.
struct MeasuredMatch {
  std::int64_t run_id = 0;      // the simulated run (0: none shown)
  QString fabric;               // "hgx-h200-8 (H200, 8 GPUs)"; where the run varies the preset, each of them
  int gpus = 0;                 // its base configuration's (0 where the run varies the preset)
  bool presetAxis = false;      // the run's sweep varies the preset: each choice names its own model
  std::vector<MeasuredChoice> choices;
  QString error;                // why nothing can be matched ("" when fine)
};

/// Reads the database (its own read-only connection) and matches the measured
/// runs to collective run `run_id`: measured points of the run's GPU count
/// whose system names the run's accelerator (e.g. "H200") or preset, or
/// nccl-tests tables whose device does (a table without a device counts as
/// the run's system, as `scin validate` does). Call it on a worker.
MeasuredMatch matchMeasured(const std::filesystem::path& db, std::int64_t run_id);

/// The measured runs matching the simulated run shown and the user's pick,
/// shared by the latency and bandwidth charts and the Validation tab.
class MeasuredOverlay : public QObject {
  Q_OBJECT
 public:
  explicit MeasuredOverlay(QObject* parent = nullptr);

  /// Matches the measured runs of `db` to stored run `run_id` on a worker;
  /// changed() fires when it is done (only the newest request counts).
  void setRun(const QString& db, std::int64_t run_id);
  /// Nothing stored is shown (the live preview): no overlay.
  void clear();
  bool busy() const { return pending_ > 0; }
  const MeasuredMatch& match() const { return match_; }
  /// Index of the pick in match().choices, -1 for none (the user turned it off or nothing matches).
  int current() const { return current_; }
  void setCurrent(int i);
  /// The pick, or null.
  const MeasuredChoice* chosen() const;
  /// A combo box that lists "none" and the choices and follows / sets the pick
  /// (one per chart; they stay in step). Hidden while nothing matches.
  QComboBox* makeCombo(QWidget* parent = nullptr);

 Q_SIGNALS:
  void changed();

 private:
  void fill(QComboBox* box) const;

  MeasuredMatch match_;
  int current_ = -1;
  int pending_ = 0;
  quint64 generation_ = 0;
  std::vector<QComboBox*> combos_;
};

}  // namespace scin::ui
