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
//   - Opening never creates a file: only Access::Create does (`scin sweep --db NEW`,
//     the app's File > New). A mistyped path is an Error naming it.
//   - Self-describing runs (schema 3): a run records its fully resolved base
//     configuration (every registry parameter with value and unit, every preset
//     it used with a hash of the preset file, the tool version and git hash) in
//     RunInfo::config; runs written before schema 3 have a null config
//     ("configuration not recorded"). Each point records the values of its axes.
//   - Damage: SQLite reporting corruption (or open(..., check = true), `scin
//     check`) runs PRAGMA quick_check; a damaged file is opened read-only with
//     damage() set, and nothing writes to it (`scin recover` copies what is readable).
//   - Two writers (the CLI and the app) serialise on SQLite's lock: busy timeout
//     10 s, every write is one IMMEDIATE transaction (a batch of points is one).
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
constexpr int kSchemaVersion = 3;

// Unknown: the stored status text is none of the others (a damaged row; see RunInfo::problem).
enum class RunStatus { Running, Done, Cancelled, Interrupted, Failed, Unknown };
const char* to_string(RunStatus s);                 // "running", "done", ..., "unknown"
RunStatus parse_run_status(const std::string& s);   // throws Error

/// What a point measures; one result table per kind (columns: store/point_kinds.h).
/// Collective = timing. Measured = imported measurements (nccl-tests logs, ...).
enum class PointKind { Collective, Quant, Inference, Measured };
const char* to_string(PointKind k);                 // "collective" | "quant" | "inference" | "measured"
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

  // Imported measurement (kind Measured); also uses algorithm, bytes, gpus, busbw_GBps.
  std::string system;               // the machine measured, e.g. "dgx-h200-a"
  double measured_us = 0;
  std::string source;               // where the figure comes from (log file, paper)

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
  /// The resolved base configuration (schema 3): {"parameters": {path: {"value", "unit"}},
  /// "presets": {name: {"file", "file_fnv1a64", "config"}}, "tool_version", "git_revision",
  /// "preset"}. Null: configuration not recorded (a run from before schema 3).
  nlohmann::json config;
  int ranks = 1;                    // processes that evaluated the points
  /// Non-empty when the stored row is damaged (unknown status or kind): the
  /// reason. The run is listed, its points are not read; other runs are unaffected.
  std::string problem;
  bool config_recorded() const { return !config.is_null(); }
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
  int ranks = 1;
  nlohmann::json config;            // the resolved configuration (see RunInfo::config)
};

enum class Access {
  ReadWrite,   // must exist; Error if the file or its folder is read-only
  ReadOnly,    // must exist; never writes (no migration, no interrupted marking)
  Auto,        // must exist; ReadWrite if possible, else ReadOnly (check read_only());
               // a WAL file in a folder the user cannot write is read as immutable
  Create,      // ReadWrite, creating the file if missing (the only mode that creates)
};

class Store {
 public:
  /// Opens (or, for ReadWrite/Auto, creates) an experiment database. Throws
  /// scin::Error with the path for: not an SQLite file, an SQLite file that is
  /// not a SCIN database, a newer schema, a missing file (ReadOnly), a
  /// read-only file or folder (ReadWrite).
  /// With `check`, PRAGMA quick_check runs at open (O(file size)); it also runs
  /// whenever SQLite reports corruption. A damaged file opens read-only.
  static Store open(const std::filesystem::path& path, Access access = Access::ReadWrite, bool check = false);

  Store(Store&&) noexcept;
  Store& operator=(Store&&) noexcept;
  ~Store();

  const std::filesystem::path& path() const;
  bool read_only() const;
  int schema_version() const;
  /// Runs this open found dead and marked interrupted.
  const std::vector<std::int64_t>& recovered_runs() const;
  /// Empty when healthy; else quick_check's report (the file is then read-only).
  const std::string& damage() const;
  /// SQLite's PRAGMA data_version: changes when another connection (the CLI,
  /// another app) commits to the file. Poll it to notice external edits.
  std::int64_t data_version();
  /// PRAGMA quick_check: "ok" when healthy (sets damage() otherwise).
  std::string quick_check();

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
  /// Takes over an interrupted or cancelled run to resume it: marks it running,
  /// owned by this process. Error if it is running elsewhere, done or absent.
  RunInfo resume_run(std::int64_t run_id, int threads, int ranks = 1);
  /// Indices of the points a run has stored, ascending.
  std::vector<std::uint64_t> point_indices(std::int64_t run_id);
  /// Copies a run (metadata, tags, config, points) into this store as a new
  /// run; returns its id (`scin recover`).
  std::int64_t import_run(const RunInfo& run, const std::vector<PointRecord>& pts);

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
