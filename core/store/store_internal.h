// Helpers shared by the store's translation units (not public API).
#pragma once

#include <cstdint>
#include <string>

namespace scin::store_detail {

/// Current UTC time as "2026-11-30T01:02:03Z".
std::string now_iso();
/// This machine's host name.
std::string host_name();
/// A token identifying the process `pid` (its start time from /proc), "" if unknown.
std::string process_start_token(std::int64_t pid);
/// True if the process that wrote (host, pid, start token) is certainly gone.
bool owner_gone(const std::string& host, std::int64_t pid, const std::string& start_token);

}  // namespace scin::store_detail
