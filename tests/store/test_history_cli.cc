// The CLI side of self-describing runs and safe files: `scin diff` names the
// edited preset parameter, `show --config`, `sweep --rerun` from the database
// alone, `compare`; SIGINT twice cancels cleanly and `--resume` completes the
// run; `check` / `recover` on a damaged file; a damaged run row.
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>

#include "base/json_input.h"

#include "cli_util.h"
#include "fabric/preset.h"
#include "store/sqlite_db.h"
#include "store/store.h"
#include "store_test_util.h"

namespace scin {
namespace {

using nlohmann::json;
using test::TempDir;

void write_file(const std::filesystem::path& p, const std::string& text) { std::ofstream(p) << text; }

std::size_t count_lines(const std::string& s) { return static_cast<std::size_t>(std::count(s.begin(), s.end(), '\n')); }

TEST(HistoryCli, DiffNamesExactlyTheEditedPresetParameter) {
  if (cli_path().empty()) GTEST_SKIP() << "SCIN_CLI not set";
  TempDir dir;
  const auto preset = dir / "mine.json";
  std::filesystem::copy_file(resource_dir() / "presets" / "hgx-h200-8.json", preset);
  write_file(dir / "spec.json", json{{"name", "edit"},
                                     {"base", {{"preset", preset.string()}, {"collective", {{"dtype", "bf16"}}}}},
                                     {"axes", json::array({json{{"path", "collective.algorithm"},
                                                                {"values", {"ring", "nvls"}}},
                                                           json{{"path", "collective.bytes"},
                                                                {"values", {"1K", "1M"}}}})}}
                                    .dump());
  const std::string db = (dir / "x.scindb").string();
  const std::string sweep = "sweep " + (dir / "spec.json").string() + " --db " + db + " -q";
  ASSERT_EQ(run_cli(sweep).status, 0);
  json j = read_json_document(preset);
  j["links"]["bandwidth_GBps"] = 300;
  std::ofstream(preset) << j.dump(1);
  ASSERT_EQ(run_cli(sweep).status, 0);

  CliResult r = run_cli("diff --db " + db + " 1 2");
  ASSERT_EQ(r.status, 0) << r.output;
  // Header, exactly one parameter, then the preset-file note.
  EXPECT_NE(r.output.find("links.bandwidth_GBps"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("450"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("300"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("file changed between the runs"), std::string::npos) << r.output;
  std::size_t param_lines = 0;
  std::istringstream in(r.output);
  for (std::string line; std::getline(in, line);)
    if (!line.empty() && line[0] != '#' && line.rfind("parameter", 0) != 0) ++param_lines;
  EXPECT_EQ(param_lines, 1u) << r.output;

  // The stored run still shows the original fabric...
  r = run_cli("show --db " + db + " --run 1 --config");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("links.bandwidth_GBps"), std::string::npos);
  EXPECT_NE(r.output.find("= 450"), std::string::npos) << r.output;
  // ...and re-runs the original numbers with the preset file gone.
  std::filesystem::remove(preset);
  r = run_cli("sweep --rerun " + db + ":1 -q");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("run 3 'edit (re-run of 1)' done: 4 of 4"), std::string::npos) << r.output;
  r = run_cli("compare --db " + db + " 1 3");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("4 matched points, 4 identical"), std::string::npos) << r.output;
  r = run_cli("compare --db " + db + " 1 2");
  EXPECT_NE(r.output.find("4 matched points, 0 identical"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("largest change"), std::string::npos) << r.output;
  {
    // The table's columns line up under their heads: every row as long as the head, though the
    // axes of a row ({"collective.algorithm":"nvls","collective.bytes":1048576}, 50) overran 48.
    std::istringstream rows(r.output);
    std::size_t head = 0, n = 0;
    for (std::string line; std::getline(rows, line);) {
      if (line.rfind(" index", 0) == 0) head = line.size();
      else if (head > 0 && !line.empty() && line[0] != '#') {
        EXPECT_EQ(line.size(), head) << line;
        ++n;
      }
    }
    EXPECT_EQ(n, 4u) << r.output;
  }
  r = run_cli("diff --db " + db + " 1 3");
  EXPECT_NE(r.output.find("same base configuration"), std::string::npos) << r.output;

  r = run_cli("sweep --rerun " + db + " -q");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.output.find("FILE:RUN"), std::string::npos) << r.output;
}

const char* kLongSpec = R"({
    "name": "long", "base": {"preset": "hgx-h200-8", "collective": {"algorithm": "ring", "dtype": "bf16"}},
    "axes": [{"path": "links.latency_ns", "range": {"min": 0, "max": 20000, "step": 1}},
             {"path": "collective.bytes", "values": ["64", "64M"]}]})";

