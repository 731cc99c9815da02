// The line-level readers of nccl-tests logs (measured_text.h): types, NCCL_* settings,
// launcher tags, header words, versions, other benchmarks. parse_nccl_tests (measured.cc)
// puts them together.
#include <algorithm>
#include <cctype>
#include <cstring>
#include <map>
#include <set>
#include <sstream>

#include "base/text.h"
#include "calib/measured_text.h"

namespace scin {

using namespace measured_text;

// nccl-tests type names -> element size and our dtype label.
bool measured_text::nccl_type(const std::string& t, int& size, std::string& dtype) {
  static const std::map<std::string, std::pair<int, std::string>> types = {
      {"int8", {1, "int8"}},    {"uint8", {1, "uint8"}},   {"int32", {4, "int32"}},
      {"uint32", {4, "uint32"}}, {"int64", {8, "int64"}},  {"uint64", {8, "uint64"}},
      {"half", {2, "fp16"}},    {"float", {4, "fp32"}},    {"double", {8, "fp64"}},
      {"bfloat16", {2, "bf16"}}, {"f8e4m3", {1, "fp8e4m3"}}, {"f8e5m2", {1, "fp8e5m2"}},
  };
  auto it = types.find(t);
  if (it == types.end()) return false;
  size = it->second.first;
  dtype = it->second.second;
  return true;
}

// NCCL_ALGO as NCCL reads it: a comma-separated list of algorithms, or "^" and the
// algorithms to leave out (NCCL >= 2.19). Within one node NCCL chooses among ring and
// NVLS (tree and CollNet only matter across nodes), so the row is ring or NVLS when
// only one of them is allowed, and nccl-auto (NCCL's own pick: calib/nccl_tuning.h) when both are.
std::string measured_text::algorithm_from_env(const std::map<std::string, std::string>& env) {
  auto it = env.find("NCCL_ALGO");
  if (it == env.end()) return "nccl-auto";
  std::string v = ascii_lower(it->second);
  const bool exclude = !v.empty() && v[0] == '^';
  if (exclude) v.erase(0, 1);
  std::set<std::string> listed;
  std::string first;
  std::istringstream in(v);
  for (std::string a; std::getline(in, a, ',');) {
    a = trim(a);
    if (a.empty()) continue;
    listed.insert(a);
    if (first.empty()) first = a;
  }
  const bool ring = exclude != (listed.count("ring") > 0);
  const bool nvls = exclude != (listed.count("nvls") > 0);
  if (ring && nvls) return "nccl-auto";
  if (ring) {
    // NCCL_PROTO naming one protocol fixes the ring's (NVLS runs Simple only); otherwise NCCL
    // picks it by its own model (calib/nccl_tuning.h).
    if (auto p = env.find("NCCL_PROTO"); p != env.end()) {
      const std::string proto = ascii_lower(trim(p->second));
      for (const char* name : kRingProtocolKeys)
        if (proto == name) return ring_algorithm_for(name);
    }
    return "ring";
  }
  if (nvls) return "nvls";
  // Only algorithms we do not model are left (tree, nvlstree, collnet, pat): validate says so.
  return exclude || first.empty() ? std::string("nccl-tree") : canonical_algorithm("nccl-" + first);
}

// "NCCL_ALGO=NVLS" (shell-style) or "... NCCL_ALGO set by environment to NVLS" (NCCL_DEBUG=INFO).
void measured_text::scan_env(const std::string& line, std::map<std::string, std::string>& env) {
  std::size_t pos = 0;
  while ((pos = line.find("NCCL_", pos)) != std::string::npos) {
    std::size_t e = pos;
    // (At a word's start: "-x UCC_TL_NCCL_TUNE=0" sets no NCCL_TUNE.)
    if (pos > 0) {
      const auto before = static_cast<unsigned char>(line[pos - 1]);
      if (std::isalnum(before) || before == '_') {
        pos += 5;
        continue;
      }
    }
    while (e < line.size() && (std::isupper(static_cast<unsigned char>(line[e])) ||
                               std::isdigit(static_cast<unsigned char>(line[e])) || line[e] == '_'))
      ++e;
    const std::string key = line.substr(pos, e - pos);
    if (e < line.size() && line[e] == '=' && key.size() > 5) {
      auto v = words(line.substr(e + 1));
      if (!v.empty()) env[key] = v[0];
    } else {
      const std::string tag = " set by environment to ";
      if (line.compare(e, tag.size(), tag) == 0) {
        auto v = words(line.substr(e + tag.size()));
        if (!v.empty()) env[key] = v[0];
      }
    }
    pos = e;
  }
}

// A launcher's per-line output tag, as logs of `mpirun` / `srun` runs carry them: Open MPI's
// --tag-output "[1,0]<stdout>:", MPICH's -prepend-rank / -l "[0]", Slurm's srun --label "0:".
// Removed from the start of `line`, and a bracketed one, where the launcher split a line in two
// writes (MPICH: "... -1[0]    1626.5 ..."), from the rest of it too.
void measured_text::strip_launcher_tag(std::string& line) {
  std::size_t i = line.find_first_not_of(" \t");
  if (i == std::string::npos) return;
  const std::size_t from = i;
  auto digits = [&](std::size_t& k) {
    const std::size_t k0 = k;
    while (k < line.size() && std::isdigit(static_cast<unsigned char>(line[k]))) ++k;
    return k > k0;
  };
  std::size_t k = i;
  std::string tag;
  if (line[k] == '[') {  // [R] or [J,R] then <stdout>: / <stderr>:
    ++k;
    if (!digits(k)) return;
    if (k < line.size() && line[k] == ',') {
      ++k;
      if (!digits(k)) return;
    }
    if (k >= line.size() || line[k] != ']') return;
    ++k;
    for (const char* stream : {"<stdout>:", "<stderr>:"})
      if (line.compare(k, std::strlen(stream), stream) == 0) k += std::strlen(stream);
    tag = line.substr(from, k - from);
  } else {  // srun --label: "R: "
    if (!digits(k) || k >= line.size() || line[k] != ':') return;
    ++k;
    if (k < line.size() && line[k] != ' ' && line[k] != '\t') return;
    tag = line.substr(from, k - from);
  }
  std::string rest = line.substr(k);
  // (a bracketed tag only: "0:" also stands inside a time stamp's "12:00:07")
  // (each a space; built anew: GCC 12 warns of a false overlap in string::replace here)
  if (tag[0] == '[') {
    std::string out;
    std::size_t done = 0;
    for (std::size_t at; (at = rest.find(tag, done)) != std::string::npos; done = at + tag.size()) {
      out.append(rest, done, at - done);
      out += ' ';
    }
    out.append(rest, done, std::string::npos);
    rest = std::move(out);
  }
  line = std::move(rest);
}

// The lines of nccl-tests' header and footer ("nThread ...", "Using devices", "Rank 0 ...",
// the column header, "Avg bus bandwidth") with their '#' lost (pasted through Markdown, where
// a leading '#' makes a heading): their first word.
bool measured_text::header_word(const std::string& w) {
  static const std::set<std::string> words = {"nThread", "Using", "Rank", "out-of-place", "size", "(B)", "Avg", "Out",
                                              "Reducing", "Collective", "nccl-tests"};
  return words.count(w) > 0;
}

// A line that only sets variables, which later commands inherit: "export NCCL_ALGO=NVLS",
// "setenv NCCL_ALGO NVLS", or assignments alone ("NCCL_ALGO=NVLS NCCL_PROTO=Simple"). A
// command's own settings ("NCCL_ALGO=Ring ./all_reduce_perf ...", "mpirun -x NCCL_ALGO=Ring
// ...") and NCCL's report of them ("NCCL INFO NCCL_ALGO set by environment to Ring") are that
// run's only.
bool measured_text::sets_environment(const std::vector<std::string>& w) {
  if (w.empty()) return false;
  // A shell prompt first: "$", ">", "user@host:~$", "[root@host ~]#", "(venv) me@box:/w$":
  // up to four words, the last ending in $, #, % or >.
  std::size_t k = 0;
  for (std::size_t j = 0; j < std::min<std::size_t>(4, w.size()); ++j) {
    const char end = w[j].back();
    if (w[j].find('=') != std::string::npos) break;
    if (end == '$' || end == '#' || end == '%' || end == '>') {
      k = j + 1;
      break;
    }
  }
  if (k < w.size() && (w[k] == "export" || w[k] == "setenv")) return true;
  if (k >= w.size()) return false;
  for (; k < w.size(); ++k)
    if (w[k].find('=') == std::string::npos || w[k][0] == '-') return false;
  return true;
}

// NCCL's version from nccl-tests' own header ("# nccl-tests version 2.18.3 nccl-headers=23005
// nccl-library=23005"): the library's version code, major x 10000 + minor x 100 + patch since
// NCCL 2.9 (major x 1000 + minor x 100 + patch before), as "2.30.5"; "" where there is none.
std::string measured_text::nccl_library_version(const std::string& line) {
  const auto at = line.find("nccl-library=");
  if (at == std::string::npos) return "";
  std::uint64_t code = 0;
  const auto w = measured_text::words(line.substr(at + 13));
  if (w.empty() || !measured_text::parse_u64(w[0], code) || code < 1000 || code > 999999) return "";
  const std::uint64_t major = code >= 10000 ? code / 10000 : code / 1000;
  const std::uint64_t minor = code >= 10000 ? code % 10000 / 100 : code % 1000 / 100;
  return fmt::format("{}.{}.{}", major, minor, code % 100);
}

namespace {

// nccl-tests' other benchmarks (src/*.cu): a log of one of them is no All-Reduce.
bool other_nccl_test(const std::string& name) {
  static const std::set<std::string> others = {"all_gather_perf", "alltoall_perf", "broadcast_perf", "gather_perf",
                                               "hypercube_perf", "reduce_perf", "reduce_scatter_perf", "scatter_perf",
                                               "sendrecv_perf"};
  return others.count(name) > 0;
}

}  // namespace

std::string measured_text::other_benchmark(const std::string& name) {
  return fmt::format("{} is nccl-tests' {} benchmark, not all_reduce_perf: scin reads All-Reduce tables only (keep only "
                     "all_reduce_perf's output in this file)", name, name.substr(0, name.size() - 5));
}

// The nccl-tests binary a line names ("./build/all_gather_perf -b 8 ...", "Collective test
// starting: reduce_scatter_perf", "all_gather_perf_mpi" built with a NAME_SUFFIX) if it is
// another benchmark than all_reduce_perf, else "".
std::string measured_text::other_nccl_test_in(const std::string& line) {
  const std::string name = nccl_test_in(line);
  return name == "all_reduce_perf" ? "" : name;
}

// The same, all_reduce_perf included.
std::string measured_text::nccl_test_in(const std::string& line) {
  for (const auto& w : words(line)) {
    const auto slash = w.find_last_of('/');
    const std::string base = slash == std::string::npos ? w : w.substr(slash + 1);
    const auto at = base.find("_perf");
    if (at == std::string::npos || at == 0) continue;
    const std::string name = base.substr(0, at + 5);
    if (name == "all_reduce_perf" || other_nccl_test(name)) return name;
  }
  return "";
}

}  // namespace scin
