// A small RAII layer over the sqlite3 C API: a connection, prepared statements
// and transactions. Every failure throws scin::Error naming the database file.
// Internal to the store area (not part of the public API).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

struct sqlite3;
struct sqlite3_stmt;

namespace scin::sql {

class Db;

/// A prepared statement. Bind indices are 1-based, column indices 0-based.
class Stmt {
 public:
  Stmt() = default;
  Stmt(Db& db, std::string_view sql);
  Stmt(Stmt&& o) noexcept;
  Stmt& operator=(Stmt&& o) noexcept;
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;
  ~Stmt();

  Stmt& bind(int i, std::int64_t v);
  Stmt& bind(int i, int v) { return bind(i, static_cast<std::int64_t>(v)); }
  Stmt& bind(int i, std::uint64_t v) { return bind(i, static_cast<std::int64_t>(v)); }
  Stmt& bind(int i, double v);
  Stmt& bind(int i, std::string_view v);   // copied (SQLITE_TRANSIENT)
  Stmt& bind(int i, const char* v) { return bind(i, std::string_view(v)); }
  Stmt& bind(int i, const std::string& v) { return bind(i, std::string_view(v)); }
  Stmt& bind_null(int i);
  /// Not copied: `v` must stay alive and unchanged until the next step()/reset().
  Stmt& bind_static(int i, std::string_view v);

  /// Steps once: true if a row is available, false when done. Throws on error.
  bool step();
  /// Steps to completion (for statements without rows).
  void run();
  void reset();                            // reset + clear bindings

  bool is_null(int col) const;
  std::int64_t int64(int col) const;
  double real(int col) const;
  std::string text(int col) const;         // "" for NULL

  sqlite3_stmt* raw() const { return st_; }

 private:
  Db* db_ = nullptr;
  sqlite3_stmt* st_ = nullptr;
  std::string what_;   // the start of the SQL, for error messages
};

class Db {
 public:
  Db() = default;
  /// `flags` are sqlite3_open_v2 flags. Throws Error on failure.
  Db(const std::string& path, int flags);
  Db(Db&& o) noexcept;
  Db& operator=(Db&& o) noexcept;
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;
  ~Db();

  void exec(std::string_view sql);         // one or more statements without rows
  std::int64_t query_int(std::string_view sql);   // first column of the first row (0 if none)
  std::string query_text(std::string_view sql);
  std::int64_t last_insert_rowid() const;
  int changes() const;

  [[noreturn]] void fail(int rc, std::string_view what) const;
  /// True once any call on this connection reported SQLITE_CORRUPT or SQLITE_NOTADB.
  bool corruption_seen() const { return corrupt_; }
  const std::string& path() const { return path_; }
  sqlite3* raw() const { return db_; }

 private:
  sqlite3* db_ = nullptr;
  std::string path_;
  mutable bool corrupt_ = false;
};

/// BEGIN IMMEDIATE on construction, ROLLBACK on destruction unless committed.
class Transaction {
 public:
  explicit Transaction(Db& db);
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  ~Transaction();
  void commit();

 private:
  Db& db_;
  bool done_ = false;
};

}  // namespace scin::sql
