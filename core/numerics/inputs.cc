#include "numerics/inputs.h"

#include "base/run_context.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cctype>
#include <cmath>
#include <limits>
#include <cstring>
#include <numbers>
#include <type_traits>

#include <fmt/format.h>
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include "base/error.h"
#include "numerics/box_muller_f32.h"
#include "numerics/formats.h"
#include "engines/data/data_engine.h"

#if defined(__x86_64__) && defined(__GLIBC__)
#include <immintrin.h>
// glibc's vector math library (libmvec, linked through libm), two doubles per
// call (SSE ABI; it picks its own implementation for the CPU). Documented
// accuracy: a few ulps; the generator below only trusts it to 2^-32.
extern "C" __m128d _ZGVbN2v_log(__m128d);
extern "C" __m128d _ZGVbN2v_cos(__m128d);
// The AVX2 variants, four doubles per call (called only from AVX2 code, when the CPU has it).
extern "C" __attribute__((target("avx2"))) __m256d _ZGVdN4v_log(__m256d);
extern "C" __attribute__((target("avx2"))) __m256d _ZGVdN4v_cos(__m256d);
// The AVX-512 variants, eight doubles per call (called only from AVX-512 code, when the CPU has it).
// (The target attributes: clang refuses a vector argument whose ISA the declaration does not enable.)
extern "C" __attribute__((target("avx512f"))) __m512d _ZGVeN8v_log(__m512d);
extern "C" __attribute__((target("avx512f"))) __m512d _ZGVeN8v_cos(__m512d);
#define SCIN_HAVE_LIBMVEC 1
#endif

