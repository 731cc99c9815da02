// The float Box-Muller factors (numerics/box_muller_f32.h): within their
// stated bound of the defining formula's doubles, the same bits in every
// instruction set, and the values they leave to the defining formula.
//
// The bound is established by enumerating all 2^32 inputs of each factor:
//   build/tests/numerics/numerics_test --gtest_also_run_disabled_tests --gtest_filter='*Exhaustive*'
// (about a minute per factor per core; it prints the largest errors it saw).
// The enabled tests check the places where the error peaks (near the zeros of
// cos, near u1 = 1/2 and u1 = 1, at the quadrant edges) and a random sample.
#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <vector>

#include <gtest/gtest.h>
#include <tbb/blocked_range.h>
#include <tbb/parallel_reduce.h>

#include "numerics/box_muller_f32.h"
#include "numerics/inputs.h"

using namespace scin;
using namespace scin::num;

namespace {

std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// The inputs where the error peaks, and a random sample.
std::vector<std::uint32_t> probe_inputs() {
  std::vector<std::uint32_t> v;
  auto window = [&](std::uint64_t centre, std::uint32_t half) {
    for (std::uint64_t i = centre - std::min<std::uint64_t>(centre, half); i <= centre + half && i <= 0xffffffffull; ++i)
      v.push_back(static_cast<std::uint32_t>(i));
  };
  for (std::uint64_t q = 0; q <= 8; ++q) window(q << 29, 4096);   // quadrant edges, zeros of cos, u1 = k/8
  window(0xffffffffull, 65536);                                    // u1 near 1
  window(0x80000000ull, 65536);                                    // u1 near 1/2
  window(0, 65536);                                                // u1 near 2^-32
  for (std::uint64_t i = 0; i < (1u << 20); ++i) v.push_back(static_cast<std::uint32_t>(mix(i)));
  return v;
}

struct Worst {
  double s = 0, c = 0;
  std::uint32_t s_at = 0, c_at = 0;
};

// The largest relative errors of the factors over inputs [lo, hi) of `in`
// (zeros checked where they must be, and skipped).
Worst worst_of(const std::uint32_t* in, std::uint64_t n, int isa, std::uint64_t& bad_zeros) {
  Worst w;
  constexpr std::uint64_t kChunk = 4096;
  std::vector<float> s(kChunk), c(kChunk);
  for (std::uint64_t lo = 0; lo < n; lo += kChunk) {
    const std::uint64_t m = std::min(kChunk, n - lo);
    box_muller_factors_f32(in + lo, in + lo, s.data(), c.data(), m, isa);
    for (std::uint64_t k = 0; k < m; ++k) {
      const std::uint32_t x = in[lo + k];
      const double se = box_muller_s_exact(x), ce = box_muller_c_exact(x);
      if (s[k] == 0.0f) {
        bad_zeros += x != 0xffffffffu;
      } else {
        const double e = std::fabs(static_cast<double>(s[k]) / se - 1.0);
        if (!(e <= w.s)) w.s = e, w.s_at = x;   // NaN counts as worst
      }
      if (c[k] == 0.0f) {
        bad_zeros += x != (1u << 30) && x != (3u << 30);
      } else {
        const double e = std::fabs(static_cast<double>(c[k]) / ce - 1.0);
        if (!(e <= w.c)) w.c = e, w.c_at = x;
      }
    }
  }
  return w;
}

}  // namespace

TEST(BoxMullerF32, FactorsAreWithinTheirBoundWhereTheErrorPeaksAndOnASample) {
  const std::vector<std::uint32_t> in = probe_inputs();
  std::uint64_t bad_zeros = 0;
  const Worst w = worst_of(in.data(), in.size(), 0, bad_zeros);
  EXPECT_EQ(bad_zeros, 0u);
  EXPECT_LE(w.s, kBoxMullerF32FactorBound) << "a = " << w.s_at;
  EXPECT_LE(w.c, kBoxMullerF32FactorBound) << "b = " << w.c_at;
  // The bound is not loose by orders of magnitude: the peaks are where the
  // float arithmetic and the defining formula's argument rounding show.
  EXPECT_GT(w.s, 0x1p-26);
  EXPECT_GT(w.c, 0x1p-23);
  // The margin is twice the two factors' bound, and covers the double products too.
  const double b = kBoxMullerF32FactorBound;
  EXPECT_GE(kBoxMullerF32Margin, 2 * (2 * b));
  EXPECT_GT(kBoxMullerF32Margin, 2 * b + b * b + 0x1p-50);
}

