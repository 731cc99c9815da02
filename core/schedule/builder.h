// Building schedules: the helpers every algorithm uses (spans of a message,
// buffers, steps) and the builders of the shipped algorithm families. A new
// algorithm is a function void(Builder&) registered in the AlgorithmInfo table
// (schedule/algorithms.h); see docs/architecture.md.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "fabric/config.h"
#include "schedule/algorithms.h"
#include "schedule/schedule.h"

namespace scin::build {

struct Span {
  std::uint64_t offset = 0;
  std::uint64_t count = 0;
};

/// split(elems, parts, align)[i], without the others.
inline Span split_one(std::uint64_t elems, int parts, int i, std::uint64_t align = 1) {
  const std::uint64_t units = (elems + align - 1) / align;
  const auto p = static_cast<std::uint64_t>(parts), k = static_cast<std::uint64_t>(i);
  const std::uint64_t b = std::min(elems, (k * units / p) * align);
  const std::uint64_t e = std::min(elems, ((k + 1) * units / p) * align);
  return {b, e - b};
}
/// Splits `elems` into `parts` contiguous spans whose boundaries fall on
/// multiples of `align` (whole quantisation blocks); spans may be empty.
inline std::vector<Span> split(std::uint64_t elems, int parts, std::uint64_t align = 1) {
  std::vector<Span> out(static_cast<std::size_t>(parts));
  for (int i = 0; i < parts; ++i) out[static_cast<std::size_t>(i)] = split_one(elems, parts, i, align);
  return out;
}

inline Span sub(const Span& outer, const Span& inner) { return {outer.offset + inner.offset, inner.count}; }

inline Region at(BufferId b, const Span& s) { return {b, s.offset, s.count}; }

/// A kernel launch on `node` (no deps; labelled unless `labelled` is false).
inline Step launch_step(NodeId node, bool ring, RingProtocol p, bool labelled = true) {
  Step st;
  st.kind = StepKind::Launch;
  st.initiator = node;
  st.ring_step = ring;
  st.protocol = p;
  if (labelled) st.label = fmt::format("launch r{}", node);
  return st;
}

/// One ring step without deps and label (Builder::ring_send, RingForm::send).
/// The fields of a ring send after its kind (Write) and initiator (ring_send_step, Builder::ring_send).
inline void fill_ring_send(Step& st, NodeId via, RingProtocol proto, DataOp op, SrcList&& srcs, Region dst) {
  st.via = via;
  st.op = op;
  st.accum = Format::Fp32;
  st.unit = op == DataOp::Reduce ? Unit::AccelSm : Unit::None;
  st.ring_step = true;
  st.protocol = proto;
  st.srcs = std::move(srcs);
  st.dsts = {dst};
}
inline Step ring_send_step(int r, NodeId via, RingProtocol proto, DataOp op, SrcList srcs, Region dst) {
  Step st;
  st.kind = StepKind::Write;
  st.initiator = r;
  fill_ring_send(st, via, proto, op, std::move(srcs), dst);
  return st;
}

/// Shared state while compiling one schedule.
struct Builder {
  const Config& cfg;
  Schedule s;
  Format data_format;
  NodeId via;  // how accelerator-to-accelerator traffic travels

  /// `storage` (optional): a schedule whose lists' capacity to build into
  /// (CompileOptions::storage); their contents are discarded, *storage is left empty.
  Builder(const Config& c, const std::string& algo, const Collective& coll, Schedule* storage = nullptr) : cfg(c) {
    if (storage) {
      auto take = [](auto& to, auto& from) {
        to = std::move(from);
        to.clear();
        from.clear();
      };
      take(s.steps, storage->steps);
      take(s.buffers, storage->buffers);
      take(s.input, storage->input);
      take(s.output, storage->output);
      *storage = Schedule{};
    }
    s.algorithm = algo;
    s.gpus = c.fabric.gpus;
    s.topology = c.fabric.topology;
    s.planes = c.fabric.topology == Topology::Mesh ? 0 : c.fabric.planes;
    if (c.fabric.topology == Topology::TwoTier) {
      s.leaves = c.fabric.leaves;
      s.spines = c.fabric.spines;
    }
    s.dtype = coll.dtype;
    s.bytes = coll.bytes;
    s.elems = element_count(coll.bytes, coll.dtype);
    data_format = format_of(coll.dtype);
    via = c.fabric.topology == Topology::Mesh ? kDirect : kAllPlanes;
    for (int r = 0; r < s.gpus; ++r) {
      s.input.push_back(buffer("in", r, s.elems, data_format));
      s.output.push_back(buffer("out", r, s.elems, data_format));
    }
  }
  int n() const { return s.gpus; }

