// Ring family: NCCL-style ring (LL, LL128, Simple) and ring with a block-quantised payload.
#include "schedule/builder.h"

#include "base/error.h"

namespace scin::build {

// ---------------------------------------------------------------- ring

RingForm ring_form(const Builder& b, RingProtocol proto) {
  RingForm f;
  f.head = b.s;
  f.head.variant = to_string(proto);
  f.protocol = proto;
  f.via = b.via;
  for (const Span& c : split(b.s.elems, b.n())) {
    f.chunk_offset.push_back(c.offset);
    f.chunk_count.push_back(c.count);
  }
  return f;
}

// Reduce-scatter: at step k rank r sends chunk (r-k) mod n to r+1, which adds
// its own input into its output buffer as the data arrives. All-gather: at
// step j rank r forwards chunk (r+1-j) mod n, fully reduced. Every send waits
// for the data delivered to r by the previous step, r's own previous send and
// the receiver's launch (RingForm, algorithms.h).
void build_ring(Builder& b, RingProtocol proto) {
  if (!b.s.steps.empty()) throw Error("build_ring: the ring is built into an empty schedule");
  const RingForm f = ring_form(b, proto);
  Schedule& s = b.s;
  s.variant = f.head.variant;
  const int n = f.n();
  // n launches and 2(n-1) sends per rank, known up front: one allocation of the
  // step list instead of regrowth (which copies every step and, at hundreds of
  // GPUs, holds two lists of hundreds of MB at once).
  s.steps.reserve(static_cast<std::size_t>(n) * (2 * static_cast<std::size_t>(n) - 1));
  for (int r = 0; r < n; ++r) {
    Step l = f.launch(r);
    if (!b.labels) l.label.clear();
    b.add(std::move(l));
  }
  for (int t = 0; t < f.sends(); ++t)
    for (int r = 0; r < n; ++r) {
      Step st = f.send(r, t);
      const auto deps = f.send_deps(r, t);
      st.deps.assign(deps.begin(), deps.end());
      if (b.labels) st.label = f.send_label(r, t);
      b.add(std::move(st));  // (polls the stop token)
    }
}

}  // namespace scin::build

namespace scin {

int RingForm::chunk(int r, int t) const {
  const int k = reduce_scatter(t) ? r - t : r + 1 - (t - (n() - 1));
  return (k % n() + n()) % n();
}

Step RingForm::launch(int r) const { return build::launch_step(r, true, protocol); }

Step RingForm::send(int r, int t) const {
  const auto c = static_cast<std::size_t>(chunk(r, t));
  const build::Span span{chunk_offset[c], chunk_count[c]};
  const int to = (r + 1) % n();
  using build::at;
  if (reduce_scatter(t))
    return build::ring_send_step(r, via, protocol, DataOp::Reduce,
                                 {at(t == 0 ? head.input[r] : head.output[r], span), at(head.input[to], span)},
                                 at(head.output[to], span));
  return build::ring_send_step(r, via, protocol, DataOp::Copy, {at(head.output[r], span)}, at(head.output[to], span));
}

std::array<StepId, 3> RingForm::send_deps(int r, int t) const {
  const StepId next_launch = launch_id((r + 1) % n());
  if (t == 0) return {launch_id(r), launch_id(r), next_launch};
  return {send_id((r - 1 + n()) % n(), t - 1), send_id(r, t - 1), next_launch};
}

std::string RingForm::send_label(int r, int t) const {
  const bool rs = reduce_scatter(t);
  return fmt::format("{}[{}] r{}->r{} chunk {}", rs ? "rs" : "ag", rs ? t : t - (n() - 1), r, (r + 1) % n(),
                     chunk(r, t));
}

}  // namespace scin

namespace scin::build {

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
  // n launches, 2 steps per rank per reduce-scatter hop, n quantise-sum steps,
  // n(n-1) gather sends and n dequantise steps: one allocation.
  s.steps.reserve(3 * static_cast<std::size_t>(n) * static_cast<std::size_t>(n));
  std::vector<BufferId> partial, qtx, qout;
  for (int r = 0; r < n; ++r) {
    partial.push_back(b.buffer("partial", r, s.elems, Format::Fp32));
    qtx.push_back(b.buffer("qtx", r, s.elems, q));
    qout.push_back(b.buffer("qout", r, s.elems, q));
  }
  std::vector<StepId> launches;
  for (int r = 0; r < n; ++r) launches.push_back(b.launch(r, true, RingProtocol::Simple));
  std::vector<StepId> last(launches), sent(launches);
  // Per hop, the send that delivered to each rank (every rank receives once per hop).
  std::vector<StepId> delivered(static_cast<std::size_t>(n));

  for (int k = 0; k < n - 1; ++k) {
    for (int r = 0; r < n; ++r) {
      const int c = ((r - k) % n + n) % n;
      const int to = (r + 1) % n;
      Region from = at(k == 0 ? s.input[r] : partial[r], chunks[c]);
      StepId qz = b.compute(r, DataOp::Copy, {from}, at(qtx[r], chunks[c]), Unit::AccelSm,
                            {last[r], sent[r]}, b.label("quantise rs[{}] r{} chunk {}", k, r, c));
      StepId id = b.ring_send(r, RingProtocol::Simple, DataOp::Reduce, {at(qtx[r], chunks[c]), at(s.input[to], chunks[c])},
                       at(partial[to], chunks[c]), {qz, launches[to]},
                       b.label("rs[{}] r{}->r{} chunk {}", k, r, to, c));
      delivered[to] = id;
      sent[r] = id;
    }
    last.swap(delivered);
  }
  // The owner of chunk (r+1) quantises its full sum into its gather buffer.
  std::vector<StepId> ready(static_cast<std::size_t>(n));
  for (int r = 0; r < n; ++r) {
    const int c = (r + 1) % n;
    ready[r] = b.compute(r, DataOp::Copy, {at(partial[r], chunks[c])}, at(qout[r], chunks[c]),
                         Unit::AccelSm, {last[r]}, b.label("quantise sum r{} chunk {}", r, c));
  }
  last = ready;
  for (int j = 0; j < n - 1; ++j) {
    for (int r = 0; r < n; ++r) {
      const int c = ((r + 1 - j) % n + n) % n;
      const int to = (r + 1) % n;
      StepId id = b.ring_send(r, RingProtocol::Simple, DataOp::Copy, {at(qout[r], chunks[c])}, at(qout[to], chunks[c]),
                       {last[r], sent[r], launches[to]}, b.label("ag[{}] r{}->r{} chunk {}", j, r, to, c));
      delivered[to] = id;
      sent[r] = id;
    }
    last.swap(delivered);
  }
  for (int r = 0; r < n; ++r)
    b.compute(r, DataOp::Copy, {at(qout[r], {0, s.elems})}, at(s.output[r], {0, s.elems}),
              Unit::AccelSm, {last[r], sent[r]}, b.label("dequantise r{}", r));
}


}  // namespace scin::build
