#include "schedule/algorithms.h"

#include <algorithm>
#include <fmt/format.h>

#include "base/error.h"

namespace scin {
namespace {

// ---------------------------------------------------------------- helpers

struct Span {
  std::uint64_t offset = 0;
  std::uint64_t count = 0;
};

/// Splits `elems` into `parts` contiguous spans whose boundaries fall on
/// multiples of `align` (whole quantisation blocks); spans may be empty.
std::vector<Span> split(std::uint64_t elems, int parts, std::uint64_t align = 1) {
  std::vector<Span> out(static_cast<std::size_t>(parts));
  const std::uint64_t units = (elems + align - 1) / align;
  const auto p = static_cast<std::uint64_t>(parts);
  for (std::uint64_t i = 0; i < p; ++i) {
    std::uint64_t b = std::min(elems, (i * units / p) * align);
    std::uint64_t e = std::min(elems, ((i + 1) * units / p) * align);
    out[i] = {b, e - b};
  }
  return out;
}

Span sub(const Span& outer, const Span& inner) { return {outer.offset + inner.offset, inner.count}; }

Region at(BufferId b, const Span& s) { return {b, s.offset, s.count}; }

/// Shared state while compiling one schedule.
struct Builder {
  const Config& cfg;
  Schedule s;
  Format data_format;
  NodeId via;  // how accelerator-to-accelerator traffic travels

  Builder(const Config& c, const std::string& algo, const Collective& coll) : cfg(c) {
    s.algorithm = algo;
    s.gpus = c.fabric.gpus;
    s.topology = c.fabric.topology;
    s.planes = c.fabric.topology == Topology::Star ? c.fabric.planes : 0;
    s.dtype = coll.dtype;
    s.bytes = coll.bytes;
    s.elems = element_count(coll.bytes, coll.dtype);
    data_format = format_of(coll.dtype);
    via = c.fabric.topology == Topology::Star ? kAllPlanes : kDirect;
    for (int r = 0; r < s.gpus; ++r) {
      s.input.push_back(buffer("in", r, s.elems, data_format));
      s.output.push_back(buffer("out", r, s.elems, data_format));
    }
  }
  int n() const { return s.gpus; }

  BufferId buffer(const std::string& name, NodeId node, std::uint64_t elems, Format f) {
    BufferDecl b{name, node, elems, f, 0, ScaleFormat::Fp16};
    if (is_codec(f)) {
      b.block_elems = cfg.quant.block_elems;
      b.scale_format = cfg.quant.scale_format;
    }
    return s.add_buffer(std::move(b));
  }
  std::uint64_t align() const { return static_cast<std::uint64_t>(cfg.quant.block_elems); }

  StepId launch(NodeId node, bool ring = false, RingProtocol p = RingProtocol::Simple) {
    Step st;
    st.kind = StepKind::Launch;
    st.initiator = node;
    st.ring_step = ring;
    st.protocol = p;
    st.label = fmt::format("launch r{}", node);
    return s.add(std::move(st));
  }
  StepId signal(NodeId from, NodeId to, Unit unit, std::vector<StepId> deps, std::string label) {
    Step st;
    st.kind = StepKind::Signal;
    st.initiator = from;
    st.target = to;
    st.unit = unit;
    st.via = s.is_switch(to) || s.is_switch(from) ? (s.is_switch(to) ? to : from) : via;
    st.deps = std::move(deps);
    st.label = std::move(label);
    return s.add(std::move(st));
  }
  StepId wait(NodeId node, Unit unit, std::vector<StepId> deps, std::string label) {
    Step st;
    st.kind = StepKind::Wait;
    st.initiator = node;
    st.unit = unit;
    st.deps = std::move(deps);
    st.label = std::move(label);
    return s.add(std::move(st));
  }
  StepId compute(NodeId node, DataOp op, std::vector<Region> srcs, Region dst, Unit unit,
                 std::vector<StepId> deps, std::string label) {
    Step st;
    st.kind = StepKind::Compute;
    st.initiator = node;
    st.op = op;
    st.unit = unit;
    st.accum = Format::Fp32;
    st.srcs = std::move(srcs);
    st.dsts = {dst};
    st.deps = std::move(deps);
    st.label = std::move(label);
    return s.add(std::move(st));
  }

