// The only file that reads PointRecord / RunInfo fields for analysis: when the
// store's records change, this is the one place to follow them.
#include "analysis/table.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

#include <fmt/format.h>

#include "base/units.h"
#include "engines/analytic/analytic.h"
#include "fabric/config.h"
#include "fabric/params.h"

namespace scin::analysis {
namespace {

using nlohmann::json;

// A run stores its resolved configuration in `config` once the store offers
// that field; until then the spec is all there is.
template <class R>
std::string resolved_config(const R& r) {
  if constexpr (requires { r.config; }) {
    using T = std::decay_t<decltype(r.config)>;
    if constexpr (std::is_same_v<T, json>) {
      return r.config.is_null() ? std::string() : r.config.dump();
    } else if constexpr (std::is_same_v<T, std::string>) {
      return r.config;
    } else if constexpr (requires { config_to_json(r.config); }) {
      return config_to_json(r.config).dump();
    } else {
      return {};
    }
  } else {
    return {};
  }
}

std::string json_text(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_integer() || v.is_number_unsigned()) return v.dump();
  if (v.is_number_float()) return fmt::format("{:g}", v.get<double>());
  return v.dump();
}

// The value of `key` in an object, or null (never throws on non-objects).
const json& member(const json& j, const char* key) {
  static const json null_json;
  if (!j.is_object()) return null_json;
  auto it = j.find(key);
  return it == j.end() ? null_json : *it;
}

double json_number(const json& j, const char* key) {
  const json& v = member(j, key);
  return v.is_number() ? v.get<double>() : kNaN;
}

// The axes of a spec, zip members flattened, each with whether it is zipped.
std::vector<std::pair<const json*, bool>> spec_axes(const json& spec) {
  std::vector<std::pair<const json*, bool>> out;
  const json& axes = member(spec, "axes");
  if (!axes.is_array()) return out;
  for (const json& a : axes) {
    const json& zip = member(a, "zip");
    if (zip.is_array())
      for (const json& z : zip) out.emplace_back(&z, true);
    else
      out.emplace_back(&a, false);
  }
  return out;
}

Column axis_column(const std::string& path) {
  Column c;
  c.key = path;
  c.role = Role::Axis;
  c.short_name = short_axis_name(path);
  if (path == "collective.algorithm") {
    c.label = "Algorithm";
    c.numeric = false;
    c.description = "the All-Reduce algorithm";
  } else if (path == "collective.bytes") {
    c.label = "Message size per rank";
    c.unit = "bytes";
    c.bytes = true;
    c.log_default = true;
    c.description = "message size per rank (binary units)";
  } else if (const ParamInfo* p = find_param(path)) {
    c.label = p->label.empty() ? path : p->label;
    c.unit = p->unit;
    c.bytes = p->unit == "bytes";
    c.numeric = p->type == ParamType::Int || p->type == ParamType::Real;
    c.description = p->help;
  } else {
    c.label = path;  // special paths: preset, engine, input.*, inference.*
    if (path == "preset") c.label = "Fabric preset";
    if (path == "engine") c.label = "Engine";
    if (path == "inference.batch") c.label = "Batch size";
    if (path == "inference.prompt_tokens") c.label = "Prompt tokens";
    if (path == "inference.context_tokens") c.label = "Context tokens";
    if (path == "inference.tp") c.label = "Tensor-parallel degree";
    if (path == "input.dist") c.label = "Input distribution";
    if (path == "quant.block_elems") c.label = "Quantisation block";
    if (path == "system") {
      c.label = "Measured system";
      c.numeric = false;
      c.description = "the machine an imported measurement comes from";
    }
  }
  return c;
}

Column metric(const std::string& key, const std::string& label, const std::string& unit, bool log,
              bool lower_better, const std::string& description, Derived d = Derived::None) {
  Column c;
  c.key = key;
  c.label = label;
  c.short_name = key;
  c.unit = unit;
  c.role = Role::Metric;
  c.log_default = log;
  c.bytes = unit == "bytes";
  c.lower_is_better = lower_better;
  c.derived = d;
  c.description = description;
  return c;
}

// The metric columns of a kind, and how to read each from a point.
struct MetricDef {
  Column col;
  double (*read)(const PointRecord&);
};

std::vector<MetricDef> metric_defs(PointKind kind) {
  std::vector<MetricDef> out;
  switch (kind) {
    case PointKind::Collective: {
      out.push_back({metric("time_us", "Latency", "µs", true, true, "All-Reduce completion time"),
                     [](const PointRecord& p) { return p.time_us; }});
      out.push_back({metric("algbw_GBps", "Algorithm bandwidth", "GB/s", false, false, "message size / time"),
                     [](const PointRecord& p) { return p.algbw_GBps; }});
      out.push_back({metric("busbw_GBps", "Bus bandwidth", "GB/s", false, false,
                            "nccl-tests busbw = algbw x 2(N-1)/N"),
                     [](const PointRecord& p) { return p.busbw_GBps; }});
      out.push_back({metric("max_link_bytes", "Bytes on busiest link", "bytes", true, true,
                            "real bytes on the busiest link direction"),
                     [](const PointRecord& p) { return p.max_link_bytes; }});
      out.push_back({metric("speedup", "Speedup", "×", true, false,
                            "baseline time / time at the same other axis values", Derived::SpeedupTime),
                     nullptr});
      break;
    }
    case PointKind::Quant:
      out.push_back({metric("rel_l2", "Relative L2 error", "", true, true, "||error|| / ||exact||"),
                     [](const PointRecord& p) { return p.rel_l2; }});
      out.push_back({metric("sqnr_dB", "SQNR", "dB", false, false, "signal-to-quantisation-noise ratio"),
                     [](const PointRecord& p) { return p.sqnr_dB; }});
      out.push_back({metric("max_abs", "Max absolute error", "", true, true, "largest element error"),
                     [](const PointRecord& p) { return p.max_abs; }});
      out.push_back({metric("payload_ratio", "Payload ratio", "", false, true,
                            "bytes on the wire / unquantised bytes"),
                     [](const PointRecord& p) { return p.payload_ratio; }});
      out.push_back({metric("error_variance_ratio", "Error variance ratio", "", false, true,
                            "error variance / single-quantisation error variance"),
                     [](const PointRecord& p) { return p.error_variance_ratio; }});
      out.push_back({metric("max_link_bytes", "Bytes on busiest link", "bytes", true, true,
                            "real bytes on the busiest link direction"),
                     [](const PointRecord& p) { return p.max_link_bytes; }});
      break;
    case PointKind::Inference:
      out.push_back({metric("ttft_us", "Time to first token (TTFT)", "µs", true, true, "prefill time"),
                     [](const PointRecord& p) { return p.ttft_us; }});
      out.push_back({metric("tpot_us", "Time per output token (TPOT)", "µs", true, true, "decode step time"),
                     [](const PointRecord& p) { return p.tpot_us; }});
      out.push_back({metric("ttft_speedup", "TTFT speedup", "×", true, false, "baseline TTFT / TTFT",
                            Derived::SpeedupTtft),
                     nullptr});
      out.push_back({metric("tpot_speedup", "TPOT speedup", "×", true, false, "baseline TPOT / TPOT",
                            Derived::SpeedupTpot),
                     nullptr});
      out.push_back({metric("prefill_comm_share", "Prefill communication share", "", false, true,
                            "(communication + quantisation) / TTFT"),
                     [](const PointRecord& p) { return json_number(member(p.extra, "prefill"), "comm_share"); }});
      out.push_back({metric("decode_comm_share", "Decode communication share", "", false, true,
                            "(communication + quantisation) / TPOT"),
                     [](const PointRecord& p) { return json_number(member(p.extra, "decode"), "comm_share"); }});
      out.push_back({metric("prefill_allreduce_us", "Prefill All-Reduce time", "µs", true, true,
                            "one All-Reduce during prefill"),
                     [](const PointRecord& p) { return json_number(member(p.extra, "prefill"), "allreduce_us"); }});
      out.push_back({metric("decode_allreduce_us", "Decode All-Reduce time", "µs", true, true,
                            "one All-Reduce during decode"),
                     [](const PointRecord& p) { return json_number(member(p.extra, "decode"), "allreduce_us"); }});
      break;
    case PointKind::Measured:
      out.push_back({metric("measured_us", "Measured time", "µs", true, true, "the imported measurement"),
                     [](const PointRecord& p) { return p.measured_us; }});
      out.push_back({metric("busbw_GBps", "Bus bandwidth", "GB/s", false, false,
                            "nccl-tests busbw = algbw x 2(N-1)/N"),
                     [](const PointRecord& p) { return p.busbw_GBps; }});
      out.push_back({metric("in_place_us", "Measured in-place time", "µs", true, true,
                            "nccl-tests' in-place time (none where the file gives only one time)"),
                     [](const PointRecord& p) { return json_number(p.extra, "in_place_us"); }});
      break;
  }
  if (kind == PointKind::Collective)
    for (int t = 0; t < static_cast<int>(Term::Count); ++t) {
      const Term term = static_cast<Term>(t);
      MetricDef d{metric(breakdown_column(term), std::string("Breakdown: ") + to_string(term), "ns", false, true,
                         describe(term)),
                  nullptr};
      out.push_back(d);
    }
  return out;
}

// Swept axis paths in spec order (from the points; the spec may be unreadable).
std::vector<std::string> swept_paths(const std::vector<PointRecord>& pts) {
  std::vector<std::string> order;
  std::set<std::string> seen;
  for (const PointRecord& p : pts) {
    if (!p.axes.is_object()) continue;
    for (auto it = p.axes.begin(); it != p.axes.end(); ++it)
      if (seen.insert(it.key()).second) order.push_back(it.key());
    // nlohmann::json objects are sorted by key; spec order is restored below.
  }
  return order;
}

}  // namespace

