// `scin diff | compare | check | recover`: what differs between two stored
// runs, their points side by side, and the health of a database file.
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "base/error.h"
#include "base/text.h"
#include "fabric/preset.h"
#include "cli/store_cli.h"
#include "store/store.h"
#include "sweep/sweep.h"

namespace scin::cli {
namespace {

namespace fs = std::filesystem;

std::string value_text(const nlohmann::json& v) {
  if (v.is_null()) return "(absent)";
  return v.is_string() ? v.get<std::string>() : v.dump();
}

void diff_runs(Store& store, std::int64_t a, std::int64_t b) {
  RunInfo ra = store.get_run(a), rb = store.get_run(b);
  for (const RunInfo* r : {&ra, &rb})
    if (!r->config_recorded())
      throw Error(fmt::format("run {}: configuration not recorded (written by scin {} before runs recorded their "
                              "fabric); nothing to compare", r->id, r->tool_version));
  auto diffs = config_diff(ra.config, rb.config);
  std::size_t w = 9;
  for (const auto& d : diffs) w = std::max(w, d.path.size());
  if (diffs.empty()) {
    fmt::print("runs {} and {}: same base configuration ({} parameters)\n", a, b,
               ra.config.contains("parameters") ? ra.config["parameters"].size() : 0);
  } else {
    fmt::print("{:<{}}  {:>16}  {:>16}  {}\n", "parameter", w, fmt::format("run {}", a), fmt::format("run {}", b),
               "unit");
    for (const auto& d : diffs)
      fmt::print("{:<{}}  {:>16}  {:>16}  {}\n", d.path, w, value_text(d.a), value_text(d.b), d.unit);
  }
  // What else may explain two curves: the preset files, the tool and the swept axes.
  auto preset_hashes = [](const RunInfo& r) {
    std::map<std::string, std::string> out;
    if (r.config.contains("presets") && r.config["presets"].is_object())
      for (auto it = r.config["presets"].begin(); it != r.config["presets"].end(); ++it)
        out[it.key()] = it.value().value("file_fnv1a64", "");
    return out;
  };
  // Presets swept as an axis (not the base preset): their recorded parameters, compared too.
  const std::string base_a = ra.config.value("preset", ""), base_b = rb.config.value("preset", "");
  if (ra.config.contains("presets") && rb.config.contains("presets"))
    for (auto it = ra.config["presets"].begin(); it != ra.config["presets"].end(); ++it) {
      const std::string& name = it.key();
      if (name == base_a || name == base_b || !rb.config["presets"].contains(name)) continue;
      auto params = [&](const nlohmann::json& e) {
        return nlohmann::json{{"parameters", config_parameters_json(config_from_json(e.at("config"), name))}};
      };
      for (const auto& d : config_diff(params(it.value()), params(rb.config["presets"][name])))
        fmt::print("{:<{}}  {:>16}  {:>16}  {}  (in preset '{}')\n", d.path, w, value_text(d.a), value_text(d.b),
                   d.unit, name);
    }
  auto ha = preset_hashes(ra), hb = preset_hashes(rb);
  for (const auto& [name, h] : ha)
    if (hb.count(name) && hb[name] != h && !h.empty() && !hb[name].empty())
      fmt::print("# preset '{}': file changed between the runs (fnv1a64 {} vs {})\n", name, h, hb[name]);
  if (ra.config.value("git_revision", "") != rb.config.value("git_revision", ""))
    fmt::print("# tool: scin {} ({}) vs scin {} ({})\n", ra.config.value("tool_version", ""),
               ra.config.value("git_revision", ""), rb.config.value("tool_version", ""),
               rb.config.value("git_revision", ""));
  auto axes = [](const RunInfo& r) { return r.spec.is_object() && r.spec.contains("axes") ? r.spec["axes"] : nlohmann::json(); };
  if (axes(ra) != axes(rb)) fmt::print("# the runs sweep different axes (see `scin show`)\n");
}

// The headline value of a point of each kind.
double headline(const PointRecord& p, const char** name) {
  switch (p.kind) {
    case PointKind::Collective: *name = "time_us"; return p.time_us;
    case PointKind::Quant: *name = "rel_l2"; return p.rel_l2;
    case PointKind::Inference: *name = "ttft_us"; return p.ttft_us;
    case PointKind::Measured: *name = "measured_us"; return p.measured_us;
  }
  *name = "?";
  return 0;
}

void compare_runs(Store& store, std::int64_t a, std::int64_t b, bool all) {
  RunInfo ra = store.get_run(a), rb = store.get_run(b);
  if (ra.kind != rb.kind)
    throw Error(fmt::format("compare: run {} is {} and run {} is {}; compare runs of one kind", a,
                            to_string(ra.kind), b, to_string(rb.kind)));
  // Points are matched by their axis values (same spec: same order).
  std::map<std::string, PointRecord> by_axes;
  for (auto& p : store.points(b)) by_axes.emplace(p.axes.dump(), std::move(p));
  const char* metric = "?";
  {
    PointRecord kind_only;
    kind_only.kind = ra.kind;
    headline(kind_only, &metric);   // the kind's value, matched points or not
  }
  std::size_t matched = 0, same = 0;
  double worst = 0;
  std::string worst_at;
  struct Line {
    std::int64_t index;
    std::string axes;
    double va, vb;
  };
  std::vector<Line> lines;
  std::size_t axes_w = 48;   // as wide as the longest axes shown (they overran a fixed 48)
  for (const auto& pa : store.points(a)) {
    auto it = by_axes.find(pa.axes.dump());
    if (it == by_axes.end()) continue;
    const PointRecord& pb = it->second;
    ++matched;
    double va = headline(pa, &metric), vb = headline(pb, &metric);
    double rel = va == vb ? 0 : std::abs(vb - va) / std::max(std::abs(va), 1e-300);
    if (rel == 0 && pa.status == pb.status) ++same;
    if (rel > worst) worst = rel, worst_at = pa.axes.dump();
    if (all || rel != 0 || pa.status != pb.status) {
      lines.push_back({static_cast<std::int64_t>(pa.index), pa.axes.dump(), va, vb});
      axes_w = std::max(axes_w, text_columns(lines.back().axes));
    }
  }
  fmt::print("# run {} '{}' vs run {} '{}': {} matched points, {} identical; {} old -> new\n", a, ra.name, b,
             rb.name, matched, same, metric);
  if (!lines.empty()) {
    fmt::print("{:>6}  {}  {:>14}  {:>14}  {:>11}\n", "index", pad_columns("axes", axes_w), fmt::format("run {}", a),
               fmt::format("run {}", b), "change");
    for (const auto& l : lines)
      fmt::print("{:>6}  {}  {:>14.6g}  {:>14.6g}  {:>+10.3f}%\n", l.index, pad_columns(l.axes, axes_w), l.va, l.vb,
                 l.va == 0 ? 0.0 : 100 * (l.vb - l.va) / l.va);
  }
  if (worst > 0) fmt::print("# largest change {:.3g}% at {}\n", 100 * worst, worst_at);
}

void recover(const fs::path& from, const fs::path& to) {
  std::error_code ec;
  if (fs::exists(to, ec)) throw Error(fmt::format("--out: '{}' exists; recover writes a fresh file", to.string()));
  Store src = Store::open(from, Access::ReadOnly, /*check=*/true);
  if (src.damage().empty()) fmt::print(stderr, "scin: {} passes quick_check; copying every run anyway\n", from.string());
  Store dst = Store::open(to, Access::Create);
  std::size_t runs = 0, partial = 0, lost = 0;
  for (RunInfo r : src.list_runs()) {
    if (!r.problem.empty()) {
      fmt::print(stderr, "run {}: skipped, its row is damaged ({})\n", r.id, r.problem);
      ++lost;
      continue;
    }
    std::vector<PointRecord> pts;
    try {
      pts = src.points(r.id);
    } catch (const Error&) {
      // Read around the damage: chunks that fail are left out.
      constexpr std::uint64_t kChunk = 64;
      pts.clear();
      for (std::uint64_t first = 0; first < std::max(r.points_total, r.points_stored); first += kChunk) {
        try {
          auto part = src.points(r.id, first, kChunk);
          pts.insert(pts.end(), part.begin(), part.end());
        } catch (const Error&) {
        }
      }
      r.notes += fmt::format("{}recovered {} of {} stored points from a damaged file", r.notes.empty() ? "" : "\n",
                             pts.size(), r.points_stored);
      if (r.status == RunStatus::Done) r.status = RunStatus::Interrupted;   // resume can finish it
      ++partial;
    }
    std::int64_t id = dst.import_run(r, pts);
    ++runs;
    fmt::print("run {} '{}' -> run {} ({} points)\n", r.id, r.name, id, pts.size());
  }
  fmt::print("recovered {} runs ({} partially, {} unreadable) into {}; integrity_check: {}\n", runs, partial, lost,
             to.string(), dst.integrity_check());
}

}  // namespace

void add_history_commands(CLI::App& app) {
  {
    struct DiffCli { std::string db; std::int64_t a = 0, b = 0; };
    auto o = std::make_shared<DiffCli>();
    auto* cmd = app.add_subcommand("diff", "list the configuration parameters that differ between two runs");
    cmd->add_option("--db", o->db, "experiment database")->required();
    cmd->add_option("RUN_A", o->a, "run id")->required();
    cmd->add_option("RUN_B", o->b, "run id")->required();
    cmd->callback([o] {
      Store store = open_existing(o->db);
      diff_runs(store, o->a, o->b);
    });
  }
  {
    struct CompareCli { std::string db; std::int64_t a = 0, b = 0; bool all = false; };
    auto o = std::make_shared<CompareCli>();
    auto* cmd = app.add_subcommand("compare", "show two runs' points side by side (old vs new), matched by axes");
    cmd->add_option("--db", o->db, "experiment database")->required();
    cmd->add_option("RUN_A", o->a, "the old run")->required();
    cmd->add_option("RUN_B", o->b, "the new run")->required();
    cmd->add_flag("--all", o->all, "list every matched point, not only those that changed");
    cmd->callback([o] {
      Store store = open_existing(o->db);
      compare_runs(store, o->a, o->b, o->all);
    });
  }
  {
    auto db = std::make_shared<std::string>();
    auto* cmd = app.add_subcommand("check", "check a database file (PRAGMA quick_check); exit 2 if damaged");
    cmd->add_option("--db", *db, "experiment database")->required();
    cmd->callback([db] {
      fs::path p = db_path(*db);
      Store s = Store::open(p, Access::ReadOnly, /*check=*/true);
      if (!s.damage().empty())
        throw Error(fmt::format("{}: damaged: {}; `scin recover {} --out NEW.scindb` copies every readable run",
                                p.string(), s.damage(), p.string()));
      fmt::print("{}: ok (schema {}, {} runs)\n", p.string(), s.schema_version(), s.list_runs().size());
    });
  }
  {
    auto from = std::make_shared<std::string>();
    auto out = std::make_shared<std::string>();
    auto* cmd = app.add_subcommand("recover", "copy every readable run of a (damaged) database into a fresh file");
    cmd->add_option("FILE", *from, "the damaged database")->required();
    cmd->add_option("--out", *out, "the new database (must not exist)")->required();
    cmd->callback([from, out] { recover(db_path(*from), db_path(*out)); });
  }
}

}  // namespace scin::cli
