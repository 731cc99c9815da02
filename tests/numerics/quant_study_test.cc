// The quantisation-error study: error growth per scheme against the closed
// forms of the model (docs/model.md, section 5), block-size effect on
// outliers, payload ratios, references, errors, and the `scin quant` CLI.
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <numbers>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_util.h"
#include "schedule/algorithms.h"
#include "base/error.h"
#include "base/big_alloc.h"
#include "base/memory.h"
#include "engines/data/data_engine.h"
#include "fabric/preset.h"
#include "numerics/codec.h"
#include "numerics/inputs.h"
#include "numerics/metrics.h"
#include "numerics/quant_study.h"

using namespace scin;

namespace {

Config h200() {
  Config c = load_preset("hgx-h200-8");
  c.sw.isa.enabled = true;
  c.sw.isa.inq = true;
  return c;
}

const QuantRow& row(const QuantStudy& s, const std::string& algo) {
  for (const auto& r : s.rows)
    if (r.algorithm == algo) return r;
  throw std::runtime_error("no row " + algo);
}



}  // namespace

TEST(QuantStudy, ErrorVarianceGrowsAsTheModelSays) {
  // N = 8 i.i.d. Gaussian ranks: variance x2 for two quantisation events
  // (scin-inq, two-shot-q8), x(N+1)/2 = 4.5 for ring-q8 (N events on growing
  // partial sums), relative to quantising the exact sum once. Within 15%.
  QuantRequest req;
  req.algorithms = {"scin-inq", "two-shot-q8", "ring-q8", "scin", "ring"};
  req.elements = 1 << 16;
  req.input.seed = 3;
  const QuantStudy s = run_quant(h200(), req);
  EXPECT_EQ(s.gpus, 8);
  EXPECT_NEAR(row(s, "scin-inq").error_variance_ratio, 2.0, 0.3);
  EXPECT_NEAR(row(s, "two-shot-q8").error_variance_ratio, 2.0, 0.3);
  EXPECT_NEAR(row(s, "ring-q8").error_variance_ratio, 4.5, 0.675);
  // The model's worked numbers (INT8, G=32, FP16 scales): single quantisation ~5.3e-3.
  EXPECT_NEAR(s.single_quant.rel_l2, 5.3e-3, 0.8e-3);
  EXPECT_NEAR(row(s, "scin-inq").metrics.rel_l2, 7.6e-3, 1.1e-3);
  EXPECT_NEAR(row(s, "ring-q8").metrics.rel_l2, 1.13e-2, 1.7e-3);
  // Unquantised schemes only pay BF16 rounding: far below any quantised one.
  EXPECT_LT(row(s, "scin").metrics.rel_l2, 0.5 * s.single_quant.rel_l2);
  EXPECT_LE(s.dtype_round.rel_l2, row(s, "scin").metrics.rel_l2 * 1.0000001);
  for (const auto& r : s.rows) {
    EXPECT_TRUE(r.metrics.ranks_identical) << r.algorithm;
    EXPECT_GT(r.metrics.sqnr_dB, 30) << r.algorithm;
    EXPECT_GT(r.metrics.cosine, 0.9999) << r.algorithm;
  }
}

TEST(QuantStudy, SmallerBlocksHelpOnOutliers) {
  QuantRequest req;
  req.algorithms = {"scin-inq", "ring-q8"};
  req.elements = 1 << 15;
  req.input.dist = Distribution::Outliers;
  req.input.outlier_fraction = 0.01;
  req.input.outlier_scale = 20;
  req.input.channels = 1024;
  double prev_inq = 0, prev_ring = 0;
  for (int g : {256, 64, 16}) {
    Config c = h200();
    c.quant.block_elems = g;
    const QuantStudy s = run_quant(c, req);
    const double inq = row(s, "scin-inq").metrics.rel_l2, ring = row(s, "ring-q8").metrics.rel_l2;
    if (prev_inq > 0) {
      EXPECT_LT(inq, 0.9 * prev_inq) << "G=" << g;
      EXPECT_LT(ring, 0.9 * prev_ring) << "G=" << g;
    }
    prev_inq = inq;
    prev_ring = ring;
  }
  // Outliers raise the error against plain Gaussian inputs at the same block size.
  QuantRequest gauss = req;
  gauss.input.dist = Distribution::Gaussian;
  const Config c = h200();
  EXPECT_GT(row(run_quant(c, req), "scin-inq").metrics.rel_l2, 1.3 * row(run_quant(c, gauss), "scin-inq").metrics.rel_l2);
}

