#include "calib/compare.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include <fmt/format.h>

#include "base/error.h"
#include "engines/simulate.h"
#include "fabric/params.h"
#include "fabric/preset.h"
#include "base/json_input.h"
#include "base/text.h"
#include "model/result.h"
#include "store/store.h"
#include "sweep/sweep.h"

namespace scin {

namespace {
double busbw_of(std::uint64_t bytes, double us, int gpus) {
  return us > 0 ? static_cast<double>(bytes) / (us * 1e3) * busbw_factor(gpus) : 0.0;
}
}  // namespace

namespace {
// log-linear interpolation of the size where y crosses `target` between (s0, y0) and (s1, y1).
double cross(double s0, double y0, double s1, double y1, double target) {
  if (y1 == y0) return s1;
  const double t = (target - y0) / (y1 - y0);
  return std::exp(std::log(s0) + t * (std::log(s1) - std::log(s0)));
}
}  // namespace

double model_half_peak_bytes(const Config& cfg, const std::string& algorithm, int gpus, DType dtype,
                             std::uint64_t peak_bytes) {
  Config c = cfg;
  if (gpus != c.fabric.gpus) set_param(c, "fabric.gpus", static_cast<double>(gpus));
  const double unit = dtype == DType::Fp32 ? 4.0 : 2.0;
  auto busbw = [&](double s) {
    const auto bytes = static_cast<std::uint64_t>(std::max(unit, std::round(s / unit) * unit));
    return simulate(c, algorithm, Collective{bytes, dtype}, "analytic").busbw_GBps;
  };
  const double half = busbw(static_cast<double>(peak_bytes)) / 2;
  double prev_s = 1024, prev_y = busbw(prev_s);
  if (prev_y >= half) return prev_s;
  for (double s = prev_s * std::pow(2.0, 0.125); s <= static_cast<double>(peak_bytes) * 1.0001; s *= std::pow(2.0, 0.125)) {
    const double y = busbw(s);
    if (y >= half) return cross(prev_s, prev_y, s, y, half);
    prev_s = s;
    prev_y = y;
  }
  return std::numeric_limits<double>::quiet_NaN();
}

double measured_half_peak_bytes(std::vector<MeasuredRow> rows, double offset_us) {
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.bytes < b.bytes; });
  std::vector<double> bw;
  for (const auto& r : rows) bw.push_back(busbw_of(r.bytes, r.measured_us - offset_us, r.gpus));
  if (bw.empty()) return std::numeric_limits<double>::quiet_NaN();
  const double half = *std::max_element(bw.begin(), bw.end()) / 2;
  for (std::size_t i = 1; i < rows.size(); ++i)
    if (bw[i - 1] < half && bw[i] >= half)
      return cross(static_cast<double>(rows[i - 1].bytes), bw[i - 1], static_cast<double>(rows[i].bytes), bw[i], half);
  return std::numeric_limits<double>::quiet_NaN();
}

std::vector<ModelComparison> compare_with_model(const Config& cfg, const std::vector<MeasuredRow>& rows,
                                                const std::string& engine) {
  std::vector<ModelComparison> out;
  out.reserve(rows.size());
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (const auto& r : rows) {
    ModelComparison c;
    c.bytes = r.bytes;
    c.algorithm = r.algorithm;
    c.gpus = r.gpus;
    c.system = r.system;
    c.source = r.source;
    c.regime = regime_of(r.bytes);
    c.measured_us = r.measured_us;
    c.measured_busbw_GBps = busbw_of(r.bytes, r.measured_us, r.gpus);
    if (auto t = model_time_us(cfg, r, &c.skipped, engine, &c.note)) {
      c.modelled = true;
      c.model_us = *t;
      c.model_busbw_GBps = busbw_of(r.bytes, *t, r.gpus);
      c.error = *t / r.measured_us - 1;
    } else {
      c.model_us = c.model_busbw_GBps = c.error = nan;
    }
    out.push_back(std::move(c));
  }
  return out;
}

