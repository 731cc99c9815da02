// Seeded input generators and the .npy reader/writer.
//
// Generated values depend only on (seed, rank, element index) through a
// counter-based hash (splitmix64), so they are identical for any thread count
// and any element count prefix.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "base/big_alloc.h"
#include "numerics/formats.h"

#include "numerics/quant_study.h"

namespace scin {

struct RunContext;  // base/run_context.h


/// Per-rank inputs (FP32, not yet rounded to the collective's dtype).
/// Gaussian: N(0, stddev^2). Laplace: scale stddev/sqrt(2) (same variance).
/// Outliers: Gaussian, with round(outlier_fraction x channels) channels (the
/// same channels on every rank, as after a row-parallel matmul) multiplied by
/// outlier_scale. Throws Error for out-of-range parameters.
/// `ctx` (optional) is polled before each rank's values (throws Cancelled).
std::vector<std::vector<float>> generate_inputs(const InputSpec& spec, int ranks, std::uint64_t elems,
                                                const RunContext* ctx = nullptr);

/// The inputs of a BF16 study without FP32 arrays, in one pass: generate_inputs'
/// values rounded to BF16 as round_inputs rounds them, each rank's held as its
/// BF16 patterns in `bits`, and `exact` = exact_sum of the rounded values (the
/// same additions in the same order: the same bits). Returns false, `bits` and
/// `exact` then unspecified, when a value is not finite or beyond BF16's largest
/// finite value: the caller takes generate_inputs and round_inputs, which report
/// it. Throws what generate_inputs throws; `ctx` is polled between parts.
bool generate_bf16_inputs(const InputSpec& spec, int ranks, std::uint64_t elems,
                          std::vector<BigVector<std::uint16_t>>& bits, std::vector<double>& exact,
                          const RunContext* ctx = nullptr);
/// The same with the exact sum in big_alloc storage, not zero-filled before it
/// is written (every element is).
bool generate_bf16_inputs(const InputSpec& spec, int ranks, std::uint64_t elems,
                          std::vector<BigVector<std::uint16_t>>& bits, BigVector<double>& exact,
                          const RunContext* ctx = nullptr);

/// The definition of the generator's BF16 test (bf16_pattern_decided decides
/// from v's bits, and the tests check it against this): for a value v computed
/// within |v| rel (relative; 2^-32 for libmvec's doubles,
/// num::kBoxMullerF32Margin for the float factors) of the defining formula's,
/// true when every double that close to v rounds, to
/// float and then to BF16 (round_bf16_fast), to the same value and lies on the
/// same side of `big` as a float (generate_bf16_inputs' overflow test), so
/// that v may stand for the exact value; false for 0, NaN and infinity (the
/// scalar formula decides those). float() and the BF16 rounding are monotonic
/// and the two ends have v's sign, so checking the ends suffices.
inline bool bf16_rounding_decided(double v, float big, double rel = 0x1p-32) {
  const double m = std::fabs(v) * rel;
  const float below = static_cast<float>(v - m), above = static_cast<float>(v + m);
  return (m > 0) & (num::round_bf16_fast(below) == num::round_bf16_fast(above)) &
         ((std::fabs(below) <= big) == (std::fabs(above) <= big));
}

/// bf16_pattern_decided's threshold for a relative margin `rel` (at most
/// 2^-12): the margin in units in the last place of v's binade (below rel
/// 2^53) plus the most float() can move v (2^28 of them), rounded up.
constexpr std::uint64_t bf16_decided_threshold(double rel) {
  return static_cast<std::uint64_t>(rel * 0x1p53) + (1ull << 29);
}

/// The same decision as bf16_rounding_decided(v, big, rel) from v's bits alone,
/// and the pattern: true, with `pattern` = the BF16 pattern of
/// round_bf16_fast(float(v)), when v is in [2^-125, 2^127) in magnitude (a
/// normal float with its margin, below BF16's largest finite value) and the
/// 45 bits of v's significand below BF16's 7 are more than `threshold`
/// (bf16_decided_threshold(rel)) from the rounding midpoint 2^44: then every
/// double within |v| rel of v rounds, through float, to the same pattern (no
/// tie: float() moves those bits by at most 2^28). False for 0, subnormals,
/// NaN and infinity; `pattern` is then unspecified. Branch-free (vectorises).
inline bool bf16_pattern_decided(double v, std::uint64_t threshold, std::uint16_t& pattern) {
  const std::uint64_t bits = std::bit_cast<std::uint64_t>(v);
  const std::uint64_t mag = bits & 0x7fffffffffffffffull;
  const std::uint64_t low = mag & ((1ull << 45) - 1), half = 1ull << 44;
  const std::uint64_t up = low > half;
  const std::uint64_t dist = up ? low - half : half - low;
  // The exponent field of 2^-125 is 1023 - 125 = 898; of 2^127, 1150.
  const std::uint64_t biased = mag >> 52;
  const bool in_range = (biased - 898) < (1150 - 898);   // unsigned: below 898 wraps
  // The double's sign, exponent and top 7 significand bits, rounded, re-biased (1023 - 127 = 896).
  const std::uint64_t rounded = (mag >> 45) + up - (896ull << 7);
  pattern = static_cast<std::uint16_t>(((bits >> 48) & 0x8000u) | (rounded & 0x7fffu));
  return in_range & (dist > threshold);
}

/// Tests: the instruction set generate_inputs uses for its batches, 0 portable,
/// 1 AVX2, 2 AVX-512 (each only where the CPU has it; -1: the CPU's best, the
/// default). Returns the one that will be used. Every choice gives the same values.
int force_generator_isa(int isa);

/// The outlier channels `spec` selects (sorted), for tests and reports.
std::vector<std::uint64_t> outlier_channels(const InputSpec& spec);

/// A NumPy array read from a .npy file, converted to FP32.
struct NpyArray {
  std::string descr;                   // e.g. "<f2", "<f4", "<u2" (bfloat16 bits)
  std::vector<std::uint64_t> shape;
  std::vector<float> data;             // C order
};

/// Reads a .npy file (format 1.0, 2.0 or 3.0). Accepted dtypes: float16 "<f2",
/// float32 "<f4", float64 "<f8", and bfloat16 stored as uint16 "<u2" or as
/// 2-byte void "|V2" (ml_dtypes). C order only. Throws Error naming the file for
/// a bad magic or header, an unsupported dtype, Fortran order, truncated data
/// or a non-finite value, and for more than `max_elements` elements (checked before reading).
NpyArray read_npy(const std::string& path, std::uint64_t max_elements = 1ull << 28);

/// Writes `data` as a 1-D .npy array (format 1.0) in descr "<f4", "<f2" or "<u2"
/// (bfloat16 bits); values are rounded to nearest even. Throws Error on I/O failure.
void write_npy(const std::string& path, const std::vector<float>& data, const std::string& descr = "<f4",
               const std::vector<std::uint64_t>& shape = {});

/// Per-rank inputs from .npy files: one file per rank (all the same size) or
/// one file split contiguously into `ranks` equal parts.
std::vector<std::vector<float>> load_npy_inputs(const std::vector<std::string>& files, int ranks);

/// Rounds per-rank inputs to `dtype` (what the GPUs hold). A finite value too
/// large for the format is an error naming it, `origin` ("--npy") and the format:
/// "--npy: rank 0 element 3 = 3.4e+38 overflows BF16 (largest finite 3.38953e+38)".
void round_inputs(std::vector<std::vector<float>>& inputs, DType dtype, const std::string& origin);

}  // namespace scin
