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
      {"sym", "nccl-sym"},           {"sym-mem", "nccl-sym"},        {"symmem", "nccl-sym"},
      {"symmetric", "nccl-sym"},     {"nccl-symmetric", "nccl-sym"}, {"nccl-sym-mem", "nccl-sym"},
  };
  if (auto it = alias.find(a); it != alias.end()) return it->second;
  for (const char* p : kRingProtocolKeys)  // "nccl-ring-ll128", "ring/ll128"
    for (const char* pre : {"nccl-ring-", "ring/", "nccl-ring/"})
      if (a == std::string(pre) + p) return ring_algorithm_for(p);
  return a;
}

std::string ring_algorithm_for(std::string_view protocol_key) { return "ring-" + std::string(protocol_key); }

const char* ring_protocol_of(std::string_view algorithm) {
  if (!algorithm.starts_with("ring-")) return nullptr;
  for (const char* p : kRingProtocolKeys)
    if (algorithm.substr(5) == p) return p;
  return nullptr;
}

bool read_symmetric_kernel_choice(MeasuredRow& row) {
  if (row.algorithm != "one-shot") return false;
  const std::string text = ascii_lower(row.system + " " + row.notes);
  const bool symmetric = text.find("sym-mem") != std::string::npos || text.find("symmetric kernel") != std::string::npos;
  if (!symmetric || text.find("nccl_sym_kernel") != std::string::npos) return false;
  row.algorithm = "nccl-sym";
  row.notes += std::string(row.notes.empty() ? "" : "; ") +
               "read as nccl-sym: timed through NCCL's symmetric kernels, where NCCL picks a one-shot or a two-shot "
               "kernel by size (src/sym_kernels.cc), not one-shot alone";
  return true;
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
                                             std::vector<std::string>* ignored, std::vector<std::string>* skipped_tables) {
  std::vector<NcclTestsTable> tables;
  const auto lines = lines_of(text);
  NcclTestsTable cur;
  bool open = false;       // a header (or rows) started the current table
  bool have_root = true;   // the column header names `root`
  bool header_seen = false;
  std::set<std::string> pids;  // "host/pid" of the device list's ranks
  // NCCL_* settings: `env` persists (export lines: later runs inherit it); `pending` are the
  // next run's own (its command line, or NCCL's report of them before its header); `run_env`
  // the open table's own. A table takes them until its first row: what follows its rows is
  // a later run's.
  std::map<std::string, std::string> env, pending, run_env;
  bool rccl = false;       // an rccl-tests log
  // Another benchmark's run (a log of a suite: all_gather_perf, alltoall_perf, ... one after
  // another): the one the last line naming a benchmark named ("" for all_reduce_perf), whose
  // tables are skipped; the first named and its line (the error if no All-Reduce table is left).
  std::string other;
  int first_other_line = 0;
  std::string first_other;
  bool skipping = false;   // the open table is another benchmark's (skipped_name)
  std::string skipped_name;
  std::size_t skipped_rows = 0;
  bool implicit = false;   // the open table had no '# nThread' line (its rank count from the list or busbw)
  std::string version;
  std::vector<RowBandwidth> bws;  // the current table's out-of-place bandwidths
  int half = 4;             // columns per half (time algbw busbw #wrong; 8 with the per-iteration report)
  bool timestamp = false;   // a time stamp after the in-place half
  auto close = [&]() {
    if (open && skipping && skipped_rows > 0 && skipped_tables)
      skipped_tables->push_back(fmt::format("{}:{}: {}'s table ({} rows) skipped: scin reads All-Reduce tables only",
                                            origin, cur.first_line, skipped_name, skipped_rows));
    if (open && !skipping && !cur.rows.empty()) {
      check_all_reduce_busbw(cur, bws, "the '# Using devices' list");
      if (implicit && cur.ranks == 0 && cur.ranks_from_busbw == 0)
        fail(origin, cur.first_line,
             "no '# nThread ... nGpus ...' header nor '# Using devices' list before this table, and its busbw / algbw "
             "(rows of 1 GB/s and more) names no rank count: include the log from its '# nThread' line");
      cur.processes = static_cast<int>(pids.size());
      tables.push_back(std::move(cur));
    }
    bws.clear();
    cur = NcclTestsTable{};
    pids.clear();
    run_env.clear();
    implicit = false;
    skipping = false;
    skipped_rows = 0;
    open = false;
    header_seen = false;
    have_root = true;
    half = 4;
    timestamp = false;
  };
  // The open table's settings, until its first row.
  auto settle = [&]() {
    if (!open || !cur.rows.empty()) return;
    cur.env = env;
    for (const auto& [k, v] : run_env) cur.env[k] = v;
    cur.nccl_version = version;
    cur.rccl = rccl;
  };
  auto open_table = [&](int ln, bool without_header) {
    close();
    open = true;
    implicit = without_header;
    if (without_header) cur.gpus_per_thread = 0;  // (unknown: the process layout from the Pids)
    cur.first_line = ln;
    run_env = std::move(pending);
    pending.clear();
    skipping = !other.empty();
    skipped_name = other;
    settle();
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
    // (A line naming a benchmark before a table's rows is that run's; after them, the next run's.
    // "Collective test concluded: X" closes X's run: it names no next one.)
    if (const std::string t = nccl_test_in(line); !t.empty() && line.find("test concluded") == std::string::npos) {
      other = t == "all_reduce_perf" ? std::string() : t;
      if (!other.empty() && first_other.empty()) first_other = other, first_other_line = ln;
      if (open && cur.rows.empty() && skipped_rows == 0) skipping = !other.empty(), skipped_name = other;
    }
    const bool nccl_report = line.find("NCCL INFO") != std::string::npos || line.find("NCCL WARN") != std::string::npos;
    if (std::map<std::string, std::string> found; scan_env(line, found), !found.empty()) {
      // (NCCL reports its settings as a run starts: after a table's rows, the next run's.)
      auto& into = !nccl_report && sets_environment(words(line[0] == '#' ? line.substr(1) : line)) ? env
                   : nccl_report && open && cur.rows.empty()                                       ? run_env
                                                                                                   : pending;
      for (const auto& [k, v] : found) into[k] = v;
      settle();
    }
    if (line.find("rccl-tests") != std::string::npos || line.find("RCCL version") != std::string::npos) {
      rccl = true;
      settle();
    }
    if (auto v = line.find("NCCL version "); v != std::string::npos) {
      auto w = words(line.substr(v + 13));
      if (!w.empty()) version = w[0];
      settle();
    } else if (const std::string lib = nccl_library_version(line); !lib.empty()) {
      version = lib;
      settle();
    }
    if (line[0] == '#') {
      const auto w = words(line.substr(1));
      // (A device list or column header with no '# nThread' line before it: a table all the same.)
      const bool starts_table = !w.empty() && (w[0] == "Using" || (w[0] == "Rank" && w.size() >= 4) || w[0] == "size");
      if (starts_table && (!open || !cur.rows.empty())) open_table(ln, true);
      if (w.size() >= 4 && w[0] == "nThread") {
        open_table(ln, false);
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
        for (std::size_t k = 0; k + 1 < w.size(); ++k)  // (Pids repeat across hosts: containers)
          if (w[k] == "Pid") pids.insert((k + 3 < w.size() && w[k + 2] == "on" ? w[k + 3] : std::string()) + "/" + w[k + 1]);
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
        timestamp = w.back() == "timestamp";
        // (a half holds time algbw busbw [#wrong] at least: a header with fewer keeps the plain layout;
        // one half alone, as the header lists it)
        const auto end = timestamp ? w.end() - 1 : w.end();
        const auto span = b != w.end() ? b - a : a != w.end() ? end - a : 0;
        half = span >= 3 && span <= 16 ? static_cast<int>(span) : 4;
        if (a != w.end() && *a == "cputime") cur.cpu_time = true;
      } else if (w.size() >= 4 && w[0] == "Avg" && w[1] == "bus" && w[2] == "bandwidth") {
        double v = 0;
        if (parse_double(w.back(), v)) cur.avg_busbw_GBps = v;
      }
      continue;
    }
    // Non-comment: NCCL log lines are allowed anywhere; everything else must be a data row.
    if (nccl_report) continue;
    const auto w = words(line);
    if (w.empty()) continue;  // only white space trim() keeps (a vertical tab, a form feed)
    std::uint64_t size = 0, count_field = 0;
    // (A row names its type and reduction after the two numbers: "  0:  10  32" of numactl or an
    // amd-smi table line pasted with the log are no rows.)
    auto word = [&](std::size_t k) { return k < w.size() && std::isalpha(static_cast<unsigned char>(w[k][0])); };
    if (!parse_u64(w[0], size) || w.size() < 2 || !parse_u64(w[1], count_field) || !word(2) || !word(3)) {
      if (line.find('=') != std::string::npos && line.find("NCCL_") != std::string::npos)
        continue;  // "NCCL_ALGO=NVLS" on its own line
      // Not a row (an MPI or shell message pasted with the log): skipped, and said.
      if (ignored) ignored->push_back(fmt::format("{}:{}: {}", origin, ln, line.size() > 100 ? line.substr(0, 100) + "..." : line));
      continue;
    }
    if (!open) open_table(ln, true);
    if (skipping) {
      ++skipped_rows;
      continue;
    }
    if (size == 0) {  // (-b 0: nccl-tests times the call with no data)
      if (ignored) ignored->push_back(zero_byte_row(fmt::format("{}:{}", origin, ln)));
      continue;
    }
    if (!header_seen) have_root = w.size() == 13 || w.size() == 9;
    const std::size_t lead = 4;  // size count type redop
    std::size_t h = static_cast<std::size_t>(half);
    // (A header listing no #wrong over rows that have it: the rows' layout.)
    if (h == 3 && (w.size() == lead + (have_root ? 1 : 0) + 4 || w.size() == lead + (have_root ? 1 : 0) + 8)) h = 4;
    const std::size_t want = lead + (have_root ? 1 : 0) + h;
    const bool full = w.size() == want + h || (timestamp && w.size() == want + h + 2);
    if (w.size() != want && !full)
      fail(origin, ln, fmt::format("expected {} or {} columns (size count type redop{} time algbw busbw{}{} "
                                   "[in-place time algbw busbw{}{}]{}), got {}",
                                   want, want + h, have_root ? " root" : "", h == 3 ? "" : " #wrong",
                                   h == 8 ? " i_min i_max i_p99 i_cv%" : "", h == 3 ? "" : " #wrong", h == 8 ? " ..." : "",
                                   timestamp ? " [timestamp]" : "", w.size()));
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
  if (tables.empty() && !first_other.empty()) fail(origin, first_other_line, other_benchmark(first_other));
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
      // (No '# nThread' line: one process's GPUs from the Pids, else one.)
      r.gpus_per_process = t.gpus_per_thread > 0 ? std::min(per_process, t.gpus_per_thread)
                           : t.processes > 0    ? std::max(1, ranks / t.processes)
                                                : 1;
      r.algorithm = algorithm_from_env(t.env);
      r.system = tables.size() == 1 ? origin : fmt::format("{} table {}", origin, k + 1);
      if (!t.device.empty()) r.system += " (" + t.device + ")";
      std::string n = t.rccl ? "rccl-tests" : "nccl-tests";
      if (!t.nccl_version.empty()) n += (t.rccl ? " RCCL " : " NCCL ") + t.nccl_version;
      n += "; redop " + r.notes;
      // (what the model does not see: it launches one kernel per collective and times the GPUs)
      if (t.graph_launches > 0) n += fmt::format("; CUDA graph (-G {}): the launches replayed, not issued", t.graph_launches);
      if (t.agg_iters > 1) n += fmt::format("; {} collectives per launch (-m {})", t.agg_iters, t.agg_iters);
      if (t.cpu_time) n += "; host (CPU) time";
      if (t.gpus_per_thread == 0)
        n += t.processes > 0 ? "; no '# nThread' line: GPUs per process from the Pids"
                             : "; no '# nThread' line: one GPU per process assumed";
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
    // (The count from the printed ratio within its rounding alone, 2 decimals each: at 16 ranks
    // 2(n-1)/n moves by 0.008 a rank, the check's slack below by 0.01.)
    const double r = best->bus / best->alg, tol = 1.01 * r * (0.005 / best->alg + 0.005 / std::max(best->bus, 0.005));
    const int per = std::max(1, t.threads * t.gpus_per_thread);  // (0: no '# nThread' line)
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
    m.tables = parse_nccl_tests(text, origin, &m.ignored, &m.skipped_tables);
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
