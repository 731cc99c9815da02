// The quant study's metrics cache (numerics/measure_cache.h), and measure_two: outputs kept as
// BF16 patterns are found only when every bit matches, the last element too;
// values not exact in BF16 (or another study type) are kept as floats.
#include <bit>
#include <cmath>
#include <cstdint>
#include <span>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "numerics/codec.h"
#include "numerics/formats.h"
#include "numerics/measure_cache.h"
#include "base/error.h"
#include "numerics/metrics.h"

using namespace scin;

namespace {

constexpr std::size_t kElems = 5000;   // not a whole number of the cache's runs of 512

std::vector<double> reference() {
  std::vector<double> e(kElems);
  for (std::size_t i = 0; i < kElems; ++i) e[i] = std::sin(0.01 * static_cast<double>(i)) * 3.0;
  return e;
}

// The reference rounded to BF16, plus `ulps` BF16 steps at element `at`.
std::vector<float> bf16_near(const std::vector<double>& e, std::size_t at, int ulps) {
  std::vector<float> v(e.size());
  for (std::size_t i = 0; i < e.size(); ++i) v[i] = num::round_bf16(static_cast<float>(e[i]));
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(v[at]);
  v[at] = std::bit_cast<float>(bits + (static_cast<std::uint32_t>(ulps) << 16));
  return v;
}

void expect_same(const ErrorMetrics& a, const ErrorMetrics& b) {
  EXPECT_EQ(std::bit_cast<std::uint64_t>(a.rel_l2), std::bit_cast<std::uint64_t>(b.rel_l2));
  EXPECT_EQ(std::bit_cast<std::uint64_t>(a.max_abs), std::bit_cast<std::uint64_t>(b.max_abs));
  EXPECT_EQ(std::bit_cast<std::uint64_t>(a.cosine), std::bit_cast<std::uint64_t>(b.cosine));
}

using Rows = std::vector<std::vector<std::vector<float>>>;

// Six rows of three ranks near the reference (in rows 0 and 3 ranks 1 and 2
// equal rank 0), then `ref` on two ranks and row 1 again.
Rows deferred_rows(const std::vector<double>& e, const std::vector<float>& ref) {
  Rows rows;
  for (int k = 0; k < 6; ++k) {
    std::vector<std::vector<float>> ranks;
    for (int r = 0; r < 3; ++r) ranks.push_back(k % 3 == 0 && r > 0 ? ranks[0] : bf16_near(e, static_cast<std::size_t>(k * 300 + r * 7), k + 2 * r + 1));
    rows.push_back(ranks);
  }
  rows.push_back({ref, ref});    // the held reference
  rows.push_back(rows[1]);       // an earlier row
  return rows;
}

// Each deferred row's figures (keys[k] for rows[k]) are measure()'s, bit for bit.
void expect_rows_measured(MeasureCache& cache, const std::vector<std::size_t>& keys, const Rows& rows,
                          const std::vector<double>& e) {
  for (std::size_t k = 0; k < rows.size(); ++k) {
    const ErrorMetrics got = cache.result(keys[k]), want = measure(rows[k], e);
    SCOPED_TRACE(testing::Message() << "row " << k);
    expect_same(got, want);
    EXPECT_EQ(got.worst_rank, want.worst_rank);
    EXPECT_EQ(got.ranks_identical, want.ranks_identical);
  }
}

}  // namespace

TEST(MeasureCache, KeptBf16OutputsAreFoundOnlyWhenEveryBitMatches) {
  const std::vector<double> e = reference();
  MeasureCache cache(e, Format::Bf16);
  const std::vector<float> a = bf16_near(e, 0, 0);
  expect_same(cache.measure_one(a), measure_one(a, e));
  EXPECT_EQ(cache.measured(), 1u);
  EXPECT_EQ(cache.kept_as_bf16(), 1u);
  // The same values elsewhere: found.
  const std::vector<float> a2 = a;
  expect_same(cache.measure_one(a2), measure_one(a, e));
  EXPECT_EQ(cache.measured(), 1u);
  // One BF16 step apart at the last element, then in the middle: measured anew.
  for (std::size_t at : {kElems - 1, kElems / 2, std::size_t{0}}) {
    const std::vector<float> b = bf16_near(e, at, 1);
    const std::size_t before = cache.measured();
    expect_same(cache.measure_one(b), measure_one(b, e));
    EXPECT_EQ(cache.measured(), before + 1) << at;
  }
}