std::string short_axis_name(const std::string& path) {
  if (path == "collective.bytes") return "size";
  if (path == "collective.algorithm") return "algorithm";
  if (path == "collective.dtype") return "dtype";
  if (path == "quant.block_elems") return "block";
  if (path == "input.dist") return "dist";
  const auto dot = path.rfind('.');
  return dot == std::string::npos ? path : path.substr(dot + 1);
}

std::string format_value(const Column& c, double v) {
  if (!std::isfinite(v)) return "–";
  if (c.bytes && v >= 0 && v == std::floor(v) && v < 1.8e19) {
    const auto b = static_cast<std::uint64_t>(v);
    // Whole binary sizes read as 64 KiB; others keep three significant digits.
    if ((b & (b - 1)) == 0 || b < 1024) return format_size_bytes(b);
  }
  if (c.bytes) {
    static const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    while (std::fabs(v) >= 1024 && u < 4) {
      v /= 1024;
      ++u;
    }
    return fmt::format("{:.3g} {}", v, units[u]);
  }
  // Times in the unit a person reads: 12.3 ms rather than 12300 µs.
  if ((c.unit == "µs" || c.unit == "ns") && std::fabs(v) >= 1e4) {
    static const char* larger[] = {"ns", "µs", "ms", "s"};
    int u = c.unit == "ns" ? 0 : 1;
    while (std::fabs(v) >= 1e3 && u < 3) {
      v /= 1e3;
      ++u;
    }
    return fmt::format("{:.4g} {}", v, larger[u]);
  }
  std::string num = fmt::format("{:.4g}", v);
  if (c.unit.empty()) return num;
  if (c.unit == "×") return num + "×";
  return num + " " + c.unit;
}