TEST(QuantStudy, PayloadRatioMatchesTheClosedForm) {
  QuantRequest req;
  req.elements = 8192;
  struct Case {
    int g;
    ScaleFormat sf;
    Codec k;
  };
  std::vector<Case> cases;
  for (int g : {32, 128})
    for (ScaleFormat sf : {ScaleFormat::Fp16, ScaleFormat::Fp32})
      for (Codec k : {Codec::Int8, Codec::Int4}) cases.push_back({g, sf, k});
  for (const Case& cs : cases) {
    Config c = h200();
    c.quant.block_elems = cs.g;
    c.quant.scale_format = cs.sf;
    c.quant.codec = cs.k;
    const QuantStudy s = run_quant(c, req);
    for (const auto& r : s.rows) {
      if (r.quantised) {
        // Every transfer of a quantised scheme moves the codec: (bits G + s)/(16G), e.g. 0.531 for INT8 G=32 FP16.
        EXPECT_NEAR(r.payload_ratio, payload_ratio(c.quant), 1e-9) << r.algorithm;
      } else {
        EXPECT_EQ(r.payload_ratio, 1.0) << r.algorithm;
      }
      EXPECT_GT(r.max_link_bytes, 0) << r.algorithm;
    }
  }
  Config c = h200();
  c.quant.codec = Codec::Int4;
  EXPECT_NEAR(row(run_quant(c, req), "scin-inq").payload_ratio, 0.28125, 1e-12);   // (4*32 + 16) / (16*32)
}

TEST(Metrics, ClosedForms) {
  // out = exact + error with ||error|| / ||exact|| = 0.1 exactly.
  const std::vector<double> exact = {3, 4, 0, 0};
  const std::vector<float> out = {3, 4, 0.3f, 0.4f};
  const ErrorMetrics m = measure_one(out, exact);
  EXPECT_NEAR(m.rel_l2, 0.1, 1e-7);
  EXPECT_NEAR(m.sqnr_dB, 20.0, 1e-5);
  EXPECT_NEAR(m.max_abs, 0.4, 1e-7);
  EXPECT_NEAR(m.cosine, 1 / std::sqrt(1.01), 1e-7);
  const ErrorMetrics same = measure_one({3, 4, 0, 0}, exact);
  EXPECT_EQ(same.rel_l2, 0);
  EXPECT_TRUE(std::isinf(same.sqnr_dB));
  EXPECT_EQ(same.cosine, 1);
  // Across ranks: the worst rank's figures, max_abs over all, identity check.
  const ErrorMetrics all = measure({{3, 4, 0, 0}, {3, 4, 0.3f, 0.4f}}, exact);
  EXPECT_EQ(all.worst_rank, 1);
  EXPECT_FALSE(all.ranks_identical);
  EXPECT_NEAR(all.rel_l2, 0.1, 1e-7);
  EXPECT_TRUE(measure({{1, 2, 3, 4}, {1, 2, 3, 4}}, exact).ranks_identical);
  EXPECT_THROW(measure_one({1, 2}, exact), Error);
  EXPECT_EQ(exact_sum({{1, 2}, {0.5f, -2}}), (std::vector<double>{1.5, 0}));
}

