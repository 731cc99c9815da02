// Metrics of a study's outputs looked up by content (internal to the quant
// study; a header of its own for tests).
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <list>
#include <span>
#include <utility>
#include <vector>

#include "base/big_alloc.h"
#include "base/error.h"
#include <fmt/format.h>
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
  MeasureCache(std::span<const double> exact, Format f) : exact_(exact), format_(f) {}
  // Remembers an array of `size` values and its metrics: their BF16 patterns
  // (`half`, the values' high halves; every value exact in BF16) or, when
  // `half` is empty, the floats `vals`.
  void hold(BigVector<std::uint16_t> half, BigVector<float> vals, std::size_t size, const ErrorMetrics& m) {
    held_.push_back(array(std::move(half), std::move(vals), size));
    metrics_[held_.back().id] = m;
  }
  // The same, its metrics measured with the next arrays measured (flush):
  // returns the key of held_metrics.
  std::size_t hold(BigVector<std::uint16_t> half, BigVector<float> vals, std::size_t size) {
    held_.push_back(array(std::move(half), std::move(vals), size));
    pending_.push_back(&held_.back());
    return held_.back().id;
  }
  const ErrorMetrics& held_metrics(std::size_t key) {
    flush();
    return metrics_[key];
  }
  ErrorMetrics measure_one(std::span<const float> out) {
    const std::size_t id = find_or_keep(View{out.data(), nullptr, out.size()});
    flush();
    return metrics_[id];
  }
  // measure(outputs, exact) (metrics.cc) with measure_one looked up first.
  ErrorMetrics measure(const std::vector<std::span<const float>>& outputs) { return result(defer(outputs)); }
  // measure(outputs), its arrays measured later, up to eight in one pass
  // (measure_lanes): returns the key of result(). Outputs not found among the
  // arrays held, kept or pending are copied (kept) until measured.
  std::size_t defer(const std::vector<std::span<const float>>& outputs) { return defer(outputs, {}); }
  // The same, rank r given as its BF16 patterns where bf16[r] is not empty
  // (DataRun::bf16; outputs[r] then unused): the figures of their floats.
  std::size_t defer(const std::vector<std::span<const float>>& outputs,
                    const std::vector<std::span<const std::uint16_t>>& bf16) {
    if (outputs.empty()) throw Error("metrics: no outputs");
    auto view = [&](std::size_t r) {
      if (r < bf16.size() && !bf16[r].empty()) return View{nullptr, bf16[r].data(), bf16[r].size()};
      return View{outputs[r].data(), nullptr, outputs[r].size()};
    };
    const std::size_t first = ranks_.size();
    const View v0 = view(0);
    for (std::size_t r = 0; r < outputs.size(); ++r) {
      // A rank whose output equals rank 0's bit for bit has rank 0's metrics (measure_ranks).
      const View v = view(r);
      const bool same = r > 0 && equal(v, v0);
      ranks_.push_back({same ? ranks_[first].id : find_or_keep(v), same});
    }
    rows_.push_back({first, outputs.size()});
    return rows_.size() - 1;
  }
  // The figures of defer(outputs)'s key: measure(outputs)'s, bit for bit.
  ErrorMetrics result(std::size_t key) {
    flush();
    const auto [first, count] = rows_[key];
    std::vector<ErrorMetrics> per_rank(count);
    std::vector<char> same(count);
    for (std::size_t r = 0; r < count; ++r) {
      per_rank[r] = metrics_[ranks_[first + r].id];
      same[r] = ranks_[first + r].same;
    }
    return combine_ranks(per_rank, same);
  }
  // Room for `rows` rows of `ranks` ranks and their arrays' keys, made before
  // the study's big arrays (small allocations among them can keep the heap's
  // freed huge pages from being reused whole by the next study).
  void reserve(std::size_t rows, std::size_t ranks) {
    rows_.reserve(rows);
    ranks_.reserve(rows * ranks);
    metrics_.reserve(rows * ranks + 2);
    pending_.reserve(kPending + 2);
  }
  // Measures every pending array (up to eight per pass).
  void flush() {
    if (pending_.empty()) return;
    std::vector<LaneSource> src(pending_.size());
    for (std::size_t k = 0; k < pending_.size(); ++k) {
      src[k].half = pending_[k]->half.empty() ? nullptr : pending_[k]->half.data();
      src[k].vals = pending_[k]->half.empty() ? pending_[k]->vals.data() : nullptr;
    }
    std::vector<ErrorMetrics> m(pending_.size());
    measure_lanes(src.data(), src.size(), exact_.size(), exact_.data(), m.data());
    for (std::size_t k = 0; k < pending_.size(); ++k) metrics_[pending_[k]->id] = m[k];
    pending_.clear();
    while (kept_.size() > kKept) kept_.pop_back();   // only the first kKept measured stay for look-ups
  }
  // Arrays measured (not found) so far, and kept ones held as BF16 patterns (tests).
  std::size_t measured() const { return measured_; }
  std::size_t kept_as_bf16() const {
    std::size_t n = 0;
    for (const KeptArray& k : kept_) n += k.half.empty() ? 0 : 1;
    return n;
  }

 private:
  static constexpr std::size_t kKept = 3;      // copies of measured outputs kept (the study's few distinct results)
  static constexpr std::size_t kPending = 8;   // arrays measured in one pass
  struct KeptArray {
    BigVector<float> vals;              // when not every value is exact in BF16
    BigVector<std::uint16_t> half;      // else the values' BF16 patterns (the high halves)
    std::size_t size = 0;
    std::size_t id = 0;                 // its metrics: metrics_[id]
  };
  struct View {                         // an output: its floats, or its BF16 patterns
    const float* f;
    const std::uint16_t* h;
    std::size_t n;
    std::uint32_t bits(std::size_t i) const {
      return f ? std::bit_cast<std::uint32_t>(f[i]) : static_cast<std::uint32_t>(h[i]) << 16;
    }
  };
  static bool equal(const View& a, const View& b) {
    if (a.n != b.n) return false;
    if (a.f && b.f) return a.f == b.f || std::memcmp(a.f, b.f, a.n * sizeof(float)) == 0;
    if (a.h && b.h) return a.h == b.h || std::memcmp(a.h, b.h, a.n * sizeof(std::uint16_t)) == 0;
    for (std::size_t i = 0; i < a.n; ++i)
      if (a.bits(i) != b.bits(i)) return false;
    return true;
  }
  struct Rank {
    std::size_t id;                     // its array's metrics: metrics_[id]
    bool same;                          // equals rank 0's output bit for bit
  };
  KeptArray array(BigVector<std::uint16_t> half, BigVector<float> vals, std::size_t size) {
    KeptArray k;
    k.half = std::move(half);
    k.vals = std::move(vals);
    k.size = size;
    k.id = metrics_.size();
    metrics_.emplace_back();
    return k;
  }
  // The key of out's metrics: an equal array's held, kept or pending, else a
  // copy of out kept and measured at the next flush.
  std::size_t find_or_keep(const View& out) {
    if (out.n != exact_.size())   // measure_one's error
      throw Error(fmt::format("metrics: output has {} elements, reference {}", out.n, exact_.size()));
    for (const KeptArray& k : held_)
      if (same(k, out)) return k.id;
    for (const KeptArray& k : kept_)
      if (same(k, out)) return k.id;
    ++measured_;
    keep(out);
    pending_.push_back(&kept_.back());
    const std::size_t id = kept_.back().id;
    if (pending_.size() >= kPending) flush();
    return id;
  }
  void keep(const View& v) {
    if (v.h) {   // BF16 patterns: held as such in a BF16 study, else as their floats
      KeptArray k = array({}, {}, v.n);
      if (format_ == Format::Bf16) k.half.assign(v.h, v.h + v.n);
      else k.vals.resize(v.n);
      for (std::size_t i = 0; format_ != Format::Bf16 && i < v.n; ++i) k.vals[i] = std::bit_cast<float>(v.bits(i));
      kept_.push_back(std::move(k));
      return;
    }
    const std::span<const float> out(v.f, v.n);
    KeptArray k = array({}, {}, out.size());
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
  bool same(const KeptArray& k, const View& v) const {
    if (k.size != v.n) return false;
    if (v.h) return equal(k.half.empty() ? View{k.vals.data(), nullptr, k.size} : View{nullptr, k.half.data(), k.size}, v);
    const std::span<const float> out(v.f, v.n);
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
  const std::span<const double> exact_;
  const Format format_;
  std::list<KeptArray> held_;   // the study's references
  std::list<KeptArray> kept_;
  std::vector<KeptArray*> pending_;   // held or kept arrays not measured yet
  std::vector<ErrorMetrics> metrics_;
  std::vector<std::pair<std::size_t, std::size_t>> rows_;   // each row's first rank in ranks_, and count
  std::vector<Rank> ranks_;
  std::size_t measured_ = 0;
};

}  // namespace scin
