#include "cli/common.h"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "base/error.h"
#include "fabric/params.h"
#include "fabric/preset.h"

namespace scin::cli {

void add_fabric_options(CLI::App& cmd, FabricOptions& o) {
  cmd.add_option("--preset", o.preset, "fabric preset name or path to a preset .json (see `scin presets`)")
      ->capture_default_str();
  cmd.add_option("--gpus", o.gpus, "number of accelerators, 2..1024 (overrides fabric.gpus)");
  cmd.add_option("--set", o.sets, "override a parameter: PATH=VALUE (see `scin params`); repeatable")
      ->allow_extra_args(false);
}

int gpus_option(const FabricOptions& o) {
  if (o.gpus.empty()) return 0;
  const ParamInfo& p = param("fabric.gpus");
  return static_cast<int>(parse_integer(o.gpus, "--gpus (fabric.gpus)", static_cast<std::int64_t>(p.min),
                                        static_cast<std::int64_t>(p.max)));
}

FabricChoice fabric_choice(const FabricOptions& o) { return FabricChoice{o.preset, gpus_option(o), o.sets}; }

Config build_config(const FabricOptions& o) {
  Config cfg = load_preset(o.preset);
  if (const int gpus = gpus_option(o)) set_param(cfg, "fabric.gpus", static_cast<double>(gpus));
  for (const auto& a : o.sets) apply_assignment(cfg, a);
  validate(cfg);
  return cfg;
}

std::vector<std::string> split_list(const std::vector<std::string>& items, const std::string& flag) {
  std::vector<std::string> out;
  for (const auto& item : items) {
    std::size_t start = 0;
    while (true) {
      auto comma = item.find(',', start);
      std::string part = item.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      while (!part.empty() && std::isspace(static_cast<unsigned char>(part.back()))) part.pop_back();
      while (!part.empty() && std::isspace(static_cast<unsigned char>(part.front()))) part.erase(part.begin());
      if (part.empty())
        throw Error(fmt::format("{}: '{}' has an empty name; give names separated by commas", flag, item));
      // (A repeat would run, print and store the same thing twice.)
      if (std::find(out.begin(), out.end(), part) != out.end())
        throw Error(fmt::format("{}: '{}' is given twice; give each once", flag, part));
      out.push_back(part);
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }
  return out;
}

std::int64_t parse_integer(const std::string& text, const std::string& flag, std::int64_t lo, std::int64_t hi) {
  std::size_t i = 0, n = text.size();
  while (i < n && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
  while (n > i && std::isspace(static_cast<unsigned char>(text[n - 1]))) --n;
  const std::string t = text.substr(i, n - i);
  std::size_t k = 0;
  const bool neg = !t.empty() && (t[0] == '-' || t[0] == '+') ? (t[k++] == '-') : false;
  if (k == t.size() || t.find_first_not_of("0123456789", k) != std::string::npos)
    throw Error(fmt::format("{}: '{}' is not an integer; allowed {}..{}", flag, text, lo, hi));
  // Compare digit strings without converting: any length is "out of range", never wrapped.
  std::size_t first = t.find_first_not_of('0', k);
  const std::string digits = first == std::string::npos ? "0" : t.substr(first);
  if (digits.size() > 18) throw Error(fmt::format("{}: {} is out of range {}..{}", flag, t, lo, hi));
  const std::int64_t v = (neg ? -1 : 1) * std::stoll(digits);
  if (v < lo || v > hi) throw Error(fmt::format("{}: {} is out of range {}..{}", flag, t, lo, hi));
  return v;
}

void require_not_empty(const std::string& value, const std::string& flag) {
  if (value.empty()) throw Error(fmt::format("{}: must not be empty", flag));
}

void check_format(const std::string& format, const std::vector<std::string>& allowed) {
  for (const auto& a : allowed)
    if (a == format) return;
  throw Error(fmt::format("format: '{}' is not supported; allowed {}", format, fmt::join(allowed, ", ")));
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

}  // namespace scin::cli
