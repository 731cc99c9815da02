#include "model/cost_model.h"
#include "model/step_cost_without_ports.h"

#include <algorithm>
#include <cmath>
#include <string_view>
#include <fmt/format.h>

#include "model/routed_cost.h"

namespace scin {

// ------------------------------------------------------------ resources

int ResourceMap::egress(int gpu, int k) const {
  return topology != Topology::Mesh ? gpu * planes + k : gpu * gpus + k;
}
int ResourceMap::ingress(int gpu, int k) const {
  // On a mesh the link from k to gpu is one resource: k's egress towards gpu.
  return topology != Topology::Mesh ? gpus * planes + gpu * planes + k : egress(k, gpu);
}
int ResourceMap::nvls(int sw) const { return ports() + sw; }
int ResourceMap::isa_reduce(int sw) const { return ports() + switches + sw; }
int ResourceMap::isa_inq(int sw) const { return ports() + 2 * switches + sw; }
int ResourceMap::hbm(int gpu) const { return ports() + 3 * switches + gpu; }
int ResourceMap::uplink(int plane, int leaf, int spine) const {
  return hbm(gpus) + 2 * ((plane * leaves + leaf) * spines + spine);
}
int ResourceMap::downlink(int plane, int spine, int leaf) const { return uplink(plane, leaf, spine) + 1; }
int ResourceMap::ports() const { return topology != Topology::Mesh ? 2 * gpus * planes : gpus * gpus; }
int ResourceMap::count() const { return hbm(gpus) + 2 * planes * leaves * spines; }

ResourceKind ResourceMap::kind(int r) const {
  if (r < ports()) {
    if (topology == Topology::Mesh) return ResourceKind::Egress;
    return r < gpus * planes ? ResourceKind::Egress : ResourceKind::Ingress;
  }
  r -= ports();
  if (r < switches) return ResourceKind::NvlsReduce;
  if (r < 2 * switches) return ResourceKind::IsaReduce;
  if (r < 3 * switches) return ResourceKind::IsaInq;
  if (r < 3 * switches + gpus) return ResourceKind::Hbm;
  return (r - 3 * switches - gpus) % 2 == 0 ? ResourceKind::Uplink : ResourceKind::Downlink;
}

std::string ResourceMap::name(int r) const {
  if (r < ports()) {
    if (topology == Topology::Mesh) return fmt::format("link r{}->r{}", r / gpus, r % gpus);
    const int half = gpus * planes;
    const int x = r % half;
    return fmt::format("{} r{} plane {}", r < half ? "egress" : "ingress", x / planes, x % planes);
  }
  r -= ports();
  const char* unit = topology == Topology::TwoTier ? "switch" : "plane";
  if (r < switches) return fmt::format("nvls {} {}", unit, r);
  if (r < 2 * switches) return fmt::format("isa reduce {} {}", unit, r - switches);
  if (r < 3 * switches) return fmt::format("inq {} {}", unit, r - 2 * switches);
  if (r < 3 * switches + gpus) return fmt::format("hbm r{}", r - 3 * switches);
  const int t = r - 3 * switches - gpus;
  const int pair = t / 2, spine = pair % spines, leaf = (pair / spines) % leaves, plane = pair / (spines * leaves);
  return t % 2 == 0 ? fmt::format("uplink plane {} leaf {} -> spine {}", plane, leaf, spine)
                    : fmt::format("downlink plane {} spine {} -> leaf {}", plane, spine, leaf);
}

ResourceMap resource_map(const Schedule& s) {
  ResourceMap m;
  m.gpus = s.gpus;
  m.planes = std::max(1, s.planes);
  m.switches = std::max(1, s.switch_count());
  m.topology = s.topology;
  if (s.two_tier()) {
    m.leaves = s.leaves;
    m.spines = s.spines;
  }
  return m;
}

// ------------------------------------------------------------ rates

const RingProtocolSpec& protocol_spec(const Config& cfg, RingProtocol p) {
  switch (p) {
    case RingProtocol::LL: return cfg.ring.ll;
    case RingProtocol::LL128: return cfg.ring.ll128;
    default: return cfg.ring.simple;
  }
}

double transfer_factor(const Config& cfg, const Schedule& s, const Step& st) {
  double factor = 1.0;
  if (st.kind == StepKind::Write && st.ring_step) factor = protocol_spec(cfg, st.protocol).bandwidth_fraction;
  if (st.unit == Unit::NvlsReduce) factor *= cfg.sw.nvls.efficiency;
  return factor * tuning_factor(cfg, s, st);
}

// ------------------------------------------------------------ issue 15: mid-size regime

namespace {
// StepCost::fed_lead_terms of an ISA read.
constexpr std::uint8_t lead_of_isa_read = 1u << static_cast<int>(Term::LinkLatency) |
                                          1u << static_cast<int>(Term::SwitchLatency) |
                                          1u << static_cast<int>(Term::MemoryLatency);
// (Compared as string_views: the length first, then a fixed-size compare; a
// std::string against a C string called strlen and memcmp every time, per step.)
bool is_shot(const Schedule& s, bool two) {
  const std::string_view a = s.algorithm;
  return two ? (a == "two-shot" || a == "two-shot-q8") : a == "one-shot";
}
bool is_quantised_algorithm(const Schedule& s) {
  const std::string_view a = s.algorithm;
  return a == "scin-inq" || a == "ring-q8" || a == "two-shot-q8";
}
// An algorithm-specific link efficiency relative to links.efficiency (1 when unset).
double relative_efficiency(const Config& cfg, double algo_efficiency) {
  return algo_efficiency > 0 ? algo_efficiency / cfg.links.efficiency : 1.0;
}
}  // namespace

double ramp_fraction(const RampSpec& r, double message_bytes) {
  if (r.half_bytes <= 0 || message_bytes <= 0) return 1.0;
  return 1.0 / (1.0 + std::pow(r.half_bytes / message_bytes, r.exponent));
}

double ring_channel_fraction(const Config& cfg, RingProtocol p, double message_bytes, int gpus) {
  const double nc = cfg.ring.channels;
  if (nc <= 0 || message_bytes <= 0) return 1.0;
  // NCCL's enqueue drops a channel while bytes < channels x threads x threshold
  // (src/enqueue.cc, src/tuning/tuning_general.cc: ncclTuningGetChannels): threads 512 / 640 /
  // 512 (NCCL_{LL,LL128,SIMPLE}_MAX_NTHREADS), threshold 8 / 8 / 64 bytes per thread
  // (NCCL_*_THREAD_THRESHOLD), the ring's LL threshold times the ranks.
  double per_channel = 512.0 * 64;
  if (p == RingProtocol::LL) per_channel = 512.0 * 8 * gpus;
  if (p == RingProtocol::LL128) per_channel = 640.0 * 8;
  const double full = std::max(1.0, nc);
  return std::clamp(message_bytes / per_channel, 1.0, full) / full;
}

double tuning_factor(const Config& cfg, const Schedule& s, const Step& st) {
  if (st.kind != StepKind::Write && st.kind != StepKind::Read) return 1.0;
  const auto& t = cfg.tuning;
  const double S = static_cast<double>(s.bytes);
  double f = 1.0;
  // Fewer channels for smaller messages (ring.channels), then, for LL128 and Simple, the
  // smooth size ramp (ramp.ring: chunk sizes and pipeline depth).
  if (st.kind == StepKind::Write && st.ring_step) f *= ring_channel_fraction(cfg, st.protocol, S, s.gpus);
  if (st.kind == StepKind::Write && st.ring_step && st.protocol != RingProtocol::LL) f *= ramp_fraction(t.ring, S);
  if (st.unit == Unit::NvlsReduce) f *= ramp_fraction(t.nvls, S);
  if (s.is_switch(st.initiator)) f *= relative_efficiency(cfg, t.isa_link_efficiency);
  else if (st.kind == StepKind::Write && !st.ring_step && st.unit != Unit::NvlsReduce) {
    if (is_shot(s, false)) f *= relative_efficiency(cfg, t.one_shot_link_efficiency);
    if (is_shot(s, true)) f *= relative_efficiency(cfg, t.two_shot_link_efficiency);
  }
  return f;
}

double launch_extra_ns(const Config& cfg, const Schedule& s, const Step& st) {
  const auto& t = cfg.tuning;
  double extra = 0;
  if (is_shot(s, false)) extra += t.one_shot_base_ns;
  if (is_shot(s, true)) extra += t.two_shot_base_ns;
  if (is_quantised_algorithm(s)) {
    if (std::string_view(s.algorithm) == "scin-inq" && t.quant_fused)
      extra += cfg.accelerator.sync_overhead_ns - cfg.accelerator.launch_overhead_ns;  // a stream op, no kernel
    else
      extra += t.quant_launch_ns;
  }
  // One process launching on several GPUs issues the launches one after another.
  if (!s.is_switch(st.initiator) && launches_serialised(cfg))
    extra += static_cast<double>(st.initiator % t.gpus_per_process) * t.launch_serial_ns;
  return extra;
}

bool launches_serialised(const Config& cfg) {
  return cfg.tuning.gpus_per_process > 1 && cfg.tuning.launch_serial_ns != 0;
}

double port_raw_GBps(const Config& cfg, const Schedule& s) {
  return s.topology != Topology::Mesh ? cfg.links.bandwidth_GBps / std::max(1, s.planes)
                                      : cfg.links.bandwidth_GBps / std::max(1, s.gpus - 1);
}

double framing_efficiency(const Config& cfg) {
  const auto p = static_cast<double>(cfg.packet.payload_bytes);
  return p / (p + static_cast<double>(cfg.packet.header_bytes));
}

double port_payload_GBps(const Config& cfg, const Schedule& s, double factor) {
  // Every payload byte travels in a packet that also carries a header, so no
  // efficiency (a calibrated per-algorithm one included) lifts the payload rate
  // above raw x P / (P + H).
  const double framing = framing_efficiency(cfg);
  if (cfg.links.efficiency * factor > framing) return port_raw_GBps(cfg, s) * framing;
  return port_raw_GBps(cfg, s) * cfg.links.efficiency * factor;
}

namespace {
double relative_efficiency(const Config& cfg, double algo_efficiency);
}  // namespace

double isa_read_GBps(const Config& cfg, const Schedule& s) {
  const double rtt = 2 * cfg.links.latency_ns + cfg.accelerator.mem_latency_ns;
  const double window_GBps = static_cast<double>(cfg.sw.isa.max_outstanding_bytes) / rtt;
  return std::min(port_payload_GBps(cfg, s, relative_efficiency(cfg, cfg.tuning.isa_link_efficiency)), window_GBps);
}

double isa_reduce_ns_per_byte(const Config& cfg, bool quantised) {
  double inv = 1.0 / cfg.sw.isa.reduce_GBps;
  if (quantised) inv = std::max(inv, 1.0 / cfg.sw.isa.inq_GBps);
  return inv;
}

double hbm_GBps(const Config& cfg) { return cfg.accelerator.hbm_bandwidth_GBps * cfg.accelerator.hbm_efficiency; }

double dtype_bytes_of(DType t) { return t == DType::Fp32 ? 4.0 : 2.0; }

double plain_bytes(const Schedule& s, const Region& r) {
  const auto& b = s.buffers[r.buffer];
  if (is_codec(b.format)) return static_cast<double>(r.count) * dtype_bytes_of(s.dtype);
  return static_cast<double>(region_bytes(b, r.count));
}

// Sum of plain_bytes(s, r) over `n` regions, added in order from 0. A region of
// the same count and buffer format (block, scale) as the one before has its
// value: plain_bytes() reads nothing else (and the schedule's dtype). An NVLS
// ld_reduce at 1024 accelerators sums 1024 sources of one size per step, and
// its steps are costed one by one (step_costs.h does not memoise them).
namespace {
double plain_bytes_sum(const Schedule& s, const Region* r, std::size_t n) {
  double sum = 0;
  const BufferDecl* const bufs = s.buffers.data();
  for (std::size_t k = 0; k < n;) {
    const BufferDecl& first = bufs[r[k].buffer];
    const std::uint64_t count = r[k].count;
    const Format format = first.format;
    const int block = first.block_elems;
    const ScaleFormat scale = first.scale_format;
    const double v = plain_bytes(s, r[k]);
    sum += v;
    for (++k; k < n; ++k) {  // the sources alike to it
      const BufferDecl& b = bufs[r[k].buffer];
      if (r[k].count != count || b.format != format || b.block_elems != block || b.scale_format != scale) break;
      sum += v;
    }
  }
  return sum;
}
}  // namespace

bool any_codec(const Schedule& s, const Step& st) {
  for (const auto& r : st.srcs)
    if (is_codec(s.buffers[r.buffer].format)) return true;
  for (const auto& r : st.dsts)
    if (is_codec(s.buffers[r.buffer].format)) return true;
  return false;
}

// ------------------------------------------------------------ step costs

namespace {

struct Ctx {
  const Config& cfg;
  const Schedule& s;
  const ResourceMap& rm;
  StepCost& c;
  bool first_plane_only = false;
  // Port classes (step_cost's `port_classes`): an all-accelerator read or
  // multicast of one switch plane books its class representative alone; any
  // other port use clears `alike`.
  bool port_classes = false;
  // The same on two tiers (routed::write_cost, routed::isa_read_cost): a class
  // per leaf, plane and direction.
  bool tier_classes = false;
  bool alike = true;
  // false (step_cost_without_ports): the accelerator ports' uses (Egress,
  // Ingress) of a star or mesh are left out; everything else is as with them.
  bool ports = true;

