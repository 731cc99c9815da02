// The data engine: hand-built schedules pin the step semantics; every
// algorithm on every preset must deliver the sum to every rank.
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <tbb/global_control.h>

#include "schedule/algorithms.h"
#include "base/error.h"
#include "error_of.h"
#include "fabric/preset.h"
#include "numerics/codec.h"
#include "engines/data/coverage.h"
#include "engines/data/data_engine.h"
#include "numerics/formats.h"
#include "numerics/inputs.h"
#include "numerics/metrics.h"
#include "numerics_test_util.h"

using namespace scin;

namespace {

// A two-rank schedule skeleton with input/output buffers in `f`.
Schedule two_ranks(std::uint64_t elems, Format f) {
  Schedule s;
  s.algorithm = "test";
  s.gpus = 2;
  s.planes = 1;
  s.elems = elems;
  for (int r = 0; r < 2; ++r) {
    s.input.push_back(s.add_buffer({"in", r, elems, f}));
    s.output.push_back(s.add_buffer({"out", r, elems, f}));
  }
  return s;
}

Step data_step(StepKind k, NodeId who, DataOp op, std::vector<Region> srcs, std::vector<Region> dsts) {
  Step st;
  st.kind = k;
  st.initiator = who;
  st.op = op;
  st.srcs = std::move(srcs);
  st.dsts = std::move(dsts);
  return st;
}

const std::vector<std::string> kPresets = {"hgx-h100-8", "hgx-h200-8", "hgx-b200-8", "scin-fpga-4", "mesh-8"};

Config preset_with_ring_simple(const std::string& name) {
  Config c = load_preset(name);
  c.ring.protocol = RingProtocol::Simple;
  return c;
}

// Small integers: every partial sum is exact in BF16/FP16/FP32 whatever the order.
std::vector<std::vector<float>> integer_inputs(int ranks, std::uint64_t elems) {
  std::vector<std::vector<float>> x(static_cast<std::size_t>(ranks), std::vector<float>(elems));
  for (int r = 0; r < ranks; ++r)
    for (std::uint64_t i = 0; i < elems; ++i)
      x[static_cast<std::size_t>(r)][i] = static_cast<float>(static_cast<int>((i * 7 + static_cast<std::uint64_t>(r) * 13) % 31) - 15);
  return x;
}

}  // namespace

TEST(DataEngine, CopyConvertsBetweenFormats) {
  Schedule s = two_ranks(4, Format::Fp32);
  const BufferId b16 = s.add_buffer({"b16", 1, 4, Format::Bf16});
  const BufferId h16 = s.add_buffer({"h16", 1, 4, Format::Fp16});
  s.add(data_step(StepKind::Write, 0, DataOp::Copy, {{s.input[0], 0, 4}}, {{b16, 0, 4}, {h16, 0, 4}}));
  s.add(data_step(StepKind::Compute, 1, DataOp::Copy, {{b16, 0, 2}}, {{s.output[1], 0, 2}}));
  s.add(data_step(StepKind::Compute, 1, DataOp::Copy, {{h16, 2, 2}}, {{s.output[1], 2, 2}}));
  s.add(data_step(StepKind::Compute, 0, DataOp::Copy, {{s.input[0], 0, 4}}, {{s.output[0], 0, 4}}));
  const float a = 1.0f + 0x1p-9f + 0x1p-12f, b = 3.0f + 0x1p-11f;   // both round differently in BF16 and FP16
  DataResult r = run_data(s, {{a, b, a, b}, {0, 0, 0, 0}}, {true});
  EXPECT_EQ(r.outputs[1][0], num::round_bf16(a));
  EXPECT_EQ(r.outputs[1][1], num::round_bf16(b));
  EXPECT_EQ(r.outputs[1][2], num::round_fp16(a));
  EXPECT_EQ(r.outputs[1][3], num::round_fp16(b));
  EXPECT_EQ(r.outputs[0], (std::vector<float>{a, b, a, b}));
  EXPECT_EQ(r.data_steps, 4u);
}

TEST(DataEngine, ReduceRoundsEveryAdditionInAccumFormat) {
  // Sources 1, 2^-8, 2^-8. Summed in BF16 (7 fraction bits), each 2^-8 is a tie
  // that rounds back to 1 (even); summed in FP32 they survive as 1 + 2^-7.
  Schedule s = two_ranks(3, Format::Bf16);
  const BufferId f32 = s.add_buffer({"f32", 0, 1, Format::Fp32});
  const BufferId in = s.input[0];
  Step bf = data_step(StepKind::Compute, 0, DataOp::Reduce, {{in, 0, 1}, {in, 1, 1}, {in, 2, 1}}, {{s.output[0], 0, 1}});
  bf.accum = Format::Bf16;
  s.add(bf);
  Step fp = data_step(StepKind::Compute, 0, DataOp::Reduce, {{in, 0, 1}, {in, 1, 1}, {in, 2, 1}}, {{f32, 0, 1}});
  fp.accum = Format::Fp32;
  s.add(fp);
  s.add(data_step(StepKind::Write, 0, DataOp::Copy, {{f32, 0, 1}}, {{s.output[1], 0, 1}}));
  // accumulate: f32 = f32 + 2^-8 = 1 + 3 * 2^-8 (exact in FP32); into BF16 it is a tie -> 1 + 2^-6.
  Step acc = data_step(StepKind::Compute, 0, DataOp::Reduce, {{in, 1, 1}}, {{f32, 0, 1}});
  acc.accumulate = true;
  s.add(acc);
  s.add(data_step(StepKind::Write, 0, DataOp::Copy, {{f32, 0, 1}}, {{s.output[1], 1, 1}}));
  DataResult r = run_data(s, {{1.0f, 0x1p-8f, 0x1p-8f}, {0.0f, 0.0f, 0.0f}}, {true});
  EXPECT_EQ(r.outputs[0][0], 1.0f);
  EXPECT_EQ(r.outputs[1][0], 1.0f + 0x1p-7f);
  EXPECT_EQ(r.outputs[1][1], 1.0f + 0x1p-6f);
}