  /// False: steps get no label (CompileOptions::labels, schedule/compile_options.h);
  /// a caller that only times the schedule skips formatting one string per step.
  bool labels = true;
  /// A step's label: fmt::format(f, a...), or empty when labels are off (the
  /// arguments are then not formatted). Every builder labels its steps with it.
  template <typename... A>
  std::string label(fmt::format_string<A...> f, A&&... a) const {
    return labels ? fmt::format(f, std::forward<A>(a)...) : std::string();
  }

  /// Two-tier SCIN: the planes to build (CompileOptions::planes; null: all).
  const std::vector<char>* planes = nullptr;
  bool quantise_once = false;  // (CompileOptions::quantise_once)
  bool leaves_once = false;    // (CompileOptions::leaves_once)
  bool builds_plane(int p) const { return !planes || (*planes)[static_cast<std::size_t>(p)]; }

  /// Polled while building, every ~65k step entries (a step counts its
  /// regions and dependences: an NVLS step at 1024 GPUs names thousands); null: never stops.
  const RunContext* ctx = nullptr;
  std::size_t work = 0, next_poll = 0;
  StepId add(Step&& st) {
    s.steps.push_back(std::move(st));  // as Schedule::add, one move fewer
    return added(s.steps.back());
  }
  /// Appends a default step of `kind` on `initiator`, to be filled in place
  /// (no Step is built aside and moved in); then added(it) gives its id.
  Step& append(StepKind kind, NodeId initiator) {
    Step& st = s.steps.emplace_back();
    st.kind = kind;
    st.initiator = initiator;
    return st;
  }
  /// The id of the last step, `st`, once filled: counts its entries and polls ctx.
  StepId added(const Step& st) {
    work += 1 + st.deps.size() + st.srcs.size() + st.dsts.size();
    if (ctx && work >= next_poll) {
      ctx->check();
      next_poll = work + (1u << 16);
    }
    return static_cast<StepId>(s.steps.size() - 1);
  }

  BufferId buffer(const std::string& name, NodeId node, std::uint64_t elems, Format f) {
    BufferDecl b{name, node, elems, f, 0, ScaleFormat::Fp16};
    if (is_codec(f)) {
      b.block_elems = cfg.quant.block_elems;
      b.scale_format = cfg.quant.scale_format;
    }
    return s.add_buffer(std::move(b));
  }
  std::uint64_t align() const { return static_cast<std::uint64_t>(cfg.quant.block_elems); }

  /// (launch_step()'s fields, filled in place.)
  StepId launch(NodeId node, bool ring = false, RingProtocol p = RingProtocol::Simple) {
    Step& st = append(StepKind::Launch, node);
    st.ring_step = ring;
    st.protocol = p;
    if (labels) st.label = fmt::format("launch r{}", node);
    return added(st);
  }
  StepId signal(NodeId from, NodeId to, Unit unit, DepList deps, std::string label) {
    Step& st = append(StepKind::Signal, from);
    st.target = to;
    st.unit = unit;
    st.via = s.is_switch(to) || s.is_switch(from) ? (s.is_switch(to) ? to : from) : via;
    st.deps = std::move(deps);
    st.label = std::move(label);
    return added(st);
  }
  StepId wait(NodeId node, Unit unit, DepList deps, std::string label) {
    Step& st = append(StepKind::Wait, node);
    st.unit = unit;
    st.deps = std::move(deps);
    st.label = std::move(label);
    return added(st);
  }
  StepId compute(NodeId node, DataOp op, SrcList srcs, Region dst, Unit unit,
                 DepList deps, std::string label) {
    Step& st = append(StepKind::Compute, node);
    st.op = op;
    st.unit = unit;
    st.accum = Format::Fp32;
    st.srcs = std::move(srcs);
    st.dsts = {dst};
    st.deps = std::move(deps);
    st.label = std::move(label);
    return added(st);
  }

