// scin: the SCIN Explorer command-line tool.
#include <malloc.h>

#include <cstdio>
#include <exception>
#include <string>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/commands.h"
#include "base/cancel.h"
#include "base/error.h"
#include "base/huge_pages.h"
#include "base/version.h"

int main(int argc, char** argv) {
  // Keep freed memory for reuse instead of returning it to the kernel: quant and
  // sweeps allocate and free buffers of megabytes per algorithm or point, and
  // each fresh mapping costs page faults (docs/performance.md: `scin quant`'s
  // system time 0.47 -> 0.2 s). 32 MiB is the largest mmap threshold glibc takes.
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  mallopt(M_TOP_PAD, 64 << 20);
  // (A command that will allocate much may restart once with the heap on huge pages: base/huge_pages.h.)
  scin::remember_process_args(argc, argv);
  CLI::App app{"scin: All-Reduce design-space explorer for in-network collectives "
               "(ring, one-shot, two-shot, NVLS, SCIN, SCIN+INQ)"};
  app.set_version_flag("--version", fmt::format("scin {} ({})", scin::version(), scin::git_revision()));
  app.require_subcommand(1);
  scin::cli::add_presets_command(app);
  scin::cli::add_params_command(app);
  scin::cli::add_run_command(app);
  scin::cli::add_bench_command(app);
  scin::cli::add_quant_command(app);
  scin::cli::add_store_commands(app);
  scin::cli::add_infer_command(app);
  scin::cli::add_calib_commands(app);
  // An unknown first word names itself and lists the commands (CLI11 would only
  // say "the following argument was not expected").
  if (argc > 1 && argv[1][0] != '-') {
    std::string names;
    bool known = false;
    for (const CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
      known = known || sub->check_name(argv[1]);
      names += (names.empty() ? "" : ", ") + sub->get_name();
    }
    if (!known) {
      std::fprintf(stderr, "scin: error: unknown command '%s'; valid commands: %s (see scin --help)\n", argv[1],
                   names.c_str());
      return 2;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // A flag the command lacks, a missing value or argument: bad input like any other, one
    // line and status 2 (CLI11's own codes, 106-109, and its unprefixed lines said otherwise).
    std::string what = e.what();
    while (!what.empty() && (what.back() == '\n' || what.back() == ' ')) what.pop_back();
    const bool command = argc > 1 && argv[1][0] != '-';
    std::fprintf(stderr, "scin: error: %s (see scin %s--help)\n", what.c_str(),
                 command ? (std::string(argv[1]) + " ").c_str() : "");
    return 2;
  } catch (const scin::Error& e) {
    std::fprintf(stderr, "scin: error: %s\n", e.what());
    return 2;
  } catch (const scin::Cancelled&) {
    std::fprintf(stderr, "scin: cancelled\n");
    return 130;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "scin: internal error: %s\n", e.what());
    return 3;
  }
  return 0;
}
