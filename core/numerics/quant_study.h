// The quantisation-error study: what `scin quant`, the sweep runner and the
// GUI's quantisation-error chart call. For each algorithm it compiles the
// schedule, runs it on real data with the data engine (data_engine.h), and
// measures the result against an exact double-precision sum.
//
// Inputs are rounded to the collective's dtype (BF16 by default) before the
// run, as a GPU would hold them; the exact reference is the double sum of those
// rounded inputs, so every error figure is the collective's own.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "base/run_context.h"
#include "engines/engine.h"
#include "fabric/config.h"
#include "schedule/schedule.h"
#include "numerics/metrics.h"

namespace scin {

enum class Distribution { Gaussian, Laplace, Outliers };

const char* to_string(Distribution d);
/// "gaussian" | "laplace" | "outliers"; throws Error naming `--dist`.
Distribution parse_distribution(const std::string& text);

/// How the per-rank input tensors are generated (all values depend only on
/// seed, rank and element index: identical for any thread count).
struct InputSpec {
  Distribution dist = Distribution::Gaussian;
  double stddev = 1.0;               // of every rank's values (Laplace scaled to match)
  double outlier_fraction = 0.005;   // Outliers: share of channels that are outliers, [0, 1]
  double outlier_scale = 20.0;       // Outliers: magnitude multiplier of outlier channels, >= 1
  std::uint64_t channels = 4096;     // Outliers: row length; element i is channel i % channels
  std::uint64_t seed = 1;
};

/// One quantisation study.
struct QuantRequest {
  std::vector<std::string> algorithms;   // empty: every algorithm the config supports
  std::uint64_t elements = 1u << 20;      // per rank (ignored with npy_files: taken from them)
  DType dtype = DType::Bf16;              // the collective's element type
  InputSpec input;
  /// Real tensors instead of generated ones: either one file per rank, or one
  /// file whose elements are split evenly (contiguously) across the ranks.
  std::vector<std::string> npy_files;
};

/// Result of one algorithm.
struct QuantRow {
  std::string algorithm;
  std::string variant;               // e.g. the ring protocol
  bool quantised = false;            // moves block-quantised payloads
  ErrorMetrics metrics;              // worst rank against the exact sum
  double payload_ratio = 1.0;        // wire bytes / wire bytes had every transfer been in dtype
  double wire_bytes = 0;             // bytes crossing accelerator links, summed over transfers
  double max_link_bytes = 0;         // busiest accelerator link direction (schedule's link_bytes)
  /// Error variance relative to quantising the exact sum once with the same
  /// codec (QuantStudy::single_quant): ~2 for scin-inq, ~(N+1)/2 for ring-q8.
  double error_variance_ratio = 0;
};

struct QuantStudy {
  int gpus = 0;
  std::uint64_t elements = 0;        // per rank
  DType dtype = DType::Bf16;
  QuantSpec quant;                   // codec, block_elems, scale_format used
  InputSpec input;
  std::vector<std::string> npy_files;
  /// References: the exact sum rounded once to dtype (the best any algorithm
  /// can do), and the exact sum quantised once with the codec then rounded to dtype.
  ErrorMetrics dtype_round;
  ErrorMetrics single_quant;
  std::vector<QuantRow> rows;
};

/// Runs the study. Validates cfg and the request; throws Error on bad input
/// (unknown algorithm, element count out of range, unreadable .npy, ...).
/// Polls ctx.stop between algorithms and between the data engine's steps
/// (throws Cancelled) and reports progress per algorithm.
QuantStudy run_quant(const Config& cfg, const QuantRequest& req, const RunContext& ctx = {});

/// Largest per-rank element count run_quant accepts, and the cap on
/// gpus x elements of a stacked .npy input (read before its size is known).
constexpr std::uint64_t kMaxQuantElemsPerRank = 1ull << 24;
constexpr std::uint64_t kMaxQuantElemsTotal = 1ull << 26;

/// Peak memory of run_quant of `algorithms` algorithms for `gpus` ranks of
/// `elements` each in `dtype`, linear in ranks x elements for every algorithm:
/// per rank and element the input as held (BF16 patterns: 2 bytes, else FP32
/// values: 4), the shared input codes (1.25) and the data engine's workspace
/// for the largest schedule (at most the dtype's bytes), i.e. 5.25 bytes for
/// BF16, 7.25 for FP16, 9.25 for FP32; plus 32 bytes per element (exact sum,
/// references), 3 KiB per rank^2 (the largest schedule and its plan, compiled
/// one at a time: a two-shot's 4 N^2 steps) and 32 MiB. An upper bound on the
/// peak RSS measured for `scin quant` (docs/performance.md, section 83).
std::uint64_t quant_memory_bytes(int gpus, std::uint64_t elements, DType dtype, std::size_t algorithms);
/// (What is available: available_memory_bytes() in base/memory.h.)
/// Throws Error naming --elements when quant_memory_bytes(...) exceeds 80% of
/// `available` (0: unknown, no check).
void check_quant_memory(int gpus, std::uint64_t elements, DType dtype, std::size_t algorithms,
                        std::uint64_t available);

/// What run_quant of `algorithms` algorithms costs, for the CLI's and the
/// sweeps' budgets: one core's seconds (the inputs, exact sum and references
/// once, then each algorithm's run and measurement; per rank and element,
/// measured as quant_memory_bytes is), quant_memory_bytes, and as amount the
/// elements the algorithms read (ranks x elements each).
WorkEstimate quant_study_work(int gpus, std::uint64_t elements, DType dtype, std::size_t algorithms);

/// Each row's error variance over that of the exact sum quantised once
/// (st.single_quant): what run_quant sets.
void set_error_variance_ratios(QuantStudy& st);
/// A study of every algorithm from `quantised`, a study of the same inputs and
/// config run on the quantised algorithms only, and `full`, one of every
/// algorithm that differs only in quant.* (block size, codec, scale format):
/// the unquantised rows do not depend on those, so they are `full`'s, in
/// `full`'s order, with their variance ratios against `quantised`'s reference.
/// Throws Error naming an algorithm `quantised` lacks.
QuantStudy with_unquantised_rows_of(QuantStudy quantised, const QuantStudy& full);

nlohmann::json to_json(const QuantRow& r);
nlohmann::json to_json(const QuantStudy& s);

}  // namespace scin
