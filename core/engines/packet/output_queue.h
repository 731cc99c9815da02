// A switch output queue feeding one downlink.
//
// It is a FIFO server that makes no decision, so each packet's start on the
// link is computed when it enters (Wire::send) and no event is needed per
// packet; the queue depth is replayed lazily, in time order, when someone asks
// for room. Feeders that find it full wait in turn (round-robin): while some
// wait, only the one being served may take the room that frees.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>

#include "engines/packet/event_queue.h"
#include "engines/packet/sim.h"

namespace scin::packet {

class OutputQueue {
 public:
  /// A packet of `wire` bytes enters the buffer at `ready` and leaves it at `start`.
  void push(Ps ready, Ps start, std::uint32_t wire) {
    ++pushes_;
    if (tail_ - head_ == mask_ + 1u) [[unlikely]]  // full (or no storage yet: mask_ + 1 wraps to 0)
      grow();
    if (arr_ == tail_) ta_next_ = ready;  // it is the next arrival
    buf_[tail_ & mask_] = Entry{ready, start, wire};
    ++tail_;
  }

  /// Replays arrivals into and departures from the buffer up to time t, in time
  /// order (departures first at equal times), tracking depth and its peak.
  void drain(Ps t) {
    // ta_next_ / td_next_ cache the two candidates, so the usual call (nothing
    // to replay) touches no entry. The replay works on local copies (the
    // entries' loads cannot then make the compiler reload the members) and
    // writes them back once. (t < kNever, so an empty queue, ta == td ==
    // kNever, stops the replay by the test min(ta, td) > t alone.)
    t = std::min(t, kNever - 1);
    Ps ta = ta_next_, td = td_next_;
    if (std::min(ta, td) > t) return;
    const Entry* b = buf_.get();
    const std::uint32_t m = mask_, tail = tail_;
    std::uint32_t head = head_, arr = arr_;
    std::uint64_t bytes = bytes_, peak = peak_;
    for (;;) {
      if (td <= ta) {  // the front leaves
        if (td > t) break;
        bytes -= b[head & m].wire;
        ++head;
        td = head != arr ? b[head & m].start : kNever;
      } else {         // the next one arrives
        if (ta > t) break;
        const Entry& e = b[arr & m];
        bytes += e.wire;
        peak = std::max(peak, bytes);
        if (head == arr) td = e.start;  // (it is the front now)
        ++arr;
        ta = arr != tail ? b[arr & m].ready : kNever;
      }
    }
    ta_next_ = ta, td_next_ = td;
    head_ = head, arr_ = arr;
    bytes_ = bytes, peak_ = peak;
  }

  /// Room for `wire` more bytes at `now` (after draining to it) under `cap`.
  bool has_room(Ps now, std::uint64_t wire, std::uint64_t cap) {
    drain(now);
    return bytes_ + wire <= cap;
  }
  /// Bytes of room at `now` (after draining to it) under `cap`.
  std::uint64_t room(Ps now, std::uint64_t cap) {
    drain(now);
    return bytes_ >= cap ? 0 : cap - bytes_;
  }

  /// When the buffer next loses a packet (as of the last drain), or `now` if it holds none.
  Ps next_departure(Ps now) const { return arr_ != head_ ? td_next_ : now; }

  std::uint64_t bytes() const { return bytes_; }
  std::uint64_t peak_bytes() const { return peak_; }
  std::uint64_t pushes() const { return pushes_; }

  // Feeders blocked on this queue, served in turn, and the pending room event.
  Ring<Feeder> waiters;
  Ps room_at = kNever;
  std::uint64_t room_gen = 0;

 private:
  struct Entry {
    Ps ready;  // enters the buffer (after crossing the switch)
    Ps start;  // starts serialising on the link (leaves the buffer)
    std::uint32_t wire;
  };
  [[gnu::noinline]] void grow() {
    const std::uint32_t n = tail_ - head_;
    const std::size_t cap = buf_ ? 2 * (static_cast<std::size_t>(mask_) + 1) : 16;
    std::unique_ptr<Entry[]> nb(new Entry[cap]);
    for (std::uint32_t i = 0; i < n; ++i) nb[i] = buf_[(head_ + i) & mask_];
    buf_ = std::move(nb);
    arr_ -= head_;
    head_ = 0;
    tail_ = n;
    mask_ = static_cast<std::uint32_t>(cap - 1);
  }
  // A ring of entries by running counters (positions are counter & mask_):
  // [head_, arr_) are in the buffer at the last drain time, [arr_, tail_)
  // still crossing the switch.
  std::unique_ptr<Entry[]> buf_;
  std::uint32_t mask_ = ~std::uint32_t{0};  // capacity - 1 (no storage: capacity 0)
  std::uint32_t head_ = 0, arr_ = 0, tail_ = 0;
  Ps ta_next_ = kNever;  // ready of the entry at arr_ (next arrival)
  Ps td_next_ = kNever;  // start of the entry at head_ if it has arrived (next departure)
  std::uint64_t bytes_ = 0, peak_ = 0, pushes_ = 0;
};

}  // namespace scin::packet