TEST(QuantStudy, OtherCodecsOrderAsExpected) {
  QuantRequest req;
  req.algorithms = {"scin-inq"};
  req.elements = 1 << 14;
  auto err = [&](Codec k) {
    Config c = h200();
    c.quant.codec = k;
    return row(run_quant(c, req), "scin-inq").metrics.rel_l2;
  };
  const double i8 = err(Codec::Int8), i4 = err(Codec::Int4), e4 = err(Codec::Fp8E4M3), e5 = err(Codec::Fp8E5M2);
  EXPECT_LT(i8, e4);   // 8-bit integer grid beats 3 mantissa bits on Gaussian blocks
  EXPECT_LT(e4, e5);   // 3 mantissa bits beat 2
  EXPECT_LT(e5, i4);   // INT4 is the coarsest
}

TEST(QuantStudy, DeterministicInTheSeed) {
  QuantRequest req;
  req.algorithms = {"ring-q8"};
  req.elements = 4096;
  const Config c = h200();
  const double a = row(run_quant(c, req), "ring-q8").metrics.rel_l2;
  EXPECT_EQ(a, row(run_quant(c, req), "ring-q8").metrics.rel_l2);
  req.input.seed = 2;
  EXPECT_NE(a, row(run_quant(c, req), "ring-q8").metrics.rel_l2);
}

TEST(QuantStudy, StorageHandedOutAgainGivesAFreshStudysBits) {
  // big_free keeps blocks from 2 MiB up and big_alloc hands them out again with
  // their old contents: a study on kept blocks, poisoned with NaN bytes after
  // another study dirtied them, must give a fresh process's figures bit for bit.
  big_alloc_release_kept();
  ASSERT_EQ(big_alloc_kept_bytes(), 0u);
  QuantRequest req;
  req.elements = 1 << 20;   // BF16 inputs of 2 MiB per rank, FP32 references of 4 MiB
  const Config c = h200();
  const QuantStudy fresh = run_quant(c, req);
  ASSERT_GT(big_alloc_kept_bytes(), 0u);   // the study's big arrays were kept
  QuantRequest other = req;
  other.input.seed = 9;
  (void)run_quant(c, other);
  big_alloc_fill_kept(0xff);               // every float and BF16 a NaN
  const QuantStudy again = run_quant(c, req);
  ASSERT_EQ(again.rows.size(), fresh.rows.size());
  ASSERT_GE(fresh.rows.size(), 4u);
  auto bits = [](double x) { return std::bit_cast<std::uint64_t>(x); };
  for (std::size_t i = 0; i < fresh.rows.size(); ++i) {
    const ErrorMetrics &a = fresh.rows[i].metrics, &b = again.rows[i].metrics;
    SCOPED_TRACE(fresh.rows[i].algorithm);
    EXPECT_EQ(again.rows[i].algorithm, fresh.rows[i].algorithm);
    EXPECT_EQ(bits(b.rel_l2), bits(a.rel_l2));
    EXPECT_EQ(bits(b.sqnr_dB), bits(a.sqnr_dB));
    EXPECT_EQ(bits(b.max_abs), bits(a.max_abs));
    EXPECT_EQ(bits(b.cosine), bits(a.cosine));
    EXPECT_EQ(b.ranks_identical, a.ranks_identical);
    EXPECT_EQ(b.worst_rank, a.worst_rank);
    EXPECT_TRUE(std::isfinite(a.rel_l2));
  }
  EXPECT_LE(big_alloc_kept_bytes(), big_alloc_kept_limit_bytes);
}

