// Sweep specs: parsing, validation messages, expansion, listing and resolution.
#include <gtest/gtest.h>

#include "base/error.h"
#include "fabric/preset.h"
#include "sweep/sweep.h"

namespace scin {
namespace {

using nlohmann::json;

std::string error_of(const json& j) {
  try {
    sweep_spec_from_json(j);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

json small_spec() {
  return json::parse(R"({
    "name": "t", "base": {"preset": "hgx-h200-8", "collective": {"dtype": "bf16"}},
    "axes": [
      {"path": "collective.algorithm", "values": ["ring", "nvls"]},
      {"path": "collective.bytes", "range": {"min": "1K", "max": "1M", "factor": 4}}
    ]})");
}

TEST(SweepSpec, SeedComparisonExpandsTo112Points) {
  SweepSpec s = load_sweep_spec(resource_dir() / "sweeps" / "seed-comparison.json");
  EXPECT_EQ(s.kind, PointKind::Collective);
  EXPECT_EQ(s.base.preset, "hgx-h200-8");
  ASSERT_EQ(s.axes.size(), 2u);
  // 4 algorithms x 28 sizes (8 B .. 1 GiB, x2).
  EXPECT_EQ(point_count(s), 112u);
  EXPECT_EQ(point_axes(s, 0), json({{"collective.algorithm", "ring"}, {"collective.bytes", 8}}));
  EXPECT_EQ(point_axes(s, 27), json({{"collective.algorithm", "ring"}, {"collective.bytes", 1ull << 30}}));
  EXPECT_EQ(point_axes(s, 28), json({{"collective.algorithm", "nvls"}, {"collective.bytes", 8}}));
  EXPECT_EQ(point_axes(s, 111), json({{"collective.algorithm", "scin-inq"}, {"collective.bytes", 1ull << 30}}));
  EXPECT_THROW(point_axes(s, 112), Error);
}

TEST(SweepSpec, EveryShippedSpecParses) {
  for (const char* name : {"seed-comparison", "switch-latency", "isa-waves", "fabrics", "link-scaling"}) {
    SCOPED_TRACE(name);
    SweepSpec s = load_sweep_spec(resource_dir() / "sweeps" / (std::string(name) + ".json"));
    EXPECT_GT(point_count(s), 1u);
  }
}

TEST(SweepSpec, JsonRoundTrip) {
  json j = small_spec();
  j["base"]["set"] = {{"switch.latency_ns", 150}, {"links.latency_ns", "120"}};
  j["axes"].push_back({{"zip", {{{"path", "links.bandwidth_GBps"}, {"values", {300, 450}}},
                                {{"path", "accelerator.launch_overhead_ns"},
                                 {"range", {{"min", 1000}, {"max", 2000}, {"count", 2}}}}}}});
  SweepSpec a = sweep_spec_from_json(j);
  json ja = to_json(a);
  SweepSpec b = sweep_spec_from_json(ja);
  EXPECT_EQ(to_json(b), ja);
  EXPECT_EQ(point_count(a), 2u * 6u * 2u);
  ASSERT_EQ(b.axes.size(), 3u);
  EXPECT_EQ(b.axes[2].axes.size(), 2u);
  ASSERT_TRUE(b.axes[1].axes[0].range.has_value());
  EXPECT_EQ(b.axes[1].axes[0].range->factor, 4);
}

TEST(SweepSpec, RangesExpand) {
  Axis lin{"switch.latency_ns", {}, AxisRange{100, 300, 0, 50, 0}};
  EXPECT_EQ(axis_values(lin), (std::vector<json>{100.0, 150.0, 200.0, 250.0, 300.0}));
  Axis cnt{"links.efficiency", {}, AxisRange{0.5, 1.0, 0, 0, 3}};
  EXPECT_EQ(axis_values(cnt), (std::vector<json>{0.5, 0.75, 1.0}));
  Axis geo{"collective.bytes", {}, AxisRange{"1K", "1M", 4, 0, 0}};
  EXPECT_EQ(axis_values(geo), (std::vector<json>{1024, 4096, 16384, 65536, 262144, 1048576}));
  Axis ints{"switch.isa.waves", {}, AxisRange{1, 16, 2, 0, 0}};
  EXPECT_EQ(axis_values(ints), (std::vector<json>{1, 2, 4, 8, 16}));
}

TEST(SweepSpec, ZippedAxesMoveTogether) {
  json j = small_spec();
  j["axes"] = json::array({
      {{"zip", {{{"path", "links.bandwidth_GBps"}, {"values", {225, 450, 900}}},
                {{"path", "links.latency_ns"}, {"values", {150, 125, 100}}}}}},
      {{"path", "fabric.gpus"}, {"values", {4, 8}}},
  });
  j["base"]["collective"]["algorithm"] = "ring";
  j["base"]["collective"]["bytes"] = "1M";
  SweepSpec s = sweep_spec_from_json(j);
  ASSERT_EQ(point_count(s), 6u);   // 3 zipped x 2, not 3 x 3 x 2
  EXPECT_EQ(point_axes(s, 0), json({{"links.bandwidth_GBps", 225}, {"links.latency_ns", 150}, {"fabric.gpus", 4}}));
  EXPECT_EQ(point_axes(s, 3), json({{"links.bandwidth_GBps", 450}, {"links.latency_ns", 125}, {"fabric.gpus", 8}}));
  EXPECT_EQ(point_axes(s, 5), json({{"links.bandwidth_GBps", 900}, {"links.latency_ns", 100}, {"fabric.gpus", 8}}));
}

TEST(SweepSpec, ResolveAppliesPresetSetAndAxes) {
  json j = small_spec();
  j["base"]["set"] = json::array({"switch.latency_ns=150"});
  j["axes"].push_back({{"path", "links.latency_ns"}, {"values", {90, 110}}});
  SweepSpec s = sweep_spec_from_json(j);
  ResolvedPoint r = resolve_point(s, point_count(s) - 1);
  EXPECT_EQ(r.algorithm, "nvls");
  EXPECT_EQ(r.collective.bytes, 1u << 20);
  EXPECT_EQ(r.collective.dtype, DType::Bf16);
  EXPECT_DOUBLE_EQ(r.config.sw.latency_ns, 150);
  EXPECT_DOUBLE_EQ(r.config.links.latency_ns, 110);
  EXPECT_EQ(r.config.fabric.gpus, 8);
  EXPECT_DOUBLE_EQ(r.config.accelerator.hbm_bandwidth_GBps, load_preset("hgx-h200-8").accelerator.hbm_bandwidth_GBps);
}

TEST(SweepSpec, PointResolverEqualsResolvePointAtEveryIndex) {
  json j = small_spec();
  j["base"]["set"] = json::array({"switch.latency_ns=150"});
  j["axes"].push_back({{"path", "preset"}, {"values", {"hgx-h200-8", "hgx-b200-8"}}});
  j["axes"].push_back({{"path", "links.latency_ns"}, {"values", {90, 110}}});
  SweepSpec s = sweep_spec_from_json(j);
  const PointResolver resolve(s);
  ASSERT_EQ(resolve.size(), point_count(s));
  ASSERT_GE(resolve.size(), 8u);
  for (std::uint64_t i = 0; i < resolve.size(); ++i) {
    const ResolvedPoint a = resolve(i), b = resolve_point(s, i);
    EXPECT_EQ(a.axes, b.axes) << i;
    EXPECT_EQ(config_to_json(a.config), config_to_json(b.config)) << i;
    EXPECT_EQ(a.algorithm, b.algorithm) << i;
    EXPECT_EQ(a.collective.bytes, b.collective.bytes) << i;
  }
  // The two presets really differ, so the loop compared different configurations.
  EXPECT_NE(config_to_json(resolve(0).config), config_to_json(resolve(resolve.size() - 1).config));
  EXPECT_THROW(resolve(resolve.size()), Error);
}

TEST(SweepSpec, ErrorsNameTheField) {
  json j = small_spec();
  j["axes"][0]["path"] = "links.bandwith_GBps";
  std::string e = error_of(j);
  EXPECT_NE(e.find("axes[0]"), std::string::npos) << e;
  EXPECT_NE(e.find("links.bandwith_GBps"), std::string::npos) << e;
  EXPECT_NE(e.find("scin params"), std::string::npos) << e;

  j = small_spec();
  j["axes"].push_back({{"path", "links.bandwidth_GBps"}, {"values", {450, -1}}});
  e = error_of(j);
  EXPECT_NE(e.find("axes[2]"), std::string::npos) << e;
  EXPECT_NE(e.find("links.bandwidth_GBps"), std::string::npos) << e;

  j = small_spec();
  j["axes"][0]["values"] = {"ring", "warp-drive"};
  e = error_of(j);
  EXPECT_NE(e.find("warp-drive"), std::string::npos) << e;
  EXPECT_NE(e.find("allowed"), std::string::npos) << e;

  j = small_spec();
  j["axes"][1]["range"]["factor"] = 1;
  e = error_of(j);
  EXPECT_NE(e.find("factor"), std::string::npos) << e;

  j = small_spec();
  j["axes"][1]["range"]["step"] = 10;
  e = error_of(j);
  EXPECT_NE(e.find("exactly one of"), std::string::npos) << e;

  // A zero step or factor names the key the user wrote (it read as "no step"
  // and the error spoke of range.count, which the spec did not have).
  for (const char* key : {"step", "factor"}) {
    j = small_spec();
    j["axes"][1]["range"].erase("factor");
    j["axes"][1]["range"][key] = 0;
    e = error_of(j);
    EXPECT_NE(e.find(std::string("axes[1].range.") + key + ": must be greater than"), std::string::npos) << e;
    EXPECT_EQ(e.find("count"), std::string::npos) << e;
  }

  j = small_spec();
  j["axes"].push_back({{"zip", {{{"path", "links.bandwidth_GBps"}, {"values", {300, 450}}},
                                {{"path", "links.latency_ns"}, {"values", {100}}}}}});
  e = error_of(j);
  EXPECT_NE(e.find("same length"), std::string::npos) << e;

  j = small_spec();
  j["axes"].erase(0);
  e = error_of(j);
  EXPECT_NE(e.find("no algorithm"), std::string::npos) << e;

  j = small_spec();
  j["bsae"] = json::object();
  e = error_of(j);
  EXPECT_NE(e.find("unknown key 'bsae'"), std::string::npos) << e;

  j = small_spec();
  j["axes"].push_back({{"path", "collective.algorithm"}, {"values", {"ring"}}});
  e = error_of(j);
  EXPECT_NE(e.find("more than one axis"), std::string::npos) << e;

  j = small_spec();
  j["base"]["preset"] = "hgx-h900-8";
  e = error_of(j);
  EXPECT_NE(e.find("base.preset"), std::string::npos) << e;
  EXPECT_NE(e.find("hgx-h900-8"), std::string::npos) << e;

  j = small_spec();
  j["axes"][1]["range"]["max"] = "1Q";
  e = error_of(j);
  EXPECT_NE(e.find("1Q"), std::string::npos) << e;
}

}  // namespace
}  // namespace scin
