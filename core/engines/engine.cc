#include "engines/engine.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <unordered_map>
#include <type_traits>
#include <fmt/format.h>

#include "base/error.h"
#include "base/memory.h"
#include "engines/analytic/analytic.h"
#include "engines/data/data_engine.h"
#include "engines/packet/packet_engine.h"
#include "model/cost_model.h"

namespace scin {
namespace {

// The analytic engine's working memory, one per thread and reused from point
// to point: a fresh AnalyticWorkspace costs more than a small point itself
// (its first block of use records was 64Ki records, 1.5 MB of fresh pages, and
// every list is allocated anew; at 8 GPUs that was 60-90% of a point's CPU).
// Results are identical (run_analytic's contract). After a run the workspace
// keeps at most one block of use records and lists of up to kKeep entries, so
// a thread holds about 2 MB between points; a large run's memory is released.
void trim(AnalyticWorkspace& ws) {
  constexpr std::size_t kKeep = std::size_t{1} << 16;
  auto trim_vec = [](auto& v) {
    if (v.capacity() > kKeep) std::decay_t<decltype(v)>().swap(v);
  };
  if (ws.uses.blocks.size() > 1) ws.uses.blocks.resize(1);
  ws.uses.clear();
  trim_vec(ws.succ_first);
  trim_vec(ws.fill);
  trim_vec(ws.succ);
  trim_vec(ws.pending);
  trim_vec(ws.bound_use);
  trim_vec(ws.first_use);
  trim_vec(ws.ready);
  trim_vec(ws.heap);
  if (ws.resources.size() > 4096) decltype(ws.resources)().swap(ws.resources);
  for (auto& q : ws.resources) trim_vec(q.v);
}

AnalyticResult run_analytic_reusing(const Config& cfg, const Schedule& s, const RunContext& ctx) {
  thread_local AnalyticWorkspace ws;
  thread_local bool in_use = false;
  if (in_use) return run_analytic(cfg, s, ctx);  // a run started from inside a run (a progress callback)
  in_use = true;
  struct Done {
    AnalyticWorkspace& ws;
    bool& in_use;
    ~Done() {
      trim(ws);
      in_use = false;
    }
  } done{ws, in_use};
  return run_analytic(cfg, s, ctx, ws);
}

// What a step's resource uses depend on: everything of the step but its
// regions' offsets and sizes (a pipeline's chunks differ only in those) and
// its dependencies; a region of no elements is told apart all the same.
// `sizes`: the regions' sizes too (what the uses' amounts depend on).
void shape_key(const Step& st, std::string& key, bool sizes = false) {
  key.clear();
  auto put = [&](const auto& v) { key.append(reinterpret_cast<const char*>(&v), sizeof v); };
  put(st.kind), put(st.initiator), put(st.target), put(st.via), put(st.op), put(st.accumulate), put(st.accum);
  put(st.unit), put(st.protocol), put(st.ring_step);
  auto regions = [&](const auto& list) {
    put(list.size());
    for (const Region& r : list) {
      put(r.buffer);
      if (sizes) put(r.count);
      else put(r.count == 0);
    }
  };
  regions(st.srcs);
  regions(st.dsts);
}

// The analytic engine's resource uses over a schedule (plane 0's alone with
// every plane alike, as run_analytic books them), each step shape costed once:
// estimating a two-tier NVLS at 256 MiB costed all its chunks' routes and cost
// about three times its run.
std::size_t use_count(const Config& cfg, const Schedule& s) {
  const ResourceMap rm = resource_map(s);
  const bool one_plane = planes_alike(s);
  std::unordered_map<std::string, std::size_t> of_shape;
  std::string key;
  std::size_t uses = 0;
  StepCost c;
  for (const auto& st : s.steps) {
    shape_key(st, key);
    auto it = of_shape.find(key);
    if (it == of_shape.end()) {
      step_cost(cfg, s, rm, st, c, one_plane);
      it = of_shape.emplace(key, c.uses.size()).first;
    }
    uses += it->second;
  }
  return uses;
}

// The packet engine's memory (measured against `scin bench`'s peak resident
// memory, docs/performance.md section 111): per step its state (32 bytes) and
// successor and dependency entries (4 + 4 per dependency); per link its record
// (576 bytes); the flows of the steps that run together (PacketDepth: the
// schedule's depths, each term at the depth where it is largest) and the packets
// they can hold in queues.
// Links: an accelerator's up and down link to each plane, a mesh's direct
// links, on two tiers each leaf's trunks to each spine, both ways.
double packet_links(const Schedule& s) {
  const double g = s.gpus, p = std::max(1, s.planes);
  if (s.planes == 0) return g * (g - 1);
  return 2 * g * p + (s.two_tier() ? 2 * p * s.leaves * s.spines : 0);
}

// What the network steps at one depth of the schedule hold while they run
// (packet_held_bytes): their flows, a record and lists (~512 bytes), a Source
// per source and plane (64 bytes), per packet group of a read its responses'
// count, completion time and staged bytes (16 bytes); their packets, were all
// queued at once, a read's responses (36 bytes each), a write's 32-byte record
// and a 4-byte entry per copy; on a star the bytes the ISA reads from each
// accelerator, every plane together.
struct PacketDepth {
  double flows = 0, queued = 0, isa_bytes = 0, copies = 1;

