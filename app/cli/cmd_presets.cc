// `scin presets`: the fabric presets with a one-line description.
#include <cstdio>
#include <fmt/format.h>

#include "cli/commands.h"
#include "cli/common.h"
#include "fabric/preset.h"

namespace scin::cli {

void add_presets_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("presets", "list the fabric presets");
  static std::string format = "table";
  static bool json = false;
  static std::string save;
  static bool overwrite = false;
  static FabricOptions fabric;
  cmd->add_option("--format", format, "table (name and description) | json (every preset's full parameter set)")
      ->capture_default_str();
  // Deprecated: one name per concept across commands is --format json.
  cmd->add_flag("--json", json, "deprecated alias of --format json")->group("");
  cmd->add_option("--save", save, "save --preset with --gpus/--set applied as user preset NAME "
                                  "($XDG_CONFIG_HOME/scin-explorer/presets)");
  cmd->add_flag("--overwrite", overwrite, "with --save: replace an existing user preset");
  add_fabric_options(*cmd, fabric);
  cmd->callback([] {
    if (!save.empty()) {
      auto file = save_user_preset(build_config(fabric), save, overwrite);
      fmt::print("saved user preset '{}' to {}\n", save, file.string());
      return;
    }
    if (json) {
      std::fprintf(stderr, "scin: warning: `presets --json` is deprecated; use `--format json`\n");
      format = "json";
    }
    check_format(format, {"table", "json"});
    auto list = list_presets();
    if (format == "json") {
      nlohmann::json j = nlohmann::json::array();
      for (const auto& p : list) j.push_back(config_to_json(load_preset(p.name)));
      fmt::print("{}\n", j.dump(2));
      return;
    }
    std::size_t w = 4;
    for (const auto& p : list) w = std::max(w, p.name.size());
    for (const auto& p : list)
      fmt::print("{:<{}}  {}{}\n", p.name, w, p.user ? "(user) " : "", p.description);
  });
}

}  // namespace scin::cli
