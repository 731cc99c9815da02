// Exports of a run's points (CSV, JSON) and JSON forms of the store records.
#include <ostream>
#include <set>

#include <fmt/format.h>

#include "store/point_kinds.h"
#include "store/store.h"
#include "base/csv.h"

namespace scin {

namespace {

// Axis paths in the spec's order (JSON objects sort their keys, so the order
// comes from the spec, not from a point's axes object).
std::vector<std::string> axis_paths(const RunInfo& run, const std::vector<PointRecord>& pts) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  auto add = [&](const std::string& p) {
    if (seen.insert(p).second) out.push_back(p);
  };
  if (run.spec.is_object() && run.spec.contains("axes") && run.spec["axes"].is_array()) {
    for (const auto& a : run.spec["axes"]) {
      if (a.contains("path") && a["path"].is_string()) add(a["path"].get<std::string>());
      if (a.contains("zip") && a["zip"].is_array())
        for (const auto& m : a["zip"])
          if (m.contains("path") && m["path"].is_string()) add(m["path"].get<std::string>());
    }
  }
  for (const auto& p : pts)
    if (p.axes.is_object())
      for (auto it = p.axes.begin(); it != p.axes.end(); ++it) add(it.key());
  return out;
}

std::string csv_cell(const nlohmann::json& v) {
  if (v.is_null()) return "";
  if (v.is_string()) return csv_field(v.get<std::string>());
  if (v.is_number_float()) return csv_field(fmt::format("{}", v.get<double>()));
  return csv_field(v.dump());
}

}  // namespace

std::vector<std::string> export_columns(const RunInfo& run, const std::vector<PointRecord>& pts) {
  std::vector<std::string> cols = {"index"};
  for (auto& a : axis_paths(run, pts)) cols.push_back(a);
  for (const auto* c : exported_columns(run.kind)) cols.push_back(c->name);
  return cols;
}

void export_csv(const RunInfo& run, const std::vector<PointRecord>& pts, std::ostream& out, bool header) {
  auto axes = axis_paths(run, pts);
  auto kcols = exported_columns(run.kind);
  std::string line = "index";
  for (auto& a : axes) line += "," + csv_cell(a);
  for (const auto* c : kcols) line += "," + c->name;
  if (header) out << line << '\n';
  for (const auto& p : pts) {
    line = fmt::format("{}", p.index);
    for (auto& a : axes) {
      line += ',';
      if (p.axes.is_object() && p.axes.contains(a)) line += csv_cell(p.axes[a]);
    }
    for (const auto* c : kcols) {
      line += ',';
      line += csv_cell(to_json(c->get(p)));
    }
    out << line << '\n';
  }
}

nlohmann::json to_json(const RunInfo& r) {
  nlohmann::json j;
  j["id"] = r.id;
  j["experiment"] = r.experiment;
  j["name"] = r.name;
  j["notes"] = r.notes;
  j["tags"] = r.tags;
  j["kind"] = to_string(r.kind);
  j["engine"] = r.engine;
  j["status"] = to_string(r.status);
  j["tool_version"] = r.tool_version;
  j["git_revision"] = r.git_revision;
  j["started_at"] = r.started_at;
  j["finished_at"] = r.finished_at;
  j["points_total"] = r.points_total;
  j["points_stored"] = r.points_stored;
  j["points_skipped"] = r.points_skipped;
  j["threads"] = r.threads;
  j["host"] = r.host;
  j["pid"] = r.pid;
  j["ranks"] = r.ranks;
  if (!r.problem.empty()) j["problem"] = r.problem;
  j["config_recorded"] = r.config_recorded();
  j["spec"] = r.spec;
  j["config"] = r.config;
  return j;
}

nlohmann::json to_json(const PointRecord& p) {
  nlohmann::json j;
  j["index"] = p.index;
  j["axes"] = p.axes;
  for (const auto* c : exported_columns(p.kind)) {
    if (c->name == "message" && p.message.empty()) continue;
    if (c->name == "variant" && p.variant.empty()) continue;
    j[c->name] = to_json(c->get(p));
  }
  if (!p.extra.is_null()) j["extra"] = p.extra;
  return j;
}

nlohmann::json export_json(const RunInfo& run, const std::vector<PointRecord>& pts) {
  nlohmann::json j;
  j["run"] = to_json(run);
  j["columns"] = export_columns(run, pts);
  nlohmann::json arr = nlohmann::json::array();
  for (const auto& p : pts) arr.push_back(to_json(p));
  j["points"] = std::move(arr);
  return j;
}

}  // namespace scin