namespace scin {

namespace {

enum class Fn { Log, Cos };

// out[k] ~ log(in[k]) or cos(in[k]), k < n: a few ulps from std::log / std::cos.
template <Fn F>
void fast_batch(const double* in, double* out, std::uint64_t n) {
  std::uint64_t k = 0;
#ifdef SCIN_HAVE_LIBMVEC
  for (; k + 2 <= n; k += 2) {
    const __m128d x = _mm_loadu_pd(in + k);
    _mm_storeu_pd(out + k, F == Fn::Log ? _ZGVbN2v_log(x) : _ZGVbN2v_cos(x));
  }
#endif
  for (; k < n; ++k) out[k] = F == Fn::Log ? std::log(in[k]) : std::cos(in[k]);
}

#ifdef SCIN_HAVE_LIBMVEC
// The same with the AVX2 variants, four per call (AVX2 code: only run when the CPU has it).
template <Fn F>
__attribute__((target("avx2"))) void fast_batch_avx2(const double* in, double* out, std::uint64_t n) {
  std::uint64_t k = 0;
  for (; k + 4 <= n; k += 4) {
    const __m256d x = _mm256_loadu_pd(in + k);
    _mm256_storeu_pd(out + k, F == Fn::Log ? _ZGVdN4v_log(x) : _ZGVdN4v_cos(x));
  }
  for (; k < n; ++k) out[k] = F == Fn::Log ? std::log(in[k]) : std::cos(in[k]);
}
// The same with the AVX-512 variants, eight per call (AVX-512 code: only run when the CPU has it).
template <Fn F>
__attribute__((target("avx512f,avx512dq,avx512vl"))) void fast_batch_avx512(const double* in, double* out, std::uint64_t n) {
  std::uint64_t k = 0;
  for (; k + 8 <= n; k += 8) {
    const __m512d x = _mm512_loadu_pd(in + k);
    _mm512_storeu_pd(out + k, F == Fn::Log ? _ZGVeN8v_log(x) : _ZGVeN8v_cos(x));
  }
  for (; k < n; ++k) out[k] = F == Fn::Log ? std::log(in[k]) : std::cos(in[k]);
}
#endif

// out[k] = std::sqrt(in[k]), k < n, in vector instructions: IEEE square roots
// are correctly rounded, so the same bits (std::sqrt's errno path for a
// negative argument keeps the compiler from vectorising it; none is negative here).
inline void sqrt_batch(const double* in, double* out, std::uint64_t n) {
  std::uint64_t k = 0;
#ifdef SCIN_HAVE_LIBMVEC
  for (; k + 2 <= n; k += 2) _mm_storeu_pd(out + k, _mm_sqrt_pd(_mm_loadu_pd(in + k)));
#endif
  for (; k < n; ++k) out[k] = std::sqrt(in[k]);
}
#ifdef SCIN_HAVE_LIBMVEC
__attribute__((target("avx2"))) void sqrt_batch_avx2(const double* in, double* out, std::uint64_t n) {
  std::uint64_t k = 0;
  for (; k + 4 <= n; k += 4) _mm256_storeu_pd(out + k, _mm256_sqrt_pd(_mm256_loadu_pd(in + k)));
  sqrt_batch(in + k, out + k, n - k);
}
// The AVX-512 batch's roots are not correctly rounded: an estimate to 2^-14
// (vrsqrt14pd) of 1/sqrt(x), two Newton steps (relative error ~2^-49, rounding
// included), times x: cheaper than vsqrtpd, and far inside the 2^-32 margin
// within which the scalar formula decides (Batcher). x = 0 gives NaN there
// (0 x inf), which the scalar formula decides too. Arguments are -2 log u1 in
// [0, 45]: never negative, subnormal or infinite.
// (`in` not const: GCC 12 takes a const pointer argument for a read of every
// element and warns that the caller's batch may be uninitialised.)
__attribute__((target("avx512f,avx512dq,avx512vl"))) void sqrt_batch_avx512(double* in, double* out, std::uint64_t n) {
  std::uint64_t k = 0;
  const __m512d half = _mm512_set1_pd(0.5), three_halves = _mm512_set1_pd(1.5);
  for (; k + 8 <= n; k += 8) {
    const __m512d x = _mm512_loadu_pd(in + k);
    const __m512d h = _mm512_mul_pd(half, x);
    __m512d y = _mm512_mask_rsqrt14_pd(x, 0xff, x);   // all lanes (the unmasked form warns in GCC 12)
    y = _mm512_mul_pd(y, _mm512_sub_pd(three_halves, _mm512_mul_pd(h, _mm512_mul_pd(y, y))));
    y = _mm512_mul_pd(y, _mm512_sub_pd(three_halves, _mm512_mul_pd(h, _mm512_mul_pd(y, y))));
    _mm512_storeu_pd(out + k, _mm512_mul_pd(x, y));
  }
  sqrt_batch(in + k, out + k, n - k);
}
#endif

// Instruction sets of the generator's batches: 0 portable, 1 AVX2, 2 AVX-512.
template <Fn F, int Isa>
[[gnu::always_inline]] inline void fast_batch_for(const double* in, double* out, std::uint64_t n) {
#ifdef SCIN_HAVE_LIBMVEC
  if constexpr (Isa == 2) {
    fast_batch_avx512<F>(in, out, n);
    return;
  }
  if constexpr (Isa == 1) {
    fast_batch_avx2<F>(in, out, n);
    return;
  }
#endif
  fast_batch<F>(in, out, n);
}

template <int Isa>
[[gnu::always_inline]] inline void sqrt_batch_for(double* in, double* out, std::uint64_t n) {
#ifdef SCIN_HAVE_LIBMVEC
  if constexpr (Isa == 2) {
    sqrt_batch_avx512(in, out, n);
    return;
  }
  if constexpr (Isa == 1) {
    sqrt_batch_avx2(in, out, n);
    return;
  }
#endif
  sqrt_batch(in, out, n);
}

inline std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

inline std::uint64_t counter_hash(std::uint64_t seed, std::uint64_t stream, std::uint64_t index) {
  return splitmix64(splitmix64(splitmix64(seed) ^ stream) ^ index);
}

// static_cast<double>(x) for x < 2^32, the same value, in integer and
// floating-point operations that vectorise (2^52 + x is exact in a double).
inline double u32_to_double(std::uint64_t x) { return std::bit_cast<double>(0x4330000000000000ull | x) - 0x1p52; }

// Uniform in (0, 1] from the top 53 bits.
inline double unit_open0(std::uint64_t h) { return (static_cast<double>(h >> 11) + 1.0) * 0x1p-53; }

void check_spec(const InputSpec& spec) {
  if (!(spec.stddev > 0) || !std::isfinite(spec.stddev))
    throw Error(fmt::format("input stddev: {} must be > 0 and finite", spec.stddev));
  if (!(spec.outlier_fraction >= 0 && spec.outlier_fraction <= 1))
    throw Error(fmt::format("--outlier-fraction: {} is outside [0, 1]", spec.outlier_fraction));
  if (!(spec.outlier_scale >= 1 && spec.outlier_scale <= 1e6))
    throw Error(fmt::format("--outlier-scale: {} is outside [1, 1e6]", spec.outlier_scale));
  if (spec.channels < 1 || spec.channels > (1ull << 24))
    throw Error(fmt::format("channels: {} is outside [1, 16777216]", spec.channels));
}

}  // namespace

std::vector<std::uint64_t> outlier_channels(const InputSpec& spec) {
  check_spec(spec);
  const auto k = static_cast<std::uint64_t>(std::llround(spec.outlier_fraction * static_cast<double>(spec.channels)));
  // Partial Fisher-Yates over channel indices, driven by the seed alone.
  std::vector<std::uint64_t> idx(spec.channels);
  for (std::uint64_t i = 0; i < spec.channels; ++i) idx[i] = i;
  for (std::uint64_t i = 0; i < k; ++i) {
    const std::uint64_t j = i + counter_hash(spec.seed, 0x0ull - 1, i) % (spec.channels - i);
    std::swap(idx[i], idx[j]);
  }
  idx.resize(k);
  std::sort(idx.begin(), idx.end());
  return idx;
}


// One batch of generated values: the same formulas with vector log/cos
// (fast_batch; a few ulps from the scalar ones). A value within 2^-32
// (relative) of a float rounding boundary (for run_bf16: of a BF16 one, or of
// `big`) is recomputed with the scalar functions (`exact`), so every float
// (BF16 value) is the one the defining formulas give.
template <class Exact>
struct Batcher {
  static constexpr std::uint64_t kBatch = 256;
  double sigma, two_pi, laplace_b;
  bool laplace;
  const char* is_outlier;   // null: no outlier channels
  std::uint64_t channels;
  double outlier_scale;
  const Exact& exact;

