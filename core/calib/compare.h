// Model vs measured, row by row: what the app needs to overlay measured points
// on a simulated run's latency / bandwidth charts and to draw "model vs
// measured, error vs size".
//
//   Store s = Store::open(db, Access::ReadOnly);
//   auto rows = compare_runs(s, simulated_run_id, measured_run_id);
//   for (const auto& r : rows) plot(r.bytes, r.measured_us, r.model_us, r.error);
//
// The model of a measured row is the simulated run's *base* configuration
// (its preset plus base.set, as recorded in the store; sweep axes are not
// applied) with fabric.gpus set to the row's GPU count, on the run's engine
// (model_time_us in calib/validate.h: "nccl-auto" rows take the algorithm and
// protocol NCCL's tuning model picks, "ring-ll" etc. fix the protocol). Rows with fewer GPUs than the run's
// are compared at their own count; rows with more are skipped with the reason
// (they span NVLink domains the fabric does not join); filter on `gpus` to
// overlay only the simulated fabric's size. Nothing is fitted here.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "calib/fit.h"
#include "calib/measured.h"
#include "fabric/config.h"
#include "schedule/algorithms.h"

namespace scin {

class Store;
struct PointRecord;
struct RunInfo;

/// One measured row next to the model.
struct ModelComparison {
  std::uint64_t bytes = 0;          // message size per rank
  std::string algorithm;            // as measured ("ring", "nvls", "one-shot", "nccl-auto", ...)
  int gpus = 0;
  std::string system;               // the measured system / harness
  std::string source;               // FILE:LINE of the measurement
  Regime regime = Regime::Small;
  double measured_us = 0;
  double measured_busbw_GBps = 0;   // bytes / measured_us x 2(N-1)/N (nccl-tests busbw)
  bool modelled = false;            // false: `skipped` says why; model fields are NaN
  std::string skipped;
  std::string note;                 // when modelled as what NCCL runs instead (e.g. ring for nvls on 2 GPUs)
  double model_us = 0;
  double model_busbw_GBps = 0;      // bytes / model_us x 2(N-1)/N
  double error = 0;                 // model_us / measured_us - 1 (negative: the model is too fast)
};

/// Where bandwidth reaches half its peak (docs/model.md section 9, "Half bandwidth").
/// Model: the smallest message size at which `algorithm` on `cfg` (fabric.gpus =
/// `gpus`, analytic engine) reaches half the busbw it has at `peak_bytes`, scanned at
/// 2^(1/8) steps from 1 KiB and interpolated in log(size). NaN if it never does.
double model_half_peak_bytes(const Config& cfg, const std::string& algorithm, int gpus, DType dtype,
                             std::uint64_t peak_bytes);
/// Measured: the size where the rows' busbw (bytes / (measured_us - offset_us) x
/// 2(N-1)/N) first crosses half of its largest value, interpolated in log(size)
/// between the rows around the crossing. The rows should be one algorithm at one GPU
/// count; they are sorted by size here. NaN when no pair of rows brackets the crossing.
double measured_half_peak_bytes(std::vector<MeasuredRow> rows, double offset_us = 0);

/// Compares `cfg` with `rows` on `engine` ("analytic" or "packet"), in row order.
std::vector<ModelComparison> compare_with_model(const Config& cfg, const std::vector<MeasuredRow>& rows,
                                                const std::string& engine = "analytic");

/// The measured rows of stored points of kind measured (as `scin import` wrote
/// them); points of other kinds are ignored.
std::vector<MeasuredRow> measured_rows(const std::vector<PointRecord>& points);

/// The base configuration of a stored run (its recorded preset plus base.set).
/// Error if the run did not record its configuration. With `changed`: also the
/// parameters (registry paths, in registry order) whose value differs from the
/// recorded preset's, i.e. what the run changed (the app records every
/// parameter of its Fabric dock in base.set, so the count of entries says nothing).
Config run_base_config(const RunInfo& run, std::vector<std::string>* changed = nullptr);

/// The presets a stored run's points take: its sweep's `preset` axis values, each
/// once in axis order, or its base preset alone when no axis varies it.
std::vector<std::string> run_presets(const RunInfo& run);

/// A stored run's configuration at one of its presets (run_presets): that
/// recorded preset plus base.set, as the run's points start from before their
/// other axes. Error naming the run if it did not record that preset.
Config run_preset_config(const RunInfo& run, const std::string& preset);

/// compare_with_model(base config and engine of `simulated_run_id`, the
/// measured rows of `measured_run_id`). Error naming the run when the first is
/// not a collective timing run with a recorded configuration or the second is
/// not a measured run.
std::vector<ModelComparison> compare_runs(Store& store, std::int64_t simulated_run_id, std::int64_t measured_run_id);

/// The `calibration` object of a preset (a shipped or user preset's name, or a path to
/// its .json file); null when it records none or cannot be read.
nlohmann::json preset_calibration(const std::string& preset);

/// The harness offsets (us per measured system) the preset's calibration recorded, then
/// those the other shipped presets' calibrations recorded (a harness's fixed cost is the
/// harness's, whatever fabric it times), as `scin validate --preset P` applies them to the
/// rows of the same system or harness (harness_offset_for); empty when there are none.
std::map<std::string, double> preset_harness_offsets(const std::string& preset);

/// A stored measured run that matches a simulated run, with the model next to its rows.
struct MeasuredRunMatch {
  std::int64_t run_id = 0;
  std::string name;                          // the run's name (usually the imported file)
  std::vector<std::string> systems;          // the systems of the matching rows, sorted
  std::string preset;                        // the simulated run's preset the rows were matched to
  Config config;                             // the simulated run's configuration at that preset
  ValidationReport report;                   // validate_rows(config, the matching rows, offsets)
  std::map<std::string, double> offsets;     // the harness offsets its rows take (harness_offsets_used)
};

struct MeasuredRunMatches {
  std::string preset;                        // the simulated run's base preset
  Config config;                             // its base configuration
  /// The presets its points take (run_presets): more than one where its sweep varies
  /// the preset, and a measured run's rows are then compared with each preset their
  /// systems name (not with the base configuration, which no point of the run ran).
  std::vector<std::string> presets;
  std::vector<MeasuredRunMatch> runs;        // in the store's run order, then in preset order
};

/// The measured runs of `store` that match collective run `run_id` at each of its presets
/// (run_presets; one match per measured run and preset that any of its rows match, in run
/// order, then preset order, each compared with the run's configuration at that preset):
/// their measured points of that configuration's GPU count whose
/// system names (as a word, without case: names_product) the
/// run's accelerator, preset or configuration name, or, for an imported nccl-tests log
/// whose tables name devices that all do (a table without a device counts as the run's
/// system, as `scin validate` takes it), every point of that GPU count. Each match
/// carries what `scin validate --preset P` reports on its rows (analytic engine). Error
/// naming the run when it is no collective timing run or did not record its configuration.
MeasuredRunMatches match_measured_runs(Store& store, std::int64_t run_id);

}  // namespace scin
