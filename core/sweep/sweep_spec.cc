// Sweep specs: parsing, validation, expansion and the evaluation of one point.
#include <cmath>
#include <limits>
#include <mutex>
#include <set>
#include <unordered_map>

#include <fmt/format.h>

#include "base/error.h"
#include "base/json_input.h"
#include "fabric/params.h"
#include "fabric/preset.h"
#include "base/units.h"
#include "base/cancel.h"
#include "engines/simulate.h"
#include "sweep/sweep.h"
#include "sweep/kinds.h"
#include "sweep/sweep_internal.h"
#include "numerics/quant_study.h"
#include "inference/inference.h"

namespace scin {

using nlohmann::json;

namespace {

constexpr std::uint64_t kMaxPoints = 100'000'000;
constexpr std::size_t kMaxAxisValues = 1'000'000;


bool contains(const std::vector<std::string>& v, const std::string& s) {
  for (const auto& x : v)
    if (x == s) return true;
  return false;
}

std::string type_name(const json& j) { return j.type_name(); }


using sweep_detail::is_size_path;

bool is_integer_path(const std::string& path) {
  if (path == "collective.bytes") return true;
  if (const auto* k = sweep_detail::kind_of_setting(path)) return k->integer_setting(path.substr(k->group.size() + 1));
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
  // Beyond int64 llround is undefined: keep the double so the range check quotes it (1e+30).
  if (integer && std::fabs(v) < 9.2e18) return static_cast<std::int64_t>(std::llround(v));
  return v;
}

// What checking a spec needs besides the spec: the presets recorded with a
// stored run (a re-run never reads preset files), or null to load them.
struct ParseContext {
  PointKind kind = PointKind::Collective;
  const std::map<std::string, Config>* presets = nullptr;
};

// Checks one axis value for its path and returns it in canonical form (sizes
// as integers). `field` names it in errors.
json check_value(const std::string& path, const json& v, const ParseContext& ctx, const std::string& field) {
  if (path == "collective.bytes") {
    if (v.is_string()) return parse_size_bytes(v.get<std::string>(), field);
    return json_uint(v, field, 1, std::uint64_t{1} << 62);
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
    if (ctx.presets) {
      if (!ctx.presets->count(v.get<std::string>()))
        throw Error(fmt::format("{}: preset '{}' is not recorded with the run", field, v.get<std::string>()));
      return v;
    }
    try {
      load_preset(v.get<std::string>());   // fail now, not after a database was opened
    } catch (const Error& e) {
      throw Error(fmt::format("{}: {}", field, e.what()));
    }
    return v;
  }
  if (const auto* k = sweep_detail::kind_of_setting(path)) {
    if (k->kind != ctx.kind)
      throw Error(fmt::format("{}: '{}' applies only to sweeps of kind {}", field, path, to_string(k->kind)));
    std::string key = path.substr(k->group.size() + 1);
    if (!contains(k->keys, key))
      throw Error(fmt::format("{}: unknown {} setting '{}'; allowed {}.{}", field, k->group, path, k->group,
                              fmt::join(k->keys, ", " + k->group + ".")));
    return k->check_setting(key, v, field);
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
  json_object(obj, where);
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
      // (0 would read as "no factor" when the range is expanded: say so here.)
      if (!(ar.factor > 1) || !std::isfinite(ar.factor))
        throw Error(fmt::format("{}.range.factor: must be greater than 1, got {}", where, ar.factor));
    }
    if (r.contains("step")) {
      ++modes;
      if (!r["step"].is_number()) throw Error(fmt::format("{}.range.step: expected a number", where));
      ar.step = r["step"].get<double>();
      if (!(ar.step > 0) || !std::isfinite(ar.step))
        throw Error(fmt::format("{}.range.step: must be greater than 0, got {}", where, ar.step));
    }
    if (r.contains("count")) {
      ++modes;
      ar.count = static_cast<int>(json_int(r["count"], where + ".range.count", 2, kMaxAxisValues));
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

bool sweep_detail::is_size_path(const std::string& path) {
  if (path == "collective.bytes") return true;
  const ParamInfo* p = find_param(path);
  return p && p->unit == "bytes";
}

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

namespace {
SweepSpec parse_spec(const json& j, const std::string& origin, const std::map<std::string, Config>* presets) {
  check_keys(j, {"name", "experiment", "description", "kind", "base", "axes"}, origin);
  SweepSpec s;
  s.name = get_string(j, "name", origin, "sweep");
  if (s.name.empty()) throw Error(fmt::format("{}.name: must not be empty", origin));
  s.experiment = get_string(j, "experiment", origin, "");
  s.description = get_string(j, "description", origin, "");
  s.kind = parse_point_kind(get_string(j, "kind", origin, "collective"));
  const sweep_detail::KindOps& kops = sweep_detail::kind_ops(s.kind);
  ParseContext ctx{s.kind, presets};

  const std::string bw = origin + ".base";
  json base = get_key(j, "base");
  if (base.is_null()) base = json::object();
  check_keys(base, {"preset", "set", "engine", "collective", "input", "inference"}, bw);
  s.base.preset = get_string(base, "preset", bw, "");
  if (!s.base.preset.empty()) check_value("preset", s.base.preset, ctx, bw + ".preset");
  s.base.engine = get_string(base, "engine", bw, "analytic");
  check_value("engine", s.base.engine, ctx, bw + ".engine");
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
      value = check_value(path, value, ctx, fmt::format("{}.set.{}", bw, path));
    }
  }
  json coll = get_key(base, "collective");
  if (!coll.is_null()) {
    check_keys(coll, {"algorithm", "bytes", "dtype"}, bw + ".collective");
    s.base.algorithm = get_string(coll, "algorithm", bw + ".collective", "");
    if (!s.base.algorithm.empty())
      check_value("collective.algorithm", s.base.algorithm, ctx, bw + ".collective.algorithm");
    if (coll.contains("bytes"))
      s.base.bytes = check_value("collective.bytes", coll["bytes"], ctx, bw + ".collective.bytes")
                         .get<std::uint64_t>();
    s.base.dtype = get_string(coll, "dtype", bw + ".collective", "bf16");
    check_value("collective.dtype", s.base.dtype, ctx, bw + ".collective.dtype");
  }
  for (const auto* k : {&sweep_detail::quant_kind(), &sweep_detail::inference_kind()}) {
    if (!base.contains(k->group)) continue;
    const std::string where = bw + "." + k->group;
    check_keys(base[k->group], k->keys, where);
    for (auto it = base[k->group].begin(); it != base[k->group].end(); ++it)
      check_value(k->group + "." + it.key(), it.value(), ctx, where + "." + it.key());
    (k->kind == PointKind::Quant ? s.base.input : s.base.inference) = base[k->group];
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
        json c = check_value(a.path, vals[v], ctx, fmt::format("{} ({}) value {}", aw, a.path, vals[v].dump()));
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
  if (kops.needs_algorithm && s.base.algorithm.empty() && !seen.count("collective.algorithm"))
    throw Error(fmt::format("{}: no algorithm; set base.collective.algorithm or add a collective.algorithm axis",
                            origin));
  if (kops.needs_bytes && s.base.bytes == 0 && !seen.count("collective.bytes"))
    throw Error(fmt::format("{}: no message size; set base.collective.bytes or add a collective.bytes axis", origin));
  if (presets) s.recorded_presets = *presets;
  return s;
}
}  // namespace

SweepSpec sweep_spec_from_json(const json& j, const std::string& origin) { return parse_spec(j, origin, nullptr); }

SweepSpec sweep_spec_from_json(const json& j, const std::map<std::string, Config>& presets,
                               const std::string& origin) {
  return parse_spec(j, origin, &presets);
}

SweepSpec load_sweep_spec(const std::filesystem::path& file) {
  JsonParseOptions opt;
  opt.allow_comments = true;
  return sweep_spec_from_json(read_json_document(file, opt), file.filename().string());
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

ResolvedPoint resolve_point(const SweepSpec& s, std::uint64_t index) { return PointResolver(s)(index); }

PointResolver::PointResolver(const SweepSpec& s) : c_(sweep_detail::compile(s, false)) {}
PointResolver::~PointResolver() = default;
std::uint64_t PointResolver::size() const { return c_->total; }
ResolvedPoint PointResolver::operator()(std::uint64_t index) const { return sweep_detail::resolve(*c_, index); }

PointRecord evaluate_point(const SweepSpec& s, std::uint64_t index) {
  auto c = sweep_detail::compile(s, false);
  return sweep_detail::evaluate(*c, index);
}

}  // namespace scin
