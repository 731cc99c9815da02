// The experiment database schema and its forward migrations (store area internal).
//
// History:
//   v1  experiments, runs (tags as one comma-separated column), collective_points.
//   v2  run_tags table (v1 tags copied into it), writer liveness columns on runs
//       (host, pid, pid_start, threads), quant_points and inference_points.
//   v3  runs.config_json (the resolved configuration; NULL in older runs:
//       "configuration not recorded"), runs.ranks, measured_points.
// Tables of v1/v2 are frozen SQL; tables added later are generated from the
// column table (store/point_kinds.h); a test checks every table against it.
// Migrations only add tables, columns and rows; they never drop user data.
#pragma once

#include "store/sqlite_db.h"

namespace scin::store_schema {

/// PRAGMA application_id of a SCIN experiment database ('SCIN').
constexpr int kApplicationId = 0x5343494E;

/// Brings a database at `from` (0 = empty file) up to `to` in one IMMEDIATE
/// transaction, setting application_id and user_version. The version is
/// re-read under the lock, so concurrent openers migrate once.
void migrate(sql::Db& db, int from, int to);

}  // namespace scin::store_schema