TEST(MeasureCache, ValuesNotExactInBf16AreKeptAsFloats) {
  const std::vector<double> e = reference();
  MeasureCache cache(e, Format::Bf16);
  std::vector<float> a(kElems);
  for (std::size_t i = 0; i < kElems; ++i) a[i] = static_cast<float>(e[i]);   // FP32, not BF16
  expect_same(cache.measure_one(a), measure_one(a, e));
  EXPECT_EQ(cache.kept_as_bf16(), 0u);
  // Differs from a in the low half of one element only: not a's metrics.
  std::vector<float> b = a;
  b[kElems - 1] = std::bit_cast<float>(std::bit_cast<std::uint32_t>(b[kElems - 1]) ^ 1u);
  expect_same(cache.measure_one(b), measure_one(b, e));
  EXPECT_EQ(cache.measured(), 2u);
  expect_same(cache.measure_one(a), measure_one(a, e));
  EXPECT_EQ(cache.measured(), 2u);
  // Another study type keeps floats too.
  MeasureCache fp16(e, Format::Fp16);
  const std::vector<float> h = bf16_near(e, 0, 0);
  fp16.measure_one(h);
  EXPECT_EQ(fp16.kept_as_bf16(), 0u);
  expect_same(fp16.measure_one(h), measure_one(h, e));
  EXPECT_EQ(fp16.measured(), 1u);
}

TEST(Metrics, MeasureTwoGivesMeasureOnesBits) {
  // Two arrays measured side by side in one pass: each one's figures equal
  // measure_one's bit for bit (the same additions in the same order), for
  // arrays near the reference and far from it, with a NaN, and of other sizes.
  const std::vector<double> e = reference();
  std::vector<float> a = bf16_near(e, 17, 3), b(kElems);
  for (std::size_t i = 0; i < kElems; ++i) b[i] = static_cast<float>(e[i] * 1.001 + 1e-3 * static_cast<double>(i % 7));
  auto [ma, mb] = measure_two(a, b, e);
  expect_same(ma, measure_one(a, e));
  expect_same(mb, measure_one(b, e));
  EXPECT_EQ(std::bit_cast<std::uint64_t>(mb.sqnr_dB), std::bit_cast<std::uint64_t>(measure_one(b, e).sqnr_dB));
  b[100] = NAN;
  std::tie(ma, mb) = measure_two(b, a, e);
  expect_same(ma, measure_one(b, e));
  expect_same(mb, measure_one(a, e));
  EXPECT_THROW(measure_two(a, std::span<const float>(b.data(), kElems - 1), e), Error);
}

TEST(MeasureCache, HeldReferencesAreFoundOnlyWhenEveryBitMatches) {
  // A reference held as BF16 patterns (the study's rounded exact sum) gives
  // its metrics to an equal output without measuring it; one step apart at
  // the last element is measured.
  const auto e = reference();
  MeasureCache cache(e, Format::Bf16);
  const std::vector<float> ref = bf16_near(e, 0, 0);
  BigVector<std::uint16_t> half(ref.size());
  for (std::size_t i = 0; i < ref.size(); ++i) half[i] = static_cast<std::uint16_t>(std::bit_cast<std::uint32_t>(ref[i]) >> 16);
  ErrorMetrics marked;
  marked.rel_l2 = 12345;   // not what measuring gives: shows where the figures came from
  cache.hold(std::move(half), {}, ref.size(), marked);
  EXPECT_EQ(cache.measure_one(ref).rel_l2, 12345);
  EXPECT_EQ(cache.measured(), 0u);
  const std::vector<float> last = bf16_near(e, kElems - 1, 1);
  expect_same(cache.measure_one(last), measure_one(last, e));
  EXPECT_EQ(cache.measured(), 1u);
}

TEST(MeasureCache, BigVectorsAreOnWholeHugePagesFromTwoMiB) {
  // big_alloc: 64-byte aligned below 2 MiB; from 2 MiB up, 2 MiB aligned (the
  // storage advised as huge pages starts on one). Values written read back.
  BigVector<float> small(1000), big((std::size_t{3} << 20) / sizeof(float) + 7);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(small.data()) % 64, 0u);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(big.data()) % (std::size_t{2} << 20), 0u);
  for (std::size_t i = 0; i < big.size(); ++i) big[i] = static_cast<float>(i);
  for (std::size_t i = 0; i < big.size(); i += 4099) EXPECT_EQ(big[i], static_cast<float>(i));
  BigVector<std::uint8_t> copy(big.size(), 7);   // a value given: every element has it
  EXPECT_EQ(copy.front(), 7);
  EXPECT_EQ(copy.back(), 7);
}

