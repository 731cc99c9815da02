// The parameter registry: every tunable of a Config declared once, with its
// dotted path, type, unit, allowed range, default and one-line help.
//
// It drives validation, `scin run --set PATH=VALUE`, `scin params`, preset
// loading and saving, sweep axes, database columns and the GUI's labels and
// tooltips. One concept, one name: the path is the CLI key, the JSON key, the
// DB column and (through `label`) the UI label.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "fabric/config.h"

namespace scin {

enum class ParamType { Int, Real, Bool, Enum, String };

using ParamValue = std::variant<bool, std::int64_t, double, std::string>;

struct ParamInfo {
  std::string path;        // e.g. "links.bandwidth_GBps"
  ParamType type;
  std::string unit;        // "GB/s", "ns", "bytes", "" for dimensionless
  double min = 0;          // inclusive range for Int/Real
  double max = 0;
  std::vector<std::string> choices;  // for Enum
  std::string label;       // short human label, e.g. "Link bandwidth"
  std::string help;        // one line: what the parameter means
  std::function<ParamValue(const Config&)> get;
  std::function<void(Config&, const ParamValue&)> set;
  std::string group() const;   // the path's first component: "links", "switch", ...
};

/// All parameters, in display order.
const std::vector<ParamInfo>& params();

/// The parameter at `path`, or nullptr.
const ParamInfo* find_param(std::string_view path);

/// Looks a parameter up or throws Error("unknown parameter 'x'; see `scin params`").
const ParamInfo& param(std::string_view path);

/// Parses `text` for the parameter at `path`, checks its range and stores it.
/// Throws Error naming the path and the allowed range/choices.
void set_param(Config& cfg, std::string_view path, const std::string& text);
void set_param(Config& cfg, std::string_view path, const nlohmann::json& value);
void set_param(Config& cfg, std::string_view path, double value);
inline void set_param(Config& cfg, std::string_view path, const char* text) {
  set_param(cfg, path, std::string(text));
}

/// Applies "PATH=VALUE" (the CLI's --set syntax).
void apply_assignment(Config& cfg, const std::string& assignment);

ParamValue get_param(const Config& cfg, std::string_view path);
std::string get_param_text(const Config& cfg, std::string_view path);
/// Numeric value (bools as 0/1, enums as choice index).
double get_param_number(const Config& cfg, std::string_view path);

std::string format_value(const ParamInfo& p, const ParamValue& v);
std::string format_range(const ParamInfo& p);
std::string to_string(ParamType t);

/// Checks every parameter's range and the cross-field rules (mesh has one
/// plane, a packet fits the port buffer, ...). Throws Error on the first violation.
void validate(const Config& cfg);

}  // namespace scin