TEST(QuantStudy, GeneratedInputsAreTheDefiningFormulasBitForBit) {
  // generate_inputs computes log/cos in vector batches and falls back to the
  // scalar functions near float rounding boundaries: every value must be the
  // one the documented formulas give with std::log / std::cos.
  auto mix = [](std::uint64_t x) {
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
  };
  // Every instruction set of the batches the CPU has (portable, AVX2, AVX-512).
  const std::uint64_t elems = 200003;   // not a whole number of batches
  for (int isa = 0; isa <= 2; ++isa) {
    if (force_generator_isa(isa) != isa) continue;   // the CPU lacks it
    for (const Distribution d : {Distribution::Gaussian, Distribution::Laplace, Distribution::Outliers}) {
      for (const std::uint64_t seed : {1ull, 12345ull}) {
        InputSpec spec;
        spec.dist = d;
        spec.seed = seed;
        spec.stddev = seed == 1 ? 1.0 : 0.37;
        spec.channels = 1000;
        spec.outlier_fraction = 0.01;
        const auto x = generate_inputs(spec, 3, elems);
        const auto outl = outlier_channels(spec);
        std::vector<char> is_out(spec.channels, 0);
        for (auto c : outl) is_out[c] = 1;
        std::uint64_t mismatches = 0;
        for (int r = 0; r < 3; ++r)
          for (std::uint64_t i = 0; i < elems; ++i) {
            const std::uint64_t h = mix(mix(mix(seed) ^ static_cast<std::uint64_t>(r + 1)) ^ i);
            double v;
            if (d == Distribution::Laplace) {
              const double u = (static_cast<double>(h >> 11) + 1.0) * 0x1p-53 - 0.5;
              v = -(spec.stddev / std::numbers::sqrt2) * std::copysign(std::log(std::max(1.0 - 2.0 * std::fabs(u), 0x1p-53)), u);
            } else {
              const double u1 = (static_cast<double>(h >> 32) + 1.0) * 0x1p-32;
              const double u2 = static_cast<double>(h & 0xffffffffull) * 0x1p-32;
              v = spec.stddev * std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
              if (d == Distribution::Outliers && is_out[i % spec.channels]) v *= spec.outlier_scale;
            }
            const float want = static_cast<float>(v);
            if (std::memcmp(&want, &x[static_cast<std::size_t>(r)][i], sizeof(float)) != 0) ++mismatches;
          }
        EXPECT_EQ(mismatches, 0u) << to_string(d) << " seed " << seed << " isa " << isa;
      }
    }
  }
  force_generator_isa(-1);
}

TEST(QuantStudy, RowsEqualEachAlgorithmRunAloneStepByStep) {
  // The study shares work between its algorithms (inputs, the exact sum, one
  // workspace, metrics of identical outputs) and the data engine skips copies
  // and repeated reductions: every figure must be the one the straightforward
  // path gives, each algorithm run alone with every step executed as listed.
  auto same = [](const ErrorMetrics& a, const ErrorMetrics& b) {
    return std::memcmp(&a.rel_l2, &b.rel_l2, sizeof(double)) == 0 &&
           std::memcmp(&a.sqnr_dB, &b.sqnr_dB, sizeof(double)) == 0 &&
           std::memcmp(&a.max_abs, &b.max_abs, sizeof(double)) == 0 &&
           std::memcmp(&a.cosine, &b.cosine, sizeof(double)) == 0 && a.ranks_identical == b.ranks_identical &&
           a.worst_rank == b.worst_rank;
  };
  struct Case {
    int gpus;
    std::uint64_t elems;
    DType dtype;
    Distribution dist;
    Codec codec;
    int block;
  };
  // Block sizes that do and do not divide the references' parts (8192
  // elements rounded down to whole blocks), and one larger than a part.
  for (const Case& k : {Case{8, 70000, DType::Bf16, Distribution::Gaussian, Codec::Int8, 100},
                        Case{8, 1000, DType::Fp16, Distribution::Outliers, Codec::Fp8E4M3, 32},
                        Case{4, 4099, DType::Fp32, Distribution::Laplace, Codec::Int4, 16},
                        Case{16, 37, DType::Bf16, Distribution::Gaussian, Codec::Int8, 32},
                        Case{2, 30001, DType::Bf16, Distribution::Laplace, Codec::Int8, 10000}}) {
    Config c = h200();
    c.fabric.gpus = k.gpus;
    c.quant.codec = k.codec;
    c.quant.block_elems = k.block;
    QuantRequest req;
    req.elements = k.elems;
    req.dtype = k.dtype;
    req.input.dist = k.dist;
    req.input.seed = k.elems;
    const QuantStudy st = run_quant(c, req);
    auto x = generate_inputs(req.input, k.gpus, k.elems);
    round_inputs(x, k.dtype, "input");
    const std::vector<double> exact = exact_sum(x);
    std::vector<float> once(k.elems);
    for (std::uint64_t i = 0; i < k.elems; ++i) once[i] = static_cast<float>(exact[i]);
    std::vector<float> q(k.elems);   // the exact sum quantised once (whole array), then rounded
    num::fake_quantise(once.data(), k.elems, {num::codec_format(k.codec), k.block, c.quant.scale_format}, q.data());
    round_to_format(once, format_of(k.dtype));
    round_to_format(q, format_of(k.dtype));
    EXPECT_TRUE(same(st.dtype_round, measure_one(once, exact))) << k.gpus << " " << k.elems;
    EXPECT_TRUE(same(st.single_quant, measure_one(q, exact))) << k.gpus << " " << k.elems;
    Config cs = c;
    cs.ring.protocol = RingProtocol::Simple;
    ASSERT_EQ(st.rows.size(), supported_algorithms(c).size());
    for (const QuantRow& r : st.rows) {
      const Schedule s = compile(cs, r.algorithm, {k.elems * static_cast<std::uint64_t>(dtype_bytes(k.dtype)), k.dtype});
      DataOptions listed;
      listed.share_work = false;
      const DataResult alone = run_data(s, x, listed);
      EXPECT_TRUE(same(r.metrics, measure(alone.outputs, exact))) << k.gpus << " " << k.elems << " " << r.algorithm;
    }
  }
}

