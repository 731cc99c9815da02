// The `scin` command line: outputs, and one-line errors naming the bad field.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli_util.h"
#include "fabric/params.h"

TEST(Cli, PresetsListsEveryPreset) {
  auto r = run_cli("presets");
  ASSERT_EQ(r.status, 0) << r.output;
  for (const char* n : {"hgx-h100-8", "hgx-h200-8", "hgx-b200-8", "scin-fpga-4", "mesh-8"})
    EXPECT_NE(r.output.find(n), std::string::npos) << n;
}

TEST(Cli, ParamsListsEveryRegistryPath) {
  auto r = run_cli("params --format csv");
  ASSERT_EQ(r.status, 0) << r.output;
  for (const auto& p : scin::params()) EXPECT_NE(r.output.find(p.path + ","), std::string::npos) << p.path;
}

TEST(Cli, RunJsonHasTheDocumentedFields) {
  auto r = run_cli("run --preset hgx-h200-8 --algo ring,scin --bytes 1M --format json");
  ASSERT_EQ(r.status, 0) << r.output;
  auto j = nlohmann::json::parse(r.output);
  EXPECT_EQ(j["preset"], "hgx-h200-8");
  EXPECT_EQ(j["gpus"], 8);
  EXPECT_EQ(j["engine"], "analytic");
  ASSERT_EQ(j["results"].size(), 2u);
  for (const auto& res : j["results"]) {
    EXPECT_EQ(res["bytes"], 1048576);
    for (const char* k : {"algorithm", "time_us", "algbw_GBps", "busbw_GBps", "max_link_bytes", "breakdown"})
      EXPECT_TRUE(res.contains(k)) << k;
    EXPECT_NEAR(res["algbw_GBps"].get<double>(), 1048576.0 / (res["time_us"].get<double>() * 1e3), 1e-6);
  }
  EXPECT_EQ(j["results"][1]["max_link_bytes"], 1048576);  // SCIN moves S per link
}

TEST(Cli, DefaultRunCoversTheSeedComparison) {
  auto r = run_cli("run");
  ASSERT_EQ(r.status, 0) << r.output;
  for (const char* s : {"hgx-h200-8", "ring", "nvls", "scin", "scin-inq", "1073741824", "busbw", "link(B)"})
    EXPECT_NE(r.output.find(s), std::string::npos) << s;
}

TEST(Cli, ExplainPrintsTheBreakdown) {
  auto r = run_cli("run --algo scin --bytes 8 --explain");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("link_latency"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("memory_latency"), std::string::npos) << r.output;
}

TEST(Cli, BadInputIsAOneLineErrorNamingTheField) {
  struct Case { const char* args; const char* expect; };
  const Case cases[] = {
      {"run --preset nosuch", "unknown preset 'nosuch'"},
      {"run --algo nosuch", "unknown algorithm 'nosuch'"},
      {"run --preset mesh-8 --algo nvls", "nvls needs a switch"},
      {"run --bytes 0", "bytes"},
      {"run --bytes -8", "bytes"},
      {"run --gpus 1", "fabric.gpus"},
      {"run --gpus 10000000", "fabric.gpus"},
      {"run --set links.bandwidth_GBps=0", "links.bandwidth_GBps"},
      {"run --set links.bandwidth_GBps=-3", "links.bandwidth_GBps"},
      {"run --set no.such=1", "unknown parameter 'no.such'"},
      {"run --format xml", "format"},
      {"run --dtype int3", "dtype"},
      {"run -b 1M -e 1K", "maxbytes"},
  };
  for (const auto& c : cases) {
    auto r = run_cli(c.args);
    EXPECT_NE(r.status, 0) << c.args;
    EXPECT_NE(r.output.find(c.expect), std::string::npos) << c.args << " -> " << r.output;
    EXPECT_LE(std::count(r.output.begin(), r.output.end(), '\n'), 2) << c.args << " -> " << r.output;
  }
}
