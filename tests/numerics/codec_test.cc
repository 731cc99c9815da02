// Block codecs: scales, codes, round trips and error bounds.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include "numerics/codec.h"
#include "numerics/formats.h"

using namespace scin;
using namespace scin::num;

namespace {
std::vector<float> ramp(std::size_t n, float lo, float hi) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = lo + (hi - lo) * static_cast<float>(i) / static_cast<float>(n - 1);
  return v;
}
}  // namespace

TEST(Codec, Int8ScaleAndCodes) {
  // max |x| = 127 gives scale 1 exactly, so the codes are RNE of x itself.
  std::vector<float> x = {0.0f, 63.5f, -127.0f, 64.5f, -0.5f, 1.5f, 0.49f, 126.6f};
  CodecSpec c{Format::Int8Block, 8, ScaleFormat::Fp32};
  std::uint8_t codes[8];
  const float s = quantise_block(x.data(), x.size(), c, codes);
  EXPECT_EQ(s, 1.0f);
  const int want[] = {0, 64, -127, 64, 0, 2, 0, 127};
  for (int i = 0; i < 8; ++i) EXPECT_EQ(static_cast<std::int8_t>(codes[i]), want[i]) << i;
  std::vector<float> y(8);
  dequantise_block(codes, 8, s, Format::Int8Block, y.data());
  for (std::size_t i = 0; i < 8; ++i) EXPECT_EQ(y[i], static_cast<float>(want[i]));
  // General scale: max maps to +-127, every element within half a step.
  std::vector<float> w = {0.3f, -2.0f, 1.1f, 0.001f};
  const float s2 = quantise_block(w.data(), 4, {Format::Int8Block, 4, ScaleFormat::Fp32}, codes);
  EXPECT_EQ(s2, 2.0f / 127.0f);
  EXPECT_EQ(static_cast<std::int8_t>(codes[1]), -127);
  dequantise_block(codes, 4, s2, Format::Int8Block, y.data());
  for (std::size_t i = 0; i < 4; ++i) EXPECT_LE(std::fabs(y[i] - w[i]), s2 / 2 * 1.0001f) << i;
}

TEST(Codec, ZeroBlockAndScaleFormats) {
  std::vector<float> z(32, 0.0f), out(32, 7.0f);
  for (ScaleFormat sf : {ScaleFormat::Fp16, ScaleFormat::Bf16, ScaleFormat::Fp32}) {
    fake_quantise(z.data(), z.size(), {Format::Int8Block, 32, sf}, out.data());
    for (float v : out) EXPECT_EQ(v, 0.0f);
  }
  // Scales are rounded to their format.
  std::vector<float> x = ramp(32, -1.0f, 3.0f);
  std::uint8_t codes[32];
  EXPECT_EQ(quantise_block(x.data(), 32, {Format::Int8Block, 32, ScaleFormat::Fp16}, codes), round_fp16(3.0f / 127));
  EXPECT_EQ(quantise_block(x.data(), 32, {Format::Int8Block, 32, ScaleFormat::Bf16}, codes), round_bf16(3.0f / 127));
  // Overflowing an FP16 scale saturates to 65504 instead of becoming inf.
  std::vector<float> big(4, 1e9f);
  EXPECT_EQ(quantise_block(big.data(), 4, {Format::Int8Block, 4, ScaleFormat::Fp16}, codes), 65504.0f);
  EXPECT_EQ(static_cast<std::int8_t>(codes[0]), 127);
}

