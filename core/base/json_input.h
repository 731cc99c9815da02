// The one reader for JSON input documents (presets, sweep specs, accelerator and
// model files, stored specs) and typed getters for the values inside them.
//
// Parsing rejects nesting deeper than kMaxJsonDepth while parsing, before any
// deep structure exists (nlohmann's parser is iterative; the callback stops it),
// so no document can exhaust the stack of code that later walks it. Getters
// check the JSON type and the range of integers and reals and name the field:
// "inference.tp: 4294967304 is out of range 1..1024". Never call get<int>() on
// user data: use these.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>
#include <string_view>

#include <nlohmann/json.hpp>

namespace scin {

/// Deepest nesting of objects and arrays an input document may have.
constexpr int kMaxJsonDepth = 64;

struct JsonParseOptions {
  bool allow_comments = false;   // sweep specs accept /* */ and // comments
  int max_depth = kMaxJsonDepth;
  /// Members of the top-level object parsed (their syntax checked) but not
  /// kept: a reader that ignores them need not build them (a calibrated
  /// preset's provenance is most of its bytes).
  std::vector<std::string> skip_top_level;
};

/// Parses `text`; throws Error("ORIGIN: malformed JSON: ..." or "ORIGIN: JSON nesting
/// deeper than 64 levels") on bad input.
nlohmann::json parse_json_text(std::string_view text, const std::string& origin,
                               const JsonParseOptions& opt = {});

/// Like parse_json_text but returns a discarded value (is_discarded()) instead of
/// throwing: for stored documents whose failure is reported per row.
nlohmann::json parse_json_or_discarded(std::string_view text, const JsonParseOptions& opt = {});

/// Reads and parses a file; throws Error naming the file when it is missing, a
/// directory, unreadable, larger than 64 MiB, malformed or too deeply nested.
nlohmann::json read_json_document(const std::filesystem::path& file, const JsonParseOptions& opt = {});

/// Reads a whole regular file (at most `max_bytes`); throws Error naming it.
std::string read_text_file(const std::filesystem::path& file, std::uint64_t max_bytes = 64ull << 20,
                           const std::string& what = "file");

// ---- typed getters: `field` names the value in errors ("inference.tp").

/// An integer in [lo, hi]. Accepts JSON integers and floats with an integral value
/// (1e3); rejects 2.5, strings, booleans and anything out of range.
std::int64_t json_int(const nlohmann::json& v, const std::string& field, std::int64_t lo, std::int64_t hi);
/// An unsigned integer in [lo, hi] (full uint64 range available).
std::uint64_t json_uint(const nlohmann::json& v, const std::string& field, std::uint64_t lo, std::uint64_t hi);
/// A finite real in [lo, hi].
double json_real(const nlohmann::json& v, const std::string& field, double lo, double hi);
bool json_bool(const nlohmann::json& v, const std::string& field);
std::string json_string(const nlohmann::json& v, const std::string& field);

/// A member of `obj` or nullptr if absent (or null); throws if `obj` is not an object.
const nlohmann::json* json_member(const nlohmann::json& obj, const char* key, const std::string& where);

/// Checks that `v` is an object; throws "FIELD: expected an object, got TYPE".
const nlohmann::json& json_object(const nlohmann::json& v, const std::string& field);

/// "a number" / "the string \"x\"" ...: a short description of a value for errors.
std::string describe_json(const nlohmann::json& v);

/// Formats an integer-valued double without scientific noise or wrap-around:
/// 1e30 prints as 1e+30, not -9223372036854775808.
std::string format_number(double v);

}  // namespace scin
