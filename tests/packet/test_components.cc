// Unit tests of the packet engine's components (time, event queue, wire,
// input port credits, output queue, ISA buffer, timeline) and engine-level
// closed-form checks of what each component does inside a run: a link
// serialises payload + header at its rate plus latency, credits block a sender
// when its input port is full and release it, a multicast is replicated in the
// switch, the ISA buffer's deadlock escape, reads on a switchless mesh.
#include <gtest/gtest.h>
#include <algorithm>
#include <cstdint>
#include <set>
#include <vector>

#include <string>
#include <tuple>

#include "engines/analytic/analytic.h"
#include "engines/packet/block_vec.h"
#include "engines/packet/event_queue.h"
#include "engines/packet/input_port.h"
#include "engines/packet/isa.h"
#include "engines/packet/link.h"
#include "engines/packet/output_queue.h"
#include "engines/packet/packet_engine.h"
#include "engines/packet/step_costs.h"
#include "engines/packet/timeline.h"
#include "engines/simulate.h"
#include "fabric/params.h"
#include "fabric/preset.h"
#include "model/routed_cost.h"
#include "model/step_cost_without_ports.h"
#include "schedule/algorithms.h"

namespace scin {
namespace {

using packet::Fine;
using packet::Ps;

// ---------------------------------------------------------------- components

TEST(PacketTime, CarryKeepsBackToBackDurationsWithinHalfAPicosecondOfExact) {
  // 272 B at 112.5 GB/s: 2417.78 ps, not a whole number of ps.
  const double ser_ns = 272.0 / 112.5;
  packet::Carry c;
  Ps sum = 0;
  for (int k = 1; k <= 100000; ++k) {
    const Ps d = c.add(packet::to_fine(ser_ns));
    EXPECT_TRUE(d == 2417 || d == 2418) << d;
    sum += d;
    if (k % 9973 == 0) {
      EXPECT_LE(std::abs(static_cast<double>(sum) - k * ser_ns * 1000), 0.5 + 1e-3 * k / 1e4) << k;
    }
  }
  EXPECT_NEAR(static_cast<double>(sum), 1e5 * ser_ns * 1000, 1.0);
  EXPECT_EQ(packet::to_ps(0.0005), 1);   // half a ps rounds up
  EXPECT_EQ(packet::to_ps(125.0), 125000);
}

TEST(PacketEventQueue, OrdersByTimeThenInsertionAndNumbersEachPush) {
  packet::EventQueue q;
  const auto a = q.push(5000, 1);
  const auto b = q.push(2000, 2);
  const auto c = q.push(5000, 3);
  EXPECT_LT(a, b);
  EXPECT_LT(b, c);
  packet::Event e = q.pop();
  EXPECT_EQ(e.t, 2000);
  EXPECT_EQ(e.target(), 2u);
  EXPECT_EQ(e.seq(), b);
  e = q.pop();
  EXPECT_EQ(e.target(), 1u);  // equal times: insertion order
  EXPECT_EQ(e.seq(), a);
  e = q.pop();
  EXPECT_EQ(e.target(), 3u);
  EXPECT_TRUE(q.empty());
}

// An event queue beside a reference of what it holds, (time, seq, target):
// every pop must be the reference's earliest (time, then insertion order).
struct CheckedQueue {
  packet::EventQueue q;
  std::vector<std::tuple<Ps, std::uint64_t, std::uint32_t>> pending;
  std::size_t popped = 0;
  std::uint64_t rng;
  explicit CheckedQueue(std::uint64_t seed) : rng(seed) {}
  std::uint64_t next() {
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return rng >> 33;
  }
  void push(Ps t, std::uint32_t target) { pending.emplace_back(t, q.push(t, target), target); }
  /// Pops one event, checked against the reference; its time.
  Ps pop() {
    const auto it = std::min_element(pending.begin(), pending.end());
    const packet::Event e = q.pop();
    EXPECT_EQ(e.t, std::get<0>(*it));
    EXPECT_EQ(e.seq(), std::get<1>(*it));
    EXPECT_EQ(e.target(), std::get<2>(*it));
    pending.erase(it);
    ++popped;
    return e.t;
  }
};

// Through the switch to the radix heap (> 1024 pending) and back (< 256): the
// pops follow (time, insertion order) exactly, as a sorted reference says, with
// pushes at the present and in the future interleaved with pops (monotone keys).
TEST(PacketEventQueue, RadixModeKeepsTheExactOrderAcrossTheSwitch) {
  CheckedQueue c(12345);
  auto& q = c.q;
  auto& pending = c.pending;
  auto next = [&c] { return c.next(); };
  Ps now = 0;
  std::size_t peak = 0;
  auto pop_check = [&] { now = c.pop(); };
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < 3000; ++i) {  // grow past 1024 with some pops: radix mode
      const Ps t = now + static_cast<Ps>(next() % 4 == 0 ? 0 : next() % 200000);
      c.push(t, static_cast<std::uint32_t>(next() & 0xffff));
      if (i % 3 == 0) pop_check();
      peak = std::max(peak, pending.size());
    }
    while (pending.size() > 100) pop_check();  // shrink below 256: back to the heap
  }
  while (!pending.empty()) pop_check();
  EXPECT_TRUE(q.empty());
  EXPECT_GT(peak, 1024u);
  EXPECT_EQ(c.popped, 9000u);
}

// The usual load: a few distinct times pending (links and pipes in lock step),
// many events per time, pushes at the present, at a pending time and at new
// times before, between and after the pending ones. The queue stays in its
// per-time FIFOs and pops in (time, insertion order), as a sorted reference says.
TEST(PacketEventQueue, TimeGroupsPopInTimeThenInsertionOrder) {
  CheckedQueue c(777);
  auto& q = c.q;
  auto& pending = c.pending;
  auto next = [&c] { return c.next(); };
  Ps now = 0;
  std::size_t peak = 0;
  std::vector<Ps> times_seen;
  for (int i = 0; i < 20000; ++i) {
    // Times on a coarse grid (ties are the rule), up to 12 grid steps ahead;
    // a quarter at the present.
    const std::uint64_t r = next();
    const Ps t = r % 4 == 0 ? now : now + static_cast<Ps>((next() % 12) * 2417);
    c.push(t, static_cast<std::uint32_t>(next() & 0xffff));
    peak = std::max(peak, pending.size());
    ASSERT_EQ(q.mode(), packet::EventQueue::Mode::Groups);
    ASSERT_EQ(q.size(), pending.size());
    // Pop about as often as push, in bursts, sometimes down to empty.
    const std::uint64_t pops = next() % 3;
    for (std::uint64_t k = 0; k < pops && !pending.empty(); ++k) now = c.pop();
    if (::testing::Test::HasFailure()) FAIL() << "at push " << i;
  }
  while (!pending.empty()) c.pop();
  EXPECT_TRUE(q.empty());
  EXPECT_EQ(c.popped, 20000u);
  EXPECT_GT(peak, 50u);
}

// NVLS's load: a hundred or more distinct times pending, pushes at any of
// them (not the previous push's: TimeGroups' cache of pending times by a hash,
// colliding slots and all), at the present after its FIFO has drained (a time
// no longer pending whose FIFO is reused by another), and at new times all
// over. The queue stays in its per-time FIFOs and pops in (time, insertion
// order), as a sorted reference says.
TEST(PacketEventQueue, TimeGroupsFindPendingTimesByCacheInOrder) {
  CheckedQueue c(4242);
  auto& q = c.q;
  auto& pending = c.pending;
  auto next = [&c] { return c.next(); };
  Ps now = 0, last_popped = -1;
  std::size_t peak = 0, peak_times = 0, at_present_after_drain = 0, at_pending = 0;
  const int n = 60000;
  for (int i = 0; i < n; ++i) {
    const std::uint64_t r = next() % 8;
    Ps t;
    if (r < 3 && !pending.empty()) {
      t = std::get<0>(pending[next() % pending.size()]);  // a pending time, any of them
      ++at_pending;
    } else if (r == 3) {
      t = now;  // the present: after its FIFO drained, a time the cache may still name
      if (t == last_popped && std::none_of(pending.begin(), pending.end(), [&](const auto& x) { return std::get<0>(x) == t; }))
        ++at_present_after_drain;
    } else {
      t = now + static_cast<Ps>(next() % 400000);  // new times, not on a grid: hundreds pending
    }
    c.push(t, static_cast<std::uint32_t>(next() & 0xffff));
    peak = std::max(peak, pending.size());
    if (i % 64 == 0) {
      std::vector<Ps> ts;
      for (const auto& x : pending) ts.push_back(std::get<0>(x));
      std::sort(ts.begin(), ts.end());
      peak_times = std::max<std::size_t>(peak_times, static_cast<std::size_t>(std::unique(ts.begin(), ts.end()) - ts.begin()));
    }
    ASSERT_EQ(q.mode(), packet::EventQueue::Mode::Groups);
    ASSERT_EQ(q.size(), pending.size());
    const std::uint64_t pops = pending.size() > 400 ? 2 : next() % 2;  // up to ~400 pending
    for (std::uint64_t k = 0; k < pops && !pending.empty(); ++k) now = last_popped = c.pop();
    if (::testing::Test::HasFailure()) FAIL() << "at push " << i;
  }
  while (!pending.empty()) c.pop();
  EXPECT_TRUE(q.empty());
  EXPECT_EQ(c.popped, static_cast<std::size_t>(n));
  EXPECT_GT(peak_times, 150u);  // distinct times pending: more than the 64 cache slots
  EXPECT_GT(at_pending, 10000u);
  EXPECT_GT(at_present_after_drain, 100u);
}