TEST(MeasureCache, BigBlocksAreKeptForTheSameSizeWithinTheBound) {
  big_alloc_release_kept();
  void* a = big_alloc((std::size_t{3} << 20) + 5);   // 4 MiB of whole huge pages
  ASSERT_NE(a, nullptr);
  big_free(a, (std::size_t{3} << 20) + 5);
  EXPECT_EQ(big_alloc_kept_bytes(), std::size_t{4} << 20);
  void* other = big_alloc(std::size_t{6} << 20);     // another whole size: not that block
  EXPECT_NE(other, a);
  void* same = big_alloc(std::size_t{4} << 20);      // the same whole 2 MiB: handed out again
  EXPECT_EQ(same, a);
  EXPECT_EQ(big_alloc_kept_bytes(), 0u);
  big_free(same, std::size_t{4} << 20);
  big_free(other, std::size_t{6} << 20);
  void* small = big_alloc(1000);                     // below 2 MiB: never kept
  big_free(small, 1000);
  EXPECT_EQ(big_alloc_kept_bytes(), std::size_t{10} << 20);
  // The bound: 200 blocks of 2 MiB freed, at most 256 MiB kept (untouched storage: no RSS).
  std::vector<void*> blocks;
  for (int i = 0; i < 200; ++i) blocks.push_back(big_alloc(std::size_t{2} << 20));
  for (void* p : blocks) big_free(p, std::size_t{2} << 20);
  EXPECT_EQ(big_alloc_kept_bytes(), big_alloc_kept_limit_bytes);
  big_alloc_release_kept();
  EXPECT_EQ(big_alloc_kept_bytes(), 0u);
}

TEST(Metrics, MeasureLanesGiveMeasureOnesBits) {
  // Up to eight arrays measured in one pass, each in its own lane: every
  // array's figures equal measure_one's bit for bit, for 1 to 11 arrays (more
  // than one pass of eight), floats and BF16 patterns mixed, a NaN and an
  // infinity in some, lengths not a multiple of 4 or of the runs of 256, and
  // both kernel builds.
  const std::vector<double> e0 = reference();
  std::size_t compared = 0;
  for (const std::size_t n : {std::size_t{1}, std::size_t{3}, std::size_t{4}, std::size_t{257}, kElems}) {
    const std::vector<double> e(e0.begin(), e0.begin() + static_cast<std::ptrdiff_t>(n));
    std::vector<std::vector<float>> arrays;
    for (int k = 0; k < 11; ++k) {
      std::vector<float> a(n);
      for (std::size_t i = 0; i < n; ++i)
        a[i] = num::round_bf16(static_cast<float>(e[i] * (1.0 + 0.01 * k) + 1e-3 * static_cast<double>((i * (k + 3)) % 11)));
      if (k % 2 == 1)
        for (std::size_t i = 0; i < n; i += 3) a[i] = static_cast<float>(e[i]) * 1.0001f;   // not exact in BF16
      if (k == 5) a[n / 2] = NAN;
      if (k == 9) a[n - 1] = INFINITY;
      arrays.push_back(std::move(a));
    }
    std::vector<std::vector<std::uint16_t>> halves(arrays.size());
    std::vector<LaneSource> src(arrays.size());
    for (std::size_t k = 0; k < arrays.size(); ++k) {
      if (k % 2 == 0) {   // held as BF16 patterns
        for (float v : arrays[k]) halves[k].push_back(static_cast<std::uint16_t>(std::bit_cast<std::uint32_t>(v) >> 16));
        src[k].half = halves[k].data();
      } else {
        src[k].vals = arrays[k].data();
      }
    }
    for (const std::size_t count : {std::size_t{1}, std::size_t{3}, std::size_t{4}, std::size_t{5}, std::size_t{8}, std::size_t{11}})
      for (int portable = 0; portable < 2; ++portable) {
        num::force_portable_kernels(portable == 1);
        std::vector<ErrorMetrics> got(count);
        measure_lanes(src.data(), count, n, e.data(), got.data());
        num::force_portable_kernels(false);
        for (std::size_t k = 0; k < count; ++k) {
          const ErrorMetrics want = measure_one(arrays[k], e);
          SCOPED_TRACE(testing::Message() << "n " << n << " count " << count << " array " << k << " portable " << portable);
          expect_same(got[k], want);
          EXPECT_EQ(std::bit_cast<std::uint64_t>(got[k].sqnr_dB), std::bit_cast<std::uint64_t>(want.sqnr_dB));
          ++compared;
        }
      }
  }
  EXPECT_EQ(compared, 5u * 2 * (1 + 3 + 4 + 5 + 8 + 11));
}

