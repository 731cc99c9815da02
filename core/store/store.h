// The experiment database: one SQLite file (extension .scindb) that keeps every
// sweep run, its full input spec, the tool version and every result point.
// It is the document the GUI opens and the file users hand to colleagues.
//
// Storage rules:
//   - WAL journal, foreign keys on, synchronous=FULL (a committed point is
//     durable), busy timeout 5 s so a reader and the single writer coexist.
//   - The schema carries a version (PRAGMA user_version) and an application id
//     ('SCIN'); older files are migrated forward on a read-write open; files
//     from a newer schema are refused with a clear Error. Migrations only add.
//   - Nothing stored is ever deleted except by delete_run().
//   - Liveness: a run being written records the writer's host, pid and process
//     start time. A read-write open marks every `running` run of this host whose
//     writer process is gone as `interrupted` (a read-only open reports it as
//     interrupted without writing). Runs written on another host are left alone.
//
// Threading: a Store is one SQLite connection; use it from one thread at a time.
// Open several Stores (one per thread) on the same file to read while writing.
#pragma once

#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engines/analytic/analytic.h"

struct sqlite3;

namespace scin {

/// The file extension of an experiment database, with the dot.
constexpr const char* kDbExtension = ".scindb";
/// The schema version this build writes (see core/store/schema.cc for the history).
constexpr int kSchemaVersion = 2;

enum class RunStatus { Running, Done, Cancelled, Interrupted, Failed };
const char* to_string(RunStatus s);                 // "running", "done", ...
RunStatus parse_run_status(const std::string& s);   // throws Error

/// What a sweep point measures; one result table per kind.
enum class PointKind { Collective, Quant, Inference };
const char* to_string(PointKind k);                 // "collective" | "quant" | "inference"
PointKind parse_point_kind(const std::string& s);   // throws Error naming "kind"

enum class PointStatus { Ok, Skipped, Failed };
const char* to_string(PointStatus s);               // "ok" | "skipped" | "failed"

/// One result point, as the runner produces it and as the store reads it back.
/// Fields that do not apply to the point's kind keep their defaults.
struct PointRecord {
  std::uint64_t index = 0;          // position in the sweep's point list (0-based)
  PointKind kind = PointKind::Collective;
  PointStatus status = PointStatus::Ok;
  std::string message;              // skipped/failed: the reason
  nlohmann::json axes = nlohmann::json::object();  // {"collective.bytes": 1024, "links.latency_ns": 100}

  // Common to every kind.
  std::string algorithm;
  std::string variant;              // e.g. the ring protocol picked ("LL")
  std::string dtype;                // "bf16" | "fp16" | "fp32"
  std::uint64_t bytes = 0;          // message size per rank
  int gpus = 0;

  // Collective timing (kind Collective).
  std::string engine;               // "analytic" | "packet"
  double time_us = 0;
  double algbw_GBps = 0;
  double busbw_GBps = 0;
  double max_link_bytes = 0;
  Breakdown breakdown;              // ns per term, sums to time_us * 1e3

  // Quantisation error (kind Quant).
  double rel_l2 = 0;
  double sqnr_dB = 0;
  double max_abs = 0;
  double payload_ratio = 0;
  double error_variance_ratio = 0;

  // Inference (kind Inference).
  double ttft_us = 0;
  double tpot_us = 0;