// More distinct times than the per-time FIFOs take (TimeGroups::kMaxGroups):
// the queue moves to the heap, then the radix heap, and back to the FIFOs when
// few are pending, without changing the order.
TEST(PacketEventQueue, ManyDistinctTimesMoveToTheHeapAndBackInOrder) {
  using Mode = packet::EventQueue::Mode;
  packet::EventQueue q;
  std::vector<std::tuple<Ps, std::uint64_t, std::uint32_t>> pending;
  const std::size_t n = packet::detail::TimeGroups::kMaxGroups;
  // n distinct times, each twice (the second push of a time lands in its FIFO).
  for (std::size_t i = 0; i < n; ++i) {
    const Ps t = static_cast<Ps>(1000 + 7 * ((i * 389) % n));  // a permutation: inserts all over
    for (std::uint32_t k = 0; k < 2; ++k) {
      const auto target = static_cast<std::uint32_t>(2 * i + k);
      pending.emplace_back(t, q.push(t, target), target);
    }
  }
  EXPECT_EQ(q.mode(), Mode::Groups);
  pending.emplace_back(5, q.push(5, 99), 99);  // one time more: beyond kMaxGroups
  EXPECT_EQ(q.mode(), Mode::Radix);             // 2n + 1 > 1024 events: straight on to the radix heap
  std::sort(pending.begin(), pending.end());
  std::size_t k = 0;
  bool saw_heap = false;
  for (; k < pending.size(); ++k) {
    const packet::Event e = q.pop();
    ASSERT_EQ(e.t, std::get<0>(pending[k])) << k;
    ASSERT_EQ(e.seq(), std::get<1>(pending[k])) << k;
    ASSERT_EQ(e.target(), std::get<2>(pending[k])) << k;
    saw_heap |= q.mode() == Mode::Heap;
    if (q.size() <= packet::EventQueue::kToGroups) {
      EXPECT_EQ(q.mode(), Mode::Groups) << k;
    }
  }
  EXPECT_TRUE(saw_heap);
  EXPECT_TRUE(q.empty());
  EXPECT_EQ(q.mode(), Mode::Groups);
}

// A flow with every field set to a value no default Flow has.
packet::Flow filled_flow() {
  using packet::Flow, packet::FlowKind;
  Flow f;
  f.step = 7, f.kind = FlowKind::IsaRead, f.active = true, f.plane = 3, f.initiator = 5;
  f.dsts = {1, 2}, f.srcs = {3}, f.src_bytes = {4}, f.src_n = {5}, f.src_id = {6}, f.sources = {7};
  f.bytes = 8, f.n = 9, f.n_min = 10, f.inv_raw = 11, f.gap_ns = 12, f.ser_full = 13, f.extra_end = 14;
  f.expected = 15, f.delivered = 16, f.last = 17, f.to_switch = true, f.every_gpu = true;
  f.count = {1}, f.complete = {2}, f.staged = {3};
  f.next_group = 18, f.plain_per_byte = 19, f.reduce_inv_GBps = 20, f.codec = true, f.pace_ns = 21;
  f.next_send = 22, f.waiting = true;
  f.hops = {Flow::Hop{1, 2}}, f.hop_first = {3}, f.red = {4}, f.sink = 23, f.switch_dsts = true, f.mc_routed = true,
  f.uc_routed = true;
  f.shape = 24;
  return f;
}

// BlockVec (the flow pool): elements keep their address and value while it
// grows over many blocks, index i is the i-th element added, and a new
// element is value-initialised.
TEST(PacketBlockVec, ElementsNeverMoveAndKeepTheirValuesAcrossBlocks) {
  packet::BlockVec<std::uint64_t, 3> v;  // blocks of 8
  std::vector<const std::uint64_t*> at;
  for (std::uint64_t i = 0; i < 100; ++i) {
    std::uint64_t& x = v.emplace_back();
    EXPECT_EQ(x, 0u);
    x = i * i + 7;
    at.push_back(&x);
  }
  ASSERT_EQ(v.size(), 100u);
  for (std::size_t i = 0; i < 100; ++i) {
    EXPECT_EQ(&v[i], at[i]) << i;
    EXPECT_EQ(v[i], i * i + 7) << i;
  }
}

// Flow::reset() empties a reused flow field by field (sim.h): every field
// back to a default Flow's, the vectors empty with their storage kept.
TEST(PacketFlow, ResetGivesADefaultFlowAndKeepsTheVectorsStorage) {
  using packet::Flow, packet::FlowKind;
  Flow f = filled_flow();
  const std::size_t cap = f.dsts.capacity();
  f.reset();
  const Flow d;
  EXPECT_EQ(f.shape, packet::kNoShape);
  EXPECT_EQ(f.step, d.step);
  EXPECT_EQ(f.kind, d.kind);
  EXPECT_EQ(f.active, d.active);
  EXPECT_EQ(f.plane, d.plane);
  EXPECT_EQ(f.initiator, d.initiator);
  EXPECT_TRUE(f.dsts.empty() && f.srcs.empty() && f.src_bytes.empty() && f.src_n.empty() && f.src_id.empty() &&
              f.sources.empty() && f.count.empty() && f.complete.empty() && f.staged.empty() && f.hops.empty() &&
              f.hop_first.empty() && f.red.empty());
  EXPECT_EQ(f.dsts.capacity(), cap);
  EXPECT_EQ(f.bytes, d.bytes);
  EXPECT_EQ(f.n, d.n);
  EXPECT_EQ(f.n_min, d.n_min);
  EXPECT_EQ(f.inv_raw, d.inv_raw);
  EXPECT_EQ(f.gap_ns, d.gap_ns);
  EXPECT_EQ(f.ser_full, d.ser_full);
  EXPECT_EQ(f.extra_end, d.extra_end);
  EXPECT_EQ(f.expected, d.expected);
  EXPECT_EQ(f.delivered, d.delivered);
  EXPECT_EQ(f.last, d.last);
  EXPECT_EQ(f.to_switch, d.to_switch);
  EXPECT_EQ(f.every_gpu, d.every_gpu);
  EXPECT_EQ(f.next_group, d.next_group);
  EXPECT_EQ(f.plain_per_byte, d.plain_per_byte);
  EXPECT_EQ(f.reduce_inv_GBps, d.reduce_inv_GBps);
  EXPECT_EQ(f.codec, d.codec);
  EXPECT_EQ(f.pace_ns, d.pace_ns);
  EXPECT_EQ(f.next_send, d.next_send);
  EXPECT_EQ(f.waiting, d.waiting);
  EXPECT_EQ(f.sink, d.sink);
  EXPECT_EQ(f.switch_dsts, d.switch_dsts);
  EXPECT_EQ(f.uc_routed, d.uc_routed);
  EXPECT_EQ(f.mc_routed, d.mc_routed);
}

// Flow::reset_run() (a flow reused for a step of the shape it holds) keeps the
// shape's fields and resets every other one as reset() does.
TEST(PacketFlow, ResetRunKeepsTheShapesFieldsOnly) {
  using packet::Flow, packet::FlowKind;
  Flow f = filled_flow();
  f.reset_run();
  // kept: the shape's
  EXPECT_EQ(f.kind, FlowKind::IsaRead);
  EXPECT_EQ(f.plane, 3);
  EXPECT_EQ(f.initiator, 5);
  EXPECT_EQ(f.dsts, (std::vector<NodeId>{1, 2}));
  EXPECT_EQ(f.srcs, (std::vector<NodeId>{3}));
  EXPECT_EQ(f.src_bytes, (std::vector<std::uint64_t>{4}));
  EXPECT_EQ(f.src_n, (std::vector<std::uint32_t>{5}));
  EXPECT_EQ(f.bytes, 8u);
  EXPECT_EQ(f.n, 9u);
  EXPECT_EQ(f.n_min, 10u);
  EXPECT_TRUE(f.to_switch);
  EXPECT_EQ(f.plain_per_byte, 19);
  EXPECT_EQ(f.reduce_inv_GBps, 20);
  EXPECT_TRUE(f.codec);
  EXPECT_EQ(f.shape, 24u);
  // reset: the others
  const Flow d;
  EXPECT_EQ(f.step, d.step);
  EXPECT_EQ(f.active, d.active);
  EXPECT_TRUE(f.src_id.empty() && f.sources.empty() && f.count.empty() && f.complete.empty() && f.staged.empty() &&
              f.hops.empty() && f.red.empty());
  EXPECT_EQ(f.inv_raw, d.inv_raw);
  EXPECT_EQ(f.gap_ns, d.gap_ns);
  EXPECT_EQ(f.ser_full, d.ser_full);
  EXPECT_EQ(f.extra_end, d.extra_end);
  EXPECT_EQ(f.expected, d.expected);
  EXPECT_EQ(f.delivered, d.delivered);
  EXPECT_EQ(f.last, d.last);
  EXPECT_EQ(f.every_gpu, d.every_gpu);
  EXPECT_EQ(f.next_group, d.next_group);
  EXPECT_EQ(f.pace_ns, d.pace_ns);
  EXPECT_EQ(f.next_send, d.next_send);
  EXPECT_EQ(f.waiting, d.waiting);
  EXPECT_EQ(f.sink, d.sink);
  EXPECT_EQ(f.switch_dsts, d.switch_dsts);
}

