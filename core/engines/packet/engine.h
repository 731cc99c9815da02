// The packet engine's wiring (internal): it owns the components and the event
// loop, and routes packets between them. Its methods live by component:
//   setup.cc   set-up: links, step records and successor lists, the per-thread arrays
//   engine.cc  steps and flows, the event loop
//   sender.cc  an accelerator's link: arbitration, credits, the pipe to the switch
//   switch.cc  input ports, output queues and their waiters, multicast, results out
//   reads.cc   reads: the ISA (admission, reduction, requests), NVLS, accelerator reads
//   report.cc  breakdown and typed statistics
// See packet_engine.h for the model. Times are integer ps (time.h).
#pragma once

#include <atomic>
#include <cstdint>
#include <limits>
#include <memory>
#include <type_traits>
#include <vector>

#include "base/run_context.h"
#include "engines/packet/block_vec.h"
#include "engines/packet/event_queue.h"
#include "engines/packet/isa.h"
#include "engines/packet/link.h"
#include "engines/packet/packet_engine.h"
#include "engines/packet/sim.h"
#include "engines/packet/step_costs.h"
#include "engines/packet/timeline.h"
#include "fabric/config.h"
#include "model/cost_model.h"
#include "schedule/schedule.h"

namespace scin::packet {

// Tests only: with `packet_entries` false, every requested response names a
// Source, as before packet entries (Sender::request_packet); the results must
// be the same bits. Read once per run; `packet_entries_made` adds up the packet
// entries the runs made (so a test knows it went that way).
namespace testing {
inline std::atomic<bool> packet_entries{true};
inline std::atomic<std::uint64_t> packet_entries_made{0};
// Tests only: with `group_log` false, a group that reads every accelerator's
// only packet on a plane puts a packet entry in each uplink's FIFO, as before
// the plane's group log (GroupLog); the results must be the same bits.
// `group_log_entries` adds up the log entries the runs made.
inline std::atomic<bool> group_log{true};
inline std::atomic<std::uint64_t> group_log_entries{0};
inline std::atomic<std::uint64_t> group_log_taken{0};  // of which moved into an uplink's FIFO by a request (LogCursor::take)
// Tests only: with `fast_paths` false, try_send takes its general code for
// every link (not send_requested / send_write) and forward_in its multicast
// code for every write (not the one-destination branch), and the ISA's next
// requests go by issue_requests' loop alone, through Sender::request (not
// isa_issue's one request, nor request_isa's append); the results must be
// the same bits. On two tiers, a multicast from an accelerator to
// accelerators in ascending order lists each switch's links from its
// destinations (Flow::mc_routed) and a write to one node follows its route
// (Flow::uc_routed; off: both from their stored hops). Read once per run.
inline std::atomic<bool> fast_paths{true};
// Flows started with the shape's fields they held kept (Engine::apply_flow_shape;
// off with fast_paths: every flow is reset whole and filled from its shape).
inline std::atomic<std::uint64_t> flow_shapes_kept{0};
// Runs of steps with one wide dependency list whose successor entries set-up
// wrote list by list (Engine::setup; off with fast_paths: step by step).
inline std::atomic<std::uint64_t> successor_blocks{0};
}  // namespace testing

class Engine {
 public:
  Engine(const Config& cfg, const Schedule& s, const RunContext& ctx)
      : cfg_(cfg), s_(s), ctx_(ctx), rm_(resource_map(s)) {}
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;
  Run run();