  void add(const Schedule& s, const Step& st, double payload) {
    flows += 512 + 4.0 * static_cast<double>(st.dsts.size());
    if (st.dsts.empty()) return;
    const double packets = std::ceil(static_cast<double>(region_bytes(s, st.dsts[0])) / payload);
    const double srcs = static_cast<double>(st.srcs.size());
    if (st.kind == StepKind::Read) {
      // (A Source per plane where the read is striped over them, as events are counted above.)
      const bool one_plane = s.is_switch(st.initiator) || st.via >= s.gpus || s.planes <= 1;
      flows += 64 * srcs * (one_plane ? 1 : s.planes) + 16 * packets;
      queued += 36 * srcs * packets;
      if (!s.two_tier() && s.is_switch(st.initiator) && !st.srcs.empty())
        isa_bytes += static_cast<double>(region_bytes(s, st.srcs[0]));
    } else {
      queued += (32 + 4 * static_cast<double>(st.dsts.size())) * packets;
      copies = std::max(copies, static_cast<double>(st.dsts.size()));
    }
  }
};

class AnalyticEngine final : public TimingEngine {
 public:
  EngineId id() const override { return EngineId::Analytic; }
  const char* name() const override { return "analytic"; }
  const char* help() const override {
    return "critical path with alpha-beta costs and resource occupancy (microseconds to milliseconds)";
  }
  // Work: one heap operation and a gap search per step and per resource use.
  // Memory: per step its pending count, start and finish times and first use;
  // per resource use its interval.
  WorkEstimate estimate(const Config& cfg, const Schedule& s) const override {
    const double uses = static_cast<double>(use_count(cfg, s));
    const double steps = static_cast<double>(s.steps.size());
    return {steps, "steps", (steps + uses) * 1e-7, steps * 48 + uses * 40};
  }
  SimResult run(const Config& cfg, const Schedule& s, const RunContext& ctx) const override {
    AnalyticResult a = run_analytic_reusing(cfg, s, ctx);
    SimResult r;
    r.engine = name();
    r.time_ns = a.time_ns;
    r.breakdown = a.breakdown;
    r.max_link_bytes = a.max_link_bytes;
    return r;
  }
};

class PacketEngine final : public TimingEngine {
 public:
  EngineId id() const override { return EngineId::Packet; }
  const char* name() const override { return "packet"; }
  const char* help() const override {
    return "discrete events: packets on links, in switch queues, the NVLS reducer and the ISA (seconds at GiB sizes)";
  }
  // Work: about one event per packet per port it crosses on a star, two per
  // link it crosses on two tiers (its serialisation and its arrival). Every
  // port use of a step, and on two tiers every leaf<->spine link use, is a
  // stream of packets of packet.payload_bytes; non-network steps are one event
  // each. A transfer over every plane is one stream of packets striped over
  // them (a 7-byte chunk is one packet on one plane, not one per plane): a use
  // counts its share of the transfer's packets.
  WorkEstimate estimate(const Config& cfg, const Schedule& s) const override {
    const ResourceMap rm = resource_map(s);
    const double payload = static_cast<double>(std::max<std::uint64_t>(1, cfg.packet.payload_bytes));
    const double per_hop = s.two_tier() ? 2 : 1;
    double events = 0, uses = 0;
    // Steps of one shape and sizes (shape_key: a pipeline's chunks, a ring's
    // phases of one rank; at 1 GiB most of a schedule) have the same uses:
    // costed once (costing each was seconds for NVLS on nvl36x2).
    struct Alike {
      double events = 0, uses = 0;
    };
    std::unordered_map<std::string, Alike> alike;
    std::string key;
    StepCost cost;  // (one for all steps: its uses allocated once)
    for (const auto& st : s.steps) {
      events += 1;
      shape_key(st, key, true);
      auto it = alike.find(key);
      if (it == alike.end()) {
        // As the engine picks a transfer's planes (packet/engine.cc, setup_flow).
        const bool one_plane = s.is_switch(st.initiator) || st.via >= s.gpus || s.planes <= 1;
        const double spread = one_plane ? 1 : s.planes;
        step_cost(cfg, s, rm, st, cost);
        Alike a;
        for (const auto& u : cost.uses) {
          a.uses += 1;
          if (is_port(u.kind) || u.kind == ResourceKind::Uplink || u.kind == ResourceKind::Downlink)
            a.events += per_hop * std::ceil(u.amount_bytes * spread / payload) / spread;
        }
        it = alike.emplace(key, a).first;
      }
      events += it->second.events;
      uses += it->second.uses;
    }
    // The width: the most network steps at one depth of the schedule (its
    // dependencies are earlier steps, so one pass finds every step's depth),
    // and what the network steps at each depth hold (PacketDepth).
    std::vector<std::uint32_t> depth(s.steps.size(), 0), at_depth;
    std::vector<PacketDepth> held;
    double width = 0, deps = 0;
    for (std::size_t i = 0; i < s.steps.size(); ++i) {
      const Step& st = s.steps[i];
      std::uint32_t d = 0;
      for (const StepId p : st.deps) d = std::max(d, depth[p] + 1);
      depth[i] = d;
      deps += static_cast<double>(st.deps.size());
      if (st.kind != StepKind::Write && st.kind != StepKind::Read) continue;
      if (at_depth.size() <= d) at_depth.resize(d + 1, 0), held.resize(d + 1);
      width = std::max(width, static_cast<double>(++at_depth[d]));
      held[d].add(s, st, payload);
    }
    // Each term at the depth where it is largest (their sum is at least any
    // one depth's, and each is smooth in the fabric's size: estimate() in
    // simulate.h extrapolates them).
    PacketDepth most;
    for (const PacketDepth& h : held) {
      most.flows = std::max(most.flows, h.flows), most.queued = std::max(most.queued, h.queued);
      most.isa_bytes = std::max(most.isa_bytes, h.isa_bytes), most.copies = std::max(most.copies, h.copies);
    }
    const double most_bytes = packet_held_bytes(cfg, most.flows, most.queued, most.isa_bytes, most.copies);
    const double steps = static_cast<double>(s.steps.size());
    // (3 MB: what any run allocates, its event queue's blocks and per-thread arrays.)
    const double memory = 3e6 + steps * 48 + deps * 8 + uses * 24 + packet_links(s) * 576 + most_bytes;
    WorkEstimate w{events, "events", packet_seconds(s.two_tier(), events, uses, steps, width), memory};
    w.uses = uses, w.steps = steps, w.width = width;
    w.held_flows_bytes = most.flows, w.held_queued_bytes = most.queued, w.held_isa_bytes = most.isa_bytes;
    w.held_copies = most.copies;
    return w;
  }
  SimResult run(const Config& cfg, const Schedule& s, const RunContext& ctx) const override {
    return run_packet_sim(cfg, s, ctx);
  }
};

const AnalyticEngine kAnalytic;
const PacketEngine kPacket;
const DataEngine kData;

}  // namespace

const char* DataEngine::help() const {
  return "executes the schedule on real numbers: values and quantisation error, not time";
}

// Memory: every buffer as float values, plus the inputs and outputs the caller holds.
WorkEstimate DataEngine::estimate(const Config&, const Schedule& s) const {
  double elems = 0;
  for (const auto& st : s.steps) {
    const double k = static_cast<double>(st.srcs.size() + st.dsts.size());
    if (!st.dsts.empty()) elems += k * static_cast<double>(st.dsts[0].count);
  }
  // Memory: the storage the run lays out and touches (DataWorkspace::bytes_for:
  // linear in ranks; declared buffers no step touches, such as one-shot's N x N
  // gather slots, take none), plus the FP32 inputs and outputs run() takes and returns.
  const double io = 2.0 * static_cast<double>(s.gpus) * static_cast<double>(s.elems) * sizeof(float);
  return {elems, "elements", elems / 2e8, static_cast<double>(DataWorkspace::bytes_for(s)) + io};
}

// Least squares on log-time of the run's CPU seconds (with the schedule's
// compilation, estimated apart: simulate.cc, schedule_cost; docs/performance.md
// section 109). Two tiers: 51 runs of nvl36x2 and nvl576-style, every
// algorithm at 4 KiB, 256 KiB and 4 MiB (0.02-86 s): 20 ns + 4 ns x width^0.4
// per event and 25 ns per use, within 1.8x rms (4.3x at most: ring-q8 and the
// ring at 4 KiB on nvl576-style, estimated longer than they run). Without the
// width (section 107: 80 ns, 100 ns and 1 us a step) two-shot and two-shot-q8
// at 4 MiB on nvl576-style ran 4-7x longer than estimated. A star: 42 runs of
// hgx-h200-8 at 8 and 256 GPUs up to 64 MiB, 40 ns, 50 ns and 1 us (1.7x rms;
// section 107), its cost per event flat in GPUs (section 99).
double packet_seconds(bool two_tier, double events, double uses, double steps, double width) {
  if (!two_tier) return events * 4e-8 + uses * 5e-8 + steps * 1e-6;
  return events * (2e-8 + 4e-9 * std::pow(std::max(1.0, width), 0.4)) + uses * 2.5e-8;
}

// Queued packets are about what the switches' buffers hold. On a star a
// packet waits in an input and an output queue (24-byte entries), each port
// holding packet.port_buffer_bytes of each class (writes, read data). On two
// tiers a packet waits as a 32-byte record with a 4-byte entry per copy, up to
// a switch's fan-out for a multicast's write (a leaf's accelerators and a
// spine, or a spine's leaves), and the accelerators' uplinks' buffers stand
// for all: a trunk's buffer holds packets that left them, and the buffers are
// not all full at once (NVLS at 64 MiB on nvl36x2: 114 MB in all, its bound
// 68 MB of it; at 4 MiB on nvl576-style 203 MB in all for a bound of 540 MB). On a star the ISA
// requests what it reads from every port up to switch.isa.max_outstanding_bytes
// at once, a 16-byte entry per packet (all of a 4 MiB SCIN at 256 GPUs: 67 MB).
double packet_held_bytes(const Config& cfg, double flows_bytes, double queued_bytes, double isa_bytes,
                         double copies) {
  const FabricShape& f = cfg.fabric;
  const double payload = static_cast<double>(std::max<std::uint64_t>(1, cfg.packet.payload_bytes));
  const double per_input = std::ceil(static_cast<double>(cfg.packet.port_buffer_bytes) /
                                     (payload + static_cast<double>(cfg.packet.header_bytes)));
  const double planes = std::max(1, f.planes), ports = static_cast<double>(f.gpus) * planes;
  const bool tiers = f.topology == Topology::TwoTier;
  const double fanout = std::min(copies, std::max(f.gpus / std::max(1.0 * f.leaves, 1.0) + 1, 1.0 * f.leaves));
  const double bound = tiers ? ports * per_input * ((32 + 4) + (32 + 4 * fanout)) : 3 * ports * per_input * 2 * 24;
  const double per_port = std::min(static_cast<double>(cfg.sw.isa.max_outstanding_bytes), isa_bytes / planes);
  return flows_bytes + std::min(queued_bytes, bound) + ports * std::ceil(per_port / payload) * 16;
}

WorkEstimate& WorkEstimate::operator+=(const WorkEstimate& o) {
  amount += o.amount;
  if (!*unit) unit = o.unit;
  seconds += o.seconds;
  memory_bytes += o.memory_bytes;
  uses += o.uses, steps += o.steps, width = std::max(width, o.width);
  return *this;
}

namespace {

std::string rough_duration(double s) {
  if (s < 10) return fmt::format("{:.1f} s", s);
  if (s < 90) return fmt::format("{:.0f} s", s);
  if (s < 5400) return fmt::format("{:.0f} min", s / 60);
  if (s < 172800) return fmt::format("{:.1f} h", s / 3600);
  return fmt::format("{:.0f} days", s / 86400);
}

std::string rough_bytes(double b) {
  if (b >= 1e9) return fmt::format("{:.1f} GB", b / 1e9);
  return fmt::format("{:.0f} MB", std::max(1.0, b / 1e6));
}

}  // namespace

EtaGuess guess_eta(double elapsed_s, double fraction, double estimated_s) {
  if (fraction >= 0.05) return {EtaGuess::From::Progress, elapsed_s * (1 - std::min(1.0, fraction)) / fraction};
  if (estimated_s > elapsed_s) return {EtaGuess::From::Estimate, estimated_s - elapsed_s};
  return {};
}

BudgetCheck check_budget(const WorkEstimate& w, const WorkBudget& b, std::string_view what,
                         std::string_view how_to_override) {
  const double mem_limit = b.max_memory_bytes > 0 ? b.max_memory_bytes
                                                  : static_cast<double>(available_memory_bytes());
  const std::string size = fmt::format("{}: about {:.2g} {} (~{} on one core, {} of memory)", what, w.amount,
                                       *w.unit ? w.unit : "units", rough_duration(w.seconds),
                                       rough_bytes(w.memory_bytes));
  BudgetCheck out;
  if (!b.force && mem_limit > 0 && w.memory_bytes > mem_limit) {
    out.verdict = BudgetVerdict::Refuse;
    out.message = fmt::format("{}, more than the {} available; {}", size, rough_bytes(mem_limit), how_to_override);
  } else if (!b.force && b.max_seconds > 0 && w.seconds > b.max_seconds) {
    out.verdict = BudgetVerdict::Refuse;
    out.message = fmt::format("{}, above the limit of {}; {}", size, rough_duration(b.max_seconds), how_to_override);
  } else if (w.seconds > b.warn_seconds) {
    out.verdict = BudgetVerdict::Warn;
    out.message = size;
  }
  return out;
}

DataResult DataEngine::run(const Schedule& s, const std::vector<std::vector<float>>& inputs_per_rank,
                           const DataOptions& opt, const RunContext& ctx) const {
  return run_data(s, inputs_per_rank, opt, ctx);
}

const std::vector<const Engine*>& engines() {
  static const std::vector<const Engine*> all = {&kAnalytic, &kPacket, &kData};
  return all;
}

const Engine& engine(EngineId id) {
  for (const Engine* e : engines())
    if (e->id() == id) return *e;
  throw Error(fmt::format("engine: no engine with id {}", static_cast<int>(id)));
}

const std::string& to_string(EngineId id) {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const Engine* e : engines()) v.emplace_back(e->name());
    return v;
  }();
  return names.at(static_cast<std::size_t>(id));
}

