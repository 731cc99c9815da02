// Ring family: NCCL-style ring (LL, LL128, Simple) and ring with a block-quantised payload.
#include "schedule/builder.h"

namespace scin::build {

// ---------------------------------------------------------------- ring

void build_ring(Builder& b, RingProtocol proto) {
  Schedule& s = b.s;
  const int n = b.n();
  s.variant = to_string(proto);
  auto chunks = split(s.elems, n);
  // n launches and 2(n-1) sends per rank, known up front: one allocation of the
  // step list instead of regrowth (which copies every step and, at hundreds of
  // GPUs, holds two lists of hundreds of MB at once).
  s.steps.reserve(s.steps.size() + static_cast<std::size_t>(n) * (2 * static_cast<std::size_t>(n) - 1));
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


}  // namespace scin::build
