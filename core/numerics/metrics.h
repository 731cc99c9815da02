// Error metrics of a collective's outputs against an exact reference.
#pragma once

#include <cmath>
#include <cstdint>
#include <functional>
#include <span>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace scin {

struct ErrorMetrics {
  double rel_l2 = 0;          // ||out - exact||_2 / ||exact||_2
  double sqnr_dB = 0;         // 10 log10(||exact||^2 / ||out - exact||^2); +inf when exact
  double max_abs = 0;         // max |out - exact|
  double cosine = 1;          // <out, exact> / (||out|| ||exact||)
  bool ranks_identical = true;  // every rank's output is bit-identical
  int worst_rank = 0;         // the rank the first four figures describe
};

/// The running sums of measure_one, added element by element in order: the
/// figures of an array whose elements are added in index order, over parts
/// or whole, are measure_one's, bit for bit.
struct ErrorSums {
  double err2 = 0, ref2 = 0, out2 = 0, dot = 0, max_abs = 0;
  inline __attribute__((always_inline)) void add(double o, double e) {
    const double d = o - e;
    err2 += d * d;
    ref2 += e * e;
    out2 += o * o;
    dot += o * e;
    if (!(std::fabs(d) <= max_abs)) max_abs = std::fabs(d);   // NaN propagates
  }
  ErrorMetrics metrics() const;
};

/// Metrics of one array against `exact` (same length; throws Error otherwise).
ErrorMetrics measure_one(std::span<const float> out, const std::vector<double>& exact);
inline ErrorMetrics measure_one(const std::vector<float>& out, const std::vector<double>& exact) {
  return measure_one(std::span<const float>(out), exact);
}

/// measure_one of two arrays in one pass: the same figures, bit for bit (each
/// array's sums are added in the same order; the two run side by side).
std::pair<ErrorMetrics, ErrorMetrics> measure_two(std::span<const float> a, std::span<const float> b,
                                                  const std::vector<double>& exact);

/// One array of measure_lanes: its values as floats, or as BF16 patterns (the
/// floats' high halves) when `half` is set.
struct LaneSource {
  const float* vals = nullptr;
  const std::uint16_t* half = nullptr;
};

/// measure_one of `count` arrays of `n` values against exact[0, n): four at a
/// time in one pass, each array's sums in its own vector lane, the passes in
/// parallel; every sum added in element order as measure_one adds them (the
/// same figures, bit for bit, at any thread count).
void measure_lanes(const LaneSource* arrays, std::size_t count, std::size_t n, const double* exact, ErrorMetrics* out);

/// measure_ranks' figures from each rank's own (`per_rank`), where same[r]
/// says rank r's output equals rank 0's bit for bit (same[0] is ignored).
ErrorMetrics combine_ranks(const std::vector<ErrorMetrics>& per_rank, const std::vector<char>& same);

/// Metrics over all ranks: the figures of the worst rank (largest squared
/// error), max_abs over all ranks, and whether all ranks are bit-identical.
ErrorMetrics measure(const std::vector<std::vector<float>>& outputs, const std::vector<double>& exact);
/// The same over views (the data engine's DataRun outputs).
ErrorMetrics measure(const std::vector<std::span<const float>>& outputs, const std::vector<double>& exact);
/// The same, with each rank's own figures from `one` (e.g. a lookup of arrays
/// already measured); a rank equal to rank 0 bit for bit takes rank 0's.
ErrorMetrics measure_ranks(const std::vector<std::span<const float>>& outputs,
                           const std::function<ErrorMetrics(std::span<const float>)>& one);

/// Exact reference: the element-wise sum of the inputs in double precision.
std::vector<double> exact_sum(const std::vector<std::vector<float>>& inputs);

nlohmann::json to_json(const ErrorMetrics& m);

}  // namespace scin
