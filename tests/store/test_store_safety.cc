// Files that never lose data: two writing processes at once, data_version for
// external edits, a damaged file opened read-only and recovered, a damaged run
// row that leaves the other runs usable, and resumed runs.
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <sstream>
#include <set>

#include <gtest/gtest.h>

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

PointRecord point(std::uint64_t i, double t) {
  PointRecord p;
  p.index = i;
  p.algorithm = "ring";
  p.bytes = 1024 * (i + 1);
  p.gpus = 8;
  p.engine = "analytic";
  p.time_us = t;
  p.axes = json{{"collective.bytes", p.bytes}};
  return p;
}

// Two processes append to the same file at once (their own runs, and edits):
// every point arrives, the file passes integrity_check.
TEST(StoreSafety, TwoWritingProcessesLoseNothing) {
  TempDir dir;
  const auto path = dir / "two.scindb";
  { Store s = Store::open(path, Access::Create); }
  constexpr int kBatches = 60, kPerBatch = 50;
  auto writer = [&](int who) {
    Store s = Store::open(path, Access::ReadWrite);
    RunStart rs;
    rs.name = "writer " + std::to_string(who);
    std::int64_t id = s.begin_run(rs);
    for (int b = 0; b < kBatches; ++b) {
      std::vector<PointRecord> pts;
      for (int i = 0; i < kPerBatch; ++i) pts.push_back(point(static_cast<std::uint64_t>(b * kPerBatch + i), who + b));
      s.append_points(id, pts);
      s.set_notes(id, "batch " + std::to_string(b));
    }
    s.finish_run(id, RunStatus::Done);
  };
  std::vector<pid_t> kids;
  for (int who = 0; who < 2; ++who) {
    pid_t c = fork();
    ASSERT_GE(c, 0);
    if (c == 0) {
      try {
        writer(who);
      } catch (...) {
        _exit(1);
      }
      _exit(0);
    }
    kids.push_back(c);
  }
  writer(2);   // and this process too
  for (pid_t c : kids) {
    int st = 0;
    ASSERT_EQ(waitpid(c, &st, 0), c);
    ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  }
  Store s = Store::open(path, Access::ReadOnly);
  EXPECT_EQ(s.integrity_check(), "ok");
  auto runs = s.list_runs();
  ASSERT_EQ(runs.size(), 3u);
  for (const auto& r : runs) {
    EXPECT_EQ(r.points_stored, static_cast<std::uint64_t>(kBatches * kPerBatch)) << r.name;
    EXPECT_EQ(r.status, RunStatus::Done);
    EXPECT_EQ(r.notes, "batch " + std::to_string(kBatches - 1));
  }
}

TEST(StoreSafety, DataVersionShowsOtherWriters) {
  TempDir dir;
  const auto path = dir / "dv.scindb";
  Store app = Store::open(path, Access::Create);
  const std::int64_t v0 = app.data_version();
  EXPECT_EQ(app.data_version(), v0);   // nothing happened
  std::int64_t mine = app.begin_run(RunStart{});
  EXPECT_EQ(app.data_version(), v0);   // its own commits do not count
  {
    Store cli = Store::open(path, Access::ReadWrite);
    cli.rename_run(mine, "renamed by the CLI");
  }
  EXPECT_NE(app.data_version(), v0);
  EXPECT_EQ(app.get_run(mine).name, "renamed by the CLI");
}

// Overwrites one page in the middle of the file.
void damage_page(const std::filesystem::path& f, double where) {
  const auto size = std::filesystem::file_size(f);
  const std::uintmax_t page = 4096;
  const std::uintmax_t at = (static_cast<std::uintmax_t>(size * where) / page) * page;
  std::fstream io(f, std::ios::in | std::ios::out | std::ios::binary);
  io.seekp(static_cast<std::streamoff>(at + 8));
  std::string junk(1000, '\xA5');
  io.write(junk.data(), static_cast<std::streamsize>(junk.size()));
}

TEST(StoreSafety, DamagedFileOpensReadOnlyAndRecovers) {
  TempDir dir;
  const auto path = dir / "bad.scindb";
  std::map<std::pair<int, std::uint64_t>, double> original;
  {
    Store s = Store::open(path, Access::Create);
    for (int r = 0; r < 2; ++r) {
      RunStart rs;
      rs.name = "run " + std::to_string(r);
      rs.points_total = 4000;
      std::int64_t id = s.begin_run(rs);
      std::vector<PointRecord> pts;
      for (std::uint64_t i = 0; i < 4000; ++i) {
        pts.push_back(point(i, 1000.0 * r + static_cast<double>(i) * 0.25));
        original[{static_cast<int>(id), i}] = pts.back().time_us;
      }
      s.append_points(id, pts);
      s.finish_run(id, RunStatus::Done);
    }
  }   // the last close checkpoints the WAL into the file
  damage_page(path, 0.6);
  const auto bytes_before = std::filesystem::file_size(path);

  Store s = Store::open(path, Access::ReadWrite, /*check=*/true);
  EXPECT_FALSE(s.damage().empty());
  EXPECT_TRUE(s.read_only());
  EXPECT_NE(s.quick_check(), "ok");
  try {
    s.begin_run(RunStart{});
    FAIL() << "a damaged file must not be written";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("damaged"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("scin recover"), std::string::npos) << e.what();
  }
  EXPECT_THROW(s.rename_run(1, "x"), Error);

  // recover: what is readable goes into a fresh file, values unchanged.
  const auto out = dir / "good.scindb";
  {
    Store dst = Store::open(out, Access::Create);
    for (RunInfo r : s.list_runs()) {
      std::vector<PointRecord> pts;
      for (std::uint64_t first = 0; first < 4000; first += 64) {
        try {
          auto part = s.points(r.id, first, 64);
          pts.insert(pts.end(), part.begin(), part.end());
        } catch (const Error&) {
        }
      }
      dst.import_run(r, pts);
    }
  }
  Store good = Store::open(out, Access::ReadOnly, true);
  EXPECT_TRUE(good.damage().empty());
  EXPECT_EQ(good.integrity_check(), "ok");
  auto runs = good.list_runs();
  ASSERT_EQ(runs.size(), 2u);
  std::size_t kept = 0;
  for (const auto& r : runs)
    for (const auto& p : good.points(r.id)) {
      ASSERT_TRUE(original.count({static_cast<int>(r.id), p.index}));
      EXPECT_EQ(p.time_us, (original[{static_cast<int>(r.id), p.index}]));
      ++kept;
    }
  EXPECT_GT(kept, 4000u);   // at least one whole run and part of the other
  EXPECT_EQ(std::filesystem::file_size(path), bytes_before);   // the damaged file was not touched
}

