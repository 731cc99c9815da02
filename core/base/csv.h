// CSV per RFC 4180: a field that holds a comma, a double quote, CR or LF is
// enclosed in double quotes and its quotes doubled; records end with CRLF only
// when the caller asks (we write LF, which every reader accepts). The one CSV
// writer of the project: store exports, chart exports and `scin run --format csv`.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace scin {

/// One field, quoted when it must be.
std::string csv_field(std::string_view s);
/// Fields joined by commas (each quoted when it must be), without a line end.
std::string csv_record(const std::vector<std::string>& fields);
/// Splits one CSV record (RFC 4180 quoting) into fields; the inverse of
/// csv_record. Throws scin::Error on an unterminated quote.
std::vector<std::string> csv_parse_record(std::string_view line);

}  // namespace scin