std::vector<MeasuredRow> measured_rows(const std::vector<PointRecord>& points) {
  std::vector<MeasuredRow> out;
  for (const auto& p : points) {
    if (p.kind != PointKind::Measured || p.status != PointStatus::Ok) continue;
    MeasuredRow r;
    r.system = p.system;
    r.gpus = p.gpus;
    r.algorithm = p.algorithm;
    r.bytes = p.bytes;
    r.measured_us = p.measured_us;
    if (!p.dtype.empty()) r.dtype = p.dtype;
    r.source = p.source;
    const bool reported = !(p.extra.is_object() && p.extra.value("busbw_reported", true) == false);
    r.busbw_GBps = reported ? p.busbw_GBps : -1;
    if (p.extra.is_object()) {
      r.gpus_per_process = p.extra.value("gpus_per_process", 1);
      r.in_place_us = p.extra.value("in_place_us", -1.0);
      r.notes = p.extra.value("notes", std::string());
    }
    read_symmetric_kernel_choice(r);  // a run imported before 2026-12-06 stored such rows as one-shot
    out.push_back(std::move(r));
  }
  return out;
}

namespace {

// The recorded preset plus base.set (run_base_config, run_preset_config).
Config preset_config(const RunInfo& run, const SweepSpec& spec, const std::string& preset, const char* what) {
  auto it = spec.recorded_presets.find(preset);
  if (it == spec.recorded_presets.end())
    throw Error(fmt::format("run {}: the recorded configuration lacks its {} '{}'", run.id, what, preset));
  Config c = it->second;
  for (const auto& [path, value] : spec.base.set) set_param(c, path, value);
  return c;
}

// The presets a spec's points take (run_presets).
std::vector<std::string> spec_presets(const SweepSpec& spec) {
  std::vector<std::string> out;
  for (const AxisGroup& g : spec.axes)
    for (const Axis& a : g.axes)
      if (a.path == "preset")
        for (const auto& v : a.values)
          if (v.is_string() && std::find(out.begin(), out.end(), v.get<std::string>()) == out.end())
            out.push_back(v.get<std::string>());
  if (out.empty()) out.push_back(spec.base.preset);
  return out;
}

}  // namespace

std::vector<std::string> run_presets(const RunInfo& run) { return spec_presets(sweep_spec_from_run(run)); }

Config run_preset_config(const RunInfo& run, const std::string& preset) {
  return preset_config(run, sweep_spec_from_run(run), preset, "preset");
}

Config run_base_config(const RunInfo& run, std::vector<std::string>* changed) {
  const SweepSpec spec = sweep_spec_from_run(run);
  Config c = preset_config(run, spec, spec.base.preset, "base preset");
  if (changed) {
    auto it = spec.recorded_presets.find(spec.base.preset);
    changed->clear();
    for (const auto& p : params())
      if (get_param_text(c, p.path) != get_param_text(it->second, p.path)) changed->push_back(p.path);
  }
  return c;
}

std::vector<ModelComparison> compare_runs(Store& store, std::int64_t simulated_run_id, std::int64_t measured_run_id) {
  const RunInfo sim = store.get_run(simulated_run_id);
  if (sim.kind != PointKind::Collective)
    throw Error(fmt::format("run {}: {} run, not a collective timing run; pick a simulated run to compare with",
                            sim.id, with_article(to_string(sim.kind))));
  const RunInfo meas = store.get_run(measured_run_id);
  if (meas.kind != PointKind::Measured)
    throw Error(fmt::format("run {}: {} run, not a measured run (import one with scin import)", meas.id,
                            with_article(to_string(meas.kind))));
  const Config cfg = run_base_config(sim);
  const std::string engine = sweep_spec_from_run(sim).base.engine;
  return compare_with_model(cfg, measured_rows(store.points(measured_run_id)), engine);
}

nlohmann::json preset_calibration(const std::string& preset) {
  try {
    std::filesystem::path file(preset);
    if (file.extension() != ".json" && preset.find('/') == std::string::npos)
      for (const auto& info : list_presets())
        if (info.name == preset) file = info.file;
    const auto pj = read_json_document(file);
    if (pj.contains("calibration")) return pj["calibration"];
  } catch (const std::exception&) {
    // Not a preset we can read: no calibration.
  }
  return nullptr;
}

