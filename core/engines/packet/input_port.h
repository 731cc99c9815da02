// A switch input port with credit-based back-pressure.
//
// One FIFO per traffic class (0: writes, 1: read responses) in one buffer, and
// credits per class (virtual channels): the sender may start a packet of a
// class only if that class's bytes on the wire plus in the port leave room for
// it; the credits return when the packet leaves the port. A write waiting for a
// full output queue does not hold up the responses behind it, and vice versa.
#pragma once

#include <algorithm>
#include <cstdint>

#include "engines/packet/event_queue.h"
#include "engines/packet/sim.h"

namespace scin::packet {

class InputPort {
 public:
  static constexpr int kWrites = 0, kResponses = 1;

  /// May the sender start a packet of `wire` bytes of class `cls`?
  bool has_credit(int cls, std::uint64_t wire, std::uint64_t cap) const { return used_[cls] + wire <= cap; }
  /// The sender starts the packet: its credits are taken until it leaves the port.
  void take_credit(int cls, std::uint64_t wire) { used_[cls] += wire; }
  /// The packet's header reaches the port.
  void arrive(int cls, const Queued& q, std::uint64_t wire) {
    fifo_[cls].push_back(q);
    bytes_ += wire;
    peak_ = std::max(peak_, bytes_);
  }
  /// A packet of class `cls` arrives while the class is empty and not blocked
  /// and is forwarded at once (Engine::pipe_event): arrive() without the FIFO.
  /// Then either passed() (it went: leave() without the FIFO) or wait() (it
  /// must wait: it enters the FIFO, whose bytes already count it).
  void pass(int /*cls*/, std::uint64_t wire) {
    bytes_ += wire;
    peak_ = std::max(peak_, bytes_);
  }
  void passed(int cls, std::uint64_t wire) {
    bytes_ -= wire;
    used_[cls] -= wire;
  }
  void wait(int cls, const Queued& q) { fifo_[cls].push_back(q); }
  bool empty(int cls) const { return fifo_[cls].empty(); }
  const Queued& front(int cls) const { return fifo_[cls].front(); }
  /// The head of class `cls` moves on: its buffer space and credits return.
  void leave(int cls, std::uint64_t wire) {
    fifo_[cls].pop_front();
    bytes_ -= wire;
    used_[cls] -= wire;
  }
  std::uint64_t credits_used(int cls) const { return used_[cls]; }

  // Two tiers (tiers.cc): no FIFO; a packet holds its credits from its start on
  // the link until it starts on its next link (or is reduced), and the port's
  // peak is the credits in use (bytes on the wire or in the buffer), which
  // touches no line but this one per packet.
  void hold(int cls, std::uint64_t wire) {
    used_[cls] += wire;
    peak_ = std::max(peak_, used_[0] + used_[1]);
  }
  /// Gives the credits back; true if the sender was waiting for credits.
  bool unhold(int cls, std::uint64_t wire) {
    used_[cls] -= wire;
    const bool waited = sender_waits;
    sender_waits = false;
    return waited;
  }
  std::uint64_t bytes() const { return bytes_; }
  std::uint64_t peak_bytes() const { return peak_; }

  // Laid out for Link (link.h): the FIFOs first (a class's FIFO holds packets
  // only while it is blocked; the responses' size is read by the ISA fast path),
  // the per-packet fields after them, so that `fifo_[1]` and those share a line.
 private:
  Ring<Queued> fifo_[2];

 public:
  bool blocked[2] = {false, false};  // the class's head waits (for an output queue or the ISA)
  bool sender_waits = false;         // two tiers: the link's sender waits for credits (unhold())

 private:
  std::uint64_t used_[2] = {0, 0};
  std::uint64_t bytes_ = 0, peak_ = 0;
};

}  // namespace scin::packet
