// `scin calibrate`, `scin validate` and `scin import`: fit a preset to measured All-Reduce
// timings (nccl-tests logs or the simple CSV) and report the model's error per
// row, per regime (<= 64 KiB, 64 KiB - 64 MiB, >= 64 MiB) and per algorithm.
#include <cctype>
#include <chrono>
#include <ctime>
#include <fstream>
#include <map>
#include <set>
#include <tuple>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "base/csv.h"
#include "base/error.h"
#include "base/json_input.h"
#include "base/units.h"
#include "base/version.h"
#include "calib/compare.h"
#include "calib/fit.h"
#include "calib/holdout.h"
#include "calib/import.h"
#include "calib/measured.h"
#include "cli/commands.h"
#include "cli/common.h"
#include "fabric/params.h"
#include "fabric/preset.h"
#include "store/store.h"

namespace scin::cli {
namespace {

struct Inputs {
  std::vector<MeasuredFile> files;
  std::vector<MeasuredRow> selected, other;
  std::vector<std::string> filter;  // system substrings used
};

// Lines of a log that were no row (MPI or shell messages pasted with it): said, not fatal.
// Another benchmark's tables in a suite's log are said each, whatever else was skipped.
void print_ignored(const MeasuredFile& m) {
  for (const auto& t : m.skipped_tables) fmt::print(stderr, "scin: note: {}\n", t);
  const std::vector<std::string>& lines = m.ignored;
  if (lines.empty()) return;
  fmt::print(stderr, "scin: note: {} line{} of {} skipped (not nccl-tests rows, or rows there is nothing to model for):\n", lines.size(),
             lines.size() == 1 ? "" : "s", m.path.filename().string());
  for (std::size_t k = 0; k < lines.size() && k < 5; ++k) fmt::print(stderr, "scin: note:   {}\n", lines[k]);
  if (lines.size() > 5) fmt::print(stderr, "scin: note:   ... and {} more\n", lines.size() - 5);
}

// Loads the files and keeps the rows whose system names one of `systems`
// (default: the preset's accelerator, e.g. "H200"), unless `all`.
Inputs load_inputs(const std::vector<std::string>& files, const Config& cfg, std::vector<std::string> systems,
                   bool all) {
  if (files.empty()) throw Error("MEASURED: give at least one nccl-tests log or CSV file");
  Inputs in;
  const bool by_accelerator = systems.empty() && !all;
  if (by_accelerator) systems.push_back(cfg.accelerator.name);
  in.filter = all ? std::vector<std::string>{} : systems;
  for (const auto& f : files) {
    in.files.push_back(load_measured(f));
    print_ignored(in.files.back());
    for (const auto& r : in.files.back().rows) {
      // nccl-tests logs name their device; a log without one is taken as the preset's system.
      bool keep = all || (in.files.back().format == "nccl-tests" && r.system.find('(') == std::string::npos);
      for (const auto& s : systems)
        keep |= by_accelerator ? names_product(r.system, s) : r.system.find(s) != std::string::npos;
      (keep ? in.selected : in.other).push_back(r);
    }
  }
  if (in.selected.empty())
    throw Error(fmt::format("MEASURED: no row's system mentions {} (use --system TEXT or --all-systems)",
                            fmt::join(systems, " or ")));
  return in;
}

std::string fmt_num(double v) {
  if (!std::isfinite(v)) return "n/a";
  return fmt::format("{:.4g}", v);
}

// A statistic of no rows is not 0%: the table shows "-", CSV an empty field.
std::string stat_text(const ErrorStats& s, double v, const char* spec = "{:.1f}") {
  return s.rows > 0 ? fmt::format(fmt::runtime(spec), v) : "-";
}

void print_stats_line(const std::string& label, const ErrorStats& s) {
  fmt::print("  {:<44} {:>5} {:>9} {:>9} {:>9}\n", label, s.rows, stat_text(s, s.mape_pct), stat_text(s, s.bias_pct),
             stat_text(s, s.max_abs_pct));
}

void print_rows(const ValidationReport& rep) {
  // (the source column as wide as its longest entry: a JSON report's "FILE:results[12]")
  std::size_t w = 28;
  for (const auto& e : rep.rows) w = std::max(w, e.row.source.size());
  fmt::print("  {:<{}} {:>4} {:<13} {:>12} {:>12} {:>12} {:>8} {:>6}\n", "source", w, "gpus", "algorithm", "bytes",
             "measured_us", "model_us", "error%", "regime");
  for (const auto& e : rep.rows) {
    if (!e.modelled) {
      fmt::print("  {:<{}} {:>4} {:<13} {:>12} {:>12.4g}   skipped: {}\n", e.row.source, w, e.row.gpus, e.row.algorithm,
                 e.row.bytes, e.row.measured_us, e.why);
      continue;
    }
    fmt::print("  {:<{}} {:>4} {:<13} {:>12} {:>12.4g} {:>12.4g} {:>+8.1f} {:>6}{}\n", e.row.source, w, e.row.gpus,
               e.row.algorithm, e.row.bytes, e.row.measured_us, e.model_us, e.error * 100, to_string(e.regime),
               e.offset_us != 0 ? fmt::format("  (incl. harness offset {:.2f} us)", e.offset_us) : "");
    if (!e.note.empty()) fmt::print("      note: {}\n", e.note);
  }
}

void print_summary(const ValidationReport& rep) {
  fmt::print("  {:<44} {:>5} {:>9} {:>9} {:>9}\n", "", "rows", "MAPE%", "bias%", "max|e|%");
  for (const char* r : {"small", "mid", "large"})
    if (auto it = rep.by_regime.find(r); it != rep.by_regime.end())
      print_stats_line(fmt::format("regime {}", r == std::string("small") ? "<= 64 KiB" : r == std::string("mid")
                                                                                   ? "64 KiB - 64 MiB" : ">= 64 MiB"),
                       it->second);
  for (const auto& [k, v] : rep.by_algorithm) print_stats_line("algorithm " + k, v);
  for (const auto& [k, v] : rep.by_system) print_stats_line(k.size() > 40 ? k.substr(0, 37) + "..." : k, v);
  print_stats_line("overall", rep.overall);
  if (rep.overall.rows == 0 && !rep.rows.empty())
    fmt::print("  no row was modelled: each row above says why it was skipped\n");
}

nlohmann::json inputs_json(const Inputs& in) {
  nlohmann::json j = nlohmann::json::array();
  for (const auto& f : in.files)
    j.push_back({{"file", f.path.filename().string()}, {"format", f.format}, {"sha256", f.sha256},
                 {"rows", f.rows.size()}});
  return j;
}

std::string utc_now() {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// ------------------------------------------------------------------ calibrate

struct CalibrateOptions {
  FabricOptions fabric;
  std::vector<std::string> files, systems, params, offsets;
  bool all = false, no_auto_offset = false;
  std::string out, name, format = "table";
};

void run_calibrate(const CalibrateOptions& o) {
  check_format(o.format, {"table", "json"});
  Config cfg = build_config(o.fabric);
  Inputs in = load_inputs(o.files, cfg, o.systems, o.all);
  FitOptions fo;
  fo.params = split_list(o.params, "--param");
  fo.offset_systems = o.offsets;
  fo.auto_offsets = !o.no_auto_offset;
  FitResult res = fit(cfg, in.selected, fo);

  nlohmann::json prov;
  prov["tool"] = fmt::format("scin calibrate {} ({})", version(), git_revision());
  prov["date_utc"] = utc_now();
  prov["base_preset"] = o.fabric.preset;
  prov["inputs"] = inputs_json(in);
  prov["selection"] = in.filter.empty() ? std::string("all rows")
                                        : fmt::format("rows whose system mentions {}", fmt::join(in.filter, " or "));
  prov["rows_fitted"] = res.rows_used;
  prov["rows_not_fitted"] = in.other.size();
  prov["method"] = fmt::format("Huber (delta {}) least squares on log(time), Levenberg-Marquardt, numerical "
                               "derivatives in log-parameter space; {} iterations", fo.huber_delta, res.iterations);
  for (const auto& p : res.params) {
    nlohmann::json x = {{"path", p.path}, {"unit", p.unit}, {"before", p.before}, {"sensitivity", p.sensitivity}};
    if (p.fitted) {
      x["value"] = p.value;
      if (std::isfinite(p.ci_low)) x["ci95"] = {p.ci_low, p.ci_high};
    } else {
      x["refused"] = p.reason;
    }
    prov["parameters"].push_back(x);
  }
  for (const auto& [s, v] : res.offsets_us)
    prov["harness_offsets_us"][s] = {{"value", v}, {"ci95", {res.offsets_ci_us[s].first, res.offsets_ci_us[s].second}}};
  prov["fit_before"] = to_json(res.before, false);
  prov["fit_after"] = to_json(res.after, true);
  if (!res.notes.empty()) prov["notes"] = res.notes;

  if (!o.out.empty()) {
    nlohmann::json preset = config_to_json(res.cfg);
    if (!o.name.empty()) preset["name"] = o.name;
    nlohmann::json sources = nlohmann::json::object();
    for (const auto& [k, v] : preset_sources(o.fabric.preset)) sources[k] = v;
    std::string files;
    for (const auto& f : in.files) files += (files.empty() ? "" : ", ") + f.path.filename().string() + " (sha256 " + f.sha256.substr(0, 12) + ")";
    for (const auto& p : res.params) {
      const std::string old_source = sources.value(p.path, "");
      if (p.fitted)
        sources[p.path] = fmt::format("calibrated by scin calibrate on {}: {} {} (95% CI {} - {}); see calibration",
                                      files, fmt_num(p.value), p.unit, fmt_num(p.ci_low), fmt_num(p.ci_high));
      else if (old_source.starts_with("calibrated by scin calibrate"))
        // An earlier fit's claim no longer holds for this value: say what this fit did.
        sources[p.path] = fmt::format("not fitted by scin calibrate on {}: {}; {} {} as given to the fit; see calibration",
                                      files, p.reason, fmt_num(p.value), p.unit);
    }
    nlohmann::ordered_json ordered = nlohmann::ordered_json::object();
    ordered["name"] = preset["name"];
    ordered["description"] = preset.value("description", "");
    ordered["sources"] = nlohmann::ordered_json::parse(sources.dump());
    for (auto it = preset.begin(); it != preset.end(); ++it)
      if (it.key() != "name" && it.key() != "description") ordered[it.key()] = nlohmann::ordered_json::parse(it.value().dump());
    ordered["calibration"] = nlohmann::ordered_json::parse(prov.dump());
    std::ofstream f(o.out);
    if (!f) throw Error(fmt::format("--out: cannot write '{}'", o.out));
    f << ordered.dump(2) << "\n";
    if (!f) throw Error(fmt::format("--out: writing '{}' failed", o.out));
  }

  if (o.format == "json") {
    fmt::print("{}\n", prov.dump(2));
    return;
  }
  fmt::print("# scin calibrate: preset {} on {} rows ({}); {} other rows not fitted\n", o.fabric.preset,
             res.rows_used, prov["selection"].get<std::string>(), in.other.size());
  for (const auto& f : in.files)
    fmt::print("#   {} ({}, {} rows, sha256 {})\n", f.path.string(), f.format, f.rows.size(), f.sha256);
  fmt::print("# {}\n\nparameters\n", prov["method"].get<std::string>());
  fmt::print("  {:<34} {:>12} {:>12} {:>25} {:>8}  {}\n", "path", "before", "fitted", "95% CI", "sens.", "unit");
  for (const auto& p : res.params) {
    if (p.fitted)
      fmt::print("  {:<34} {:>12} {:>12} {:>25} {:>8.3f}  {}\n", p.path, fmt_num(p.before), fmt_num(p.value),
                 fmt::format("[{}, {}]", fmt_num(p.ci_low), fmt_num(p.ci_high)), p.sensitivity, p.unit);
    else
      fmt::print("  {:<34} {:>12} {:>12}   refused, {}\n", p.path, fmt_num(p.before), "-", p.reason);
  }
  for (const auto& n : res.notes) fmt::print("  note: {}\n", n);
  if (!res.offsets_us.empty()) {
    fmt::print("\nharness offsets (a harness that timed a collective another harness also timed, slower; fitted, "
               "not part of the fabric)\n");
    for (const auto& [s, v] : res.offsets_us)
      fmt::print("  {:<60} {:>8.2f} us  [{}, {}]\n", s, v, fmt_num(res.offsets_ci_us[s].first),
                 fmt_num(res.offsets_ci_us[s].second));
  }
  fmt::print("\nfit before (preset as given)\n");
  print_summary(res.before);
  fmt::print("\nfit after\n");
  print_summary(res.after);
  fmt::print("\nrows after\n");
  print_rows(res.after);
  if (!o.out.empty()) fmt::print("\nwrote {}\n", o.out);
}

// ------------------------------------------------------------------ validate

struct ValidateOptions {
  FabricOptions fabric;
  std::vector<std::string> files, systems, offsets;
  bool all = false;
  std::string format = "table", holdout;
};

void print_regimes_before_after(const ValidationReport& before, const ValidationReport& after) {
  fmt::print("  {:<20} {:>5} {:>12} {:>12} {:>12} {:>12}\n", "regime", "rows", "MAPE% before", "bias% before",
             "MAPE% after", "bias% after");
  auto line = [&](const std::string& label, const ErrorStats& b, const ErrorStats& a) {
    fmt::print("  {:<20} {:>5} {:>12} {:>12} {:>12} {:>12}\n", label, a.rows, stat_text(b, b.mape_pct),
               stat_text(b, b.bias_pct), stat_text(a, a.mape_pct), stat_text(a, a.bias_pct));
  };
  for (const char* r : {"small", "mid", "large"})
    if (auto it = after.by_regime.find(r); it != after.by_regime.end())
      line(r == std::string("small") ? "<= 64 KiB" : r == std::string("mid") ? "64 KiB - 64 MiB" : ">= 64 MiB",
           before.by_regime.at(r), it->second);
  line("overall", before.overall, after.overall);
}

// --holdout system: leave-one-system-out cross-validation from the uncalibrated preset.
void run_holdout(const ValidateOptions& o, const Config& cfg, const Inputs& in) {
  if (o.holdout != "system") throw Error(fmt::format("--holdout: '{}' is not supported (use: system)", o.holdout));
  check_format(o.format, {"table", "json"});
  const nlohmann::json cal = preset_calibration(o.fabric.preset);
  const Config start = uncalibrated_config(cfg, cal);
  FitOptions fo;
  const HoldoutReport rep = leave_one_system_out(start, in.selected, fo);
  if (o.format == "json") {
    nlohmann::json j = to_json(rep);
    j["preset"] = o.fabric.preset;
    j["start"] = cal.is_null() ? "the preset as given (it records no calibration)"
                               : "the preset with its calibrated parameters set back to their values before the fit";
    j["inputs"] = inputs_json(in);
    fmt::print("{}\n", j.dump(2));
    return;
  }
  fmt::print("# scin validate --holdout system: preset {}, {} rows{}\n", o.fabric.preset, in.selected.size(),
             in.filter.empty() ? "" : fmt::format(" whose system mentions {}", fmt::join(in.filter, " or ")));
  fmt::print("# leave-one-system-out cross-validation WITHIN these rows, not independent validation:\n"
             "# each fold fits {} (its calibrated parameters set back to their values before the fit) to every\n"
             "# other system's rows and predicts the held-out system's rows, with no harness offset for them.\n"
             "# before = the uncalibrated preset on the same rows; error = model / measured - 1\n",
             o.fabric.preset);
  for (const auto& f : rep.folds) {
    fmt::print("\nheld out: {} ({} rows; fitted on {} rows)\n", f.held_out, f.before.rows.size(), f.train_rows);
    if (!f.error.empty()) {
      fmt::print("  fold not fitted: {}\n", f.error);
      continue;
    }
    std::vector<std::string> fitted;
    for (const auto& p : f.params)
      if (p.fitted) fitted.push_back(fmt::format("{}={}", p.path, fmt_num(p.value)));
    fmt::print("  fitted: {}\n", fitted.empty() ? std::string("nothing") : fmt::format("{}", fmt::join(fitted, ", ")));
    for (const auto& [k, v] : f.offsets_us) fmt::print("  harness offset {:.2f} us for '{}'\n", v, k);
    print_regimes_before_after(f.before, f.after);
  }
  fmt::print("\nall held-out rows, pooled\n");
  print_regimes_before_after(rep.before, rep.after);
}

// Where busbw reaches half of its value at the largest measured size, per
// (system, algorithm, gpus) group of two or more rows: measured (less the
// system's harness offset) and model (docs/model.md section 9, "Half bandwidth").
struct HalfPeak {
  std::string system, algorithm;
  int gpus = 0;
  std::uint64_t smallest = 0, largest = 0;
  double measured_bytes = 0, model_bytes = 0, offset_us = 0;
};

std::vector<HalfPeak> half_peaks(const Config& cfg, const std::vector<MeasuredRow>& rows,
                                 const std::map<std::string, double>& offsets) {
  std::map<std::tuple<std::string, std::string, int>, std::vector<MeasuredRow>> groups;
  for (const auto& r : rows) groups[{r.system, r.algorithm, r.gpus}].push_back(r);
  std::vector<HalfPeak> out;
  for (const auto& [key, g] : groups) {
    if (g.size() < 2 || !find_algorithm(std::get<1>(key)) || !unsupported_reason(cfg, std::get<1>(key)).empty()) continue;
    HalfPeak h;
    std::tie(h.system, h.algorithm, h.gpus) = key;
    h.smallest = h.largest = g[0].bytes;
    for (const auto& r : g) {
      h.smallest = std::min(h.smallest, r.bytes);
      h.largest = std::max(h.largest, r.bytes);
    }
    h.offset_us = harness_offset_for(offsets, h.system);
    h.measured_bytes = measured_half_peak_bytes(g, h.offset_us);
    const DType dt = g[0].dtype == "fp32" || g[0].dtype == "float" ? DType::Fp32 : DType::Bf16;
    try {
      h.model_bytes = model_half_peak_bytes(cfg, h.algorithm, h.gpus, dt, h.largest);
    } catch (const Error&) {
      continue;
    }
    out.push_back(h);
  }
  return out;
}

std::string size_text(double b) {
  if (!std::isfinite(b)) return "none";
  if (b >= double(1ull << 30)) return fmt::format("{:.3g} GiB", b / double(1ull << 30));
  if (b >= double(1 << 20)) return fmt::format("{:.3g} MiB", b / double(1 << 20));
  if (b >= 1024) return fmt::format("{:.3g} KiB", b / 1024);
  return fmt::format("{:.0f} B", b);
}

// Harness offsets: those the preset's calibration recorded, then --harness-offset SYSTEM=US.
std::map<std::string, double> harness_offsets(const std::string& preset, const std::vector<std::string>& given) {
  std::map<std::string, double> offsets = preset_harness_offsets(preset);
  for (const auto& a : given) {
    const auto eq = a.rfind('=');
    double v = 0;
    if (eq == std::string::npos || eq == 0) throw Error(fmt::format("--harness-offset: '{}' is not SYSTEM=US", a));
    try {
      v = std::stod(a.substr(eq + 1));
    } catch (...) {
      throw Error(fmt::format("--harness-offset: '{}' is not a number of microseconds", a.substr(eq + 1)));
    }
    if (!(v >= 0)) throw Error(fmt::format("--harness-offset: {} us must be >= 0", v));
    offsets[a.substr(0, eq)] = v;
  }
  return offsets;
}

// One validation: the report, the preset of each row (one, or per row with --preset auto),
// the harness offsets used and the half-bandwidth groups.
struct Validation {
  ValidationReport rep;
  std::vector<std::string> preset_of_row;
  std::map<std::string, double> offsets;
  std::vector<HalfPeak> half;
};

// --preset auto: each row on the shipped preset of the accelerator its system names.
Validation validate_auto(const ValidateOptions& o, const Inputs& in) {
  std::vector<std::pair<std::string, Config>> presets;
  for (const auto& info : list_presets()) {
    if (info.user) continue;
    FabricOptions f = o.fabric;
    f.preset = info.name;
    presets.emplace_back(info.name, build_config(f));
  }
  std::map<int, std::vector<std::size_t>> groups;  // preset -> row indices
  Validation v;
  v.rep.rows.resize(in.selected.size());
  v.preset_of_row.resize(in.selected.size());
  std::set<std::string> accelerators;
  for (const auto& [n, c] : presets) accelerators.insert(c.accelerator.name);
  for (std::size_t i = 0; i < in.selected.size(); ++i) {
    const int k = preset_for_row(presets, in.selected[i]);
    if (k >= 0) {
      groups[k].push_back(i);
      continue;
    }
    RowError& e = v.rep.rows[i];
    e.row = in.selected[i];
    e.regime = regime_of(e.row.bytes);
    e.why = fmt::format("--preset auto: the system names none of the shipped presets' accelerators ({}); give --preset",
                        fmt::join(accelerators, ", "));
  }
  for (const auto& [k, idx] : groups) {
    const auto& [name, cfg] = presets[static_cast<std::size_t>(k)];
    std::vector<MeasuredRow> rows;
    for (auto i : idx) rows.push_back(in.selected[i]);
    const auto offsets = harness_offsets(name, o.offsets);
    ValidationReport r = validate_rows(cfg, rows, offsets);
    for (std::size_t j = 0; j < idx.size(); ++j) {
      v.rep.rows[idx[j]] = std::move(r.rows[j]);
      v.preset_of_row[idx[j]] = name;
    }
    for (const auto& [sys, off] : harness_offsets_used(rows, offsets)) v.offsets[sys] = off;
    for (auto& h : half_peaks(cfg, rows, offsets)) v.half.push_back(std::move(h));
  }
  summarise(v.rep);
  return v;
}

void run_validate(const ValidateOptions& o) {
  check_format(o.format, {"table", "csv", "json"});
  const bool auto_preset = o.fabric.preset == "auto";
  if (auto_preset && !o.holdout.empty())
    throw Error("--holdout: give one --preset, not auto (each fold refits one preset)");
  Config cfg;
  if (!auto_preset) cfg = build_config(o.fabric);
  Inputs in = auto_preset ? load_inputs(o.files, cfg, o.systems, o.systems.empty()) : load_inputs(o.files, cfg, o.systems, o.all);
  if (!o.holdout.empty()) return run_holdout(o, cfg, in);
  Validation v;
  if (auto_preset) {
    v = validate_auto(o, in);
  } else {
    const auto offsets = harness_offsets(o.fabric.preset, o.offsets);
    v.rep = validate_rows(cfg, in.selected, offsets);
    v.preset_of_row.assign(in.selected.size(), o.fabric.preset);
    v.half = half_peaks(cfg, in.selected, offsets);
    v.offsets = harness_offsets_used(in.selected, offsets);
  }
  const ValidationReport& rep = v.rep;
  const auto& offsets = v.offsets;
  if (o.format == "json") {
    nlohmann::json j = to_json(rep, true);
    j["preset"] = o.fabric.preset;
    if (auto_preset)
      for (std::size_t i = 0; i < rep.rows.size(); ++i)
        j["rows"][i]["preset"] = v.preset_of_row[i].empty() ? nlohmann::json(nullptr) : nlohmann::json(v.preset_of_row[i]);
    j["inputs"] = inputs_json(in);
    for (const auto& [k, val] : offsets) j["harness_offsets_us"][k] = val;
    for (const auto& h : v.half) {
      auto num = [](double x) { return std::isfinite(x) ? nlohmann::json(x) : nlohmann::json(nullptr); };
      j["half_peak"].push_back({{"system", h.system}, {"algorithm", h.algorithm}, {"gpus", h.gpus},
                                {"smallest_bytes", h.smallest}, {"largest_bytes", h.largest},
                                {"harness_offset_us", h.offset_us}, {"measured_bytes", num(h.measured_bytes)},
                                {"model_bytes", num(h.model_bytes)}});
    }
    fmt::print("{}\n", j.dump(2));
    return;
  }
  if (o.format == "csv") {
    std::vector<std::string> head = {"kind", "key", "source", "system", "gpus", "algorithm", "bytes", "regime",
                                     "measured_us", "model_us", "error_pct", "rows", "mape_pct", "bias_pct"};
    if (auto_preset) head.push_back("preset");
    fmt::print("{}\n", csv_record(head));
    for (std::size_t i = 0; i < rep.rows.size(); ++i) {
      const auto& e = rep.rows[i];
      std::vector<std::string> f = {"row", "", e.row.source, e.row.system, std::to_string(e.row.gpus), e.row.algorithm,
                                    std::to_string(e.row.bytes), to_string(e.regime), fmt::format("{}", e.row.measured_us),
                                    e.modelled ? fmt::format("{}", e.model_us) : "",
                                    e.modelled ? fmt::format("{}", e.error * 100) : "", "", "", ""};
      if (auto_preset) f.push_back(v.preset_of_row[i]);
      fmt::print("{}\n", csv_record(f));
    }
    auto stat = [&](const std::string& kind, const std::string& key, const ErrorStats& s) {
      const std::string none;   // no rows: empty fields, not 0
      std::vector<std::string> f = {kind, key, "", "", "", "", "", "", "", "", "", std::to_string(s.rows),
                                    s.rows > 0 ? fmt::format("{}", s.mape_pct) : none,
                                    s.rows > 0 ? fmt::format("{}", s.bias_pct) : none};
      if (auto_preset) f.push_back("");
      fmt::print("{}\n", csv_record(f));
    };
    for (const auto& [k, val] : rep.by_regime) stat("regime", k, val);
    for (const auto& [k, val] : rep.by_algorithm) stat("algorithm", k, val);
    for (const auto& [k, val] : rep.by_system) stat("system", k, val);
    stat("overall", "", rep.overall);
    return;
  }
  if (auto_preset) {
    fmt::print("# scin validate: --preset auto, {} rows{}: each on the shipped preset of the accelerator its system names\n",
               rep.rows.size(), in.filter.empty() ? "" : fmt::format(" whose system mentions {}", fmt::join(in.filter, " or ")));
    std::map<std::string, std::map<std::string, int>> systems_of;  // preset -> system -> rows
    for (std::size_t i = 0; i < rep.rows.size(); ++i) ++systems_of[v.preset_of_row[i]][rep.rows[i].row.system];
    for (const auto& [p, sys] : systems_of)
      for (const auto& [name, n] : sys)
        fmt::print("#   {:<14} {} ({} row{})\n", p.empty() ? "(none)" : p, name, n, n == 1 ? "" : "s");
  } else {
    fmt::print("# scin validate: preset {} ({}), {} rows{}\n", o.fabric.preset, cfg.accelerator.name, rep.rows.size(),
               in.filter.empty() ? "" : fmt::format(" whose system mentions {}", fmt::join(in.filter, " or ")));
  }
  for (const auto& f : in.files) fmt::print("#   {} ({}, sha256 {})\n", f.path.string(), f.format, f.sha256);
  for (const auto& [k, val] : offsets) fmt::print("# harness offset {:.2f} us for '{}'\n", val, k);
  fmt::print("# error = model / measured - 1 (negative: the model is too fast)\n\n");
  print_rows(rep);
  fmt::print("\n");
  print_summary(rep);
  if (!v.half.empty()) {
    fmt::print("\nhalf bandwidth: the size where busbw reaches half of its value at the group's largest size\n"
               "(measured less the system's harness offset; 'none': no two rows bracket it)\n");
    fmt::print("  {:<40} {:<9} {:>4} {:>21} {:>12} {:>12}\n", "system", "algorithm", "gpus", "rows", "measured",
               "model");
    for (const auto& h : v.half)
      fmt::print("  {:<40} {:<9} {:>4} {:>21} {:>12} {:>12}\n", h.system.size() > 40 ? h.system.substr(0, 37) + "..." : h.system,
                 h.algorithm, h.gpus, fmt::format("{} - {}", size_text(double(h.smallest)), size_text(double(h.largest))),
                 size_text(h.measured_bytes), size_text(h.model_bytes));
  }
}

// ------------------------------------------------------------------ import

struct ImportOptions {
  std::vector<std::string> files, tags;
  std::string db, experiment = "measured", name, notes;
};

void run_import(const ImportOptions& o) {
  if (o.files.empty()) throw Error("LOG: give at least one nccl-tests log or CSV file");
  std::string db = o.db;
  if (std::filesystem::path(db).extension().empty()) db += kDbExtension;
  // Parse everything first: a malformed file writes nothing.
  std::vector<MeasuredFile> files;
  for (const auto& f : o.files) {
    files.push_back(load_measured(f));
    print_ignored(files.back());
  }
  Store store = Store::open(db, Access::Create);
  MeasuredRunMeta meta;
  meta.experiment = o.experiment;
  meta.notes = o.notes;
  meta.tags = o.tags;
  for (const auto& m : files) {
    meta.name = o.name.empty() ? m.path.filename().string() : o.name;
    const std::int64_t id = import_measured(store, m, meta);
    fmt::print("run {} '{}': {} measured points from {} ({}, sha256 {})\n", id, meta.name, m.rows.size(),
               m.path.string(), m.format, m.sha256.substr(0, 12));
  }
}

}  // namespace

void add_calib_commands(CLI::App& app) {
  auto im = std::make_shared<ImportOptions>();
  auto* imp = app.add_subcommand("import", "store nccl-tests all_reduce_perf logs or measurement CSVs in an "
                                           "experiment database as measured runs (one run per file)");
  imp->add_option("LOG", im->files, "nccl-tests logs or JSON reports (-J), or CSV files")->required();
  imp->add_option("--db", im->db, "experiment database (.scindb; created if missing)")->required();
  imp->add_option("--experiment", im->experiment, "experiment the runs belong to")->capture_default_str();
  imp->add_option("--name", im->name, "run name (default: the file name)");
  imp->add_option("--notes", im->notes, "run notes");
  imp->add_option("--tag", im->tags, "tag the runs; repeatable");
  imp->callback([im] { run_import(*im); });

  auto c = std::make_shared<CalibrateOptions>();
  auto* cal = app.add_subcommand("calibrate", "fit a preset's parameters to measured All-Reduce times "
                                              "(nccl-tests logs or JSON reports, or CSV) and write the calibrated preset");
  cal->add_option("MEASURED", c->files, "nccl-tests all_reduce_perf logs or JSON reports (-J), or CSV files")->required();
  add_fabric_options(*cal, c->fabric);
  cal->add_option("--out", c->out, "write the calibrated preset (with provenance) to this .json file");
  cal->add_option("--name", c->name, "name of the written preset (default: the base preset's)");
  cal->add_option("--system", c->systems, "use rows whose system contains TEXT (default: the preset's accelerator name)");
  cal->add_flag("--all-systems", c->all, "use every row");
  cal->add_option("--param", c->params, "registry paths to fit, comma separated (default: the documented set)");
  cal->add_option("--harness-offset", c->offsets, "fit an additive harness offset for systems containing TEXT");
  cal->add_flag("--no-auto-offset", c->no_auto_offset, "do not detect harness offsets from repeated collectives");
  cal->add_option("--format", c->format, "table or json")->capture_default_str();
  cal->callback([c] { run_calibrate(*c); });

  auto v = std::make_shared<ValidateOptions>();
  auto* val = app.add_subcommand("validate", "model error per measured row, with MAPE per regime and algorithm");
  val->add_option("MEASURED", v->files, "nccl-tests all_reduce_perf logs or JSON reports (-J), or CSV files")->required();
  add_fabric_options(*val, v->fabric);
  val->get_option("--preset")->description(
      "fabric preset name or path to a preset .json (see `scin presets`), or auto: each row on the shipped preset "
      "whose accelerator its system names (H100 -> hgx-h100-8, GB200 -> gb200-nvl72, ...)");
  val->add_option("--system", v->systems, "use rows whose system contains TEXT (default: the preset's accelerator name; "
                                          "with --preset auto, every row)");
  val->add_flag("--all-systems", v->all, "use every row");
  val->add_option("--harness-offset", v->offsets, "SYSTEM=US: add US microseconds to the model for that system");
  val->add_option("--holdout", v->holdout, "system: leave-one-system-out cross-validation within the rows (fit the "
                                           "uncalibrated preset on all other systems, predict the one left out)");
  val->add_option("--format", v->format, "table, csv or json")->capture_default_str();
  val->callback([v] { run_validate(*v); });
}

}  // namespace scin::cli
