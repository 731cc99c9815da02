#include "ui/run_controller.h"

#include <algorithm>
#include <thread>

#include <QtConcurrent/QtConcurrentRun>

#include <fmt/format.h>

#include "base/error.h"
#include "engines/engine.h"
#include "ui/format.h"

namespace scin::ui {

RunController::RunController(QObject* parent) : QObject(parent) {
  qRegisterMetaType<scin::SweepProgress>();
  drain_.setInterval(40);
  connect(&drain_, &QTimer::timeout, this, &RunController::drain);
  connect(&watcher_, &QFutureWatcher<void>::finished, this, &RunController::onWorkerDone);
}

RunController::~RunController() {
  if (shared_) shared_->cancel = true;
  watcher_.waitForFinished();
}

bool RunController::start(const QString& db_path, const SweepSpec& spec, const QString& run_name, bool force) {
  return launch(db_path, run_name, [spec](Store&, SweepOptions&) { return spec; }, !force);
}

bool RunController::resume(const QString& db_path, std::int64_t run_id) {
  return launch(db_path, {}, [run_id](Store& store, SweepOptions& opts) {
    const RunInfo old = store.get_run(run_id);
    if (old.status != RunStatus::Interrupted && old.status != RunStatus::Cancelled)
      throw Error("run " + std::to_string(run_id) + " is " + to_string(old.status) +
                  "; only an interrupted or cancelled run can be resumed");
    opts.resume_run = run_id;
    opts.run_name = old.name;
    opts.tags = old.tags;
    return sweep_spec_from_run(old);  // the recorded presets: no preset file is read
  });
}

bool RunController::launch(const QString& db_path, const QString& run_name,
                           std::function<SweepSpec(Store&, SweepOptions&)> make, bool budget) {
  if (running_) return false;
  running_ = true;
  shared_ = std::make_shared<Shared>();
  auto sh = shared_;
  std::string path = db_path.toStdString();
  std::string name = run_name.toStdString();
  watcher_.setFuture(QtConcurrent::run([sh, path, make = std::move(make), name, budget] {
    SweepOptions opts;
    opts.cancel = &sh->cancel;
    opts.run_name = name;
    opts.tags = {"gui"};
    // Leave one core to the GUI so it stays responsive on small machines.
    int cores = static_cast<int>(std::thread::hardware_concurrency());
    opts.threads = std::max(1, cores - 1);
    opts.progress_interval_s = 0.05;
    opts.batch_interval_s = 0.1;
    SweepSink sink;
    sink.on_point = [sh](const PointRecord& p) {
      std::lock_guard<std::mutex> lock(sh->mu);
      sh->points.push_back(p);
    };
    sink.on_progress = [sh](const SweepProgress& p) {
      std::lock_guard<std::mutex> lock(sh->mu);
      sh->progress = p;
      sh->progress_new = true;
    };
    try {
      Store store = Store::open(path, Access::ReadWrite);
      const SweepSpec spec = make(store, opts);
      if (!sh->cancel) {
        // The work first, as `scin sweep` checks it (its per-point estimates also
        // let the runner take the last points longest first).
        const WorkEstimate work = sweep_work(spec, static_cast<std::size_t>(opts.threads), &opts.point_seconds);
        const BudgetCheck check =
            check_budget(work, WorkBudget{}, fmt::format("sweep '{}' ({} points)", spec.name, point_count(spec)),
                         "choose Run anyway to start it, or make the sweep smaller (fewer sizes or algorithms, or the "
                         "analytic engine)");
        std::lock_guard<std::mutex> lock(sh->mu);
        if (budget && check.refused()) {
          sh->status = "refused";
          sh->error = check.message;
          return;
        }
        if (work.seconds > 0) {
          sh->estimate_s = work.seconds;
          sh->estimate_new = true;
        }
      }
      SweepSummary sum = run_sweep(store, spec, opts, sink);
      std::lock_guard<std::mutex> lock(sh->mu);
      sh->run_id = sum.run_id;
      sh->status = to_string(sum.status);
    } catch (const std::exception& e) {
      std::lock_guard<std::mutex> lock(sh->mu);
      sh->status = "failed";
      sh->error = e.what();
    }
  }));
  drain_.start();
  return true;
}

void RunController::cancel() {
  if (shared_) shared_->cancel = true;
}

void RunController::wait() { watcher_.waitForFinished(); }

void RunController::drain() {
  if (!shared_) return;
  std::vector<PointRecord> pts;
  SweepProgress prog;
  bool have_prog = false;
  QString estimate;
  {
    std::lock_guard<std::mutex> lock(shared_->mu);
    if (shared_->estimate_new) {
      estimate = tr("estimated %1 of CPU").arg(durationText(shared_->estimate_s));
      shared_->estimate_new = false;
    }
    pts.swap(shared_->points);
    if (shared_->progress_new) {
      prog = shared_->progress;
      have_prog = true;
      shared_->progress_new = false;
    }
  }
  if (!estimate.isEmpty()) Q_EMIT estimated(estimate);
  if (!pts.empty()) Q_EMIT pointsArrived(pts);
  if (have_prog) Q_EMIT progress(prog);
}

void RunController::onWorkerDone() {
  drain();
  drain_.stop();
  running_ = false;
  qint64 id;
  QString status, error;
  {
    std::lock_guard<std::mutex> lock(shared_->mu);
    id = shared_->run_id;
    status = QString::fromStdString(shared_->status);
    error = QString::fromStdString(shared_->error);
  }
  Q_EMIT finished(id, status, error);
}

}  // namespace scin::ui
