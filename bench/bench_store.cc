// Benchmarks of the experiment database and the sweep runner.
//   BM_InsertPoints      batched inserts (one transaction per 8192 points); target >= 200,000 points/s
//   BM_Sweep/T           a 2,424-point collective sweep on T threads, no database (compute + pipeline)
//   BM_SweepToDb/T       the same sweep written to a .scindb file
// Scaling = items_per_second(T=2) / items_per_second(T=1); target >= 1.7x on 2 cores.
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>

#include <filesystem>
#include <string>

#include <benchmark/benchmark.h>

#include "store/store.h"
#include "sweep/sweep.h"

namespace {

using namespace scin;

std::filesystem::path temp_db(const std::string& name) {
  auto p = std::filesystem::temp_directory_path() / (name + "-" + std::to_string(::getpid()) + ".scindb");
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(p.string() + suffix);
  return p;
}

void remove_db(const std::filesystem::path& p) {
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(p.string() + suffix);
}

// Process CPU time (all threads), seconds.
double process_cpu_s() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         1e-6 * static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

// Counters that survive a loaded machine: CPU time per point (flat if the
// runner adds no parallel overhead) and the cores the process actually got.
struct CpuMeter {
  double cpu0 = process_cpu_s();
  std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();
  void report(benchmark::State& state, std::uint64_t points) const {
    const double cpu = process_cpu_s() - cpu0;
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    state.counters["cpu_us_per_point"] = points ? 1e6 * cpu / static_cast<double>(points) : 0;
    state.counters["cores_used"] = wall > 0 ? cpu / wall : 0;
  }
};

PointRecord sample_point(std::uint64_t i) {
  PointRecord p;
  p.index = i;
  p.axes = {{"collective.algorithm", "ring"}, {"collective.bytes", 1024 * (i % 64 + 1)}, {"links.latency_ns", i % 200}};
  p.algorithm = "ring";
  p.variant = "LL";
  p.dtype = "bf16";
  p.bytes = 1024 * (i % 64 + 1);
  p.gpus = 8;
  p.engine = "analytic";
  p.time_us = 12.5 + static_cast<double>(i) * 1e-3;
  p.algbw_GBps = 100.0 / 3.0;
  p.busbw_GBps = 175.0 / 3.0;
  p.max_link_bytes = 1792.0 * static_cast<double>(i % 64 + 1);
  for (int t = 0; t < static_cast<int>(Term::Count); ++t) p.breakdown.ns[t] = 100.0 * t + 0.5;
  return p;
}

void BM_InsertPoints(benchmark::State& state) {
  const std::size_t batch = 8192;
  std::vector<PointRecord> pts;
  for (std::size_t i = 0; i < batch; ++i) pts.push_back(sample_point(i));
  auto path = temp_db("bench-insert");
  {
    Store store = Store::open(path, Access::Create);
    std::int64_t run = store.begin_run(RunStart{});
    std::uint64_t next = 0;
    for (auto _ : state) {
      for (auto& p : pts) p.index = next++;
      store.append_points(run, pts);
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * batch));
  }
  remove_db(path);
}
BENCHMARK(BM_InsertPoints)->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(2.0);

SweepSpec bench_spec() {
  return sweep_spec_from_json(nlohmann::json::parse(R"({
    "name": "bench", "base": {"preset": "hgx-h200-8", "collective": {"dtype": "bf16"}},
    "axes": [
      {"path": "collective.algorithm", "values": ["ring", "two-shot", "nvls"]},
      {"path": "collective.bytes", "range": {"min": "1K", "max": "16M", "factor": 4}},
      {"path": "links.latency_ns", "range": {"min": 50, "max": 250, "step": 2}}
    ]})"));
}

void BM_Sweep(benchmark::State& state) {
  SweepSpec spec = bench_spec();
  SweepOptions opts;
  opts.threads = static_cast<int>(state.range(0));
  std::uint64_t points = 0;
  CpuMeter meter;
  for (auto _ : state) points += run_sweep(spec, opts, SweepSink{}).progress.done;
  meter.report(state, points);
  state.SetItemsProcessed(static_cast<std::int64_t>(points));
}
BENCHMARK(BM_Sweep)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(3.0);

void BM_SweepToDb(benchmark::State& state) {
  SweepSpec spec = bench_spec();
  SweepOptions opts;
  opts.threads = static_cast<int>(state.range(0));
  auto path = temp_db("bench-sweep");
  std::uint64_t points = 0;
  {
    Store store = Store::open(path, Access::Create);
    CpuMeter meter;
    for (auto _ : state) points += run_sweep(store, spec, opts, SweepSink{}).progress.done;
    meter.report(state, points);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(points));
  remove_db(path);
}
BENCHMARK(BM_SweepToDb)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(3.0);

}  // namespace
