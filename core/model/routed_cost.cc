#include "model/routed_cost.h"

#include "fabric/graph.h"

#include <algorithm>
#include <utility>
#include <vector>

namespace scin::routed {
namespace {

void add_latency(StepCost& c, Term t, double ns) { c.latency_ns[static_cast<int>(t)] += ns; }

// The planes a step uses: all (kAllPlanes, each an equal share), or the plane
// of the switch it names or is issued by.
// `end`: one past the last plane costed (plane 0 alone with first_plane_only).
struct Planes {
  int first = 0, count = 1, end = 1;
};
Planes planes_of(const Schedule& s, const Step& st, bool first_plane_only) {
  if (s.is_switch(st.initiator)) return {s.plane_of(st.initiator), 1, s.plane_of(st.initiator) + 1};
  if (s.is_switch(st.via)) return {s.plane_of(st.via), 1, s.plane_of(st.via) + 1};
  const int planes = std::max(1, s.planes);
  return {0, planes, first_plane_only ? 1 : planes};
}

// link_payload_GBps' two rates for one step's `factor`: a port's payload rate
// as on a star, framing ceiling included (port_payload_GBps); a trunk carries
// the same packets at its own raw rate.
struct LinkRates {
  double port, trunk;
  double of(ResourceKind k) const { return k != ResourceKind::Uplink && k != ResourceKind::Downlink ? port : trunk; }
};
LinkRates link_rates(const Config& cfg, const Schedule& s, double factor) {
  const double port = port_payload_GBps(cfg, s, factor);
  return {port, port * trunk_raw_GBps(cfg, s) / port_raw_GBps(cfg, s)};
}

// Bytes per resource, merged: several routes may share a link.
using Loads = std::vector<std::pair<int, double>>;

// The latency of a route of `nodes` nodes from a to b (none when a == b).
PathLatency route_latency(const Config& cfg, NodeId a, NodeId b, int nodes) {
  PathLatency l;
  if (a == b) return l;
  l.link_ns = (nodes - 1) * cfg.links.latency_ns;
  l.switch_ns = std::max(0, nodes - 2) * cfg.sw.latency_ns;
  return l;
}

// Lists the route's links in `out` and returns its latency (path_latency's, without
// routing again: the hop count does not depend on the spine ECMP picks). With
// `last` (a multicast tree), a link the previous route used at the same hop is not
// listed again: the destinations' routes share their first hops (the sender's port,
// its leaf's uplink) and, for neighbours at one leaf, the spine's downlink.
PathLatency add_route(const Config& cfg, const Schedule& s, const ResourceMap& rm, NodeId a, NodeId b, int plane,
                      double bytes, Loads& out, int spine = -1, int (*last)[4] = nullptr) {
  NodeId path[5];
  const int n = s.route(a, b, plane, path, spine);
  for (int k = 0; k + 1 < n; ++k) {
    const int r = link_resource(s, rm, path[k], path[k + 1], plane);
    if (last) {
      if (r == (*last)[k]) continue;
      (*last)[k] = r;
    }
    out.emplace_back(r, bytes);
  }
  return route_latency(cfg, a, b, n);
}

// Sums the bytes of equal resources (`tree`: a multicast tree, each link carries the data once).
void book(const Config& cfg, const Schedule& s, const ResourceMap& rm, Loads& loads, bool tree, double factor,
          StepCost& c) {
  // (Pairs compare in full, so a sorted list is the one sort() would give.)
  if (!std::is_sorted(loads.begin(), loads.end())) std::sort(loads.begin(), loads.end());
  // (The rates found once: a multicast at 1024 accelerators lists a thousand ports.)
  const LinkRates rates = link_rates(cfg, s, factor);
  c.uses.reserve(c.uses.size() + loads.size());
  for (std::size_t i = 0; i < loads.size();) {
    std::size_t j = i;
    double b = 0;
    for (; j < loads.size() && loads[j].first == loads[i].first; ++j) b = tree ? loads[j].second : b + loads[j].second;
    const int r = loads[i].first;
    const ResourceKind k = rm.kind(r);
    c.uses.push_back({r, k, b, rates.of(k), Term::Serialisation, false});
    i = j;
  }
  loads.clear();
}

// Port classes on two tiers (step_cost's `port_classes`): where the
// accelerators a step names (its sources or destinations) are whole leaves,
// in order (accelerator k at position k from a leaf's first), each of those
// leaves' ports of one direction is used by the step once per member, alike:
// the class is booked as the leaf's first accelerator's port. Returns how
// many named nodes each costed one stands for: 1 where the step names no
// accelerator (its uses are trunks, booked as they are), the accelerators per
// leaf where they are whole leaves, 0 where they are anything else (some
// accelerators, switches among them, another order): the step fails the class test.
template <class Regions>
std::size_t leaf_class_stride(const Schedule& s, const Regions& regions) {
  std::size_t accelerators = 0;
  for (const auto& r : regions) accelerators += s.is_switch(s.buffers[r.buffer].node) ? 0 : 1;
  if (accelerators == 0) return 1;
  const auto m = static_cast<std::size_t>(s.gpus_per_leaf());
  const NodeId first = s.buffers[regions[0].buffer].node;
  if (accelerators != regions.size() || regions.size() % m != 0 || static_cast<std::size_t>(first) % m != 0) return 0;
  for (std::size_t k = 0; k < regions.size(); ++k)
    if (s.buffers[regions[k].buffer].node != first + static_cast<NodeId>(k)) return 0;
  return m;
}

// A multicast tree from an accelerator to accelerators on two tiers, plane
// `p`: the links add_route() lists for every destination in turn, each once,
// in increasing resource order where the map numbers them so (the sender's
// port, the destinations' ports in their order, then per leaf the spine's
// downlink to it or, at the sender's leaf, its uplink); `worst` as the loop
// over the destinations finds it. Without routing each destination (at 1024
// accelerators an NVLS store lists 1,024 and was a third of a point).
// False (nothing listed) for anything else: the caller routes.
bool tree_loads(const Config& cfg, const Schedule& s, const ResourceMap& rm, const Step& st, int p, int spine,
                double share, bool first, PathLatency& worst, Loads& out) {
  const NodeId a = st.initiator;
  if (!s.two_tier() || s.is_switch(a) || spine < 0) return false;
  const int la = s.leaf_of(a);
  thread_local std::vector<char> to_leaf;
  to_leaf.assign(static_cast<std::size_t>(s.leaves), 0);
  const PathLatency near = route_latency(cfg, 0, 1, 3), far = route_latency(cfg, 0, 1, 5);
  const std::size_t from = out.size();
  bool any = false, cross = false;
  out.emplace_back(rm.egress(a, p), share);
  for (const Region& r : st.dsts) {
    const NodeId b = s.buffers[r.buffer].node;
    if (s.is_switch(b)) {
      out.resize(from);
      return false;
    }
    if (b == a) continue;
    any = true;
    const int lb = s.leaf_of(b);
    out.emplace_back(rm.ingress(b, p), share);
    if (lb != la) cross = true, to_leaf[static_cast<std::size_t>(lb)] = 1;
    const PathLatency& l = lb != la ? far : near;
    if (first && l.total() > worst.total()) worst = l;
  }
  if (!any) {
    out.resize(from);
    return true;
  }
  for (int l = 0; cross && l < s.leaves; ++l) {
    if (l == la) out.emplace_back(rm.uplink(p, la, spine), share);
    else if (to_leaf[static_cast<std::size_t>(l)]) out.emplace_back(rm.downlink(p, spine, l), share);
  }
  return true;
}

}  // namespace

PathLatency path_latency(const Config& cfg, const Schedule& s, NodeId a, NodeId b, int plane) {
  if (a == b) return {};
  NodeId path[5];
  return route_latency(cfg, a, b, s.route(a, b, plane, path));
}

int link_resource(const Schedule& s, const ResourceMap& rm, NodeId a, NodeId b, int plane) {
  const int ta = s.tier(a), tb = s.tier(b);
  if (ta == 0) return rm.egress(a, plane);
  if (tb == 0) return rm.ingress(b, plane);
  if (ta == 1) return rm.uplink(plane, s.leaf_of(a), s.spine_of(b));
  return rm.downlink(plane, s.spine_of(a), s.leaf_of(b));
}

double trunk_raw_GBps(const Config& cfg, const Schedule& s) {
  return port_raw_GBps(cfg, s) * s.gpus_per_leaf() / cfg.fabric.oversubscription / std::max(1, s.spines);
}

double link_payload_GBps(const Config& cfg, const Schedule& s, const ResourceMap& rm, int r, double factor) {
  return link_rates(cfg, s, factor).of(rm.kind(r));
}

void signal_cost(const Config& cfg, const Schedule& s, const Step& st, StepCost& c) {
  const int plane = s.is_switch(st.initiator) ? s.plane_of(st.initiator)
                    : s.is_switch(st.target)  ? s.plane_of(st.target)
                                              : 0;
  const PathLatency l = path_latency(cfg, s, st.initiator, st.target, plane);
  add_latency(c, Term::LinkLatency, l.link_ns);
  add_latency(c, Term::SwitchLatency, l.switch_ns);
}

bool write_cost(const Config& cfg, const Schedule& s, const ResourceMap& rm, const Step& st, double bytes,
                double factor, bool first_plane_only, StepCost& c, bool port_classes) {
  // (Port classes: each leaf's first destination alone. The others' routes
  // add only their own ingress ports: their leaf's first's route lists the
  // links they share, which the tree carries once.)
  // (An accelerator's transfer uses its own egress port alone: not a class.)
  const std::size_t stride = !port_classes ? 1 : s.is_switch(st.initiator) ? leaf_class_stride(s, st.dsts) : 0;
  if (stride == 0) return false;
  const Planes ps = planes_of(s, st, first_plane_only);
  const double share = bytes / ps.count;
  PathLatency worst;
  thread_local Loads loads;   // reused: a multicast to N GPUs lists ~N+2 links
  loads.clear();
  // A multicast is one tree: all its leaf-to-leaf branches cross one spine (ECMP on the sender).
  const int spine = st.dsts.size() > 1 ? ecmp_pick(st.initiator, kNoNode, s.spines) : -1;
  for (int p = ps.first; p < ps.end; ++p) {
    int last[4] = {-1, -1, -1, -1};
    if (stride == 1 && tree_loads(cfg, s, rm, st, p, spine, share, p == ps.first, worst, loads)) {
      book(cfg, s, rm, loads, true, factor, c);
      continue;
    }
    for (std::size_t k = 0; k < st.dsts.size(); k += stride) {
      const NodeId to = s.buffers[st.dsts[k].buffer].node;
      if (to == st.initiator) continue;
      const PathLatency l = add_route(cfg, s, rm, st.initiator, to, p, share, loads, spine, &last);
      if (p == ps.first && l.total() > worst.total()) worst = l;
    }
    book(cfg, s, rm, loads, true, factor, c);
  }
  add_latency(c, Term::LinkLatency, worst.link_ns);
  add_latency(c, Term::SwitchLatency, worst.switch_ns);
  return true;
}

bool isa_read_cost(const Config& cfg, const Schedule& s, const ResourceMap& rm, const Step& st, double factor,
                   StepCost& c, bool port_classes) {
  const NodeId isa = st.initiator;
  const int plane = s.plane_of(isa);
  // (Port classes: a leaf's ISA reading the same bytes from each of its own
  // accelerators, one hop each, costs the first alone; a read of switches
  // uses trunks only. Sources further away share trunks: not a class.)
  std::size_t stride = port_classes ? leaf_class_stride(s, st.srcs) : 1;
  if (stride > 1) {
    const auto m = static_cast<std::size_t>(s.gpus_per_leaf());
    const NodeId first = s.buffers[st.srcs[0].buffer].node;
    const std::uint64_t b0 = region_bytes(s, st.srcs[0]);
    bool own = st.srcs.size() == m && s.tier(isa) == 1 && s.leaf_of(isa) == s.leaf_of(first);
    for (std::size_t k = 1; own && k < m; ++k) own = region_bytes(s, st.srcs[k]) == b0;
    if (!own) stride = 0;
  }
  if (stride == 0) return false;
  PathLatency worst;
  bool from_memory = false;
  for (std::size_t k = 0; k < st.srcs.size(); k += stride) {
    const Region& r = st.srcs[k];
    const NodeId from = s.buffers[r.buffer].node;
    const PathLatency l = path_latency(cfg, s, from, isa, plane);
    if (l.total() > worst.total()) worst = l;
    from_memory = from_memory || !s.is_switch(from);
    // Little's Law: at most max_outstanding_bytes in flight per source over its round trip.
    const double rtt = 2 * l.total() + (s.is_switch(from) ? cfg.sw.isa.op_latency_ns : cfg.accelerator.mem_latency_ns);
    const double window_GBps = static_cast<double>(cfg.sw.isa.max_outstanding_bytes) / rtt;
    NodeId path[5];
    const int n = s.route(from, isa, plane, path);
    const double bytes = static_cast<double>(region_bytes(s, r));
    for (int k = 0; k + 1 < n; ++k) {
      const int res = link_resource(s, rm, path[k], path[k + 1], plane);
      const double rate = std::min(link_payload_GBps(cfg, s, rm, res, factor), window_GBps);
      c.uses.push_back({res, rm.kind(res), bytes, rate, Term::Serialisation, false});
    }
  }
  add_latency(c, Term::LinkLatency, 2 * worst.link_ns);
  add_latency(c, Term::SwitchLatency, 2 * worst.switch_ns);
  add_latency(c, from_memory ? Term::MemoryLatency : Term::Sync,
              from_memory ? cfg.accelerator.mem_latency_ns : cfg.sw.isa.op_latency_ns);
  add_latency(c, Term::Sync, cfg.sw.isa.op_latency_ns);
  return true;
}

void accel_read_cost(const Config& cfg, const Schedule& s, const ResourceMap& rm, const Step& st, double factor,
                     bool first_plane_only, StepCost& c) {
  const NodeId to = s.buffers[st.dsts[0].buffer].node;
  const bool reduce_in_switch = st.srcs.size() > 1 && st.unit == Unit::NvlsReduce;
  // The reducing switch: the reader's leaf if every source hangs off it, else a spine (ECMP on the reader).
  bool one_leaf = true;
  for (const auto& r : st.srcs) one_leaf = one_leaf && s.leaf_of(s.buffers[r.buffer].node) == s.leaf_of(to);
  const Planes ps = planes_of(s, st, first_plane_only);
  const double share = 1.0 / ps.count;
  PathLatency up, down;
  thread_local Loads loads;   // reused: a multicast to N GPUs lists ~N+2 links
  loads.clear();
  double in_plain = 0;
  for (const auto& r : st.srcs) in_plain += plain_bytes(s, r);
  for (int p = ps.first; p < ps.end; ++p) {
    const NodeId red = !reduce_in_switch ? to
                       : one_leaf        ? s.leaf_node(p, s.leaf_of(to))
                                         : s.spine_node(p, ecmp_pick(st.initiator, kNoNode, s.spines));
    for (const auto& r : st.srcs) {
      const NodeId from = s.buffers[r.buffer].node;
      if (from == to && st.srcs.size() == 1) continue;
      const PathLatency l = add_route(cfg, s, rm, from, red, p, static_cast<double>(region_bytes(s, r)) * share, loads);
      if (p == ps.first && l.total() > up.total()) up = l;
    }
    if (red != to) {
      const PathLatency l = add_route(cfg, s, rm, red, to, p, static_cast<double>(region_bytes(s, st.dsts[0])) * share, loads);
      if (p == ps.first) down = l;
    }
    book(cfg, s, rm, loads, false, factor, c);
    if (reduce_in_switch)
      c.uses.push_back({rm.nvls(red - s.gpus), ResourceKind::NvlsReduce, in_plain * share, cfg.tuning.nvls_reduce_GBps,
                        Term::Reduction, false});
  }
  // Request out and response back along both legs; the reducing switch is crossed both ways.
  add_latency(c, Term::LinkLatency, 2 * (up.link_ns + down.link_ns));
  add_latency(c, Term::SwitchLatency, 2 * (up.switch_ns + down.switch_ns) + (reduce_in_switch ? 2 * cfg.sw.latency_ns : 0));
  add_latency(c, Term::MemoryLatency, cfg.accelerator.mem_latency_ns);
}

}  // namespace scin::routed
