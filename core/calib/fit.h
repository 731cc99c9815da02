// Calibration and validation of a fabric Config against measured All-Reduce
// timings (core/calib/measured.h).
//
// The model of a row is `simulate(cfg with fabric.gpus = row.gpus, algorithm,
// bytes, dtype)` (analytic engine); "nccl-auto" rows take the faster of ring
// and NVLS, as NCCL's tuner would. Calibration fits registry parameters by
// robust (Huber) least squares on log-time with Levenberg-Marquardt and
// numerical derivatives in log-parameter space; a parameter the data cannot
// identify (near-zero sensitivity, or a Jacobian column that is a combination
// of the others) is refused with the reason and left at its preset value.
//
// Harness offsets: when two measurement harnesses (CSV `system`s) timed the
// same collective (same gpus, algorithm, bytes), a fabric can have only one
// time for it, so the difference belongs to the harness (Python loops, queued
// calls). The slower harness then gets an additive offset in microseconds,
// fitted with the parameters and reported, never written into the fabric.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "calib/measured.h"
#include "fabric/config.h"

namespace scin {

/// Message-size regimes of the issue-15 report.
enum class Regime { Small, Mid, Large };   // <= 64 KiB, 64 KiB - 64 MiB, >= 64 MiB
Regime regime_of(std::uint64_t bytes);
const char* to_string(Regime r);

/// The model's time for a row on `cfg` with `engine` ("analytic" | "packet"),
/// in microseconds; nullopt with `why` set when the row cannot be modelled
/// (unknown algorithm, unsupported fabric).
std::optional<double> model_time_us(const Config& cfg, const MeasuredRow& row, std::string* why = nullptr,
                                    const std::string& engine = "analytic");

struct RowError {
  MeasuredRow row;
  bool modelled = false;
  std::string why;           // when not modelled
  double model_us = 0;       // fabric model plus the harness offset of the row's system
  double offset_us = 0;      // harness offset included in model_us
  double error = 0;          // model / measured - 1
  Regime regime = Regime::Small;
};

struct ErrorStats {
  int rows = 0;
  double mape_pct = 0;       // mean |error| x 100
  double bias_pct = 0;       // mean error x 100 (negative: model too fast)
  double max_abs_pct = 0;
};

struct ValidationReport {
  std::vector<RowError> rows;
  ErrorStats overall;
  std::map<std::string, ErrorStats> by_regime;     // "small" | "mid" | "large"
  std::map<std::string, ErrorStats> by_algorithm;
  std::map<std::string, ErrorStats> by_system;
};

/// Errors of `cfg` on `rows`; `offsets_us` maps a system name to its harness offset.
ValidationReport validate_rows(const Config& cfg, const std::vector<MeasuredRow>& rows,
                               const std::map<std::string, double>& offsets_us = {});
ErrorStats error_stats(const std::vector<const RowError*>& rows);
/// Recomputes the overall, per-regime, per-algorithm and per-system statistics of `rep.rows`.
void summarise(ValidationReport& rep);

struct FitOptions {
  std::vector<std::string> params;          // registry paths; empty: default_fit_params()
  std::vector<std::string> offset_systems;  // substrings: systems that get a harness offset
  bool auto_offsets = true;                 // detect harnesses that timed the same collective
  double huber_delta = 0.05;                // in log-time (about 5%)
  int max_iterations = 30;
  double min_sensitivity = 1e-3;            // RMS d log(time) / d log(param)
  double min_independence = 0.02;           // sin of angle to the span of the other columns
};

struct FittedParam {
  std::string path;
  std::string unit;
  double before = 0;
  double value = 0;
  double ci_low = 0, ci_high = 0;           // 95% (log-normal, from the Huber-weighted covariance)
  double sensitivity = 0;
  bool fitted = false;
  std::string reason;                       // why it was refused
};

struct FitResult {
  Config cfg;                               // the preset with fitted values
  std::vector<FittedParam> params;          // fitted and refused, in option order
  std::map<std::string, double> offsets_us; // harness offsets per system
  std::map<std::string, std::pair<double, double>> offsets_ci_us;
  ValidationReport before, after;
  int iterations = 0;
  double cost = 0;                          // final Huber cost
  int rows_used = 0;
};

/// Parameters `scin calibrate` fits by default: those present in the registry
/// among the documented list (docs/model.md, "Calibration").
std::vector<std::string> default_fit_params();

/// Fits `opts.params` of `cfg` to `rows`. Throws Error when no row can be modelled.
FitResult fit(const Config& cfg, const std::vector<MeasuredRow>& rows, const FitOptions& opts);

nlohmann::json to_json(const ErrorStats& s);
nlohmann::json to_json(const ValidationReport& r, bool with_rows = true);

}  // namespace scin
