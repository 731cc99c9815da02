// Self-describing runs: a run records its resolved configuration; after its
// preset file is edited (or deleted) it still shows and re-runs the original
// numbers, and config_diff names exactly the edited parameter. Also: the one
// column table matches the schema, the measured kind round-trips, a stored
// packet point equals simulate(), every shipped sweep spec parses.
#include <sqlite3.h>

#include <fstream>
#include <map>
#include <sstream>

#include <gtest/gtest.h>

#include "base/json_input.h"

#include "calib/compare.h"
#include "engines/simulate.h"
#include "fabric/params.h"
#include "fabric/preset.h"
#include "store/point_kinds.h"
#include <fmt/format.h>

#include "base/error.h"
#include "store/sqlite_db.h"
#include "store/store.h"
#include "store_test_util.h"
#include "sweep/sweep.h"

namespace scin {
namespace {

using nlohmann::json;
using test::TempDir;

// A copy of a shipped preset in a temp dir, edited in place by the test.
std::filesystem::path copy_preset(const TempDir& dir) {
  auto p = dir / "mine.json";
  std::filesystem::copy_file(resource_dir() / "presets" / "hgx-h200-8.json", p);
  return p;
}

void set_in_file(const std::filesystem::path& f, const char* group, const char* key, double value) {
  json j = read_json_document(f);
  j[group][key] = value;
  std::ofstream(f) << j.dump(1);
}

SweepSpec spec_on(const std::filesystem::path& preset) {
  return sweep_spec_from_json(json{
      {"name", "recorded"},
      {"base", {{"preset", preset.string()}, {"set", {{"links.latency_ns", 120}}}, {"collective", {{"dtype", "bf16"}}}}},
      {"axes", json::array({json{{"path", "collective.algorithm"}, {"values", {"ring", "nvls", "scin"}}},
                            json{{"path", "collective.bytes"}, {"values", {"4K", "1M", "64M"}}}})}});
}

TEST(RecordedRuns, ConfigSurvivesAnEditedPresetAndRerunsTheOriginalNumbers) {
  TempDir dir;
  auto preset = copy_preset(dir);
  Store store = Store::open(dir / "r.scindb", Access::Create);
  SweepOptions opts;
  opts.threads = 2;
  const std::int64_t first = run_sweep(store, spec_on(preset), opts, SweepSink{}).run_id;
  RunInfo r1 = store.get_run(first);
  ASSERT_TRUE(r1.config_recorded());
  // Every registry parameter, with value and unit; base.set applied on top of the preset.
  const json& params1 = r1.config["parameters"];
  EXPECT_EQ(params1.size(), params().size());
  EXPECT_EQ(params1["links.latency_ns"]["value"], 120.0);
  EXPECT_EQ(params1["links.latency_ns"]["unit"], "ns");
  EXPECT_EQ(params1["switch.latency_ns"]["value"], load_preset(preset.string()).sw.latency_ns);
  EXPECT_EQ(r1.config["preset"], preset.string());
  EXPECT_EQ(r1.config["presets"][preset.string()]["file_fnv1a64"].get<std::string>().size(), 16u);
  EXPECT_FALSE(r1.config["tool_version"].get<std::string>().empty());
  // Each point stores the values of its axes.
  auto pts1 = store.points(first);
  ASSERT_EQ(pts1.size(), 9u);
  EXPECT_EQ(pts1[4].axes, (json{{"collective.algorithm", "nvls"}, {"collective.bytes", 1048576}}));

  // Edit the preset file: a new run differs in exactly that parameter.
  const double old_latency = load_preset(preset.string()).sw.latency_ns;
  set_in_file(preset, "switch", "latency_ns", old_latency + 150);
  const std::int64_t second = run_sweep(store, spec_on(preset), opts, SweepSink{}).run_id;
  RunInfo r2 = store.get_run(second);
  auto diffs = config_diff(r1.config, r2.config);
  ASSERT_EQ(diffs.size(), 1u);
  EXPECT_EQ(diffs[0].path, "switch.latency_ns");
  EXPECT_EQ(diffs[0].a, old_latency);
  EXPECT_EQ(diffs[0].b, old_latency + 150);
  EXPECT_EQ(diffs[0].unit, "ns");
  EXPECT_NE(r1.config["presets"][preset.string()]["file_fnv1a64"],
            r2.config["presets"][preset.string()]["file_fnv1a64"]);
  EXPECT_NE(store.points(second)[0].time_us, pts1[0].time_us);   // the edit matters

  // Delete the preset file: the stored run still re-runs, with the original numbers.
  std::filesystem::remove(preset);
  EXPECT_THROW(load_preset(preset.string()), Error);
  SweepSpec again = sweep_spec_from_run(store.get_run(first));
  const std::int64_t third = run_sweep(store, again, opts, SweepSink{}).run_id;
  auto pts3 = store.points(third);
  ASSERT_EQ(pts3.size(), pts1.size());
  for (std::size_t i = 0; i < pts1.size(); ++i) {
    EXPECT_EQ(pts3[i].axes, pts1[i].axes);
    EXPECT_EQ(pts3[i].time_us, pts1[i].time_us) << i;
    EXPECT_EQ(pts3[i].busbw_GBps, pts1[i].busbw_GBps) << i;
  }
  EXPECT_TRUE(config_diff(store.get_run(third).config, r1.config).empty());
}

TEST(RecordedRuns, ChangedParamsAreWhatTheSetChangesNotEverySetEntry) {
  // The app records every parameter of its Fabric dock in base.set: entries at
  // the preset's own values change nothing and are not counted.
  TempDir dir;
  Store store = Store::open(dir / "c.scindb", Access::Create);
  const Config h200 = load_preset("hgx-h200-8");
  auto run_with = [&](const json& set) {
    const SweepSpec spec = sweep_spec_from_json(json{
        {"name", "changed"},
        {"base", {{"preset", "hgx-h200-8"}, {"set", set}, {"collective", {{"dtype", "bf16"}, {"algorithm", "ring"}}}}},
        {"axes", json::array({json{{"path", "collective.bytes"}, {"values", {"1M"}}}})}});
    SweepOptions opts;
    opts.threads = 1;
    return store.get_run(run_sweep(store, spec, opts, SweepSink{}).run_id);
  };
  const json same{{"links.latency_ns", h200.links.latency_ns},
                  {"switch.latency_ns", h200.sw.latency_ns},
                  {"fabric.gpus", h200.fabric.gpus}};
  std::vector<std::string> changed{"stale"};
  run_base_config(run_with(same), &changed);
  EXPECT_TRUE(changed.empty());
  json one = same;
  one["links.bandwidth_GBps"] = h200.links.bandwidth_GBps / 2;
  const RunInfo r = run_with(one);
  EXPECT_EQ(run_base_config(r, &changed).links.bandwidth_GBps, h200.links.bandwidth_GBps / 2);
  EXPECT_EQ(changed, std::vector<std::string>{"links.bandwidth_GBps"});
}

TEST(RecordedRuns, RunsWithoutAConfigCannotBeRerun) {
  RunInfo old;
  old.id = 4;
  old.tool_version = "0.0.9";
  old.spec = json{{"name", "x"}};
  try {
    sweep_spec_from_run(old);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("configuration not recorded"), std::string::npos) << e.what();
  }
}

// The column table and the tables in a fresh (migrated) file agree column by column.
TEST(ColumnTable, MatchesEveryPointTable) {
  TempDir dir;
  Store s = Store::open(dir / "c.scindb", Access::Create);
  for (const auto& k : point_kinds()) {
    sqlite3_stmt* st = nullptr;
    ASSERT_EQ(sqlite3_prepare_v2(s.raw(), ("PRAGMA table_info(" + k.table + ")").c_str(), -1, &st, nullptr),
              SQLITE_OK);
    std::vector<std::string> names;
    while (sqlite3_step(st) == SQLITE_ROW) names.emplace_back(reinterpret_cast<const char*>(sqlite3_column_text(st, 1)));
    sqlite3_finalize(st);
    ASSERT_EQ(names.size(), k.columns.size() + 1) << k.table;
    EXPECT_EQ(names[0], "run_id");
    for (std::size_t i = 0; i < k.columns.size(); ++i) EXPECT_EQ(names[i + 1], k.columns[i].name) << k.table;
  }
}

TEST(ColumnTable, MeasuredPointsRoundTripAndExport) {
  TempDir dir;
  Store s = Store::open(dir / "m.scindb", Access::Create);
  RunStart rs;
  rs.kind = PointKind::Measured;
  rs.name = "nccl-tests h200";
  std::int64_t id = s.begin_run(rs);
  PointRecord p;
  p.kind = PointKind::Measured;
  p.index = 0;
  p.system = "dgx-h200-a";
  p.gpus = 8;
  p.algorithm = "ring";
  p.bytes = 1 << 20;
  p.measured_us = 27.41;
  p.busbw_GBps = 66.97;
  p.source = "nccl-tests all_reduce_perf, 2026-11-02";
  p.axes = json{{"collective.bytes", 1 << 20}};
  p.extra = json{{"in_place_us", 27.05}, {"gpus_per_process", 1}, {"notes", "redop sum"}};  // (no regime)
  s.append_points(id, {p});
  s.finish_run(id, RunStatus::Done);
  auto back = s.points(id);
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0].system, p.system);
  EXPECT_EQ(back[0].measured_us, p.measured_us);
  EXPECT_EQ(back[0].busbw_GBps, p.busbw_GBps);
  EXPECT_EQ(back[0].source, p.source);
  EXPECT_EQ(back[0].bytes, p.bytes);
  EXPECT_EQ(back[0].axes, p.axes);
  RunInfo r = s.get_run(id);
  EXPECT_EQ(r.kind, PointKind::Measured);
  EXPECT_EQ(export_columns(r, back),
            (std::vector<std::string>{"index", "collective.bytes", "status", "message", "algorithm", "variant",
                                      "dtype", "bytes", "gpus", "system", "measured_us", "busbw_GBps", "source",
                                      "in_place_us", "gpus_per_process", "regime", "notes"}));
  std::ostringstream csv;
  export_csv(r, back, csv);
  EXPECT_NE(csv.str().find("\n0,1048576,ok,,ring,,,1048576,8,dgx-h200-a,27.41,66.97,"
                           "\"nccl-tests all_reduce_perf, 2026-11-02\",27.05,1,,redop sum\n"),
            std::string::npos)
      << csv.str();
  EXPECT_THROW(run_sweep(sweep_spec_from_json(json{{"kind", "measured"}}), SweepOptions{}, SweepSink{}), Error);
}