std::vector<std::pair<std::string, std::string>> RunSummary::lines() const {
  std::vector<std::pair<std::string, std::string>> out;
  auto join = [](const std::vector<std::string>& v, const char* sep) {
    std::string s;
    for (const auto& x : v) s += (s.empty() ? "" : sep) + x;
    return s;
  };
  out.emplace_back("run", fmt::format("#{} {}", id, name));
  if (!experiment.empty()) out.emplace_back("experiment", experiment);
  out.emplace_back("kind", kind);
  out.emplace_back("status", status);
  out.emplace_back("tool", fmt::format("scin {} (git {})", tool_version, git_revision));
  out.emplace_back("started", started_at + (finished_at.empty() ? "" : ", finished " + finished_at));
  out.emplace_back("points", fmt::format("{} stored of {} ({} skipped or failed)", points_stored, points_total,
                                         points_skipped));
  if (!spec_readable) {
    out.emplace_back("spec", "spec unreadable (the stored spec is not a JSON object)");
  } else {
    if (!description.empty()) out.emplace_back("description", description);
    out.emplace_back("preset", preset.empty() ? "(registry defaults)" : preset);
    out.emplace_back("set", set.empty() ? "(none)" : join(set, ", "));
    out.emplace_back("engine", engine);
    for (const auto& b : base) out.emplace_back("base", b);
  }
  out.emplace_back("algorithms", join(algorithms, ", "));
  for (const auto& a : axes) out.emplace_back("axis", a);
  if (!config_json.empty()) out.emplace_back("config", config_json);
  return out;
}