  /// A unicast copy from accelerator `from` to another accelerator's buffer.
  StepId push(int from, Region src, Region dst, std::vector<StepId> deps, std::string label) {
    Step st;
    st.kind = StepKind::Write;
    st.initiator = from;
    st.via = via;
    st.op = DataOp::Copy;
    st.srcs = {src};
    st.dsts = {dst};
    st.deps = std::move(deps);
    st.label = std::move(label);
    return s.add(std::move(st));
  }

  /// One ring step: rank `r` sends `srcs[0]` to the next rank; with op Reduce
  /// the next rank adds `srcs[1]` (its own values) in FP32 as the data arrives
  /// and rounds to `dst`'s format.
  StepId ring_send(int r, RingProtocol proto, DataOp op, std::vector<Region> srcs, Region dst,
                   std::vector<StepId> deps, std::string label) {
    Step st;
    st.kind = StepKind::Write;
    st.initiator = r;
    st.via = via;
    st.op = op;
    st.accum = Format::Fp32;
    st.unit = op == DataOp::Reduce ? Unit::AccelSm : Unit::None;
    st.ring_step = true;
    st.protocol = proto;
    st.srcs = std::move(srcs);
    st.dsts = {dst};
    st.deps = std::move(deps);
    st.label = std::move(label);
    return s.add(std::move(st));
  }

