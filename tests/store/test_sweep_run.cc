// The sweep runner: round trip against direct computation, determinism across
// thread counts, memoisation, skipped points, cancellation, concurrent readers.
#include <sstream>
#include <thread>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "base/error.h"
#include "fabric/preset.h"
#include "engines/simulate.h"
#include "sweep/sweep.h"
#include "sweep/sweep_internal.h"
#include "store_test_util.h"

namespace scin {
namespace {

using nlohmann::json;
using test::TempDir;

SweepSpec spec_of(const char* text) { return sweep_spec_from_json(json::parse(text)); }

// 3 algorithms x 6 sizes on H200, plus the mesh (where nvls is skipped).
const char* kSmall = R"({
  "name": "small", "experiment": "tests",
  "base": {"set": {"switch.latency_ns": 180}, "collective": {"dtype": "bf16"}},
  "axes": [
    {"path": "preset", "values": ["hgx-h200-8", "mesh-8"]},
    {"path": "collective.algorithm", "values": ["ring", "two-shot", "nvls"]},
    {"path": "collective.bytes", "range": {"min": "1K", "max": "1M", "factor": 4}}
  ]})";

// Enough cheap points to exercise batching and the pipeline.
const char* kMedium = test::kMediumSweep;

// Runs `spec` without a store; the records the sink got, checked to come in index order.
std::vector<json> sweep_records(const SweepSpec& spec, const SweepOptions& opts, SweepSummary* sum = nullptr) {
  std::vector<json> got;
  SweepSink sink;
  sink.on_point = [&](const PointRecord& p) { got.push_back(to_json(p)); };
  const SweepSummary s = run_sweep(spec, opts, sink);
  if (sum) *sum = s;
  EXPECT_EQ(got.size(), point_count(spec));
  for (std::size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i]["index"], i);
  return got;
}

TEST(SweepRun, RoundTripEqualsDirectComputation) {
  TempDir dir;
  SweepSpec spec = spec_of(kSmall);
  Store store = Store::open(dir / "rt.scindb", Access::Create);
  std::vector<SweepProgress> progress;
  SweepSink sink;
  sink.on_progress = [&](const SweepProgress& p) { progress.push_back(p); };
  SweepOptions opts;
  opts.threads = 2;
  opts.tags = {"t1"};
  SweepSummary sum = run_sweep(store, spec, opts, sink);
  EXPECT_EQ(sum.status, RunStatus::Done);
  EXPECT_EQ(sum.progress.total, 36u);
  EXPECT_EQ(sum.progress.done, 36u);
  EXPECT_EQ(sum.progress.skipped, 6u);   // nvls on the mesh
  ASSERT_FALSE(progress.empty());
  EXPECT_EQ(progress.back().done, 36u);
  EXPECT_EQ(progress.back().eta_s, 0);

  RunInfo run = store.get_run(sum.run_id);
  EXPECT_EQ(run.status, RunStatus::Done);
  EXPECT_EQ(run.experiment, "tests");
  EXPECT_EQ(run.points_stored, 36u);
  EXPECT_EQ(run.tags, (std::vector<std::string>{"t1"}));
  EXPECT_EQ(sweep_spec_from_json(run.spec).name, "small");

  auto pts = store.points(sum.run_id);
  ASSERT_EQ(pts.size(), 36u);
  Config h200 = load_preset("hgx-h200-8");
  h200.sw.latency_ns = 180;
  Config mesh = load_preset("mesh-8");
  mesh.sw.latency_ns = 180;
  const char* algos[] = {"ring", "two-shot", "nvls"};
  for (std::uint64_t i = 0; i < 36; ++i) {
    const PointRecord& p = pts[i];
    ASSERT_EQ(p.index, i);
    const bool on_mesh = i >= 18;
    const std::string algo = algos[(i / 6) % 3];
    const std::uint64_t bytes = 1024ull << (2 * (i % 6));
    EXPECT_EQ(p.axes["preset"], on_mesh ? "mesh-8" : "hgx-h200-8");
    EXPECT_EQ(p.axes["collective.bytes"], bytes);
    EXPECT_EQ(p.algorithm, algo);
    EXPECT_EQ(p.bytes, bytes);
    if (on_mesh && algo == "nvls") {
      EXPECT_EQ(p.status, PointStatus::Skipped);
      EXPECT_FALSE(p.message.empty());
      continue;
    }
    ASSERT_EQ(p.status, PointStatus::Ok) << p.message;
    SimResult d = simulate(on_mesh ? mesh : h200, algo, Collective{bytes, DType::Bf16});
    EXPECT_EQ(p.time_us, d.time_us()) << i;
    EXPECT_EQ(p.busbw_GBps, d.busbw_GBps) << i;
    EXPECT_EQ(p.max_link_bytes, d.max_link_bytes) << i;
    EXPECT_EQ(p.variant, d.variant) << i;
    for (int t = 0; t < static_cast<int>(Term::Count); ++t) EXPECT_EQ(p.breakdown.ns[t], d.breakdown.ns[t]);
  }

  // CSV export: header + one line per point; axes first, in spec order.
  std::ostringstream csv;
  export_csv(run, pts, csv);
  std::istringstream lines(csv.str());
  std::string header, first;
  std::getline(lines, header);
  std::getline(lines, first);
  EXPECT_EQ(header.rfind("index,preset,collective.algorithm,collective.bytes,status,", 0), 0u) << header;
  EXPECT_NE(header.find("time_us"), std::string::npos);
  EXPECT_EQ(first.rfind("0,hgx-h200-8,ring,1024,ok,", 0), 0u) << first;
  EXPECT_NE(first.find(fmt::format("{}", pts[0].time_us)), std::string::npos) << first;
  std::size_t n = 2;
  for (std::string l; std::getline(lines, l);) ++n;
  EXPECT_EQ(n, 37u);

  json j = export_json(run, pts);
  ASSERT_EQ(j["points"].size(), 36u);
  EXPECT_EQ(j["points"][5]["time_us"].get<double>(), pts[5].time_us);
  EXPECT_EQ(j["run"]["status"], "done");
}

