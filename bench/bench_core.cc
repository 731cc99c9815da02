// Analytic engine speed: compile + evaluate one All-Reduce, the unit of work
// behind every point of `scin run`, a sweep and the GUI's live preview.
#include <algorithm>

#include <benchmark/benchmark.h>

#include "engines/analytic/analytic.h"
#include "fabric/params.h"
#include "fabric/preset.h"
#include "engines/simulate.h"
#include "schedule/algorithms.h"
#include "schedule/compile_options.h"

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
void BM_EstimatePacket(benchmark::State& state, const char* algo, const char* preset = "hgx-h200-8") {
  scin::Config cfg = scin::load_preset(preset);
  const auto bytes = static_cast<std::uint64_t>(state.range(0));
  const scin::Algorithm id = scin::parse_algorithm(algo);
  double events = 0;
  for (auto _ : state) {
    const scin::WorkEstimate w = scin::estimate(cfg, id, {bytes, scin::DType::Bf16}, scin::EngineId::Packet);
    events = w.amount;
    // (On the struct's address: DoNotOptimize on a double itself left garbage in the counter.)
    benchmark::DoNotOptimize(&w);
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

// Scaling in GPUs: one 1 GiB point (compile + evaluate) on hgx-h200-8 with
// fabric.gpus = state.range(0). Target: linear in GPUs, < 100 ms at 1024.
void BM_AnalyticScale(benchmark::State& state, const char* algo) {
  scin::Config cfg = scin::load_preset("hgx-h200-8");
  cfg.fabric.gpus = static_cast<int>(state.range(0));
  const std::uint64_t bytes = std::uint64_t{1} << 30;
  for (auto _ : state) benchmark::DoNotOptimize(scin::simulate(cfg, algo, {bytes, scin::DType::Bf16}).time_ns);
  state.counters["gpus"] = static_cast<double>(state.range(0));
}

// Small messages at scale (issue 14): state.range(1) bytes, fewer blocks than
// GPUs, so the ring's and ring-q8's chunks come in two sizes (most of them
// empty); on a star, every rank's launch alike.
void BM_AnalyticScaleSmall(benchmark::State& state, const char* algo) {
  scin::Config cfg = scin::load_preset("hgx-h200-8");
  cfg.fabric.gpus = static_cast<int>(state.range(0));
  const auto bytes = static_cast<std::uint64_t>(state.range(1));
  for (auto _ : state) benchmark::DoNotOptimize(scin::simulate(cfg, algo, {bytes, scin::DType::Bf16}).time_ns);
  state.counters["gpus"] = static_cast<double>(state.range(0));
}

// Schedule compilation alone (the IR every engine consumes), 1 GiB.
void BM_Compile(benchmark::State& state, const char* algo) {
  scin::Config cfg = scin::load_preset("hgx-h200-8");
  cfg.fabric.gpus = static_cast<int>(state.range(0));
  if (cfg.ring.protocol == scin::RingProtocol::Auto) cfg.ring.protocol = scin::RingProtocol::Simple;
  const scin::Algorithm id = scin::parse_algorithm(algo);
  const std::uint64_t bytes = std::uint64_t{1} << 30;
  std::size_t steps = 0;
  for (auto _ : state) {
    steps = scin::compile(cfg, id, {bytes, scin::DType::Bf16}).steps.size();
    benchmark::DoNotOptimize(steps);
  }
  state.counters["steps"] = static_cast<double>(steps);
}

// Two tiers (issue 14/16): one point on nvl576-style (36 GPUs per leaf, 18
// planes) at fabric.gpus = state.range(0) (leaves = gpus / 36), message size
// state.range(1). Planes alike are costed once; target: a 1024-GPU point well
// under a second (docs/performance.md section 8).
// `leaves` > 0 sets the leaves (and 128-port switches), e.g. 1024 GPUs on 32 leaves.
void BM_AnalyticTwoTier(benchmark::State& state, const char* algo, int leaves = 0) {
  scin::Config cfg = scin::load_preset("nvl576-style");
  cfg.fabric.gpus = static_cast<int>(state.range(0));
  cfg.fabric.leaves = std::max(1, cfg.fabric.gpus / 36);
  if (leaves > 0) {
    scin::set_param(cfg, "fabric.leaves", leaves);
    scin::set_param(cfg, "switch.ports", 128);
  }
  const auto bytes = static_cast<std::uint64_t>(state.range(1));
  for (auto _ : state) benchmark::DoNotOptimize(scin::simulate(cfg, algo, {bytes, scin::DType::Bf16}).time_ns);
  state.counters["gpus"] = static_cast<double>(state.range(0));
}

// hgx-h200-8 made two-tier at 1024 GPUs (16 leaves x 8 spines, 128-port
// switches), 1 GiB: the preset of issue 14's second "< 100 ms" row.
void BM_AnalyticH200TwoTier(benchmark::State& state, const char* algo) {
  scin::Config cfg = scin::load_preset("hgx-h200-8");
  scin::set_param(cfg, "fabric.gpus", 1024);
  scin::set_param(cfg, "fabric.topology", "two-tier");
  scin::set_param(cfg, "fabric.leaves", 16);
  scin::set_param(cfg, "fabric.spines", 8);
  scin::set_param(cfg, "switch.ports", 128);
  for (auto _ : state)
    benchmark::DoNotOptimize(scin::simulate(cfg, algo, {std::uint64_t{1} << 30, scin::DType::Bf16}).time_ns);
}

// The ring as the analytic engine booked it before ranks alike (issue 14/16):
// compile (Simple) and book every step once, fabric.gpus = state.range(0),
// 1 GiB on hgx-h200-8 (range(1) = 0) or 1 MiB on nvl576-style with 32 leaves
// (range(1) = 1). simulate() does less work than this (BM_AnalyticScale,
// BM_AnalyticTwoTier): it answers from run_analytic_ring.
void BM_RingBooked(benchmark::State& state) {
  const bool two_tier = state.range(1) != 0;
  scin::Config cfg = scin::load_preset(two_tier ? "nvl576-style" : "hgx-h200-8");
  scin::set_param(cfg, "fabric.gpus", static_cast<double>(state.range(0)));
  if (two_tier) {
    scin::set_param(cfg, "fabric.leaves", 32);
    scin::set_param(cfg, "switch.ports", 128);
  } else {
    scin::set_param(cfg, "switch.ports", std::max<double>(64, static_cast<double>(state.range(0))));
  }
  cfg.ring.protocol = scin::RingProtocol::Simple;
  const scin::Collective coll{two_tier ? std::uint64_t{1} << 20 : std::uint64_t{1} << 30, scin::DType::Bf16};
  for (auto _ : state)
    benchmark::DoNotOptimize(scin::run_analytic(cfg, scin::compile(cfg, scin::Algorithm::Ring, coll)).time_ns);
}

}  // namespace

BENCHMARK(BM_RingBooked)->Args({64, 0})->Args({256, 0})->Args({1024, 0})->Args({1024, 1})->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_AnalyticScale, ring, "ring")->Arg(8)->Arg(64)->Arg(256)->Arg(1024)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_AnalyticScaleSmall, ring, "ring")->Args({256, 8})->Args({1024, 8})->Args({1024, 1024})->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_AnalyticScaleSmall, ring_q8, "ring-q8")
    ->Args({256, 8})
    ->Args({1024, 8})
    ->Args({256, 1024})
    ->Args({1024, 1024})
    ->Args({1024, 16384})
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_AnalyticScale, nvls, "nvls")->Arg(8)->Arg(64)->Arg(256)->Arg(1024)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_AnalyticScale, scin, "scin")->Arg(8)->Arg(64)->Arg(256)->Arg(1024)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_AnalyticScale, scin_inq, "scin-inq")->Arg(8)->Arg(64)->Arg(256)->Arg(1024)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_AnalyticScale, one_shot, "one-shot")->Arg(8)->Arg(64)->Arg(256)->Arg(1024)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_AnalyticScale, two_shot, "two-shot")->Arg(8)->Arg(64)->Arg(256)->Arg(1024)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_AnalyticScale, two_shot_q8, "two-shot-q8")->Arg(8)->Arg(64)->Arg(256)->Arg(1024)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_AnalyticScale, ring_q8, "ring-q8")->Arg(8)->Arg(64)->Arg(256)->Arg(1024)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Compile, ring, "ring")->Arg(8)->Arg(64)->Arg(256)->Arg(1024)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Compile, nvls, "nvls")->Arg(8)->Arg(64)->Arg(256)->Arg(1024)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Compile, scin, "scin")->Arg(8)->Arg(64)->Arg(256)->Arg(1024)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Analytic, ring, "ring")->Arg(8)->Arg(1 << 20)->Arg(1 << 30)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Analytic, nvls, "nvls")->Arg(8)->Arg(1 << 20)->Arg(1 << 30)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Analytic, scin, "scin")->Arg(8)->Arg(1 << 20)->Arg(1 << 30)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Analytic, scin_inq, "scin-inq")->Arg(8)->Arg(1 << 20)->Arg(1 << 30)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_EstimatePacket, nvls, "nvls")->Arg(1 << 20)->Arg(1 << 30)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_EstimatePacket, scin, "scin")->Arg(1 << 20)->Arg(1 << 30)->Unit(benchmark::kMicrosecond);
// Two tiers, 72 GPUs (docs/performance.md section 112: NVLS's chunks costed once by their shape).
BENCHMARK_CAPTURE(BM_EstimatePacket, nvls_nvl36x2, "nvls", "nvl36x2")->Arg(16 << 20)->Arg(1 << 30)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_EstimatePacket, two_shot_nvl36x2, "two-shot", "nvl36x2")->Arg(16 << 20)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_DefaultRun)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_AnalyticTwoTier, ring, "ring")->Args({72, 1 << 20})->Args({576, 1 << 20})->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_AnalyticTwoTier, ring_32_leaves, "ring", 32)->Args({1024, 1 << 20})->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_AnalyticTwoTier, nvls, "nvls")->Args({72, 256 << 20})->Args({576, 256 << 20})->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_AnalyticTwoTier, two_shot, "two-shot")->Args({72, 1 << 30})->Args({576, 1 << 30})->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_AnalyticTwoTier, one_shot_32_leaves, "one-shot", 32)->Args({1024, 1 << 30})->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_AnalyticTwoTier, two_shot_32_leaves, "two-shot", 32)->Args({1024, 1 << 30})->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_AnalyticTwoTier, ring_q8, "ring-q8")->Args({72, 1 << 20})->Args({576, 1 << 20})->Args({576, 1 << 30})->Unit(benchmark::kMillisecond);
// The 1 GiB points of issue 14's "< 100 ms at 1024 GPUs" on 32 leaves (in one process: no restart with the heap on huge pages).
BENCHMARK_CAPTURE(BM_AnalyticTwoTier, ring_q8_32_leaves, "ring-q8", 32)->Args({1024, 1 << 30})->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_AnalyticTwoTier, nvls_32_leaves, "nvls", 32)->Args({1024, 1 << 30})->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_AnalyticTwoTier, scin_32_leaves, "scin", 32)->Args({1024, 1 << 30})->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_AnalyticTwoTier, scin_inq_32_leaves, "scin-inq", 32)->Args({1024, 1 << 30})->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_AnalyticH200TwoTier, one_shot, "one-shot")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_AnalyticH200TwoTier, two_shot, "two-shot")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_AnalyticH200TwoTier, two_shot_q8, "two-shot-q8")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_AnalyticH200TwoTier, ring_q8, "ring-q8")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_AnalyticH200TwoTier, scin, "scin")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_AnalyticH200TwoTier, scin_inq, "scin-inq")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_AnalyticH200TwoTier, scin_inq_uplink, "scin-inq-uplink")->Unit(benchmark::kMillisecond);

