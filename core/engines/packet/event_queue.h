// Deterministic event queue for the packet engine.
//
// An event is (time in ps, key): `key` packs a monotonically increasing insertion
// counter (upper 40 bits) with the target component (lower 24 bits), so the
// queue orders by time and, at equal times, by insertion order. Same inputs,
// same order, bit for bit. Events carry no payload: components keep their own
// state (htsim's trick: a link's in-flight packets sit in its own ring and only
// the head is in the queue), so it holds O(components), not O(packets).
//
// Pending events share few distinct times: links and pipes of a fabric run in
// lock step, so 95-99.9% of pushes land on a time that already has pending
// events and a run keeps 2-4 distinct times pending (ring, SCIN; NVLS up to a
// few hundred: its read returns). The queue therefore holds one FIFO of keys
// per distinct time (TimeGroups), sorted by time; a heap / radix heap takes
// over only when the distinct times exceed TimeGroups::kMaxGroups.
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

/// Pending events as one FIFO of keys per distinct time, the times in a sorted
/// array. A push appends its key to its time's FIFO (the insertion counter only
/// grows, so each FIFO stays in key order); a pop takes the head of the least
/// time's FIFO. So the pops come in (time, key) order, exactly as a heap's do,
/// and the usual push or pop is a compare and an append or a read: no sifting.
/// A push at the time of the previous push (60-99.9% of them) needs no search.
/// Inserting a new time shifts the later ones; with thousands of distinct times
/// that would cost more than a heap, so push() refuses (returns false) to make
/// a group beyond kMaxGroups and the caller moves to a heap.
class TimeGroups {
 public:
  static constexpr std::size_t kMaxGroups = 1024;

  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }
  std::size_t groups() const { return order_.size() - lo_; }

  /// Appends `e` (its key above every pending key of its time); false, and
  /// nothing done, if that needs a new time beyond kMaxGroups.
  bool push(const EventItem& e) {
    if (push_pending_time(e)) return true;
    return push_new_time(e);
  }
  /// push() when `e` is at a pending time that needs no search: the previous
  /// push's (its FIFO still pending) or one the cache holds (cache_). False,
  /// and nothing done, otherwise. Inline: it is most pushes.
  [[gnu::always_inline]] bool push_pending_time(const EventItem& e) {
    std::uint32_t fi = last_f_;
    if (e.t != last_t_) [[unlikely]] {
      const Cached& c = cache_[slot(e.t)];
      if (c.t != e.t) return false;
      fi = c.f;
      last_t_ = e.t;
      last_f_ = fi;
    }
    fifos_[fi].keys.push_back(e.key);
    ++size_;
    return true;
  }
  /// push() when push_pending_time() refused: a pending time the cache does
  /// not hold, or a new time (beyond kMaxGroups: false, nothing done).
  [[gnu::noinline]] inline bool push_new_time(const EventItem& e);

  /// The least pending (time, key); the queue must not be empty.
  EventItem pop() {
    const Group g = order_[lo_];
    Fifo& f = fifos_[g.f];
    const EventItem out{g.t, f.keys[f.head]};
    --size_;
    if (++f.head == f.keys.size()) drop_front();
    return out;
  }

  /// Appends every pending event, in (time, key) order, to `out` and empties this.
  void drain_to(std::vector<EventItem>& out) {
    for (std::size_t i = lo_; i < order_.size(); ++i) {
      Fifo& f = fifos_[order_[i].f];
      for (std::size_t k = f.head; k < f.keys.size(); ++k) out.push_back(EventItem{order_[i].t, f.keys[k]});
      f.keys.clear();
      f.head = 0;
      free_.push_back(order_[i].f);
    }
    order_.clear();
    lo_ = 0;
    size_ = 0;
    last_t_ = kNoTime;
    for (Cached& c : cache_) c.t = kNoTime;
  }

 private:
  static constexpr std::uint64_t kNoTime = ~std::uint64_t{0};  // no event time (those are < 2^63)
  struct Group {
    std::uint64_t t;
    std::uint32_t f;  // index in fifos_
  };
  // A time's keys: keys[head..] pending, in key order. (Its own array, not a
  // std::vector: push_back stays a compare and a store where it is inlined.)
  struct Keys {
    std::unique_ptr<std::uint64_t[]> buf;
    std::size_t n = 0, cap = 0;
    std::size_t size() const { return n; }
    std::uint64_t operator[](std::size_t i) const { return buf[i]; }
    void clear() { n = 0; }
    [[gnu::always_inline]] void push_back(std::uint64_t k) {
      if (n == cap) [[unlikely]]
        grow();
      buf[n++] = k;
    }
    [[gnu::noinline]] void grow() {
      cap = cap ? 2 * cap : 16;
      std::unique_ptr<std::uint64_t[]> nb(new std::uint64_t[cap]);
      for (std::size_t i = 0; i < n; ++i) nb[i] = buf[i];
      buf = std::move(nb);
    }
  };
  struct Fifo {
    Keys keys;  // keys[head..] pending, in key order
    std::size_t head = 0;
  };

  // The front time's FIFO is empty: free it and move on to the next time.
  [[gnu::noinline]] void drop_front() {
    const std::uint32_t fi = order_[lo_].f;
    Fifo& f = fifos_[fi];
    f.keys.clear();
    f.head = 0;
    free_.push_back(fi);
    if (Cached& c = cache_[slot(order_[lo_].t)]; c.t == order_[lo_].t) c.t = kNoTime;  // no longer pending
    if (fi == last_f_) last_t_ = kNoTime;
    if (++lo_ == order_.size()) {
      order_.clear();
      lo_ = 0;
    } else if (lo_ >= 64 && 2 * lo_ >= order_.size()) {
      order_.erase(order_.begin(), order_.begin() + static_cast<std::ptrdiff_t>(lo_));
      lo_ = 0;
    }
  }

  // Pending times by a hash of the time (direct-mapped, one per slot): a hit
  // is a pending time and its FIFO; an entry goes when its time's FIFO is
  // freed (drop_front, drain_to).
  static constexpr std::size_t kCacheSlots = 64;
  struct Cached {
    std::uint64_t t = kNoTime;
    std::uint32_t f = 0;
  };
  static std::size_t slot(std::uint64_t t) { return static_cast<std::size_t>((t * 0x9E3779B97F4A7C15ull) >> 58); }
  Cached cache_[kCacheSlots];

  std::vector<Group> order_;  // pending times, ascending, from lo_
  std::size_t lo_ = 0;
  std::vector<Fifo> fifos_;   // pool; free_ lists the unused ones
  std::vector<std::uint32_t> free_;
  std::uint64_t last_t_ = kNoTime;  // the time of the last push while its FIFO is pending, and that FIFO
  std::uint32_t last_f_ = 0;
  std::size_t size_ = 0;
};