TEST(DataEngine, SumsFromZeroStartAtPositiveZero) {
  // A running sum with no destination value starts at +0 and adds its first
  // source to it: negative zeros sum to +0 (BF16 running sums, and an FP32 one
  // whose first source is an FP8 codec, where a -0 input decodes to -0); an
  // accumulating sum starts at its destination's value, so -0 + -0 stays -0.
  // Shared work and steps as listed alike.
  for (const bool share : {true, false}) {
    Schedule s = two_ranks(4, Format::Bf16);
    const BufferId q = s.add_buffer({"q", 0, 4, Format::Fp8E4M3Block, 4});
    const BufferId f32 = s.add_buffer({"f32", 0, 4, Format::Fp32});
    const BufferId in0 = s.input[0], in1 = s.input[1];
    Step bf = data_step(StepKind::Compute, 0, DataOp::Reduce, {{in0, 0, 1}, {in0, 1, 1}}, {{s.output[0], 0, 1}});
    bf.accum = Format::Bf16;
    s.add(bf);
    s.add(data_step(StepKind::Write, 0, DataOp::Copy, {{in0, 0, 4}}, {{q, 0, 4}}));
    Step fp = data_step(StepKind::Compute, 0, DataOp::Reduce, {{q, 0, 4}}, {{f32, 0, 4}});
    fp.accum = Format::Fp32;
    s.add(fp);
    s.add(data_step(StepKind::Write, 0, DataOp::Copy, {{f32, 1, 2}}, {{s.output[0], 1, 2}}));
    s.add(data_step(StepKind::Compute, 0, DataOp::Copy, {{in0, 3, 1}}, {{s.output[0], 3, 1}}));
    s.add(data_step(StepKind::Compute, 1, DataOp::Copy, {{in1, 0, 4}}, {{s.output[1], 0, 4}}));
    Step acc = data_step(StepKind::Compute, 1, DataOp::Reduce, {{in1, 0, 2}}, {{s.output[1], 0, 2}});
    acc.accum = Format::Bf16;
    acc.accumulate = true;
    s.add(acc);
    DataOptions opt;
    opt.poison_unwritten = true;
    opt.share_work = share;
    const DataResult r = run_data(s, {{-0.0f, -0.0f, 2.0f, -1.0f}, {-0.0f, -0.0f, 1.0f, 3.0f}}, opt);
    auto bits = [](float v) { return std::bit_cast<std::uint32_t>(v); };
    EXPECT_EQ(bits(r.outputs[0][0]), 0u) << share;   // +0 + -0 + -0 (BF16)
    EXPECT_EQ(bits(r.outputs[0][1]), 0u) << share;   // +0 + FP8 -0 (FP32)
    EXPECT_EQ(r.outputs[0][2], 2.0f) << share;
    EXPECT_EQ(r.outputs[0][3], -1.0f) << share;
    EXPECT_EQ(bits(r.outputs[1][0]), 0x80000000u) << share;   // -0 + -0 (BF16, accumulating)
    EXPECT_EQ(bits(r.outputs[1][1]), 0x80000000u) << share;
    EXPECT_EQ(r.outputs[1][3], 3.0f) << share;
  }
}

TEST(DataEngine, Bf16AccumulationMatchesCorrectlyRoundedSteps) {
  // Random BF16 values summed left to right; each partial sum must be the
  // correctly rounded BF16 of the exact (double) sum of the previous partial and the next value.
  const std::uint64_t n = 5000;
  InputSpec spec;
  spec.seed = 11;
  auto x = generate_inputs(spec, 4, n);
  for (auto& v : x) round_to_format(v, Format::Bf16);
  Schedule s = two_ranks(n, Format::Bf16);
  s.gpus = 4;
  s.input.clear();
  s.output.clear();
  s.buffers.clear();
  for (int r = 0; r < 4; ++r) {
    s.input.push_back(s.add_buffer({"in", r, n, Format::Bf16}));
    s.output.push_back(s.add_buffer({"out", r, n, Format::Bf16}));
  }
  for (int r = 1; r < 4; ++r) {
    const BufferId slot = s.add_buffer({"slot", 0, n, Format::Bf16});
    s.add(data_step(StepKind::Write, r, DataOp::Copy, {{s.input[static_cast<std::size_t>(r)], 0, n}}, {{slot, 0, n}}));
  }
  Step red = data_step(StepKind::Compute, 0, DataOp::Reduce,
                       {{s.input[0], 0, n}, {8, 0, n}, {9, 0, n}, {10, 0, n}}, {{s.output[0], 0, n}});
  red.accum = Format::Bf16;
  s.add(red);
  for (int r = 1; r < 4; ++r)
    s.add(data_step(StepKind::Write, 0, DataOp::Copy, {{s.output[0], 0, n}}, {{s.output[static_cast<std::size_t>(r)], 0, n}}));
  DataResult res = run_data(s, x, {true});
  for (std::uint64_t i = 0; i < n; ++i) {
    double acc = 0;
    for (int r = 0; r < 4; ++r) {
      const double exact = acc + static_cast<double>(x[static_cast<std::size_t>(r)][i]);
      // Correct rounding of `exact` to BF16: pick the nearer BF16 neighbour, ties to even.
      const float f = static_cast<float>(exact);
      float lo = num::round_bf16(f), hi = lo;
      // lo's BF16 neighbours.
      hi = num::bf16_to_float(static_cast<std::uint16_t>(num::bf16_bits(lo) + 1));
      const float lo2 = num::bf16_to_float(static_cast<std::uint16_t>(num::bf16_bits(lo) - 1));
      float best = lo;
      for (float c : {lo2, hi}) {
        const double dc = std::fabs(static_cast<double>(c) - exact), db = std::fabs(static_cast<double>(best) - exact);
        if (dc < db || (dc == db && (num::bf16_bits(c) & 1u) == 0)) best = c;
      }
      acc = best;
    }
    ASSERT_EQ(res.outputs[0][i], static_cast<float>(acc)) << i;
    ASSERT_EQ(res.outputs[3][i], static_cast<float>(acc)) << i;
  }
}