  /// Flag-based barrier among accelerators `ranks` after `before[r]`: every rank
  /// signals every other, then waits for all of them. Returns the wait per rank.
  std::vector<StepId> all_to_all_flags(const std::vector<StepId>& before, const std::string& what) {
    std::vector<std::vector<StepId>> incoming(static_cast<std::size_t>(n()));
    for (int r = 0; r < n(); ++r)
      for (int j = 0; j < n(); ++j)
        if (j != r)
          incoming[j].push_back(signal(r, j, Unit::AccelSm, {before[r]},
                                       fmt::format("{} flag r{}->r{}", what, r, j)));
    std::vector<StepId> waits;
    for (int r = 0; r < n(); ++r) {
      auto deps = incoming[r];
      deps.push_back(before[r]);
      waits.push_back(wait(r, Unit::AccelSm, deps, fmt::format("{} wait r{}", what, r)));
    }
    return waits;
  }
};

// ---------------------------------------------------------------- ring

void build_ring(Builder& b, RingProtocol proto) {
  Schedule& s = b.s;
  const int n = b.n();
  s.variant = to_string(proto);
  auto chunks = split(s.elems, n);
  std::vector<StepId> launches;
  for (int r = 0; r < n; ++r) launches.push_back(b.launch(r, true, proto));
  // last[r]: the step that last delivered data to rank r; sent[r]: rank r's last send.
  std::vector<StepId> last(launches), sent(launches);
  auto ring_write = [&](int r, int c, DataOp op, std::vector<Region> srcs, Region dst, bool rs, int k) {
    const int to = (r + 1) % n;
    return b.ring_send(r, proto, op, std::move(srcs), dst, {last[r], sent[r], launches[to]},
                       fmt::format("{}[{}] r{}->r{} chunk {}", rs ? "rs" : "ag", k, r, to, c));
  };

  // Reduce-scatter: at step k rank r sends chunk (r-k) mod n to r+1, which adds
  // its own input into its output buffer as the data arrives.
  for (int k = 0; k < n - 1; ++k) {
    std::vector<StepId> delivered(static_cast<std::size_t>(n));
    for (int r = 0; r < n; ++r) {
      const int c = ((r - k) % n + n) % n;
      const int to = (r + 1) % n;
      Region src = at(k == 0 ? s.input[r] : s.output[r], chunks[c]);
      StepId id = ring_write(r, c, DataOp::Reduce, {src, at(s.input[to], chunks[c])},
                             at(s.output[to], chunks[c]), true, k);
      delivered[to] = id;
      sent[r] = id;
    }
    last = delivered;
  }
  // All-gather: at step j rank r forwards chunk (r+1-j) mod n, fully reduced.
  for (int j = 0; j < n - 1; ++j) {
    std::vector<StepId> delivered(static_cast<std::size_t>(n));
    for (int r = 0; r < n; ++r) {
      const int c = ((r + 1 - j) % n + n) % n;
      const int to = (r + 1) % n;
      StepId id = ring_write(r, c, DataOp::Copy, {at(s.output[r], chunks[c])},
                             at(s.output[to], chunks[c]), false, j);
      delivered[to] = id;
      sent[r] = id;
    }
    last = delivered;
  }
}

// ---------------------------------------------------------------- ring-q8

// Ring with a block-quantised payload: at each reduce-scatter hop the sender
// quantises its partial sum, the receiver dequantises and adds its input in
// FP32; the owner quantises the full sum once for a quantised all-gather; every
// rank dequantises the gathered result (N quantisation events in all).
void build_ring_q(Builder& b) {
  Schedule& s = b.s;
  const int n = b.n();
  const Format q = codec_format(b.cfg.quant.codec);
  s.variant = fmt::format("{} G={}", to_string(b.cfg.quant.codec), b.cfg.quant.block_elems);
  auto chunks = split(s.elems, n, b.align());
  std::vector<BufferId> partial, qtx, qout;
  for (int r = 0; r < n; ++r) {
    partial.push_back(b.buffer("partial", r, s.elems, Format::Fp32));
    qtx.push_back(b.buffer("qtx", r, s.elems, q));
    qout.push_back(b.buffer("qout", r, s.elems, q));
  }
  std::vector<StepId> launches;
  for (int r = 0; r < n; ++r) launches.push_back(b.launch(r, true, RingProtocol::Simple));
  std::vector<StepId> last(launches), sent(launches);
  auto send = [&](int r, DataOp op, std::vector<Region> srcs, Region dst, std::vector<StepId> deps,
                  std::string label) {
    return b.ring_send(r, RingProtocol::Simple, op, std::move(srcs), dst, std::move(deps), std::move(label));
  };

  for (int k = 0; k < n - 1; ++k) {
    std::vector<StepId> delivered(static_cast<std::size_t>(n));
    for (int r = 0; r < n; ++r) {
      const int c = ((r - k) % n + n) % n;
      const int to = (r + 1) % n;
      Region from = at(k == 0 ? s.input[r] : partial[r], chunks[c]);
      StepId qz = b.compute(r, DataOp::Copy, {from}, at(qtx[r], chunks[c]), Unit::AccelSm,
                            {last[r], sent[r]}, fmt::format("quantise rs[{}] r{} chunk {}", k, r, c));
      StepId id = send(r, DataOp::Reduce, {at(qtx[r], chunks[c]), at(s.input[to], chunks[c])},
                       at(partial[to], chunks[c]), {qz, launches[to]},
                       fmt::format("rs[{}] r{}->r{} chunk {}", k, r, to, c));
      delivered[to] = id;
      sent[r] = id;
    }
    last = delivered;
  }
  // The owner of chunk (r+1) quantises its full sum into its gather buffer.
  std::vector<StepId> ready(static_cast<std::size_t>(n));
  for (int r = 0; r < n; ++r) {
    const int c = (r + 1) % n;
    ready[r] = b.compute(r, DataOp::Copy, {at(partial[r], chunks[c])}, at(qout[r], chunks[c]),
                         Unit::AccelSm, {last[r]}, fmt::format("quantise sum r{} chunk {}", r, c));
  }
  last = ready;
  for (int j = 0; j < n - 1; ++j) {
    std::vector<StepId> delivered(static_cast<std::size_t>(n));
    for (int r = 0; r < n; ++r) {
      const int c = ((r + 1 - j) % n + n) % n;
      const int to = (r + 1) % n;
      StepId id = send(r, DataOp::Copy, {at(qout[r], chunks[c])}, at(qout[to], chunks[c]),
                       {last[r], sent[r], launches[to]}, fmt::format("ag[{}] r{}->r{} chunk {}", j, r, to, c));
      delivered[to] = id;
      sent[r] = id;
    }
    last = delivered;
  }
  for (int r = 0; r < n; ++r)
    b.compute(r, DataOp::Copy, {at(qout[r], {0, s.elems})}, at(s.output[r], {0, s.elems}),
              Unit::AccelSm, {last[r], sent[r]}, fmt::format("dequantise r{}", r));
}

// ---------------------------------------------------------------- one-shot

// Every rank pushes its whole buffer into a slot of every peer's scratch, flags
// it, and each rank sums the N slots locally (in rank order, FP32).
void build_one_shot(Builder& b) {
  Schedule& s = b.s;
  const int n = b.n();
  const Span all{0, s.elems};
  std::vector<BufferId> scratch;
  for (int r = 0; r < n; ++r) scratch.push_back(b.buffer("scratch", r, s.elems * n, b.data_format));
  std::vector<StepId> launches;
  for (int r = 0; r < n; ++r) launches.push_back(b.launch(r));
  std::vector<std::vector<StepId>> arrived(static_cast<std::size_t>(n));
  for (int r = 0; r < n; ++r)
    for (int j = 0; j < n; ++j) {
      if (j == r) continue;
      StepId w = b.push(r, at(s.input[r], all), Region{scratch[j], static_cast<std::uint64_t>(r) * s.elems, s.elems},
                        {launches[r], launches[j]}, fmt::format("push r{}->r{}", r, j));
      arrived[j].push_back(b.signal(r, j, Unit::AccelSm, {w}, fmt::format("flag r{}->r{}", r, j)));
    }
  for (int j = 0; j < n; ++j) {
    auto deps = arrived[j];
    deps.push_back(launches[j]);
    StepId w = b.wait(j, Unit::AccelSm, deps, fmt::format("wait r{}", j));
    std::vector<Region> srcs;
    for (int r = 0; r < n; ++r)
      srcs.push_back(r == j ? at(s.input[j], all)
                            : Region{scratch[j], static_cast<std::uint64_t>(r) * s.elems, s.elems});
    b.compute(j, DataOp::Reduce, srcs, at(s.output[j], all), Unit::AccelSm, {w},
              fmt::format("reduce r{}", j));
  }
}

// ---------------------------------------------------------------- two-shot

// Reduce-scatter by pushing shard j of every rank to rank j, which sums it
// (FP32, rank order); all-gather by pushing each reduced shard to every peer.
// With `quantised`, every rank quantises its input once, and each shard owner
// quantises its sum once for the gather (2 quantisation events).
void build_two_shot(Builder& b, bool quantised) {
  Schedule& s = b.s;
  const int n = b.n();
  const Format q = codec_format(b.cfg.quant.codec);
  const Format wire = quantised ? q : b.data_format;
  if (quantised) s.variant = fmt::format("{} G={}", to_string(b.cfg.quant.codec), b.cfg.quant.block_elems);
  auto shards = split(s.elems, n, quantised ? b.align() : 1);
  std::uint64_t shard_max = std::max_element(shards.begin(), shards.end(), [](auto& x, auto& y) {
                              return x.count < y.count;
                            })->count;
  // Slots of a quantised scratch buffer start on whole blocks.
  if (quantised) shard_max = (shard_max + b.align() - 1) / b.align() * b.align();
  std::vector<BufferId> scratch, qin, gather;
  for (int r = 0; r < n; ++r) {
    scratch.push_back(b.buffer("scratch", r, shard_max * n, wire));
    if (quantised) {
      qin.push_back(b.buffer("qin", r, s.elems, q));
      gather.push_back(b.buffer("qout", r, s.elems, q));
    }
  }
  std::vector<StepId> ready;
  for (int r = 0; r < n; ++r) {
    StepId l = b.launch(r);
    if (quantised)
      l = b.compute(r, DataOp::Copy, {at(s.input[r], {0, s.elems})}, at(qin[r], {0, s.elems}),
                    Unit::AccelSm, {l}, fmt::format("quantise r{}", r));
    ready.push_back(l);
  }
  auto slot = [&](int owner, int from) {
    return Region{scratch[owner], static_cast<std::uint64_t>(from) * shard_max, shards[owner].count};
  };
  std::vector<std::vector<StepId>> arrived(static_cast<std::size_t>(n));
  for (int r = 0; r < n; ++r)
    for (int j = 0; j < n; ++j) {
      if (j == r) continue;
      StepId w = b.push(r, at(quantised ? qin[r] : s.input[r], shards[j]), slot(j, r), {ready[r], ready[j]},
                        fmt::format("rs r{}->r{} shard {}", r, j, j));
      arrived[j].push_back(b.signal(r, j, Unit::AccelSm, {w}, fmt::format("rs flag r{}->r{}", r, j)));
    }
  std::vector<StepId> reduced;
  for (int j = 0; j < n; ++j) {
    auto deps = arrived[j];
    deps.push_back(ready[j]);
    StepId w = b.wait(j, Unit::AccelSm, deps, fmt::format("rs wait r{}", j));
    std::vector<Region> srcs;
    for (int r = 0; r < n; ++r)
      srcs.push_back(r == j ? at(quantised ? qin[j] : s.input[j], shards[j]) : slot(j, r));
    Region dst = at(quantised ? gather[j] : s.output[j], shards[j]);
    reduced.push_back(b.compute(j, DataOp::Reduce, srcs, dst, Unit::AccelSm, {w},
                                fmt::format("reduce shard {} r{}", j, j)));
  }
  std::vector<std::vector<StepId>> gathered(static_cast<std::size_t>(n));
  for (int j = 0; j < n; ++j)
    for (int r = 0; r < n; ++r) {
      if (r == j) continue;
      BufferId from = quantised ? gather[j] : s.output[j];
      BufferId to = quantised ? gather[r] : s.output[r];
      StepId w = b.push(j, at(from, shards[j]), at(to, shards[j]), {reduced[j]},
                        fmt::format("ag r{}->r{} shard {}", j, r, j));
      gathered[r].push_back(b.signal(j, r, Unit::AccelSm, {w}, fmt::format("ag flag r{}->r{}", j, r)));
    }
  for (int r = 0; r < n; ++r) {
    auto deps = gathered[r];
    deps.push_back(reduced[r]);
    StepId w = b.wait(r, Unit::AccelSm, deps, fmt::format("ag wait r{}", r));
    if (quantised)
      b.compute(r, DataOp::Copy, {at(gather[r], {0, s.elems})}, at(s.output[r], {0, s.elems}),
                Unit::AccelSm, {w}, fmt::format("dequantise r{}", r));
  }
}

// ---------------------------------------------------------------- nvls

int nvls_chunks(const Schedule& s) {
  // NCCL NVLS moves each rank's shard in pipelined chunks of 128 KiB (at most 1024 chunks).
  const std::uint64_t shard_bytes = s.bytes / static_cast<std::uint64_t>(s.gpus);
  return static_cast<int>(std::clamp<std::uint64_t>(shard_bytes / (128 << 10), 1, 1024));
}

// Barrier; then, per chunk, every rank i issues multimem.ld_reduce of its shard
// (the switch reads the shard from all ranks, sums in FP32 and returns it to
// rank i) and multimem.st of the result (the switch multicasts it to all
// ranks); then a closing barrier.
void build_nvls(Builder& b) {
  Schedule& s = b.s;
  const int n = b.n();
  const NodeId sw0 = s.switch_node(0);
  auto shards = split(s.elems, n);
  const int chunks = nvls_chunks(s);
  std::vector<BufferId> reg;
  for (int r = 0; r < n; ++r) reg.push_back(b.buffer("ld_reduce", r, s.elems, b.data_format));
  auto barrier = [&](const std::vector<StepId>& before, const char* what) {
    std::vector<StepId> arrives;
    for (int r = 0; r < n; ++r)
      arrives.push_back(b.signal(r, sw0, Unit::NvlsReduce, {before[r]}, fmt::format("{} arrive r{}", what, r)));
    std::vector<StepId> waits;
    for (int r = 0; r < n; ++r)
      waits.push_back(b.wait(r, Unit::NvlsReduce, arrives, fmt::format("{} wait r{}", what, r)));
    return waits;
  };
  std::vector<StepId> launches;
  for (int r = 0; r < n; ++r) launches.push_back(b.launch(r));
  std::vector<StepId> start = barrier(launches, "barrier0");
  std::vector<StepId> done(start);
  for (int i = 0; i < n; ++i) {
    auto pieces = split(shards[i].count, chunks);
    std::vector<StepId> stores;
    for (int c = 0; c < chunks; ++c) {
      Span span = sub(shards[i], pieces[c]);
      Step ld;
      ld.kind = StepKind::Read;
      ld.initiator = i;
      ld.via = kAllPlanes;
      ld.op = DataOp::Reduce;
      ld.accum = Format::Fp32;
      ld.unit = Unit::NvlsReduce;
      for (int j = 0; j < n; ++j) ld.srcs.push_back(at(s.input[j], span));
      ld.dsts = {at(reg[i], span)};
      // NCCL keeps a bounded number of chunks in flight; here two per rank.
      ld.deps = {start[i]};
      if (c >= 2) ld.deps.push_back(stores[static_cast<std::size_t>(c - 2)]);
      ld.label = fmt::format("ld_reduce r{} shard {} chunk {}", i, i, c);
      StepId l = s.add(std::move(ld));
      Step st;
      st.kind = StepKind::Write;
      st.initiator = i;
      st.via = kAllPlanes;
      st.op = DataOp::Copy;
      st.unit = Unit::NvlsReduce;
      st.srcs = {at(reg[i], span)};
      for (int j = 0; j < n; ++j) st.dsts.push_back(at(s.output[j], span));
      st.deps = {l};
      st.label = fmt::format("multimem.st r{} shard {} chunk {}", i, i, c);
      stores.push_back(s.add(std::move(st)));
      done[i] = stores.back();
    }
  }
  barrier(done, "barrier1");
}

// ---------------------------------------------------------------- scin

/// Chunks the ISA of one plane splits its stripe into: the ISA buffer is shared
/// by `waves` chunks in flight, each holding FP32 partial sums, so a chunk is
/// at most buffer_bytes / waves; and there are at least `waves` chunks so that
/// reading, reducing and writing pipeline. Capped at 4096 (larger chunks then).
int scin_chunks(const Config& cfg, std::uint64_t stripe_elems) {
  const IsaSpec& isa = cfg.sw.isa;
  const std::uint64_t chunk_bytes = std::max<std::uint64_t>(1, isa.buffer_bytes / static_cast<std::uint64_t>(isa.waves));
  const std::uint64_t by_buffer = (stripe_elems * 4 + chunk_bytes - 1) / chunk_bytes;
  return static_cast<int>(std::clamp<std::uint64_t>(by_buffer, static_cast<std::uint64_t>(isa.waves), 4096));
}

// Arrive (stream write to the switch counter); the ISA of each plane polls its
// counter, then processes its stripe of the message in W waves: read the wave
// from every accelerator and reduce it in FP32 (INQ: read quantised values,
// dequantise, reduce, requantise), multicast-write the result to every
// accelerator, collect the write acks, and write each accelerator's flag.
// Waves in flight are bounded by the ISA buffer (a wave waits for the write of
// the wave that last used its buffer slot).
void build_scin(Builder& b, bool inq) {
  Schedule& s = b.s;
  const int n = b.n();
  const int planes = s.planes;
  const IsaSpec& isa = b.cfg.sw.isa;
  const Format q = codec_format(b.cfg.quant.codec);
  if (inq) s.variant = fmt::format("{} G={}", to_string(b.cfg.quant.codec), b.cfg.quant.block_elems);
  const std::uint64_t align = inq ? b.align() : 1;
  auto stripes = split(s.elems, planes, align);

  std::vector<BufferId> qin, qout;
  // INQ: every accelerator quantises its input wave by wave (the ISA reads wave w
  // once every accelerator has quantised it), so quantisation pipelines with
  // the network; the Arrive follows the first wave.
  std::vector<std::vector<std::vector<StepId>>> quantised(static_cast<std::size_t>(n));
  if (inq) {
    for (int r = 0; r < n; ++r) {
      qin.push_back(b.buffer("qin", r, s.elems, q));
      qout.push_back(b.buffer("qout", r, s.elems, q));
      StepId l = b.launch(r);
      quantised[r].resize(static_cast<std::size_t>(planes));
      for (int p = 0; p < planes; ++p) {
        const int chunks = scin_chunks(b.cfg, stripes[p].count);
        auto waves = split(stripes[p].count, chunks, align);
        StepId prev = l;
        for (int w = 0; w < chunks; ++w) {
          Span g = sub(stripes[p], waves[w]);
          prev = b.compute(r, DataOp::Copy, {at(s.input[r], g)}, at(qin[r], g), Unit::AccelSm, {prev},
                           fmt::format("quantise r{} plane {} wave {}", r, p, w));
          quantised[r][p].push_back(prev);
        }
      }
    }
  }
  std::vector<std::vector<StepId>> flags(static_cast<std::size_t>(n));
  for (int p = 0; p < planes; ++p) {
    const NodeId sw = s.switch_node(p);
    const Span stripe = stripes[p];
    // The ISA accumulates in FP32; INQ keeps a quantised copy to multicast.
    BufferId acc = b.buffer(fmt::format("isa{}.acc", p), sw, stripe.count, inq ? Format::Fp32 : b.data_format);
    BufferId qacc = inq ? b.buffer(fmt::format("isa{}.q", p), sw, stripe.count, q) : 0;
    std::vector<StepId> arrives;
    for (int r = 0; r < n; ++r) {
      std::vector<StepId> deps;
      if (inq) deps.push_back(quantised[r][p][0]);
      // Without INQ the Arrive is a stream memory op; with INQ it is written by the quantise kernel.
      arrives.push_back(b.signal(r, sw, inq ? Unit::AccelSm : Unit::IsaReduce, deps,
                                 fmt::format("arrive r{} -> isa{}", r, p)));
    }
    StepId go = b.wait(sw, Unit::IsaReduce, arrives, fmt::format("isa{} counter", p));
    const int chunks = scin_chunks(b.cfg, stripe.count);
    auto waves = split(stripe.count, chunks, align);
    const int in_flight = isa.waves;
    std::vector<StepId> writes;
    for (int w = 0; w < chunks; ++w) {
      Span local = waves[w];             // offsets within the stripe (= within acc)
      Span global = sub(stripe, local);  // offsets within the message
      Step rd;
      rd.kind = StepKind::Read;
      rd.initiator = sw;
      rd.via = sw;
      rd.op = DataOp::Reduce;
      rd.accum = Format::Fp32;
      rd.unit = Unit::IsaReduce;
      for (int j = 0; j < n; ++j) rd.srcs.push_back(at(inq ? qin[j] : s.input[j], global));
      rd.dsts = {at(acc, local)};
      rd.deps = {go};
      if (w >= in_flight) rd.deps.push_back(writes[static_cast<std::size_t>(w - in_flight)]);
      if (inq)
        for (int j = 0; j < n; ++j) rd.deps.push_back(quantised[j][p][w]);
      rd.label = fmt::format("isa{} read+reduce wave {}", p, w);
      StepId r = s.add(std::move(rd));
      BufferId out_src = acc;
      if (inq) {
        r = b.compute(sw, DataOp::Copy, {at(acc, local)}, at(qacc, local), Unit::IsaInq, {r},
                      fmt::format("isa{} requantise wave {}", p, w));
        out_src = qacc;
      }
      Step wr;
      wr.kind = StepKind::Write;
      wr.initiator = sw;
      wr.via = sw;
      wr.op = DataOp::Copy;
      wr.unit = Unit::IsaReduce;
      wr.srcs = {at(out_src, local)};
      for (int j = 0; j < n; ++j) wr.dsts.push_back(at(inq ? qout[j] : s.output[j], global));
      wr.deps = {r};
      wr.label = fmt::format("isa{} multicast wave {}", p, w);
      writes.push_back(s.add(std::move(wr)));
    }
    // Write acks come back from every accelerator once its writes have landed.
    std::vector<StepId> acks;
    for (int r = 0; r < n; ++r)
      acks.push_back(b.signal(r, sw, Unit::None, writes, fmt::format("write ack r{} -> isa{}", r, p)));
    StepId all_acked = b.wait(sw, Unit::IsaReduce, acks, fmt::format("isa{} acks", p));
    for (int r = 0; r < n; ++r)
      flags[r].push_back(b.signal(sw, r, Unit::IsaReduce, {all_acked}, fmt::format("isa{} flag -> r{}", p, r)));
  }
  for (int r = 0; r < n; ++r) {
    StepId w = b.wait(r, inq ? Unit::AccelSm : Unit::IsaReduce, flags[r], fmt::format("wait flag r{}", r));
    if (inq)
      b.compute(r, DataOp::Copy, {at(qout[r], {0, s.elems})}, at(s.output[r], {0, s.elems}),
                Unit::AccelSm, {w}, fmt::format("dequantise r{}", r));
  }
}

const std::vector<AlgorithmInfo> kAlgorithms = {
    {"ring", "NCCL-style ring: reduce-scatter + all-gather in 2(N-1) steps (LL, LL128, Simple)", false},
    {"one-shot", "every rank pushes its whole buffer to every peer and reduces locally", false},
    {"two-shot", "reduce-scatter by pushes to shard owners, local sum, all-gather by pushes", false},
    {"nvls", "NVLink SHARP: multimem.ld_reduce to the issuer, then multimem.st multicast", false},
    {"scin", "switch-centric: the in-switch accelerator reads, reduces and multicasts", false},
    {"scin-inq", "SCIN with in-network block quantisation (INT8 + one scale per block)", true},
    {"ring-q8", "ring with a block-quantised payload, re-quantised at every hop", true},
    {"two-shot-q8", "two-shot with a block-quantised payload (QuickReduce / Flash Communication)", true},
};

}  // namespace

int dtype_bytes(DType t) { return t == DType::Fp32 ? 4 : 2; }

std::uint64_t element_count(std::uint64_t bytes, DType dtype) {
  const auto eb = static_cast<std::uint64_t>(dtype_bytes(dtype));
  if (bytes == 0) throw Error("bytes: message size must be at least one element");
  if (bytes % eb != 0)
    throw Error(fmt::format("bytes: {} is not a multiple of the {} element size ({} bytes)", bytes,
                            to_string(dtype), eb));
  if (bytes > (std::uint64_t{1} << 40)) throw Error(fmt::format("bytes: {} exceeds the 1 TiB limit", bytes));
  return bytes / eb;
}

double payload_ratio(const QuantSpec& q) {
  const double g = q.block_elems;
  return (codec_bits(q.codec) * g + 8.0 * scale_bytes(q.scale_format)) / (16.0 * g);
}

const std::vector<AlgorithmInfo>& algorithms() { return kAlgorithms; }

const AlgorithmInfo* find_algorithm(const std::string& name) {
  for (const auto& a : kAlgorithms)
    if (a.name == name) return &a;
  return nullptr;
}

std::string unsupported_reason(const Config& cfg, const std::string& algo) {
  const bool star = cfg.fabric.topology == Topology::Star;
  const std::string where = cfg.name.empty() ? "this fabric" : cfg.name;
  if (algo == "nvls") {
    if (!star) return fmt::format("nvls needs a switch; {} is a switchless mesh", where);
    if (!cfg.sw.nvls.enabled) return fmt::format("nvls needs in-switch reduction (switch.nvls.enabled) on {}", where);
    if (!cfg.sw.multicast) return fmt::format("nvls needs switch multicast (switch.multicast) on {}", where);
  }
  if (algo == "scin" || algo == "scin-inq") {
    if (!star) return fmt::format("{} needs a switch; {} is a switchless mesh", algo, where);
    if (!cfg.sw.isa.enabled) return fmt::format("{} needs an in-switch accelerator (switch.isa.enabled) on {}", algo, where);
    if (!cfg.sw.multicast) return fmt::format("{} needs switch multicast (switch.multicast) on {}", algo, where);
    if (algo == "scin-inq" && !cfg.sw.isa.inq)
      return fmt::format("scin-inq needs an INQ unit (switch.isa.inq) on {}", where);
  }
  return "";
}

std::vector<std::string> supported_algorithms(const Config& cfg) {
  std::vector<std::string> out;
  for (const auto& a : kAlgorithms)
    if (unsupported_reason(cfg, a.name).empty()) out.push_back(a.name);
  return out;
}

Schedule compile(const Config& cfg, const std::string& algo, const Collective& c) {
  if (!find_algorithm(algo)) throw Error(fmt::format("algo: unknown algorithm '{}'", algo));
  if (auto why = unsupported_reason(cfg, algo); !why.empty()) throw Error("algo: " + why);
  Builder b(cfg, algo, c);
  if (algo == "ring") {
    if (cfg.ring.protocol == RingProtocol::Auto)
      throw Error("ring.protocol: compile() needs a concrete protocol (auto is resolved by simulate())");
    build_ring(b, cfg.ring.protocol);
  } else if (algo == "ring-q8") {
    build_ring_q(b);
  } else if (algo == "one-shot") {
    build_one_shot(b);
  } else if (algo == "two-shot") {
    build_two_shot(b, false);
  } else if (algo == "two-shot-q8") {
    build_two_shot(b, true);
  } else if (algo == "nvls") {
    build_nvls(b);
  } else if (algo == "scin") {
    build_scin(b, false);
  } else if (algo == "scin-inq") {
    build_scin(b, true);
  }
  check_schedule(b.s);
  return std::move(b.s);
}

}  // namespace scin