  // hs[k] = the hash of element lo + k, cs[k] = its value computed in double,
  // k < n: within |cs[k]| 2^-32 (relative) of the defining formula's, and with
  // Bf16 (Gaussian and outliers: the float factors) within kBoxMullerF32Margin.
  template <int Isa, bool Bf16>
  [[gnu::always_inline]] inline void values(std::uint64_t key, std::uint64_t lo, std::uint64_t n, std::uint64_t* hs,
                                            double* cs) const {
    double arg[kBatch], lg[kBatch];
    for (std::uint64_t k = 0; k < n; ++k) hs[k] = splitmix64(key ^ (lo + k));
    if (laplace) {
      for (std::uint64_t k = 0; k < n; ++k) {
        const double u = unit_open0(hs[k]) - 0.5;
        arg[k] = std::max(1.0 - 2.0 * std::fabs(u), 0x1p-53);
      }
      fast_batch_for<Fn::Log, Isa>(arg, lg, n);
      for (std::uint64_t k = 0; k < n; ++k) {
        const double u = unit_open0(hs[k]) - 0.5;
        cs[k] = -laplace_b * std::copysign(lg[k], u);
      }
    } else if constexpr (Bf16) {
      // A BF16 value from the float factors (num::box_muller_factors_f32),
      // trusted to kBoxMullerF32Margin below: more values left to
      // the scalar formula (about 1 in 500).
      std::uint32_t ua[kBatch], ub[kBatch];
      float fs[kBatch], fc[kBatch];
      for (std::uint64_t k = 0; k < n; ++k) {
        ua[k] = static_cast<std::uint32_t>(hs[k] >> 32);
        ub[k] = static_cast<std::uint32_t>(hs[k]);
      }
      num::box_muller_factors_f32(ua, ub, fs, fc, n, Isa);
      for (std::uint64_t k = 0; k < n; ++k) {
        double v = sigma * static_cast<double>(fs[k]) * static_cast<double>(fc[k]);
        if (is_outlier && is_outlier[(lo + k) % channels]) v *= outlier_scale;
        cs[k] = v;
      }
    } else {
      for (std::uint64_t k = 0; k < n; ++k) arg[k] = (u32_to_double(hs[k] >> 32) + 1.0) * 0x1p-32;
      fast_batch_for<Fn::Log, Isa>(arg, lg, n);
      for (std::uint64_t k = 0; k < n; ++k) arg[k] = two_pi * (u32_to_double(hs[k] & 0xffffffffull) * 0x1p-32);
      fast_batch_for<Fn::Cos, Isa>(arg, cs, n);
      for (std::uint64_t k = 0; k < n; ++k) arg[k] = -2.0 * lg[k];
      sqrt_batch_for<Isa>(arg, lg, n);   // lg[k] = std::sqrt(-2 log u1) (AVX-512: to ~2^-49)
      for (std::uint64_t k = 0; k < n; ++k) {
        double v = sigma * lg[k] * cs[k];
        if (is_outlier && is_outlier[(lo + k) % channels]) v *= outlier_scale;
        cs[k] = v;
      }
    }
  }

