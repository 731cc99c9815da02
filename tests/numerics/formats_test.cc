// FP16 / BF16 / FP8 conversions, bit for bit.
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include <gtest/gtest.h>

#include "numerics/formats.h"

using namespace scin::num;

namespace {

__extension__ typedef _Float16 half_t;   // GCC's IEEE binary16: an independent reference

std::uint16_t ref_fp16_bits(float f) {
  half_t h = static_cast<half_t>(f);
  return std::bit_cast<std::uint16_t>(h);
}

float from_bits(std::uint32_t u) { return std::bit_cast<float>(u); }

// Correctly rounded BF16 from a double, by brute force over the two neighbours.
std::uint16_t ref_bf16_bits(float f) {
  const std::uint32_t u = std::bit_cast<std::uint32_t>(f);
  const std::uint32_t lo = u & 0xffff0000u;               // truncation towards zero
  const std::uint32_t hi = lo + 0x10000u;                 // next magnitude up
  const double a = std::fabs(static_cast<double>(f));
  const double dlo = std::fabs(static_cast<double>(from_bits(lo)));
  const double dhi = (hi & 0x7fffffffu) >= 0x7f800000u ? std::ldexp(1.0, 128)   // rounding up reaches inf
                                                       : std::fabs(static_cast<double>(from_bits(hi)));
  const double elo = a - dlo, ehi = dhi - a;
  std::uint32_t pick;
  if (elo < ehi) pick = lo;
  else if (ehi < elo) pick = hi;
  else pick = ((lo >> 16) & 1u) ? hi : lo;
  return static_cast<std::uint16_t>(pick >> 16);
}

}  // namespace

TEST(Fp16, EveryHalfRoundTrips) {
  for (std::uint32_t h = 0; h < 0x10000u; ++h) {
    const auto b = static_cast<std::uint16_t>(h);
    const float f = fp16_to_float(b);
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(static_cast<float>(std::bit_cast<half_t>(b))));
      EXPECT_TRUE(std::isnan(fp16_to_float(fp16_bits(f))));
      continue;
    }
    EXPECT_EQ(f, static_cast<float>(std::bit_cast<half_t>(b))) << std::hex << h;
    EXPECT_EQ(fp16_bits(f), b) << std::hex << h;
  }
}

TEST(Fp16, MatchesReferenceOnSampledFloats) {
  // Every float exponent from far below the subnormal halves to past the
  // overflow threshold, both signs, all top-13 mantissa patterns, with low bits
  // that sit on, just below and just above every rounding tie.
  const std::uint32_t lows[] = {0x000, 0x001, 0x1ff, 0x200, 0x201, 0x3ff, 0x155};
  for (std::uint32_t sign : {0u, 0x80000000u}) {
    for (std::uint32_t e = 96; e <= 145; ++e) {
      for (std::uint32_t hi = 0; hi < (1u << 13); ++hi) {
        for (std::uint32_t lo : lows) {
          const std::uint32_t u = sign | (e << 23) | (hi << 10) | lo;
          const float f = from_bits(u);
          ASSERT_EQ(fp16_bits(f), ref_fp16_bits(f)) << std::hex << u;
        }
      }
    }
  }
  // And a spread of arbitrary bit patterns.
  std::uint32_t x = 12345;
  for (int i = 0; i < 1000000; ++i) {
    x = x * 1664525u + 1013904223u;
    const float f = from_bits(x);
    if (std::isnan(f)) continue;
    ASSERT_EQ(fp16_bits(f), ref_fp16_bits(f)) << std::hex << x;
  }
}

