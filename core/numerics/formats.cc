#include "numerics/formats.h"

#include <array>

namespace scin::num {

float fp8_to_float(std::uint8_t code, Fp8Kind k) {
  const Fp8Traits t = fp8_traits(k);
  const bool neg = (code & 0x80u) != 0;
  const int exp_bits = 7 - t.man_bits;
  const int e = (code >> t.man_bits) & ((1 << exp_bits) - 1);
  const int m = code & ((1 << t.man_bits) - 1);
  float v;
  if (k == Fp8Kind::E4M3 && (code & 0x7fu) == 0x7fu) return std::nanf("");
  if (k == Fp8Kind::E5M2 && e == 31) {
    if (m != 0) return std::nanf("");
    v = INFINITY;
  } else if (e == 0) {
    v = std::ldexp(static_cast<float>(m), 1 - t.bias - t.man_bits);
  } else {
    v = std::ldexp(static_cast<float>(m + (1 << t.man_bits)), e - t.bias - t.man_bits);
  }
  return neg ? -v : v;
}

std::uint8_t fp8_bits(float f, Fp8Kind k) {
  const Fp8Traits t = fp8_traits(k);
  if (std::isnan(f)) return t.nan_code;
  const std::uint8_t sign = std::signbit(f) ? 0x80 : 0x00;
  const float a = std::fabs(f);
  if (a >= t.max_finite) return static_cast<std::uint8_t>(sign | t.max_code);   // saturate (incl. inf)
  const int emin = 1 - t.bias;                 // exponent of the smallest normal
  int e;
  std::frexp(a, &e);                           // a = f * 2^e, f in [0.5, 1)
  e -= 1;                                      // a in [2^e, 2^(e+1))
  if (a == 0.0f || e < emin) e = emin;         // subnormal range shares the quantum of emin
  // a / quantum is exact (power-of-two scaling, no underflow in FP32 here).
  const float q = std::ldexp(a, t.man_bits - e);
  const float r = std::nearbyint(q);           // default rounding mode: nearest-even
  int mant = static_cast<int>(r);              // 0 .. 2^(man_bits+1)
  if (mant >= (2 << t.man_bits)) { mant >>= 1; ++e; }   // carried into the next binade
  const float value = std::ldexp(static_cast<float>(mant), e - t.man_bits);
  if (value > t.max_finite) return static_cast<std::uint8_t>(sign | t.max_code);
  int field, frac;
  if (mant < (1 << t.man_bits)) {              // subnormal (or zero)
    field = 0;
    frac = mant;
  } else {
    field = e + t.bias;
    frac = mant - (1 << t.man_bits);
  }
  return static_cast<std::uint8_t>(sign | (field << t.man_bits) | frac);
}

namespace {
std::array<float, 256> make_table(Fp8Kind k) {
  std::array<float, 256> t{};
  for (int c = 0; c < 256; ++c) t[static_cast<std::size_t>(c)] = fp8_to_float(static_cast<std::uint8_t>(c), k);
  return t;
}
}  // namespace

const float* fp8_table(Fp8Kind k) {
  static const std::array<float, 256> e4m3 = make_table(Fp8Kind::E4M3);
  static const std::array<float, 256> e5m2 = make_table(Fp8Kind::E5M2);
  return k == Fp8Kind::E4M3 ? e4m3.data() : e5m2.data();
}

}  // namespace scin::num