  // out[k] = the value of element lo + k, k < n.
  template <int Isa>
  [[gnu::always_inline]] inline void run(std::uint64_t key, std::uint64_t lo, std::uint64_t n, float* out) const {
    double cs[kBatch];
    std::uint64_t hs[kBatch];
    values<Isa, false>(key, lo, n, hs, cs);
    // Zero, NaN or infinity (the tests fail) or too close to a boundary: the
    // scalar formula decides. (Branch-free first pass, so that it vectorises.)
    unsigned char unsure[kBatch];
    unsigned any = 0;
    for (std::uint64_t k = 0; k < n; ++k) {
      const double v = cs[k];
      const float f = static_cast<float>(v);
      const double m = std::fabs(v) * 0x1p-32;
      const bool sure = (m > 0) & (static_cast<float>(v - m) == f) & (static_cast<float>(v + m) == f);
      out[k] = f;
      unsure[k] = !sure;
      any |= !sure;
    }
    // The few unsure values (about 1 in 300), found 8 flags at a time.
    for (std::uint64_t w = 0; any && w < n; w += 8) {
      std::uint64_t flags = 0;
      std::memcpy(&flags, unsure + w, std::min<std::uint64_t>(8, n - w));
      for (std::uint64_t k = w; flags != 0; ++k, flags >>= 8)
        if (flags & 0xffu) out[k] = exact(hs[k], lo + k);
    }
  }

  // The BF16 values of elements lo + k, k < n, as round_inputs rounds the
  // defining formula's floats: h[k] = the pattern, f[k] = its value. `over`
  // is or-ed with 1 for a value not finite or beyond `big` (only a value the
  // scalar formula decides can be: bf16_pattern_decided's are below 2^127).
  template <int Isa>
  [[gnu::always_inline]] inline void run_bf16_one(std::uint64_t key, std::uint64_t lo, std::uint64_t n,
                                                  std::uint16_t* h, float* f, float big, std::uint32_t& over) const {
    double cs[kBatch];
    std::uint64_t hs[kBatch];
    values<Isa, true>(key, lo, n, hs, cs);
    // A BF16 value is ~2^16 times wider than a float's rounding interval:
    // about 1 value in 500 is left to the scalar formula with the float
    // factors' margin, 1 in 33,000 with libmvec's doubles (Laplace: the
    // threshold's 2^29 for float() dominates its 2^21 margin).
    const std::uint64_t threshold = bf16_decided_threshold(laplace ? 0x1p-32 : num::kBoxMullerF32Margin);
    unsigned char unsure[kBatch];
    unsigned any = 0;
    for (std::uint64_t k = 0; k < n; ++k) {
      std::uint16_t p;
      const bool sure = bf16_pattern_decided(cs[k], threshold, p);
      h[k] = p;
      f[k] = num::bf16_to_float(p);
      unsure[k] = !sure;
      any |= !sure;
    }
    for (std::uint64_t w = 0; any && w < n; w += 8) {
      std::uint64_t flags = 0;
      std::memcpy(&flags, unsure + w, std::min<std::uint64_t>(8, n - w));
      for (std::uint64_t k = w; flags != 0; ++k, flags >>= 8) {
        if (!(flags & 0xffu)) continue;
        const float x = exact(hs[k], lo + k);
        over |= static_cast<std::uint32_t>(!(std::fabs(x) <= big));
        const std::uint32_t u = std::bit_cast<std::uint32_t>(num::round_bf16_fast(x));
        h[k] = static_cast<std::uint16_t>(u >> 16);
        f[k] = std::bit_cast<float>(u);
      }
    }
  }

