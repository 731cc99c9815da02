// The compiled form of a sweep spec, shared by the spec and runner code (internal).
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/run_context.h"
#include "sweep/sweep.h"

namespace scin::sweep_detail {

struct Memo;   // thread-safe cache of identical points (sweep_spec.cc)

/// A spec with its axes expanded and its presets loaded: point evaluation
/// never touches the file system.
struct Compiled {
  SweepSpec spec;
  std::vector<std::vector<std::vector<nlohmann::json>>> values;  // [group][axis][i]
  std::vector<std::uint64_t> group_len;
  std::uint64_t total = 1;
  std::map<std::string, Config> presets;   // by name ("" = registry defaults)
  std::shared_ptr<Memo> memo;              // null: no memoisation
  std::atomic<std::uint64_t> memo_hits{0};
};

std::unique_ptr<Compiled> compile(const SweepSpec& spec, bool memoise);
ResolvedPoint resolve(const Compiled& c, std::uint64_t index);
PointRecord evaluate(Compiled& c, std::uint64_t index, const RunContext& ctx = {});

}  // namespace scin::sweep_detail

namespace scin::sweep_detail {

/// Whether values of this path are byte sizes (accept "1M" strings).
bool is_size_path(const std::string& path);

/// The memo key: two independent 64-bit lanes of a structural hash.
struct PointKey {
  std::uint64_t a = 0, b = 0;
  bool operator==(const PointKey& o) const { return a == o.a && b == o.b; }
};

/// A structural hash over numbers, strings and JSON values (walked, not dumped).
class StructuralHash {
 public:
  void add(std::uint64_t v);
  void add(double v);
  void add(const std::string& s);
  void add(const nlohmann::json& j);
  void add(const PointKey& k) { add(k.a), add(k.b); }
  PointKey key() const { return {a_, b_}; }

 private:
  void mix(std::uint64_t v);
  std::uint64_t a_ = 0xcbf29ce484222325ull, b_ = 0x84222325cbf29ce4ull;
};

/// Hash of every registry parameter of `cfg` (name and description excluded).
PointKey config_hash(const Config& cfg);

}  // namespace scin::sweep_detail

namespace scin::sweep_detail {


/// What a stored run still has to evaluate: index ranges [first, last) in
/// ascending order, and how many points it already holds.
struct RunPlan {
  std::int64_t run_id = 0;          // 0 without a store
  std::vector<std::pair<std::uint64_t, std::uint64_t>> todo;
  std::uint64_t already = 0;
};

/// The last points of a run's work, which the runner takes longest first
/// (sweep_runner.cc): a long point at the end of a sweep used to start last
/// and run alone while the other threads had nothing left to do.
struct TailPlan {
  std::vector<std::pair<std::uint64_t, std::uint64_t>> head;   // taken in index order
  std::vector<std::uint64_t> tail;                             // the rest, ascending
};
/// Splits `todo` (ascending ranges) into a head and its last `window` indices.
TailPlan split_tail(const std::vector<std::pair<std::uint64_t, std::uint64_t>>& todo, std::uint64_t window);
/// Points per thread in the tail window (the pipeline's tokens per thread).
inline constexpr std::uint64_t kTailPointsPerThread = 64;
/// The order to take the tail's points in, given their estimated `seconds`:
/// those estimated at >= 1/(8 * threads) of the tail's total first, longest
/// first (ties in index order), then the others in index order (so the
/// committed prefix keeps growing). With one thread, or no estimate, index order.
std::vector<std::uint64_t> tail_order(const std::vector<std::uint64_t>& tail, const std::vector<double>& seconds,
                                      int threads);

/// Starts the run in `store` (a new run, or takes over opts.resume_run and
/// lists the points it lacks); without a store, everything is to do.
/// `ranks`: processes that evaluate the points (recorded with the run).
RunPlan begin_or_resume(Store* store, const SweepSpec& spec, const SweepOptions& opts, std::uint64_t total,
                        int threads, int ranks);

}  // namespace scin::sweep_detail

namespace scin::sweep_detail {

/// The single writer of a sweep (both runners): takes points in index order,
/// commits them in batched transactions (SweepOptions::batch_points /
/// batch_interval_s), keeps the progress figures and calls the sink.
class PointWriter {
 public:
  /// `store` null: points only go to the sink. `already`: points the run held
  /// before (a resume); the rate counts only the new ones.
  PointWriter(Store* store, std::int64_t run_id, SweepProgress& progress, std::uint64_t already,
              const SweepOptions& opts, const SweepSink& sink, std::function<std::uint64_t()> memo_hits);
  void add(PointRecord p) { pending_.push_back(std::move(p)); }
  /// Commits if a batch is full, the interval has passed or `force`; else reports progress.
  void step(bool force);
  void commit();
  /// Calls on_progress (at most every progress_interval_s unless `force`).
  void report(bool force);
  /// Recomputes elapsed time, rate and ETA: with every point's estimate (a
  /// fresh run), elapsed x (estimated seconds left / estimated seconds done),
  /// else the points left at the rate so far.
  void update();

 private:
  using Clock = std::chrono::steady_clock;
  Store* store_;
  std::int64_t run_id_;
  SweepProgress& pr_;
  std::uint64_t already_;
  const SweepOptions& opts_;
  const SweepSink& sink_;
  std::function<std::uint64_t()> memo_hits_;
  std::size_t batch_points_;
  Clock::time_point t0_, last_commit_, last_progress_;
  std::vector<PointRecord> pending_;
  // A fresh run with every point's estimate (SweepOptions::point_seconds):
  // estimated seconds of points [0, i) at [i] (points are committed in index
  // order), so the ETA weighs what is left by its estimate, not by its count.
  std::vector<double> estimated_before_;
};

}  // namespace scin::sweep_detail
