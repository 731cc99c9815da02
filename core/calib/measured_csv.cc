// The CSV formats of measured rows: the simple one (system,gpus,algorithm,bytes,measured_us
// [,busbw]) and its long layout (metric,value,unit), under the column names and units other
// files give them: "Size (B)", "Time (us)", "latency_ms", "busbw (GB/s)", "#GPUs"...
#include <map>
#include <set>

#include "base/csv.h"
#include "base/text.h"
#include "base/units.h"
#include "calib/measured.h"
#include "calib/measured_text.h"

namespace scin {

using namespace measured_text;

namespace {

// A column name as files write it -> a key, its unit and its last word: "Time (us)" ->
// {"time", "us"}, "busbw [GB/s]" -> {"busbw", "GB/s"}, "#GPUs" -> {"gpus", ""}, "Message
// Size" -> {"message_size", ""}, "busbw_GBps" -> {"busbw_gbps", "", "GBps"}. The key is in
// lower case with each run of other characters one '_'; the unit and the last word keep
// their case (Gb/s is gigabits, GB/s gigabytes).
struct ColumnName {
  std::string key, unit, last;
};

ColumnName column_name(const std::string& raw) {
  std::string s = trim(raw);
  ColumnName c;
  if (!s.empty() && (s.back() == ')' || s.back() == ']')) {
    const auto o = s.rfind(s.back() == ')' ? '(' : '[');
    if (o != std::string::npos) {
      c.unit = trim(s.substr(o + 1, s.size() - o - 2));
      s.resize(o);
    }
  }
  bool gap = false;
  for (char ch : s) {
    if (!std::isalnum(static_cast<unsigned char>(ch))) {
      gap = true;
      continue;
    }
    if (gap && !c.key.empty()) {
      c.key += '_';
      c.last.clear();
    }
    gap = false;
    c.key += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    c.last += ch;
  }
  return c;
}

// Canonical column names and the other names files give them (keys as column_name makes them).
const std::vector<std::pair<const char*, std::vector<const char*>>>& csv_column_aliases() {
  static const std::vector<std::pair<const char*, std::vector<const char*>>> aliases = {
      {"system", {"platform", "machine", "hardware", "cluster", "system_name", "gpu", "gpu_type", "gpu_model",
                  "accelerator", "device", "node_type"}},
      {"gpus", {"num_gpus", "n_gpus", "ngpus", "gpu_count", "nranks", "ranks", "num_ranks", "n_ranks", "world_size",
                "nproc", "np"}},
      {"algorithm", {"algo", "nccl_algo", "algorithm_name"}},
      {"bytes", {"message_bytes", "size_bytes", "size", "msg_bytes", "message_size_bytes", "nbytes", "message_size",
                 "msg_size", "message"}},
      {"dtype", {"type", "datatype", "data_type"}}};
  return aliases;
}

bool is_alias_of(const std::string& name, const std::string& key) {
  for (const auto& [n, aliases] : csv_column_aliases())
    if (name == n)
      for (const char* a : aliases)
        if (key == a) return true;
  return false;
}

// Names of a time column, to be followed by a unit: "time_us", "Latency (ms)", "avg_time [us]".
const std::set<std::string>& time_names() {
  static const std::set<std::string> n = {"measured", "measured_time", "time", "latency", "avg_time", "avg",
                                          "mean_time", "avg_latency", "mean_latency", "time_avg", "duration",
                                          "elapsed"};
  return n;
}

// Time names that need a unit: alone they are an error, not a column we skip.
const std::set<std::string>& unitless_is_error() {
  static const std::set<std::string> n = {"time", "latency", "measured_time", "duration", "elapsed"};
  return n;
}

// A time unit -> microseconds per unit (0 if it is none).
double us_per(const std::string& unit) {
  static const std::map<std::string, double> to_us = {
      {"ns", 1e-3}, {"us", 1},      {"usec", 1},  {"\xC2\xB5s", 1}, {"\xCE\xBCs", 1}, {"microseconds", 1},
      {"ms", 1e3},  {"msec", 1e3},  {"milliseconds", 1e3}, {"s", 1e6}, {"sec", 1e6}, {"seconds", 1e6}};
  const auto it = to_us.find(ascii_lower(unit));
  return it == to_us.end() ? 0 : it->second;
}

// The columns of a header, resolved: where each canonical column is, and the units of the
// time, size and bandwidth columns.
struct Columns {
  std::map<std::string, std::size_t> col;  // canonical name -> field index
  long time = -1;                          // a time column, and its unit in microseconds
  double us_per_unit = 1;
  long busbw = -1, algbw = -1;             // bandwidth columns, and their units in GB/s
  double busbw_GBps_per_unit = 1, algbw_GBps_per_unit = 1;
  long in_place = -1;                      // nccl-tests' in-place time, and its unit in microseconds
  double in_place_us_per_unit = 1;
  std::string size_suffix;                 // the size column's unit as a size suffix ("", "K", ...)
  int recognised = 0;                      // columns with a known name
};

// Resolves `header`. A unit that cannot be read (a size in "KB/s", a bandwidth in gigabits, a
// time column without a unit) throws an Error naming the column and what it accepts.
Columns resolve_columns(const std::vector<std::string>& header) {
  Columns c;
  std::vector<ColumnName> names;
  for (const auto& h : header) names.push_back(column_name(h));
  std::map<std::string, std::size_t> by_key;
  for (std::size_t k = 0; k < names.size(); ++k) by_key.emplace(names[k].key, k);
  for (const auto& [name, aliases] : csv_column_aliases()) {
    auto it = by_key.find(name);
    for (std::size_t a = 0; it == by_key.end() && a < aliases.size(); ++a) it = by_key.find(aliases[a]);
    if (it != by_key.end()) c.col[name] = it->second, ++c.recognised;
  }
  for (const char* extra : {"gpus_per_process", "notes", "source_url", "source", "metric", "value", "unit"})
    if (auto it = by_key.find(extra); it != by_key.end()) c.col.emplace(extra, it->second);

  auto shown = [&](std::size_t k) { return trim(header[k]); };
  // A key's unit: written after it in brackets, or as its last word ("time_us", "busbw_GBps").
  auto split = [](const ColumnName& n, auto&& is_unit) -> std::pair<std::string, std::string> {
    if (!n.unit.empty()) return {n.key, n.unit};
    const auto u = n.key.rfind('_');
    if (u != std::string::npos && is_unit(n.last)) return {n.key.substr(0, u), n.last};
    return {n.key, ""};
  };
  static const std::set<std::string> busbw_names = {"busbw", "bus_bw", "bus_bandwidth", "measured_busbw"};
  static const std::set<std::string> algbw_names = {"algbw", "alg_bw", "algo_bw", "algorithm_bandwidth",
                                                    "measured_algbw"};
  auto bandwidth_unit = [](const std::string& u) {
    return u == "GB/s" || u == "GBps" || u == "Gb/s" || u == "Gbps" || ascii_lower(u) == "gb/s" ||
           ascii_lower(u) == "gbps" || ascii_lower(u) == "mb/s" || ascii_lower(u) == "gbit/s";
  };
  for (std::size_t k = 0; k < names.size(); ++k) {
    // Time: a time name with a unit. The canonical measured_us comes first, then file order.
    const auto [tbase, tunit] = split(names[k], [](const std::string& w) { return us_per(w) > 0; });
    if ((tbase == "in_place" || tbase == "in_place_time") && us_per(tunit) > 0) {  // (scin export's in_place_us)
      c.in_place = static_cast<long>(k), c.in_place_us_per_unit = us_per(tunit);
      continue;
    }
    if (time_names().count(tbase) && (!tunit.empty() || unitless_is_error().count(tbase))) {
      if (tunit.empty())
        throw Error(fmt::format("column '{}' gives no time unit: name it like '{}_us' or '{} (us)' (ns, us, ms or s)",
                                shown(k), tbase, shown(k)));
      const double f = us_per(tunit);
      if (f == 0)
        throw Error(fmt::format("column '{}': '{}' is not a time unit (ns, us, ms or s)", shown(k), tunit));
      if (c.time < 0 || tbase == "measured") c.time = static_cast<long>(k), c.us_per_unit = f;
      ++c.recognised;
      continue;
    }
    // Bandwidth: GB/s (10^9 bytes/s) unless the name says otherwise.
    const auto [bbase, bunit] = split(names[k], bandwidth_unit);
    const bool bus = busbw_names.count(bbase) > 0, alg = algbw_names.count(bbase) > 0;
    if (bus || alg) {
      double f = 1;
      if (bunit == "Gb/s" || bunit == "Gbps" || ascii_lower(bunit) == "gbit/s")
        throw Error(fmt::format("column '{}': {} is gigabits per second; give GB/s (10^9 bytes/s), as nccl-tests "
                                "prints it", shown(k), bunit));
      if (ascii_lower(bunit) == "mb/s") f = 1e-3;
      else if (!bunit.empty() && ascii_lower(bunit) != "gb/s" && ascii_lower(bunit) != "gbps")
        throw Error(fmt::format("column '{}': '{}' is not a bandwidth unit (GB/s = 10^9 bytes/s, or MB/s)",
                                shown(k), bunit));
      (bus ? c.busbw : c.algbw) = static_cast<long>(k);
      (bus ? c.busbw_GBps_per_unit : c.algbw_GBps_per_unit) = f;
      ++c.recognised;
    }
  }
  // A size named with its unit as the last word: "size_KiB", "msg_size_bytes" is an alias.
  static const std::set<std::string> size_words = {"b", "kb", "kib", "mb", "mib", "gb", "gib"};
  for (std::size_t k = 0; !c.col.count("bytes") && k < names.size(); ++k) {
    const auto [base, unit] = split(names[k], [](const std::string& w) { return size_words.count(ascii_lower(w)) > 0; });
    if (!unit.empty() && (base == "bytes" || is_alias_of("bytes", base))) {
      c.col["bytes"] = k, ++c.recognised;
      names[k].unit = unit;
    }
  }
  // The size column's unit becomes a suffix of the size grammar (K = 1024, as nccl-tests' -b/-e).
  if (auto it = c.col.find("bytes"); it != c.col.end() && !names[it->second].unit.empty()) {
    static const std::map<std::string, std::string> suffix = {
        {"b", ""},   {"byte", ""},  {"bytes", ""}, {"k", "K"}, {"kb", "K"}, {"kib", "K"},
        {"m", "M"},  {"mb", "M"},   {"mib", "M"},  {"g", "G"}, {"gb", "G"}, {"gib", "G"}};
    const auto s = suffix.find(ascii_lower(names[it->second].unit));
    if (s == suffix.end())
      throw Error(fmt::format("column '{}': '{}' is not a size unit (B, KiB, MiB or GiB; K = 1024)",
                              shown(it->second), names[it->second].unit));
    c.size_suffix = s->second;
  }
  return c;
}

// The All-Reduce time a bandwidth implies (GB/s = 10^9 bytes/s): algbw = bytes / time,
// busbw = algbw x 2(n-1)/n (nccl-tests' definition).
double time_from_bandwidth_us(std::uint64_t bytes, int gpus, const std::string& metric, double GBps) {
  const double n = gpus;
  const double algbw = metric == "algbw" ? GBps : GBps * n / (2 * (n - 1));
  return static_cast<double>(bytes) / (algbw * 1e3);
}

// A row of the long layout as a time: a time or latency in its unit, or a bandwidth
// turned into the time it implies (algbw = bytes / time; busbw = algbw x 2(n-1)/n,
// nccl-tests' definition for All-Reduce). Bandwidths are in 10^9 bytes/s.
void long_layout_time(MeasuredRow& r, const std::string& metric, const std::string& value, const std::string& unit,
                      const std::string& origin, int ln) {
  double v = 0;
  if (!parse_double(value, v) || !(v > 0)) fail(origin, ln, fmt::format("value: '{}' is not a positive number", value));
  if (metric == "time" || metric == "latency") {
    static const std::map<std::string, double> to_us = {{"ns", 1e-3}, {"us", 1}, {"ms", 1e3}, {"s", 1e6}};
    const auto it = to_us.find(unit);
    if (it == to_us.end())
      fail(origin, ln, fmt::format("unit: '{}' is not a time unit for metric '{}' (ns, us, ms or s)", unit, metric));
    r.measured_us = v * it->second;
    return;
  }
  if (metric == "busbw" || metric == "algbw") {
    if (unit != "GB/s" && unit != "GBps")
      fail(origin, ln, fmt::format("unit: '{}' is not a bandwidth unit for metric '{}' (GB/s = 10^9 bytes/s)", unit, metric));
    if (metric == "busbw") r.busbw_GBps = v;
    r.measured_us = time_from_bandwidth_us(r.bytes, r.gpus, metric, v);
    return;
  }
  fail(origin, ln, fmt::format("metric: '{}' is not one of time, latency, busbw, algbw", metric));
}

}  // namespace

bool measured_text::looks_like_csv_header(const std::string& line) {
  if (line.empty() || line[0] == '#') return false;
  std::vector<std::string> fields;
  try {
    fields = csv_parse_record(line);
  } catch (const Error&) {
    return false;
  }
  if (fields.size() < 2) return false;
  try {
    const Columns c = resolve_columns(fields);
    // A GPU count and a size; or, with three fields or more, two columns of ours (the parser
    // then says which column is missing).
    return (c.col.count("gpus") && c.col.count("bytes")) || (fields.size() >= 3 && c.recognised >= 2);
  } catch (const Error&) {
    return true;  // a column of ours with a unit we cannot read: the parser says which
  }
}

std::vector<MeasuredRow> parse_measured_csv(const std::string& text, const std::string& origin) {
  const auto lines = lines_of(text);
  std::size_t first = 0;
  // Blank lines and '#' comment lines (a source or a note above the header) are skipped.
  auto skipped = [&](std::size_t i) {
    const std::string t = trim(lines[i]);
    return t.empty() || t[0] == '#';
  };
  while (first < lines.size() && skipped(first)) ++first;
  if (first == lines.size()) throw Error(fmt::format("{}: empty file", origin));
  const int header_line = static_cast<int>(first) + 1;
  std::vector<std::string> header;
  Columns cols;
  try {
    header = csv_parse_record(lines[first]);
    cols = resolve_columns(header);
  } catch (const Error& e) {
    fail(origin, header_line, e.what());
  }
  auto& col = cols.col;
  // The long layout (one figure per row): metric (time | latency | busbw | algbw), value, unit.
  const bool long_layout = cols.time < 0 && col.count("metric") && col.count("value") && col.count("unit");
  for (const char* need : {"system", "gpus", "bytes"})
    if (!col.count(need))
      fail(origin, header_line,
           fmt::format("header lacks column '{}' (need system,gpus,algorithm,bytes,measured_us[,busbw]; or "
                       "system,gpus,algorithm,bytes,metric,value,unit)", need));
  const long busbw = cols.busbw, algbw = cols.algbw;
  if (!long_layout && cols.time < 0 && busbw < 0 && algbw < 0)
    fail(origin, header_line,
         "header lacks column 'measured_us' (or another time column with its unit, e.g. 'time_us' or 'Time (ms)'; "
         "or busbw / algbw in GB/s to derive it from; or the columns metric,value,unit of the long layout)");
  auto opt = [&](const char* name) -> long { return col.count(name) ? static_cast<long>(col[name]) : -1; };
  const long algorithm = opt("algorithm");
  const long dtype = opt("dtype");
  const long notes = opt("notes");
  const long url = col.count("source_url") ? opt("source_url") : opt("source");
  const long gpp = opt("gpus_per_process");

  std::vector<MeasuredRow> rows;
  for (std::size_t i = first + 1; i < lines.size(); ++i) {
    const int ln = static_cast<int>(i) + 1;
    if (skipped(i)) continue;
    std::vector<std::string> f;
    try {
      f = csv_parse_record(lines[i]);
    } catch (const Error& e) {
      fail(origin, ln, e.what());
    }
    if (f.size() != header.size())
      fail(origin, ln, fmt::format("{} fields, the header has {}", f.size(), header.size()));
    auto cell = [&](long k) { return k >= 0 ? trim(f[static_cast<std::size_t>(k)]) : std::string(); };
    MeasuredRow r;
    r.system = trim(f[col["system"]]);
    if (r.system.empty()) fail(origin, ln, "system: empty");
    std::uint64_t v = 0;
    if (!parse_u64(trim(f[col["gpus"]]), v) || v < 2 || v > 1024)
      fail(origin, ln, fmt::format("gpus: '{}' is not a whole number from 2 to 1024", f[col["gpus"]]));
    r.gpus = static_cast<int>(v);
    // No algorithm column: the rows are what NCCL chose (nccl-tests without NCCL_ALGO).
    r.algorithm = algorithm >= 0 ? canonical_algorithm(cell(algorithm)) : "nccl-auto";
    if (r.algorithm.empty()) fail(origin, ln, "algorithm: empty");
    const std::string size = cell(static_cast<long>(col["bytes"]));
    if (!cols.size_suffix.empty() || !parse_u64(size, r.bytes)) {
      try {  // the size grammar of the CLI: "64K", "1 MiB", or a number in the column's unit
        r.bytes = parse_size_bytes(size + cols.size_suffix, "bytes");
      } catch (const Error& e) {
        fail(origin, ln, e.what());
      }
    }
    if (r.bytes == 0) fail(origin, ln, fmt::format("bytes: '{}' is not a positive size", size));
    if (busbw >= 0 && !cell(busbw).empty()) {
      if (!parse_double(cell(busbw), r.busbw_GBps) || r.busbw_GBps < 0)
        fail(origin, ln, fmt::format("busbw: '{}' is not a non-negative number", cell(busbw)));
      r.busbw_GBps *= cols.busbw_GBps_per_unit;
    }
    const long time_col = cols.time;
    if (long_layout) {
      long_layout_time(r, trim(f[col["metric"]]), trim(f[col["value"]]), trim(f[col["unit"]]), origin, ln);
    } else if (!cell(time_col).empty() || (cell(busbw).empty() && cell(algbw).empty())) {
      if (!parse_double(cell(time_col), r.measured_us) || r.measured_us <= 0)
        fail(origin, ln, fmt::format("measured_us: '{}' is not a positive number{}", cell(time_col),
                                     time_col < 0 || cell(time_col).empty() ? " (and no busbw or algbw to derive it from)" : ""));
      r.measured_us *= cols.us_per_unit;
    } else if (!cell(busbw).empty()) {  // no time: the one the reported busbw implies
      if (!(r.busbw_GBps > 0)) fail(origin, ln, fmt::format("busbw: '{}' must be positive to give a time", cell(busbw)));
      r.measured_us = time_from_bandwidth_us(r.bytes, r.gpus, "busbw", r.busbw_GBps);
    } else {
      double a = 0;
      if (!parse_double(cell(algbw), a) || !(a > 0))
        fail(origin, ln, fmt::format("algbw: '{}' is not a positive number", cell(algbw)));
      r.measured_us = time_from_bandwidth_us(r.bytes, r.gpus, "algbw", a * cols.algbw_GBps_per_unit);
    }
    if (!cell(cols.in_place).empty()) {
      if (!parse_double(cell(cols.in_place), r.in_place_us) || !(r.in_place_us > 0))
        fail(origin, ln, fmt::format("in_place_us: '{}' is not a positive number", cell(cols.in_place)));
      r.in_place_us *= cols.in_place_us_per_unit;
    }
    if (!cell(dtype).empty()) r.dtype = canonical_dtype(cell(dtype));
    if (gpp >= 0 && !cell(gpp).empty()) {
      if (!parse_u64(cell(gpp), v) || v < 1 || v > static_cast<std::uint64_t>(r.gpus))
        fail(origin, ln, fmt::format("gpus_per_process: '{}' is not a whole number from 1 to gpus", cell(gpp)));
      r.gpus_per_process = static_cast<int>(v);
    }
    if (notes >= 0) r.notes = f[static_cast<std::size_t>(notes)];
    if (algorithm < 0) r.notes += std::string(r.notes.empty() ? "" : "; ") + "no algorithm column: NCCL's choice";
    if (url >= 0 && !f[static_cast<std::size_t>(url)].empty())
      r.notes += (r.notes.empty() ? "" : "; ") + f[static_cast<std::size_t>(url)];
    read_symmetric_kernel_choice(r);
    r.source = fmt::format("{}:{}", origin, ln);
    rows.push_back(std::move(r));
  }
  if (rows.empty()) throw Error(fmt::format("{}: no data rows after the header", origin));
  return rows;
}

std::string to_measured_csv(const std::vector<MeasuredRow>& rows) {
  std::string out = csv_record({"system", "gpus", "algorithm", "bytes", "measured_us", "busbw", "dtype",
                                "gpus_per_process", "notes", "in_place_us"}) + "\n";
  for (const auto& r : rows)
    out += csv_record({r.system, std::to_string(r.gpus), r.algorithm, std::to_string(r.bytes),
                       fmt::format("{}", r.measured_us), r.busbw_GBps < 0 ? "" : fmt::format("{}", r.busbw_GBps),
                       r.dtype, std::to_string(r.gpus_per_process), r.notes,
                       r.in_place_us < 0 ? "" : fmt::format("{}", r.in_place_us)}) + "\n";
  return out;
}

}  // namespace scin
