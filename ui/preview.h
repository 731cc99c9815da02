// The live preview: recomputes the analytic curves on a worker thread as the
// user edits. Requests are coalesced by a short single-shot timer; while one
// computation runs, only the newest pending request is kept and runs next. The GUI thread never computes.
#pragma once

#include <optional>

#include <QFutureWatcher>
#include <QObject>
#include <QTimer>

#include "ui/experiment.h"

namespace scin::ui {

class Preview : public QObject {
  Q_OBJECT
 public:
  explicit Preview(QObject* parent = nullptr);
  ~Preview() override;

  /// Schedules a recomputation for (cfg, req); coalesced with other requests
  /// arriving within `coalesce_ms`.
  void request(const Config& cfg, const SweepRequest& req);
  bool busy() const { return running_ || timer_.isActive() || pending_.has_value(); }
  /// Milliseconds the last computation took.
  double lastMs() const { return last_ms_; }
  static constexpr int coalesce_ms = 40;

 Q_SIGNALS:
  void ready(const scin::ui::ResultSet& results);

 private:
  void start();
  void finished();

  struct Job { Config cfg; SweepRequest req; };
  std::optional<Job> pending_;
  QTimer timer_;
  QFutureWatcher<ResultSet> watcher_;
  bool running_ = false;
  double last_ms_ = 0;
  qint64 started_ms_ = 0;
};

}  // namespace scin::ui
