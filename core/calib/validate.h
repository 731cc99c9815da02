// Validation of a fabric Config against measured All-Reduce timings
// (core/calib/measured.h): the model time of a measured row and its error
// statistics by regime, algorithm and system. Fitting is in calib/fit.h.
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
/// (unknown algorithm, unsupported fabric). A row is modelled as what NCCL runs
/// for it: "nccl-auto" the algorithm and protocol NCCL's tuning model picks
/// (calib/nccl_tuning.h; NVLS only where NCCL runs it), "nccl-sym" (NCCL's symmetric kernels) the family of NCCL's pick (calib/nccl_sym.h),
/// and "nvls" below switch.nvls.nccl_min_gpus is ring, with `note` saying so.
std::optional<double> model_time_us(const Config& cfg, const MeasuredRow& row, std::string* why = nullptr,
                                    const std::string& engine = "analytic", std::string* note = nullptr);

struct RowError {
  MeasuredRow row;
  bool modelled = false;
  std::string why;           // when not modelled
  std::string note;          // when modelled as something other than the row's algorithm (what NCCL runs)
  double model_us = 0;       // fabric model plus the harness offset of the row's system
  double offset_us = 0;      // harness offset included in model_us
  double error = 0;          // model / measured - 1
  Regime regime = Regime::Small;
};

/// The collective's own time in a measured row: the measured time less the harness offset
/// its system takes (`offset_us`), i.e. what the fabric model alone is compared with. Equal to
/// `row.measured_us` for a row of a harness without a recorded fixed cost; may be <= 0 when the
/// offset exceeds the measurement (nothing to draw then).
inline double collective_us(const RowError& e) { return e.row.measured_us - e.offset_us; }

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

/// The harness of a system as measurement files name it: the text of its last brackets, in
/// lower case ("HGX H200 (stas00 all_reduce_bench)" -> "stas00 all_reduce_bench"); "" if none.
std::string harness_label(const std::string& system);

/// The harness offset of a row's `system`: its own entry in `offsets_us`, else that of a
/// system with the same harness label (a harness's fixed cost is the harness's, whatever GPUs
/// it times), else 0. `from` receives the entry's system name.
double harness_offset_for(const std::map<std::string, double>& offsets_us, const std::string& system,
                          std::string* from = nullptr);

/// The offsets of `offsets_us` that `rows` take (harness_offset_for), by the system they
/// were fitted to: what a report lists as applied.
std::map<std::string, double> harness_offsets_used(const std::vector<MeasuredRow>& rows,
                                                  const std::map<std::string, double>& offsets_us);

/// Errors of `cfg` on `rows`; `offsets_us` maps a system name to its harness offset
/// (harness_offset_for: a system of the same harness label takes it too).
ValidationReport validate_rows(const Config& cfg, const std::vector<MeasuredRow>& rows,
                               const std::map<std::string, double>& offsets_us = {});
ErrorStats error_stats(const std::vector<const RowError*>& rows);

/// `system` names the product `name` as a word of its own, without case: "HGX B200",
/// "DGX-B200", "dgx b200" and "8xB200" name B200, "GB200 NVL72" does not (nor does "GH200" name H200,
/// or "H1000" H100).
bool names_product(const std::string& system, const std::string& name);

/// `scin validate --preset auto`: the preset for a row among `presets` (name, Config):
/// of those whose accelerator the row's system names (names_product), the smallest
/// fabric that holds the row's GPUs, else the largest (ties: the first listed); -1
/// when the system names no preset's accelerator.
int preset_for_row(const std::vector<std::pair<std::string, Config>>& presets, const MeasuredRow& row);
/// Recomputes the overall, per-regime, per-algorithm and per-system statistics of `rep.rows`.
void summarise(ValidationReport& rep);

nlohmann::json to_json(const ErrorStats& s);
nlohmann::json to_json(const ValidationReport& r, bool with_rows = true);

}  // namespace scin