TEST(Codec, RoundTripErrorBounds) {
  // Per element, |x - x'| <= scale/2 (plus the clamp when the scale rounded down),
  // and values already on the grid survive exactly.
  std::vector<float> x(4096);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.37f * static_cast<float>(i)) * (1 + (i % 97));
  for (Format f : {Format::Int8Block, Format::Int4Block}) {
    for (int g : {4, 32, 128}) {
      for (ScaleFormat sf : {ScaleFormat::Fp16, ScaleFormat::Bf16, ScaleFormat::Fp32}) {
        CodecSpec c{f, g, sf};
        std::vector<float> y(x.size()), z(x.size());
        fake_quantise(x.data(), x.size(), c, y.data());
        const float qmax = codec_qmax(f);
        for (std::size_t b = 0; b < x.size(); b += static_cast<std::size_t>(g)) {
          float amax = 0;
          for (int i = 0; i < g; ++i) amax = std::max(amax, std::fabs(x[b + static_cast<std::size_t>(i)]));
          const float s = round_scale(amax / qmax, sf);
          for (int i = 0; i < g; ++i) {
            const std::size_t k = b + static_cast<std::size_t>(i);
            const float clamp_err = std::max(0.0f, std::fabs(x[k]) - qmax * s);
            ASSERT_LE(std::fabs(y[k] - x[k]), s * 0.5f * 1.0001f + clamp_err) << k;
          }
        }
        // Quantising a dequantised block again is the identity when the scale is exact (FP32).
        if (sf == ScaleFormat::Fp32) {
          fake_quantise(y.data(), y.size(), c, z.data());
          for (std::size_t i = 0; i < y.size(); ++i) ASSERT_NEAR(z[i], y[i], 1e-6f * std::fabs(y[i]) + 1e-30f);
        }
      }
    }
  }
}

TEST(Codec, Int4ClampsToSeven) {
  std::vector<float> x = {7.0f, -7.0f, 3.4f, 3.5f, 2.5f, -0.5f};
  std::uint8_t codes[6];
  const float s = quantise_block(x.data(), x.size(), {Format::Int4Block, 6, ScaleFormat::Fp32}, codes);
  EXPECT_EQ(s, 1.0f);
  const int want[] = {7, -7, 3, 4, 2, 0};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(static_cast<std::int8_t>(codes[i]), want[i]) << i;
}

TEST(Codec, Fp8BlocksUseFullRange) {
  std::vector<float> x = ramp(64, -3.0f, 5.0f);
  for (Format f : {Format::Fp8E4M3Block, Format::Fp8E5M2Block}) {
    CodecSpec c{f, 64, ScaleFormat::Fp32};
    std::uint8_t codes[64];
    const float s = quantise_block(x.data(), 64, c, codes);
    EXPECT_EQ(s, 5.0f / codec_qmax(f));
    std::vector<float> y(64);
    dequantise_block(codes, 64, s, f, y.data());
    EXPECT_FLOAT_EQ(y[63], 5.0f);      // the max maps to the largest code
    const double rel = f == Format::Fp8E4M3Block ? 1.0 / 16 : 1.0 / 8;   // half ulp, relative
    for (int i = 0; i < 64; ++i)
      EXPECT_LE(std::fabs(y[i] - x[i]), rel * std::fabs(x[i]) + 1e-6) << i;
    // Dequantise-add matches dequantise + add.
    std::vector<float> acc(64, 1.0f);
    dequantise_add_block(codes, 64, s, f, acc.data());
    for (int i = 0; i < 64; ++i) EXPECT_EQ(acc[i], 1.0f + y[i]);
  }
}

TEST(Codec, PartialFinalBlock) {
  std::vector<float> x = ramp(70, -1.0f, 1.0f);
  x[69] = 100.0f;   // the 6-element tail block gets its own scale
  std::vector<float> y(70);
  fake_quantise(x.data(), x.size(), {Format::Int8Block, 32, ScaleFormat::Fp32}, y.data());
  EXPECT_NEAR(y[0], -1.0f, 1.0f / 127);
  EXPECT_FLOAT_EQ(y[69], 100.0f);
  EXPECT_NEAR(y[64], x[64], 100.0f / 127 / 2 * 1.001f);
}

