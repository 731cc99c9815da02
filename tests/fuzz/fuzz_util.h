// Shared by the libFuzzer harnesses: every harness defines LLVMFuzzerTestOneInput
// and must accept any bytes without crashing, hanging or leaking; scin::Error is
// the one allowed outcome for bad input (anything else escaping is a finding).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <unistd.h>

#include "base/error.h"

namespace scin::fuzz {

inline std::string as_string(const std::uint8_t* data, std::size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

/// Writes the input to a per-process temporary file (for parsers that take a path).
inline std::string temp_file(const std::uint8_t* data, std::size_t size, const char* ext) {
  const std::string path = "/tmp/scin-fuzz-" + std::to_string(getpid()) + ext;
  if (FILE* f = std::fopen(path.c_str(), "wb")) {
    if (size) std::fwrite(data, 1, size, f);
    std::fclose(f);
  }
  return path;
}

/// Runs `f`, swallowing scin::Error (the documented way to reject input).
template <class F>
void expect_ok_or_error(F&& f) {
  try {
    f();
  } catch (const scin::Error&) {
  }
}

}  // namespace scin::fuzz