// Starts `scin sweep` on kLongSpec, waits for 100 committed points, sends
// `signals` (2 ms apart) and returns the points the cancelled run kept.
std::uint64_t sweep_and_signal(const TempDir& dir, const std::string& db, const std::vector<int>& signals) {
  write_file(dir / "long.json", kLongSpec);
  const std::string spec = (dir / "long.json").string();
  pid_t child = fork();
  if (child == 0) {
    freopen("/dev/null", "w", stdout);
    freopen("/dev/null", "w", stderr);
    execl(cli_path().c_str(), cli_path().c_str(), "sweep", spec.c_str(), "--db", db.c_str(), "--threads", "1",
          static_cast<char*>(nullptr));
    _exit(127);
  }
  EXPECT_GT(child, 0);
  std::int64_t committed = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline && committed < 100) {
    try {
      sql::Db raw(db, SQLITE_OPEN_READONLY);
      sqlite3_busy_timeout(raw.raw(), 1000);
      committed = raw.query_int("SELECT COUNT(*) FROM collective_points");
    } catch (const std::exception&) {
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_GE(committed, 100);
  for (int sig : signals) {
    EXPECT_EQ(kill(child, sig), 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  int st = 0;
  EXPECT_EQ(waitpid(child, &st, 0), child);
  EXPECT_TRUE(WIFEXITED(st)) << "killed by signal " << WTERMSIG(st);
  EXPECT_EQ(WEXITSTATUS(st), 2);   // "sweep cancelled; the points computed so far are kept"
  Store s = Store::open(db, Access::ReadOnly);
  RunInfo r = s.get_run(1);
  EXPECT_EQ(r.status, RunStatus::Cancelled);
  EXPECT_GE(r.points_stored, static_cast<std::uint64_t>(committed));
  EXPECT_LT(r.points_stored, r.points_total);
  EXPECT_EQ(s.integrity_check(), "ok");
  auto pts = s.points(1);
  for (std::size_t i = 0; i < pts.size(); ++i) EXPECT_EQ(pts[i].index, i);
  return r.points_stored;
}

TEST(HistoryCli, SigtermCancelsCleanly) {
  if (cli_path().empty()) GTEST_SKIP() << "SCIN_CLI not set";
  TempDir dir;
  sweep_and_signal(dir, (dir / "term.scindb").string(), {SIGTERM});
}

// SIGINT twice (as `timeout` or a terminal sends it to the group): the sweep
// ends cleanly as cancelled with its committed points, and --resume finishes it.
TEST(HistoryCli, TwoSigintsCancelCleanlyAndResumeCompletes) {
  if (cli_path().empty()) GTEST_SKIP() << "SCIN_CLI not set";
  TempDir dir;
  const std::string db = (dir / "sig.scindb").string();
  sweep_and_signal(dir, db, {SIGINT, SIGINT});
  CliResult r = run_cli("sweep --resume " + db + ":1 -q --threads 2");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("run 1 'long' done: 40002 of 40002"), std::string::npos) << r.output;
  Store s = Store::open(db, Access::ReadOnly);
  auto pts = s.points(1);
  ASSERT_EQ(pts.size(), 40002u);
  for (std::size_t i = 0; i < pts.size(); ++i) ASSERT_EQ(pts[i].index, i);
  EXPECT_EQ(s.get_run(1).status, RunStatus::Done);
  r = run_cli("sweep --resume " + db + ":1 -q");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.output.find("is done; nothing to resume"), std::string::npos) << r.output;
  r = run_cli("runs --db " + db);
  EXPECT_NE(r.output.find("ranks  threads"), std::string::npos) << r.output;
}

TEST(HistoryCli, CheckRecoverAndADamagedRow) {
  if (cli_path().empty()) GTEST_SKIP() << "SCIN_CLI not set";
  TempDir dir;
  const auto db = dir / "d.scindb";
  {
    Store s = Store::open(db, Access::Create);
    for (int r = 0; r < 3; ++r) {
      RunStart rs;
      rs.name = "r" + std::to_string(r);
      std::int64_t id = s.begin_run(rs);
      std::vector<PointRecord> pts(3000);
      for (std::size_t i = 0; i < pts.size(); ++i) {
        pts[i].index = i;
        pts[i].time_us = static_cast<double>(i);
      }
      s.append_points(id, pts);
      s.finish_run(id, RunStatus::Done);
    }
  }
  CliResult r = run_cli("check --db " + db.string());
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find(": ok (schema 3, 3 runs)"), std::string::npos) << r.output;

  // An unknown status in one row: runs, show and export keep working for the others.
  {
    sql::Db raw(db.string(), SQLITE_OPEN_READWRITE);
    raw.exec("UPDATE runs SET status = 'bogus' WHERE id = 2");
  }
  r = run_cli("runs --db " + db.string());
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("run 2 is damaged"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("r2"), std::string::npos) << r.output;
  r = run_cli("show --db " + db.string() + " --run 3");
  EXPECT_EQ(r.status, 0) << r.output;
  r = run_cli("export --db " + db.string() + " --run 1 --format csv");
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(count_lines(r.output), 3001u);

  // A damaged page: check fails, writing is refused, recover copies what it can read.
  {
    const auto size = std::filesystem::file_size(db);
    std::fstream io(db, std::ios::in | std::ios::out | std::ios::binary);
    io.seekp(static_cast<std::streamoff>((size / 2 / 4096) * 4096 + 8));
    std::string junk(1500, '\x5A');
    io.write(junk.data(), static_cast<std::streamsize>(junk.size()));
  }
  r = run_cli("check --db " + db.string());
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("damaged"), std::string::npos) << r.output;
  r = run_cli("annotate --db " + db.string() + " --run 1 --name x");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("nothing is written"), std::string::npos) << r.output;
  const auto out = dir / "fixed.scindb";
  r = run_cli("recover " + db.string() + " --out " + out.string());
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("integrity_check: ok"), std::string::npos) << r.output;
  r = run_cli("check --db " + out.string());
  EXPECT_EQ(r.status, 0) << r.output;
  r = run_cli("recover " + db.string() + " --out " + out.string());
  EXPECT_EQ(r.status, 2);   // never overwrites
}

}  // namespace
}  // namespace scin

