// Sweep specs: parsing, validation, expansion and the evaluation of one point.
#include <cmath>
#include <fstream>
#include <mutex>
#include <set>
#include <unordered_map>

#include <fmt/format.h>

#include "base/error.h"
#include "fabric/params.h"
#include "fabric/preset.h"
#include "base/units.h"
#include "base/cancel.h"
#include "engines/simulate.h"
#include "sweep/sweep.h"
#include "sweep/sweep_internal.h"
#include "numerics/quant_study.h"
#include "inference/inference.h"

namespace scin {

using nlohmann::json;

namespace {

constexpr std::uint64_t kMaxPoints = 100'000'000;
constexpr std::size_t kMaxAxisValues = 1'000'000;

const std::vector<std::string>& input_keys() {
  static const std::vector<std::string> k = {"dist", "stddev", "seed", "outlier_fraction", "outlier_scale",
                                             "channels"};
  return k;
}
const std::vector<std::string>& inference_keys() {
  static const std::vector<std::string> k = {"model", "accelerator", "tp", "batch", "prompt_tokens",
                                             "context_tokens"};
  return k;
}

bool contains(const std::vector<std::string>& v, const std::string& s) {
  for (const auto& x : v)
    if (x == s) return true;
  return false;
}

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

std::string type_name(const json& j) { return j.type_name(); }

// Whether values of this path are byte sizes (accept "1M" strings).
bool is_size_path(const std::string& path) {
  if (path == "collective.bytes") return true;
  const ParamInfo* p = find_param(path);
  return p && p->unit == "bytes";
}

bool is_integer_path(const std::string& path) {
  if (path == "collective.bytes") return true;
  if (path == "input.seed" || path == "input.channels") return true;
  if (starts_with(path, "inference.") && path != "inference.model" && path != "inference.accelerator") return true;
  const ParamInfo* p = find_param(path);
  return p && p->type == ParamType::Int;
}

double range_number(const json& v, const std::string& path, const std::string& field) {
  if (v.is_number()) return v.get<double>();
  if (v.is_string() && is_size_path(path))
    return static_cast<double>(parse_size_bytes(v.get<std::string>(), field));
  throw Error(fmt::format("{}: expected a number{}, got {}", field,
                          is_size_path(path) ? " or a size such as \"1M\"" : "", v.dump()));
}

json as_number_value(double v, bool integer) {
  if (integer) return static_cast<std::int64_t>(std::llround(v));
  return v;
}

// Checks one axis value for its path and returns it in canonical form (sizes
// as integers). `field` names it in errors.
json check_value(const std::string& path, const json& v, PointKind kind, const std::string& field) {
  if (path == "collective.bytes") {
    std::uint64_t b;
    if (v.is_string()) b = parse_size_bytes(v.get<std::string>(), field);
    else if (v.is_number_integer() && v.get<std::int64_t>() > 0) b = v.get<std::uint64_t>();
    else if (v.is_number_float() && v.get<double>() >= 1 && std::floor(v.get<double>()) == v.get<double>())
      b = static_cast<std::uint64_t>(v.get<double>());
    else
      throw Error(fmt::format("{}: collective.bytes must be a positive integer or a size such as \"1M\", got {}",
                              field, v.dump()));
    return b;
  }
  if (path == "collective.algorithm") {
    if (!v.is_string()) throw Error(unknown_algorithm_message(v.dump(), field));
    parse_algorithm(v.get<std::string>(), field);
    return v;
  }
  if (path == "collective.dtype") {
    if (!v.is_string()) throw Error(fmt::format("{}: dtype must be a string (bf16, fp16, fp32)", field));
    try {
      parse_dtype(v.get<std::string>());
    } catch (const Error& e) {
      throw Error(fmt::format("{}: {}", field, e.what()));
    }
    return v;
  }
  if (path == "engine") {
    if (!v.is_string()) throw Error(fmt::format("{}: an engine is a name ({})", field, fmt::join(engine_names(), ", ")));
    parse_timing_engine(v.get<std::string>(), field);
    return v;
  }
  if (path == "preset") {
    if (!v.is_string()) throw Error(fmt::format("{}: a preset is a name or a path (string)", field));
    try {
      load_preset(v.get<std::string>());   // fail now, not after a database was opened
    } catch (const Error& e) {
      throw Error(fmt::format("{}: {}", field, e.what()));
    }
    return v;
  }
  if (starts_with(path, "input.")) {
    if (kind != PointKind::Quant)
      throw Error(fmt::format("{}: '{}' applies only to sweeps of kind quant", field, path));
    std::string key = path.substr(6);
    if (!contains(input_keys(), key))
      throw Error(fmt::format("{}: unknown input setting '{}'; allowed input.{}", field, path,
                              fmt::join(input_keys(), ", input.")));
    if (key == "dist" ? !v.is_string() : !v.is_number())
      throw Error(fmt::format("{}: {} must be a {}", field, path, key == "dist" ? "string" : "number"));
    if (key == "dist") {
      try {
        parse_distribution(v.get<std::string>());
      } catch (const Error& e) {
        throw Error(fmt::format("{}: {}", field, e.what()));
      }
    }
    return v;
  }
  if (starts_with(path, "inference.")) {
    if (kind != PointKind::Inference)
      throw Error(fmt::format("{}: '{}' applies only to sweeps of kind inference", field, path));
    std::string key = path.substr(10);
    if (!contains(inference_keys(), key))
      throw Error(fmt::format("{}: unknown inference setting '{}'; allowed inference.{}", field, path,
                              fmt::join(inference_keys(), ", inference.")));
    bool text = key == "model" || key == "accelerator";
    if (text ? !v.is_string() : !v.is_number_integer())
      throw Error(fmt::format("{}: {} must be {}", field, path, text ? "a string" : "an integer"));
    return v;
  }
  const ParamInfo* p = find_param(path);
  if (!p)
    throw Error(fmt::format("{}: unknown parameter '{}'; axes take the paths `scin run --set` accepts "
                            "(see `scin params`) or preset, engine, collective.algorithm, collective.bytes, "
                            "collective.dtype",
                            field, path));
  json canon = v;
  if (v.is_string() && p->unit == "bytes" && p->type == ParamType::Int)
    canon = parse_size_bytes(v.get<std::string>(), field);
  Config scratch;
  try {
    set_param(scratch, path, canon);
  } catch (const Error& e) {
    throw Error(fmt::format("{}: {}", field, e.what()));
  }
  return canon;
}

json get_key(const json& obj, const char* key) {
  auto it = obj.find(key);
  return it == obj.end() ? json() : *it;
}

void check_keys(const json& obj, const std::vector<std::string>& allowed, const std::string& where) {
  if (!obj.is_object()) throw Error(fmt::format("{}: expected an object", where));
  for (auto it = obj.begin(); it != obj.end(); ++it)
    if (!contains(allowed, it.key()))
      throw Error(fmt::format("{}: unknown key '{}'; allowed {}", where, it.key(), fmt::join(allowed, ", ")));
}

std::string get_string(const json& obj, const char* key, const std::string& where, const std::string& dflt) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return dflt;
  if (!it->is_string()) throw Error(fmt::format("{}.{}: expected a string, got {}", where, key, type_name(*it)));
  return it->get<std::string>();
}

Axis parse_axis(const json& j, const std::string& where) {
  check_keys(j, {"path", "values", "range"}, where);
  Axis a;
  a.path = get_string(j, "path", where, "");
  if (a.path.empty()) throw Error(fmt::format("{}.path: every axis needs a parameter path", where));
  bool has_values = j.contains("values"), has_range = j.contains("range");
  if (has_values == has_range)
    throw Error(fmt::format("{}: give exactly one of \"values\" (a list) or \"range\"", where));
  if (has_values) {
    const json& v = j["values"];
    if (!v.is_array() || v.empty())
      throw Error(fmt::format("{}.values: expected a non-empty list", where));
    for (const auto& x : v) a.values.push_back(x);
  } else {
    const json& r = j["range"];
    check_keys(r, {"min", "max", "factor", "step", "count"}, where + ".range");
    AxisRange ar;
    ar.min = get_key(r, "min");
    ar.max = get_key(r, "max");
    if (ar.min.is_null() || ar.max.is_null())
      throw Error(fmt::format("{}.range: needs \"min\" and \"max\"", where));
    int modes = 0;
    if (r.contains("factor")) {
      ++modes;
      if (!r["factor"].is_number()) throw Error(fmt::format("{}.range.factor: expected a number", where));
      ar.factor = r["factor"].get<double>();
    }
    if (r.contains("step")) {
      ++modes;
      if (!r["step"].is_number()) throw Error(fmt::format("{}.range.step: expected a number", where));
      ar.step = r["step"].get<double>();
    }
    if (r.contains("count")) {
      ++modes;
      if (!r["count"].is_number_integer()) throw Error(fmt::format("{}.range.count: expected an integer", where));
      ar.count = r["count"].get<int>();
    }
    if (modes != 1)
      throw Error(fmt::format("{}.range: give exactly one of \"factor\" (geometric), \"step\" (linear) or "
                              "\"count\" (evenly spaced)", where));
    a.range = ar;
  }
  return a;
}

json axis_to_json(const Axis& a) {
  json j;
  j["path"] = a.path;
  if (a.range) {
    json r;
    r["min"] = a.range->min;
    r["max"] = a.range->max;
    if (a.range->factor != 0) r["factor"] = a.range->factor;
    if (a.range->step != 0) r["step"] = a.range->step;
    if (a.range->count != 0) r["count"] = a.range->count;
    j["range"] = r;
  } else {
    j["values"] = a.values;
  }
  return j;
}

}  // namespace

