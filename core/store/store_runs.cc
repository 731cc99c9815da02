// The store's runs and points: browsing, editing and writing. Point columns
// come from the one column table (store/point_kinds.h).
#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>

#include <fmt/format.h>

#include "base/error.h"
#include "base/version.h"
#include "store/point_kinds.h"
#include "store/sqlite_db.h"
#include "store/store.h"
#include "store/store_internal.h"

namespace scin {

using namespace store_detail;

namespace {

// Point tables present in a file of schema `version`.
std::vector<const PointKindInfo*> kinds_in(int version) {
  std::vector<const PointKindInfo*> out;
  for (const auto& k : point_kinds())
    if (k.since_schema <= version) out.push_back(&k);
  return out;
}

std::string run_select(int version) {
  std::string stored, skipped;
  for (const auto* k : kinds_in(version)) {
    stored += fmt::format("{}(SELECT COUNT(*) FROM {} p WHERE p.run_id = r.id)", stored.empty() ? "" : " + ", k->table);
    skipped += fmt::format("{}(SELECT COUNT(*) FROM {} p WHERE p.run_id = r.id AND p.status <> 'ok')",
                           skipped.empty() ? "" : " + ", k->table);
  }
  return fmt::format(
      "SELECT r.id, e.name, r.name, r.notes, r.kind, r.engine, r.spec_json, r.tool_version, "
      "r.git_revision, r.started_at, r.finished_at, r.status, r.points_total, r.threads, r.host, "
      "r.pid, r.pid_start, {}, {}, {}, {} FROM runs r LEFT JOIN experiments e ON e.id = r.experiment_id ",
      stored, skipped, version >= 3 ? "r.config_json" : "NULL", version >= 3 ? "r.ranks" : "1");
}

nlohmann::json parse_or_null(const std::string& text) {
  auto j = nlohmann::json::parse(text, nullptr, false);
  return j.is_discarded() ? nlohmann::json() : j;
}

RunInfo read_run(sql::Db& db, sql::Stmt& st) {
  RunInfo r;
  r.id = st.int64(0);
  r.experiment = st.text(1);
  r.name = st.text(2);
  r.notes = st.text(3);
  // A damaged row (unknown kind or status) flags this run only; the others stay usable.
  try {
    r.kind = parse_point_kind(st.text(4));
  } catch (const Error& e) {
    r.problem = e.what();
  }
  r.engine = st.text(5);
  r.spec = parse_or_null(st.text(6));
  r.tool_version = st.text(7);
  r.git_revision = st.text(8);
  r.started_at = st.text(9);
  r.finished_at = st.text(10);
  try {
    r.status = parse_run_status(st.text(11));
  } catch (const Error& e) {
    r.status = RunStatus::Unknown;
    if (r.problem.empty()) r.problem = e.what();
  }
  r.points_total = static_cast<std::uint64_t>(st.int64(12));
  r.threads = static_cast<int>(st.int64(13));
  r.host = st.text(14);
  r.pid = st.int64(15);
  std::string pid_start = st.text(16);
  r.points_stored = static_cast<std::uint64_t>(st.int64(17));
  r.points_skipped = static_cast<std::uint64_t>(st.int64(18));
  if (!st.is_null(19)) r.config = parse_or_null(st.text(19));
  r.ranks = static_cast<int>(st.int64(20));
  // A read-only open cannot mark a dead writer's run; report it as it is.
  if (r.status == RunStatus::Running && owner_gone(r.host, r.pid, pid_start)) r.status = RunStatus::Interrupted;
  sql::Stmt tags(db, "SELECT tag FROM run_tags WHERE run_id = ? ORDER BY tag");
  tags.bind(1, r.id);
  while (tags.step()) r.tags.push_back(tags.text(0));
  return r;
}

std::string column_list(const PointKindInfo& k) {
  std::string s;
  for (const auto& c : k.columns) s += (s.empty() ? "" : ", ") + c.name;
  return s;
}

ColumnValue read_cell(sql::Stmt& st, int col) {
  switch (sqlite3_column_type(st.raw(), col)) {
    case SQLITE_NULL: return {};
    case SQLITE_INTEGER: return st.int64(col);
    case SQLITE_FLOAT: return st.real(col);
    default: return st.text(col);
  }
}

void bind_cell(sql::Stmt& st, int i, const ColumnValue& v) {
  std::visit(
      [&](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::monostate>) st.bind_null(i);
        else st.bind(i, x);
      },
      v);
}

PointRecord read_point(sql::Stmt& st, const PointKindInfo& k) {
  PointRecord p;
  p.kind = k.kind;
  for (std::size_t i = 0; i < k.columns.size(); ++i) k.columns[i].set(p, read_cell(st, static_cast<int>(i)));
  return p;
}

}  // namespace

// ---------------------------------------------------------------- browsing

std::vector<RunInfo> Store::list_runs() {
  sql::Stmt st(impl_->db, run_select(impl_->version) + "ORDER BY r.id");
  std::vector<RunInfo> out;
  while (st.step()) out.push_back(read_run(impl_->db, st));
  return out;
}

