// Sweeps: a spec (base settings + axes) that expands to a list of points, and
// a runner that evaluates the points in parallel with TBB and writes them to an
// experiment database (or hands them to a callback) in point-index order.
//
// Spec JSON (see resources/sweeps/ for examples):
//   {
//     "name": "seed-comparison",            // default run name
//     "experiment": "seed",                 // optional; default: name
//     "description": "...",
//     "kind": "collective",                 // "collective" | "quant" | "inference"
//     "base": {
//       "preset": "hgx-h200-8",             // name or path; default: registry defaults
//       "set": {"switch.latency_ns": 200},  // or ["switch.latency_ns=200", ...] (scin run --set)
//       "engine": "analytic",
//       "collective": {"algorithm": "ring", "bytes": "1M", "dtype": "bf16"},
//       "input": {"dist": "gaussian", "stddev": 1, "seed": 1},  // kind quant: input tensors
//       "inference": {"model": "llama-2-70b", "tp": 8, "batch": 1, "prompt_tokens": 2048}
//     },
//     "axes": [
//       {"path": "collective.algorithm", "values": ["ring", "nvls", "scin", "scin-inq"]},
//       {"path": "collective.bytes", "range": {"min": "8", "max": "1G", "factor": 2}},
//       {"path": "links.latency_ns", "range": {"min": 100, "max": 300, "step": 50}},
//       {"zip": [{"path": "fabric.gpus", "values": [4, 8]},
//                {"path": "links.bandwidth_GBps", "values": [225, 450]}]}
//     ]
//   }
// Axis paths: any registry parameter (core/fabric/params.h, the same paths as
// `scin run --set`), or one of the special paths `preset`, `engine`,
// `collective.algorithm`, `collective.bytes` (sizes with K/M/G suffixes),
// `collective.dtype`; for kind quant `input.dist`, `input.stddev`,
// `input.seed`, `input.outlier_fraction`, `input.outlier_scale`,
// `input.channels` (input generation, numerics/quant_study.h InputSpec; the
// per-rank element count is collective.bytes / dtype size); for kind inference
// `inference.model`, `inference.accelerator`, `inference.tp`, `inference.batch`,
// `inference.prompt_tokens`, `inference.context_tokens`. A range is {"min", "max"} plus exactly
// one of "factor" (geometric, > 1), "step" (linear, > 0) or "count" (that many
// evenly spaced values, >= 2). Axes are crossed as a Cartesian product, the
// first axis varying slowest; the members of a "zip" move together and must
// have the same length.
//
// A point whose combination the model does not support (nvls on a mesh, a
// fabric that fails validation) is recorded as `skipped` with the reason; the
// sweep goes on.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "schedule/algorithms.h"
#include "fabric/config.h"
#include "store/store.h"

