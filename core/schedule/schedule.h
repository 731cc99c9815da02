// The schedule IR: what an algorithm compiles a collective into, and what every
// engine (analytic, packet, data) executes. Algorithms know nothing about
// engines; engines know nothing about algorithms.
//
// Nodes: accelerators are 0..gpus-1, switch planes are gpus..gpus+planes-1.
// Buffers: typed arrays of elements living on one node. A Region is a range of
// elements of one buffer. Bytes on the wire are derived from the *source*
// buffer's format (so a quantised buffer moves INT8 + scales).
//
// Timing semantics (what the engines charge), by StepKind:
//   Launch  - a kernel launch (or stream op) on `initiator`: fixed overhead.
//   Write   - `initiator` pushes srcs[0] (on initiator) to every region in dsts.
//             One dst: unicast. Several dsts: multicast, replicated in switch `via`.
//             Further srcs (op Reduce, one dst) live on the destination node and
//             are summed in as the data arrives: a fused receive-reduce (ring).
//   Read    - `initiator` pulls every region in srcs (request out, memory access,
//             response back) and delivers to dsts[0]. Several srcs with op Reduce:
//             the responses are summed on the way, by `unit` (NVLS ld_reduce in
//             the switch when the initiator is an accelerator; the ISA when the
//             initiator is the switch itself).
//   Compute - a local operation on `initiator` (reduction, (de)quantisation),
//             throughput given by `unit`.
//   Signal  - a small atomic write from `initiator` to node `target`: Arrive
//             (counter in a switch) or a flag write (to an accelerator).
//   Wait    - `initiator` polls until all deps have completed (counter reached,
//             flag seen): costs one poll.
// A step starts when all its deps have finished. `via` names the switch plane a
// transfer between accelerators crosses; kAllPlanes spreads it evenly over all
// planes; on a switchless mesh it is kDirect.
//
// Data semantics (what the data engine computes), by DataOp:
//   None   - no data effect (sync, launch).
//   Copy   - every dsts[k] = srcs[0], converted to the dst buffer's format
//            (rounding to BF16/FP16, quantising to a codec, or dequantising).
//   Reduce - dsts[k] = (accumulate ? dsts[k] : 0) + sum of srcs, summed in
//            `accum` format in the order srcs are listed (quantised sources are
//            dequantised first), then converted to each dst's format.
// All srcs and dsts of a step have the same element count.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "fabric/config.h"
#include "schedule/inline_vec.h"

namespace scin {

struct RunContext;  // base/run_context.h


using NodeId = int;
using StepId = std::uint32_t;
using BufferId = std::uint32_t;

constexpr NodeId kNoNode = -1;
constexpr NodeId kAllPlanes = -2;   // `via`: spread evenly over all switch planes
constexpr NodeId kDirect = -3;      // `via`: direct accelerator-to-accelerator link (mesh)
constexpr StepId kNoStep = 0xffffffffu;

/// Element formats. The first three are plain floating point; the rest are
/// block-quantised codecs whose block size and scale format come from QuantSpec
/// (recorded per buffer so one schedule is self-contained).
enum class Format { Fp32, Bf16, Fp16, Int8Block, Int4Block, Fp8E4M3Block, Fp8E5M2Block };

enum class DType { Bf16, Fp16, Fp32 };

enum class StepKind { Launch, Write, Read, Compute, Signal, Wait };
enum class DataOp { None, Copy, Reduce };

/// The hardware unit that does a step's arithmetic (and so limits its rate).
enum class Unit {
  None,
  AccelSm,     // accelerator cores, HBM-bound (ring reduce, local reductions, quantise kernels)
  NvlsReduce,  // NVSwitch multimem reduction (ld_reduce)
  IsaReduce,   // SCIN in-switch accelerator reduction
  IsaInq,      // SCIN INQ unit (in-switch (de)quantisation)
};

struct BufferDecl {
  std::string name;        // e.g. "in", "out", "scratch", "isa.acc"
  NodeId node;
  std::uint64_t elems;
  Format format;
  int block_elems = 0;     // codecs only: values per scale
  ScaleFormat scale_format = ScaleFormat::Fp16;  // codecs only
};

struct Region {
  BufferId buffer = 0;
  std::uint64_t offset = 0;  // in elements
  std::uint64_t count = 0;   // in elements
};

/// A step's lists keep their first entries inside the step (InlineVec,
/// schedule/inline_vec.h): two sources (a ring step's send and local
/// operand), one destination, four dependencies. Wider steps (a reduction
/// over every rank, a multicast, a barrier's wait) hold a heap block.
using SrcList = InlineVec<Region, 2>;
using DstList = InlineVec<Region, 1>;
using DepList = InlineVec<StepId, 4>;

struct Step {
  StepKind kind = StepKind::Launch;
  NodeId initiator = kNoNode;
  NodeId target = kNoNode;         // Signal only
  NodeId via = kNoNode;            // switch plane for transfers; kAllPlanes / kDirect
  DataOp op = DataOp::None;
  bool accumulate = false;         // Reduce: add into the current dst value
  Format accum = Format::Fp32;     // Reduce: format of the running sum
  Unit unit = Unit::None;
  RingProtocol protocol = RingProtocol::Simple;  // ring steps: LL / LL128 / Simple costs
  bool ring_step = false;          // charge the ring protocol's per-step costs
  SrcList srcs;
  DstList dsts;
  DepList deps;                    // always earlier steps: the list is in topological order
  std::string label;               // for --explain and timelines, e.g. "rs[2] r3->r4"
};

struct Schedule {
  std::string algorithm;           // "ring", "nvls", ...
  std::string variant;             // e.g. ring protocol "LL"
  int gpus = 0;
  int planes = 0;                  // switch planes (0 on a mesh)
  Topology topology = Topology::Star;
  DType dtype = DType::Bf16;
  std::uint64_t elems = 0;         // elements per rank
  std::uint64_t bytes = 0;         // message size per rank, S
  std::vector<BufferDecl> buffers;
  std::vector<Step> steps;
  std::vector<BufferId> input;     // per rank: buffer holding the rank's contribution
  std::vector<BufferId> output;    // per rank: buffer that must end holding the sum

