#include "store/store.h"

#include <signal.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <ctime>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "base/error.h"
#include "base/version.h"
#include "store/schema.h"
#include "store/sqlite_db.h"
#include "store/store_internal.h"

namespace scin {

// ---------------------------------------------------------------- enums

const char* to_string(RunStatus s) {
  switch (s) {
    case RunStatus::Running: return "running";
    case RunStatus::Done: return "done";
    case RunStatus::Cancelled: return "cancelled";
    case RunStatus::Interrupted: return "interrupted";
    case RunStatus::Failed: return "failed";
  }
  return "?";
}

RunStatus parse_run_status(const std::string& s) {
  for (RunStatus r : {RunStatus::Running, RunStatus::Done, RunStatus::Cancelled, RunStatus::Interrupted,
                      RunStatus::Failed})
    if (s == to_string(r)) return r;
  throw Error(fmt::format("status: unknown run status '{}'; allowed running, done, cancelled, "
                          "interrupted, failed", s));
}

const char* to_string(PointKind k) {
  switch (k) {
    case PointKind::Collective: return "collective";
    case PointKind::Quant: return "quant";
    case PointKind::Inference: return "inference";
  }
  return "?";
}

PointKind parse_point_kind(const std::string& s) {
  for (PointKind k : {PointKind::Collective, PointKind::Quant, PointKind::Inference})
    if (s == to_string(k)) return k;
  throw Error(fmt::format("kind: unknown point kind '{}'; allowed collective, quant, inference", s));
}

const char* to_string(PointStatus s) {
  switch (s) {
    case PointStatus::Ok: return "ok";
    case PointStatus::Skipped: return "skipped";
    case PointStatus::Failed: return "failed";
  }
  return "?";
}

static PointStatus parse_point_status(const std::string& s) {
  if (s == "skipped") return PointStatus::Skipped;
  if (s == "failed") return PointStatus::Failed;
  return PointStatus::Ok;
}

const char* breakdown_column(Term t) {
  switch (t) {
    case Term::Launch: return "launch_ns";
    case Term::Sync: return "sync_ns";
    case Term::LinkLatency: return "link_latency_ns";
    case Term::SwitchLatency: return "switch_latency_ns";
    case Term::MemoryLatency: return "memory_latency_ns";
    case Term::Serialisation: return "serialisation_ns";
    case Term::Reduction: return "reduction_ns";
    case Term::Quantisation: return "quantisation_ns";
    case Term::Count: break;
  }
  return "?";
}

// ---------------------------------------------------------------- helpers

namespace store_detail {

std::string now_iso() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string host_name() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "localhost";
  return buf;
}

namespace {
// Fields of /proc/<pid>/stat after the command name: state is field 3, starttime field 22.
bool read_proc_stat(std::int64_t pid, char& state, std::string& start) {
  std::ifstream f(fmt::format("/proc/{}/stat", pid));
  if (!f) return false;
  std::string line;
  std::getline(f, line);
  auto close = line.rfind(')');
  if (close == std::string::npos) return false;
  std::istringstream rest(line.substr(close + 1));
  std::string field;
  rest >> state;
  // Fields 4..21 then 22 = starttime.
  for (int i = 4; i <= 22 && rest >> field; ++i)
    if (i == 22) start = field;
  return true;
}
}  // namespace

std::string process_start_token(std::int64_t pid) {
  char state = 0;
  std::string start;
  if (!read_proc_stat(pid, state, start)) return {};
  return start;
}

bool owner_gone(const std::string& host, std::int64_t pid, const std::string& start_token) {
  if (host.empty() || pid <= 0) return true;   // written before v2: no owner recorded
  if (host != host_name()) return false;       // another machine: cannot tell
  if (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) return true;
  char state = 0;
  std::string start;
  if (!read_proc_stat(pid, state, start)) return false;   // no /proc: trust kill()
  if (state == 'Z' || state == 'X') return true;          // killed, not yet reaped
  if (!start_token.empty() && start != start_token) return true;   // pid reused
  return false;
}

}  // namespace store_detail

using namespace store_detail;

// ---------------------------------------------------------------- Impl