TEST(DataEngine, CodecCopiesForwardCodesUnchanged) {
  const std::uint64_t n = 100;   // 3 full blocks of 32 + a partial block of 4
  Schedule s = two_ranks(n, Format::Fp32);
  const BufferId q0 = s.add_buffer({"q0", 0, n, Format::Int8Block, 32, ScaleFormat::Fp16});
  const BufferId q1 = s.add_buffer({"q1", 1, n, Format::Int8Block, 32, ScaleFormat::Fp16});
  s.add(data_step(StepKind::Compute, 0, DataOp::Copy, {{s.input[0], 0, n}}, {{q0, 0, n}}));
  s.add(data_step(StepKind::Write, 0, DataOp::Copy, {{q0, 0, 64}}, {{q1, 0, 64}}));
  s.add(data_step(StepKind::Write, 0, DataOp::Copy, {{q0, 64, 36}}, {{q1, 64, 36}}));
  s.add(data_step(StepKind::Compute, 1, DataOp::Copy, {{q1, 0, n}}, {{s.output[1], 0, n}}));
  s.add(data_step(StepKind::Compute, 0, DataOp::Copy, {{q0, 0, n}}, {{s.output[0], 0, n}}));
  std::vector<float> x(n);
  for (std::uint64_t i = 0; i < n; ++i) x[i] = std::sin(static_cast<float>(i)) * static_cast<float>(1 + i % 7);
  DataResult r = run_data(s, {x, std::vector<float>(n, 0.0f)}, {true});
  std::vector<float> want(n);
  num::fake_quantise(x.data(), n, {Format::Int8Block, 32, ScaleFormat::Fp16}, want.data());
  EXPECT_EQ(r.outputs[0], want);
  EXPECT_EQ(r.outputs[1], want);   // forwarded payload: no second quantisation
}

TEST(DataEngine, SlotsSmallerThanABlockFormTheirOwnBlock) {
  // Two 5-element payloads packed at offsets 0 and 5 of one codec buffer (a
  // message smaller than a block): each is quantised with its own scale.
  Schedule s = two_ranks(5, Format::Fp32);
  const BufferId q = s.add_buffer({"q", 0, 10, Format::Int8Block, 32, ScaleFormat::Fp32});
  s.add(data_step(StepKind::Compute, 0, DataOp::Copy, {{s.input[0], 0, 5}}, {{q, 0, 5}}));
  s.add(data_step(StepKind::Write, 1, DataOp::Copy, {{s.input[1], 0, 5}}, {{q, 5, 5}}));
  s.add(data_step(StepKind::Compute, 0, DataOp::Reduce, {{q, 0, 5}, {q, 5, 5}}, {{s.output[0], 0, 5}}));
  s.add(data_step(StepKind::Write, 0, DataOp::Copy, {{s.output[0], 0, 5}}, {{s.output[1], 0, 5}}));
  const std::vector<float> a = {1, -2, 3, 0.5f, 127}, b = {0.01f, 0.02f, -0.03f, 0.04f, 0.05f};
  DataResult r = run_data(s, {a, b}, {true});
  std::vector<float> qa(5), qb(5);
  num::fake_quantise(a.data(), 5, {Format::Int8Block, 32, ScaleFormat::Fp32}, qa.data());
  num::fake_quantise(b.data(), 5, {Format::Int8Block, 32, ScaleFormat::Fp32}, qb.data());
  for (int i = 0; i < 5; ++i) EXPECT_EQ(r.outputs[1][static_cast<std::size_t>(i)], qa[static_cast<std::size_t>(i)] + qb[static_cast<std::size_t>(i)]) << i;
}

TEST(DataEngine, UnalignedRegionsQuantiseFromTheirOwnOffset) {
  Schedule s = two_ranks(40, Format::Fp32);
  const BufferId q = s.add_buffer({"q", 0, 64, Format::Int8Block, 32, ScaleFormat::Fp16});
  s.add(data_step(StepKind::Compute, 0, DataOp::Copy, {{s.input[0], 0, 40}}, {{q, 16, 40}}));
  s.add(data_step(StepKind::Compute, 0, DataOp::Copy, {{q, 16, 40}}, {{s.output[0], 0, 40}}));
  std::vector<float> x(40);
  for (int i = 0; i < 40; ++i) x[static_cast<std::size_t>(i)] = static_cast<float>(i % 7) - 3.3f + (i == 35 ? 50.0f : 0.0f);
  DataResult r = run_data(s, {x, x}, {true});
  std::vector<float> want(40);
  num::fake_quantise(x.data(), 40, {Format::Int8Block, 32, ScaleFormat::Fp16}, want.data());
  EXPECT_EQ(r.outputs[0], want);
}

