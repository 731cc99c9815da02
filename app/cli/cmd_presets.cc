// `scin presets`: the fabric presets with a one-line description.
#include <cstdio>
#include <fmt/format.h>

#include "cli/commands.h"
#include "fabric/preset.h"

namespace scin::cli {

void add_presets_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("presets", "list the fabric presets");
  static bool json = false;
  cmd->add_flag("--json", json, "print the presets' full parameter sets as JSON");
  cmd->callback([] {
    auto list = list_presets();
    if (json) {
      nlohmann::json j = nlohmann::json::array();
      for (const auto& p : list) j.push_back(config_to_json(load_preset(p.name)));
      fmt::print("{}\n", j.dump(2));
      return;
    }
    std::size_t w = 4;
    for (const auto& p : list) w = std::max(w, p.name.size());
    for (const auto& p : list) fmt::print("{:<{}}  {}\n", p.name, w, p.description);
  });
}

}  // namespace scin::cli
