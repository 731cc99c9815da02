#include "base/units.h"

#include <cctype>
#include <cmath>
#include <limits>
#include <fmt/format.h>

#include "base/error.h"

namespace scin {

__extension__ typedef unsigned __int128 u128;   // exact size arithmetic (GCC and clang)

const char* const kSizeGrammar =
    "a size is a whole number of bytes or a decimal with a suffix K, M, G or T (powers of two: 1K = 1024), "
    "optionally followed by B or iB: 8, 4096, 64K, 1.5M, 8MB, 8MiB, 1G";

const char* const kCountGrammar =
    "a count is a whole number or a decimal with a suffix K, M, G or T (powers of two: 1K = 1024): "
    "1000, 4096, 64K, 1.5M, 16M";

namespace {

// The size grammar for bytes (a B or iB may follow the suffix) and for counts
// of `noun` (no B): one parser, so "1.5M" means the same in both.
std::uint64_t parse_scaled(const std::string& text, const std::string& field, std::uint64_t min, std::uint64_t max,
                           const char* noun, bool bytes) {
  auto bad = [&](const std::string& why) {
    std::string shown = text.size() > 40 ? text.substr(0, 40) + "..." : text;
    return Error(fmt::format("{}: '{}' is not a valid {} ({}); {}", field, shown, bytes ? "size" : "count", why,
                             bytes ? kSizeGrammar : kCountGrammar));
  };
  std::size_t i = 0, n = text.size();
  auto space = [&](std::size_t k) { return std::isspace(static_cast<unsigned char>(text[k])) != 0; };
  while (i < n && space(i)) ++i;
  while (n > i && space(n - 1)) --n;
  if (i < n && text[i] == '-') throw bad("negative");
  if (i < n && text[i] == '+') ++i;
  // Mantissa as an exact integer over a power of ten: digits[.digits].
  u128 mant = 0;
  int int_digits = 0, frac_digits = 0;
  for (; i < n && std::isdigit(static_cast<unsigned char>(text[i])); ++i) {
    if (mant == 0 && text[i] == '0') continue;   // leading zeros do not count
    if (++int_digits > 20) throw bad("too large");
    mant = mant * 10 + static_cast<unsigned>(text[i] - '0');
  }
  const bool had_int = i > 0 && std::isdigit(static_cast<unsigned char>(text[i - 1]));
  bool had_frac = false;
  if (i < n && text[i] == '.') {
    ++i;
    for (; i < n && std::isdigit(static_cast<unsigned char>(text[i])); ++i) {
      had_frac = true;
      if (++frac_digits > 12) throw bad("too many decimals");
      mant = mant * 10 + static_cast<unsigned>(text[i] - '0');
    }
  }
  if (!had_int && !had_frac) throw bad("no number");
  std::string suffix;
  for (; i < n; ++i) {
    if (space(i)) continue;
    suffix += static_cast<char>(std::toupper(static_cast<unsigned char>(text[i])));
  }
  int shift = 0;
  const std::string written = suffix;   // errors show what was written
  if (bytes && suffix.size() == 3 && suffix.compare(1, 2, "IB") == 0) suffix.resize(1);   // "KIB"
  else if (bytes && !suffix.empty() && suffix.back() == 'B') suffix.pop_back();          // "B", "KB"
  if (suffix.empty()) shift = 0;
  else if (suffix == "K") shift = 10;
  else if (suffix == "M") shift = 20;
  else if (suffix == "G") shift = 30;
  else if (suffix == "T") shift = 40;
  else throw bad(fmt::format("unknown suffix '{}'", written.size() > 10 ? written.substr(0, 10) + "..." : written));
  // mant < 10^32 < 2^107; shifting by up to 40 could overflow 128 bits, so check first.
  if (mant > (~static_cast<u128>(0) >> shift)) throw bad("too large");
  u128 scaled = mant << shift;
  u128 pow10 = 1;
  for (int k = 0; k < frac_digits; ++k) pow10 *= 10;
  if (scaled % pow10 != 0) throw bad(fmt::format("not a whole number of {}", noun));
  scaled /= pow10;
  if (scaled > std::numeric_limits<std::uint64_t>::max()) throw bad("too large");
  const auto value = static_cast<std::uint64_t>(scaled);
  if (value < min || value > max) {
    const std::string shown = text.size() > 40 ? text.substr(0, 40) : text;
    // Sizes also in binary units: "1..4611686018427387904 bytes" alone is hard to read.
    if (bytes && max >= 1024)
      throw Error(fmt::format("{}: {} is out of range {}..{} {} ({} to {})", field, shown, min, max, noun,
                              format_size_bytes(min), format_size_bytes(max)));
    throw Error(fmt::format("{}: {} is out of range {}..{} {}", field, shown, min, max, noun));
  }
  return value;
}

}  // namespace

std::uint64_t parse_size_bytes(const std::string& text, const std::string& field, std::uint64_t min,
                               std::uint64_t max) {
  return parse_scaled(text, field, min, max, "bytes", true);
}

std::uint64_t parse_count(const std::string& text, const std::string& field, const char* noun, std::uint64_t min,
                          std::uint64_t max) {
  return parse_scaled(text, field, min, max, noun, false);
}

std::string format_size_bytes(std::uint64_t bytes) {
  static const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024.0 && u < 6) {
    v /= 1024.0;
    ++u;
  }
  if (u == 0) return fmt::format("{} B", bytes);
  if (std::fabs(v - std::round(v)) < 1e-9) return fmt::format("{:.0f} {}", v, units[u]);
  return fmt::format("{:.3g} {}", v, units[u]);
}

}  // namespace scin
