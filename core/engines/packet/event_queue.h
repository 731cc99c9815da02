// Deterministic event queue for the packet engine.
//
// An event is (time in ps, key): `key` packs a monotonically increasing insertion
// counter (upper 40 bits) with the target component (lower 24 bits), so the
// heap orders by time and, at equal times, by insertion order. Same inputs,
// same order, bit for bit. Events carry no payload: components keep their own
// state (htsim's trick: a link's in-flight packets sit in its own ring and only
// the head is in the heap), so the heap holds O(components), not O(packets).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "engines/packet/time.h"

namespace scin::packet {

struct Event {
  Ps t;
  std::uint64_t key;  // (sequence << 24) | target
  std::uint32_t target() const { return static_cast<std::uint32_t>(key & 0xffffffu); }
  /// The insertion number push() returned: a component that keeps the number of
  /// its latest wake-up recognises superseded ones (a generation counter).
  std::uint64_t seq() const { return key >> 24; }
};

/// 4-ary min-heap of events ordered by (time, insertion counter). Times are
/// non-negative, so as unsigned integers they order like the values and one
/// branch-free comparison of (time, key) decides.
class EventQueue {
 public:
  static constexpr std::uint32_t kMaxTarget = 0xffffffu;

  bool empty() const { return heap_.empty(); }
  std::size_t size() const { return heap_.size(); }

  /// Schedules `target` at `t` (>= 0); returns the event's insertion number.
  std::uint64_t push(Ps t, std::uint32_t target) {
    const std::uint64_t seq = seq_++;
    Item e{static_cast<std::uint64_t>(t), (seq << 24) | target};
    heap_.push_back(e);
    std::size_t i = heap_.size() - 1;
    while (i > 0) {
      const std::size_t parent = (i - 1) >> 2;
      if (!less(e, heap_[parent])) break;
      heap_[i] = heap_[parent];
      i = parent;
    }
    heap_[i] = e;
    return seq;
  }

  Event pop() {
    const Item out = heap_.front();
    const Item last = heap_.back();
    heap_.pop_back();
    const std::size_t n = heap_.size();
    if (n > 0) {
      // Floyd's bottom-up deletion: walk the hole down along the smallest
      // children without comparing against `last`, then sift `last` up from
      // there (it rarely moves): fewer, better predicted comparisons.
      std::size_t i = 0;
      for (;;) {
        const std::size_t c = 4 * i + 1;
        if (c >= n) break;
        std::size_t m = c;
        if (c + 3 < n) {
          const std::size_t a = less(heap_[c + 1], heap_[c]) ? c + 1 : c;
          const std::size_t b = less(heap_[c + 3], heap_[c + 2]) ? c + 3 : c + 2;
          m = less(heap_[b], heap_[a]) ? b : a;
        } else {
          for (std::size_t k = c + 1; k < n; ++k) m = less(heap_[k], heap_[m]) ? k : m;
        }
        heap_[i] = heap_[m];
        i = m;
      }
      while (i > 0) {
        const std::size_t parent = (i - 1) >> 2;
        if (!less(last, heap_[parent])) break;
        heap_[i] = heap_[parent];
        i = parent;
      }
      heap_[i] = last;
    }
    return Event{static_cast<Ps>(out.t), out.key};
  }

 private:
  struct Item {
    std::uint64_t t;    // a non-negative time in ps
    std::uint64_t key;
  };
  // One 128-bit comparison of (time, key): compiles to cmp + sbb.
  __extension__ typedef unsigned __int128 U128;
  static bool less(const Item& a, const Item& b) {
    const U128 x = (static_cast<U128>(a.t) << 64) | a.key;
    const U128 y = (static_cast<U128>(b.t) << 64) | b.key;
    return x < y;
  }
  std::vector<Item> heap_;
  std::uint64_t seq_ = 0;
};

/// FIFO ring buffer with power-of-two capacity (amortised O(1), no per-item
/// allocation). 24 bytes: a link holds six of them, and at 1024 accelerators
/// thousands of links should stay small.
template <class T>
class Ring {
 public:
  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }
  T& front() { return buf_[head_]; }
  const T& front() const { return buf_[head_]; }
  T& back() { return buf_[(head_ + size_ - 1) & mask_]; }
  T& operator[](std::size_t i) { return buf_[(head_ + i) & mask_]; }
  void pop_front() {
    head_ = (head_ + 1) & mask_;
    --size_;
  }
  void push_back(const T& v) {
    if (size_ == capacity()) grow();
    buf_[(head_ + size_) & mask_] = v;
    ++size_;
  }
  void clear() { head_ = size_ = 0; }

 private:
  std::size_t capacity() const { return buf_ ? static_cast<std::size_t>(mask_) + 1 : 0; }
  void grow() {
    const std::size_t cap = buf_ ? capacity() * 2 : 16;
    std::unique_ptr<T[]> nb(new T[cap]);
    for (std::size_t i = 0; i < size_; ++i) nb[i] = std::move(buf_[(head_ + i) & mask_]);
    buf_ = std::move(nb);
    head_ = 0;
    mask_ = static_cast<std::uint32_t>(cap - 1);
  }
  std::unique_ptr<T[]> buf_;
  std::uint32_t head_ = 0, size_ = 0, mask_ = 0;
};

}  // namespace scin::packet
