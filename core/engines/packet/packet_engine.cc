// The packet-level discrete-event engine. See packet_engine.h for the model and
// docs/model.md (section 4) for equations, constants and worked numbers.
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
// Stats::packet_hops the packet serialisations).
#include "engines/packet/packet_engine.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <limits>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "fabric/params.h"
#include "engines/packet/event_queue.h"

namespace scin {
namespace packet {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr std::uint16_t kAllDsts = 0xffff;

// Event targets: a type in the top 3 of the 24 target bits, an id in the rest.
enum EvType : std::uint32_t {
  EvLink = 0,           // an accelerator's link may start its next packet
  EvPipe = 1,           // the head packet on an uplink reaches the switch input port
  EvFlowStart = 2,      // a network step starts injecting
  EvStepDone = 3,       // a step finishes
  EvIsaWake = 4,        // ISA buffer room frees (reduction done)
  EvRoom = 5,           // a full switch output queue loses a packet: its waiters retry in turn
  EvReadReturn = 6,     // a read response (or reduced result) reaches its issuing accelerator
};
constexpr std::uint32_t kTypeShift = 21;
constexpr std::uint32_t kIdMask = (1u << kTypeShift) - 1;
constexpr std::uint32_t target_of(EvType t, std::uint32_t id) { return (t << kTypeShift) | id; }

struct Pkt {
  std::uint32_t flow = 0;    // = the step index
  std::uint32_t index = 0;   // packet index in the flow; for reads, the reduction group
  std::uint32_t bytes = 0;   // payload bytes
  std::uint16_t slot = 0;    // read: source slot; write: destination slot or kAllDsts
};

struct Queued {
  Pkt p;
  double t_ns = 0;  // output queue: ready to leave; pipe / input port: header arrival
};

enum class FlowKind : std::uint8_t { GpuWrite, IsaWrite, IsaRead, GpuRead };

// One network step in flight: the packets of one Write or Read.
struct Flow {
  FlowKind kind = FlowKind::GpuWrite;
  bool active = false;
  int plane = -1;                       // fixed plane, or -1: packet i on plane i % planes
  NodeId initiator = kNoNode;
  std::vector<NodeId> dsts;             // write destinations
  std::vector<NodeId> srcs;             // read sources
  std::vector<std::uint64_t> src_bytes; // read: bytes of each source region
  std::vector<std::uint32_t> src_n;     // read: packets of each source
  std::vector<std::uint32_t> src_id;    // ISA read: source (FIFO of ready times) per slot
  std::uint64_t bytes = 0;              // write: source bytes; read: destination bytes
  std::uint32_t n = 0;                  // packets (write) / groups (read)
  std::uint32_t n_min = 0;              // read: packets of the shortest source
  double inv_raw = 0, gap_ns = 0;       // wire time of a packet: (payload + header) * inv_raw + gap
  double extra_end_ns = 0;              // non-network resources held by the step (HBM)
  std::uint64_t expected = 0, delivered = 0;
  double last_ns = 0;
  bool to_switch = false;               // read result stays in the switch (ISA accumulator)
  // reads
  std::vector<std::uint16_t> count;
  std::vector<double> complete_ns;
  std::vector<std::uint32_t> staged;
  std::uint32_t next_group = 0;         // lowest group not yet complete (escape admission)
  double plain_per_byte = 0;            // plain (unquantised) bytes reduced per wire byte, all sources
  double reduce_inv_GBps = 0;           // ns per plain byte of the reducing unit(s); 0 = free
  bool codec = false;                   // quantised data: the INQ unit works too
  double pace_ns = 0;                   // paced regulation: request interval per port
  // ISA write
  std::uint32_t next_send = 0;
  bool waiting = false;
};

// Packets a sending accelerator offers to a link, lazily (no packet exists before it is sent).
struct Source {
  std::uint32_t flow = 0;
  std::uint16_t slot = 0;
  std::uint32_t next = 0, end = 0, stride = 1;
  double ready_ns = 0;       // every packet ready from this time (requested reads: see Link::resp)
  bool response = false;     // read responses (vs the accelerator's own writes)
  std::uint64_t total = 0;   // bytes of this source (read: its region; write: the step's), set by add_source_
};

enum class FeederKind : std::uint8_t { InPort, IsaWrite, ResultOut };
struct Feeder {
  FeederKind kind;
  std::uint32_t id;
};

// A packet in a switch output queue. Output ports are FIFO servers that make
// no decision, so each packet's start on the link is computed when it enters
// (no event per packet); the queue depth is reconstructed lazily in time order.
struct OutEntry {
  double ready_ns;  // enters the port buffer (after crossing the switch)
  double start_ns;  // starts serialising on the link (leaves the buffer)
  std::uint32_t wire;
};

struct Link {
  enum Kind : std::uint8_t { Up, Down, Direct } kind = Up;
  int gpu = 0, other = 0;  // other: plane (Up/Down) or peer (Direct)
  double lat_ns = 0;
  double busy_until = 0;
  double next_wake = kInf;
  // Up / Direct: the sender's sources, served round-robin.
  std::vector<std::uint32_t> sources;
  std::size_t rr = 0;
  struct Requested {
    double ready_ns;
    std::uint32_t source;
  };
  Ring<Requested> resp;  // ISA read responses requested from this accelerator, in request order
  bool credit_blocked = false;
  bool last_read = false;  // class served last (round-robin between responses and writes)
  double blocked_since = 0;
  // Up: packets on the wire (header arrival times) and the switch input port.
  // The input port keeps one FIFO per traffic class (0: writes, 1: read
  // responses) in one shared buffer: a write waiting for a full output queue
  // does not hold up the responses behind it (and vice versa), but both take
  // the same credits.
  Ring<Queued> pipe;
  Ring<Queued> in[2];
  std::uint64_t credits_used[2] = {0, 0};  // per class: bytes on the wire + in the input port
  std::uint64_t in_bytes = 0, in_peak = 0;
  bool in_blocked[2] = {false, false};
  // Down: the switch output queue feeding this link. Entries [0, arrived) are in
  // the buffer at the last drain time, the rest still crossing the switch.
  Ring<OutEntry> out;
  std::size_t arrived = 0;
  double ta_next = kInf;  // ready_ns of out[arrived] (next arrival), kInf if none: drain_out's
  double td_next = kInf;  // start_ns of out.front() if arrived > 0 (next departure); cached
  std::uint64_t q_bytes = 0, q_peak = 0;
  Ring<Feeder> waiters;    // feeders blocked on this full queue, served in turn (round-robin)
  double room_at = kInf;   // pending EvRoom
  std::uint64_t pushes = 0;
  // statistics
  std::uint64_t payload = 0, wire = 0, packets = 0;
  double busy_ns = 0, stall_ns = 0;
  std::vector<double> timeline;
};

struct IsaPort {
  std::uint64_t outstanding = 0;
  // One read flow's requests to this accelerator, with what issuing them needs
  // copied in (the hot loop touches no Flow).
  struct Op {
    std::uint32_t next;     // next packet to request
    std::uint32_t n;        // packets of this source
    std::uint32_t src_id;   // the Source the responses come from
    std::uint64_t total;    // bytes of this source
    double pace_ns;         // paced regulation: request interval (0: none)
  };
  Ring<Op> ops;  // read flows with requests left to issue, oldest first
  double last_issue = -kInf;
};

struct Isa {
  std::uint64_t staged = 0, hwm = 0;
  Ring<std::pair<double, std::uint32_t>> frees;  // (reduction done, bytes): FIFO in time
  double wake_at = kInf;
  std::vector<std::uint32_t> blocked;            // input ports waiting for buffer room
  std::uint64_t normal_inflight = 0;             // responses on the wire / in input ports (event path)
  std::vector<IsaPort> ports;                    // per accelerator
};

// Reduced results (NVLS ld_reduce, ISA reads into accelerators) waiting to enter an output queue.
struct ResultOut {
  Ring<Queued> fifo;
  bool waiting = false;
};

class Engine {
 public:
  Engine(const Config& cfg, const Schedule& s, const RunContext& ctx)
      : cfg_(cfg), s_(s), ctx_(ctx), rm_(resource_map(s)) {}
  Run run();