RunSummary summarize_run(const RunInfo& run, const std::vector<PointRecord>& pts) {
  RunSummary s;
  s.id = run.id;
  s.name = run.name;
  s.experiment = run.experiment;
  s.kind = to_string(run.kind);
  s.status = to_string(run.status);
  s.engine = run.engine;
  s.tool_version = run.tool_version;
  s.git_revision = run.git_revision;
  s.started_at = run.started_at;
  s.finished_at = run.finished_at;
  s.points_total = run.points_total;
  s.points_stored = run.points_stored;
  s.points_skipped = run.points_skipped;
  s.config_json = resolved_config(run);
  const json& spec = run.spec;
  s.spec_readable = spec.is_object();
  if (s.spec_readable) {
    const json& d = member(spec, "description");
    if (d.is_string()) s.description = d.get<std::string>();
    const json& base = member(spec, "base");
    const json& preset = member(base, "preset");
    if (preset.is_string()) s.preset = preset.get<std::string>();
    const json& set = member(base, "set");
    if (set.is_object())
      for (auto it = set.begin(); it != set.end(); ++it) s.set.push_back(it.key() + "=" + json_text(*it));
    else if (set.is_array())
      for (const auto& v : set) s.set.push_back(json_text(v));
    for (const char* k : {"collective", "input", "inference"}) {
      const json& o = member(base, k);
      if (o.is_object())
        for (auto it = o.begin(); it != o.end(); ++it) s.base.push_back(std::string(k) + "." + it.key() + "=" + json_text(*it));
    }
    for (const auto& [m, zipped] : spec_axes(spec)) {
      const json& path = member(*m, "path");
      std::string line = path.is_string() ? path.get<std::string>() : std::string("?");
      const json& values = member(*m, "values");
      const json& range = member(*m, "range");
      if (values.is_array()) {
        std::string v;
        for (const json& x : values) v += (v.empty() ? "" : ", ") + json_text(x);
        line += ": " + v;
      } else if (range.is_object()) {
        line += ": " + json_text(member(range, "min")) + " .. " + json_text(member(range, "max"));
        for (const char* k : {"factor", "step", "count"})
          if (!member(range, k).is_null()) line += std::string(" ") + k + " " + json_text(member(range, k));
      }
      if (zipped) line += " (zipped)";
      s.axes.push_back(line);
    }
  }
  std::set<std::string> seen;
  for (const PointRecord& p : pts)
    if (!p.algorithm.empty() && seen.insert(p.algorithm).second) s.algorithms.push_back(p.algorithm);
  return s;
}

