// The live preview: recomputes the analytic curves on a worker thread as the
// user edits, and never blocks the GUI thread.
//
//   - Coalescing: the first edit of a turn of the event loop starts at once;
//     further edits in the same turn become one request, started when the turn
//     ends (a queued call: posted events are delivered in order, while a 0 ms
//     timer waits until the queue is empty, which a busy preview delays); the
//     newest request wins.
//   - Cancellation: a new request stops the running computation through its
//     RunContext stop token (core's engines poll it) and starts the new one at
//     once; results of a superseded request are dropped, never shown.
//   - Progressive refinement: a few coarse sizes of every algorithm first (the
//     curves' shape; those estimated under kPreviewQuickPointS each, so that
//     one long point, NVLS at 1 GiB, does not hold back the first frame), then
//     the slow coarse points and the sizes in between; partial results are
//     shown as they come (at most every `partial_interval_ms`), except that
//     one arriving within partialHoldMs() of the request is held back until
//     then: if the complete result comes first (the default 8-GPU preview),
//     the chart is painted once, not twice, and the GUI thread takes no core
//     from the workers while they finish.
//   - Work budget: before computing, core's estimate() (engines/engine.h) says
//     what each algorithm costs at the largest size; points beyond the per-point
//     cap are not previewed (the status says which and how long they would take)
//     until the user asks for them (computeAll()). Progress is reported.
//   - Shutdown: cancel() / the destructor request a stop and return at once;
//     they never join a worker. A worker that outlives the Preview finishes
//     its current engine call (engines stop within their polling interval),
//     sees the stop, and drops its result.
#pragma once

#include <atomic>
#include <memory>
#include <optional>
#include <stop_token>
#include <vector>

#include <QElapsedTimer>
#include <QObject>
#include <QTimer>
#include <QString>

#include "ui/experiment.h"

namespace scin::ui {

/// What a preview computation reports besides its curves.
struct PreviewStatus {
  quint64 generation = 0;
  bool complete = false;          // every stage done (or capped): no more results for this generation
  bool cancelled = false;         // superseded or stopped before completing
  double fraction = 0;            // of the estimated work, 0..1
  double estimated_s = 0;         // the whole preview on one core (core's estimate), uncapped
  int points_done = 0, points_total = 0;
  int points_capped = 0;          // points left out because of the cap
  QString capped_text;            // "nvls ≥ 256 MiB (~40 s each)": what the cap left out
};

class Preview : public QObject {
  Q_OBJECT
 public:
  explicit Preview(QObject* parent = nullptr);
  ~Preview() override;

  /// Schedules a recomputation for (cfg, req): the first request of a turn of
  /// the event loop starts at once, later ones of that turn coalesce into one
  /// started at its end; a running computation of older inputs is stopped.
  void request(const Config& cfg, const SweepRequest& req);
  /// Recomputes the current inputs without the per-point cap.
  void computeAll();
  /// Stops any running computation and drops the pending request; returns at once.
  void cancel();
  /// A request is pending or its computation has not completed.
  bool busy() const { return turn_open_ || pending_.has_value() || running_; }
  /// Milliseconds from the newest request to its first (coarse) / last result.
  double firstMs() const { return first_ms_; }
  double lastMs() const { return last_ms_; }
  const PreviewStatus& status() const { return status_; }
  quint64 generation() const { return generation_; }

  /// Points whose estimate exceeds this many seconds (one core) are left out
  /// unless computeAll() is asked. Default 0.5 s.
  void setPointCapSeconds(double s) { point_cap_s_ = s; }
  double pointCapSeconds() const { return point_cap_s_; }
  /// Minimum time between partial results shown while refining (the first may
  /// come after a fifth of it).
  static constexpr int partial_interval_ms = 50;
  /// A partial result arriving sooner than this after the request waits until
  /// then, and is dropped if the complete one comes first (a frame is 16.7 ms;
  /// a repaint of the default chart takes 2 ms of GUI CPU).
  static constexpr int default_partial_hold_ms = 11;
  void setPartialHoldMs(int ms) { partial_hold_ms_ = ms; }
  int partialHoldMs() const { return partial_hold_ms_; }

  /// Worker computations still running in this process, including stopped ones
  /// not yet returned from their engine call (tests: a cancelled worker ends).
  static int workersAlive();

 Q_SIGNALS:
  /// Curves of the newest request: partial while refining, final when
  /// status().complete. Never emitted for a superseded request.
  void ready(const scin::ui::ResultSet& results);
  /// Progress of the newest request (also emitted with each ready()).
  void progress(const scin::ui::PreviewStatus& status);

 private:
  struct Shared;
  void schedule();
  void start();
  void deliver(quint64 generation, const ResultSet& rs, const PreviewStatus& st);
  void show(const ResultSet& rs, const PreviewStatus& st);

  struct Job {
    Config cfg;
    SweepRequest req;
    bool uncapped = false;
  };
  std::optional<Job> pending_;
  std::optional<Job> current_;    // inputs of the newest computation (computeAll() reruns them)
  bool turn_open_ = false;        // a request started in this turn of the event loop
  std::shared_ptr<Shared> shared_;
  std::stop_source stop_;         // of the running computation
  bool running_ = false;
  quint64 generation_ = 0;
  PreviewStatus status_;
  QElapsedTimer since_request_;
  double first_ms_ = 0, last_ms_ = 0;
  bool first_seen_ = false;
  struct Held {
    quint64 generation;
    ResultSet results;
    PreviewStatus status;
  };
  std::optional<Held> held_;      // a partial result waiting for partial_hold_ms
  QTimer* hold_timer_ = nullptr;
  int partial_hold_ms_ = default_partial_hold_ms;
  double point_cap_s_ = 0.5;
};

/// A coarse point estimated (core's estimate(), one core) under this many
/// seconds is in the preview's first result; slower ones follow it.
inline constexpr double kPreviewQuickPointS = 1e-3;

/// Refinement order of `n` sizes: the coarse pass (about 6 sizes spread over
/// the range, both ends included; its length in *coarse_count), then every
/// size in between, ascending. Indices into the sizes.
std::vector<std::size_t> previewRefinementOrder(std::size_t n, std::size_t* coarse_count);

/// Threads the preview has started so far in this process. Its computations
/// run on a pool of threads kept from edit to edit (a point's working memory
/// is per thread); a thread is started only when none is idle.
std::size_t previewThreadsStarted();

/// The computation behind the preview, callable without Qt's event loop
/// (tests, the benchmark): computes `req` on `cfg` with the analytic engine in
/// refinement order, calling `emit` with the curves so far after the coarse
/// stage, at most every `partial_interval_s` while refining, and at the end.
/// Stops (returns with status.cancelled) once `stop` is requested. The points
/// are computed on `threads` threads (0: one per core), the longest first; the
/// results do not depend on the thread count.
void computePreview(const Config& cfg, const SweepRequest& req, bool uncapped, double point_cap_s,
                    std::stop_token stop, double partial_interval_s,
                    const std::function<void(const ResultSet&, const PreviewStatus&)>& emit,
                    unsigned threads = 0);

}  // namespace scin::ui

Q_DECLARE_METATYPE(scin::ui::PreviewStatus)