// ---------------------------------------------------------------- issue 14: small points at 8 GPUs
// One point (simulate() on the analytic engine: compile + evaluate) of every
// algorithm of hgx-h200-8 at 8 B, 64 KiB, 1 MiB, 64 MiB and 1 GiB per rank.
// Target (issue 14): <= 50 us CPU per point (docs/performance.md section 14).
namespace {
void BM_Point8(benchmark::State& state, const char* algo) {
  const scin::Config cfg = scin::load_preset("hgx-h200-8");
  const scin::Algorithm id = scin::parse_algorithm(algo);
  const scin::Collective coll{static_cast<std::uint64_t>(state.range(0)), scin::DType::Bf16};
  for (auto _ : state) benchmark::DoNotOptimize(scin::simulate(cfg, id, coll, scin::EngineId::Analytic).time_ns);
}
}  // namespace
#define SCIN_POINT8(name, algo)                                                                          \
  BENCHMARK_CAPTURE(BM_Point8, name, algo)->Arg(8)->Arg(64 << 10)->Arg(1 << 20)->Arg(64 << 20)->Arg(1 << 30) \
      ->Unit(benchmark::kMicrosecond)
SCIN_POINT8(ring, "ring");
SCIN_POINT8(one_shot, "one-shot");
SCIN_POINT8(two_shot, "two-shot");
SCIN_POINT8(nvls, "nvls");
SCIN_POINT8(scin, "scin");
SCIN_POINT8(scin_inq, "scin-inq");
SCIN_POINT8(ring_q8, "ring-q8");
SCIN_POINT8(two_shot_q8, "two-shot-q8");