TEST(SweepRun, DeterministicAcrossThreadCounts) {
  SweepSpec spec = spec_of(kMedium);
  std::vector<std::vector<json>> results;
  for (int threads : {1, 2, 3}) {
    SweepOptions opts;
    opts.threads = threads;
    opts.batch_points = 37;   // odd batches
    SweepSummary sum;
    results.push_back(sweep_records(spec, opts, &sum));
    EXPECT_EQ(sum.threads, threads);
    EXPECT_EQ(sum.status, RunStatus::Done);
    EXPECT_EQ(results.back().size(), 201u * 11u * 2u);
  }
  EXPECT_EQ(results[0], results[1]);
  EXPECT_EQ(results[0], results[2]);
}

TEST(SweepRun, IdenticalPointsAreComputedOnce) {
  SweepSpec spec = spec_of(R"({
    "name": "memo", "base": {"preset": "hgx-h200-8", "collective": {"dtype": "bf16"}},
    "axes": [
      {"path": "collective.algorithm", "values": ["ring", "nvls"]},
      {"path": "collective.bytes", "values": [1024, "1K", 2048, "2K", "1K"]}
    ]})");
  std::vector<PointRecord> got;
  SweepSink sink;
  sink.on_point = [&](const PointRecord& p) { got.push_back(p); };
  SweepOptions opts;
  opts.threads = 1;
  SweepSummary sum = run_sweep(spec, opts, sink);
  EXPECT_EQ(sum.progress.memo_hits, 6u);   // per algorithm: 5 points, 2 distinct
  ASSERT_EQ(got.size(), 10u);
  EXPECT_EQ(got[1].time_us, got[0].time_us);
  EXPECT_EQ(got[1].index, 1u);
  EXPECT_EQ(got[4].axes["collective.bytes"], 1024);
  opts.memoise = false;
  sum = run_sweep(spec, opts, sink);
  EXPECT_EQ(sum.progress.memo_hits, 0u);
}

