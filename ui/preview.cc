#include "ui/preview.h"

#include <algorithm>
#include <cmath>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <exception>
#include <functional>
#include <optional>
#include <mutex>
#include <thread>

#include <QMetaObject>

#include "base/cancel.h"
#include "base/error.h"
#include "engines/simulate.h"
#include "fabric/params.h"
#include "schedule/algorithms.h"
#include "ui/format.h"

namespace scin::ui {
namespace {

std::atomic<int> g_alive{0};

struct AliveGuard {
  AliveGuard() { ++g_alive; }
  ~AliveGuard() { --g_alive; }
  AliveGuard(const AliveGuard&) = delete;
  AliveGuard& operator=(const AliveGuard&) = delete;
};

}  // namespace

std::vector<std::size_t> previewRefinementOrder(std::size_t n, std::size_t* coarse_count) {
  std::vector<std::size_t> order;
  std::vector<bool> taken(n, false);
  const std::size_t stride = std::max<std::size_t>(1, (n + 4) / 6);
  for (std::size_t i = 0; i < n; i += stride) {
    order.push_back(i);
    taken[i] = true;
  }
  if (n > 0 && !taken[n - 1]) {
    order.push_back(n - 1);
    taken[n - 1] = true;
  }
  *coarse_count = order.size();
  for (std::size_t i = 0; i < n; ++i)
    if (!taken[i]) order.push_back(i);
  return order;
}

namespace {

/// The preview's threads: created on first use and kept for the life of the
/// process (never joined; the pool is never destroyed, so exit does not wait
/// for it). A computation's working memory is per thread (core's analytic
/// workspaces, the schedules kept for the next point): on a new thread each
/// point pays for it again, which on a fresh thread per edit took 5-8 ms of
/// CPU more for the 224 points of the default preview (70-100% more than the
/// same points on a warm thread). Tasks run in the order posted; when no
/// thread is idle a new one is started, so a new computation never waits for
/// a stopped one still returning from its engine call.
class PreviewPool {
 public:
  /// A task returns what is to be done once its thread counts as idle again
  /// (called under the pool's lock; may be empty): a caller woken by it and
  /// posting again finds that thread idle and starts none.
  using Task = std::function<std::function<void()>()>;
  static PreviewPool& get() {
    static PreviewPool* pool = new PreviewPool;  // never destroyed (see above)
    return *pool;
  }
  /// Queues `task`; returns its number (for withdraw()).
  std::uint64_t post(Task task) {
    std::lock_guard<std::mutex> lock(mu_);
    tasks_.emplace_back(++posted_, std::move(task));
    if (idle_ < tasks_.size()) {
      ++started_;
      ++idle_;  // idle from now until it takes a task (it may start late on a busy machine)
      std::thread([this] { loop(); }).detach();
    } else {
      cv_.notify_one();
    }
    return posted_;
  }
  /// Drops the tasks of these numbers that no thread has taken yet.
  void withdraw(const std::vector<std::uint64_t>& numbers) {
    std::lock_guard<std::mutex> lock(mu_);
    std::erase_if(tasks_, [&](const auto& t) {
      return std::find(numbers.begin(), numbers.end(), t.first) != numbers.end();
    });
  }
  std::size_t started() {
    std::lock_guard<std::mutex> lock(mu_);
    return started_;
  }

 private:
  void loop() {
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      cv_.wait(lock, [this] { return !tasks_.empty(); });
      --idle_;
      Task task = std::move(tasks_.front().second);
      tasks_.pop_front();
      lock.unlock();
      std::function<void()> then = task();
      task = nullptr;  // (its captures are released outside the lock)
      lock.lock();
      ++idle_;
      if (then) then();
    }
  }
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::pair<std::uint64_t, Task>> tasks_;
  std::uint64_t posted_ = 0;
  std::size_t idle_ = 0;
  std::size_t started_ = 0;  // threads started, ever
};

/// One forEachOnThreads call's shared state (a pool thread may start after
/// the call has returned: it holds the state, finds it closed, and returns).
struct IndexLoop {
  explicit IndexLoop(std::size_t count, const std::function<void(std::size_t)>& b) : n(count), body(&b) {}
  const std::size_t n;
  const std::function<void(std::size_t)>* body;  // valid while not closed
  std::atomic<std::size_t> next{0};
  std::atomic<bool> failed{false};
  std::exception_ptr first;
  std::mutex mu;
  std::condition_variable done;
  int active = 0;       // pool threads inside run()
  bool closed = false;  // the caller is done: late pool threads return at once