// ---------------------------------------------------------------- spec <-> JSON

std::vector<json> axis_values(const Axis& a) {
  const std::string field = fmt::format("axis '{}'", a.path);
  if (!a.range) return a.values;
  const AxisRange& r = *a.range;
  double lo = range_number(r.min, a.path, field + " range.min");
  double hi = range_number(r.max, a.path, field + " range.max");
  if (!std::isfinite(lo) || !std::isfinite(hi))
    throw Error(fmt::format("{}: range min and max must be finite", field));
  if (hi < lo) throw Error(fmt::format("{}: range max {} is below min {}", field, hi, lo));
  bool integer = is_integer_path(a.path);
  std::vector<json> out;
  auto push = [&](double v) {
    if (out.size() >= kMaxAxisValues)
      throw Error(fmt::format("{}: the range expands to more than {} values", field, kMaxAxisValues));
    json x = as_number_value(v, integer);
    if (!out.empty() && out.back() == x) return;   // integer rounding collapsed two values
    out.push_back(x);
  };
  if (r.factor != 0) {
    if (!(r.factor > 1) || !std::isfinite(r.factor))
      throw Error(fmt::format("{}: range.factor must be greater than 1, got {}", field, r.factor));
    if (!(lo > 0)) throw Error(fmt::format("{}: a geometric range needs min > 0, got {}", field, lo));
    for (int k = 0;; ++k) {
      double v = lo * std::pow(r.factor, k);
      if (v > hi * (1 + 1e-12)) break;
      push(std::min(v, hi));
    }
  } else if (r.step != 0) {
    if (!(r.step > 0) || !std::isfinite(r.step))
      throw Error(fmt::format("{}: range.step must be greater than 0, got {}", field, r.step));
    for (std::uint64_t k = 0;; ++k) {
      double v = lo + static_cast<double>(k) * r.step;
      if (v > hi + 1e-9 * r.step) break;
      push(std::min(v, hi));
    }
  } else {
    if (r.count < 2 || r.count > static_cast<int>(kMaxAxisValues))
      throw Error(fmt::format("{}: range.count must be in [2, {}], got {}", field, kMaxAxisValues, r.count));
    for (int k = 0; k < r.count; ++k) push(lo + (hi - lo) * k / (r.count - 1));
  }
  return out;
}

