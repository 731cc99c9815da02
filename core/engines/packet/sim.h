// What the packet engine's components share: packets, flows (one network step
// in flight), the sources an accelerator's link serves, the feeders that wait
// on a switch output queue, event targets and the fabric's geometry.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "base/error.h"
#include "engines/packet/time.h"
#include "schedule/schedule.h"

namespace scin::packet {

constexpr std::uint16_t kAllDsts = 0xffff;
constexpr std::uint16_t kResult = 0xfffe;  // two-tier read: the reduced result's route

// Event targets: a type in the top 3 of the 24 target bits, an id in the rest.
enum EvType : std::uint32_t {
  EvLink = 0,        // an accelerator's link may start its next packet
  EvPipe = 1,        // the head packet on an uplink reaches the switch input port
  EvFlowStart = 2,   // a network step starts injecting
  EvStepDone = 3,    // a step finishes
  EvIsaWake = 4,     // ISA buffer room frees (reduction done)
  EvRoom = 5,        // a full switch output queue loses a packet: its waiters retry in turn
  EvReadReturn = 6,  // a read response (or reduced result) reaches its issuing accelerator
};
constexpr std::uint32_t kTypeShift = 21;
constexpr std::uint32_t kIdMask = (1u << kTypeShift) - 1;
constexpr std::uint32_t target_of(EvType t, std::uint32_t id) { return (t << kTypeShift) | id; }

struct Pkt {
  std::uint32_t flow = 0;   // FlowId
  std::uint32_t index = 0;  // packet index in the flow; for reads, the reduction group
  std::uint32_t bytes = 0;  // payload bytes
  std::uint16_t slot = 0;   // read: source slot; write: destination slot or kAllDsts
  std::uint8_t cls = 0;     // traffic class on an input port: 0 writes, 1 read responses
};

struct Queued {
  Pkt p;
  Ps t = 0;  // output queue: ready to leave; pipe / input port: header arrival
};

enum class FlowKind : std::uint8_t { GpuWrite, IsaWrite, IsaRead, GpuRead };

// One network step in flight: the packets of one Write or Read. Flows live in a
// pool (FlowId) reused once their step is done, so memory follows the steps in
// flight, not the schedule.
using FlowId = std::uint32_t;
constexpr FlowId kNoFlow = ~FlowId{0};
constexpr std::uint32_t kNoShape = ~std::uint32_t{0};  // Flow::shape: none
// Laid out by use: the first 64 bytes (the record is aligned to a cache line)
// hold what a packet reads at every link it crosses (its wire time, its plane,
// where it goes next: two-shot on nvl576-style has 331 K flows in flight, and
// each line of a flow a packet touches is a likely miss), the next line what
// its arrival at a destination reads.
struct alignas(64) Flow {
  StepId step = 0;
  FlowKind kind = FlowKind::GpuWrite;
  bool active = false;
  // Where plane is -1: the plane of packet 0, so packet i crosses plane
  // (i + rot) % planes. Set per step from its region's address (Engine::setup_flow).
  std::uint16_t rot = 0;
  int plane = -1;                        // fixed plane, or -1: packet i on plane (i + rot) % planes
  NodeId initiator = kNoNode;
  NodeId sink = kNoNode;                 // read: where the result lands; a write to one node (uc_routed): that node
  bool switch_dsts = false;              // write: some destination is a switch buffer
  // A multicast from an accelerator to accelerators in ascending order: no hops
  // kept; forward() lists each switch's links from `dsts` (tiers.cc, mc_next_links).
  bool mc_routed = false;
  // A write from an accelerator to one node: no hops kept either; forward()
  // takes each packet's next link from its route to `sink` (as a read's,
  // read_next_link). Two-shot on nvl576-style starts 576 x 575 such pushes at
  // once, each with 18 planes x 4 hops, allocated and sorted at its start.
  bool uc_routed = false;
  double inv_raw = 0, gap_ns = 0;        // wire time of a packet: (payload + header) * inv_raw + gap * payload / P
  Fine ser_full = 0;                     // wire time of a full packet
  // (line 1: a packet delivered)
  std::uint64_t expected = 0, delivered = 0;
  Ps last = 0;
  std::vector<NodeId> dsts;              // write destinations
  std::vector<NodeId> srcs;              // read sources
  std::vector<std::uint64_t> src_bytes;  // read: bytes of each source region
  std::vector<std::uint32_t> src_n;      // read: packets of each source
  std::vector<std::uint32_t> src_id;     // read: the Source of each slot (and plane)
  std::vector<std::uint32_t> sources;    // every Source of this flow (freed with it)
  std::uint64_t bytes = 0;               // write: source bytes; read: destination bytes
  std::uint32_t n = 0;                   // packets (write) / groups (read)
  std::uint32_t n_min = 0;               // read: packets of the shortest source
  Ps extra_end = 0;                      // non-network resources held by the step (HBM)
  bool to_switch = false;                // read result stays in the switch (ISA accumulator)
  bool every_gpu = false;                // star read: source slot a is accelerator a, for every a, all of one length
  bool in_gpu_order = false;             // read: source slot a is accelerator a, for every slot (a shape field)
  // reads: reduction groups (packet i of every source)
  std::vector<std::uint16_t> count;      // responses arrived per group
  std::vector<Ps> complete;              // when the group's last response was whole
  std::vector<std::uint32_t> staged;     // ISA: bytes staged per group
  std::uint32_t next_group = 0;          // lowest group not yet complete (escape admission)
  // The step shape (its number) whose fields this flow holds, or kNoShape: kind,
  // plane, initiator, dsts, srcs, src_bytes, src_n, bytes, n, n_min, in_gpu_order, to_switch,
  // plain_per_byte, reduce_inv_GBps, codec ("the shape's fields", never written
  // while the flow runs). A flow reused for a step of that shape keeps them and
  // resets the others only (Engine::apply_flow_shape). (Here, in the 4 bytes
  // after next_group that were padding.)
  std::uint32_t shape = kNoShape;
  double plain_per_byte = 0;             // plain (unquantised) bytes reduced per wire byte, all sources
  double reduce_inv_GBps = 0;            // ns per plain byte of the reducing unit(s); 0 = free
  bool codec = false;                    // quantised data: the INQ unit works too
  double pace_ns = 0;                    // paced regulation: request interval per port
  // ISA write / accelerator reads: next packet (group) to send
  std::uint32_t next_send = 0;
  bool waiting = false;
  // Two-tier fabrics (tiers.cc): the links a write's packet takes on from each
  // node (its tree). Sorted by node once the flow has started (tiers.cc:
  // forward() searches them).
  struct Hop {
    NodeId at;
    int link;
  };
  std::vector<Hop> hops;
  // (A read's packets follow their routes, computed again at each switch: a
  // read holds no hops.) With many hops (a multicast to 576 accelerators over
  // 18 planes holds ~10^4), where each switch's part of `hops` starts, so
  // forward() finds a node's links without a binary search over all of them
  // (its misses were two thirds of forward()): switch j's from hop_first[j].
  std::vector<std::uint32_t> hop_first;
  std::vector<NodeId> red;               // read, per plane: where the sources meet (reduced)

