// A BF16 study's inputs held as BF16 patterns only (generate_bf16_inputs,
// CheckedInputs over patterns) and the FP32 sums of the inputs shared between
// runs (InputCodes): each must give the bits of the FP32 path it replaces.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "base/error.h"
#include "engines/data/data_engine.h"
#include "fabric/preset.h"
#include "numerics/formats.h"
#include "numerics/inputs.h"
#include "numerics/metrics.h"
#include "numerics/quant_study.h"
#include "schedule/algorithms.h"
#include "numerics_test_util.h"

using namespace scin;

namespace {

using numerics_test::same_bits;

std::vector<BigVector<std::uint16_t>> patterns_of(const std::vector<std::vector<float>>& x) {
  std::vector<BigVector<std::uint16_t>> p(x.size());
  for (std::size_t r = 0; r < x.size(); ++r)
    for (float v : x[r]) p[r].push_back(static_cast<std::uint16_t>(std::bit_cast<std::uint32_t>(v) >> 16));
  return p;
}

std::string error_of(const auto& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

Step reduce_step(std::vector<Region> srcs, Region dst, bool accumulate = false) {
  Step st;
  st.kind = StepKind::Read;   // rank 0 reads every rank's input
  st.initiator = 0;
  st.op = DataOp::Reduce;
  st.accum = Format::Fp32;
  st.accumulate = accumulate;
  for (const Region& r : srcs) st.srcs.push_back(r);
  st.dsts = {dst};
  return st;
}

}  // namespace

TEST(Bf16Inputs, PatternsAndExactSumAreTheFp32PathsBits) {
  // Sizes around the batch (256) and the part (2^18), every distribution and
  // every generator ISA the CPU has: the patterns are round_inputs' floats'
  // high halves (their low halves zero) and the sums exact_sum's, bit for bit.
  struct Case {
    int ranks;
    std::uint64_t elems;
  };
  const std::vector<Case> cases = {{1, 1}, {8, 255}, {3, 257}, {3, (1u << 18) + 3}, {16, 1000}};
  for (int isa = 0; isa <= 2; ++isa) {
    if (force_generator_isa(isa) != isa) continue;
    for (Distribution d : {Distribution::Gaussian, Distribution::Laplace, Distribution::Outliers}) {
      for (const Case& c : cases) {
        InputSpec spec;
        spec.dist = d;
        spec.seed = c.elems + static_cast<std::uint64_t>(isa);
        auto x = generate_inputs(spec, c.ranks, c.elems);
        round_inputs(x, DType::Bf16, "input");
        const std::vector<double> want = exact_sum(x);
        std::vector<BigVector<std::uint16_t>> bits;
        std::vector<double> exact;
        ASSERT_TRUE(generate_bf16_inputs(spec, c.ranks, c.elems, bits, exact));
        const std::string what = std::string(to_string(d)) + " isa " + std::to_string(isa) + " " +
                                 std::to_string(c.ranks) + " x " + std::to_string(c.elems);
        ASSERT_EQ(bits.size(), x.size()) << what;
        for (std::size_t r = 0; r < x.size(); ++r) {
          ASSERT_EQ(bits[r].size(), c.elems) << what;
          std::size_t differ = 0;
          for (std::uint64_t i = 0; i < c.elems; ++i)
            differ += (static_cast<std::uint32_t>(bits[r][i]) << 16) != std::bit_cast<std::uint32_t>(x[r][i]);
          EXPECT_EQ(differ, 0u) << what << " rank " << r;
        }
        ASSERT_EQ(exact.size(), want.size()) << what;
        EXPECT_EQ(std::memcmp(exact.data(), want.data(), want.size() * sizeof(double)), 0) << what;
      }
    }
  }
  force_generator_isa(-1);
}

TEST(Bf16Inputs, AValueIsDecidedOnlyWhenItsWholeMarginRoundsToOneBf16Value) {
  // The generator's vector log/cos are trusted to 2^-32 (relative); a value is
  // left to the scalar formula when some double that close rounds otherwise.
  const float big = num::bf16_to_float(0x7f7f);   // BF16's largest finite value
  // 1 + 2^-8 is a float and a BF16 tie (between 1 and 1 + 2^-7; to even: 1).
  // A double near it rounds to that float first, and the float decides: the
  // undecided values are the float ties next to it whose two floats round to
  // different BF16 values.
  const double mid = 1.0 + 0x1p-8;
  EXPECT_TRUE(bf16_rounding_decided(mid, big));
  const double up = mid + 0x1p-24;   // floats mid (-> 1) and mid + 2^-23 (-> 1 + 2^-7)
  EXPECT_FALSE(bf16_rounding_decided(up, big));
  EXPECT_FALSE(bf16_rounding_decided(up * (1 + 0x1p-34), big));   // within the margin
  EXPECT_FALSE(bf16_rounding_decided(up * (1 - 0x1p-34), big));
  EXPECT_TRUE(bf16_rounding_decided(up * (1 + 0x1p-30), big));    // beyond it: 1 + 2^-7
  EXPECT_TRUE(bf16_rounding_decided(up * (1 - 0x1p-30), big));    // 1
  EXPECT_FALSE(bf16_rounding_decided(-up, big));
  EXPECT_TRUE(bf16_rounding_decided(-up * (1 + 0x1p-30), big));
  EXPECT_TRUE(bf16_rounding_decided(mid - 0x1p-24, big));   // floats mid - 2^-23 and mid: both 1
  // 1 + 2^-7 + 2^-8 ties to even upwards (1 + 2^-6): its lower float tie is the undecided one.
  const double odd = 1.0 + 0x1p-7 + 0x1p-8;
  EXPECT_FALSE(bf16_rounding_decided(odd - 0x1p-24, big));
  EXPECT_TRUE(bf16_rounding_decided(odd + 0x1p-24, big));
  // A tie between two floats far from any BF16 boundary: decided here, though
  // the float test leaves it to the scalar formula.
  EXPECT_TRUE(bf16_rounding_decided(1.0 + 0x1p-24, big));
  EXPECT_TRUE(bf16_rounding_decided(1.5 + 0x1p-24, big));
  for (double v : {0.0, -0.0, std::nan(""), HUGE_VAL, -HUGE_VAL}) EXPECT_FALSE(bf16_rounding_decided(v, big)) << v;
  // Around BF16's largest value: the float just above it rounds to it as BF16
  // but is reported beyond it, so a margin holding both floats is undecided.
  const double above = std::nextafter(big, HUGE_VALF);
  EXPECT_TRUE(bf16_rounding_decided(big, big));
  EXPECT_TRUE(bf16_rounding_decided(above, big));
  EXPECT_EQ(num::round_bf16_fast(static_cast<float>(above)), big);
  EXPECT_FALSE(bf16_rounding_decided((static_cast<double>(big) + above) / 2, big));
  EXPECT_FALSE(bf16_rounding_decided(-(static_cast<double>(big) + above) / 2, big));
}

TEST(Bf16Inputs, ThePatternDecidedFromTheBitsIsTheRoundingOfEveryDoubleInTheMargin) {
  // bf16_pattern_decided (the generator's test) against its definition:
  // bf16_rounding_decided on the margin's ends, and the pattern against
  // round_bf16_fast(float(v)); on random doubles of every binade around the
  // float range, on values built at the decision's edges, and on the specials.
  const float big = num::bf16_to_float(0x7f7f);
  std::uint64_t x = 12345;
  auto next = [&] {
    x += 0x9e3779b97f4a7c15ull;
    std::uint64_t z = x;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  };
  for (double rel : {0x1p-32, 0x1p-18}) {
    const std::uint64_t t = bf16_decided_threshold(rel);
    std::vector<double> vs;
    for (int i = 0; i < 200000; ++i) {   // exponents -140 .. 140, both signs
      const std::uint64_t h = next();
      const std::uint64_t e = 1023 - 140 + h % 281;
      vs.push_back(std::bit_cast<double>((h & 0x8000000000000000ull) | (e << 52) | (next() & ((1ull << 52) - 1))));
    }
    for (std::uint64_t e : {898, 899, 1023, 1149}) {   // at the decision's edges
      for (std::uint64_t d : {0, 1, 2, 3}) {   // d - 1 from each edge
        const std::uint64_t m = (next() & ~((1ull << 45) - 1) & ((1ull << 52) - 1));
        const std::uint64_t half = std::uint64_t{1} << 44;
        const std::uint64_t one = 1, top = (one << 45) - 1, float_half_ulp = one << 29;
        for (std::uint64_t low : {half + t + d - 1, half - t - d + 1, half + float_half_ulp + d - 1, d, top - d,
                                  half + float_half_ulp / 2 + d - 1, half - float_half_ulp / 2 - d + 1})
          vs.push_back(std::bit_cast<double>((e << 52) | m | (low & ((1ull << 45) - 1))));
      }
    }
    for (double v : {0.0, -0.0, std::nan(""), HUGE_VAL, -HUGE_VAL, 0x1p-126, 0x1p-1030, 0x1p127, 0x1p-125,
                     static_cast<double>(big), 1.0 + 0x1p-8, 1.0 + 0x1p-8 + 0x1p-24})
      vs.push_back(v);
    std::size_t decided = 0, normal = 0, wrong = 0;
    for (double v : vs) {
      std::uint16_t p = 0;
      const bool d = bf16_pattern_decided(v, t, p);
      const double a = std::fabs(v);
      normal += a >= 0x1p-125 && a < 0x1p127;
      if (!d) continue;
      ++decided;
      const std::uint32_t want = std::bit_cast<std::uint32_t>(num::round_bf16_fast(static_cast<float>(v))) >> 16;
      const double m = a * rel;
      const bool ends = bf16_rounding_decided(v, big, rel) &&
                        num::round_bf16_fast(static_cast<float>(v - m)) == num::round_bf16_fast(static_cast<float>(v));
      if (p != want || !ends || !(a >= 0x1p-125 && a < 0x1p127)) {
        if (++wrong <= 5) ADD_FAILURE() << "rel " << rel << " v " << v << " pattern " << p << " want " << want;
      }
    }
    EXPECT_EQ(wrong, 0u) << "rel " << rel;
    // Not needlessly cautious: the undecided normal values are those near a
    // midpoint (2 t in 2^45 of them).
    const double undecided = 1.0 - static_cast<double>(decided) / static_cast<double>(normal);
    EXPECT_LT(undecided, 2.0 * 2.0 * static_cast<double>(t) * 0x1p-45 + 1e-3) << "rel " << rel;
  }
  // The edges themselves: more than the threshold from the midpoint decides, not at it.
  const std::uint64_t t = bf16_decided_threshold(0x1p-18);
  std::uint16_t p = 0;
  const auto at = [&](std::uint64_t low) { return std::bit_cast<double>((1023ull << 52) | low); };
  EXPECT_TRUE(bf16_pattern_decided(at((1ull << 44) + t + 1), t, p));
  EXPECT_EQ(p, 0x3f81);   // 1 + 2^-7
  EXPECT_FALSE(bf16_pattern_decided(at((1ull << 44) + t), t, p));
  EXPECT_TRUE(bf16_pattern_decided(at((1ull << 44) - t - 1), t, p));
  EXPECT_EQ(p, 0x3f80);   // 1
  EXPECT_FALSE(bf16_pattern_decided(at((1ull << 44) - t), t, p));
  EXPECT_TRUE(bf16_pattern_decided(-std::nextafter(2.0, 0.0), t, p));   // just below 2: rounds up to -2
  EXPECT_EQ(p, 0xc000);
  EXPECT_TRUE(bf16_pattern_decided(at((1ull << 45) - 1), t, p));   // just below 1 + 2^-7: rounds up to it
  EXPECT_EQ(p, 0x3f81);
  for (double v : {0.0, -0.0, std::nan(""), HUGE_VAL, -HUGE_VAL, 0x1p-126, 0x1p127, -0x1p127})
    EXPECT_FALSE(bf16_pattern_decided(v, t, p)) << v;
  EXPECT_TRUE(bf16_pattern_decided(0x1p-125, t, p));
  EXPECT_EQ(p, 0x0100);   // 2^-125: exponent field 2
  EXPECT_TRUE(bf16_pattern_decided(-0x1.fcp126, t, p));
  EXPECT_EQ(p, 0xfefe);
}

TEST(Bf16Inputs, ValuesBeyondBf16TakeThePathThatReportsThem) {
  // A standard deviation of 2e38 puts finite values beyond BF16's largest
  // finite value (and others beyond FP32's): the one-pass generator declines,
  // and run_quant reports what round_inputs reports on the FP32 values.
  InputSpec spec;
  spec.stddev = 2e38;
  std::vector<BigVector<std::uint16_t>> bits;
  std::vector<double> exact;
  EXPECT_FALSE(generate_bf16_inputs(spec, 4, 10000, bits, exact));
  auto x = generate_inputs(spec, 4, 10000);
  const std::string want = error_of([&] { round_inputs(x, DType::Bf16, "input"); });
  ASSERT_NE(want.find("overflows BF16"), std::string::npos) << want;
  Config cfg = load_preset("hgx-h200-8");
  cfg.fabric.gpus = 4;
  QuantRequest req;
  req.elements = 10000;
  req.input = spec;
  req.algorithms = {"one-shot"};
  EXPECT_EQ(error_of([&] { run_quant(cfg, req); }), want);
  // 1e30 stays inside BF16's range: taken, and the study runs.
  spec.stddev = 1e30;
  EXPECT_TRUE(generate_bf16_inputs(spec, 4, 10000, bits, exact));
  req.input = spec;
  EXPECT_EQ(run_quant(cfg, req).rows.size(), 1u);
}

TEST(AllAlgorithms, InputsHeldAsBf16PatternsGiveTheFloatsBits) {
  // Every algorithm, in one workspace with shared codes and sums as a study
  // runs them, on the same BF16 values held as floats and as patterns: BF16
  // input buffers read the patterns in place, FP16 / FP32 ones load them.
  const std::vector<numerics_test::DataCase> cases = {
      {8, 1000, DType::Bf16, Codec::Int8, 32, ScaleFormat::Fp16},
      {3, 10007, DType::Bf16, Codec::Int4, 16, ScaleFormat::Bf16},
      {16, 777, DType::Bf16, Codec::Fp8E4M3, 100, ScaleFormat::Fp32},
      {4, 4096, DType::Fp16, Codec::Int8, 32, ScaleFormat::Fp16},
      {8, 3000, DType::Fp32, Codec::Int8, 48, ScaleFormat::Fp16},
  };
  for (const auto& c : cases) {
    for (bool poison : {false, true}) {
      const Config cfg = numerics_test::data_case_config(c);
      numerics_test::DataCase b = c;
      b.dtype = DType::Bf16;   // BF16 values, whatever the collective's type
      const auto x = numerics_test::data_case_inputs(b, c.elems + 11, Distribution::Outliers);
      const auto p = patterns_of(x);
      const CheckedInputs as_floats(x), as_bf16(p);
      InputCodes codes_f(as_floats), codes_b(as_bf16);
      DataOptions opt_f, opt_b;
      opt_f.input_codes = &codes_f;
      opt_b.input_codes = &codes_b;
      opt_f.poison_unwritten = opt_b.poison_unwritten = poison;
      DataWorkspace ws_f, ws_b;
      for (const std::string& algo : supported_algorithms(cfg)) {
        const Schedule s = compile(cfg, algo, {c.elems * static_cast<std::uint64_t>(dtype_bytes(c.dtype)), c.dtype});
        const DataRun want = run_data(s, as_floats, ws_f, opt_f);
        std::vector<std::vector<float>> want_out;
        for (const auto& o : want.outputs) want_out.emplace_back(o.begin(), o.end());
        const DataRun got = run_data(s, as_bf16, ws_b, opt_b);
        EXPECT_TRUE(same_bits(got.outputs, want_out)) << c.gpus << " " << c.elems << " " << to_string(c.dtype) << " "
                                                      << algo << (poison ? " poison" : "");
        EXPECT_EQ(got.data_steps, want.data_steps) << algo;
        EXPECT_EQ(got.elements_processed, want.elements_processed) << algo;
      }
      if (c.dtype == DType::Bf16) {   // the same inputs read in place: the same codes and sums shared
        EXPECT_EQ(codes_b.held_elements(), codes_f.held_elements());
        EXPECT_EQ(codes_b.summed_elements(), codes_f.summed_elements());
        EXPECT_GT(codes_b.summed_elements(), 0u);
      }
    }
  }
  // A non-finite value: the same error as for floats.
  std::vector<std::vector<float>> x(2, std::vector<float>(10, 1.0f));
  x[1][5] = -INFINITY;
  const auto p = patterns_of(x);
  const std::string want = error_of([&] { CheckedInputs c(x); });
  EXPECT_NE(want, "");
  EXPECT_EQ(error_of([&] { CheckedInputs c(p); }), want);
}

TEST(InputCodes, SumsAreSharedOnlyInTheirOrder) {
  // Three ranks whose FP32 sum depends on the order: (1e8 + 1) - 1e8 = 0 but
  // (1e8 - 1e8) + 1 = 1. A reduction of every input in order 0, 1, 2 fills the
  // shared sums; a later one in order 2, 0, 1, one accumulating into its
  // destination and one of two inputs only must add for themselves; one of a
  // region already held, in the same order, takes the sums. Each equal to a
  // run with nothing shared.
  const std::uint64_t n = 64;
  std::vector<std::vector<float>> x(3, std::vector<float>(n));
  for (std::uint64_t i = 0; i < n; ++i) {
    x[0][i] = 1e8f;
    x[1][i] = 1.0f + static_cast<float>(i % 3);
    x[2][i] = -1e8f;
  }
  auto three_ranks = [&] {
    Schedule s;
    s.algorithm = "test";
    s.gpus = 3;
    s.planes = 1;
    s.elems = n;
    for (int r = 0; r < 3; ++r) {
      s.input.push_back(s.add_buffer({"in", r, n, Format::Fp32}));
      s.output.push_back(s.add_buffer({"out", r, n, Format::Fp32}));
    }
    return s;
  };
  Schedule fill = three_ranks();
  fill.add(reduce_step({{fill.input[0], 0, n}, {fill.input[1], 0, n}, {fill.input[2], 0, n}}, {fill.output[0], 0, n}));
  Schedule other = three_ranks();
  other.add(reduce_step({{other.input[2], 0, n}, {other.input[0], 0, n}, {other.input[1], 0, n}}, {other.output[0], 0, n}));
  other.add(reduce_step({{other.input[0], 0, n}, {other.input[1], 0, n}, {other.input[2], 0, n}}, {other.output[1], 0, n},
                        true));
  other.add(reduce_step({{other.input[0], 0, n}, {other.input[1], 0, n}}, {other.output[2], 0, n}));
  Schedule again = three_ranks();
  again.add(reduce_step({{again.input[0], 16, 32}, {again.input[1], 16, 32}, {again.input[2], 16, 32}},
                        {again.output[1], 0, 32}));
  const CheckedInputs checked(x);
  InputCodes codes(checked);
  DataOptions opt;
  opt.input_codes = &codes;
  DataWorkspace ws;
  for (const Schedule* s : {&fill, &other, &again}) {
    const DataResult want = run_data(*s, x);
    const DataRun got = run_data(*s, checked, ws, opt);
    EXPECT_TRUE(same_bits(got.outputs, want.outputs)) << (s == &fill ? "fill" : s == &other ? "other" : "again");
  }
  EXPECT_EQ(codes.summed_elements(), n);
  // The orders do differ here: the test can fail.
  EXPECT_EQ((1e8f + 1.0f) + -1e8f, 0.0f);
  EXPECT_EQ((-1e8f + 1e8f) + 1.0f, 1.0f);
}