SweepSpec sweep_spec_from_json(const json& j, const std::string& origin) {
  check_keys(j, {"name", "experiment", "description", "kind", "base", "axes"}, origin);
  SweepSpec s;
  s.name = get_string(j, "name", origin, "sweep");
  if (s.name.empty()) throw Error(fmt::format("{}.name: must not be empty", origin));
  s.experiment = get_string(j, "experiment", origin, "");
  s.description = get_string(j, "description", origin, "");
  s.kind = parse_point_kind(get_string(j, "kind", origin, "collective"));

  const std::string bw = origin + ".base";
  json base = get_key(j, "base");
  if (base.is_null()) base = json::object();
  check_keys(base, {"preset", "set", "engine", "collective", "input", "inference"}, bw);
  s.base.preset = get_string(base, "preset", bw, "");
  if (!s.base.preset.empty()) check_value("preset", s.base.preset, s.kind, bw + ".preset");
  s.base.engine = get_string(base, "engine", bw, "analytic");
  check_value("engine", s.base.engine, s.kind, bw + ".engine");
  if (base.contains("set")) {
    const json& set = base["set"];
    if (set.is_object()) {
      for (auto it = set.begin(); it != set.end(); ++it) s.base.set.emplace_back(it.key(), it.value());
    } else if (set.is_array()) {
      for (const auto& a : set) {
        if (!a.is_string()) throw Error(fmt::format("{}.set: entries must be \"PATH=VALUE\" strings", bw));
        std::string t = a.get<std::string>();
        auto eq = t.find('=');
        if (eq == std::string::npos || eq == 0)
          throw Error(fmt::format("{}.set: '{}' is not PATH=VALUE", bw, t));
        s.base.set.emplace_back(t.substr(0, eq), json(t.substr(eq + 1)));
      }
    } else {
      throw Error(fmt::format("{}.set: expected an object {{\"path\": value}} or a list of \"PATH=VALUE\"", bw));
    }
    for (auto& [path, value] : s.base.set) {
      if (!find_param(path))
        throw Error(fmt::format("{}.set: unknown parameter '{}'; see `scin params`", bw, path));
      value = check_value(path, value, s.kind, fmt::format("{}.set.{}", bw, path));
    }
  }
  json coll = get_key(base, "collective");
  if (!coll.is_null()) {
    check_keys(coll, {"algorithm", "bytes", "dtype"}, bw + ".collective");
    s.base.algorithm = get_string(coll, "algorithm", bw + ".collective", "");
    if (!s.base.algorithm.empty())
      check_value("collective.algorithm", s.base.algorithm, s.kind, bw + ".collective.algorithm");
    if (coll.contains("bytes"))
      s.base.bytes = check_value("collective.bytes", coll["bytes"], s.kind, bw + ".collective.bytes")
                         .get<std::uint64_t>();
    s.base.dtype = get_string(coll, "dtype", bw + ".collective", "bf16");
    check_value("collective.dtype", s.base.dtype, s.kind, bw + ".collective.dtype");
  }
  if (base.contains("input")) {
    check_keys(base["input"], input_keys(), bw + ".input");
    for (auto it = base["input"].begin(); it != base["input"].end(); ++it)
      check_value("input." + it.key(), it.value(), s.kind, bw + ".input." + it.key());
    s.base.input = base["input"];
  }
  if (base.contains("inference")) {
    check_keys(base["inference"], inference_keys(), bw + ".inference");
    for (auto it = base["inference"].begin(); it != base["inference"].end(); ++it)
      check_value("inference." + it.key(), it.value(), s.kind, bw + ".inference." + it.key());
    s.base.inference = base["inference"];
  }

  json axes = get_key(j, "axes");
  if (!axes.is_null() && !axes.is_array()) throw Error(fmt::format("{}.axes: expected a list", origin));
  std::set<std::string> seen;
  std::uint64_t total = 1;
  for (std::size_t i = 0; axes.is_array() && i < axes.size(); ++i) {
    const std::string where = fmt::format("{}.axes[{}]", origin, i);
    AxisGroup g;
    if (axes[i].is_object() && axes[i].contains("zip")) {
      check_keys(axes[i], {"zip"}, where);
      const json& z = axes[i]["zip"];
      if (!z.is_array() || z.empty()) throw Error(fmt::format("{}.zip: expected a non-empty list of axes", where));
      for (std::size_t k = 0; k < z.size(); ++k)
        g.axes.push_back(parse_axis(z[k], fmt::format("{}.zip[{}]", where, k)));
    } else {
      g.axes.push_back(parse_axis(axes[i], where));
    }
    std::size_t len = 0;
    for (std::size_t k = 0; k < g.axes.size(); ++k) {
      Axis& a = g.axes[k];
      const std::string aw = g.axes.size() > 1 ? fmt::format("{}.zip[{}]", where, k) : where;
      if (!seen.insert(a.path).second)
        throw Error(fmt::format("{}: path '{}' appears in more than one axis", aw, a.path));
      auto vals = axis_values(a);   // checks the range
      for (std::size_t v = 0; v < vals.size(); ++v) {
        json c = check_value(a.path, vals[v], s.kind, fmt::format("{} ({}) value {}", aw, a.path, vals[v].dump()));
        if (!a.range) a.values[v] = c;
      }
      if (k == 0) len = vals.size();
      else if (vals.size() != len)
        throw Error(fmt::format("{}: zipped axes must have the same length; '{}' has {} values, '{}' has {}",
                                where, g.axes[0].path, len, a.path, vals.size()));
    }
    if (total > kMaxPoints / len)
      throw Error(fmt::format("{}.axes: the sweep expands to more than {} points", origin, kMaxPoints));
    total *= len;
    s.axes.push_back(std::move(g));
  }
  if (s.kind == PointKind::Collective) {
    if (s.base.algorithm.empty() && !seen.count("collective.algorithm"))
      throw Error(fmt::format("{}: no algorithm; set base.collective.algorithm or add a collective.algorithm axis",
                              origin));
    if (s.base.bytes == 0 && !seen.count("collective.bytes"))
      throw Error(fmt::format("{}: no message size; set base.collective.bytes or add a collective.bytes axis", origin));
  }
  if (s.kind == PointKind::Quant && s.base.algorithm.empty() && !seen.count("collective.algorithm"))
    throw Error(fmt::format("{}: no algorithm; set base.collective.algorithm or add a collective.algorithm axis",
                            origin));
  return s;
}