TEST(QuantStudy, LaplaceHasHeavierTailsThanGaussian) {
  InputSpec g, l;
  l.dist = Distribution::Laplace;
  const auto xg = generate_inputs(g, 1, 200000)[0], xl = generate_inputs(l, 1, 200000)[0];
  auto moments = [](const std::vector<float>& x) {
    double m2 = 0, m4 = 0;
    for (float v : x) { m2 += double(v) * v; m4 += double(v) * v * v * v; }
    m2 /= static_cast<double>(x.size());
    m4 /= static_cast<double>(x.size());
    return std::pair{m2, m4 / (m2 * m2)};
  };
  auto [vg, kg] = moments(xg);
  auto [vl, kl] = moments(xl);
  EXPECT_NEAR(vg, 1.0, 0.02);
  EXPECT_NEAR(vl, 1.0, 0.03);
  EXPECT_NEAR(kg, 3.0, 0.1);   // Gaussian kurtosis
  EXPECT_NEAR(kl, 6.0, 0.5);   // Laplace kurtosis
  InputSpec o;
  o.dist = Distribution::Outliers;
  o.outlier_fraction = 0.005;
  o.channels = 4096;
  EXPECT_EQ(outlier_channels(o).size(), 20u);
}

TEST(QuantStudy, NpyInputs) {
  const std::string p = ::testing::TempDir() + "/scin_quant_split.npy";
  InputSpec spec;
  auto x = generate_inputs(spec, 1, 8 * 512)[0];
  write_npy(p, x, "<u2");
  QuantRequest req;
  req.algorithms = {"scin", "scin-inq"};
  req.npy_files = {p};
  const QuantStudy s = run_quant(h200(), req);
  EXPECT_EQ(s.elements, 512u);
  EXPECT_EQ(row(s, "scin").metrics.rel_l2, s.dtype_round.rel_l2);   // FP32 ISA sum, rounded once to BF16
  EXPECT_GT(row(s, "scin-inq").metrics.rel_l2, 1e-3);
}