TEST(BoxMullerF32, ZerosAreExactlyWhereTheDefiningFormulaIsZeroOrTiny) {
  const std::uint32_t in[] = {0xffffffffu, 1u << 30, 3u << 30, 0, 0xfffffffeu, (1u << 30) + 1, (3u << 30) - 1};
  float s[7], c[7];
  box_muller_factors_f32(in, in, s, c, 7, 0);
  EXPECT_EQ(s[0], 0.0f);   // u1 = 1: log 0
  EXPECT_EQ(c[1], 0.0f);   // 2 pi u2 = pi/2: the defining cos is 6.1e-17
  EXPECT_EQ(c[2], 0.0f);   // 3 pi / 2
  EXPECT_LT(std::fabs(box_muller_c_exact(1u << 30)), 1e-15);
  EXPECT_FLOAT_EQ(s[3], static_cast<float>(std::sqrt(64 * std::log(2.0))));   // u1 = 2^-32
  EXPECT_FLOAT_EQ(c[3], 1.0f);
  EXPECT_GT(s[4], 0.0f);
  EXPECT_NEAR(c[5] / box_muller_c_exact((1u << 30) + 1), 1.0, 0x1p-19);   // 1.5e-9, not 0
  EXPECT_NEAR(c[6] / box_muller_c_exact((3u << 30) - 1), 1.0, 0x1p-19);
}

TEST(BoxMullerF32, EveryInstructionSetGivesTheSameBits) {
  const std::vector<std::uint32_t> in = probe_inputs();
  const std::uint64_t n = in.size();
  std::vector<float> s0(n), c0(n), s(n), c(n);
  box_muller_factors_f32(in.data(), in.data() + 7, s0.data(), c0.data(), n - 7, 0);
  int compared = 0;
  for (int isa = 1; isa <= 2; ++isa) {
    if (force_generator_isa(isa) != isa) continue;   // the CPU lacks it
    ++compared;
    box_muller_factors_f32(in.data(), in.data() + 7, s.data(), c.data(), n - 7, isa);
    std::uint64_t differ = 0;
    for (std::uint64_t k = 0; k + 7 < n; ++k)
      differ += std::bit_cast<std::uint32_t>(s[k]) != std::bit_cast<std::uint32_t>(s0[k]) ||
                std::bit_cast<std::uint32_t>(c[k]) != std::bit_cast<std::uint32_t>(c0[k]);
    EXPECT_EQ(differ, 0u) << "isa " << isa;
  }
  force_generator_isa(-1);
  if (compared == 0) GTEST_SKIP() << "this CPU has only the portable instruction set";
}

// All 2^32 inputs of each factor (run by hand: see the top of this file).
TEST(BoxMullerF32, DISABLED_ExhaustiveBoundOfBothFactors) {
  const int isa = force_generator_isa(-1);
  constexpr std::uint64_t kAll = 1ull << 32, kPart = 1u << 16;
  struct Acc {
    Worst w;
    std::uint64_t bad_zeros = 0;
  };
  const Acc all = tbb::parallel_reduce(
      tbb::blocked_range<std::uint64_t>(0, kAll / kPart, 64), Acc{},
      [&](const tbb::blocked_range<std::uint64_t>& r, Acc acc) {
        std::vector<std::uint32_t> in(kPart);
        for (std::uint64_t p = r.begin(); p < r.end(); ++p) {
          for (std::uint64_t k = 0; k < kPart; ++k) in[k] = static_cast<std::uint32_t>(p * kPart + k);
          const Worst w = worst_of(in.data(), kPart, isa, acc.bad_zeros);
          if (!(w.s <= acc.w.s)) acc.w.s = w.s, acc.w.s_at = w.s_at;
          if (!(w.c <= acc.w.c)) acc.w.c = w.c, acc.w.c_at = w.c_at;
        }
        return acc;
      },
      [](Acc x, const Acc& y) {
        if (!(y.w.s <= x.w.s)) x.w.s = y.w.s, x.w.s_at = y.w.s_at;
        if (!(y.w.c <= x.w.c)) x.w.c = y.w.c, x.w.c_at = y.w.c_at;
        x.bad_zeros += y.bad_zeros;
        return x;
      });
  std::printf("isa %d: s worst %.3e = 2^%.2f at a = %u; c worst %.3e = 2^%.2f at b = %u; misplaced zeros %llu\n", isa,
              all.w.s, std::log2(all.w.s), all.w.s_at, all.w.c, std::log2(all.w.c), all.w.c_at,
              static_cast<unsigned long long>(all.bad_zeros));
  EXPECT_EQ(all.bad_zeros, 0u);
  EXPECT_LE(all.w.s, kBoxMullerF32FactorBound);
  EXPECT_LE(all.w.c, kBoxMullerF32FactorBound);
}
