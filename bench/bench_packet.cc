// Speed of the packet engine (Google Benchmark).
//
// Counters: events/s = pops from the event heap per CPU second; hops/s =
// packet serialisations per CPU second (one packet on one link); CPU time per
// event = 1 / (events/s). Targets (issue 14): >= 30 M events/s on one core on the
// 8-GPU ring, >= 20 M on NVLS and SCIN; per-event cost flat within 1.5x from 8
// to 1024 GPUs (the BM_*Gpus cases; see docs/performance.md for the measured
// figures). Run: build/bench/bench_packet --benchmark_filter=...
#include <benchmark/benchmark.h>

#include "schedule/algorithms.h"
#include "fabric/params.h"
#include "fabric/preset.h"
#include "engines/packet/event_queue.h"
#include "engines/packet/packet_engine.h"

namespace {

using namespace scin;

void run_case(benchmark::State& state, const char* preset, const char* algo, std::uint64_t bytes,
              std::uint64_t payload, int gpus = 0) {
  Config cfg = load_preset(preset);
  cfg.packet.payload_bytes = payload;
  if (gpus > 0) cfg.fabric.gpus = gpus;
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

// Per-event cost against fabric size (hgx-h200-8 with fabric.gpus = N): the
// message shrinks as N grows (32 MiB x 8 / N per rank) so every case simulates
// a few million events.
std::uint64_t scaled_bytes(std::int64_t gpus) { return (32ull << 20) * 8 / static_cast<std::uint64_t>(gpus); }
void BM_RingGpus(benchmark::State& st) {
  run_case(st, "hgx-h200-8", "ring", scaled_bytes(st.range(0)), 256, static_cast<int>(st.range(0)));
}
void BM_NvlsGpus(benchmark::State& st) {
  run_case(st, "hgx-h200-8", "nvls", scaled_bytes(st.range(0)), 256, static_cast<int>(st.range(0)));
}
void BM_ScinGpus(benchmark::State& st) {
  run_case(st, "hgx-h200-8", "scin", scaled_bytes(st.range(0)), 256, static_cast<int>(st.range(0)));
}
BENCHMARK(BM_RingGpus)->Unit(benchmark::kMillisecond)->Arg(8)->Arg(64)->Arg(256);
BENCHMARK(BM_NvlsGpus)->Unit(benchmark::kMillisecond)->Arg(8)->Arg(64)->Arg(256);
BENCHMARK(BM_ScinGpus)->Unit(benchmark::kMillisecond)->Arg(8)->Arg(64)->Arg(256);

// The event heap alone, at the pending-set size an 8-GPU, 4-plane run keeps (~100).
void BM_EventQueue(benchmark::State& state) {
  packet::EventQueue q;
  const auto pending = static_cast<std::uint32_t>(state.range(0));
  packet::Ps t = 0;
  for (std::uint32_t i = 0; i < pending; ++i) q.push(t + 370 * i, i);
  for (auto _ : state) {
    const packet::Event e = q.pop();
    t = e.t;
    q.push(t + 1000 + 13 * (e.target() % 97), e.target());
  }
  state.counters["events/s"] = benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_EventQueue)->Arg(16)->Arg(128)->Arg(1024)->Arg(4096);

// The queue under the engine's own pattern: components in lock step, each
// popped one re-scheduled one packet time (2417 ps) later, so all pending
// events share two or three times (ring and SCIN keep 2-4 distinct times
// pending at every fabric size; BM_EventQueue's all-distinct times are the
// per-time FIFOs' worst case).
void BM_EventQueueLockstep(benchmark::State& state) {
  packet::EventQueue q;
  const auto pending = static_cast<std::uint32_t>(state.range(0));
  for (std::uint32_t i = 0; i < pending; ++i) q.push(0, i);
  for (auto _ : state) {
    const packet::Event e = q.pop();
    q.push(e.t + 2417, e.target());
  }
  state.counters["events/s"] = benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_EventQueueLockstep)->Arg(64)->Arg(1024)->Arg(4096);

}  // namespace
