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
    case RunStatus::Unknown: return "unknown";
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
    case PointKind::Measured: return "measured";
  }
  return "?";
}

PointKind parse_point_kind(const std::string& s) {
  for (PointKind k : {PointKind::Collective, PointKind::Quant, PointKind::Inference, PointKind::Measured})
    if (s == to_string(k)) return k;
  throw Error(fmt::format("kind: unknown point kind '{}'; allowed collective, quant, inference, measured", s));
}

const char* to_string(PointStatus s) {
  switch (s) {
    case PointStatus::Ok: return "ok";
    case PointStatus::Skipped: return "skipped";
    case PointStatus::Failed: return "failed";
  }
  return "?";
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

}  // namespace

// ---------------------------------------------------------------- open

Store::Store(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Store::Store(Store&&) noexcept = default;
Store& Store::operator=(Store&&) noexcept = default;
Store::~Store() = default;

namespace {

// Up to `max_rows` lines of a quick_check / integrity_check report, "; "-joined.
std::string check_report(sql::Db& db, const char* pragma, int max_rows = 8) {
  sql::Stmt st(db, pragma);
  std::string out;
  int n = 0;
  while (st.step()) {
    if (n++ == max_rows) {
      out += "; ...";
      break;
    }
    if (!out.empty()) out += "; ";
    out += st.text(0);
  }
  return out;
}

void mark_dead_runs(sql::Db& db, std::vector<std::int64_t>& recovered) {
  sql::Stmt st(db, "SELECT id, host, pid, pid_start FROM runs WHERE status = 'running'");
  std::vector<std::int64_t> dead;
  while (st.step())
    if (owner_gone(st.text(1), st.int64(2), st.text(3))) dead.push_back(st.int64(0));
  if (dead.empty()) return;
  sql::Transaction tx(db);
  sql::Stmt up(db, "UPDATE runs SET status = 'interrupted' WHERE id = ? AND status = 'running'");
  for (auto id : dead) {
    up.bind(1, id);
    up.run();
    up.reset();
  }
  tx.commit();
  recovered = dead;
}

}  // namespace

Store Store::open(const std::filesystem::path& path, Access access, bool check) {
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
    // Only an explicit Create makes a file: a mistyped path is an error, never a new empty database.
    if (access != Access::Create)
      throw Error(fmt::format("{}: no such experiment database (check the path; `scin sweep --db FILE` or "
                              "File > New creates one)", p));
    if (!fs::is_directory(dir, ec))
      throw Error(fmt::format("{}: folder '{}' does not exist", p, dir.string()));
    writable = ::access(dir.c_str(), W_OK) == 0;
    if (!writable) throw Error(fmt::format("{}: cannot create it: folder '{}' is read-only", p, dir.string()));
  }
  if ((access == Access::ReadWrite || access == Access::Create) && !writable)
    throw Error(fmt::format("{}: the file (or its folder) is read-only; open it read-only to browse it", p));
  impl->read_only = access == Access::ReadOnly || !writable;

  std::uintmax_t size = exists ? fs::file_size(path, ec) : 0;
  if (exists && size > 0) check_sqlite_header(path);
  if (size == 0 && (impl->read_only || access != Access::Create))
    throw Error(fmt::format("{}: empty file, not a SCIN experiment database", p));

  int flags = impl->read_only ? SQLITE_OPEN_READONLY
                              : (SQLITE_OPEN_READWRITE | (access == Access::Create ? SQLITE_OPEN_CREATE : 0));
  std::int64_t app_id = 0, tables = 0;
  int version = 0;
  auto connect = [&](const std::string& name, int extra) {
    impl->db = sql::Db(name, flags | extra | SQLITE_OPEN_NOMUTEX);
    sqlite3_busy_timeout(impl->db.raw(), 10000);
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
    if (!empty || impl->read_only || access != Access::Create)
      throw Error(fmt::format("{}: an SQLite file, but not a SCIN experiment database", p));
  }
  if (version > kSchemaVersion)
    throw Error(fmt::format("{}: written by a newer scin (schema version {}; this scin {} reads up to {}); "
                            "upgrade scin to open it", p, version, scin::version(), kSchemaVersion));
  try {
    // A cheap probe: reading the runs table surfaces most damage SQLite can see.
    if (version > 0) db.query_int("SELECT COUNT(*) FROM runs");
    if (!impl->read_only) {
      std::string mode = switch_to_wal(db);
      if (mode != "wal") throw Error(fmt::format("{}: cannot switch to WAL journal (got '{}')", p, mode));
      db.exec("PRAGMA synchronous = FULL");
      db.exec("PRAGMA cache_size = -32768");   // 32 MiB page cache for big runs
      if (version < kSchemaVersion) {
        store_schema::migrate(db, version, kSchemaVersion);
        version = static_cast<int>(db.query_int("PRAGMA user_version"));
      }
      mark_dead_runs(db, impl->recovered);
    }
  } catch (const Error&) {
    if (!db.corruption_seen()) throw;
  }
  if (check || db.corruption_seen()) {
    std::string report;
    try {
      report = check_report(db, "PRAGMA quick_check");
    } catch (const Error& e) {
      report = e.what();
    }
    if (report != "ok") {
      impl->damage = report;
      impl->read_only = true;
      impl->recovered.clear();
      sqlite3_exec(db.raw(), "PRAGMA query_only = 1", nullptr, nullptr, nullptr);
    }
  }
  if (impl->read_only && version < 2)
    throw Error(fmt::format("{}: schema version {} is older than this scin's ({}); open it once "
                            "read-write to upgrade it", p, version, kSchemaVersion));
  impl->version = version;
  return Store(std::move(impl));
}

const std::filesystem::path& Store::path() const { return impl_->path; }
bool Store::read_only() const { return impl_->read_only; }
int Store::schema_version() const { return impl_->version; }
const std::vector<std::int64_t>& Store::recovered_runs() const { return impl_->recovered; }
::sqlite3* Store::raw() { return impl_->db.raw(); }

std::string Store::integrity_check() { return check_report(impl_->db, "PRAGMA integrity_check"); }
const std::string& Store::damage() const { return impl_->damage; }
std::int64_t Store::data_version() { return impl_->db.query_int("PRAGMA data_version"); }

std::string Store::quick_check() {
  std::string r;
  try {
    r = check_report(impl_->db, "PRAGMA quick_check");
  } catch (const Error& e) {
    r = e.what();
  }
  if (r != "ok" && impl_->damage.empty()) {
    impl_->damage = r;
    impl_->read_only = true;
    sqlite3_exec(impl_->db.raw(), "PRAGMA query_only = 1", nullptr, nullptr, nullptr);
  }
  return r;
}

}  // namespace scin
