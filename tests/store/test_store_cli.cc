// The `scin sweep/runs/show/export/delete` commands, and crash safety: a sweep
// killed with SIGKILL leaves a healthy database, keeps every committed point,
// and its run is marked interrupted on the next open.
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>

#include "cli_util.h"

#include "store/sqlite_db.h"
#include "store/store.h"
#include "store_test_util.h"

namespace scin {
namespace {

using test::TempDir;

void write_file(const std::filesystem::path& p, const std::string& text) { std::ofstream(p) << text; }

TEST(StoreCli, SweepRunsShowExportDelete) {
  if (cli_path().empty()) GTEST_SKIP() << "SCIN_CLI not set";
  TempDir dir;
  write_file(dir / "spec.json", R"({
    "name": "cli-small", "base": {"preset": "hgx-h200-8", "collective": {"dtype": "bf16"}},
    "axes": [{"path": "collective.algorithm", "values": ["ring", "nvls", "scin"]},
             {"path": "collective.bytes", "values": ["1K", "64K", "1M", "16M"]}]})");
  const std::string db = (dir / "exp").string();   // ".scindb" is added
  CliResult r = run_cli("sweep " + (dir / "spec.json").string() + " --db " + db +
                        " --threads 2 --name mine --tag x --notes hello");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("run 1 'mine' done: 12 of 12 points (0 skipped)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("progress: 12/12 points"), std::string::npos) << r.output;   // not a TTY: plain lines
  ASSERT_TRUE(std::filesystem::exists(db + ".scindb"));

  r = run_cli("runs --db " + db + ".scindb");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("mine"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("done"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("12/12"), std::string::npos) << r.output;

  r = run_cli("show --db " + db + " --run 1");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("\"cli-small\""), std::string::npos) << r.output;   // the spec
  EXPECT_NE(r.output.find("notes        hello"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("summary"), std::string::npos) << r.output;

  const auto csv = dir / "out.csv";
  r = run_cli("export --db " + db + " --run 1 --format csv --out " + csv.string());
  ASSERT_EQ(r.status, 0) << r.output;
  std::ifstream in(csv);
  std::string header, line;
  std::getline(in, header);
  EXPECT_EQ(header.rfind("index,collective.algorithm,collective.bytes,status", 0), 0u) << header;
  int rows = 0;
  while (std::getline(in, line)) ++rows;
  EXPECT_EQ(rows, 12);

  r = run_cli("export --db " + db + " --run 1 --format json");
  ASSERT_EQ(r.status, 0) << r.output;
  auto j = nlohmann::json::parse(r.output);
  EXPECT_EQ(j["points"].size(), 12u);
  EXPECT_EQ(j["run"]["tags"], nlohmann::json::array({"x"}));

  r = run_cli("export --db " + db + " --run 7 --format csv");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.output.find("no run 7"), std::string::npos) << r.output;

  r = run_cli("annotate --db " + db + " --run 1 --name renamed --notes 'second look' --tag y --untag x");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("run 1 'renamed': tags [y], notes 'second look'"), std::string::npos) << r.output;
  r = run_cli("annotate --db " + db + " --run 1 --name mine");
  ASSERT_EQ(r.status, 0) << r.output;

  r = run_cli("delete --db " + db + " --run 1");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("deleted run 1 'mine' (12 points)"), std::string::npos) << r.output;
  r = run_cli("runs --db " + db);
  EXPECT_NE(r.output.find("no runs"), std::string::npos) << r.output;
}

