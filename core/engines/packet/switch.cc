// The switch side: input ports forward their head packets where their flow
// says (an output queue, every output queue of a multicast, the NVLS reducer or
// the ISA); output queues compute each packet's start on their link when it
// enters; feeders that find a queue full wait on it and retry in turn.
#include "engines/packet/engine.h"

namespace scin::packet {

void Engine::pump_in(int id) {
  Link& l = links_[static_cast<std::size_t>(id)];
  bool moved = false;
  for (int c = 0; c < 2; ++c)
    while (!l.in.blocked[c] && !l.in.empty(c)) {
      const Queued& h = l.in.front(c);
      const std::uint64_t wire = h.p.bytes + g_.H;
      if (!forward_in(id, c, h)) break;
      l.in.leave(c, wire);
      moved = true;
    }
  if (moved && l.tx.credit_blocked) try_send(id);
}

// A packet enters a switch output queue: its start on the link follows from the
// FIFO order (no decision is left), so it is scheduled now, and so is its delivery.
bool Engine::enqueue_out(int down_id, const Queued& qd, const Feeder& who) {
  if (!room_in(down_id, qd.p.bytes + g_.H)) {
    wait_on(down_id, who);
    return false;
  }
  deliver(qd.p, push_out(down_id, qd.t, g_.ser_fine(flows_[qd.p.flow], qd.p.bytes), qd.p));
  return true;
}

// Enqueues a packet whose room has been checked; returns when it lands at the accelerator.
inline Ps Engine::push_out(int down_id, Ps ready, Fine dur, const Pkt& p) {
  Link& d = links_[static_cast<std::size_t>(down_id)];
  Ps ser = 0;
  const Ps start = transmit(d, static_cast<std::size_t>(down_id), ready, dur, p, ser);
  d.out.push(ready, start, static_cast<std::uint32_t>(p.bytes + g_.H));
  return start + ser + d.wire.latency;
}

// A blocked feeder joins the queue's waiters; when the queue next loses a packet
// to its link the waiters retry in arrival order (a round-robin arbiter: one
// that is served and blocks again goes to the back).
void Engine::wait_on(int down_id, const Feeder& who) {
  links_[static_cast<std::size_t>(down_id)].out.waiters.push_back(who);
  arm_room(down_id);
}

void Engine::arm_room(int down_id) {
  OutputQueue& q = links_[static_cast<std::size_t>(down_id)].out;
  const Ps t = q.next_departure(now_);
  if (t < q.room_at) {
    q.room_at = t;
    q.room_gen = schedule(t, EvRoom, static_cast<std::uint32_t>(down_id));
  }
}

void Engine::room_event(int down_id, std::uint64_t gen) {
  OutputQueue& q = links_[static_cast<std::size_t>(down_id)].out;
  if (gen != q.room_gen) return;  // superseded
  q.room_at = kNever;
  // Waiters retry in order until one of them takes the room; the others keep
  // their place, so the next room goes to the next one (round-robin).
  for (std::size_t n = q.waiters.size(); n > 0 && !q.waiters.empty(); --n) {
    const Feeder w = q.waiters.front();
    q.waiters.pop_front();
    const std::uint64_t before = q.pushes();
    serving_ = down_id;
    retry(w);
    serving_ = -1;
    if (q.pushes() != before) break;
  }
  if (!q.waiters.empty()) {
    q.drain(now_);
    arm_room(down_id);
  }
}

void Engine::retry(const Feeder& w) {
  switch (w.kind) {
    case FeederKind::InPort:
      links_[w.id >> 1].in.blocked[w.id & 1] = false;
      pump_in(static_cast<int>(w.id >> 1));
      break;
    case FeederKind::IsaWrite:
      flows_[w.id].waiting = false;
      if (flows_[w.id].active) pump_isa_write(w.id);
      break;
    case FeederKind::ResultOut:
      outs_[w.id].waiting = false;
      pump_result_out(w.id);
      break;
  }
}

// Room for a packet of `wire` bytes in the output queues of destinations
// [lo, hi) of a multicast on `plane` (switch-resident destinations need none).
// Returns how many packets of up to a full packet's size surely fit in all of
// them now (at least 1: this one), so a multicast that sends several at one
// instant checks the N queues once, not per packet (pushes at this instant only
// fill them, and nobody else runs in between). If one queue has no room, `who`
// waits on it and this returns 0.
inline std::uint64_t Engine::multicast_room(const Flow& f, std::size_t lo, std::size_t hi, int plane, std::uint64_t wire,
                                     const Feeder& who) {
  // (The run's constants in locals: the queues' stores would make the compiler reload them per destination.)
  const std::uint64_t cap = g_.port_cap;
  const NodeId gpus = s_.gpus;
  const int np = g_.planes, down0 = g_.down(0, plane);  // g_.down(d, plane) == down0 + d * np
  const NodeId* dsts = f.dsts.data();
  std::uint64_t room = cap;
  for (std::size_t k = lo; k < hi; ++k) {
    const NodeId d = dsts[k];
    if (d >= gpus) continue;  // s_.is_switch(d)
    const int q = down0 + d * np;
    if (!room_in(q, wire)) {
      wait_on(q, who);
      return 0;
    }
    room = std::min(room, cap - links_[static_cast<std::size_t>(q)].out.bytes());
  }
  return std::max<std::uint64_t>(room / (g_.P + g_.H), 1);
}

// A write to one destination (a ring's, a mesh-less unicast) at the head of
// class `cls` of uplink l's input port: what forward_in's multicast code does
// for a single destination, without its loops.
inline bool Engine::forward_write1(Link& l, int cls, const Pkt& p, Flow& f) {
  const NodeId d = f.dsts[p.slot];
  if (s_.is_switch(d)) {
    deliver(p, now_);
    return true;
  }
  const int q = g_.down(d, l.other);
  if (!room_in(q, p.bytes + g_.H)) {
    const auto id = static_cast<std::uint32_t>(&l - links_.data());
    wait_on(q, Feeder{FeederKind::InPort, 2 * id + static_cast<std::uint32_t>(cls)});
    l.in.blocked[cls] = true;
    return false;
  }
  deliver(p, push_out(q, now_ + lsw_, g_.ser_fine(f, p.bytes), p));
  return true;
}

// The head packet `hq` of class `cls` of a switch input port goes where its
// flow says. Returns false if it must wait (the class is then blocked). The
// caller takes it off the port (InputPort::leave) when it went; `hq` may be
// the port's front or (pipe_event) a packet that arrives at an empty class.
bool Engine::forward_in(int id, int cls, const Queued& hq) {
  Link& l = links_[static_cast<std::size_t>(id)];
  const Queued h = hq;
  const Pkt& p = h.p;
  Flow& f = flows_[p.flow];
  const int plane = l.other;
  const std::uint64_t wire = p.bytes + g_.H;
  const Ps lsw = lsw_;
  const Feeder me{FeederKind::InPort, static_cast<std::uint32_t>(2 * id + cls)};
  switch (f.kind) {
    case FlowKind::GpuWrite: {
      if (p.slot != kAllDsts && fast_paths_) [[likely]]
        return forward_write1(l, cls, p, f);
      // All destination queues must have room (a multicast waits for its fullest port).
      const std::size_t lo = p.slot == kAllDsts ? 0 : p.slot;
      const std::size_t hi = p.slot == kAllDsts ? f.dsts.size() : p.slot + 1u;
      if (!multicast_room(f, lo, hi, plane, wire, me)) {
        l.in.blocked[cls] = true;
        return false;
      }
      const Fine dur = g_.ser_fine(f, p.bytes);  // (the same for every destination)
      for (std::size_t k = lo; k < hi; ++k) {
        const NodeId d = f.dsts[k];
        deliver(p, s_.is_switch(d) ? now_ : push_out(g_.down(d, plane), now_ + lsw, dur, p));
      }
      break;
    }
    case FlowKind::GpuRead: {
      if (f.srcs.size() == 1) {  // a plain remote read: the response crosses to the reader
        if (!enqueue_out(g_.down(f.initiator, plane), Queued{p, now_ + lsw}, me)) {
          l.in.blocked[cls] = true;
          return false;
        }
        break;
      }
      // NVLS ld_reduce: the switch sums the responses and returns the sum to the issuer.
      const Ps whole = h.t + (g_.saf ? 0 : to_ps(g_.ser_fine(f, p.bytes)));
      if (f.arrive(p.index, whole)) group_complete(p.flow, p.index, plane, now_);
      break;
    }
    case FlowKind::IsaRead: {
      Isa& isa = isas_[static_cast<std::size_t>(plane)];
      if (!isa_admit_out(plane, l.gpu, p, h.t, now_)) {
        l.in.blocked[cls] = true;
        isa.blocked.push_back(static_cast<std::uint32_t>(id));
        arm_isa_wake(plane, isa.buffer.next_free());
        return false;
      }
      --isa.normal_inflight;
      break;
    }
    case FlowKind::IsaWrite:
      break;  // never on an input port
  }
  return true;
}

void Engine::pump_result_out(std::uint32_t oid) {
  ResultOut& o = outs_[oid];
  if (o.waiting) return;
  const int plane = static_cast<int>(oid) / g_.gpus, gpu = static_cast<int>(oid) % g_.gpus;
  while (!o.fifo.empty()) {
    if (!enqueue_out(g_.down(gpu, plane), o.fifo.front(), Feeder{FeederKind::ResultOut, oid})) {
      o.waiting = true;
      return;
    }
    o.fifo.pop_front();
  }
}

// The ISA multicasts its result: each packet starts on every destination port
// once all of them have room.
void Engine::pump_isa_write(FlowId fi) {
  Flow& f = flows_[fi];
  if (f.waiting) return;
  const int plane = f.plane;
  const Feeder me{FeederKind::IsaWrite, fi};
  std::uint64_t fit = 0;  // packets that surely fit in every destination queue
  while (f.next_send < f.n) {
    Pkt p;
    p.flow = fi;
    p.index = f.next_send;
    p.bytes = g_.pkt_bytes(f.bytes, p.index);
    p.slot = kAllDsts;
    if (fit == 0 && (fit = multicast_room(f, 0, f.dsts.size(), plane, p.bytes + g_.H, me)) == 0) {
      f.waiting = true;
      return;
    }
    --fit;
    ++stats_.packets;
    Ps last = 0;
    const Fine dur = g_.ser_fine(f, p.bytes);  // (the same for every destination)
    const Ps now = now_;
    const int np = g_.planes, down0 = g_.down(0, plane);  // g_.down(d, plane) == down0 + d * np
    // push_out per destination, with what it reads of the Engine in locals (the
    // queues' stores would otherwise make the compiler reload them per destination).
    Link* const links = links_.data();
    const auto wire = static_cast<std::uint32_t>(p.bytes + g_.H);
    const bool tl = timeline_on_;
    for (NodeId d : f.dsts) {
      const int q = down0 + d * np;
      Link& dl = links[q];
      Ps ser = 0;
      const Ps start = dl.wire.send(now, dur, p.bytes, wire, ser);
      if (tl) [[unlikely]] timeline_.add(static_cast<std::size_t>(q), start, ser);
      dl.out.push(now, start, wire);
      last = std::max(last, start + ser + dl.wire.latency);
    }
    f.last = std::max(f.last, last);
    f.delivered += f.dsts.size();
    if (f.delivered == f.expected) finish_flow(fi, f.last);
    ++f.next_send;
  }
}

}  // namespace scin::packet