int AnalysisTable::axis_index(const std::string& key) const {
  for (std::size_t i = 0; i < axes.size(); ++i)
    if (axes[i].key == key) return static_cast<int>(i);
  return -1;
}

int AnalysisTable::metric_index(const std::string& key) const {
  for (std::size_t i = 0; i < metrics.size(); ++i)
    if (metrics[i].key == key) return static_cast<int>(i);
  return -1;
}

const Column* AnalysisTable::find(const std::string& key) const {
  if (int i = axis_index(key); i >= 0) return &axes[static_cast<std::size_t>(i)];
  if (int i = metric_index(key); i >= 0) return &metrics[static_cast<std::size_t>(i)];
  return nullptr;
}

void AnalysisTable::index_values() {
  values_.assign(axes.size(), {});
  for (std::size_t a = 0; a < axes.size(); ++a) {
    std::vector<AxisValue>& out = values_[a];
    std::set<std::string> seen;
    for (const Row& r : rows) {
      const AxisValue& v = r.axes[a];
      if (seen.insert(v.text).second) out.push_back(v);
    }
    const bool numeric = std::all_of(out.begin(), out.end(), [](const AxisValue& v) { return std::isfinite(v.number); });
    if (numeric)
      std::stable_sort(out.begin(), out.end(), [](const AxisValue& x, const AxisValue& y) { return x.number < y.number; });
  }
}

const std::vector<AxisValue>& AnalysisTable::distinct(int axis) const {
  static const std::vector<AxisValue> none;
  if (axis < 0 || axis >= static_cast<int>(values_.size())) return none;
  return values_[static_cast<std::size_t>(axis)];
}

std::vector<int> AnalysisTable::varying_axes() const {
  std::vector<int> out;
  for (int i = 0; i < static_cast<int>(axes.size()); ++i)
    if (distinct(i).size() > 1) out.push_back(i);
  return out;
}