 private:
  // ---- setup.cc: set-up
  void setup();
  void build_links();
  /// Accelerator g's up and down links to plane p (star and two-tier alike).
  void init_port_links(int g, int p);
  // ---- engine.cc: steps, flows, events
  [[gnu::always_inline]] std::uint64_t schedule(Ps t, EvType type, std::uint32_t id) {
    return q_.push(t, target_of(type, id));
  }
  bool is_network(const Step& st) const;
  void start_step(StepId i, Ps t);
  void step_done(StepId i);
  struct Shape;
  struct FlowShape;
  /// `shape_id`: the step's shape (x is its FlowShape), or StepCosts::kNone (x is flow_shape_).
  void setup_flow(StepId i, Ps t, const FlowShape& x, std::uint32_t shape_id);
  void make_flow_shape(FlowShape& x, StepId i, const StepCost& c, double factor);
  [[gnu::always_inline]] inline void apply_flow_shape(Flow& f, const FlowShape& x, StepId i, std::uint32_t shape_id);
  void flow_start(FlowId i);
  void start_reads(FlowId i);
  void finish_flow(FlowId i, Ps t);
  [[gnu::always_inline]] inline void deliver(const Pkt& p, Ps t);
  std::uint32_t add_source(const Source& src);
  // add_source's body, inlined into add_link_source (flow_start's per network step, a ring at
  // 1024 accelerators 2 M times); add_source's other callers (the reads' Sources, per request
  // at times) call it out of line, as before.
  [[gnu::always_inline]] inline std::uint32_t add_source_inline(const Source& src);
  [[gnu::always_inline]] inline void add_link_source(int link, const Source& src);
  [[gnu::always_inline]] inline void dispatch(const Event& e);
  double payload_to_deliver() const;
  // Every 4096 events (well under a millisecond): stop if asked, report progress now and then.
  void poll() {
    ctx_.check();
    // Steps done, or (when steps finish in bulk at the end, as one-shot's on a big fabric) the
    // payload delivered: whichever is further, below 1 until the run ends.
    if ((stats_.events & 0xffff) == 0 && ctx_.progress) {
      if (progress_bytes_ < 0) progress_bytes_ = payload_to_deliver();
      const double bytes =
          progress_bytes_ > 0 ? std::min(0.99, static_cast<double>(delivered_bytes_) / progress_bytes_) : 0.0;
      ctx_.report(std::max(static_cast<double>(steps_done_) / static_cast<double>(s_.steps.size()), bytes));
    }
  }

  // ---- sender.cc: an accelerator's link
  [[gnu::always_inline]] void wake_link(int id, Ps t) {
    Sender& tx = links_[static_cast<std::size_t>(id)].tx;
    if (t < tx.next_wake) {
      tx.next_wake = t;
      tx.wake_gen = schedule(t, EvLink, static_cast<std::uint32_t>(id));
    }
  }
  [[gnu::always_inline]] inline void link_event(int id, std::uint64_t gen);
  void try_send(int id);
  // try_send's body: the busy test and the choice of a fast path (inlined into the event loop's link events).
  [[gnu::always_inline]] inline void send_next(int id);
  [[gnu::noinline]] void send_general(Link& l, int id);
  [[gnu::always_inline]] inline void send_requested(Link& l, int id);
  [[gnu::always_inline]] inline void send_write(Link& l, int id);
  [[gnu::noinline]] void send_packet_entry(Link& l, int id, std::uint32_t bytes);
  // An accelerator link sends `p` now (a full packet takes `ser_full`): counted,
  // serialised, the link woken when its wire is free; returns the serialisation.
  [[gnu::always_inline]] inline Ps send_now(Link& l, int id, Fine ser_full, const Pkt& p);
  [[gnu::always_inline]] inline void pipe_event(int id);
  [[gnu::always_inline]] Ps transmit(Link& l, std::size_t id, Ps ready, Fine dur, const Pkt& p, Ps& ser) {
    const Ps start = l.wire.send(ready, dur, p.bytes, p.bytes + g_.H, ser);
    // (Stats::packet_hops is the links' packets added up when the run ends: each is one send.)
    if (timeline_on_) [[unlikely]] timeline_.add(id, start, ser);
    return start;
  }

  // ---- switch.cc: ports and queues
  void pump_in(int id);
  bool forward_in(int id, int cls, const Queued& h);
  [[gnu::always_inline]] inline bool forward_write1(Link& l, int cls, const Pkt& p, Flow& f);
  bool room_in(int down_id, std::uint64_t wire) {
    Link& d = links_[static_cast<std::size_t>(down_id)];
    if (!d.out.waiters.empty() && down_id != serving_) return false;
    return d.out.has_room(now_, wire, g_.port_cap);
  }
  bool enqueue_out(int down_id, const Queued& qd, const Feeder& who);
  /// `dur`: g_.ser_fine(flow, p.bytes), computed once per packet by the caller (a multicast pushes it N times).
  [[gnu::always_inline]] inline Ps push_out(int down_id, Ps ready, Fine dur, const Pkt& p);
  void wait_on(int down_id, const Feeder& who);
  void arm_room(int down_id);
  void room_event(int down_id, std::uint64_t gen);
  void retry(const Feeder& w);
  [[gnu::always_inline]] inline std::uint64_t multicast_room(const Flow& f, std::size_t lo, std::size_t hi, int plane, std::uint64_t wire,
                               const Feeder& who);
  void pump_isa_write(FlowId f);
  void pump_result_out(std::uint32_t id);

