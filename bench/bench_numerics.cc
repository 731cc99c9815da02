// Numerics benchmarks: the INT8 block codec kernels and the data engine.
//   BM_Int8QuantReduceDequant: per element of every rank's input, quantise
//     (max-abs, INT8, FP16 scale), dequantise-accumulate in FP32; then quantise
//     and dequantise the sum once (the SCIN INQ data path), single thread.
//     bytes_per_second counts input elements as BF16 (2 bytes each).
//   BM_Int8QuantReduceDequantThreads/<threads>: the same, TBB-parallel, real time.
//   BM_DataEngine/<algo>/<threads>: run_data of a whole schedule (8 ranks),
//     bytes_per_second counts all ranks' input elements as BF16.
//   BM_QuantStudy/<threads>: `scin quant --elements 1M` end to end (run_quant:
//     input generation, all 8 algorithms on hgx-h200-8 with the ISA and INQ,
//     error metrics). bytes_per_second counts the study's input once (8 ranks x
//     2^20 BF16 = 16 MiB); input_per_algorithm counts it once per algorithm.
//   BM_GenerateBf16Inputs/<isa>: generate_bf16_inputs of a study's inputs (8
//     ranks x 2^20, Gaussian; the patterns and the exact sum), one thread, with
//     the generator's instruction set forced (0 portable, 1 AVX2, 2 AVX-512;
//     the CPU's best where it lacks one: the label says which ran).
//     bytes_per_second counts the BF16 patterns made.
#include <cstdint>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>
#include <tbb/global_control.h>
#include <tbb/parallel_for.h>

#include "schedule/algorithms.h"
#include "fabric/preset.h"
#include "numerics/codec.h"
#include "engines/data/data_engine.h"
#include "numerics/inputs.h"
#include "numerics/quant_study.h"

using namespace scin;

namespace {

std::vector<std::vector<float>> bf16_inputs(int ranks, std::uint64_t elems) {
  InputSpec spec;
  auto x = generate_inputs(spec, ranks, elems);
  for (auto& v : x) round_to_format(v, Format::Bf16);
  return x;
}

void BM_Int8QuantReduceDequant(benchmark::State& state) {
  const int ranks = 8;
  const auto elems = static_cast<std::uint64_t>(state.range(0));
  const int g = 32;
  const num::CodecSpec c{Format::Int8Block, g, ScaleFormat::Fp16};
  const auto x = bf16_inputs(ranks, elems);
  std::vector<float> acc(elems), out(elems);
  std::vector<std::uint8_t> codes(elems);
  for (auto _ : state) {
    std::fill(acc.begin(), acc.end(), 0.0f);
    for (int r = 0; r < ranks; ++r) {
      const float* in = x[static_cast<std::size_t>(r)].data();
      for (std::uint64_t b = 0; b < elems; b += g) {
        const float s = num::quantise_block(in + b, g, c, codes.data() + b);
        num::dequantise_add_block(codes.data() + b, g, s, c.format, acc.data() + b);
      }
    }
    for (std::uint64_t b = 0; b < elems; b += g) {
      const float s = num::quantise_block(acc.data() + b, g, c, codes.data() + b);
      num::dequantise_block(codes.data() + b, g, s, c.format, out.data() + b);
    }
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * ranks * static_cast<std::int64_t>(elems) * 2);
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * ranks * static_cast<std::int64_t>(elems));
}
BENCHMARK(BM_Int8QuantReduceDequant)->Arg(1 << 16)->Arg(1 << 20)->Unit(benchmark::kMillisecond);

// The same kernel, TBB-parallel over chunks of 512 blocks, with 1 or 2 threads (2^20 elements per rank).
void BM_Int8QuantReduceDequantThreads(benchmark::State& state) {
  const int threads = static_cast<int>(state.range(0));
  const int ranks = 8;
  const std::uint64_t elems = 1 << 20;
  const std::uint64_t g = 32, chunk = 512 * g;
  const num::CodecSpec c{Format::Int8Block, static_cast<int>(g), ScaleFormat::Fp16};
  const auto x = bf16_inputs(ranks, elems);
  std::vector<float> acc(elems), out(elems);
  std::vector<std::uint8_t> codes(elems * 2);
  tbb::global_control gc(tbb::global_control::max_allowed_parallelism, static_cast<std::size_t>(threads));
  for (auto _ : state) {
    tbb::parallel_for(std::uint64_t{0}, elems / chunk, [&](std::uint64_t k) {
      const std::uint64_t lo = k * chunk, hi = lo + chunk;
      std::fill(acc.begin() + static_cast<std::ptrdiff_t>(lo), acc.begin() + static_cast<std::ptrdiff_t>(hi), 0.0f);
      for (int r = 0; r < ranks; ++r) {
        const float* in = x[static_cast<std::size_t>(r)].data();
        for (std::uint64_t b = lo; b < hi; b += g) {
          const float s = num::quantise_block(in + b, g, c, codes.data() + b);
          num::dequantise_add_block(codes.data() + b, g, s, c.format, acc.data() + b);
        }
      }
      for (std::uint64_t b = lo; b < hi; b += g) {
        const float s = num::quantise_block(acc.data() + b, g, c, codes.data() + elems + b);
        num::dequantise_block(codes.data() + elems + b, g, s, c.format, out.data() + b);
      }
    });
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * ranks * static_cast<std::int64_t>(elems) * 2);
}
BENCHMARK(BM_Int8QuantReduceDequantThreads)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime()->MeasureProcessCPUTime();