SweepSpec load_sweep_spec(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) throw Error(fmt::format("{}: cannot read the sweep spec", file.string()));
  json j;
  try {
    j = json::parse(in, nullptr, true, true);
  } catch (const json::parse_error& e) {
    throw Error(fmt::format("{}: not valid JSON ({})", file.string(), e.what()));
  }
  return sweep_spec_from_json(j, file.filename().string());
}

json to_json(const SweepSpec& s) {
  json j;
  j["name"] = s.name;
  if (!s.experiment.empty()) j["experiment"] = s.experiment;
  if (!s.description.empty()) j["description"] = s.description;
  j["kind"] = to_string(s.kind);
  json b;
  if (!s.base.preset.empty()) b["preset"] = s.base.preset;
  if (!s.base.set.empty()) {
    json set = json::object();
    for (const auto& [p, v] : s.base.set) set[p] = v;
    b["set"] = set;
  }
  b["engine"] = s.base.engine;
  json c;
  if (!s.base.algorithm.empty()) c["algorithm"] = s.base.algorithm;
  if (s.base.bytes) c["bytes"] = s.base.bytes;
  c["dtype"] = s.base.dtype;
  b["collective"] = c;
  if (!s.base.input.empty()) b["input"] = s.base.input;
  if (!s.base.inference.empty()) b["inference"] = s.base.inference;
  j["base"] = b;
  json axes = json::array();
  for (const auto& g : s.axes) {
    if (g.axes.size() == 1) {
      axes.push_back(axis_to_json(g.axes[0]));
    } else {
      json z = json::array();
      for (const auto& a : g.axes) z.push_back(axis_to_json(a));
      axes.push_back(json{{"zip", z}});
    }
  }
  j["axes"] = axes;
  return j;
}

