// `mpirun --oversubscribe -np 3 scin sweep`: the stored run equals a
// one-process run of the same spec cell for cell, records its 3 ranks; a
// worker rank killed mid-run (SIGKILL, through the test hook
// SCIN_MPI_TEST_KILL_RANK_AFTER) leaves an interrupted run whose committed
// points stay, and `--resume` completes it with no point missing or twice.
#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "cli_util.h"
#include "point_compare.h"
#include "store/store.h"
#include "store/store_test_util.h"

namespace scin {
namespace {

// Whether `pid` names a process that has not exited (a zombie has).
bool process_alive(std::int64_t pid) {
  if (::kill(static_cast<pid_t>(pid), 0) != 0) return false;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return false;
  const auto close = line.rfind(')');
  return close == std::string::npos || close + 2 >= line.size() || (line[close + 2] != 'Z' && line[close + 2] != 'X');
}

using test::TempDir;

// 4 algorithms x 9 sizes x 3 latencies = 108 packet-engine points (about a
// second of one core): slow enough that batches interleave across ranks.
constexpr const char* kPacketSweep = R"({
  "name": "mpi-packet",
  "base": {"preset": "hgx-h200-8", "engine": "packet", "collective": {"algorithm": "ring", "dtype": "bf16"}},
  "axes": [
    {"path": "collective.algorithm", "values": ["ring", "one-shot", "two-shot", "scin"]},
    {"path": "collective.bytes", "range": {"min": "4K", "max": "1M", "factor": 2}},
    {"path": "links.latency_ns", "values": [100, 200, 300]}
  ]})";

/// `mpiexec -np N scin ARGS`, oversubscribed (the CI machine has 2 cores),
/// allowed as root (containers), with `env` exported to every rank.
CliResult mpirun(int ranks, const std::string& args, const std::string& env = "") {
  ::setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
  ::setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
  std::string cmd = std::string("'") + SCIN_MPIEXEC + "' --oversubscribe -np " + std::to_string(ranks);
  if (!env.empty()) cmd += " -x " + env;
  return run_shell(cmd + " '" + cli_path() + "' " + args);
}

class MpiSweep : public ::testing::Test {
 protected:
  void SetUp() override {
    if (cli_path().empty()) GTEST_SKIP() << "SCIN_CLI not set";
    std::ofstream(dir_ / "spec.json") << kPacketSweep;
    // The reference: one process, no launcher.
    CliResult r = run_cli("sweep " + spec() + " --db " + db("one") + " -q --threads 1");
    ASSERT_EQ(r.status, 0) << r.output;
    Store s = Store::open(db("one"), Access::ReadOnly);
    want_ = s.points(1);
    ASSERT_EQ(want_.size(), 108u);
  }
  std::string spec() const { return (dir_ / "spec.json").string(); }
  std::string db(const std::string& name) const { return (dir_ / (name + ".scindb")).string(); }

  /// Every point 0..107 exactly once, each cell equal to the one-process run
  /// (the packet engine's own CPU and wall time excepted).
  void expect_equal_to_reference(const std::vector<PointRecord>& got) {
    ASSERT_EQ(got.size(), want_.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
      ASSERT_EQ(got[i].index, i);
      EXPECT_EQ(test::stored_difference(got[i], want_[i]), "") << "point " << i;
      EXPECT_EQ(got[i].axes, want_[i].axes) << "point " << i;
    }
  }

  TempDir dir_;
  std::vector<PointRecord> want_;
};

TEST_F(MpiSweep, ThreeRanksStoreExactlyTheOneProcessRun) {
  CliResult r = mpirun(3, "sweep " + spec() + " --db " + db("three") + " -q --threads 1");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("done: 108 of 108 points"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("3 ranks x 1 threads"), std::string::npos) << r.output;
  // Only rank 0 prints: one summary line.
  EXPECT_EQ(r.output.find("run 1 "), r.output.rfind("run 1 ")) << r.output;
  Store s = Store::open(db("three"), Access::ReadWrite);
  RunInfo run = s.get_run(1);
  EXPECT_EQ(run.status, RunStatus::Done);
  EXPECT_EQ(run.ranks, 3);
  EXPECT_EQ(run.points_stored, 108u);
  expect_equal_to_reference(s.points(1));
  EXPECT_EQ(s.integrity_check(), "ok");
  // `scin runs` shows the ranks column.
  CliResult runs = run_cli("runs --db " + db("three"));
  ASSERT_EQ(runs.status, 0) << runs.output;
  EXPECT_NE(runs.output.find("ranks"), std::string::npos) << runs.output;
  EXPECT_NE(runs.output.find("108/108      3"), std::string::npos) << runs.output;
  CliResult show = run_cli("show --db " + db("three") + " --run 1");
  ASSERT_EQ(show.status, 0) << show.output;
  EXPECT_NE(show.output.find("3 ranks x 1 threads"), std::string::npos) << show.output;
}

