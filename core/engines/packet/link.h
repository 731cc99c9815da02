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

#include <algorithm>
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

// The NVLS ld_reduce groups issued on one plane whose requests go to every
// accelerator's uplink of that plane, each as a packet entry (see Sender): the
// flow reads every accelerator a (source slot a) and every source has this
// group's packet as its only one on the plane. An ld_reduce at 1024
// accelerators put 1024 such entries in each of 1024 FIFOs (16 MB live: a
// cache miss written and one read per response); the log keeps one entry per
// group and each uplink a cursor into it. Ready times are the issue time plus
// one constant, so the log is in ready order as well as in arrival order.
struct GroupLog {
  struct Entry {
    Ps ready;
    std::uint32_t flow;
    std::uint32_t grp;
    std::uint32_t left;  // uplinks that have not sent their response yet
  };
  Ring<Entry> entries;
  std::uint64_t base = 0;  // entries dropped so far: entries.front() is number `base`
  std::uint64_t taken = 0; // entries moved into an uplink's FIFO before a request (LogCursor::take; for tests)
  std::uint64_t end() const { return base + entries.size(); }
  Entry& at(std::uint64_t i) { return entries[static_cast<std::size_t>(i - base)]; }
  const Entry& at(std::uint64_t i) const { return entries[static_cast<std::size_t>(i - base)]; }
  void append(Ps ready, std::uint32_t flow, std::uint32_t grp, std::uint32_t links) {
    entries.push_back(Entry{ready, flow, grp, links});
  }
  /// Entry i was sent by one more uplink; entries every uplink has sent are dropped.
  void served(std::uint64_t i) {
    if (--at(i).left != 0) return;
    while (!entries.empty() && entries.front().left == 0) {
      entries.pop_front();
      ++base;
    }
  }
};

struct Sender {
  // Responses requested from this accelerator, in ready order, as runs of
  // equal requests: an ISA port asks for all its packets of a read at one
  // instant (up to max_outstanding_bytes), so one entry often stands for
  // hundreds. The order served is that of one entry per request.
  //
  // A packet entry (count's kPacket bit) carries its one packet instead of
  // naming a Source: an NVLS ld_reduce at 1024 accelerators reads one packet
  // from each of 1024 sources per reader, and a Source per response (a million
  // live, 48 MB) was a pool entry written, then read again (a cache miss) when
  // the response is sent. Its `source` is the packet's flow, its count holds
  // the slot (bits 0-15) and the packet index (bits 16-30); it is never merged.
  static constexpr std::uint32_t kPacket = 0x80000000u;
  struct Requested {
    Ps ready;
    std::uint32_t source;     // a Source; a packet entry: its FlowId
    std::uint32_t count = 1;  // equal requests in this run; a packet entry: kPacket | index << 16 | slot
    bool packet() const { return (count & kPacket) != 0; }
    std::uint16_t slot() const { return static_cast<std::uint16_t>(count & 0xffffu); }
    std::uint32_t index() const { return (count >> 16) & 0x7fffu; }
  };
  static constexpr std::uint32_t kMaxPacketIndex = 0x7fffu;
  Ring<Requested> requested;
  Requested head{kNever, 0, 0};          // requested's front while not empty, and the only up-to-date copy of
                                         // it: read with the link's own lines (the FIFO's storage is a cache
                                         // miss of its own at scale)
  Ps next_wake = kNever;                 // pending wake-up and its generation (EventQueue::push's number)
  std::uint64_t wake_gen = 0;
  std::uint8_t wpos = 0, nwin = 0;       // the window below
  bool last_read = false;                // class served last
  bool credit_blocked = false;
  std::uint32_t own = 0;                 // writes.size() + responses.size() (add, drop_response, next_write)
  // (The fields above are Sender's first 64 bytes, a cache line in Link (its
  // layout counts on it): all that a requested response reads, `own` telling
  // that there are no others. A write reads the next line too.)
  std::vector<std::uint32_t> writes;     // write sources, round-robin; all ready when added
  std::vector<std::uint32_t> responses;  // mesh read responses, each ready from its own time (few)
  std::uint32_t rr = 0;                  // writes' round-robin pointer
  // (Read on a credit stall, and once per kWin + 1 requested responses.)
  Ps blocked_since = 0;
  // The entries after the head, copied with it from the ring when the head
  // moves on and the window is spent: win[wpos, wpos + nwin) are requested[1 ..
  // nwin]. One load of the ring's storage (a miss once the FIFO is long: an NVLS
  // ld_reduce at 1024 accelerators queues 1024 requests on every link) serves
  // kWin + 1 sends, not one. The ring stays the authority: request() drops the
  // window when it writes an entry the window holds.
  static constexpr std::uint32_t kWin = 3;
  Requested win[kWin];

