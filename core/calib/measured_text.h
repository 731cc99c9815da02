// Text helpers shared by the measured-file readers (core/calib/measured*.cc); internal.
#pragma once

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "base/error.h"
#include "calib/measured.h"

namespace scin::measured_text {

inline std::string trim(std::string_view s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string_view::npos) return "";
  const auto e = s.find_last_not_of(" \t\r\n");
  return std::string(s.substr(b, e - b + 1));
}

inline std::vector<std::string> words(std::string_view s) {
  std::vector<std::string> out;
  std::istringstream in{std::string(s)};
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const auto nl = text.find('\n', start);
    std::string line = text.substr(start, nl == std::string::npos ? std::string::npos : nl - start);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    out.push_back(std::move(line));
    if (nl == std::string::npos) break;
    start = nl + 1;
  }
  if (!out.empty() && out.back().empty()) out.pop_back();
  return out;
}

[[noreturn]] inline void fail(const std::string& origin, int line, const std::string& what) {
  throw Error(fmt::format("{}:{}: {}", origin, line, what));
}

inline bool parse_double(const std::string& s, double& out) {
  if (s.empty()) return false;
  char* end = nullptr;
  out = std::strtod(s.c_str(), &end);
  return end == s.c_str() + s.size() && std::isfinite(out);
}

inline bool parse_u64(const std::string& s, std::uint64_t& out) {
  if (s.empty() || !std::all_of(s.begin(), s.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
    return false;
  if (s.size() > 19) return false;
  out = std::strtoull(s.c_str(), nullptr, 10);
  return true;
}

/// A row's out-of-place bandwidths as the log reports them, and where it is ("FILE:LINE").
struct RowBandwidth {
  std::string where;
  double alg = 0, bus = 0;  // GB/s
};

/// Throws Error naming the first row whose busbw / algbw is not All-Reduce's 2(n-1)/n at the
/// table's rank count (measured.cc); without a rank list (t.ranks 0) sets t.ranks_from_busbw
/// where the ratio names one count alone. `ranks_from` says where t.ranks came from.
void check_all_reduce_busbw(NcclTestsTable& t, const std::vector<RowBandwidth>& bws, const char* ranks_from);

/// Every row's gpus, gpus_per_process, algorithm, system and notes from its table's facts.
void finish_nccl_tests_tables(std::vector<NcclTestsTable>& tables, const std::string& origin);

/// An nccl-tests element type (float, bfloat16, ...): its size and our dtype label; false if unknown.
bool nccl_type(const std::string& t, int& size, std::string& dtype);

/// NCCL_ALGO as NCCL reads it (a list, or "^" and those left out) -> ring, nvls, nccl-auto, nccl-tree...
std::string algorithm_from_env(const std::map<std::string, std::string>& env);

/// The NCCL_* settings a line gives ("NCCL_ALGO=NVLS", "... NCCL_ALGO set by environment to NVLS").
void scan_env(const std::string& line, std::map<std::string, std::string>& env);

/// Removes a launcher's output tag ("[1,0]<stdout>:", "[0]", srun's "0: ") from a log line.
void strip_launcher_tag(std::string& line);
/// A word that starts one of nccl-tests' header or footer lines (their '#' lost in Markdown).
bool header_word(const std::string& w);
/// The words of a line that only sets variables later commands inherit ("export NCCL_ALGO=NVLS").
bool sets_environment(const std::vector<std::string>& w);
/// NCCL's version ("2.30.5") from nccl-tests' "nccl-library=23005" header field, or "".
std::string nccl_library_version(const std::string& line);

/// Another nccl-tests benchmark than all_reduce_perf that a line names ("all_gather_perf"), or "".
std::string other_nccl_test_in(const std::string& line);
/// The nccl-tests benchmark a line names, all_reduce_perf included, or "".
std::string nccl_test_in(const std::string& line);
/// The error for a file of that benchmark's output.
std::string other_benchmark(const std::string& name);

/// A CSV header of measured rows: it names a GPU count and a size under any of the names
/// and units parse_measured_csv accepts (core/calib/measured_csv.cc).
bool looks_like_csv_header(const std::string& line);

/// The note for a skipped 0-byte row (nccl-tests -b 0) at `where`.
inline std::string zero_byte_row(const std::string& where) {
  return where + ": a 0-byte row (it times the call's fixed cost alone; there is no 0-byte All-Reduce to model)";
}

}  // namespace scin::measured_text