  void run() {
    try {
      for (std::size_t t; !failed.load(std::memory_order_relaxed) && (t = next.fetch_add(1)) < n;) (*body)(t);
    } catch (...) {
      std::lock_guard<std::mutex> lock(mu);
      if (!first) first = std::current_exception();
      failed = true;
    }
  }
};

/// Calls body(0 .. n-1) on up to `threads` threads (the caller's one of them,
/// the others the pool's), each taking the next index in order. The first
/// exception stops the taking of new indices and is rethrown here once every
/// thread that took part is done; a pool thread that starts after the caller
/// has finished does nothing.
void forEachOnThreads(std::size_t n, unsigned threads, const std::function<void(std::size_t)>& body) {
  auto loop = std::make_shared<IndexLoop>(n, body);
  const std::size_t extra = std::min<std::size_t>(threads, n) > 1 ? std::min<std::size_t>(threads, n) - 1 : 0;
  std::vector<std::uint64_t> helpers;
  for (std::size_t k = 0; k < extra; ++k) {
    helpers.push_back(PreviewPool::get().post([loop]() -> std::function<void()> {
      {
        std::lock_guard<std::mutex> lock(loop->mu);
        if (loop->closed) return {};
        ++loop->active;
      }
      loop->run();
      return [loop] {  // once this thread is idle again
        std::lock_guard<std::mutex> lock(loop->mu);
        if (--loop->active == 0) loop->done.notify_all();
      };
    }));
  }
  loop->run();
  // Helpers no thread has taken yet are not needed any more (a busy machine):
  // left queued, they would make the next call's helpers look unserved.
  if (!helpers.empty()) PreviewPool::get().withdraw(helpers);
  std::unique_lock<std::mutex> lock(loop->mu);
  loop->closed = true;
  loop->done.wait(lock, [&] { return loop->active == 0; });
  if (loop->first) std::rethrow_exception(loop->first);
}

}  // namespace

std::size_t previewThreadsStarted() { return PreviewPool::get().started(); }

