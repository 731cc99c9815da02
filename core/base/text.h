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

/// "a" or "an" and `noun` ("an inference", "a quant"), by the noun's first
/// letter (a vowel: "an"), for messages that name a run's kind.
inline std::string with_article(std::string_view noun) {
  const char c = noun.empty() ? 'x' : ascii_lower(noun.substr(0, 1))[0];
  const bool vowel = c == 'a' || c == 'e' || c == 'i' || c == 'o' || c == 'u';
  return std::string(vowel ? "an " : "a ") + std::string(noun);
}

}  // namespace scin
