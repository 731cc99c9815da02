#include "fabric/preset.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <fmt/format.h>
#include <unistd.h>

#include "base/error.h"
#include "fabric/params.h"

namespace scin {
namespace fs = std::filesystem;

namespace {

fs::path executable_dir() {
  std::error_code ec;
  fs::path p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path() : p.parent_path();
}

void flatten(const nlohmann::json& j, const std::string& prefix,
             std::vector<std::pair<std::string, nlohmann::json>>& out) {
  for (auto it = j.begin(); it != j.end(); ++it) {
    std::string path = prefix.empty() ? it.key() : prefix + "." + it.key();
    if (it.value().is_object()) flatten(it.value(), path, out);
    else out.emplace_back(path, it.value());
  }
}


fs::path preset_file(const std::string& name_or_path) {
  fs::path p(name_or_path);
  if (p.extension() == ".json" || name_or_path.find('/') != std::string::npos) {
    if (!fs::exists(p)) throw Error(fmt::format("preset: file '{}' does not exist", name_or_path));
    return p;
  }
  for (const auto& info : list_presets())
    if (info.name == name_or_path) return info.file;
  std::vector<std::string> names;
  for (const auto& info : list_presets()) names.push_back(info.name);
  throw Error(fmt::format("preset: unknown preset '{}'; known: {}", name_or_path, fmt::join(names, ", ")));
}

}  // namespace

nlohmann::json read_json_file(const fs::path& file) {
  std::ifstream in(file);
  if (!in) throw Error(fmt::format("{}: cannot open file", file.string()));
  try {
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::parse_error& e) {
    throw Error(fmt::format("{}: malformed JSON: {}", file.string(), e.what()));
  }
}

fs::path resource_dir() {
  std::vector<fs::path> candidates;
  if (const char* env = std::getenv("SCIN_RESOURCE_DIR"); env && *env) candidates.emplace_back(env);
#ifdef SCIN_SOURCE_RESOURCE_DIR
  candidates.emplace_back(SCIN_SOURCE_RESOURCE_DIR);
#endif
  fs::path exe = executable_dir();
  if (!exe.empty()) {
    candidates.push_back(exe / "../share/scin-explorer");
    candidates.push_back(exe / "../resources");
    candidates.push_back(exe / "../../resources");
  }
  for (const auto& c : candidates) {
    std::error_code ec;
    if (fs::is_directory(c / "presets", ec)) return fs::weakly_canonical(c);
  }
  throw Error("resources: no presets/ folder found; set SCIN_RESOURCE_DIR to the project's resources/ folder");
}

std::vector<PresetInfo> list_presets() {
  std::vector<PresetInfo> out;
  for (const auto& e : fs::directory_iterator(resource_dir() / "presets")) {
    if (e.path().extension() != ".json") continue;
    PresetInfo info;
    info.name = e.path().stem().string();
    info.file = e.path();
    try {
      auto j = read_json_file(e.path());
      info.description = j.value("description", "");
    } catch (const Error& err) {
      info.description = std::string("(unreadable: ") + err.what() + ")";
    }
    out.push_back(std::move(info));
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  return out;
}

Config config_from_json(const nlohmann::json& j, const std::string& origin) {
  if (!j.is_object()) throw Error(fmt::format("{}: expected a JSON object at the top level", origin));
  Config cfg;
  std::vector<std::pair<std::string, nlohmann::json>> values;
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string& k = it.key();
    if (k == "name") {
      if (!it.value().is_string()) throw Error(fmt::format("{}: name: expected a string", origin));
      cfg.name = it.value().get<std::string>();
    } else if (k == "description") {
      if (!it.value().is_string()) throw Error(fmt::format("{}: description: expected a string", origin));
      cfg.description = it.value().get<std::string>();
    } else if (k == "sources" || k == "notes" || k == "calibration" || k == "$schema") {
      continue;
    } else if (it.value().is_object()) {
      flatten(it.value(), k, values);
    } else {
      values.emplace_back(k, it.value());
    }
  }
  for (const auto& [path, value] : values) {
    if (!find_param(path))
      throw Error(fmt::format("{}: unknown parameter '{}'; `scin params` lists them all", origin, path));
    try {
      set_param(cfg, path, value);
    } catch (const Error& e) {
      throw Error(fmt::format("{}: {}", origin, e.what()));
    }
  }
  try {
    validate(cfg);
  } catch (const Error& e) {
    throw Error(fmt::format("{}: {}", origin, e.what()));
  }
  return cfg;
}

nlohmann::json config_to_json(const Config& cfg) {
  nlohmann::json j;
  j["name"] = cfg.name;
  j["description"] = cfg.description;
  for (const auto& p : params()) {
    nlohmann::json* node = &j;
    std::string path = p.path;
    std::size_t start = 0, dot;
    while ((dot = path.find('.', start)) != std::string::npos) {
      node = &(*node)[path.substr(start, dot - start)];
      start = dot + 1;
    }
    std::string leaf = path.substr(start);
    std::visit([&](const auto& v) { (*node)[leaf] = v; }, p.get(cfg));
  }
  return j;
}

Config load_preset(const std::string& name_or_path) {
  fs::path f = preset_file(name_or_path);
  Config cfg = config_from_json(read_json_file(f), f.filename().string());
  if (cfg.name == "custom" || cfg.name.empty()) cfg.name = f.stem().string();
  return cfg;
}

std::map<std::string, std::string> preset_sources(const std::string& name_or_path) {
  auto j = read_json_file(preset_file(name_or_path));
  std::map<std::string, std::string> out;
  if (j.contains("sources") && j["sources"].is_object())
    for (auto it = j["sources"].begin(); it != j["sources"].end(); ++it)
      if (it.value().is_string()) out[it.key()] = it.value().get<std::string>();
  return out;
}

}  // namespace scin