TEST(StoreSafety, ADamagedRunRowLeavesTheOthersUsable) {
  TempDir dir;
  const auto path = dir / "row.scindb";
  {
    Store s = Store::open(path, Access::Create);
    for (int r = 0; r < 3; ++r) {
      std::int64_t id = s.begin_run(RunStart{});
      s.append_points(id, {point(0, 1.5 + r)});
      s.finish_run(id, RunStatus::Done);
    }
    sql::Db raw(path.string(), SQLITE_OPEN_READWRITE);
    raw.exec("UPDATE runs SET status = 'exploded' WHERE id = 2");
    raw.exec("UPDATE runs SET kind = 'telepathy' WHERE id = 3");
  }
  Store s = Store::open(path, Access::Auto);
  auto runs = s.list_runs();
  ASSERT_EQ(runs.size(), 3u);
  EXPECT_TRUE(runs[0].problem.empty());
  EXPECT_EQ(runs[1].status, RunStatus::Unknown);
  EXPECT_NE(runs[1].problem.find("exploded"), std::string::npos) << runs[1].problem;
  EXPECT_NE(runs[2].problem.find("telepathy"), std::string::npos) << runs[2].problem;
  EXPECT_EQ(s.points(1)[0].time_us, 1.5);
  EXPECT_EQ(s.points(2)[0].time_us, 2.5);   // an unknown status does not hide the points
  try {
    s.points(3);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("run 3"), std::string::npos) << e.what();
  }
}

const char* kResumeSpec = R"({
  "name": "resume",
  "base": {"preset": "hgx-h200-8", "collective": {"algorithm": "ring", "dtype": "bf16"}},
  "axes": [
    {"path": "links.latency_ns", "range": {"min": 50, "max": 250, "step": 10}},
    {"path": "switch.latency_ns", "range": {"min": 100, "max": 300, "step": 20}},
    {"path": "collective.bytes", "values": ["64", "4K"]}
  ]})";

TEST(StoreSafety, ResumeEvaluatesOnlyTheMissingPoints) {
  TempDir dir;
  SweepSpec spec = sweep_spec_from_json(json::parse(kResumeSpec));
  const std::uint64_t total = point_count(spec);
  Store ref = Store::open(dir / "ref.scindb", Access::Create);
  auto want = ref.points(run_sweep(ref, spec, SweepOptions{}, SweepSink{}).run_id);

  Store s = Store::open(dir / "res.scindb", Access::Create);
  std::atomic<bool> cancel{false};
  SweepSink sink;
  std::uint64_t seen = 0;
  sink.on_point = [&](const PointRecord&) {
    if (++seen == 100) cancel = true;
  };
  SweepOptions opts;
  opts.threads = 2;
  opts.batch_points = 16;
  opts.cancel = &cancel;
  const std::int64_t id = run_sweep(s, spec, opts, sink).run_id;
  ASSERT_EQ(s.get_run(id).status, RunStatus::Cancelled);
  const auto stored = s.point_count(id);
  ASSERT_GE(stored, 100u);
  ASSERT_LT(stored, total);
  // A gap in the middle as well (as a crash between batches of another writer would leave).
  {
    sql::Db raw(s.path().string(), SQLITE_OPEN_READWRITE);
    raw.exec(fmt::format("DELETE FROM collective_points WHERE run_id = {} AND idx BETWEEN 30 AND 39", id));
  }
  EXPECT_THROW(s.resume_run(id + 100, 1), Error);

  SweepOptions more;
  more.threads = 2;
  more.resume_run = id;
  std::vector<std::uint64_t> evaluated;
  SweepSink count;
  count.on_point = [&](const PointRecord& p) { evaluated.push_back(p.index); };
  SweepSummary sum = run_sweep(s, sweep_spec_from_run(s.get_run(id)), more, count);
  EXPECT_EQ(sum.run_id, id);
  EXPECT_EQ(sum.status, RunStatus::Done);
  EXPECT_EQ(evaluated.size(), total - stored + 10);   // only the missing points
  EXPECT_EQ(evaluated.front(), 30u);
  auto got = s.points(id);
  ASSERT_EQ(got.size(), total);
  for (std::size_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(got[i].index, i);
    EXPECT_EQ(got[i].time_us, want[i].time_us) << i;
    EXPECT_EQ(got[i].axes, want[i].axes) << i;
  }
  EXPECT_EQ(s.get_run(id).status, RunStatus::Done);
  // A done run cannot be resumed.
  EXPECT_THROW(run_sweep(s, spec, more, SweepSink{}), Error);
  EXPECT_EQ(s.integrity_check(), "ok");
}

}  // namespace
}  // namespace scin
