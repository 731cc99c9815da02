// Runs the `scin` binary ($SCIN_CLI, else the SCIN_CLI_PATH compiled in by
// tests/CMakeLists.txt) and captures its output. The one CLI runner every test
// area uses.
#pragma once

#include <array>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <sys/wait.h>

struct CliResult {
  int status = -1;     // exit code; -1 if the binary could not be run
  std::string output;  // stdout and stderr together
};

/// Path of the scin binary, or "" if unknown.
inline std::string cli_path() {
  if (const char* env = std::getenv("SCIN_CLI"); env && *env) return env;
#ifdef SCIN_CLI_PATH
  return SCIN_CLI_PATH;
#else
  return "";
#endif
}

/// Runs a shell command line, capturing its standard output and error.
inline CliResult run_shell(const std::string& command) {
  CliResult r;
  const std::string cmd = command + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf{};
  std::size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.output.append(buf.data(), n);
  const int status = pclose(p);
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

inline CliResult run_cli(const std::string& args) {
  const std::string bin = cli_path();
  if (bin.empty()) return CliResult{};
  return run_shell("'" + bin + "' " + args);
}
