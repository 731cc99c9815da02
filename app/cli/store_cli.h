// Helpers shared by the database subcommands (cmd_store.cc, cmd_history.cc).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>

#include <CLI/CLI.hpp>

#include "store/store.h"

namespace scin::cli {

/// A database path: without an extension ".scindb" is added unless a file of that exact name exists.
std::filesystem::path db_path(const std::string& text);
/// Opens an existing database (never creates); warns on stderr when it is damaged (then read-only).
Store open_existing(const std::string& text, Access access = Access::Auto, bool check = false);
/// "FILE:RUN" -> (FILE, RUN); `flag` names the option in errors.
std::pair<std::filesystem::path, std::int64_t> parse_run_ref(const std::string& text, const std::string& flag);
/// Prints a run's recorded configuration (or that it was not recorded).
void print_config(const RunInfo& r);

/// `scin diff | compare | check | recover` (cmd_history.cc).
void add_history_commands(CLI::App& app);

}  // namespace scin::cli
