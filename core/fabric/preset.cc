#include "fabric/preset.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <mutex>
#include <fmt/format.h>
#include <unistd.h>

#include "base/error.h"
#include "base/json_input.h"
#include "fabric/params.h"

namespace scin {
namespace fs = std::filesystem;

namespace {

fs::path executable_dir() {
  std::error_code ec;
  fs::path p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path() : p.parent_path();
}

// Whether some registry path starts with `prefix` + ".".
bool is_param_group(const std::string& prefix) {
  for (const auto& p : params())
    if (p.path.size() > prefix.size() && p.path.compare(0, prefix.size(), prefix) == 0 && p.path[prefix.size()] == '.')
      return true;
  return false;
}

std::vector<PresetInfo> preset_files();

fs::path preset_file(const std::string& name_or_path) {
  fs::path p(name_or_path);
  if (p.extension() == ".json" || name_or_path.find('/') != std::string::npos) {
    std::error_code ec;
    if (!fs::exists(p, ec)) throw Error(fmt::format("preset: file '{}' does not exist", name_or_path));
    if (fs::is_directory(p, ec)) throw Error(fmt::format("preset: '{}' is a directory, not a preset .json file", name_or_path));
    return p;
  }
  const std::vector<PresetInfo> files = preset_files();
  for (const auto& info : files)
    if (info.name == name_or_path) return info.file;
  std::vector<std::string> names;
  for (const auto& info : files) names.push_back(info.name);
  throw Error(fmt::format("preset: unknown preset '{}'; known: {}", name_or_path, fmt::join(names, ", ")));
}

}  // namespace

// Flattens nested objects into (dotted path, value), iteratively. A nested object is
// only entered when its path is a prefix of a registry path, so the paths built are
// never longer than the longest parameter path (no quadratic strings, no recursion).
std::vector<std::pair<std::string, nlohmann::json>> flatten_params(const nlohmann::json& obj, const std::string& prefix,
                                                                   const std::string& origin) {
  std::vector<std::pair<std::string, nlohmann::json>> out;
  std::vector<std::pair<std::string, const nlohmann::json*>> todo{{prefix, &obj}};
  while (!todo.empty()) {
    auto [path0, node] = todo.back();
    todo.pop_back();
    for (auto it = node->begin(); it != node->end(); ++it) {
      std::string path = path0.empty() ? it.key() : path0 + "." + it.key();
      if (!it.value().is_object()) {
        out.emplace_back(std::move(path), it.value());
      } else if (is_param_group(path)) {
        todo.emplace_back(std::move(path), &it.value());
      } else {
        throw Error(fmt::format("{}: unknown parameter group '{}'; `scin params` lists them all", origin,
                                path.size() > 80 ? path.substr(0, 80) + "..." : path));
      }
    }
  }
  return out;
}

fs::path resource_dir() {
  std::vector<fs::path> candidates;
  if (const char* env = std::getenv("SCIN_RESOURCE_DIR"); env && *env) candidates.emplace_back(env);
  // An installed program uses its own resources, even where the source tree
  // it was built from still exists.
  fs::path exe = executable_dir();
  if (!exe.empty()) candidates.push_back(exe / "../share/scin-explorer");
#ifdef SCIN_SOURCE_RESOURCE_DIR
  candidates.emplace_back(SCIN_SOURCE_RESOURCE_DIR);
#endif
  if (!exe.empty()) {
    candidates.push_back(exe / "../resources");
    candidates.push_back(exe / "../../resources");
  }
  for (const auto& c : candidates) {
    std::error_code ec;
    if (fs::is_directory(c / "presets", ec)) return fs::weakly_canonical(c);
  }
  throw Error("resources: no presets/ folder found; set SCIN_RESOURCE_DIR to the project's resources/ folder");
}

fs::path user_preset_dir() {
  if (const char* x = std::getenv("XDG_CONFIG_HOME"); x && *x && fs::path(x).is_absolute())
    return fs::path(x) / "scin-explorer" / "presets";
  const char* home = std::getenv("HOME");
  if (!home || !*home) throw Error("presets: neither XDG_CONFIG_HOME nor HOME is set; no user preset folder");
  return fs::path(home) / ".config" / "scin-explorer" / "presets";
}

fs::path save_user_preset(const Config& cfg, const std::string& name, bool overwrite) {
  if (name.empty() || name.size() > 64 ||
      name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.") != std::string::npos ||
      name[0] == '.')
    throw Error(fmt::format("preset name '{}': use 1 to 64 letters, digits, '-', '_' or '.'", name));
  std::error_code ec;
  if (fs::exists(resource_dir() / "presets" / (name + ".json"), ec))
    throw Error(fmt::format("preset name '{}': a shipped preset has that name; choose another", name));
  validate(cfg);
  const fs::path dir = user_preset_dir();
  fs::create_directories(dir, ec);
  if (ec) throw Error(fmt::format("{}: cannot create the user preset folder: {}", dir.string(), ec.message()));
  const fs::path file = dir / (name + ".json");
  if (!overwrite && fs::exists(file, ec))
    throw Error(fmt::format("{}: a user preset '{}' exists already", file.string(), name));
  nlohmann::json j = config_to_json(cfg);
  j["name"] = name;
  // Write a temporary file and rename it: an interrupted save never leaves half a preset.
  const fs::path tmp = dir / ("." + name + ".json.tmp");
  {
    std::ofstream out(tmp);
    out << j.dump(2) << '\n';
    if (!out.flush()) throw Error(fmt::format("{}: cannot write the preset", tmp.string()));
  }
  fs::rename(tmp, file, ec);
  if (ec) throw Error(fmt::format("{}: cannot save the preset: {}", file.string(), ec.message()));
  return file;
}

namespace {

// The preset files, shipped ones by name then the user's (a shipped preset keeps
// its name), without reading them: finding one preset's file does not parse all.
std::vector<PresetInfo> preset_files() {
  std::vector<PresetInfo> out;
  // User presets ($XDG_CONFIG_HOME/scin-explorer/presets) after the shipped ones.
  std::vector<fs::path> user;
  std::error_code uec;
  try {
    if (fs::is_directory(user_preset_dir(), uec))
      for (const auto& e : fs::directory_iterator(user_preset_dir(), uec))
        if (e.path().extension() == ".json" && e.path().filename().string()[0] != '.') user.push_back(e.path());
  } catch (const Error&) {
  }
  std::sort(user.begin(), user.end());
  for (const auto& e : fs::directory_iterator(resource_dir() / "presets")) {
    if (e.path().extension() != ".json") continue;
    PresetInfo info;
    info.name = e.path().stem().string();
    info.file = e.path();
    out.push_back(std::move(info));
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  const std::size_t shipped = out.size();
  for (const auto& f : user) {
    PresetInfo info;
    info.name = f.stem().string();
    info.file = f;
    info.user = true;
    bool shadowed = false;
    for (std::size_t i = 0; i < shipped; ++i) shadowed |= out[i].name == info.name;
    if (!shadowed) out.push_back(std::move(info));
  }
  return out;
}

}  // namespace

std::vector<PresetInfo> list_presets() {
  std::vector<PresetInfo> out = preset_files();
  for (auto& info : out) {
    try {
      auto j = read_json_document(info.file);
      if (info.user) {
        info.description = j.value("description", "");
      } else if (const auto* d = j.is_object() ? json_member(j, "description", info.file.string()) : nullptr) {
        info.description = json_string(*d, "description");
      }
    } catch (const Error& err) {
      info.description = std::string("(unreadable: ") + err.what() + ")";
    }
  }
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
      for (auto& kv : flatten_params(it.value(), k, origin)) values.push_back(std::move(kv));
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
  // One process loads a preset several times (a command's configuration, its
  // sweep spec's check, the compiled sweep), and a calibrated preset is tens of
  // KB of JSON (its provenance, which parsing costs ~1 ms): a file whose text is
  // the one parsed last time under that path gives that Config again. The
  // file is read each time, so an edited preset is never served stale.
  struct Entry {
    std::string text;
    Config cfg;
  };
  static std::mutex mutex;
  static std::map<std::string, Entry> cache;
  std::error_code aec;
  const std::string key = fs::absolute(f, aec).lexically_normal().string();
  std::string text = read_text_file(f, 64ull << 20, "JSON file");
  {
    std::lock_guard lock(mutex);
    auto it = cache.find(key);
    if (it != cache.end() && it->second.text == text) return it->second.cfg;
  }
  JsonParseOptions opt;
  opt.skip_top_level = {"sources", "notes", "calibration"};   // config_from_json ignores them
  Config cfg = config_from_json(parse_json_text(text, f.string(), opt), f.filename().string());
  if (cfg.name == "custom" || cfg.name.empty()) cfg.name = f.stem().string();
  std::lock_guard lock(mutex);
  if (cache.size() >= 64) cache.clear();   // many distinct files: keep it small
  cache[key] = Entry{std::move(text), cfg};
  return cfg;
}

std::map<std::string, std::string> preset_sources(const std::string& name_or_path) {
  auto j = read_json_document(preset_file(name_or_path));
  std::map<std::string, std::string> out;
  if (j.contains("sources") && j["sources"].is_object())
    for (auto it = j["sources"].begin(); it != j["sources"].end(); ++it)
      if (it.value().is_string()) out[it.key()] = it.value().get<std::string>();
  return out;
}

}  // namespace scin
