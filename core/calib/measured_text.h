// Text helpers shared by the measured-file readers (core/calib/measured*.cc); internal.
#pragma once

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "base/error.h"

namespace scin::measured_text {

inline std::string trim(std::string_view s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string_view::npos) return "";
  const auto e = s.find_last_not_of(" \t\r\n");
  return std::string(s.substr(b, e - b + 1));
}

inline std::vector<std::string> words(std::string_view s) {
  std::vector<std::string> out;
  std::istringstream in{std::string(s)};
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const auto nl = text.find('\n', start);
    std::string line = text.substr(start, nl == std::string::npos ? std::string::npos : nl - start);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    out.push_back(std::move(line));
    if (nl == std::string::npos) break;
    start = nl + 1;
  }
  if (!out.empty() && out.back().empty()) out.pop_back();
  return out;
}

[[noreturn]] inline void fail(const std::string& origin, int line, const std::string& what) {
  throw Error(fmt::format("{}:{}: {}", origin, line, what));
}

inline bool parse_double(const std::string& s, double& out) {
  if (s.empty()) return false;
  char* end = nullptr;
  out = std::strtod(s.c_str(), &end);
  return end == s.c_str() + s.size() && std::isfinite(out);
}

inline bool parse_u64(const std::string& s, std::uint64_t& out) {
  if (s.empty() || !std::all_of(s.begin(), s.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
    return false;
  if (s.size() > 19) return false;
  out = std::strtoull(s.c_str(), nullptr, 10);
  return true;
}

/// A CSV header of measured rows: it names a GPU count and a size under any of the names
/// and units parse_measured_csv accepts (core/calib/measured_csv.cc).
bool looks_like_csv_header(const std::string& line);

}  // namespace scin::measured_text
