#include "cli/budget.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <mutex>
#include <stop_token>
#include <thread>
#include <unistd.h>

#include <fmt/format.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include "base/cancel.h"
#include "base/error.h"
#include "base/threads.h"
#include "cli/common.h"
#include "engines/simulate.h"
#include "sweep/sweep.h"

namespace scin::cli {
namespace {

std::atomic<int> g_signals{0};
extern "C" void on_cancel_signal(int) { g_signals.fetch_add(1); }

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

}  // namespace

std::string format_duration(double s) {
  if (s < 60) return fmt::format("{:.1f} s", s);
  if (s < 3600) return fmt::format("{}m{:02}s", static_cast<int>(s) / 60, static_cast<int>(s) % 60);
  return fmt::format("{}h{:02}m", static_cast<int>(s) / 3600, (static_cast<int>(s) % 3600) / 60);
}

std::string format_estimated_duration(double s) { return s < 0.05 ? "< 0.1 s" : format_duration(s); }

void add_budget_options(CLI::App& cmd, BudgetOptions& o) {
  cmd.add_option("--max-work", o.max_work,
                 "refuse work estimated above this many seconds on one core (0: no limit)")
      ->capture_default_str()
      // Checked as it is parsed (scin::Error, as work_budget() throws it): a bad
      // value is refused before the estimate, which can take seconds.
      ->each([](const std::string& v) { parse_integer(v, "--max-work", 0, 1'000'000'000); });
  cmd.add_flag("--force", o.force, "run work above --max-work or above the available memory anyway");
}

void add_threads_option(CLI::App& cmd, int& threads) {
  cmd.add_option("--threads", threads, "worker threads (0 = all cores)")->capture_default_str();
}

ThreadLimit::ThreadLimit(int threads) {
  resolve_threads(threads);   // the range check and message every --threads has
  if (threads > 0) limit_.emplace(tbb::global_control::max_allowed_parallelism, static_cast<std::size_t>(threads));
}

WorkBudget work_budget(const BudgetOptions& o) {
  WorkBudget b;
  b.max_seconds = static_cast<double>(parse_integer(o.max_work, "--max-work", 0, 1'000'000'000));
  b.force = o.force;
  return b;
}

bool enforce_budget(const WorkEstimate& total, const BudgetOptions& o, const std::string& what) {
  const BudgetCheck c = check_budget(total, work_budget(o), what, kBudgetOverride);
  if (c.refused()) throw Error(c.message);
  if (c.warn()) {
    fmt::print(stderr, "scin: warning: {}\nscin: progress below; Ctrl-C cancels\n", c.message);
    std::fflush(stderr);
  }
  return c.warn();
}

SignalGuard::SignalGuard() {
  g_signals = 0;
  struct sigaction sa{};
  sa.sa_handler = on_cancel_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sigaction(SIGINT, &sa, &old_int_);
  sigaction(SIGTERM, &sa, &old_term_);
}

SignalGuard::~SignalGuard() {
  sigaction(SIGINT, &old_int_, nullptr);
  sigaction(SIGTERM, &old_term_, nullptr);
}

int SignalGuard::count() { return g_signals.load(); }

void run_jobs(const std::vector<WorkEstimate>& work, bool show_progress, bool parallel,
              const std::function<void(std::size_t job, const RunContext& ctx)>& job) {
  const std::size_t n = work.size();
  double total_s = 0, total_amount = 0;
  for (const auto& w : work) {
    total_s += w.seconds;
    total_amount += w.amount;
  }
  const char* unit = n ? work.front().unit : "";
  // Each job's fraction done; the work done is the estimates weighted by it.
  auto fraction = std::make_unique<std::atomic<double>[]>(n);
  for (std::size_t i = 0; i < n; ++i) fraction[i] = 0;
  std::atomic<std::size_t> jobs_done{0};
  std::stop_source stop;
  std::exception_ptr failure;
  std::mutex failure_mutex;
  std::atomic<bool> finished{false};
  // The watcher waits on this between its looks (5 ms), so that it ends as soon
  // as the jobs do: a one-point `scin run` is not kept waiting for its next look.
  std::mutex finished_mutex;
  std::condition_variable finished_cv;
  std::atomic<double> signalled_at{-1};   // seconds after t0 the watcher saw the first signal

  SignalGuard signals;
  const bool tty = isatty(fileno(stderr)) != 0;
  const Clock::time_point t0 = Clock::now();
  std::thread watcher([&] {
    double last_line = 0;
    Clock::time_point signalled{};
    int seen = 0;
    bool line_open = false;
    while (!finished.load()) {
      {
        std::unique_lock lock(finished_mutex);
        if (finished_cv.wait_for(lock, std::chrono::milliseconds(5), [&] { return finished.load(); })) break;
      }
      const int sig = SignalGuard::count();
      if (sig > seen) {
        if (seen == 0) {
          signalled = Clock::now();
          signalled_at = seconds_since(t0);
          stop.request_stop();
        }
        fmt::print(stderr, "{}scin: {}; cancelling\n", line_open ? "\n" : "",
                   seen == 0 ? "interrupted" : "interrupted again");
        std::fflush(stderr);
        line_open = false;
        seen = sig;
      }
      if (seen && seconds_since(signalled) > 0.1 && !finished.load()) {
        // Work that cannot be interrupted (a large schedule still compiling):
        // nothing was written, so leave now rather than make the user wait.
        fmt::print(stderr, "scin: cancelled (work still running 100 ms after the signal was abandoned)\n");
        std::fflush(stderr);
        std::_Exit(130);
      }
      const double el = seconds_since(t0);
      if (!show_progress || seen || el - last_line < (tty ? 0.2 : 2.0)) continue;
      last_line = el;
      double done_s = 0;
      for (std::size_t i = 0; i < n; ++i) done_s += work[i].seconds * fraction[i].load();
      const double f = total_s > 0 ? std::clamp(done_s / total_s, 0.0, 1.0) : 0.0;
      // Before the engines report (a large schedule compiles first), the ETA
      // comes from the estimate spread over the cores.
      const double cores = std::max(1, tbb::this_task_arena::max_concurrency());
      const double estimated = total_s / (parallel ? cores : 1);
      const EtaGuess g = guess_eta(el, f, estimated);
      const std::string eta = g.from == EtaGuess::From::Progress   ? format_duration(g.seconds)
                              : g.from == EtaGuess::From::Estimate ? "~" + format_duration(g.seconds)
                                                                   : "unknown (over the ~" + format_duration(estimated) + " estimated)";
      const std::string line =
          fmt::format("progress: {}/{} runs, {:.0f}% of ~{:.2g} {}, {} elapsed, ETA {}", jobs_done.load(), n,
                      100 * f, total_amount, unit, format_duration(el), eta);
      if (tty) {
        fmt::print(stderr, "\r{}   ", line);
        line_open = true;
      } else {
        fmt::print(stderr, "{}\n", line);
      }
      std::fflush(stderr);
    }
    if (line_open) fmt::print(stderr, "\n");
  });

  auto one = [&](std::size_t i) {
    RunContext ctx;
    ctx.stop = stop.get_token();
    ctx.progress = [&fraction, i](double f) { fraction[i].store(f, std::memory_order_relaxed); };
    try {
      if (stop.stop_requested()) throw Cancelled();
      job(i, ctx);
      fraction[i] = 1;
      ++jobs_done;
    } catch (...) {
      std::lock_guard lock(failure_mutex);
      if (!failure) failure = std::current_exception();
      stop.request_stop();  // the first failure ends the others
    }
  };
  if (parallel && n > 1) {
    // Longest estimated job first: the default run's 1 GiB points come last in
    // index order and left one core alone at the end (2 cores: 1.5x, not 2x).
    std::vector<std::size_t> order(n);
    for (std::size_t i = 0; i < n; ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return work[a].seconds > work[b].seconds; });
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n, 1), [&](const tbb::blocked_range<std::size_t>& r) {
      for (std::size_t k = r.begin(); k != r.end(); ++k) one(order[k]);
    });
  } else
    for (std::size_t i = 0; i < n; ++i) one(i);
  const double ended = seconds_since(t0);
  {
    std::lock_guard lock(finished_mutex);
    finished = true;
  }
  finished_cv.notify_all();
  watcher.join();
  if (SignalGuard::count() > 0) {
    // The latency scripts/cancel_latency.sh measures: from the watcher seeing
    // the signal (it polls every 5 ms) to every job having stopped.
    const double at = signalled_at.load();
    if (at >= 0) fmt::print(stderr, "scin: cancelled; the work stopped {:.0f} ms after the signal\n", 1e3 * (ended - at));
    throw Cancelled();
  }
  if (failure) std::rethrow_exception(failure);
}

}  // namespace scin::cli
