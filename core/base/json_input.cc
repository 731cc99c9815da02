#include "base/json_input.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>

#include <fmt/format.h>

#include "base/error.h"

namespace scin {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

struct TooDeep {};

json parse_impl(std::string_view text, const JsonParseOptions& opt) {
  const int max_depth = opt.max_depth;
  // The callback sees every object/array start with its depth before the parser
  // descends: throwing there stops a 200k-level document at level max_depth + 1.
  const std::vector<std::string>* skip = opt.skip_top_level.empty() ? nullptr : &opt.skip_top_level;
  json::parser_callback_t cb = [max_depth, skip](int depth, json::parse_event_t ev, json& parsed) {
    if ((ev == json::parse_event_t::object_start || ev == json::parse_event_t::array_start) && depth >= max_depth)
      throw TooDeep{};
    // A key of the top-level object (depth 1) whose value is not kept.
    if (skip && ev == json::parse_event_t::key && depth == 1 && parsed.is_string() &&
        std::find(skip->begin(), skip->end(), parsed.get_ref<const std::string&>()) != skip->end())
      return false;
    return true;
  };
  return json::parse(text.begin(), text.end(), cb, true, opt.allow_comments);
}

std::string shorten(std::string s, std::size_t n = 60) {
  if (s.size() > n) s = s.substr(0, n) + "...";
  return s;
}

}  // namespace

json parse_json_text(std::string_view text, const std::string& origin, const JsonParseOptions& opt) {
  try {
    return parse_impl(text, opt);
  } catch (const TooDeep&) {
    throw Error(fmt::format("{}: JSON nesting is deeper than {} levels", origin, opt.max_depth));
  } catch (const json::exception& e) {
    // e.what() is "[json.exception.parse_error.101] parse error at line 1, column 2: ...": keep the readable part.
    std::string w = e.what();
    if (auto p = w.find("] "); p != std::string::npos) w = w.substr(p + 2);
    throw Error(fmt::format("{}: malformed JSON: {}", origin, w));
  }
}

json parse_json_or_discarded(std::string_view text, const JsonParseOptions& opt) {
  try {
    return parse_impl(text, opt);
  } catch (const TooDeep&) {
  } catch (const json::exception&) {
  }
  return json(json::value_t::discarded);
}

std::string read_text_file(const fs::path& file, std::uint64_t max_bytes, const std::string& what) {
  const std::string name = file.string();
  std::error_code ec;
  const auto st = fs::status(file, ec);
  if (ec || !fs::exists(st)) throw Error(fmt::format("{}: {} does not exist", name, what));
  if (fs::is_directory(st)) throw Error(fmt::format("{}: is a directory, not a {}", name, what));
  if (!fs::is_regular_file(st)) throw Error(fmt::format("{}: is not a regular file", name));
  std::ifstream in(file, std::ios::binary);
  if (!in) throw Error(fmt::format("{}: cannot open {} ({})", name, what, std::strerror(errno)));
  std::string text;
  char buf[1 << 16];
  while (in) {
    in.read(buf, sizeof buf);
    text.append(buf, static_cast<std::size_t>(in.gcount()));
    if (text.size() > max_bytes)
      throw Error(fmt::format("{}: {} is larger than {} bytes", name, what, max_bytes));
  }
  if (in.bad()) throw Error(fmt::format("{}: read error", name));
  return text;
}

json read_json_document(const fs::path& file, const JsonParseOptions& opt) {
  return parse_json_text(read_text_file(file, 64ull << 20, "JSON file"), file.string(), opt);
}

std::string describe_json(const json& v) {
  switch (v.type()) {
    case json::value_t::string: return fmt::format("the string {}", shorten(v.dump()));
    case json::value_t::boolean: return v.get<bool>() ? "true" : "false";
    case json::value_t::null: return "null";
    case json::value_t::object: return "an object";
    case json::value_t::array: return "a list";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
    case json::value_t::number_float: return v.dump();
    default: return v.type_name();
  }
}

std::string format_number(double v) {
  if (std::isfinite(v) && std::floor(v) == v && std::fabs(v) < 1e15) return fmt::format("{:.0f}", v);
  return fmt::format("{:g}", v);
}

