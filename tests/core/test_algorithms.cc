// Schedules: structure, the bytes each accelerator moves, and errors.
#include <gtest/gtest.h>

#include "schedule/algorithms.h"
#include "base/error.h"
#include "fabric/preset.h"

using namespace scin;

namespace {
Config star(int n, int planes = 1) {
  Config c;
  c.fabric.gpus = n;
  c.fabric.planes = planes;
  c.sw.isa.enabled = true;
  c.sw.isa.inq = true;
  c.ring.protocol = RingProtocol::Simple;
  return c;
}
}  // namespace

// compile() checks every schedule it returns (check_schedule); this checks the
// interface every engine relies on: one input and one output buffer per rank.
TEST(Algorithms, EveryScheduleHasOneInputAndOutputPerRank) {
  for (const auto& info : list_presets()) {
    Config cfg = load_preset(info.name);
    if (cfg.ring.protocol == RingProtocol::Auto) cfg.ring.protocol = RingProtocol::LL;
    for (const auto& algo : supported_algorithms(cfg))
      for (std::uint64_t bytes : {2ull, 8ull, 1000ull, 65536ull, 3ull << 20}) {
        Schedule s = compile(cfg, algo, {bytes, DType::Bf16});
        EXPECT_EQ(s.input.size(), static_cast<std::size_t>(cfg.fabric.gpus));
        EXPECT_EQ(s.output.size(), static_cast<std::size_t>(cfg.fabric.gpus));
        EXPECT_EQ(s.elems, bytes / 2);
      }
  }
}

TEST(Algorithms, RingHas2NMinus1StepsPerRank) {
  for (int n : {2, 4, 8}) {
    Schedule s = compile(star(n), "ring", {1 << 20, DType::Bf16});
    int writes = 0;
    for (const auto& st : s.steps) writes += st.kind == StepKind::Write;
    EXPECT_EQ(writes, 2 * (n - 1) * n);
  }
}

TEST(Algorithms, BytesPerLinkMatchTheBrief) {
  const int n = 8;
  const double S = 8.0 * 1024 * 1024;  // divisible by N and by every block count used
  Config c = star(n, 4);
  auto lb = [&](const std::string& algo) { return link_bytes(compile(c, algo, {static_cast<std::uint64_t>(S), DType::Bf16})); };
  for (int r = 0; r < n; ++r) {
    EXPECT_DOUBLE_EQ(lb("ring").egress_bytes[r], 2.0 * (n - 1) / n * S);
    EXPECT_DOUBLE_EQ(lb("ring").ingress_bytes[r], 2.0 * (n - 1) / n * S);
    EXPECT_DOUBLE_EQ(lb("two-shot").egress_bytes[r], 2.0 * (n - 1) / n * S);
    EXPECT_DOUBLE_EQ(lb("one-shot").egress_bytes[r], (n - 1) * S);
    EXPECT_DOUBLE_EQ(lb("nvls").egress_bytes[r], S + S / n);
    EXPECT_DOUBLE_EQ(lb("nvls").ingress_bytes[r], S / n + S);
    EXPECT_DOUBLE_EQ(lb("scin").egress_bytes[r], S);
    EXPECT_DOUBLE_EQ(lb("scin").ingress_bytes[r], S);
  }
  // INQ: (8G + s) / (16G) of the 16-bit payload each way.
  for (int g : {32, 128}) {
    for (ScaleFormat f : {ScaleFormat::Fp16, ScaleFormat::Fp32}) {
      c.quant.block_elems = g;
      c.quant.scale_format = f;
      const double ratio = (8.0 * g + 8 * scale_bytes(f)) / (16.0 * g);
      EXPECT_DOUBLE_EQ(payload_ratio(c.quant), ratio);
      auto q = lb("scin-inq");
      EXPECT_DOUBLE_EQ(q.egress_bytes[0], ratio * S) << g;
      EXPECT_DOUBLE_EQ(q.ingress_bytes[5], ratio * S) << g;
    }
  }
  c.quant.block_elems = 32;
  c.quant.scale_format = ScaleFormat::Fp16;
  EXPECT_DOUBLE_EQ(payload_ratio(c.quant), 0.53125);
  c.quant.block_elems = 128;
  EXPECT_DOUBLE_EQ(payload_ratio(c.quant), 0.5078125);
}

TEST(Algorithms, MeshUsesDirectLinks) {
  Config m = load_preset("mesh-8");
  Schedule s = compile(m, "one-shot", {1 << 20, DType::Bf16});
  for (const auto& st : s.steps)
    if (st.kind == StepKind::Write) {
      EXPECT_EQ(st.via, kDirect);
    }
  EXPECT_DOUBLE_EQ(link_bytes(s).egress_bytes[3], 7.0 * (1 << 20));
}

TEST(Algorithms, UnsupportedCombinationsAreClearErrors) {
  Config m = load_preset("mesh-8");
  try {
    compile(m, "nvls", {1024, DType::Bf16});
    FAIL() << "nvls compiled on a mesh";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("nvls needs a switch"), std::string::npos) << e.what();
  }
  EXPECT_THROW(compile(m, "scin", {1024, DType::Bf16}), Error);
  Config h = load_preset("hgx-h100-8");
  h.sw.isa.inq = false;
  EXPECT_NE(unsupported_reason(h, "scin-inq").find("switch.isa.inq"), std::string::npos);
  h.sw.nvls.enabled = false;
  EXPECT_NE(unsupported_reason(h, "nvls").find("switch.nvls.enabled"), std::string::npos);
  EXPECT_THROW(compile(h, "tree", {1024, DType::Bf16}), Error);
  EXPECT_THROW(compile(h, "scin", {0, DType::Bf16}), Error);
  EXPECT_THROW(compile(h, "scin", {7, DType::Bf16}), Error);   // not whole elements
  EXPECT_THROW(compile(h, "scin", {6, DType::Fp32}), Error);
  EXPECT_EQ(supported_algorithms(m), (std::vector<std::string>{"ring", "one-shot", "two-shot", "ring-q8", "two-shot-q8"}));
}

TEST(Algorithms, TinyMessagesSmallerThanTheRankCount) {
  // 2 bytes of BF16 = one element on 8 ranks: most shards are empty but every
  // schedule still compiles and delivers to every rank.
  Config h = load_preset("hgx-h200-8");
  h.ring.protocol = RingProtocol::LL;
  for (const auto& algo : supported_algorithms(h)) {
    Schedule s = compile(h, algo, {2, DType::Bf16});
    EXPECT_EQ(s.elems, 1u) << algo;
    EXPECT_GE(link_bytes(s).max_link_bytes(), 1.0) << algo;
  }
}
