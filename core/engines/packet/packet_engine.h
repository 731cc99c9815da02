// The packet-level discrete-event engine.
//
// It executes the same Schedule the analytic engine gets (no algorithm is
// defined twice): Launch / Signal / Wait / Compute steps and local copies are
// charged with the shared cost model's step_cost() (fixed overheads, latencies,
// HBM and in-switch unit occupancy), while every Write and Read that crosses
// the fabric is split into packets that meet on links, in switch port queues,
// in the NVLS reducer and in the SCIN in-switch accelerator (ISA):
//   - links serialise (payload + header) at their raw rate plus a per-packet gap
//     that spends what is left of links.efficiency, and add links.latency_ns;
//   - a switch input port holds packets until every output queue they go to has
//     room (credit-based back-pressure: the sender may start a packet only if
//     the input port has room for it; packet.port_buffer_bytes per port and per
//     virtual channel: read responses and writes have separate FIFOs and credits);
//     multicast is replicated in the switch and stalls on its fullest port;
//     cut-through by default, store-and-forward selectable;
//   - remote reads: request (control message: latency only; an accelerator keeps
//     at most a bandwidth-delay product of requests outstanding), memory latency
//     (requests answered in arrival order), response packets; NVLS ld_reduce sums the responses in the switch and
//     returns the sum to the issuer; the ISA reads every accelerator with at most
//     switch.isa.max_outstanding_bytes in flight per port, stages responses in
//     switch.isa.buffer_bytes, reduces at switch.isa.reduce_GBps (and the INQ
//     unit's rate for quantised data), with regulation none|paced.
// See docs/model.md (section 4) for the equations and what each knob means.
#pragma once

#include <cstdint>
#include <vector>

#include "base/run_context.h"
#include "fabric/config.h"
#include "model/cost_model.h"
#include "model/result.h"
#include "schedule/schedule.h"

namespace scin {

/// Runs `s` on `cfg` at packet level. SimResult.extra holds the packet
/// statistics (events, per-link bytes and busy time, peak queue depth per
/// switch port, ISA buffer high-water mark, optional timeline). Throws Error
/// on bad input; polls ctx.stop every 4096 events (throws Cancelled) and
/// reports the fraction of steps done to ctx.progress.
SimResult run_packet_sim(const Config& cfg, const Schedule& s, const RunContext& ctx = {});

namespace packet {

/// Everything the engine measured, for tests, benchmarks and `scin bench`.
struct Stats {
  std::uint64_t events = 0;        // events popped from the event heap (including stale ones)
  std::uint64_t stale_events = 0;  // of which superseded wake-ups that did nothing
  std::uint64_t packet_hops = 0;   // packet serialisations on links (one per packet per link)
  std::uint64_t packets = 0;       // packets created (each read response, write packet, reduced result)
  std::uint64_t peak_pending = 0;  // largest number of events waiting in the heap
  double wall_s = 0;               // wall time of the event loop and set-up
  double cpu_s = 0;                // CPU time of this thread over the same span (honest on a loaded machine)
};

struct Run {
  SimResult result;
  std::vector<StepTiming> steps;   // start (deps met) and finish of every step
  Stats stats;
};

/// The engine proper; run_packet_sim() returns run(cfg, s).result.
Run run(const Config& cfg, const Schedule& s, const RunContext& ctx = {});

}  // namespace packet
}  // namespace scin