// A single long point (packet engine, 1 GiB: seconds of work) stops part-way
// when cancelled: the engine polls the runner's flag.
TEST(SweepRun, CancelInterruptsALongPoint) {
  TempDir dir;
  SweepSpec spec = spec_of(R"({
    "name": "long", "base": {"preset": "hgx-h200-8", "engine": "packet",
                             "collective": {"algorithm": "scin", "dtype": "bf16"}},
    "axes": [{"path": "collective.bytes", "values": ["1G"]}]})");
  Store store = Store::open(dir / "long.scindb", Access::Create);
  std::atomic<bool> cancel{false};
  SweepOptions opts;
  opts.threads = 1;
  opts.cancel = &cancel;
  std::thread canceller([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    cancel = true;
  });
  SweepSummary sum = run_sweep(store, spec, opts, SweepSink{});
  canceller.join();
  EXPECT_EQ(sum.status, RunStatus::Cancelled);
  EXPECT_EQ(store.get_run(sum.run_id).points_stored, 0u);
}

TEST(SweepRun, CancelKeepsAContiguousPrefix) {
  TempDir dir;
  SweepSpec spec = spec_of(kMedium);
  Store store = Store::open(dir / "cancel.scindb", Access::Create);
  std::atomic<bool> cancel{false};
  SweepSink sink;
  std::uint64_t seen = 0;
  sink.on_point = [&](const PointRecord& p) {
    EXPECT_EQ(p.index, seen);
    ++seen;
    if (seen == 25) cancel = true;
  };
  SweepOptions opts;
  opts.threads = 2;
  opts.batch_points = 10;
  opts.cancel = &cancel;
  SweepSummary sum = run_sweep(store, spec, opts, sink);
  EXPECT_EQ(sum.status, RunStatus::Cancelled);
  EXPECT_GE(sum.progress.done, 25u);
  EXPECT_LT(sum.progress.done, point_count(spec));
  RunInfo run = store.get_run(sum.run_id);
  EXPECT_EQ(run.status, RunStatus::Cancelled);
  EXPECT_EQ(run.points_stored, sum.progress.done);
  auto pts = store.points(sum.run_id);
  for (std::size_t i = 0; i < pts.size(); ++i) ASSERT_EQ(pts[i].index, i);

  // Cancelled before it starts: no point at all, still a proper run.
  cancel = true;
  sum = run_sweep(store, spec, opts, SweepSink{});
  EXPECT_EQ(sum.status, RunStatus::Cancelled);
  EXPECT_EQ(store.get_run(sum.run_id).points_stored, 0u);
}