  void latency(Term t, double ns) { c.latency_ns[static_cast<int>(t)] += ns; }
  void use(int r, double bytes, double rate_GBps, Term t, bool fed = false) {
    c.uses.push_back({r, rm.kind(r), bytes, rate_GBps, t, fed});
  }
  // A port use (its kind known: no rm.kind() lookup per source of a wide step).
  void use_port(int r, ResourceKind k, double bytes, double rate_GBps) {
    if (!ports) return;
    c.uses.push_back({r, k, bytes, rate_GBps, Term::Serialisation, false});
  }
  // port_payload_GBps(cfg, s, factor), computed once per step and factor
  // (a step with N sources asked for it N times).
  double port_factor = -1, port_rate = 0;
  double port_GBps(double factor) {
    if (factor != port_factor) {
      port_factor = factor;
      port_rate = port_payload_GBps(cfg, s, factor);
    }
    return port_rate;
  }

  // One traversal accelerator <-> switch, or accelerator <-> accelerator.
  void path(NodeId from, NodeId to) {
    if (from == to) return;
    latency(Term::LinkLatency, cfg.links.latency_ns);
    if (!s.is_switch(from) && !s.is_switch(to) && s.topology == Topology::Star) {
      latency(Term::SwitchLatency, cfg.sw.latency_ns);
      latency(Term::LinkLatency, cfg.links.latency_ns);
    }
  }

