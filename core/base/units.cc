#include "base/units.h"

#include <cctype>
#include <cmath>
#include <fmt/format.h>

#include "base/error.h"

namespace scin {

std::uint64_t parse_size_bytes(const std::string& text, const std::string& field) {
  auto bad = [&](const char* why) {
    return Error(fmt::format("{}: '{}' is not a valid size ({}); use a positive integer with an "
                             "optional K, M or G suffix (powers of two), e.g. 8, 64K, 1G",
                             field, text, why));
  };
  std::size_t i = 0;
  while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
  if (i < text.size() && text[i] == '-') throw bad("negative");
  std::size_t start = i;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
  if (i == start) throw bad("no number");
  if (i - start > 19) throw bad("too large");
  std::uint64_t value = std::stoull(text.substr(start, i - start));
  std::string suffix;
  for (; i < text.size(); ++i)
    if (!std::isspace(static_cast<unsigned char>(text[i])))
      suffix += static_cast<char>(std::toupper(static_cast<unsigned char>(text[i])));
  int shift = 0;
  if (suffix.empty() || suffix == "B") shift = 0;
  else if (suffix == "K" || suffix == "KB" || suffix == "KIB") shift = 10;
  else if (suffix == "M" || suffix == "MB" || suffix == "MIB") shift = 20;
  else if (suffix == "G" || suffix == "GB" || suffix == "GIB") shift = 30;
  else if (suffix == "T" || suffix == "TB" || suffix == "TIB") shift = 40;
  else throw bad("unknown suffix");
  if (value == 0) throw bad("zero");
  if (shift > 0 && value > (std::uint64_t{1} << (63 - shift))) throw bad("too large");
  return value << shift;
}

std::string format_size_bytes(std::uint64_t bytes) {
  static const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024.0 && u < 5) {
    v /= 1024.0;
    ++u;
  }
  if (u == 0) return fmt::format("{} B", bytes);
  if (std::fabs(v - std::round(v)) < 1e-9) return fmt::format("{:.0f} {}", v, units[u]);
  return fmt::format("{:.3g} {}", v, units[u]);
}

}  // namespace scin