TEST(Fp16, KnownValues) {
  EXPECT_EQ(fp16_bits(1.0f), 0x3c00);
  EXPECT_EQ(fp16_bits(-2.0f), 0xc000);
  EXPECT_EQ(fp16_bits(65504.0f), 0x7bff);
  EXPECT_EQ(fp16_bits(65519.996f), 0x7bff);           // below the tie to infinity
  EXPECT_EQ(fp16_bits(65520.0f), 0x7c00);             // tie, rounds to even: infinity
  EXPECT_EQ(fp16_bits(std::numeric_limits<float>::infinity()), 0x7c00);
  EXPECT_EQ(fp16_bits(-std::numeric_limits<float>::infinity()), 0xfc00);
  EXPECT_EQ(fp16_bits(0x1p-24f), 0x0001);             // smallest subnormal
  EXPECT_EQ(fp16_bits(0x1p-25f), 0x0000);             // tie between 0 and 2^-24: even is 0
  EXPECT_EQ(fp16_bits(0x1.8p-24f), 0x0002);           // tie between 1 and 2 ulp: even is 2
  EXPECT_EQ(fp16_bits(0x1.000002p-25f), 0x0001);      // just above the tie
  EXPECT_EQ(fp16_bits(0x1p-14f), 0x0400);             // smallest normal
  EXPECT_EQ(fp16_bits(0x1.ff8p-15f), 0x03ff);         // largest subnormal
  EXPECT_EQ(fp16_bits(-0.0f), 0x8000);
  EXPECT_EQ(fp16_bits(1.0f + 0x1p-11f), 0x3c00);      // tie: even (1.0)
  EXPECT_EQ(fp16_bits(1.0f + 3 * 0x1p-11f), 0x3c02);  // tie: even (1 + 2 ulp)
  const std::uint16_t nan = fp16_bits(std::numeric_limits<float>::quiet_NaN());
  EXPECT_EQ(nan & 0x7c00, 0x7c00);
  EXPECT_NE(nan & 0x03ff, 0);
  EXPECT_TRUE(std::isnan(fp16_to_float(nan)));
  EXPECT_EQ(fp16_to_float(0x7c00), std::numeric_limits<float>::infinity());
  EXPECT_EQ(fp16_to_float(0x0001), 0x1p-24f);
}

TEST(Bf16, MatchesBruteForceOnSampledFloats) {
  const std::uint32_t lows[] = {0x0000, 0x0001, 0x7fff, 0x8000, 0x8001, 0xffff, 0x1234};
  for (std::uint32_t hi = 0; hi < 0x10000u; ++hi) {
    for (std::uint32_t lo : lows) {
      const std::uint32_t u = (hi << 16) | lo;
      const float f = from_bits(u);
      ASSERT_EQ(std::bit_cast<std::uint32_t>(round_bf16_fast(f)), std::bit_cast<std::uint32_t>(round_bf16(f)))
          << std::hex << u;
      if (std::isnan(f)) {
        EXPECT_TRUE(std::isnan(round_bf16(f))) << std::hex << u;
        continue;
      }
      ASSERT_EQ(bf16_bits(f), ref_bf16_bits(f)) << std::hex << u;
    }
  }
}

TEST(Bf16, KnownValues) {
  EXPECT_EQ(bf16_bits(1.0f), 0x3f80);
  EXPECT_EQ(bf16_bits(from_bits(0x3f808000u)), 0x3f80);   // tie, even stays
  EXPECT_EQ(bf16_bits(from_bits(0x3f818000u)), 0x3f82);   // tie, odd rounds up
  EXPECT_EQ(bf16_bits(from_bits(0x3f808001u)), 0x3f81);   // above the tie
  EXPECT_EQ(bf16_bits(from_bits(0x7f7fffffu)), 0x7f80);   // FLT_MAX rounds to inf
  EXPECT_EQ(bf16_bits(std::numeric_limits<float>::infinity()), 0x7f80);
  EXPECT_EQ(bf16_bits(-std::numeric_limits<float>::infinity()), 0xff80);
  EXPECT_EQ(bf16_bits(from_bits(0x00008000u)), 0x0000);   // subnormal tie to even zero
  EXPECT_EQ(bf16_bits(from_bits(0x00018000u)), 0x0002);   // subnormal tie to even
  EXPECT_EQ(bf16_bits(from_bits(0x00010000u)), 0x0001);   // smallest bf16 subnormal
  EXPECT_EQ(bf16_bits(-0.0f), 0x8000);
  // A NaN whose payload sits in the low bits only must stay NaN (not become inf).
  EXPECT_TRUE(std::isnan(round_bf16(from_bits(0x7f800001u))));
  EXPECT_TRUE(std::isnan(round_bf16(from_bits(0xffc00000u))));
}

TEST(Fp8, EveryCodeRoundTrips) {
  for (Fp8Kind k : {Fp8Kind::E4M3, Fp8Kind::E5M2}) {
    int finite = 0;
    for (int c = 0; c < 256; ++c) {
      const float v = fp8_to_float(static_cast<std::uint8_t>(c), k);
      if (std::isnan(v)) {
        EXPECT_TRUE(std::isnan(fp8_table(k)[c])) << c;
        continue;
      }
      EXPECT_EQ(fp8_table(k)[c], v) << c;
      if (std::isinf(v)) continue;
      ++finite;
      const std::uint8_t back = fp8_bits(v, k);
      if (v == 0.0f) EXPECT_EQ(back & 0x7f, 0);
      else EXPECT_EQ(back, c) << "kind " << static_cast<int>(k) << " code " << c;
    }
    EXPECT_EQ(finite, k == Fp8Kind::E4M3 ? 254 : 248);
  }
}