TEST(Codec, BlockScaleIsTheSequentialMaxAbs) {
  // quantise_block takes max|x| on bit patterns (vectorised); it must be the
  // scale of the running max(amax, |x_i|) from +0, which skips NaN, for blocks
  // with zeros of both signs, subnormals, infinities and NaN anywhere.
  const float specials[] = {0.0f, -0.0f, 1e-40f, -3e-39f, INFINITY, -INFINITY, NAN, -NAN, 7.5f, -7.5f, 65504.0f, 1e30f};
  std::uint64_t h = 12345;
  auto next = [&] {
    h = h * 6364136223846793005ull + 1442695040888963407ull;
    return h >> 33;
  };
  for (int trial = 0; trial < 4000; ++trial) {
    const std::size_t n = 1 + next() % 70;
    std::vector<float> x(n);
    for (float& v : x)
      v = next() % 4 == 0 ? specials[next() % std::size(specials)]
                          : std::ldexp(static_cast<float>(static_cast<int>(next() % 2001) - 1000), static_cast<int>(next() % 40) - 30);
    float amax = 0.0f;
    for (float v : x) amax = std::max(amax, std::fabs(v));
    for (const Format f : {Format::Int8Block, Format::Fp8E4M3Block}) {
      for (const ScaleFormat sf : {ScaleFormat::Fp16, ScaleFormat::Fp32}) {
        const CodecSpec c{f, static_cast<int>(n), sf};
        std::vector<std::uint8_t> codes(n);
        const float got = quantise_block(x.data(), n, c, codes.data());
        const float want = round_scale(amax / codec_qmax(f), sf);
        EXPECT_EQ(std::bit_cast<std::uint32_t>(got), std::bit_cast<std::uint32_t>(want)) << trial;
      }
    }
  }
}

TEST(Codec, Avx2KernelsGiveThePortableKernelsBits) {
  // The AVX2 build of quantise_block, dequantise_block and dequantise_add_block
  // (chosen at run time) must give the portable build's codes, scales and sums
  // bit for bit: random blocks of 1 to 100 values with zeros of both signs,
  // subnormals, infinities, NaN and values near the codes' rounding points,
  // every codec and scale format.
  if (!kernels_use_avx2()) GTEST_SKIP() << "this CPU has no AVX2: one build only";
  const float specials[] = {0.0f, -0.0f, 1e-40f, -3e-39f, INFINITY, -INFINITY, NAN, 7.5f, -7.5f, 65504.0f, 1e30f, 0.5f};
  std::uint64_t h = 777;
  auto next = [&] {
    h = h * 6364136223846793005ull + 1442695040888963407ull;
    return h >> 33;
  };
  const Format formats[] = {Format::Int8Block, Format::Int4Block, Format::Fp8E4M3Block, Format::Fp8E5M2Block};
  const ScaleFormat scales[] = {ScaleFormat::Fp16, ScaleFormat::Bf16, ScaleFormat::Fp32};
  auto bits = [](const std::vector<float>& v) {
    std::vector<std::uint32_t> b(v.size());
    for (std::size_t i = 0; i < v.size(); ++i) b[i] = std::bit_cast<std::uint32_t>(v[i]);
    return b;
  };
  int compared = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    const std::size_t n = 1 + next() % 100;
    std::vector<float> x(n), acc0(n);
    const bool with_specials = next() % 3 == 0;
    for (std::size_t i = 0; i < n; ++i) {
      x[i] = with_specials && next() % 5 == 0
                 ? specials[next() % std::size(specials)]
                 : std::ldexp(static_cast<float>(static_cast<int>(next() % 200001) - 100000), static_cast<int>(next() % 20) - 22);
      acc0[i] = std::ldexp(static_cast<float>(static_cast<int>(next() % 2001) - 1000), -7);
    }
    for (const Format f : formats)
      for (const ScaleFormat sf : scales) {
        const CodecSpec c{f, static_cast<int>(n), sf};
        std::vector<std::uint8_t> codes[2];
        std::vector<float> out[2], acc[2];
        float scale[2];
        for (int portable = 0; portable < 2; ++portable) {
          force_portable_kernels(portable == 1);
          codes[portable].assign(n, 0);
          out[portable].assign(n, 0.0f);
          acc[portable] = acc0;
          scale[portable] = quantise_block(x.data(), n, c, codes[portable].data());
          dequantise_block(codes[portable].data(), n, scale[portable], f, out[portable].data());
          dequantise_add_block(codes[portable].data(), n, scale[portable], f, acc[portable].data());
        }
        force_portable_kernels(false);
        ASSERT_EQ(std::bit_cast<std::uint32_t>(scale[0]), std::bit_cast<std::uint32_t>(scale[1])) << trial;
        ASSERT_EQ(codes[0], codes[1]) << trial << " " << to_string(f);
        ASSERT_EQ(bits(out[0]), bits(out[1])) << trial << " " << to_string(f);
        ASSERT_EQ(bits(acc[0]), bits(acc[1])) << trial << " " << to_string(f);
        ++compared;
      }
  }
  EXPECT_EQ(compared, 3000 * 12);
}