  /// A remote read by `node` (an accelerator, or a switch's ISA) through `via`;
  /// with op Reduce the sources are summed in FP32 on the way (NVLS ld_reduce, ISA).
  StepId read(NodeId node, NodeId via, DataOp op, Unit unit, SrcList srcs, Region dst,
              DepList deps, std::string label) {
    Step& st = append(StepKind::Read, node);
    st.via = via;
    st.op = op;
    st.accum = Format::Fp32;
    st.unit = unit;
    st.srcs = std::move(srcs);
    st.dsts = {dst};
    st.deps = std::move(deps);
    st.label = std::move(label);
    return added(st);
  }

  /// One write of `src` to every region of `dsts` (switch multicast through `via`).
  StepId multicast(NodeId node, NodeId via, Unit unit, Region src, DstList dsts,
                   DepList deps, std::string label) {
    Step& st = append(StepKind::Write, node);
    st.via = via;
    st.op = DataOp::Copy;
    st.unit = unit;
    st.srcs = {src};
    st.dsts = std::move(dsts);
    st.deps = std::move(deps);
    st.label = std::move(label);
    return added(st);
  }

  /// A unicast copy from accelerator `from` to another accelerator's buffer.
  StepId push(int from, Region src, Region dst, DepList deps, std::string label) {
    Step& st = append(StepKind::Write, from);
    st.via = via;
    st.op = DataOp::Copy;
    st.srcs = {src};
    st.dsts = {dst};
    st.deps = std::move(deps);
    st.label = std::move(label);
    return added(st);
  }

  /// One ring step: rank `r` sends `srcs[0]` to the next rank; with op Reduce
  /// the next rank adds `srcs[1]` (its own values) in FP32 as the data arrives
  /// and rounds to `dst`'s format.
  /// (ring_send_step()'s fields, filled in place.)
  StepId ring_send(int r, RingProtocol proto, DataOp op, SrcList srcs, Region dst,
                   DepList deps, std::string label) {
    Step& st = append(StepKind::Write, r);
    fill_ring_send(st, via, proto, op, std::move(srcs), dst);
    st.deps = std::move(deps);
    st.label = std::move(label);
    return added(st);
  }

