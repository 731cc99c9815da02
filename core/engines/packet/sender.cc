// An accelerator's link (uplink to a switch plane, or a direct mesh link): it
// picks the next packet among its sources, takes the switch input port's
// credits, serialises it and puts it on the pipe to the switch.
#include "engines/packet/engine.h"

namespace scin::packet {

inline Ps Engine::send_now(Link& l, int id, Fine ser_full, const Pkt& p) {
  ++stats_.packets;
  Ps ser = 0;
  const Fine dur = p.bytes == g_.P ? ser_full : g_.ser_fine(flows_[p.flow], p.bytes);
  transmit(l, static_cast<std::size_t>(id), now_, dur, p, ser);
  wake_link(id, l.wire.busy_until);
  return ser;
}

inline void Engine::link_event(int id, std::uint64_t gen) {
  Sender& tx = links_[static_cast<std::size_t>(id)].tx;
  if (gen != tx.wake_gen) {  // superseded by an earlier wake-up that already ran
    ++stats_.stale_events;
    return;
  }
  tx.next_wake = kNever;
  send_next(id);  // output ports (Down) have no events: see push_out
}

// Two traffic classes share the link round-robin (as virtual channels do): read
// responses, oldest ready first, and the accelerator's own writes, round-robin
// between the steps that write. Writes are ready when their step starts, so the
// write pick is the source at the round-robin pointer (no scan); the scan is
// over the few mesh read responses only.
void Engine::try_send(int id) { send_next(id); }

inline void Engine::send_next(int id) {
  Link& l = links_[static_cast<std::size_t>(id)];
  Sender& tx = l.tx;
  if (l.wire.busy_until > now_) {
    wake_link(id, l.wire.busy_until);
    return;
  }
  // Once a plane has a group log: its entry this link sends next, if it is the
  // next request of all, joins the FIFO as its head (a packet entry), so
  // what follows serves it as any other (LogCursor::pull).
  if (logs_on_) [[unlikely]] l.cursor.pull(tx);
  // An uplink with requested responses only (an ISA's reads, NVLS ld_reduce
  // sources: most SCIN and NVLS events) takes the same decisions below with
  // fewer branches (send_requested).
  // Likewise an uplink with writes only (a ring's, most of NVLS's multicasts): send_write.
  // (`own` == 0: no writes and no mesh responses, read from the Sender's first
  // line, which a requested response reads anyway; the lists are in the next.
  // Tested in this nesting, the old tests' shape: `kind` and `own` first and
  // `responses` in the inner test made GCC's event loop 17-23 instructions
  // per event longer at 8 accelerators; docs/performance.md section 78.)
  if (tx.own == 0 || tx.responses.empty()) {
    if (l.kind == Link::Up && fast_paths_) {
      if (tx.own == 0) {
        send_requested(l, id);
        return;
      }
      if (tx.requested.empty()) {
        send_write(l, id);
        return;
      }
    }
  }
  send_general(l, id);
}

// try_send's general code: any link, any mix of sources.
void Engine::send_general(Link& l, int id) {
  Sender& tx = l.tx;
  if (tx.idle()) return;
  Ps earliest = kNever, best = kNever;
  // A response ready at r: the oldest ready one wins; one not ready yet sets the next wake-up.
  auto better_read = [&](Ps r) {
    if (r > now_) {
      earliest = std::min(earliest, r);
      return false;
    }
    if (r >= best) return false;
    best = r;
    return true;
  };
  constexpr std::size_t kNone = ~std::size_t{0};
  std::size_t pick_read = kNone;
  for (std::size_t k = 0; k < tx.responses.size(); ++k)
    if (better_read(sources_[tx.responses[k]].ready)) pick_read = k;
  // Requested responses: one FIFO per link in ready order, so its head is the oldest.
  bool ring_read = false;
  if (!tx.requested.empty() && better_read(tx.head.ready)) {
    ring_read = true;
    pick_read = kNone;
  }
  bool have_write = false;
  if (!tx.writes.empty()) {
    const Ps r = sources_[tx.writes[tx.rr]].ready;
    if (r <= now_) have_write = true;
    else earliest = std::min(earliest, r);
  }
  const bool have_read = ring_read || pick_read != kNone;
  if (!have_read && !have_write) {
    if (earliest < kNever) wake_link(id, earliest);
    return;
  }
  // A packet entry at the head carries its packet, no Source (send_packet_entry).
  const bool ring_packet = ring_read && tx.head.packet();
  const std::uint32_t read_sid = !have_read || ring_packet ? 0 : ring_read ? tx.head.source : tx.responses[pick_read];
  const std::uint32_t write_sid = have_write ? tx.writes[tx.rr] : 0;
  auto bytes_of = [&](std::uint32_t sid) {
    const Source& x = sources_[sid];
    return g_.pkt_bytes(x.total, x.next);
  };
  const std::uint64_t H = g_.H;
  // Each class has its own credits (virtual channels): a class whose share of
  // the input port is full waits, the other one may still go.
  bool read_ok = have_read, write_ok = have_write;
  const std::uint32_t read_bytes =
      !have_read ? 0
      : ring_packet ? g_.pkt_bytes(flows_[tx.head.source].src_bytes[tx.head.slot()], tx.head.index())
                    : bytes_of(read_sid);
  const std::uint32_t write_bytes = have_write ? bytes_of(write_sid) : 0;
  if (l.kind == Link::Up) {
    read_ok = read_ok && l.in.has_credit(InputPort::kResponses, read_bytes + H, g_.port_cap);
    write_ok = write_ok && l.in.has_credit(InputPort::kWrites, write_bytes + H, g_.port_cap);
    if (!read_ok && !write_ok) {  // no credit: the switch input port is full
      tx.credit_stalled(now_);
      if (earliest < kNever) wake_link(id, earliest);
      return;
    }
    tx.credit_resumed(now_, l.wire.stats.credit_stall_ps);
  }
  const bool use_read = read_ok && (!write_ok || !tx.last_read);
  const bool from_ring = use_read && ring_read;
  if (from_ring && ring_packet) {
    send_packet_entry(l, id, read_bytes);
    return;
  }
  const std::uint32_t sid = use_read ? read_sid : write_sid;
  Source& src = sources_[sid];
  Pkt p;
  p.flow = src.flow;
  p.index = src.next;
  p.slot = src.slot;
  p.bytes = use_read ? read_bytes : write_bytes;
  p.cls = use_read ? InputPort::kResponses : InputPort::kWrites;
  const std::uint64_t wire = p.bytes + H;
  tx.last_read = use_read;
  src.next += src.stride;
  if (from_ring) {
    tx.pop_request();
  } else if (use_read) {
    if (src.next >= src.end) tx.drop_response(pick_read);
  } else {
    tx.next_write(src.next >= src.end);
  }
  const Ps ser = send_now(l, id, src.ser_full, p);
  if (l.kind != Link::Up) {
    deliver(p, now_ + ser + l.wire.latency);  // mesh: straight into the peer's memory
    return;
  }
  const Ps arrive = now_ + l.wire.latency + (g_.saf ? ser : 0);
  if (src.isa_read) {
    // Fast path, exact: while no response to this ISA waits anywhere, arrivals at
    // the ISA happen in send order (every uplink has the same latency), so the
    // arrival can be processed now, at its own future time, without an event.
    // (Not for quantised reads: the INQ unit is also used by Compute steps,
    // which must see reductions in true time order.)
    Isa& isa = isas_[static_cast<std::size_t>(l.other)];
    if (src.isa_fast && l.pipe.empty() && l.in.empty(InputPort::kResponses) && isa.blocked.empty() &&
        isa.normal_inflight == 0) {
      if (isa_admit_out(l.other, l.gpu, p, arrive, arrive)) return;  // never occupied the input port
    }
    ++isa.normal_inflight;
  }
  l.in.take_credit(use_read ? InputPort::kResponses : InputPort::kWrites, wire);
  const bool was_empty = l.pipe.empty();
  l.pipe.push_back(Queued{p, arrive});
  if (was_empty) schedule(arrive, EvPipe, static_cast<std::uint32_t>(id));
}

// try_send's decisions on an uplink whose only packets are requested responses
// (writes and mesh responses empty): the head of the request FIFO goes if it
// is ready and its class has credit; otherwise the link waits for the head's
// ready time (no other candidate) or for credit. The same steps, in the same
// order, as try_send's general code takes for such a link.
inline void Engine::send_requested(Link& l, int id) {
  Sender& tx = l.tx;
  if (tx.requested.empty()) return;  // idle
  const Ps ready = tx.head.ready;
  if (ready > now_) {
    if (ready < kNever) wake_link(id, ready);
    return;
  }
  const std::uint64_t H = g_.H;
  const bool packet = tx.head.packet();
  Source* src = nullptr;
  std::uint32_t bytes;
  if (packet) [[unlikely]] {  // (the block order the compiler chose before; a packet entry is NVLS at scale)
    bytes = g_.pkt_bytes(flows_[tx.head.source].src_bytes[tx.head.slot()], tx.head.index());
  } else {
    src = &sources_[tx.head.source];
    // g_.pkt_bytes(total, next): P for every packet but the source's last (end is its packet count)
    bytes = src->next + 1 < src->end ? static_cast<std::uint32_t>(g_.P) : g_.pkt_bytes(src->total, src->next);
  }
  if (!l.in.has_credit(InputPort::kResponses, bytes + H, g_.port_cap)) {  // no credit: the switch input port is full
    tx.credit_stalled(now_);
    return;
  }
  tx.credit_resumed(now_, l.wire.stats.credit_stall_ps);
  if (packet) {
    send_packet_entry(l, id, bytes);
    return;
  }
  Pkt p;
  p.flow = src->flow;
  p.index = src->next;
  p.slot = src->slot;
  p.bytes = bytes;
  p.cls = InputPort::kResponses;
  const std::uint64_t wire = p.bytes + H;
  tx.last_read = true;
  src->next += src->stride;
  tx.pop_request();
  const Ps ser = send_now(l, id, src->ser_full, p);
  const Ps arrive = now_ + l.wire.latency + (g_.saf ? ser : 0);
  if (src->isa_read) {
    // The ISA fast path, as in try_send.
    Isa& isa = isas_[static_cast<std::size_t>(l.other)];
    if (src->isa_fast && l.pipe.empty() && l.in.empty(InputPort::kResponses) && isa.blocked.empty() &&
        isa.normal_inflight == 0) {
      if (isa_admit(l.other, l.gpu, p, arrive, arrive)) return;  // never occupied the input port
    }
    ++isa.normal_inflight;
  }
  l.in.take_credit(InputPort::kResponses, wire);
  const bool was_empty = l.pipe.empty();
  l.pipe.push_back(Queued{p, arrive});
  if (was_empty) schedule(arrive, EvPipe, static_cast<std::uint32_t>(id));
}

// try_send's decisions on an uplink whose only packets are its own writes
// (responses and requested responses empty): the write at the round-robin
// pointer goes if it is ready and its class has credit; otherwise the link
// waits for it (no other candidate) or for credit. The same steps, in the same
// order, as try_send's general code takes for such a link.
inline void Engine::send_write(Link& l, int id) {
  Sender& tx = l.tx;
  Source& src = sources_[tx.writes[tx.rr]];
  if (src.ready > now_) {
    if (src.ready < kNever) wake_link(id, src.ready);
    return;
  }
  const std::uint64_t H = g_.H;
  const std::uint32_t bytes = g_.pkt_bytes(src.total, src.next);
  if (!l.in.has_credit(InputPort::kWrites, bytes + H, g_.port_cap)) {  // no credit: the switch input port is full
    tx.credit_stalled(now_);
    return;
  }
  tx.credit_resumed(now_, l.wire.stats.credit_stall_ps);
  Pkt p;
  p.flow = src.flow;
  p.index = src.next;
  p.slot = src.slot;
  p.bytes = bytes;
  p.cls = InputPort::kWrites;
  const std::uint64_t wire = p.bytes + H;
  tx.last_read = false;
  src.next += src.stride;
  tx.next_write(src.next >= src.end);
  const Ps ser = send_now(l, id, src.ser_full, p);
  const Ps arrive = now_ + l.wire.latency + (g_.saf ? ser : 0);
  if (src.isa_read) [[unlikely]] {  // (never for a write's Source; as in try_send)
    Isa& isa = isas_[static_cast<std::size_t>(l.other)];
    if (src.isa_fast && l.pipe.empty() && l.in.empty(InputPort::kResponses) && isa.blocked.empty() &&
        isa.normal_inflight == 0) {
      if (isa_admit_out(l.other, l.gpu, p, arrive, arrive)) return;
    }
    ++isa.normal_inflight;
  }
  l.in.take_credit(InputPort::kWrites, wire);
  const bool was_empty = l.pipe.empty();
  l.pipe.push_back(Queued{p, arrive});
  if (was_empty) schedule(arrive, EvPipe, static_cast<std::uint32_t>(id));
}

inline void Engine::pipe_event(int id) {
  Link& l = links_[static_cast<std::size_t>(id)];
  const Queued h = l.pipe.front();
  l.pipe.pop_front();
  if (!l.pipe.empty()) schedule(l.pipe.front().t, EvPipe, static_cast<std::uint32_t>(id));
  const int c = h.p.cls;
  const std::uint64_t wire = h.p.bytes + g_.H;
  if (l.in.blocked[c] || !fast_paths_) [[unlikely]] {
    l.in.arrive(c, h, wire);
    if (!l.in.blocked[c]) pump_in(id);
    return;
  }
  // The class is not blocked, so its FIFO is empty (pump_in leaves each class
  // empty or blocked) and pump_in would forward this packet alone: it goes
  // straight on, counted in the port as it passes (bytes and peak as if it had
  // entered and left), and enters the FIFO only if it must wait.
  l.in.pass(c, wire);
  Flow& f = flows_[h.p.flow];
  if (f.kind == FlowKind::GpuWrite && h.p.slot != kAllDsts ? !forward_write1(l, c, h.p, f) : !forward_in(id, c, h)) {
    l.in.wait(c, h);
    return;
  }
  l.in.passed(c, wire);
  if (l.tx.credit_blocked) try_send(id);
}

// try_send's read for a packet entry at the head of the request FIFO (a
// one-packet response of an accelerator read on a star: no Source, no ISA),
// as try_send sends any other response. Apart, so try_send's code for the
// Sources stays as it was.
void Engine::send_packet_entry(Link& l, int id, std::uint32_t bytes) {
  Sender& tx = l.tx;
  const Sender::Requested h = tx.head;
  Pkt p;
  p.flow = h.source;
  p.index = h.index();
  p.slot = h.slot();
  p.bytes = bytes;
  p.cls = InputPort::kResponses;
  const std::uint64_t wire = p.bytes + g_.H;
  tx.last_read = true;
  tx.pop_request();
  const Ps ser = send_now(l, id, flows_[p.flow].ser_full, p);
  const Ps arrive = now_ + l.wire.latency + (g_.saf ? ser : 0);
  l.in.take_credit(InputPort::kResponses, wire);
  const bool was_empty = l.pipe.empty();
  l.pipe.push_back(Queued{p, arrive});
  if (was_empty) schedule(arrive, EvPipe, static_cast<std::uint32_t>(id));
}

}  // namespace scin::packet
