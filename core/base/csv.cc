#include "base/csv.h"

#include "base/error.h"

namespace scin {

std::string csv_field(std::string_view s) {
  if (s.find_first_of(",\"\n\r") == std::string_view::npos) return std::string(s);
  std::string q = "\"";
  for (char ch : s) {
    if (ch == '"') q += '"';
    q += ch;
  }
  return q + "\"";
}

std::string csv_record(const std::vector<std::string>& fields) {
  std::string line;
  for (std::size_t i = 0; i < fields.size(); ++i) {
    if (i) line += ',';
    line += csv_field(fields[i]);
  }
  return line;
}

std::vector<std::string> csv_parse_record(std::string_view line) {
  std::vector<std::string> out;
  std::string cur;
  bool quoted = false, in_quotes = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (in_quotes) {
      if (c == '"') {
        if (i + 1 < line.size() && line[i + 1] == '"') {
          cur += '"';
          ++i;
        } else {
          in_quotes = false;
        }
      } else {
        cur += c;
      }
    } else if (c == '"' && cur.empty() && !quoted) {
      in_quotes = quoted = true;
    } else if (c == ',') {
      out.push_back(std::move(cur));
      cur.clear();
      quoted = false;
    } else {
      cur += c;
    }
  }
  if (in_quotes) throw Error("csv: unterminated quoted field");
  out.push_back(std::move(cur));
  return out;
}

}  // namespace scin
