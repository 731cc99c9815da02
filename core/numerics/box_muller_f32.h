// The two factors of the Gaussian generator's Box-Muller formula in float
// arithmetic, for inputs held as BF16 (generate_bf16_inputs).
//
// The generator defines a Gaussian value from a 64-bit hash h as
//   sigma * sqrt(-2 log(u1)) * cos(2 pi u2),  u1 = (a + 1) 2^-32, u2 = b 2^-32,
// a = h >> 32, b = h mod 2^32, evaluated in double with the C library's log and
// cos (numerics/inputs.cc). A BF16 value has 8 significant bits, so a float
// evaluation of the two factors decides it for all but about 1 value in 500
// (1 in 510 measured): those whose float-evaluated value lies within
// kBoxMullerF32Margin (relative) of a rounding boundary, which the generator
// recomputes with the defining formula.
//
// The margin is an error bound checked by enumeration, not estimated: every
// one of the 2^32 values of each factor is compared with the defining formula's
// (std::log / std::cos in double, its own argument rounding included), see
// tests/numerics/box_muller_f32_test.cc (`--gtest_also_run_disabled_tests
// --gtest_filter='*Exhaustive*'`) and docs/performance.md section 86. The
// kernel is plain IEEE float arithmetic (no contraction into fused
// multiply-adds: this file's translation unit is built with -ffp-contract=off),
// so every instruction set gives the same bits.
#pragma once

#include <cstdint>

namespace scin::num {

/// A bound on the relative error of either factor against the defining
/// formula: the enumeration of all 2^32 inputs of each saw 2^-22.59 (s, at
/// a = 2564697791) and 2^-21.43 (c, at b = 3 2^30 + 1, next to a zero of cos,
/// where the defining formula's rounded argument 2 pi u2 dominates).
inline constexpr double kBoxMullerF32FactorBound = 0x1p-20;

/// The relative margin within which a value computed from the float factors
/// (sigma * s * c in double, times the outlier scale) is left to the defining
/// formula. That value is within (1 + b)^2 (1 + 2^-53)^4 - 1 < 2b + b^2 + 2^-50
/// (b = kBoxMullerF32FactorBound) of the formula's: the margin is twice that
/// at b's worst, and 7.5x the sum of the enumeration's worst errors (2^-22.6 + 2^-21.4).
inline constexpr double kBoxMullerF32Margin = 0x1p-18;

/// s[k] ~ sqrt(-2 log((a[k] + 1) 2^-32)) and c[k] ~ cos(2 pi b[k] 2^-32), k < n,
/// each within kBoxMullerF32FactorBound (relative) of the defining formula's
/// double. s = 0 exactly for a = 2^32 - 1 (u1 = 1) and c = 0 exactly for
/// b = 2^30 and 3 2^30 (where the defining formula's cos is ~1e-16, not 0):
/// a value of 0 is always left to the defining formula. `isa`: 0 portable,
/// 1 AVX2, 2 AVX-512 (as force_generator_isa; the caller checks the CPU has it).
void box_muller_factors_f32(const std::uint32_t* a, const std::uint32_t* b, float* s, float* c, std::uint64_t n,
                            int isa);

/// The defining formula's factors (std::log, std::cos, std::sqrt in double), for tests.
double box_muller_s_exact(std::uint32_t a);
double box_muller_c_exact(std::uint32_t b);

}  // namespace scin::num
