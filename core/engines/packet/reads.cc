// Reads: the ISA reading every accelerator (request ports, staging buffer,
// reduction unit), NVLS ld_reduce (the switch sums the responses for the
// issuing accelerator) and plain remote reads (star and mesh).
#include "engines/packet/engine.h"

#include <cmath>

namespace scin::packet {

// A read step starts: its sources, and the requests that make them send.
void Engine::start_reads(FlowId i) {
  Flow& f = flows_[i];
  const std::size_t k = f.srcs.size();
  f.expected = f.n;
  if (k > 1 || f.kind == FlowKind::IsaRead) {
    f.count.assign(f.n, 0);
    f.complete.assign(f.n, 0);
    f.staged.assign(f.n, 0);
  }
  if (f.kind == FlowKind::IsaRead) {
    const double group_plain = static_cast<double>(g_.P) * f.plain_per_byte;
    f.pace_ns = cfg_.sw.isa.regulation == Regulation::Paced ? group_plain * f.reduce_inv_GBps : 0.0;
    for (std::size_t j = 0; j < k; ++j)
      f.src_id.push_back(f.src_n[j] == 0 ? 0 : add_source(Source{i, static_cast<std::uint16_t>(j), 0, f.src_n[j], 1, 0, true, 0}));
    Isa& isa = isas_[static_cast<std::size_t>(f.plane)];
    for (std::size_t j = 0; j < k; ++j) {
      if (f.src_n[j] == 0) continue;
      isa.ports[static_cast<std::size_t>(f.srcs[j])].ops.push_back(
          IsaPort::Op{0, f.src_n[j], f.src_id[j], f.src_bytes[j], to_fine(f.pace_ns)});
      issue_requests(f.plane, f.srcs[j], now_);
    }
  } else if (g_.star) {
    // An accelerator issues its reads in program order, one request per packet
    // (group), keeping at most a window of requests outstanding (see
    // issue_gpu_reads); the responses wait in each source link's request FIFO.
    // The Source of each (source, plane) is made at its first request: an NVLS
    // ld_reduce of one packet per source at 1024 accelerators and 4 planes would
    // otherwise make 4 M, three quarters of them never sending.
    const int np = f.plane >= 0 ? 1 : g_.planes;
    // (in_gpu_order: make_flow_shape's test of f.srcs[j] == j for every j, in its pass over the sources)
    f.every_gpu = group_log_ && k == static_cast<std::size_t>(g_.gpus) && f.n_min == f.n && f.in_gpu_order;
    // Each group of such a flow of at most one packet per source and plane
    // goes to the plane's group log (issue_gpu_reads), none makes a Source: no
    // slots to mark (at 1024 accelerators and 4 planes, 16 KB a step).
    if (!(f.every_gpu && f.n <= static_cast<std::uint32_t>(np))) f.src_id.assign(k * static_cast<std::size_t>(np), kNoSource);
    readers_[static_cast<std::size_t>(f.initiator)].ops.push_back(i);
    issue_gpu_reads(f.initiator);
  } else {
    // Mesh: the requests leave back to back (a header each), the responses follow
    // a link latency and a memory access later.
    Ps& issue = read_issue_[static_cast<std::size_t>(f.initiator)];
    const Ps t0 = std::max(now_, issue);
    issue = t0 + to_ps(static_cast<double>(f.n) * static_cast<double>(g_.H) * f.inv_raw);
    const Ps ready = t0 + to_ps(cfg_.links.latency_ns) + to_ps(cfg_.accelerator.mem_latency_ns);
    add_link_source(g_.direct(f.srcs[0], f.initiator), Source{i, 0, 0, f.src_n[0], 1, ready, true, 0});
  }
}

// ------------------------------------------------------------------ the ISA

// A read response reaches the ISA (header at t_header; `now` is that arrival,
// or the present when it waited in the input port). Returns false, changing
// nothing but the lazily applied frees, if the buffer has no room for it.
// Out of line as one function with its parts inlined (the buffer's admission,
// the group count, the next request): one call per response, and the event
// loop that sends the responses stays small.
inline bool Engine::isa_admit(int plane, int gpu, const Pkt& p, Ps t_header, Ps now) {
  Flow& f = flows_[p.flow];
  Isa& isa = isas_[static_cast<std::size_t>(plane)];
  if (!isa.buffer.admit(now, p.bytes, p.index == f.next_group)) return false;
  isa.ports[static_cast<std::size_t>(gpu)].outstanding -= p.bytes;
  const Ps whole = t_header + (g_.saf ? 0 : to_ps(g_.ser_fine(f, p.bytes)));
  const std::uint32_t i = p.index;
  f.staged[i] += p.bytes;
  // f.arrive(i, whole), inlined
  f.complete[i] = std::max(f.complete[i], whole);
  if (++f.count[i] == f.expected_in_group(i)) group_complete(p.flow, i, plane, now);
  isa_issue(plane, gpu, now);
  return true;
}

bool Engine::isa_admit_out(int plane, int gpu, const Pkt& p, Ps t_header, Ps now) {
  return isa_admit(plane, gpu, p, t_header, now);
}

// Group i of read flow fi is complete at the switch: the ISA reduces it (and
// frees its staged bytes when done), NVLS returns the sum to the issuer.
void Engine::group_complete(FlowId fi, std::uint32_t i, int plane, Ps now) {
  Flow& f = flows_[fi];
  f.advance_next_group();
  Pkt r;
  r.flow = fi;
  r.index = i;
  r.bytes = f.bytes == f.src_bytes[0]
                ? g_.pkt_bytes(f.bytes, i)
                : static_cast<std::uint32_t>(f.bytes * (static_cast<std::uint64_t>(i) + 1) / f.n - f.bytes * i / f.n);
  if (f.kind == FlowKind::IsaRead) {
    Isa& isa = isas_[static_cast<std::size_t>(plane)];
    // The reduction (and, for quantised data, the INQ) unit is one FIFO server per
    // plane, shared with the ISA's Compute steps (requantise) through res_.
    const double plain = static_cast<double>(f.staged[i]) * f.plain_per_byte / static_cast<double>(f.srcs.size());
    Server& red = res_[static_cast<std::size_t>(isa.reduce_res)];  // (rm_.isa_reduce(plane))
    Server& inq = res_[static_cast<std::size_t>(isa.inq_res)];     // (rm_.isa_inq(plane))
    Ps start = std::max({now, red.free, f.complete[i]});
    if (f.codec) start = std::max(start, inq.free);
    Ps done = start;
    if (f.reduce_inv_GBps > 0) {
      done = start + red.carry.round(plain * f.reduce_inv_GBps);
      red.free = done;
      if (f.codec) inq.free = done;
    }
    isa.buffer.free_at(done, f.staged[i]);
    // Blocked responses may now be the group the reducer waits for, or fit once this frees.
    if (!isa.blocked.empty()) arm_isa_wake(plane, now);
    if (f.to_switch) {
      deliver(r, done);
      return;
    }
    const auto oid = static_cast<std::uint32_t>(plane * g_.gpus + s_.buffers[s_.steps[f.step].dsts[0].buffer].node);
    outs_[oid].fifo.push_back(Queued{r, done});
    pump_result_out(oid);
    return;
  }
  // NVLS: the sum crosses the switch to the issuer.
  const auto oid = static_cast<std::uint32_t>(plane * g_.gpus + f.initiator);
  outs_[oid].fifo.push_back(Queued{r, f.complete[i] + to_ps(cfg_.sw.latency_ns)});
  pump_result_out(oid);
}

// Sender::request for an ISA request, its usual case inline: the FIFO's last
// entry (not its head) is ready sooner, so the request is a new entry at the
// back (what request() does then: no merge, nothing moves).
[[gnu::always_inline]] inline void request_isa(Sender& tx, Ps ready, std::uint32_t source) {
  if (tx.requested.size() >= 2 && tx.requested.back().ready < ready)
    tx.requested.push_back(Sender::Requested{ready, source, 1});
  else
    tx.request(ready, source);
}

// Paced regulation: the interval after a request of `bytes` is the time the
// reducer needs for its group, `pace` (a group of full packets, P bytes) scaled
// by bytes / P. (Until 2026-12-05 every request paid a full group's interval:
// scin-fpga-4's 16 waves of 4 bytes at 64 B were spaced 16 ns apart, +7%.)
// (In 128 bits: a full group's interval reaches 2^62 fine units at the slowest
// reducer and largest packet the parameters allow, times up to 2^20 bytes.)
[[gnu::always_inline]] inline Fine paced_gap(Fine pace, std::uint32_t bytes, std::uint32_t P) {
  __extension__ typedef __int128 I128;
  return bytes == P ? pace : static_cast<Fine>(static_cast<I128>(pace) * bytes / P);
}

// Requests leave the ISA while the port's outstanding bytes stay under the cap
// (Little's Law); paced regulation also spaces them at the reduction drain rate.
void Engine::issue_requests(int plane, int gpu, Ps now) {
  IsaPort& port = isas_[static_cast<std::size_t>(plane)].ports[static_cast<std::size_t>(gpu)];
  const std::uint64_t cap = isa_cap_;
  const Ps lat_mem = isa_lat_mem_;
  const auto P = static_cast<std::uint32_t>(g_.P);
  Ps first_ready = kNever;
  const int link = g_.up(gpu, plane);
  Sender& tx = links_[static_cast<std::size_t>(link)].tx;
  // The port's state and each read's on locals while its requests go (a flow
  // starting issues up to the cap at once: 4096 requests per port at 1 MiB).
  std::uint64_t outstanding = port.outstanding;
  const bool fast = fast_paths_;  // (off: every request through Sender::request, sizes by pkt_bytes)
  while (!port.ops.empty()) {
    IsaPort::Op& op = port.ops.front();
    if (op.next >= op.n) {
      port.ops.pop_front();
      continue;
    }
    const std::uint32_t n = op.n, src = op.src_id;
    const std::uint64_t total = op.total;
    const Fine op_pace = op.pace;
    std::uint32_t next = op.next;
    Ps last_issue = port.last_issue;
    bool issued = port.issued, full = false;
    Carry pace = port.pace;
    Fine gap = port.gap;
    while (next < n) {
      const std::uint32_t b = next + 1 < n && fast ? P : g_.pkt_bytes(total, next);  // (g_.pkt_bytes(total, next))
      if (outstanding > 0 && outstanding + b > cap) {
        full = true;
        break;
      }
      Ps t = now;
      if (op_pace > 0 && issued) t = std::max(now, last_issue + pace.add(gap));
      last_issue = t;
      issued = true;
      gap = paced_gap(op_pace, b, P);
      if (logs_on_) [[unlikely]] links_[static_cast<std::size_t>(link)].cursor.take(tx);  // (LogCursor)
      if (fast) request_isa(tx, t + lat_mem, src);
      else tx.request(t + lat_mem, src);
      first_ready = std::min(first_ready, t + lat_mem);
      outstanding += b;
      ++next;
    }
    op.next = next;
    port.last_issue = last_issue;
    port.issued = issued;
    port.pace = pace;
    port.gap = gap;
    if (full) break;
  }
  port.outstanding = outstanding;
  if (first_ready < kNever) wake_link(link, first_ready);
}

// issue_requests after a response freed room at the port, with its usual case
// inline: the oldest read issues one request and its next does not fit (one
// request per response while the window is full). The same steps as the loop
// above; anything else (nothing fits, a read spent, more than one fits) goes
// on in the loop, from the same state. Requests' ready times never decrease
// (pacing only adds), so the loop's wake-up for a later request adds no event
// to the one made here.
inline void Engine::isa_issue(int plane, int gpu, Ps now) {
  if (!fast_paths_) [[unlikely]] {  // (tests: the loop alone)
    issue_requests(plane, gpu, now);
    return;
  }
  IsaPort& port = isas_[static_cast<std::size_t>(plane)].ports[static_cast<std::size_t>(gpu)];
  if (port.ops.empty()) return;
  IsaPort::Op& op = port.ops.front();
  if (op.next < op.n) {
    const std::uint64_t cap = isa_cap_;
    // g_.pkt_bytes(op.total, k): P for every packet but the last (k + 1 < n), without its multiply
    const std::uint32_t P = static_cast<std::uint32_t>(g_.P);
    const std::uint32_t b = op.next + 1 < op.n ? P : g_.pkt_bytes(op.total, op.next);
    if (port.outstanding > 0 && port.outstanding + b > cap) return;
    Ps t = now;
    if (op.pace > 0 && port.issued) t = std::max(now, port.last_issue + port.pace.add(port.gap));
    port.last_issue = t;
    port.issued = true;
    port.gap = paced_gap(op.pace, b, P);
    const int link = g_.up(gpu, plane);
    Sender& tx = links_[static_cast<std::size_t>(link)].tx;
    if (logs_on_) [[unlikely]] links_[static_cast<std::size_t>(link)].cursor.take(tx);  // (LogCursor)
    const Ps ready = t + isa_lat_mem_;
    request_isa(tx, ready, op.src_id);
    port.outstanding += b;
    ++op.next;
    wake_link(link, ready);
    if (op.next < op.n && port.outstanding + (op.next + 1 < op.n ? P : g_.pkt_bytes(op.total, op.next)) > cap)
      return;  // the loop would stop here
  }
  issue_requests(plane, gpu, now);
}

void Engine::arm_isa_wake(int plane, Ps t) {
  Isa& isa = isas_[static_cast<std::size_t>(plane)];
  if (t < isa.wake_at) {
    isa.wake_at = t;
    isa.wake_gen = schedule(t, EvIsaWake, static_cast<std::uint32_t>(plane));
  }
}

void Engine::isa_wake(int plane, std::uint64_t gen) {
  Isa& isa = isas_[static_cast<std::size_t>(plane)];
  if (gen != isa.wake_gen) return;  // superseded
  isa.wake_at = kNever;
  isa.buffer.apply_frees(now_);
  std::vector<std::uint32_t> blocked;
  blocked.swap(isa.blocked);
  for (std::uint32_t id : blocked) {
    links_[id].in.blocked[InputPort::kResponses] = false;
    pump_in(static_cast<int>(id));
  }
  if (!isa.blocked.empty()) arm_isa_wake(plane, isa.buffer.next_free());
}

// ------------------------------------------------------------------ accelerator reads

// Group grp of read flow fi (every_gpu) on `plane`, ready at `ready`: one entry
// in the plane's group log for all its uplinks, each woken as a request would.
void Engine::log_group(FlowId fi, std::uint32_t grp, int plane, Ps ready) {
  const auto gpus = static_cast<std::uint32_t>(g_.gpus);
  GroupLog& log = logs_[static_cast<std::size_t>(plane)];
  if (log.base == 0 && log.entries.empty()) {  // its first entry: the plane's uplinks follow the log from now
    logs_on_ = true;
    for (int a = 0; a < g_.gpus; ++a) {
      LogCursor& c = links_[static_cast<std::size_t>(g_.up(a, plane))].cursor;
      c.log = &log;
      c.slot = static_cast<std::uint16_t>(a);
    }
  }
  log.append(ready, fi, grp, gpus);
  ++group_log_entries_;
  packet_entries_made_ += gpus;
  for (int a = 0; a < g_.gpus; ++a) wake_link(g_.up(a, plane), ready);
}

// An accelerator's read requests (one per packet, or per reduction group of an
// NVLS ld_reduce, fanned out by the switch to every source) leave in program
// order while fewer than a window are outstanding; each response (reduced
// result) that lands frees one (EvReadReturn). The window is the
// bandwidth-delay product of the accelerator's links at the read's rate, so an
// uncontended read runs at full rate; under contention the requests are
// self-clocked by the responses, and a memory answers the requests of all its
// readers in arrival order, so concurrent reads of one source interleave
// packet by packet instead of one whole read after another.
void Engine::issue_gpu_reads(int gpu) {
  Reader& rd = readers_[static_cast<std::size_t>(gpu)];
  const double lat = cfg_.links.latency_ns, lsw = cfg_.sw.latency_ns, mem = cfg_.accelerator.mem_latency_ns;
  const Ps ready = now_ + to_ps(2 * lat + lsw + mem);  // request up, across, down; memory access
  while (!rd.ops.empty()) {
    const FlowId fi = rd.ops.front();
    Flow& f = flows_[fi];
    if (f.next_send >= f.n) {
      rd.ops.pop_front();
      continue;
    }
    const int np = f.plane >= 0 ? 1 : g_.planes;
    const double rtt = 4 * lat + 2 * lsw + mem;
    const double window = std::ceil(np * rtt / g_.ser_ns(f, static_cast<std::uint32_t>(g_.P)));
    if (rd.outstanding >= window) break;
    const std::uint32_t grp = f.next_send++;
    const int pi = f.plane >= 0 ? 0 : static_cast<int>(grp % static_cast<std::uint32_t>(g_.planes));
    const int plane = g_.plane_of(f, grp);
    if (f.every_gpu && f.n - static_cast<std::uint32_t>(pi) <= static_cast<std::uint32_t>(np)) {
      // Every accelerator's only packet on this plane (as a packet entry below would carry it, slot
      // a on accelerator a's uplink): one entry in the plane's log for all uplinks.
      log_group(fi, grp, plane, ready);
      ++rd.outstanding;
      if (f.next_send >= f.n) rd.ops.pop_front();
      continue;
    }
    for (std::size_t j = 0; j < f.srcs.size(); ++j) {
      if (grp >= f.src_n[j]) continue;
      const int link = g_.up(f.srcs[j], plane);
      Sender& tx = links_[static_cast<std::size_t>(link)].tx;
      if (logs_on_) [[unlikely]] links_[static_cast<std::size_t>(link)].cursor.take(tx);  // (LogCursor)
      if (f.src_n[j] - static_cast<std::uint32_t>(pi) <= static_cast<std::uint32_t>(np) && packet_entries_) {
        ++packet_entries_made_;
        // Source j's only packet on this plane (packet grp == pi, < 64): the request carries it, no Source.
        tx.request_packet(ready, fi, static_cast<std::uint16_t>(j), grp);
      } else {
        std::uint32_t& sid = f.src_id[j * static_cast<std::size_t>(np) + static_cast<std::size_t>(pi)];
        if (sid == kNoSource)  // its first request: packets pi, pi + np, ... of source j
          sid = add_source(Source{fi, static_cast<std::uint16_t>(j), static_cast<std::uint32_t>(pi), f.src_n[j],
                                  static_cast<std::uint32_t>(np), 0, true, 0});
        tx.request(ready, sid);
      }
      wake_link(link, ready);
    }
    ++rd.outstanding;
    if (f.next_send >= f.n) rd.ops.pop_front();  // now: its flow may be done and reused before the next call
  }
}

}  // namespace scin::packet