void computePreview(const Config& cfg, const SweepRequest& req, bool uncapped, double point_cap_s,
                    std::stop_token stop, double partial_interval_s,
                    const std::function<void(const ResultSet&, const PreviewStatus&)>& emit,
                    unsigned threads) {
  using Clock = std::chrono::steady_clock;
  ResultSet rs;
  rs.title = QStringLiteral("Preview");
  PreviewStatus st;
  std::vector<std::uint64_t> sizes;
  DType dtype = DType::Bf16;
  std::vector<std::string> names;
  try {
    validate(cfg);
    dtype = parse_dtype(req.dtype);
    sizes = req.sizes();
    names = req.effective_algorithms(cfg);
  } catch (const Error& e) {
    rs.errors.push_back(e.what());
    st.complete = true;
    emit(rs, st);
    return;
  }
  const auto elem = static_cast<std::uint64_t>(dtype_bytes(dtype));
  sizes.erase(std::remove_if(sizes.begin(), sizes.end(), [elem](std::uint64_t s) { return s % elem != 0; }),
              sizes.end());
  RunContext ctx;
  ctx.stop = stop;
  const std::size_t n = sizes.size();
  std::size_t coarse = 0;
  const std::vector<std::size_t> order = previewRefinementOrder(n, &coarse);
  const double per_coarse = coarse > 0 ? static_cast<double>(n) / static_cast<double>(coarse) : 1.0;

  // The work budget, checked before any point is computed: core's estimate
  // (it compiles the schedule, no simulation) of each coarse point, in
  // ascending size; the first coarse point over the cap bounds the
  // algorithm's sizes (found exactly by bisection from the last size known
  // under it), and no schedule of a larger size is ever built. The finer sizes
  // in between need no estimate: the cost grows with size. Each algorithm
  // keeps its own tallies (its admission runs on any thread); they are summed
  // in the algorithms' order afterwards.
  struct Algo {
    Algorithm id{};
    Curve curve;
    std::size_t limit = 0;       // sizes [0, limit) are previewed
    std::size_t checked = 0;     // sizes [0, checked) are known to be under the cap
    std::vector<double> est;     // estimate of coarse row k (0 if not estimated)
    double est_sum_s = 0;        // what its coarse estimates stand for
    std::size_t capped = 0;      // sizes left out by the cap
    std::size_t cap_row = 0;     // coarse row at which the cap was met
    QString cap_text;
    std::string error;           // its first error; the algorithm stops there
    bool failed = false;
  };
  std::vector<Algo> algos;
  for (const auto& name : names) {
    Algo a;
    a.curve.algorithm = name;
    a.curve.label = QString::fromStdString(name);
    a.limit = n;
    a.est.assign(coarse, 0.0);
    try {
      a.id = parse_algorithm(name);
      st.points_total += static_cast<int>(n);
    } catch (const Error& e) {
      rs.errors.push_back(name + ": " + e.what());
      a.failed = true;
    }
    algos.push_back(std::move(a));
  }
  auto est = [&](const Algo& a, std::size_t i) {
    ctx.check();
    return estimate(cfg, a.id, Collective{sizes[i], dtype}, EngineId::Analytic).seconds;
  };
  auto admitCoarse = [&](Algo& a) {
    for (std::size_t k = 0; k < coarse && !a.failed; ++k) {
      const std::size_t i = order[k];
      try {
        const double e = est(a, i);
        a.est[k] = e;
        a.est_sum_s += e * per_coarse;  // this coarse point stands for its neighbours
        if (uncapped || e <= point_cap_s) {
          a.checked = i + 1;
          continue;
        }
        std::size_t lo = a.checked, hi = i;  // [0, lo) under the cap, hi over it
        while (lo < hi) {
          const std::size_t mid = (lo + hi) / 2;
          if (est(a, mid) <= point_cap_s) lo = mid + 1;
          else hi = mid;
        }
        a.limit = a.checked = lo;
        a.capped = n - lo;
        a.cap_row = k;
        a.cap_text = QStringLiteral("%1 ≥ %2 (~%3 each)")
                         .arg(QString::fromStdString(a.curve.algorithm), sizeText(sizes[lo]), durationText(e));
        return;
      } catch (const Error& e) {
        a.error = a.curve.algorithm + ": " + e.what();
        a.failed = true;
      }
    }
  };

  // Points are computed on every core (each is independent, and core's
  // simulate() is thread-safe); results, counts and the partial results
  // handed to `emit` are guarded by one mutex.
  if (threads == 0) threads = std::clamp(std::thread::hardware_concurrency(), 1u, 16u);
  std::mutex mu;
  auto snapshot = [&] {
    ResultSet out;
    out.title = rs.title;
    out.errors = rs.errors;
    for (const Algo& a : algos)
      if (!a.error.empty()) out.errors.push_back(a.error);
    for (const Algo& a : algos)
      if (!a.failed && !a.curve.points.empty()) out.curves.push_back(a.curve);
    st.fraction = st.points_total > 0 ? static_cast<double>(st.points_done) / st.points_total : 1.0;
    return out;
  };
  // The first partial result may come sooner (a fifth of the interval): on a
  // slow fabric the user sees the first points while the coarse pass goes on.
  auto last_emit = Clock::now() - std::chrono::duration_cast<Clock::duration>(
                                      std::chrono::duration<double>(partial_interval_s * 0.8));
  struct Task {
    std::size_t algo, i;
    double weight;  // expected cost: the longest are started first
  };
  std::size_t tasks_left = 0;  // of both stages, under `mu`
  auto compute = [&](const Task& t) {
    Algo& a = algos[t.algo];
    {
      std::lock_guard<std::mutex> lock(mu);
      if (a.failed) {
        --tasks_left;
        return;
      }
    }
    std::optional<SimResult> r;
    std::string error;
    try {
      ctx.check();
      r = simulate(cfg, a.id, Collective{sizes[t.i], dtype}, EngineId::Analytic, ctx);
    } catch (const Error& e) {
      error = a.curve.algorithm + ": " + e.what();
    }
    std::lock_guard<std::mutex> lock(mu);
    --tasks_left;
    if (r && !a.failed) {
      auto pos = std::lower_bound(a.curve.points.begin(), a.curve.points.end(), r->bytes,
                                  [](const SimResult& p, std::uint64_t b) { return p.bytes < b; });
      a.curve.points.insert(pos, std::move(*r));
    } else if (!r && !a.failed) {
      a.error = std::move(error);
      a.failed = true;
    }
    ++st.points_done;
    // Long points: show what is there every partial interval, even in the coarse pass.
    if (tasks_left > 0 && !stop.stop_requested() &&
        std::chrono::duration<double>(Clock::now() - last_emit).count() >= partial_interval_s) {
      ResultSet part = snapshot();
      emit(part, st);
      last_emit = Clock::now();
    }
  };

  try {
    forEachOnThreads(algos.size(), threads, [&](std::size_t k) {
      if (!algos[k].failed) admitCoarse(algos[k]);
    });
    std::vector<std::pair<std::size_t, std::size_t>> caps;  // (row, algorithm): the old order of the texts
    for (std::size_t k = 0; k < algos.size(); ++k) {
      const Algo& a = algos[k];
      st.estimated_s += a.est_sum_s;
      if (a.capped > 0) caps.emplace_back(a.cap_row, k);
      st.points_total -= static_cast<int>(a.capped);
      st.points_capped += static_cast<int>(a.capped);
    }
    std::sort(caps.begin(), caps.end());
    for (const auto& [row, k] : caps) {
      if (!st.capped_text.isEmpty()) st.capped_text += QStringLiteral("; ");
      st.capped_text += algos[k].cap_text;
    }
    // Stage 1, the quick coarse points (estimated under kPreviewQuickPointS
    // each): the curves' shape over the range within a frame. Stage 2, the
    // slow coarse points and then the sizes in between, each part longest
    // first and with no barrier between them (a long point, started at once,
    // runs beside the short ones).
    std::vector<Task> quick_tasks, slow_tasks, fine_tasks;
    for (std::size_t k = 0; k < algos.size(); ++k) {
      const Algo& a = algos[k];
      if (a.failed) continue;
      for (std::size_t r = 0; r < coarse; ++r)
        if (order[r] < a.limit)
          (a.est[r] <= kPreviewQuickPointS ? quick_tasks : slow_tasks).push_back({k, order[r], a.est[r]});
      for (std::size_t r = coarse; r < order.size(); ++r)
        if (order[r] < a.limit) fine_tasks.push_back({k, order[r], static_cast<double>(order[r])});
    }
    // Longest first (the fine points have no estimate: larger sizes cost more).
    auto longest_first = [](const Task& x, const Task& y) {
      return x.weight != y.weight ? x.weight > y.weight : (x.i != y.i ? x.i > y.i : x.algo < y.algo);
    };
    std::stable_sort(quick_tasks.begin(), quick_tasks.end(), longest_first);
    std::stable_sort(slow_tasks.begin(), slow_tasks.end(), longest_first);
    std::stable_sort(fine_tasks.begin(), fine_tasks.end(), longest_first);
    if (quick_tasks.empty()) std::swap(quick_tasks, slow_tasks);  // nothing quick: the coarse pass first, as a whole
    std::vector<Task> rest = std::move(slow_tasks);
    rest.insert(rest.end(), fine_tasks.begin(), fine_tasks.end());
    tasks_left = quick_tasks.size() + rest.size();
    forEachOnThreads(quick_tasks.size(), threads, [&](std::size_t t) { compute(quick_tasks[t]); });
    if (!rest.empty()) {
      ctx.check();
      ResultSet part = snapshot();  // the coarse curves: the first thing the user sees
      emit(part, st);
      last_emit = Clock::now();
      forEachOnThreads(rest.size(), threads, [&](std::size_t t) { compute(rest[t]); });
    }
    ctx.check();
  } catch (const Cancelled&) {
    st.cancelled = true;
    return;
  }
  st.complete = true;
  ResultSet out = snapshot();
  emit(out, st);
}

