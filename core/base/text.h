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

/// The columns `s` takes on a terminal: its UTF-8 code points (no wide or
/// combining characters are told apart).
inline std::size_t text_columns(std::string_view s) {
  std::size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

/// `s` padded with spaces on the right to `columns` terminal columns.
inline std::string pad_columns(std::string_view s, std::size_t columns) {
  std::string out(s);
  for (std::size_t w = text_columns(s); w < columns; ++w) out += ' ';
  return out;
}

}  // namespace scin
