// The `scin` subcommands. Each add_*_command registers one subcommand (its
// options and its callback) on the top-level CLI11 app. Callbacks throw
// scin::Error for bad input; scin_main.cc turns that into a one-line error
// and a non-zero exit code.
#pragma once

#include <CLI/CLI.hpp>

namespace scin::cli {

void add_presets_command(CLI::App& app);   // cmd_presets.cc
void add_params_command(CLI::App& app);    // cmd_params.cc
void add_run_command(CLI::App& app);       // cmd_run.cc
void add_bench_command(CLI::App& app);     // cmd_bench.cc   (packet engine area)
void add_quant_command(CLI::App& app);     // cmd_quant.cc   (numerics area)
void add_store_commands(CLI::App& app);    // cmd_store.cc   (sweep, runs, show, export, delete)
void add_infer_command(CLI::App& app);     // cmd_infer.cc   (inference area)
void add_calib_commands(CLI::App& app);    // cmd_calib.cc   (calibrate, validate, import)

}  // namespace scin::cli