TEST(DataEngine, RejectsBadInput) {
  std::vector<float> z(64, 1.0f);
  Schedule ok = two_ranks(64, Format::Fp32);
  EXPECT_THROW(run_data(ok, {z}), Error);                                   // one input for two ranks
  EXPECT_THROW(run_data(ok, {z, std::vector<float>(63, 0.0f)}), Error);      // wrong length
  std::vector<float> bad = z;
  bad[5] = NAN;
  EXPECT_THROW(run_data(ok, {z, bad}), Error);                              // non-finite
}

TEST(DataEngine, CheckedInputsRejectTheSameBadInput) {
  // Inputs checked once for many runs: the same error as run_data's own check,
  // and the size checks still made at every run.
  std::vector<float> z(64, 1.0f);
  Schedule ok = two_ranks(64, Format::Fp32);
  for (const float v : {NAN, INFINITY, -INFINITY}) {
    std::vector<float> bad = z;
    bad[5] = v;
    bad[9] = v;
    const std::vector<std::vector<float>> x{z, bad};
    const std::string want = error_of([&] { run_data(ok, x); });
    EXPECT_NE(want.find("rank 1 input element 5 is not finite"), std::string::npos) << want;
    EXPECT_EQ(error_of([&] { CheckedInputs c(x); }), want);
    DataWorkspace ws;
    EXPECT_EQ(error_of([&] { run_data(ok, x, ws); }), want);
  }
  const std::vector<std::vector<float>> one{z}, short_one{z, std::vector<float>(63, 0.0f)};
  const CheckedInputs c1(one), c2(short_one);
  DataWorkspace ws;
  EXPECT_EQ(error_of([&] { run_data(ok, c1, ws); }), error_of([&] { run_data(ok, one); }));
  EXPECT_EQ(error_of([&] { run_data(ok, c2, ws); }), error_of([&] { run_data(ok, short_one); }));
  EXPECT_NE(error_of([&] { run_data(ok, c2, ws); }), "");
}

TEST(DataEngine, PoisonRevealsUnwrittenReads) {
  Schedule s = two_ranks(8, Format::Fp32);
  const BufferId never = s.add_buffer({"never", 0, 8, Format::Fp32});
  s.add(data_step(StepKind::Compute, 0, DataOp::Copy, {{never, 0, 8}}, {{s.output[0], 0, 8}}));
  std::vector<float> z(8, 1.0f);
  EXPECT_TRUE(std::isnan(run_data(s, {z, z}, {true}).outputs[0][3]));
  EXPECT_EQ(run_data(s, {z, z}, {false}).outputs[0][3], 0.0f);
}

// ---- every algorithm on every preset

TEST(AllAlgorithms, IntegerInputsGiveTheExactSumOnEveryRank) {
  for (const auto& p : kPresets) {
    const Config cfg = preset_with_ring_simple(p);
    const int n = cfg.fabric.gpus;
    for (const auto& algo : supported_algorithms(cfg)) {
      if (find_algorithm(algo)->quantised) continue;
      for (DType dt : {DType::Bf16, DType::Fp16, DType::Fp32}) {
        for (std::uint64_t elems : {std::uint64_t{1}, std::uint64_t{7}, std::uint64_t{1000}, std::uint64_t{4099}}) {
          SCOPED_TRACE(p + " " + algo + " " + to_string(dt) + " elems " + std::to_string(elems));
          Schedule s = compile(cfg, algo, {elems * static_cast<std::uint64_t>(dtype_bytes(dt)), dt});
          auto x = integer_inputs(n, elems);
          const auto exact = exact_sum(x);
          DataResult r = run_data(s, x, {true});
          for (int k = 0; k < n; ++k)
            for (std::uint64_t i = 0; i < elems; ++i)
              ASSERT_EQ(r.outputs[static_cast<std::size_t>(k)][i], static_cast<float>(exact[i])) << "rank " << k << " elem " << i;
        }
      }
    }
  }
}

TEST(AllAlgorithms, GaussianInputsWithinTheFormatsRoundingBound) {
  // |out - exact| <= N u sum|x_i| + u |exact| per element: N additions rounded in
  // the data format (unit roundoff u) at worst, plus the final rounding.
  for (const auto& p : kPresets) {
    const Config cfg = preset_with_ring_simple(p);
    const int n = cfg.fabric.gpus;
    const std::uint64_t elems = 3001;
    InputSpec spec;
    spec.seed = 5;
    for (DType dt : {DType::Bf16, DType::Fp16}) {
      auto x = generate_inputs(spec, n, elems);
      for (auto& v : x) round_to_format(v, format_of(dt));
      const auto exact = exact_sum(x);
      const double u = dt == DType::Bf16 ? 0x1p-8 : 0x1p-11;
      for (const auto& algo : supported_algorithms(cfg)) {
        if (find_algorithm(algo)->quantised) continue;
        SCOPED_TRACE(p + " " + algo + " " + to_string(dt));
        DataResult r = run_data(compile(cfg, algo, {elems * 2, dt}), x, {true});
        const ErrorMetrics m = measure(r.outputs, exact);
        EXPECT_TRUE(m.ranks_identical);
        for (std::uint64_t i = 0; i < elems; ++i) {
          double abs_sum = 0;
          for (int k = 0; k < n; ++k) abs_sum += std::fabs(x[static_cast<std::size_t>(k)][i]);
          const double bound = n * u * abs_sum + u * std::fabs(exact[i]);
          for (int k = 0; k < n; ++k)
            ASSERT_LE(std::fabs(r.outputs[static_cast<std::size_t>(k)][i] - exact[i]), bound) << i;
        }
      }
    }
  }
}

