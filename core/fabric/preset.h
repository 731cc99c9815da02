// Presets: named Configs stored as JSON under resources/presets/.
//
// File format: an object with "name", "description", "sources" (an object from
// dotted path to the public source of that figure) and the parameters as nested
// objects mirroring their dotted paths ({"links": {"bandwidth_GBps": 450}}).
// Parameters a preset leaves out take the registry default.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fabric/config.h"

namespace scin {

struct PresetInfo {
  std::string name;
  std::string description;
  std::filesystem::path file;
  bool user = false;   // a user preset (user_preset_dir()), not a shipped one
};

/// Directory holding resources (presets/, models/, sweeps/). Looks at the
/// SCIN_RESOURCE_DIR environment variable, then ../share/scin-explorer next to
/// the executable (an installed program), then the build's source tree.
/// Throws Error if none exists.
std::filesystem::path resource_dir();

/// Shipped presets (sorted by name), then the user's presets.
std::vector<PresetInfo> list_presets();

/// The user's presets: $XDG_CONFIG_HOME/scin-explorer/presets (default ~/.config/...).
std::filesystem::path user_preset_dir();
/// Saves `cfg` as user preset `name` (1-64 of [A-Za-z0-9-_.]), loadable by that
/// name afterwards; refuses a shipped preset's name, and an existing user preset
/// unless `overwrite`. Returns the file written.
std::filesystem::path save_user_preset(const Config& cfg, const std::string& name, bool overwrite = false);

/// Loads a preset by name (e.g. "hgx-h200-8") or by path to a .json file.
/// The file is read on every call; a text parsed before under the same path is
/// not parsed again (thread-safe).
Config load_preset(const std::string& name_or_path);

/// Builds a Config from preset JSON; `origin` names the file in error messages.
Config config_from_json(const nlohmann::json& j, const std::string& origin = "preset");

/// Flattens a nested parameter object under `prefix` ("accelerator") into dotted
/// paths and values, iteratively; a nested object whose path is not a prefix of a
/// registry path is an error naming `origin`.
std::vector<std::pair<std::string, nlohmann::json>> flatten_params(const nlohmann::json& obj, const std::string& prefix,
                                                                   const std::string& origin);

/// Serialises every registry parameter (nested objects), plus name and description.
nlohmann::json config_to_json(const Config& cfg);

/// The "sources" object of a preset file (path -> source), empty if absent.
std::map<std::string, std::string> preset_sources(const std::string& name_or_path);

}  // namespace scin