  // Two-tier fabrics (issue 16): per plane, `leaves` leaf switches with
  // gpus / leaves accelerators each and `spines` spine switches. Switch nodes
  // are numbered plane by plane: plane p's leaves, then its spines.
  int leaves = 0;
  int spines = 0;

  NodeId switch_node(int plane) const { return gpus + plane; }
  bool is_switch(NodeId n) const { return n >= gpus; }
  /// Switch nodes: planes (star), planes x (leaves + spines) (two-tier), 0 (mesh).
  int switch_count() const { return topology == Topology::TwoTier ? planes * (leaves + spines) : planes; }
  int node_count() const { return gpus + switch_count(); }
  bool two_tier() const { return topology == Topology::TwoTier; }
  int gpus_per_leaf() const { return gpus / std::max(1, leaves); }
  NodeId leaf_node(int plane, int leaf) const { return gpus + plane * (leaves + spines) + leaf; }
  NodeId spine_node(int plane, int spine) const { return gpus + plane * (leaves + spines) + leaves + spine; }
  /// 0 for an accelerator, 1 for a star plane switch or a leaf, 2 for a spine.
  int tier(NodeId n) const;
  /// The plane of switch `n` (-1 for an accelerator).
  int plane_of(NodeId n) const;
  /// Two-tier: the leaf (index within its plane) an accelerator hangs off, or a leaf switch's own index.
  int leaf_of(NodeId n) const;
  /// Two-tier: the spine (index within its plane) of switch node `n`.
  int spine_of(NodeId n) const { return (n - gpus) % (leaves + spines) - leaves; }
  /// Two-tier: the nodes a transfer from `a` to `b` crosses in `plane`, both
  /// ends included (at most 5): up to the first common switch, down from it;
  /// two leaves (or two spines) are joined by one spine (leaf) picked by
  /// deterministic ECMP on (a, b), or spine `spine` if >= 0 (a multicast
  /// tree crosses one spine). Returns the node count written to `out`.
  int route(NodeId a, NodeId b, int plane, NodeId out[5], int spine = -1) const;

  BufferId add_buffer(BufferDecl b);
  StepId add(Step s);
};

Format format_of(DType t);
/// The block format a codec stores values in.
Format codec_format(Codec c);
bool is_codec(Format f);
const char* to_string(Format f);
const char* to_string(DType t);
const char* to_string(StepKind k);
const char* to_string(Unit u);
DType parse_dtype(const std::string& text);   // "bf16" | "fp16" | "fp32"; throws Error

/// Bytes of `count` elements of buffer `b` as stored (codecs: payload + one scale per block).
std::uint64_t region_bytes(const BufferDecl& b, std::uint64_t count);
std::uint64_t region_bytes(const Schedule& s, const Region& r);

/// Checks structural invariants: deps point backwards, regions lie inside their
/// buffers, src/dst counts agree, nodes exist. Throws Error describing the step.
/// `ctx` (optional) is polled as the check goes (throws Cancelled on a stop request).
void check_schedule(const Schedule& s, const RunContext* ctx = nullptr);

/// Bytes each accelerator sends (egress) and receives (ingress) over its links,
/// as the schedule implies (multicast counted once on the sender's link and
/// once per receiver). Used by the engines' byte-conservation tests.
struct LinkBytes {
  std::vector<double> egress_bytes;   // per accelerator
  std::vector<double> ingress_bytes;  // per accelerator
  double max_link_bytes() const;
};
LinkBytes link_bytes(const Schedule& s);
/// The same with each transfer a switch issues counted `plane_weight[its
/// plane]` times (a schedule built for some planes standing for others alike:
/// CompileOptions::planes).
LinkBytes link_bytes(const Schedule& s, const std::vector<double>& plane_weight);
/// link_bytes()'s sums for one step of `s` (s.steps need not hold it), weighted
/// `w`, added into `lb` (its lists sized s.gpus).
void add_link_bytes(const Schedule& s, const Step& st, double w, LinkBytes& lb);

}  // namespace scin