 private:
  // topology
  int up(int g, int p) const { return g * planes_ + p; }
  int down(int g, int p) const { return gpus_ * planes_ + g * planes_ + p; }
  int direct(int a, int b) const { return a * gpus_ + b; }
  std::uint32_t pkt_bytes(std::uint64_t total, std::uint32_t i) const {
    const std::uint64_t off = static_cast<std::uint64_t>(i) * P_;
    return static_cast<std::uint32_t>(std::min<std::uint64_t>(P_, total - off));
  }
  std::uint32_t npkts(std::uint64_t total) const {
    const std::uint64_t n = (total + P_ - 1) / P_;
    if (n > 0x7fffffffu)
      throw Error(fmt::format("packet.payload_bytes: {} bytes in packets of {} bytes is more than 2^31 packets; "
                              "raise packet.payload_bytes", total, P_));
    return static_cast<std::uint32_t>(n);
  }
  double ser_ns(const Flow& f, std::uint32_t bytes) const {
    return static_cast<double>(bytes + H_) * f.inv_raw + f.gap_ns;
  }
  std::uint32_t result_bytes(const Flow& f, std::uint32_t i) const {
    if (f.bytes == f.src_bytes[0]) return pkt_bytes(f.bytes, i);
    const auto lo = f.bytes * i / f.n, hi = f.bytes * (static_cast<std::uint64_t>(i) + 1) / f.n;
    return static_cast<std::uint32_t>(hi - lo);
  }
  std::uint16_t expected_in_group(const Flow& f, std::uint32_t i) const {
    if (i < f.n_min) return static_cast<std::uint16_t>(f.srcs.size());
    std::uint16_t k = 0;
    for (auto n : f.src_n) k += n > i ? 1 : 0;
    return k;
  }

  void build_links();
  void add_source_(Source src) {
    const Flow& f = flows_[src.flow];
    src.total = src.response ? f.src_bytes[src.slot] : f.bytes;
    sources_.push_back(src);
  }
  void schedule(double t, EvType type, std::uint32_t id) { q_.push(t, target_of(type, id)); }
  void wake_link(int id, double t) {
    Link& l = links_[static_cast<std::size_t>(id)];
    if (t < l.next_wake) {
      l.next_wake = t;
      schedule(t, EvLink, static_cast<std::uint32_t>(id));
    }
  }
  void record_busy(Link& l, double start, double ser) {
    l.busy_ns += ser;
    ++l.packets;
    ++stats_.packet_hops;
    if (samples_ != 0) record_timeline(l, start, ser);
  }
  void record_timeline(Link& l, double start, double ser);
  void rebin();

  // steps and flows
  bool is_network(const Step& st) const;
  void start_step(StepId i, double t);
  void step_done(StepId i);
  void setup_flow(StepId i, double t);
  void flow_start(StepId i);
  void finish_flow(StepId i, double t);
  void deliver(const Pkt& p, double t);

  // links, ports, units
  void link_event(int id);
  void try_send(int id);
  void pipe_event(int id);
  bool forward_in(int id, int cls);
  bool is_response(const Pkt& p) const {
    const FlowKind k = flows_[p.flow].kind;
    return k == FlowKind::IsaRead || k == FlowKind::GpuRead;
  }
  void pump_in(int id);
  bool enqueue_out(int down_id, const Queued& qd, const Feeder& who);
  void push_out(int down_id, const Queued& qd);
  // Replays arrivals into and departures from an output buffer up to time t, in
  // time order (departures first at equal times), tracking depth and its peak.
  void drain_out(Link& d, double t) {
    // ta_next / td_next cache the two candidates, so the usual call (nothing to
    // replay) touches no queue entry.
    for (;;) {
      const double ta = d.ta_next, td = d.td_next;
      if (std::min(ta, td) > t || (ta == kInf && td == kInf)) break;
      if (td <= ta) {
        d.q_bytes -= d.out.front().wire;
        d.out.pop_front();
        --d.arrived;
      } else {
        d.q_bytes += d.out[d.arrived].wire;
        d.q_peak = std::max(d.q_peak, d.q_bytes);
        ++d.arrived;
        d.ta_next = d.arrived < d.out.size() ? d.out[d.arrived].ready_ns : kInf;
      }
      d.td_next = d.arrived > 0 ? d.out.front().start_ns : kInf;
    }
  }
  // Room for `wire` bytes in an output queue. A queue with blocked feeders is
  // granted to them in turn: others may not take its room meanwhile.
  bool room_in(int down_id, std::uint64_t wire) {
    Link& d = links_[static_cast<std::size_t>(down_id)];
    if (!d.waiters.empty() && down_id != serving_) return false;
    drain_out(d, now_);
    return d.q_bytes + wire <= port_cap_;
  }
  void wait_on(int down_id, const Feeder& who);
  void room_event(int down_id);
  void retry(const Feeder& w);
  void pump_isa_write(StepId f);
  void pump_result_out(std::uint32_t id);
  void group_complete(StepId fi, std::uint32_t i, int plane);
  void issue_requests(int plane, int gpu);
  void issue_gpu_reads(int gpu);
  // A memory answers requests in the order they reach it: keep a link's request
  // FIFO ordered by ready time (stable; requests almost always arrive in order,
  // e.g. paced ISA requests issued ahead of time vs an accelerator's reads).
  static void push_request(Link& l, const Link::Requested& r) {
    l.resp.push_back(r);
    for (std::size_t k = l.resp.size() - 1; k > 0 && l.resp[k - 1].ready_ns > r.ready_ns; --k) {
      l.resp[k] = l.resp[k - 1];
      l.resp[k - 1] = r;
    }
  }
  void read_return(int gpu) {
    --readers_[static_cast<std::size_t>(gpu)].outstanding;
    issue_gpu_reads(gpu);
  }
  void isa_apply_frees(Isa& isa);
  bool isa_admit(int plane, int gpu, const Pkt& p, double t_header);
  void isa_wake(int plane);
  void kick_source_link(int id) { wake_link(id, now_); }

  // Every 4096 events (well under a millisecond): stop if asked, report progress now and then.
  void poll() {
    ctx_.check();
    if ((stats_.events & 0xffff) == 0 && ctx_.progress)
      ctx_.report(static_cast<double>(steps_done_) / static_cast<double>(s_.steps.size()));
  }
  void breakdown(Run& out) const;
  nlohmann::json extra_json(double total_ns) const;

