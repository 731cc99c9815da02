#include "calib/holdout.h"

#include <algorithm>

#include <fmt/format.h>

#include "base/error.h"
#include "fabric/params.h"

namespace scin {

Config uncalibrated_config(const Config& cfg, const nlohmann::json& calibration) {
  Config c = cfg;
  if (!calibration.is_object() || !calibration.contains("parameters")) return c;
  const auto& ps = calibration["parameters"];
  if (!ps.is_array()) throw Error("calibration.parameters: expected a list");
  for (std::size_t i = 0; i < ps.size(); ++i) {
    const auto& p = ps[i];
    if (!p.is_object() || !p.contains("path") || !p["path"].is_string() || !p.contains("before") ||
        !p["before"].is_number())
      throw Error(fmt::format("calibration.parameters[{}]: expected {{\"path\": TEXT, \"before\": NUMBER}}", i));
    const std::string path = p["path"].get<std::string>();
    if (!find_param(path)) throw Error(fmt::format("calibration.parameters[{}].path: unknown parameter '{}'", i, path));
    set_param(c, path, p["before"].get<double>());
  }
  return c;
}

HoldoutReport leave_one_system_out(const Config& start, const std::vector<MeasuredRow>& rows, const FitOptions& opts) {
  std::vector<std::string> groups;
  for (const auto& r : rows)
    if (std::find(groups.begin(), groups.end(), r.system) == groups.end()) groups.push_back(r.system);
  if (groups.size() < 2)
    throw Error(fmt::format("holdout: the selected rows come from {} system(s); leaving one out needs at least two",
                            groups.size()));
  HoldoutReport rep;
  for (const auto& g : groups) {
    HoldoutFold f;
    f.held_out = g;
    std::vector<MeasuredRow> train, test;
    for (const auto& r : rows) (r.system == g ? test : train).push_back(r);
    f.before = validate_rows(start, test);
    try {
      const FitResult fr = fit(start, train, opts);
      f.train_rows = fr.rows_used;
      f.params = fr.params;
      f.offsets_us = fr.offsets_us;
      f.after = validate_rows(fr.cfg, test);   // no offset: the held-out harness was never seen
    } catch (const Error& e) {
      f.error = e.what();
    }
    if (f.error.empty()) {
      for (const auto& e : f.before.rows) rep.before.rows.push_back(e);
      for (const auto& e : f.after.rows) rep.after.rows.push_back(e);
    }
    rep.folds.push_back(std::move(f));
  }
  summarise(rep.before);
  summarise(rep.after);
  return rep;
}

nlohmann::json to_json(const HoldoutReport& r) {
  nlohmann::json j;
  j["protocol"] = "leave-one-system-out cross-validation within the given rows (not independent validation)";
  j["before"] = to_json(r.before, false);
  j["after"] = to_json(r.after, false);
  j["folds"] = nlohmann::json::array();
  for (const auto& f : r.folds) {
    nlohmann::json x = {{"held_out", f.held_out}, {"train_rows", f.train_rows}};
    if (!f.error.empty()) x["error"] = f.error;
    for (const auto& p : f.params)
      if (p.fitted) x["fitted"][p.path] = p.value;
    for (const auto& [k, v] : f.offsets_us) x["harness_offsets_us"][k] = v;
    x["before"] = to_json(f.before, false);
    x["after"] = to_json(f.after, true);
    j["folds"].push_back(std::move(x));
  }
  return j;
}

}  // namespace scin