bool TimeGroups::push_new_time(const EventItem& e) {  // (inline: declared so)
  Cached& c = cache_[slot(e.t)];
  // Where e.t belongs among the pending times [lo_, hi): usually at or near the back.
  const std::size_t hi = order_.size();
  std::size_t at = hi;
  while (at > lo_ && order_[at - 1].t > e.t) {
    if (at - lo_ > 8) {  // far from the back: binary search
      std::size_t a = lo_, b = at - 1;  // order_[b].t > e.t
      while (a < b) {
        const std::size_t m = a + (b - a) / 2;
        if (order_[m].t > e.t) b = m;
        else a = m + 1;
      }
      at = a;
      break;
    }
    --at;
  }
  std::uint32_t fi;
  if (at > lo_ && order_[at - 1].t == e.t) {
    fi = order_[at - 1].f;
    c = Cached{e.t, fi};  // (in place of its slot's previous time)
  } else {
    if (hi - lo_ >= kMaxGroups) return false;
    if (free_.empty()) {
      fi = static_cast<std::uint32_t>(fifos_.size());
      fifos_.emplace_back();
    } else {
      fi = free_.back();
      free_.pop_back();
    }
    const Group g{e.t, fi};
    c = Cached{e.t, fi};  // (in place of its slot's previous time, which the search still finds)
    if (at == hi) {
      order_.push_back(g);
    } else if (at == lo_ && lo_ > 0) {
      order_[--lo_] = g;
    } else {
      order_.insert(order_.begin() + static_cast<std::ptrdiff_t>(at), g);
    }
  }
  fifos_[fi].keys.push_back(e.key);
  last_t_ = e.t;
  last_f_ = fi;
  ++size_;
  return true;
}

}  // namespace detail

