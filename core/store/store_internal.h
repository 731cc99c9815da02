// Helpers shared by the store's translation units (not public API).
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "base/error.h"
#include "store/sqlite_db.h"
#include "store/store.h"

namespace scin {

struct Store::Impl {
  sql::Db db;
  std::filesystem::path path;
  bool read_only = false;
  int version = 0;
  std::vector<std::int64_t> recovered;
  std::string damage;                 // quick_check report when the file is damaged
  // Insert statements per point kind, prepared on first use.
  std::unique_ptr<sql::Stmt> ins[8];

  void require_writable() const {
    if (!damage.empty())
      throw Error(fmt::format("{}: the file is damaged ({}); nothing is written to it; copy what is readable "
                              "with `scin recover {} --out NEW.scindb`", path.string(), damage, path.string()));
    if (read_only)
      throw Error(fmt::format("{}: opened read-only; cannot modify it", path.string()));
  }
};

namespace store_detail {

/// Current UTC time as "2026-11-30T01:02:03Z".
std::string now_iso();
/// This machine's host name.
std::string host_name();
/// A token identifying the process `pid` (its start time from /proc), "" if unknown.
std::string process_start_token(std::int64_t pid);
/// True if the process that wrote (host, pid, start token) is certainly gone.
bool owner_gone(const std::string& host, std::int64_t pid, const std::string& start_token);

}  // namespace store_detail
}  // namespace scin