  /// Flag-based barrier among accelerators `ranks` after `before[r]`: every rank
  /// signals every other, then waits for all of them. Returns the wait per rank.
  std::vector<StepId> all_to_all_flags(const std::vector<StepId>& before, const std::string& what) {
    std::vector<DepList> incoming(static_cast<std::size_t>(n()));
    for (auto& in : incoming) in.reserve(static_cast<std::size_t>(n()));
    for (int r = 0; r < n(); ++r)
      for (int j = 0; j < n(); ++j)
        if (j != r)
          incoming[j].push_back(signal(r, j, Unit::AccelSm, {before[r]},
                                       label("{} flag r{}->r{}", what, r, j)));
    std::vector<StepId> waits;
    for (int r = 0; r < n(); ++r) {
      incoming[r].push_back(before[r]);
      waits.push_back(wait(r, Unit::AccelSm, std::move(incoming[r]), label("{} wait r{}", what, r)));
    }
    return waits;
  }
};

// The shipped families (algorithms_ring.cc, algorithms_shot.cc, algorithms_switch.cc).
void build_ring(Builder& b, RingProtocol proto);
/// The ring's compact form over b.s's buffers (RingForm, algorithms.h); b.s has no steps yet.
RingForm ring_form(const Builder& b, RingProtocol proto);
void build_ring_q(Builder& b);
void build_one_shot(Builder& b);
void build_two_shot(Builder& b, bool quantised);
void build_nvls(Builder& b);
/// Chunks per rank of the one-switch NVLS (analytic.h's run_analytic_nvls generates the same steps).
int nvls_chunks(const Schedule& s);
void build_scin(Builder& b, bool inq);
int scin_chunks(const Config& cfg, std::uint64_t stripe_elems);
/// Per rank, per plane, per wave: the step that quantised that wave of the rank's input.
/// One list, rank by rank (a rank's waves plane by plane), not a list per rank and plane.
struct Quantised {
  std::vector<StepId> steps;
  std::vector<std::size_t> plane_start;  // per plane: its wave 0's index within a rank's run
  std::size_t per_rank = 0;              // waves of all planes
  int stride = 1;                        // ranks stride x k .. stride x k + stride - 1 share rank stride x k's steps
  StepId at(int rank, int plane, int wave) const {
    return steps[static_cast<std::size_t>(rank / stride) * per_rank + plane_start[static_cast<std::size_t>(plane)] +
                 static_cast<std::size_t>(wave)];
  }
};
/// INQ at the accelerators: declares qin/qout per rank and quantises every stripe wave by wave
/// (with `stride` > 1 only every stride-th rank launches and quantises, the others' steps
/// standing on its: CompileOptions::quantise_once, stride = all ranks).
Quantised quantise_inputs(Builder& b, const std::vector<Span>& stripes, std::uint64_t align,
                          std::vector<BufferId>& qin, std::vector<BufferId>& qout, int stride = 1);
// Two-tier fabrics (algorithms_tiers.cc).
void build_nvls_tiers(Builder& b);
/// build_nvls_tiers' steps by id: the builder emits them in id order, and the
/// analytic engine generates them one at a time without compiling them
/// (engines/analytic/nvls_tiers.cc), so both book the same steps. Ids: n
/// launches; barrier 0 (n arrives, n waits); per chunk, the n ranks' leaf
/// ld_reduces, then per rank its spine ld_reduce and its store; barrier 1.
struct NvlsTiersForm {
  static constexpr int kChunksInFlight = 8;  // (build_nvls_tiers)
  enum class Part : std::uint8_t { Launch, Arrive, Wait, Leaf, Spine, Store };
  struct Id {
    Part part;
    int barrier;  // Arrive, Wait: 0 or 1
    int rank, chunk;
  };
  int n = 0, m = 0, leaves = 0, chunks = 0;
  NodeId counter = kNoNode;                     // the barriers' counter (spine 0 of plane 0)
  std::vector<Span> shards;                     // per local rank k
  std::vector<std::vector<Span>> shard_chunks;  // per shard, its chunks
  std::vector<BufferId> leaf_sum, all_sum;      // per rank
  std::size_t size() const;
  Id decode(StepId i) const;
  StepId leaf_id(int r, int c) const;
  StepId spine_id(int r, int c) const { return leaf_id(0, c) + static_cast<StepId>(n + 2 * r); }
  StepId store_id(int r, int c) const { return spine_id(r, c) + 1; }
  StepId arrive_id(int barrier, int r) const;
  StepId wait_id(int barrier, int r) const { return arrive_id(barrier, r) + static_cast<StepId>(n); }
  /// Step i's fields but its deps and label, into `st` (its lists refilled,
  /// their capacity kept).
  void fill(const Schedule& s, StepId i, Step& st) const;
  /// Step i's deps in the builder's order, into `out` (cleared): a barrier's
  /// wait lists the n arrives.
  void deps(StepId i, std::vector<StepId>& out) const;
  std::string label(StepId i) const;
  /// Rank r's part of chunk c: what its spine ld_reduce sums and its store sends.
  Span part_span(int r, int c) const;
  /// Chunk c of rank r's shard: what its leaf ld_reduce sums.
  Span chunk_span(int r, int c) const;
};
/// build_nvls_tiers' form for b's fabric and message; declares its buffers in b.s.
NvlsTiersForm nvls_tiers_form(Builder& b);
/// build_nvls_tiers' chunks per shard for `bytes` per rank on `gpus`
/// accelerators, `per_leaf` a leaf: NCCL's 128 KiB chunks (at most 1024:
/// nvls_tiers_nominal_chunks), fewer on big domains so a schedule stays under
/// `max_destinations` multicast destinations (switch.nvls.tiers_max_destinations,
/// 2M by default; simulate() notes where this binds: fewer chunks pipeline less,
/// docs/model.md).
inline int nvls_tiers_nominal_chunks(std::uint64_t bytes, int per_leaf) {
  const std::uint64_t shard_bytes = bytes / static_cast<std::uint64_t>(std::max(1, per_leaf));
  return static_cast<int>(std::clamp<std::uint64_t>(shard_bytes / (128 << 10), 1, 1024));
}
inline int nvls_tiers_chunks(std::uint64_t bytes, int gpus, int per_leaf, int max_destinations) {
  const auto n = static_cast<std::uint64_t>(std::max(1, gpus));
  const std::uint64_t cap = std::max<std::uint64_t>(1, static_cast<std::uint64_t>(std::max(1, max_destinations)) / (n * n));
  return static_cast<int>(std::min<std::uint64_t>(static_cast<std::uint64_t>(nvls_tiers_nominal_chunks(bytes, per_leaf)), cap));
}
/// The steps and regions (sources and destinations) build_nvls_tiers makes:
/// n launches, two barriers of 2n; per chunk and rank a leaf ld_reduce (m
/// sources, a destination), a spine ld_reduce (a source per leaf, a
/// destination) and a store (a source, n destinations).
struct NvlsTiersCounts {
  std::size_t steps = 0, regions = 0;
};
inline NvlsTiersCounts nvls_tiers_counts(std::uint64_t bytes, int gpus, int leaves, int max_destinations) {
  const auto n = static_cast<std::size_t>(std::max(1, gpus)), l = static_cast<std::size_t>(std::max(1, leaves));
  const std::size_t m = n / l,
                    chunks = static_cast<std::size_t>(nvls_tiers_chunks(bytes, gpus, static_cast<int>(m), max_destinations));
  return {5 * n + 3 * n * chunks, chunks * n * (m + l + n + 3)};
}
void build_scin_tiers(Builder& b, bool inq, bool uplink_inq);
/// The steps build_scin_tiers makes for one plane of `waves` waves, besides the
/// ranks' quantise steps: n arrives and a counter per leaf; per wave a read
/// (quantised: and a quantise) and a signal per leaf, the spine's read (a
/// requantise) and multicast (uplink: per leaf a dequantise and a multicast);
/// n acks, a wait per leaf and n flags.
/// (leaves_once, CompileOptions: `gpus` and `leaves` are the first leaf's ranks and 1.)
inline std::size_t scin_tiers_plane_steps(std::size_t gpus, std::size_t leaves, std::size_t waves, bool quantised,
                                          bool uplink_inq) {
  const std::size_t per_wave = leaves * (quantised ? 3 : 2) + (quantised ? 3 : 2) + (uplink_inq ? 2 * leaves : 0);
  return gpus + leaves + waves * per_wave + 2 * gpus + leaves;
}
/// Where step j of a plane built with CompileOptions::leaves_once (its first
/// leaf's per-leaf steps alone) is in the full plane of `leaves` leaves of
/// `per_leaf` ranks and `waves` waves: the first leaf's arrives, counter and
/// wave steps, the spine's wave steps, and the acks, wait and flags of leaf
/// `tail_leaf` (the same steps there, as every leaf's are alike).
inline std::size_t scin_tiers_full_step(std::size_t j, std::size_t per_leaf, std::size_t leaves, std::size_t waves,
                                        bool quantised, bool uplink_inq, std::size_t tail_leaf) {
  const std::size_t m = per_leaf, n = m * leaves, a = quantised ? 3 : 2;
  const std::size_t reduced_wave = 2 * a + (uplink_inq ? 2 : 0), full_wave = leaves * a + a + (uplink_inq ? 2 * leaves : 0);
  if (j <= m) return j;  // (the first leaf's arrives and counter come first in both)
  j -= m + 1;
  if (j < waves * reduced_wave) {
    const std::size_t w = j / reduced_wave, k = j % reduced_wave;
    // The leaf's read (quantise) and signal; the spine's read (requantise) and multicast; (uplink) the leaf's dequantise and multicast.
    return n + leaves + w * full_wave + (k < a ? k : k < 2 * a ? leaves * a + (k - a) : leaves * a + a + (k - 2 * a));
  }
  j -= waves * reduced_wave;
  return n + leaves + waves * full_wave + tail_leaf * (2 * m + 1) + j;
}

}  // namespace scin::build
