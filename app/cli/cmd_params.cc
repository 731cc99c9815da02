// `scin params`: every registry parameter with type, unit, range, default and help.
#include <fmt/format.h>

#include "cli/commands.h"
#include "cli/common.h"
#include "fabric/params.h"
#include "fabric/preset.h"

namespace scin::cli {

void add_params_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("params", "list every fabric and algorithm parameter (the paths --set and sweeps accept)");
  static std::string preset;
  static std::string format = "table";
  cmd->add_option("--preset", preset, "show values from this preset next to the defaults");
  cmd->add_option("--format", format, "table|csv|json")->capture_default_str();
  cmd->callback([] {
    check_format(format, {"table", "csv", "json"});
    const Config defaults;
    Config chosen = preset.empty() ? defaults : load_preset(preset);
    if (format == "json") {
      nlohmann::json j = nlohmann::json::array();
      for (const auto& p : params()) {
        nlohmann::json e{{"path", p.path}, {"type", to_string(p.type)}, {"unit", p.unit},
                         {"label", p.label}, {"help", p.help}, {"range", format_range(p)},
                         {"default", get_param_text(defaults, p.path)}};
        if (!preset.empty()) e["value"] = get_param_text(chosen, p.path);
        j.push_back(e);
      }
      fmt::print("{}\n", j.dump(2));
      return;
    }
    if (format == "csv") {
      fmt::print("path,type,unit,range,default{},help\n", preset.empty() ? "" : ",value");
      for (const auto& p : params())
        fmt::print("{},{},{},{},{}{},{}\n", p.path, to_string(p.type), p.unit, csv_field(format_range(p)),
                   csv_field(get_param_text(defaults, p.path)),
                   preset.empty() ? "" : "," + csv_field(get_param_text(chosen, p.path)), csv_field(p.help));
      return;
    }
    std::string group;
    for (const auto& p : params()) {
      if (p.group() != group) {
        group = p.group();
        fmt::print("\n[{}]\n", group);
      }
      std::string value = get_param_text(preset.empty() ? defaults : chosen, p.path);
      fmt::print("  {:<36} {:>14} {:<8} {}\n", p.path, value, p.unit, p.help);
      fmt::print("  {:<36} {:>14} {:<8} allowed {}\n", "", "", "", format_range(p));
    }
  });
}

}  // namespace scin::cli