TEST(AllAlgorithms, Fp32MatchesTheFp32SumInTheSameOrder) {
  // FP32 schedules must equal the FP32 sum taken in the algorithm's order:
  // rank order 0..N-1 for one-shot, two-shot, NVLS and SCIN (the reducer reads
  // every rank's shard in rank order); for the ring, chunk c starts at rank c
  // and adds ranks c+1, c+2, ... as it travels.
  for (const auto& p : kPresets) {
    const Config cfg = preset_with_ring_simple(p);
    const int n = cfg.fabric.gpus;
    const std::uint64_t elems = 2053;
    InputSpec spec;
    spec.seed = 9;
    const auto x = generate_inputs(spec, n, elems);
    for (const auto& algo : supported_algorithms(cfg)) {
      if (find_algorithm(algo)->quantised) continue;
      SCOPED_TRACE(p + " " + algo);
      DataResult r = run_data(compile(cfg, algo, {elems * 4, DType::Fp32}), x, {true});
      for (std::uint64_t i = 0; i < elems; ++i) {
        int start = 0;
        if (algo == "ring") {
          // Chunk boundaries: floor(c * elems / n).
          for (int c = 0; c < n; ++c)
            if (i >= static_cast<std::uint64_t>(c) * elems / static_cast<std::uint64_t>(n)) start = c;
        }
        float want = 0.0f;
        for (int k = 0; k < n; ++k) want += x[static_cast<std::size_t>((start + k) % n)][i];
        for (int k = 0; k < n; ++k) ASSERT_EQ(r.outputs[static_cast<std::size_t>(k)][i], want) << "rank " << k << " elem " << i;
      }
    }
  }
}

TEST(AllAlgorithms, QuantisedAlgorithmsAreCloseAndRanksAgree) {
  for (const auto& p : kPresets) {
    const Config cfg = preset_with_ring_simple(p);
    const int n = cfg.fabric.gpus;
    for (std::uint64_t elems : {std::uint64_t{5}, std::uint64_t{1000}, std::uint64_t{4099}}) {
      InputSpec spec;
      auto x = generate_inputs(spec, n, elems);
      for (auto& v : x) round_to_format(v, Format::Bf16);
      const auto exact = exact_sum(x);
      for (const auto& algo : supported_algorithms(cfg)) {
        if (!find_algorithm(algo)->quantised) continue;
        SCOPED_TRACE(p + " " + algo + " elems " + std::to_string(elems));
        DataResult r = run_data(compile(cfg, algo, {elems * 2, DType::Bf16}), x, {true});
        const ErrorMetrics m = measure(r.outputs, exact);
        EXPECT_TRUE(m.ranks_identical);
        EXPECT_LT(m.rel_l2, 0.03);
        EXPECT_GT(m.rel_l2, 1e-4);   // it really was quantised
        EXPECT_GT(m.cosine, 0.999);
      }
    }
  }
}

TEST(AllAlgorithms, DeterministicForAnyThreadCount) {
  Config cfg = preset_with_ring_simple("hgx-h200-8");
  cfg.sw.isa.enabled = true;
  cfg.sw.isa.inq = true;
  const std::uint64_t elems = 200000;
  InputSpec spec;
  spec.dist = Distribution::Outliers;
  const auto raw = generate_inputs(spec, 8, elems);
  auto x = raw;
  for (auto& v : x) round_to_format(v, Format::Bf16);
  for (const std::string algo : {"scin-inq", "ring-q8", "ring", "two-shot-q8"}) {
    const Schedule s = compile(cfg, algo, {elems * 2, DType::Bf16});
    DataResult many = run_data(s, x);
    DataResult one;
    {
      tbb::global_control gc(tbb::global_control::max_allowed_parallelism, 1);
      one = run_data(s, x);
      // Generated inputs do not depend on the thread count either.
      EXPECT_EQ(generate_inputs(spec, 8, elems), raw);
    }
    EXPECT_EQ(many.outputs, one.outputs) << algo;
  }
}

// ---- the reusable workspace

