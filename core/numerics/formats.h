// Bit-exact IEEE conversions between FP32 and the narrow formats the hardware
// uses: BF16, FP16 (binary16) and the OCP 8-bit floats E4M3 (FN: no
// infinities, max 448) and E5M2 (IEEE-like, max 57344). All narrowing is
// round-to-nearest-even; subnormals, infinities and NaN follow IEEE 754
// (FP8 narrowing saturates to the largest finite value, the "satfinite" mode
// quantisers use). Inline because they sit in the data engine's inner loops.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>

namespace scin::num {

// ---- BF16: the top 16 bits of an FP32.
inline std::uint16_t bf16_bits(float f) {
  std::uint32_t u = std::bit_cast<std::uint32_t>(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((u >> 16) | 0x40u);  // quiet NaN
  u += 0x7fffu + ((u >> 16) & 1u);   // round to nearest, ties to even (carries into the exponent, to inf)
  return static_cast<std::uint16_t>(u >> 16);
}
/// Branch-free form of round_bf16 for loops (vectorises): same results.
inline float round_bf16_fast(float f) {
  const std::uint32_t u = std::bit_cast<std::uint32_t>(f);
  const std::uint32_t rounded = (u + 0x7fffu + ((u >> 16) & 1u)) & 0xffff0000u;
  const std::uint32_t quiet = (u | 0x00400000u) & 0xffff0000u;
  return std::bit_cast<float>((u & 0x7fffffffu) > 0x7f800000u ? quiet : rounded);
}
inline float bf16_to_float(std::uint16_t h) { return std::bit_cast<float>(static_cast<std::uint32_t>(h) << 16); }
inline float round_bf16(float f) { return bf16_to_float(bf16_bits(f)); }

// ---- FP16 (IEEE binary16): 1 sign, 5 exponent (bias 15), 10 mantissa bits.
inline std::uint16_t fp16_bits(float f) {
  const std::uint32_t u = std::bit_cast<std::uint32_t>(f);
  const std::uint16_t sign = static_cast<std::uint16_t>((u >> 16) & 0x8000u);
  const std::uint32_t a = u & 0x7fffffffu;
  if (a > 0x7f800000u) return static_cast<std::uint16_t>(sign | 0x7e00u | ((a >> 13) & 0x3ffu));  // NaN, quiet
  if (a >= 0x477ff000u) return static_cast<std::uint16_t>(sign | 0x7c00u);  // >= 65520: rounds to inf
  if (a >= 0x38800000u) {  // normal half (>= 2^-14)
    const std::uint32_t r = a + 0xfffu + ((a >> 13) & 1u) - 0x38000000u;  // rebias 127 -> 15 and round
    return static_cast<std::uint16_t>(sign | (r >> 13));
  }
  if (a < 0x33000000u) return sign;  // < 2^-25: rounds to zero (2^-25 itself is a tie to even zero)
  // Subnormal half: value = m * 2^-24. Shift the full significand and round to nearest even.
  const std::uint32_t e = a >> 23;                    // 102 .. 112
  const std::uint32_t mant = (a & 0x7fffffu) | 0x800000u;
  const std::uint32_t shift = 126u - e;               // 14 .. 24
  std::uint32_t m = mant >> shift;
  const std::uint32_t rem = mant & ((1u << shift) - 1u);
  const std::uint32_t half = 1u << (shift - 1u);
  if (rem > half || (rem == half && (m & 1u))) ++m;  // may carry to the smallest normal: correct
  return static_cast<std::uint16_t>(sign | m);
}
inline float fp16_to_float(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t e = (h >> 10) & 0x1fu;
  const std::uint32_t m = h & 0x3ffu;
  if (e == 0) {  // zero or subnormal: m * 2^-24 is exact in FP32
    const float v = static_cast<float>(m) * 0x1p-24f;
    return sign ? -v : v;
  }
  if (e == 31) return std::bit_cast<float>(sign | 0x7f800000u | (m << 13));
  return std::bit_cast<float>(sign | ((e + 112u) << 23) | (m << 13));
}
inline float round_fp16(float f) { return fp16_to_float(fp16_bits(f)); }

// ---- FP8 (OCP 8-bit floating point).
enum class Fp8Kind { E4M3, E5M2 };

struct Fp8Traits {
  int man_bits;
  int bias;
  float max_finite;
  std::uint8_t max_code;     // code of +max_finite
  std::uint8_t nan_code;
};
constexpr Fp8Traits fp8_traits(Fp8Kind k) {
  return k == Fp8Kind::E4M3 ? Fp8Traits{3, 7, 448.0f, 0x7e, 0x7f} : Fp8Traits{2, 15, 57344.0f, 0x7b, 0x7f};
}

/// Decodes an FP8 code (E4M3: 0x7f/0xff are NaN; E5M2: 0x7c is inf, above NaN).
float fp8_to_float(std::uint8_t code, Fp8Kind k);

/// Encodes with round-to-nearest-even, saturating finite overflow (and
/// infinities) to +-max_finite; NaN maps to NaN.
std::uint8_t fp8_bits(float f, Fp8Kind k);

/// Lookup table of all 256 decoded values.
const float* fp8_table(Fp8Kind k);

// ---- Fast round-to-nearest-even to an integer for |x| < 2^22 (vectorisable).
inline float rne_int(float x) {
  constexpr float magic = 12582912.0f;  // 1.5 * 2^23
  return (x + magic) - magic;
}

}  // namespace scin::num
