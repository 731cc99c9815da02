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

namespace detail {

struct EventItem {
  std::uint64_t t;    // a non-negative time in ps
  std::uint64_t key;  // (sequence << 24) | target
};
// One 128-bit comparison of (time, key): compiles to cmp + sbb.
inline bool event_less(const EventItem& a, const EventItem& b) {
  __extension__ typedef unsigned __int128 U128;
  const U128 x = (static_cast<U128>(a.t) << 64) | a.key;
  const U128 y = (static_cast<U128>(b.t) << 64) | b.key;
  return x < y;
}

/// 4-ary min-heap of events: the fastest for the few dozen to few hundred
/// events a small fabric keeps pending.
class Heap4 {
 public:
  bool empty() const { return heap_.empty(); }
  std::size_t size() const { return heap_.size(); }
  void push(const EventItem& e) {
    heap_.push_back(e);
    std::size_t i = heap_.size() - 1;
    while (i > 0) {
      const std::size_t parent = (i - 1) >> 2;
      if (!event_less(e, heap_[parent])) break;
      heap_[i] = heap_[parent];
      i = parent;
    }
    heap_[i] = e;
  }
  EventItem pop() {
    const EventItem out = heap_.front();
    const EventItem last = heap_.back();
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
          const std::size_t a = event_less(heap_[c + 1], heap_[c]) ? c + 1 : c;
          const std::size_t b = event_less(heap_[c + 3], heap_[c + 2]) ? c + 3 : c + 2;
          m = event_less(heap_[b], heap_[a]) ? b : a;
        } else {
          for (std::size_t k = c + 1; k < n; ++k) m = event_less(heap_[k], heap_[m]) ? k : m;
        }
        heap_[i] = heap_[m];
        i = m;
      }
      while (i > 0) {
        const std::size_t parent = (i - 1) >> 2;
        if (!event_less(last, heap_[parent])) break;
        heap_[i] = heap_[parent];
        i = parent;
      }
      heap_[i] = last;
    }
    return out;
  }
  std::vector<EventItem>& items() { return heap_; }

 private:
  std::vector<EventItem> heap_;
};

/// Radix heap of events: keys only grow past the last one popped (the engine
/// never schedules before the present and every push gets a new counter), so an
/// event waits in the bucket of the highest bit in which its key differs from
/// the last popped key; a pop takes the least key of the lowest non-empty
/// bucket and moves that bucket's others down to where they now belong. Each
/// event moves a few times over its life; the cost does not grow with the
/// number pending, which on large fabrics is thousands.
class RadixQueue {
 public:
  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }
  /// Keys pushed from now on are greater than `last` (the last key popped).
  void set_last(const EventItem& last) { last_ = last; }
  void push(const EventItem& e) {
    const unsigned b = bucket_of(e);
    buckets_[b].push_back(e);
    mask_[b >> 6] |= std::uint64_t{1} << (b & 63);
    ++size_;
  }
  EventItem pop() {
    unsigned w = 0;
    while (mask_[w] == 0) ++w;
    const unsigned b = w * 64 + static_cast<unsigned>(__builtin_ctzll(mask_[w]));
    std::vector<EventItem>& v = buckets_[b];
    std::size_t m = 0;
    for (std::size_t k = 1; k < v.size(); ++k) m = event_less(v[k], v[m]) ? k : m;
    last_ = v[m];
    v[m] = v.back();
    v.pop_back();
    // The others now differ from the new last key in a lower bit: move them down.
    for (const EventItem& x : v) {
      const unsigned c = bucket_of(x);
      buckets_[c].push_back(x);
      mask_[c >> 6] |= std::uint64_t{1} << (c & 63);
    }
    v.clear();
    mask_[w] &= ~(std::uint64_t{1} << (b & 63));
    --size_;
    return last_;
  }
  /// Moves every pending event to `out`.
  void drain_to(Heap4& out) {
    for (auto& v : buckets_) {
      for (const EventItem& x : v) out.push(x);
      v.clear();
    }
    mask_[0] = mask_[1] = mask_[2] = 0;
    size_ = 0;
  }

 private:
  /// 1 + the highest bit of (t, key) in which `x` differs from the last popped
  /// key: 1-64 in the key, 65-128 in the time (0: equal, which unique keys never are).
  unsigned bucket_of(const EventItem& x) const {
    const std::uint64_t dt = x.t ^ last_.t;
    if (dt != 0) return 128u - static_cast<unsigned>(__builtin_clzll(dt));
    const std::uint64_t dk = x.key ^ last_.key;
    return dk == 0 ? 0u : 64u - static_cast<unsigned>(__builtin_clzll(dk));
  }
  std::vector<EventItem> buckets_[129];
  std::uint64_t mask_[3] = {0, 0, 0};  // non-empty buckets
  EventItem last_{0, 0};
  std::size_t size_ = 0;
};

}  // namespace detail

/// The engine's event queue, ordered by (time, insertion counter): a 4-ary heap
/// while few events are pending, a radix heap while many are (above 1024,
/// back below 256; the 4-ary heap's depth and cache misses grow with the
/// pending set, the radix heap's cost does not). Either returns the least
/// pending event, so the order is the same whichever holds them.
class EventQueue {
 public:
  static constexpr std::uint32_t kMaxTarget = 0xffffffu;
  static constexpr std::size_t kToRadix = 1024, kToHeap = 256;

  bool empty() const { return size() == 0; }
  std::size_t size() const { return radix_mode_ ? radix_.size() : heap_.size(); }

  /// Schedules `target` at `t` (>= the time of the last event popped); returns the event's insertion number.
  std::uint64_t push(Ps t, std::uint32_t target) {
    const std::uint64_t seq = seq_++;
    const detail::EventItem e{static_cast<std::uint64_t>(t), (seq << 24) | target};
    if (radix_mode_) {
      radix_.push(e);
    } else {
      heap_.push(e);
      if (heap_.size() > kToRadix) {
        radix_.set_last(last_);
        for (const auto& x : heap_.items()) radix_.push(x);
        heap_.items().clear();
        radix_mode_ = true;
      }
    }
    return seq;
  }

  /// The least pending event (the queue must not be empty).
  Event pop() {
    if (radix_mode_) {
      last_ = radix_.pop();
      if (radix_.size() < kToHeap) {
        radix_.drain_to(heap_);
        radix_mode_ = false;
      }
    } else {
      last_ = heap_.pop();
    }
    return Event{static_cast<Ps>(last_.t), last_.key};
  }

 private:
  detail::Heap4 heap_;
  detail::RadixQueue radix_;
  bool radix_mode_ = false;
  detail::EventItem last_{0, 0};
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