  /// Back to a default Flow, keeping the vectors' storage: flows are reused step
  /// after step (a ring at 1024 accelerators runs 2 M steps of one packet each),
  /// and freeing and growing their vectors every time was a sixth of such a run.
  /// Field by field (moving the vectors out, assigning a default Flow and moving
  /// them back was ~100 instructions a step): every field above and below is
  /// here; the static_assert after the struct asks whoever adds one to add it.
  void reset() {
    kind = FlowKind::GpuWrite, plane = -1, initiator = kNoNode;
    dsts.clear(), srcs.clear(), src_bytes.clear(), src_n.clear();
    bytes = 0, n = 0, n_min = 0, to_switch = false, in_gpu_order = false;
    plain_per_byte = 0, reduce_inv_GBps = 0, codec = false, shape = kNoShape;
    reset_run();
  }
  /// The same for every field but the shape's (see `shape`): a flow reused for
  /// a step of the shape it holds (a ring at 1024 accelerators: a rank's next
  /// step, mostly) keeps them, vectors and all.
  void reset_run() {
    step = 0, active = false, rot = 0;
    src_id.clear(), sources.clear();
    inv_raw = 0, gap_ns = 0, ser_full = 0, extra_end = 0;
    expected = 0, delivered = 0, last = 0, every_gpu = false;
    count.clear(), complete.clear(), staged.clear();
    next_group = 0, pace_ns = 0;
    next_send = 0, waiting = false;
    hops.clear(), hop_first.clear(), red.clear(), sink = kNoNode, switch_dsts = false, mc_routed = false,
    uc_routed = false;
  }
  /// Responses group i waits for (sources may differ in length).
  std::uint16_t expected_in_group(std::uint32_t i) const {
    if (i < n_min) return static_cast<std::uint16_t>(srcs.size());
    std::uint16_t k = 0;
    for (auto m : src_n) k += m > i ? 1 : 0;
    return k;
  }
  /// Counts a response of group i that is whole at `t`; true when the group is complete.
  bool arrive(std::uint32_t i, Ps t) {
    complete[i] = std::max(complete[i], t);
    return ++count[i] == expected_in_group(i);
  }
  /// Advances next_group past complete groups.
  void advance_next_group() {
    while (next_group < n && count[next_group] == expected_in_group(next_group)) ++next_group;
  }
};

static_assert(sizeof(Flow) == 448, "Flow changed: add the new field to Flow::reset() (and fix this size)");
static_assert(offsetof(Flow, ser_full) + sizeof(Fine) <= 64, "Flow: a packet's per-link fields in its first cache line");

// Packets a sending accelerator offers to a link, lazily (no packet exists before it is sent).
// 48 bytes, widest fields first (an NVLS ld_reduce at 1024 accelerators keeps a million live).
struct Source {
  Ps ready = 0;              // every packet ready from this time (requested reads: see Sender::requested)
  std::uint64_t total = 0;   // bytes of this source (read: its region; write: the step's)
  // Copied from the flow so picking and sending a packet loads no Flow:
  Fine ser_full = 0;         // wire time of a full packet
  std::uint32_t flow = 0;    // FlowId
  std::uint32_t next = 0, end = 0, stride = 1;
  std::uint16_t slot = 0;
  bool response = false;     // read responses (vs the accelerator's own writes)
  bool isa_read = false;     // an ISA read response
  bool isa_fast = false;     // ... into the ISA accumulator, unquantised: may take the fast path