struct Store::Impl {
  sql::Db db;
  std::filesystem::path path;
  bool read_only = false;
  int version = 0;
  std::vector<std::int64_t> recovered;
  // Insert statements, prepared on first use.
  std::unique_ptr<sql::Stmt> ins[3];

  void require_writable() const {
    if (read_only)
      throw Error(fmt::format("{}: opened read-only; cannot modify it", path.string()));
  }
};

namespace {

bool has_write_bits(const std::filesystem::path& p) {
  struct stat st{};
  if (::stat(p.c_str(), &st) != 0) return false;
  return (st.st_mode & (S_IWUSR | S_IWGRP | S_IWOTH)) != 0 && ::access(p.c_str(), W_OK) == 0;
}

void check_sqlite_header(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  if (!f) throw Error(fmt::format("{}: cannot read the file", p.string()));
  char head[16] = {};
  f.read(head, 16);
  static const char kMagic[16] = {'S', 'Q', 'L', 'i', 't', 'e', ' ', 'f', 'o', 'r', 'm', 'a', 't', ' ', '3', '\0'};
  if (f.gcount() != 16 || !std::equal(head, head + 16, kMagic))
    throw Error(fmt::format("{}: not a SCIN experiment database (not an SQLite file)", p.string()));
}

// "file:/path?immutable=1" with the path percent-encoded.
std::string immutable_uri(const std::filesystem::path& p) {
  std::string out = "file:";
  for (unsigned char c : p.string()) {
    if (std::isalnum(c) || c == '/' || c == '-' || c == '_' || c == '.' || c == '~') out += static_cast<char>(c);
    else out += fmt::format("%{:02X}", c);
  }
  return out + "?immutable=1";
}

// Switching a new file to WAL needs an exclusive lock, and SQLite does not run
// the busy handler for it: retry for up to 10 s while another process creates
// the same file.
std::string switch_to_wal(sql::Db& db) {
  for (int attempt = 0;; ++attempt) {
    sqlite3_stmt* st = nullptr;
    int rc = sqlite3_prepare_v2(db.raw(), "PRAGMA journal_mode = WAL", -1, &st, nullptr);
    std::string mode;
    if (rc == SQLITE_OK) {
      rc = sqlite3_step(st);
      if (rc == SQLITE_ROW) {
        const unsigned char* t = sqlite3_column_text(st, 0);
        mode = t ? reinterpret_cast<const char*>(t) : "";
      }
    }
    sqlite3_finalize(st);
    if (rc == SQLITE_ROW) return mode;
    const int base = rc & 0xff;
    if ((base == SQLITE_BUSY || base == SQLITE_LOCKED) && attempt < 2000) {
      ::usleep(5000);
      continue;
    }
    db.fail(rc, "'PRAGMA journal_mode = WAL'");
  }
}

const char* kRunSelect =
    "SELECT r.id, e.name, r.name, r.notes, r.kind, r.engine, r.spec_json, r.tool_version, "
    "r.git_revision, r.started_at, r.finished_at, r.status, r.points_total, r.threads, r.host, "
    "r.pid, r.pid_start, "
    "(SELECT COUNT(*) FROM collective_points p WHERE p.run_id = r.id) + "
    "(SELECT COUNT(*) FROM quant_points p WHERE p.run_id = r.id) + "
    "(SELECT COUNT(*) FROM inference_points p WHERE p.run_id = r.id), "
    "(SELECT COUNT(*) FROM collective_points p WHERE p.run_id = r.id AND p.status <> 'ok') + "
    "(SELECT COUNT(*) FROM quant_points p WHERE p.run_id = r.id AND p.status <> 'ok') + "
    "(SELECT COUNT(*) FROM inference_points p WHERE p.run_id = r.id AND p.status <> 'ok') "
    "FROM runs r JOIN experiments e ON e.id = r.experiment_id ";

RunInfo read_run(sql::Db& db, sql::Stmt& st) {
  RunInfo r;
  r.id = st.int64(0);
  r.experiment = st.text(1);
  r.name = st.text(2);
  r.notes = st.text(3);
  r.kind = parse_point_kind(st.text(4));
  r.engine = st.text(5);
  r.spec = nlohmann::json::parse(st.text(6), nullptr, false);
  if (r.spec.is_discarded()) r.spec = nlohmann::json();
  r.tool_version = st.text(7);
  r.git_revision = st.text(8);
  r.started_at = st.text(9);
  r.finished_at = st.text(10);
  r.status = parse_run_status(st.text(11));
  r.points_total = static_cast<std::uint64_t>(st.int64(12));
  r.threads = static_cast<int>(st.int64(13));
  r.host = st.text(14);
  r.pid = st.int64(15);
  std::string pid_start = st.text(16);
  r.points_stored = static_cast<std::uint64_t>(st.int64(17));
  r.points_skipped = static_cast<std::uint64_t>(st.int64(18));
  // A read-only open cannot mark a dead writer's run; report it as it is.
  if (r.status == RunStatus::Running && owner_gone(r.host, r.pid, pid_start))
    r.status = RunStatus::Interrupted;
  sql::Stmt tags(db, "SELECT tag FROM run_tags WHERE run_id = ? ORDER BY tag");
  tags.bind(1, r.id);
  while (tags.step()) r.tags.push_back(tags.text(0));
  return r;
}

const char* point_table(PointKind k) {
  switch (k) {
    case PointKind::Collective: return "collective_points";
    case PointKind::Quant: return "quant_points";
    case PointKind::Inference: return "inference_points";
  }
  return "collective_points";
}

constexpr const char* kCommonCols = "idx, status, message, axes_json, algorithm, variant, dtype, bytes, gpus";

std::string kind_columns(PointKind k) {
  switch (k) {
    case PointKind::Collective: {
      std::string s = "engine, time_us, algbw_GBps, busbw_GBps, max_link_bytes";
      for (int t = 0; t < static_cast<int>(Term::Count); ++t)
        s += fmt::format(", {}", breakdown_column(static_cast<Term>(t)));
      return s + ", extra_json";
    }
    case PointKind::Quant:
      return "rel_l2, sqnr_dB, max_abs, payload_ratio, error_variance_ratio, max_link_bytes, extra_json";
    case PointKind::Inference: return "engine, ttft_us, tpot_us, extra_json";
  }
  return "";
}

int column_count(const std::string& cols) { return static_cast<int>(std::count(cols.begin(), cols.end(), ',')) + 1; }

// Text is bound without copying: `scratch` keeps the JSON texts alive until the step.
void bind_point(sql::Stmt& st, std::int64_t run_id, const PointRecord& p, std::string (&scratch)[2]) {
  int i = 1;
  st.bind(i++, run_id);
  st.bind(i++, p.index);
  st.bind_static(i++, to_string(p.status));
  st.bind_static(i++, p.message);
  scratch[0] = p.axes.is_null() ? std::string("{}") : p.axes.dump();
  st.bind_static(i++, scratch[0]);
  st.bind_static(i++, p.algorithm);
  st.bind_static(i++, p.variant);
  st.bind_static(i++, p.dtype);
  st.bind(i++, p.bytes);
  st.bind(i++, p.gpus);
  switch (p.kind) {
    case PointKind::Collective:
      st.bind_static(i++, p.engine);
      st.bind(i++, p.time_us);
      st.bind(i++, p.algbw_GBps);
      st.bind(i++, p.busbw_GBps);
      st.bind(i++, p.max_link_bytes);
      for (int t = 0; t < static_cast<int>(Term::Count); ++t) st.bind(i++, p.breakdown.ns[t]);
      break;
    case PointKind::Quant:
      st.bind(i++, p.rel_l2);
      st.bind(i++, p.sqnr_dB);
      st.bind(i++, p.max_abs);
      st.bind(i++, p.payload_ratio);
      st.bind(i++, p.error_variance_ratio);
      st.bind(i++, p.max_link_bytes);
      break;
    case PointKind::Inference:
      st.bind_static(i++, p.engine);
      st.bind(i++, p.ttft_us);
      st.bind(i++, p.tpot_us);
      break;
  }
  if (p.extra.is_null()) {
    st.bind_null(i++);
  } else {
    scratch[1] = p.extra.dump();
    st.bind_static(i++, scratch[1]);
  }
}

PointRecord read_point(sql::Stmt& st, PointKind kind) {
  PointRecord p;
  p.kind = kind;
  int i = 0;
  p.index = static_cast<std::uint64_t>(st.int64(i++));
  p.status = parse_point_status(st.text(i++));
  p.message = st.text(i++);
  p.axes = nlohmann::json::parse(st.text(i++), nullptr, false);
  if (p.axes.is_discarded()) p.axes = nlohmann::json::object();
  p.algorithm = st.text(i++);
  p.variant = st.text(i++);
  p.dtype = st.text(i++);
  p.bytes = static_cast<std::uint64_t>(st.int64(i++));
  p.gpus = static_cast<int>(st.int64(i++));
  switch (kind) {
    case PointKind::Collective:
      p.engine = st.text(i++);
      p.time_us = st.real(i++);
      p.algbw_GBps = st.real(i++);
      p.busbw_GBps = st.real(i++);
      p.max_link_bytes = st.real(i++);
      for (int t = 0; t < static_cast<int>(Term::Count); ++t) p.breakdown.ns[t] = st.real(i++);
      break;
    case PointKind::Quant:
      p.rel_l2 = st.real(i++);
      p.sqnr_dB = st.real(i++);
      p.max_abs = st.real(i++);
      p.payload_ratio = st.real(i++);
      p.error_variance_ratio = st.real(i++);
      p.max_link_bytes = st.real(i++);
      break;
    case PointKind::Inference:
      p.engine = st.text(i++);
      p.ttft_us = st.real(i++);
      p.tpot_us = st.real(i++);
      break;
  }
  if (!st.is_null(i)) {
    p.extra = nlohmann::json::parse(st.text(i), nullptr, false);
    if (p.extra.is_discarded()) p.extra = nlohmann::json();
  }
  return p;
}

}  // namespace

