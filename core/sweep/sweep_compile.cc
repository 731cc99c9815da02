// Compiled sweeps: axes expanded, presets loaded (or taken from a stored run),
// points resolved and evaluated through their kind (sweep/kinds.h), identical
// points memoised under a structural hash of the resolved point; and the
// resolved configuration a run records (RunInfo::config).
#include <cstring>
#include <fstream>
#include <iterator>
#include <mutex>
#include <set>
#include <unordered_map>

#include <fmt/format.h>

#include "base/cancel.h"
#include "base/error.h"
#include "base/units.h"
#include "base/version.h"
#include "fabric/params.h"
#include "fabric/preset.h"
#include "sweep/kinds.h"
#include "sweep/sweep.h"
#include "sweep/sweep_internal.h"

namespace scin {

using json = nlohmann::json;

// ---------------------------------------------------------------- compiled sweeps

namespace sweep_detail {

// ---------------------------------------------------------------- structural hash

void StructuralHash::mix(std::uint64_t v) {
  // Lane a: FNV-1a over the 8 bytes; lane b: a multiply-xorshift (splitmix64 step).
  for (int i = 0; i < 8; ++i) a_ = (a_ ^ ((v >> (8 * i)) & 0xff)) * 0x100000001b3ull;
  std::uint64_t z = (b_ ^ v) + 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  b_ = z ^ (z >> 31);
}
void StructuralHash::add(std::uint64_t v) { mix(v); }
void StructuralHash::add(double v) {
  if (v == 0) v = 0;   // -0 == 0
  std::uint64_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  mix(bits);
}
void StructuralHash::add(const std::string& s) {
  mix(s.size());
  std::uint64_t w = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    w = (w << 8) | static_cast<unsigned char>(s[i]);
    if (i % 8 == 7) mix(w), w = 0;
  }
  mix(w);
}
void StructuralHash::add(const json& j) {
  mix(static_cast<std::uint64_t>(j.type()));
  switch (j.type()) {
    case json::value_t::object:
      mix(j.size());
      for (auto it = j.begin(); it != j.end(); ++it) add(it.key()), add(it.value());   // keys sorted
      break;
    case json::value_t::array:
      mix(j.size());
      for (const auto& x : j) add(x);
      break;
    case json::value_t::string: add(j.get<std::string>()); break;
    case json::value_t::boolean: mix(j.get<bool>() ? 1 : 0); break;
    case json::value_t::number_integer: mix(static_cast<std::uint64_t>(j.get<std::int64_t>())); break;
    case json::value_t::number_unsigned: mix(j.get<std::uint64_t>()); break;
    case json::value_t::number_float: add(j.get<double>()); break;
    default: break;
  }
}

PointKey config_hash(const Config& cfg) {
  StructuralHash h;
  for (const auto& p : params()) {
    std::visit(
        [&](const auto& v) {
          using T = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<T, bool>) h.add(std::uint64_t{v ? 1u : 0u});
          else if constexpr (std::is_same_v<T, std::int64_t>) h.add(static_cast<std::uint64_t>(v));
          else h.add(v);
        },
        p.get(cfg));
  }
  return h.key();
}

// ---------------------------------------------------------------- memo

/// Identical points (same config, algorithm, collective, engine and kind
/// settings) computed once. Bounded so huge sweeps do not hold every result.
struct Memo {
  static constexpr std::size_t kMaxEntries = 200'000;
  static constexpr int kShards = 16;
  struct KeyHash {
    std::size_t operator()(const PointKey& k) const { return static_cast<std::size_t>(k.a ^ (k.b * 0x9e3779b97f4a7c15ull)); }
  };
  struct Shard {
    std::mutex m;
    std::unordered_map<PointKey, std::shared_ptr<PointRecord>, KeyHash> map;
  };
  Shard shards[kShards];
  std::atomic<std::size_t> size{0};
};

std::unique_ptr<Compiled> compile(const SweepSpec& spec, bool memoise) {
  auto c = std::make_unique<Compiled>();
  c->spec = spec;
  auto load = [&](const std::string& name) {
    if (c->presets.count(name)) return;
    if (!spec.recorded_presets.empty()) {
      auto it = spec.recorded_presets.find(name);
      if (it == spec.recorded_presets.end())
        throw Error(fmt::format("preset '{}' is not recorded with the run", name));
      c->presets[name] = it->second;
      return;
    }
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
  // Collective points are cheap next to the memo key (a hash of every
  // registry parameter), so for them the memo is kept only where identical points can
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
    else if (const auto* k = kind_of_setting(path))
      (k->kind == PointKind::Quant ? r.input : r.inference)[path.substr(k->group.size() + 1)] = v;
    else set_param(r.config, path, v);
  }
  r.collective.dtype = parse_dtype(dtype);
  if (r.collective.bytes == 0) r.collective.bytes = kind_ops(s.kind).default_bytes;
  return r;
}

namespace {

PointKey memo_key(const ResolvedPoint& r, PointKind kind) {
  StructuralHash h;
  h.add(config_hash(r.config));
  h.add(static_cast<std::uint64_t>(kind));
  h.add(r.algorithm);
  h.add(r.collective.bytes);
  h.add(static_cast<std::uint64_t>(r.collective.dtype));
  h.add(r.engine);
  h.add(r.input);
  h.add(r.inference);
  return h.key();
}

}  // namespace