TEST(Fp8, KnownValues) {
  EXPECT_EQ(fp8_to_float(0x7e, Fp8Kind::E4M3), 448.0f);
  EXPECT_EQ(fp8_to_float(0x01, Fp8Kind::E4M3), 0x1p-9f);     // smallest subnormal
  EXPECT_EQ(fp8_to_float(0x08, Fp8Kind::E4M3), 0x1p-6f);     // smallest normal
  EXPECT_EQ(fp8_to_float(0x38, Fp8Kind::E4M3), 1.0f);
  EXPECT_TRUE(std::isnan(fp8_to_float(0x7f, Fp8Kind::E4M3)));
  EXPECT_EQ(fp8_to_float(0x7b, Fp8Kind::E5M2), 57344.0f);
  EXPECT_EQ(fp8_to_float(0x7c, Fp8Kind::E5M2), std::numeric_limits<float>::infinity());
  EXPECT_EQ(fp8_to_float(0x01, Fp8Kind::E5M2), 0x1p-16f);
  EXPECT_EQ(fp8_to_float(0x3c, Fp8Kind::E5M2), 1.0f);
  // Round to nearest even: 1 + 1/16 is the tie between 1 and 1.125 in E4M3.
  EXPECT_EQ(fp8_bits(1.0625f, Fp8Kind::E4M3), 0x38);
  EXPECT_EQ(fp8_bits(1.1875f, Fp8Kind::E4M3), 0x3a);        // tie between 1.125 and 1.25: even 1.25
  EXPECT_EQ(fp8_bits(1.07f, Fp8Kind::E4M3), 0x39);
  EXPECT_EQ(fp8_bits(0x1p-10f, Fp8Kind::E4M3), 0x00);       // half the smallest subnormal: tie to 0
  EXPECT_EQ(fp8_bits(0x1.8p-9f, Fp8Kind::E4M3), 0x02);      // subnormal tie to even
  // Saturation (satfinite) for overflow and infinity, sign kept.
  EXPECT_EQ(fp8_bits(1000.0f, Fp8Kind::E4M3), 0x7e);
  EXPECT_EQ(fp8_bits(-1e9f, Fp8Kind::E4M3), 0xfe);
  EXPECT_EQ(fp8_bits(std::numeric_limits<float>::infinity(), Fp8Kind::E5M2), 0x7b);
  EXPECT_EQ(fp8_bits(60000.0f, Fp8Kind::E5M2), 0x7b);
  EXPECT_TRUE(std::isnan(fp8_to_float(fp8_bits(std::nanf(""), Fp8Kind::E4M3), Fp8Kind::E4M3)));
  EXPECT_TRUE(std::isnan(fp8_to_float(fp8_bits(std::nanf(""), Fp8Kind::E5M2), Fp8Kind::E5M2)));
}

TEST(Fp8, RoundsToNearestOnAGrid) {
  // For many values, the encoded value is the nearest representable one.
  for (Fp8Kind k : {Fp8Kind::E4M3, Fp8Kind::E5M2}) {
    const float maxv = fp8_traits(k).max_finite;
    for (int i = -20000; i <= 20000; ++i) {
      const float x = static_cast<float>(i) * (maxv / 20000.0f) * 0.999f;
      const float got = fp8_to_float(fp8_bits(x, k), k);
      float best = 0, best_err = INFINITY;
      for (int c = 0; c < 256; ++c) {
        const float v = fp8_table(k)[c];
        if (!std::isfinite(v)) continue;
        if (std::fabs(v - x) < best_err) { best_err = std::fabs(v - x); best = v; }
      }
      ASSERT_EQ(std::fabs(got - x), best_err) << x << " got " << got << " best " << best;
    }
  }
}

TEST(RneInt, TiesToEven) {
  EXPECT_EQ(rne_int(0.5f), 0.0f);
  EXPECT_EQ(rne_int(1.5f), 2.0f);
  EXPECT_EQ(rne_int(2.5f), 2.0f);
  EXPECT_EQ(rne_int(-2.5f), -2.0f);
  EXPECT_EQ(rne_int(-126.5f), -126.0f);
  EXPECT_EQ(rne_int(126.51f), 127.0f);
  EXPECT_EQ(rne_int(-0.49f), 0.0f);
}