  const Config& cfg_;
  const Schedule& s_;
  const RunContext& ctx_;
  const ResourceMap rm_;
  int gpus_ = 0, planes_ = 1;
  bool star_ = true;
  std::uint64_t P_ = 256, H_ = 16, port_cap_ = 0;
  bool saf_ = false;
  std::uint64_t isa_cap_ = 0, isa_buf_ = 0;  // switch.isa.max_outstanding_bytes, buffer_bytes
  double isa_lat_ = 0, isa_mem_ = 0;          // links.latency_ns, accelerator.mem_latency_ns
  double now_ = 0;
  EventQueue q_;
  int serving_ = -1;  // output queue whose waiter is being retried (it may use that queue's room)
  std::vector<Link> links_;
  std::vector<Source> sources_;
  std::vector<Flow> flows_;
  std::vector<Isa> isas_;
  std::vector<ResultOut> outs_;
  std::vector<double> read_issue_ns_;  // per accelerator: when its read requests so far have left (mesh)
  // Star: an accelerator's reads in program order and its requests outstanding.
  struct Reader {
    Ring<StepId> ops;
    std::uint32_t outstanding = 0;
  };
  std::vector<Reader> readers_;
  // steps
  std::vector<StepCost> costs_;
  std::vector<std::vector<StepId>> succ_;
  std::vector<int> pending_;
  std::vector<double> ready_;
  std::vector<StepTiming> timing_;
  std::vector<char> done_;
  std::vector<double> res_free_;
  std::size_t steps_done_ = 0;
  // timeline
  int samples_ = 0;
  double bin_ns_ = 1.0;
  Stats stats_;
};

// ------------------------------------------------------------------ set-up

void Engine::build_links() {
  if (star_) {
    links_.resize(static_cast<std::size_t>(2 * gpus_ * planes_));
    for (int g = 0; g < gpus_; ++g)
      for (int p = 0; p < planes_; ++p) {
        Link& u = links_[static_cast<std::size_t>(up(g, p))];
        u.kind = Link::Up;
        u.gpu = g;
        u.other = p;
        Link& d = links_[static_cast<std::size_t>(down(g, p))];
        d.kind = Link::Down;
        d.gpu = g;
        d.other = p;
      }
  } else {
    links_.resize(static_cast<std::size_t>(gpus_ * gpus_));
    for (int a = 0; a < gpus_; ++a)
      for (int b = 0; b < gpus_; ++b) {
        Link& l = links_[static_cast<std::size_t>(direct(a, b))];
        l.kind = Link::Direct;
        l.gpu = a;
        l.other = b;
      }
  }
  for (auto& l : links_) {
    l.lat_ns = cfg_.links.latency_ns;
    if (samples_ > 0) l.timeline.assign(static_cast<std::size_t>(samples_), 0.0);
  }
}

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

void Engine::start_step(StepId i, double t) {
  timing_[i].start_ns = t;
  const Step& st = s_.steps[i];
  const StepCost& c = costs_[i];
  if (!is_network(st)) {
    // As the analytic engine charges it: fixed, resource occupancy, latency.
    double start = t + c.fixed_ns;
    for (const auto& u : c.uses) start = std::max(start, res_free_[static_cast<std::size_t>(u.resource)]);
    double dur = 0;
    for (const auto& u : c.uses) {
      const double d = u.amount_bytes / u.rate_GBps;
      dur = std::max(dur, d);
      res_free_[static_cast<std::size_t>(u.resource)] = start + d;
    }
    schedule(start + dur + c.latency_total_ns(), EvStepDone, i);
    return;
  }
  setup_flow(i, t);
}

void Engine::setup_flow(StepId i, double t) {
  const Step& st = s_.steps[i];
  const StepCost& c = costs_[i];
  Flow& f = flows_[i];
  f = Flow{};
  f.active = true;
  f.initiator = st.initiator;
  const bool from_switch = s_.is_switch(st.initiator);
  const double factor = transfer_factor(cfg_, s_, st);
  if (st.kind == StepKind::Write) {
    f.kind = from_switch ? FlowKind::IsaWrite : FlowKind::GpuWrite;
    f.bytes = region_bytes(s_, st.srcs[0]);
    f.n = npkts(f.bytes);
    for (const auto& d : st.dsts) f.dsts.push_back(s_.buffers[d.buffer].node);
  } else {
    f.kind = from_switch ? FlowKind::IsaRead : FlowKind::GpuRead;
    const Region& dst = st.dsts[0];
    f.bytes = region_bytes(s_, dst);
    f.to_switch = s_.is_switch(s_.buffers[dst.buffer].node);
    f.n_min = std::numeric_limits<std::uint32_t>::max();
    double plain = 0, wire = 0;
    bool codec = is_codec(s_.buffers[dst.buffer].format);
    for (const auto& r : st.srcs) {
      f.srcs.push_back(s_.buffers[r.buffer].node);
      const std::uint64_t b = region_bytes(s_, r);
      f.src_bytes.push_back(b);
      f.src_n.push_back(npkts(b));
      f.n = std::max(f.n, f.src_n.back());
      f.n_min = std::min(f.n_min, f.src_n.back());
      plain += plain_bytes(s_, r);
      wire += static_cast<double>(b);
      codec |= is_codec(s_.buffers[r.buffer].format);
      if (s_.is_switch(f.srcs.back()))
        throw Error(fmt::format("packet engine: step {} ({}) reads a switch-resident buffer; not modelled",
                                i, st.label));
    }
    f.plain_per_byte = wire > 0 ? plain / wire * static_cast<double>(st.srcs.size()) : 0;
    if (from_switch && st.op == DataOp::Reduce) {
      f.reduce_inv_GBps = isa_reduce_ns_per_byte(cfg_, codec);
      f.codec = codec;
    }
    if (!star_ && st.srcs.size() > 1)
      throw Error(fmt::format("packet engine: step {} ({}) sums several remote sources on a switchless mesh",
                              i, st.label));
  }
  // The plane a fixed-plane transfer crosses.
  if (star_) {
    if (from_switch) f.plane = st.initiator - gpus_;
    else if (st.via >= gpus_) f.plane = st.via - gpus_;
    else f.plane = planes_ == 1 ? 0 : -1;
  }
  const double raw = port_raw_GBps(cfg_, s_);
  const double payload_GBps = port_payload_GBps(cfg_, s_, factor);
  f.inv_raw = 1.0 / raw;
  f.gap_ns = std::max(0.0, static_cast<double>(P_) / payload_GBps - static_cast<double>(P_ + H_) / raw);
  // Resources the packets do not model (accelerator HBM for a fused receive-reduce).
  double start = t + c.fixed_ns;
  double extra = start;
  for (const auto& u : c.uses) {
    if (is_port(u.kind)) continue;
    if (f.kind == FlowKind::IsaRead) continue;  // the ISA reducer is modelled per packet
    const auto r = static_cast<std::size_t>(u.resource);
    const double s0 = std::max(start, res_free_[r]);
    res_free_[r] = s0 + u.amount_bytes / u.rate_GBps;
    extra = std::max(extra, res_free_[r]);
  }
  f.extra_end_ns = extra;
  // The ISA issues its first requests one operation latency after it is triggered.
  if (f.kind == FlowKind::IsaRead) start += cfg_.sw.isa.op_latency_ns;
  schedule(start, EvFlowStart, i);
}

void Engine::flow_start(StepId i) {
  Flow& f = flows_[i];
  const double mem = cfg_.accelerator.mem_latency_ns;
  const double lat = cfg_.links.latency_ns;
  auto add_source = [&](int link, Source src) {
    if (src.next >= src.end) return;
    add_source_(std::move(src));
    links_[static_cast<std::size_t>(link)].sources.push_back(static_cast<std::uint32_t>(sources_.size() - 1));
    kick_source_link(link);
  };
  switch (f.kind) {
    case FlowKind::GpuWrite: {
      const int g = f.initiator;
      if (star_) {
        std::uint64_t gpu_dsts = 0;
        for (NodeId d : f.dsts) gpu_dsts += s_.is_switch(d) ? 0 : 1;
        f.expected = static_cast<std::uint64_t>(f.n) * f.dsts.size();
        (void)gpu_dsts;
        const std::uint16_t slot = f.dsts.size() > 1 ? kAllDsts : 0;
        if (f.plane >= 0) {
          add_source(up(g, f.plane), Source{i, slot, 0, f.n, 1, now_, false});
        } else {
          for (int p = 0; p < planes_; ++p)
            add_source(up(g, p), Source{i, slot, static_cast<std::uint32_t>(p), f.n,
                                        static_cast<std::uint32_t>(planes_), now_, false});
        }
      } else {
        for (std::size_t k = 0; k < f.dsts.size(); ++k) {
          if (f.dsts[k] == g) continue;
          f.expected += f.n;
          add_source(direct(g, f.dsts[k]), Source{i, static_cast<std::uint16_t>(k), 0, f.n, 1, now_, false});
        }
      }
      break;
    }
    case FlowKind::IsaWrite: {
      for (NodeId d : f.dsts)
        if (s_.is_switch(d))
          throw Error(fmt::format("packet engine: step {} ({}) writes from a switch to a switch; not modelled",
                                  i, s_.steps[i].label));
      f.expected = static_cast<std::uint64_t>(f.n) * f.dsts.size();
      break;
    }
    case FlowKind::IsaRead:
    case FlowKind::GpuRead: {
      const std::size_t k = f.srcs.size();
      f.expected = f.n;
      if (k > 1 || f.kind == FlowKind::IsaRead) {
        f.count.assign(f.n, 0);
        f.complete_ns.assign(f.n, 0.0);
        f.staged.assign(f.n, 0);
      }
      if (f.kind == FlowKind::IsaRead) {
        const double group_plain = static_cast<double>(P_) * f.plain_per_byte;
        f.pace_ns = cfg_.sw.isa.regulation == Regulation::Paced ? group_plain * f.reduce_inv_GBps : 0.0;
        for (std::size_t j = 0; j < k; ++j) {
          Source src{i, static_cast<std::uint16_t>(j), 0, f.src_n[j], 1, 0, true};
          if (src.end == 0) {
            f.src_id.push_back(0);
            continue;
          }
          add_source_(std::move(src));
          f.src_id.push_back(static_cast<std::uint32_t>(sources_.size() - 1));
        }
        Isa& isa = isas_[static_cast<std::size_t>(f.plane)];
        for (std::size_t j = 0; j < k; ++j) {
          if (f.src_n[j] == 0) continue;
          isa.ports[static_cast<std::size_t>(f.srcs[j])].ops.push_back(
              IsaPort::Op{0, f.src_n[j], f.src_id[j], f.src_bytes[j], f.pace_ns});
          issue_requests(f.plane, f.srcs[j]);
        }
      } else if (star_) {
        // An accelerator issues its reads in program order, one request per packet
        // (group), keeping at most a window of requests outstanding (see
        // issue_gpu_reads); the responses wait in each source link's request FIFO.
        const int np = f.plane >= 0 ? 1 : planes_;
        f.src_id.assign(k * static_cast<std::size_t>(np), 0);
        for (std::size_t j = 0; j < k; ++j)
          for (int p = 0; p < np; ++p) {
            Source src{i, static_cast<std::uint16_t>(j), static_cast<std::uint32_t>(p), f.src_n[j],
                       static_cast<std::uint32_t>(np), 0, true};
            add_source_(src);
            f.src_id[j * static_cast<std::size_t>(np) + static_cast<std::size_t>(p)] =
                static_cast<std::uint32_t>(sources_.size() - 1);
          }
        readers_[static_cast<std::size_t>(f.initiator)].ops.push_back(i);
        issue_gpu_reads(f.initiator);
      } else {
        double& issue = read_issue_ns_[static_cast<std::size_t>(f.initiator)];
        const double t0 = std::max(now_, issue);
        issue = t0 + static_cast<double>(f.n) * static_cast<double>(H_) * f.inv_raw;
        const double ready = t0 + lat + mem;
        add_source(direct(f.srcs[0], f.initiator), Source{i, 0, 0, f.src_n[0], 1, ready, true});
      }
      break;
    }
  }
  if (f.expected == 0 || f.n == 0) {
    finish_flow(i, now_);
    return;
  }
  if (f.kind == FlowKind::IsaWrite) pump_isa_write(i);
}

void Engine::finish_flow(StepId i, double t) {
  Flow& f = flows_[i];
  schedule(std::max(t, f.extra_end_ns), EvStepDone, i);
}

void Engine::step_done(StepId i) {
  if (done_[i]) return;
  done_[i] = 1;
  ++steps_done_;
  timing_[i].finish_ns = now_;
  Flow& f = flows_[i];
  if (f.active) {
    f.active = false;
    f.count = {};
    f.complete_ns = {};
    f.staged = {};
  }
  for (StepId nx : succ_[i]) {
    ready_[nx] = std::max(ready_[nx], now_);
    if (--pending_[nx] == 0) start_step(nx, ready_[nx]);
  }
}

void Engine::deliver(const Pkt& p, double t) {
  Flow& f = flows_[p.flow];
  if (f.kind == FlowKind::GpuRead && star_) schedule(t, EvReadReturn, static_cast<std::uint32_t>(f.initiator));
  f.last_ns = std::max(f.last_ns, t);
  if (++f.delivered == f.expected) finish_flow(p.flow, f.last_ns);
}

// ------------------------------------------------------------------ links

void Engine::record_timeline(Link& l, double start, double ser) {
  while (start >= bin_ns_ * samples_) rebin();
  l.timeline[static_cast<std::size_t>(start / bin_ns_)] += ser;
}

void Engine::rebin() {
  for (auto& l : links_) {
    for (int k = 0; k < samples_ / 2; ++k)
      l.timeline[static_cast<std::size_t>(k)] = l.timeline[static_cast<std::size_t>(2 * k)] +
                                                l.timeline[static_cast<std::size_t>(2 * k + 1)];
    if (samples_ % 2) l.timeline[static_cast<std::size_t>(samples_ / 2)] = l.timeline[static_cast<std::size_t>(samples_ - 1)];
    for (int k = (samples_ + 1) / 2; k < samples_; ++k) l.timeline[static_cast<std::size_t>(k)] = 0;
  }
  bin_ns_ *= 2;
}

void Engine::link_event(int id) {
  Link& l = links_[static_cast<std::size_t>(id)];
  if (now_ != l.next_wake) {  // stale: superseded by an earlier wake that already ran
    ++stats_.stale_events;
    return;
  }
  l.next_wake = kInf;
  try_send(id);  // output ports (Down) have no events: see enqueue_out
}

// An accelerator's link: pick the next ready packet among its sources (round-robin).
void Engine::try_send(int id) {
  Link& l = links_[static_cast<std::size_t>(id)];
  if (l.busy_until > now_) {
    wake_link(id, l.busy_until);
    return;
  }
  const std::size_t n = l.sources.size();
  // Two traffic classes share the link round-robin (as virtual channels do):
  // read responses, served oldest request first (a memory answers in arrival
  // order), and the accelerator's own writes, served round-robin.
  if (n == 0 && l.resp.empty()) return;
  double earliest = kInf, best = kInf;
  std::size_t pick_read = n, pick_write = n;
  for (std::size_t k = 0; k < n; ++k) {
    std::size_t idx = l.rr + k;
    if (idx >= n) idx -= n;
    const Source& src = sources_[l.sources[idx]];
    const double r = src.ready_ns;
    if (r <= now_) {
      if (src.response) {
        if (r < best) {
          best = r;
          pick_read = idx;
        }
      } else if (pick_write == n) {
        pick_write = idx;
      }
    } else {
      earliest = std::min(earliest, r);
    }
  }
  // ISA read responses: one FIFO per link in request order, so its head is the oldest.
  bool ring_read = false;
  if (!l.resp.empty()) {
    const double r = l.resp.front().ready_ns;
    if (r <= now_) {
      if (r < best) {
        best = r;
        ring_read = true;
      }
    } else {
      earliest = std::min(earliest, r);
    }
  }
  const bool have_read = ring_read || pick_read < n, have_write = pick_write < n;
  if (!have_read && !have_write) {
    if (earliest < kInf) wake_link(id, earliest);
    return;
  }
  const std::uint32_t read_sid = !have_read ? 0 : ring_read ? l.resp.front().source : l.sources[pick_read];
  const std::uint32_t write_sid = have_write ? l.sources[pick_write] : 0;
  auto bytes_of = [&](std::uint32_t sid) {
    const Source& x = sources_[sid];
    return pkt_bytes(x.total, x.next);
  };
  // Each class has its own credits (virtual channels): a class whose share of
  // the input port is full waits, the other one may still go.
  bool read_ok = have_read, write_ok = have_write;
  const std::uint32_t read_bytes = have_read ? bytes_of(read_sid) : 0;
  const std::uint32_t write_bytes = have_write ? bytes_of(write_sid) : 0;
  if (l.kind == Link::Up) {
    read_ok = read_ok && l.credits_used[1] + read_bytes + H_ <= port_cap_;
    write_ok = write_ok && l.credits_used[0] + write_bytes + H_ <= port_cap_;
    if (!read_ok && !write_ok) {  // no credit: the switch input port is full
      if (!l.credit_blocked) {
        l.credit_blocked = true;
        l.blocked_since = now_;
      }
      if (earliest < kInf) wake_link(id, earliest);
      return;
    }
    if (l.credit_blocked) {
      l.credit_blocked = false;
      l.stall_ns += now_ - l.blocked_since;
    }
  }
  const bool use_read = read_ok && (!write_ok || !l.last_read);
  const bool from_ring = use_read && ring_read;
  const std::size_t pick = from_ring ? n : use_read ? pick_read : pick_write;
  const std::uint32_t sid = use_read ? read_sid : write_sid;
  Source& src = sources_[sid];
  Flow& f = flows_[src.flow];
  Pkt p;
  p.flow = src.flow;
  p.index = src.next;
  p.slot = src.slot;
  p.bytes = use_read ? read_bytes : write_bytes;
  const std::uint64_t wire = p.bytes + H_;
  l.last_read = use_read;
  src.next += src.stride;
  if (from_ring) {
    l.resp.pop_front();
    // The request FIFOs are long (a window of requests per port) and many links
    // interleave: fetch ahead of the hardware prefetcher.
    if (l.resp.size() > 16) __builtin_prefetch(&l.resp[16]);
  } else if (src.next >= src.end) {
    l.sources.erase(l.sources.begin() + static_cast<std::ptrdiff_t>(pick));
    l.rr = l.sources.empty() ? 0 : pick % l.sources.size();
  } else {
    l.rr = (pick + 1) % n;
  }
  ++stats_.packets;
  const double ser = ser_ns(f, p.bytes);
  l.busy_until = now_ + ser;
  l.payload += p.bytes;
  l.wire += wire;
  record_busy(l, now_, ser);
  wake_link(id, l.busy_until);
  if (l.kind == Link::Up) {
    const double arrive = now_ + l.lat_ns + (saf_ ? ser : 0.0);
    if (f.kind == FlowKind::IsaRead) {
      // Fast path, exact: while no response to this ISA waits anywhere, arrivals at
      // the ISA happen in send order (every uplink has the same latency), so the
      // arrival can be processed now, at its own future time, without an event.
      // (Not for quantised reads: the INQ unit is also used by Compute steps,
      // which must see reductions in true time order.)
      Isa& isa = isas_[static_cast<std::size_t>(l.other)];
      if (f.to_switch && !f.codec && l.pipe.empty() && l.in[1].empty() && isa.blocked.empty() && isa.normal_inflight == 0) {
        const double saved = now_;
        now_ = arrive;
        const bool ok = isa_admit(l.other, l.gpu, p, arrive);
        now_ = saved;
        if (ok) return;  // never occupied the input port
      }
      ++isa.normal_inflight;
    }
    l.credits_used[use_read ? 1 : 0] += wire;
    const bool was_empty = l.pipe.empty();
    l.pipe.push_back(Queued{p, arrive});
    if (was_empty) schedule(arrive, EvPipe, static_cast<std::uint32_t>(id));
  } else {
    deliver(p, now_ + ser + l.lat_ns);  // mesh: straight into the peer's memory
  }
}

void Engine::pipe_event(int id) {
  Link& l = links_[static_cast<std::size_t>(id)];
  const Queued h = l.pipe.front();
  l.pipe.pop_front();
  if (!l.pipe.empty()) schedule(l.pipe.front().t_ns, EvPipe, static_cast<std::uint32_t>(id));
  const int c = is_response(h.p) ? 1 : 0;
  l.in[c].push_back(h);
  l.in_bytes += h.p.bytes + H_;
  l.in_peak = std::max(l.in_peak, l.in_bytes);
  if (!l.in_blocked[c]) pump_in(id);
}

void Engine::pump_in(int id) {
  Link& l = links_[static_cast<std::size_t>(id)];
  bool moved = false;
  for (int c = 0; c < 2; ++c)
    while (!l.in_blocked[c] && !l.in[c].empty()) {
      if (!forward_in(id, c)) break;
      moved = true;
    }
  if (moved && l.credit_blocked) try_send(id);
}

// A packet enters a switch output queue: its start on the link follows from the
// FIFO order (no decision is left), so it is scheduled now, and so is its delivery.
bool Engine::enqueue_out(int down_id, const Queued& qd, const Feeder& who) {
  if (!room_in(down_id, qd.p.bytes + H_)) {
    wait_on(down_id, who);
    return false;
  }
  push_out(down_id, qd);
  return true;
}

// Enqueues a packet whose room has just been checked.
void Engine::push_out(int down_id, const Queued& qd) {
  const std::uint64_t wire = qd.p.bytes + H_;
  Link& d = links_[static_cast<std::size_t>(down_id)];
  const double start = std::max(qd.t_ns, d.busy_until);
  const double ser = ser_ns(flows_[qd.p.flow], qd.p.bytes);
  d.busy_until = start + ser;
  ++d.pushes;
  d.out.push_back(OutEntry{qd.t_ns, start, static_cast<std::uint32_t>(wire)});
  if (d.arrived + 1 == d.out.size()) d.ta_next = qd.t_ns;
  d.payload += qd.p.bytes;
  d.wire += wire;
  record_busy(d, start, ser);
  deliver(qd.p, start + ser + d.lat_ns);
}

// A blocked feeder joins the queue's waiters; when the queue next loses a packet
// to its link the waiters retry in arrival order (a round-robin arbiter: one
// that is served and blocks again goes to the back).
void Engine::wait_on(int down_id, const Feeder& who) {
  Link& d = links_[static_cast<std::size_t>(down_id)];
  d.waiters.push_back(who);
  const double t = d.arrived > 0 ? d.td_next : now_;
  if (t < d.room_at) {
    d.room_at = t;
    schedule(t, EvRoom, static_cast<std::uint32_t>(down_id));
  }
}

void Engine::room_event(int down_id) {
  Link& d = links_[static_cast<std::size_t>(down_id)];
  if (now_ != d.room_at) return;  // stale
  d.room_at = kInf;
  // Waiters retry in order until one of them takes the room; the others keep
  // their place, so the next room goes to the next one (round-robin).
  for (std::size_t n = d.waiters.size(); n > 0 && !d.waiters.empty(); --n) {
    const Feeder w = d.waiters.front();
    d.waiters.pop_front();
    const std::uint64_t before = d.pushes;
    serving_ = down_id;
    retry(w);
    serving_ = -1;
    if (d.pushes != before) break;
  }
  if (!d.waiters.empty()) {
    drain_out(d, now_);
    const double t = d.arrived > 0 ? d.td_next : now_;
    if (t < d.room_at) {
      d.room_at = t;
      schedule(t, EvRoom, static_cast<std::uint32_t>(down_id));
    }
  }
}

void Engine::retry(const Feeder& w) {
  switch (w.kind) {
    case FeederKind::InPort:
      links_[w.id >> 1].in_blocked[w.id & 1] = false;
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

// The head packet of a switch input port goes where its flow says. Returns false if it must wait.
bool Engine::forward_in(int id, int cls) {
  Link& l = links_[static_cast<std::size_t>(id)];
  const Queued h = l.in[cls].front();
  const Pkt& p = h.p;
  Flow& f = flows_[p.flow];
  const int plane = l.other;
  const std::uint64_t wire = p.bytes + H_;
  const double lsw = cfg_.sw.latency_ns;
  const Feeder me{FeederKind::InPort, static_cast<std::uint32_t>(2 * id + cls)};
  switch (f.kind) {
    case FlowKind::GpuWrite: {
      // All destination queues must have room (a multicast waits for its fullest port).
      const std::size_t lo = p.slot == kAllDsts ? 0 : p.slot;
      const std::size_t hi = p.slot == kAllDsts ? f.dsts.size() : p.slot + 1u;
      for (std::size_t k = lo; k < hi; ++k) {
        const NodeId d = f.dsts[k];
        if (s_.is_switch(d)) continue;
        if (!room_in(down(d, plane), wire)) {
          l.in_blocked[cls] = true;
          wait_on(down(d, plane), me);
          return false;
        }
      }
      for (std::size_t k = lo; k < hi; ++k) {
        const NodeId d = f.dsts[k];
        if (s_.is_switch(d)) {
          deliver(p, now_);
          continue;
        }
        push_out(down(d, plane), Queued{p, now_ + lsw});
      }
      break;
    }
    case FlowKind::GpuRead: {
      if (f.srcs.size() == 1) {  // a plain remote read: the response crosses to the reader
        if (!enqueue_out(down(f.initiator, plane), Queued{p, now_ + lsw}, me)) {
          l.in_blocked[cls] = true;
          return false;
        }
        break;
      }
      // NVLS ld_reduce: the switch sums the responses and returns the sum to the issuer.
      const double whole = h.t_ns + (saf_ ? 0.0 : ser_ns(f, p.bytes));
      f.complete_ns[p.index] = std::max(f.complete_ns[p.index], whole);
      if (++f.count[p.index] == expected_in_group(f, p.index)) group_complete(p.flow, p.index, plane);
      break;
    }
    case FlowKind::IsaRead: {
      Isa& isa = isas_[static_cast<std::size_t>(plane)];
      if (!isa_admit(plane, l.gpu, p, h.t_ns)) {
        l.in_blocked[cls] = true;
        isa.blocked.push_back(static_cast<std::uint32_t>(id));
        if (!isa.frees.empty() && isa.frees.front().first < isa.wake_at) {
          isa.wake_at = isa.frees.front().first;
          schedule(isa.wake_at, EvIsaWake, static_cast<std::uint32_t>(plane));
        }
        return false;
      }
      --isa.normal_inflight;
      break;
    }
    case FlowKind::IsaWrite:
      break;  // never on an input port
  }
  l.in[cls].pop_front();
  l.in_bytes -= wire;
  l.credits_used[cls] -= wire;
  return true;
}

void Engine::group_complete(StepId fi, std::uint32_t i, int plane) {
  Flow& f = flows_[fi];
  while (f.next_group < f.n && f.count[f.next_group] == expected_in_group(f, f.next_group)) ++f.next_group;
  Pkt r;
  r.flow = fi;
  r.index = i;
  r.bytes = result_bytes(f, i);
  if (f.kind == FlowKind::IsaRead) {
    Isa& isa = isas_[static_cast<std::size_t>(plane)];
    // The reduction (and, for quantised data, the INQ) unit is one FIFO server per
    // plane, shared with the ISA's Compute steps (requantise) through res_free_.
    const double plain = static_cast<double>(f.staged[i]) * f.plain_per_byte / static_cast<double>(f.srcs.size());
    double& red = res_free_[static_cast<std::size_t>(rm_.isa_reduce(plane))];
    double& inq = res_free_[static_cast<std::size_t>(rm_.isa_inq(plane))];
    double start = std::max({now_, red, f.complete_ns[i]});
    if (f.codec) start = std::max(start, inq);
    const double done = start + plain * f.reduce_inv_GBps;
    if (f.reduce_inv_GBps > 0) {
      red = done;
      if (f.codec) inq = done;
    }
    isa.frees.push_back({done, f.staged[i]});
    // Blocked responses may now be the group the reducer waits for, or fit once this frees.
    if (!isa.blocked.empty() && now_ < isa.wake_at) {
      isa.wake_at = now_;
      schedule(now_, EvIsaWake, static_cast<std::uint32_t>(plane));
    }
    if (f.to_switch) {
      deliver(r, done);
      return;
    }
    const std::uint32_t oid = static_cast<std::uint32_t>(plane * gpus_ + s_.buffers[s_.steps[fi].dsts[0].buffer].node);
    outs_[oid].fifo.push_back(Queued{r, done});
    pump_result_out(oid);
    return;
  }
  // NVLS: the sum crosses the switch to the issuer.
  const std::uint32_t oid = static_cast<std::uint32_t>(plane * gpus_ + f.initiator);
  outs_[oid].fifo.push_back(Queued{r, f.complete_ns[i] + cfg_.sw.latency_ns});
  pump_result_out(oid);
}

void Engine::pump_result_out(std::uint32_t oid) {
  ResultOut& o = outs_[oid];
  if (o.waiting) return;
  const int plane = static_cast<int>(oid) / gpus_, gpu = static_cast<int>(oid) % gpus_;
  while (!o.fifo.empty()) {
    if (!enqueue_out(down(gpu, plane), o.fifo.front(), Feeder{FeederKind::ResultOut, oid})) {
      o.waiting = true;
      return;
    }
    o.fifo.pop_front();
  }
}

void Engine::pump_isa_write(StepId fi) {
  Flow& f = flows_[fi];
  if (f.waiting) return;
  const int plane = f.plane;
  const Feeder me{FeederKind::IsaWrite, fi};
  while (f.next_send < f.n) {
    Pkt p;
    p.flow = fi;
    p.index = f.next_send;
    p.bytes = pkt_bytes(f.bytes, p.index);
    p.slot = kAllDsts;
    const std::uint64_t wire = p.bytes + H_;
    for (NodeId d : f.dsts)
      if (!room_in(down(d, plane), wire)) {
        f.waiting = true;
        wait_on(down(d, plane), me);
        return;
      }
    ++stats_.packets;
    // Multicast: the same packet starts on every destination port (rooms checked above).
    const double ser = ser_ns(f, p.bytes);
    double last = 0;
    for (NodeId d : f.dsts) {
      Link& l = links_[static_cast<std::size_t>(down(d, plane))];
      const double start = std::max(now_, l.busy_until);
      l.busy_until = start + ser;
      ++l.pushes;
      l.out.push_back(OutEntry{now_, start, static_cast<std::uint32_t>(wire)});
      if (l.arrived + 1 == l.out.size()) l.ta_next = now_;
      l.payload += p.bytes;
      l.wire += wire;
      record_busy(l, start, ser);
      last = std::max(last, start + ser + l.lat_ns);
    }
    f.last_ns = std::max(f.last_ns, last);
    f.delivered += f.dsts.size();
    if (f.delivered == f.expected) finish_flow(fi, f.last_ns);
    ++f.next_send;
  }
}

// ------------------------------------------------------------------ the ISA

// A read response reaches the ISA (header at t_header). Returns false, changing
// nothing but the lazily applied frees, if the buffer has no room for it.
bool Engine::isa_admit(int plane, int gpu, const Pkt& p, double t_header) {
  Flow& f = flows_[p.flow];
  Isa& isa = isas_[static_cast<std::size_t>(plane)];
  isa_apply_frees(isa);
  // Escape: when nothing already staged will ever be freed (every staged byte
  // belongs to an incomplete group), the group the reducer waits for gets in
  // anyway, so a full buffer of partial groups cannot deadlock.
  const bool escape = isa.frees.empty() && p.index == f.next_group;
  if (isa.staged > 0 && isa.staged + p.bytes > isa_buf_ && !escape) return false;
  isa.staged += p.bytes;
  isa.hwm = std::max(isa.hwm, isa.staged);
  isa.ports[static_cast<std::size_t>(gpu)].outstanding -= p.bytes;
  const double whole = t_header + (saf_ ? 0.0 : ser_ns(f, p.bytes));
  f.complete_ns[p.index] = std::max(f.complete_ns[p.index], whole);
  f.staged[p.index] += p.bytes;
  if (++f.count[p.index] == expected_in_group(f, p.index)) group_complete(p.flow, p.index, plane);
  issue_requests(plane, gpu);
  return true;
}

// Requests leave the ISA while the port's outstanding bytes stay under the cap
// (Little's Law); paced regulation also spaces them at the reduction drain rate.
void Engine::issue_requests(int plane, int gpu) {
  Isa& isa = isas_[static_cast<std::size_t>(plane)];
  IsaPort& port = isa.ports[static_cast<std::size_t>(gpu)];
  const std::uint64_t cap = isa_cap_;
  const double lat = isa_lat_, mem = isa_mem_;
  double first_ready = kInf;
  Link& l = links_[static_cast<std::size_t>(up(gpu, plane))];
  while (!port.ops.empty()) {
    IsaPort::Op& op = port.ops.front();
    if (op.next >= op.n) {
      port.ops.pop_front();
      continue;
    }
    const std::uint32_t b = pkt_bytes(op.total, op.next);
    if (port.outstanding > 0 && port.outstanding + b > cap) break;
    double t = now_;
    if (op.pace_ns > 0) t = std::max(now_, port.last_issue + op.pace_ns);
    port.last_issue = t;
    push_request(l, Link::Requested{t + lat + mem, op.src_id});
    first_ready = std::min(first_ready, t + lat + mem);
    port.outstanding += b;
    ++op.next;
  }
  if (first_ready < kInf) wake_link(up(gpu, plane), first_ready);
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
  const double ready = now_ + 2 * lat + lsw + mem;  // request up, across, down; memory access
  while (!rd.ops.empty()) {
    const StepId fi = rd.ops.front();
    Flow& f = flows_[fi];
    if (f.next_send >= f.n) {
      rd.ops.pop_front();
      continue;
    }
    const int np = f.plane >= 0 ? 1 : planes_;
    const double rtt = 4 * lat + 2 * lsw + mem;
    const double window = std::ceil(np * rtt / ser_ns(f, static_cast<std::uint32_t>(P_)));
    if (rd.outstanding >= window) break;
    const std::uint32_t g = f.next_send++;
    const int pi = f.plane >= 0 ? 0 : static_cast<int>(g % static_cast<std::uint32_t>(planes_));
    const int plane = f.plane >= 0 ? f.plane : pi;
    for (std::size_t j = 0; j < f.srcs.size(); ++j) {
      if (g >= f.src_n[j]) continue;
      const int link = up(f.srcs[j], plane);
      push_request(links_[static_cast<std::size_t>(link)],
          Link::Requested{ready, f.src_id[j * static_cast<std::size_t>(np) + static_cast<std::size_t>(pi)]});
      wake_link(link, ready);
    }
    ++rd.outstanding;
  }
}

void Engine::isa_apply_frees(Isa& isa) {
  while (!isa.frees.empty() && isa.frees.front().first <= now_) {
    isa.staged -= isa.frees.front().second;
    isa.frees.pop_front();
  }
}

void Engine::isa_wake(int plane) {
  Isa& isa = isas_[static_cast<std::size_t>(plane)];
  if (now_ < isa.wake_at) return;  // superseded
  isa.wake_at = kInf;
  isa_apply_frees(isa);
  std::vector<std::uint32_t> blocked;
  blocked.swap(isa.blocked);
  for (std::uint32_t id : blocked) {
    links_[id].in_blocked[1] = false;
    pump_in(static_cast<int>(id));
  }
  if (!isa.blocked.empty() && !isa.frees.empty() && isa.frees.front().first < isa.wake_at) {
    isa.wake_at = isa.frees.front().first;
    schedule(isa.wake_at, EvIsaWake, static_cast<std::uint32_t>(plane));
  }
}

// ------------------------------------------------------------------ the run

double thread_cpu_s() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

Run Engine::run() {
  const auto t0 = std::chrono::steady_clock::now();
  const double cpu0 = thread_cpu_s();
  validate(cfg_);
  check_schedule(s_);
  if (s_.gpus != cfg_.fabric.gpus || s_.topology != cfg_.fabric.topology ||
      (s_.topology == Topology::Star && s_.planes != cfg_.fabric.planes))
    throw Error(fmt::format("packet engine: schedule for {} accelerators / {} planes does not match the fabric "
                            "({} accelerators / {} planes)", s_.gpus, s_.planes, cfg_.fabric.gpus, cfg_.fabric.planes));
  if (s_.steps.size() > kIdMask)
    throw Error(fmt::format("packet engine: {} steps exceed the limit of {}", s_.steps.size(), kIdMask));
  gpus_ = s_.gpus;
  star_ = s_.topology == Topology::Star;
  planes_ = star_ ? std::max(1, s_.planes) : 1;
  P_ = cfg_.packet.payload_bytes;
  H_ = cfg_.packet.header_bytes;
  port_cap_ = cfg_.packet.port_buffer_bytes;
  saf_ = cfg_.packet.forwarding == StoreMode::StoreAndForward;
  isa_cap_ = cfg_.sw.isa.max_outstanding_bytes;
  isa_buf_ = cfg_.sw.isa.buffer_bytes;
  isa_lat_ = cfg_.links.latency_ns;
  isa_mem_ = cfg_.accelerator.mem_latency_ns;
  samples_ = cfg_.packet.timeline_samples;
  build_links();
  read_issue_ns_.assign(static_cast<std::size_t>(gpus_), 0.0);
  readers_.assign(static_cast<std::size_t>(gpus_), Reader{});
  if (star_) {
    isas_.resize(static_cast<std::size_t>(planes_));
    for (auto& isa : isas_) isa.ports.resize(static_cast<std::size_t>(gpus_));
    outs_.resize(static_cast<std::size_t>(planes_ * gpus_));
  }

  const std::size_t n = s_.steps.size();
  costs_.resize(n);
  for (std::size_t i = 0; i < n; ++i) costs_[i] = step_cost(cfg_, s_, rm_, s_.steps[i]);
  succ_.assign(n, {});
  pending_.assign(n, 0);
  ready_.assign(n, 0.0);
  timing_.assign(n, {});
  done_.assign(n, 0);
  flows_.resize(n);
  res_free_.assign(static_cast<std::size_t>(rm_.count()), 0.0);
  for (std::size_t i = 0; i < n; ++i)
    for (StepId d : s_.steps[i].deps) {
      succ_[d].push_back(static_cast<StepId>(i));
      ++pending_[i];
    }
  for (std::size_t i = 0; i < n; ++i)
    if (pending_[i] == 0) start_step(static_cast<StepId>(i), 0.0);

  std::uint64_t same_time = 0;
  while (!q_.empty()) {
    stats_.peak_pending = std::max<std::uint64_t>(stats_.peak_pending, q_.size());
    const Event e = q_.pop();
    // Guard against a livelock (events that keep rescheduling at one instant): never hang.
    if (e.t_ns == now_) {
      if (++same_time > 100'000'000)
        throw Error(fmt::format("packet engine: no progress at t = {} ns after 10^8 events; please report this", now_));
    } else {
      same_time = 0;
    }
    now_ = e.t_ns;
    if ((++stats_.events & 0xfff) == 0) poll();
    const std::uint32_t tgt = e.target();
    const std::uint32_t id = tgt & kIdMask;
    switch (static_cast<EvType>(tgt >> kTypeShift)) {
      case EvLink: link_event(static_cast<int>(id)); break;
      case EvPipe: pipe_event(static_cast<int>(id)); break;
      case EvFlowStart: flow_start(id); break;
      case EvStepDone: step_done(id); break;
      case EvIsaWake: isa_wake(static_cast<int>(id)); break;
      case EvRoom: room_event(static_cast<int>(id)); break;
      case EvReadReturn: read_return(static_cast<int>(id)); break;
    }

  }
  if (steps_done_ != n) {
    std::size_t first = 0;
    while (first < n && done_[first]) ++first;
    throw Error(fmt::format("packet engine: {} of {} steps never finished (first: step {} '{}'); "
                            "the schedule or the fabric deadlocked", n - steps_done_, n, first,
                            first < n ? s_.steps[first].label : ""));
  }

  for (auto& l : links_)
    if (l.kind == Link::Down) drain_out(l, kInf);  // settle the output queues' peaks
  Run out;
  out.steps = timing_;
  double total = 0;
  for (const auto& t : timing_) total = std::max(total, t.finish_ns);
  SimResult& r = out.result;
  r.engine = "packet";
  r.time_ns = total;
  // Busiest accelerator link direction, in payload bytes.
  std::vector<double> eg(static_cast<std::size_t>(gpus_), 0.0), in(static_cast<std::size_t>(gpus_), 0.0);
  for (const auto& l : links_) {
    if (l.kind == Link::Up) eg[static_cast<std::size_t>(l.gpu)] += static_cast<double>(l.payload);
    if (l.kind == Link::Down) in[static_cast<std::size_t>(l.gpu)] += static_cast<double>(l.payload);
    if (l.kind == Link::Direct) {
      eg[static_cast<std::size_t>(l.gpu)] += static_cast<double>(l.payload);
      in[static_cast<std::size_t>(l.other)] += static_cast<double>(l.payload);
    }
  }
  for (std::size_t g = 0; g < eg.size(); ++g) r.max_link_bytes = std::max({r.max_link_bytes, eg[g], in[g]});
  breakdown(out);
  stats_.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  stats_.cpu_s = thread_cpu_s() - cpu0;
  out.stats = stats_;
  r.extra = extra_json(total);
  return out;
}

// Critical path through the steps (each step made ready by its latest dep).
// A step's own duration is split across terms in the proportions of its
// analytic cost (fixed part first); queueing inflates those terms pro rata.
void Engine::breakdown(Run& out) const {
  Breakdown& b = out.result.breakdown;
  if (timing_.empty()) return;
  StepId cur = 0;
  for (StepId i = 0; i < timing_.size(); ++i)
    if (timing_[i].finish_ns > timing_[cur].finish_ns) cur = i;
  while (cur != kNoStep) {
    const StepCost& c = costs_[cur];
    const double dur = timing_[cur].finish_ns - timing_[cur].start_ns;
    const double fixed = std::min(dur, c.fixed_ns);
    b[c.fixed_term] += fixed;
    const double rest = dur - fixed;
    double occ = 0;
    Term occ_term = Term::Serialisation;
    for (const auto& u : c.uses)
      if (u.amount_bytes / u.rate_GBps > occ) {
        occ = u.amount_bytes / u.rate_GBps;
        occ_term = u.term;
      }
    double a = occ;
    for (double x : c.latency_ns) a += x;
    if (a > 0) {
      b[occ_term] += rest * occ / a;
      for (int t = 0; t < static_cast<int>(Term::Count); ++t) b.ns[t] += rest * c.latency_ns[t] / a;
    } else {
      b[Term::Serialisation] += rest;
    }
    StepId next = kNoStep;
    double best = -1;
    for (StepId d : s_.steps[cur].deps)
      if (timing_[d].finish_ns > best) {
        best = timing_[d].finish_ns;
        next = d;
      }
    cur = next;
  }
}

nlohmann::json Engine::extra_json(double total_ns) const {
  using nlohmann::json;
  json j;
  j["events"] = stats_.events;
  j["packet_hops"] = stats_.packet_hops;
  j["packets"] = stats_.packets;
  j["peak_pending_events"] = stats_.peak_pending;
  j["stale_events"] = stats_.stale_events;
  j["wall_s"] = stats_.wall_s;
  j["cpu_s"] = stats_.cpu_s;
  j["packet_payload_bytes"] = P_;
  j["packet_header_bytes"] = H_;
  auto name = [&](const Link& l) {
    switch (l.kind) {
      case Link::Up: return fmt::format("r{}->sw{}", l.gpu, l.other);
      case Link::Down: return fmt::format("sw{}->r{}", l.other, l.gpu);
      case Link::Direct: break;
    }
    return fmt::format("r{}->r{}", l.gpu, l.other);
  };
  json links = json::array(), ports = json::array();
  for (const auto& l : links_) {
    if (l.kind == Link::Direct && l.gpu == l.other) continue;
    json x;
    x["name"] = name(l);
    x["direction"] = l.kind == Link::Up ? "egress" : l.kind == Link::Down ? "ingress" : "direct";
    x["gpu"] = l.gpu;
    if (l.kind == Link::Direct) x["peer"] = l.other;
    else x["plane"] = l.other;
    x["payload_bytes"] = l.payload;
    x["wire_bytes"] = l.wire;
    x["packets"] = l.packets;
    x["busy_ns"] = l.busy_ns;
    x["utilisation"] = total_ns > 0 ? l.busy_ns / total_ns : 0.0;
    if (l.kind == Link::Up) x["credit_stall_ns"] = l.stall_ns;
    links.push_back(std::move(x));
    if (l.kind == Link::Up)
      ports.push_back({{"name", fmt::format("sw{} in r{}", l.other, l.gpu)}, {"plane", l.other}, {"gpu", l.gpu},
                       {"side", "input"}, {"peak_queue_bytes", l.in_peak}});
    if (l.kind == Link::Down)
      ports.push_back({{"name", fmt::format("sw{} out r{}", l.other, l.gpu)}, {"plane", l.other}, {"gpu", l.gpu},
                       {"side", "output"}, {"peak_queue_bytes", l.q_peak}});
  }
  j["links"] = std::move(links);
  j["switch_ports"] = std::move(ports);
  json isa = json::array();
  for (std::size_t p = 0; p < isas_.size(); ++p)
    isa.push_back({{"plane", p}, {"buffer_bytes", cfg_.sw.isa.buffer_bytes}, {"buffer_hwm_bytes", isas_[p].hwm}});
  j["isa"] = std::move(isa);
  if (samples_ > 0) {
    json tl;
    const int used = std::min(samples_, std::max(1, static_cast<int>(std::ceil(total_ns / bin_ns_))));
    tl["bin_ns"] = bin_ns_;
    tl["samples"] = used;
    json ls = json::array();
    for (const auto& l : links_) {
      if (l.kind == Link::Direct && l.gpu == l.other) continue;
      std::vector<double> u(static_cast<std::size_t>(used));
      for (int k = 0; k < used; ++k) u[static_cast<std::size_t>(k)] = std::min(1.0, l.timeline[static_cast<std::size_t>(k)] / bin_ns_);
      ls.push_back({{"name", name(l)}, {"utilisation", std::move(u)}});
    }
    tl["links"] = std::move(ls);
    j["timeline"] = std::move(tl);
  }
  return j;
}

}  // namespace

Run run(const Config& cfg, const Schedule& s, const RunContext& ctx) {
  Engine e(cfg, s, ctx);
  return e.run();
}

}  // namespace packet

SimResult run_packet_sim(const Config& cfg, const Schedule& s, const RunContext& ctx) {
  return packet::run(cfg, s, ctx).result;
}

}  // namespace scin
