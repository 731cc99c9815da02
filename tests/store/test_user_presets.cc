// User presets: a Config saved by name under $XDG_CONFIG_HOME/scin-explorer/presets
// is listed by `scin presets` and loads by name, with the saved values.
#include <cstdlib>

#include <gtest/gtest.h>

#include "base/error.h"
#include "cli_util.h"
#include "fabric/params.h"
#include "fabric/preset.h"
#include "store_test_util.h"

namespace scin {
namespace {

using test::TempDir;

struct XdgHome {
  explicit XdgHome(const std::filesystem::path& p) { setenv("XDG_CONFIG_HOME", p.c_str(), 1); }
  ~XdgHome() { unsetenv("XDG_CONFIG_HOME"); }
};

TEST(UserPresets, SaveListLoad) {
  TempDir dir;
  XdgHome home(dir.path());
  EXPECT_EQ(user_preset_dir(), dir.path() / "scin-explorer" / "presets");
  Config cfg = load_preset("hgx-h200-8");
  set_param(cfg, "switch.latency_ns", 333.0);
  auto file = save_user_preset(cfg, "my-fabric");
  EXPECT_EQ(file, user_preset_dir() / "my-fabric.json");
  bool listed = false;
  for (const auto& p : list_presets())
    if (p.name == "my-fabric") listed = p.user;
  EXPECT_TRUE(listed);
  Config back = load_preset("my-fabric");
  EXPECT_EQ(back.sw.latency_ns, 333.0);
  EXPECT_EQ(back.name, "my-fabric");
  for (const auto& p : params()) EXPECT_EQ(get_param_text(back, p.path), get_param_text(cfg, p.path)) << p.path;
  // Errors: existing name, a shipped name, a bad name.
  EXPECT_THROW(save_user_preset(cfg, "my-fabric"), Error);
  EXPECT_NO_THROW(save_user_preset(cfg, "my-fabric", /*overwrite=*/true));
  EXPECT_THROW(save_user_preset(cfg, "hgx-h200-8"), Error);
  EXPECT_THROW(save_user_preset(cfg, "../escape"), Error);
  EXPECT_THROW(save_user_preset(cfg, ""), Error);
}

TEST(UserPresets, Cli) {
  if (cli_path().empty()) GTEST_SKIP() << "SCIN_CLI not set";
  TempDir dir;
  XdgHome home(dir.path());
  CliResult r = run_cli("presets --save lab-8 --preset hgx-h200-8 --set links.latency_ns=150");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("saved user preset 'lab-8'"), std::string::npos) << r.output;
  r = run_cli("presets");
  EXPECT_NE(r.output.find("lab-8"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("(user)"), std::string::npos) << r.output;
  r = run_cli("run --preset lab-8 --bytes 1M --algo ring --format json");
  ASSERT_EQ(r.status, 0) << r.output;
  CliResult ref = run_cli("run --preset hgx-h200-8 --set links.latency_ns=150 --bytes 1M --algo ring --format json");
  auto a = nlohmann::json::parse(r.output), b = nlohmann::json::parse(ref.output);
  ASSERT_TRUE(a.at("results").at(0).at("time_us").is_number());
  EXPECT_EQ(a.at("results").at(0).at("time_us"), b.at("results").at(0).at("time_us"));
  CliResult plain = run_cli("run --preset hgx-h200-8 --bytes 1M --algo ring --format json");
  EXPECT_NE(a.at("results").at(0).at("time_us"), nlohmann::json::parse(plain.output).at("results").at(0).at("time_us"));
}

}  // namespace
}  // namespace scin