TEST(PacketWire, SerialisesBackToBackAndKeepsStatistics) {
  packet::Wire w;
  w.latency = 125000;
  Ps ser = 0;
  const Fine d = packet::to_fine(2.5);  // 2500 ps
  EXPECT_EQ(w.send(1000, d, 256, 272, ser), 1000);
  EXPECT_EQ(ser, 2500);
  EXPECT_EQ(w.busy_until, 3500);
  EXPECT_EQ(w.send(2000, d, 100, 116, ser), 3500);  // waits for the first
  EXPECT_EQ(w.send(9000, d, 256, 272, ser), 9000);  // idle link: starts when ready
  EXPECT_EQ(w.stats.packets, 3u);
  EXPECT_EQ(w.stats.payload_bytes, 612u);
  EXPECT_EQ(w.stats.wire_bytes, 660u);
  EXPECT_EQ(w.stats.busy_ps, 7500);
}

TEST(PacketInputPort, CreditsPerClassBlockWhenFullAndReturnWhenAPacketLeaves) {
  packet::InputPort in;
  const std::uint64_t cap = 1000;
  using IP = packet::InputPort;
  EXPECT_TRUE(in.has_credit(IP::kWrites, 600, cap));
  in.take_credit(IP::kWrites, 600);
  EXPECT_FALSE(in.has_credit(IP::kWrites, 600, cap));    // the sender must wait
  EXPECT_TRUE(in.has_credit(IP::kResponses, 600, cap));  // the other class has its own credits
  in.arrive(IP::kWrites, packet::Queued{{}, 5}, 600);
  EXPECT_EQ(in.bytes(), 600u);
  EXPECT_FALSE(in.has_credit(IP::kWrites, 600, cap));    // still held while in the port
  in.leave(IP::kWrites, 600);
  EXPECT_TRUE(in.has_credit(IP::kWrites, 600, cap));     // released
  EXPECT_EQ(in.peak_bytes(), 600u);
  EXPECT_TRUE(in.empty(IP::kWrites));
}

// The Link record's layout (link.h): what a packet touches of a star uplink
// (Wire, kind / gpu / other, pipe, input port, the Sender's per-packet
// fields) lies in cache lines 0-4 of the record, what it touches of a
// downlink (Wire and output queue) in lines 0, 6 and 7, and every record of
// the links' array starts a line. (A layout, not a result: the runs are the
// same bits in any order of the fields; this keeps the order that saves the
// cache misses at 1024 accelerators.)
TEST(PacketLink, HotFieldsInTheirCacheLines) {
  std::vector<packet::Link> links(3);
  for (const auto& l : links) EXPECT_EQ(reinterpret_cast<std::uintptr_t>(&l) % 64, 0u);
  const packet::Link& l = links[1];
  const auto base = reinterpret_cast<std::uintptr_t>(&l);
  auto lines = [&](std::set<std::size_t>& s, const auto& field) {
    const auto a = reinterpret_cast<std::uintptr_t>(&field) - base;
    for (std::size_t b = a; b < a + sizeof(field); ++b) s.insert(b / 64);
  };
  // An uplink's requested response (most events at scale: an NVLS ld_reduce's,
  // an ISA read's) reads 4 lines; a write or a mesh response the Sender's second too.
  std::set<std::size_t> resp, up, down;
  lines(resp, l.wire), lines(resp, l.kind), lines(resp, l.gpu), lines(resp, l.other), lines(resp, l.pipe);
  lines(resp, l.cursor);
  // The input port's per-packet fields: from its responses' FIFO (the ISA fast
  // path asks whether it is empty) to its end; its FIFO of writes is not read
  // while the class is not blocked.
  const auto in0 = reinterpret_cast<std::uintptr_t>(&l.in) - base;
  for (std::size_t b = in0 + sizeof(packet::InputPort) - 64; b < in0 + sizeof(packet::InputPort); ++b) resp.insert(b / 64);
  lines(resp, l.in.blocked);
  const packet::Sender& tx = l.tx;
  lines(resp, tx.requested), lines(resp, tx.head), lines(resp, tx.next_wake), lines(resp, tx.wake_gen);
  lines(resp, tx.wpos), lines(resp, tx.nwin), lines(resp, tx.last_read), lines(resp, tx.credit_blocked), lines(resp, tx.own);
  EXPECT_EQ(resp, (std::set<std::size_t>{0, 1, 3, 4}));
  up = resp;
  lines(up, tx.writes), lines(up, tx.responses), lines(up, tx.rr);
  EXPECT_EQ(up, (std::set<std::size_t>{0, 1, 3, 4, 5}));
  lines(down, l.wire), lines(down, l.out);
  EXPECT_EQ(down, (std::set<std::size_t>{0, 7, 8}));
  EXPECT_EQ(sizeof(packet::Link), 576u);  // 9 lines (see the next test)
  // Line 2 is what a star's packet does not touch (two-tier fields, the FIFO of writes).
  std::set<std::size_t> cold;
  lines(cold, l.to), lines(cold, l.scale), lines(cold, l.transit);
  EXPECT_EQ(cold, (std::set<std::size_t>{2}));
}

// Sender::own counts the writes and mesh responses (send_next takes a requested
// response's fast path on own == 0 without reading the lists' line): it must
// follow every change to them.
TEST(PacketSender, OwnCountsWritesAndResponses) {
  packet::Sender tx;
  std::uint64_t x = 11;
  auto rnd = [&](std::uint64_t m) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    return (x >> 33) % m;
  };
  int zeros = 0;
  for (int step = 0; step < 5000; ++step) {
    const auto r = rnd(10);
    if (r < 3) {
      tx.add(static_cast<std::uint32_t>(step), r == 0);
    } else if (r < 7 && !tx.writes.empty()) {
      const std::uint32_t before = tx.writes[tx.rr];
      const bool done = rnd(2) == 0;
      tx.next_write(done);
      if (!done && tx.writes.size() > 1) {
        EXPECT_NE(tx.writes[tx.rr], before);
      }
    } else if (!tx.responses.empty()) {
      tx.drop_response(rnd(tx.responses.size()));
    }
    ASSERT_EQ(tx.own, tx.writes.size() + tx.responses.size()) << "step " << step;
    if (tx.own == 0) ++zeros;
  }
  EXPECT_GT(zeros, 10);
  EXPECT_GT(tx.writes.size() + tx.responses.size(), 0u);
}

// The links of one plane are `planes` records apart (Geometry::up, down), and
// an NVLS ld_reduce's responses or a multicast touch each of a plane's 1024
// uplinks or downlinks in turn. Where one line of each (say the Wire) falls in
// a set-associative cache must then spread over the sets: with 512-byte
// records and 4 planes they were 2048 bytes apart and 1024 such lines shared
// 32 sets of a 1 MiB 16-way cache (room for 512). Checked for the usual plane
// counts on L2 caches of 1 MiB 16-way (valgrind's model in docs/performance.md),
// 1 MiB 8-way (this AMD EPYC's) and 512 KiB 8-way: the 1024 lines fit (no set
// is asked for more lines than it has ways).
TEST(PacketLink, APlanesLinksSpreadOverTheCacheSets) {
  constexpr std::size_t kLine = 64;
  struct Cache {
    std::size_t bytes, ways;
  };
  const Cache caches[] = {{std::size_t{1} << 20, 16}, {std::size_t{1} << 20, 8}, {std::size_t{512} << 10, 8}};
  for (const int planes : {1, 2, 4, 6, 18}) {
    const std::size_t gpus = 1024;
    std::vector<packet::Link> links(gpus * static_cast<std::size_t>(planes));
    const auto base = reinterpret_cast<std::uintptr_t>(links.data());
    for (const Cache& c : caches) {
      const std::size_t sets = c.bytes / kLine / c.ways;
      for (const std::size_t line : {std::size_t{0}, std::size_t{4}, std::size_t{8}}) {
        std::vector<std::size_t> per_set(sets, 0);
        for (std::size_t g = 0; g < gpus; ++g) {
          const auto a = reinterpret_cast<std::uintptr_t>(&links[g * static_cast<std::size_t>(planes)]) - base;
          ++per_set[(a / kLine + line) % sets];
        }
        std::size_t kept = 0;  // of the 1024 lines, those the cache can hold at once
        for (const std::size_t n : per_set) kept += std::min(n, c.ways);
        EXPECT_EQ(kept, gpus) << planes << " planes, cache of " << c.bytes << " bytes, line " << line;
      }
    }
  }
}

