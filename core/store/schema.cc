#include "store/schema.h"

#include <fmt/format.h>

#include "base/error.h"
#include "store/point_kinds.h"
#include "store/store.h"

namespace scin::store_schema {

namespace {

// Columns every point table shares.
#define SCIN_POINT_COMMON                                       \
  "run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE," \
  "idx INTEGER NOT NULL,"                                       \
  "status TEXT NOT NULL,"                                       \
  "message TEXT NOT NULL DEFAULT '',"                           \
  "axes_json TEXT NOT NULL,"                                    \
  "algorithm TEXT NOT NULL DEFAULT '',"                         \
  "variant TEXT NOT NULL DEFAULT '',"                           \
  "dtype TEXT NOT NULL DEFAULT '',"                             \
  "bytes INTEGER NOT NULL DEFAULT 0,"                           \
  "gpus INTEGER NOT NULL DEFAULT 0,"

const char* kV1 = R"sql(
CREATE TABLE experiments(
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  description TEXT NOT NULL DEFAULT '',
  created_at TEXT NOT NULL);
CREATE TABLE runs(
  id INTEGER PRIMARY KEY,
  experiment_id INTEGER NOT NULL REFERENCES experiments(id),
  name TEXT NOT NULL,
  notes TEXT NOT NULL DEFAULT '',
  tags TEXT NOT NULL DEFAULT '',
  kind TEXT NOT NULL,
  engine TEXT NOT NULL,
  spec_json TEXT NOT NULL,
  tool_version TEXT NOT NULL,
  git_revision TEXT NOT NULL,
  started_at TEXT NOT NULL,
  finished_at TEXT,
  status TEXT NOT NULL,
  points_total INTEGER NOT NULL DEFAULT 0);
CREATE TABLE collective_points()sql" SCIN_POINT_COMMON R"sql(
  engine TEXT NOT NULL DEFAULT '',
  time_us REAL, algbw_GBps REAL, busbw_GBps REAL, max_link_bytes REAL,
  launch_ns REAL, sync_ns REAL, link_latency_ns REAL, switch_latency_ns REAL,
  memory_latency_ns REAL, serialisation_ns REAL, reduction_ns REAL, quantisation_ns REAL,
  extra_json TEXT,
  PRIMARY KEY(run_id, idx)) WITHOUT ROWID;
)sql";

const char* kV2 = R"sql(
CREATE TABLE run_tags(
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  tag TEXT NOT NULL,
  PRIMARY KEY(run_id, tag)) WITHOUT ROWID;
ALTER TABLE runs ADD COLUMN threads INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN host TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN pid INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN pid_start TEXT NOT NULL DEFAULT '';
CREATE INDEX runs_by_experiment ON runs(experiment_id);
CREATE TABLE quant_points()sql" SCIN_POINT_COMMON R"sql(
  rel_l2 REAL, sqnr_dB REAL, max_abs REAL, payload_ratio REAL,
  error_variance_ratio REAL, max_link_bytes REAL,
  extra_json TEXT,
  PRIMARY KEY(run_id, idx)) WITHOUT ROWID;
CREATE TABLE inference_points()sql" SCIN_POINT_COMMON R"sql(
  engine TEXT NOT NULL DEFAULT '',
  ttft_us REAL, tpot_us REAL,
  extra_json TEXT,
  PRIMARY KEY(run_id, idx)) WITHOUT ROWID;
)sql";

#undef SCIN_POINT_COMMON

// v3: self-describing runs (the resolved configuration; NULL = not recorded),
// the number of ranks, and the point tables of kinds added since (generated
// from the column table in store/point_kinds.cc).
const char* kV3 = R"sql(
ALTER TABLE runs ADD COLUMN config_json TEXT;
ALTER TABLE runs ADD COLUMN ranks INTEGER NOT NULL DEFAULT 1;
)sql";

// v1 kept tags as "a,b,c" in runs.tags; v2 moves them to run_tags (the old
// column stays, unused, so nothing is dropped).
void copy_v1_tags(sql::Db& db) {
  sql::Stmt sel(db, "SELECT id, tags FROM runs WHERE tags <> ''");
  sql::Stmt ins(db, "INSERT OR IGNORE INTO run_tags(run_id, tag) VALUES(?, ?)");
  while (sel.step()) {
    std::int64_t id = sel.int64(0);
    std::string tags = sel.text(1);
    std::size_t start = 0;
    while (start <= tags.size()) {
      std::size_t comma = tags.find(',', start);
      if (comma == std::string::npos) comma = tags.size();
      std::string tag = tags.substr(start, comma - start);
      while (!tag.empty() && tag.front() == ' ') tag.erase(tag.begin());
      while (!tag.empty() && tag.back() == ' ') tag.pop_back();
      if (!tag.empty()) {
        ins.bind(1, id).bind(2, tag);
        ins.run();
        ins.reset();
      }
      start = comma + 1;
    }
  }
}

}  // namespace

void migrate(sql::Db& db, int from, int to) {
  if (to > kSchemaVersion || from > to)
    throw Error(fmt::format("{}: cannot migrate schema from version {} to {}", db.path(), from, to));
  // One IMMEDIATE transaction: concurrent first opens of the same file
  // serialise here, and the version is re-read under the lock, so only one
  // process migrates. A failure leaves the file at its old version.
  sql::Transaction tx(db);
  int cur = static_cast<int>(db.query_int("PRAGMA user_version"));
  if (cur >= to) return;   // someone else migrated meanwhile (rolled back: nothing written)
  for (int v = cur + 1; v <= to; ++v) {
    if (v == 1) {
      db.exec(kV1);
      db.exec(fmt::format("PRAGMA application_id = {}", kApplicationId));
    } else if (v == 2) {
      db.exec(kV2);
      copy_v1_tags(db);
    } else if (v == 3) {
      db.exec(kV3);
      for (const auto& k : point_kinds())
        if (k.since_schema == 3) db.exec(create_table_sql(k));
    }
  }
  db.exec(fmt::format("PRAGMA user_version = {}", to));
  tx.commit();
}

}  // namespace scin::store_schema