AnalysisTable build_table(const RunInfo& run, const std::vector<PointRecord>& pts) {
  AnalysisTable t;
  t.kind = run.kind;
  t.run = summarize_run(run, pts);

  // Axis columns: algorithm, then the swept paths in spec order, then bytes
  // when the spec fixed it (timing and quant runs only).
  std::vector<std::string> paths = swept_paths(pts);
  std::vector<std::string> ordered;
  for (const auto& [m, zipped] : spec_axes(run.spec)) {
    const json& p = member(*m, "path");
    if (p.is_string() && std::find(paths.begin(), paths.end(), p.get<std::string>()) != paths.end() &&
        std::find(ordered.begin(), ordered.end(), p.get<std::string>()) == ordered.end())
      ordered.push_back(p.get<std::string>());
  }
  for (const auto& p : paths)
    if (std::find(ordered.begin(), ordered.end(), p) == ordered.end()) ordered.push_back(p);
  std::vector<std::string> keys{"collective.algorithm"};
  for (const auto& p : ordered)
    if (p != "collective.algorithm") keys.push_back(p);
  if (run.kind == PointKind::Measured) {
    // An imported file mixes systems and GPU counts; its points carry them as fields, not axes.
    keys.push_back("system");
    keys.push_back("fabric.gpus");
  }
  if (run.kind != PointKind::Inference &&
      std::find(keys.begin(), keys.end(), "collective.bytes") == keys.end())
    keys.push_back("collective.bytes");
  for (const auto& k : keys) t.axes.push_back(axis_column(k));

  // Metric columns of the kind.
  std::vector<MetricDef> defs = metric_defs(run.kind);
  for (const MetricDef& d : defs) t.metrics.push_back(d.col);

  std::set<std::string> reasons;
  std::map<std::string, std::int32_t> note_index;
  for (const PointRecord& p : pts) {
    if (p.status != PointStatus::Ok) {
      ++t.skipped;
      if (!p.message.empty() && reasons.size() < 5 && reasons.insert(p.message).second)
        t.skip_reasons.push_back(p.message);
      continue;
    }
    Row r;
    r.point_index = p.index;
    for (const Column& c : t.axes) {
      AxisValue v;
      if (c.key == "collective.algorithm") {
        v.text = p.algorithm;
      } else if (c.key == "collective.bytes") {
        v.number = static_cast<double>(p.bytes);
        v.text = format_size_bytes(p.bytes);
      } else if (p.kind == PointKind::Measured && c.key == "system") {
        v.text = p.system;
      } else if (p.kind == PointKind::Measured && c.key == "fabric.gpus") {
        v.number = p.gpus;
        v.text = std::to_string(p.gpus);
      } else {
        const json& x = member(p.axes, c.key.c_str());
        if (x.is_number()) {
          v.number = x.get<double>();
          v.text = c.bytes && x.is_number_unsigned() ? format_size_bytes(x.get<std::uint64_t>()) : json_text(x);
        } else if (x.is_boolean()) {
          v.number = x.get<bool>() ? 1 : 0;
          v.text = x.get<bool>() ? "true" : "false";
        } else {
          v.text = x.is_null() ? std::string("–") : json_text(x);
        }
      }
      r.axes.push_back(std::move(v));
    }
    for (const MetricDef& d : defs) {
      double v = kNaN;
      if (d.read) {
        v = d.read(p);
      } else if (d.col.derived == Derived::None) {
        // breakdown term: its column name says which
        for (int k = 0; k < static_cast<int>(Term::Count); ++k)
          if (d.col.key == breakdown_column(static_cast<Term>(k))) v = p.breakdown.ns[k];
      }
      r.metrics.push_back(v);
    }
    if (p.extra.is_object()) {
      const auto n = p.extra.find("note");
      if (n != p.extra.end() && n->is_string() && !n->get_ref<const std::string&>().empty()) {
        const std::string& text = n->get_ref<const std::string&>();
        auto [it, added] = note_index.emplace(text, static_cast<std::int32_t>(t.notes.size()));
        if (added) t.notes.push_back(text);
        r.note = it->second;
      }
    }
    t.rows.push_back(std::move(r));
  }

  // An axis column is numeric only if every value is; keep only metrics with data.
  for (std::size_t a = 0; a < t.axes.size(); ++a) {
    bool all = !t.rows.empty();
    for (const Row& r : t.rows) all = all && std::isfinite(r.axes[a].number);
    t.axes[a].numeric = all;
    // Positive values spanning a factor of 8 or more (waves 1..32, bandwidths
    // 225..1800) read best on a log scale.
    if (all && !t.axes[a].log_default) {
      double lo = INFINITY, hi = 0;
      for (const Row& r : t.rows) {
        lo = std::min(lo, r.axes[a].number);
        hi = std::max(hi, r.axes[a].number);
      }
      t.axes[a].log_default = lo > 0 && hi / lo >= 8;
    }
  }
  std::vector<std::size_t> keep;
  for (std::size_t m = 0; m < t.metrics.size(); ++m) {
    const Column& c = t.metrics[m];
    bool any = c.derived != Derived::None;
    if (c.derived == Derived::None)
      for (const Row& r : t.rows)
        if (std::isfinite(r.metrics[m]) && (r.metrics[m] != 0 || c.key == "rel_l2" || c.key == "max_abs")) any = true;
    // Breakdown terms that are zero everywhere say nothing.
    if (any) keep.push_back(m);
  }
  std::vector<Column> metrics;
  for (std::size_t m : keep) metrics.push_back(t.metrics[m]);
  for (Row& r : t.rows) {
    std::vector<double> v;
    for (std::size_t m : keep) v.push_back(r.metrics[m]);
    r.metrics = std::move(v);
  }
  t.metrics = std::move(metrics);
  t.index_values();
  return t;
}

}  // namespace scin::analysis