// A link's request FIFO keeps runs of equal requests as one entry and its
// head out of the ring; what it serves must be, request for request, a
// stable sort by ready time of what was requested (a memory answers in arrival
// order), whatever the interleaving of requests and sends.
TEST(PacketSender, RequestFifoServesRunsInStableReadyOrder) {
  packet::Sender tx;
  std::vector<std::tuple<Ps, std::uint32_t, int>> ref;  // ready, source, arrival number
  std::vector<std::pair<Ps, std::uint32_t>> served, expected;
  std::uint64_t x = 12345;
  auto rnd = [&](std::uint64_t m) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    return (x >> 33) % m;
  };
  Ps now = 0;
  int arrival = 0, runs = 0;
  for (int round = 0; round < 4000; ++round) {
    // A burst: often a run of equal requests (an ISA port's window), sometimes
    // one that is ready earlier than what waits (it must move ahead).
    const int n = static_cast<int>(1 + rnd(rnd(4) == 0 ? 40 : 3));
    const Ps ready = now + static_cast<Ps>(rnd(5) == 0 ? rnd(50) : 100 + rnd(3));
    const auto source = static_cast<std::uint32_t>(rnd(3));
    runs += n > 1;
    for (int k = 0; k < n; ++k) {
      tx.request(ready, source);
      ref.emplace_back(ready, source, arrival++);
    }
    now += static_cast<Ps>(rnd(4));
    // Send what is ready (the head), as try_send does, a few at a time.
    for (int m = static_cast<int>(rnd(6)); m > 0 && !tx.requested.empty() && tx.head.ready <= now + 60; --m) {
      served.emplace_back(tx.head.ready, tx.head.source);
      tx.pop_request();
      // The reference: the least (ready, arrival) pending.
      const auto it = std::min_element(ref.begin(), ref.end(), [](const auto& a, const auto& b) {
        return std::tie(std::get<0>(a), std::get<2>(a)) < std::tie(std::get<0>(b), std::get<2>(b));
      });
      expected.emplace_back(std::get<0>(*it), std::get<1>(*it));
      ref.erase(it);
    }
  }
  while (!tx.requested.empty()) {
    served.emplace_back(tx.head.ready, tx.head.source);
    tx.pop_request();
  }
  std::stable_sort(ref.begin(), ref.end(), [](const auto& a, const auto& b) { return std::get<0>(a) < std::get<0>(b); });
  for (const auto& r : ref) expected.emplace_back(std::get<0>(r), std::get<1>(r));
  EXPECT_GT(runs, 1000);
  EXPECT_EQ(served.size(), static_cast<std::size_t>(arrival));
  EXPECT_EQ(served, expected);
  EXPECT_TRUE(tx.idle());
}

// The same FIFO with the requests an NVLS ld_reduce or a paced ISA makes: every
// request from its own source (no runs), FIFOs hundreds long, served from the
// window of entries copied after the head; now and then a request that is ready
// earlier lands inside the window, or one equal to the last entry merges into
// it while the window holds it: the window must then be refilled from the ring.
TEST(PacketSender, RequestWindowFollowsInsertsAndMergesIntoIt) {
  packet::Sender tx;
  std::vector<std::tuple<Ps, std::uint32_t, int>> ref;  // ready, source, arrival number
  std::vector<std::pair<Ps, std::uint32_t>> served, expected;
  std::uint64_t x = 777;
  auto rnd = [&](std::uint64_t m) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    return (x >> 33) % m;
  };
  auto serve = [&] {
    served.emplace_back(tx.head.ready, tx.head.source);
    tx.pop_request();
    const auto it = std::min_element(ref.begin(), ref.end(), [](const auto& a, const auto& b) {
      return std::tie(std::get<0>(a), std::get<2>(a)) < std::tie(std::get<0>(b), std::get<2>(b));
    });
    expected.emplace_back(std::get<0>(*it), std::get<1>(*it));
    ref.erase(it);
  };
  Ps now = 1000;
  int arrival = 0, into_window = 0, merged_in_window = 0;
  std::uint32_t next_source = 0;
  for (int round = 0; round < 6000; ++round) {
    const int kind = static_cast<int>(rnd(8));
    Ps ready = now + 500 + static_cast<Ps>(rnd(3));
    std::uint32_t source = next_source++ % 4096;
    const std::size_t n = tx.requested.size();
    if (kind == 0 && n >= 2) {
      // Ready just after the head: it goes to position 1 .. 3 of the FIFO (into the window).
      ready = tx.head.ready + static_cast<Ps>(rnd(2));
      into_window += n <= 4 + rnd(60) ? 1 : 0;
    } else if (kind == 1 && n >= 2 && n <= 4) {
      // Equal to the last entry, while the window holds it: merges into it.
      ready = std::get<0>(ref.back());
      source = std::get<1>(ref.back());
      ++merged_in_window;
    }
    tx.request(ready, source);
    ref.emplace_back(ready, source, arrival++);
    now += static_cast<Ps>(rnd(3));
    // Keep the FIFO long most of the time, and now and then drain it to a few entries.
    const bool drain = rnd(50) == 0;
    for (int m = drain ? 1 << 30 : static_cast<int>(rnd(3)); m > 0 && tx.requested.size() > (drain ? 2u : 0u); --m)
      serve();
  }
  while (!tx.requested.empty()) serve();
  EXPECT_GT(into_window, 100);
  EXPECT_GT(merged_in_window, 20);
  EXPECT_EQ(served.size(), static_cast<std::size_t>(arrival));
  EXPECT_EQ(served, expected);
  EXPECT_TRUE(tx.idle());
}

// Packet entries (request_packet: a one-packet response carried by the entry,
// no Source) share the FIFO with requests naming a Source: each is one request,
// served in stable ready order with the rest, never merged with its neighbours
// (not even a Source request whose number equals its flow, at the same ready
// time), and it comes out with its flow, slot and packet index.
TEST(PacketSender, PacketEntriesKeepTheirPlaceAndTheirPacket) {
  packet::Sender tx;
  // ready, source or flow, packet (-1: a Source request) as (index << 16 | slot), arrival number
  using Req = std::tuple<Ps, std::uint32_t, std::int64_t, int>;
  std::vector<Req> ref;
  std::vector<std::tuple<Ps, std::uint32_t, std::int64_t>> served, expected;
  std::uint64_t x = 4242;
  auto rnd = [&](std::uint64_t m) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    return (x >> 33) % m;
  };
  auto serve = [&] {
    const packet::Sender::Requested& h = tx.head;
    served.emplace_back(h.ready, h.source, h.packet() ? std::int64_t{h.index()} << 16 | h.slot() : -1);
    tx.pop_request();
    const auto it = std::min_element(ref.begin(), ref.end(), [](const Req& a, const Req& b) {
      return std::tie(std::get<0>(a), std::get<3>(a)) < std::tie(std::get<0>(b), std::get<3>(b));
    });
    expected.emplace_back(std::get<0>(*it), std::get<1>(*it), std::get<2>(*it));
    ref.erase(it);
  };
  Ps now = 1000;
  int arrival = 0, packets = 0, beside = 0, inserted = 0;
  for (int round = 0; round < 8000; ++round) {
    const int n = static_cast<int>(1 + rnd(rnd(4) == 0 ? 20 : 3));
    Ps ready = now + 500 + static_cast<Ps>(rnd(3));
    if (rnd(6) == 0 && tx.requested.size() >= 2) {  // ready earlier than what waits: moves ahead
      ready = tx.head.ready + static_cast<Ps>(rnd(2));
      ++inserted;
    }
    const auto id = static_cast<std::uint32_t>(rnd(4));
    for (int k = 0; k < n; ++k) {
      if (rnd(2) == 0) {
        const auto slot = static_cast<std::uint16_t>(rnd(65536));
        const auto index = static_cast<std::uint32_t>(rnd(packet::Sender::kMaxPacketIndex + 1));
        tx.request_packet(ready, id, slot, index);
        ref.emplace_back(ready, id, std::int64_t{index} << 16 | slot, arrival++);
        ++packets;
      } else {
        // Equal to a packet entry just made (same ready, its flow's number): must not merge into it.
        beside += !ref.empty() && std::get<2>(ref.back()) >= 0 && std::get<0>(ref.back()) == ready &&
                  std::get<1>(ref.back()) == id;
        tx.request(ready, id);
        ref.emplace_back(ready, id, -1, arrival++);
      }
    }
    now += static_cast<Ps>(rnd(3));
    const bool drain = rnd(40) == 0;
    for (int m = drain ? 1 << 30 : static_cast<int>(rnd(2 * n + 1)); m > 0 && tx.requested.size() > (drain ? 1u : 0u);
         --m)
      serve();
  }
  while (!tx.requested.empty()) serve();
  EXPECT_GT(packets, 5000);
  EXPECT_GT(beside, 1000);
  EXPECT_GT(inserted, 500);
  EXPECT_EQ(served.size(), static_cast<std::size_t>(arrival));
  EXPECT_EQ(served, expected);
  EXPECT_TRUE(tx.idle());
}