/// The engine's event queue, ordered by (time, insertion counter): one FIFO
/// per distinct pending time (TimeGroups) while at most TimeGroups::kMaxGroups
/// times are pending; beyond that a 4-ary heap, which hands over to a radix
/// heap above 1024 pending events (back below 256; the 4-ary heap's depth and
/// cache misses grow with the pending set, the radix heap's cost does not) and
/// back to the groups at kToGroups pending. Each returns the least pending
/// event, so the order is the same whichever holds them.
class EventQueue {
 public:
  static constexpr std::uint32_t kMaxTarget = 0xffffffu;
  static constexpr std::size_t kToRadix = 1024, kToHeap = 256, kToGroups = 64;
  enum class Mode : std::uint8_t { Groups, Heap, Radix };

  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }
  /// Which structure holds the pending events (for tests).
  Mode mode() const { return mode_; }

  /// Schedules `target` at `t` (>= the time of the last event popped); returns the event's insertion number.
  /// Inline: a push at the previous push's time (most of them) is a compare and
  /// an append; the rest is push_slow.
  [[gnu::always_inline]] std::uint64_t push(Ps t, std::uint32_t target) {
    const std::uint64_t seq = seq_++;
    const detail::EventItem e{static_cast<std::uint64_t>(t), (seq << 24) | target};
    ++size_;
    if (mode_ == Mode::Groups && groups_.push_pending_time(e)) [[likely]]
      return seq;
    push_slow(e);
    return seq;
  }

  /// The least pending event (the queue must not be empty).
  Event pop() {
    --size_;
    if (mode_ == Mode::Groups) [[likely]] {
      last_ = groups_.pop();
    } else if (mode_ == Mode::Radix) {
      last_ = radix_.pop();
      if (radix_.size() < kToHeap) {
        radix_.drain_to(heap_);
        mode_ = Mode::Heap;
      }
    } else {
      last_ = heap_.pop();
      if (heap_.size() <= kToGroups) {
        // Back to the groups, in order (each push lands at or after the last time).
        while (!heap_.empty()) {
          const bool ok = groups_.push(heap_.pop());
          (void)ok;  // at most kToGroups < kMaxGroups times
        }
        mode_ = Mode::Groups;
      }
    }
    return Event{static_cast<Ps>(last_.t), last_.key};
  }

 private:
  [[gnu::noinline]] void push_slow(const detail::EventItem& e) {
    if (mode_ == Mode::Groups) {
      if (groups_.push_new_time(e)) return;
      // Too many distinct times: the groups, in order, are a valid heap as they stand.
      groups_.drain_to(heap_.items());
      mode_ = Mode::Heap;
    }
    if (mode_ == Mode::Radix) {
      radix_.push(e);
    } else {
      heap_.push(e);
      if (heap_.size() > kToRadix) {
        radix_.set_last(last_);
        for (const auto& x : heap_.items()) radix_.push(x);
        heap_.items().clear();
        mode_ = Mode::Radix;
      }
    }
  }

  detail::TimeGroups groups_;
  detail::Heap4 heap_;
  detail::RadixQueue radix_;
  Mode mode_ = Mode::Groups;
  detail::EventItem last_{0, 0};
  std::uint64_t seq_ = 0;
  std::size_t size_ = 0;  // pending events, whichever structure holds them
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
  const T& operator[](std::size_t i) const { return buf_[(head_ + i) & mask_]; }
  void pop_front() {
    head_ = (head_ + 1) & mask_;
    --size_;
  }
  [[gnu::always_inline]] void push_back(const T& v) {
    if (size_ == mask_ + 1u) [[unlikely]]  // full (or no storage yet: mask_ + 1 wraps to 0)
      grow();
    buf_[(head_ + size_) & mask_] = v;
    ++size_;
  }
  /// push_back for a FIFO that keeps its front's only up-to-date copy outside
  /// the ring (Sender::head) and appends `v` to an empty ring: the ring only
  /// counts it (`v` is never read from here), so its slot is not written (at
  /// scale a store to a line long evicted). Fresh storage is written once, so a
  /// later grow() copies defined values.
  [[gnu::always_inline]] void push_back_front(const T& v) {
    if (size_ == mask_ + 1u) [[unlikely]] {  // full (or no storage yet: mask_ + 1 wraps to 0)
      grow();
      buf_[(head_ + size_) & mask_] = v;
    }
    ++size_;
  }
  void clear() { head_ = size_ = 0; }

 private:
  std::size_t capacity() const { return buf_ ? static_cast<std::size_t>(mask_) + 1 : 0; }
  [[gnu::noinline]] void grow() {
    const std::size_t cap = buf_ ? capacity() * 2 : 16;
    std::unique_ptr<T[]> nb(new T[cap]);
    for (std::size_t i = 0; i < size_; ++i) nb[i] = std::move(buf_[(head_ + i) & mask_]);
    buf_ = std::move(nb);
    head_ = 0;
    mask_ = static_cast<std::uint32_t>(cap - 1);
  }
  std::unique_ptr<T[]> buf_;
  std::uint32_t head_ = 0, size_ = 0, mask_ = ~std::uint32_t{0};  // capacity - 1 (no storage: capacity 0)
};

}  // namespace scin::packet
