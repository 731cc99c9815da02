// Helpers shared by the `scin` subcommands: building a Config from
// --preset/--gpus/--set, splitting lists, and checking --format.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "fabric/config.h"

namespace scin::cli {

/// Options every fabric-using subcommand accepts.
struct FabricOptions {
  std::string preset = "hgx-h200-8";
  int gpus = 0;                       // 0: keep the preset's
  std::vector<std::string> sets;      // PATH=VALUE
};

/// Adds --preset, --gpus and --set to `cmd`.
void add_fabric_options(CLI::App& cmd, FabricOptions& o);

/// Loads the preset, applies --gpus and --set, validates. Throws scin::Error.
Config build_config(const FabricOptions& o);

/// Splits "a,b,c" (and repeated options) into names.
std::vector<std::string> split_list(const std::vector<std::string>& items);

/// Throws scin::Error unless `format` is one of `allowed`.
void check_format(const std::string& format, const std::vector<std::string>& allowed);

/// Quotes a CSV field when needed.
std::string csv_field(const std::string& s);

}  // namespace scin::cli