// Uplinks that share their plane's group log (GroupLog) serve its entries and
// their own FIFO's (Source requests and packet entries, some ready earlier than
// what waits) in the order one FIFO per uplink in ready order would, each log
// entry as a packet entry with the uplink's slot: by ready time, then arrival;
// whether a log entry joins the FIFO when it goes next (LogCursor::pull) or all
// pending ones before a later request (LogCursor::take). Entries every uplink
// has sent are dropped.
TEST(PacketSender, GroupLogEntriesServeAsAPacketEntryOnEveryUplink) {
  constexpr int kLinks = 3;
  packet::GroupLog log;
  packet::Sender tx[kLinks];
  packet::LogCursor cur[kLinks];
  // ready, source or flow, packet (-1: a Source request) as (index << 16 | slot), arrival number
  using Req = std::tuple<Ps, std::uint32_t, std::int64_t, int>;
  std::vector<Req> ref[kLinks];
  std::vector<std::tuple<Ps, std::uint32_t, std::int64_t>> served[kLinks], expected[kLinks];
  std::uint64_t x = 77;
  auto rnd = [&](std::uint64_t m) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    return (x >> 33) % m;
  };
  int from_log = 0, from_fifo = 0, ties = 0, both = 0;
  auto serve = [&](int a) {  // as try_send: the log's next entry joins the FIFO if it goes first
    packet::Sender& t = tx[a];
    if (cur[a].pending() && !t.requested.empty()) {
      ++both;
      ties += log.at(cur[a].next).ready == t.head.ready;
    }
    if (cur[a].pull(t)) ++from_log;
    else ++from_fifo;
    const packet::Sender::Requested& h = t.head;
    served[a].emplace_back(h.ready, h.source, h.packet() ? std::int64_t{h.index()} << 16 | h.slot() : -1);
    t.pop_request();
    const auto it = std::min_element(ref[a].begin(), ref[a].end(), [](const Req& p, const Req& q) {
      return std::tie(std::get<0>(p), std::get<3>(p)) < std::tie(std::get<0>(q), std::get<3>(q));
    });
    expected[a].emplace_back(std::get<0>(*it), std::get<1>(*it), std::get<2>(*it));
    ref[a].erase(it);
  };
  auto pending = [&](int a) { return !tx[a].requested.empty() || cur[a].pending(); };
  Ps now = 1000;
  int arrival = 0, appended = 0, earlier = 0;
  for (int round = 0; round < 6000; ++round) {
    const int op = static_cast<int>(rnd(10));
    if (op < 4) {  // a group for every uplink: ready = now + a constant, so in order
      if (appended == 0)
        for (int a = 0; a < kLinks; ++a) cur[a].log = &log, cur[a].slot = static_cast<std::uint16_t>(10 + a);
      const auto flow = static_cast<std::uint32_t>(rnd(4));
      const auto grp = static_cast<std::uint32_t>(rnd(64));
      log.append(now + 501, flow, grp, kLinks);
      ++appended;
      for (int a = 0; a < kLinks; ++a) ref[a].emplace_back(now + 501, flow, std::int64_t{grp} << 16 | (10 + a), arrival++);
    } else if (op < 7) {  // an uplink's own requests, ready as the log's, a little later, or sooner than what waits
      // (every other 300 rounds, uplink 2's alone: the others then send from the log)
      const int a = (round / 300) % 2 == 1 ? 2 : static_cast<int>(rnd(kLinks));
      packet::Sender& t = tx[a];
      Ps ready = now + 500 + static_cast<Ps>(rnd(3));
      if (rnd(5) == 0 && !t.requested.empty()) {
        ready = t.head.ready + static_cast<Ps>(rnd(2));
        ++earlier;
      }
      const auto id = static_cast<std::uint32_t>(rnd(4));
      for (int k = static_cast<int>(1 + rnd(4)); k > 0; --k) {
        cur[a].take(t);  // as the engine does before a request joins the FIFO
        if (rnd(3) == 0) {
          const auto slot = static_cast<std::uint16_t>(rnd(65536));
          const auto index = static_cast<std::uint32_t>(rnd(packet::Sender::kMaxPacketIndex + 1));
          t.request_packet(ready, id, slot, index);
          ref[a].emplace_back(ready, id, std::int64_t{index} << 16 | slot, arrival++);
        } else {
          t.request(ready, id);
          ref[a].emplace_back(ready, id, -1, arrival++);
        }
      }
    } else {  // an uplink sends a few
      const int a = static_cast<int>(rnd(kLinks));
      for (int m = static_cast<int>(rnd(12)); m > 0 && pending(a); --m) serve(a);
    }
    now += static_cast<Ps>(rnd(2));
  }
  for (int a = 0; a < kLinks; ++a) {
    while (pending(a)) serve(a);
    EXPECT_EQ(served[a], expected[a]) << "uplink " << a;
    EXPECT_TRUE(ref[a].empty());
    EXPECT_TRUE(tx[a].idle());
    EXPECT_EQ(cur[a].next, static_cast<std::uint64_t>(appended));
  }
  EXPECT_TRUE(log.entries.empty());  // every uplink sent them all: dropped
  EXPECT_EQ(log.base, static_cast<std::uint64_t>(appended));
  EXPECT_GT(appended, 1500);
  EXPECT_GT(from_log, 1000);
  EXPECT_GT(static_cast<int>(log.taken), 1000);  // some moved into a FIFO by a later request
  EXPECT_GT(from_fifo, 5000);
  EXPECT_GT(both, 200);    // the log and the FIFO both had a request
  EXPECT_GT(ties, 50);     // ... ready at the same time
  EXPECT_GT(earlier, 300);
}

TEST(PacketOutputQueue, ReplaysDepthInTimeOrderDeparturesFirst) {
  packet::OutputQueue q;
  // Three packets enter at 0, 10, 20 and leave at 0, 100, 200 (a slow link).
  q.push(0, 0, 300);
  q.push(10, 100, 300);
  q.push(20, 200, 300);
  EXPECT_TRUE(q.has_room(20, 300, 900));
  EXPECT_EQ(q.bytes(), 600u);  // the first left at 0, the other two wait
  EXPECT_FALSE(q.has_room(20, 400, 900));
  EXPECT_EQ(q.next_departure(20), 100);
  EXPECT_EQ(q.room(150, 900), 600u);  // one more left at 100
  q.drain(packet::kNever);
  EXPECT_EQ(q.bytes(), 0u);
  EXPECT_EQ(q.peak_bytes(), 600u);
  EXPECT_EQ(q.pushes(), 3u);
}

// The replay the output queue did before its running counters (a deque of
// entries and an arrived count), as the reference: arrivals in push order at
// their ready times, departures at their starts, departures first at equal
// times, the depth's peak after each arrival.
struct ReferenceOutputQueue {
  struct E {
    Ps ready, start;
    std::uint64_t wire;
  };
  std::vector<E> out;
  std::size_t front = 0, arrived = 0;  // out[front, front + arrived) in the buffer
  std::uint64_t bytes = 0, peak = 0;
  void drain(Ps t) {
    for (;;) {
      const Ps ta = front + arrived < out.size() ? out[front + arrived].ready : packet::kNever;
      const Ps td = arrived > 0 ? out[front].start : packet::kNever;
      if (std::min(ta, td) > t || (ta == packet::kNever && td == packet::kNever)) return;
      if (td <= ta) {
        bytes -= out[front].wire;
        ++front;
        --arrived;
      } else {
        bytes += out[front + arrived].wire;
        peak = std::max(peak, bytes);
        ++arrived;
      }
    }
  }
  Ps next_departure(Ps now) const { return arrived > 0 ? out[front].start : now; }
};

// Random pushes onto one queue, as the engine makes them: starts strictly
// increasing (a FIFO link), ready times mostly the present plus the switch
// latency but some later (ISA results whose reduction ends later) and so out
// of order; drains at non-decreasing times, some that replay nothing, some
// many entries, and the final one at kNever. Depth, peak and next departure
// match the reference after every step; the queue's storage grows from
// empty and wraps around.
TEST(PacketOutputQueue, RunningCountersReplayAsTheEntryDequeDid) {
  std::uint64_t seed = 12345;
  auto rnd = [&](std::uint64_t n) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    return (seed >> 33) % n;
  };
  packet::OutputQueue q;
  ReferenceOutputQueue r;
  Ps now = 0, busy = 0;
  int checks = 0, out_of_order = 0, deep = 0;
  for (int i = 0; i < 60000; ++i) {
    now += static_cast<Ps>(rnd(4) == 0 ? rnd(20000) : rnd(3000));
    const int burst = static_cast<int>(rnd(6));
    for (int k = 0; k < burst; ++k) {
      Ps ready = now + 100000;
      if (rnd(10) == 0) ready += static_cast<Ps>(rnd(50000));  // a late result
      if (!r.out.empty() && ready < r.out.back().ready) ++out_of_order;
      const Ps start = std::max(ready, busy);
      busy = start + 2418 + static_cast<Ps>(rnd(3));
      const auto wire = static_cast<std::uint32_t>(16 + rnd(257));
      q.push(ready, start, wire);
      r.out.push_back({ready, start, wire});
    }
    const Ps t = now + (rnd(3) == 0 ? static_cast<Ps>(rnd(200000)) : 0);
    r.drain(t);
    const bool room = q.has_room(t, 300, 2000);
    ASSERT_EQ(q.bytes(), r.bytes) << "step " << i;
    ASSERT_EQ(room, r.bytes + 300 <= 2000) << "step " << i;
    ASSERT_EQ(q.peak_bytes(), r.peak) << "step " << i;
    ASSERT_EQ(q.next_departure(t), r.next_departure(t)) << "step " << i;
    ASSERT_EQ(q.room(t, 2000), r.bytes >= 2000 ? 0u : 2000 - r.bytes) << "step " << i;
    deep += r.arrived > 4 ? 1 : 0;
    now = std::max(now, t);
    ++checks;
  }
  q.drain(packet::kNever);
  r.drain(packet::kNever - 1);
  EXPECT_EQ(q.bytes(), 0u);
  EXPECT_EQ(r.bytes, 0u);
  EXPECT_EQ(q.peak_bytes(), r.peak);
  EXPECT_EQ(q.pushes(), r.out.size());
  EXPECT_EQ(checks, 60000);
  EXPECT_GT(out_of_order, 1000);  // ready times out of push order were replayed
  EXPECT_GT(deep, 1000);          // and queues several entries deep
}

