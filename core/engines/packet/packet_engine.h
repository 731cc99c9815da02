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
//
// The engine is built from components (this folder): time.h (integer ps),
// event_queue.h, link.h (wire, sender, link), input_port.h (credits),
// output_queue.h, isa.h (ISA buffer and request ports), timeline.h, stats.h
// (typed statistics), wired by engine.h: engine.cc (steps, flows, event loop),
// sender.cc (an accelerator's link), switch.cc (input ports, output queues,
// multicast), reads.cc (ISA, NVLS and accelerator reads), report.cc (results).
#pragma once

#include <cstdint>
#include <vector>

#include "base/run_context.h"
#include "engines/packet/stats.h"
#include "fabric/config.h"
#include "model/cost_model.h"
#include "model/result.h"
#include "schedule/schedule.h"

namespace scin {

/// Runs `s` on `cfg` at packet level. SimResult.extra holds the packet
/// statistics as JSON (to_json(Stats)). Throws Error on bad input; polls
/// ctx.stop every 4096 events (throws Cancelled) and reports the fraction of
/// steps done to ctx.progress.
SimResult run_packet_sim(const Config& cfg, const Schedule& s, const RunContext& ctx = {});

namespace packet {

struct Run {
  SimResult result;
  std::vector<StepTiming> steps;   // start (deps met) and finish of every step
  Stats stats;                     // typed: events, per-link bytes and busy time, port peaks, ISA, timeline
};

/// The engine proper; run_packet_sim() returns run(cfg, s).result.
Run run(const Config& cfg, const Schedule& s, const RunContext& ctx = {});

}  // namespace packet
}  // namespace scin
