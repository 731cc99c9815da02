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
};

/// Directory holding resources (presets/, models/, sweeps/). Looks at the
/// SCIN_RESOURCE_DIR environment variable, then ../share/scin-explorer next to
/// the executable (an installed program), then the build's source tree.
/// Throws Error if none exists.
std::filesystem::path resource_dir();

std::vector<PresetInfo> list_presets();

/// Loads a preset by name (e.g. "hgx-h200-8") or by path to a .json file.
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