  // ---- reads.cc: ISA, NVLS, accelerator reads
  [[gnu::always_inline]] inline bool isa_admit(int plane, int gpu, const Pkt& p, Ps t_header, Ps now);
  // isa_admit out of line: one call per response (send_requested, and the rare paths).
  [[gnu::noinline]] bool isa_admit_out(int plane, int gpu, const Pkt& p, Ps t_header, Ps now);
  void group_complete(FlowId fi, std::uint32_t i, int plane, Ps now);
  void issue_requests(int plane, int gpu, Ps now);
  [[gnu::always_inline]] inline void isa_issue(int plane, int gpu, Ps now);
  void issue_gpu_reads(int gpu);
  [[gnu::noinline]] void log_group(FlowId fi, std::uint32_t grp, int plane, Ps ready);
  void read_return(int gpu) {
    --readers_[static_cast<std::size_t>(gpu)].outstanding;
    issue_gpu_reads(gpu);
  }
  void arm_isa_wake(int plane, Ps t);
  void isa_wake(int plane, std::uint64_t gen);

  // ---- tiers.cc: two-tier fabrics (packets routed hop by hop)
  void build_tier_links();
  int hop_link(NodeId a, NodeId b) const;
  void add_hops(Flow& f, NodeId a, NodeId b, int plane, int spine = -1);
  int route_next_link(NodeId a, NodeId b, int plane, NodeId at) const;
  void tier_flow_start(FlowId i);
  void index_hops(Flow& f) const;
  int read_next_link(const Flow& f, const Pkt& p, NodeId at) const;
  /// A record for packet p's copies, ready at `ready`, holding room in link `in`'s far-end buffer (Held).
  std::uint32_t hold(const Pkt& p, Ps ready, std::uint32_t in, std::uint32_t copies);
  /// Held record `rec` joins link `id`'s forwarded packets, by ready time;
  /// `now_ready`: it is ready a switch latency from now, as every packet
  /// queued on arrival was (so, unless a later one is queued, it joins at the back).
  void transit_to(int id, std::uint32_t rec, bool now_ready);
  void mc_next_links(const Flow& f, NodeId at);  // (into tier_next_)
  void hop_send(int id);
  void hop_arrive(int id);
  void tier_group_complete(FlowId fi, std::uint32_t i, NodeId red, Ps whole);
  void forward(const Flow& f, const Pkt& p, NodeId at, Ps ready);
  // Finite buffers on two tiers: the links a packet leaves `at` on (into tier_next_);
  // a packet's room in link `in`'s far-end buffer given back (its credits).
  void next_links(const Flow& f, const Pkt& p, NodeId at);
  void tier_release(std::uint32_t in, const Pkt& p);
  /// The switch input buffer at link l's far end, in bytes: packet.port_buffer_bytes
  /// for an accelerator's port rate, scaled with a trunk's rate (the same time's
  /// worth of its data), and never less than one full packet (an oversubscribed
  /// trunk's share of a one-packet buffer would hold none: nothing could cross).
  std::uint64_t tier_cap(const Link& l) const {
    if (l.scale == 1) return g_.port_cap;
    return std::max(g_.P + g_.H, static_cast<std::uint64_t>(static_cast<double>(g_.port_cap) / l.scale));
  }

  // ---- report.cc
  void breakdown(Run& out) const;
  void report(Run& out, Ps total) const;