// ---------------------------------------------------------------- compiled sweeps

namespace sweep_detail {

/// Identical points (same config, algorithm, collective, engine and kind
/// settings) computed once. Bounded so huge sweeps do not hold every result.
struct Memo {
  static constexpr std::size_t kMaxEntries = 200'000;
  static constexpr int kShards = 16;
  struct Shard {
    std::mutex m;
    std::unordered_map<std::string, std::shared_ptr<PointRecord>> map;
  };
  Shard shards[kShards];
  std::atomic<std::size_t> size{0};
};

std::unique_ptr<Compiled> compile(const SweepSpec& spec, bool memoise) {
  auto c = std::make_unique<Compiled>();
  c->spec = spec;
  auto load = [&](const std::string& name) {
    if (c->presets.count(name)) return;
    c->presets[name] = name.empty() ? Config{} : load_preset(name);
  };
  load(spec.base.preset);
  for (const auto& g : spec.axes) {
    std::vector<std::vector<json>> gv;
    for (const auto& a : g.axes) {
      gv.push_back(axis_values(a));
      if (a.path == "preset")
        for (const auto& v : gv.back()) load(v.get<std::string>());
      if (a.path == "collective.bytes" || is_size_path(a.path))
        for (auto& v : gv.back())
          if (v.is_string()) v = parse_size_bytes(v.get<std::string>(), a.path);
    }
    c->group_len.push_back(gv.empty() ? 1 : gv[0].size());
    c->values.push_back(std::move(gv));
  }
  c->total = 1;
  for (auto n : c->group_len) c->total *= n;
  // Collective points are cheap next to the memo key (a canonical config
  // dump), so for them the memo is kept only where identical points can
  // occur: an axis with a repeated value ("1K" and 1024), or a preset axis
  // (two presets may agree, and base.set may override where they differ).
  bool useful = spec.kind != PointKind::Collective;
  for (std::size_t g = 0; g < spec.axes.size() && !useful; ++g)
    for (std::size_t a = 0; a < spec.axes[g].axes.size() && !useful; ++a) {
      if (spec.axes[g].axes[a].path == "preset") useful = true;
      std::set<std::string> seen;
      for (const auto& v : c->values[g][a])
        if (!seen.insert(v.dump()).second) useful = true;
    }
  if (memoise && useful) c->memo = std::make_shared<Memo>();
  return c;
}

ResolvedPoint resolve(const Compiled& c, std::uint64_t index) {
  if (index >= c.total)
    throw Error(fmt::format("point index {} is out of range; the sweep has {} points", index, c.total));
  const SweepSpec& s = c.spec;
  ResolvedPoint r;
  r.index = index;
  r.axes = json::object();
  // Mixed radix: the last group varies fastest.
  std::vector<std::size_t> pos(c.group_len.size());
  std::uint64_t rest = index;
  for (std::size_t g = c.group_len.size(); g-- > 0;) {
    pos[g] = static_cast<std::size_t>(rest % c.group_len[g]);
    rest /= c.group_len[g];
  }
  std::vector<std::pair<const std::string*, const json*>> assign;
  std::string preset = s.base.preset;
  for (std::size_t g = 0; g < s.axes.size(); ++g)
    for (std::size_t a = 0; a < s.axes[g].axes.size(); ++a) {
      const std::string& path = s.axes[g].axes[a].path;
      const json& v = c.values[g][a][pos[g]];
      r.axes[path] = v;
      if (path == "preset") preset = v.get<std::string>();
      else assign.emplace_back(&path, &v);
    }
  r.config = c.presets.at(preset);
  for (const auto& [p, v] : s.base.set) set_param(r.config, p, v);
  r.engine = s.base.engine;
  r.algorithm = s.base.algorithm;
  r.collective.bytes = s.base.bytes;
  std::string dtype = s.base.dtype;
  r.input = s.base.input;
  r.inference = s.base.inference;
  for (const auto& [pp, vp] : assign) {
    const std::string& path = *pp;
    const json& v = *vp;
    if (path == "engine") r.engine = v.get<std::string>();
    else if (path == "collective.algorithm") r.algorithm = v.get<std::string>();
    else if (path == "collective.bytes") r.collective.bytes = v.get<std::uint64_t>();
    else if (path == "collective.dtype") dtype = v.get<std::string>();
    else if (starts_with(path, "input.")) r.input[path.substr(6)] = v;
    else if (starts_with(path, "inference.")) r.inference[path.substr(10)] = v;
    else set_param(r.config, path, v);
  }
  r.collective.dtype = parse_dtype(dtype);
  if (s.kind == PointKind::Quant && r.collective.bytes == 0) r.collective.bytes = 2ull << 20;
  return r;
}

namespace {

std::string memo_key(const ResolvedPoint& r, PointKind kind) {
  Config key_cfg = r.config;
  key_cfg.name.clear();
  key_cfg.description.clear();
  std::string k = config_to_json(key_cfg).dump();
  k += fmt::format("|{}|{}|{}|{}|{}|{}|{}", to_string(kind), r.algorithm, r.collective.bytes,
                   to_string(r.collective.dtype), r.engine, r.input.dump(), r.inference.dump());
  return k;
}

void fill_collective(PointRecord& p, const ResolvedPoint& r) {
  if (auto why = unsupported_reason(r.config, r.algorithm); !why.empty()) {
    p.status = PointStatus::Skipped;
    p.message = why;
    return;
  }
  SimResult s = simulate(r.config, r.algorithm, r.collective, r.engine);
  p.variant = s.variant;
  p.time_us = s.time_us();
  p.algbw_GBps = s.algbw_GBps;
  p.busbw_GBps = s.busbw_GBps;
  p.max_link_bytes = s.max_link_bytes;
  p.breakdown = s.breakdown;
  if (!s.extra.is_null()) p.extra = s.extra;
}

void fill_quant(PointRecord& p, const ResolvedPoint& r) {
  if (auto why = unsupported_reason(r.config, r.algorithm); !why.empty()) {
    p.status = PointStatus::Skipped;
    p.message = why;
    return;
  }
  QuantRequest req;
  req.algorithms = {r.algorithm};
  req.dtype = r.collective.dtype;
  req.elements = element_count(r.collective.bytes, r.collective.dtype);
  const json& in = r.input;
  if (in.contains("dist")) req.input.dist = parse_distribution(in["dist"].get<std::string>());
  if (in.contains("stddev")) req.input.stddev = in["stddev"].get<double>();
  if (in.contains("seed")) req.input.seed = in["seed"].get<std::uint64_t>();
  if (in.contains("outlier_fraction")) req.input.outlier_fraction = in["outlier_fraction"].get<double>();
  if (in.contains("outlier_scale")) req.input.outlier_scale = in["outlier_scale"].get<double>();
  if (in.contains("channels")) req.input.channels = in["channels"].get<std::uint64_t>();
  QuantStudy st = run_quant(r.config, req);
  if (st.rows.empty()) throw Error("quant study returned no result");
  const QuantRow& row = st.rows.front();
  p.variant = row.variant;
  p.rel_l2 = row.metrics.rel_l2;
  p.sqnr_dB = row.metrics.sqnr_dB;
  p.max_abs = row.metrics.max_abs;
  p.payload_ratio = row.payload_ratio;
  p.error_variance_ratio = row.error_variance_ratio;
  p.max_link_bytes = row.max_link_bytes;
  p.extra = json{{"row", to_json(row)},
                 {"dtype_round", to_json(st.dtype_round)},
                 {"single_quant", to_json(st.single_quant)}};
}

void fill_inference(PointRecord& p, const ResolvedPoint& r) {
  InferenceRequest req;
  req.fabric = r.config;
  req.engine = r.engine;
  req.algorithms = {r.algorithm};
  req.baseline = r.algorithm;
  const json& in = r.inference;
  if (in.contains("model")) req.model = in["model"].get<std::string>();
  if (in.contains("accelerator")) req.accelerator = in["accelerator"].get<std::string>();
  if (in.contains("tp")) req.tp = in["tp"].get<int>();
  if (in.contains("batch")) req.batch = in["batch"].get<int>();
  if (in.contains("prompt_tokens")) req.prompt_tokens = in["prompt_tokens"].get<int>();
  if (in.contains("context_tokens")) req.context_tokens = in["context_tokens"].get<int>();
  if (auto why = unsupported_reason(r.config, r.algorithm); !why.empty()) {
    p.status = PointStatus::Skipped;
    p.message = why;
    return;
  }
  InferenceResult res = run_inference(req);
  const AlgorithmResult* a = res.find(r.algorithm);
  if (!a) throw Error("inference returned no result for " + r.algorithm);
  p.ttft_us = a->ttft_us();
  p.tpot_us = a->tpot_us();
  p.variant = a->decode.variant;
  p.extra = json{{"model", res.model}, {"tp", res.tp}, {"prefill", to_json(a->prefill)},
                 {"decode", to_json(a->decode)}};
}

void compute(PointRecord& p, const ResolvedPoint& r, PointKind kind) {
  switch (kind) {
    case PointKind::Collective: fill_collective(p, r); return;
    case PointKind::Quant:
      fill_quant(p, r);
      return;
    case PointKind::Inference:
      fill_inference(p, r);
      return;
  }
}

}  // namespace

PointRecord evaluate(Compiled& c, std::uint64_t index) {
  PointRecord p;
  p.index = index;
  p.kind = c.spec.kind;
  ResolvedPoint r;
  try {
    r = resolve(c, index);
  } catch (const Error& e) {
    p.axes = point_axes(c.spec, index);
    p.status = PointStatus::Skipped;
    p.message = e.what();
    return p;
  }
  p.axes = r.axes;
  p.algorithm = r.algorithm;
  p.dtype = to_string(r.collective.dtype);
  p.bytes = r.collective.bytes;
  p.gpus = r.config.fabric.gpus;
  p.engine = r.engine;
  try {
    validate(r.config);
    if (c.memo) {
      std::string key = memo_key(r, p.kind);
      Memo& m = *c.memo;
      Memo::Shard& sh = m.shards[std::hash<std::string>{}(key) % Memo::kShards];
      {
        std::lock_guard<std::mutex> lock(sh.m);
        auto it = sh.map.find(key);
        if (it != sh.map.end()) {
          const PointRecord& hit = *it->second;
          PointRecord out = hit;
          out.index = p.index;
          out.axes = std::move(p.axes);
          c.memo_hits.fetch_add(1, std::memory_order_relaxed);
          return out;
        }
      }
      compute(p, r, p.kind);
      if (m.size.load(std::memory_order_relaxed) < Memo::kMaxEntries) {
        std::lock_guard<std::mutex> lock(sh.m);
        auto saved = std::make_shared<PointRecord>(p);
        saved->axes = json();
        if (sh.map.emplace(std::move(key), std::move(saved)).second) m.size.fetch_add(1, std::memory_order_relaxed);
      }
    } else {
      compute(p, r, p.kind);
    }
  } catch (const Cancelled&) {
    throw;  // not a result: the runner stops
  } catch (const Error& e) {
    p.status = PointStatus::Skipped;
    p.message = e.what();
  } catch (const std::exception& e) {
    p.status = PointStatus::Failed;
    p.message = e.what();
  }
  return p;
}

}  // namespace sweep_detail