namespace scin {

/// A numeric range that expands to a list of values.
struct AxisRange {
  nlohmann::json min;               // number, or a size string ("8", "1G") for byte-valued paths
  nlohmann::json max;
  double factor = 0;                // geometric: min, min*f, ... <= max
  double step = 0;                  // linear: min, min+step, ... <= max
  int count = 0;                    // linear: `count` values from min to max inclusive
};

struct Axis {
  std::string path;                 // dotted parameter path or special path
  std::vector<nlohmann::json> values;   // explicit values (empty when `range` is set)
  std::optional<AxisRange> range;
};

/// One dimension of the Cartesian product: a single axis, or several zipped axes.
struct AxisGroup {
  std::vector<Axis> axes;           // size 1 for a plain axis
};

struct SweepBase {
  std::string preset;               // empty: registry defaults
  std::vector<std::pair<std::string, nlohmann::json>> set;  // path -> value, applied in order
  std::string engine = "analytic";
  std::string algorithm;            // collective.algorithm (required unless an axis)
  std::uint64_t bytes = 0;          // collective.bytes (kind collective: required unless an axis;
                                    // kind quant: default 2 MiB; kind inference: unused)
  std::string dtype = "bf16";       // collective.dtype
  nlohmann::json input = nlohmann::json::object();      // kind quant: input generation (keys of input.*)
  nlohmann::json inference = nlohmann::json::object();  // kind inference: settings (keys of inference.*)
};

struct SweepSpec {
  std::string name = "sweep";
  std::string experiment;           // empty: same as name
  std::string description;
  PointKind kind = PointKind::Collective;
  SweepBase base;
  std::vector<AxisGroup> axes;
  /// Presets recorded with a stored run (name -> resolved Config; "" = the
  /// registry defaults). When non-empty, presets are looked up here only and
  /// never read from disk: a re-run means what the original run meant.
  std::map<std::string, Config> recorded_presets;
};

/// Parses and validates a spec (paths exist, values in range, zips aligned,
/// ranges finite). Throws Error naming the field (e.g. "axes[1].range.factor").
SweepSpec sweep_spec_from_json(const nlohmann::json& j, const std::string& origin = "sweep spec");
/// The same, with presets taken from `presets` (a stored run's record) instead of files.
SweepSpec sweep_spec_from_json(const nlohmann::json& j, const std::map<std::string, Config>& presets,
                               const std::string& origin);
SweepSpec load_sweep_spec(const std::filesystem::path& file);
/// Canonical JSON; sweep_spec_from_json(to_json(s)) == s.
nlohmann::json to_json(const SweepSpec& s);

/// The expanded values of an axis (ranges turned into lists; sizes as integers).
std::vector<nlohmann::json> axis_values(const Axis& a);
/// Number of points (product of the group lengths; 1 with no axes).
std::uint64_t point_count(const SweepSpec& s);
/// Axis values of point `index`: {"path": value, ...} in axis order.
nlohmann::json point_axes(const SweepSpec& s, std::uint64_t index);

/// Everything needed to evaluate one point.
struct ResolvedPoint {
  std::uint64_t index = 0;
  nlohmann::json axes;
  Config config;
  std::string engine;
  std::string algorithm;
  Collective collective;
  nlohmann::json input;             // kind quant: effective input settings
  nlohmann::json inference;         // kind inference: effective settings
};
/// Applies base + axes for point `index`. Throws Error if the combination is
/// invalid (the runner records that as a skipped point).
ResolvedPoint resolve_point(const SweepSpec& s, std::uint64_t index);
namespace sweep_detail { struct Compiled; }
struct WorkEstimate;   // engines/engine.h
/// Resolves many points of one spec: its presets are loaded once, where
/// resolve_point() loads (reads and parses) them on every call. Const calls are
/// safe from several threads.
class PointResolver {
 public:
  explicit PointResolver(const SweepSpec& s);
  ~PointResolver();
  PointResolver(const PointResolver&) = delete;
  PointResolver& operator=(const PointResolver&) = delete;
  std::uint64_t size() const;
  ResolvedPoint operator()(std::uint64_t index) const;   // as resolve_point(s, index)

