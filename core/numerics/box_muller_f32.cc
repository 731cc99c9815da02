// The Box-Muller factors in float (box_muller_f32.h). Built with
// -ffp-contract=off (core/CMakeLists.txt): every product and sum below is
// rounded on its own, in every instruction set, so the bits do not depend on it.
#include "numerics/box_muller_f32.h"

#include <bit>
#include <cmath>
#include <cstdint>
#include <numbers>

namespace scin::num {

namespace {

// ln 2 in two parts: kLn2Hi has 12 trailing zero bits, so E kLn2Hi is exact for |E| <= 32.
constexpr float kLn2Hi = 0.693145751953125f;
constexpr float kLn2Lo = 1.42860676533018616e-06f;
constexpr float kSqrtHalf2 = 1.41421356f;   // m above this is halved (m ends in [0.707, 1.414])
// 2 pi 2^-32, the angle of one step of b.
constexpr float kStep = static_cast<float>(2.0 * std::numbers::pi * 0x1p-32);

// One element: s = sqrt(-2 ln u1), c = cos(2 pi u2), u1 = (a + 1) 2^-32, u2 = b 2^-32.
[[gnu::always_inline]] inline void factors_one(std::uint32_t a, std::uint32_t b, float& s_out, float& c_out) {
  // ln u1 = 2 atanh(q) + E ln 2 with q = num / den:
  //   u1 <= 1/2 (a < 2^31): t = a + 1 = m 2^e, m in [sqrt(1/2), sqrt 2): q = (m-1)/(m+1), E = e - 32;
  //   u1 >  1/2: u1 = 1 - d, d = (2^32 - 1 - a) 2^-32 in [0, 1/2) exactly: q = -d / (2 - d), E = 0.
  const bool low = static_cast<std::int32_t>(a) >= 0;
  const float t = static_cast<float>(static_cast<std::int32_t>(a & 0x7fffffffu)) + 1.0f;
  const std::uint32_t tb = std::bit_cast<std::uint32_t>(t);
  float m = std::bit_cast<float>((tb & 0x007fffffu) | 0x3f800000u);   // [1, 2)
  std::int32_t e = static_cast<std::int32_t>(tb >> 23) - 127;
  // (Every arm of a choice computed first, then chosen: a branch-free loop that vectorises.)
  const bool halve = m > kSqrtHalf2;
  const float m_half = 0.5f * m;
  m = halve ? m_half : m;
  e += halve ? 1 : 0;
  const float d = static_cast<float>(static_cast<std::int32_t>(0xffffffffu - a) & 0x7fffffff) * 0x1p-32f;
  const float num_low = m - 1.0f, den_low = m + 1.0f, e_low = static_cast<float>(e - 32);
  const float num_high = -d, den_high = 2.0f - d;
  const float num = low ? num_low : num_high;
  const float den = low ? den_low : den_high;
  const float big_e = low ? e_low : 0.0f;
  const float q = num / den;
  const float z = q * q;   // <= 1/9
  // atanh(q)/q = 1 + z/3 + z^2/5 + ... + z^7/15 (the next term is below 2^-29 of the sum).
  float p = 1.0f / 15.0f;
  p = 1.0f / 13.0f + z * p;
  p = 1.0f / 11.0f + z * p;
  p = 1.0f / 9.0f + z * p;
  p = 1.0f / 7.0f + z * p;
  p = 1.0f / 5.0f + z * p;
  p = 1.0f / 3.0f + z * p;
  const float two_q = q + q;
  const float ln = big_e * kLn2Hi + (big_e * kLn2Lo + (two_q + two_q * (z * p)));
  s_out = std::sqrt(-2.0f * ln);

  // 2 pi u2 = k pi/2 + x, |x| <= pi/4, from the integer b: k = the quadrant of
  // b + 2^29, x = 2 pi 2^-32 r with r = b - k 2^30 in [-2^29, 2^29).
  const std::uint32_t bb = b + (1u << 29);
  const std::uint32_t k = bb >> 30;
  const float x = static_cast<float>(static_cast<std::int32_t>(bb & 0x3fffffffu) - (1 << 29)) * kStep;
  const float x2 = x * x;
  // sin x = x - x^3/3! + ... + x^9/9!, cos x = 1 - x^2/2! + ... - x^10/10! (truncation below 2^-28).
  float ps = 1.0f / 362880.0f;
  ps = -1.0f / 5040.0f + x2 * ps;
  ps = 1.0f / 120.0f + x2 * ps;
  ps = -1.0f / 6.0f + x2 * ps;
  const float sin_x = x + x * (x2 * ps);
  float pc = -1.0f / 3628800.0f;
  pc = 1.0f / 40320.0f + x2 * pc;
  pc = -1.0f / 720.0f + x2 * pc;
  pc = 1.0f / 24.0f + x2 * pc;
  pc = -0.5f + x2 * pc;
  const float cos_x = 1.0f + x2 * pc;
  // cos(k pi/2 + x) = cos x, -sin x, -cos x, sin x for k = 0..3.
  const float mag = (k & 1u) ? sin_x : cos_x;
  const std::uint32_t flip = ((k ^ (k >> 1)) & 1u) << 31;
  c_out = std::bit_cast<float>(std::bit_cast<std::uint32_t>(mag) ^ flip);
}

// (Inlined into each instruction set's function below, which compiles it for that set.)
[[gnu::always_inline]] inline void factors(const std::uint32_t* a, const std::uint32_t* b, float* s, float* c,
                                           std::uint64_t n) {
  for (std::uint64_t k = 0; k < n; ++k) factors_one(a[k], b[k], s[k], c[k]);
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
__attribute__((target("avx2"))) void factors_avx2(const std::uint32_t* a, const std::uint32_t* b, float* s, float* c,
                                                  std::uint64_t n) {
  factors(a, b, s, c, n);
}
__attribute__((target("avx512f,avx512dq,avx512vl"))) void factors_avx512(const std::uint32_t* a,
                                                                          const std::uint32_t* b, float* s, float* c,
                                                                          std::uint64_t n) {
  factors(a, b, s, c, n);
}
#define SCIN_BOX_MULLER_X86 1
#endif

}  // namespace

void box_muller_factors_f32(const std::uint32_t* a, const std::uint32_t* b, float* s, float* c, std::uint64_t n,
                            int isa) {
#ifdef SCIN_BOX_MULLER_X86
  if (isa == 2) {
    factors_avx512(a, b, s, c, n);
    return;
  }
  if (isa == 1) {
    factors_avx2(a, b, s, c, n);
    return;
  }
#else
  (void)isa;
#endif
  factors(a, b, s, c, n);
}

double box_muller_s_exact(std::uint32_t a) {
  const double u1 = (static_cast<double>(a) + 1.0) * 0x1p-32;
  return std::sqrt(-2.0 * std::log(u1));
}

double box_muller_c_exact(std::uint32_t b) {
  const double u2 = static_cast<double>(b) * 0x1p-32;
  return std::cos(2.0 * std::numbers::pi * u2);
}

}  // namespace scin::num
