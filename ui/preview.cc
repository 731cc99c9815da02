#include "ui/preview.h"

#include <QDateTime>
#include <QtConcurrent/QtConcurrentRun>

namespace scin::ui {

Preview::Preview(QObject* parent) : QObject(parent) {
  timer_.setSingleShot(true);
  timer_.setInterval(coalesce_ms);
  connect(&timer_, &QTimer::timeout, this, &Preview::start);
  connect(&watcher_, &QFutureWatcher<ResultSet>::finished, this, &Preview::finished);
}

Preview::~Preview() { watcher_.waitForFinished(); }

void Preview::request(const Config& cfg, const SweepRequest& req) {
  pending_ = Job{cfg, req};
  if (!running_) timer_.start();
}

void Preview::start() {
  if (running_ || !pending_) return;
  Job job = std::move(*pending_);
  pending_.reset();
  running_ = true;
  started_ms_ = QDateTime::currentMSecsSinceEpoch();
  watcher_.setFuture(QtConcurrent::run([job] { return computeAnalytic(job.cfg, job.req); }));
}

void Preview::finished() {
  running_ = false;
  last_ms_ = static_cast<double>(QDateTime::currentMSecsSinceEpoch() - started_ms_);
  // Show it even if the inputs moved on meanwhile (the curves follow a dragged
  // value), then compute the newest inputs.
  Q_EMIT ready(watcher_.result());
  if (pending_) timer_.start(0);
}

}  // namespace scin::ui
