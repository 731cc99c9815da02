// Metrics of a study's outputs looked up by content (internal to the quant
// study; a header of its own for tests).
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <list>
#include <span>
#include <vector>

#include "base/big_alloc.h"
#include "numerics/metrics.h"
#include "schedule/schedule.h"

namespace scin {

// Metrics of arrays already measured in this study, by content: an algorithm
// whose output equals, bit for bit, the rounded exact sum, the quantised
// reference or an earlier algorithm's output has the same metrics without
// measuring it again (measure_one is a function of the array's bits). The
// outputs it keeps are held as BF16 patterns when the study's type is BF16 and
// every value is exact in it (half the pages; compared bit for bit all the same).
class MeasureCache {
 public:
  MeasureCache(const std::vector<double>& exact, Format f) : exact_(exact), format_(f) {}
  // Remembers an array of `size` values and its metrics: their BF16 patterns
  // (`half`, the values' high halves; every value exact in BF16) or, when
  // `half` is empty, the floats `vals`.
  void hold(BigVector<std::uint16_t> half, BigVector<float> vals, std::size_t size, const ErrorMetrics& m) {
    KeptArray k;
    k.half = std::move(half);
    k.vals = std::move(vals);
    k.size = size;
    k.m = m;
    held_.push_back(std::move(k));
  }
  ErrorMetrics measure_one(std::span<const float> out) {
    for (const KeptArray& k : held_)
      if (same(k, out)) return k.m;
    for (const KeptArray& k : kept_)
      if (same(k, out)) return k.m;
    const ErrorMetrics m = scin::measure_one(out, exact_);
    ++measured_;
    if (kept_.size() < kKept) keep(out, m);
    return m;
  }
  // measure(outputs, exact) (metrics.cc) with measure_one looked up first.
  ErrorMetrics measure(const std::vector<std::span<const float>>& outputs) {
    return measure_ranks(outputs, [this](std::span<const float> out) { return measure_one(out); });
  }
  // Arrays measured (not found) so far, and kept ones held as BF16 patterns (tests).
  std::size_t measured() const { return measured_; }
  std::size_t kept_as_bf16() const {
    std::size_t n = 0;
    for (const KeptArray& k : kept_) n += k.half.empty() ? 0 : 1;
    return n;
  }

 private:
  static constexpr std::size_t kKept = 3;   // copies of measured outputs kept (the study's few distinct results)
  struct KeptArray {
    BigVector<float> vals;              // when not every value is exact in BF16
    BigVector<std::uint16_t> half;      // else the values' BF16 patterns (the high halves)
    std::size_t size = 0;
    ErrorMetrics m;
  };
  void keep(std::span<const float> out, const ErrorMetrics& m) {
    KeptArray k;
    k.size = out.size();
    k.m = m;
    std::uint32_t low = 0;   // the low halves or-ed: 0 when every value is exact in BF16
    if (format_ == Format::Bf16) {
      k.half.resize(out.size());
      for (std::size_t i = 0; i < out.size(); ++i) {
        const std::uint32_t bits = std::bit_cast<std::uint32_t>(out[i]);
        k.half[i] = static_cast<std::uint16_t>(bits >> 16);
        low |= bits & 0xffffu;
      }
    }
    if (format_ != Format::Bf16 || low != 0) {
      k.half = {};
      k.vals.assign(out.begin(), out.end());
    }
    kept_.push_back(std::move(k));
  }
  bool same(const KeptArray& k, std::span<const float> out) const {
    if (k.size != out.size()) return false;
    if (k.half.empty()) return std::memcmp(k.vals.data(), out.data(), out.size() * sizeof(float)) == 0;
    constexpr std::size_t kRun = 512;   // compared in runs, the loop branch-free within one
    for (std::size_t lo = 0; lo < out.size(); lo += kRun) {
      const std::size_t hi = std::min(out.size(), lo + kRun);
      std::uint32_t diff = 0;
      for (std::size_t i = lo; i < hi; ++i) diff |= (static_cast<std::uint32_t>(k.half[i]) << 16) ^ std::bit_cast<std::uint32_t>(out[i]);
      if (diff != 0) return false;
    }
    return true;
  }
  const std::vector<double>& exact_;
  const Format format_;
  std::list<KeptArray> held_;   // the study's references
  std::list<KeptArray> kept_;
  std::size_t measured_ = 0;
};

}  // namespace scin