 private:
  std::unique_ptr<sweep_detail::Compiled> c_;
};
/// What evaluating point `r` of a sweep of `kind` costs, estimated without
/// running it (engines/simulate.h estimate()); zero for a kind without an
/// estimate (inference). Throws Error as estimate() does (a point the model
/// cannot run).
WorkEstimate point_work(PointKind kind, const ResolvedPoint& r);
/// The work of `jobs` run `concurrency` at a time: amounts and seconds add up,
/// memory is the largest `concurrency` jobs together.
WorkEstimate total_work(const std::vector<WorkEstimate>& jobs, std::size_t concurrency);
/// The work of a sweep's collective and quant points, from an evenly spaced
/// sample of at most 1000 points scaled to the whole sweep, estimated on
/// `concurrency` threads; inference points are not estimated. Points that do
/// not resolve (skipped by the sweep) count nothing. `point_seconds`
/// (optional): each point's estimated seconds, in index order, when the sample
/// is the whole sweep (at most 1000 points); else left empty. What the CLI's
/// --max-work and the app's Run check (check_budget, engines/engine.h).
WorkEstimate sweep_work(const SweepSpec& spec, std::size_t concurrency, std::vector<double>* point_seconds = nullptr);
/// Evaluates one point; never throws for model errors (they become skipped /
/// failed records).
PointRecord evaluate_point(const SweepSpec& s, std::uint64_t index);

/// The request of one quant / inference point (kind settings applied); front
/// ends that run a study themselves (scin quant, scin infer) build it here too.
struct QuantRequest;
struct InferenceRequest;
QuantRequest quant_request(const ResolvedPoint& r);
InferenceRequest inference_request(const ResolvedPoint& r);

// --- self-describing runs ---------------------------------------------------

/// Every registry parameter of `cfg`: {path: {"value": v, "unit": "ns"}}.
nlohmann::json config_parameters_json(const Config& cfg);
/// What a run records as RunInfo::config: the resolved base configuration
/// (base preset + base.set) as "parameters", every preset the spec uses
/// ("presets": name -> {"config", "file", "file_fnv1a64"}), "preset", and the
/// tool version and git revision. Loads the presets (or uses recorded ones).
nlohmann::json resolved_config_json(const SweepSpec& spec);
/// The spec of a stored run, with its recorded presets: re-runs it without any
/// preset file. Error if the run's configuration was not recorded.
SweepSpec sweep_spec_from_run(const RunInfo& run);

struct ConfigDifference {
  std::string path;
  nlohmann::json a, b;              // null when one side lacks the parameter
  std::string unit;
};
/// Parameters whose values differ between two recorded configurations, by path.
std::vector<ConfigDifference> config_diff(const nlohmann::json& a, const nlohmann::json& b);

// --- the runner -----------------------------------------------------------

struct SweepProgress {
  std::uint64_t done = 0;           // points finished (and, with a store, committed)
  std::uint64_t total = 0;
  std::uint64_t skipped = 0;        // skipped + failed among `done`
  std::uint64_t memo_hits = 0;      // points answered from the memo
  double elapsed_s = 0;
  double rate_points_per_s = 0;     // done / elapsed
  double eta_s = 0;                 // (total - done) / rate; 0 when unknown or finished
};

/// Callbacks of a sweep. All of them are called on the thread that called
/// run_sweep (the single writer thread), never concurrently, never from TBB
/// workers; keep them short (the GUI should post to its own thread).
struct SweepSink {
  /// After each committed batch and at the end, at most every
  /// SweepOptions::progress_interval_s (the final call always happens).
  std::function<void(const SweepProgress&)> on_progress;
  /// For every point, in index order, right after it is committed.
  std::function<void(const PointRecord&)> on_point;
};

struct SweepOptions {
  int threads = 0;                  // worker threads; 0 = all cores
  std::size_t batch_points = 8192;  // max points per transaction
  double batch_interval_s = 0.2;    // commit at least this often while points arrive
  double progress_interval_s = 0.1;
  bool memoise = true;              // compute identical points once (see docs/model.md, section 7)
  /// Set to true (from any thread) to cancel: no new point starts, a long point
  /// (packet engine, quant study, inference) stops part-way (it polls the stop
  /// request in its RunContext), everything computed in order so far is
  /// committed, and the run ends `cancelled`. Returns within one analytic
  /// point's compute time.
  const std::atomic<bool>* cancel = nullptr;
  /// The same through a std::stop_token (RunContext style, base/run_context.h).
  std::stop_token stop;
  /// Store only: continue this stored run (interrupted or cancelled) instead
  /// of creating one; only the points it lacks are evaluated and appended.
  std::int64_t resume_run = 0;
  /// Estimated seconds of every point, in index order (the CLI passes its work
  /// budget's estimate): with more than one thread, the sweep's last points
  /// are taken longest first (sweep_detail::tail_order), so a long point at
  /// the end no longer runs alone. Empty (or another length): index order.
  std::vector<double> point_seconds;
  // Run metadata (store only).
  std::string run_name;             // empty: spec name
  std::string notes;
  std::vector<std::string> tags;
};

struct SweepSummary {
  std::int64_t run_id = 0;          // 0 without a store
  RunStatus status = RunStatus::Done;   // Done or Cancelled (Failed if a write failed; then it throws)
  SweepProgress progress;           // final figures
  int threads = 0;                  // threads actually used
};

/// Runs the sweep without a database: points go to sink.on_point.
SweepSummary run_sweep(const SweepSpec& spec, const SweepOptions& opts, const SweepSink& sink);

/// Creates a run in `store`, writes every point in index order in batched
/// transactions, and finishes the run as done or cancelled. The results and
/// their order do not depend on the thread count. If writing fails the run is
/// marked failed and the Error is rethrown.
SweepSummary run_sweep(Store& store, const SweepSpec& spec, const SweepOptions& opts,
                       const SweepSink& sink);

}  // namespace scin
