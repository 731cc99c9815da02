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
  /// connection). Returns false if a run is already going.
  bool start(const QString& db_path, const SweepSpec& spec, const QString& run_name);
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
  /// status: "done", "cancelled" or "failed"; error set when failed.
  void finished(qint64 run_id, const QString& status, const QString& error);

 private:
  /// Runs `make(store, opts)` on a worker: it returns the spec to sweep (and
  /// may set resume_run and run_name).
  bool launch(const QString& db_path, const QString& run_name,
              std::function<SweepSpec(Store&, SweepOptions&)> make);
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
  };
  std::shared_ptr<Shared> shared_;
  QFutureWatcher<void> watcher_;
  QTimer drain_;
  bool running_ = false;
};

}  // namespace scin::ui

Q_DECLARE_METATYPE(scin::SweepProgress)
