// Points compared column by column, as the store keeps them (reals bit for bit).
#pragma once

#include <cstring>
#include <string>
#include <variant>

#include "store/point_kinds.h"

namespace scin::test {

/// `extra` without what the packet engine measures of the host (its own CPU
/// and wall time): those differ between any two runs, even in one process.
inline nlohmann::json without_host_times(nlohmann::json extra) {
  if (extra.is_object())
    for (const char* k : {"cpu_s", "wall_s"}) extra.erase(k);
  return extra;
}

/// Empty when `a` and `b` store the same cells (extra_json up to the host
/// times); else the first differing column.
inline std::string stored_difference(const PointRecord& a, const PointRecord& b) {
  if (a.kind != b.kind) return "kind";
  if (without_host_times(a.extra) != without_host_times(b.extra)) return "extra_json";
  for (const PointColumn& c : point_kind_info(a.kind).columns) {
    if (c.name == "extra_json") continue;
    const ColumnValue x = c.get(a), y = c.get(b);
    const auto* dx = std::get_if<double>(&x);
    const auto* dy = std::get_if<double>(&y);
    if (dx && dy ? std::memcmp(dx, dy, sizeof(double)) != 0 : x != y) return c.name;
  }
  return {};
}

}  // namespace scin::test
