// Exports of a run's points (CSV, JSON) and JSON forms of the store records.
#include <ostream>
#include <set>

#include <fmt/format.h>

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

std::vector<std::string> kind_columns(PointKind k) {
  std::vector<std::string> c = {"status", "message", "algorithm", "variant", "dtype", "bytes", "gpus"};
  switch (k) {
    case PointKind::Collective:
      for (const char* n : {"engine", "time_us", "algbw_GBps", "busbw_GBps", "max_link_bytes"}) c.push_back(n);
      for (int t = 0; t < static_cast<int>(Term::Count); ++t) c.push_back(breakdown_column(static_cast<Term>(t)));
      break;
    case PointKind::Quant:
      for (const char* n : {"rel_l2", "sqnr_dB", "max_abs", "payload_ratio", "error_variance_ratio", "max_link_bytes"})
        c.push_back(n);
      break;
    case PointKind::Inference:
      for (const char* n : {"engine", "ttft_us", "tpot_us"}) c.push_back(n);
      break;
  }
  return c;
}

nlohmann::json field(const PointRecord& p, const std::string& c) {
  if (c == "status") return to_string(p.status);
  if (c == "message") return p.message;
  if (c == "algorithm") return p.algorithm;
  if (c == "variant") return p.variant;
  if (c == "dtype") return p.dtype;
  if (c == "bytes") return p.bytes;
  if (c == "gpus") return p.gpus;
  if (c == "engine") return p.engine;
  if (c == "time_us") return p.time_us;
  if (c == "algbw_GBps") return p.algbw_GBps;
  if (c == "busbw_GBps") return p.busbw_GBps;
  if (c == "max_link_bytes") return p.max_link_bytes;
  if (c == "rel_l2") return p.rel_l2;
  if (c == "sqnr_dB") return p.sqnr_dB;
  if (c == "max_abs") return p.max_abs;
  if (c == "payload_ratio") return p.payload_ratio;
  if (c == "error_variance_ratio") return p.error_variance_ratio;
  if (c == "ttft_us") return p.ttft_us;
  if (c == "tpot_us") return p.tpot_us;
  for (int t = 0; t < static_cast<int>(Term::Count); ++t)
    if (c == breakdown_column(static_cast<Term>(t))) return p.breakdown.ns[t];
  return nullptr;
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
  for (auto& c : kind_columns(run.kind)) cols.push_back(c);
  return cols;
}

void export_csv(const RunInfo& run, const std::vector<PointRecord>& pts, std::ostream& out, bool header) {
  auto axes = axis_paths(run, pts);
  auto kcols = kind_columns(run.kind);
  std::string line = "index";
  for (auto& a : axes) line += "," + csv_cell(a);
  for (auto& c : kcols) line += "," + c;
  if (header) out << line << '\n';
  for (const auto& p : pts) {
    line = fmt::format("{}", p.index);
    for (auto& a : axes) {
      line += ',';
      if (p.axes.is_object() && p.axes.contains(a)) line += csv_cell(p.axes[a]);
    }
    for (auto& c : kcols) {
      line += ',';
      line += csv_cell(field(p, c));
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
  j["spec"] = r.spec;
  return j;
}

nlohmann::json to_json(const PointRecord& p) {
  nlohmann::json j;
  j["index"] = p.index;
  j["axes"] = p.axes;
  for (const auto& c : kind_columns(p.kind)) {
    if (c == "message" && p.message.empty()) continue;
    if (c == "variant" && p.variant.empty()) continue;
    j[c] = field(p, c);
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
