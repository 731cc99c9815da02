// In-switch families: NVLS (multimem ld_reduce / st) and SCIN (ISA reads, reduces, multicasts; INQ).
#include "schedule/builder.h"
#include "schedule/nvls_policy.h"

#include <fmt/format.h>

namespace scin {

bool nccl_runs_nvls(const Config& cfg) {
  return cfg.sw.nvls.enabled && cfg.fabric.gpus >= cfg.sw.nvls.nccl_min_gpus;
}

std::string nccl_nvls_note(const Config& cfg) {
  if (cfg.fabric.gpus >= cfg.sw.nvls.nccl_min_gpus) return {};
  return fmt::format(
      "NCCL does not run NVLS on {} GPUs (switch.nvls.nccl_min_gpus = {}: ncclNvlsInit in NCCL's "
      "src/transport/nvls.cc turns NVLS off for 2 GPUs or fewer), so NCCL_ALGO=NVLS runs ring there "
      "(ncclTopoTuneModel, src/graph/tuning.cc: with no enabled algorithm left, ring is made available)",
      cfg.fabric.gpus, cfg.sw.nvls.nccl_min_gpus);
}

}  // namespace scin

namespace scin::build {

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
  // n launches, 2n steps per barrier, 2 per chunk per rank: one allocation.
  s.steps.reserve(5 * static_cast<std::size_t>(n) + 2 * static_cast<std::size_t>(n) * static_cast<std::size_t>(chunks));
  std::vector<BufferId> reg;
  for (int r = 0; r < n; ++r) reg.push_back(b.buffer("ld_reduce", r, s.elems, b.data_format));
  auto barrier = [&](const std::vector<StepId>& before, const char* what) {
    std::vector<StepId> arrives;
    for (int r = 0; r < n; ++r)
      arrives.push_back(b.signal(r, sw0, Unit::NvlsReduce, {before[r]}, b.label("{} arrive r{}", what, r)));
    std::vector<StepId> waits;
    for (int r = 0; r < n; ++r)
      waits.push_back(b.wait(r, Unit::NvlsReduce, arrives, b.label("{} wait r{}", what, r)));
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
      SrcList srcs;
      DstList dsts;
      srcs.reserve(static_cast<std::size_t>(n));
      dsts.reserve(static_cast<std::size_t>(n));
      for (int j = 0; j < n; ++j) {
        srcs.push_back(at(s.input[j], span));
        dsts.push_back(at(s.output[j], span));
      }
      // NCCL keeps a bounded number of chunks in flight; here two per rank.
      DepList deps = {start[i]};
      if (c >= 2) deps.push_back(stores[static_cast<std::size_t>(c - 2)]);
      StepId l = b.read(i, kAllPlanes, DataOp::Reduce, Unit::NvlsReduce, std::move(srcs), at(reg[i], span),
                        std::move(deps), b.label("ld_reduce r{} shard {} chunk {}", i, i, c));
      stores.push_back(b.multicast(i, kAllPlanes, Unit::NvlsReduce, at(reg[i], span), std::move(dsts), {l},
                                   b.label("multimem.st r{} shard {} chunk {}", i, i, c)));
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

// INQ: every accelerator quantises its input wave by wave (the ISA reads wave w
// once every accelerator has quantised it), so quantisation pipelines with
// the network; the Arrive follows the first wave.
Quantised quantise_inputs(Builder& b, const std::vector<Span>& stripes, std::uint64_t align,
                          std::vector<BufferId>& qin, std::vector<BufferId>& qout, int stride) {
  Schedule& s = b.s;
  const Format q = codec_format(b.cfg.quant.codec);
  const auto planes = stripes.size();
  Quantised quantised;
  // Every plane's waves, in the message (the same for every rank), at quantised.plane_start[p].
  std::vector<Span> waves;
  for (std::size_t p = 0; p < planes; ++p) {
    quantised.plane_start.push_back(waves.size());
    for (const Span& w : split(stripes[p].count, scin_chunks(b.cfg, stripes[p].count), align))
      waves.push_back(sub(stripes[p], w));
  }
  quantised.plane_start.push_back(waves.size());
  quantised.per_rank = waves.size();
  quantised.stride = std::max(1, stride);
  quantised.steps.reserve(static_cast<std::size_t>(b.n() / quantised.stride) * waves.size());
  for (int r = 0; r < b.n(); ++r) {
    qin.push_back(b.buffer("qin", r, s.elems, q));
    qout.push_back(b.buffer("qout", r, s.elems, q));
    if (r % quantised.stride != 0) continue;
    StepId l = b.launch(r);
    for (std::size_t p = 0; p < planes; ++p) {
      StepId prev = l;
      for (std::size_t k = quantised.plane_start[p]; k < quantised.plane_start[p + 1]; ++k) {
        const Span g = waves[k];
        prev = b.compute(r, DataOp::Copy, {at(s.input[r], g)}, at(qin[r], g), Unit::AccelSm, {prev},
                         b.label("quantise r{} plane {} wave {}", r, p, k - quantised.plane_start[p]));
        quantised.steps.push_back(prev);
      }
    }
  }
  return quantised;
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
  {
    // Per plane 3n + 2 sync steps and 2 (INQ: 3) per wave; n waits (INQ: and
    // n dequantise steps, n launches and n quantise steps per wave): one allocation.
    const auto un = static_cast<std::size_t>(n);
    std::size_t steps = un * (inq ? 3 : 1);
    for (const Span& st : stripes) {
      const auto w = static_cast<std::size_t>(scin_chunks(b.cfg, st.count));
      steps += 3 * un + 2 + w * (inq ? 3 + un : 2);
    }
    s.steps.reserve(steps);
  }

  std::vector<BufferId> qin, qout;
  const Quantised quantised = inq ? quantise_inputs(b, stripes, align, qin, qout) : Quantised{};
  // The dependency lists are built as DepLists (reserved once, moved into their step).
  std::vector<DepList> flags(static_cast<std::size_t>(n));
  for (auto& f : flags) f.reserve(static_cast<std::size_t>(planes));
  for (int p = 0; p < planes; ++p) {
    const NodeId sw = s.switch_node(p);
    const Span stripe = stripes[p];
    // The ISA accumulates in FP32; INQ keeps a quantised copy to multicast.
    BufferId acc = b.buffer(fmt::format("isa{}.acc", p), sw, stripe.count, inq ? Format::Fp32 : b.data_format);
    BufferId qacc = inq ? b.buffer(fmt::format("isa{}.q", p), sw, stripe.count, q) : 0;
    DepList arrives;
    arrives.reserve(static_cast<std::size_t>(n));
    for (int r = 0; r < n; ++r) {
      DepList deps;
      if (inq) deps.push_back(quantised.at(r, p, 0));
      // Without INQ the Arrive is a stream memory op; with INQ it is written by the quantise kernel.
      arrives.push_back(b.signal(r, sw, inq ? Unit::AccelSm : Unit::IsaReduce, std::move(deps),
                                 b.label("arrive r{} -> isa{}", r, p)));
    }
    StepId go = b.wait(sw, Unit::IsaReduce, std::move(arrives), b.label("isa{} counter", p));
    const int chunks = scin_chunks(b.cfg, stripe.count);
    auto waves = split(stripe.count, chunks, align);
    const int in_flight = isa.waves;
    DepList writes;
    writes.reserve(static_cast<std::size_t>(chunks));
    for (int w = 0; w < chunks; ++w) {
      Span local = waves[w];             // offsets within the stripe (= within acc)
      Span global = sub(stripe, local);  // offsets within the message
      SrcList srcs;
      DstList dsts;
      srcs.reserve(static_cast<std::size_t>(n));
      dsts.reserve(static_cast<std::size_t>(n));
      for (int j = 0; j < n; ++j) {
        srcs.push_back(at(inq ? qin[j] : s.input[j], global));
        dsts.push_back(at(inq ? qout[j] : s.output[j], global));
      }
      DepList deps = {go};
      if (inq) deps.reserve(2 + static_cast<std::size_t>(n));
      if (w >= in_flight) deps.push_back(writes[static_cast<std::size_t>(w - in_flight)]);
      if (inq)
        for (int j = 0; j < n; ++j) deps.push_back(quantised.at(j, p, w));
      StepId r = b.read(sw, sw, DataOp::Reduce, Unit::IsaReduce, std::move(srcs), at(acc, local), std::move(deps),
                        b.label("isa{} read+reduce wave {}", p, w));
      BufferId out_src = acc;
      if (inq) {
        r = b.compute(sw, DataOp::Copy, {at(acc, local)}, at(qacc, local), Unit::IsaInq, {r},
                      b.label("isa{} requantise wave {}", p, w));
        out_src = qacc;
      }
      writes.push_back(b.multicast(sw, sw, Unit::IsaReduce, at(out_src, local), std::move(dsts), {r},
                                   b.label("isa{} multicast wave {}", p, w)));
    }
    // Write acks come back from every accelerator once its writes have landed.
    DepList acks;
    acks.reserve(static_cast<std::size_t>(n));
    for (int r = 0; r < n; ++r)
      acks.push_back(b.signal(r, sw, Unit::None, writes, b.label("write ack r{} -> isa{}", r, p)));
    StepId all_acked = b.wait(sw, Unit::IsaReduce, std::move(acks), b.label("isa{} acks", p));
    for (int r = 0; r < n; ++r)
      flags[r].push_back(b.signal(sw, r, Unit::IsaReduce, {all_acked}, b.label("isa{} flag -> r{}", p, r)));
  }
  for (int r = 0; r < n; ++r) {
    StepId w = b.wait(r, inq ? Unit::AccelSm : Unit::IsaReduce, std::move(flags[r]), b.label("wait flag r{}", r));
    if (inq)
      b.compute(r, DataOp::Copy, {at(qout[r], {0, s.elems})}, at(s.output[r], {0, s.elems}),
                Unit::AccelSm, {w}, b.label("dequantise r{}", r));
  }
}



}  // namespace scin::build
