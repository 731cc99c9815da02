// Runs a sweep through the core runner (scin::run_sweep) on a worker thread,
// writing to the experiment database. Points are handed over under a short
// lock and drained on the GUI thread by a 40 ms timer, so charts update in
// batches; progress (points/s, ETA) arrives the same way. cancel() sets the
// runner's cancel flag: it stops within one point's compute time and the run
// is stored as cancelled.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include <QFutureWatcher>
#include <QObject>
#include <QTimer>

#include "sweep/sweep.h"

namespace scin::ui {

class RunController : public QObject {
  Q_OBJECT
 public:
  explicit RunController(QObject* parent = nullptr);
  ~RunController() override;

  bool running() const { return running_; }
  /// Starts `spec` into the database at `db_path` (the worker opens its own
  /// connection). Returns false if a run is already going. The worker first
  /// estimates the sweep (sweep_work, as `scin sweep` does) and, unless
  /// `force`, ends with status "refused" and the budget's message instead of
  /// running work above the CLI's default budget (5 min of CPU on one core, or
  /// more memory than is available); nothing is stored then.
  bool start(const QString& db_path, const SweepSpec& spec, const QString& run_name, bool force = false);
  /// Continues the interrupted or cancelled run `run_id` of the database at
  /// `db_path` (core's resume, as `scin sweep --resume F:N`): the spec is the
  /// run's own, with its recorded presets; only the points it lacks are
  /// evaluated and appended. Progress and points arrive as for start().
  bool resume(const QString& db_path, std::int64_t run_id);
  void cancel();
  /// Blocks until the worker is done (tests and shutdown only).
  void wait();

 Q_SIGNALS:
  void pointsArrived(const std::vector<scin::PointRecord>& points);
  void progress(const scin::SweepProgress& p);
  /// What the sweep is estimated to cost ("estimated 7 min of CPU"), once, before its points.
  void estimated(const QString& text);
  /// status: "done", "cancelled", "failed" or "refused" (above the budget: run_id
  /// 0, error the budget's message); error set when failed or refused.
  void finished(qint64 run_id, const QString& status, const QString& error);

 private:
  /// Runs `make(store, opts)` on a worker: it returns the spec to sweep (and
  /// may set resume_run and run_name).
  /// `budget`: estimate the spec and refuse it above the budget (start() without force).
  bool launch(const QString& db_path, const QString& run_name,
              std::function<SweepSpec(Store&, SweepOptions&)> make, bool budget = false);
  void drain();
  void onWorkerDone();

  struct Shared {
    std::mutex mu;
    std::vector<PointRecord> points;
    SweepProgress progress;
    bool progress_new = false;
    std::atomic<bool> cancel{false};
    std::int64_t run_id = 0;
    std::string status;
    std::string error;
    double estimate_s = 0;   // the sweep's estimated CPU seconds on one core (sweep_work)
    bool estimate_new = false;
  };
  std::shared_ptr<Shared> shared_;
  QFutureWatcher<void> watcher_;
  QTimer drain_;
  bool running_ = false;
};

}  // namespace scin::ui

Q_DECLARE_METATYPE(scin::SweepProgress)