// ---------------------------------------------------------------- issue 14: compiling alone at 8 GPUs
// What BM_Point8 spends compiling: compile() without labels, as simulate()
// compiles for the analytic engine (the ring with LL; ring and ring-q8 without
// their analytic timing). The rest of a BM_Point8 point is the engine.
namespace {
void BM_Compile8(benchmark::State& state, const char* algo) {
  scin::Config cfg = scin::load_preset("hgx-h200-8");
  if (cfg.ring.protocol == scin::RingProtocol::Auto) cfg.ring.protocol = scin::RingProtocol::LL;
  const scin::Algorithm id = scin::parse_algorithm(algo);
  const scin::Collective coll{static_cast<std::uint64_t>(state.range(0)), scin::DType::Bf16};
  const scin::CompileOptions opt{false};
  for (auto _ : state) benchmark::DoNotOptimize(scin::compile(cfg, id, coll, {}, opt).steps.size());
}
}  // namespace
#define SCIN_COMPILE8(name, algo) \
  BENCHMARK_CAPTURE(BM_Compile8, name, algo)->Arg(8)->Arg(1 << 20)->Arg(64 << 20)->Unit(benchmark::kMicrosecond)
SCIN_COMPILE8(ring, "ring");
SCIN_COMPILE8(one_shot, "one-shot");
SCIN_COMPILE8(two_shot, "two-shot");
SCIN_COMPILE8(nvls, "nvls");
SCIN_COMPILE8(scin, "scin");
SCIN_COMPILE8(scin_inq, "scin-inq");
SCIN_COMPILE8(ring_q8, "ring-q8");
SCIN_COMPILE8(two_shot_q8, "two-shot-q8");
