// The experiment database: schema, round trips, editing, bad files, migration, recovery.
#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <thread>

#include <gtest/gtest.h>

#include "base/error.h"
#include "store/schema.h"
#include "store/sqlite_db.h"
#include "store/store.h"
#include "store_test_util.h"

namespace scin {
namespace {

using nlohmann::json;
using test::TempDir;

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

PointRecord make_point(std::uint64_t i) {
  PointRecord p;
  p.index = i;
  p.axes = {{"collective.bytes", 1024 * (i + 1)}, {"collective.algorithm", "ring"}};
  p.algorithm = "ring";
  p.variant = "LL";
  p.dtype = "bf16";
  p.bytes = 1024 * (i + 1);
  p.gpus = 8;
  p.engine = "analytic";
  p.time_us = 12.345678901234567 + static_cast<double>(i);
  p.algbw_GBps = 1.0 / 3.0;
  p.busbw_GBps = 7.0 / 3.0;
  p.max_link_bytes = 1792.0 * static_cast<double>(i);
  for (int t = 0; t < static_cast<int>(Term::Count); ++t) p.breakdown.ns[t] = 0.1 * t + static_cast<double>(i);
  if (i == 2) {
    p.status = PointStatus::Skipped;
    p.message = "nvls needs a switch";
  }
  return p;
}

RunStart make_start(std::uint64_t total) {
  RunStart rs;
  rs.experiment = "exp";
  rs.name = "first";
  rs.tags = {"b", "a"};
  rs.spec = {{"name", "first"}, {"axes", json::array()}};
  rs.points_total = total;
  rs.threads = 2;
  return rs;
}

TEST(StoreDb, CreatesAVersionedWalDatabase) {
  TempDir dir;
  Store s = Store::open(dir / "new.scindb", Access::Create);
  EXPECT_FALSE(s.read_only());
  EXPECT_EQ(s.schema_version(), kSchemaVersion);
  sql::Db raw(( dir / "new.scindb").string(), SQLITE_OPEN_READONLY);
  EXPECT_EQ(raw.query_text("PRAGMA journal_mode"), "wal");
  EXPECT_EQ(raw.query_int("PRAGMA user_version"), kSchemaVersion);
  EXPECT_EQ(raw.query_int("PRAGMA application_id"), store_schema::kApplicationId);
  EXPECT_EQ(s.integrity_check(), "ok");
  EXPECT_TRUE(s.list_runs().empty());
}

TEST(StoreDb, RunAndPointsRoundTrip) {
  TempDir dir;
  Store s = Store::open(dir / "rt.scindb", Access::Create);
  std::int64_t id = s.begin_run(make_start(5));
  std::vector<PointRecord> pts;
  for (std::uint64_t i = 0; i < 5; ++i) pts.push_back(make_point(i));
  s.append_points(id, {pts.begin(), pts.begin() + 3});
  s.append_points(id, {pts.begin() + 3, pts.end()});
  RunInfo running = s.get_run(id);
  EXPECT_EQ(running.status, RunStatus::Running);   // our own process: alive
  s.finish_run(id, RunStatus::Done);

  RunInfo r = s.get_run(id);
  EXPECT_EQ(r.name, "first");
  EXPECT_EQ(r.experiment, "exp");
  EXPECT_EQ(r.status, RunStatus::Done);
  EXPECT_EQ(r.points_total, 5u);
  EXPECT_EQ(r.points_stored, 5u);
  EXPECT_EQ(r.points_skipped, 1u);
  EXPECT_EQ(r.tags, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(r.threads, 2);
  EXPECT_EQ(r.pid, static_cast<std::int64_t>(getpid()));
  EXPECT_FALSE(r.tool_version.empty());
  EXPECT_FALSE(r.started_at.empty());
  EXPECT_FALSE(r.finished_at.empty());
  EXPECT_EQ(r.spec["name"], "first");

  auto back = s.points(id);
  ASSERT_EQ(back.size(), 5u);
  for (std::uint64_t i = 0; i < 5; ++i) {
    EXPECT_EQ(to_json(back[i]), to_json(pts[i])) << i;
    EXPECT_EQ(back[i].time_us, pts[i].time_us);   // bit-exact doubles
  }
  auto mid = s.points(id, 1, 2);
  ASSERT_EQ(mid.size(), 2u);
  EXPECT_EQ(mid[0].index, 1u);
  EXPECT_EQ(s.point_count(id), 5u);
  EXPECT_EQ(s.list_experiments(), (std::vector<std::string>{"exp"}));
}

TEST(StoreDb, EditAndDelete) {
  TempDir dir;
  Store s = Store::open(dir / "e.scindb", Access::Create);
  std::int64_t a = s.begin_run(make_start(5));
  s.append_points(a, {make_point(0), make_point(1)});
  s.finish_run(a, RunStatus::Done);
  std::int64_t b = s.begin_run(make_start(1));
  s.append_points(b, {make_point(0)});
  s.finish_run(b, RunStatus::Cancelled);

  s.rename_run(a, "renamed");
  s.set_notes(a, "looks right");
  s.add_tag(a, "keep");
  s.remove_tag(a, "b");
  RunInfo r = s.get_run(a);
  EXPECT_EQ(r.name, "renamed");
  EXPECT_EQ(r.notes, "looks right");
  EXPECT_EQ(r.tags, (std::vector<std::string>{"a", "keep"}));
  s.set_tags(a, {"z"});
  EXPECT_EQ(s.get_run(a).tags, (std::vector<std::string>{"z"}));
  EXPECT_EQ(s.get_run(b).status, RunStatus::Cancelled);

  s.delete_run(a);
  EXPECT_FALSE(s.find_run(a).has_value());
  ASSERT_EQ(s.list_runs().size(), 1u);
  sql::Db raw((dir / "e.scindb").string(), SQLITE_OPEN_READONLY);
  EXPECT_EQ(raw.query_int("SELECT COUNT(*) FROM collective_points"), 1);   // only run b's
  EXPECT_EQ(raw.query_int("SELECT COUNT(*) FROM run_tags WHERE run_id = " + std::to_string(a)), 0);
  std::string e = error_of([&] { s.rename_run(a, "x"); });
  EXPECT_NE(e.find("no run"), std::string::npos) << e;
  e = error_of([&] { s.get_run(999); });
  EXPECT_NE(e.find("no run 999"), std::string::npos) << e;
}

TEST(StoreDb, BadFilesGiveClearErrors) {
  TempDir dir;
  {
    std::ofstream(dir / "text.scindb") << "hello, this is not a database\n";
    std::string e = error_of([&] { Store::open(dir / "text.scindb", Access::Create); });
    EXPECT_NE(e.find("not a SCIN experiment database"), std::string::npos) << e;
    EXPECT_NE(e.find("text.scindb"), std::string::npos) << e;
  }
  {
    sql::Db other((dir / "other.db").string(), SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
    other.exec("CREATE TABLE foo(x)");
  }
  std::string e = error_of([&] { Store::open(dir / "other.db", Access::Create); });
  EXPECT_NE(e.find("not a SCIN experiment database"), std::string::npos) << e;
  {
    Store s = Store::open(dir / "newer.scindb", Access::Create);
  }
  {
    sql::Db raw((dir / "newer.scindb").string(), SQLITE_OPEN_READWRITE);
    raw.exec("PRAGMA user_version = 99");
  }
  e = error_of([&] { Store::open(dir / "newer.scindb", Access::Create); });
  EXPECT_NE(e.find("newer"), std::string::npos) << e;
  EXPECT_NE(e.find("99"), std::string::npos) << e;
  e = error_of([&] { Store::open(dir / "missing.scindb", Access::ReadOnly); });
  EXPECT_NE(e.find("no such"), std::string::npos) << e;
  e = error_of([&] { Store::open(dir.path()); });
  EXPECT_NE(e.find("folder"), std::string::npos) << e;
  e = error_of([&] { Store::open(dir / "no-such-folder" / "x.scindb", Access::Create); });
  EXPECT_NE(e.find("does not exist"), std::string::npos) << e;
}

// Opening never creates a file: a mistyped path is an error in every mode but Create.
TEST(StoreDb, OpeningAMistypedPathNeverCreatesAFile) {
  TempDir dir;
  for (Access a : {Access::ReadWrite, Access::ReadOnly, Access::Auto}) {
    std::string e = error_of([&] { Store::open(dir / "typo.scindb", a); });
    EXPECT_NE(e.find("no such experiment database"), std::string::npos) << e;
    EXPECT_NE(e.find("typo.scindb"), std::string::npos) << e;
    EXPECT_FALSE(std::filesystem::exists(dir / "typo.scindb"));
  }
  // An existing empty file is not turned into a database either (its bytes are kept).
  std::ofstream(dir / "empty.scindb").close();
  std::string e = error_of([&] { Store::open(dir / "empty.scindb", Access::ReadWrite); });
  EXPECT_NE(e.find("empty file"), std::string::npos) << e;
  EXPECT_EQ(std::filesystem::file_size(dir / "empty.scindb"), 0u);
  // Create makes it, and opening it afterwards needs no Create.
  { Store s = Store::open(dir / "new.scindb", Access::Create); }
  Store s = Store::open(dir / "new.scindb", Access::ReadWrite);
  EXPECT_EQ(s.schema_version(), kSchemaVersion);
}

TEST(StoreDb, ReadOnlyFileOpensReadOnly) {
  TempDir dir;
  auto path = dir / "ro.scindb";
  {
    Store s = Store::open(path, Access::Create);
    std::int64_t id = s.begin_run(make_start(1));
    s.append_points(id, {make_point(0)});
    s.finish_run(id, RunStatus::Done);
  }
  ASSERT_EQ(::chmod(path.c_str(), 0444), 0);
  std::string e = error_of([&] { Store::open(path, Access::ReadWrite); });
  EXPECT_NE(e.find("read-only"), std::string::npos) << e;
  Store s = Store::open(path, Access::Auto);
  EXPECT_TRUE(s.read_only());
  ASSERT_EQ(s.list_runs().size(), 1u);
  EXPECT_EQ(s.points(1).size(), 1u);
  e = error_of([&] { s.rename_run(1, "x"); });
  EXPECT_NE(e.find("read-only"), std::string::npos) << e;
  Store s2 = Store::open(path, Access::ReadOnly);
  EXPECT_EQ(s2.get_run(1).status, RunStatus::Done);
}

// A colleague's file on a share we cannot write: no -shm can be created next to
// it, so it is read as immutable. Run as an unprivileged user (root writes anywhere).
TEST(StoreDb, FileInAReadOnlyFolderOpensReadOnly) {
  TempDir dir;
  auto sub = dir / "share";
  std::filesystem::create_directory(sub);
  auto path = sub / "theirs.scindb";
  {
    Store s = Store::open(path, Access::Create);
    std::int64_t id = s.begin_run(make_start(2));
    s.append_points(id, {make_point(0), make_point(1)});
    s.finish_run(id, RunStatus::Done);
  }
  ASSERT_EQ(::chmod(dir.path().c_str(), 0755), 0);
  ASSERT_EQ(::chmod(sub.c_str(), 0555), 0);
  ASSERT_EQ(::chmod(path.c_str(), 0444), 0);
  auto check = [&]() -> int {
    try {
      Store s = Store::open(path, Access::Auto);
      if (!s.read_only()) return 2;
      if (s.points(1).size() != 2u) return 3;
      if (s.get_run(1).status != RunStatus::Done) return 4;
      return 0;
    } catch (const std::exception&) {
      return 5;
    }
  };
  if (::geteuid() != 0) {
    EXPECT_EQ(check(), 0);
    return;
  }
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    if (::setgid(65534) != 0 || ::setuid(65534) != 0) _exit(9);   // nobody
    _exit(check());
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "9 = setuid failed, 2 = not read-only, 3/4 = wrong content, 5 = open failed";
  EXPECT_FALSE(std::filesystem::exists(path.string() + "-shm"));
}

TEST(StoreDb, MigratesFromVersion1) {
  TempDir dir;
  auto path = dir / "v1.scindb";
  {
    sql::Db db(path.string(), SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
    store_schema::migrate(db, 0, 1);
    db.exec("INSERT INTO experiments(id, name, created_at) VALUES(1, 'old', '2026-01-01T00:00:00Z')");
    db.exec("INSERT INTO runs(id, experiment_id, name, tags, kind, engine, spec_json, tool_version, git_revision, "
            "started_at, finished_at, status, points_total) VALUES(1, 1, 'v1 run', 'x, y', 'collective', 'analytic', "
            "'{\"name\":\"v1\"}', '0.0.1', 'abc', '2026-01-01T00:00:00Z', '2026-01-01T00:01:00Z', 'done', 1)");
    db.exec("INSERT INTO runs(id, experiment_id, name, kind, engine, spec_json, tool_version, git_revision, "
            "started_at, status, points_total) VALUES(2, 1, 'v1 crashed', 'collective', 'analytic', '{}', '0.0.1', "
            "'abc', '2026-01-01T00:00:00Z', 'running', 9)");
    db.exec("INSERT INTO collective_points(run_id, idx, status, axes_json, algorithm, bytes, gpus, engine, time_us) "
            "VALUES(1, 0, 'ok', '{\"collective.bytes\":64}', 'ring', 64, 8, 'analytic', 5.5)");
    EXPECT_EQ(db.query_int("PRAGMA user_version"), 1);
  }
  Store s = Store::open(path, Access::Create);
  EXPECT_EQ(s.schema_version(), 3);
  // Runs from before schema 3 did not record their configuration.
  EXPECT_FALSE(s.get_run(1).config_recorded());
  EXPECT_TRUE(s.get_run(1).config.is_null());
  EXPECT_EQ(s.get_run(1).ranks, 1);
  EXPECT_EQ(s.integrity_check(), "ok");
  RunInfo r = s.get_run(1);
  EXPECT_EQ(r.name, "v1 run");
  EXPECT_EQ(r.tags, (std::vector<std::string>{"x", "y"}));
  EXPECT_EQ(r.status, RunStatus::Done);
  EXPECT_EQ(r.points_stored, 1u);
  auto pts = s.points(1);
  ASSERT_EQ(pts.size(), 1u);
  EXPECT_EQ(pts[0].time_us, 5.5);
  EXPECT_EQ(pts[0].axes["collective.bytes"], 64);
  // A v1 run left `running` has no recorded owner: it is interrupted.
  EXPECT_EQ(s.get_run(2).status, RunStatus::Interrupted);
  EXPECT_EQ(s.recovered_runs(), (std::vector<std::int64_t>{2}));
  // The new tables work on the migrated file.
  RunStart rs = make_start(1);
  rs.kind = PointKind::Quant;
  std::int64_t q = s.begin_run(rs);
  PointRecord p;
  p.kind = PointKind::Quant;
  p.rel_l2 = 5.3e-3;
  s.append_points(q, {p});
  EXPECT_EQ(s.points(q)[0].rel_l2, 5.3e-3);
}

TEST(StoreDb, RunOfADeadProcessIsMarkedInterrupted) {
  TempDir dir;
  auto path = dir / "dead.scindb";
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) _exit(0);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  std::int64_t dead_id, live_id;
  {
    Store s = Store::open(path, Access::Create);
    dead_id = s.begin_run(make_start(3));
    live_id = s.begin_run(make_start(3));
    const std::string sql =
        "UPDATE runs SET pid = " + std::to_string(child) + " WHERE id = " + std::to_string(dead_id);
    ASSERT_EQ(sqlite3_exec(s.raw(), sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK);
  }
  {
    // Read-only: reported interrupted, not written.
    Store ro = Store::open(path, Access::ReadOnly);
    EXPECT_EQ(ro.get_run(dead_id).status, RunStatus::Interrupted);
    EXPECT_TRUE(ro.recovered_runs().empty());
  }
  Store s = Store::open(path, Access::Create);
  EXPECT_EQ(s.recovered_runs(), (std::vector<std::int64_t>{dead_id}));
  EXPECT_EQ(s.get_run(dead_id).status, RunStatus::Interrupted);
  EXPECT_EQ(s.get_run(live_id).status, RunStatus::Running);   // this process is alive
  sql::Db raw(path.string(), SQLITE_OPEN_READONLY);
  EXPECT_EQ(raw.query_text("SELECT status FROM runs WHERE id = " + std::to_string(dead_id)), "interrupted");
}

TEST(StoreDb, ConcurrentFirstOpensMigrateOnce) {
  TempDir dir;
  auto path = dir / "race.scindb";
  std::vector<std::thread> threads;
  std::vector<std::string> errors(4);
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      try {
        Store s = Store::open(path, Access::Create);
        std::int64_t id = s.begin_run(make_start(1));
        s.append_points(id, {make_point(0)});
        s.finish_run(id, RunStatus::Done);
      } catch (const std::exception& e) {
        errors[t] = e.what();
      }
    });
  for (auto& th : threads) th.join();
  for (const auto& e : errors) EXPECT_EQ(e, "");
  Store s = Store::open(path, Access::Create);
  EXPECT_EQ(s.list_runs().size(), 4u);
  EXPECT_EQ(s.list_experiments().size(), 1u);
  EXPECT_EQ(s.integrity_check(), "ok");
}

}  // namespace
}  // namespace scin
