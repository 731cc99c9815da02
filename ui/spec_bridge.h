// Translation between the UI's experiment (fabric + SweepRequest) and the
// store's sweep spec / point records. The spec a GUI run stores is an ordinary
// `scin sweep` spec: base.set holds every registry parameter of the fabric.
#pragma once

#include <cstdint>
#include <vector>

#include "store/store.h"
#include "sweep/sweep.h"
#include "ui/experiment.h"

namespace scin::ui {

/// The sweep spec of running `req` on `cfg`. Axes: the extra axes in order (a
/// zipped axis joins the one above it in a "zip" group; ranges stay ranges),
/// collective.algorithm, collective.bytes (fastest).
SweepSpec toSweepSpec(const Config& cfg, const SweepRequest& req, const std::string& name);

/// Recovers the fabric and the request from a stored spec (JSON as stored).
/// Returns false if the spec is not one this UI can show (it still opens).
bool fromSweepSpec(const nlohmann::json& spec, Config* cfg, SweepRequest* req);

SimResult toSimResult(const PointRecord& p);

/// Groups collective points into curves: one per algorithm and value of any
/// axis other than size and algorithm. `run_label` (if not empty) prefixes the
/// legend and becomes the curves' group; `overlay` marks them dashed.
ResultSet toResultSet(const std::vector<PointRecord>& pts, const QString& run_label = {},
                      bool overlay = false);

/// Appends streamed points to `rs` (same grouping as toResultSet).
void appendPoints(ResultSet& rs, const std::vector<PointRecord>& pts, const QString& run_label = {},
                  bool overlay = false);

}  // namespace scin::ui
