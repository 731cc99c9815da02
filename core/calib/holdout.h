// Held-out error of the calibration: leave-one-group-out cross-validation
// within a set of measured rows (`scin validate --holdout system`).
//
// For each group G (the rows' `system`: one harness on one machine), fit
// `start` to every row not in G with the given FitOptions, then evaluate the
// fitted configuration on G's rows, which the fold never saw. "Before" is
// `start` itself on the same rows. A harness offset is a property of a
// harness learnt from its own rows, so a held-out harness gets none: its rows
// are predicted by the fabric model alone.
//
// This is cross-validation within one reference set (same sources, often the
// same machine), not validation on independent measurements.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "calib/fit.h"

namespace scin {

/// `cfg` with every parameter its calibration provenance lists set back to
/// its value before the fit (`calibration.parameters[].before`, as `scin
/// calibrate --out` writes it). `calibration` null or without parameters:
/// `cfg` unchanged. Error naming the path when a listed parameter is unknown.
Config uncalibrated_config(const Config& cfg, const nlohmann::json& calibration);

struct HoldoutFold {
  std::string held_out;                 // the group left out
  int train_rows = 0;                   // rows the fold was fitted on (modelled ones)
  std::vector<FittedParam> params;      // the fold's fit (fitted and refused)
  std::map<std::string, double> offsets_us;  // harness offsets of the training rows
  ValidationReport before, after;       // on the held-out rows: `start` / the fold's fit
  std::string error;                    // non-empty: the fold could not be fitted (why)
};

struct HoldoutReport {
  std::vector<HoldoutFold> folds;       // one per group, in order of first appearance
  ValidationReport before, after;       // every held-out row of every fitted fold, pooled
};

/// Leave-one-system-out cross-validation of fit(start, ., opts) on `rows`.
/// Needs at least two systems (Error otherwise).
HoldoutReport leave_one_system_out(const Config& start, const std::vector<MeasuredRow>& rows, const FitOptions& opts);

nlohmann::json to_json(const HoldoutReport& r);

}  // namespace scin