TEST(StoredPoints, PacketPointEqualsADirectSimulateCall) {
  TempDir dir;
  SweepSpec spec = sweep_spec_from_json(json::parse(R"({
    "name": "packet", "base": {"preset": "hgx-h200-8", "engine": "packet", "collective": {"dtype": "bf16"}},
    "axes": [{"path": "collective.algorithm", "values": ["ring", "scin"]},
             {"path": "collective.bytes", "values": ["64K"]}]})"));
  Store s = Store::open(dir / "p.scindb", Access::Create);
  std::int64_t id = run_sweep(s, spec, SweepOptions{}, SweepSink{}).run_id;
  auto pts = s.points(id);
  ASSERT_EQ(pts.size(), 2u);
  Config cfg = load_preset("hgx-h200-8");
  for (const auto& p : pts) {
    SimResult direct = simulate(cfg, p.algorithm, Collective{65536, DType::Bf16}, "packet");
    EXPECT_EQ(p.time_us, direct.time_us()) << p.algorithm;
    EXPECT_EQ(p.busbw_GBps, direct.busbw_GBps) << p.algorithm;
    EXPECT_EQ(p.max_link_bytes, direct.max_link_bytes) << p.algorithm;
    for (int t = 0; t < static_cast<int>(Term::Count); ++t) EXPECT_EQ(p.breakdown.ns[t], direct.breakdown.ns[t]);
    EXPECT_EQ(p.engine, "packet");
  }
}

TEST(ShippedSweeps, EverySpecParsesAndExpands) {
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator(resource_dir() / "sweeps")) {
    if (e.path().extension() != ".json") continue;
    SCOPED_TRACE(e.path().string());
    SweepSpec s = load_sweep_spec(e.path());
    EXPECT_GT(point_count(s), 0u);
    EXPECT_EQ(to_json(sweep_spec_from_json(to_json(s))), to_json(s));
    ResolvedPoint r = resolve_point(s, point_count(s) - 1);
    EXPECT_GT(r.config.fabric.gpus, 0);
    ++n;
  }
  EXPECT_GE(n, 7);
}

}  // namespace
}  // namespace scin