  /// Everything else the producing area reports (engine statistics, full
  /// quant/inference results). Stored as JSON text.
  nlohmann::json extra;
};

/// A run's metadata (one row of `runs`).
struct RunInfo {
  std::int64_t id = 0;
  std::string experiment;           // the experiment (study) the run belongs to
  std::string name;
  std::string notes;
  std::vector<std::string> tags;    // sorted
  PointKind kind = PointKind::Collective;
  std::string engine;
  nlohmann::json spec;              // the full sweep spec, as run
  std::string tool_version;         // scin::version()
  std::string git_revision;         // scin::git_revision()
  std::string started_at;           // ISO 8601 UTC, "2026-11-30T01:02:03Z"
  std::string finished_at;          // empty while running
  RunStatus status = RunStatus::Running;
  std::uint64_t points_total = 0;   // points the spec expands to
  std::uint64_t points_stored = 0;  // points committed so far
  std::uint64_t points_skipped = 0; // of those, skipped or failed
  int threads = 0;                  // worker threads used
  std::string host;                 // writer's host name
  std::int64_t pid = 0;             // writer's process id
};

/// What begin_run needs; the store fills in times, version and owner.
struct RunStart {
  std::string experiment;           // created on first use
  std::string name;
  std::string notes;
  std::vector<std::string> tags;
  PointKind kind = PointKind::Collective;
  std::string engine = "analytic";
  nlohmann::json spec;
  std::uint64_t points_total = 0;
  int threads = 0;
};

enum class Access {
  ReadWrite,   // create if missing; Error if the file or its folder is read-only
  ReadOnly,    // must exist; never writes (no migration, no interrupted marking)
  Auto,        // ReadWrite if possible (creating a missing file), else ReadOnly (check read_only());
               // a WAL file in a folder the user cannot write is read as immutable
};

class Store {
 public:
  /// Opens (or, for ReadWrite/Auto, creates) an experiment database. Throws
  /// scin::Error with the path for: not an SQLite file, an SQLite file that is
  /// not a SCIN database, a newer schema, a missing file (ReadOnly), a
  /// read-only file or folder (ReadWrite).
  static Store open(const std::filesystem::path& path, Access access = Access::ReadWrite);

  Store(Store&&) noexcept;
  Store& operator=(Store&&) noexcept;
  ~Store();

  const std::filesystem::path& path() const;
  bool read_only() const;
  int schema_version() const;
  /// Runs this open found dead and marked interrupted.
  const std::vector<std::int64_t>& recovered_runs() const;

  // --- browsing ---------------------------------------------------------
  std::vector<RunInfo> list_runs();                 // newest last (by id)
  RunInfo get_run(std::int64_t run_id);             // Error if absent
  std::optional<RunInfo> find_run(std::int64_t run_id);
  std::vector<std::string> list_experiments();
  /// Points of a run in index order (all kinds of that run).
  std::vector<PointRecord> points(std::int64_t run_id);
  /// Points with index in [first, first+count).
  std::vector<PointRecord> points(std::int64_t run_id, std::uint64_t first, std::uint64_t count);
  std::uint64_t point_count(std::int64_t run_id);

  // --- editing (Error if read-only or the run is absent) -------------------
  void rename_run(std::int64_t run_id, const std::string& name);
  void set_notes(std::int64_t run_id, const std::string& notes);
  void set_tags(std::int64_t run_id, const std::vector<std::string>& tags);
  void add_tag(std::int64_t run_id, const std::string& tag);
  void remove_tag(std::int64_t run_id, const std::string& tag);
  /// Deletes the run and its points (the only way anything is deleted).
  void delete_run(std::int64_t run_id);

  // --- writing (the sweep runner uses these; one writer at a time) --------
  /// Inserts a `running` run owned by this process; returns its id.
  std::int64_t begin_run(const RunStart& start);
  /// Writes points in one transaction (prepared statements).
  void append_points(std::int64_t run_id, const std::vector<PointRecord>& pts);
  /// Sets status (done / cancelled / failed / interrupted) and finished_at.
  void finish_run(std::int64_t run_id, RunStatus status);

  /// PRAGMA integrity_check: "ok" when healthy.
  std::string integrity_check();

  /// The raw connection (tests and benchmarks only).
  ::sqlite3* raw();

 private:
  struct Impl;
  explicit Store(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

/// Column names of a CSV export, in order (axes columns come first, one per axis path).
std::vector<std::string> export_columns(const RunInfo& run, const std::vector<PointRecord>& pts);
/// Writes the points as CSV (header + one line per point) / as JSON
/// ({"run": {...}, "points": [...]}).
/// With `header` false only the rows are written (to export a big run in chunks).
void export_csv(const RunInfo& run, const std::vector<PointRecord>& pts, std::ostream& out, bool header = true);
nlohmann::json export_json(const RunInfo& run, const std::vector<PointRecord>& pts);

nlohmann::json to_json(const RunInfo& r);
nlohmann::json to_json(const PointRecord& p);

/// Column name of a breakdown term in the database and exports: "launch_ns", "sync_ns", ...
const char* breakdown_column(Term t);

}  // namespace scin