// ---------------------------------------------------------------- public helpers

std::uint64_t point_count(const SweepSpec& s) {
  std::uint64_t total = 1;
  for (const auto& g : s.axes) total *= g.axes.empty() ? 1 : axis_values(g.axes[0]).size();
  return total;
}

json point_axes(const SweepSpec& s, std::uint64_t index) {
  std::vector<std::vector<json>> first;
  std::vector<std::uint64_t> len;
  for (const auto& g : s.axes) len.push_back(g.axes.empty() ? 1 : axis_values(g.axes[0]).size());
  std::uint64_t total = 1;
  for (auto n : len) total *= n;
  if (index >= total)
    throw Error(fmt::format("point index {} is out of range; the sweep has {} points", index, total));
  json out = json::object();
  std::vector<std::size_t> pos(len.size());
  std::uint64_t rest = index;
  for (std::size_t g = len.size(); g-- > 0;) {
    pos[g] = static_cast<std::size_t>(rest % len[g]);
    rest /= len[g];
  }
  for (std::size_t g = 0; g < s.axes.size(); ++g)
    for (const auto& a : s.axes[g].axes) {
      json v = axis_values(a)[pos[g]];
      if (v.is_string() && is_size_path(a.path)) v = parse_size_bytes(v.get<std::string>(), a.path);
      out[a.path] = v;
    }
  return out;
}

ResolvedPoint resolve_point(const SweepSpec& s, std::uint64_t index) {
  auto c = sweep_detail::compile(s, false);
  return sweep_detail::resolve(*c, index);
}

PointRecord evaluate_point(const SweepSpec& s, std::uint64_t index) {
  auto c = sweep_detail::compile(s, false);
  return sweep_detail::evaluate(*c, index);
}

}  // namespace scin
