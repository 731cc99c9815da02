#include "engines/analytic/analytic.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <queue>

#include "base/error.h"
#include "fabric/params.h"

namespace scin {

const char* to_string(Term t) {
  switch (t) {
    case Term::Launch: return "launch";
    case Term::Sync: return "sync";
    case Term::LinkLatency: return "link_latency";
    case Term::SwitchLatency: return "switch_latency";
    case Term::MemoryLatency: return "memory_latency";
    case Term::Serialisation: return "serialisation";
    case Term::Reduction: return "reduction";
    case Term::Quantisation: return "quantisation";
    case Term::Count: break;
  }
  return "?";
}

const char* describe(Term t) {
  switch (t) {
    case Term::Launch: return "kernel launches and stream operations on the accelerators";
    case Term::Sync: return "barriers, flag and counter polls, protocol handshakes per step";
    case Term::LinkLatency: return "wire and PHY traversals between accelerators and switches";
    case Term::SwitchLatency: return "port-to-port traversals of switch planes";
    case Term::MemoryLatency: return "HBM access latency of remote reads";
    case Term::Serialisation: return "bytes divided by the link bandwidth left for payload";
    case Term::Reduction: return "summing: ISA / NVLS reduction units or accelerator HBM passes";
    case Term::Quantisation: return "(de)quantising: INQ unit or accelerator HBM passes";
    case Term::Count: break;
  }
  return "";
}

double Breakdown::total_ns() const {
  double t = 0;
  for (double x : ns) t += x;
  return t;
}

// ------------------------------------------------------------ resources

int ResourceMap::egress(int gpu, int k) const {
  return topology == Topology::Star ? gpu * planes + k : gpu * gpus + k;
}
int ResourceMap::ingress(int gpu, int k) const {
  // On a mesh the link from k to gpu is one resource: k's egress towards gpu.
  return topology == Topology::Star ? gpus * planes + gpu * planes + k : egress(k, gpu);
}
int ResourceMap::nvls(int plane) const { return ports() + plane; }
int ResourceMap::isa_reduce(int plane) const { return ports() + planes + plane; }
int ResourceMap::isa_inq(int plane) const { return ports() + 2 * planes + plane; }
int ResourceMap::hbm(int gpu) const { return ports() + 3 * planes + gpu; }
int ResourceMap::ports() const {
  return topology == Topology::Star ? 2 * gpus * planes : gpus * gpus;
}
int ResourceMap::count() const { return hbm(gpus); }

std::string ResourceMap::name(int r) const {
  if (r < ports()) {
    if (topology == Topology::Mesh) return fmt::format("link r{}->r{}", r / gpus, r % gpus);
    const int half = gpus * planes;
    const int x = r % half;
    return fmt::format("{} r{} plane {}", r < half ? "egress" : "ingress", x / planes, x % planes);
  }
  r -= ports();
  if (r < planes) return fmt::format("nvls plane {}", r);
  if (r < 2 * planes) return fmt::format("isa reduce plane {}", r - planes);
  if (r < 3 * planes) return fmt::format("inq plane {}", r - 2 * planes);
  return fmt::format("hbm r{}", r - 3 * planes);
}

ResourceMap resource_map(const Schedule& s) {
  ResourceMap m;
  m.gpus = s.gpus;
  m.planes = std::max(1, s.planes);
  m.topology = s.topology;
  return m;
}

// ------------------------------------------------------------ step costs

namespace {

const RingProtocolSpec& protocol_spec(const Config& cfg, RingProtocol p) {
  switch (p) {
    case RingProtocol::LL: return cfg.ring.ll;
    case RingProtocol::LL128: return cfg.ring.ll128;
    default: return cfg.ring.simple;
  }
}

struct Ctx {
  const Config& cfg;
  const Schedule& s;
  const ResourceMap& rm;
  double link_GBps;   // payload bandwidth per accelerator per direction, all planes
  int planes;
};

void add_latency(StepCost& c, Term t, double ns) { c.latency_ns[static_cast<int>(t)] += ns; }

// One traversal accelerator <-> switch, or accelerator <-> accelerator.
void add_path(const Ctx& x, StepCost& c, NodeId from, NodeId to) {
  const bool a_sw = x.s.is_switch(from), b_sw = x.s.is_switch(to);
  if (from == to) return;
  add_latency(c, Term::LinkLatency, x.cfg.links.latency_ns);
  if (!a_sw && !b_sw && x.s.topology == Topology::Star) {
    add_latency(c, Term::SwitchLatency, x.cfg.sw.latency_ns);
    add_latency(c, Term::LinkLatency, x.cfg.links.latency_ns);
  }
}

// Planes a transfer crossing `via` uses, each carrying an equal share.
std::vector<int> planes_of(const Ctx& x, NodeId via) {
  std::vector<int> out;
  if (via == kAllPlanes) {
    for (int p = 0; p < x.planes; ++p) out.push_back(p);
  } else if (via >= x.s.gpus) {
    out.push_back(via - x.s.gpus);
  }
  return out;
}

void use_egress(const Ctx& x, StepCost& c, NodeId gpu, NodeId via, NodeId peer, double bytes, double factor) {
  if (x.s.topology == Topology::Mesh) {
    c.uses.push_back({x.rm.egress(gpu, peer), bytes, x.link_GBps * factor / (x.s.gpus - 1), Term::Serialisation});
    return;
  }
  auto ps = planes_of(x, via);
  for (int p : ps)
    c.uses.push_back({x.rm.egress(gpu, p), bytes / static_cast<double>(ps.size()),
                      x.link_GBps * factor / x.planes, Term::Serialisation});
}

void use_ingress(const Ctx& x, StepCost& c, NodeId gpu, NodeId via, double bytes, double factor) {
  auto ps = planes_of(x, via);
  for (int p : ps)
    c.uses.push_back({x.rm.ingress(gpu, p), bytes / static_cast<double>(ps.size()),
                      x.link_GBps * factor / x.planes, Term::Serialisation});
}

double hbm_GBps(const Config& cfg) {
  return cfg.accelerator.hbm_bandwidth_GBps * cfg.accelerator.hbm_efficiency;
}

bool any_codec(const Schedule& s, const Step& st) {
  for (const auto& r : st.srcs)
    if (is_codec(s.buffers[r.buffer].format)) return true;
  for (const auto& r : st.dsts)
    if (is_codec(s.buffers[r.buffer].format)) return true;
  return false;
}

// Bytes of the step's data as plain (unquantised) values: what an ALU processes.
double plain_bytes(const Schedule& s, const Region& r) {
  const auto& b = s.buffers[r.buffer];
  if (is_codec(b.format)) return static_cast<double>(r.count) * dtype_bytes_of(s.dtype);
  return static_cast<double>(region_bytes(b, r.count));
}

}  // namespace

double dtype_bytes_of(DType t) { return t == DType::Fp32 ? 4.0 : 2.0; }

StepCost step_cost(const Config& cfg, const Schedule& s, const ResourceMap& rm, const Step& st) {
  const double link = cfg.links.bandwidth_GBps * cfg.links.efficiency;
  Ctx x{cfg, s, rm, link, std::max(1, s.planes)};
  StepCost c;
  const AcceleratorSpec& acc = cfg.accelerator;
  const IsaSpec& isa = cfg.sw.isa;
  const bool on_switch = s.is_switch(st.initiator);
  auto plane_of_switch = [&](NodeId n) { return n - s.gpus; };

  switch (st.kind) {
    case StepKind::Launch:
      c.fixed_ns = acc.launch_overhead_ns + (st.ring_step ? protocol_spec(cfg, st.protocol).base_ns : 0.0);
      c.fixed_term = Term::Launch;
      break;

    case StepKind::Signal:
      add_path(x, c, st.initiator, st.target);
      c.fixed_term = Term::Sync;
      if (st.unit == Unit::IsaReduce) {
        // SCIN: an Arrive is a stream memory op; a flag write is an ISA operation.
        c.fixed_ns = on_switch ? isa.op_latency_ns : acc.sync_overhead_ns;
        c.fixed_term = on_switch ? Term::Sync : Term::Launch;
      }
      break;

    case StepKind::Wait:
      c.fixed_term = Term::Sync;
      if (on_switch) {
        c.fixed_ns = isa.op_latency_ns;
      } else {
        c.fixed_ns = acc.flag_poll_ns;
        if (st.unit == Unit::NvlsReduce) c.fixed_ns += cfg.sw.nvls.sync_overhead_ns;
        if (st.unit == Unit::IsaReduce) c.fixed_ns += acc.sync_overhead_ns;  // stream wait op
      }
      break;

    case StepKind::Write: {
      const double bytes = static_cast<double>(region_bytes(s, st.srcs[0]));
      double factor = 1.0;
      if (st.ring_step) {
        const auto& ps = protocol_spec(cfg, st.protocol);
        factor = ps.bandwidth_fraction;
        c.fixed_ns = ps.step_overhead_ns;
        c.fixed_term = Term::Sync;
      }
      if (st.unit == Unit::NvlsReduce) factor *= cfg.sw.nvls.efficiency;
      if (st.via == kNoNode) {
        c.uses.push_back({rm.hbm(st.initiator), 2 * bytes, hbm_GBps(cfg), Term::Serialisation});
        break;
      }
      if (on_switch) {
        add_latency(c, Term::LinkLatency, cfg.links.latency_ns);
        for (const auto& d : st.dsts) use_ingress(x, c, s.buffers[d.buffer].node, st.via, bytes, factor);
      } else if (st.via == kDirect) {
        add_latency(c, Term::LinkLatency, cfg.links.latency_ns);
        for (const auto& d : st.dsts) {
          const NodeId to = s.buffers[d.buffer].node;
          if (to != st.initiator) use_egress(x, c, st.initiator, st.via, to, bytes, factor);
        }
      } else {
        // Up to the switch plane, across it, down to the destination(s).
        add_latency(c, Term::LinkLatency, 2 * cfg.links.latency_ns);
        add_latency(c, Term::SwitchLatency, cfg.sw.latency_ns);
        use_egress(x, c, st.initiator, st.via, kNoNode, bytes, factor);
        for (const auto& d : st.dsts) {
          const NodeId to = s.buffers[d.buffer].node;
          if (!s.is_switch(to)) use_ingress(x, c, to, st.via, bytes, factor);
        }
      }
      if (st.op == DataOp::Reduce && st.unit == Unit::AccelSm) {
        // Fused receive-reduce: read the arriving and local values, write the sum.
        const NodeId to = s.buffers[st.dsts[0].buffer].node;
        double b = 0;
        for (const auto& r : st.srcs) b += plain_bytes(s, r);
        b += plain_bytes(s, st.dsts[0]);
        c.uses.push_back({rm.hbm(to), b, hbm_GBps(cfg), any_codec(s, st) ? Term::Quantisation : Term::Reduction});
      }
      break;
    }

    case StepKind::Read: {
      const NodeId to = s.buffers[st.dsts[0].buffer].node;
      double factor = st.unit == Unit::NvlsReduce ? cfg.sw.nvls.efficiency : 1.0;
      if (on_switch) {
        // The ISA reads every source: request out, memory access, response back.
        const int p = plane_of_switch(st.initiator);
        const double rtt = 2 * cfg.links.latency_ns + acc.mem_latency_ns;
        add_latency(c, Term::LinkLatency, 2 * cfg.links.latency_ns);
        add_latency(c, Term::MemoryLatency, acc.mem_latency_ns);
        add_latency(c, Term::Sync, isa.op_latency_ns);
        double plain = 0;
        for (const auto& r : st.srcs) {
          const NodeId from = s.buffers[r.buffer].node;
          const double bytes = static_cast<double>(region_bytes(s, r));
          // Little's Law: at most max_outstanding_bytes in flight per port per round trip.
          const double port_GBps = link / x.planes;
          const double window_GBps = static_cast<double>(isa.max_outstanding_bytes) / rtt;
          c.uses.push_back({rm.egress(from, p), bytes, std::min(port_GBps, window_GBps), Term::Serialisation});
          plain += plain_bytes(s, r);
        }
        if (st.op == DataOp::Reduce) c.uses.push_back({rm.isa_reduce(p), plain, isa.reduce_GBps, Term::Reduction});
        if (any_codec(s, st)) c.uses.push_back({rm.isa_inq(p), plain, isa.inq_GBps, Term::Quantisation});
      } else {
        // An accelerator reads (NVLS ld_reduce when several sources are summed in the switch).
        NodeId sw = st.via >= s.gpus ? st.via : (s.topology == Topology::Star ? s.switch_node(0) : kNoNode);
        if (sw == kNoNode) {
          add_latency(c, Term::LinkLatency, 2 * cfg.links.latency_ns);
        } else {
          add_latency(c, Term::LinkLatency, 4 * cfg.links.latency_ns);
          add_latency(c, Term::SwitchLatency, 2 * cfg.sw.latency_ns);
        }
        add_latency(c, Term::MemoryLatency, acc.mem_latency_ns);
        for (const auto& r : st.srcs) {
          const NodeId from = s.buffers[r.buffer].node;
          if (from == to && st.srcs.size() == 1) continue;
          use_egress(x, c, from, st.via, to, static_cast<double>(region_bytes(s, r)), factor);
        }
        if (st.via != kDirect) use_ingress(x, c, to, st.via, static_cast<double>(region_bytes(s, st.dsts[0])), factor);
      }
      break;
    }

    case StepKind::Compute: {
      double in = 0, out = 0;
      for (const auto& r : st.srcs) in += static_cast<double>(region_bytes(s, r));
      for (const auto& r : st.dsts) out += static_cast<double>(region_bytes(s, r));
      const Term t = any_codec(s, st) ? Term::Quantisation : Term::Reduction;
      if (on_switch) {
        const int p = plane_of_switch(st.initiator);
        double plain = 0;
        for (const auto& r : st.srcs) plain += plain_bytes(s, r);
        if (st.unit == Unit::IsaInq) c.uses.push_back({rm.isa_inq(p), plain, isa.inq_GBps, t});
        else c.uses.push_back({rm.isa_reduce(p), plain, isa.reduce_GBps, t});
        add_latency(c, Term::Sync, isa.op_latency_ns);
      } else {
        c.uses.push_back({rm.hbm(st.initiator), in + out, hbm_GBps(cfg), t});
      }
      break;
    }
  }
  return c;
}

// ------------------------------------------------------------ the engine

AnalyticResult run_analytic(const Config& cfg, const Schedule& s) {
  const ResourceMap rm = resource_map(s);
  const std::size_t n = s.steps.size();
  AnalyticResult res;
  res.steps.resize(n);
  if (n == 0) return res;

  std::vector<StepCost> costs(n);
  for (std::size_t i = 0; i < n; ++i) costs[i] = step_cost(cfg, s, rm, s.steps[i]);

  // Successor lists and remaining-dependency counts.
  std::vector<std::vector<StepId>> succ(n);
  std::vector<int> pending(n, 0);
  for (std::size_t i = 0; i < n; ++i)
    for (StepId d : s.steps[i].deps) {
      succ[d].push_back(static_cast<StepId>(i));
      ++pending[i];
    }

  // Each resource is a FCFS queue: a step's use of it starts once the step is
  // ready (deps finished, fixed cost paid) and the previous user is done. The
  // uses of one step proceed independently (an egress port and an ingress port
  // drain in parallel), and the step's data has arrived once its last use has
  // ended and the latency has passed.
  struct Use { double start = 0, end = 0; StepId holder = kNoStep; int holder_use = -1; };
  std::vector<std::size_t> first_use(n + 1, 0);
  for (std::size_t i = 0; i < n; ++i) first_use[i + 1] = first_use[i] + costs[i].uses.size();
  std::vector<Use> uses(first_use[n]);
  // A resource's reservations, sorted and disjoint. A use takes the earliest
  // gap at or after its ready time that is long enough: a unit or port serves
  // whoever is ready while reservations made for later data wait (backfilling),
  // which is what lets a multicast use a port between chunks of reads.
  struct Busy { double start, end; StepId step; int use; };
  std::vector<std::vector<Busy>> resources(static_cast<std::size_t>(rm.count()));
  std::vector<double> ready(n, 0), occ_end(n, 0);
  std::vector<StepId> bound_dep(n, kNoStep);
  std::vector<int> bound_use(n, -1);  // the use that ended last (-1: none)

  using Item = std::pair<double, StepId>;  // (ready time, index): FCFS at resources, ties by order
  std::priority_queue<Item, std::vector<Item>, std::greater<Item>> q;
  for (std::size_t i = 0; i < n; ++i)
    if (pending[i] == 0) q.emplace(0.0, static_cast<StepId>(i));

  std::size_t done = 0;
  while (!q.empty()) {
    auto [r, i] = q.top();
    q.pop();
    ++done;
    const StepCost& c = costs[i];
    const double t0 = r + c.fixed_ns;
    double end = t0;
    for (std::size_t k = 0; k < c.uses.size(); ++k) {
      const auto& u = c.uses[k];
      Use& rec = uses[first_use[i] + k];
      rec.start = rec.end = t0;
      if (u.amount_bytes <= 0) continue;
      auto& busy = resources[static_cast<std::size_t>(u.resource)];
      const double d = u.amount_bytes / u.rate_GBps;
      auto it = std::partition_point(busy.begin(), busy.end(), [&](const Busy& b) { return b.end <= t0; });
      for (; it != busy.end() && it->start < rec.start + d; ++it) {
        rec.start = std::max(rec.start, it->end);
        rec.holder = it->step;  // this use waits until that reservation ends
        rec.holder_use = it->use;
      }
      rec.end = rec.start + d;
      busy.insert(it, Busy{rec.start, rec.end, i, static_cast<int>(k)});
      if (rec.end > end) {
        end = rec.end;
        bound_use[i] = static_cast<int>(k);
      }
    }
    double l = 0;
    for (double x : c.latency_ns) l += x;
    occ_end[i] = end;
    res.steps[i].start_ns = r;
    res.steps[i].finish_ns = end + l;
    double best = -1;
    for (StepId d : s.steps[i].deps)
      if (res.steps[d].finish_ns > best) {
        best = res.steps[d].finish_ns;
        bound_dep[i] = d;
      }
    for (StepId nx : succ[i]) {
      ready[nx] = std::max(ready[nx], res.steps[i].finish_ns);
      if (--pending[nx] == 0) q.emplace(ready[nx], nx);
    }
  }
  if (done != n) throw Error(fmt::format("schedule {}: dependency cycle", s.algorithm));

  // Walk back from the last step to finish, attributing every nanosecond.
  StepId last = 0;
  for (std::size_t i = 0; i < n; ++i)
    if (res.steps[i].finish_ns > res.steps[last].finish_ns) last = static_cast<StepId>(i);
  res.time_ns = res.steps[last].finish_ns;

  std::vector<StepId> path;
  StepId cur = last;
  int use = -2;  // -2: the whole step (latency and last use); >=0: only that use
  while (cur != kNoStep) {
    if (path.empty() || path.back() != cur) path.push_back(cur);
    const StepCost& c = costs[cur];
    if (use == -2) {
      for (int t = 0; t < static_cast<int>(Term::Count); ++t) res.breakdown.ns[t] += c.latency_ns[t];
      use = bound_use[cur];
      if (use < 0) {  // no resource: fixed cost, then the latest dep
        res.breakdown[c.fixed_term] += c.fixed_ns;
        cur = bound_dep[cur];
        use = -2;
        continue;
      }
    }
    const Use& rec = uses[first_use[cur] + static_cast<std::size_t>(use)];
    res.breakdown[c.uses[static_cast<std::size_t>(use)].term] += rec.end - rec.start;
    if (rec.holder != kNoStep) {  // queued behind the previous user of this resource
      cur = rec.holder;
      use = rec.holder_use;
      continue;
    }
    res.breakdown[c.fixed_term] += c.fixed_ns;
    cur = bound_dep[cur];
    use = -2;
  }
  std::reverse(path.begin(), path.end());
  res.critical_path = std::move(path);
  res.max_link_bytes = link_bytes(s).max_link_bytes();
  return res;
}

}  // namespace scin
