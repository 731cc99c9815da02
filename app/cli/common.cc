#include "cli/common.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "base/error.h"
#include "fabric/params.h"
#include "fabric/preset.h"

namespace scin::cli {

void add_fabric_options(CLI::App& cmd, FabricOptions& o) {
  cmd.add_option("--preset", o.preset, "fabric preset name or path to a preset .json (see `scin presets`)")
      ->capture_default_str();
  cmd.add_option("--gpus", o.gpus, "number of accelerators (overrides fabric.gpus)");
  cmd.add_option("--set", o.sets, "override a parameter: PATH=VALUE (see `scin params`); repeatable")
      ->allow_extra_args(false);
}

Config build_config(const FabricOptions& o) {
  Config cfg = load_preset(o.preset);
  if (o.gpus != 0) set_param(cfg, "fabric.gpus", static_cast<double>(o.gpus));
  for (const auto& a : o.sets) apply_assignment(cfg, a);
  validate(cfg);
  return cfg;
}

std::vector<std::string> split_list(const std::vector<std::string>& items) {
  std::vector<std::string> out;
  for (const auto& item : items) {
    std::size_t start = 0;
    while (start <= item.size()) {
      auto comma = item.find(',', start);
      std::string part = item.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      if (!part.empty()) out.push_back(part);
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }
  return out;
}

void check_format(const std::string& format, const std::vector<std::string>& allowed) {
  for (const auto& a : allowed)
    if (a == format) return;
  throw Error(fmt::format("format: '{}' is not supported; allowed {}", format, fmt::join(allowed, ", ")));
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

}  // namespace scin::cli
