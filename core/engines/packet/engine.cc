// The packet engine's wiring: steps and flows, the event loop (set-up:
// setup.cc). See engine.h for where the other parts live and packet_engine.h
// for the model.
//
// Speed notes. Events carry no payload: a link, a pipe or a step is the target,
// and each keeps its own FIFO (htsim's trick), so the heap holds a few entries
// per link, never one per packet in flight. Work that needs no decision is not
// an event: a switch output port is a FIFO server, so a packet's start on it is
// computed when it enters and the queue depth is replayed lazily; a request is
// a timestamp in its link's FIFO; a reduction whose completion time is known
// frees the ISA buffer lazily; an ISA read response with nothing queued ahead of
// it is admitted at its own (future) arrival time when it is sent; a packet's
// arrival at its final accelerator is accounted when it starts its last hop.
// One event is one pop from the heap; Stats::events counts exactly those (and
// Stats::packet_hops the packet serialisations). A component that may have a
// superseded wake-up pending keeps the number of its latest one (generation).
#include "engines/packet/engine.h"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <limits>
#include <utility>

#include <fmt/format.h>

#include "base/error.h"
#include "fabric/params.h"

namespace scin::packet {

// ------------------------------------------------------------------ steps

bool Engine::is_network(const Step& st) const {
  if (st.via == kNoNode) return false;
  if (st.kind == StepKind::Write) {
    for (const auto& d : st.dsts)
      if (s_.buffers[d.buffer].node != st.initiator) return true;
    return false;
  }
  if (st.kind == StepKind::Read) {
    const NodeId to = s_.buffers[st.dsts[0].buffer].node;
    if (st.srcs.size() == 1 && s_.buffers[st.srcs[0].buffer].node == to) return false;
    return true;
  }
  return false;
}

void Engine::start_step(StepId i, Ps t) {
  steps_[i].start = t;  // was its ready time (step_done)
  // Costed when it starts, by shape (step_costs.h): a ring at 1024 accelerators
  // starts 2 M steps of one packet each, of a few shapes per rank. A network
  // step of a shape seen before reads its shape's lines only, not its Step nor
  // its cost (`st` is only a reference until used).
  const std::uint32_t id = steps_[i].shape;
  Shape* shape = id == StepCosts::kNone ? nullptr : &shapes_[id];
  if (shape && shape->network > 0) {
    setup_flow(i, t, shape->flow, id);
    return;
  }
  const Step& st = s_.steps[i];
  const bool network = shape && shape->network == 0 ? false : is_network(st);
  // A network step's flow keeps no port use (make_flow_shape): one not memoised
  // (an NVLS ld_reduce of every rank, a multicast) is costed without them.
  const StepCosts::Costed sc = shape     ? costs_.cost(id, cfg_, s_, rm_, st)
                               : network ? costs_.direct_without_ports(cfg_, s_, rm_, st)
                                         : costs_.direct(cfg_, s_, rm_, st);
  const StepCost& c = *sc.cost;
  if (shape) shape->network = network ? -1 : 0;
  if (!network) {
    // As the analytic engine charges it: fixed, resource occupancy, latency.
    // Units from when they are free; HBM in the first gap its reservations leave.
    Ps start = t + to_ps(c.fixed_ns);
    dur_.clear();
    for (const auto& u : c.uses) dur_.push_back(res_[static_cast<std::size_t>(u.resource)].carry.round(u.amount_bytes / u.rate_GBps));
    for (Ps before = -1; before != start;) {
      before = start;
      for (std::size_t k = 0; k < c.uses.size(); ++k) {
        Server& r = res_[static_cast<std::size_t>(c.uses[k].resource)];
        start = c.uses[k].kind == ResourceKind::Hbm ? r.fit(now_, start, dur_[k]) : std::max(start, r.free);
      }
    }
    Ps end = start;
    for (std::size_t k = 0; k < c.uses.size(); ++k) {
      Server& r = res_[static_cast<std::size_t>(c.uses[k].resource)];
      if (c.uses[k].kind == ResourceKind::Hbm) r.book(start, dur_[k]);
      else r.free = start + dur_[k];
      end = std::max(end, start + dur_[k]);
    }
    schedule(end + to_ps(c.latency_total_ns()), EvStepDone, i);
    return;
  }
  FlowShape& x = shape ? shape->flow : flow_shape_;
  make_flow_shape(x, i, c, sc.factor);
  if (shape) shape->network = 1;  // (not before: make_flow_shape may refuse the step)
  setup_flow(i, t, x, shape ? id : StepCosts::kNone);
}

void Engine::step_done(StepId i) {
  StepState& me = steps_[i];
  if (me.pending < 0) return;  // done already
  me.pending = -1;
  ++steps_done_;
  me.finish = now_;
  if (const FlowId fid = me.flow; fid != kNoFlow) {
    Flow& f = flows_[fid];
    f.active = false;
    // (clear(), as `= {}` did: the initializer-list assignment, which kept the storage too)
    f.count.clear();
    f.complete.clear();
    f.staged.clear();
    // Every packet has been sent: no link, request FIFO or ISA port still uses these.
    // (One by one: a ring step's one Source took the range insert's general code.)
    for (const std::uint32_t sid : f.sources) free_sources_.push_back(sid);
    f.sources.clear();
    me.flow = kNoFlow;
    // A flow with its shape's fields waits for that shape's next step, if none
    // does yet (a ring rank's next step of this shape, mostly: the pool's last
    // flow was often another rank's, of another shape).
    Shape* const sh = f.shape != kNoShape && fast_paths_ ? &shapes_[f.shape] : nullptr;
    if (sh != nullptr && sh->parked == kNoFlow) sh->parked = fid;
    else free_flows_.push_back(fid);
  }
  const std::uint32_t end = steps_[i + 1].succ;
  for (std::uint32_t k = me.succ; k < end; ++k) {  // (start_step does not resize steps_: `me` stays valid)
    const StepId nx = succ_[k];
    StepState& x = steps_[nx];
    x.start = std::max(x.start, now_);  // its ready time until it starts
    if (--x.pending == 0) start_step(nx, x.start);
  }
}

// ------------------------------------------------------------------ flows

// A flow's fields that follow from its step alone, made from step i (its shape:
// this reads only what StepCosts keys a shape by, and the label for errors).
void Engine::make_flow_shape(FlowShape& f, StepId i, const StepCost& c, double factor) {
  const Step& st = s_.steps[i];
  f.clear_but_lists();
  f.factor = factor;
  f.fixed_ns = c.fixed_ns;
  f.latency_ns = c.latency_total_ns();
  f.initiator = st.initiator;
  const bool from_switch = s_.is_switch(st.initiator);
  if (st.kind == StepKind::Write) {
    f.kind = from_switch ? FlowKind::IsaWrite : FlowKind::GpuWrite;
    f.bytes = region_bytes(s_, st.srcs[0]);
    f.n = g_.npkts(f.bytes);
    const std::size_t nd = st.dsts.size();  // (a multicast's 1024: through the data pointers, as the sources below)
    f.srcs.clear(), f.src_bytes.clear(), f.src_n.clear();
    f.dsts.resize(nd);  // (every entry written below: not cleared first, so the last step's are not zeroed again)
    NodeId* dsts = f.dsts.data();
    const Region* reg = st.dsts.data();
    for (std::size_t k = 0; k < nd; ++k) dsts[k] = s_.buffers[reg[k].buffer].node;
  } else {
    f.kind = from_switch ? FlowKind::IsaRead : FlowKind::GpuRead;
    const Region& dst = st.dsts[0];
    f.bytes = region_bytes(s_, dst);
    f.to_switch = s_.is_switch(s_.buffers[dst.buffer].node);
    double plain = 0, wire = 0;
    bool codec = is_codec(s_.buffers[dst.buffer].format);
    // (Each source's buffer read once: an NVLS ld_reduce at 1024 accelerators has
    // 1024 sources and is costed per step, not per shape. The same sums as
    // region_bytes(), plain_bytes() and is_codec() per source gave.)
    const double elem_bytes = dtype_bytes_of(s_.dtype);
    // (Sized first and written through their data pointers: InlineVec's
    // push_back tests inline or heap and the capacity per value, 1024 sources.)
    const std::size_t ns = st.srcs.size();
    // (Not cleared first: each entry is written below, and an NVLS ld_reduce's
    // steps at 1024 accelerators, costed one after another in the scratch
    // shape, zeroed 16 KB each before writing them.)
    f.dsts.clear();
    f.srcs.resize(ns), f.src_bytes.resize(ns), f.src_n.resize(ns);
    NodeId* srcs = f.srcs.data();
    std::uint64_t* src_bytes = f.src_bytes.data();
    std::uint32_t* src_n = f.src_n.data();
    const Region* reg = st.srcs.data();
    const BufferDecl* bufs = s_.buffers.data();
    // (A source of the same count and buffer format as the one before, as every
    // source of an NVLS ld_reduce, has its bytes, packets and codec test: those
    // depend on nothing else. Two calls and a division less per source.)
    // (In locals, not through `f` and `this`: the stores through the lists'
    // int and uint32 pointers may alias f.n, f.n_min and the engine's fields,
    // which were loaded and stored again per source. A source costed, then
    // the sources alike to it in a loop of their own, with few values live.)
    std::uint64_t prev_count = 0, b = 0;
    Format prev_format{};
    int prev_block = 0;
    ScaleFormat prev_scale{};
    std::uint32_t m = 0, n = 0, n_min = std::numeric_limits<std::uint32_t>::max();
    double pv = 0, bv = 0;  // this source's plain and wire bytes (as the sums add them)
    const bool fast = fast_paths_;
    const NodeId gpus = s_.gpus;  // (s_.is_switch(node): node >= gpus)
    const bool tiers = tiers_;
    bool in_order = true;
    auto put = [&](std::size_t k, NodeId node) {
      srcs[k] = node;
      src_bytes[k] = b;
      src_n[k] = m;
      plain += pv;
      wire += bv;
      in_order &= node == static_cast<NodeId>(k);
      if (node >= gpus && !tiers) [[unlikely]]
        throw Error(fmt::format("packet engine: step {} ({}) reads a switch-resident buffer; not modelled",
                                i, st.label));
    };
    for (std::size_t k = 0; k < ns;) {
      {
        const Region& r = reg[k];
        const BufferDecl& buf = bufs[r.buffer];
        const bool rc = is_codec(buf.format);
        b = region_bytes(buf, r.count);
        m = g_.npkts(b);
        prev_count = r.count, prev_format = buf.format, prev_block = buf.block_elems, prev_scale = buf.scale_format;
        n = std::max(n, m);
        n_min = std::min(n_min, m);
        pv = rc ? static_cast<double>(r.count) * elem_bytes : static_cast<double>(b);
        bv = static_cast<double>(b);
        codec |= rc;
        put(k++, buf.node);
      }
      if (!fast) continue;
      for (; k < ns; ++k) {
        const Region& r = reg[k];
        const BufferDecl& buf = bufs[r.buffer];
        if (r.count != prev_count || buf.format != prev_format || buf.block_elems != prev_block ||
            buf.scale_format != prev_scale)
          break;
        put(k, buf.node);
      }
    }
    f.n = n, f.n_min = n_min;
    f.in_gpu_order = in_order;
    f.plain_per_byte = wire > 0 ? plain / wire * static_cast<double>(st.srcs.size()) : 0;
    if (from_switch && st.op == DataOp::Reduce) {
      f.reduce_inv_GBps = isa_reduce_ns_per_byte(cfg_, codec);
      f.codec = codec;
    }
    if (!g_.star && !tiers_ && st.srcs.size() > 1)
      throw Error(fmt::format("packet engine: step {} ({}) sums several remote sources on a switchless mesh",
                              i, st.label));
  }
  // The plane a fixed-plane transfer crosses.
  if (g_.star) {
    if (from_switch) f.plane = st.initiator - g_.gpus;
    else if (st.via >= g_.gpus) f.plane = st.via - g_.gpus;
    else f.plane = g_.planes == 1 ? 0 : -1;
  } else if (tiers_) {
    if (from_switch) f.plane = s_.plane_of(st.initiator);
    else if (st.via >= g_.gpus) f.plane = s_.plane_of(st.via);
    else f.plane = g_.planes == 1 ? 0 : -1;
  }
  // Resources the packets do not model (accelerator HBM for a fused receive-reduce).
  for (const auto& u : c.uses) {
    if (is_port(u.kind)) continue;
    if (f.kind == FlowKind::IsaRead) continue;  // the ISA reducer is modelled per packet
    // Two tiers: trunks are links and the NVLS reducer is modelled per packet too.
    if (tiers_ && (u.kind == ResourceKind::Uplink || u.kind == ResourceKind::Downlink ||
                   u.kind == ResourceKind::NvlsReduce)) continue;
    f.uses.push_back(u);
  }
}

// A flow starts as a default Flow with its shape's fields. One that holds this
// shape's fields already (Flow::shape: the pool gives back the flow freed last,
// and a ring rank's next step is mostly of its last step's shape) keeps them:
// only the others are reset. (A shape's FlowShape is made once and never
// changes; flow_shape_, the scratch of steps without a shape, is never kept:
// its flows get kNoShape.)
inline void Engine::apply_flow_shape(Flow& f, const FlowShape& x, StepId i, std::uint32_t shape_id) {
  if (f.shape == shape_id && shape_id != kNoShape && fast_paths_) {
    f.reset_run();
    f.step = i;
    f.active = true;
    ++shapes_kept_;
    return;
  }
  f.reset();
  f.shape = shape_id;
  f.step = i;
  f.active = true;
  f.initiator = x.initiator;
  f.kind = x.kind;
  f.plane = x.plane;
  f.bytes = x.bytes;
  f.n = x.n;
  f.n_min = x.n_min;
  f.in_gpu_order = x.in_gpu_order;
  f.to_switch = x.to_switch;
  f.plain_per_byte = x.plain_per_byte;
  f.reduce_inv_GBps = x.reduce_inv_GBps;
  f.codec = x.codec;
  // (reset() left them empty with their storage; a few entries each, mostly,
  // pushed one by one; an NVLS ld_reduce's 1024 assigned as a range: a ring's
  // one destination took ~4x the instructions as a range)
  auto copy = [](auto& to, const auto& from) {
    if (from.size() <= StepCosts::kMaxRegions) {
      for (const auto& v : from) to.push_back(v);
    } else {
      to.assign(from.begin(), from.end());
    }
  };
  copy(f.dsts, x.dsts), copy(f.srcs, x.srcs), copy(f.src_bytes, x.src_bytes), copy(f.src_n, x.src_n);
}

void Engine::setup_flow(StepId i, Ps t, const FlowShape& x, std::uint32_t shape_id) {
  Shape* const shape = shape_id != StepCosts::kNone ? &shapes_[shape_id] : nullptr;
  FlowId fid;
  if (shape != nullptr && shape->parked != kNoFlow) {
    fid = shape->parked;
    shape->parked = kNoFlow;
  } else if (free_flows_.empty()) {
    fid = static_cast<FlowId>(flows_.size());
    flows_.emplace_back();
  } else {
    fid = free_flows_.back();
    free_flows_.pop_back();
  }
  steps_[i].flow = fid;
  Flow& f = flows_[fid];
  apply_flow_shape(f, x, i, shape_id);
  // A transfer over every plane starts on the plane its address maps to: the
  // data's addresses are striped over the planes a packet at a time (as an
  // accelerator's memory is over its NVLink links), so transfers of fewer
  // packets than planes (a shard of a few hundred bytes on 18 planes) spread
  // over the planes, as the analytic engine's even split of their bytes
  // assumes, instead of all taking plane 0 (docs/model.md section 4).
  if (f.plane < 0 && g_.planes > 1) {
    const Step& st = s_.steps[i];
    const std::uint64_t addr = st.dsts.front().offset * static_cast<std::uint64_t>(dtype_bytes_of(s_.dtype));
    // A unicast transfer's first plane is offset by the distance from its
    // initiator to its peer: an accelerator's transfers of one offset to
    // different peers start on different planes (its peers' buffers lie at
    // different addresses). NVLS's ld_reduce and multimem.st address the
    // multicast object, one address space: no offset.
    std::uint64_t base = 0;
    const std::vector<NodeId>& peers = f.kind == FlowKind::GpuRead ? f.srcs : f.dsts;
    if (peers.size() == 1)  // (a write to one destination, a read of one source)
      base = static_cast<std::uint64_t>(((peers.front() - f.initiator) % g_.gpus + g_.gpus) % g_.gpus);
    f.rot = static_cast<std::uint16_t>((base + addr / g_.P) % static_cast<std::uint64_t>(g_.planes));
  }
  const double factor = x.factor;
  // The wire time of a packet is a function of the transfer factor alone (the
  // rest is the run's): computed again only when the factor differs from the
  // last step's (a ring's 2 M steps share one).
  if (!(factor == rate_.factor)) {
    const double raw = port_raw_GBps(cfg_, s_);
    const double payload_GBps = port_payload_GBps(cfg_, s_, factor);
    const double P = static_cast<double>(g_.P), H = static_cast<double>(g_.H);
    rate_.factor = factor;
    rate_.inv_raw = 1.0 / raw;
    rate_.gap_ns = std::max(0.0, P / payload_GBps - (P + H) / raw);
    Flow tmp;
    tmp.inv_raw = rate_.inv_raw;
    tmp.gap_ns = rate_.gap_ns;
    rate_.ser_full = to_fine(g_.ser_ns(tmp, static_cast<std::uint32_t>(g_.P)));
  }
  f.inv_raw = rate_.inv_raw;
  f.gap_ns = rate_.gap_ns;
  f.ser_full = rate_.ser_full;
  // Resources the packets do not model (make_flow_shape kept their uses).
  Ps start = t + to_ps(x.fixed_ns);
  Ps extra = start;
  for (const auto& u : x.uses) {
    Server& r = res_[static_cast<std::size_t>(u.resource)];
    if (u.kind == ResourceKind::Hbm) {
      const Ps d = r.carry.round(u.amount_bytes / u.rate_GBps);
      const Ps at = r.fit(now_, start, d);
      r.book(at, d);
      extra = std::max(extra, at + d);
    } else {
      extra = std::max(extra, r.occupy(start, u.amount_bytes / u.rate_GBps));
    }
  }
  // An empty flow (no packet: a ring step or shard of no elements at a few
  // bytes on many ranks) still tells its receiver the step is done: a flag
  // crosses the same path, so it ends its step's latency after it starts, as
  // the analytic engine charges it. (It ended at its start: a rank whose sends
  // were all empty waited on no wire, and on two tiers, where a ring's sends
  // between leaves cost more, a ring at 8 B on 72 GPUs took 97 us against 187.)
  if (x.n == 0) extra = std::max(extra, start + to_ps(x.latency_ns));
  f.extra_end = extra;
  // The ISA issues its first requests one operation latency after it is triggered.
  if (f.kind == FlowKind::IsaRead) start += to_ps(cfg_.sw.isa.op_latency_ns);
  schedule(start, EvFlowStart, fid);
}

std::uint32_t Engine::add_source(const Source& src) { return add_source_inline(src); }

inline std::uint32_t Engine::add_source_inline(const Source& src) {
  std::uint32_t id;
  if (free_sources_.empty()) {
    id = static_cast<std::uint32_t>(sources_.size());
    sources_.push_back(src);
  } else {
    id = free_sources_.back();
    free_sources_.pop_back();
    sources_[id] = src;
  }
  Flow& f = flows_[src.flow];
  Source& x = sources_[id];  // completed in place (no copy of a 48-byte Source per call)
  x.total = x.response ? f.src_bytes[x.slot] : f.bytes;
  x.ser_full = f.ser_full;
  x.isa_read = f.kind == FlowKind::IsaRead;
  x.isa_fast = x.isa_read && f.to_switch && !f.codec;
  f.sources.push_back(id);
  return id;
}

inline void Engine::add_link_source(int link, const Source& src) {
  if (src.next >= src.end) return;
  const bool response = src.response;
  const std::uint32_t id = add_source_inline(src);
  Sender& tx = links_[static_cast<std::size_t>(link)].tx;
  tx.add(id, response);
  wake_link(link, now_);
}

void Engine::flow_start(FlowId i) {
  if (tiers_) {
    tier_flow_start(i);
    return;
  }
  Flow& f = flows_[i];
  switch (f.kind) {
    case FlowKind::GpuWrite: {
      const int g = f.initiator;
      if (g_.star) {
        f.expected = static_cast<std::uint64_t>(f.n) * f.dsts.size();
        const std::uint16_t slot = f.dsts.size() > 1 ? kAllDsts : 0;
        if (f.plane >= 0) {
          add_link_source(g_.up(g, f.plane), Source{i, slot, 0, f.n, 1, now_, false, 0});
        } else {
          // (Planes p >= n get no packet: no Source made. A ring step of one packet at 1024
          // accelerators spread over 4 planes made four, three dropped at once.)
          const int np = static_cast<int>(std::min<std::uint32_t>(f.n, static_cast<std::uint32_t>(g_.planes)));
          for (int p = 0; p < np; ++p)
            add_link_source(g_.up(g, g_.plane_of(f, static_cast<std::uint32_t>(p))),
                            Source{i, slot, static_cast<std::uint32_t>(p), f.n, static_cast<std::uint32_t>(g_.planes), now_, false, 0});
        }
      } else {
        for (std::size_t k = 0; k < f.dsts.size(); ++k) {
          if (f.dsts[k] == g) continue;
          f.expected += f.n;
          add_link_source(g_.direct(g, f.dsts[k]), Source{i, static_cast<std::uint16_t>(k), 0, f.n, 1, now_, false, 0});
        }
      }
      break;
    }
    case FlowKind::IsaWrite: {
      for (NodeId d : f.dsts)
        if (s_.is_switch(d))
          throw Error(fmt::format("packet engine: step {} ({}) writes from a switch to a switch; not modelled",
                                  f.step, s_.steps[f.step].label));
      f.expected = static_cast<std::uint64_t>(f.n) * f.dsts.size();
      break;
    }
    case FlowKind::IsaRead:
    case FlowKind::GpuRead:
      start_reads(i);
      break;
  }
  if (f.expected == 0 || f.n == 0) {
    finish_flow(i, now_);
    return;
  }
  if (f.kind == FlowKind::IsaWrite) pump_isa_write(i);
}

void Engine::finish_flow(FlowId i, Ps t) { schedule(std::max(t, flows_[i].extra_end), EvStepDone, flows_[i].step); }

inline void Engine::deliver(const Pkt& p, Ps t) {
  Flow& f = flows_[p.flow];
  delivered_bytes_ += p.bytes;
  if (f.kind == FlowKind::GpuRead && g_.star) schedule(t, EvReadReturn, static_cast<std::uint32_t>(f.initiator));
  f.last = std::max(f.last, t);
  if (++f.delivered == f.expected) finish_flow(p.flow, f.last);
}

// ------------------------------------------------------------------ the run

namespace {

double thread_cpu_s() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

}  // namespace

inline void Engine::dispatch(const Event& e) {
  const std::uint32_t tgt = e.target();
  const std::uint32_t id = tgt & kIdMask;
  switch (static_cast<EvType>(tgt >> kTypeShift)) {
    case EvLink:
      if (tiers_) {
        Sender& tx = links_[id].tx;
        if (e.seq() != tx.wake_gen) {
          ++stats_.stale_events;
          break;
        }
        tx.next_wake = kNever;
        hop_send(static_cast<int>(id));
        break;
      }
      link_event(static_cast<int>(id), e.seq());
      break;
    case EvPipe:
      if (tiers_) {
        hop_arrive(static_cast<int>(id));
        break;
      }
      pipe_event(static_cast<int>(id)); break;
    case EvFlowStart: flow_start(id); break;
    case EvStepDone: step_done(id); break;
    case EvIsaWake: isa_wake(static_cast<int>(id), e.seq()); break;
    case EvRoom: room_event(static_cast<int>(id), e.seq()); break;
    case EvReadReturn: read_return(static_cast<int>(id)); break;
  }
}

Run Engine::run() {
  const auto t0 = std::chrono::steady_clock::now();
  const double cpu0 = thread_cpu_s();
  setup();
  const std::size_t n = s_.steps.size();
  for (std::size_t i = 0; i < n; ++i)
    if (steps_[i].pending == 0) start_step(static_cast<StepId>(i), 0);

  // Guard against a livelock (events that keep rescheduling at one instant):
  // never hang. Checked where poll() is (every 4096 events), not per event:
  // the time at the previous check and the events since it was last new.
  Ps same_t = -1;
  std::uint64_t same_time = 0;
  while (!q_.empty()) {
    stats_.peak_pending = std::max<std::uint64_t>(stats_.peak_pending, q_.size());
    const Event e = q_.pop();
    now_ = e.t;
    if ((++stats_.events & 0xfff) == 0) [[unlikely]] {
      if (now_ != same_t) {
        same_t = now_;
        same_time = 0;
      } else if ((same_time += 0x1000) > 100'000'000) {
        throw Error(fmt::format("packet engine: no progress at t = {} ns after 10^8 events; please report this",
                                to_ns(now_)));
      }
      poll();
    }
    dispatch(e);
  }
  if (steps_done_ != n) {
    std::size_t first = 0;
    while (first < n && steps_[first].pending < 0) ++first;
    throw Error(fmt::format("packet engine: {} of {} steps never finished (first: step {} '{}'); "
                            "the schedule or the fabric deadlocked", n - steps_done_, n, first,
                            first < n ? s_.steps[first].label : ""));
  }
  stats_.packet_hops = 0;
  for (auto& l : links_) {
    if (l.kind == Link::Down) l.out.drain(kNever - 1);  // settle the output queues' peaks
    stats_.packet_hops += l.wire.stats.packets;
  }
  Run out;
  Ps total = 0;
  out.steps.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    out.steps[i] = StepTiming{to_ns(steps_[i].start), to_ns(steps_[i].finish)};
    total = std::max(total, steps_[i].finish);
  }
  stats_.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  stats_.cpu_s = thread_cpu_s() - cpu0;
  testing::packet_entries_made.fetch_add(packet_entries_made_, std::memory_order_relaxed);
  testing::group_log_entries.fetch_add(group_log_entries_, std::memory_order_relaxed);
  for (const GroupLog& log : logs_) testing::group_log_taken.fetch_add(log.taken, std::memory_order_relaxed);
  report(out, total);
  return out;
}

}  // namespace scin::packet
