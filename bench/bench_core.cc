// Analytic engine speed: compile + evaluate one All-Reduce, the unit of work
// behind every point of `scin run`, a sweep and the GUI's live preview.
#include <benchmark/benchmark.h>

#include "fabric/preset.h"
#include "engines/simulate.h"

namespace {

void BM_Analytic(benchmark::State& state, const char* algo) {
  scin::Config cfg = scin::load_preset("hgx-h200-8");
  const auto bytes = static_cast<std::uint64_t>(state.range(0));
  const scin::Algorithm id = scin::parse_algorithm(algo);
  const std::size_t steps = scin::schedule_for(cfg, id, {bytes, scin::DType::Bf16}).steps.size();
  for (auto _ : state) benchmark::DoNotOptimize(scin::simulate(cfg, algo, {bytes, scin::DType::Bf16}).time_ns);
  state.counters["steps"] = static_cast<double>(steps);
  state.counters["points/s"] = benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}

// What a caller pays to learn a run's cost before starting it (compile + estimate).
void BM_EstimatePacket(benchmark::State& state, const char* algo) {
  scin::Config cfg = scin::load_preset("hgx-h200-8");
  const auto bytes = static_cast<std::uint64_t>(state.range(0));
  const scin::Algorithm id = scin::parse_algorithm(algo);
  double events = 0;
  for (auto _ : state) {
    events = scin::estimate(cfg, id, {bytes, scin::DType::Bf16}, scin::EngineId::Packet).amount;
    benchmark::DoNotOptimize(events);
  }
  state.counters["events"] = events;
}

void BM_DefaultRun(benchmark::State& state) {
  // Everything `scin run` computes by default: 28 sizes x every algorithm of hgx-h200-8.
  scin::Config cfg = scin::load_preset("hgx-h200-8");
  auto sizes = scin::size_range(8, 1ull << 30, 2);
  auto algos = scin::supported_algorithms(cfg);
  for (auto _ : state)
    for (auto s : sizes)
      for (const auto& a : algos) benchmark::DoNotOptimize(scin::simulate(cfg, a, {s, scin::DType::Bf16}).time_ns);
  state.counters["points"] = static_cast<double>(sizes.size() * algos.size());
}

}  // namespace

BENCHMARK_CAPTURE(BM_Analytic, ring, "ring")->Arg(8)->Arg(1 << 20)->Arg(1 << 30)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Analytic, nvls, "nvls")->Arg(8)->Arg(1 << 20)->Arg(1 << 30)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Analytic, scin, "scin")->Arg(8)->Arg(1 << 20)->Arg(1 << 30)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Analytic, scin_inq, "scin-inq")->Arg(8)->Arg(1 << 20)->Arg(1 << 30)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_EstimatePacket, nvls, "nvls")->Arg(1 << 20)->Arg(1 << 30)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_EstimatePacket, scin, "scin")->Arg(1 << 20)->Arg(1 << 30)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_DefaultRun)->Unit(benchmark::kMillisecond);