void BM_DataEngine(benchmark::State& state, const std::string& algo) {
  const int threads = static_cast<int>(state.range(0));
  const std::uint64_t elems = 1 << 20;
  Config cfg = load_preset("hgx-h200-8");
  cfg.ring.protocol = RingProtocol::Simple;
  cfg.sw.isa.enabled = true;
  cfg.sw.isa.inq = true;
  const Schedule s = compile(cfg, algo, {elems * 2, DType::Bf16});
  const auto x = bf16_inputs(cfg.fabric.gpus, elems);
  tbb::global_control gc(tbb::global_control::max_allowed_parallelism, static_cast<std::size_t>(threads));
  for (auto _ : state) {
    DataResult r = run_data(s, x);
    benchmark::DoNotOptimize(r.outputs.data());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * cfg.fabric.gpus *
                          static_cast<std::int64_t>(elems) * 2);
}
BENCHMARK_CAPTURE(BM_DataEngine, scin_inq, std::string("scin-inq"))->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime()->MeasureProcessCPUTime();
BENCHMARK_CAPTURE(BM_DataEngine, ring_q8, std::string("ring-q8"))->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime()->MeasureProcessCPUTime();
BENCHMARK_CAPTURE(BM_DataEngine, scin, std::string("scin"))->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime()->MeasureProcessCPUTime();
BENCHMARK_CAPTURE(BM_DataEngine, ring, std::string("ring"))->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime()->MeasureProcessCPUTime();

void BM_QuantStudy(benchmark::State& state) {
  const int threads = static_cast<int>(state.range(0));
  Config cfg = load_preset("hgx-h200-8");
  cfg.sw.isa.enabled = true;
  cfg.sw.isa.inq = true;
  QuantRequest req;
  req.elements = 1 << 20;
  tbb::global_control gc(tbb::global_control::max_allowed_parallelism, static_cast<std::size_t>(threads));
  std::size_t algorithms = 0;
  for (auto _ : state) {
    const QuantStudy st = run_quant(cfg, req);
    algorithms = st.rows.size();
    benchmark::DoNotOptimize(st.rows.data());
  }
  const auto input_bytes = static_cast<double>(cfg.fabric.gpus) * static_cast<double>(req.elements) * 2;
  state.SetBytesProcessed(static_cast<std::int64_t>(static_cast<double>(state.iterations()) * input_bytes));
  state.counters["algorithms"] = static_cast<double>(algorithms);
  state.counters["input_per_algorithm"] =
      benchmark::Counter(static_cast<double>(state.iterations()) * input_bytes * static_cast<double>(algorithms),
                         benchmark::Counter::kIsRate, benchmark::Counter::kIs1024);
}
void BM_GenerateBf16Inputs(benchmark::State& state) {
  const int isa = force_generator_isa(static_cast<int>(state.range(0)));
  const int ranks = 8;
  const std::uint64_t elems = 1 << 20;
  tbb::global_control gc(tbb::global_control::max_allowed_parallelism, 1);
  InputSpec spec;
  std::vector<BigVector<std::uint16_t>> bits;
  BigVector<double> exact;
  for (auto _ : state) {
    benchmark::DoNotOptimize(generate_bf16_inputs(spec, ranks, elems, bits, exact));
    benchmark::DoNotOptimize(exact.data());
  }
  force_generator_isa(-1);
  state.SetLabel(isa == 2 ? "avx512" : isa == 1 ? "avx2" : "portable");
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * ranks * static_cast<std::int64_t>(elems) * 2);
}
BENCHMARK(BM_GenerateBf16Inputs)->Arg(0)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond);

BENCHMARK(BM_QuantStudy)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime()->MeasureProcessCPUTime();

}  // namespace
