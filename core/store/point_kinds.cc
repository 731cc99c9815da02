#include "store/point_kinds.h"

#include <fmt/format.h>

#include "base/error.h"
#include "base/json_input.h"

namespace scin {

namespace {

using json = nlohmann::json;

std::int64_t as_int(const ColumnValue& v) {
  if (auto* i = std::get_if<std::int64_t>(&v)) return *i;
  if (auto* d = std::get_if<double>(&v)) return static_cast<std::int64_t>(*d);
  return 0;
}
double as_real(const ColumnValue& v) {
  if (auto* d = std::get_if<double>(&v)) return *d;
  if (auto* i = std::get_if<std::int64_t>(&v)) return static_cast<double>(*i);
  return 0;   // NULL (SQLite stores NaN as NULL)
}
std::string as_text(const ColumnValue& v) {
  if (auto* s = std::get_if<std::string>(&v)) return *s;
  return {};
}

template <class T>
PointColumn text_col(const char* name, T PointRecord::*m) {
  return {name, ColumnType::Text, true, "NOT NULL DEFAULT ''",
          [m](const PointRecord& p) -> ColumnValue { return std::string(p.*m); },
          [m](PointRecord& p, const ColumnValue& v) { p.*m = as_text(v); }};
}
PointColumn real_col(const char* name, double PointRecord::*m) {
  return {name, ColumnType::Real, true, "",
          [m](const PointRecord& p) -> ColumnValue { return p.*m; },
          [m](PointRecord& p, const ColumnValue& v) { p.*m = as_real(v); }};
}
template <class T>
PointColumn int_col(const char* name, T PointRecord::*m) {
  return {name, ColumnType::Integer, true, "NOT NULL DEFAULT 0",
          [m](const PointRecord& p) -> ColumnValue { return static_cast<std::int64_t>(p.*m); },
          [m](PointRecord& p, const ColumnValue& v) { p.*m = static_cast<T>(as_int(v)); }};
}
// A JSON document kept as text (not a flat export column).
PointColumn json_col(const char* name, json PointRecord::*m, bool nullable) {
  return {name, ColumnType::Text, false, nullable ? "" : "NOT NULL",
          [m, nullable](const PointRecord& p) -> ColumnValue {
            const json& j = p.*m;
            if (j.is_null()) return nullable ? ColumnValue{} : ColumnValue{std::string("{}")};
            return j.dump();
          },
          [m, nullable](PointRecord& p, const ColumnValue& v) {
            const std::string* s = std::get_if<std::string>(&v);
            json j = s ? parse_json_or_discarded(*s) : json();
            if (j.is_discarded()) j = json();
            if (j.is_null() && !nullable) j = json::object();
            p.*m = std::move(j);
          }};
}

// An export column that is the key `name` of a point's extra JSON (NULL where
// absent or of another type).
PointColumn extra_col(const char* name, ColumnType type) {
  const std::string key = name;
  return {name, type, true, "",
          [key, type](const PointRecord& p) -> ColumnValue {
            if (!p.extra.is_object()) return {};
            const auto it = p.extra.find(key);
            if (it == p.extra.end()) return {};
            if (type == ColumnType::Text && it->is_string()) return it->get<std::string>();
            if (type == ColumnType::Integer && it->is_number_integer()) return it->get<std::int64_t>();
            if (type == ColumnType::Real && it->is_number()) return it->get<double>();
            return {};
          },
          [](PointRecord&, const ColumnValue&) {}};
}

std::vector<PointColumn> common_columns() {
  std::vector<PointColumn> c;
  c.push_back({"idx", ColumnType::Integer, false, "NOT NULL",
               [](const PointRecord& p) -> ColumnValue { return static_cast<std::int64_t>(p.index); },
               [](PointRecord& p, const ColumnValue& v) { p.index = static_cast<std::uint64_t>(as_int(v)); }});
  c.push_back({"status", ColumnType::Text, true, "NOT NULL",
               [](const PointRecord& p) -> ColumnValue { return std::string(to_string(p.status)); },
               [](PointRecord& p, const ColumnValue& v) {
                 const std::string s = as_text(v);
                 p.status = s == "skipped" ? PointStatus::Skipped : s == "failed" ? PointStatus::Failed : PointStatus::Ok;
               }});
  c.push_back(text_col("message", &PointRecord::message));
  c.push_back(json_col("axes_json", &PointRecord::axes, false));
  c.push_back(text_col("algorithm", &PointRecord::algorithm));
  c.push_back(text_col("variant", &PointRecord::variant));
  c.push_back(text_col("dtype", &PointRecord::dtype));
  c.push_back(int_col("bytes", &PointRecord::bytes));
  c.push_back(int_col("gpus", &PointRecord::gpus));
  return c;
}

PointKindInfo make_kind(PointKind k, const char* name, const char* table, int since,
                        std::vector<PointColumn> specific) {
  PointKindInfo info{k, name, table, since, common_columns(), {}};
  for (auto& c : specific) info.columns.push_back(std::move(c));
  info.columns.push_back(json_col("extra_json", &PointRecord::extra, true));
  return info;
}

std::vector<PointKindInfo> build_kinds() {
  std::vector<PointKindInfo> out;
  {
    std::vector<PointColumn> c = {text_col("engine", &PointRecord::engine), real_col("time_us", &PointRecord::time_us),
                                  real_col("algbw_GBps", &PointRecord::algbw_GBps),
                                  real_col("busbw_GBps", &PointRecord::busbw_GBps),
                                  real_col("max_link_bytes", &PointRecord::max_link_bytes)};
    for (int t = 0; t < static_cast<int>(Term::Count); ++t)
      c.push_back({breakdown_column(static_cast<Term>(t)), ColumnType::Real, true, "",
                   [t](const PointRecord& p) -> ColumnValue { return p.breakdown.ns[t]; },
                   [t](PointRecord& p, const ColumnValue& v) { p.breakdown.ns[t] = as_real(v); }});
    out.push_back(make_kind(PointKind::Collective, "collective", "collective_points", 1, std::move(c)));
  }
  out.push_back(make_kind(PointKind::Quant, "quant", "quant_points", 2,
                          {real_col("rel_l2", &PointRecord::rel_l2), real_col("sqnr_dB", &PointRecord::sqnr_dB),
                           real_col("max_abs", &PointRecord::max_abs),
                           real_col("payload_ratio", &PointRecord::payload_ratio),
                           real_col("error_variance_ratio", &PointRecord::error_variance_ratio),
                           real_col("max_link_bytes", &PointRecord::max_link_bytes)}));
  out.push_back(make_kind(PointKind::Inference, "inference", "inference_points", 2,
                          {text_col("engine", &PointRecord::engine), real_col("ttft_us", &PointRecord::ttft_us),
                           real_col("tpot_us", &PointRecord::tpot_us)}));
  out.push_back(make_kind(PointKind::Measured, "measured", "measured_points", 3,
                          {text_col("system", &PointRecord::system),
                           real_col("measured_us", &PointRecord::measured_us),
                           real_col("busbw_GBps", &PointRecord::busbw_GBps),
                           text_col("source", &PointRecord::source)}));
  // (What import keeps of a row besides those: calib/import.cc's measured_points.)
  out.back().from_extra = {extra_col("in_place_us", ColumnType::Real), extra_col("gpus_per_process", ColumnType::Integer),
                           extra_col("regime", ColumnType::Text), extra_col("notes", ColumnType::Text)};
  return out;
}

const char* sql_type(ColumnType t) {
  switch (t) {
    case ColumnType::Integer: return "INTEGER";
    case ColumnType::Real: return "REAL";
    case ColumnType::Text: return "TEXT";
  }
  return "TEXT";
}

}  // namespace

const std::vector<PointKindInfo>& point_kinds() {
  static const std::vector<PointKindInfo> kinds = build_kinds();
  return kinds;
}

const PointKindInfo& point_kind_info(PointKind k) {
  for (const auto& i : point_kinds())
    if (i.kind == k) return i;
  throw Error(fmt::format("kind: point kind {} is not registered", static_cast<int>(k)));
}

std::vector<const PointColumn*> exported_columns(PointKind k) {
  std::vector<const PointColumn*> out;
  const PointKindInfo& info = point_kind_info(k);
  for (const auto& c : info.columns)
    if (c.exported) out.push_back(&c);
  for (const auto& c : info.from_extra) out.push_back(&c);
  return out;
}

std::string create_table_sql(const PointKindInfo& k) {
  std::string s = fmt::format("CREATE TABLE {}(\n  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE", k.table);
  for (const auto& c : k.columns) {
    s += fmt::format(",\n  {} {}", c.name, sql_type(c.type));
    if (!c.sql_default.empty()) s += " " + c.sql_default;
  }
  return s + ",\n  PRIMARY KEY(run_id, idx)) WITHOUT ROWID;\n";
}

json to_json(const ColumnValue& v) {
  return std::visit(
      [](const auto& x) -> json {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::monostate>) return nullptr;
        else return x;
      },
      v);
}

}  // namespace scin