TEST(PacketIsaBuffer, AdmitsUntilFullFreesWhenReducedAndEscapesADeadlock) {
  packet::IsaBuffer b(512);
  EXPECT_TRUE(b.admit(0, 256, false));
  EXPECT_TRUE(b.admit(0, 256, false));
  // Full of partial groups, none of them reduced: only the group the reducer
  // waits for may still enter (the escape), anything else waits.
  EXPECT_FALSE(b.admit(10, 256, false));
  EXPECT_TRUE(b.admit(10, 256, true));
  EXPECT_EQ(b.staged(), 768u);
  EXPECT_EQ(b.high_water_mark(), 768u);
  // Once a reduction is pending, its free is the way out: no escape.
  b.free_at(100, 512);
  EXPECT_FALSE(b.admit(20, 256, true));
  EXPECT_EQ(b.next_free(), 100);
  EXPECT_TRUE(b.admit(100, 256, false));  // the free applied at 100
  EXPECT_EQ(b.staged(), 512u);
  EXPECT_EQ(b.next_free(), packet::kNever);
}

TEST(PacketTimeline, RebinningKeepsBusyTime) {
  packet::Timeline t;
  t.init(4, 1);
  t.add(0, 0, 500);        // bin 0 of 1 ns bins
  t.add(0, 3500, 400);     // bin 3
  EXPECT_EQ(t.bin(), 1000);
  t.add(0, 9000, 1000);    // past 4 ns: bins double twice to 4 ns
  EXPECT_EQ(t.bin(), 4000);
  EXPECT_DOUBLE_EQ(t.utilisation(0, 0), 900.0 / 4000);
  EXPECT_DOUBLE_EQ(t.utilisation(0, 2), 1000.0 / 4000);
  EXPECT_EQ(t.used(10000), 3);
}

// ---------------------------------------------------------------- engine-level closed forms

Config preset(const std::string& name, std::initializer_list<const char*> sets = {}) {
  Config c = load_preset(name);
  for (const char* s : sets) apply_assignment(c, s);
  return c;
}

Schedule empty_schedule(const Config& c, std::uint64_t elems) {
  Schedule s;
  s.algorithm = "test";
  s.gpus = c.fabric.gpus;
  s.topology = c.fabric.topology;
  s.planes = c.fabric.topology == Topology::Star ? c.fabric.planes : 0;
  s.dtype = DType::Bf16;
  s.elems = elems;
  s.bytes = 2 * elems;
  return s;
}

// A copy of `elems` bf16 elements from accelerator `from` to each of `to`, through plane 0 (star).
StepId add_write(Schedule& s, int from, std::initializer_list<int> to, std::uint64_t elems) {
  Step w;
  w.kind = StepKind::Write;
  w.initiator = from;
  w.via = s.topology == Topology::Star ? s.switch_node(0) : kDirect;
  w.op = DataOp::Copy;
  w.srcs = {{s.add_buffer({"in", from, elems, Format::Bf16}), 0, elems}};
  for (int d : to) w.dsts.push_back({s.add_buffer({"out", d, elems, Format::Bf16}), 0, elems});
  return s.add(w);
}

double fixed_ns(const Config& c, const Schedule& s, StepId i) {
  return step_cost(c, s, resource_map(s), s.steps[i]).fixed_ns;
}

// One full packet's time on the wire: payload + header at the raw rate plus the
// efficiency gap, i.e. payload / (raw x efficiency).
double packet_ns(const Config& c, double raw_GBps) {
  return static_cast<double>(c.packet.payload_bytes) / (raw_GBps * c.links.efficiency);
}

const packet::LinkReport* link(const packet::Stats& st, const std::string& name) {
  for (const auto& l : st.links)
    if (l.name == name) return &l;
  return nullptr;
}

TEST(PacketEngineClosedForm, AWriteTakesItsPacketsBackToBackPlusTwoLinksAndTheSwitch) {
  Config c = preset("hgx-h200-8", {"fabric.planes=1"});
  Schedule s = empty_schedule(c, 32768);  // 64 KiB: 256 packets of 256 B
  const StepId w = add_write(s, 0, {1}, 32768);
  packet::Run r = packet::run(c, s);
  const double n = 256, ser = packet_ns(c, c.links.bandwidth_GBps);
  const double want = fixed_ns(c, s, w) + n * ser + 2 * c.links.latency_ns + c.sw.latency_ns;
  EXPECT_NEAR(r.steps[w].finish_ns, want, 0.002);  // whole ps: within two roundings
  const auto* up = link(r.stats, "r0->sw0");
  ASSERT_NE(up, nullptr);
  EXPECT_EQ(up->packets, 256u);
  EXPECT_EQ(up->payload_bytes, 65536u);
  EXPECT_EQ(up->wire_bytes, 65536u + 256u * c.packet.header_bytes);
  EXPECT_NEAR(up->busy_ns, n * ser, 0.001);
}

TEST(PacketEngineClosedForm, CreditsBlockSendersWhenTheInputPortIsFullAndReleaseThem) {
  // Accelerators 0 and 1 write 512 KiB each to accelerator 2 through one plane.
  // With 128 KiB port buffers a lone sender could run at 128 KiB per link
  // latency, more than its half of the downlink to 2, and the output queue
  // covers the switch crossing (369 GB/s x 200 ns = 74 KB): that downlink is
  // the bottleneck, its output queue fills, the input ports behind it fill, and
  // the senders run out of credits until the downlink drains.
  auto run = [](const char* port) {
    Config c = preset("hgx-h200-8", {"fabric.planes=1"});
    apply_assignment(c, port);
    Schedule s = empty_schedule(c, 262144);
    add_write(s, 0, {2}, 262144);
    add_write(s, 1, {2}, 262144);
    return std::make_tuple(c, s, packet::run(c, s));
  };
  const auto [c, s, small] = run("packet.port_buffer_bytes=128K");
  const double ser = packet_ns(c, c.links.bandwidth_GBps);
  // The downlink carries both writes back to back from the first packet's arrival.
  const double want = fixed_ns(c, s, 0) + 4096 * ser + 2 * c.links.latency_ns + c.sw.latency_ns;
  const double got = std::max(small.steps[0].finish_ns, small.steps[1].finish_ns);
  EXPECT_NEAR(got, want, 0.01);
  for (const char* name : {"r0->sw0", "r1->sw0"}) {
    const auto* l = link(small.stats, name);
    ASSERT_NE(l, nullptr);
    EXPECT_GT(l->credit_stall_ns, 100.0) << name << ": the full port blocks the sender";
    EXPECT_EQ(l->packets, 2048u) << name << ": and releases it until all is sent";
  }
  for (const auto& p : small.stats.switch_ports)
    if (p.input) {
      EXPECT_LE(p.peak_queue_bytes, 128u << 10) << p.name << ": credits bound the input port";
    }
  EXPECT_NEAR(link(small.stats, "sw0->r2")->busy_ns, 4096 * ser, 0.001);
  // With room for everything nobody stalls, and the downlink still sets the time.
  const auto [c2, s2, big] = run("packet.port_buffer_bytes=4M");
  EXPECT_EQ(link(big.stats, "r0->sw0")->credit_stall_ns, 0.0);
  EXPECT_NEAR(std::max(big.steps[0].finish_ns, big.steps[1].finish_ns), got, 0.01);
}

TEST(PacketEngineClosedForm, AMulticastIsReplicatedInTheSwitch) {
  Config c = preset("hgx-h200-8", {"fabric.planes=1"});
  Schedule s = empty_schedule(c, 32768);
  const StepId w = add_write(s, 0, {1, 2, 3, 4}, 32768);
  packet::Run r = packet::run(c, s);
  // The sender puts each packet on its link once; the switch copies it to four ports.
  EXPECT_EQ(r.stats.packets, 256u);
  EXPECT_EQ(r.stats.packet_hops, 5u * 256u);
  EXPECT_EQ(link(r.stats, "r0->sw0")->payload_bytes, 65536u);
  for (const char* d : {"sw0->r1", "sw0->r2", "sw0->r3", "sw0->r4"})
    EXPECT_EQ(link(r.stats, d)->payload_bytes, 65536u) << d;
  EXPECT_EQ(link(r.stats, "sw0->r5")->payload_bytes, 0u);
  const double ser = packet_ns(c, c.links.bandwidth_GBps);
  EXPECT_NEAR(r.steps[w].finish_ns, fixed_ns(c, s, w) + 256 * ser + 2 * c.links.latency_ns + c.sw.latency_ns, 0.002);
}

