// The packet engine against the analytic engine and closed forms, on what the
// two engines share through the cost model: every algorithm on every preset at
// 64 MiB (the issue-11 contract), ring protocol auto, mesh reads, and the ISA
// buffer's deadlock escape.
#include <algorithm>
#include <cctype>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "base/error.h"
#include "engines/analytic/analytic.h"
#include "engines/packet/packet_engine.h"
#include "engines/simulate.h"
#include "fabric/params.h"
#include "fabric/preset.h"
#include "model/routed_cost.h"
#include "schedule/builder.h"

namespace scin {
namespace {

// `scin run --preset P --engine packet --bytes 64M` against the analytic engine:
// within 2% for every algorithm on every preset (docs/model.md, section 4,
// "Agreement"). The two gaps this test used to allow are closed where they were
// physically wrong: hgx-b200-8's switch port buffer was an H200-sized 64 KiB at
// 4x the plane bandwidth, below its credit loop (NVLS +5.8%; the preset now has
// 256 KiB, and CreditLoop below pins the rule), and a calibrated
// one_shot.link_efficiency of 1 let the analytic engine move payload at the raw
// link rate, which no packet with a header can (+5.2%; the cost model caps every
// payload rate at P / (P + H) of raw, so both engines now say the same).
// The 72-GPU rack runs as its 16-GPU slice (same links, planes and switch; a
// 72-GPU packet run at 64 MiB takes 4 to 5 s of CPU per algorithm and one-shot
// minutes). One gap remains there, bounded here and open (docs/model.md,
// section 4): nvls pays the ld_reduce pipeline fill, (N - 1) chunks, which grows
// with N (+2.3% at 16 GPUs; it is within 1% once one fill is subtracted).
// (scin-inq, allowed 4% here until 2026-12-05, was faster on the packet engine:
// -3.1% at 16 GPUs, -23% at 32, -17% at 72, while the analytic engine booked
// the INQ unit for reads whose data ran ahead of it; with paced units taken
// when free it is 1.000 at 16 GPUs, 0.995 at 32, 0.986 at 72.)
Config agreement_config(const std::string& preset) {
  Config c = load_preset(preset);
  if (c.fabric.gpus > 16) set_param(c, "fabric.gpus", 16);
  return c;
}

TEST(EngineAgreement, EveryAlgorithmEveryPresetWithinTwoPercentAt64MiB) {
  int presets = 0;
  for (const auto& p : list_presets()) {
    const Config c = agreement_config(p.name);
    if (c.fabric.topology == Topology::TwoTier) continue;  // TwoTierAgreement.WithinTwoPercentAt64MiB
    ++presets;
    for (const auto& algo : supported_algorithms(c)) {
      const Collective coll{64u << 20, DType::Bf16};
      const double a = simulate(c, algo, coll, "analytic").time_ns;
      const double k = simulate(c, algo, coll, "packet").time_ns;
      const std::string what = fmt::format("{} ({} GPUs) {}: analytic {} ns, packet {} ns", p.name, c.fabric.gpus, algo, a, k);
      if (c.fabric.gpus > 8 && algo == "nvls") {
        // At most one pipeline fill slower: N - 1 chunks of 128 KiB at the NVLS
        // payload rate (2026-12-05: +0.5% since the packets of each transfer
        // start on the plane of its address; +1.9%, one fill, while every
        // transfer started on plane 0).
        const double n = c.fabric.gpus;
        const double fill = (n - 1) * (128 << 10) / (c.links.bandwidth_GBps * c.links.efficiency * c.sw.nvls.efficiency);
        EXPECT_GE(k / a, 0.99) << what;
        EXPECT_LE(k / a, 1.01 + fill / a) << what << ", fill " << fill << " ns";
        continue;
      }
      EXPECT_NEAR(k / a, 1.0, 0.02) << what;
    }
  }
  EXPECT_GE(presets, 7);
}

// Two tiers (issue 16): the packet engine routes packets hop by hop over the
// leaf and spine links the analytic engine books, so the two agree within 2%
// on bandwidth-bound sizes; they carry the same bytes on the busiest
// accelerator link. Scaled down so a run takes seconds: nvl36x2 as 2 leaves x
// 8 GPUs (1 spine), nvl576-style as 4 leaves x 8 GPUs (9 spines). One-shot
// runs at 16 MiB (every GPU receives N - 1 copies: still bandwidth-bound, and
// 4x fewer packets). Open gap (docs/model.md, "Two-tier fabrics"): two-shot
// at 4 leaves, packet up to 3.5% slower: both end the reduce-scatter on the
// busiest ECMP bundle together, but the analytic engine's first-come queues
// finish most ranks' pushes early and start their all-gather sooner, where a
// rank's concurrent pushes share its port and finish together.
// The switch buffers are 1 MiB a port here, deep enough for the backlog of
// the ECMP's busiest trunk: at 4 leaves a GPU's multicast tree takes the
// spine its hash picks, so some trunks carry two GPUs' trees and others none.
// With nvl576-style's 64 KiB those trunks back up into the leaves' input
// buffers and pace every sender that feeds them: one-shot at 16 MiB is 19%
// slower (10% with 256 KiB), a contention effect the analytic engine does not
// see (PacketTwoTierBuffers in test_components.cc). One test per (fabric, algorithm), so that ctest spreads the ~4
// CPU minutes of packet runs over its jobs and no single test nears the
// timeout on a loaded machine.
struct TwoTierCase {
  const char* preset;
  int gpus, leaves;
};
const TwoTierCase kTwoTierCases[] = {{"nvl36x2", 16, 2}, {"nvl576-style", 32, 4}};
const char* const kTwoTierAlgos[] = {"ring", "one-shot", "two-shot", "nvls", "scin", "scin-inq", "scin-inq-uplink", "ring-q8", "two-shot-q8"};

Config two_tier(const TwoTierCase& k) {
  Config c = load_preset(k.preset);
  set_param(c, "fabric.gpus", k.gpus);
  set_param(c, "fabric.leaves", k.leaves);
  set_param(c, "packet.port_buffer_bytes", 1 << 20);
  return c;
}

class TwoTierAgreement : public ::testing::TestWithParam<std::tuple<int, const char*>> {};

TEST_P(TwoTierAgreement, WithinTwoPercentAt64MiB) {
  const TwoTierCase& k = kTwoTierCases[std::get<0>(GetParam())];
  const std::string algo = std::get<1>(GetParam());
  const Config c = two_tier(k);
  ASSERT_EQ(c.fabric.topology, Topology::TwoTier);
  const auto supported = supported_algorithms(c);
  if (std::find(supported.begin(), supported.end(), algo) == supported.end())
    GTEST_SKIP() << algo << " is not supported on " << k.preset;
  const Collective coll{(algo == "one-shot" ? 16u : 64u) << 20, DType::Bf16};
  const SimResult a = simulate(c, algo, coll, "analytic");
  const SimResult p = simulate(c, algo, coll, "packet");
  const std::string what = fmt::format("{} ({} GPUs, {} leaves) {}: analytic {} ns, packet {} ns", k.preset,
                                       k.gpus, k.leaves, algo, a.time_ns, p.time_ns);
  const double tol = k.leaves > 2 && (algo == "two-shot" || algo == "two-shot-q8") ? 0.035 : 0.02;
  if (algo == "nvls") {
    // Open gap (docs/model.md section 4): the analytic engine's booking of
    // two-tier NVLS is 4-8% slower here than the packet engine, which is the
    // same on 2 planes as on 18 (TwoTierNvlsDoesNotDependOnThePlaneCount).
    EXPECT_GE(p.time_ns / a.time_ns, 0.915) << what;
    EXPECT_LE(p.time_ns / a.time_ns, 1.02) << what;
  } else {
    EXPECT_NEAR(p.time_ns / a.time_ns, 1.0, tol) << what;
  }
  EXPECT_DOUBLE_EQ(p.max_link_bytes, a.max_link_bytes) << what;
}

INSTANTIATE_TEST_SUITE_P(EngineAgreement, TwoTierAgreement,
                         ::testing::Combine(::testing::Range(0, 2), ::testing::ValuesIn(kTwoTierAlgos)),
                         [](const auto& info) {
                           std::string n = std::string(kTwoTierCases[std::get<0>(info.param)].preset) + "_" +
                                           std::get<1>(info.param);
                           for (char& ch : n)
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return n;
                         });

// The cases above cover every algorithm the two-tier fabrics support.
TEST(EngineAgreement, TwoTierCasesCoverEverySupportedAlgorithm) {
  for (const TwoTierCase& k : kTwoTierCases) {
    const auto supported = supported_algorithms(two_tier(k));
    EXPECT_GE(supported.size(), 6u) << k.preset;
    for (const auto& a : supported)
      EXPECT_NE(std::find(std::begin(kTwoTierAlgos), std::end(kTwoTierAlgos), a), std::end(kTwoTierAlgos))
          << k.preset << " supports " << a << ", which the agreement cases do not run";
  }
}

// The packets of a transfer over every plane start on the plane of its address
// (Engine::setup_flow), so the packet engine's time does not hinge on how a
// transfer's packet count divides by the plane count. While every transfer
// started on plane 0, a spine part of 128 packets put 8 on planes 0-1 of 18
// (7.1 on average): two-tier NVLS took 103.6 us on 18 planes and 97.9 us on 2
// at 16 MiB, 236.8 and 217.4 us at 64 MiB (nvl576-style, 32 GPUs on 4
// leaves; now 2 and 18 planes within 1%); and a shard of fewer
// packets than planes used the first planes alone: NVLS at 4 KiB on 16 GPUs of
// gb200-nvl72 was 22% slower than the analytic engine's even split of the
// bytes over the 18 planes, at 32 KiB on nvl36x2's 72 GPUs 27%.
// (Each plane's buffers hold the same time's worth of its data: 64 KiB at 18
// planes, 9 x 64 KiB on each of 2 planes, 9 times faster.)
TEST(EngineAgreement, TwoTierNvlsDoesNotDependOnThePlaneCount) {
  auto packet_us = [](Config c, int planes) {
    set_param(c, "fabric.planes", planes);
    set_param(c, "packet.port_buffer_bytes", (64 << 10) * 18 / planes);
    return simulate(c, "nvls", {16u << 20, DType::Bf16}, "packet").time_ns / 1e3;
  };
  Config c = load_preset("nvl576-style");
  set_param(c, "fabric.gpus", 32);
  set_param(c, "fabric.leaves", 4);
  const double two = packet_us(c, 2), eighteen = packet_us(c, 18);
  EXPECT_NEAR(eighteen / two, 1.0, 0.015) << "2 planes " << two << " us, 18 planes " << eighteen << " us";
}

TEST(EngineAgreement, NvlsShardsOfFewerPacketsThanPlanesSpreadOverThePlanes) {
  struct Case {
    const char* preset;
    int gpus;
    std::uint64_t bytes;
  };
  for (const Case& k : {Case{"gb200-nvl72", 16, 4096}, Case{"gb200-nvl72", 16, 32768}, Case{"nvl36x2", 72, 32768}}) {
    Config c = load_preset(k.preset);
    set_param(c, "fabric.gpus", k.gpus);
    const Collective coll{k.bytes, DType::Bf16};
    const double a = simulate(c, "nvls", coll, "analytic").time_ns;
    const double p = simulate(c, "nvls", coll, "packet").time_ns;
    EXPECT_GE(p / a, 1.0 - 1e-6) << k.preset << " " << k.bytes;
    // (1.03 until the NVLS ramp was refitted with ring.channels, 2026-12-06: 1.031 on gb200-nvl72 at 16 GPUs.)
    EXPECT_LE(p / a, 1.035) << k.preset << " (" << k.gpus << " GPUs) at " << k.bytes << " B: analytic " << a
                           << " ns, packet " << p << " ns";
  }
}

// A unicast transfer's first plane is offset by the distance to its peer
// ((peer - initiator) mod N + offset / P): a rank's transfers of one offset to
// different peers start on different planes. With the offset alone, a rank's
// all-gather pushes of its shard (one offset, 71 receivers) all started on
// the same plane: two-shot at 32 KiB on nvl36x2's
// 72 GPUs (shards of 455 B, 2 packets, on 18 planes) took 12.69 us against the
// analytic 12.09 (+5.0%, two-shot-q8 +5.1%), one-shot at 512 B +3.7%.
TEST(EngineAgreement, UnicastPushesToManyPeersSpreadOverThePlanes) {
  struct Case {
    const char* algo;
    std::uint64_t bytes;
    double bound;
  };
  Config c = load_preset("nvl36x2");
  ASSERT_EQ(c.fabric.gpus, 72);
  for (const Case& k : {Case{"two-shot", 32768, 1.01}, Case{"two-shot-q8", 32768, 1.01}, Case{"one-shot", 512, 1.01}}) {
    const Collective coll{k.bytes, DType::Bf16};
    const double a = simulate(c, k.algo, coll, "analytic").time_ns;
    const double p = simulate(c, k.algo, coll, "packet").time_ns;
    EXPECT_GE(p / a, 1.0 - 1e-6) << k.algo << " " << k.bytes;
    EXPECT_LE(p / a, k.bound) << k.algo << " at " << k.bytes << " B: analytic " << a << " ns, packet " << p << " ns";
  }
}

// A slow INQ unit (scin-fpga-4: 64 GB/s for 12.5 GB/s links) at the mid
// sizes where it bounds SCIN+INQ: the analytic engine books an ISA read's fed
// units when its data arrives (a lead after its transfers), in time order with
// the requantises, as the packet engine's unit serves them. Booked with the
// transfers, ahead of the data, the analytic engine was up to 11-13%
// optimistic here (16-32 KiB) and 4% pessimistic at 256 KiB. (Within 3.5%:
// the packet engine paces requests open-loop at the unit's read rate, so the
// requantises, a large share of this slow unit's work, queue behind a backlog
// that the analytic engine's paced units, taken when free, do not build: +3.0%
// at 1 MiB; with switch.isa.regulation = none the engines agree within 0.6%.)
TEST(EngineAgreement, SlowInqUnitsServeReadsWhenTheirDataArrives) {
  for (const char* regulation : {"paced", "none"}) {
    Config c = load_preset("scin-fpga-4");
    set_param(c, "switch.isa.regulation", std::string(regulation));
    for (std::uint64_t bytes = 1024; bytes <= (std::uint64_t{1} << 20); bytes *= 4) {
      const Collective coll{bytes, DType::Bf16};
      const double a = simulate(c, "scin-inq", coll, "analytic").time_ns;
      const double p = simulate(c, "scin-inq", coll, "packet").time_ns;
      EXPECT_NEAR(p / a, 1.0, 0.035) << regulation << ", " << bytes << " B: analytic " << a << " ns, packet " << p << " ns";
    }
  }
}

// Paced units (switch.isa.regulation = paced, every preset's) at 72 GPUs a
// plane: a read's data comes no faster than the unit takes it, so a requantise
// ready meanwhile gets the unit before the reads still to come, and the waves'
// multicasts do not bunch at the end. Booked when their data arrived, whatever
// the unit's queue, the analytic engine was 6.3% slower at 1 MiB and 11.5% at
// 4 MiB (then -15% at 16-64 MiB).
TEST(EngineAgreement, PacedInqUnitsLetRequantisesInAtManyGpus) {
  const Config c = load_preset("gb200-nvl72");
  ASSERT_EQ(c.fabric.gpus, 72);
  for (std::uint64_t bytes : {std::uint64_t{1} << 20, std::uint64_t{4} << 20}) {
    const Collective coll{bytes, DType::Bf16};
    const double a = simulate(c, "scin-inq", coll, "analytic").time_ns;
    const double p = simulate(c, "scin-inq", coll, "packet").time_ns;
    EXPECT_NEAR(p / a, 1.0, 0.02) << bytes << " B: analytic " << a << " ns, packet " << p << " ns";
  }
}

// The two-tier gaps closed above, each pinned at its cause:
// - a routed link's payload rate has the framing ceiling a star port has
//   (one_shot.link_efficiency = 1 moves payload at raw x P / (P + H), not raw);
// - an accelerator's HBM is booked by reservation in both engines: work that is
//   ready first (ring-q8's quantise) runs before a write's receive-reduce that
//   starts after the write's fixed cost;
// - two-tier NVLS keeps NCCL_STEPS = 8 chunks in flight per rank: bandwidth-bound
//   at 64 MiB, where two chunks left it latency-bound (and 15-21% apart).
TEST(EngineAgreement, TwoTierGapCauses) {
  Config c = load_preset("nvl36x2");
  set_param(c, "fabric.gpus", 16);
  set_param(c, "fabric.leaves", 2);
  const Schedule s = compile(c, "one-shot", {16u << 20, DType::Bf16});
  const ResourceMap rm = resource_map(s);
  const double framed = port_raw_GBps(c, s) * framing_efficiency(c);
  EXPECT_DOUBLE_EQ(routed::link_payload_GBps(c, s, rm, rm.egress(0, 0), 1 / c.links.efficiency), framed);
  EXPECT_DOUBLE_EQ(routed::link_payload_GBps(c, s, rm, rm.uplink(0, 0, 0), 1 / c.links.efficiency),
                   framed * routed::trunk_raw_GBps(c, s) / port_raw_GBps(c, s));
  // NVLS: chunk c + 8's first stage waits for chunk c's store, not chunk c + 6's.
  const Schedule n = compile(c, "nvls", {64u << 20, DType::Bf16});
  StepId first8 = kNoStep, store0 = kNoStep;
  for (StepId i = 0; i < n.steps.size(); ++i) {
    if (n.steps[i].label == "ld_reduce leaf r0 shard 0 chunk 8") first8 = i;
    if (n.steps[i].label == "multimem.st r0 shard 0 chunk 0") store0 = i;
  }
  ASSERT_NE(first8, kNoStep);
  ASSERT_NE(store0, kNoStep);
  const auto& deps = n.steps[first8].deps;
  EXPECT_NE(std::find(deps.begin(), deps.end(), store0), deps.end());
}

// A step that moves no bytes (a ring chunk, a ring-q8 block or a shard of
// no elements: a few bytes over many ranks) still tells its receiver it is
// done, so on the packet engine it ends its step's latency after it starts, as
// the analytic engine charges it. It used to end at its start: on two tiers,
// where the sends between leaves cost more, a rank whose sends were all empty
// waited on no wire (ring at 8 B on nvl36x2's 2 leaves x 4: 20.5 us against
// 27.0; 16 GPUs 30.1 against 47.0; ring-q8 58.6 against 65.1).
TEST(EngineAgreement, EmptyStepsTakeTheirLatencyOnTwoTiers) {
  for (int gpus : {8, 16}) {
    Config c = load_preset("nvl36x2");
    set_param(c, "fabric.gpus", gpus);
    set_param(c, "fabric.leaves", 2);
    for (const char* algo : {"ring", "ring-q8"}) {
      for (std::uint64_t bytes : {8ull, 64ull}) {
        const Collective coll{bytes, DType::Bf16};
        const double a = simulate(c, algo, coll, "analytic").time_ns;
        const double p = simulate(c, algo, coll, "packet").time_ns;
        EXPECT_GE(p, a * (1 - 1e-6)) << gpus << " GPUs " << algo << " " << bytes << " B";
        // (+0.17% under ring.channels: the one non-empty chunk's paced payload on one plane.)
        EXPECT_LE(p, a * 1.003) << gpus << " GPUs " << algo << " " << bytes << " B: analytic " << a << " packet " << p;
      }
    }
  }
}

// A switch input port's buffer must cover its credit loop (a packet's bytes go
// over the link, the credit comes back: raw rate x 2 x links.latency_ns) with
// the same 2x headroom every NVLink preset has, or multicast and incast traffic
// stall on credits in the packet engine while the analytic engine (which has no
// buffers) runs at line rate. Checked on every switched preset, and shown to
// bite: hgx-b200-8 with H200's 64 KiB is slower on the packet engine.
TEST(EngineAgreement, SwitchPortBuffersCoverTwiceTheCreditLoop) {
  for (const auto& p : list_presets()) {
    const Config c = load_preset(p.name);
    if (c.fabric.topology != Topology::Star) continue;
    const Schedule s = compile(c, "two-shot", {1u << 20, DType::Bf16});
    const double loop_bytes = port_raw_GBps(c, s) * 2 * c.links.latency_ns;
    EXPECT_GE(static_cast<double>(c.packet.port_buffer_bytes), 2 * loop_bytes) << p.name;
  }
  Config b200 = load_preset("hgx-b200-8");
  const Collective coll{64u << 20, DType::Bf16};
  const double fits = simulate(b200, "nvls", coll, "packet").time_ns;
  apply_assignment(b200, "packet.port_buffer_bytes=64K");
  EXPECT_GT(simulate(b200, "nvls", coll, "packet").time_ns, 1.03 * fits);
}

// The payload ceiling: an algorithm efficiency above the framing ratio moves
// payload at raw x P / (P + H) in both engines, exactly what full packets give.
TEST(EngineAgreement, NoEfficiencyLiftsPayloadAboveTheFramingRatio) {
  Config c = load_preset("hgx-h200-8");
  apply_assignment(c, "one_shot.link_efficiency=1");
  const Schedule s = compile(c, "one-shot", {64u << 20, DType::Bf16});
  const double raw = port_raw_GBps(c, s);
  EXPECT_DOUBLE_EQ(framing_efficiency(c), 256.0 / 272.0);
  EXPECT_DOUBLE_EQ(port_payload_GBps(c, s, 1 / c.links.efficiency), raw * 256.0 / 272.0);
  EXPECT_DOUBLE_EQ(port_payload_GBps(c, s, 1.0), raw * 0.82);   // below the ceiling: unchanged
  const double a = simulate(c, "one-shot", {64u << 20, DType::Bf16}, "analytic").time_ns;
  const double k = simulate(c, "one-shot", {64u << 20, DType::Bf16}, "packet").time_ns;
  EXPECT_NEAR(k / a, 1.0, 1e-3);
}

// ring.protocol = auto on the packet engine: the protocol the analytic engine
// predicts fastest, then exactly the packet run of that protocol's schedule.
TEST(EngineAgreement, RingAutoRunsThePickedProtocolOnThePacketEngine) {
  for (std::uint64_t bytes : {std::uint64_t{4096}, std::uint64_t{4} << 20}) {
    Config c = load_preset("hgx-h200-8");
    apply_assignment(c, "ring.protocol=auto");
    const SimResult pk = simulate(c, "ring", {bytes, DType::Bf16}, "packet");
    const SimResult an = simulate(c, "ring", {bytes, DType::Bf16}, "analytic");
    EXPECT_EQ(pk.variant, an.variant) << bytes;
    // The pick, by hand: the protocol whose schedule the analytic engine times fastest.
    Config best;
    double best_ns = 0;
    for (const char* proto : {"ll", "ll128", "simple"}) {
      Config x = c;
      apply_assignment(x, std::string("ring.protocol=") + proto);
      const double t = run_analytic(x, compile(x, "ring", {bytes, DType::Bf16})).time_ns;
      if (best_ns == 0 || t < best_ns) {
        best_ns = t;
        best = x;
      }
    }
    EXPECT_EQ(pk.variant, to_string(best.ring.protocol)) << bytes;
    EXPECT_EQ(pk.time_ns, run_packet_sim(best, compile(best, "ring", {bytes, DType::Bf16})).time_ns) << bytes;
  }
  // Small messages pick LL, large ones Simple (NCCL's choice on NVLink).
  Config c = load_preset("hgx-h200-8");
  apply_assignment(c, "ring.protocol=auto");
  EXPECT_EQ(simulate(c, "ring", {4096, DType::Bf16}, "packet").variant, "LL");
  EXPECT_EQ(simulate(c, "ring", {1u << 30, DType::Bf16}, "analytic").variant, "Simple");
}

// Rank 0 reads rank 1's buffer over the mesh: the request crosses one link
// (latency), memory answers, and the response streams back at the per-peer
// rate. Both engines: 2 x latency + memory + bytes / rate.
TEST(EngineAgreement, MeshReadsInBothEnginesMatchTheClosedForm) {
  Config c = load_preset("mesh-8");
  const std::uint64_t bytes = 1u << 20;
  build::Builder b(c, "mesh-read", {bytes, DType::Bf16});
  Schedule& s = b.s;
  b.read(0, kDirect, DataOp::Copy, Unit::None, {Region{s.input[1], 0, s.elems}}, Region{s.output[0], 0, s.elems}, {},
         "r0 reads r1");
  const double rate = port_payload_GBps(c, s, 1.0);
  const double expect = 2 * c.links.latency_ns + c.accelerator.mem_latency_ns + static_cast<double>(bytes) / rate;
  EXPECT_NEAR(run_analytic(c, s).time_ns, expect, 1e-9 * expect);
  const SimResult p = run_packet_sim(c, s);
  EXPECT_NEAR(p.time_ns, expect, 0.01 * expect);
  for (const auto& l : p.extra["links"]) {
    const bool used = l["gpu"] == 1 && l.value("peer", -1) == 0;
    EXPECT_EQ(l["payload_bytes"].get<double>(), used ? static_cast<double>(bytes) : 0.0) << l["name"];
  }
}

// An ISA buffer smaller than one reduction group (8 sources x one packet) fills
// with partial groups that can never complete; the engine lets the group the
// reducer waits for in anyway, so the run finishes (the high-water mark shows
// the escape was taken) with every byte delivered.
TEST(PacketIsaEscape, ABufferSmallerThanOneGroupDoesNotDeadlock) {
  Config c = load_preset("hgx-h200-8");
  const std::uint64_t bytes = 256u << 10;
  const Schedule s = compile(c, "scin", {bytes, DType::Bf16});  // waves sized for the 8 MiB buffer
  apply_assignment(c, "switch.isa.buffer_bytes=512");            // run with two packets of buffer
  apply_assignment(c, "switch.isa.regulation=none");
  SimResult r;
  ASSERT_NO_THROW(r = run_packet_sim(c, s));
  std::uint64_t hwm = 0;
  for (const auto& isa : r.extra["isa"]) hwm = std::max(hwm, isa["buffer_hwm_bytes"].get<std::uint64_t>());
  EXPECT_GT(hwm, 512u);
  EXPECT_LE(hwm, 512u + 8u * c.packet.payload_bytes);  // partial groups + the one let in
  EXPECT_EQ(r.max_link_bytes, link_bytes(s).max_link_bytes());
  EXPECT_GT(r.time_ns, run_analytic(c, s).time_ns);  // one group at a time: slower, never faster
}

}  // namespace
}  // namespace scin
