// Push families: one-shot and two-shot (optionally with a block-quantised payload).
#include "schedule/builder.h"

namespace scin::build {

// ---------------------------------------------------------------- one-shot

// Every rank pushes its whole buffer into a slot of every peer's scratch, flags
// it, and each rank sums the N slots locally (in rank order, FP32).
void build_one_shot(Builder& b) {
  Schedule& s = b.s;
  const int n = b.n();
  const Span all{0, s.elems};
  // n launches, n(n-1) pushes and flags, n waits, n reductions: one allocation.
  s.steps.reserve(static_cast<std::size_t>(n) * (2 * static_cast<std::size_t>(n) + 1));
  std::vector<BufferId> scratch;
  for (int r = 0; r < n; ++r) scratch.push_back(b.buffer("scratch", r, s.elems * n, b.data_format));
  std::vector<StepId> launches;
  for (int r = 0; r < n; ++r) launches.push_back(b.launch(r));
  // Per rank its peers' flags and its launch: the wait's dependency list, filled in place.
  std::vector<DepList> arrived(static_cast<std::size_t>(n));
  for (auto& a : arrived) a.reserve(static_cast<std::size_t>(n));
  for (int r = 0; r < n; ++r)
    for (int j = 0; j < n; ++j) {
      if (j == r) continue;
      StepId w = b.push(r, at(s.input[r], all), Region{scratch[j], static_cast<std::uint64_t>(r) * s.elems, s.elems},
                        {launches[r], launches[j]}, b.label("push r{}->r{}", r, j));
      arrived[j].push_back(b.signal(r, j, Unit::AccelSm, {w}, b.label("flag r{}->r{}", r, j)));
    }
  for (int j = 0; j < n; ++j) {
    arrived[j].push_back(launches[j]);
    StepId w = b.wait(j, Unit::AccelSm, std::move(arrived[j]), b.label("wait r{}", j));
    SrcList srcs;
    srcs.reserve(static_cast<std::size_t>(n));
    for (int r = 0; r < n; ++r)
      srcs.push_back(r == j ? at(s.input[j], all)
                            : Region{scratch[j], static_cast<std::uint64_t>(r) * s.elems, s.elems});
    b.compute(j, DataOp::Reduce, std::move(srcs), at(s.output[j], all), Unit::AccelSm, {w},
              b.label("reduce r{}", j));
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
  // n launches, 2n(n-1) pushes and flags per phase, 3n waits and reductions,
  // and with quantisation n quantise and n dequantise steps: one allocation.
  s.steps.reserve(4 * static_cast<std::size_t>(n) * static_cast<std::size_t>(n) + (quantised ? 2 * static_cast<std::size_t>(n) : 0));
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
                    Unit::AccelSm, {l}, b.label("quantise r{}", r));
    ready.push_back(l);
  }
  auto slot = [&](int owner, int from) {
    return Region{scratch[owner], static_cast<std::uint64_t>(from) * shard_max, shards[owner].count};
  };
  std::vector<DepList> arrived(static_cast<std::size_t>(n));
  for (auto& a : arrived) a.reserve(static_cast<std::size_t>(n));
  for (int r = 0; r < n; ++r)
    for (int j = 0; j < n; ++j) {
      if (j == r) continue;
      StepId w = b.push(r, at(quantised ? qin[r] : s.input[r], shards[j]), slot(j, r), {ready[r], ready[j]},
                        b.label("rs r{}->r{} shard {}", r, j, j));
      arrived[j].push_back(b.signal(r, j, Unit::AccelSm, {w}, b.label("rs flag r{}->r{}", r, j)));
    }
  std::vector<StepId> reduced;
  for (int j = 0; j < n; ++j) {
    arrived[j].push_back(ready[j]);
    StepId w = b.wait(j, Unit::AccelSm, std::move(arrived[j]), b.label("rs wait r{}", j));
    SrcList srcs;
    srcs.reserve(static_cast<std::size_t>(n));
    for (int r = 0; r < n; ++r)
      srcs.push_back(r == j ? at(quantised ? qin[j] : s.input[j], shards[j]) : slot(j, r));
    Region dst = at(quantised ? gather[j] : s.output[j], shards[j]);
    reduced.push_back(b.compute(j, DataOp::Reduce, std::move(srcs), dst, Unit::AccelSm, {w},
                                b.label("reduce shard {} r{}", j, j)));
  }
  std::vector<DepList> gathered(static_cast<std::size_t>(n));
  for (auto& g : gathered) g.reserve(static_cast<std::size_t>(n));
  for (int j = 0; j < n; ++j)
    for (int r = 0; r < n; ++r) {
      if (r == j) continue;
      BufferId from = quantised ? gather[j] : s.output[j];
      BufferId to = quantised ? gather[r] : s.output[r];
      StepId w = b.push(j, at(from, shards[j]), at(to, shards[j]), {reduced[j]},
                        b.label("ag r{}->r{} shard {}", j, r, j));
      gathered[r].push_back(b.signal(j, r, Unit::AccelSm, {w}, b.label("ag flag r{}->r{}", j, r)));
    }
  for (int r = 0; r < n; ++r) {
    gathered[r].push_back(reduced[r]);
    StepId w = b.wait(r, Unit::AccelSm, std::move(gathered[r]), b.label("ag wait r{}", r));
    if (quantised)
      b.compute(r, DataOp::Copy, {at(gather[r], {0, s.elems})}, at(s.output[r], {0, s.elems}),
                Unit::AccelSm, {w}, b.label("dequantise r{}", r));
  }
}


}  // namespace scin::build