TEST(DataWorkspace, ReusedAcrossSchedulesGivesFreshRunResults) {
  // One workspace runs every algorithm in turn (largest first and last, so
  // storage one schedule wrote is what the next finds): each run's outputs
  // are those of a run in fresh storage, unwritten reads included (poison).
  Config cfg = preset_with_ring_simple("hgx-h200-8");
  cfg.sw.isa.enabled = true;
  cfg.sw.isa.inq = true;
  const std::uint64_t elems = 4096 + 40;   // not a whole number of blocks or chunks
  InputSpec spec;
  auto x = generate_inputs(spec, 8, elems);
  for (auto& v : x) round_to_format(v, Format::Bf16);
  DataWorkspace ws;
  std::uint64_t most = 0;   // the workspace never holds more than the largest schedule run in it lays out
  for (const std::string algo : {"one-shot", "ring", "scin-inq", "ring-q8", "nvls", "two-shot-q8", "one-shot"}) {
    for (const bool poison : {true, false}) {
      const Schedule s = compile(cfg, algo, {elems * 2, DType::Bf16});
      most = std::max(most, DataWorkspace::bytes_for(s));
      const DataResult fresh = run_data(s, x, {poison});
      const DataRun reused = run_data(s, x, ws, {poison});
      ASSERT_EQ(reused.outputs.size(), fresh.outputs.size());
      for (std::size_t r = 0; r < fresh.outputs.size(); ++r)
        EXPECT_EQ(std::vector<float>(reused.outputs[r].begin(), reused.outputs[r].end()), fresh.outputs[r])
            << algo << " rank " << r;
      EXPECT_EQ(reused.data_steps, fresh.data_steps);
      EXPECT_EQ(reused.elements_processed, fresh.elements_processed);
      EXPECT_LE(ws.capacity_bytes(), most) << algo;
    }
  }
  // Storage written by the runs above reads as never written in the next schedule.
  Schedule s = two_ranks(8, Format::Fp32);
  const BufferId never = s.add_buffer({"never", 0, 8, Format::Fp32});
  s.add(data_step(StepKind::Compute, 0, DataOp::Copy, {{never, 0, 8}}, {{s.output[0], 0, 8}}));
  std::vector<float> z(8, 1.0f);
  EXPECT_TRUE(std::isnan(run_data(s, {z, z}, ws, {true}).outputs[0][3]));
  EXPECT_EQ(run_data(s, {z, z}, ws, {false}).outputs[0][3], 0.0f);
}

TEST(DataWorkspace, InputsReadInPlaceOrConvertedGiveTheSameResult) {
  // Inputs exact in BF16 are read in place; others are rounded into the
  // buffer first. Both give the result of the rounded inputs.
  Config cfg = preset_with_ring_simple("hgx-h200-8");
  const std::uint64_t elems = 3000;
  InputSpec spec;
  const auto raw = generate_inputs(spec, 8, elems);
  auto rounded = raw;
  for (auto& v : rounded) round_to_format(v, Format::Bf16);
  ASSERT_NE(raw, rounded);
  const auto before = rounded;
  DataWorkspace ws;
  for (const std::string algo : {"ring", "one-shot", "nvls"}) {
    const Schedule s = compile(cfg, algo, {elems * 2, DType::Bf16});
    const DataResult want = run_data(s, rounded);
    const DataRun a = run_data(s, raw, ws);
    for (std::size_t r = 0; r < want.outputs.size(); ++r)
      EXPECT_EQ(std::vector<float>(a.outputs[r].begin(), a.outputs[r].end()), want.outputs[r]) << algo;
    const DataRun b = run_data(s, rounded, ws);
    for (std::size_t r = 0; r < want.outputs.size(); ++r)
      EXPECT_EQ(std::vector<float>(b.outputs[r].begin(), b.outputs[r].end()), want.outputs[r]) << algo;
  }
  EXPECT_EQ(rounded, before);   // inputs read in place are never written
}

TEST(DataWorkspace, CheckedInputsGiveTheSameResultInEveryFormat) {
  // One check of the inputs serves runs whose input buffers are BF16, FP16 or
  // FP32: each rank's input is read in place only when exact in that run's
  // format. Ranks hold raw, BF16-rounded and FP16-rounded values, so a rank
  // taken as exact in a format it is not exact in changes the outputs.
  Config cfg = preset_with_ring_simple("hgx-h200-8");
  cfg.sw.isa.enabled = true;
  cfg.sw.isa.inq = true;
  const std::uint64_t elems = 3000;
  InputSpec spec;
  auto x = generate_inputs(spec, 8, elems);
  for (std::size_t r = 0; r < x.size(); ++r) {
    // BF16 ranks near 1e-6, where FP16 holds fewer bits than BF16 (subnormal):
    // exact in BF16, not in FP16. The others near 1000: FP16 values not exact in BF16.
    for (float& v : x[r]) v *= r % 3 == 1 ? 1e-6f : 1000.0f;
    if (r % 3 == 1) round_to_format(x[r], Format::Bf16);
    if (r % 3 == 2) round_to_format(x[r], Format::Fp16);
  }
  const CheckedInputs checked(x);
  for (std::size_t r = 0; r < x.size(); ++r) {
    std::vector<float> b = x[r], h = x[r];
    round_to_format(b, Format::Bf16);
    round_to_format(h, Format::Fp16);
    EXPECT_EQ(checked.exact(static_cast<int>(r), Format::Bf16), b == x[r]) << r;
    EXPECT_EQ(checked.exact(static_cast<int>(r), Format::Fp16), h == x[r]) << r;
    EXPECT_EQ(checked.exact(static_cast<int>(r), Format::Bf16), r % 3 == 1) << r;
    EXPECT_EQ(checked.exact(static_cast<int>(r), Format::Fp16), r % 3 == 2) << r;
    EXPECT_TRUE(checked.exact(static_cast<int>(r), Format::Fp32));
    EXPECT_FALSE(checked.exact(static_cast<int>(r), Format::Int8Block));
  }
  const auto before = x;
  DataWorkspace ws;
  for (const DType dt : {DType::Bf16, DType::Fp16, DType::Fp32})
    for (const std::string algo : {"ring", "one-shot", "nvls", "scin-inq", "ring-q8"}) {
      const Schedule s = compile(cfg, algo, {elems * static_cast<std::uint64_t>(dtype_bytes(dt)), dt});
      const DataResult want = run_data(s, x);
      const DataRun got = run_data(s, checked, ws);
      ASSERT_EQ(got.outputs.size(), want.outputs.size());
      for (std::size_t r = 0; r < want.outputs.size(); ++r)
        EXPECT_EQ(std::vector<float>(got.outputs[r].begin(), got.outputs[r].end()), want.outputs[r])
            << algo << " " << to_string(dt) << " rank " << r;
    }
  EXPECT_EQ(x, before);   // inputs read in place are never written
}

