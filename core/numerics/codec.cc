#include "numerics/codec.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <vector>

#include "base/error.h"
#include "numerics/formats.h"

namespace scin::num {

Format codec_format(Codec c) { return scin::codec_format(c); }

float codec_qmax(Format f) {
  switch (f) {
    case Format::Int8Block: return 127.0f;
    case Format::Int4Block: return 7.0f;
    case Format::Fp8E4M3Block: return 448.0f;
    case Format::Fp8E5M2Block: return 57344.0f;
    default: break;
  }
  throw Error(std::string("codec: format ") + to_string(f) + " is not a block codec");
}

float round_scale(float s, ScaleFormat f) {
  switch (f) {
    case ScaleFormat::Fp32: return s;
    case ScaleFormat::Fp16: return std::min(round_fp16(s), 65504.0f);
    case ScaleFormat::Bf16: return std::min(round_bf16(s), 0x1.fep127f);
  }
  return s;
}

namespace {

inline Fp8Kind fp8_kind(Format f) { return f == Format::Fp8E4M3Block ? Fp8Kind::E4M3 : Fp8Kind::E5M2; }

// Integer codes: RNE of x / s, clamped. Branch-free so the loop vectorises.
void quantise_int(const float* x, std::size_t n, float scale, float qmax, std::uint8_t* codes) {
  if (scale == 0.0f) {
    std::fill(codes, codes + n, std::uint8_t{0});
    return;
  }
  for (std::size_t i = 0; i < n; ++i) {
    float q = rne_int(x[i] / scale);
    q = std::min(std::max(q, -qmax), qmax);
    codes[i] = static_cast<std::uint8_t>(static_cast<std::int8_t>(static_cast<int>(q)));
  }
}

}  // namespace

float quantise_block(const float* x, std::size_t n, const CodecSpec& c, std::uint8_t* codes) {
  // amax = max(amax, |x_i|) in order from +0 (std::max keeps amax when |x_i|
  // is NaN): the largest non-NaN |x_i|, or +0. Taken on the bit patterns, which
  // order non-negative non-NaN floats as their values, with no dependence on
  // the order, so the loop vectorises; the same float.
  std::int32_t top = 0;
  for (std::size_t i = 0; i < n; ++i) {
    std::int32_t a = static_cast<std::int32_t>(std::bit_cast<std::uint32_t>(x[i]) & 0x7fffffffu);
    a = a > 0x7f800000 ? 0 : a;   // NaN: skipped
    top = std::max(top, a);
  }
  const float amax = std::bit_cast<float>(static_cast<std::uint32_t>(top));
  const float qmax = codec_qmax(c.format);
  const float scale = round_scale(amax / qmax, c.scale_format);
  if (c.format == Format::Int8Block || c.format == Format::Int4Block) {
    quantise_int(x, n, scale, qmax, codes);
  } else {
    const Fp8Kind k = fp8_kind(c.format);
    if (scale == 0.0f) {
      std::fill(codes, codes + n, std::uint8_t{0});
    } else {
      for (std::size_t i = 0; i < n; ++i) codes[i] = fp8_bits(x[i] / scale, k);
    }
  }
  return scale;
}

void dequantise_block(const std::uint8_t* codes, std::size_t n, float scale, Format f, float* out) {
  if (f == Format::Int8Block || f == Format::Int4Block) {
    for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<float>(static_cast<std::int8_t>(codes[i])) * scale;
  } else {
    const float* table = fp8_table(fp8_kind(f));
    for (std::size_t i = 0; i < n; ++i) out[i] = table[codes[i]] * scale;
  }
}

void dequantise_add_block(const std::uint8_t* codes, std::size_t n, float scale, Format f, float* acc) {
  if (f == Format::Int8Block || f == Format::Int4Block) {
    for (std::size_t i = 0; i < n; ++i) acc[i] += static_cast<float>(static_cast<std::int8_t>(codes[i])) * scale;
  } else {
    const float* table = fp8_table(fp8_kind(f));
    for (std::size_t i = 0; i < n; ++i) acc[i] += table[codes[i]] * scale;
  }
}

void fake_quantise(const float* x, std::size_t n, const CodecSpec& c, float* out) {
  const std::size_t g = static_cast<std::size_t>(std::max(1, c.block_elems));
  std::uint8_t codes[4096];
  for (std::size_t b = 0; b < n; b += g) {
    std::size_t len = std::min(g, n - b);
    // Blocks larger than the stack buffer are processed by the codec in one go via a heap copy.
    if (len > sizeof codes) {
      std::vector<std::uint8_t> big(len);
      const float s = quantise_block(x + b, len, c, big.data());
      dequantise_block(big.data(), len, s, c.format, out + b);
    } else {
      const float s = quantise_block(x + b, len, c, codes);
      dequantise_block(codes, len, s, c.format, out + b);
    }
  }
}

}  // namespace scin::num