TEST(SweepRun, ReaderWhileWriting) {
  TempDir dir;
  auto path = dir / "rw.scindb";
  SweepSpec spec = spec_of(kMedium);
  { Store create = Store::open(path, Access::Create); }
  std::atomic<bool> finished{false};
  std::atomic<int> reads{0};
  std::atomic<std::uint64_t> seen{0};   // most points the reader saw in the run
  std::atomic<bool> reader_ok{true};
  std::string reader_error;
  std::thread reader([&] {
    std::uint64_t last = 0;
    while (!finished.load()) {
      try {
        Store r = Store::open(path, Access::ReadOnly);
        for (const auto& run : r.list_runs()) {
          std::uint64_t n = r.point_count(run.id);
          if (n < last) reader_ok = false;   // committed points never go away
          last = n;
          if (n > seen) seen = n;
          auto pts = r.points(run.id);
          for (std::size_t i = 0; i < pts.size(); ++i)
            if (pts[i].index != i) reader_ok = false;
        }
        ++reads;
      } catch (const std::exception& e) {
        reader_error = e.what();
        reader_ok = false;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  });
  Store w = Store::open(path, Access::Create);
  SweepOptions opts;
  opts.threads = 2;
  opts.batch_points = 16;
  opts.batch_interval_s = 0.001;
  SweepSink sink;
  // Mid-run, wait (bounded) until the reader has seen committed points of this
  // run, so the test does not depend on how the threads get scheduled.
  sink.on_point = [&](const PointRecord& p) {
    if (p.index != 200) return;
    for (int i = 0; i < 2000 && seen.load() == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  };
  SweepSummary sum = run_sweep(w, spec, opts, sink);
  finished = true;
  reader.join();
  EXPECT_TRUE(reader_ok.load()) << reader_error;
  EXPECT_GT(reads.load(), 0);
  EXPECT_GT(seen.load(), 0u);   // read while the run was being written
  EXPECT_EQ(w.get_run(sum.run_id).points_stored, point_count(spec));
  EXPECT_EQ(w.integrity_check(), "ok");
}

// The last points of a sweep's work (the tail) are taken longest first.
TEST(SweepTail, SplitTakesTheLastIndicesOfTheRanges) {
  using sweep_detail::split_tail;
  const std::vector<std::pair<std::uint64_t, std::uint64_t>> todo{{0, 5}, {7, 9}, {12, 20}};
  auto p = split_tail(todo, 10);
  EXPECT_EQ(p.head, (std::vector<std::pair<std::uint64_t, std::uint64_t>>{{0, 5}}));
  EXPECT_EQ(p.tail, (std::vector<std::uint64_t>{7, 8, 12, 13, 14, 15, 16, 17, 18, 19}));
  p = split_tail(todo, 11);
  EXPECT_EQ(p.head, (std::vector<std::pair<std::uint64_t, std::uint64_t>>{{0, 4}}));
  EXPECT_EQ(p.tail.front(), 4u);
  EXPECT_EQ(p.tail.size(), 11u);
  p = split_tail(todo, 3);
  EXPECT_EQ(p.head, (std::vector<std::pair<std::uint64_t, std::uint64_t>>{{0, 5}, {7, 9}, {12, 17}}));
  EXPECT_EQ(p.tail, (std::vector<std::uint64_t>{17, 18, 19}));
  p = split_tail(todo, 0);
  EXPECT_EQ(p.head, todo);
  EXPECT_TRUE(p.tail.empty());
  p = split_tail(todo, 1000);
  EXPECT_TRUE(p.head.empty());
  EXPECT_EQ(p.tail.size(), 15u);
}

TEST(SweepTail, LongPointsFirstThenIndexOrder) {
  using sweep_detail::tail_order;
  const std::vector<std::uint64_t> tail{10, 11, 12, 13, 14, 15, 16, 17};
  // Total 24 s, 2 threads: long is >= 24 / 16 = 1.5 s.
  const std::vector<double> s{1, 1, 1, 9, 1, 1, 5, 5};
  EXPECT_EQ(tail_order(tail, s, 2), (std::vector<std::uint64_t>{13, 16, 17, 10, 11, 12, 14, 15}));
  // With 8 threads long is >= 0.375 s: every point, longest first, ties in index order.
  EXPECT_EQ(tail_order(tail, s, 8), (std::vector<std::uint64_t>{13, 16, 17, 10, 11, 12, 14, 15}));
  const std::vector<double> small{0.1, 0.2, 0.1, 0.1, 0.1, 0.1, 0.1, 0.3};
  // 1.1 s, 2 threads: long >= 0.06875 s (all); the order is by estimate.
  EXPECT_EQ(tail_order(tail, small, 2), (std::vector<std::uint64_t>{17, 11, 10, 12, 13, 14, 15, 16}));
  EXPECT_EQ(tail_order(tail, s, 1), tail);                             // one thread: index order
  EXPECT_EQ(tail_order(tail, std::vector<double>(8, 0.0), 2), tail);   // no estimate
  EXPECT_THROW(tail_order(tail, {1, 2}, 2), Error);
}

// Points whose estimates put them first still reach the sink and the store in
// index order, with the values of a one-thread run.
TEST(SweepRun, LongLastPointsFirstKeepIndexOrderAndValues) {
  SweepSpec spec = spec_of(kSmall);
  const std::uint64_t n = point_count(spec);
  std::vector<double> later_longer(n);
  for (std::uint64_t i = 0; i < n; ++i) later_longer[i] = static_cast<double>(i * i);
  std::vector<std::vector<json>> runs;
  for (int threads : {1, 2, 3}) {
    SweepOptions opts;
    opts.threads = threads;
    opts.point_seconds = later_longer;
    runs.push_back(sweep_records(spec, opts));
  }
  EXPECT_EQ(runs[0], runs[1]);
  EXPECT_EQ(runs[0], runs[2]);
}

// With every point's estimate the ETA weighs the points left by their
// estimates (elapsed x estimated seconds left / estimated seconds done): a
// last point estimated as all the others together 1000 times over is most of
// what is left. Without estimates, the points left at the rate so far.
TEST(SweepRun, EtaWeighsThePointsLeftByTheirEstimates) {
  const std::uint64_t n = 40;
  std::vector<double> estimates(n, 1.0);
  estimates.back() = 1000.0 * static_cast<double>(n - 1);
  for (const bool with : {true, false}) {
    SweepOptions opts;
    opts.batch_points = 1;
    if (with) opts.point_seconds = estimates;
    SweepProgress pr;
    pr.total = n;
    const SweepSink sink;
    sweep_detail::PointWriter writer(nullptr, 0, pr, 0, opts, sink, {});
    int checked = 0;
    for (std::uint64_t i = 0; i + 1 < n; ++i) {
      PointRecord rec;
      rec.index = i;
      writer.add(rec);
      writer.commit();
      std::this_thread::sleep_for(std::chrono::microseconds(200));
      writer.update();
      ASSERT_EQ(pr.done, i + 1);
      ASSERT_GT(pr.elapsed_s, 0);
      const double done_s = static_cast<double>(pr.done);   // every point before the last estimated 1 s
      const double want = with ? pr.elapsed_s * (estimates.back() + static_cast<double>(n - 1) - done_s) / done_s
                               : static_cast<double>(n - pr.done) / pr.rate_points_per_s;
      EXPECT_NEAR(pr.eta_s, want, 1e-9 * want) << "done " << pr.done << (with ? " with" : " without") << " estimates";
      ++checked;
    }
    EXPECT_EQ(checked, static_cast<int>(n - 1));
    // All but the last point done: with the estimates, ~1000x the time so far is left; by the rate, 1/39 of it.
    if (with) EXPECT_GT(pr.eta_s, 999.0 * pr.elapsed_s);
    else EXPECT_LT(pr.eta_s, pr.elapsed_s / 30);
  }
}

// Cancelled while tail points are computed out of index order: the run keeps
// a contiguous prefix (whenever the cancel lands), and a resume completes it
// with the values of a run in one go.
TEST(SweepRun, CancelWithinTheTailKeepsAPrefixAndResumes) {
  SweepSpec spec = spec_of(R"({
    "name": "tail", "base": {"preset": "hgx-h200-8", "engine": "packet",
                             "collective": {"algorithm": "scin", "dtype": "bf16"}},
    "axes": [{"path": "collective.bytes", "values": ["4M", "4M", "1M", "1M", "16M", "1M", "1M", "1M"]}]})");
  const std::uint64_t n = point_count(spec);
  SweepOptions opts;
  opts.threads = 1;
  const std::vector<json> whole = sweep_records(spec, opts);
  ASSERT_EQ(whole.size(), n);

  TempDir dir;
  Store store = Store::open(dir / "tail.scindb", Access::Create);
  {
    std::atomic<bool> cancel{false};
    opts.threads = 2;
    opts.batch_points = 1;
    opts.cancel = &cancel;
    opts.memoise = false;
    // Taken as 4, 0, 1, then 2 3 5 6 7; handed over in index order, so 0-3
    // wait for 4 (the longest), and are dropped when it is cancelled.
    opts.point_seconds = {4, 4, 1, 1, 16, 1, 1, 1};
    std::thread canceller([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(30));
      cancel = true;
    });
    SweepSummary sum = run_sweep(store, spec, opts, SweepSink{});
    canceller.join();
    auto pts = store.points(sum.run_id);
    EXPECT_EQ(pts.size(), sum.progress.done);
    for (std::size_t i = 0; i < pts.size(); ++i) ASSERT_EQ(pts[i].index, i);
    if (sum.status == RunStatus::Cancelled) {
      opts.cancel = nullptr;
      opts.resume_run = sum.run_id;
      sum = run_sweep(store, spec, opts, SweepSink{});
    }
    EXPECT_EQ(sum.status, RunStatus::Done);
    pts = store.points(sum.run_id);
    ASSERT_EQ(pts.size(), n);
    for (std::size_t i = 0; i < n; ++i) {
      ASSERT_EQ(pts[i].index, i);
      const json a = to_json(pts[i]);
      for (const char* k : {"time_us", "status", "busbw_GBps", "sync_ns"})
        EXPECT_EQ(a[k], whole[i][k]) << i << " " << k;
    }
  }
}

TEST(SweepRun, BadThreadCountIsRejected) {
  SweepOptions opts;
  opts.threads = -1;
  EXPECT_THROW(run_sweep(spec_of(kMedium), opts, SweepSink{}), Error);
}

}  // namespace
}  // namespace scin
