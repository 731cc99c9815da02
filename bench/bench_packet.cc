// Speed of the packet engine (Google Benchmark).
//
// Counters: events/s = pops from the event heap per CPU second; hops/s =
// packet serialisations per CPU second (one packet on one link). Targets from
// the issue: >= 20 M events/s on one core; an 8-GPU 1 GiB SCIN All-Reduce at the
// default 256 B packets in < 2 s (see docs/performance.md for
// the measured figures). Run: build/bench/bench_packet --benchmark_filter=...
#include <benchmark/benchmark.h>

#include "schedule/algorithms.h"
#include "fabric/params.h"
#include "fabric/preset.h"
#include "engines/packet/event_queue.h"
#include "engines/packet/packet_engine.h"

namespace {

using namespace scin;

void run_case(benchmark::State& state, const char* preset, const char* algo, std::uint64_t bytes,
              std::uint64_t payload) {
  Config cfg = load_preset(preset);
  cfg.packet.payload_bytes = payload;
  if (cfg.ring.protocol == RingProtocol::Auto) cfg.ring.protocol = RingProtocol::Simple;
  const Schedule s = compile(cfg, algo, Collective{bytes, DType::Bf16});
  std::uint64_t events = 0, hops = 0;
  double sim_ns = 0;
  for (auto _ : state) {
    packet::Run r = packet::run(cfg, s);
    events += r.stats.events;
    hops += r.stats.packet_hops;
    sim_ns = r.result.time_ns;
    benchmark::ClobberMemory();
  }
  state.counters["events/s"] = benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
  state.counters["hops/s"] = benchmark::Counter(static_cast<double>(hops), benchmark::Counter::kIsRate);
  state.counters["events"] = static_cast<double>(events) / static_cast<double>(state.iterations());
  state.counters["sim_us"] = benchmark::Counter(sim_ns / 1e3);
}

// 8x H200, 4 planes, SCIN: the reference case at 64 MiB, and at 1 GiB.
void BM_Scin64MiB_256B(benchmark::State& st) { run_case(st, "hgx-h200-8", "scin", 64ull << 20, 256); }
void BM_Scin1GiB_4KiB(benchmark::State& st) { run_case(st, "hgx-h200-8", "scin", 1ull << 30, 4096); }
void BM_Scin1GiB_256B(benchmark::State& st) { run_case(st, "hgx-h200-8", "scin", 1ull << 30, 256); }
void BM_Scin1MiB_256B(benchmark::State& st) { run_case(st, "hgx-h200-8", "scin", 1ull << 20, 256); }
void BM_Ring64MiB_256B(benchmark::State& st) { run_case(st, "hgx-h200-8", "ring", 64ull << 20, 256); }
void BM_Nvls64MiB_256B(benchmark::State& st) { run_case(st, "hgx-h200-8", "nvls", 64ull << 20, 256); }

BENCHMARK(BM_Scin64MiB_256B)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Scin1GiB_4KiB)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Scin1GiB_256B)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_Scin1MiB_256B)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Ring64MiB_256B)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Nvls64MiB_256B)->Unit(benchmark::kMillisecond);

// The event heap alone, at the pending-set size an 8-GPU, 4-plane run keeps (~100).
void BM_EventQueue(benchmark::State& state) {
  packet::EventQueue q;
  const auto pending = static_cast<std::uint32_t>(state.range(0));
  double t = 0;
  for (std::uint32_t i = 0; i < pending; ++i) q.push(t + 0.37 * i, i);
  for (auto _ : state) {
    const packet::Event e = q.pop();
    t = e.t_ns;
    q.push(t + 1.0 + 0.013 * (e.target() % 97), e.target());
  }
  state.counters["events/s"] = benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_EventQueue)->Arg(16)->Arg(128)->Arg(1024);

}  // namespace
