#include "numerics/codec.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <bit>
#include <cmath>
#include <vector>

#include "base/error.h"
#include "numerics/formats.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#endif

namespace scin::num {

Format codec_format(Codec c) { return scin::codec_format(c); }

namespace {
// codec_qmax and round_scale, defined here so that the block kernels inline them.
[[noreturn]] void not_a_block_codec(Format f) {
  throw Error(std::string("codec: format ") + to_string(f) + " is not a block codec");
}
inline __attribute__((always_inline)) float qmax_of(Format f) {
  switch (f) {
    case Format::Int8Block: return 127.0f;
    case Format::Int4Block: return 7.0f;
    case Format::Fp8E4M3Block: return 448.0f;
    case Format::Fp8E5M2Block: return 57344.0f;
    default: not_a_block_codec(f);
  }
}
inline __attribute__((always_inline)) float round_scale_to(float s, ScaleFormat f) {
  switch (f) {
    case ScaleFormat::Fp32: return s;
    case ScaleFormat::Fp16: return std::min(round_fp16(s), 65504.0f);
    case ScaleFormat::Bf16: return std::min(round_bf16(s), 0x1.fep127f);
  }
  return s;
}
}  // namespace

float codec_qmax(Format f) { return qmax_of(f); }

float round_scale(float s, ScaleFormat f) { return round_scale_to(s, f); }

namespace {

inline Fp8Kind fp8_kind(Format f) { return f == Format::Fp8E4M3Block ? Fp8Kind::E4M3 : Fp8Kind::E5M2; }

// Integer codes: RNE of x / s, clamped. Branch-free so the loop vectorises.
inline __attribute__((always_inline)) void quantise_int(const float* x, std::size_t n, float scale, float qmax,
                                                     std::uint8_t* codes) {
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

// The block kernels are written once (the *_impl templates, always inlined) and
// compiled twice: for the baseline x86-64 target and, on x86-64 with GCC or
// Clang, for AVX2, chosen at run time when the CPU has it. Both execute the
// same IEEE operations element by element (divisions, additions, products,
// min/max, conversions; "avx2" does not enable FMA, so no product and sum is
// fused), only more elements per instruction: the same bits
// (Codec.Avx2KernelsGiveThePortableKernelsBits).
#define SCIN_KERNEL inline __attribute__((always_inline))

namespace {

SCIN_KERNEL float quantise_block_impl(const float* x, std::size_t n, const CodecSpec& c, std::uint8_t* codes) {
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
  const float qmax = qmax_of(c.format);
  const float scale = round_scale_to(amax / qmax, c.scale_format);
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

SCIN_KERNEL void dequantise_block_impl(const std::uint8_t* codes, std::size_t n, float scale, Format f, float* out) {
  if (f == Format::Int8Block || f == Format::Int4Block) {
    for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<float>(static_cast<std::int8_t>(codes[i])) * scale;
  } else {
    const float* table = fp8_table(fp8_kind(f));
    for (std::size_t i = 0; i < n; ++i) out[i] = table[codes[i]] * scale;
  }
}

SCIN_KERNEL void dequantise_add_block_impl(const std::uint8_t* codes, std::size_t n, float scale, Format f, float* acc) {
  if (f == Format::Int8Block || f == Format::Int4Block) {
    for (std::size_t i = 0; i < n; ++i) acc[i] += static_cast<float>(static_cast<std::int8_t>(codes[i])) * scale;
  } else {
    const float* table = fp8_table(fp8_kind(f));
    for (std::size_t i = 0; i < n; ++i) acc[i] += table[codes[i]] * scale;
  }
}

SCIN_KERNEL void quantise_blocks_impl(const float* x, std::size_t n, const CodecSpec& c, std::uint8_t* codes,
                                      float* scales) {
  const auto g = static_cast<std::size_t>(c.block_elems);
  for (std::size_t k = 0; k < n; k += g) scales[k / g] = quantise_block_impl(x + k, std::min(g, n - k), c, codes + k);
}
SCIN_KERNEL void dequantise_blocks_impl(const std::uint8_t* codes, std::size_t n, const float* scales,
                                        const CodecSpec& c, float* out) {
  const auto g = static_cast<std::size_t>(c.block_elems);
  for (std::size_t k = 0; k < n; k += g) dequantise_block_impl(codes + k, std::min(g, n - k), scales[k / g], c.format, out + k);
}
SCIN_KERNEL void dequantise_add_blocks_impl(const std::uint8_t* codes, std::size_t n, const float* scales,
                                            const CodecSpec& c, float* acc) {
  const auto g = static_cast<std::size_t>(c.block_elems);
  for (std::size_t k = 0; k < n; k += g)
    dequantise_add_block_impl(codes + k, std::min(g, n - k), scales[k / g], c.format, acc + k);
}

float quantise_block_portable(const float* x, std::size_t n, const CodecSpec& c, std::uint8_t* codes) {
  return quantise_block_impl(x, n, c, codes);
}
void dequantise_block_portable(const std::uint8_t* codes, std::size_t n, float scale, Format f, float* out) {
  dequantise_block_impl(codes, n, scale, f, out);
}
void dequantise_add_block_portable(const std::uint8_t* codes, std::size_t n, float scale, Format f, float* acc) {
  dequantise_add_block_impl(codes, n, scale, f, acc);
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define SCIN_CODEC_AVX2 1
__attribute__((target("avx2"))) float quantise_block_avx2(const float* x, std::size_t n, const CodecSpec& c,
                                                          std::uint8_t* codes) {
  return quantise_block_impl(x, n, c, codes);
}
__attribute__((target("avx2"))) void dequantise_block_avx2(const std::uint8_t* codes, std::size_t n, float scale,
                                                           Format f, float* out) {
  dequantise_block_impl(codes, n, scale, f, out);
}
__attribute__((target("avx2"))) void dequantise_add_block_avx2(const std::uint8_t* codes, std::size_t n, float scale,
                                                               Format f, float* acc) {
  dequantise_add_block_impl(codes, n, scale, f, acc);
}
__attribute__((target("avx2"))) void quantise_blocks_avx2(const float* x, std::size_t n, const CodecSpec& c,
                                                          std::uint8_t* codes, float* scales) {
  quantise_blocks_impl(x, n, c, codes, scales);
}
__attribute__((target("avx2"))) void dequantise_blocks_avx2(const std::uint8_t* codes, std::size_t n,
                                                            const float* scales, const CodecSpec& c, float* out) {
  dequantise_blocks_impl(codes, n, scales, c, out);
}
__attribute__((target("avx2"))) void dequantise_add_blocks_avx2(const std::uint8_t* codes, std::size_t n,
                                                                const float* scales, const CodecSpec& c, float* acc) {
  dequantise_add_blocks_impl(codes, n, scales, c, acc);
}
// Whole INT8/INT4 blocks of a multiple of 16 values in AVX-512 (sixteen per
// instruction): quantise_block_impl's operations element by element, written
// out: the amax on the bit patterns (NaN skipped), the scalar scale, then
// x / s, + 1.5 * 2^23, - 1.5 * 2^23 (rne_int), std::max(q, -qmax) as
// vmaxps(-qmax, q) and std::min(q, qmax) as vminps(qmax, q) (a NaN q stays
// NaN, as in the scalar code), truncation to int (NaN: 0x80000000) and its low
// byte. No product is summed, so nothing can be fused. Returns the values
// done (whole blocks from x[0]); the caller does the rest.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"   // GCC 12's AVX-512 headers (_mm512_undefined_*)
__attribute__((target("avx512f,avx512bw,avx512vl"))) std::size_t quantise_int_blocks_avx512(
    const float* x, std::size_t n, const CodecSpec& c, std::uint8_t* codes, float* scales) {
  const auto g = static_cast<std::size_t>(c.block_elems);
  const float qmax = qmax_of(c.format);
  const __m512i abs_mask = _mm512_set1_epi32(0x7fffffff), inf_bits = _mm512_set1_epi32(0x7f800000);
  const __m512 magic = _mm512_set1_ps(12582912.0f), hi = _mm512_set1_ps(qmax), lo = _mm512_set1_ps(-qmax);
  std::size_t k = 0;
  for (; k + g <= n; k += g) {
    const float* xb = x + k;
    __m512i top = _mm512_setzero_si512();
    for (std::size_t i = 0; i < g; i += 16) {
      const __m512i a = _mm512_and_si512(_mm512_castps_si512(_mm512_loadu_ps(xb + i)), abs_mask);
      top = _mm512_max_epi32(top, _mm512_maskz_mov_epi32(_mm512_cmple_epi32_mask(a, inf_bits), a));
    }
    const float amax = std::bit_cast<float>(static_cast<std::uint32_t>(_mm512_reduce_max_epi32(top)));
    const float scale = round_scale_to(amax / qmax, c.scale_format);
    scales[k / g] = scale;
    if (scale == 0.0f) {
      std::memset(codes + k, 0, g);
      continue;
    }
    const __m512 s = _mm512_set1_ps(scale);
    for (std::size_t i = 0; i < g; i += 16) {
      __m512 q = _mm512_sub_ps(_mm512_add_ps(_mm512_div_ps(_mm512_loadu_ps(xb + i), s), magic), magic);
      q = _mm512_min_ps(hi, _mm512_max_ps(lo, q));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(codes + k + i), _mm512_cvtepi32_epi8(_mm512_cvttps_epi32(q)));
    }
  }
  return k;
}
#pragma GCC diagnostic pop
const bool kCpuAvx2 = __builtin_cpu_supports("avx2");
const bool kCpuAvx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                        __builtin_cpu_supports("avx512vl");
#else
const bool kCpuAvx2 = false;
#endif

std::atomic<bool> g_portable{false};

inline bool use_avx2() { return kCpuAvx2 && !g_portable.load(std::memory_order_relaxed); }

}  // namespace

void force_portable_kernels(bool on) { g_portable.store(on, std::memory_order_relaxed); }

bool kernels_use_avx2() { return use_avx2(); }

bool int_blocks_use_avx512() {
#ifdef SCIN_CODEC_AVX2
  return kCpuAvx512 && use_avx2();
#else
  return false;
#endif
}

float quantise_block(const float* x, std::size_t n, const CodecSpec& c, std::uint8_t* codes) {
#ifdef SCIN_CODEC_AVX2
  if (use_avx2()) return quantise_block_avx2(x, n, c, codes);
#endif
  return quantise_block_portable(x, n, c, codes);
}

void dequantise_block(const std::uint8_t* codes, std::size_t n, float scale, Format f, float* out) {
#ifdef SCIN_CODEC_AVX2
  if (use_avx2()) return dequantise_block_avx2(codes, n, scale, f, out);
#endif
  dequantise_block_portable(codes, n, scale, f, out);
}

void dequantise_add_block(const std::uint8_t* codes, std::size_t n, float scale, Format f, float* acc) {
#ifdef SCIN_CODEC_AVX2
  if (use_avx2()) return dequantise_add_block_avx2(codes, n, scale, f, acc);
#endif
  dequantise_add_block_portable(codes, n, scale, f, acc);
}

void quantise_blocks(const float* x, std::size_t n, const CodecSpec& c, std::uint8_t* codes, float* scales) {
#ifdef SCIN_CODEC_AVX2
  if (use_avx2()) {
    if (kCpuAvx512 && c.block_elems % 16 == 0 && c.block_elems > 0 &&
        (c.format == Format::Int8Block || c.format == Format::Int4Block)) {
      const std::size_t done = quantise_int_blocks_avx512(x, n, c, codes, scales);
      if (done == n) return;
      const auto g = static_cast<std::size_t>(c.block_elems);
      x += done;
      codes += done;
      scales += done / g;
      n -= done;
    }
    return quantise_blocks_avx2(x, n, c, codes, scales);
  }
#endif
  quantise_blocks_impl(x, n, c, codes, scales);
}

void dequantise_blocks(const std::uint8_t* codes, std::size_t n, const float* scales, const CodecSpec& c, float* out) {
#ifdef SCIN_CODEC_AVX2
  if (use_avx2()) return dequantise_blocks_avx2(codes, n, scales, c, out);
#endif
  dequantise_blocks_impl(codes, n, scales, c, out);
}

void dequantise_add_blocks(const std::uint8_t* codes, std::size_t n, const float* scales, const CodecSpec& c,
                           float* acc) {
#ifdef SCIN_CODEC_AVX2
  if (use_avx2()) return dequantise_add_blocks_avx2(codes, n, scales, c, acc);
#endif
  dequantise_add_blocks_impl(codes, n, scales, c, acc);
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
