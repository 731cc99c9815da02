#include "store/sqlite_db.h"

#include <sqlite3.h>

#include <fmt/format.h>

#include "base/error.h"

namespace scin::sql {

// ---------------------------------------------------------------- Db

Db::Db(const std::string& path, int flags) : path_(path) {
  sqlite3* db = nullptr;
  int rc = sqlite3_open_v2(path.c_str(), &db, flags, nullptr);
  if (rc != SQLITE_OK) {
    std::string msg = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    sqlite3_close(db);
    throw Error(fmt::format("{}: cannot open database: {}", path, msg));
  }
  db_ = db;
  sqlite3_extended_result_codes(db_, 1);
}

Db::Db(Db&& o) noexcept : db_(o.db_), path_(std::move(o.path_)), corrupt_(o.corrupt_) { o.db_ = nullptr; }

Db& Db::operator=(Db&& o) noexcept {
  if (this != &o) {
    if (db_) sqlite3_close_v2(db_);
    db_ = o.db_;
    path_ = std::move(o.path_);
    corrupt_ = o.corrupt_;
    o.db_ = nullptr;
  }
  return *this;
}

Db::~Db() {
  if (db_) sqlite3_close_v2(db_);
}

void Db::fail(int rc, std::string_view what) const {
  std::string msg = db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
  if ((rc & 0xff) == SQLITE_CORRUPT || (rc & 0xff) == SQLITE_NOTADB) corrupt_ = true;
  if ((rc & 0xff) == SQLITE_CORRUPT)
    throw Error(fmt::format("{}: the database file is damaged ({}: {}); see `scin check` and `scin recover`", path_,
                            what, msg));
  if ((rc & 0xff) == SQLITE_NOTADB)
    throw Error(fmt::format("{}: not a SCIN experiment database (not an SQLite file)", path_));
  if ((rc & 0xff) == SQLITE_READONLY)
    throw Error(fmt::format("{}: the database is read-only ({}); open it read-only", path_, msg));
  throw Error(fmt::format("{}: {}: {}", path_, what, msg));
}

void Db::exec(std::string_view sql) {
  std::string s(sql);
  char* err = nullptr;
  int rc = sqlite3_exec(db_, s.c_str(), nullptr, nullptr, &err);
  if (rc != SQLITE_OK) {
    std::string msg = err ? err : sqlite3_errstr(rc);
    sqlite3_free(err);
    if ((rc & 0xff) == SQLITE_CORRUPT || (rc & 0xff) == SQLITE_NOTADB) fail(rc, "exec");
    if ((rc & 0xff) == SQLITE_NOTADB || (rc & 0xff) == SQLITE_READONLY) fail(rc, "exec");
    throw Error(fmt::format("{}: {}", path_, msg));
  }
}

std::int64_t Db::query_int(std::string_view sql) {
  Stmt st(*this, sql);
  return st.step() ? st.int64(0) : 0;
}

std::string Db::query_text(std::string_view sql) {
  Stmt st(*this, sql);
  return st.step() ? st.text(0) : std::string();
}

std::int64_t Db::last_insert_rowid() const { return sqlite3_last_insert_rowid(db_); }
int Db::changes() const { return sqlite3_changes(db_); }

// ---------------------------------------------------------------- Stmt

Stmt::Stmt(Db& db, std::string_view sql) : db_(&db), what_(fmt::format("'{}'", sql.substr(0, 48))) {
  int rc = sqlite3_prepare_v3(db.raw(), sql.data(), static_cast<int>(sql.size()),
                              SQLITE_PREPARE_PERSISTENT, &st_, nullptr);
  if (rc != SQLITE_OK) db.fail(rc, fmt::format("prepare '{}'", sql.substr(0, 60)));
}

Stmt::Stmt(Stmt&& o) noexcept : db_(o.db_), st_(o.st_), what_(std::move(o.what_)) { o.st_ = nullptr; }

Stmt& Stmt::operator=(Stmt&& o) noexcept {
  if (this != &o) {
    if (st_) sqlite3_finalize(st_);
    db_ = o.db_;
    st_ = o.st_;
    what_ = std::move(o.what_);
    o.st_ = nullptr;
  }
  return *this;
}

Stmt::~Stmt() {
  if (st_) sqlite3_finalize(st_);
}

Stmt& Stmt::bind(int i, std::int64_t v) {
  int rc = sqlite3_bind_int64(st_, i, v);
  if (rc != SQLITE_OK) db_->fail(rc, "bind");
  return *this;
}

Stmt& Stmt::bind(int i, double v) {
  int rc = sqlite3_bind_double(st_, i, v);
  if (rc != SQLITE_OK) db_->fail(rc, "bind");
  return *this;
}

Stmt& Stmt::bind(int i, std::string_view v) {
  int rc = sqlite3_bind_text(st_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
  if (rc != SQLITE_OK) db_->fail(rc, "bind");
  return *this;
}

Stmt& Stmt::bind_static(int i, std::string_view v) {
  int rc = sqlite3_bind_text(st_, i, v.data(), static_cast<int>(v.size()), SQLITE_STATIC);
  if (rc != SQLITE_OK) db_->fail(rc, "bind");
  return *this;
}

Stmt& Stmt::bind_null(int i) {
  int rc = sqlite3_bind_null(st_, i);
  if (rc != SQLITE_OK) db_->fail(rc, "bind");
  return *this;
}

bool Stmt::step() {
  int rc = sqlite3_step(st_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  // Reset so the statement can be reused after the error is handled.
  sqlite3_reset(st_);
  db_->fail(rc, what_);
}

void Stmt::run() {
  while (step()) {
  }
  sqlite3_reset(st_);
}

void Stmt::reset() {
  sqlite3_reset(st_);
  sqlite3_clear_bindings(st_);
}

bool Stmt::is_null(int col) const { return sqlite3_column_type(st_, col) == SQLITE_NULL; }
std::int64_t Stmt::int64(int col) const { return sqlite3_column_int64(st_, col); }
double Stmt::real(int col) const { return sqlite3_column_double(st_, col); }
std::string Stmt::text(int col) const {
  const unsigned char* t = sqlite3_column_text(st_, col);
  if (!t) return {};
  return std::string(reinterpret_cast<const char*>(t), static_cast<std::size_t>(sqlite3_column_bytes(st_, col)));
}

// ---------------------------------------------------------------- Transaction

Transaction::Transaction(Db& db) : db_(db) { db_.exec("BEGIN IMMEDIATE"); }

Transaction::~Transaction() {
  if (!done_) sqlite3_exec(db_.raw(), "ROLLBACK", nullptr, nullptr, nullptr);
}

void Transaction::commit() {
  db_.exec("COMMIT");
  done_ = true;
}

}  // namespace scin::sql