TEST(Codec, BlockRunsGiveTheBlockByBlockBits) {
  // quantise_blocks, dequantise_blocks and dequantise_add_blocks over runs of
  // 1 to 700 values (the last block cut short or not), G = 1 to 100, every
  // codec and scale format, both kernel builds: codes, scales, decoded values
  // and FP32 sums equal to the one-block kernels called block by block.
  const float specials[] = {0.0f, -0.0f, 1e-40f, INFINITY, NAN, 7.5f, -7.5f, 65504.0f, 1e30f};
  std::uint64_t h = 4242;
  auto next = [&] {
    h = h * 6364136223846793005ull + 1442695040888963407ull;
    return h >> 33;
  };
  const Format formats[] = {Format::Int8Block, Format::Int4Block, Format::Fp8E4M3Block, Format::Fp8E5M2Block};
  const ScaleFormat sfs[] = {ScaleFormat::Fp16, ScaleFormat::Bf16, ScaleFormat::Fp32};
  auto bits = [](const std::vector<float>& v) {
    std::vector<std::uint32_t> b(v.size());
    for (std::size_t i = 0; i < v.size(); ++i) b[i] = std::bit_cast<std::uint32_t>(v[i]);
    return b;
  };
  int compared = 0;
  for (int trial = 0; trial < 300; ++trial) {
    const std::size_t n = 1 + next() % 700;
    const int g = 1 + static_cast<int>(next() % 100);
    const std::size_t blocks = (n + static_cast<std::size_t>(g) - 1) / static_cast<std::size_t>(g);
    std::vector<float> x(n), acc0(n);
    for (std::size_t i = 0; i < n; ++i) {
      x[i] = next() % 40 == 0 ? specials[next() % std::size(specials)]
                              : std::ldexp(static_cast<float>(static_cast<int>(next() % 200001) - 100000),
                                           static_cast<int>(next() % 20) - 22 + static_cast<int>(i / 64));
      acc0[i] = std::ldexp(static_cast<float>(static_cast<int>(next() % 2001) - 1000), -7);
    }
    for (const Format f : formats)
      for (const ScaleFormat sf : sfs)
        for (int portable = 0; portable < 2; ++portable) {
          force_portable_kernels(portable == 1);
          const CodecSpec c{f, g, sf};
          std::vector<std::uint8_t> codes_run(n, 0xAA), codes_one(n, 0x55);
          std::vector<float> scales_run(blocks, -1.0f), scales_one(blocks, -2.0f);
          quantise_blocks(x.data(), n, c, codes_run.data(), scales_run.data());
          for (std::size_t k = 0, b = 0; k < n; k += static_cast<std::size_t>(g), ++b)
            scales_one[b] = quantise_block(x.data() + k, std::min<std::size_t>(static_cast<std::size_t>(g), n - k), c,
                                           codes_one.data() + k);
          ASSERT_EQ(codes_run, codes_one) << trial;
          ASSERT_EQ(bits(scales_run), bits(scales_one)) << trial;
          std::vector<float> out_run(n, 1.0f), out_one(n, 2.0f), acc_run = acc0, acc_one = acc0;
          dequantise_blocks(codes_one.data(), n, scales_one.data(), c, out_run.data());
          dequantise_add_blocks(codes_one.data(), n, scales_one.data(), c, acc_run.data());
          for (std::size_t k = 0, b = 0; k < n; k += static_cast<std::size_t>(g), ++b) {
            const std::size_t m = std::min<std::size_t>(static_cast<std::size_t>(g), n - k);
            dequantise_block(codes_one.data() + k, m, scales_one[b], f, out_one.data() + k);
            dequantise_add_block(codes_one.data() + k, m, scales_one[b], f, acc_one.data() + k);
          }
          ASSERT_EQ(bits(out_run), bits(out_one)) << trial;
          ASSERT_EQ(bits(acc_run), bits(acc_one)) << trial;
          ++compared;
        }
    force_portable_kernels(false);
  }
  EXPECT_EQ(compared, 300 * 24);
}

