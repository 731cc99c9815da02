#include "numerics/metrics.h"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cmath>
#include <cstring>
#include <limits>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <tbb/parallel_for.h>

#include "base/error.h"
#include "numerics/codec.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#endif

namespace scin {

ErrorMetrics ErrorSums::metrics() const {
  ErrorMetrics m;
  m.max_abs = max_abs;
  m.rel_l2 = ref2 > 0 ? std::sqrt(err2 / ref2) : std::sqrt(err2);
  m.sqnr_dB = err2 > 0 ? 10.0 * std::log10(ref2 / err2) : std::numeric_limits<double>::infinity();
  m.cosine = (out2 > 0 && ref2 > 0) ? dot / std::sqrt(out2 * ref2) : (out2 == ref2 ? 1.0 : 0.0);
  return m;
}

namespace {

void check_size(std::span<const float> out, const std::vector<double>& exact) {
  if (out.size() != exact.size())
    throw Error(fmt::format("metrics: output has {} elements, reference {}", out.size(), exact.size()));
}

}  // namespace

ErrorMetrics measure_one(std::span<const float> out, const std::vector<double>& exact) {
  check_size(out, exact);
  ErrorSums s;
  for (std::size_t i = 0; i < out.size(); ++i) s.add(out[i], exact[i]);
  return s.metrics();
}

std::pair<ErrorMetrics, ErrorMetrics> measure_two(std::span<const float> a, std::span<const float> b,
                                                  const std::vector<double>& exact) {
  check_size(a, exact);
  check_size(b, exact);
  ErrorSums sa, sb;   // two independent chains of additions: they overlap in time
  for (std::size_t i = 0; i < exact.size(); ++i) {
    sa.add(a[i], exact[i]);
    sb.add(b[i], exact[i]);
  }
  return {sa.metrics(), sb.metrics()};
}

namespace {

// The value of element i of an array of measure_lanes.
inline float lane_value(const LaneSource& a, std::size_t i) {
  return a.half ? std::bit_cast<float>(static_cast<std::uint32_t>(a.half[i]) << 16) : a.vals[i];
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define SCIN_METRICS_AVX2 1
// ErrorSums::add of up to four arrays (count 1 to 4) at once, one array per
// 64-bit lane (lanes beyond `count` repeat array 0 and are dropped). Per lane
// the operations are add's, in element order: the difference, the four
// products and sums (AVX2 without FMA: nothing is fused), and max_abs kept
// where |d| <= max_abs (ordered: NaN replaces it), else |d|.
__attribute__((target("avx2"))) void sums_lanes_avx2(const LaneSource* arrays, std::size_t count, std::size_t n,
                                                     const double* exact, ErrorSums* sums) {
  constexpr std::size_t kRun = 256;
  alignas(32) float t[4][kRun];   // a run of each lane's values as floats
  __m256d err = _mm256_setzero_pd(), ref = err, out = err, dot = err, top = err;
  const __m256d abs_mask = _mm256_castsi256_pd(_mm256_set1_epi64x(0x7fffffffffffffffll));
  // (A macro, not a lambda: a lambda is not compiled for the enclosing function's target.)
#define SCIN_LANES_ADD(o_, ev)                                            \
  do {                                                                    \
    const __m256d o = (o_), e = _mm256_set1_pd(ev);                       \
    const __m256d d = _mm256_sub_pd(o, e);                                \
    err = _mm256_add_pd(err, _mm256_mul_pd(d, d));                        \
    ref = _mm256_add_pd(ref, _mm256_mul_pd(e, e));                        \
    out = _mm256_add_pd(out, _mm256_mul_pd(o, o));                        \
    dot = _mm256_add_pd(dot, _mm256_mul_pd(o, e));                        \
    const __m256d a = _mm256_and_pd(d, abs_mask);                         \
    top = _mm256_blendv_pd(a, top, _mm256_cmp_pd(a, top, _CMP_LE_OQ));    \
  } while (0)
  for (std::size_t lo = 0; lo < n; lo += kRun) {
    const std::size_t len = std::min(kRun, n - lo);
    for (std::size_t l = 0; l < 4; ++l) {
      const LaneSource& a = arrays[l < count ? l : 0];
      if (a.half)
        for (std::size_t i = 0; i < len; ++i) t[l][i] = std::bit_cast<float>(static_cast<std::uint32_t>(a.half[lo + i]) << 16);
      else
        std::memcpy(t[l], a.vals + lo, len * sizeof(float));
    }
    const double* ex = exact + lo;
    std::size_t i = 0;
    for (; i + 4 <= len; i += 4) {
      // Four elements of the four lanes, transposed: r[k] = element i + k of lanes 0 .. 3.
      __m128 r0 = _mm_load_ps(t[0] + i), r1 = _mm_load_ps(t[1] + i), r2 = _mm_load_ps(t[2] + i),
             r3 = _mm_load_ps(t[3] + i);
      _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
      SCIN_LANES_ADD(_mm256_cvtps_pd(r0), ex[i]);
      SCIN_LANES_ADD(_mm256_cvtps_pd(r1), ex[i + 1]);
      SCIN_LANES_ADD(_mm256_cvtps_pd(r2), ex[i + 2]);
      SCIN_LANES_ADD(_mm256_cvtps_pd(r3), ex[i + 3]);
    }
    for (; i < len; ++i) SCIN_LANES_ADD(_mm256_cvtps_pd(_mm_setr_ps(t[0][i], t[1][i], t[2][i], t[3][i])), ex[i]);
  }
#undef SCIN_LANES_ADD
  alignas(32) double v[5][4];
  _mm256_store_pd(v[0], err);
  _mm256_store_pd(v[1], ref);
  _mm256_store_pd(v[2], out);
  _mm256_store_pd(v[3], dot);
  _mm256_store_pd(v[4], top);
  for (std::size_t k = 0; k < count; ++k) {
    ErrorSums& s = sums[k];
    s.err2 = v[0][k];
    s.ref2 = v[1][k];
    s.out2 = v[2][k];
    s.dot = v[3][k];
    s.max_abs = v[4][k];
  }
}
#endif

}  // namespace

void measure_lanes(const LaneSource* arrays, std::size_t count, std::size_t n, const double* exact, ErrorMetrics* out) {
  // Independent units, measured in parallel: four arrays per AVX2 pass (one
  // per 64-bit lane; a pass costs the same for one array as for four), else
  // one. Each array's sums are its own, in element order, whichever thread
  // adds them: the same figures, bit for bit. (The measurement ran on one
  // thread while the other waited: ~12% of a 4M study's main-thread work.)
#ifdef SCIN_METRICS_AVX2
  const std::size_t per_unit = num::kernels_use_avx2() ? 4 : 1;
#else
  const std::size_t per_unit = 1;
#endif
  const std::size_t units = (count + per_unit - 1) / per_unit;
  auto unit = [&](std::size_t u) {
    const std::size_t lo = u * per_unit, m = std::min(per_unit, count - lo);
    ErrorSums sums[4];
#ifdef SCIN_METRICS_AVX2
    if (per_unit == 4) {
      sums_lanes_avx2(arrays + lo, m, n, exact, sums);
      for (std::size_t k = 0; k < m; ++k) out[lo + k] = sums[k].metrics();
      return;
    }
#endif
    for (std::size_t k = 0; k < m; ++k) {
      for (std::size_t i = 0; i < n; ++i) sums[k].add(lane_value(arrays[lo + k], i), exact[i]);
      out[lo + k] = sums[k].metrics();
    }
  };
  if (units == 1)
    unit(0);
  else
    tbb::parallel_for(std::size_t{0}, units, unit);
}

ErrorMetrics measure(const std::vector<std::span<const float>>& outputs, const std::vector<double>& exact) {
  return measure_ranks(outputs, [&exact](std::span<const float> out) { return measure_one(out, exact); });
}

ErrorMetrics measure_ranks(const std::vector<std::span<const float>>& outputs,
                           const std::function<ErrorMetrics(std::span<const float>)>& one) {
  if (outputs.empty()) throw Error("metrics: no outputs");
  std::vector<ErrorMetrics> per_rank(outputs.size());
  std::vector<char> same(outputs.size(), 0);
  for (std::size_t r = 0; r < outputs.size(); ++r) {
    // A rank whose output equals rank 0's bit for bit has rank 0's metrics (the
    // usual case: an All-Reduce leaves every rank the same sum); measure the others.
    same[r] = r > 0 && outputs[r].size() == outputs[0].size() &&
              (outputs[r].data() == outputs[0].data() ||
               std::memcmp(outputs[r].data(), outputs[0].data(), outputs[0].size() * sizeof(float)) == 0);
    per_rank[r] = same[r] ? per_rank[0] : one(outputs[r]);
  }
  return combine_ranks(per_rank, same);
}

ErrorMetrics combine_ranks(const std::vector<ErrorMetrics>& per_rank, const std::vector<char>& same_as_first) {
  if (per_rank.empty()) throw Error("metrics: no outputs");
  ErrorMetrics worst;
  double worst_rel = -1;
  double max_abs = 0;
  bool identical = true;
  for (std::size_t r = 0; r < per_rank.size(); ++r) {
    const bool same = r > 0 && same_as_first[r];
    const ErrorMetrics& m = same ? per_rank[0] : per_rank[r];
    if (!same && r > 0) identical = false;
    if (!(m.max_abs <= max_abs)) max_abs = m.max_abs;
    const double rel = std::isnan(m.rel_l2) ? std::numeric_limits<double>::infinity() : m.rel_l2;
    if (rel > worst_rel) {
      worst_rel = rel;
      worst = m;
      worst.worst_rank = static_cast<int>(r);
    }
  }
  worst.max_abs = max_abs;
  worst.ranks_identical = identical;
  return worst;
}

ErrorMetrics measure(const std::vector<std::vector<float>>& outputs, const std::vector<double>& exact) {
  return measure(std::vector<std::span<const float>>(outputs.begin(), outputs.end()), exact);
}

std::vector<double> exact_sum(const std::vector<std::vector<float>>& inputs) {
  if (inputs.empty()) return {};
  const std::size_t n = inputs.front().size();
  for (const auto& x : inputs)
    if (x.size() != n) throw Error("exact_sum: inputs differ in length");
  std::vector<double> s(n);
  // In blocks that stay in cache: each element is still summed rank 0, 1, ...
  // in order, starting from 0.0 (the same additions, the same bits).
  constexpr std::size_t kBlock = 2048;
  for (std::size_t lo = 0; lo < n; lo += kBlock) {
    const std::size_t hi = std::min(n, lo + kBlock);
    double* d = s.data();
    for (std::size_t i = lo; i < hi; ++i) d[i] = 0.0;
    for (const auto& x : inputs) {
      const float* v = x.data();
      for (std::size_t i = lo; i < hi; ++i) d[i] += v[i];
    }
  }
  return s;
}

nlohmann::json to_json(const ErrorMetrics& m) {
  nlohmann::json j;
  j["rel_l2"] = m.rel_l2;
  j["sqnr_dB"] = std::isfinite(m.sqnr_dB) ? nlohmann::json(m.sqnr_dB) : nlohmann::json(nullptr);
  j["max_abs"] = m.max_abs;
  j["cosine"] = m.cosine;
  j["ranks_identical"] = m.ranks_identical;
  j["worst_rank"] = m.worst_rank;
  return j;
}

}  // namespace scin
