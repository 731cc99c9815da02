// A link direction and what hangs off it.
//
// Wire: the pipe proper. It serialises packets one after another (payload +
// header at the raw rate, plus a per-packet gap that spends what is left of the
// efficiency: the flow says how much), and each packet's head reaches the far
// end latency after it started (its tail one serialisation later).
//
// Sender: an accelerator's side of its link. Two traffic classes share it
// round-robin, as virtual channels do: read responses, oldest request first (a
// memory answers in arrival order), and the accelerator's own writes, served
// round-robin between the steps that write.
//
// Link: an uplink (accelerator -> switch plane: Wire, Sender, the packets in
// flight and the switch input port), a downlink (switch plane -> accelerator:
// Wire and the switch output queue) or a direct mesh link (Wire and Sender).
#pragma once

#include <cstdint>
#include <vector>

#include "engines/packet/event_queue.h"
#include "engines/packet/input_port.h"
#include "engines/packet/output_queue.h"
#include "engines/packet/sim.h"

namespace scin::packet {

struct LinkStats {
  std::uint64_t payload_bytes = 0, wire_bytes = 0, packets = 0;
  Ps busy_ps = 0;          // time spent serialising
  Ps credit_stall_ps = 0;  // uplink: time the sender had a packet but no credit
};

class Wire {
 public:
  Ps latency = 0;
  Ps busy_until = 0;
  LinkStats stats;

  /// Serialises a packet of `payload` bytes (`wire` bytes with its header)
  /// taking `dur`, from max(ready, busy_until). Returns its start; `ser` is
  /// the serialisation in whole ps (remainders carried to the next packet).
  Ps send(Ps ready, Fine dur, std::uint32_t payload, std::uint64_t wire, Ps& ser) {
    const Ps start = std::max(ready, busy_until);
    ser = carry_.add(dur);
    busy_until = start + ser;
    stats.payload_bytes += payload;
    stats.wire_bytes += wire;
    ++stats.packets;
    stats.busy_ps += ser;
    return start;
  }

 private:
  Carry carry_;
};

struct Sender {
  std::vector<std::uint32_t> writes;     // write sources, round-robin; all ready when added
  std::size_t rr = 0;
  std::vector<std::uint32_t> responses;  // mesh read responses, each ready from its own time (few)
  struct Requested {
    Ps ready;
    std::uint32_t source;
  };
  Ring<Requested> requested;             // responses requested from this accelerator, in ready order
  bool last_read = false;                // class served last
  bool credit_blocked = false;
  Ps blocked_since = 0;
  Ps next_wake = kNever;                 // pending wake-up and its generation (EventQueue::push's number)
  std::uint64_t wake_gen = 0;

  bool idle() const { return writes.empty() && responses.empty() && requested.empty(); }
  /// A memory answers requests in the order they reach it: keep the FIFO
  /// ordered by ready time (stable; requests almost always arrive in order).
  void request(const Requested& r) {
    requested.push_back(r);
    for (std::size_t k = requested.size() - 1; k > 0 && requested[k - 1].ready > r.ready; --k) {
      requested[k] = requested[k - 1];
      requested[k - 1] = r;
    }
  }
};

struct Link {
  enum Kind : std::uint8_t { Up, Down, Direct, Trunk } kind = Up;
  int gpu = 0, other = 0;  // other: plane (Up/Down) or peer (Direct); Trunk: from and to switch nodes
  // Two-tier fabrics (tiers.cc): every link is a hop; packets it forwards wait in `transit`.
  NodeId to = kNoNode;
  double scale = 1;        // wire time relative to an accelerator port (trunks differ)
  Ring<Queued> transit;    // forwarded packets, by ready time
  Wire wire;
  OutputQueue out;         // Down: the switch output queue feeding it
  Sender tx;               // Up / Direct
  Ring<Queued> pipe;       // Up: packets on the wire (header arrival times)
  InputPort in;            // Up: the switch input port at the far end
};

}  // namespace scin::packet