  Source() = default;
  Source(std::uint32_t flow_, std::uint16_t slot_, std::uint32_t next_, std::uint32_t end_, std::uint32_t stride_,
         Ps ready_, bool response_, std::uint64_t total_)
      : ready(ready_), total(total_), flow(flow_), next(next_), end(end_), stride(stride_), slot(slot_),
        response(response_) {}
};
static_assert(sizeof(Source) == 48);
constexpr std::uint32_t kNoSource = ~std::uint32_t{0};

enum class FeederKind : std::uint8_t { InPort, IsaWrite, ResultOut };
struct Feeder {
  FeederKind kind;
  std::uint32_t id;
};

// Sizes and numbering of one run.
struct Geometry {
  int gpus = 0, planes = 1;
  bool star = true;
  std::uint64_t P = 256, H = 16;  // packet payload and header bytes
  std::uint64_t port_cap = 0;     // bytes per switch port buffer (and per class of an input port)
  bool saf = false;               // store-and-forward

  int up(int g, int p) const { return g * planes + p; }
  int down(int g, int p) const { return gpus * planes + g * planes + p; }
  int direct(int a, int b) const { return a * gpus + b; }
  std::uint32_t pkt_bytes(std::uint64_t total, std::uint32_t i) const {
    const std::uint64_t off = static_cast<std::uint64_t>(i) * P;
    return static_cast<std::uint32_t>(std::min<std::uint64_t>(P, total - off));
  }
  std::uint32_t npkts(std::uint64_t total) const {
    const std::uint64_t n = (total + P - 1) / P;
    if (n > 0x7fffffffu)
      throw Error(fmt::format("packet.payload_bytes: {} bytes in packets of {} bytes is more than 2^31 packets; "
                              "raise packet.payload_bytes", total, P));
    return static_cast<std::uint32_t>(n);
  }
  /// The plane packet (read: group) `index` of flow f crosses: its fixed
  /// plane, else (index + rot) mod planes (striped from its address's plane).
  int plane_of(const Flow& f, std::uint32_t index) const {
    return f.plane >= 0 ? f.plane : static_cast<int>((index + f.rot) % static_cast<std::uint32_t>(planes));
  }
  /// The first packet of flow f on plane p (then every planes-th): plane_of's inverse.
  std::uint32_t first_on(const Flow& f, int p) const {
    return f.plane >= 0 ? 0 : static_cast<std::uint32_t>((p + planes - f.rot) % planes);
  }
  /// Wire time of a packet of `bytes` payload in flow f, in ns (not yet rounded):
  /// its bytes and header at the raw rate, and the gap in proportion to its
  /// payload (the gap paces payload to the step's rate R; a partial packet
  /// carries less of it: docs/model.md section 4, "Links: serialisation").
  /// A full packet's gap is g x 1.0: the same bits as g.
  double ser_ns(const Flow& f, std::uint32_t bytes) const {
    return static_cast<double>(bytes + H) * f.inv_raw +
           f.gap_ns * (static_cast<double>(bytes) / static_cast<double>(P));
  }
  /// The same in fixed point (full packets precomputed).
  Fine ser_fine(const Flow& f, std::uint32_t bytes) const {
    if (bytes == P) [[likely]]
      return f.ser_full;  // (a branch: the compiler otherwise computed both sides for every packet)
    return to_fine(ser_ns(f, bytes));
  }
};

}  // namespace scin::packet
