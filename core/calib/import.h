// Measured files into the experiment database: `scin import` and the app's
// File > Import measurements share this. A measured run is kind "measured",
// engine "measured", one point per row (calib/compare.h's measured_rows reads
// them back), and its spec records the file: name, format, SHA-256, the
// nccl-tests tables' ranks, processes, device, NCCL version and environment,
// and the log lines that were skipped as no row.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "calib/measured.h"

namespace scin {

class Store;
struct PointRecord;

struct MeasuredRunMeta {
  std::string experiment = "measured";
  std::string name;                 // empty: the file's name
  std::string notes;
  std::vector<std::string> tags;
};

/// The rows of a measured file as store points (kind measured).
std::vector<PointRecord> measured_points(const MeasuredFile& m);

/// Stores `m` as one finished measured run; returns its id.
std::int64_t import_measured(Store& store, const MeasuredFile& m, const MeasuredRunMeta& meta = {});

}  // namespace scin