std::optional<RunInfo> Store::find_run(std::int64_t run_id) {
  sql::Stmt st(impl_->db, run_select(impl_->version) + "WHERE r.id = ?");
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

static const PointKindInfo& run_kind(sql::Db& db, std::int64_t run_id, const std::filesystem::path& path) {
  sql::Stmt st(db, "SELECT kind FROM runs WHERE id = ?");
  st.bind(1, run_id);
  if (!st.step()) throw Error(fmt::format("--run: no run {} in {}", run_id, path.string()));
  try {
    return point_kind_info(parse_point_kind(st.text(0)));
  } catch (const Error& e) {
    throw Error(fmt::format("run {}: its stored row is damaged ({}); other runs are unaffected", run_id, e.what()));
  }
}

std::vector<PointRecord> Store::points(std::int64_t run_id, std::uint64_t first, std::uint64_t count) {
  const PointKindInfo& k = run_kind(impl_->db, run_id, impl_->path);
  sql::Stmt st(impl_->db, fmt::format("SELECT {} FROM {} WHERE run_id = ? AND idx >= ? AND idx < ? ORDER BY idx",
                                      column_list(k), k.table));
  std::uint64_t end = count > UINT64_MAX - first ? UINT64_MAX : first + count;
  st.bind(1, run_id).bind(2, static_cast<std::int64_t>(std::min<std::uint64_t>(first, INT64_MAX)))
      .bind(3, static_cast<std::int64_t>(std::min<std::uint64_t>(end, INT64_MAX)));
  std::vector<PointRecord> out;
  while (st.step()) out.push_back(read_point(st, k));
  return out;
}

std::vector<PointRecord> Store::points(std::int64_t run_id) { return points(run_id, 0, UINT64_MAX); }

std::uint64_t Store::point_count(std::int64_t run_id) {
  const PointKindInfo& k = run_kind(impl_->db, run_id, impl_->path);
  sql::Stmt st(impl_->db, fmt::format("SELECT COUNT(*) FROM {} WHERE run_id = ?", k.table));
  st.bind(1, run_id);
  return st.step() ? static_cast<std::uint64_t>(st.int64(0)) : 0;
}

std::vector<std::uint64_t> Store::point_indices(std::int64_t run_id) {
  const PointKindInfo& k = run_kind(impl_->db, run_id, impl_->path);
  sql::Stmt st(impl_->db, fmt::format("SELECT idx FROM {} WHERE run_id = ? ORDER BY idx", k.table));
  st.bind(1, run_id);
  std::vector<std::uint64_t> out;
  while (st.step()) out.push_back(static_cast<std::uint64_t>(st.int64(0)));
  return out;
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

void insert_tags(sql::Db& db, std::int64_t run_id, const std::vector<std::string>& tags) {
  sql::Stmt ins(db, "INSERT OR IGNORE INTO run_tags(run_id, tag) VALUES(?, ?)");
  for (const auto& t : tags) {
    if (t.empty()) continue;
    ins.bind(1, run_id).bind(2, t);
    ins.run();
    ins.reset();
  }
}

std::int64_t experiment_id(sql::Db& db, const std::string& name, const std::string& now) {
  sql::Stmt ins(db, "INSERT OR IGNORE INTO experiments(name, created_at) VALUES(?, ?)");
  ins.bind(1, name).bind(2, now);
  ins.run();
  sql::Stmt sel(db, "SELECT id FROM experiments WHERE name = ?");
  sel.bind(1, name);
  if (!sel.step()) throw Error("experiment: could not create it");
  return sel.int64(0);
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
  for (const auto& t : tags)
    if (t.empty()) throw Error("tags: a tag must not be empty");
  get_run(run_id);
  sql::Transaction tx(impl_->db);
  sql::Stmt del(impl_->db, "DELETE FROM run_tags WHERE run_id = ?");
  del.bind(1, run_id);
  del.run();
  insert_tags(impl_->db, run_id, tags);
  tx.commit();
}

void Store::add_tag(std::int64_t run_id, const std::string& tag) {
  impl_->require_writable();
  if (tag.empty()) throw Error("tags: a tag must not be empty");
  get_run(run_id);
  insert_tags(impl_->db, run_id, {tag});
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

namespace {
const char* kInsertRun =
    "INSERT INTO runs(experiment_id, name, notes, kind, engine, spec_json, tool_version, git_revision, started_at, "
    "finished_at, status, points_total, threads, host, pid, pid_start, config_json, ranks) "
    "VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
}

std::int64_t Store::begin_run(const RunStart& s) {
  impl_->require_writable();
  sql::Db& db = impl_->db;
  std::string experiment = s.experiment.empty() ? std::string("default") : s.experiment;
  std::string name = s.name.empty() ? experiment : s.name;
  std::string now = now_iso();
  sql::Transaction tx(db);
  std::int64_t exp_id = experiment_id(db, experiment, now);
  sql::Stmt ins(db, kInsertRun);
  std::int64_t pid = static_cast<std::int64_t>(::getpid());
  ins.bind(1, exp_id).bind(2, name).bind(3, s.notes).bind(4, to_string(s.kind)).bind(5, s.engine)
      .bind(6, s.spec.is_null() ? std::string("{}") : s.spec.dump()).bind(7, scin::version())
      .bind(8, scin::git_revision()).bind(9, now).bind_null(10).bind(11, "running").bind(12, s.points_total)
      .bind(13, s.threads).bind(14, host_name()).bind(15, pid).bind(16, process_start_token(pid));
  if (s.config.is_null()) ins.bind_null(17);
  else ins.bind(17, s.config.dump());
  ins.bind(18, std::max(1, s.ranks));
  ins.run();
  std::int64_t id = db.last_insert_rowid();
  insert_tags(db, id, s.tags);
  tx.commit();
  return id;
}

std::int64_t Store::import_run(const RunInfo& r, const std::vector<PointRecord>& pts) {
  impl_->require_writable();
  sql::Db& db = impl_->db;
  sql::Transaction tx(db);
  std::int64_t exp_id = experiment_id(db, r.experiment.empty() ? std::string("default") : r.experiment, now_iso());
  sql::Stmt ins(db, kInsertRun);
  // A copied run has no live writer: a `running` run becomes interrupted.
  RunStatus status = r.status == RunStatus::Running || r.status == RunStatus::Unknown ? RunStatus::Interrupted : r.status;
  ins.bind(1, exp_id).bind(2, r.name.empty() ? std::string("recovered") : r.name).bind(3, r.notes)
      .bind(4, to_string(r.kind)).bind(5, r.engine).bind(6, r.spec.is_null() ? std::string("{}") : r.spec.dump())
      .bind(7, r.tool_version).bind(8, r.git_revision).bind(9, r.started_at);
  if (r.finished_at.empty()) ins.bind_null(10);
  else ins.bind(10, r.finished_at);
  ins.bind(11, to_string(status)).bind(12, r.points_total).bind(13, r.threads).bind(14, r.host).bind(15, r.pid)
      .bind(16, "");
  if (r.config.is_null()) ins.bind_null(17);
  else ins.bind(17, r.config.dump());
  ins.bind(18, std::max(1, r.ranks));
  ins.run();
  std::int64_t id = db.last_insert_rowid();
  insert_tags(db, id, r.tags);
  tx.commit();
  std::vector<PointRecord> same_kind;
  for (const auto& p : pts)
    if (p.kind == r.kind) same_kind.push_back(p);
  append_points(id, same_kind);
  return id;
}

void Store::append_points(std::int64_t run_id, const std::vector<PointRecord>& pts) {
  impl_->require_writable();
  if (pts.empty()) return;
  sql::Db& db = impl_->db;
  sql::Transaction tx(db);   // one writer transaction per batch
  for (const auto& p : pts) {
    const PointKindInfo& k = point_kind_info(p.kind);
    auto& slot = impl_->ins[static_cast<int>(p.kind)];
    if (!slot) {
      std::string qs = "?";
      for (std::size_t i = 0; i < k.columns.size(); ++i) qs += ", ?";
      slot = std::make_unique<sql::Stmt>(
          db, fmt::format("INSERT INTO {}(run_id, {}) VALUES({})", k.table, column_list(k), qs));
    }
    slot->bind(1, run_id);
    for (std::size_t i = 0; i < k.columns.size(); ++i) bind_cell(*slot, static_cast<int>(i) + 2, k.columns[i].get(p));
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

RunInfo Store::resume_run(std::int64_t run_id, int threads, int ranks) {
  impl_->require_writable();
  sql::Db& db = impl_->db;
  sql::Transaction tx(db);   // the check and the take-over are one step: two resumers cannot both win
  RunInfo r = get_run(run_id);
  if (!r.problem.empty()) throw Error(fmt::format("--resume: run {} is damaged ({})", run_id, r.problem));
  if (r.status == RunStatus::Running)
    throw Error(fmt::format("--resume: run {} is still running (host {} pid {})", run_id, r.host, r.pid));
  if (r.status == RunStatus::Done)
    throw Error(fmt::format("--resume: run {} is done; nothing to resume", run_id));
  std::int64_t pid = static_cast<std::int64_t>(::getpid());
  sql::Stmt up(db, "UPDATE runs SET status = 'running', finished_at = NULL, host = ?, pid = ?, pid_start = ?, "
                   "threads = ? WHERE id = ?");
  up.bind(1, host_name()).bind(2, pid).bind(3, process_start_token(pid)).bind(4, threads).bind(5, run_id);
  up.run();
  if (impl_->version >= 3) {
    sql::Stmt rk(db, "UPDATE runs SET ranks = ? WHERE id = ?");
    rk.bind(1, std::max(1, ranks)).bind(2, run_id);
    rk.run();
  }
  tx.commit();
  r.status = RunStatus::Running;
  return r;
}

}  // namespace scin