TEST_F(MpiSweep, AKilledWorkerRankLeavesAnInterruptedRunThatResumeCompletes) {
  // Rank 2 kills itself (SIGKILL) after evaluating 10 points, holding a batch
  // rank 0 never gets: the run cannot finish, and Open MPI tears the job down.
  CliResult r = mpirun(3, "sweep " + spec() + " --db " + db("killed") + " -q --threads 1",
                       "SCIN_MPI_TEST_KILL_RANK_AFTER=2:10");
  EXPECT_NE(r.status, 0) << r.output;
  // mpirun may return while rank 0 is still exiting (in its SIGTERM handler,
  // or not yet reaped): wait, up to 30 s, until the run's writer is gone.
  {
    const std::int64_t pid = Store::open(db("killed"), Access::ReadOnly).get_run(1).pid;
    for (int k = 0; k < 600 && pid > 0 && process_alive(pid); ++k) ::usleep(50000);
  }
  std::vector<PointRecord> before;
  {
    // A read-write open marks a running run whose rank 0 is gone as interrupted
    // (if rank 0 did not get to mark it itself on the tear-down's SIGTERM).
    Store s = Store::open(db("killed"), Access::ReadWrite);
    EXPECT_EQ(s.damage(), "");
    RunInfo run = s.get_run(1);
    EXPECT_EQ(run.status, RunStatus::Interrupted) << to_string(run.status);
    EXPECT_EQ(run.ranks, 3);
    before = s.points(1);
    EXPECT_LT(before.size(), 108u);
    EXPECT_EQ(s.integrity_check(), "ok");
  }
  // What was committed is a correct part of the run.
  for (const auto& p : before) EXPECT_EQ(test::stored_difference(p, want_[p.index]), "") << "point " << p.index;

  // Resume under MPI as well (2 ranks): only the missing points are evaluated.
  r = mpirun(2, "sweep --resume " + db("killed") + ":1 -q --threads 1");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("done: 108 of 108 points"), std::string::npos) << r.output;
  Store s = Store::open(db("killed"), Access::ReadWrite);
  RunInfo run = s.get_run(1);
  EXPECT_EQ(run.status, RunStatus::Done);
  EXPECT_EQ(run.points_stored, 108u);
  EXPECT_EQ(run.ranks, 2);   // the ranks of the last process group that wrote it
  expect_equal_to_reference(s.points(1));
  EXPECT_EQ(s.integrity_check(), "ok");
  // The points committed before the kill were kept, not rewritten.
  CliResult check = run_cli("check --db " + db("killed"));
  EXPECT_EQ(check.status, 0) << check.output;
}

TEST_F(MpiSweep, ASingleRankAndAnExplicitMpiFlagRunLikeOneProcess) {
  // --mpi without a launcher: a singleton MPI job of one rank.
  CliResult r = run_cli("sweep " + spec() + " --db " + db("single") + " -q --threads 1 --mpi");
  ASSERT_EQ(r.status, 0) << r.output;
  r = mpirun(1, "sweep " + spec() + " --db " + db("single") + " -q --threads 1");
  ASSERT_EQ(r.status, 0) << r.output;
  Store s = Store::open(db("single"), Access::ReadOnly);
  for (std::int64_t id : {1, 2}) {
    EXPECT_EQ(s.get_run(id).ranks, 1);
    expect_equal_to_reference(s.points(id));
  }
}

TEST_F(MpiSweep, AnErrorOnRankZeroEndsEveryRankWithItsMessage) {
  // A spec that does not exist: rank 0 fails before the job, the workers are released.
  CliResult r = mpirun(3, "sweep " + (dir_ / "missing.json").string() + " --db " + db("none") + " -q");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.output.find("missing.json"), std::string::npos) << r.output;
  // Resuming a done run is refused the same way.
  ASSERT_EQ(run_cli("sweep " + spec() + " --db " + db("done") + " -q --threads 1").status, 0);
  r = mpirun(2, "sweep --resume " + db("done") + ":1 -q");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.output.find("is done; nothing to resume"), std::string::npos) << r.output;
  // --dry-run prints once.
  r = mpirun(2, "sweep " + spec() + " --dry-run");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(r.output.find("108 points"), r.output.rfind("108 points")) << r.output;
}

}  // namespace
}  // namespace scin