// ---------------------------------------------------------------- open

Store::Store(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Store::Store(Store&&) noexcept = default;
Store& Store::operator=(Store&&) noexcept = default;
Store::~Store() = default;

Store Store::open(const std::filesystem::path& path, Access access) {
  namespace fs = std::filesystem;
  auto impl = std::make_unique<Impl>();
  impl->path = path;
  const std::string p = path.string();
  std::error_code ec;
  bool exists = fs::exists(path, ec);
  if (exists && fs::is_directory(path, ec))
    throw Error(fmt::format("{}: is a folder, not an experiment database", p));
  fs::path dir = path.parent_path().empty() ? fs::path(".") : path.parent_path();

  bool writable;
  if (exists) {
    writable = has_write_bits(path) && ::access(dir.c_str(), W_OK) == 0;
  } else {
    if (access == Access::ReadOnly)
      throw Error(fmt::format("{}: no such experiment database", p));
    if (!fs::is_directory(dir, ec))
      throw Error(fmt::format("{}: folder '{}' does not exist", p, dir.string()));
    writable = ::access(dir.c_str(), W_OK) == 0;
    if (!writable) throw Error(fmt::format("{}: cannot create it: folder '{}' is read-only", p, dir.string()));
  }
  if (access == Access::ReadWrite && !writable)
    throw Error(fmt::format("{}: the file (or its folder) is read-only; open it read-only to browse it", p));
  impl->read_only = access == Access::ReadOnly || !writable;

  std::uintmax_t size = exists ? fs::file_size(path, ec) : 0;
  if (exists && size > 0) check_sqlite_header(path);
  if (impl->read_only && size == 0)
    throw Error(fmt::format("{}: empty file, not a SCIN experiment database", p));

  int flags = impl->read_only ? SQLITE_OPEN_READONLY : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  std::int64_t app_id = 0, tables = 0;
  int version = 0;
  auto connect = [&](const std::string& name, int extra) {
    impl->db = sql::Db(name, flags | extra | SQLITE_OPEN_NOMUTEX);
    sqlite3_busy_timeout(impl->db.raw(), 5000);
    impl->db.exec("PRAGMA foreign_keys = ON");
    // One statement: a consistent snapshot even while another process creates the file.
    sql::Stmt st(impl->db, "SELECT (SELECT application_id FROM pragma_application_id()), "
                           "(SELECT user_version FROM pragma_user_version()), (SELECT COUNT(*) FROM sqlite_master)");
    if (st.step()) {
      app_id = st.int64(0);
      version = static_cast<int>(st.int64(1));
      tables = st.int64(2);
    }
  };
  try {
    connect(p, 0);
  } catch (const Error&) {
    if (!impl->read_only) throw;
    // A WAL file in a folder we cannot write (no -shm can be created): read it
    // as immutable (no locking; if its owner writes it meanwhile we may read a
    // stale snapshot, never a corrupt file on disk).
    connect(immutable_uri(fs::absolute(path)), SQLITE_OPEN_URI);
  }
  sql::Db& db = impl->db;
  if (app_id != store_schema::kApplicationId) {
    bool empty = app_id == 0 && version == 0 && tables == 0;
    if (!empty || impl->read_only)
      throw Error(fmt::format("{}: an SQLite file, but not a SCIN experiment database", p));
  }
  if (version > kSchemaVersion)
    throw Error(fmt::format("{}: written by a newer scin (schema version {}; this scin {} reads up to {}); "
                            "upgrade scin to open it", p, version, scin::version(), kSchemaVersion));
  if (!impl->read_only) {
    std::string mode = switch_to_wal(db);
    if (mode != "wal") throw Error(fmt::format("{}: cannot switch to WAL journal (got '{}')", p, mode));
    db.exec("PRAGMA synchronous = FULL");
    db.exec("PRAGMA cache_size = -32768");   // 32 MiB page cache for big runs
    if (version < kSchemaVersion) {
      store_schema::migrate(db, version, kSchemaVersion);
      version = static_cast<int>(db.query_int("PRAGMA user_version"));
    }
    // Runs whose writer process died: mark them interrupted.
    sql::Stmt st(db, "SELECT id, host, pid, pid_start FROM runs WHERE status = 'running'");
    std::vector<std::int64_t> dead;
    while (st.step())
      if (owner_gone(st.text(1), st.int64(2), st.text(3))) dead.push_back(st.int64(0));
    if (!dead.empty()) {
      sql::Transaction tx(db);
      sql::Stmt up(db, "UPDATE runs SET status = 'interrupted' WHERE id = ? AND status = 'running'");
      for (auto id : dead) {
        up.bind(1, id);
        up.run();
        up.reset();
      }
      tx.commit();
      impl->recovered = dead;
    }
  } else if (version < kSchemaVersion) {
    throw Error(fmt::format("{}: schema version {} is older than this scin's ({}); open it once "
                            "read-write to upgrade it", p, version, kSchemaVersion));
  }
  impl->version = version;
  return Store(std::move(impl));
}

const std::filesystem::path& Store::path() const { return impl_->path; }
bool Store::read_only() const { return impl_->read_only; }
int Store::schema_version() const { return impl_->version; }
const std::vector<std::int64_t>& Store::recovered_runs() const { return impl_->recovered; }
::sqlite3* Store::raw() { return impl_->db.raw(); }

std::string Store::integrity_check() { return impl_->db.query_text("PRAGMA integrity_check"); }

// ---------------------------------------------------------------- browsing

std::vector<RunInfo> Store::list_runs() {
  sql::Stmt st(impl_->db, std::string(kRunSelect) + "ORDER BY r.id");
  std::vector<RunInfo> out;
  while (st.step()) out.push_back(read_run(impl_->db, st));
  return out;
}

std::optional<RunInfo> Store::find_run(std::int64_t run_id) {
  sql::Stmt st(impl_->db, std::string(kRunSelect) + "WHERE r.id = ?");
  st.bind(1, run_id);
  if (!st.step()) return std::nullopt;
  return read_run(impl_->db, st);
}

RunInfo Store::get_run(std::int64_t run_id) {
  auto r = find_run(run_id);
  if (!r) throw Error(fmt::format("--run: no run {} in {} (see `scin runs --db {}`)", run_id,
                                  impl_->path.string(), impl_->path.string()));
  return *r;
}

std::vector<std::string> Store::list_experiments() {
  sql::Stmt st(impl_->db, "SELECT name FROM experiments ORDER BY id");
  std::vector<std::string> out;
  while (st.step()) out.push_back(st.text(0));
  return out;
}

static PointKind run_kind(sql::Db& db, std::int64_t run_id, const std::filesystem::path& path) {
  sql::Stmt st(db, "SELECT kind FROM runs WHERE id = ?");
  st.bind(1, run_id);
  if (!st.step()) throw Error(fmt::format("--run: no run {} in {}", run_id, path.string()));
  return parse_point_kind(st.text(0));
}

std::vector<PointRecord> Store::points(std::int64_t run_id, std::uint64_t first, std::uint64_t count) {
  PointKind kind = run_kind(impl_->db, run_id, impl_->path);
  std::string cols = fmt::format("{}, {}", kCommonCols, kind_columns(kind));
  sql::Stmt st(impl_->db, fmt::format("SELECT {} FROM {} WHERE run_id = ? AND idx >= ? AND idx < ? ORDER BY idx",
                                      cols, point_table(kind)));
  std::uint64_t end = count > UINT64_MAX - first ? UINT64_MAX : first + count;
  st.bind(1, run_id).bind(2, static_cast<std::int64_t>(std::min<std::uint64_t>(first, INT64_MAX)))
      .bind(3, static_cast<std::int64_t>(std::min<std::uint64_t>(end, INT64_MAX)));
  std::vector<PointRecord> out;
  while (st.step()) out.push_back(read_point(st, kind));
  return out;
}

std::vector<PointRecord> Store::points(std::int64_t run_id) { return points(run_id, 0, UINT64_MAX); }

std::uint64_t Store::point_count(std::int64_t run_id) {
  PointKind kind = run_kind(impl_->db, run_id, impl_->path);
  sql::Stmt st(impl_->db, fmt::format("SELECT COUNT(*) FROM {} WHERE run_id = ?", point_table(kind)));
  st.bind(1, run_id);
  return st.step() ? static_cast<std::uint64_t>(st.int64(0)) : 0;
}

// ---------------------------------------------------------------- editing

namespace {
void update_run(sql::Db& db, const std::filesystem::path& path, std::int64_t run_id, const char* sql_text,
                const std::string& value) {
  sql::Stmt st(db, sql_text);
  st.bind(1, value).bind(2, run_id);
  st.run();
  if (db.changes() == 0) throw Error(fmt::format("--run: no run {} in {}", run_id, path.string()));
}
}  // namespace

void Store::rename_run(std::int64_t run_id, const std::string& name) {
  impl_->require_writable();
  if (name.empty()) throw Error("name: a run name must not be empty");
  update_run(impl_->db, impl_->path, run_id, "UPDATE runs SET name = ? WHERE id = ?", name);
}

void Store::set_notes(std::int64_t run_id, const std::string& notes) {
  impl_->require_writable();
  update_run(impl_->db, impl_->path, run_id, "UPDATE runs SET notes = ? WHERE id = ?", notes);
}

void Store::set_tags(std::int64_t run_id, const std::vector<std::string>& tags) {
  impl_->require_writable();
  get_run(run_id);
  sql::Transaction tx(impl_->db);
  sql::Stmt del(impl_->db, "DELETE FROM run_tags WHERE run_id = ?");
  del.bind(1, run_id);
  del.run();
  sql::Stmt ins(impl_->db, "INSERT OR IGNORE INTO run_tags(run_id, tag) VALUES(?, ?)");
  for (const auto& t : tags) {
    if (t.empty()) throw Error("tags: a tag must not be empty");
    ins.bind(1, run_id).bind(2, t);
    ins.run();
    ins.reset();
  }
  tx.commit();
}

void Store::add_tag(std::int64_t run_id, const std::string& tag) {
  impl_->require_writable();
  if (tag.empty()) throw Error("tags: a tag must not be empty");
  get_run(run_id);
  sql::Stmt ins(impl_->db, "INSERT OR IGNORE INTO run_tags(run_id, tag) VALUES(?, ?)");
  ins.bind(1, run_id).bind(2, tag);
  ins.run();
}

void Store::remove_tag(std::int64_t run_id, const std::string& tag) {
  impl_->require_writable();
  get_run(run_id);
  sql::Stmt del(impl_->db, "DELETE FROM run_tags WHERE run_id = ? AND tag = ?");
  del.bind(1, run_id).bind(2, tag);
  del.run();
}

void Store::delete_run(std::int64_t run_id) {
  impl_->require_writable();
  get_run(run_id);
  sql::Transaction tx(impl_->db);
  // Points and tags go through ON DELETE CASCADE.
  sql::Stmt del(impl_->db, "DELETE FROM runs WHERE id = ?");
  del.bind(1, run_id);
  del.run();
  tx.commit();
}

// ---------------------------------------------------------------- writing

std::int64_t Store::begin_run(const RunStart& s) {
  impl_->require_writable();
  sql::Db& db = impl_->db;
  std::string experiment = s.experiment.empty() ? std::string("default") : s.experiment;
  std::string name = s.name.empty() ? experiment : s.name;
  std::string now = now_iso();
  sql::Transaction tx(db);
  {
    sql::Stmt ins(db, "INSERT OR IGNORE INTO experiments(name, created_at) VALUES(?, ?)");
    ins.bind(1, experiment).bind(2, now);
    ins.run();
  }
  std::int64_t exp_id;
  {
    sql::Stmt sel(db, "SELECT id FROM experiments WHERE name = ?");
    sel.bind(1, experiment);
    if (!sel.step()) throw Error("experiment: could not create it");
    exp_id = sel.int64(0);
  }
  sql::Stmt ins(db,
                "INSERT INTO runs(experiment_id, name, notes, kind, engine, spec_json, tool_version, "
                "git_revision, started_at, status, points_total, threads, host, pid, pid_start) "
                "VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, 'running', ?, ?, ?, ?, ?)");
  std::int64_t pid = static_cast<std::int64_t>(::getpid());
  ins.bind(1, exp_id).bind(2, name).bind(3, s.notes).bind(4, to_string(s.kind)).bind(5, s.engine)
      .bind(6, s.spec.is_null() ? std::string("{}") : s.spec.dump()).bind(7, scin::version())
      .bind(8, scin::git_revision()).bind(9, now).bind(10, s.points_total).bind(11, s.threads)
      .bind(12, host_name()).bind(13, pid).bind(14, process_start_token(pid));
  ins.run();
  std::int64_t id = db.last_insert_rowid();
  sql::Stmt tag(db, "INSERT OR IGNORE INTO run_tags(run_id, tag) VALUES(?, ?)");
  for (const auto& t : s.tags) {
    if (t.empty()) continue;
    tag.bind(1, id).bind(2, t);
    tag.run();
    tag.reset();
  }
  tx.commit();
  return id;
}

void Store::append_points(std::int64_t run_id, const std::vector<PointRecord>& pts) {
  impl_->require_writable();
  if (pts.empty()) return;
  sql::Db& db = impl_->db;
  sql::Transaction tx(db);
  std::string scratch[2];
  for (const auto& p : pts) {
    auto& slot = impl_->ins[static_cast<int>(p.kind)];
    if (!slot) {
      std::string cols = fmt::format("run_id, {}, {}", kCommonCols, kind_columns(p.kind));
      int n = column_count(cols);
      std::string qs = "?";
      for (int i = 1; i < n; ++i) qs += ", ?";
      slot = std::make_unique<sql::Stmt>(db, fmt::format("INSERT INTO {}({}) VALUES({})",
                                                         point_table(p.kind), cols, qs));
    }
    bind_point(*slot, run_id, p, scratch);
    try {
      slot->run();
    } catch (...) {
      slot->reset();
      throw;
    }
    slot->reset();
  }
  tx.commit();
}

void Store::finish_run(std::int64_t run_id, RunStatus status) {
  impl_->require_writable();
  sql::Stmt st(impl_->db, "UPDATE runs SET status = ?, finished_at = ? WHERE id = ?");
  st.bind(1, to_string(status)).bind(2, now_iso()).bind(3, run_id);
  st.run();
  if (impl_->db.changes() == 0)
    throw Error(fmt::format("--run: no run {} in {}", run_id, impl_->path.string()));
}

}  // namespace scin