  const Config& cfg_;
  const Schedule& s_;
  const RunContext& ctx_;
  const ResourceMap rm_;
  Geometry g_;
  Ps isa_lat_ = 0, isa_mem_ = 0;  // links.latency_ns, accelerator.mem_latency_ns
  Ps isa_lat_mem_ = 0;            // their sum: an ISA request's ready time after it leaves
  std::uint64_t isa_cap_ = 0;     // switch.isa.max_outstanding_bytes
  Ps lsw_ = 0;                    // switch.latency_ns
  bool tiers_ = false;            // a two-tier fabric: every link is a routed hop (tiers.cc)
  bool logs_on_ = false;          // some plane's group log has had an entry (Link::cursor; read per packet, so here)
  bool fast_paths_ = true;        // testing::fast_paths, as the run started (read per packet)
  bool timeline_on_ = false;      // timeline_.on() (read per packet hop, so here)
  Ps now_ = 0;
  EventQueue q_;
  int serving_ = -1;  // output queue whose waiter is being retried (it may use that queue's room)
  std::vector<Link> links_;
  // tiers.cc, add_hops(): per link, the flow start that last added a hop
  // through it, so a hop already in the flow is found without a scan of
  // its hops (a multicast to 576 accelerators over 18 planes holds ~10^4 hops:
  // the scan per hop was 89% of an NVLS run on nvl576-style).
  std::vector<std::uint64_t> hop_mark_;
  std::uint64_t hop_stamp_ = 0;   // flow starts on two tiers so far
  // tiers.cc: a link's read responses are a heap, earliest ready first and, on
  // a tie, the one added first (what a scan of the list in order picked; an
  // NVLS ld_reduce on nvl576-style puts 576 on every uplink, and the scan per
  // packet was half of hop_send). resp_seq_[source] is its place in that order.
  std::vector<int> tier_next_;       // tiers.cc, next_links(): a packet's next links
  std::vector<Held> held_;                 // tiers.cc: packets in switches' output queues, one record for all copies
  std::vector<std::uint32_t> free_held_;   // ... and the records free for reuse
  std::vector<std::uint64_t> resp_seq_;
  std::uint64_t resp_next_ = 0;
  bool resp_later(std::uint32_t a, std::uint32_t b) const {
    const Ps ra = sources_[a].ready, rb = sources_[b].ready;
    return ra != rb ? ra > rb : resp_seq_[a] > resp_seq_[b];
  }
  void tier_add_response(int link, const Source& src);
  std::vector<Source> sources_;      // pool, like flows_: a flow's sources are freed with it
  std::vector<std::uint32_t> free_sources_;
  BlockVec<Flow> flows_;             // pool: grows only while steps are set up (elements never move)
  std::vector<FlowId> free_flows_;
  std::vector<Isa> isas_;
  // Reduced results (NVLS ld_reduce, ISA reads into accelerators) waiting to enter an output queue.
  struct ResultOut {
    Ring<Queued> fifo;
    bool waiting = false;
  };
  std::vector<ResultOut> outs_;
  std::vector<Ps> read_issue_;  // per accelerator: when its read requests so far have left (mesh)
  // Star: an accelerator's reads in program order and its requests outstanding.
  struct Reader {
    Ring<FlowId> ops;
    std::uint32_t outstanding = 0;
  };
  std::vector<Reader> readers_;
  // steps: what the run keeps per step, in one record (32 bytes), not one array
  // per field: a ring at 1024 accelerators has 2 M steps, and a step that
  // starts or ends touched five arrays, each a cache miss of its own.
  //
  // No default member values, so the arrays are allocated without being
  // filled: set-up writes each record once, in its one pass over the steps
  // (at 1024 accelerators, filling the 64 MB first was a pass of its own).
  struct StepState {
    Ps start;             // the step's ready time (its deps' last finish) until it starts
    Ps finish;
    int pending;          // dependencies not done yet; -1 once the step is done
    FlowId flow;          // its flow while in flight (kNoFlow)
    std::uint32_t succ;   // its successors: succ_[succ .. steps_[i + 1].succ)
    std::uint32_t shape;  // costs_.shape() of the step (set-up)
  };
  static_assert(StepCosts::kNone == kNoShape);
  static_assert(sizeof(StepState) == 32 && std::is_trivially_default_constructible_v<StepState>);
  std::unique_ptr<StepState[]> steps_;  // one per step and one past the last (its succ ends the list)
  std::unique_ptr<StepId[]> succ_;      // successors, one flat array (not a vector per step)
  std::vector<StepId> edges_;           // set-up: every step's dependencies, in step order
  std::size_t steps_cap_ = 0, succ_cap_ = 0;
  // The storage of the three above, kept per thread for its next run (working
  // memory: set-up writes every entry before it is read, so nothing a result
  // depends on). A ring at 1024 accelerators needs ~90 MB of them, and the
  // first touch of fresh pages was a tenth of its run; a sweep's or a bench's
  // next run on the thread reuses them. Taken in setup(), given back by ~Engine
  // (up to kSpareBytes; a run inside a run's progress callback finds none).
  struct StepMemory {
    std::unique_ptr<StepState[]> steps;
    std::unique_ptr<StepId[]> succ;
    std::vector<StepId> edges;
    std::size_t steps_cap = 0, succ_cap = 0;
  };
  static constexpr std::size_t kSpareBytes = std::size_t{256} << 20;
  static StepMemory& spare();
  std::vector<Server> res_;  // the analytic ResourceMap's resources (ports unused, units, HBM)
  double progress_bytes_ = -1;        // progress (poll): payload to deliver (-1: not added up yet)
  std::uint64_t delivered_bytes_ = 0; // ... and delivered (a whole number: the same as a double's sum below 2^53)
  std::vector<Ps> dur_;      // start_step: the rounded duration of each use (scratch)
  // setup_flow: the last transfer factor seen and the packet wire times that follow from it.
  struct Rate {
    double factor = std::numeric_limits<double>::quiet_NaN();  // none yet (NaN equals nothing)
    double inv_raw = 0, gap_ns = 0;
    Fine ser_full = 0;
  } rate_;
  std::size_t steps_done_ = 0;
  Timeline timeline_;
  Stats stats_;
  // Steps by shape. Last: the per-event state above keeps its place in the
  // Engine (with these before `stats_`, SCIN at 8 GPUs ran 4-6% slower).
  StepCosts costs_;          // start_step: steps' costs by shape (setup_flow reads one; nothing re-enters)
  // What else start_step takes from a step of a shape, from the first one that
  // starts (so a step that starts reads its shape's lines, not its own Step:
  // a ring at 1024 accelerators starts its 2 M Steps (416 MB) in an order that
  // no prefetcher follows, and reading each was a cache miss or four).
  // What a network step's flow takes from the step (make_flow_shape), in the
  // shape's own lines (a memoised shape has at most 4 regions: no heap block):
  // the Flow fields (the others start as a default Flow's, apply_flow_shape),
  // the fixed cost, the transfer factor and the uses the packets do not model.
  struct FlowShape {
    FlowKind kind = FlowKind::GpuWrite;
    bool to_switch = false, codec = false;
    bool in_gpu_order = false;  // read: source k is accelerator k, for every k (Flow::in_gpu_order)
    NodeId initiator = kNoNode;
    int plane = -1;
    std::uint32_t n = 0, n_min = 0;
    std::uint64_t bytes = 0;
    double plain_per_byte = 0, reduce_inv_GBps = 0;
    double fixed_ns = 0, factor = 1;
    double latency_ns = 0;  // the step's latency (StepCost::latency_total_ns): what an empty flow takes
    InlineVec<NodeId, StepCosts::kMaxRegions> dsts, srcs;
    InlineVec<std::uint64_t, StepCosts::kMaxRegions> src_bytes;
    InlineVec<std::uint32_t, StepCosts::kMaxRegions> src_n;
    InlineVec<ResourceUse, 1> uses;
    // All but the lists of destinations and sources: make_flow_shape sizes the
    // ones of its kind (resize() value-initialises only what it adds to the
    // last step's, and every entry is then written) and clears the others.
    void clear_but_lists() {
      kind = FlowKind::GpuWrite, to_switch = false, codec = false, in_gpu_order = false, initiator = kNoNode, plane = -1;
      n = 0, n_min = 0, bytes = 0, plain_per_byte = 0, reduce_inv_GBps = 0, fixed_ns = 0, factor = 1, latency_ns = 0;
      uses.clear();
    }
  };
  struct Shape {
    std::int8_t network = -1;  // 1: a network step whose `flow` is made; 0: not a network step; -1: not known
    // A flow of a step of this shape, done, that holds the shape's fields
    // (Flow::shape), kept for the shape's next step (apply_flow_shape then
    // resets the others only); at most one, the others go to the pool.
    FlowId parked = kNoFlow;
    FlowShape flow;
  };
  std::vector<Shape> shapes_;  // by costs_.shape()
  FlowShape flow_shape_;       // setup_flow: a step without a shape (scratch)
  bool packet_entries_ = true;       // testing::packet_entries, as the run started
  std::uint64_t packet_entries_made_ = 0;
  bool group_log_ = true;            // testing::group_log (and packet_entries_), as the run started
  std::uint64_t group_log_entries_ = 0;
  std::vector<GroupLog> logs_;       // star: per plane (LogCursor::log points here; never resized once set)
  // Flows that kept their shape's fields (testing::flow_shapes_kept). Last: the
  // fields above keep their offsets (the event loop's code is unchanged).
  std::uint64_t shapes_kept_ = 0;
  std::uint64_t succ_blocks_ = 0;  // testing::successor_blocks
  static constexpr int kWideDeps = 16;  // set-up: a dependency list this long or longer may be filled by lists
  bool distinct(const StepId* dep, std::size_t n);
};

}  // namespace scin::packet
