// The `scin` command line: outputs, and one-line errors naming the bad field.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include <fmt/format.h>
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

// ---- a CLI that fits a terminal (issue 12)

namespace {
std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start < text.size()) {
    auto nl = text.find('\n', start);
    out.push_back(text.substr(start, nl == std::string::npos ? std::string::npos : nl - start));
    if (nl == std::string::npos) break;
    start = nl + 1;
  }
  return out;
}
}  // namespace

TEST(Cli, DefaultRunFitsIn120ColumnsForEveryPreset) {
  auto presets = run_cli("presets");
  ASSERT_EQ(presets.status, 0);
  int checked = 0;
  for (const auto& line : lines_of(presets.output)) {
    const std::string name = line.substr(0, line.find(' '));
    if (name.empty()) continue;
    // The 576-GPU two-tier preset (issue 16): a 1 MiB point; its full default sweep is a benchmark.
    auto r = run_cli("run --preset " + name + (name == "nvl576-style" ? " -b 1M -e 2M" : ""));
    ASSERT_EQ(r.status, 0) << name << ": " << r.output;
    std::size_t widest = 0, avg_lines = 0;
    for (const auto& l : lines_of(r.output)) {
      widest = std::max(widest, l.size());
      EXPECT_TRUE(l.empty() || (l.back() != ' ' && l.back() != '\t')) << name << ": trailing whitespace in '" << l << "'";
      if (l.rfind("# Avg bus bandwidth    : ", 0) == 0) ++avg_lines;
    }
    EXPECT_LE(widest, 120u) << name;
    EXPECT_GE(avg_lines, 2u) << name << ": one Avg bus bandwidth line per algorithm";
    ++checked;
  }
  EXPECT_EQ(checked, 9);  // + hgx-a100-8 and gb200-nvl72 (issue 15), nvl36x2 and nvl576-style (issue 16)
}

// The table ends with what NCCL itself would run at the run's sizes (calib/nccl_tuning.h): on
// 8 H200 ring LL up to 1.06 MB, NVLS above; on 8 A100 (no NVLS) ring LL, LL128, Simple.
TEST(Cli, RunSaysWhatNcclItselfWouldRun) {
  auto h200 = run_cli("run --preset hgx-h200-8 --algo ring,nvls -b 8 -e 4M -f 4");
  ASSERT_EQ(h200.status, 0) << h200.output;
  EXPECT_NE(h200.output.find("# NCCL's own choice without NCCL_ALGO"), std::string::npos) << h200.output;
  EXPECT_NE(h200.output.find("\n#   Ring/LL 8 B - 512 KiB\n#   NVLS/Simple 2 MiB\n"), std::string::npos) << h200.output;
  auto a100 = run_cli("run --preset hgx-a100-8 --algo ring -b 1M -e 64M -f 4");
  ASSERT_EQ(a100.status, 0) << a100.output;
  EXPECT_NE(a100.output.find("#   Ring/LL 1 MiB\n#   Ring/LL128 4 MiB - 16 MiB\n#   Ring/Simple 64 MiB\n"), std::string::npos)
      << a100.output;
  auto scin = run_cli("run --preset hgx-h200-8 --algo scin -b 1M -e 4M");  // no NCCL algorithm: nothing to say
  ASSERT_EQ(scin.status, 0) << scin.output;
  EXPECT_EQ(scin.output.find("NCCL's own choice"), std::string::npos);
}

TEST(Cli, WideRunIsTheSideBySideTableAndAvgBusbwIsTheMean) {
  auto r = run_cli("run --algo ring,scin -b 1M -e 4M --wide");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("# Avg bus bandwidth    : "), std::string::npos);
  auto j = nlohmann::json::parse(run_cli("run --algo scin -b 1M -e 4M --format json").output);
  double sum = 0;
  for (const auto& res : j["results"]) sum += res["busbw_GBps"].get<double>();
  auto blocks = run_cli("run --algo scin -b 1M -e 4M");
  EXPECT_NE(blocks.output.find(fmt::format("# Avg bus bandwidth    : {:.4f}", sum / 3)), std::string::npos)
      << blocks.output;
}

TEST(Cli, InputIsValidatedBeforeAnyOutput) {
  for (const char* args : {"run --gpus 1", "run --gpus 0", "run --algo ,", "run -f -2", "run --algo ring,", "run -f 1"}) {
    auto r = run_cli(args);
    EXPECT_NE(r.status, 0) << args;
    EXPECT_EQ(r.output.rfind("scin: error: ", 0), 0u) << args << " -> " << r.output;
    EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << args << " -> " << r.output;
  }
  EXPECT_NE(run_cli("run --gpus 0").output.find("--gpus (fabric.gpus): 0 is out of range 2..1024"), std::string::npos);
  EXPECT_NE(run_cli("run -f -2").output.find("-f/--stepfactor: -2 is out of range 2..1024"), std::string::npos);
  EXPECT_NE(run_cli("run -f 18446744073709551614").output.find("out of range"), std::string::npos);
}

TEST(Cli, UnknownCommandNamesItselfAndListsTheValidOnes) {
  auto r = run_cli("frobnicate --x");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.output.find("unknown command 'frobnicate'"), std::string::npos) << r.output;
  for (const char* c : {"run", "presets", "params", "sweep", "infer"}) EXPECT_NE(r.output.find(c), std::string::npos) << c;
}

TEST(Cli, PresetsFormatJsonAndTheDeprecatedJsonFlagAgree) {
  auto a = run_cli("presets --format json");
  auto b = run_cli("presets --json");   // stderr is captured too: the deprecation warning, then the same JSON
  ASSERT_EQ(a.status, 0);
  ASSERT_EQ(b.status, 0);
  const std::string warning = "scin: warning: `presets --json` is deprecated; use `--format json`\n";
  EXPECT_EQ(b.output, warning + a.output);
  EXPECT_EQ(nlohmann::json::parse(a.output).size(), 9u);  // + hgx-a100-8, gb200-nvl72 (issue 15), nvl36x2, nvl576-style (issue 16)
}

TEST(Cli, SizesTakeTheSameFormsOnFlagsAndSet) {
  auto a = run_cli("run --algo scin --bytes 1.5M --set switch.isa.buffer_bytes=8MiB --format json");
  auto b = run_cli("run --algo scin --bytes 1572864 --set switch.isa.buffer_bytes=8388608 --format json");
  ASSERT_EQ(a.status, 0) << a.output;
  EXPECT_EQ(a.output, b.output);
  auto help = run_cli("run --help");
  EXPECT_NE(help.output.find("1.5M"), std::string::npos) << help.output;
}