std::int64_t json_int(const json& v, const std::string& field, std::int64_t lo, std::int64_t hi) {
  auto range = [&](const std::string& got) {
    return Error(fmt::format("{}: {} is out of range {}..{}", field, got, lo, hi));
  };
  if (v.is_number_unsigned()) {
    const auto u = v.get<std::uint64_t>();
    if (u > static_cast<std::uint64_t>(hi) || (lo > 0 && u < static_cast<std::uint64_t>(lo))) throw range(v.dump());
    return static_cast<std::int64_t>(u);
  }
  if (v.is_number_integer()) {
    const auto i = v.get<std::int64_t>();
    if (i < lo || i > hi) throw range(v.dump());
    return i;
  }
  if (v.is_number_float()) {
    const double d = v.get<double>();
    if (!std::isfinite(d) || std::floor(d) != d)
      throw Error(fmt::format("{}: {} is not a whole number; allowed {}..{}", field, v.dump(), lo, hi));
    // Compare as doubles before converting: the conversion of an out-of-range double is undefined.
    if (d < static_cast<double>(lo) || d > static_cast<double>(hi)) throw range(v.dump());
    return static_cast<std::int64_t>(d);
  }
  throw Error(fmt::format("{}: expected an integer in {}..{}, got {}", field, lo, hi, describe_json(v)));
}

std::uint64_t json_uint(const json& v, const std::string& field, std::uint64_t lo, std::uint64_t hi) {
  auto range = [&](const std::string& got) {
    return Error(fmt::format("{}: {} is out of range {}..{}", field, got, lo, hi));
  };
  if (v.is_number_unsigned()) {
    const auto u = v.get<std::uint64_t>();
    if (u < lo || u > hi) throw range(v.dump());
    return u;
  }
  if (v.is_number_integer()) {
    const auto i = v.get<std::int64_t>();
    if (i < 0 || static_cast<std::uint64_t>(i) < lo || static_cast<std::uint64_t>(i) > hi) throw range(v.dump());
    return static_cast<std::uint64_t>(i);
  }
  if (v.is_number_float()) {
    const double d = v.get<double>();
    if (!std::isfinite(d) || std::floor(d) != d)
      throw Error(fmt::format("{}: {} is not a whole number; allowed {}..{}", field, v.dump(), lo, hi));
    // 2^64 is exactly representable; anything >= it cannot convert.
    if (d < 0 || d >= 18446744073709551616.0 || d < static_cast<double>(lo) || d > static_cast<double>(hi))
      throw range(v.dump());
    const auto u = static_cast<std::uint64_t>(d);
    if (u < lo || u > hi) throw range(v.dump());
    return u;
  }
  throw Error(fmt::format("{}: expected an integer in {}..{}, got {}", field, lo, hi, describe_json(v)));
}

double json_real(const json& v, const std::string& field, double lo, double hi) {
  if (!v.is_number())
    throw Error(fmt::format("{}: expected a number in {:g}..{:g}, got {}", field, lo, hi, describe_json(v)));
  const double d = v.get<double>();
  if (!std::isfinite(d) || d < lo || d > hi)
    throw Error(fmt::format("{}: {} is out of range {:g}..{:g}", field, v.dump(), lo, hi));
  return d;
}

bool json_bool(const json& v, const std::string& field) {
  if (!v.is_boolean()) throw Error(fmt::format("{}: expected true or false, got {}", field, describe_json(v)));
  return v.get<bool>();
}

std::string json_string(const json& v, const std::string& field) {
  if (!v.is_string()) throw Error(fmt::format("{}: expected a string, got {}", field, describe_json(v)));
  return v.get<std::string>();
}

const json& json_object(const json& v, const std::string& field) {
  if (!v.is_object()) throw Error(fmt::format("{}: expected an object, got {}", field, describe_json(v)));
  return v;
}

const json* json_member(const json& obj, const char* key, const std::string& where) {
  json_object(obj, where);
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return nullptr;
  return &*it;
}

}  // namespace scin