  // Planes a transfer crossing `via` uses, each carrying an equal share:
  // [first, first + count) (no allocation: this runs per source of every step).
  // `end` is one past the last plane costed: first + 1 with first_plane_only.
  struct Planes {
    int first = 0, count = 0, end = 0;
  };
  Planes planes_of(NodeId via) const {
    if (via == kAllPlanes) return {0, rm.planes, first_plane_only ? 1 : rm.planes};
    if (via >= s.gpus) return {via - s.gpus, 1, via - s.gpus + 1};
    return {};
  }

  void egress(NodeId gpu, NodeId via, NodeId peer, double bytes, double factor) {
    if (port_classes) alike = false;
    if (!ports) return;
    const double rate = port_GBps(factor);
    if (s.topology == Topology::Mesh) {
      use_port(rm.egress(gpu, peer), ResourceKind::Egress, bytes, rate);
      return;
    }
    const Planes ps = planes_of(via);
    for (int p = ps.first; p < ps.end; ++p)
      use_port(rm.egress(gpu, p), ResourceKind::Egress, bytes / static_cast<double>(ps.count), rate);
  }

  void ingress(NodeId gpu, NodeId via, double bytes, double factor) {
    if (port_classes) alike = false;
    if (!ports) return;
    const double rate = port_GBps(factor);
    // (On a mesh the link k -> gpu is k's egress: ResourceMap::ingress.)
    const ResourceKind kind = s.topology == Topology::Mesh ? ResourceKind::Egress : ResourceKind::Ingress;
    const Planes ps = planes_of(via);
    for (int p = ps.first; p < ps.end; ++p)
      use_port(rm.ingress(gpu, p), kind, bytes / static_cast<double>(ps.count), rate);
  }
};

void write_cost(Ctx& x, const Step& st) {
  const Config& cfg = x.cfg;
  const Schedule& s = x.s;
  StepCost& c = x.c;
  const double bytes = static_cast<double>(region_bytes(s, st.srcs[0]));
  const double factor = transfer_factor(cfg, s, st);
  if (st.ring_step) {
    c.fixed_ns = protocol_spec(cfg, st.protocol).step_overhead_ns;
    c.fixed_term = Term::Sync;
  }
  if (st.via == kNoNode) {
    x.use(x.rm.hbm(st.initiator), 2 * bytes, hbm_GBps(cfg), Term::Serialisation);
    return;
  }
  if (s.two_tier()) {
    // Every link of the multicast tree.
    x.alike = routed::write_cost(cfg, s, x.rm, st, bytes, factor, x.first_plane_only, c, x.tier_classes) && x.alike;
  } else if (s.is_switch(st.initiator)) {
    x.latency(Term::LinkLatency, cfg.links.latency_ns);
    if (x.port_classes && st.via == st.initiator) {
      // Class I_p: accelerator k's ingress for the k-th destination, every accelerator once.
      x.alike = x.alike && st.dsts.size() == static_cast<std::size_t>(s.gpus);
      for (std::size_t k = 0; x.alike && k < st.dsts.size(); ++k)
        x.alike = s.buffers[st.dsts[k].buffer].node == static_cast<NodeId>(k);
      if (x.alike) x.use(x.rm.ingress(0, st.initiator - s.gpus), bytes, port_payload_GBps(cfg, s, factor), Term::Serialisation);
    } else if (x.ports || x.port_classes) {  // (ingress() does nothing without either)
      for (const auto& d : st.dsts) x.ingress(s.buffers[d.buffer].node, st.via, bytes, factor);
    }
  } else if (st.via == kDirect) {
    x.latency(Term::LinkLatency, cfg.links.latency_ns);
    for (const auto& d : st.dsts) {
      const NodeId to = s.buffers[d.buffer].node;
      if (to != st.initiator) x.egress(st.initiator, st.via, to, bytes, factor);
    }
  } else {
    // Up to the switch plane, across it, down to the destination(s).
    x.latency(Term::LinkLatency, 2 * cfg.links.latency_ns);
    x.latency(Term::SwitchLatency, cfg.sw.latency_ns);
    x.egress(st.initiator, st.via, kNoNode, bytes, factor);
    // (ingress() does nothing without ports and port classes: a multicast's 1024
    // destinations, costed per step, are not walked for nothing.)
    for (std::size_t k = 0; (x.ports || x.port_classes) && k < st.dsts.size(); ++k) {
      const Region& d = st.dsts[k];
      const NodeId to = s.buffers[d.buffer].node;
      if (!s.is_switch(to)) x.ingress(to, st.via, bytes, factor);
    }
  }
  if (st.op == DataOp::Reduce && st.unit == Unit::AccelSm) {
    // Fused receive-reduce: read the arriving and local values, write the sum.
    const NodeId to = s.buffers[st.dsts[0].buffer].node;
    double b = 0;
    for (const auto& r : st.srcs) b += plain_bytes(s, r);
    b += plain_bytes(s, st.dsts[0]);
    x.use(x.rm.hbm(to), b, hbm_GBps(cfg), any_codec(s, st) ? Term::Quantisation : Term::Reduction);
  }
}

void read_cost(Ctx& x, const Step& st) {
  const Config& cfg = x.cfg;
  const Schedule& s = x.s;
  const NodeId to = s.buffers[st.dsts[0].buffer].node;
  if (s.is_switch(st.initiator)) {
    // The ISA reads every source: request out, memory access, response back.
    const int p = st.initiator - s.gpus;
    double plain = 0;
    bool q = false;  // any source or destination block-quantised (any_codec)
    if (x.port_classes) {
      // One pass over the sources: the plain bytes (summed in the same order as
      // plain_bytes() below), the codec test, and the class check (below).
      x.alike = x.alike && st.srcs.size() == static_cast<std::size_t>(s.gpus);
      const std::uint64_t b0 = x.alike ? region_bytes(s, st.srcs[0]) : 0;
      for (std::size_t k = 0; k < st.srcs.size(); ++k) {
        const Region& r = st.srcs[k];
        const BufferDecl& b = s.buffers[r.buffer];
        const std::uint64_t rb = region_bytes(b, r.count);
        const bool codec = is_codec(b.format);
        plain += codec ? static_cast<double>(r.count) * dtype_bytes_of(s.dtype) : static_cast<double>(rb);
        q = q || codec;
        x.alike = x.alike && b.node == static_cast<NodeId>(k) && rb == b0;
      }
      for (const auto& r : st.dsts) q = q || is_codec(s.buffers[r.buffer].format);
      if (!x.alike) return;
      x.latency(Term::LinkLatency, 2 * cfg.links.latency_ns);
      x.latency(Term::MemoryLatency, cfg.accelerator.mem_latency_ns);
      x.latency(Term::Sync, cfg.sw.isa.op_latency_ns);
      // Class E_p: accelerator k's egress for the k-th source, every accelerator
      // once, the same bytes from each.
      x.use(x.rm.egress(0, p), static_cast<double>(b0), isa_read_GBps(cfg, s), Term::Serialisation);
    } else if (s.two_tier()) {
      for (const auto& r : st.srcs) plain += plain_bytes(s, r);
      q = any_codec(s, st);
      // Every link of every source's route.
      if (!routed::isa_read_cost(cfg, s, x.rm, st, transfer_factor(cfg, s, st), x.c, x.tier_classes)) {
        x.alike = false;
        return;
      }
    } else {
      for (const auto& r : st.srcs) plain += plain_bytes(s, r);
      q = any_codec(s, st);
      x.latency(Term::LinkLatency, 2 * cfg.links.latency_ns);
      x.latency(Term::MemoryLatency, cfg.accelerator.mem_latency_ns);
      x.latency(Term::Sync, cfg.sw.isa.op_latency_ns);
      const double read_GBps = isa_read_GBps(cfg, s);
      for (std::size_t k = 0; x.ports && k < st.srcs.size(); ++k)
        x.use(x.rm.egress(s.buffers[st.srcs[k].buffer].node, p), static_cast<double>(region_bytes(s, st.srcs[k])), read_GBps,
              Term::Serialisation);
    }
    // The ISA reduces each packet group as it lands (dequantising it first in the
    // INQ unit when the data is quantised): the units hold for plain / rate, in
    // step with the reads, and are free for other work (requantising the previous
    // wave) between groups. Both units are held together at the slower rate.
    const double unit_GBps = 1.0 / isa_reduce_ns_per_byte(cfg, q);
    // The units get the data after the request, the memory access and the
    // response (every latency of the read but the ISA's op latency, Sync).
    x.c.fed_lead_terms = lead_of_isa_read;
    x.c.fed_paced = cfg.sw.isa.regulation == Regulation::Paced;
    if (st.op == DataOp::Reduce) x.use(x.rm.isa_reduce(p), plain, q ? unit_GBps : cfg.sw.isa.reduce_GBps, Term::Reduction, true);
    if (q) x.use(x.rm.isa_inq(p), plain, st.op == DataOp::Reduce ? unit_GBps : cfg.sw.isa.inq_GBps, Term::Quantisation, true);
    return;
  }
  // An accelerator reads (NVLS ld_reduce when several sources are summed in the switch).
  const double factor = transfer_factor(cfg, s, st);
  if (s.two_tier()) {
    if (x.tier_classes) x.alike = false;  // (its ports, one by one)
    routed::accel_read_cost(cfg, s, x.rm, st, factor, x.first_plane_only, x.c);
    return;
  }
  const NodeId sw = st.via >= s.gpus ? st.via : (s.topology == Topology::Star ? s.switch_node(0) : kNoNode);
  if (sw == kNoNode) {
    x.latency(Term::LinkLatency, 2 * cfg.links.latency_ns);
  } else {
    x.latency(Term::LinkLatency, 4 * cfg.links.latency_ns);
    x.latency(Term::SwitchLatency, 2 * cfg.sw.latency_ns);
  }
  x.latency(Term::MemoryLatency, cfg.accelerator.mem_latency_ns);
  for (std::size_t k = 0; x.ports && k < st.srcs.size(); ++k) {  // (its sources' ports: none without them)
    const Region& r = st.srcs[k];
    const NodeId from = s.buffers[r.buffer].node;
    if (from == to && st.srcs.size() == 1) continue;
    x.egress(from, st.via, to, static_cast<double>(region_bytes(s, r)), factor);
  }
  if (st.via != kDirect) x.ingress(to, st.via, static_cast<double>(region_bytes(s, st.dsts[0])), factor);
  if (st.unit == Unit::NvlsReduce && st.op == DataOp::Reduce && s.topology == Topology::Star) {
    // issue 15: each plane's NVLS unit sums its share of every source as it arrives.
    const double in = plain_bytes_sum(s, st.srcs.data(), st.srcs.size());
    const Ctx::Planes ps = x.planes_of(st.via);
    for (int p = ps.first; p < ps.end; ++p)
      x.use(x.rm.nvls(p), in / static_cast<double>(x.rm.planes), cfg.tuning.nvls_reduce_GBps, Term::Reduction);
  }
}

void compute_cost(Ctx& x, const Step& st) {
  const Config& cfg = x.cfg;
  const Schedule& s = x.s;
  double in = 0, out = 0;
  for (const auto& r : st.srcs) in += static_cast<double>(region_bytes(s, r));
  for (const auto& r : st.dsts) out += static_cast<double>(region_bytes(s, r));
  const Term t = any_codec(s, st) ? Term::Quantisation : Term::Reduction;
  if (s.is_switch(st.initiator)) {
    const int p = st.initiator - s.gpus;
    double plain = 0;
    for (const auto& r : st.srcs) plain += plain_bytes(s, r);
    if (st.unit == Unit::IsaInq) x.use(x.rm.isa_inq(p), plain, cfg.sw.isa.inq_GBps, t);
    else x.use(x.rm.isa_reduce(p), plain, cfg.sw.isa.reduce_GBps, t);
    x.latency(Term::Sync, cfg.sw.isa.op_latency_ns);
  } else if (!(cfg.tuning.quant_fused && t == Term::Quantisation)) {
    // (quant.fused: the (de)quantisation is hidden inside the communication kernel.)
    x.use(x.rm.hbm(st.initiator), in + out, hbm_GBps(cfg), t);
  }
}

}  // namespace

StepCost step_cost(const Config& cfg, const Schedule& s, const ResourceMap& rm, const Step& st) {
  StepCost c;
  step_cost(cfg, s, rm, st, c);
  return c;
}

namespace {

bool step_cost_impl(const Config& cfg, const Schedule& s, const ResourceMap& rm, const Step& st, StepCost& c,
                    bool first_plane_only, bool port_classes, bool ports) {
  // Reset field by field (as StepCost{}); the uses keep their capacity: engines reuse one StepCost.
  c.fixed_ns = 0;
  c.fixed_term = Term::Sync;
  c.fed_lead_terms = 0;
  c.fed_paced = false;
  for (double& l : c.latency_ns) l = 0;
  c.uses.clear();
  Ctx x{cfg, s, rm, c, first_plane_only, port_classes && s.topology == Topology::Star};
  x.tier_classes = port_classes && s.two_tier();
  x.ports = ports;
  const AcceleratorSpec& acc = cfg.accelerator;
  const IsaSpec& isa = cfg.sw.isa;
  const bool on_switch = s.is_switch(st.initiator);
  switch (st.kind) {
    case StepKind::Launch:
      c.fixed_ns = acc.launch_overhead_ns + (st.ring_step ? protocol_spec(cfg, st.protocol).base_ns : 0.0) +
                   launch_extra_ns(cfg, s, st);
      c.fixed_term = Term::Launch;
      break;
    case StepKind::Signal:
      if (s.two_tier()) routed::signal_cost(cfg, s, st, c);
      else x.path(st.initiator, st.target);
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
    case StepKind::Write: write_cost(x, st); break;
    case StepKind::Read: read_cost(x, st); break;
    case StepKind::Compute: compute_cost(x, st); break;
  }
  return x.alike;
}

}  // namespace

bool step_cost(const Config& cfg, const Schedule& s, const ResourceMap& rm, const Step& st, StepCost& c,
               bool first_plane_only, bool port_classes) {
  return step_cost_impl(cfg, s, rm, st, c, first_plane_only, port_classes, true);
}

void step_cost_without_ports(const Config& cfg, const Schedule& s, const ResourceMap& rm, const Step& st,
                             StepCost& out) {
  step_cost_impl(cfg, s, rm, st, out, false, false, false);
}

}  // namespace scin