PointRecord evaluate(Compiled& c, std::uint64_t index, const RunContext& ctx) {
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
      PointKey key = memo_key(r, p.kind);
      Memo& m = *c.memo;
      Memo::Shard& sh = m.shards[key.a % Memo::kShards];
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
      kind_ops(p.kind).evaluate(p, r, ctx);
      if (m.size.load(std::memory_order_relaxed) < Memo::kMaxEntries) {
        std::lock_guard<std::mutex> lock(sh.m);
        auto saved = std::make_shared<PointRecord>(p);
        saved->axes = json();
        if (sh.map.emplace(key, std::move(saved)).second) m.size.fetch_add(1, std::memory_order_relaxed);
      }
    } else {
      kind_ops(p.kind).evaluate(p, r, ctx);
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


// ---------------------------------------------------------------- recorded configuration

namespace {

std::string fnv1a64_file(const std::filesystem::path& f) {
  std::ifstream in(f, std::ios::binary);
  if (!in) return {};
  std::uint64_t h = 0xcbf29ce484222325ull;
  char buf[65536];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    for (std::streamsize i = 0; i < in.gcount(); ++i) h = (h ^ static_cast<unsigned char>(buf[i])) * 0x100000001b3ull;
    if (!in) break;
  }
  return fmt::format("{:016x}", h);
}

std::filesystem::path preset_file_of(const std::string& name) {
  if (name.empty()) return {};
  if (name.find('/') != std::string::npos || std::filesystem::path(name).extension() == ".json") return name;
  for (const auto& info : list_presets())
    if (info.name == name) return info.file;
  return {};
}

}  // namespace

json config_parameters_json(const Config& cfg) {
  json out = json::object();
  for (const auto& p : params()) {
    json v;
    std::visit([&](const auto& x) { v = x; }, p.get(cfg));
    out[p.path] = json{{"value", v}, {"unit", p.unit}};
  }
  return out;
}

json resolved_config_json(const SweepSpec& spec) {
  auto c = sweep_detail::compile(spec, false);
  json presets = json::object();
  for (const auto& [name, cfg] : c->presets) {
    json e;
    e["config"] = config_to_json(cfg);
    if (auto it = spec.recorded_presets.find(name); it != spec.recorded_presets.end()) {
      e["file"] = nullptr;   // re-run from a stored run: provenance is that run's record
    } else if (auto f = preset_file_of(name); !f.empty()) {
      e["file"] = f.string();
      e["file_fnv1a64"] = fnv1a64_file(f);
    } else {
      e["file"] = nullptr;   // "" = the registry defaults of this scin
    }
    presets[name] = e;
  }
  Config base = c->presets.at(spec.base.preset);
  for (const auto& [p, v] : spec.base.set) set_param(base, p, v);
  json j;
  j["preset"] = spec.base.preset;
  j["parameters"] = config_parameters_json(base);
  j["presets"] = presets;
  j["tool_version"] = scin::version();
  j["git_revision"] = scin::git_revision();
  return j;
}

SweepSpec sweep_spec_from_run(const RunInfo& run) {
  const std::string what = fmt::format("run {}", run.id);
  if (!run.problem.empty()) throw Error(fmt::format("{}: its stored row is damaged ({})", what, run.problem));
  if (!run.config_recorded())
    throw Error(fmt::format("{}: configuration not recorded (written by scin {} before runs recorded their "
                            "fabric); it cannot be re-run from the database alone", what, run.tool_version));
  const json& presets = run.config.contains("presets") ? run.config["presets"] : json();
  if (!presets.is_object()) throw Error(fmt::format("{}: the recorded configuration has no presets", what));
  std::map<std::string, Config> cfgs;
  for (auto it = presets.begin(); it != presets.end(); ++it) {
    if (!it.value().is_object() || !it.value().contains("config"))
      throw Error(fmt::format("{}: recorded preset '{}' has no configuration", what, it.key()));
    cfgs[it.key()] = config_from_json(it.value()["config"], fmt::format("{} preset '{}'", what, it.key()));
  }
  return sweep_spec_from_json(run.spec, cfgs, fmt::format("{} spec", what));
}

std::vector<ConfigDifference> config_diff(const json& a, const json& b) {
  std::vector<ConfigDifference> out;
  const json none;
  auto params_of = [&](const json& c) -> const json& {
    return c.is_object() && c.contains("parameters") && c["parameters"].is_object() ? c["parameters"] : none;
  };
  const json& pa = params_of(a);
  const json& pb = params_of(b);
  std::set<std::string> paths;
  for (const json* p : {&pa, &pb})
    if (p->is_object())
      for (auto it = p->begin(); it != p->end(); ++it) paths.insert(it.key());
  auto value = [](const json& p, const std::string& path) -> json {
    if (!p.is_object() || !p.contains(path)) return json();
    const json& e = p[path];
    return e.is_object() && e.contains("value") ? e["value"] : json();
  };
  for (const auto& path : paths) {
    json va = value(pa, path), vb = value(pb, path);
    if (va == vb) continue;
    std::string unit;
    for (const json* p : {&pa, &pb})
      if (p->is_object() && p->contains(path) && (*p)[path].contains("unit")) unit = (*p)[path]["unit"].get<std::string>();
    out.push_back({path, va, vb, unit});
  }
  return out;
}

}  // namespace scin
