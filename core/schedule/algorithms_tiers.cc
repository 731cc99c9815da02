// Hierarchical in-switch algorithms for two-tier fabrics (issue 16): NVLS
// across two tiers and hierarchical SCIN (our proposal; docs/model.md,
// "Two-tier fabrics"). They compile to the same IR as the one-switch
// versions; the route each transfer takes (leaf, spine, leaf) is the
// fabric's (Schedule::route), costed link by link by the cost model.
#include "schedule/builder.h"

#include "base/error.h"

namespace scin::build {

// NVLS across two tiers, as NCCL's NVLS tree across nodes: the message is cut
// into m shards (m accelerators per leaf). Local rank k of every leaf
// ld_reduces shard k over its leaf (summed in the leaf switch); then rank
// (leaf l, k) ld_reduces sub-shard l of shard k over the k-th ranks of all
// leaves (summed in a spine) and multimem.st-multicasts it to every rank.
//
// A rank keeps up to NCCL_STEPS = 8 chunks between its first stage and its
// store (NCCL src/include/device.h: each connection's FIFO has 8 slots, and the
// NVLS tree's stages run in separate warp groups joined by those FIFOs). The
// one-switch NVLS keeps two (algorithms_switch.cc): its chain is two steps of
// about 1 us, this one three steps of about 5 us (two requests and a store
// across the spine), which with two in flight would leave the pipeline
// latency-bound at every size (docs/model.md, "Two-tier fabrics").
NvlsTiersForm nvls_tiers_form(Builder& b) {
  NvlsTiersForm f;
  Schedule& s = b.s;
  f.n = b.n();
  f.m = s.gpus_per_leaf();
  f.leaves = s.leaves;
  f.chunks = nvls_tiers_chunks(s.bytes, f.n, f.m, b.cfg.sw.nvls.tiers_max_destinations);
  f.counter = s.spine_node(0, 0);
  f.shards = split(s.elems, f.m);
  // Each shard's chunks, split once (not per rank and chunk: that was chunks^2 x n spans).
  for (int k = 0; k < f.m; ++k) f.shard_chunks.push_back(split(f.shards[static_cast<std::size_t>(k)].count, f.chunks));
  for (int r = 0; r < f.n; ++r) {
    f.leaf_sum.push_back(b.buffer("ld_reduce.leaf", r, s.elems, b.data_format));
    f.all_sum.push_back(b.buffer("ld_reduce.spine", r, s.elems, b.data_format));
  }
  return f;
}

std::size_t NvlsTiersForm::size() const {
  const auto un = static_cast<std::size_t>(n);
  return 5 * un + 3 * un * static_cast<std::size_t>(chunks);
}

StepId NvlsTiersForm::leaf_id(int r, int c) const { return static_cast<StepId>(3 * n + 3 * n * c + r); }

StepId NvlsTiersForm::arrive_id(int barrier, int r) const {
  return static_cast<StepId>(barrier == 0 ? n + r : 3 * n + 3 * n * chunks + r);
}

NvlsTiersForm::Id NvlsTiersForm::decode(StepId i) const {
  const auto id = static_cast<std::int64_t>(i), un = static_cast<std::int64_t>(n);
  const std::int64_t body = 3 * un * chunks;
  if (id < un) return {Part::Launch, 0, static_cast<int>(id), 0};
  if (id < 3 * un) return {id < 2 * un ? Part::Arrive : Part::Wait, 0, static_cast<int>((id - un) % un), 0};
  if (id >= 3 * un + body) {
    const std::int64_t t = id - 3 * un - body;
    return {t < un ? Part::Arrive : Part::Wait, 1, static_cast<int>(t % un), 0};
  }
  const std::int64_t t = id - 3 * un, c = t / (3 * un), w = t % (3 * un);
  if (w < un) return {Part::Leaf, 0, static_cast<int>(w), static_cast<int>(c)};
  return {(w - un) % 2 == 0 ? Part::Spine : Part::Store, 0, static_cast<int>((w - un) / 2), static_cast<int>(c)};
}

Span NvlsTiersForm::chunk_span(int r, int c) const {
  const auto k = static_cast<std::size_t>(r % m);
  return sub(shards[k], shard_chunks[k][static_cast<std::size_t>(c)]);
}

Span NvlsTiersForm::part_span(int r, int c) const {
  const Span chunk = chunk_span(r, c);
  return sub(chunk, split_one(chunk.count, leaves, r / m));
}

void NvlsTiersForm::fill(const Schedule& s, StepId i, Step& st) const {
  const Id id = decode(i);
  const int r = id.rank, leaf = r / m, k = r % m;
  st.kind = StepKind::Launch;
  st.initiator = r;
  st.target = kNoNode;
  st.via = kNoNode;
  st.op = DataOp::None;
  st.accumulate = false;
  st.accum = Format::Fp32;
  st.unit = Unit::None;
  st.protocol = RingProtocol::Simple;
  st.ring_step = false;
  st.srcs.clear();
  st.dsts.clear();
  switch (id.part) {
    case Part::Launch: break;
    case Part::Arrive:  // (Builder::signal to a switch)
      st.kind = StepKind::Signal;
      st.target = counter;
      st.via = counter;
      st.unit = Unit::NvlsReduce;
      break;
    case Part::Wait:
      st.kind = StepKind::Wait;
      st.unit = Unit::NvlsReduce;
      break;
    case Part::Leaf:  // rank (leaf, k) ld_reduces chunk c of shard k over its leaf
    case Part::Spine: {  // then sub-shard `leaf` of that chunk over the k-th ranks of all leaves
      const bool in_leaf = id.part == Part::Leaf;
      const Span span = in_leaf ? chunk_span(r, id.chunk) : part_span(r, id.chunk);
      st.kind = StepKind::Read;
      st.via = kAllPlanes;
      st.op = DataOp::Reduce;
      st.unit = Unit::NvlsReduce;
      const int sources = in_leaf ? m : leaves;
      st.srcs.reserve(static_cast<std::size_t>(sources));
      for (int j = 0; j < sources; ++j) {
        const BufferId from = in_leaf ? s.input[static_cast<std::size_t>(leaf * m + j)]   // the leaf's inputs
                                      : leaf_sum[static_cast<std::size_t>(j * m + k)];  // each leaf's sums
        st.srcs.push_back(at(from, span));
      }
      st.dsts.push_back(at((in_leaf ? leaf_sum : all_sum)[static_cast<std::size_t>(r)], span));
      break;
    }
    case Part::Store: {  // multimem.st of the sum to every rank
      const Span part = part_span(r, id.chunk);
      st.kind = StepKind::Write;
      st.via = kAllPlanes;
      st.op = DataOp::Copy;
      st.unit = Unit::NvlsReduce;
      st.srcs.push_back(at(all_sum[static_cast<std::size_t>(r)], part));
      st.dsts.reserve(static_cast<std::size_t>(n));
      for (int j = 0; j < n; ++j) st.dsts.push_back(at(s.output[static_cast<std::size_t>(j)], part));
      break;
    }
  }
}

void NvlsTiersForm::deps(StepId i, std::vector<StepId>& out) const {
  out.clear();
  const Id id = decode(i);
  const int r = id.rank, k = r % m;
  switch (id.part) {
    case Part::Launch: break;
    case Part::Arrive:  // after the launch, or after the rank's last store
      out.push_back(id.barrier == 0 ? static_cast<StepId>(r) : store_id(r, chunks - 1));
      break;
    case Part::Wait:
      for (int j = 0; j < n; ++j) out.push_back(arrive_id(id.barrier, j));
      break;
    case Part::Leaf:  // after barrier 0, and up to kChunksInFlight chunks ahead of the rank's stores
      out.push_back(wait_id(0, r));
      if (id.chunk >= kChunksInFlight) out.push_back(store_id(r, id.chunk - kChunksInFlight));
      break;
    case Part::Spine:
      for (int l = 0; l < leaves; ++l) out.push_back(leaf_id(l * m + k, id.chunk));
      break;
    case Part::Store: out.push_back(spine_id(r, id.chunk)); break;
  }
}

std::string NvlsTiersForm::label(StepId i) const {
  const Id id = decode(i);
  const int r = id.rank, k = r % m;
  switch (id.part) {
    case Part::Launch: return fmt::format("launch r{}", r);
    case Part::Arrive: return fmt::format("barrier{} arrive r{}", id.barrier, r);
    case Part::Wait: return fmt::format("barrier{} wait r{}", id.barrier, r);
    case Part::Leaf: return fmt::format("ld_reduce leaf r{} shard {} chunk {}", r, k, id.chunk);
    case Part::Spine: return fmt::format("ld_reduce spine r{} shard {} chunk {}", r, k, id.chunk);
    case Part::Store: return fmt::format("multimem.st r{} shard {} chunk {}", r, k, id.chunk);
  }
  return {};
}

void build_nvls_tiers(Builder& b) {
  const NvlsTiersForm f = nvls_tiers_form(b);
  Schedule& s = b.s;
  const std::size_t total = f.size();
  if (!s.steps.empty()) throw Error("build_nvls_tiers: the form's step ids start at 0");
  s.steps.reserve(total);
  std::vector<StepId> deps;
  for (std::size_t i = 0; i < total; ++i) {
    const auto id = static_cast<StepId>(i);
    Step& st = s.steps.emplace_back();
    f.fill(s, id, st);
    f.deps(id, deps);
    st.deps = deps;
    if (b.labels) st.label = f.label(id);
    b.added(st);
  }
}

// Hierarchical SCIN [proposal]: per plane (a stripe of the message each), in
// waves: every leaf's ISA reads the wave from its local accelerators and
// reduces it; the leaf tells the wave's spine (waves take spines in turn);
// the spine's ISA reads the leaves' partial sums, reduces them and multicasts
// the result to every accelerator (the spine replicates to the leaves, the
// leaves to their accelerators). Write acks go to each accelerator's leaf,
// which writes the flags. Modes:
//   inq = false, uplink_inq = false: full precision everywhere;
//   inq: the accelerators quantise (as scin-inq on a star), every hop carries INT8;
//   uplink_inq: only the leaf <-> spine hop is quantised: the leaf quantises its
//     partial, the spine dequantises, reduces and requantises, multicasts to
//     the leaves, which dequantise and multicast to their accelerators.
void build_scin_tiers(Builder& b, bool inq, bool uplink_inq) {
  Schedule& s = b.s;
  const int n = b.n(), m = s.gpus_per_leaf(), planes = s.planes, leaves = s.leaves;
  // (CompileOptions::leaves_once: the per-leaf steps of the first leaf alone.)
  const int built_leaves = b.leaves_once ? 1 : leaves;
  const IsaSpec& isa = b.cfg.sw.isa;
  const Format q = codec_format(b.cfg.quant.codec);
  if (inq || uplink_inq) s.variant = fmt::format("{} G={}{}", to_string(b.cfg.quant.codec), b.cfg.quant.block_elems,
                                                 uplink_inq ? " uplink" : "");
  const std::uint64_t align = inq || uplink_inq ? b.align() : 1;
  auto stripes = split(s.elems, planes, align);
  {
    // One allocation for the steps (a two-tier SCIN+INQ schedule at 576 GPUs
    // and 1 GiB has millions; growing the list copied it ~20 times). Per
    // plane: n arrives, a counter per leaf, per wave per leaf a read (and a
    // quantise) and a signal, the spine's read (and requantise) and multicast
    // (uplink: per leaf a dequantise and a multicast more), per leaf m acks,
    // a wait and m flags; per rank a wait (INQ: a dequantise, a launch and a
    // quantise per wave of every plane).
    const auto un = static_cast<std::size_t>(built_leaves * m), ul = static_cast<std::size_t>(built_leaves);
    const bool q = inq || uplink_inq;
    const std::size_t quantisers = b.quantise_once ? 1 : un;  // (ranks that launch and quantise)
    std::size_t steps = static_cast<std::size_t>(n) * (inq ? 2 : 1) + (inq ? quantisers : 0);
    for (std::size_t p = 0; p < stripes.size(); ++p) {
      const Span& st = stripes[p];
      const auto w = static_cast<std::size_t>(scin_chunks(b.cfg, st.count));
      if (!b.builds_plane(static_cast<int>(p))) {
        steps += inq ? w * quantisers : 0;  // (its quantise steps are still built)
        continue;
      }
      steps += scin_tiers_plane_steps(un, ul, w, q, uplink_inq) + (inq ? w * quantisers : 0);
    }
    s.steps.reserve(s.steps.size() + steps);
  }
  std::vector<BufferId> qin, qout;
  const Quantised quantised =
      inq ? quantise_inputs(b, stripes, align, qin, qout, b.quantise_once ? n : 1) : Quantised{};
  const Format partial = inq || uplink_inq ? Format::Fp32 : b.data_format;
  std::vector<std::vector<StepId>> flags(static_cast<std::size_t>(n));
  for (int p = 0; p < planes; ++p) {
    if (!b.builds_plane(p)) continue;
    const Span stripe = stripes[p];
    std::vector<BufferId> lacc, lq, ldown, lout, sacc, sq;
    for (int l = 0; l < leaves; ++l) {
      const NodeId sw = s.leaf_node(p, l);
      lacc.push_back(b.buffer(fmt::format("leaf{}.{}.acc", p, l), sw, stripe.count, partial));
      if (inq || uplink_inq) lq.push_back(b.buffer(fmt::format("leaf{}.{}.q", p, l), sw, stripe.count, q));
      if (uplink_inq) {
        ldown.push_back(b.buffer(fmt::format("leaf{}.{}.down", p, l), sw, stripe.count, q));
        lout.push_back(b.buffer(fmt::format("leaf{}.{}.out", p, l), sw, stripe.count, b.data_format));
      }
    }
    for (int k = 0; k < s.spines; ++k) {
      const NodeId sw = s.spine_node(p, k);
      sacc.push_back(b.buffer(fmt::format("spine{}.{}.acc", p, k), sw, stripe.count, partial));
      if (inq || uplink_inq) sq.push_back(b.buffer(fmt::format("spine{}.{}.q", p, k), sw, stripe.count, q));
    }
    std::vector<StepId> go;
    for (int l = 0; l < built_leaves; ++l) {
      const NodeId sw = s.leaf_node(p, l);
      std::vector<StepId> arrives;
      for (int j = 0; j < m; ++j) {
        const int r = l * m + j;
        DepList deps;
        if (inq) deps.push_back(quantised.at(r, p, 0));
        arrives.push_back(b.signal(r, sw, inq ? Unit::AccelSm : Unit::IsaReduce, std::move(deps),
                                   b.label("arrive r{} -> leaf{}.{}", r, p, l)));
      }
      go.push_back(b.wait(sw, Unit::IsaReduce, arrives, b.label("leaf{}.{} counter", p, l)));
    }
    const int chunks = scin_chunks(b.cfg, stripe.count);
    auto waves = split(stripe.count, chunks, align);
    std::vector<std::vector<StepId>> writes(static_cast<std::size_t>(leaves));  // last write reaching leaf l's accelerators, per wave
    for (int w = 0; w < chunks; ++w) {
      const Span local = waves[w], global = sub(stripe, local);
      const int k = w % s.spines;
      const NodeId spine = s.spine_node(p, k);
      std::vector<StepId> ready;
      SrcList partials;
      partials.reserve(static_cast<std::size_t>(leaves));
      for (int l = 0; l < leaves; ++l) {
        if (l >= built_leaves) {  // (leaves_once: its partial, timed by the first leaf's)
          partials.push_back(at(inq || uplink_inq ? lq[l] : lacc[l], local));
          continue;
        }
        const NodeId sw = s.leaf_node(p, l);
        SrcList srcs;
        srcs.reserve(static_cast<std::size_t>(m));  // (grown by doubling, a 36-source list was copied 5 times)
        DepList deps = {go[l]};
        for (int j = 0; j < m; ++j) {
          srcs.push_back(at(inq ? qin[l * m + j] : s.input[l * m + j], global));
          // (Ranks sharing their leaf's first rank's quantise steps wait for them once.)
          if (inq && (j == 0 || quantised.stride == 1)) deps.push_back(quantised.at(l * m + j, p, w));
        }
        if (w >= isa.waves) deps.push_back(writes[l][static_cast<std::size_t>(w - isa.waves)]);
        StepId r = b.read(sw, sw, DataOp::Reduce, Unit::IsaReduce, std::move(srcs), at(lacc[l], local), std::move(deps),
                          b.label("leaf{}.{} read+reduce wave {}", p, l, w));
        BufferId up = lacc[l];
        if (inq || uplink_inq) {
          r = b.compute(sw, DataOp::Copy, {at(lacc[l], local)}, at(lq[l], local), Unit::IsaInq, {r},
                        b.label("leaf{}.{} quantise wave {}", p, l, w));
          up = lq[l];
        }
        partials.push_back(at(up, local));
        ready.push_back(b.signal(sw, spine, Unit::IsaReduce, {r}, b.label("leaf{}.{} -> spine{}.{} wave {}", p, l, p, k, w)));
      }
      StepId red = b.read(spine, spine, DataOp::Reduce, Unit::IsaReduce, std::move(partials), at(sacc[k], local), ready,
                          b.label("spine{}.{} read+reduce wave {}", p, k, w));
      BufferId out_src = sacc[k];
      if (inq || uplink_inq) {
        red = b.compute(spine, DataOp::Copy, {at(sacc[k], local)}, at(sq[k], local), Unit::IsaInq, {red},
                        b.label("spine{}.{} requantise wave {}", p, k, w));
        out_src = sq[k];
      }
      if (uplink_inq) {
        // Down to the leaves quantised; each leaf dequantises and multicasts to its accelerators.
        DstList dsts;
        dsts.reserve(static_cast<std::size_t>(leaves));
        for (int l = 0; l < leaves; ++l) dsts.push_back(at(ldown[l], local));
        StepId down = b.multicast(spine, spine, Unit::IsaReduce, at(out_src, local), std::move(dsts), {red},
                                  b.label("spine{}.{} multicast wave {}", p, k, w));
        for (int l = 0; l < built_leaves; ++l) {
          const NodeId sw = s.leaf_node(p, l);
          StepId dq = b.compute(sw, DataOp::Copy, {at(ldown[l], local)}, at(lout[l], local), Unit::IsaInq, {down},
                                b.label("leaf{}.{} dequantise wave {}", p, l, w));
          DstList out;
          out.reserve(static_cast<std::size_t>(m));
          for (int j = 0; j < m; ++j) out.push_back(at(s.output[l * m + j], global));
          writes[l].push_back(b.multicast(sw, sw, Unit::IsaReduce, at(lout[l], local), std::move(out), {dq},
                                          b.label("leaf{}.{} multicast wave {}", p, l, w)));
        }
      } else {
        DstList dsts;
        dsts.reserve(static_cast<std::size_t>(n));
        for (int j = 0; j < n; ++j) dsts.push_back(at(inq ? qout[j] : s.output[j], global));
        StepId wr = b.multicast(spine, spine, Unit::IsaReduce, at(out_src, local), std::move(dsts), {red},
                                b.label("spine{}.{} multicast wave {}", p, k, w));
        for (int l = 0; l < leaves; ++l) writes[l].push_back(wr);
      }
    }
    // Write acks go to each accelerator's leaf, which then writes its flags.
    for (int l = 0; l < built_leaves; ++l) {
      const NodeId sw = s.leaf_node(p, l);
      std::vector<StepId> acks;
      for (int j = 0; j < m; ++j)
        acks.push_back(b.signal(l * m + j, sw, Unit::None, writes[l], b.label("write ack r{} -> leaf{}.{}", l * m + j, p, l)));
      StepId all_acked = b.wait(sw, Unit::IsaReduce, acks, b.label("leaf{}.{} acks", p, l));
      for (int j = 0; j < m; ++j)
        flags[l * m + j].push_back(b.signal(sw, l * m + j, Unit::IsaReduce, {all_acked},
                                            b.label("leaf{}.{} flag -> r{}", p, l, l * m + j)));
    }
  }
  for (int r = 0; r < n; ++r) {
    StepId w = b.wait(r, inq ? Unit::AccelSm : Unit::IsaReduce, flags[static_cast<std::size_t>(r % (built_leaves * m))],
                      b.label("wait flag r{}", r));
    if (inq)
      b.compute(r, DataOp::Copy, {at(qout[r], {0, s.elems})}, at(s.output[r], {0, s.elems}), Unit::AccelSm, {w},
                b.label("dequantise r{}", r));
  }
}

}  // namespace scin::build
