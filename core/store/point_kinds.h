// Point kinds and the one column table of the experiment database.
//
// Every kind of result point (timing, quant, inference, measured) is declared
// here once: its name, its table and its columns. Each column has one name —
// the database column, the CSV/JSON export column and the JSON key agree — a
// type, and the accessors that read it from / write it to a PointRecord. The
// store's schema (checked against the table by a test; new tables created from
// it), its INSERT binding, its SELECT reading and both exports are generated
// from this table, so a new result field is added in one place.
//
// To add a point kind: add it to PointKind (store.h), give its columns here
// (point_kinds.cc) and, if a sweep produces it, its evaluation next to the
// other kinds in core/sweep/kind_*.cc.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <variant>
#include <vector>

#include "store/store.h"

namespace scin {

enum class ColumnType { Integer, Real, Text };

/// A cell: NULL, an integer, a real or a text.
using ColumnValue = std::variant<std::monostate, std::int64_t, double, std::string>;

struct PointColumn {
  std::string name;          // database column = export column = JSON key
  ColumnType type;
  bool exported = true;      // a flat column of CSV/JSON exports (idx, axes and extra are not)
  std::string sql_default;   // DDL tail, e.g. "NOT NULL DEFAULT ''"; empty: nullable
  std::function<ColumnValue(const PointRecord&)> get;
  std::function<void(PointRecord&, const ColumnValue&)> set;
};

struct PointKindInfo {
  PointKind kind;
  std::string name;          // "collective", "quant", "inference", "measured"
  std::string table;         // "collective_points", ...
  int since_schema;          // schema version that created its table
  std::vector<PointColumn> columns;   // every column but run_id, in table order
  // Export columns read from a point's extra_json (not database columns), after
  // `columns` in exports: a measured row's in-place time, notes... (their get
  // gives NULL where the point has none; their set does nothing).
  std::vector<PointColumn> from_extra;
};

/// Every point kind, in PointKind order.
const std::vector<PointKindInfo>& point_kinds();
const PointKindInfo& point_kind_info(PointKind k);

/// Columns of the CSV/JSON export of a kind, in order (no axes, no index).
std::vector<const PointColumn*> exported_columns(PointKind k);

/// CREATE TABLE statement of a kind's point table, generated from the table.
std::string create_table_sql(const PointKindInfo& k);

/// A cell as JSON (NULL -> null).
nlohmann::json to_json(const ColumnValue& v);

}  // namespace scin
