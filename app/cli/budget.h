// Work budgets in the CLI: every command that runs engines estimates the work
// first (core/engines/engine.h), refuses work above --max-work or above the
// memory available (unless --force), warns beyond a few seconds and then shows
// progress on stderr, and turns Ctrl-C / SIGTERM into a cancellation.
#pragma once

#include <atomic>
#include <csignal>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <oneapi/tbb/global_control.h>

#include "base/run_context.h"
#include "engines/engine.h"
#include "schedule/algorithms.h"

namespace scin::cli {

/// --max-work SECONDS and --force.
struct BudgetOptions {
  std::string max_work = "300";   // estimated seconds on one core; 0: no limit
  bool force = false;
};

void add_budget_options(CLI::App& cmd, BudgetOptions& o);

/// --threads N: the worker threads of the command's engines, 0 (the default)
/// = all cores; the same flag and range as `scin sweep --threads`.
void add_threads_option(CLI::App& cmd, int& threads);

/// Caps the process's parallelism at `threads` (0: all cores) while alive.
/// Throws scin::Error naming --threads when it is outside 0..1024.
class ThreadLimit {
 public:
  explicit ThreadLimit(int threads);

 private:
  std::optional<tbb::global_control> limit_;
};

/// The core budget for these options (--max-work range-checked, memory: what is available).
WorkBudget work_budget(const BudgetOptions& o);

/// What a refusal tells the user to do.
inline constexpr const char* kBudgetOverride =
    "raise --max-work SECONDS (0: no limit) or pass --force to run it anyway, or make the work smaller";

/// Checks `total` against the budget: throws scin::Error with the refusal, or
/// prints "scin: warning: ..." on stderr. Returns true when the work is large
/// enough to show progress.
bool enforce_budget(const WorkEstimate& total, const BudgetOptions& o, const std::string& what);

/// SIGINT / SIGTERM while alive only count (no SA_RESETHAND): a second signal —
/// `timeout` and terminals send one to every process of the group — does not kill.
class SignalGuard {
 public:
  SignalGuard();
  ~SignalGuard();
  SignalGuard(const SignalGuard&) = delete;
  SignalGuard& operator=(const SignalGuard&) = delete;
  /// Signals received since this guard was installed.
  static int count();

 private:
  struct sigaction old_int_{}, old_term_{};
};

/// Runs jobs 0..n-1 (in parallel when `parallel` and n > 1; one job runs on the calling thread), each with a RunContext whose
/// stop token is requested on Ctrl-C / SIGTERM. With `show_progress`, prints
/// progress (jobs done, the estimated work done, elapsed and ETA) on stderr.
/// On a signal the jobs are stopped; if they have not all ended 100 ms later
/// (a schedule still compiling cannot be interrupted), the process exits with
/// status 130 — these commands write nothing, so nothing is lost. Rethrows the
/// first job's error; throws Cancelled after a signal.
void run_jobs(const std::vector<WorkEstimate>& work, bool show_progress, bool parallel,
              const std::function<void(std::size_t job, const RunContext& ctx)>& job);

}  // namespace scin::cli

namespace scin::cli {
// (The work of a sweep and of several jobs: sweep_work, total_work in core/sweep/sweep.h.)

/// "4.2 s", "3m07s", "2h05m".
std::string format_duration(double seconds);
/// format_duration, but "< 0.1 s" below 0.05 s (an estimate, where "0.0 s" would read as free).
std::string format_estimated_duration(double seconds);
}  // namespace scin::cli
