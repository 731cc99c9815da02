// The packet engine against the analytic engine and closed forms, on what the
// two engines share through the cost model: every algorithm on every preset at
// 64 MiB (the issue-11 contract), ring protocol auto, mesh reads, and the ISA
// buffer's deadlock escape.
#include <gtest/gtest.h>

#include "base/error.h"
#include "engines/analytic/analytic.h"
#include "engines/packet/packet_engine.h"
#include "engines/simulate.h"
#include "fabric/params.h"
#include "fabric/preset.h"
#include "schedule/builder.h"

namespace scin {
namespace {

// `scin run --preset P --engine packet --bytes 64M` against the analytic engine:
// within 2% for every algorithm on every preset. One known exception, measured
// and bounded here so that it cannot grow unnoticed: NVLS on hgx-b200-8 (+8.3%
// at 64 MiB, +9.5% at 256 MiB), where the 64 KiB switch port buffer is barely a
// bandwidth-delay product at 450 GB/s per plane and multicast writes stall on
// credits, which the analytic engine does not model; with
// packet.port_buffer_bytes=1M the two agree within 0.1% (docs/model.md, section 4).
// A second known gap came with the calibrated presets (issue 15): a fitted
// one_shot.link_efficiency above links.efficiency lets the analytic engine move
// one-shot payload at the raw link rate, while the packet engine still pays each
// packet's header (+5.0 to +5.5% at 64 MiB). Bounded at 6% here; closing it is
// open work (docs/model.md, section 9).
// The 72-GPU rack preset is left out: its packet runs at 64 MiB take minutes on
// CI's two cores (its analytic results are pinned by tests/golden).
TEST(EngineAgreement, EveryAlgorithmEveryPresetWithinTwoPercentAt64MiB) {
  for (const auto& p : list_presets()) {
    const Config c = load_preset(p.name);
    if (c.fabric.gpus > 8) continue;
    for (const auto& algo : supported_algorithms(c)) {
      const Collective coll{64u << 20, DType::Bf16};
      const double a = simulate(c, algo, coll, "analytic").time_ns;
      const double k = simulate(c, algo, coll, "packet").time_ns;
      const bool buffer_bound = p.name == "hgx-b200-8" && algo == "nvls";
      const bool fitted_one_shot = algo == "one-shot" && c.tuning.one_shot_link_efficiency > c.links.efficiency;
      const double tol = buffer_bound ? 0.09 : fitted_one_shot ? 0.06 : 0.02;
      EXPECT_NEAR(k / a, 1.0, tol) << p.name << " " << algo << ": analytic " << a << " ns, packet " << k << " ns";
    }
  }
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