// Two tiers: a packet holds its room in the switch input buffer it came
// through until it starts on its next link, so a sender whose far-end buffer
// holds k packets sends k packets per credit loop, a link's latency and a
// switch crossing when no output is busy. One-shot between the two leaves of
// nvl36x2 as 2 GPUs on one plane: 1 MiB is 4096 packets (256 B + 16 B), each
// crossing an uplink, two trunks and a downlink; 528 bytes of buffer hold one
// packet, 1056 three. Each window waits (L + Lsw) = 325 ns, so the two runs
// differ by (4096 - ceil(4096 / 3)) x 325 ns.
TEST(PacketTwoTierBuffers, AWindowOfKPacketsMovesKPacketsPerLinkAndSwitchLatency) {
  auto run = [](const char* buffer) {
    Config c = preset("nvl36x2", {"fabric.gpus=2", "fabric.leaves=2", "fabric.planes=1"});
    apply_assignment(c, buffer);
    const Schedule s = compile(c, "one-shot", {1u << 20, DType::Bf16});
    return std::make_pair(c, packet::run(c, s));
  };
  const auto [c, one] = run("packet.port_buffer_bytes=528");
  const auto [c3, three] = run("packet.port_buffer_bytes=1056");
  const auto [cd, deep] = run("packet.port_buffer_bytes=4M");
  const double loop = c.links.latency_ns + c.sw.latency_ns;
  EXPECT_NEAR(one.result.time_ns - three.result.time_ns, (4096 - 1366) * loop, 1e-6 * 4096 * loop);
  // The window of one packet is the time: one loop per packet on top of the unbounded run's fixed costs.
  EXPECT_GT(one.result.time_ns, 4096 * loop);
  EXPECT_LT(one.result.time_ns, 4096 * loop + deep.result.time_ns);
  for (const auto& p : one.stats.switch_ports)
    if (p.input) {
      EXPECT_LE(p.peak_queue_bytes, 528u) << p.name;
    }
  EXPECT_GT(link(one.stats, "r0->sw0")->credit_stall_ns, 1e6) << "the sender waits for its window";
  for (const auto& l : deep.stats.links) EXPECT_EQ(l.credit_stall_ns, 0.0) << l.name;
  EXPECT_EQ(one.stats.packets, deep.stats.packets);
  EXPECT_EQ(one.result.max_link_bytes, deep.result.max_link_bytes);
}

// A trunk slower than an accelerator port (oversubscribed 4:1) gets the same
// time's worth of buffer, a quarter of a one-packet port buffer: it still holds
// one packet, so the ring crosses it (it used to stop: "deadlocked"), one
// packet per credit loop, slower than with deep buffers.
TEST(PacketTwoTierBuffers, ASlowTrunkStillHoldsOnePacket) {
  auto run = [](const char* buffer) {
    Config c = preset("nvl36x2", {"fabric.gpus=4", "fabric.leaves=2", "fabric.planes=1", "fabric.oversubscription=4",
                                  "ring.protocol=simple"});
    apply_assignment(c, buffer);
    return packet::run(c, compile(c, "ring", {64u << 10, DType::Bf16}));
  };
  const packet::Run tight = run("packet.port_buffer_bytes=300");
  const packet::Run deep = run("packet.port_buffer_bytes=4M");
  for (const auto& st : tight.steps) EXPECT_GE(st.finish_ns, st.start_ns);
  EXPECT_GT(tight.result.time_ns, deep.result.time_ns);
  EXPECT_EQ(tight.stats.packets, deep.stats.packets);
  for (const auto& p : tight.stats.switch_ports)
    if (p.input) {
      EXPECT_LE(p.peak_queue_bytes, 300u) << p.name << ": one packet of 256 + 16 bytes";
    }
}

// Many-to-many on two tiers (one-shot, 16 GPUs on 4 leaves of nvl576-style,
// 2 MiB, a multicast per GPU replicated in the leaves and spines): every input
// buffer stays within its size (a trunk's scaled with its rate), the senders
// stall on credits where the ECMP's busiest trunks back up into the leaves'
// buffers with the presets' 64 KiB, and the run is then no faster than with
// deep buffers, which agree with the analytic engine and stall nobody. The
// same bytes cross every link either way.
TEST(PacketTwoTierBuffers, BuffersBoundEveryInputAndTheirBackPressureReachesTheSenders) {
  auto run = [](const char* buffer) {
    Config c = preset("nvl576-style", {"fabric.gpus=16", "fabric.leaves=4"});
    apply_assignment(c, buffer);
    const Schedule s = compile(c, "one-shot", {2u << 20, DType::Bf16});
    return std::make_tuple(c, s, packet::run(c, s));
  };
  const auto [c, s, small] = run("packet.port_buffer_bytes=64K");
  const auto [cd, sd, deep] = run("packet.port_buffer_bytes=4M");
  const double trunk_cap = 65536.0 * routed::trunk_raw_GBps(c, s) / port_raw_GBps(c, s);
  std::size_t trunk_inputs = 0;
  for (const auto& p : small.stats.switch_ports) {
    if (!p.input) continue;
    const bool trunk = p.gpu < 0;
    trunk_inputs += trunk ? 1 : 0;
    EXPECT_LE(static_cast<double>(p.peak_queue_bytes), trunk ? trunk_cap : 65536.0) << p.name;
  }
  EXPECT_EQ(trunk_inputs, 2u * 4u * static_cast<std::size_t>(c.fabric.spines * c.fabric.planes));
  double stalled = 0;
  for (const auto& l : small.stats.links) stalled = std::max(stalled, l.credit_stall_ns);
  EXPECT_GT(stalled, 1000.0) << "some sender waits for credits";
  for (const auto& l : deep.stats.links) EXPECT_EQ(l.credit_stall_ns, 0.0) << l.name;
  EXPECT_GE(small.result.time_ns, deep.result.time_ns);
  const SimResult a = simulate(c, "one-shot", {2u << 20, DType::Bf16}, "analytic");
  EXPECT_NEAR(deep.result.time_ns / a.time_ns, 1.0, 0.02);
  EXPECT_EQ(small.stats.packets, deep.stats.packets);
  for (std::size_t k = 0; k < small.stats.links.size(); ++k)
    EXPECT_EQ(small.stats.links[k].payload_bytes, deep.stats.links[k].payload_bytes) << small.stats.links[k].name;
}

TEST(PacketEngineClosedForm, IsaBufferSmallerThanOneReductionGroupEscapesTheDeadlock) {
  // A reduction group is one packet from each of 8 accelerators (8 x 256 B); a
  // buffer of one packet can never hold a whole group, so without the escape
  // (the group the reducer waits for always gets in) the run would deadlock.
  Config c = preset("hgx-h200-8", {"fabric.planes=1", "switch.isa.buffer_bytes=256", "switch.isa.regulation=none",
                                   "switch.isa.waves=1"});
  const Schedule s = compile(c, "scin", Collective{256u << 10, DType::Bf16});
  packet::Run r = packet::run(c, s);
  ASSERT_EQ(r.stats.isa.size(), 1u);
  std::uint64_t group = 0;  // bytes of one reduction group: a packet from each source of the ISA's reads
  for (const auto& st : s.steps)
    if (st.kind == StepKind::Read && s.is_switch(st.initiator))
    {
      std::uint64_t g = 0;
      for (const auto& r : st.srcs) g += std::min<std::uint64_t>(c.packet.payload_bytes, region_bytes(s, r));
      group = std::max(group, g);
    }
  ASSERT_GT(group, c.sw.isa.buffer_bytes);
  EXPECT_EQ(r.stats.isa[0].buffer_hwm_bytes, group) << "the escape admits one whole group at a time";
  EXPECT_GT(r.result.time_ns, run_analytic(c, s).time_ns);  // slower than an ample buffer, but it finishes
}

TEST(PacketEngineClosedForm, AMeshReadIsRequestLatencyMemoryThenResponsesBackToBack) {
  Config c = preset("mesh-8");
  Schedule s = empty_schedule(c, 32768);
  Step rd;
  rd.kind = StepKind::Read;
  rd.initiator = 0;
  rd.via = kDirect;
  rd.op = DataOp::Copy;
  rd.srcs = {{s.add_buffer({"remote", 3, 32768, Format::Bf16}), 0, 32768}};
  rd.dsts = {{s.add_buffer({"local", 0, 32768, Format::Bf16}), 0, 32768}};
  const StepId i = s.add(rd);
  packet::Run r = packet::run(c, s);
  // Each peer link has 1/(N-1) of the bandwidth; the responses come over r3->r0.
  const double ser = packet_ns(c, c.links.bandwidth_GBps / (c.fabric.gpus - 1));
  const double want = fixed_ns(c, s, i) + c.links.latency_ns + c.accelerator.mem_latency_ns + 256 * ser +
                      c.links.latency_ns;
  EXPECT_NEAR(r.steps[i].finish_ns, want, 0.002);
  EXPECT_EQ(link(r.stats, "r3->r0")->payload_bytes, 65536u);
  EXPECT_EQ(link(r.stats, "r0->r3")->payload_bytes, 0u);  // requests are control messages
  EXPECT_EQ(r.result.max_link_bytes, 65536.0);
}

// ---------------------------------------------------------------- step costs by shape