TEST(DataWorkspace, CoverageFillsOnlyWhatWasNeverWritten) {
  Coverage c;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> gaps;
  auto record = [&](std::uint64_t lo, std::uint64_t hi) { gaps.emplace_back(lo, hi); };
  c.cover(10, 20);
  c.cover(30, 40);
  c.ensure(5, 45, record);   // the gaps around and between the written parts
  EXPECT_EQ(gaps, (std::vector<std::pair<std::uint64_t, std::uint64_t>>{{5, 10}, {20, 30}, {40, 45}}));
  gaps.clear();
  c.ensure(0, 50, record);   // [5, 45) is covered now
  EXPECT_EQ(gaps, (std::vector<std::pair<std::uint64_t, std::uint64_t>>{{0, 5}, {45, 50}}));
  gaps.clear();
  c.ensure(12, 48, record);  // inside: nothing to fill
  EXPECT_TRUE(gaps.empty());
  c.cover(60, 70);
  c.cover(50, 60);           // touching intervals merge: [0, 70)
  c.ensure(0, 70, record);
  EXPECT_TRUE(gaps.empty());
  c.reset(8);                // an input read in place: [0, 8) covered
  c.ensure(4, 12, record);
  EXPECT_EQ(gaps, (std::vector<std::pair<std::uint64_t, std::uint64_t>>{{8, 12}}));
}

// ---- shared work (DataOptions::share_work): forwarded copies and reused reductions

namespace {

using numerics_test::same_bits;

DataResult run_listed(const Schedule& s, const std::vector<std::vector<float>>& x, bool poison = false) {
  DataOptions o;
  o.poison_unwritten = poison;
  o.share_work = false;
  return run_data(s, x, o);
}

}  // namespace

TEST(DataEngine, SharedWorkKeepsValuesThatChangeLater) {
  // Copies and reductions whose shortcut would read a value overwritten in
  // between: the results must be those of executing every step.
  const std::uint64_t n = 64;
  Schedule s = two_ranks(n, Format::Fp32);
  const BufferId x = s.add_buffer({"x", 0, n, Format::Fp32});
  const BufferId a = s.add_buffer({"a", 0, n, Format::Fp32});
  const BufferId z = s.add_buffer({"z", 1, n, Format::Fp32});
  const BufferId w = s.add_buffer({"w", 1, n, Format::Fp32});
  const BufferId p = s.add_buffer({"p", 1, 2 * n, Format::Bf16});
  const BufferId in0 = s.input[0], in1 = s.input[1];
  // a = x0 via x; then x is overwritten with x1 before a is read: a must stay x0.
  s.add(data_step(StepKind::Compute, 0, DataOp::Copy, {{in0, 0, n}}, {{x, 0, n}}));
  s.add(data_step(StepKind::Compute, 0, DataOp::Copy, {{x, 0, n}}, {{a, 0, n}}));
  s.add(data_step(StepKind::Write, 1, DataOp::Copy, {{in1, 0, n}}, {{x, 0, n}}));
  s.add(data_step(StepKind::Compute, 0, DataOp::Reduce, {{a, 0, n}, {x, 0, n}}, {{s.output[0], 0, n}}));
  // The same reduction of (z, in1) twice, z changed in between: the second is not the first's result.
  s.add(data_step(StepKind::Write, 0, DataOp::Copy, {{in0, 0, n}}, {{z, 0, n}}));
  s.add(data_step(StepKind::Compute, 1, DataOp::Reduce, {{z, 0, n}, {in1, 0, n}}, {{w, 0, n}}));
  s.add(data_step(StepKind::Compute, 1, DataOp::Copy, {{in1, 0, n}}, {{z, 0, n}}));
  s.add(data_step(StepKind::Compute, 1, DataOp::Reduce, {{z, 0, n}, {in1, 0, n}}, {{s.output[1], 0, n}}));
  // A reduction into one of its own sources, then the same reduction: the second sees the new value.
  const BufferId y = s.add_buffer({"y", 0, n, Format::Fp32});
  const BufferId v = s.add_buffer({"v", 0, n, Format::Fp32});
  s.add(data_step(StepKind::Compute, 0, DataOp::Copy, {{in0, 0, n}}, {{y, 0, n}}));
  s.add(data_step(StepKind::Compute, 0, DataOp::Reduce, {{y, 0, n}, {in0, 0, n}}, {{y, 0, n}}));
  s.add(data_step(StepKind::Compute, 0, DataOp::Reduce, {{y, 0, n}, {in0, 0, n}}, {{v, 0, n}}));
  s.add(data_step(StepKind::Compute, 0, DataOp::Reduce, {{v, 0, n}, {s.output[0], 0, n}}, {{s.output[0], 0, n}}));
  // A BF16 copy read across its end (p[n/2, 3n/2) spans the copy and unwritten storage).
  s.add(data_step(StepKind::Compute, 1, DataOp::Copy, {{w, 0, n}}, {{p, 0, n}}));
  Step acc = data_step(StepKind::Compute, 1, DataOp::Reduce, {{p, n / 2, n}}, {{s.output[1], 0, n}});
  acc.accumulate = true;
  s.add(acc);
  const auto in = integer_inputs(2, n);
  for (bool poison : {false, true}) {
    const DataResult shared = run_data(s, in, {poison});
    const DataResult listed = run_listed(s, in, poison);
    EXPECT_TRUE(same_bits(shared.outputs, listed.outputs)) << poison;
    EXPECT_EQ(shared.data_steps, listed.data_steps);
    EXPECT_EQ(shared.elements_processed, listed.elements_processed);
    for (std::uint64_t i = 0; i < n; ++i) {
      EXPECT_EQ(shared.outputs[0][i], 3 * in[0][i] + (in[0][i] + in[1][i])) << i;   // v = 3 x0, then + x0 + x1
      const float tail = i < n / 2 ? in[0][i + n / 2] + in[1][i + n / 2] : 0.0f;   // then unwritten storage
      const float want = 2 * in[1][i] + tail;
      if (poison && i >= n / 2) {
        EXPECT_TRUE(std::isnan(shared.outputs[1][i])) << i;
      } else {
        EXPECT_EQ(shared.outputs[1][i], want) << i;
      }
    }
  }
}

