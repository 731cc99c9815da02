// Tests of the packet-level engine: agreement with the analytic engine on
// uncontended cases, byte conservation, Little's Law, regulation and
// back-pressure, store-and-forward closed form, determinism and bad input.
// Sizes and packet payloads are chosen to keep the whole file to a few seconds.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <atomic>
#include <chrono>
#include <stop_token>
#include <thread>
#include <vector>

#include "schedule/algorithms.h"
#include "base/cancel.h"
#include "engines/analytic/analytic.h"
#include "base/error.h"
#include "fabric/params.h"
#include "fabric/preset.h"
#include "engines/packet/engine.h"
#include "engines/packet/packet_engine.h"
#include "engines/packet/stats.h"
#include "engines/simulate.h"
#include "model/cost_model.h"

namespace scin {
namespace {

Config preset(const std::string& name, std::initializer_list<const char*> sets = {}) {
  Config c = load_preset(name);
  for (const char* s : sets) apply_assignment(c, s);
  return c;
}

Schedule sched(const Config& c, const std::string& algo, std::uint64_t bytes) {
  return compile(c, algo, Collective{bytes, DType::Bf16});
}

double analytic_ns(const Config& c, const Schedule& s) { return run_analytic(c, s).time_ns; }

// ---------------------------------------------------------------- agreement

struct Case {
  const char* preset;
  const char* algo;
  const char* protocol;  // ring only
};

// Cases where no two steps compete for a link at the same time in a way the
// analytic engine's whole-step reservation orders differently from packets.
const Case kUncontended[] = {
    {"hgx-h200-8", "ring", "ring.protocol=simple"}, {"hgx-h200-8", "ring", "ring.protocol=ll"},
    {"hgx-h200-8", "ring", "ring.protocol=ll128"},  {"hgx-h200-8", "two-shot", nullptr},
    {"hgx-h200-8", "one-shot", nullptr},            {"hgx-h200-8", "scin", nullptr},
    {"hgx-h200-8", "ring-q8", nullptr},             {"hgx-h200-8", "two-shot-q8", nullptr},
    {"hgx-b200-8", "scin", nullptr},                {"hgx-b200-8", "two-shot", nullptr},
    {"mesh-8", "ring", "ring.protocol=simple"},     {"mesh-8", "two-shot", nullptr},
    {"scin-fpga-4", "scin", nullptr},
};

TEST(PacketAgreement, LargeMessagesWithinTwoPercent) {
  for (const Case& k : kUncontended) {
    // Coarse packets keep the test fast; full packets cost exactly payload / rate
    // at any payload size, so agreement does not depend on it.
    Config c = preset(k.preset, {"packet.payload_bytes=4096", "packet.port_buffer_bytes=1M"});
    if (k.protocol) apply_assignment(c, k.protocol);
    const std::uint64_t bytes = std::string(k.preset) == "scin-fpga-4" ? (4u << 20) : (64u << 20);
    Schedule s = sched(c, k.algo, bytes);
    const double a = analytic_ns(c, s);
    const double p = run_packet_sim(c, s).time_ns;
    EXPECT_NEAR(p / a, 1.0, 0.02) << k.preset << " " << k.algo << " " << (k.protocol ? k.protocol : "")
                                  << ": analytic " << a << " ns, packet " << p << " ns";
  }
}

// NVLS on hgx-h200-8 at 64 MiB (shard 8 MiB per rank, 16 chunks of 512 KiB, two
// in flight). The packet engine is slower than the analytic one by one pipeline
// fill: all eight ranks start their ld_reduce at the same barrier and every
// source's memory answers their requests in arrival order, so the responses of
// the eight readers interleave and every rank's first chunk completes only after
// about N chunk read times, not one as in the analytic engine's whole-step FCFS
// (which serves the ranks one after another and starts the first multimem.st
// after one chunk). Fill = (N - 1) x chunk / (B x efficiency x nvls efficiency)
// = 7 x 512 KiB / 313.65 GB/s = 11.7 us. Bound: packet/analytic in [1, 1.07]
// (measured 1.059), and within 2% once the fill is taken off (measured 1.4%).
TEST(PacketAgreement, NvlsWithinTwoPercentAt64MiBAndTheGapIsThePipelineFill) {
  Config c = preset("hgx-h200-8", {"packet.payload_bytes=1024"});
  const std::uint64_t bytes = 64u << 20;
  Schedule s = sched(c, "nvls", bytes);
  const double a = analytic_ns(c, s);
  const double p = run_packet_sim(c, s).time_ns;
  EXPECT_GT(p / a, 1.0) << "analytic " << a << " ns, packet " << p << " ns";
  EXPECT_LT(p / a, 1.02) << "analytic " << a << " ns, packet " << p << " ns";
  // All ranks start their first ld_reduce together and share every source link,
  // so the first multimem.st starts (N-1) chunk times later than in the analytic
  // engine, which serves the ranks one after another: 128 KiB chunks here.
  const double chunk = 128 << 10;
  const double rate = c.links.bandwidth_GBps * c.links.efficiency * c.sw.nvls.efficiency;
  const double fill = 7 * chunk / rate;
  EXPECT_NEAR((p - fill) / a, 1.0, 0.01) << "fill " << fill << " ns, analytic " << a << " ns, packet " << p << " ns";
}

// With the calibrated NVLS size ramp the packet engine's NVLS is slower than the analytic engine
// at mid sizes (its ramped read packets hold their links longer, and the stores find the ranks'
// egress busy: docs/model.md section 4, "Mid sizes with the calibrated ramp"), up to 27% on
// hgx-h200-8 at 1 MiB, and its results say so; the analytic engine's (which the ramp was fitted
// with), the packet engine's at 64 MiB and those without the ramp do not.
TEST(PacketAgreement, NvlsAtMidSizesUnderTheRampSaysItIsSlowerThanAnalytic) {
  const Config c = load_preset("hgx-h200-8");
  auto note = [](const SimResult& r) {
    return r.extra.is_object() && r.extra.contains("note") ? r.extra["note"].get<std::string>() : std::string();
  };
  const Collective mib{std::uint64_t{1} << 20, DType::Bf16};
  const SimResult a = simulate(c, "nvls", mib, "analytic"), p = simulate(c, "nvls", mib, "packet");
  EXPECT_GT(p.time_ns / a.time_ns, 1.2) << "analytic " << a.time_ns << " ns, packet " << p.time_ns << " ns";
  EXPECT_LT(p.time_ns / a.time_ns, 1.3) << "analytic " << a.time_ns << " ns, packet " << p.time_ns << " ns";
  EXPECT_NE(note(p).find("up to 27% slower than the analytic engine"), std::string::npos) << note(p);
  EXPECT_EQ(note(a), "");
  EXPECT_EQ(note(simulate(c, "nvls", {std::uint64_t{1} << 26, DType::Bf16}, "packet")), "");
  EXPECT_EQ(note(simulate(c, "nvls", {std::uint64_t{16} << 10, DType::Bf16}, "packet")), "");   // within 1.4% there
  Config off = c;
  apply_assignment(off, "ramp.nvls.half_bytes=0");
  EXPECT_EQ(note(simulate(off, "nvls", mib, "packet")), "");
}

// At small sizes the packet engine pays what the analytic alpha-beta model does
// not: a partial last packet still carries a full header (and its share of the
// gap), and under store-and-forward each switch hop adds one packet time; a
// ring step smaller than a packet travels on one plane, which the analytic
// engine spreads over all four, and under ring.channels (a 1 KiB message runs
// on one of hgx-h200-8's 12.6 channels) that plane's paced time shows: +2.1% at
// 1 KiB, +2.8% at 4 KiB. The bound: never faster than analytic by more than
// rounding, never slower by more than 3% (2% before ring.channels). (scin-inq is left out: its INQ unit overlaps the waves on the
// packet engine, 0.8% faster at 1 MiB; docs/model.md section 4.)
TEST(PacketAgreement, SmallMessagesWithinDocumentedBound) {
  for (const char* algo : {"ring", "one-shot", "two-shot", "ring-q8", "two-shot-q8", "scin"}) {
    for (std::uint64_t bytes : {8ull, 1024ull, 65536ull, 1ull << 20}) {
      Config c = preset("hgx-h200-8", {"ring.protocol=ll"});
      Schedule s = sched(c, algo, bytes);
      const double a = analytic_ns(c, s);
      const double p = run_packet_sim(c, s).time_ns;
      EXPECT_GE(p, a - 1e-6 * a) << algo << " " << bytes;
      EXPECT_LE(p, a * 1.03) << algo << " " << bytes << ": analytic " << a << " packet " << p;
    }
  }
}

// Paced regulation spaces one port's requests by the time the reducer needs for
// each request's group: a partial packet's group takes bytes / P of a full one.
// scin-fpga-4 (reduce_GBps 64) cuts 64 B into 16 waves of one 4-byte packet per
// accelerator; with a full group's interval (16 ns) after each, the waves'
// reads finished 16 ns apart and SCIN took 3.47 us against the analytic 3.24
// (+7.3%; +6.2% at 512 B). The reducer is not the bottleneck at these sizes, so
// paced and unregulated requests give the same time.
TEST(PacketIsa, PacedRequestsOfPartialPacketsWaitForTheirOwnGroupOnly) {
  for (std::uint64_t bytes : {64ull, 512ull, 4096ull, 32768ull}) {
    Config c = preset("scin-fpga-4", {"switch.isa.regulation=paced"});
    Schedule s = sched(c, "scin", bytes);
    const double a = analytic_ns(c, s);
    const double paced = run_packet_sim(c, s).time_ns;
    EXPECT_GE(paced, a - 1e-6 * a) << bytes;
    EXPECT_LE(paced, a * 1.01) << bytes << ": analytic " << a << " packet " << paced;
    apply_assignment(c, "switch.isa.regulation=none");
    EXPECT_EQ(paced, run_packet_sim(c, s).time_ns) << bytes;
  }
}

// NVLS's size ramp (ramp.nvls, fitted to 8x H200) slows its payload to a few
// tenths of a percent of the line rate at a few bytes. The packet engine paces
// that with the gap after each packet; a partial packet carries the gap in
// proportion to its payload, so a 2-byte shard pays 2/256 of a full packet's
// gap, as the analytic engine charges bytes / rate. (With a full gap per
// packet, NVLS at 8 B took 37.4 us against 21.7: +72% on hgx-h200-8 and
// hgx-h100-8, +20% on hgx-b200-8.) A shard smaller than a packet still takes one
// plane, which the analytic engine spreads over all: +1.2% at 8 B since the ramp
// was refitted with ring.channels (4.91 MB, exponent 0.51; +0.8% before), so the
// bound is 1.5%.
TEST(PacketAgreement, NvlsAtAFewBytesWithinOnePercentUnderItsSizeRamp) {
  for (const char* p : {"hgx-h200-8", "hgx-b200-8"}) {
    for (std::uint64_t bytes : {8ull, 64ull}) {
      Config c = preset(p);
      ASSERT_GT(c.tuning.nvls.half_bytes, 0) << p << ": the preset's NVLS ramp is what this test is about";
      Schedule s = sched(c, "nvls", bytes);
      const double a = analytic_ns(c, s);
      const double t = run_packet_sim(c, s).time_ns;
      EXPECT_GE(t, a - 1e-6 * a) << p << " " << bytes;
      EXPECT_LE(t, a * 1.015) << p << " " << bytes << ": analytic " << a << " packet " << t;
    }
  }
}

// ---------------------------------------------------------------- bytes

void expect_bytes_conserved(const Config& c, const std::string& algo, std::uint64_t bytes) {
  Schedule s = sched(c, algo, bytes);
  SimResult r = run_packet_sim(c, s);
  LinkBytes want = link_bytes(s);
  std::vector<double> eg(static_cast<std::size_t>(s.gpus), 0.0), in(static_cast<std::size_t>(s.gpus), 0.0);
  for (const auto& l : r.extra["links"]) {
    const auto g = l["gpu"].get<std::size_t>();
    const double b = l["payload_bytes"].get<double>();
    if (l["direction"] == "egress") eg[g] += b;
    if (l["direction"] == "ingress") in[g] += b;
    if (l["direction"] == "direct") {
      eg[g] += b;
      in[l["peer"].get<std::size_t>()] += b;
    }
  }
  for (int g = 0; g < s.gpus; ++g) {
    EXPECT_EQ(eg[static_cast<std::size_t>(g)], want.egress_bytes[static_cast<std::size_t>(g)]) << algo << " egress r" << g;
    EXPECT_EQ(in[static_cast<std::size_t>(g)], want.ingress_bytes[static_cast<std::size_t>(g)]) << algo << " ingress r" << g;
  }
  EXPECT_EQ(r.max_link_bytes, want.max_link_bytes()) << algo;
}

TEST(PacketBytes, EveryAlgorithmCarriesWhatTheScheduleImplies) {
  // An odd size (not a multiple of the packet payload) exercises partial packets.
  Config star = preset("hgx-h200-8", {"packet.payload_bytes=1000", "ring.protocol=simple"});
  for (const auto& a : algorithms())  // (scin-inq-uplink needs a two-tier fabric: the packet engine does not run those)
    if (unsupported_reason(star, a.id).empty()) expect_bytes_conserved(star, a.name, 1000002);
  Config mesh = preset("mesh-8", {"packet.payload_bytes=1000", "ring.protocol=simple"});
  for (const char* algo : {"ring", "one-shot", "two-shot", "ring-q8", "two-shot-q8"})
    expect_bytes_conserved(mesh, algo, 1000002);
}

TEST(PacketBytes, WireBytesAddOneHeaderPerPacket) {
  Config c = preset("hgx-h200-8", {"packet.payload_bytes=1000", "packet.header_bytes=24"});
  SimResult r = run_packet_sim(c, sched(c, "scin", 1000002));
  for (const auto& l : r.extra["links"]) {
    const auto payload = l["payload_bytes"].get<std::uint64_t>(), wire = l["wire_bytes"].get<std::uint64_t>();
    EXPECT_EQ(wire, payload + 24 * l["packets"].get<std::uint64_t>()) << l["name"];
  }
}

// ---------------------------------------------------------------- Little's Law

TEST(PacketIsa, OutstandingCapBelowBandwidthDelayLimitsToCapOverRoundTrip) {
  // One plane, one wave: the ISA reads 4 MiB from each accelerator with 16 KiB in flight.
  Config c = preset("hgx-h200-8", {"fabric.planes=1", "switch.isa.waves=1", "packet.payload_bytes=1024",
                                   "switch.isa.max_outstanding_bytes=16384"});
  Schedule s = sched(c, "scin", 4u << 20);
  packet::Run run = packet::run(c, s);
  // Round trip of one request: request down the link, memory, response serialisation, response up.
  const double raw = c.links.bandwidth_GBps;
  const double payload_rate = raw * c.links.efficiency;
  const double ser = std::max(1024.0 / payload_rate, (1024.0 + 16) / raw);
  const double rtt = 2 * c.links.latency_ns + c.accelerator.mem_latency_ns + ser;
  const double want_GBps = 16384.0 / rtt;
  ASSERT_LT(want_GBps, payload_rate * 0.5);  // the cap really is the limit
  int reads = 0;
  for (std::size_t i = 0; i < s.steps.size(); ++i) {
    const Step& st = s.steps[i];
    if (st.kind != StepKind::Read) continue;
    ++reads;
    const double per_port = static_cast<double>(region_bytes(s, st.srcs[0]));
    const double dur = run.steps[i].finish_ns - run.steps[i].start_ns;
    const double got_GBps = per_port / dur;
    EXPECT_NEAR(got_GBps / want_GBps, 1.0, 0.05) << "read " << i << ": " << got_GBps << " GB/s vs cap/RTT "
                                                 << want_GBps << " GB/s";
  }
  EXPECT_EQ(reads, 1);
  // ... and the links are visibly underused.
  for (const auto& l : run.result.extra["links"]) {
    if (l["direction"] == "egress") {
      EXPECT_LT(l["utilisation"].get<double>(), 0.15) << l["name"];
    }
  }
}

// ---------------------------------------------------------------- regulation

struct IsaView {
  double time_ns = 0, max_stall_ns = 0, max_in_peak = 0, hwm = 0;
};

IsaView isa_view(const Config& c, std::uint64_t bytes) {
  SimResult r = run_packet_sim(c, sched(c, "scin", bytes));
  IsaView v;
  v.time_ns = r.time_ns;
  for (const auto& l : r.extra["links"])
    if (l["direction"] == "egress") v.max_stall_ns = std::max(v.max_stall_ns, l["credit_stall_ns"].get<double>());
  for (const auto& p : r.extra["switch_ports"])
    if (p["side"] == "input") v.max_in_peak = std::max(v.max_in_peak, p["peak_queue_bytes"].get<double>());
  v.hwm = r.extra["isa"][0]["buffer_hwm_bytes"].get<double>();
  return v;
}

TEST(PacketIsa, UnregulatedSmallBufferBacksUp) {
  // The reduction unit (1500 GB/s) drains slower than 8 ports deliver (8 x 369 GB/s).
  Config c = preset("hgx-h200-8", {"fabric.planes=1", "switch.isa.reduce_GBps=1500", "switch.isa.buffer_bytes=1M",
                                   "switch.isa.waves=4"});
  apply_assignment(c, "switch.isa.regulation=none");
  const IsaView none = isa_view(c, 16u << 20);
  apply_assignment(c, "switch.isa.regulation=paced");
  const IsaView paced = isa_view(c, 16u << 20);
  const double analytic = analytic_ns(c, sched(c, "scin", 16u << 20));
  // none: the buffer fills, responses wait in the switch input ports, the accelerators' links stall.
  EXPECT_GE(none.hwm, 1048576.0 - 256);
  EXPECT_GT(none.max_in_peak, 32768.0);
  EXPECT_GT(none.max_stall_ns, 1000.0);
  // paced: no back-pressure, and the time returns to the analytic (drain-rate) figure.
  EXPECT_EQ(paced.max_stall_ns, 0.0);
  EXPECT_LE(paced.max_in_peak, 272.0);
  EXPECT_LT(paced.hwm, 65536.0);
  EXPECT_LE(paced.time_ns, none.time_ns * (1 + 1e-9));
  EXPECT_NEAR(paced.time_ns / analytic, 1.0, 0.005);
}

// What the back-pressure of an unregulated ISA costs other traffic on the same
// links: an ISA read (as in scin) runs while accelerator 1 reads 1 MiB of
// accelerator 0's memory through the same switch plane. Unregulated, the ISA's
// responses fill the ISA buffer and then accelerator 0's input port (its
// response virtual channel), and the read's responses wait behind them
// (head-of-line blocking); paced, the ISA's responses arrive at the drain rate
// and the read gets the rest of the link. (Writes travel in the other virtual
// channel, with their own credits, and are not held up.)
TEST(PacketIsa, PacingRecoversTheBandwidthOfTrafficSharingTheStalledLinks) {
  Config c = preset("hgx-h200-8", {"fabric.planes=1", "switch.isa.reduce_GBps=1000", "switch.isa.buffer_bytes=64K"});
  Schedule s;
  s.algorithm = "isa-read+write";
  s.gpus = 8;
  s.planes = 1;
  s.topology = Topology::Star;
  s.dtype = DType::Bf16;
  const std::uint64_t elems = 1u << 20;  // 2 MiB per accelerator read by the ISA
  s.elems = elems;
  s.bytes = 2 * elems;
  std::vector<BufferId> in;
  for (int r = 0; r < 8; ++r) in.push_back(s.add_buffer({"in", r, elems, Format::Bf16}));
  const BufferId acc = s.add_buffer({"isa.acc", s.switch_node(0), elems, Format::Bf16});
  const BufferId out1 = s.add_buffer({"out", 1, elems, Format::Bf16});
  Step rd;
  rd.kind = StepKind::Read;
  rd.initiator = s.switch_node(0);
  rd.via = s.switch_node(0);
  rd.op = DataOp::Reduce;
  rd.unit = Unit::IsaReduce;
  for (int r = 0; r < 8; ++r) rd.srcs.push_back({in[static_cast<std::size_t>(r)], 0, elems});
  rd.dsts = {{acc, 0, elems}};
  s.add(rd);
  // Accelerator 1 reads 1 MiB of accelerator 0's memory: its responses go up
  // accelerator 0's link in the same traffic class (virtual channel) as the
  // ISA's responses, so they wait behind any the ISA leaves parked there.
  Step wr;
  wr.kind = StepKind::Read;
  wr.initiator = 1;
  wr.via = s.switch_node(0);
  wr.op = DataOp::Copy;
  wr.srcs = {{in[0], 0, elems / 2}};
  wr.dsts = {{out1, 0, elems / 2}};
  const StepId w = s.add(wr);
  auto read_ns = [&](const char* reg) {
    apply_assignment(c, reg);
    packet::Run r = packet::run(c, s);
    if (std::getenv("SCIN_PACKET_VERBOSE")) std::fprintf(stderr, "%s: read done at %.1f ns\n", reg, r.steps[w].finish_ns);
    return r.steps[w].finish_ns;
  };
  const double none = read_ns("switch.isa.regulation=none");
  const double paced = read_ns("switch.isa.regulation=paced");
  // Paced: the read shares accelerator 0's link about evenly with the paced responses.
  const double link = c.links.bandwidth_GBps * c.links.efficiency;
  EXPECT_LT(paced, 1.25 * (1 << 20) / (link / 2) + 2000.0) << "paced read " << paced << " ns";
  EXPECT_LT(paced, 0.75 * none) << "paced " << paced << " ns vs unregulated " << none << " ns";
}

// A multicast needs room in every destination queue, so one busy port slows it
// on all ports: the ISA multicasts 1 MiB to all 8 accelerators while
// accelerator 0 also writes 1 MiB to accelerator 3 through the same plane.
TEST(PacketSwitch, MulticastStallsOnItsSlowestPort) {
  Config c = preset("hgx-h200-8", {"fabric.planes=1"});
  Schedule s;
  s.algorithm = "multicast+write";
  s.gpus = 8;
  s.planes = 1;
  s.topology = Topology::Star;
  s.dtype = DType::Bf16;
  const std::uint64_t elems = 1u << 19;  // 1 MiB
  s.elems = elems;
  s.bytes = 2 * elems;
  const BufferId acc = s.add_buffer({"isa.acc", s.switch_node(0), elems, Format::Bf16});
  std::vector<BufferId> out;
  for (int r = 0; r < 8; ++r) out.push_back(s.add_buffer({"out", r, elems, Format::Bf16}));
  const BufferId in0 = s.add_buffer({"in", 0, elems, Format::Bf16});
  const BufferId side = s.add_buffer({"side", 3, elems, Format::Bf16});
  Step mc;
  mc.kind = StepKind::Write;
  mc.initiator = s.switch_node(0);
  mc.via = s.switch_node(0);
  mc.op = DataOp::Copy;
  mc.unit = Unit::IsaReduce;
  mc.srcs = {{acc, 0, elems}};
  for (int r = 0; r < 8; ++r) mc.dsts.push_back({out[static_cast<std::size_t>(r)], 0, elems});
  const StepId m = s.add(mc);
  packet::Run alone = packet::run(c, s);
  Step wr;
  wr.kind = StepKind::Write;
  wr.initiator = 0;
  wr.via = s.switch_node(0);
  wr.op = DataOp::Copy;
  wr.srcs = {{in0, 0, elems}};
  wr.dsts = {{side, 0, elems}};
  s.add(wr);
  packet::Run shared = packet::run(c, s);
  const double rate = c.links.bandwidth_GBps * c.links.efficiency;
  const double alone_ns = alone.steps[m].finish_ns, shared_ns = shared.steps[m].finish_ns;
  EXPECT_NEAR(alone_ns, (2.0 * elems) / rate + c.links.latency_ns, 5.0);
  // From when the write reaches the switch (325 ns in), port 3 carries both streams in turn, so the
  // multicast runs at about half rate on every port.
  EXPECT_GT(shared_ns, 1.5 * alone_ns) << alone_ns << " ns alone, " << shared_ns << " ns with the write";
  for (const auto& l : shared.result.extra["links"]) {
    if (l["name"] == "sw0->r5") {
      EXPECT_LT(l["busy_ns"].get<double>() / shared_ns, 0.6) << "a port with nothing else to carry waits too";
    }
  }
}

// ---------------------------------------------------------------- forwarding

TEST(PacketForwarding, StoreAndForwardAddsOnePacketTimePerSwitchHop) {
  // 16 B per rank on 8 ranks: every ring step moves one 2-byte packet on plane 0.
  Config c = preset("hgx-h200-8", {"ring.protocol=simple"});
  Schedule s = sched(c, "ring", 16);
  const double ct = run_packet_sim(c, s).time_ns;
  apply_assignment(c, "packet.forwarding=store-and-forward");
  const double saf = run_packet_sim(c, s).time_ns;
  const double raw = c.links.bandwidth_GBps / c.fabric.planes;
  // (The payload is paced at the share of the ring's channels NCCL runs a 16-byte message on.)
  const double f = ring_channel_fraction(c, RingProtocol::Simple, 16, c.fabric.gpus);
  const double gap = 256.0 / (raw * c.links.efficiency * f) - 272.0 / raw;
  // (A 2-byte packet carries 2/256 of a full packet's gap: the gap paces payload.)
  const double ser = (2.0 + 16.0) / raw + gap * (2.0 / 256.0);
  // Times are whole picoseconds: each of the 2(N-1) hops rounds its packet time by at most 0.5 ps.
  EXPECT_NEAR(saf - ct, 2 * (c.fabric.gpus - 1) * ser, 2 * (c.fabric.gpus - 1) * 0.5e-3);
}

// ---------------------------------------------------------------- results

TEST(PacketResults, BreakdownSumsToTimeAndTimelineIsBounded) {
  Config c = preset("hgx-h200-8", {"packet.payload_bytes=4096", "packet.timeline_samples=64"});
  SimResult r = run_packet_sim(c, sched(c, "scin", 16u << 20));
  EXPECT_NEAR(r.breakdown.total_ns(), r.time_ns, 1e-6 * r.time_ns);
  ASSERT_TRUE(r.extra.contains("timeline"));
  const auto& tl = r.extra["timeline"];
  const double bin = tl["bin_ns"].get<double>();
  EXPECT_LE(tl["samples"].get<int>(), 64);
  EXPECT_GE(bin * tl["samples"].get<int>(), r.time_ns);
  ASSERT_EQ(tl["links"].size(), r.extra["links"].size());
  for (std::size_t k = 0; k < tl["links"].size(); ++k) {
    double busy = 0;
    for (double u : tl["links"][k]["utilisation"]) {
      EXPECT_GE(u, 0.0);
      EXPECT_LE(u, 1.0);
      busy += u * bin;
    }
    const double want = r.extra["links"][k]["busy_ns"].get<double>();
    EXPECT_NEAR(busy, want, 0.02 * want + 1.0) << tl["links"][k]["name"];
  }
  // Off unless asked.
  apply_assignment(c, "packet.timeline_samples=0");
  EXPECT_FALSE(run_packet_sim(c, sched(c, "scin", 1u << 20)).extra.contains("timeline"));
}

TEST(PacketResults, SimulateDispatchesToThePacketEngine) {
  Config c = preset("hgx-h200-8", {"packet.payload_bytes=4096"});
  SimResult r = simulate(c, "two-shot", Collective{1u << 20, DType::Bf16}, "packet");
  EXPECT_EQ(r.engine, "packet");
  EXPECT_GT(r.extra["events"].get<std::uint64_t>(), 0u);
  EXPECT_GT(r.time_ns, 0.0);
}

TEST(PacketResults, Deterministic) {
  Config c = preset("hgx-h200-8", {"packet.payload_bytes=2048", "switch.isa.regulation=none",
                                   "switch.isa.buffer_bytes=256K", "switch.isa.reduce_GBps=1500",
                                   "packet.timeline_samples=16"});
  for (const char* algo : {"scin", "nvls", "one-shot"}) {
    Schedule s = sched(c, algo, 3u << 20);
    SimResult a = run_packet_sim(c, s), b = run_packet_sim(c, s);
    EXPECT_EQ(std::memcmp(&a.time_ns, &b.time_ns, sizeof(double)), 0) << algo;
    a.extra.erase("wall_s");
    a.extra.erase("cpu_s");
    b.extra.erase("wall_s");
    b.extra.erase("cpu_s");
    EXPECT_EQ(a.extra.dump(), b.extra.dump()) << algo;
  }
}

// Two runs of one case are the same, bit for bit: time, result (timing
// fields aside), every step's start and finish, and the statistics.
void expect_same_run(const packet::Run& on, const packet::Run& off, const std::string& what) {
  auto strip = [](SimResult r) {
    r.extra.erase("wall_s");
    r.extra.erase("cpu_s");
    return r;
  };
  EXPECT_EQ(std::memcmp(&on.result.time_ns, &off.result.time_ns, sizeof(double)), 0) << what;
  EXPECT_EQ(to_json(strip(on.result)).dump(), to_json(strip(off.result)).dump()) << what;
  ASSERT_EQ(on.steps.size(), off.steps.size()) << what;
  for (std::size_t i = 0; i < on.steps.size(); ++i) {
    EXPECT_EQ(std::memcmp(&on.steps[i].start_ns, &off.steps[i].start_ns, sizeof(double)), 0) << what << " step " << i;
    EXPECT_EQ(std::memcmp(&on.steps[i].finish_ns, &off.steps[i].finish_ns, sizeof(double)), 0) << what << " step " << i;
    if (::testing::Test::HasFailure()) return;
  }
  nlohmann::json a = packet::to_json(on.stats), b = packet::to_json(off.stats);
  for (auto* j : {&a, &b}) j->erase("wall_s"), j->erase("cpu_s");
  EXPECT_EQ(a.dump(), b.dump()) << what;
  EXPECT_GT(on.stats.events, 0u) << what;
}

// One case of the comparisons below: a preset with its assignments, the
// schedule of `algo` at `bytes`, and its name for messages.
// A packet run to compare with itself under a switch: preset, --set assignments, algorithm, size.
struct PacketCase {
  const char* preset;
  std::vector<const char*> sets;
  const char* algo;
  std::uint64_t bytes;
};

struct RunCase {
  Config c;
  Schedule s;
  std::string what;
};
RunCase run_case(const char* name, const std::vector<const char*>& sets, const char* algo, std::uint64_t bytes) {
  Config c = preset(name);
  for (const char* a : sets) apply_assignment(c, a);
  Schedule s = sched(c, algo, bytes);
  return {std::move(c), std::move(s), fmt::format("{} {} {} B", name, algo, bytes)};
}
// The case run with a testing switch (packet::testing) off, then on again.
packet::Run run_with_off(const RunCase& r, std::atomic<bool>& on) {
  on = false;
  packet::Run run = packet::run(r.c, r.s);
  on = true;
  return run;
}

// The engine keeps its per-step arrays (step records, successor lists, the
// edges set-up lists) for the thread's next run (Engine::spare): a run on a
// thread that ran others, larger and smaller, before it is the same, bit for
// bit, as the same run on a new thread (whose arrays are new).
TEST(PacketResults, StepArraysKeptForTheThreadsNextRunGiveTheSameRun) {
  std::vector<RunCase> cases;
  cases.push_back(run_case("hgx-h200-8", {"fabric.gpus=16", "ring.protocol=simple"}, "ring", 64 << 10));
  cases.push_back(run_case("hgx-h200-8", {}, "nvls", 100000));
  cases.push_back(run_case("hgx-h200-8", {"ring.protocol=ll"}, "ring", 3000));
  cases.push_back(run_case("hgx-h200-8", {"fabric.gpus=16"}, "one-shot", 1 << 20));
  cases.push_back(run_case("hgx-h200-8", {}, "scin", 1 << 20));
  cases.push_back(run_case("hgx-h200-8", {}, "two-shot", 8200));
  cases.push_back(run_case("nvl36x2", {"ring.protocol=ll128"}, "ring", 64 << 10));
  std::vector<packet::Run> fresh(cases.size());
  for (std::size_t k = 0; k < cases.size(); ++k)  // each on a new thread: nothing kept from an earlier run
    std::thread([&] { fresh[k] = packet::run(cases[k].c, cases[k].s); }).join();
  for (int round = 0; round < 2; ++round)  // in order, then in reverse: after larger and after smaller runs
    for (std::size_t j = 0; j < cases.size(); ++j) {
      const std::size_t k = round == 0 ? j : cases.size() - 1 - j;
      expect_same_run(packet::run(cases[k].c, cases[k].s), fresh[k], cases[k].what + " (after other runs on this thread)");
    }
}

// A one-packet response requested from a source is a packet entry in the
// source link's request FIFO (no Source); with packet entries off every
// response names a Source, as before. Same bits either way: the result, its
// breakdown, every step's start and finish, and every statistic. The cases
// have one-packet responses only (small ld_reduces, 18 planes), mixed with
// longer sources (a source's last packets on some planes), and none.
TEST(PacketResults, PacketEntriesGiveTheSameRunAsASourcePerResponse) {
  struct Case {
    const char* preset;
    std::vector<const char*> sets;
    const char* algo;
    std::uint64_t bytes;
    bool entries;  // some packet entries expected
  };
  const std::vector<Case> cases = {
      {"hgx-h200-8", {}, "nvls", 8, true},      // one packet per source: on plane 0 alone
      {"hgx-h200-8", {}, "nvls", 3000, true},   // two: planes 0 and 1, one each
      {"hgx-h200-8", {}, "nvls", 12000, true},  // six: two on planes 0 and 1 (Sources), one on 2 and 3
      {"hgx-h200-8", {}, "nvls", 100000, false},
      {"hgx-h200-8", {"packet.payload_bytes=2048"}, "nvls", 3u << 20, false},
      {"hgx-b200-8", {}, "nvls", 4096, true},
      {"gb200-nvl72", {"fabric.gpus=16"}, "nvls", 65536, true},
      {"gb200-nvl72", {}, "nvls", 100000, true},
      {"hgx-h200-8", {"fabric.gpus=64"}, "nvls", 65536, true},
      {"hgx-h200-8", {"fabric.gpus=64"}, "nvls", 1000006, false},
      {"hgx-h200-8", {}, "scin", 65536, false},
      {"hgx-h200-8", {}, "one-shot", 65536, false},
  };
  for (const Case& k : cases) {
    const RunCase r = run_case(k.preset, k.sets, k.algo, k.bytes);
    const std::string& what = r.what;
    const std::uint64_t made0 = packet::testing::packet_entries_made.load();
    const packet::Run on = packet::run(r.c, r.s);
    const std::uint64_t made = packet::testing::packet_entries_made.load() - made0;
    const packet::Run off = run_with_off(r, packet::testing::packet_entries);
    EXPECT_EQ(packet::testing::packet_entries_made.load() - made0, made) << what;  // none made while off
    if (k.entries) EXPECT_GT(made, 0u) << what;
    else EXPECT_EQ(made, 0u) << what;
    expect_same_run(on, off, what);
    if (::testing::Test::HasFailure()) return;
  }
}

// A group that reads every accelerator's only packet on a plane is one entry in
// that plane's group log, followed by a cursor per uplink (GroupLog), instead
// of a packet entry in every uplink's FIFO; an uplink that also has its own
// requests serves both in ready order, then arrival (moving the log's entries
// into its FIFO when a request joins it). Same bits as with the log off: the
// result, its breakdown, every step's start and finish, every statistic. The
// cases have groups in the log alone, in the log and in FIFOs on one plane
// (shards of 4 and 5 packets on 4 planes: a 5-packet source's packets 0 and 4
// are Sources, a 4-packet source's packet 0 is in the log, all on plane 0),
// and none.
TEST(PacketResults, GroupLogGivesTheSameRunAsPacketEntriesPerUplink) {
  struct Case {
    const char* preset;
    std::vector<const char*> sets;
    const char* algo;
    std::uint64_t bytes;
    bool log;    // some log entries expected
    bool taken;  // some moved into a FIFO expected
  };
  const std::vector<Case> cases = {
      {"hgx-h200-8", {}, "nvls", 8, true, false},
      {"hgx-h200-8", {}, "nvls", 3000, true, false},
      {"hgx-h200-8", {}, "nvls", 12000, true, false},
      {"hgx-h200-8", {}, "nvls", 8200, true, true},
      {"hgx-h200-8", {}, "nvls", 8196, true, true},
      {"hgx-h200-8", {"fabric.gpus=64"}, "nvls", 65600, true, true},
      {"hgx-h200-8", {}, "nvls", 100000, false, false},
      {"hgx-b200-8", {}, "nvls", 4096, true, false},
      {"gb200-nvl72", {"fabric.gpus=16"}, "nvls", 65536, true, false},
      {"gb200-nvl72", {}, "nvls", 100000, true, false},
      {"hgx-h200-8", {"fabric.gpus=64"}, "nvls", 65536, true, false},
      {"hgx-h200-8", {"fabric.gpus=64"}, "nvls", 1000006, false, false},
      {"hgx-h200-8", {"fabric.gpus=256"}, "nvls", 262144, true, false},
      {"hgx-h200-8", {}, "scin", 65536, false, false},
      {"hgx-h200-8", {}, "one-shot", 65536, false, false},
  };
  for (const Case& k : cases) {
    const RunCase r = run_case(k.preset, k.sets, k.algo, k.bytes);
    const std::string& what = r.what;
    const std::uint64_t logged0 = packet::testing::group_log_entries.load();
    const std::uint64_t taken0 = packet::testing::group_log_taken.load();
    const std::uint64_t made0 = packet::testing::packet_entries_made.load();
    const packet::Run on = packet::run(r.c, r.s);
    const std::uint64_t logged = packet::testing::group_log_entries.load() - logged0;
    const std::uint64_t taken = packet::testing::group_log_taken.load() - taken0;
    const std::uint64_t made = packet::testing::packet_entries_made.load() - made0;
    const packet::Run off = run_with_off(r, packet::testing::group_log);
    EXPECT_EQ(packet::testing::group_log_entries.load() - logged0, logged) << what;  // none made while off
    EXPECT_EQ(packet::testing::packet_entries_made.load() - made0, 2 * made) << what;  // as many packet entries
    if (k.log) EXPECT_GT(logged, 0u) << what;
    else EXPECT_EQ(logged, 0u) << what;
    if (k.taken) {
      EXPECT_GT(taken, 0u) << what;
    }
    expect_same_run(on, off, what);
    if (::testing::Test::HasFailure()) return;
  }
}

// try_send's paths for an uplink with requested responses only
// (send_requested) or writes only (send_write), and forward_in's branch for a
// write to one destination, take the general code's decisions in fewer steps;
// with testing::fast_paths off every link and write takes the general code.
// Same bits either way: the result, its breakdown, every step's start and
// finish, every statistic (credit stalls, queue peaks, ISA high-water mark).
// The cases cover ISA reads paced and unregulated (buffer full, responses
// waiting in input ports), quantised reads (no ISA fast path), store and
// forward, switch ports small enough to block senders on credits, NVLS (log,
// packet entries, Sources), rings, one- and two-shot, a mesh and two tiers
// (multicasts routed from their destinations, writes to one node from their
// routes, or both from their stored hops), at 8 to 144 accelerators.
TEST(PacketResults, FastPathsGiveTheSameRunAsTheGeneralCode) {
  using Case = PacketCase;
  const std::vector<Case> cases = {
      {"hgx-h200-8", {}, "scin", 1u << 20},
      {"hgx-h200-8", {"switch.isa.regulation=none", "switch.isa.buffer_bytes=256K", "switch.isa.reduce_GBps=1500"}, "scin", 4u << 20},
      {"hgx-h200-8", {"fabric.planes=1", "switch.isa.regulation=none", "switch.isa.buffer_bytes=1M", "switch.isa.reduce_GBps=1500", "switch.isa.waves=4"}, "scin", 4u << 20},
      {"hgx-h200-8", {"switch.isa.max_outstanding_bytes=8K"}, "scin", 1u << 20},
      {"hgx-h200-8", {"packet.forwarding=store-and-forward"}, "scin", 1u << 20},
      {"hgx-h200-8", {"packet.port_buffer_bytes=2048"}, "scin", 1u << 20},
      {"hgx-h200-8", {"packet.port_buffer_bytes=2048", "ring.protocol=simple"}, "ring", 1u << 20},
      {"hgx-h200-8", {"packet.port_buffer_bytes=2048"}, "nvls", 1u << 20},
      {"hgx-h200-8", {"packet.port_buffer_bytes=1024", "packet.payload_bytes=1000"}, "one-shot", 1u << 20},
      {"hgx-h200-8", {"switch.isa.inq=true"}, "scin-inq", 1u << 20},
      {"hgx-h200-8", {"ring.protocol=simple"}, "ring", 3000002},
      {"hgx-h200-8", {"ring.protocol=ll"}, "ring", 8},
      {"hgx-h200-8", {"ring.protocol=ll128"}, "ring", 1u << 20},
      {"hgx-h200-8", {}, "nvls", 3u << 20},
      {"hgx-h200-8", {}, "nvls", 12000},
      {"hgx-h200-8", {}, "one-shot", 65536},
      {"hgx-h200-8", {}, "two-shot", 1u << 20},
      {"hgx-b200-8", {}, "scin", 100000},
      {"hgx-h200-8", {"fabric.gpus=64"}, "scin", 262144},
      {"hgx-h200-8", {"fabric.gpus=64", "ring.protocol=simple"}, "ring", 262144},
      {"hgx-h200-8", {"fabric.gpus=64"}, "nvls", 262144},
      {"mesh-8", {"ring.protocol=simple"}, "ring", 1u << 20},
      {"nvl36x2", {}, "scin", 262144},
      // Two tiers: multicasts' links listed from their destinations (Flow::mc_routed) or
      // from stored hops, in the same order: senders on the first, a middle and the last
      // leaf (the uplink before or after the leaf's own destinations), stores and pushes.
      {"nvl36x2", {}, "nvls", 1u << 20},
      {"nvl36x2", {}, "one-shot", 65536},
      {"nvl576-style", {"fabric.gpus=144", "fabric.leaves=4", "switch.ports=128"}, "nvls", 262144},
      {"nvl576-style", {"fabric.gpus=144", "fabric.leaves=4", "switch.ports=128"}, "one-shot", 4096},
      // Two tiers: a write to one node follows its route (Flow::uc_routed) or its stored
      // hops: a ring's neighbours on and off the leaf, two-shot's pushes to every peer.
      {"nvl36x2", {"ring.protocol=simple"}, "ring", 262144},
      {"nvl576-style", {"fabric.gpus=144", "fabric.leaves=4", "switch.ports=128"}, "two-shot", 16384},
      // The ISA's next request (isa_issue, request_isa; off: issue_requests' loop and
      // Sender::request): windows that are not a whole number of packets, one below a
      // packet (one request at a time), last packets shorter than the payload, several
      // reads per port (waves in flight), unpaced requests merging into one FIFO entry,
      // 1000-byte packets and 16 accelerators.
      {"hgx-h200-8", {"switch.isa.max_outstanding_bytes=1000"}, "scin", 1000006},
      {"hgx-h200-8", {"switch.isa.max_outstanding_bytes=100"}, "scin", 16512},  // every read of 2 packets, the last 2 B
      {"hgx-h200-8", {"switch.isa.max_outstanding_bytes=3000", "switch.isa.waves=4", "switch.isa.buffer_bytes=64K"}, "scin", 777778},
      {"hgx-h200-8", {"switch.isa.regulation=none", "switch.isa.max_outstanding_bytes=5000"}, "scin", 2000002},
      {"hgx-h200-8", {"packet.payload_bytes=1000", "packet.port_buffer_bytes=8192", "switch.isa.max_outstanding_bytes=2500"}, "scin", 1234566},
      {"hgx-h200-8", {"fabric.gpus=16", "switch.isa.max_outstanding_bytes=4K"}, "scin", 3u << 20},
  };
  for (const Case& k : cases) {
    const RunCase r = run_case(k.preset, k.sets, k.algo, k.bytes);
    const std::string& what = r.what;
    expect_same_run(packet::run(r.c, r.s), run_with_off(r, packet::testing::fast_paths), what);
    if (::testing::Test::HasFailure()) return;
  }
}

// A flow reused for a step of the shape whose fields it holds keeps them (its
// destinations, sources, bytes, packet counts...) and resets the rest
// (Flow::reset_run), and a done flow with its shape's fields waits for that
// shape's next step (Shape::parked); with testing::fast_paths off every flow
// is reset whole and filled from its shape, and flows come from the pool
// only. Same bits either way: the result, its breakdown, every step's start
// and finish, every statistic. The cases keep flows of writes (rings, one-
// and two-shot, quantised, a mesh, two tiers: their hops made afresh) and of
// ISA reads (SCIN at 2 and 4 accelerators: 4 regions or fewer, so a shape;
// their groups' counts made afresh), and mix kept and reset flows.
TEST(PacketResults, FlowsThatKeepTheirShapeGiveTheSameRunAsFlowsResetWhole) {
  using Case = PacketCase;
  const std::vector<Case> cases = {
      {"hgx-h200-8", {"fabric.gpus=16", "ring.protocol=simple"}, "ring", 262144},
      {"hgx-h200-8", {"fabric.gpus=16", "ring.protocol=simple"}, "ring", 100002},
      {"hgx-h200-8", {"ring.protocol=ll"}, "ring", 65536},
      {"hgx-h200-8", {"fabric.gpus=12", "ring.protocol=ll128", "packet.port_buffer_bytes=2048"}, "ring", 300000},
      {"hgx-h200-8", {"ring.protocol=ll128"}, "ring-q8", 1u << 20},
      {"hgx-h200-8", {}, "two-shot", 65536},
      {"hgx-h200-8", {}, "two-shot-q8", 1u << 20},
      {"hgx-h200-8", {"fabric.gpus=16"}, "one-shot", 65536},
      {"hgx-h200-8", {"fabric.gpus=2"}, "scin", 1u << 20},
      {"hgx-h200-8", {"fabric.gpus=4", "switch.isa.max_outstanding_bytes=4K"}, "scin", 3000000},
      {"hgx-h200-8", {"fabric.gpus=4"}, "scin-inq", 1u << 20},
      {"hgx-h200-8", {"fabric.gpus=4"}, "nvls", 1u << 20},
      {"mesh-8", {"ring.protocol=simple"}, "ring", 1u << 20},
      {"nvl36x2", {"fabric.gpus=16", "ring.protocol=simple"}, "ring", 262144},
      {"nvl36x2", {"fabric.gpus=8"}, "two-shot", 262144},
  };
  std::uint64_t kept_all = 0;
  for (const Case& k : cases) {
    const RunCase r = run_case(k.preset, k.sets, k.algo, k.bytes);
    const std::string& what = r.what;
    const std::uint64_t kept0 = packet::testing::flow_shapes_kept.load();
    const packet::Run on = packet::run(r.c, r.s);
    const std::uint64_t kept = packet::testing::flow_shapes_kept.load() - kept0;
    const packet::Run off = run_with_off(r, packet::testing::fast_paths);
    EXPECT_EQ(packet::testing::flow_shapes_kept.load() - kept0, kept) << what;  // none kept while off
    kept_all += kept;
    if (std::string(k.algo).rfind("ring", 0) == 0) {
      EXPECT_GT(kept, 0u) << what;
    }
    expect_same_run(on, off, what);
    if (::testing::Test::HasFailure()) return;
  }
  EXPECT_GT(kept_all, 1000u);
}

// make_flow_shape computes a read source's bytes and packets again only when
// its count or its buffer's format (format, block, scale format) differs from
// the source before (an NVLS ld_reduce's 1024 sources are all alike); with
// testing::fast_paths off, for every source. Sources that differ from their
// neighbour here: NVLS whose rank 1 and rank 2 inputs are block-quantised (of
// two block sizes) and rank 5's in fp32, so the sources of each ld_reduce
// change format between neighbours and back. Same bits either way.
TEST(PacketResults, ReadSourcesOfMixedFormatsGiveTheSameRunAsEachCostedAlone) {
  for (const char* algo : {"nvls", "scin"}) {
    RunCase r = run_case("hgx-h200-8", {}, algo, 65536);
    ASSERT_GE(r.s.input.size(), 6u);
    auto set = [&](std::size_t rank, Format f, int block) {
      BufferDecl& b = r.s.buffers[r.s.input[rank]];
      b.format = f, b.block_elems = block;
    };
    set(1, Format::Int8Block, 32);
    set(2, Format::Int8Block, 64);
    set(5, Format::Fp32, 0);
    std::size_t mixed = 0;  // read steps whose sources are not all of one format
    for (const Step& st : r.s.steps) {
      if (st.kind != StepKind::Read || st.srcs.size() < 2) continue;
      bool differ = false;
      for (const Region& x : st.srcs) differ |= r.s.buffers[x.buffer].format != r.s.buffers[st.srcs[0].buffer].format;
      mixed += differ ? 1 : 0;
    }
    EXPECT_GT(mixed, 0u) << algo;
    const packet::Run on = packet::run(r.c, r.s);
    const packet::Run off = run_with_off(r, packet::testing::fast_paths);
    expect_same_run(on, off, r.what);
    if (::testing::Test::HasFailure()) return;
  }
}

// ---------------------------------------------------------------- bad input

void expect_error(const Config& c, const Schedule& s, const std::string& names) {
  try {
    run_packet_sim(c, s);
    ADD_FAILURE() << "no error; expected one naming " << names;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(names), std::string::npos) << e.what();
  }
}

TEST(PacketErrors, BadInputThrowsNamingTheField) {
  const Config good = preset("hgx-h200-8");
  const Schedule s = sched(good, "scin", 1u << 20);
  Config c = good;
  c.sw.isa.buffer_bytes = 0;
  expect_error(c, s, "switch.isa.buffer_bytes");
  c = good;
  c.sw.isa.waves = 0;
  expect_error(c, s, "switch.isa.waves");
  c = good;
  c.packet.payload_bytes = 64 << 10;  // payload + header exceed the 64 KiB port buffer
  expect_error(c, s, "packet.port_buffer_bytes");
  c = good;
  c.sw.isa.buffer_bytes = 128;  // smaller than one packet payload
  expect_error(c, s, "switch.isa.buffer_bytes");
  c = good;
  c.packet.payload_bytes = 0;
  expect_error(c, s, "packet.payload_bytes");
  c = good;
  c.packet.timeline_samples = 513;
  expect_error(c, s, "packet.timeline_samples");
  c = good;
  c.fabric.gpus = 4;  // the schedule was compiled for 8
  expect_error(c, s, "packet engine");
}

// The engine polls RunContext's stop token and stops with Cancelled; a stop
// requested mid-run ends it within 4096 events.
TEST(PacketCancel, AStopRequestEndsTheRunQuickly) {
  Config c = preset("hgx-h200-8", {});
  Schedule s = sched(c, "scin", 64u << 20);
  std::stop_source stopped;
  stopped.request_stop();
  EXPECT_THROW(run_packet_sim(c, s, RunContext{stopped.get_token(), {}}), Cancelled);

  // A stop asked for in the middle of a run (here from the progress sink, which
  // the engine calls every 65536 events) ends it before the next report: the
  // engine polls every 4096 events, well under 1 ms at its ~10^7 events/s.
  std::stop_source src;
  int reports_after_stop = 0;
  RunContext ctx{src.get_token(), [&](double f) {
                   EXPECT_GE(f, 0.0);
                   EXPECT_LE(f, 1.0);
                   if (src.stop_requested()) ++reports_after_stop;
                   src.request_stop();
                 }};
  EXPECT_THROW(run_packet_sim(c, s, ctx), Cancelled);
  EXPECT_TRUE(src.stop_requested());
  EXPECT_EQ(reports_after_stop, 0);
  EXPECT_NO_THROW(run_packet_sim(c, sched(c, "scin", 1u << 20)));  // no stop: runs to the end
}

// Progress is the further of steps done and payload delivered: a one-shot on
// two tiers finishes its pushes (and so its steps) together at the end, yet
// its reports climb while the packets flow, stay below 1 and never go back.
TEST(PacketProgress, ClimbsWithThePayloadWhenStepsFinishTogether) {
  Config c = preset("nvl36x2", {});
  set_param(c, "fabric.gpus", 16);
  set_param(c, "fabric.leaves", 2);
  const Schedule s = sched(c, "one-shot", 1u << 20);
  std::vector<double> seen;
  run_packet_sim(c, s, RunContext{{}, [&](double f) { seen.push_back(f); }});
  ASSERT_GE(seen.size(), 10u);
  EXPECT_TRUE(std::is_sorted(seen.begin(), seen.end()));
  EXPECT_LT(seen.back(), 1.0);
  EXPECT_GT(seen[seen.size() / 2], 0.3);  // steps alone: launches only (16 of 528) until the end
}

// The packet engine's estimate (what --max-work, the app's budgets and the
// CLI's progress lines judge by) against the events a run takes, on two tiers
// (two events a link crossed) and on a star with 18 planes (a transfer's
// packets striped over the planes: a chunk smaller than a packet is one packet,
// not one per plane). Before: 0.07-0.3x (NVLS on nvl576-style) and up to 7x
// (the ring with 18 planes at 4 KiB) of the events taken.
TEST(PacketEstimate, EventsWithinAFactorOfTwoToTwoAndAHalfOfTheRunOnTwoTiersAndManyPlanes) {
  struct Case {
    const char* preset;
    std::vector<const char*> set;
  };
  int compared = 0;
  for (const Case& k : {Case{"nvl36x2", {}},
                        Case{"nvl576-style", {"fabric.gpus=144", "fabric.leaves=4", "switch.ports=128"}},
                        Case{"hgx-h200-8", {"fabric.gpus=32", "fabric.planes=18"}}})
    for (const char* algo : {"ring", "nvls", "scin", "scin-inq", "two-shot", "ring-q8"})
      for (const std::uint64_t bytes : {std::uint64_t{4096}, std::uint64_t{256} << 10}) {
        Config c = load_preset(k.preset);
        for (const char* a : k.set) apply_assignment(c, a);
        apply_assignment(c, "ring.protocol=simple");
        validate(c);
        SCOPED_TRACE(std::string(k.preset) + " " + std::to_string(c.fabric.gpus) + " GPUs, " + algo + ", " +
                     std::to_string(bytes) + " B");
        const Collective coll{bytes, DType::Bf16};
        const Algorithm a = parse_algorithm(algo);
        const WorkEstimate w = estimate(c, a, coll, EngineId::Packet);
        const packet::Run r = packet::run(c, compile(c, a, coll));
        const double ran = static_cast<double>(r.stats.events);
        // Beyond 128 GPUs extrapolated from 16-64 GPUs, whose chunks round to
        // packets differently (SCIN+INQ at 4 KiB on 144 GPUs: 2.2x).
        EXPECT_GT(w.amount, 0.5 * ran);
        EXPECT_LT(w.amount, (c.fabric.gpus > 128 ? 2.5 : 2.0) * ran);
        ++compared;
      }
  EXPECT_EQ(compared, 36);
}

}  // namespace
}  // namespace scin