  // The same batch for every rank (keys[r], r < ranks), rounded to BF16 as
  // round_inputs rounds: bits[r][lo + k] = the pattern, and the exact sum
  // d[k] = +0.0 + rank 0's value + rank 1's + ... (exact_sum's additions, in
  // order). `over` is or-ed with 1 for a value not finite or beyond `big`.
  template <int Isa>
  [[gnu::always_inline]] inline void run_bf16(const std::uint64_t* keys, std::size_t ranks, std::uint64_t lo,
                                              std::uint64_t n, std::vector<BigVector<std::uint16_t>>& bits,
                                              double* d, float big, std::uint32_t& over) const {
    float f[kBatch];
    for (std::size_t r = 0; r < ranks; ++r) {
      run_bf16_one<Isa>(keys[r], lo, n, bits[r].data() + lo, f, big, over);
      if (r == 0)
        for (std::uint64_t k = 0; k < n; ++k) d[k] = 0.0 + static_cast<double>(f[k]);
      else
        for (std::uint64_t k = 0; k < n; ++k) d[k] += static_cast<double>(f[k]);
    }
  }
};

#ifdef SCIN_HAVE_LIBMVEC
// The batch with AVX2 code and libmvec's 4-wide log/cos (chosen at run time;
// no FMA: the arithmetic is the default build's, operation for operation).
template <class B>
__attribute__((target("avx2"))) void batch_avx2(const B& gen, std::uint64_t key, std::uint64_t lo, std::uint64_t n,
                                                float* x) {
  gen.template run<1>(key, lo, n, x);
}
template <class B>
__attribute__((target("avx2"))) void batch_bf16_avx2(const B& gen, const std::uint64_t* keys, std::size_t ranks,
                                                     std::uint64_t lo, std::uint64_t n,
                                                     std::vector<BigVector<std::uint16_t>>& bits, double* d,
                                                     float big, std::uint32_t& over) {
  gen.template run_bf16<1>(keys, ranks, lo, n, bits, d, big, over);
}
// The batch with AVX-512 code (64-bit multiplies for the hash) and libmvec's
// 8-wide log/cos. AVX-512F has fused multiply-adds; where the compiler may
// contract a product and a sum here, the product is exact (a power-of-two
// scaling: 2|u|, |v| 2^-32, the 2^-53 of a 53-bit integer), so the sums are
// the default build's; and every float is still checked against the 2^-32
// margin, the scalar formula deciding within it.
template <class B>
__attribute__((target("avx512f,avx512dq,avx512vl"))) void batch_avx512(const B& gen, std::uint64_t key,
                                                                        std::uint64_t lo, std::uint64_t n, float* x) {
  gen.template run<2>(key, lo, n, x);
}
template <class B>
__attribute__((target("avx512f,avx512dq,avx512vl"))) void batch_bf16_avx512(
    const B& gen, const std::uint64_t* keys, std::size_t ranks, std::uint64_t lo, std::uint64_t n,
    std::vector<BigVector<std::uint16_t>>& bits, double* d, float big, std::uint32_t& over) {
  gen.template run_bf16<2>(keys, ranks, lo, n, bits, d, big, over);
}

static std::atomic<int> g_forced_isa{-1};   // force_generator_isa: -1 = the CPU's best
static int best_isa() {
  static const int best = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
                                  __builtin_cpu_supports("avx512vl") ? 2 : __builtin_cpu_supports("avx2") ? 1 : 0;
  return best;
}
#endif

namespace {

// Calls body(gen, isa): the generator of `spec`'s values (a Batcher) and the
// instruction set of its batches (run_batch).
template <class Body>
void with_generator(const InputSpec& spec, Body&& body) {
  check_spec(spec);
  std::vector<char> is_outlier;
  if (spec.dist == Distribution::Outliers) {
    is_outlier.assign(spec.channels, 0);
    for (auto c : outlier_channels(spec)) is_outlier[c] = 1;
  }
  const double sigma = spec.stddev;
  const double two_pi = 2.0 * std::numbers::pi;
  const double laplace_b = sigma / std::numbers::sqrt2;
  const bool laplace = spec.dist == Distribution::Laplace;
  // The defining formulas, with the C library's scalar log and cos.
  auto exact_value = [&](std::uint64_t h, std::uint64_t i) {
    double v;
    if (laplace) {
      const double u = unit_open0(h) - 0.5;   // (-0.5, 0.5]
      const double a = std::max(1.0 - 2.0 * std::fabs(u), 0x1p-53);
      v = -laplace_b * std::copysign(std::log(a), u);
    } else {
      // Box-Muller from two 32-bit halves.
      const double u1 = (static_cast<double>(h >> 32) + 1.0) * 0x1p-32;          // (0, 1]
      const double u2 = static_cast<double>(h & 0xffffffffull) * 0x1p-32;        // [0, 1)
      v = sigma * std::sqrt(-2.0 * std::log(u1)) * std::cos(two_pi * u2);
      if (!is_outlier.empty() && is_outlier[i % spec.channels]) v *= spec.outlier_scale;
    }
    return static_cast<float>(v);
  };
  Batcher<decltype(exact_value)> gen{sigma, two_pi, laplace_b, laplace, is_outlier.empty() ? nullptr : is_outlier.data(), spec.channels,
              spec.outlier_scale, exact_value};
#ifdef SCIN_HAVE_LIBMVEC
  const int forced = g_forced_isa.load(std::memory_order_relaxed);
  const int isa = forced >= 0 ? std::min(forced, best_isa()) : best_isa();
#else
  constexpr int isa = 0;
#endif
  body(gen, isa);
}

// out[k] = element lo + k of the values with `key` (rank_key), k < n <= kBatch.
template <class B>
inline void run_batch(const B& gen, int isa, std::uint64_t key, std::uint64_t lo, std::uint64_t n, float* out) {
#ifdef SCIN_HAVE_LIBMVEC
  if (isa == 2) {
    batch_avx512(gen, key, lo, n, out);
    return;
  }
  if (isa == 1) {
    batch_avx2(gen, key, lo, n, out);
    return;
  }
#else
  (void)isa;
#endif
  gen.template run<0>(key, lo, n, out);
}

inline std::uint64_t rank_key(const InputSpec& spec, int r) {
  return splitmix64(splitmix64(spec.seed) ^ (static_cast<std::uint64_t>(r) + 1));
}

}  // namespace

std::vector<std::vector<float>> generate_inputs(const InputSpec& spec, int ranks, std::uint64_t elems,
                                                const RunContext* ctx) {
  std::vector<std::vector<float>> out;
  with_generator(spec, [&](const auto& gen, int isa) {
    if (ranks < 1) throw Error(fmt::format("ranks: {} must be >= 1", ranks));
    // Each rank's array zero-filled in place (not copied from a zeroed template:
    // half the memory traffic), then generated.
    out.resize(static_cast<std::size_t>(ranks));
    for (auto& v : out) v.resize(elems);
    constexpr std::uint64_t kBatch = std::remove_cvref_t<decltype(gen)>::kBatch;
    for (int r = 0; r < ranks; ++r) {
      if (ctx) ctx->check();
      float* x = out[static_cast<std::size_t>(r)].data();
      const std::uint64_t key = rank_key(spec, r);
      tbb::parallel_for(tbb::blocked_range<std::uint64_t>(0, elems, 8192), [&](const tbb::blocked_range<std::uint64_t>& rg) {
        for (std::uint64_t lo = rg.begin(); lo < rg.end(); lo += kBatch)
          run_batch(gen, isa, key, lo, std::min(kBatch, rg.end() - lo), x + lo);
      });
    }
  });
  return out;
}

bool generate_bf16_inputs(const InputSpec& spec, int ranks, std::uint64_t elems,
                          std::vector<BigVector<std::uint16_t>>& bits, std::vector<double>& exact,
                          const RunContext* ctx) {
  BigVector<double> e;
  const bool ok = generate_bf16_inputs(spec, ranks, elems, bits, e, ctx);
  exact.assign(e.begin(), e.end());
  return ok;
}

bool generate_bf16_inputs(const InputSpec& spec, int ranks, std::uint64_t elems,
                          std::vector<BigVector<std::uint16_t>>& bits, BigVector<double>& exact,
                          const RunContext* ctx) {
  bool ok = true;
  with_generator(spec, [&](const auto& gen, int isa) {
    if (ranks < 1) throw Error(fmt::format("ranks: {} must be >= 1", ranks));
    bits.assign(static_cast<std::size_t>(ranks), {});
    for (auto& v : bits) v.resize(elems);
    exact.resize(elems);   // big_alloc storage, not filled: every element is written below
    std::vector<std::uint64_t> keys(static_cast<std::size_t>(ranks));
    for (int r = 0; r < ranks; ++r) keys[static_cast<std::size_t>(r)] = rank_key(spec, r);
    constexpr std::uint64_t kBatch = std::remove_cvref_t<decltype(gen)>::kBatch;
    const float big = num::bf16_to_float(0x7f7f);   // BF16's largest finite value
    std::atomic<bool> beyond{false};
    // Parts of the elements, each generated in parallel; for every batch of
    // elements all ranks' values, while the batch is in cache: rounded to BF16
    // (round_inputs' rounding), stored as patterns, and added to the exact sum
    // rank 0, 1, ... in order from +0.0 (exact_sum's additions).
    constexpr std::uint64_t kPart = 1u << 18;
    for (std::uint64_t part = 0; part < elems; part += kPart) {
      if (ctx) ctx->check();
      const std::uint64_t end = std::min(elems, part + kPart);
      tbb::parallel_for(tbb::blocked_range<std::uint64_t>(part, end, 8192), [&](const tbb::blocked_range<std::uint64_t>& rg) {
        std::uint32_t over = 0;   // a value not finite or beyond `big`: the caller takes the FP32 path
        const std::size_t nr = keys.size();
        for (std::uint64_t lo = rg.begin(); lo < rg.end(); lo += kBatch) {
          const std::uint64_t n = std::min(kBatch, rg.end() - lo);
          double* d = exact.data() + lo;
#ifdef SCIN_HAVE_LIBMVEC
          if (isa == 2) {
            batch_bf16_avx512(gen, keys.data(), nr, lo, n, bits, d, big, over);
            continue;
          }
          if (isa == 1) {
            batch_bf16_avx2(gen, keys.data(), nr, lo, n, bits, d, big, over);
            continue;
          }
#endif
          gen.template run_bf16<0>(keys.data(), nr, lo, n, bits, d, big, over);
        }
        if (over) beyond.store(true, std::memory_order_relaxed);
      });
    }
    ok = !beyond.load(std::memory_order_relaxed);
  });
  return ok;
}

int force_generator_isa(int isa) {
#ifdef SCIN_HAVE_LIBMVEC
  g_forced_isa.store(isa, std::memory_order_relaxed);
  return isa < 0 ? best_isa() : std::min(isa, best_isa());
#else
  (void)isa;
  return 0;
#endif
}


void round_inputs(std::vector<std::vector<float>>& inputs, DType dtype, const std::string& origin) {
  if (dtype == DType::Fp32) return;
  const float big = dtype == DType::Bf16 ? num::bf16_to_float(0x7f7f) : num::fp16_to_float(0x7bff);
  for (std::size_t r = 0; r < inputs.size(); ++r) {
    float* x = inputs[r].data();
    const std::size_t n = inputs[r].size();
    // In blocks: a branch-free look for values beyond the largest finite value
    // (only those can round to infinity; they are checked one by one), then
    // the block is rounded while it is in cache.
    constexpr std::size_t kBlock = 4096;
    for (std::size_t lo = 0; lo < n; lo += kBlock) {
      const std::size_t hi = std::min(n, lo + kBlock);
      std::uint32_t beyond = 0;
      for (std::size_t i = lo; i < hi; ++i) beyond |= static_cast<std::uint32_t>(std::fabs(x[i]) > big);
      for (std::size_t i = lo; beyond && i < hi; ++i) {
        const float v = x[i];
        if (!(std::fabs(v) > big) || !std::isfinite(v)) continue;
        std::vector<float> one{v};
        round_to_format(one, format_of(dtype));
        if (std::isfinite(one[0])) continue;
        std::string name = to_string(dtype);
        for (auto& c : name) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
        throw Error(fmt::format("{}: rank {} element {} = {:g} overflows {} (largest finite {:g})", origin, r, i, v,
                                name, big));
      }
      if (dtype == DType::Bf16)
        for (std::size_t i = lo; i < hi; ++i) x[i] = num::round_bf16_fast(x[i]);
      else
        for (std::size_t i = lo; i < hi; ++i) x[i] = num::round_fp16(x[i]);
    }
  }
}

}  // namespace scin