// --- the QObject side -----------------------------------------------------------

struct Preview::Shared {
  std::mutex mu;
  Preview* owner = nullptr;  // null once the Preview is gone: results are dropped
};

Preview::Preview(QObject* parent) : QObject(parent), shared_(std::make_shared<Shared>()) {
  qRegisterMetaType<scin::ui::PreviewStatus>();
  shared_->owner = this;
  hold_timer_ = new QTimer(this);
  hold_timer_->setSingleShot(true);
  hold_timer_->setTimerType(Qt::PreciseTimer);
  connect(hold_timer_, &QTimer::timeout, this, [this] {
    if (!held_) return;
    Held h = std::move(*held_);
    held_.reset();
    if (h.generation == generation_) show(h.results, h.status);
  });
}

Preview::~Preview() {
  cancel();
  std::lock_guard<std::mutex> lock(shared_->mu);
  shared_->owner = nullptr;
}

int Preview::workersAlive() { return g_alive.load(); }

void Preview::request(const Config& cfg, const SweepRequest& req) {
  pending_ = Job{cfg, req, false};
  since_request_.start();
  schedule();
}

void Preview::computeAll() {
  if (!current_) return;
  Job j = *current_;
  j.uncapped = true;
  pending_ = j;
  since_request_.start();
  schedule();
}

