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

#include "engines/packet/event_queue.h"
#include "engines/packet/sim.h"

namespace scin::packet {

class OutputQueue {
 public:
  /// A packet of `wire` bytes enters the buffer at `ready` and leaves it at `start`.
  void push(Ps ready, Ps start, std::uint32_t wire) {
    ++pushes_;
    out_.push_back(Entry{ready, start, wire});
    if (arrived_ + 1 == out_.size()) ta_next_ = ready;
  }

  /// Replays arrivals into and departures from the buffer up to time t, in time
  /// order (departures first at equal times), tracking depth and its peak.
  void drain(Ps t) {
    // ta_next_ / td_next_ cache the two candidates, so the usual call (nothing
    // to replay) touches no entry. The replay works on local copies (the
    // entries' loads cannot then make the compiler reload the members) and
    // writes them back once.
    Ps ta = ta_next_, td = td_next_;
    if (std::min(ta, td) > t || (ta == kNever && td == kNever)) return;
    std::size_t arrived = arrived_;
    std::uint64_t bytes = bytes_, peak = peak_;
    for (;;) {
      if (td <= ta) {
        bytes -= out_.front().wire;
        out_.pop_front();
        --arrived;
      } else {
        bytes += out_[arrived].wire;
        peak = std::max(peak, bytes);
        ++arrived;
        ta = arrived < out_.size() ? out_[arrived].ready : kNever;
      }
      td = arrived > 0 ? out_.front().start : kNever;
      if (std::min(ta, td) > t || (ta == kNever && td == kNever)) break;
    }
    ta_next_ = ta, td_next_ = td;
    arrived_ = arrived;
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
  Ps next_departure(Ps now) const { return arrived_ > 0 ? td_next_ : now; }

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
  // Entries [0, arrived_) are in the buffer at the last drain time, the rest still crossing the switch.
  Ring<Entry> out_;
  std::size_t arrived_ = 0;
  Ps ta_next_ = kNever;  // ready of out_[arrived_] (next arrival)
  Ps td_next_ = kNever;  // start of out_.front() if arrived_ > 0 (next departure)
  std::uint64_t bytes_ = 0, peak_ = 0, pushes_ = 0;
};

}  // namespace scin::packet