TEST(QuantStudy, MemoryCapFollowsTheAvailableMemory) {
  // Linear in ranks x elements: 5.25 (BF16), 7.25 (FP16), 9.25 (FP32) bytes
  // per rank and element, 32 per element, 3 KiB per rank^2 (the largest schedule), 32 MiB.
  const std::uint64_t m = 1u << 20;
  EXPECT_EQ(quant_memory_bytes(8, m, DType::Bf16, 1), 8 * m * 21 / 4 + 32 * m + 64 * 3072 + (32ull << 20));
  EXPECT_EQ(quant_memory_bytes(16, m, DType::Fp16, 8), 16 * m * 29 / 4 + 32 * m + 256 * 3072 + (32ull << 20));
  EXPECT_EQ(quant_memory_bytes(16, m, DType::Fp32, 8), 16 * m * 37 / 4 + 32 * m + 256 * 3072 + (32ull << 20));
  EXPECT_EQ(quant_memory_bytes(256, m, DType::Bf16, 0) - quant_memory_bytes(128, m, DType::Bf16, 0),
            2 * (quant_memory_bytes(128, m, DType::Bf16, 0) - quant_memory_bytes(64, m, DType::Bf16, 0)));
  // It bounds the peak RSS measured for all 8 algorithms (docs/performance.md,
  // section 83): BF16 8 x 16M 0.94 GB, 128 x 1M 0.53 GB, 1024 x 1K 2.53 GB (the
  // schedule); FP32 2 x 4M 0.21 GB, 8 x 16M 1.48 GB, 128 x 1M 0.81 GB.
  EXPECT_GT(quant_memory_bytes(8, 16 * m, DType::Bf16, 8), 940'000'000u);
  EXPECT_GT(quant_memory_bytes(128, m, DType::Bf16, 8), 530'000'000u);
  EXPECT_GT(quant_memory_bytes(1024, 1024, DType::Bf16, 8), 2'530'000'000u);
  EXPECT_GT(quant_memory_bytes(2, 4 * m, DType::Fp32, 8), 215'000'000u);
  EXPECT_GT(quant_memory_bytes(8, 16 * m, DType::Fp32, 8), 1'480'000'000u);
  EXPECT_GT(quant_memory_bytes(128, m, DType::Fp32, 8), 810'000'000u);
  const std::uint64_t need = quant_memory_bytes(8, 1u << 24, DType::Bf16, 8);
  EXPECT_NO_THROW(check_quant_memory(8, 1u << 24, DType::Bf16, 8, need * 2));
  EXPECT_NO_THROW(check_quant_memory(8, 1u << 24, DType::Bf16, 8, 0));  // unknown: no check
  try {
    check_quant_memory(8, 1u << 24, DType::Bf16, 8, need);  // needs more than 80% of what is available
    FAIL();
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("--elements: 16777216 per rank x 8 ranks (bf16)"), std::string::npos) << msg;
    EXPECT_NE(msg.find(fmt::format("{} MiB", need >> 20)), std::string::npos) << msg;
    EXPECT_NE(msg.find("~5.25 bytes per rank and element"), std::string::npos) << msg;
  }
  EXPECT_GT(available_memory_bytes(), 0u);  // /proc/meminfo on Linux
}

TEST(QuantStudy, MemoryEstimateBoundsTheDataEnginesLayoutAtAnyRankCount) {
  // Every algorithm's workspace as run_data lays it out (the inputs, and at
  // most one more array of the dtype per rank: outputs that equal rank 0's
  // take short-lived slots) and the shared input codes fit in the estimate,
  // at 8 and 64 ranks: a one-shot's N x N gather buffers (8 GiB at 64 ranks)
  // are read through their sources, never laid out.
  for (const int gpus : {8, 64}) {
    Config cfg = h200();
    cfg.fabric.gpus = gpus;
    cfg.ring.protocol = RingProtocol::Simple;   // as run_quant compiles
    const std::uint64_t elems = 1u << 20;
    for (const std::string& algo : supported_algorithms(cfg)) {
      const Schedule s = compile(cfg, algo, {elems * 2, DType::Bf16});
      const std::uint64_t laid = DataWorkspace::bytes_for(s);
      // `laid` holds the inputs too (a run reads them in place).
      EXPECT_LE(laid + gpus * elems * 5 / 4, quant_memory_bytes(gpus, elems, DType::Bf16, 1)) << algo << " " << gpus;
      EXPECT_LE(laid, gpus * elems * (2 + 2)) << algo << " " << gpus;
      EXPECT_GE(laid, 2 * elems) << algo;   // at least one output
    }
  }
}

TEST(QuantStudy, WorkEstimateGrowsWithRanksElementsAndAlgorithms) {
  const WorkEstimate one = quant_study_work(8, 1u << 20, DType::Bf16, 1);
  const WorkEstimate all = quant_study_work(8, 1u << 20, DType::Bf16, 8);
  EXPECT_STREQ(one.unit, "elements");
  EXPECT_DOUBLE_EQ(all.amount, 8.0 * 8 * (1u << 20));
  EXPECT_DOUBLE_EQ(one.seconds, 8.0 * (1u << 20) * (6e-9 + 0.8e-9) + 64 * 5e-6);
  EXPECT_DOUBLE_EQ(all.seconds, 8.0 * (1u << 20) * (6e-9 + 8 * 0.8e-9) + 8 * 64 * 5e-6);
  EXPECT_DOUBLE_EQ(quant_study_work(64, 1u << 20, DType::Fp32, 8).seconds,
                   64.0 * (1u << 20) * (16e-9 + 8 * 1.5e-9) + 8 * 4096 * 5e-6);
  EXPECT_DOUBLE_EQ(all.memory_bytes, static_cast<double>(quant_memory_bytes(8, 1u << 20, DType::Bf16, 8)));
}

TEST(DataWorkspace, OneShotAtSixtyFourRanksLaysOutStorageLinearInRanks) {
  // 64 ranks of 4096 FP32 values: the schedule declares 64 x 64 x 4096 x 4 =
  // 64 MiB of gather buffers; the run lays out what it touches, and every
  // rank still ends with the exact sum (small integers: exact in FP32).
  Config cfg = h200();
  cfg.fabric.gpus = 64;
  cfg.ring.protocol = RingProtocol::Simple;
  const std::uint64_t elems = 4096;
  const Schedule s = compile(cfg, "one-shot", {elems * 4, DType::Fp32});
  std::vector<std::vector<float>> x(64, std::vector<float>(elems));
  for (std::size_t r = 0; r < x.size(); ++r)
    for (std::uint64_t i = 0; i < elems; ++i) x[r][i] = static_cast<float>((r * 7 + i) % 13);
  DataWorkspace ws;
  const DataRun run = run_data(s, x, ws);
  EXPECT_LE(ws.capacity_bytes(), 8 * 64 * elems * sizeof(float));
  EXPECT_LE(ws.capacity_bytes(), DataWorkspace::bytes_for(s));
  ASSERT_EQ(run.outputs.size(), 64u);
  for (std::size_t r = 0; r < 64; ++r)
    for (std::uint64_t i = 0; i < elems; i += 97) {
      double sum = 0;
      for (const auto& v : x) sum += v[i];
      ASSERT_EQ(run.outputs[r][i], static_cast<float>(sum)) << "rank " << r << " element " << i;
    }
}

TEST(QuantStudy, RejectsBadRequests) {
  const Config c = h200();
  QuantRequest req;
  req.elements = 0;
  EXPECT_THROW(run_quant(c, req), Error);
  req.elements = kMaxQuantElemsPerRank + 1;
  EXPECT_THROW(run_quant(c, req), Error);
  req.elements = 100;
  req.algorithms = {"nope"};
  try {
    run_quant(c, req);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("unknown algorithm 'nope'"), std::string::npos) << e.what();
  }
  req.algorithms = {"nvls"};
  EXPECT_THROW(run_quant(load_preset("mesh-8"), req), Error);
  req.algorithms = {};
  req.input.outlier_fraction = 2;
  EXPECT_THROW(run_quant(c, req), Error);
  EXPECT_THROW(parse_distribution("uniform"), Error);
}

