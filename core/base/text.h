// Small text helpers shared by the parsers (names matched without case).
#pragma once

#include <string>
#include <string_view>

namespace scin {

/// `s` with ASCII letters in lower case (other bytes unchanged).
inline std::string ascii_lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

}  // namespace scin
