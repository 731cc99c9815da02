// `scin run --format json` equals the stored golden files (tests/golden/*.json):
// the guard that a restructuring or an optimisation changes no result.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "cli_util.h"

namespace {

using nlohmann::json;

// The same arguments scripts/golden.sh used to write the files.
std::string golden_args(const std::string& engine, const std::string& preset) {
  std::string a = "run --preset " + preset + " --format json";
  if (engine == "packet") a += " --engine packet -b 8 -e 4M -f 8";
  return a;
}

// Compares every number in `got` with `want`: equal within `rel` relative
// (0: bit-identical); strings and keys must match exactly. Returns the first
// difference as "path: got X, want Y", or "" when they agree.
std::string diff(const json& got, const json& want, double rel, const std::string& path) {
  if (want.is_number() && got.is_number()) {
    const double g = got.get<double>(), w = want.get<double>();
    const double tol = rel * std::max(std::abs(g), std::abs(w));
    if (rel == 0 ? g != w : std::abs(g - w) > tol)
      return path + ": got " + got.dump() + ", want " + want.dump();
    return "";
  }
  if (got.type() != want.type()) return path + ": type differs (" + got.dump() + " vs " + want.dump() + ")";
  if (want.is_object()) {
    for (auto it = want.begin(); it != want.end(); ++it) {
      if (!got.contains(it.key())) return path + "." + it.key() + ": missing";
      if (auto d = diff(got[it.key()], it.value(), rel, path + "." + it.key()); !d.empty()) return d;
    }
    return "";
  }
  if (want.is_array()) {
    if (got.size() != want.size())
      return path + ": " + std::to_string(got.size()) + " entries, want " + std::to_string(want.size());
    for (std::size_t i = 0; i < want.size(); ++i)
      if (auto d = diff(got[i], want[i], rel, path + "[" + std::to_string(i) + "]"); !d.empty()) return d;
    return "";
  }
  return got == want ? "" : path + ": got " + got.dump() + ", want " + want.dump();
}

class Golden : public ::testing::TestWithParam<std::tuple<std::string, std::string>> {};

TEST_P(Golden, RunJsonUnchanged) {
  const auto& [engine, preset] = GetParam();
  std::ifstream in(std::string(SCIN_GOLDEN_DIR) + "/" + engine + "-" + preset + ".json");
  ASSERT_TRUE(in) << "golden file missing";
  const json want = json::parse(in);
  CliResult r = run_cli(golden_args(engine, preset));
  ASSERT_EQ(r.status, 0) << r.output.substr(0, 2000);
  json got = json::parse(r.output);
  for (auto& row : got["results"]) row.erase("extra");  // engine statistics: not part of the contract
  ASSERT_EQ(got["results"].size(), want["results"].size());
  const double rel = engine == "analytic" ? 1e-9 : 0.0;
  EXPECT_EQ(diff(got, want, rel, "$"), "");
}

auto golden_name = [](const auto& info) {
      std::string n = std::get<0>(info.param) + "_" + std::get<1>(info.param);
      for (char& c : n)
        if (c == '-') c = '_';
      return n;
};
INSTANTIATE_TEST_SUITE_P(
    AllPresets, Golden,
    ::testing::Combine(::testing::Values("analytic", "packet"),
                       ::testing::Values("hgx-a100-8", "hgx-b200-8", "hgx-h100-8", "hgx-h200-8", "mesh-8",
                                         "scin-fpga-4")),
    golden_name);
// 72 GPUs: the analytic engine only (scripts/golden.sh writes the same set).
INSTANTIATE_TEST_SUITE_P(RackScale, Golden,
                         ::testing::Combine(::testing::Values("analytic"), ::testing::Values("gb200-nvl72")),
                         golden_name);

}  // namespace