TEST(StoreCli, BadInputsGiveOneLineErrors) {
  if (cli_path().empty()) GTEST_SKIP() << "SCIN_CLI not set";
  TempDir dir;
  write_file(dir / "notes.scindb", "just some text\n");
  CliResult r = run_cli("runs --db " + (dir / "notes.scindb").string());
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.output.find("not a SCIN experiment database"), std::string::npos) << r.output;

  write_file(dir / "bad.json", R"({"name": "b", "base": {"collective": {"algorithm": "ring", "bytes": 64}},
    "axes": [{"path": "links.speed", "values": [1]}]})");
  r = run_cli("sweep " + (dir / "bad.json").string() + " --db " + (dir / "x.scindb").string());
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.output.find("links.speed"), std::string::npos) << r.output;
  EXPECT_FALSE(std::filesystem::exists(dir / "x.scindb"));   // nothing created for a bad spec

  r = run_cli("runs --db " + (dir / "typo.scindb").string());
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.output.find("no such experiment database"), std::string::npos) << r.output;
  EXPECT_FALSE(std::filesystem::exists(dir / "typo.scindb"));   // browsing never creates a file

  r = run_cli("sweep " + (dir / "missing.json").string() + " --db " + (dir / "x.scindb").string());
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.output.find("missing.json"), std::string::npos) << r.output;
}

TEST(StoreCli, SigkillMidSweepLeavesAHealthyDatabase) {
  if (cli_path().empty()) GTEST_SKIP() << "SCIN_CLI not set";
  TempDir dir;
  // ~200k cheap points: far more than can finish before the kill.
  write_file(dir / "long.json", R"({
    "name": "long", "base": {"preset": "hgx-h200-8", "collective": {"algorithm": "ring", "dtype": "bf16"}},
    "axes": [{"path": "links.latency_ns", "range": {"min": 0, "max": 10000, "step": 1}},
             {"path": "switch.latency_ns", "range": {"min": 100, "max": 1000, "step": 100}},
             {"path": "collective.bytes", "values": ["64", "4K"]}]})");
  const auto db = dir / "kill.scindb";
  const std::string spec = (dir / "long.json").string();
  const std::string dbs = db.string();
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    freopen("/dev/null", "w", stdout);
    freopen("/dev/null", "w", stderr);
    execl(cli_path().c_str(), cli_path().c_str(), "sweep", spec.c_str(), "--db", dbs.c_str(), "--threads", "1",
          static_cast<char*>(nullptr));
    _exit(127);
  }
  // Poll for committed points (bounded wait; no blind sleeps).
  std::int64_t committed = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (std::chrono::steady_clock::now() < deadline) {
    int st = 0;
    if (waitpid(child, &st, WNOHANG) == child) FAIL() << "the sweep ended before it could be killed";
    try {
      sql::Db raw(dbs, SQLITE_OPEN_READONLY);
      sqlite3_busy_timeout(raw.raw(), 1000);
      committed = raw.query_int("SELECT COUNT(*) FROM collective_points");
    } catch (const std::exception&) {
      committed = 0;   // not created yet
    }
    if (committed >= 200) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_EQ(kill(child, SIGKILL), 0);
  int st = 0;
  ASSERT_EQ(waitpid(child, &st, 0), child);
  ASSERT_TRUE(WIFSIGNALED(st));
  ASSERT_GE(committed, 200) << "no points committed within the time limit";

  {
    sql::Db raw(dbs, SQLITE_OPEN_READONLY);
    EXPECT_EQ(raw.query_text("PRAGMA integrity_check"), "ok");
    EXPECT_EQ(raw.query_text("SELECT status FROM runs WHERE id = 1"), "running");   // as the kill left it
  }
  Store s = Store::open(db, Access::Create);
  EXPECT_EQ(s.recovered_runs(), (std::vector<std::int64_t>{1}));
  RunInfo run = s.get_run(1);
  EXPECT_EQ(run.status, RunStatus::Interrupted);
  EXPECT_GE(run.points_stored, static_cast<std::uint64_t>(committed));
  EXPECT_LT(run.points_stored, run.points_total);
  EXPECT_EQ(run.points_total, 10001u * 10u * 2u);
  auto pts = s.points(1);
  for (std::size_t i = 0; i < pts.size(); ++i) ASSERT_EQ(pts[i].index, i);
  EXPECT_EQ(s.integrity_check(), "ok");
  // The file stays usable: a new run goes in after the interrupted one.
  std::int64_t next = s.begin_run(RunStart{});
  EXPECT_EQ(next, 2);
}

}  // namespace
}  // namespace scin