namespace scin {
namespace {

// Issue 13 item 2: a stored spec nested 200 000 levels deep (a hostile or
// damaged file) overflowed the stack in `scin show` and `scin runs --format
// json`; it is now read with the depth limit and reported as that run's problem.
TEST(HistoryCli, DeeplyNestedStoredSpecIsReportedNotACrash) {
  if (cli_path().empty()) GTEST_SKIP() << "SCIN_CLI not set";
  TempDir dir;
  const auto db = dir / "deep.scindb";
  {
    Store s = Store::open(db, Access::Create);
    for (int r = 0; r < 2; ++r) {
      RunStart rs;
      rs.name = "r" + std::to_string(r);
      const std::int64_t id = s.begin_run(rs);
      PointRecord p;
      p.index = 0;
      p.time_us = 1.5;
      s.append_points(id, {p});
      s.finish_run(id, RunStatus::Done);
    }
    std::string deep;
    for (int i = 0; i < 200000; ++i) deep += "{\"a\":";
    deep += "1" + std::string(200000, '}');
    sql::Db raw(db.string(), SQLITE_OPEN_READWRITE);
    raw.exec("UPDATE runs SET spec_json = '" + deep + "' WHERE id = 2");
  }
  for (const std::string args : {"runs --format json", "runs", "show --run 2", "show --run 1"}) {
    SCOPED_TRACE(args);
    const CliResult r = run_cli(args + " --db " + db.string());
    EXPECT_TRUE(r.status == 0 || r.status == 2) << r.status << "\n" << r.output.substr(0, 2000);
    EXPECT_EQ(r.output.find("internal error"), std::string::npos) << r.output.substr(0, 2000);
  }
  const CliResult one = run_cli("show --run 1 --db " + db.string());
  EXPECT_EQ(one.status, 0) << one.output.substr(0, 2000);   // the other run stays usable
}

}  // namespace
}  // namespace scin