TEST(AllAlgorithms, SharedWorkIsBitIdenticalToEveryStepAsListed) {
  // Every algorithm, element counts that do and do not fill whole blocks, every
  // element type and codec: outputs and counts equal to executing each step.
  struct Case {
    std::string preset;
    int gpus;
    std::uint64_t elems;
    DType dtype;
    Codec codec;
    int block;
    ScaleFormat scale;
  };
  const std::vector<Case> cases = {
      {"hgx-h200-8", 8, 37, DType::Bf16, Codec::Int8, 32, ScaleFormat::Fp16},
      {"hgx-h200-8", 8, 1000, DType::Fp16, Codec::Int4, 16, ScaleFormat::Bf16},
      {"hgx-h200-8", 8, 65536 + 100, DType::Bf16, Codec::Fp8E4M3, 64, ScaleFormat::Fp32},
      {"hgx-h200-8", 4, 40000, DType::Fp32, Codec::Fp8E5M2, 32, ScaleFormat::Fp16},
      {"hgx-h200-8", 16, 5000, DType::Bf16, Codec::Int8, 100, ScaleFormat::Fp16},
      {"hgx-a100-8", 8, 30000, DType::Bf16, Codec::Int8, 32, ScaleFormat::Fp16},
      {"mesh-8", 8, 3000, DType::Fp16, Codec::Int8, 32, ScaleFormat::Fp16},
  };
  for (const Case& c : cases) {
    Config cfg = preset_with_ring_simple(c.preset);
    cfg.fabric.gpus = c.gpus;
    if (c.preset == "hgx-h200-8") {
      cfg.sw.isa.enabled = true;
      cfg.sw.isa.inq = true;
    }
    cfg.quant.codec = c.codec;
    cfg.quant.block_elems = c.block;
    cfg.quant.scale_format = c.scale;
    InputSpec spec;
    spec.seed = c.elems;
    auto x = generate_inputs(spec, c.gpus, c.elems);
    for (auto& v : x) round_to_format(v, format_of(c.dtype));
    for (const std::string& algo : supported_algorithms(cfg)) {
      const Schedule s = compile(cfg, algo, {c.elems * static_cast<std::uint64_t>(dtype_bytes(c.dtype)), c.dtype});
      for (bool poison : {false, true}) {
        const DataResult shared = run_data(s, x, {poison});
        const DataResult listed = run_listed(s, x, poison);
        EXPECT_TRUE(same_bits(shared.outputs, listed.outputs)) << c.preset << " " << c.gpus << " " << c.elems << " " << algo;
        EXPECT_EQ(shared.data_steps, listed.data_steps) << algo;
        EXPECT_EQ(shared.elements_processed, listed.elements_processed) << algo;
        if (!poison) {
          for (const auto& o : shared.outputs)
            for (float v : o) ASSERT_TRUE(std::isfinite(v)) << algo;
        }
      }
    }
  }
}

TEST(AllAlgorithms, Avx2KernelsGiveThePortableKernelsBits) {
  // The data engine's reductions and the codec kernels in their AVX2 build
  // (chosen at run time) against their portable build: every algorithm's
  // outputs bit for bit, every element type and codec, partial blocks.
  if (!num::kernels_use_avx2()) GTEST_SKIP() << "this CPU has no AVX2: one build only";
  const std::vector<numerics_test::DataCase> cases = {
      {8, 5000, DType::Bf16, Codec::Int8, 32},   {8, 4099, DType::Fp16, Codec::Int4, 16},
      {4, 20000, DType::Fp32, Codec::Fp8E4M3, 64}, {16, 777, DType::Bf16, Codec::Fp8E5M2, 100},
      {3, 3001, DType::Fp16, Codec::Int8, 48}};
  for (const auto& c : cases) {
    const Config cfg = numerics_test::data_case_config(c);
    const auto x = numerics_test::data_case_inputs(c, c.elems, Distribution::Outliers);
    for (const std::string& algo : supported_algorithms(cfg)) {
      const Schedule s = compile(cfg, algo, {c.elems * static_cast<std::uint64_t>(dtype_bytes(c.dtype)), c.dtype});
      num::force_portable_kernels(true);
      const DataResult portable = run_data(s, x);
      num::force_portable_kernels(false);
      const DataResult avx2 = run_data(s, x);
      EXPECT_TRUE(same_bits(avx2.outputs, portable.outputs)) << c.gpus << " " << c.elems << " " << algo;
    }
  }
}