TEST(QuantCli, PrintsMetricsAsJsonAndRejectsBadInput) {
  if (cli_path().empty()) GTEST_SKIP() << "SCIN_CLI not set";
  const CliResult out = run_cli("quant --gpus 8 --algo scin-inq,ring-q8,ring --elements 4096 --format json");
  ASSERT_EQ(out.status, 0) << out.output;
  const auto j = nlohmann::json::parse(out.output);
  ASSERT_EQ(j["results"].size(), 3u);
  EXPECT_EQ(j["results"][0]["algorithm"], "scin-inq");
  EXPECT_NEAR(j["results"][0]["payload_ratio"].get<double>(), 0.53125, 1e-9);
  EXPECT_GT(j["results"][1]["metrics"]["rel_l2"].get<double>(), j["results"][0]["metrics"]["rel_l2"].get<double>());
  EXPECT_EQ(j["quant.block_elems"], 32);
  // The study's numbers do not depend on how many threads compute them (256K
  // elements: several of the generator's and the engine's parallel parts).
  const CliResult all = run_cli("quant --algo scin-inq,ring-q8,ring --elements 256K --format json");
  const CliResult one = run_cli("quant --algo scin-inq,ring-q8,ring --elements 256K --format json --threads 1");
  ASSERT_EQ(one.status, 0) << one.output;
  EXPECT_EQ(one.output, all.output);

  const CliResult csv = run_cli("quant --algo scin-inq --elements 1024 --block 64 --scale bf16 --format csv");
  ASSERT_EQ(csv.status, 0) << csv.output;
  EXPECT_NE(csv.output.find("algorithm,"), std::string::npos) << csv.output;
  EXPECT_NE(csv.output.find("scin-inq"), std::string::npos) << csv.output;

  const CliResult bad = run_cli("quant --elements 99999999999");
  EXPECT_NE(bad.status, 0);
  EXPECT_NE(bad.output.find("--elements"), std::string::npos) << bad.output;
  const CliResult bad_block = run_cli("quant --block 1");
  EXPECT_NE(bad_block.status, 0);
  EXPECT_NE(bad_block.output.find("quant.block_elems"), std::string::npos) << bad_block.output;
}

