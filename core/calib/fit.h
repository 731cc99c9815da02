// Calibration of a fabric Config against measured All-Reduce timings
// (core/calib/measured.h); the errors it reports are calib/validate.h.
//
// The model of a row is `simulate(cfg with fabric.gpus = row.gpus, algorithm,
// bytes, dtype)` (analytic engine); "nccl-auto" rows take the algorithm and
// protocol NCCL's own tuning model picks (calib/nccl_tuning.h). Calibration fits registry parameters by
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

#include "calib/validate.h"
#include "fabric/config.h"

namespace scin {

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
  double sensitivity = 0;                   // at the preset's values
  double sensitivity_at_fit = 0;            // the same at the fitted values (fitted parameters)
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
  std::vector<std::string> notes;           // advice on what the rows could not identify
};

/// Parameters `scin calibrate` fits by default: those present in the registry
/// among the documented list (docs/model.md, "Calibration").
std::vector<std::string> default_fit_params();

/// Fits `opts.params` of `cfg` to `rows`. Throws Error when no row can be modelled.
FitResult fit(const Config& cfg, const std::vector<MeasuredRow>& rows, const FitOptions& opts);

}  // namespace scin