  bool idle() const { return writes.empty() && responses.empty() && requested.empty(); }
  /// Source `sid` joins the writes or (`response`) the mesh read responses.
  void add(std::uint32_t sid, bool response) {
    (response ? responses : writes).push_back(sid);
    ++own;
  }
  /// Mesh read response k has sent its last packet: it leaves the list.
  void drop_response(std::size_t k) {
    responses.erase(responses.begin() + static_cast<std::ptrdiff_t>(k));
    --own;
  }
  /// The write at the round-robin pointer has sent a packet (`done`: its last):
  /// it leaves the list, or the pointer moves on.
  void next_write(bool done) {
    if (done) {
      --own;
      writes.erase(writes.begin() + static_cast<std::ptrdiff_t>(rr));
      if (rr >= writes.size()) rr = 0;
    } else if (++rr == writes.size()) {
      rr = 0;
    }
  }
  /// No credit at the switch input port: the stall starts now (if it had not).
  void credit_stalled(Ps now) {
    if (!credit_blocked) {
      credit_blocked = true;
      blocked_since = now;
    }
  }
  /// Credit again: a stall in progress ends now and is added to `stall_ps`.
  void credit_resumed(Ps now, Ps& stall_ps) {
    if (credit_blocked) {
      credit_blocked = false;
      stall_ps += now - blocked_since;
    }
  }
  /// A memory answers requests in the order they reach it: keep the FIFO
  /// ordered by ready time (stable; requests almost always arrive in order).
  void request(Ps ready, std::uint32_t source) {
    const std::size_t n = requested.size();
    if (n > 0) {
      Requested& last = n == 1 ? head : requested.back();
      if (last.ready == ready && last.source == source && last.count < kPacket - 1) {  // (not a packet entry)
        ++last.count;
        if (n - 1 <= nwin) nwin = 0;  // the window held it (n - 1 >= 1 here, as n == 1 is the head)
        return;
      }
      if (last.ready <= ready) {  // in order (the usual case): insert() would move nothing
        requested.push_back(Requested{ready, source, 1});
        return;
      }
    }
    insert(Requested{ready, source, 1});
  }
  /// A request for packet `index` (<= kMaxPacketIndex) of read flow `flow`'s
  /// source `slot`, that source's only packet on this link: a packet entry.
  void request_packet(Ps ready, std::uint32_t flow, std::uint16_t slot, std::uint32_t index) {
    insert(Requested{ready, flow, kPacket | index << 16 | slot});
  }
  /// Appends r and moves it ahead of the entries ready later (stable).
  void insert(const Requested r) {
    const std::size_t n = requested.size();
    if (n == 0) {  // (an NVLS group log's entry, mostly: LogCursor::pull, one per response at 1024 accelerators)
      // The head alone: its slot in the ring is never read (`head` is the front's
      // only copy; every reader takes index 0 from `head`), so it is not written.
      requested.push_back_front(r);
      head = r;
      nwin = 0;
      return;
    }
    const Ps ready = r.ready;
    requested.push_back(r);
    std::size_t k = n;
    for (; k > 0; --k) {
      const Requested prev = k == 1 ? head : requested[k - 1];
      if (prev.ready <= ready) break;
      requested[k] = prev;
      requested[k - 1] = r;
    }
    if (k == 0) head = r;
    if (k <= nwin) nwin = 0;  // entries k .. n moved, and the window held some of them
  }
  /// The head response is sent.
  void pop_request() {
    if (!head.packet() && --head.count > 0) return;
    requested.pop_front();
    if (requested.empty()) {
      nwin = 0;
      return;
    }
    if (nwin > 0) {  // the window's first entry is the new front
      head = win[wpos++];
      --nwin;
      return;
    }
    head = requested.front();
    const std::size_t m = std::min<std::size_t>(kWin, requested.size() - 1);
    for (std::size_t j = 0; j < m; ++j) win[j] = requested[j + 1];
    wpos = 0;
    nwin = static_cast<std::uint8_t>(m);
    // The entry the next refill reads, on its way meanwhile (a link serves its
    // next kWin + 1 responses thousands of events apart at 1024 accelerators).
    if (requested.size() > m + 1) __builtin_prefetch(&requested[m + 1]);
  }
};

// A star uplink's place in its plane's group log (Link::cursor, apart from the
// Sender; a run without a log, as any whose reads have several packets per
// source and plane, never reads it): the log (null until the plane's log has
// had an entry), the next of its entries this link sends,
// and the link's source slot in them (its accelerator). The log's entries and
// the FIFO's are served as the one FIFO in ready order of the Sender would
// serve them: by ready time, then by arrival. The log's entries this link has
// not sent always came after every entry of its FIFO: before a request joins
// the FIFO (Sender::request, request_packet) the engine moves them into it as
// packet entries (take; rare: an uplink gets its own requests and group
// entries together only when a run mixes such reads), so a tie goes to the
// FIFO. Before the link picks its next packet, the log's next entry joins the
// FIFO as its head if it is ready sooner than the head (pull), so the FIFO's
// head is the next request of all and the FIFO holds a few entries, not one
// per group.
struct LogCursor {
  GroupLog* log = nullptr;
  std::uint64_t next = 0;
  std::uint16_t slot = 0;