void Preview::schedule() {
  // The first request of a turn of the event loop starts at once: its worker
  // computes while the GUI thread finishes the edit (editors, topology). The
  // queued call marks the end of the turn: requests before it wait for it and
  // become one computation.
  if (turn_open_) return;
  start();
  turn_open_ = true;
  QMetaObject::invokeMethod(
      this,
      [this] {
        turn_open_ = false;
        start();  // what the rest of the turn asked for, if anything
      },
      Qt::QueuedConnection);
}

void Preview::cancel() {
  pending_.reset();
  stop_.request_stop();
  ++generation_;  // whatever is in flight is dropped
  held_.reset();
  hold_timer_->stop();
  if (running_) {
    running_ = false;
    status_.cancelled = true;
    status_.complete = true;
    Q_EMIT progress(status_);
  }
}

void Preview::start() {
  if (!pending_) return;
  stop_.request_stop();  // the older computation stops at its next poll; its results are dropped
  stop_ = std::stop_source();
  const quint64 gen = ++generation_;
  current_ = std::move(*pending_);
  pending_.reset();
  running_ = true;
  first_seen_ = false;
  held_.reset();
  hold_timer_->stop();
  status_ = PreviewStatus{};
  status_.generation = gen;
  const Job job = *current_;
  const double cap = point_cap_s_;
  std::shared_ptr<Shared> sh = shared_;
  std::stop_token token = stop_.get_token();
  // On the preview's own pool (kept warm from edit to edit, never joined):
  // nobody ever waits for a preview worker (not even QCoreApplication's exit,
  // which waits for Qt's global thread pool).
  PreviewPool::get().post([job, cap, sh, token, gen]() -> std::function<void()> {
    AliveGuard alive;
    computePreview(job.cfg, job.req, job.uncapped, cap, token, partial_interval_ms / 1e3,
                   [&](const ResultSet& rs, const PreviewStatus& st0) {
                     if (token.stop_requested()) return;
                     PreviewStatus st = st0;
                     st.generation = gen;
                     std::lock_guard<std::mutex> lock(sh->mu);
                     if (!sh->owner) return;
                     Preview* p = sh->owner;
                     // Queued to the GUI thread; Qt drops it if the Preview is deleted first.
                     QMetaObject::invokeMethod(p, [p, gen, rs, st] { p->deliver(gen, rs, st); },
                                               Qt::QueuedConnection);
                   });
    return {};
  });
}

void Preview::deliver(quint64 gen, const ResultSet& rs, const PreviewStatus& st) {
  if (gen != generation_) return;  // superseded
  const double ms = static_cast<double>(since_request_.nsecsElapsed()) / 1e6;
  if (!st.complete && !first_seen_ && ms < partial_hold_ms_) {
    // Too early to be worth a repaint of its own: the complete result may
    // follow within the frame. Shown at partial_hold_ms_ if it does not.
    held_ = Held{gen, rs, st};
    // (Rounded up: truncated, a partial arriving at 0.6 ms was shown at 99.6 ms of a 100 ms hold.)
    hold_timer_->start(std::max(0, static_cast<int>(std::ceil(partial_hold_ms_ - ms))));
    return;
  }
  hold_timer_->stop();
  held_.reset();  // (older than this result)
  show(rs, st);
}

void Preview::show(const ResultSet& rs, const PreviewStatus& st) {
  status_ = st;
  const double ms = static_cast<double>(since_request_.nsecsElapsed()) / 1e6;
  if (!first_seen_) {
    first_seen_ = true;
    first_ms_ = ms;
  }
  if (st.complete) {
    running_ = false;
    last_ms_ = ms;
  }
  Q_EMIT ready(rs);
  Q_EMIT progress(status_);
}

}  // namespace scin::ui
