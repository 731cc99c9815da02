// Hierarchical in-switch algorithms for two-tier fabrics (issue 16): NVLS
// across two tiers and hierarchical SCIN (our proposal; docs/model.md,
// "Two-tier fabrics"). They compile to the same IR as the one-switch
// versions; the route each transfer takes (leaf, spine, leaf) is the
// fabric's (Schedule::route), costed link by link by the cost model.
#include "schedule/builder.h"

namespace scin::build {

namespace {
// Barrier through a counter in spine 0 of plane 0 (reached by every accelerator).
std::vector<StepId> tier_barrier(Builder& b, const std::vector<StepId>& before, const char* what) {
  const NodeId counter = b.s.spine_node(0, 0);
  std::vector<StepId> arrives;
  for (int r = 0; r < b.n(); ++r)
    arrives.push_back(b.signal(r, counter, Unit::NvlsReduce, {before[r]}, b.label("{} arrive r{}", what, r)));
  std::vector<StepId> waits;
  for (int r = 0; r < b.n(); ++r)
    waits.push_back(b.wait(r, Unit::NvlsReduce, arrives, b.label("{} wait r{}", what, r)));
  return waits;
}
}  // namespace

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
void build_nvls_tiers(Builder& b) {
  constexpr int kChunksInFlight = 8;
  Schedule& s = b.s;
  const int n = b.n(), m = s.gpus_per_leaf(), leaves = s.leaves;
  auto shards = split(s.elems, m);
  const int chunks = nvls_tiers_chunks(s.bytes, n, m);
  // One allocation for the steps: n launches, two barriers of 2n, per chunk
  // and rank two ld_reduces and a store.
  s.steps.reserve(s.steps.size() + 5 * static_cast<std::size_t>(n) + 3 * static_cast<std::size_t>(n) * static_cast<std::size_t>(chunks));
  std::vector<BufferId> leaf_sum, all_sum;
  for (int r = 0; r < n; ++r) {
    leaf_sum.push_back(b.buffer("ld_reduce.leaf", r, s.elems, b.data_format));
    all_sum.push_back(b.buffer("ld_reduce.spine", r, s.elems, b.data_format));
  }
  std::vector<StepId> launches;
  for (int r = 0; r < n; ++r) launches.push_back(b.launch(r));
  const std::vector<StepId> start = tier_barrier(b, launches, "barrier0");
  std::vector<StepId> done(start);
  // stage1[r][c], store[r][c]
  std::vector<std::vector<StepId>> stage1(static_cast<std::size_t>(n)), stores(static_cast<std::size_t>(n));
  // Each shard's chunks, split once (not per rank and chunk: that was chunks^2 x n spans).
  std::vector<std::vector<Span>> shard_chunks;
  for (int k = 0; k < m; ++k) shard_chunks.push_back(split(shards[k].count, chunks));
  for (int c = 0; c < chunks; ++c) {
    for (int r = 0; r < n; ++r) {
      const int leaf = r / m, k = r % m;
      const Span chunk = sub(shards[k], shard_chunks[k][c]);
      SrcList srcs;
      srcs.reserve(static_cast<std::size_t>(m));
      for (int j = 0; j < m; ++j) srcs.push_back(at(s.input[leaf * m + j], chunk));
      DepList deps = {start[r]};
      if (c >= kChunksInFlight) deps.push_back(stores[r][static_cast<std::size_t>(c - kChunksInFlight)]);
      stage1[r].push_back(b.read(r, kAllPlanes, DataOp::Reduce, Unit::NvlsReduce, std::move(srcs), at(leaf_sum[r], chunk),
                                 std::move(deps), b.label("ld_reduce leaf r{} shard {} chunk {}", r, k, c)));
    }
    for (int r = 0; r < n; ++r) {
      const int leaf = r / m, k = r % m;
      const Span chunk = sub(shards[k], shard_chunks[k][c]);
      const Span part = sub(chunk, split(chunk.count, leaves)[leaf]);
      SrcList srcs;
      DstList dsts;
      DepList deps;
      // (Reserved: grown one by one, these lists were a third of a 1 GiB point's time in malloc and page faults.)
      srcs.reserve(static_cast<std::size_t>(leaves));
      deps.reserve(static_cast<std::size_t>(leaves));
      dsts.reserve(static_cast<std::size_t>(n));
      for (int l = 0; l < leaves; ++l) {
        srcs.push_back(at(leaf_sum[l * m + k], part));
        deps.push_back(stage1[l * m + k].back());
      }
      for (int j = 0; j < n; ++j) dsts.push_back(at(s.output[j], part));
      StepId red = b.read(r, kAllPlanes, DataOp::Reduce, Unit::NvlsReduce, std::move(srcs), at(all_sum[r], part),
                          std::move(deps), b.label("ld_reduce spine r{} shard {} chunk {}", r, k, c));
      stores[r].push_back(b.multicast(r, kAllPlanes, Unit::NvlsReduce, at(all_sum[r], part), std::move(dsts), {red},
                                      b.label("multimem.st r{} shard {} chunk {}", r, k, c)));
      done[r] = stores[r].back();
    }
  }
  // A rank's stores are done when every rank's are: the closing barrier.
  tier_barrier(b, done, "barrier1");
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
    const auto un = static_cast<std::size_t>(n), ul = static_cast<std::size_t>(leaves);
    const bool q = inq || uplink_inq;
    const std::size_t quantisers = b.quantise_once ? 1 : un;  // (ranks that launch and quantise)
    std::size_t steps = un * (inq ? 2 : 1) + (inq ? quantisers : 0);
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
    for (int l = 0; l < leaves; ++l) {
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
        for (int l = 0; l < leaves; ++l) {
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
    for (int l = 0; l < leaves; ++l) {
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
    StepId w = b.wait(r, inq ? Unit::AccelSm : Unit::IsaReduce, flags[r], b.label("wait flag r{}", r));
    if (inq)
      b.compute(r, DataOp::Copy, {at(qout[r], {0, s.elems})}, at(s.output[r], {0, s.elems}), Unit::AccelSm, {w},
                b.label("dequantise r{}", r));
  }
}

}  // namespace scin::build