TEST(Codec, Avx512IntBlocksGiveThePortableBlocksBits) {
  // quantise_blocks' AVX-512 INT8/INT4 kernel (G a multiple of 16) against the
  // portable one-block kernel block by block: runs of whole blocks and with the
  // last block cut, G = 16 to 4096, every scale format, values of all scales
  // with zeros of both signs, subnormals, infinities and NaN (a NaN quotient
  // gives code 0, as the scalar conversion does), and all-zero blocks.
  if (!int_blocks_use_avx512()) GTEST_SKIP() << "this CPU has no AVX-512: quantise_blocks takes the AVX2 kernel";
  const float specials[] = {0.0f, -0.0f, 1e-40f, -3e-39f, INFINITY, -INFINITY, NAN, 7.5f, -7.5f, 65504.0f, 1e30f, 0.5f};
  std::uint64_t h = 9191;
  auto next = [&] {
    h = h * 6364136223846793005ull + 1442695040888963407ull;
    return h >> 33;
  };
  const int gs[] = {16, 32, 48, 64, 96, 128, 4096};
  std::size_t compared = 0, zero_blocks = 0;
  for (int trial = 0; trial < 400; ++trial) {
    const int g = gs[next() % std::size(gs)];
    const std::size_t n = 1 + next() % (static_cast<std::size_t>(g) * 9);
    const std::size_t blocks = (n + static_cast<std::size_t>(g) - 1) / static_cast<std::size_t>(g);
    std::vector<float> x(n);
    const int mode = static_cast<int>(next() % 4);   // 0: specials, 1: a zero block, 2-3: plain
    for (std::size_t i = 0; i < n; ++i)
      x[i] = mode == 0 && next() % 7 == 0 ? specials[next() % std::size(specials)]
             : mode == 1 && i / static_cast<std::size_t>(g) == 0 ? (next() % 2 ? 0.0f : -0.0f)
                         : std::ldexp(static_cast<float>(static_cast<int>(next() % 200001) - 100000),
                                      static_cast<int>(next() % 30) - 30);
    zero_blocks += mode == 1;
    for (const Format f : {Format::Int8Block, Format::Int4Block})
      for (const ScaleFormat sf : {ScaleFormat::Fp16, ScaleFormat::Bf16, ScaleFormat::Fp32}) {
        const CodecSpec c{f, g, sf};
        std::vector<std::uint8_t> codes_run(n, 0xAA), codes_one(n, 0x55);
        std::vector<float> scales_run(blocks, -1.0f), scales_one(blocks, -2.0f);
        quantise_blocks(x.data(), n, c, codes_run.data(), scales_run.data());
        force_portable_kernels(true);
        for (std::size_t k = 0, b = 0; k < n; k += static_cast<std::size_t>(g), ++b)
          scales_one[b] = quantise_block(x.data() + k, std::min<std::size_t>(static_cast<std::size_t>(g), n - k), c,
                                         codes_one.data() + k);
        force_portable_kernels(false);
        ASSERT_EQ(codes_run, codes_one) << trial << " G=" << g << " n=" << n;
        for (std::size_t b = 0; b < blocks; ++b)
          ASSERT_EQ(std::bit_cast<std::uint32_t>(scales_run[b]), std::bit_cast<std::uint32_t>(scales_one[b])) << trial;
        ++compared;
      }
  }
  EXPECT_EQ(compared, 400u * 6);
  EXPECT_GT(zero_blocks, 50u);
}
