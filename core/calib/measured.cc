#include "calib/measured.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fmt/format.h>
#include <fstream>
#include <set>
#include <sstream>

#include "base/csv.h"
#include "base/error.h"
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
// only one of them is allowed, and nccl-auto (the faster of our two) when both are.
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
  if (ring) return "ring";
  if (nvls) return "nvls";
  // Only algorithms we do not model are left (tree, nvlstree, collnet, pat): validate says so.
  return exclude || first.empty() ? std::string("nccl-tree") : canonical_algorithm("nccl-" + first);
}

// "NCCL_ALGO=NVLS" (shell-style) or "... NCCL_ALGO set by environment to NVLS" (NCCL_DEBUG=INFO).
void measured_text::scan_env(const std::string& line, std::map<std::string, std::string>& env) {
  std::size_t pos = 0;
  while ((pos = line.find("NCCL_", pos)) != std::string::npos) {
    std::size_t e = pos;
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

namespace {

// A launcher's per-line output tag, as logs of `mpirun` / `srun` runs carry them: Open MPI's
// --tag-output "[1,0]<stdout>:", MPICH's -prepend-rank / -l "[0]", Slurm's srun --label "0:".
// Removed from the start of `line`, and a bracketed one, where the launcher split a line in two
// writes (MPICH: "... -1[0]    1626.5 ..."), from the rest of it too.
void strip_launcher_tag(std::string& line) {
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
  if (tag[0] == '[')
    for (std::size_t at; (at = rest.find(tag)) != std::string::npos;) rest.replace(at, tag.size(), " ");
  line = rest;
}

// The lines of nccl-tests' header and footer ("nThread ...", "Using devices", "Rank 0 ...",
// the column header, "Avg bus bandwidth") with their '#' lost (pasted through Markdown, where
// a leading '#' makes a heading): their first word.
bool header_word(const std::string& w) {
  static const std::set<std::string> words = {"nThread", "Using", "Rank", "out-of-place", "size", "(B)", "Avg", "Out",
                                              "Reducing", "Collective", "nccl-tests"};
  return words.count(w) > 0;
}

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
  for (const auto& w : words(line)) {
    const auto slash = w.find_last_of('/');
    const std::string base = slash == std::string::npos ? w : w.substr(slash + 1);
    const auto at = base.find("_perf");
    if (at == std::string::npos || at == 0) continue;
    const std::string name = base.substr(0, at + 5);
    if (other_nccl_test(name)) return name;
  }
  return "";
}

// ------------------------------------------------------------------ names

std::string canonical_algorithm(std::string_view name) {
  std::string a;
  for (char c : trim(name)) a += c == '_' || c == ' ' ? '-' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  static const std::map<std::string, std::string> alias = {
      {"auto", "nccl-auto"},         {"default", "nccl-auto"},       {"nccl", "nccl-auto"},
      {"nccl-default", "nccl-auto"}, {"allreduce", "nccl-auto"},     {"all-reduce", "nccl-auto"},
      {"nccl-ring", "ring"},         {"nccl-nvls", "nvls"},          {"nvlink-sharp", "nvls"},
      {"nvlinksharp", "nvls"},       {"oneshot", "one-shot"},        {"1-shot", "one-shot"},
      {"1shot", "one-shot"},         {"twoshot", "two-shot"},        {"2-shot", "two-shot"},
      {"2shot", "two-shot"},         {"tree", "nccl-tree"},          {"nvlstree", "nccl-nvlstree"},
      {"nvls-tree", "nccl-nvlstree"}, {"nccl-nvls-tree", "nccl-nvlstree"}, {"collnet", "nccl-collnet"},
      {"collnetdirect", "nccl-collnetdirect"}, {"collnetchain", "nccl-collnetchain"}, {"pat", "nccl-pat"},
  };
  if (auto it = alias.find(a); it != alias.end()) return it->second;
  for (const char* p : {"ll", "ll128", "simple"})  // "nccl-ring-ll128", "ring/ll128"
    for (const char* pre : {"nccl-ring-", "ring/", "nccl-ring/"})
      if (a == std::string(pre) + p) return std::string("ring-") + p;
  return a;
}

std::string canonical_dtype(std::string_view name) {
  const std::string d = ascii_lower(trim(name));
  if (d == "float" || d == "float32" || d == "fp32" || d == "f32") return "fp32";
  if (d == "half" || d == "float16" || d == "fp16" || d == "f16") return "fp16";
  if (d == "bfloat16" || d == "bf16") return "bf16";
  return d;
}

// ------------------------------------------------------------------ nccl-tests

std::vector<NcclTestsTable> parse_nccl_tests(const std::string& text, const std::string& origin,
                                             std::vector<std::string>* ignored) {
  std::vector<NcclTestsTable> tables;
  const auto lines = lines_of(text);
  NcclTestsTable cur;
  bool open = false;       // a header (or rows) started the current table
  bool have_root = true;   // the column header names `root`
  bool header_seen = false;
  std::set<std::string> pids;
  std::map<std::string, std::string> env;  // persists: environment applies to later tables too
  std::string version;
  std::vector<RowBandwidth> bws;  // the current table's out-of-place bandwidths
  int half = 4;             // columns per half (time algbw busbw #wrong; 8 with the per-iteration report)
  bool timestamp = false;   // a time stamp after the in-place half
  auto close = [&]() {
    if (open && !cur.rows.empty()) {
      check_all_reduce_busbw(cur, bws, "the '# Using devices' list");
      cur.processes = static_cast<int>(pids.size());
      tables.push_back(std::move(cur));
    }
    bws.clear();
    cur = NcclTestsTable{};
    pids.clear();
    open = false;
    header_seen = false;
    have_root = true;
    half = 4;
    timestamp = false;
  };

  for (std::size_t i = 0; i < lines.size(); ++i) {
    const int ln = static_cast<int>(i) + 1;
    std::string raw = lines[i];
    strip_launcher_tag(raw);
    std::string line = trim(raw);
    if (line.empty()) continue;
    if (const auto w = words(line); line[0] != '#' && !w.empty()) {  // a header or footer line whose '#' was lost
      const bool rank_line = w[0] != "Rank" || line.find(" Pid ") != std::string::npos;
      const bool thread_line = w[0] != "nThread" || line.find(" nGpus ") != std::string::npos;
      const bool version_line = w.size() >= 2 && w[0] == "NCCL" && w[1] == "version";
      if ((header_word(w[0]) && rank_line && thread_line) || version_line) line = "# " + line;
    }
    if (const std::string t = other_nccl_test_in(line); !t.empty()) fail(origin, ln, other_benchmark(t));
    scan_env(line, env);
    if (auto v = line.find("NCCL version "); v != std::string::npos) {
      auto w = words(line.substr(v + 13));
      if (!w.empty()) version = w[0];
      if (open) cur.nccl_version = version;
    }
    if (line[0] == '#') {
      const auto w = words(line.substr(1));
      if (w.size() >= 4 && w[0] == "nThread") {
        close();
        open = true;
        cur.first_line = ln;
        cur.env = env;
        cur.nccl_version = version;
        for (std::size_t k = 0; k + 1 < w.size(); ++k) {
          std::uint64_t v = 0;
          if (w[k] == "nThread") {
            if (!parse_u64(w[k + 1], v) || v == 0) fail(origin, ln, fmt::format("nThread: '{}' is not a positive count", w[k + 1]));
            cur.threads = static_cast<int>(v);
          } else if (w[k] == "nGpus") {
            if (!parse_u64(w[k + 1], v) || v == 0) fail(origin, ln, fmt::format("nGpus: '{}' is not a positive count", w[k + 1]));
            cur.gpus_per_thread = static_cast<int>(v);
          } else if (w[k] == "graph:" && parse_u64(w[k + 1], v)) {
            cur.graph_launches = static_cast<int>(v);
          } else if (w[k] == "agg" && k + 2 < w.size() && w[k + 1] == "iters:" && parse_u64(w[k + 2], v)) {
            cur.agg_iters = static_cast<int>(v);
          }
        }
      } else if (w.size() >= 4 && w[0] == "Rank") {
        // "Rank  0 Group  0 Pid  1234 on host device  0 [0x18] NVIDIA H100 80GB HBM3"
        ++cur.ranks;
        for (std::size_t k = 0; k + 1 < w.size(); ++k)
          if (w[k] == "Pid") pids.insert(w[k + 1]);
        if (cur.device.empty()) {
          const auto br = line.find("] ");
          if (br != std::string::npos) cur.device = trim(line.substr(br + 2));
        }
      } else if (!w.empty() && w[0] == "size") {
        // "size count type redop root time algbw busbw #wrong [i_min i_max i_p99 i_cv%] time ... [timestamp]"
        header_seen = true;
        have_root = std::find(w.begin(), w.end(), "root") != w.end();
        auto is_time = [](const std::string& x) { return x == "time" || x == "cputime"; };
        const auto a = std::find_if(w.begin(), w.end(), is_time);
        const auto b = a == w.end() ? w.end() : std::find_if(a + 1, w.end(), is_time);
        // (a half holds time algbw busbw #wrong at least: a header with fewer keeps the plain layout)
        half = b != w.end() && b - a >= 4 && b - a <= 16 ? static_cast<int>(b - a) : 4;
        timestamp = w.back() == "timestamp";
        if (a != w.end() && *a == "cputime") cur.cpu_time = true;
      } else if (w.size() >= 4 && w[0] == "Avg" && w[1] == "bus" && w[2] == "bandwidth") {
        double v = 0;
        if (parse_double(w.back(), v)) cur.avg_busbw_GBps = v;
      } else if (!w.empty() && w[0].rfind("NCCL_", 0) == 0) {
        if (open) cur.env = env;
      }
      continue;
    }
    // Non-comment: NCCL log lines are allowed anywhere; everything else must be a data row.
    if (line.find("NCCL INFO") != std::string::npos || line.find("NCCL WARN") != std::string::npos) {
      if (open) cur.env = env;
      continue;
    }
    const auto w = words(line);
    if (w.empty()) continue;  // only white space trim() keeps (a vertical tab, a form feed)
    std::uint64_t size = 0, count_field = 0;
    if (!parse_u64(w[0], size) || w.size() < 2 || !parse_u64(w[1], count_field)) {
      if (line.find('=') != std::string::npos && line.find("NCCL_") != std::string::npos) {
        if (open) cur.env = env;
        continue;  // "NCCL_ALGO=NVLS" on its own line
      }
      // Not a row (an MPI or shell message pasted with the log): skipped, and said.
      if (ignored) ignored->push_back(fmt::format("{}:{}: {}", origin, ln, line.size() > 100 ? line.substr(0, 100) + "..." : line));
      continue;
    }
    if (!open) fail(origin, ln, "data row before any '# nThread ... nGpus ...' header: the rank count is unknown");
    if (size == 0) {  // (-b 0: nccl-tests times the call with no data)
      if (ignored) ignored->push_back(zero_byte_row(fmt::format("{}:{}", origin, ln)));
      continue;
    }
    if (!header_seen) have_root = w.size() == 13 || w.size() == 9;
    const std::size_t lead = 4;  // size count type redop
    const auto h = static_cast<std::size_t>(half);
    const std::size_t want = lead + (have_root ? 1 : 0) + h;
    const bool full = w.size() == want + h || (timestamp && w.size() == want + h + 2);
    if (w.size() != want && !full)
      fail(origin, ln, fmt::format("expected {} or {} columns (size count type redop{} time algbw busbw #wrong{} "
                                   "[in-place time algbw busbw #wrong{}]{}), got {}",
                                   want, want + h, have_root ? " root" : "", h == 8 ? " i_min i_max i_p99 i_cv%" : "",
                                   h == 8 ? " ..." : "", timestamp ? " [timestamp]" : "", w.size()));
    MeasuredRow r;
    std::uint64_t count = 0;
    if (!parse_u64(w[1], count)) fail(origin, ln, fmt::format("count: '{}' is not a whole number", w[1]));
    int esize = 0;
    if (!nccl_type(w[2], esize, r.dtype)) fail(origin, ln, fmt::format("type: unknown nccl-tests type '{}'", w[2]));
    if (count * static_cast<std::uint64_t>(esize) != size)
      fail(origin, ln, fmt::format("size {} is not count {} x {} bytes of {}", size, count, esize, w[2]));
    const std::size_t t0 = lead + (have_root ? 1 : 0);
    auto number = [&](std::size_t k, const char* what) {
      double v = 0;
      if (!parse_double(w[k], v) || v < 0) fail(origin, ln, fmt::format("{}: '{}' is not a non-negative number", what, w[k]));
      return v;
    };
    r.measured_us = number(t0, "out-of-place time");
    if (r.measured_us <= 0) fail(origin, ln, "out-of-place time: must be positive");
    const double algbw = number(t0 + 1, "out-of-place algbw");
    r.busbw_GBps = number(t0 + 2, "out-of-place busbw");
    bws.push_back({fmt::format("{}:{}", origin, ln), algbw, r.busbw_GBps});
    if (full) {
      r.in_place_us = number(t0 + h, "in-place time");
      number(t0 + h + 1, "in-place algbw");
      number(t0 + h + 2, "in-place busbw");
    }
    r.bytes = size;
    r.source = fmt::format("{}:{}", origin, ln);
    r.notes = w[3];  // redop
    cur.rows.push_back(std::move(r));
  }
  close();
  if (tables.empty()) throw Error(fmt::format("{}: no nccl-tests data rows found", origin));

  finish_nccl_tests_tables(tables, origin);
  return tables;
}

void measured_text::finish_nccl_tests_tables(std::vector<NcclTestsTable>& tables, const std::string& origin) {
  for (std::size_t k = 0; k < tables.size(); ++k) {
    auto& t = tables[k];
    const int ranks = t.ranks > 0 ? t.ranks : t.ranks_from_busbw > 0 ? t.ranks_from_busbw : t.threads * t.gpus_per_thread;
    const int per_process = t.processes > 0 ? std::max(1, t.ranks / t.processes) : t.threads * t.gpus_per_thread;
    for (auto& r : t.rows) {
      r.gpus = ranks;
      r.gpus_per_process = std::min(per_process, t.gpus_per_thread);
      r.algorithm = algorithm_from_env(t.env);
      r.system = tables.size() == 1 ? origin : fmt::format("{} table {}", origin, k + 1);
      if (!t.device.empty()) r.system += " (" + t.device + ")";
      std::string n = "nccl-tests";
      if (!t.nccl_version.empty()) n += " NCCL " + t.nccl_version;
      n += "; redop " + r.notes;
      // (what the model does not see: it launches one kernel per collective and times the GPUs)
      if (t.graph_launches > 0) n += fmt::format("; CUDA graph (-G {}): the launches replayed, not issued", t.graph_launches);
      if (t.agg_iters > 1) n += fmt::format("; {} collectives per launch (-m {})", t.agg_iters, t.agg_iters);
      if (t.cpu_time) n += "; host (CPU) time";
      r.notes = n;
    }
  }
}

// nccl-tests reports an All-Reduce's busbw as algbw x 2(n-1)/n (src/all_reduce.cu); other
// collectives use (n-1)/n (reduce_scatter, all_gather) or 1 (broadcast, reduce, sendrecv).
// A row whose ratio is not All-Reduce's at the table's rank count is another benchmark's
// (or the count is wrong): an error, not a run modelled on the wrong collective. Without the
// device list the count is one process's (nThread x nGpus): the ratio gives the whole run's
// where it names one count alone. Rows under 1 GB/s are too coarsely printed to tell.
void measured_text::check_all_reduce_busbw(NcclTestsTable& t, const std::vector<RowBandwidth>& bws, const char* ranks_from) {
  auto factor = [](int n) { return 2.0 * (n - 1) / n; };
  auto tolerance = [](const RowBandwidth& b) { return 0.005 / b.alg + 0.005 / std::max(b.bus, 0.005) + 0.005; };
  const RowBandwidth* best = nullptr;
  for (const RowBandwidth& b : bws)
    if (b.alg >= 1.0 && (!best || b.alg > best->alg)) best = &b;
  if (!best) return;
  int n = t.ranks;
  if (n == 0) {
    const double r = best->bus / best->alg, tol = tolerance(*best) * std::max(r, 1.0);
    const int per = t.threads * t.gpus_per_thread;
    if (!(r < 2.0)) return;
    const long m = std::lround(2.0 / (2.0 - r));
    auto near = [&](long k) { return k >= 1 && std::abs(factor(static_cast<int>(k)) - r) <= tol; };
    if (m < 1 || m > 100000 || !near(m) || near(m - 1) || near(m + 1)) return;  // (no count alone: unchecked)
    n = per;  // (a count no process count divides: checked against one process's, and an error)
    if (m % per == 0) t.ranks_from_busbw = n = static_cast<int>(m);
  }
  const double f = factor(n);
  for (const RowBandwidth& b : bws) {
    if (b.alg < 1.0) continue;
    const double r = b.bus / b.alg;
    if (std::abs(r - f) <= tolerance(b) * std::max({r, f, 1.0})) continue;
    std::string other;
    if (n > 1 && std::abs(r - f / 2) <= tolerance(b) * std::max(r, 1.0))
      other = ", reduce_scatter's and all_gather's (n-1)/n";
    else if (std::abs(r - 1.0) <= tolerance(b))
      other = ", broadcast's, reduce's and sendrecv's";
    throw Error(fmt::format("{}: busbw / algbw = {:.3f}{}, where an All-Reduce on the table's {} ranks reports 2(n-1)/n = "
                            "{:.3f}: not all_reduce_perf output, or the rank count ({}) is wrong",
                            b.where, r, other, n, f, t.ranks > 0 ? ranks_from : "nThread x nGpus: no '# Using devices' list"));
  }
}

MeasuredFile load_measured(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw Error(fmt::format("{}: cannot read the file", file.string()));
  std::ostringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  MeasuredFile m;
  m.path = file;
  m.sha256 = sha256_hex(text);
  const std::string origin = file.filename().string();
  std::string first, first_row;  // the first non-blank line; the first that is no '#' comment
  for (const auto& l : lines_of(text)) {
    const std::string t = trim(l);
    if (t.empty()) continue;
    if (first.empty()) first = t;
    if (t[0] != '#') {
      first_row = t;
      break;
    }
  }
  if (first.empty()) throw Error(fmt::format("{}: empty file", file.string()));
  if (first[0] == '{') {
    m.format = "nccl-tests";  // (its JSON report: the same facts)
    m.tables = parse_nccl_tests_json(text, origin, &m.ignored);
    for (const auto& t : m.tables) m.rows.insert(m.rows.end(), t.rows.begin(), t.rows.end());
    return m;
  }
  const bool csv = looks_like_csv_header(first_row) || (first[0] != '#' && (first.find("measured_us") != std::string::npos ||
                                        first.find("time_us") != std::string::npos ||
                                        (first.find("metric") != std::string::npos && first.find("value") != std::string::npos)));
  if (csv) {
    m.format = "csv";
    m.rows = parse_measured_csv(text, origin);
  } else {
    m.format = "nccl-tests";
    m.tables = parse_nccl_tests(text, origin, &m.ignored);
    for (const auto& t : m.tables) m.rows.insert(m.rows.end(), t.rows.begin(), t.rows.end());
  }
  return m;
}

// ------------------------------------------------------------------ SHA-256 (FIPS 180-4)

std::string sha256_hex(const std::string& data) {
  static constexpr std::array<std::uint32_t, 64> k = {
      0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
      0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
      0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
      0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
      0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
      0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
      0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
      0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};
  std::array<std::uint32_t, 8> h = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                    0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  std::string msg = data;
  const std::uint64_t bits = static_cast<std::uint64_t>(data.size()) * 8;
  msg += static_cast<char>(0x80);
  while (msg.size() % 64 != 56) msg += '\0';
  for (int i = 7; i >= 0; --i) msg += static_cast<char>((bits >> (8 * i)) & 0xff);
  auto rotr = [](std::uint32_t x, int n) { return (x >> n) | (x << (32 - n)); };
  for (std::size_t off = 0; off < msg.size(); off += 64) {
    std::array<std::uint32_t, 64> w{};
    for (int i = 0; i < 16; ++i)
      w[i] = (static_cast<std::uint32_t>(static_cast<unsigned char>(msg[off + 4 * i])) << 24) |
             (static_cast<std::uint32_t>(static_cast<unsigned char>(msg[off + 4 * i + 1])) << 16) |
             (static_cast<std::uint32_t>(static_cast<unsigned char>(msg[off + 4 * i + 2])) << 8) |
             static_cast<std::uint32_t>(static_cast<unsigned char>(msg[off + 4 * i + 3]));
    for (int i = 16; i < 64; ++i) {
      const std::uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
      const std::uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
      w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    auto a = h;
    for (int i = 0; i < 64; ++i) {
      const std::uint32_t S1 = rotr(a[4], 6) ^ rotr(a[4], 11) ^ rotr(a[4], 25);
      const std::uint32_t ch = (a[4] & a[5]) ^ (~a[4] & a[6]);
      const std::uint32_t t1 = a[7] + S1 + ch + k[i] + w[i];
      const std::uint32_t S0 = rotr(a[0], 2) ^ rotr(a[0], 13) ^ rotr(a[0], 22);
      const std::uint32_t mj = (a[0] & a[1]) ^ (a[0] & a[2]) ^ (a[1] & a[2]);
      const std::uint32_t t2 = S0 + mj;
      a = {t1 + t2, a[0], a[1], a[2], a[3] + t1, a[4], a[5], a[6]};
    }
    for (int i = 0; i < 8; ++i) h[i] += a[i];
  }
  std::string out;
  for (std::uint32_t x : h) out += fmt::format("{:08x}", x);
  return out;
}

}  // namespace scin
