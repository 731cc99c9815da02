// Starting a stored run (or taking over an interrupted one) and writing its
// points: shared by the TBB runner (sweep_runner.cc) and the MPI runner
// (sweep_mpi.cc).
#include <algorithm>

#include <fmt/format.h>

#include "base/error.h"
#include "sweep/sweep_internal.h"

namespace scin::sweep_detail {

TailPlan split_tail(const std::vector<std::pair<std::uint64_t, std::uint64_t>>& todo, std::uint64_t window) {
  TailPlan p;
  p.head = todo;
  while (window > 0 && !p.head.empty()) {
    auto& [first, last] = p.head.back();
    const std::uint64_t take = std::min(window, last - first);
    for (std::uint64_t i = last; i > last - take; --i) p.tail.push_back(i - 1);
    last -= take;
    window -= take;
    if (first == last) p.head.pop_back();
  }
  std::reverse(p.tail.begin(), p.tail.end());
  return p;
}

std::vector<std::uint64_t> tail_order(const std::vector<std::uint64_t>& tail, const std::vector<double>& seconds,
                                      int threads) {
  if (seconds.size() != tail.size())
    throw Error(fmt::format("tail_order: {} estimates for {} points", seconds.size(), tail.size()));
  double total = 0;
  for (double s : seconds) total += std::max(0.0, s);
  if (threads <= 1 || !(total > 0)) return tail;
  const double long_s = total / (8.0 * threads);
  std::vector<std::size_t> first, rest;
  for (std::size_t k = 0; k < tail.size(); ++k) (seconds[k] >= long_s ? first : rest).push_back(k);
  std::stable_sort(first.begin(), first.end(), [&](std::size_t a, std::size_t b) { return seconds[a] > seconds[b]; });
  std::vector<std::uint64_t> order;
  order.reserve(tail.size());
  for (std::size_t k : first) order.push_back(tail[k]);
  for (std::size_t k : rest) order.push_back(tail[k]);
  return order;
}

RunPlan begin_or_resume(Store* store, const SweepSpec& spec, const SweepOptions& opts, std::uint64_t total,
                        int threads, int ranks) {
  RunPlan plan;
  if (!store || opts.resume_run == 0) {
    plan.todo.emplace_back(0, total);
  } else {
    RunInfo prev = store->get_run(opts.resume_run);
    if (prev.points_total != total)
      throw Error(fmt::format("--resume: run {} has {} points but its spec now expands to {}", prev.id,
                              prev.points_total, total));
    store->resume_run(opts.resume_run, threads, ranks);
    plan.run_id = opts.resume_run;
    std::uint64_t next = 0;
    for (std::uint64_t i : store->point_indices(opts.resume_run)) {
      if (i > next) plan.todo.emplace_back(next, i);
      next = i + 1;
      ++plan.already;
    }
    if (next < total) plan.todo.emplace_back(next, total);
  }
  if (store && opts.resume_run == 0) {
    RunStart rs;
    rs.experiment = spec.experiment.empty() ? spec.name : spec.experiment;
    rs.name = opts.run_name.empty() ? spec.name : opts.run_name;
    rs.notes = opts.notes;
    rs.tags = opts.tags;
    rs.kind = spec.kind;
    rs.engine = spec.base.engine;
    rs.spec = to_json(spec);
    rs.points_total = total;
    rs.threads = threads;
    rs.ranks = ranks;
    rs.config = resolved_config_json(spec);
    plan.run_id = store->begin_run(rs);
  }
  return plan;
}

namespace {
double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}
}  // namespace

PointWriter::PointWriter(Store* store, std::int64_t run_id, SweepProgress& progress, std::uint64_t already,
                         const SweepOptions& opts, const SweepSink& sink, std::function<std::uint64_t()> memo_hits)
    : store_(store),
      run_id_(run_id),
      pr_(progress),
      already_(already),
      opts_(opts),
      sink_(sink),
      memo_hits_(std::move(memo_hits)),
      batch_points_(std::max<std::size_t>(1, opts.batch_points)),
      t0_(Clock::now()),
      last_commit_(t0_),
      last_progress_(t0_ - std::chrono::hours(1)) {
  pr_.done = already;
  if (already == 0 && !opts.point_seconds.empty() && opts.point_seconds.size() == pr_.total) {
    estimated_before_.assign(1, 0.0);
    for (const double s : opts.point_seconds) estimated_before_.push_back(estimated_before_.back() + std::max(0.0, s));
  }
}

void PointWriter::update() {
  pr_.elapsed_s = seconds_since(t0_);
  pr_.memo_hits = memo_hits_ ? memo_hits_() : 0;
  pr_.rate_points_per_s = pr_.elapsed_s > 0 ? static_cast<double>(pr_.done - already_) / pr_.elapsed_s : 0;
  pr_.eta_s = (pr_.rate_points_per_s > 0 && pr_.done < pr_.total)
                  ? static_cast<double>(pr_.total - pr_.done) / pr_.rate_points_per_s
                  : 0;
  // Sizes grow along a sweep, and a packet point at 1 GiB can cost as much as
  // all the small ones before it: by the estimates, when every point has one.
  if (pr_.done < pr_.total && pr_.done < estimated_before_.size())
    if (const double done_s = estimated_before_[pr_.done]; done_s > 0)
      pr_.eta_s = pr_.elapsed_s * (estimated_before_.back() - done_s) / done_s;
}

void PointWriter::report(bool force) {
  if (!sink_.on_progress) return;
  if (!force && seconds_since(last_progress_) < opts_.progress_interval_s) return;
  last_progress_ = Clock::now();
  update();
  sink_.on_progress(pr_);
}

void PointWriter::commit() {
  if (pending_.empty()) return;
  if (store_) store_->append_points(run_id_, pending_);
  last_commit_ = Clock::now();
  for (const auto& p : pending_) {
    ++pr_.done;
    if (p.status != PointStatus::Ok) ++pr_.skipped;
    if (sink_.on_point) sink_.on_point(p);
  }
  pending_.clear();
  report(false);
}

void PointWriter::step(bool force) {
  if (force || pending_.size() >= batch_points_ ||
      (!pending_.empty() && seconds_since(last_commit_) >= opts_.batch_interval_s))
    commit();
  else
    report(false);
}

}  // namespace scin::sweep_detail