  bool pending() const { return log != nullptr && next < log->end(); }
  /// The log's entry `next` goes before the FIFO's head (or the FIFO is empty).
  bool goes_first(const Sender& tx) const {
    return pending() && (tx.requested.empty() || log->at(next).ready < tx.head.ready);
  }
  /// The log's entry `next` joins the FIFO as a packet entry (in ready order,
  /// after the entries ready at the same time: they came first).
  void to_fifo(Sender& tx) {
    const GroupLog::Entry e = log->at(next);
    tx.insert(Sender::Requested{e.ready, e.flow, Sender::kPacket | e.grp << 16 | slot});
    log->served(next++);
  }
  /// If the log's next entry is the next request of all, it becomes the FIFO's head.
  [[gnu::noinline]] bool pull(Sender& tx) {
    if (!goes_first(tx)) return false;
    to_fifo(tx);
    return true;
  }
  /// Every log entry not sent yet joins the FIFO (in log order, which is ready
  /// order), as if each had been requested when made: before a request joins it.
  [[gnu::noinline]] void take(Sender& tx) {
    while (pending()) {
      ++log->taken;
      to_fifo(tx);
    }
  }
};

// A packet waiting in a two-tier switch's output queues (tiers.cc), one record
// for all its copies: a multicast's copies (up to a leaf's accelerators and
// uplinks) wait in as many queues, each of which holds the record's index
// (Link::transit), not the packet. It holds its room in the input buffer it
// came through (`in`'s credits) until its last copy starts on its link.
struct Held {
  static constexpr std::uint32_t kNone = ~std::uint32_t{0};
  Pkt p;
  Ps t = 0;                    // ready to leave (it has crossed the switch)
  std::uint32_t in = kNone;    // the link whose far-end buffer it holds (kNone: a reduction's result)
  std::uint32_t copies = 0;    // copies not started yet
};
static_assert(sizeof(Held) == 32);

// Laid out by use (offsets in PacketLink.HotFieldsInTheirCacheLines): an
// uplink's per-packet state in lines 0, 1, 3, 4 and 5 (its Wire; kind, plane,
// pipe and group-log cursor; the input port's per-packet fields with the
// responses' FIFO; the Sender's per-packet fields), a downlink's in lines 0, 7
// and 8 (its Wire and output queue); a requested response (an NVLS
// ld_reduce's or an ISA read's, most events at scale) reads lines 0, 1, 3 and
// 4 only (the Sender's first line). Line 2 holds the two-tier fields and the
// input port's FIFO of writes, which a star's packet does not touch, line 6
// the Sender's window (with line 5, after the per-packet fields: read once
// per kWin + 1 requested responses). With 1024 accelerators the links do not
// fit in the L2 cache and each line touched per packet is a likely miss. The
// cursor was an array of its own (a line per response of an NVLS ld_reduce at
// 1024 accelerators; section 78 of docs/performance.md).
//
// The record is 576 bytes, 9 lines, an odd number: the links of one plane are
// `planes` records apart (Geometry::up, down), and at 512 bytes x 4 planes
// that is 2048 bytes, a power of two, so the same line of each of a plane's
// 1024 uplinks (or downlinks) fell into 1/32 of the cache's sets (a 1 MiB
// 16-way cache: 32 sets, 512 lines, for 1024 links): an NVLS ld_reduce's
// responses or multimem.st's multicast, which touch every link of a plane in
// turn, missed on each. 9 lines x 4 planes = 36 lines apart spreads them over
// 256 sets (a 2^k-line stride with k >= 2 has the same problem).
struct alignas(64) Link {
  Wire wire;               // line 0
  enum Kind : std::uint8_t { Up, Down, Direct, Trunk } kind = Up;  // line 1
  int gpu = 0, other = 0;  // other: plane (Up/Down) or peer (Direct); Trunk: from and to switch nodes
  Ring<Queued> pipe;       // Up: packets on the wire (header arrival times)
  LogCursor cursor;        // Up, star: its place in its plane's group log (an NVLS ld_reduce's responses)
  // Two-tier fabrics (tiers.cc): every link is a hop; packets it forwards wait in `transit`.  (line 2)
  NodeId to = kNoNode;
  // `transit` has had a packet that may leave after one forwarded later (a
  // reduction's result, Engine::forward): a forwarded packet is then sorted in
  // by time; until then each one joins at the back (in the bytes `to` leaves
  // before `scale`).
  bool late = false;
  double scale = 1;        // wire time relative to an accelerator port (trunks differ)
  Ring<std::uint32_t> transit;  // forwarded packets (Engine::held_), by ready time
  InputPort in;            // Up (two tiers: and trunks): the switch input port at the far end (its FIFO of writes in line 2, the rest line 3)
  Sender tx;               // Up / Direct (lines 4-5, its window into line 6)
  alignas(64) OutputQueue out;  // Down: the switch output queue feeding it (lines 7-8)
};
static_assert(sizeof(Link) == 576, "Link: 9 cache lines (see the layout above)");
static_assert(sizeof(Link) % 128 == 64, "Link: keep the record an odd number of cache lines (see above)");

}  // namespace scin::packet
