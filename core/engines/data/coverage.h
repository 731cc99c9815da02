// Coverage: which elements of a data-engine array hold a value (written by a
// step or filled), as merged intervals. Internal to the data engine.
#pragma once

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <map>

namespace scin {

// Never-written storage reads as the fill value. Rather than filling every
// buffer up front (most of it is written before it is read, and touching it
// costs page faults), each array records which of its elements have been
// written or filled, and an element is filled the first time a step reads it.
// Intervals are kept merged, so a buffer has a handful of them.
class Coverage {
 public:
  void reset(std::uint64_t covered_up_to = 0) {
    iv_.clear();
    if (covered_up_to > 0) iv_.emplace(0, covered_up_to);
  }
  // Calls gap(lo, hi) for every part of [lo, hi) not covered yet, then covers [lo, hi).
  template <class F>
  void ensure(std::uint64_t lo, std::uint64_t hi, F&& gap) {
    if (lo >= hi) return;
    std::uint64_t at = lo;
    auto it = iv_.upper_bound(lo);
    if (it != iv_.begin() && std::prev(it)->second > lo) at = std::prev(it)->second;
    for (; it != iv_.end() && it->first < hi; ++it) {
      if (it->first > at) gap(at, it->first);
      at = std::max(at, it->second);
    }
    if (at < hi) gap(at, hi);
    cover(lo, hi);
  }
  // Whether every element of [lo, hi) is covered (intervals are merged, so by one interval).
  bool covers(std::uint64_t lo, std::uint64_t hi) const {
    if (lo >= hi) return true;
    auto it = iv_.upper_bound(lo);
    if (it == iv_.begin()) return false;
    --it;
    return it->first <= lo && it->second >= hi;
  }
  // Elements covered in all.
  std::uint64_t total() const {
    std::uint64_t t = 0;
    for (const auto& [lo, hi] : iv_) t += hi - lo;
    return t;
  }
  void cover(std::uint64_t lo, std::uint64_t hi) {
    if (lo >= hi) return;
    auto it = iv_.upper_bound(lo);
    if (it != iv_.begin() && std::prev(it)->second >= lo) {
      --it;
      lo = it->first;
      hi = std::max(hi, it->second);
      it = iv_.erase(it);
    }
    while (it != iv_.end() && it->first <= hi) {
      hi = std::max(hi, it->second);
      it = iv_.erase(it);
    }
    iv_.emplace(lo, hi);
  }

 private:
  std::map<std::uint64_t, std::uint64_t> iv_;   // first -> end, disjoint, not touching
};

}  // namespace scin
