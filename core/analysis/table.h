// The analysis table: a stored run (RunInfo + its PointRecords) as a typed
// table of columns, the one place that reads PointRecord and RunInfo fields
// for analysis (charts, exports, reports). Qt-free.
//
// Columns come in two roles:
//   - axis columns: every swept path of the run (PointRecord::axes), plus
//     `collective.algorithm` and `collective.bytes` (timing and quant runs)
//     even when the spec fixed them; a value is text and, when numeric, a number;
//   - metric columns: what the run's kind measured, each with its unit
//     (time_us in µs, busbw_GBps in GB/s, sqnr_dB in dB, ttft_us, ...), plus
//     derived ones (speedup over a baseline, communication share).
// Only points with status ok become rows; skipped/failed ones are counted.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "store/store.h"

namespace scin::analysis {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

enum class Role { Axis, Metric };

/// How a derived metric is computed from other rows (speedups).
enum class Derived {
  None,
  SpeedupTime,   // baseline time_us / time_us at the same other-axis values
  SpeedupTtft,   // baseline ttft_us / ttft_us
  SpeedupTpot,   // baseline tpot_us / tpot_us
};

struct Column {
  std::string key;          // "switch.isa.waves", "collective.bytes", "time_us", "speedup"
  std::string label;        // "Waves", "Message size per rank", "Latency"
  std::string short_name;   // for legend entries: "waves", "size", "regulation"
  std::string unit;         // "µs", "GB/s", "bytes", "dB", "×", "" (dimensionless)
  Role role = Role::Axis;
  bool numeric = true;      // every value of the column is a number
  bool log_default = false; // the natural scale (sizes, times: log)
  bool bytes = false;       // values are byte counts (shown as KiB/MiB/GiB)
  bool lower_is_better = false;
  Derived derived = Derived::None;
  std::string description;  // one line for tooltips and the report
};

/// One value of an axis column.
struct AxisValue {
  std::string text;         // as shown: "64 KiB", "paced", "4"
  double number = kNaN;     // NaN when not numeric
  bool operator==(const AxisValue& o) const { return text == o.text; }
};

struct Row {
  std::uint64_t point_index = 0;      // PointRecord::index
  std::vector<AxisValue> axes;        // one per AnalysisTable::axes
  std::vector<double> metrics;        // one per AnalysisTable::metrics; NaN when absent/derived
  std::int32_t note = -1;             // index into AnalysisTable::notes (the point's extra.note), -1: none
};

/// What the run was, for headers and reports (read from the stored run).
struct RunSummary {
  std::int64_t id = 0;
  std::string name, experiment, kind, status, engine;
  std::string tool_version, git_revision, started_at, finished_at;
  std::string description;            // spec's description
  std::string preset;                 // spec base.preset ("" = registry defaults)
  std::vector<std::string> set;       // base.set overrides, "path=value"
  std::vector<std::string> algorithms;  // distinct algorithms of the points
  std::vector<std::string> axes;      // "path: v1, v2, ..." for each swept axis
  std::vector<std::string> base;      // other base settings, "key=value"
  std::uint64_t points_total = 0, points_stored = 0, points_skipped = 0;
  bool spec_readable = true;          // the stored spec is a JSON object
  std::string config_json;            // the resolved configuration if the run stored one, else ""
  /// "key: value" lines (run, tool, spec) for CSV header blocks and reports.
  std::vector<std::pair<std::string, std::string>> lines() const;
};

RunSummary summarize_run(const RunInfo& run, const std::vector<PointRecord>& pts);

class AnalysisTable {
 public:
  RunSummary run;
  PointKind kind = PointKind::Collective;
  std::vector<Column> axes;       // collective.algorithm first, then swept axes in spec order
  std::vector<Column> metrics;    // only those with at least one finite value (or derivable)
  std::vector<Row> rows;          // points with status ok, in index order
  std::size_t skipped = 0;        // skipped + failed points
  std::vector<std::string> skip_reasons;  // distinct reasons (at most 5)
  /// Distinct notes the points carry about themselves (`extra.note`: e.g. an
  /// nvls point on 2 GPUs, timed as ring because NCCL runs ring there).
  std::vector<std::string> notes;

  /// Index of a column by key in axes / metrics, or -1.
  int axis_index(const std::string& key) const;
  int metric_index(const std::string& key) const;
  const Column* find(const std::string& key) const;
  /// Distinct values of an axis column in first-seen order (numbers sorted ascending);
  /// computed once by build_table (the GUI asks often).
  const std::vector<AxisValue>& distinct(int axis) const;
  /// Fills the cache distinct() reads (build_table calls it; call it after editing rows).
  void index_values();
  /// Axis columns with more than one distinct value.
  std::vector<int> varying_axes() const;
  bool empty() const { return rows.empty(); }

 private:
  std::vector<std::vector<AxisValue>> values_;   // distinct values per axis column
};

/// Builds the table of a stored run. Never throws for odd stored data (a spec
/// that is not an object, missing extra fields): those columns are left out.
AnalysisTable build_table(const RunInfo& run, const std::vector<PointRecord>& pts);

/// A value for display with its unit: "12.3 µs", "64 KiB", "0.0123", "35.2 dB".
std::string format_value(const Column& c, double v);
/// A short name for an axis path: "switch.isa.waves" -> "waves",
/// "collective.bytes" -> "size", "collective.algorithm" -> "algorithm".
std::string short_axis_name(const std::string& path);

}  // namespace scin::analysis