namespace {

// The harness offsets one preset's calibration recorded; an entry already in `out` stays.
void recorded_harness_offsets(const std::string& preset, std::map<std::string, double>& out) {
  const nlohmann::json cal = preset_calibration(preset);
  if (cal.is_object() && cal.contains("harness_offsets_us") && cal["harness_offsets_us"].is_object())
    for (const auto& [k, v] : cal["harness_offsets_us"].items())
      if (v.is_object() && v.contains("value") && v["value"].is_number()) out.emplace(k, v["value"].get<double>());
}

}  // namespace

std::map<std::string, double> preset_harness_offsets(const std::string& preset) {
  std::map<std::string, double> out;
  recorded_harness_offsets(preset, out);
  // A harness's fixed cost belongs to the harness, not to the fabric: those fitted with the
  // other shipped presets apply too, to rows of the same harness (harness_offset_for).
  for (const auto& info : list_presets())
    if (!info.user && info.name != preset) recorded_harness_offsets(info.name, out);
  return out;
}

MeasuredRunMatches match_measured_runs(Store& store, std::int64_t run_id) {
  const RunInfo run = store.get_run(run_id);
  if (run.kind != PointKind::Collective)
    throw Error(fmt::format("run #{} is {} run, not a timing run", run_id, with_article(to_string(run.kind))));
  if (!run.config_recorded())
    throw Error(fmt::format("run #{} did not record its configuration (an older database): no model to compare", run_id));
  MeasuredRunMatches m;
  const SweepSpec spec = sweep_spec_from_run(run);
  m.preset = spec.base.preset;
  m.config = preset_config(run, spec, m.preset, "base preset");
  m.presets = spec_presets(spec);
  // Each preset the run's points take, with what its rows must name and their GPU count.
  struct Member {
    std::string preset;
    Config config;
    std::map<std::string, double> offsets;
    std::vector<std::string> names;
    bool named(const std::string& text) const {
      const std::string t = ascii_lower(text);
      return std::any_of(names.begin(), names.end(), [&](const std::string& n) { return names_product(t, n); });
    }
  };
  std::vector<Member> members;
  for (const std::string& p : m.presets) {
    Member x{p, p == m.preset ? m.config : preset_config(run, spec, p, "preset"), preset_harness_offsets(p), {}};
    for (const std::string& n : {x.config.accelerator.name, p, x.config.name})
      if (!n.empty()) x.names.push_back(ascii_lower(n));
    members.push_back(std::move(x));
  }
  for (const RunInfo& r : store.list_runs()) {
    if (r.kind != PointKind::Measured || !r.problem.empty()) continue;
    const std::vector<PointRecord> points = store.points(r.id);
    for (const Member& x : members) {
      bool table_matches = false;
      if (r.spec.is_object() && r.spec.value("format", std::string()) == "nccl-tests") {
        table_matches = true;
        if (auto t = r.spec.find("tables"); t != r.spec.end() && t->is_array())
          for (const auto& tab : *t) {
            const std::string dev = tab.value("device", std::string());
            if (!dev.empty() && !x.named(dev)) table_matches = false;
          }
      }
      std::vector<PointRecord> same;
      std::set<std::string> systems;
      for (const PointRecord& p : points) {
        if (p.kind != PointKind::Measured || p.status != PointStatus::Ok || p.gpus != x.config.fabric.gpus) continue;
        if (!table_matches && !x.named(p.system)) continue;
        systems.insert(p.system);
        same.push_back(p);
      }
      const std::vector<MeasuredRow> rows = measured_rows(same);
      if (rows.empty()) continue;
      MeasuredRunMatch c;
      c.run_id = r.id;
      c.name = r.name;
      c.systems.assign(systems.begin(), systems.end());
      c.preset = x.preset;
      c.config = x.config;
      c.report = validate_rows(x.config, rows, x.offsets);
      c.offsets = harness_offsets_used(rows, x.offsets);
      m.runs.push_back(std::move(c));
    }
  }
  return m;
}

}  // namespace scin