TEST(MeasureCache, DeferredRowsGiveMeasuresFigures) {
  // Rows deferred and measured later, up to eight arrays per pass: each row's
  // figures equal measure(outputs, exact)'s bit for bit, with ranks that
  // differ (worst rank, max_abs over ranks), rows equal to a held reference
  // (measured with them) or to an earlier row, and more than eight distinct
  // arrays (a pass in the middle).
  const std::vector<double> e = reference();
  MeasureCache cache(e, Format::Bf16);
  const std::vector<float> ref = bf16_near(e, 0, 0);
  BigVector<std::uint16_t> half(ref.size());
  for (std::size_t i = 0; i < ref.size(); ++i) half[i] = static_cast<std::uint16_t>(std::bit_cast<std::uint32_t>(ref[i]) >> 16);
  const std::size_t held = cache.hold(std::move(half), {}, ref.size());
  const Rows rows = deferred_rows(e, ref);
  std::vector<std::size_t> keys;
  for (const auto& ranks : rows) keys.push_back(cache.defer(std::vector<std::span<const float>>(ranks.begin(), ranks.end())));
  expect_rows_measured(cache, keys, rows, e);
  expect_same(cache.held_metrics(held), measure_one(ref, e));
  // Rows 0 and 3: one array each, the other four rows three: 14; the last row
  // repeats row 1, whose third array was past the three kept: measured again.
  EXPECT_EQ(cache.measured(), 15u);
}

TEST(MeasureCache, RanksGivenAsBf16PatternsGiveTheirFloatsFigures) {
  // DataRun::bf16: ranks given as their BF16 patterns (every other rank, and
  // every rank in some rows) in the rows of DeferredRowsGiveMeasuresFigures:
  // each row's figures, the equal-to-rank-0 checks across the two forms, the
  // look-ups of the held reference and of kept arrays, and the count measured
  // are those of the floats; a study of another type keeps them as floats.
  const std::vector<double> e = reference();
  auto patterns = [](const std::vector<float>& v) {
    std::vector<std::uint16_t> h(v.size());
    for (std::size_t i = 0; i < v.size(); ++i) h[i] = static_cast<std::uint16_t>(std::bit_cast<std::uint32_t>(v[i]) >> 16);
    return h;
  };
  const std::vector<float> ref = bf16_near(e, 0, 0);
  Rows rows = deferred_rows(e, ref);
  rows.push_back({rows[2][1], rows[2][1], rows[2][2]});   // rank 0 as patterns, rank 1 equal to it as floats
  for (Format f : {Format::Bf16, Format::Fp32}) {
    SCOPED_TRACE(testing::Message() << "format " << static_cast<int>(f));
    MeasureCache cache(e, f);
    const std::vector<std::uint16_t> ref_half = patterns(ref);
    const std::size_t held = cache.hold(BigVector<std::uint16_t>(ref_half.begin(), ref_half.end()), {}, ref.size());
    std::vector<std::vector<std::vector<std::uint16_t>>> halves(rows.size());
    std::vector<std::size_t> keys;
    for (std::size_t k = 0; k < rows.size(); ++k) {
      std::vector<std::span<const float>> out;
      std::vector<std::span<const std::uint16_t>> bf16(rows[k].size());
      for (std::size_t r = 0; r < rows[k].size(); ++r) halves[k].push_back(patterns(rows[k][r]));
      for (std::size_t r = 0; r < rows[k].size(); ++r) {
        const bool as_half = (k + r) % 2 == 0 || k == 4 || k == 6;
        out.push_back(as_half ? std::span<const float>() : std::span<const float>(rows[k][r]));
        if (as_half) bf16[r] = halves[k][r];
      }
      keys.push_back(cache.defer(out, bf16));
    }
    expect_rows_measured(cache, keys, rows, e);
    expect_same(cache.held_metrics(held), measure_one(ref, e));
    EXPECT_EQ(cache.measured(), 17u);   // DeferredRowsGiveMeasuresFigures' 15, and the last row's two arrays
    EXPECT_EQ(cache.kept_as_bf16(), f == Format::Bf16 ? 3u : 0u);
    // A size that is not the reference's: measure_one's error.
    const std::vector<std::uint16_t> short_half(kElems - 1);
    EXPECT_THROW(cache.defer({std::span<const float>()}, {std::span<const std::uint16_t>(short_half)}), Error);
  }
}
