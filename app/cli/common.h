// Helpers shared by the `scin` subcommands: building a Config from
// --preset/--gpus/--set, splitting lists, and checking --format.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "fabric/config.h"
#include "sweep/builders.h"

namespace scin::cli {

/// Options every fabric-using subcommand accepts.
struct FabricOptions {
  std::string preset = "hgx-h200-8";
  std::string gpus;                   // empty: keep the preset's
  std::vector<std::string> sets;      // PATH=VALUE
};

/// Adds --preset, --gpus and --set to `cmd`.
void add_fabric_options(CLI::App& cmd, FabricOptions& o);

/// --gpus checked against fabric.gpus' range (0 when not given); throws scin::Error.
int gpus_option(const FabricOptions& o);
/// The fabric options as the sweep builders take them (--gpus range-checked).
FabricChoice fabric_choice(const FabricOptions& o);

/// Loads the preset, applies --gpus and --set, validates. Throws scin::Error.
Config build_config(const FabricOptions& o);

/// Splits "a,b,c" (and repeated options) into names. An empty name (",", "a,,b",
/// "") is an error naming `flag`: an option that was given must name something;
/// so is a name given twice (it would run, print and store the same thing twice).
std::vector<std::string> split_list(const std::vector<std::string>& items, const std::string& flag);

/// Parses a whole number for `flag` in [lo, hi]: "--gpus: 0 is out of range 2..1024",
/// "--tp: 2147483648 is out of range 1..1024", "-f: 'x' is not an integer".
std::int64_t parse_integer(const std::string& text, const std::string& flag, std::int64_t lo, std::int64_t hi);

/// Throws "FLAG: must not be empty" when an option that was given is "" (CLI11:
/// call it when `opt->count() > 0`).
void require_not_empty(const std::string& value, const std::string& flag);

/// Throws scin::Error unless `format` is one of `allowed`.
void check_format(const std::string& format, const std::vector<std::string>& allowed);

/// Quotes a CSV field when needed.
std::string csv_field(const std::string& s);

}  // namespace scin::cli
