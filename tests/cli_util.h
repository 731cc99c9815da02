// Runs the `scin` binary ($SCIN_CLI, else the SCIN_CLI_PATH compiled in by
// tests/CMakeLists.txt) and captures its output.
#pragma once

#include <array>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <sys/wait.h>

struct CliResult {
  int code = -1;
  std::string out;  // stdout and stderr together
};

inline CliResult run_cli(const std::string& args) {
  const char* bin = std::getenv("SCIN_CLI");
#ifdef SCIN_CLI_PATH
  if (!bin) bin = SCIN_CLI_PATH;
#endif
  CliResult r;
  if (!bin) return r;
  std::string cmd = std::string(bin) + " " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf{};
  std::size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}