TEST(QuantStudy, UnquantisedRowsOfAnotherBlockSizeMakeTheWholeStudy) {
  // The app's quantisation chart runs every algorithm at its first block size
  // and the quantised ones at the others: merged, each is the study of every
  // algorithm at that block size, bit for bit.
  Config c16 = h200();
  c16.quant.block_elems = 16;
  Config c64 = c16;
  c64.quant.block_elems = 64;
  QuantRequest req;
  req.elements = 4096;
  const QuantStudy full16 = run_quant(c16, req);
  const QuantStudy want = run_quant(c64, req);
  for (const QuantRow& r : full16.rows)
    if (r.quantised) req.algorithms.push_back(r.algorithm);
  ASSERT_FALSE(req.algorithms.empty());
  ASSERT_LT(req.algorithms.size(), full16.rows.size());
  const QuantStudy got = with_unquantised_rows_of(run_quant(c64, req), full16);
  ASSERT_EQ(got.rows.size(), want.rows.size());
  EXPECT_EQ(got.quant.block_elems, 64);
  EXPECT_EQ(got.single_quant.rel_l2, want.single_quant.rel_l2);
  for (std::size_t i = 0; i < want.rows.size(); ++i) {
    EXPECT_EQ(got.rows[i].algorithm, want.rows[i].algorithm);
    EXPECT_EQ(got.rows[i].metrics.rel_l2, want.rows[i].metrics.rel_l2) << want.rows[i].algorithm;
    EXPECT_EQ(got.rows[i].metrics.max_abs, want.rows[i].metrics.max_abs) << want.rows[i].algorithm;
    EXPECT_EQ(got.rows[i].payload_ratio, want.rows[i].payload_ratio) << want.rows[i].algorithm;
    EXPECT_EQ(got.rows[i].error_variance_ratio, want.rows[i].error_variance_ratio) << want.rows[i].algorithm;
  }
  // A quantised algorithm the quantised-only study lacks is an error, not a stale row.
  req.algorithms.pop_back();
  EXPECT_THROW(with_unquantised_rows_of(run_quant(c64, req), full16), Error);
}