// Equal bit for bit: the memo must give what the cost model gives.
void expect_same_cost(const StepCost& a, const StepCost& b, const std::string& what) {
  EXPECT_EQ(a.fixed_ns, b.fixed_ns) << what;
  EXPECT_EQ(a.fixed_term, b.fixed_term) << what;
  for (int t = 0; t < kTermCount; ++t) EXPECT_EQ(a.latency_ns[t], b.latency_ns[t]) << what << " term " << t;
  ASSERT_EQ(a.uses.size(), b.uses.size()) << what;
  for (std::size_t k = 0; k < a.uses.size(); ++k) {
    EXPECT_EQ(a.uses[k].resource, b.uses[k].resource) << what << " use " << k;
    EXPECT_EQ(a.uses[k].kind, b.uses[k].kind) << what << " use " << k;
    EXPECT_EQ(a.uses[k].amount_bytes, b.uses[k].amount_bytes) << what << " use " << k;
    EXPECT_EQ(a.uses[k].rate_GBps, b.uses[k].rate_GBps) << what << " use " << k;
    EXPECT_EQ(a.uses[k].term, b.uses[k].term) << what << " use " << k;
    EXPECT_EQ(a.uses[k].fed_by_transfers, b.uses[k].fed_by_transfers) << what << " use " << k;
  }
}

namespace {

/// A preset with assignments, an algorithm and a size: a schedule to compile.
struct CompiledCase {
  const char* preset;
  std::vector<const char*> sets;
  const char* algo;
  std::uint64_t bytes;
  /// The preset with a concrete ring protocol (compile() needs one) and the assignments.
  Config config() const {
    Config c = load_preset(preset);
    apply_assignment(c, "ring.protocol=ll128");
    for (const char* a : sets) apply_assignment(c, a);
    return c;
  }
};

}  // namespace

// Every step of the shipped algorithms' schedules (star, mesh, two tiers; sizes
// that split into unequal chunks, so steps of one rank differ in element count
// only) costs the same through StepCosts as through step_cost(), and the ring's
// steps share shapes (the memo is used: hits).
TEST(PacketStepCosts, EveryStepCostsWhatTheModelGivesAndRingStepsShareShapes) {
  const std::vector<CompiledCase> cases = {
      {"hgx-h200-8", {}, "ring", 1000006},          {"hgx-h200-8", {}, "nvls", 1000006},
      {"hgx-h200-8", {}, "scin", 1000006},          {"hgx-h200-8", {}, "scin-inq", 1 << 20},
      {"hgx-h200-8", {}, "one-shot", 65538},        {"hgx-h200-8", {}, "two-shot", 65538},
      {"hgx-h200-8", {"fabric.gpus=64"}, "ring", 98306}, {"hgx-a100-8", {}, "ring", 4098},
      {"hgx-h200-8", {}, "ring-q8", 1 << 20},       {"mesh-8", {}, "ring", 1000006},
      {"mesh-8", {}, "one-shot", 65538},            {"nvl36x2", {}, "ring", 1 << 20},
      {"nvl36x2", {}, "nvls", 1 << 20},             {"nvl36x2", {}, "scin", 1 << 20},
  };
  for (const CompiledCase& k : cases) {
    const Config c = k.config();
    const Schedule s = compile(c, k.algo, Collective{k.bytes, DType::Bf16});
    const ResourceMap rm = resource_map(s);
    packet::StepCosts memo;
    for (std::size_t i = 0; i < s.steps.size(); ++i) {
      const std::string what = fmt::format("{} {} {} B step {} ({})", k.preset, k.algo, k.bytes, i, s.steps[i].label);
      const packet::StepCosts::Costed got = memo.get(c, s, rm, s.steps[i]);
      expect_same_cost(*got.cost, step_cost(c, s, rm, s.steps[i]), what);
      EXPECT_EQ(got.factor, transfer_factor(c, s, s.steps[i])) << what;
      if (::testing::Test::HasFailure()) return;
    }
    if (std::string_view(k.algo) == "ring") {
      EXPECT_GT(memo.hits(), s.steps.size() / 2) << k.preset << " " << k.bytes;
    }
  }
}

// step_cost_without_ports is step_cost without the accelerator ports' uses:
// the same fixed cost, latencies and other uses (in order), bit for bit, for
// every step of the shipped algorithms on a star, a mesh and two tiers (where
// the routed costs keep their ports); and it does leave the port uses out.
TEST(PacketStepCosts, WithoutPortsIsTheCostWithItsPortUsesLeftOut) {
  const std::vector<CompiledCase> cases = {
      {"hgx-h200-8", {}, "nvls", 1000006},          {"hgx-h200-8", {}, "nvls", 8},
      {"hgx-h200-8", {}, "scin", 1000006},          {"hgx-h200-8", {}, "scin-inq", 1 << 20},
      {"hgx-h200-8", {}, "one-shot", 65538},        {"hgx-h200-8", {}, "two-shot", 65538},
      {"hgx-h200-8", {}, "ring", 1000006},          {"hgx-h200-8", {}, "two-shot-q8", 1 << 20},
      {"hgx-h200-8", {"fabric.gpus=64"}, "nvls", 98306}, {"gb200-nvl72", {}, "nvls", 65536},
      {"hgx-a100-8", {}, "two-shot", 4098},         {"mesh-8", {}, "one-shot", 65538},
      {"mesh-8", {}, "ring", 1000006},              {"nvl36x2", {}, "nvls", 1 << 20},
      {"nvl36x2", {}, "scin", 1 << 20},
  };
  std::size_t dropped = 0, kept_ports = 0;
  StepCost got;
  for (const CompiledCase& k : cases) {
    const Config c = k.config();
    const Schedule s = compile(c, k.algo, Collective{k.bytes, DType::Bf16});
    const ResourceMap rm = resource_map(s);
    for (std::size_t i = 0; i < s.steps.size(); ++i) {
      const std::string what = fmt::format("{} {} {} B step {} ({})", k.preset, k.algo, k.bytes, i, s.steps[i].label);
      StepCost want = step_cost(c, s, rm, s.steps[i]);
      step_cost_without_ports(c, s, rm, s.steps[i], got);
      if (s.two_tier()) {
        kept_ports += std::count_if(got.uses.begin(), got.uses.end(), [](const ResourceUse& u) { return is_port(u.kind); });
      } else {
        const auto n = want.uses.size();
        want.uses.erase(std::remove_if(want.uses.begin(), want.uses.end(),
                                       [](const ResourceUse& u) { return is_port(u.kind); }),
                        want.uses.end());
        dropped += n - want.uses.size();
      }
      expect_same_cost(got, want, what);
      if (::testing::Test::HasFailure()) return;
    }
  }
  EXPECT_GT(dropped, 10000u);
  EXPECT_GT(kept_ports, 100u);
}

// Steps that differ only in where their regions lie share a cost; steps that
// differ in element count, buffer, initiator or plane do not.
TEST(PacketStepCosts, OffsetsShareACostCountsBuffersAndNodesDoNot) {
  Config c = preset("hgx-h200-8");
  Schedule s = empty_schedule(c, 4096);
  const BufferId in0 = s.add_buffer({"in", 0, 4096, Format::Bf16});
  const BufferId in1 = s.add_buffer({"in", 1, 4096, Format::Bf16});
  const BufferId out1 = s.add_buffer({"out", 1, 4096, Format::Bf16});
  const BufferId out2 = s.add_buffer({"out", 2, 4096, Format::Bf16});
  auto write = [&](int from, BufferId src, BufferId dst, std::uint64_t off, std::uint64_t n, int plane) {
    Step w;
    w.kind = StepKind::Write;
    w.initiator = from;
    w.via = s.switch_node(plane);
    w.op = DataOp::Copy;
    w.srcs = {{src, off, n}};
    w.dsts = {{dst, off, n}};
    return s.add(w);
  };
  const std::vector<StepId> steps = {
      write(0, in0, out1, 0, 1024, 0),     write(0, in0, out1, 1024, 1024, 0),  // offsets: shared
      write(0, in0, out1, 2048, 1000, 0),                                      // count
      write(0, in0, out2, 0, 1024, 0),                                         // destination buffer
      write(1, in1, out2, 0, 1024, 0),                                         // initiator and source
      write(0, in0, out1, 0, 1024, 1),                                         // plane
  };
  const ResourceMap rm = resource_map(s);
  packet::StepCosts memo;
  for (StepId i : steps) {
    expect_same_cost(*memo.get(c, s, rm, s.steps[i]).cost, step_cost(c, s, rm, s.steps[i]), fmt::format("step {}", i));
  }
  EXPECT_EQ(memo.hits(), 1u);
  EXPECT_EQ(memo.shapes(), 5u);
}

TEST(PacketStats, TypedStatisticsAreWhatTheJsonCarries) {
  Config c = preset("hgx-h200-8", {"packet.payload_bytes=4096", "packet.timeline_samples=16"});
  packet::Run r = packet::run(c, compile(c, "scin", Collective{4u << 20, DType::Bf16}));
  const auto& x = r.result.extra;
  EXPECT_EQ(x["events"].get<std::uint64_t>(), r.stats.events);
  EXPECT_EQ(x["packet_hops"].get<std::uint64_t>(), r.stats.packet_hops);
  ASSERT_EQ(x["links"].size(), r.stats.links.size());
  for (std::size_t k = 0; k < r.stats.links.size(); ++k) {
    EXPECT_EQ(x["links"][k]["name"], r.stats.links[k].name);
    EXPECT_EQ(x["links"][k]["payload_bytes"].get<std::uint64_t>(), r.stats.links[k].payload_bytes);
  }
  EXPECT_EQ(x["timeline"]["samples"].get<int>(), r.stats.timeline.samples);
  EXPECT_GT(r.stats.events, 0u);
  EXPECT_EQ(r.stats.stale_events + 0, x["stale_events"].get<std::uint64_t>());
}

}  // namespace
}  // namespace scin
