// Subcommands of areas left out of this build register nothing.
#include "cli/commands.h"

namespace scin::cli {
#ifndef SCIN_HAVE_PACKET
void add_bench_command(CLI::App&) {}
#endif
#ifndef SCIN_HAVE_NUMERICS
void add_quant_command(CLI::App&) {}
#endif
#ifndef SCIN_HAVE_INFERENCE
void add_infer_command(CLI::App&) {}
#endif
#ifndef SCIN_HAVE_STORE
void add_store_commands(CLI::App&) {}
#endif
}  // namespace scin::cli