std::vector<std::string> engine_names() {
  std::vector<std::string> out;
  for (const Engine* e : engines())
    if (dynamic_cast<const TimingEngine*>(e)) out.emplace_back(e->name());
  return out;
}

const TimingEngine& timing_engine(EngineId id, std::string_view field) {
  const Engine& e = engine(id);
  if (const auto* t = dynamic_cast<const TimingEngine*>(&e)) return *t;
  throw Error(fmt::format("{}: '{}' computes values, not time; allowed {}", field, e.name(),
                          fmt::join(engine_names(), ", ")));
}

const DataEngine& data_engine() { return kData; }

EngineId parse_engine(std::string_view name, std::string_view field) {
  std::vector<std::string_view> names;
  for (const Engine* e : engines()) {
    if (name == e->name()) return e->id();
    names.emplace_back(e->name());
  }
  throw Error(fmt::format("{}: '{}' is not available; allowed {}", field, name, fmt::join(names, ", ")));
}

EngineId parse_timing_engine(std::string_view name, std::string_view field) {
  for (const Engine* e : engines())
    if (name == e->name() && dynamic_cast<const TimingEngine*>(e)) return e->id();
  if (name == "data") timing_engine(EngineId::Data, field);  // throws the explanation
  throw Error(fmt::format("{}: '{}' is not available; allowed {}", field, name, fmt::join(engine_names(), ", ")));
}

}  // namespace scin
