#include "fabric/params.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "base/json_input.h"
#include "base/units.h"
#include "base/text.h"
#include "fabric/graph.h"

namespace scin {
namespace {

using RealRef = double& (*)(Config&);
using IntRef = int& (*)(Config&);
using U64Ref = std::uint64_t& (*)(Config&);
using BoolRef = bool& (*)(Config&);
using StrRef = std::string& (*)(Config&);

Config& mut(const Config& c) { return const_cast<Config&>(c); }

ParamInfo base(std::string path, ParamType t, std::string unit, double lo, double hi,
               std::string label, std::string help) {
  ParamInfo p;
  p.path = std::move(path);
  p.type = t;
  p.unit = std::move(unit);
  p.min = lo;
  p.max = hi;
  p.label = std::move(label);
  p.help = std::move(help);
  return p;
}

ParamInfo real(std::string path, std::string unit, double lo, double hi, std::string label,
               std::string help, RealRef ref) {
  ParamInfo p = base(std::move(path), ParamType::Real, std::move(unit), lo, hi, std::move(label),
                     std::move(help));
  p.get = [ref](const Config& c) { return ParamValue(ref(mut(c))); };
  p.set = [ref](Config& c, const ParamValue& v) { ref(c) = std::get<double>(v); };
  return p;
}

ParamInfo integer(std::string path, std::string unit, double lo, double hi, std::string label,
                  std::string help, IntRef ref) {
  ParamInfo p = base(std::move(path), ParamType::Int, std::move(unit), lo, hi, std::move(label),
                     std::move(help));
  p.get = [ref](const Config& c) { return ParamValue(static_cast<std::int64_t>(ref(mut(c)))); };
  p.set = [ref](Config& c, const ParamValue& v) { ref(c) = static_cast<int>(std::get<std::int64_t>(v)); };
  return p;
}

ParamInfo bytes(std::string path, double lo, double hi, std::string label, std::string help,
                U64Ref ref) {
  ParamInfo p = base(std::move(path), ParamType::Int, "bytes", lo, hi, std::move(label),
                     std::move(help));
  p.get = [ref](const Config& c) { return ParamValue(static_cast<std::int64_t>(ref(mut(c)))); };
  p.set = [ref](Config& c, const ParamValue& v) {
    ref(c) = static_cast<std::uint64_t>(std::get<std::int64_t>(v));
  };
  return p;
}

ParamInfo boolean(std::string path, std::string label, std::string help, BoolRef ref) {
  ParamInfo p = base(std::move(path), ParamType::Bool, "", 0, 1, std::move(label), std::move(help));
  p.get = [ref](const Config& c) { return ParamValue(ref(mut(c))); };
  p.set = [ref](Config& c, const ParamValue& v) { ref(c) = std::get<bool>(v); };
  return p;
}

ParamInfo text(std::string path, std::string label, std::string help, StrRef ref) {
  ParamInfo p = base(std::move(path), ParamType::String, "", 0, 0, std::move(label), std::move(help));
  p.get = [ref](const Config& c) { return ParamValue(ref(mut(c))); };
  p.set = [ref](Config& c, const ParamValue& v) { ref(c) = std::get<std::string>(v); };
  return p;
}

// Enums are stored as their choice index; choices are listed in enum order.
template <class E>
ParamInfo choice(std::string path, std::vector<std::string> choices, std::string label,
                 std::string help, E& (*ref)(Config&)) {
  ParamInfo p = base(std::move(path), ParamType::Enum, "", 0,
                     static_cast<double>(choices.size()) - 1, std::move(label), std::move(help));
  p.choices = std::move(choices);
  auto names = p.choices;
  p.get = [ref, names](const Config& c) {
    return ParamValue(names.at(static_cast<std::size_t>(ref(mut(c)))));
  };
  p.set = [ref, names](Config& c, const ParamValue& v) {
    const auto& s = std::get<std::string>(v);
    auto it = std::find(names.begin(), names.end(), s);
    ref(c) = static_cast<E>(it - names.begin());
  };
  return p;
}

std::vector<ParamInfo> build_registry() {
  std::vector<ParamInfo> r;
  // --- fabric shape
  r.push_back(choice<Topology>("fabric.topology", {"star", "mesh", "two-tier"}, "Topology",
      "star: every accelerator links to each switch plane; mesh: switchless, every pair linked directly; "
      "two-tier: per plane, leaf switches under spine switches",
      [](Config& c) -> Topology& { return c.fabric.topology; }));
  r.push_back(integer("fabric.gpus", "", 2, 1024, "Accelerators",
      "number of accelerators (ranks) taking part in the collective",
      [](Config& c) -> int& { return c.fabric.gpus; }));
  r.push_back(integer("fabric.planes", "", 1, 64, "Switch planes",
      "parallel switch planes; each accelerator's bandwidth is split evenly over them (mesh: 1)",
      [](Config& c) -> int& { return c.fabric.planes; }));
  // --- two-tier shape (issue 16; core/fabric/graph.h)
  r.push_back(integer("fabric.leaves", "", 1, 1024, "Leaf switches",
      "two-tier: leaf switches per plane; each takes gpus / leaves accelerators",
      [](Config& c) -> int& { return c.fabric.leaves; }));
  r.push_back(integer("fabric.spines", "", 1, 1024, "Spine switches",
      "two-tier: spine switches per plane; a leaf's uplinks spread evenly over them",
      [](Config& c) -> int& { return c.fabric.spines; }));
  r.push_back(integer("fabric.uplinks_per_leaf", "", 0, 100000, "Uplinks per leaf",
      "two-tier: ports of a leaf that go to the spines (0: one per local accelerator)",
      [](Config& c) -> int& { return c.fabric.uplinks_per_leaf; }));
  r.push_back(real("fabric.oversubscription", "", 1, 1024, "Oversubscription",
      "two-tier: a leaf's accelerator bandwidth over its uplink bandwidth (1: non-blocking)",
      [](Config& c) -> double& { return c.fabric.oversubscription; }));
  r.push_back(text("fabric.graph_file", "Fabric graph file",
      "a JSON node/link list to check and draw instead of a generator (empty: the generator)",
      [](Config& c) -> std::string& { return c.fabric.graph_file; }));
  // --- accelerator
  r.push_back(text("accelerator.name", "Accelerator", "accelerator model name (informational)",
      [](Config& c) -> std::string& { return c.accelerator.name; }));
  r.push_back(real("accelerator.hbm_bandwidth_GBps", "GB/s", 1, 1e6, "HBM bandwidth",
      "accelerator memory bandwidth; bounds local reductions and quantisation kernels",
      [](Config& c) -> double& { return c.accelerator.hbm_bandwidth_GBps; }));
  r.push_back(real("accelerator.hbm_efficiency", "", 0.01, 1, "HBM efficiency",
      "achievable fraction of HBM bandwidth for streaming kernels",
      [](Config& c) -> double& { return c.accelerator.hbm_efficiency; }));
  r.push_back(real("accelerator.launch_overhead_ns", "ns", 0, 1e8, "Kernel launch overhead",
      "fixed cost of launching a collective kernel (paid once by ring, one-shot, two-shot, NVLS, INQ quantise)",
      [](Config& c) -> double& { return c.accelerator.launch_overhead_ns; }));
  r.push_back(real("accelerator.sync_overhead_ns", "ns", 0, 1e8, "Stream sync overhead",
      "cost of a stream memory operation (write/wait value): SCIN's Arrive and Wait need no kernel",
      [](Config& c) -> double& { return c.accelerator.sync_overhead_ns; }));
  r.push_back(real("accelerator.flag_poll_ns", "ns", 0, 1e7, "Flag poll",
      "time for an accelerator to observe a flag or counter it polls",
      [](Config& c) -> double& { return c.accelerator.flag_poll_ns; }));
  r.push_back(real("accelerator.mem_latency_ns", "ns", 0, 1e7, "Memory latency",
      "HBM access latency seen by a remote read (added once per read round trip)",
      [](Config& c) -> double& { return c.accelerator.mem_latency_ns; }));
  r.push_back(real("accelerator.peak_bf16_TFLOPS", "TFLOP/s", 1e-3, 1e6, "Peak BF16 compute",
      "dense BF16 tensor-core throughput (10^12 FLOP/s), used by the inference model",
      [](Config& c) -> double& { return c.accelerator.peak_bf16_TFLOPS; }));
  r.push_back(real("accelerator.compute_efficiency", "", 0.01, 1, "Compute efficiency",
      "achievable fraction of peak compute for the model's GEMMs",
      [](Config& c) -> double& { return c.accelerator.compute_efficiency; }));
  // --- links
  r.push_back(real("links.bandwidth_GBps", "GB/s", 1e-3, 1e6, "Link bandwidth",
      "per accelerator, per direction, all planes together (GB/s = 10^9 bytes/s)",
      [](Config& c) -> double& { return c.links.bandwidth_GBps; }));
  r.push_back(real("links.latency_ns", "ns", 0, 1e7, "Link latency",
      "one traversal between an accelerator and a switch (or peer, on a mesh)",
      [](Config& c) -> double& { return c.links.latency_ns; }));
  r.push_back(real("links.efficiency", "", 0.01, 1, "Link efficiency",
      "fraction of the line rate left for payload after protocol headers and flow control",
      [](Config& c) -> double& { return c.links.efficiency; }));
  // --- switch
  r.push_back(real("switch.latency_ns", "ns", 0, 1e7, "Switch latency",
      "port-to-port traversal of a switch plane (no public NVSwitch figure: sweep 100-300 ns)",
      [](Config& c) -> double& { return c.sw.latency_ns; }));
  r.push_back(integer("switch.ports", "", 2, 100000, "Switch ports",
      "radix: fabric ports per switch; a star plane needs one per accelerator, a leaf adds its uplinks",
      [](Config& c) -> int& { return c.sw.ports; }));
  r.push_back(boolean("switch.multicast", "Multicast",
      "the switch replicates one incoming write to several output ports",
      [](Config& c) -> bool& { return c.sw.multicast; }));
  r.push_back(boolean("switch.nvls.enabled", "NVLS reduction",
      "in-switch reduction as NVLink SHARP does it (multimem.ld_reduce returns the sum to the issuer)",
      [](Config& c) -> bool& { return c.sw.nvls.enabled; }));
  r.push_back(real("switch.nvls.efficiency", "", 0.01, 1, "NVLS efficiency",
      "achieved fraction of link bandwidth for multimem operations, on top of links.efficiency",
      [](Config& c) -> double& { return c.sw.nvls.efficiency; }));
  r.push_back(real("switch.nvls.sync_overhead_ns", "ns", 0, 1e8, "NVLS barrier overhead",
      "software cost of one NVLS barrier (fences, multimem.red on the barrier flag, polling)",
      [](Config& c) -> double& { return c.sw.nvls.sync_overhead_ns; }));
  r.push_back(integer("switch.nvls.nccl_min_gpus", "", 1, 1000000, "NCCL NVLS minimum GPUs",
      "fewest GPUs NCCL runs NVLS on (3: NCCL turns NVLS off for 2 or fewer, src/transport/nvls.cc ncclNvlsInit); "
      "below it NCCL_ALGO=NVLS runs ring, nccl-auto never picks NVLS and an nvls result says so; 2 = NCCL 2.17, its first NVLS",
      [](Config& c) -> int& { return c.sw.nvls.nccl_min_gpus; }));
  r.push_back(integer("switch.nvls.tiers_max_destinations", "", 1000, 1000000000, "Two-tier NVLS schedule limit",
      "most multicast destinations (ranks x stores) a two-tier NVLS schedule may hold; where NCCL's 128 KiB chunks "
      "need more, the chunks are fewer and larger, so it pipelines less and its time is high (a note says so); "
      "a simulation limit: raising it costs time and memory in both engines (docs/model.md, two-tier NVLS)",
      [](Config& c) -> int& { return c.sw.nvls.tiers_max_destinations; }));
  r.push_back(boolean("switch.isa.enabled", "In-switch accelerator",
      "SCIN in-switch accelerator that reads and writes accelerator memory directly",
      [](Config& c) -> bool& { return c.sw.isa.enabled; }));
  r.push_back(real("switch.isa.reduce_GBps", "GB/s", 1e-3, 1e7, "ISA reduction throughput",
      "input bytes per second the ISA's reduction unit sums (per switch plane)",
      [](Config& c) -> double& { return c.sw.isa.reduce_GBps; }));
  r.push_back(real("switch.isa.op_latency_ns", "ns", 0, 1e7, "ISA op latency",
      "ISA instruction issue and counter polling latency per operation",
      [](Config& c) -> double& { return c.sw.isa.op_latency_ns; }));
  r.push_back(bytes("switch.isa.buffer_bytes", 1, 1ull << 40, "ISA buffer",
      "ISA staging buffer for read responses awaiting reduction (per switch plane)",
      [](Config& c) -> std::uint64_t& { return c.sw.isa.buffer_bytes; }));
  r.push_back(bytes("switch.isa.max_outstanding_bytes", 1, 1ull << 40, "ISA outstanding reads",
      "cap on read bytes in flight per accelerator port; below bandwidth x round trip it limits bandwidth (Little's Law)",
      [](Config& c) -> std::uint64_t& { return c.sw.isa.max_outstanding_bytes; }));
  r.push_back(integer("switch.isa.waves", "", 1, 4096, "ISA waves",
      "the ISA processes the message in this many waves (chunks) that pipeline read, reduce and write",
      [](Config& c) -> int& { return c.sw.isa.waves; }));
  r.push_back(choice<Regulation>("switch.isa.regulation", {"none", "paced"}, "ISA wave regulation",
      "none: issue reads as fast as credits allow; paced: issue at the rate the reduction and buffer drain",
      [](Config& c) -> Regulation& { return c.sw.isa.regulation; }));
  r.push_back(boolean("switch.isa.inq", "INQ unit",
      "the ISA can (de)quantise in the network (INQ): block-wise INT8 All-Reduce",
      [](Config& c) -> bool& { return c.sw.isa.inq; }));
  r.push_back(real("switch.isa.inq_GBps", "GB/s", 1e-3, 1e7, "INQ throughput",
      "FP input bytes per second the INQ unit (de)quantises (per switch plane)",
      [](Config& c) -> double& { return c.sw.isa.inq_GBps; }));
  // --- packet engine
  r.push_back(bytes("packet.payload_bytes", 1, 1 << 20, "Packet payload",
      "payload bytes per packet in the packet engine (larger is faster to simulate, coarser)",
      [](Config& c) -> std::uint64_t& { return c.packet.payload_bytes; }));
  r.push_back(bytes("packet.header_bytes", 0, 4096, "Packet header",
      "header bytes added to every packet on the wire in the packet engine",
      [](Config& c) -> std::uint64_t& { return c.packet.header_bytes; }));
  r.push_back(bytes("packet.port_buffer_bytes", 1, 1ull << 32, "Port buffer",
      "queue capacity per switch output port in the packet engine (credit-based back-pressure)",
      [](Config& c) -> std::uint64_t& { return c.packet.port_buffer_bytes; }));
  r.push_back(choice<StoreMode>("packet.forwarding", {"cut-through", "store-and-forward"},
      "Forwarding", "switch forwarding mode in the packet engine",
      [](Config& c) -> StoreMode& { return c.packet.forwarding; }));
  r.push_back(integer("packet.timeline_samples", "", 0, 512, "Timeline samples",
      "per-link utilisation samples over time recorded by the packet engine (0 = no timeline)",
      [](Config& c) -> int& { return c.packet.timeline_samples; }));
  // --- ring protocols
  r.push_back(choice<RingProtocol>("ring.protocol", {"auto", kRingProtocolKeys[0], kRingProtocolKeys[1], kRingProtocolKeys[2]},
      "Ring protocol", "NCCL ring protocol; auto picks the fastest per size by this model (NCCL's own tuner picks by its cost model, which measured ring rows follow: docs/model.md section 9)",
      [](Config& c) -> RingProtocol& { return c.ring.protocol; }));
  struct P { const char* key; const char* name; RingProtocolSpec& (*ref)(Config&); };
  const P protos[] = {
      {kRingProtocolKeys[0], "LL", [](Config& c) -> RingProtocolSpec& { return c.ring.ll; }},
      {kRingProtocolKeys[1], "LL128", [](Config& c) -> RingProtocolSpec& { return c.ring.ll128; }},
      {kRingProtocolKeys[2], "Simple", [](Config& c) -> RingProtocolSpec& { return c.ring.simple; }},
  };
  for (const P& p : protos) {
    auto ref = p.ref;
    ParamInfo b = base(fmt::format("ring.{}.base_ns", p.key), ParamType::Real, "ns", 0, 1e8,
                       fmt::format("Ring {} base", p.name),
                       fmt::format("fixed cost of the ring {} kernel beyond the launch", p.name));
    b.get = [ref](const Config& c) { return ParamValue(ref(mut(c)).base_ns); };
    b.set = [ref](Config& c, const ParamValue& v) { ref(c).base_ns = std::get<double>(v); };
    r.push_back(b);
    ParamInfo s = base(fmt::format("ring.{}.step_overhead_ns", p.key), ParamType::Real, "ns", 0, 1e8,
                       fmt::format("Ring {} step overhead", p.name),
                       fmt::format("per-step handshake cost of ring {} beyond the path latency", p.name));
    s.get = [ref](const Config& c) { return ParamValue(ref(mut(c)).step_overhead_ns); };
    s.set = [ref](Config& c, const ParamValue& v) { ref(c).step_overhead_ns = std::get<double>(v); };
    r.push_back(s);
    ParamInfo f = base(fmt::format("ring.{}.bandwidth_fraction", p.key), ParamType::Real, "", 0.01, 1,
                       fmt::format("Ring {} bandwidth fraction", p.name),
                       fmt::format("share of link bandwidth carrying payload under ring {}", p.name));
    f.get = [ref](const Config& c) { return ParamValue(ref(mut(c)).bandwidth_fraction); };
    f.set = [ref](Config& c, const ParamValue& v) { ref(c).bandwidth_fraction = std::get<double>(v); };
    r.push_back(f);
  }
  r.push_back(real("ring.channels", "channels", 0, 64, "Ring channels",
      "NCCL's ring channels at full width; a smaller message runs on fewer, one per 4096 x GPUs bytes (LL), "
      "5120 (LL128) or 32768 (Simple), as NCCL's enqueue does (0: every channel at every size)",
      [](Config& c) -> double& { return c.ring.channels; }));
  // --- quantisation
  r.push_back(integer("quant.block_elems", "elements", 2, 65536, "Quantisation block",
      "G: values sharing one scale in block quantisation (INQ, ring-q8, two-shot-q8)",
      [](Config& c) -> int& { return c.quant.block_elems; }));
  r.push_back(choice<ScaleFormat>("quant.scale_format", {"fp16", "bf16", "fp32"}, "Scale format",
      "format of each block's scale",
      [](Config& c) -> ScaleFormat& { return c.quant.scale_format; }));
  r.push_back(choice<Codec>("quant.codec", {"int8", "int4", "fp8e4m3", "fp8e5m2"}, "Codec",
      "element format of quantised payloads",
      [](Config& c) -> Codec& { return c.quant.codec; }));
  // --- issue 15 (calib area, docs/model.md "Mid-size regime"): NCCL's size ramp,
  // launch serialisation under nccl-tests -g N, symmetric-kernel costs, NVLS
  // reduction throughput, and the knobs for the seed paper's assumptions.
  struct Ramp { const char* key; const char* name; RampSpec& (*ref)(Config&); };
  const Ramp ramps[] = {
      {"ring", "Ring", [](Config& c) -> RampSpec& { return c.tuning.ring; }},
      {"nvls", "NVLS", [](Config& c) -> RampSpec& { return c.tuning.nvls; }},
  };
  for (const Ramp& rp : ramps) {
    auto ref = rp.ref;
    ParamInfo h = base(fmt::format("ramp.{}.half_bytes", rp.key), ParamType::Real, "bytes", 0, 1e12,
                       fmt::format("{} ramp half size", rp.name),
                       fmt::format("message size at which {} moves data at half its full-width rate: NCCL runs "
                                   "fewer channels and smaller chunks for smaller messages (0: no ramp)", rp.name));
    h.get = [ref](const Config& c) { return ParamValue(ref(mut(c)).half_bytes); };
    h.set = [ref](Config& c, const ParamValue& v) { ref(c).half_bytes = std::get<double>(v); };
    r.push_back(h);
    ParamInfo e = base(fmt::format("ramp.{}.exponent", rp.key), ParamType::Real, "", 0.1, 4,
                       fmt::format("{} ramp exponent", rp.name),
                       fmt::format("steepness of the {} ramp: rate fraction = 1 / (1 + (half_bytes / S)^exponent)", rp.name));
    e.get = [ref](const Config& c) { return ParamValue(ref(mut(c)).exponent); };
    e.set = [ref](Config& c, const ParamValue& v) { ref(c).exponent = std::get<double>(v); };
    r.push_back(e);
  }
  r.push_back(integer("accelerator.gpus_per_process", "", 1, 1024, "GPUs per process",
      "GPUs one host process drives (nccl-tests -g N): their kernel launches are issued one after another",
      [](Config& c) -> int& { return c.tuning.gpus_per_process; }));
  r.push_back(real("accelerator.launch_serial_ns", "ns", 0, 1e8, "Serialised launch",
      "extra launch delay of each further GPU driven by the same process (accelerator.gpus_per_process > 1)",
      [](Config& c) -> double& { return c.tuning.launch_serial_ns; }));
  r.push_back(real("one_shot.base_ns", "ns", 0, 1e8, "One-shot base",
      "fixed cost of a one-shot (symmetric-memory) kernel beyond the launch: entry barrier, LL flag handling",
      [](Config& c) -> double& { return c.tuning.one_shot_base_ns; }));
  r.push_back(real("two_shot.base_ns", "ns", 0, 1e8, "Two-shot base",
      "fixed cost of a two-shot kernel (and two-shot-q8) beyond the launch",
      [](Config& c) -> double& { return c.tuning.two_shot_base_ns; }));
  r.push_back(real("one_shot.link_efficiency", "", 0, 1, "One-shot link efficiency",
      "payload fraction of the line rate for one-shot pushes (0: links.efficiency)",
      [](Config& c) -> double& { return c.tuning.one_shot_link_efficiency; }));
  r.push_back(real("two_shot.link_efficiency", "", 0, 1, "Two-shot link efficiency",
      "payload fraction of the line rate for two-shot and two-shot-q8 pushes (0: links.efficiency)",
      [](Config& c) -> double& { return c.tuning.two_shot_link_efficiency; }));
  r.push_back(real("switch.isa.link_efficiency", "", 0, 1, "ISA link efficiency",
      "payload fraction of the line rate for SCIN ISA reads and writes (0: links.efficiency; the seed assumes ~1)",
      [](Config& c) -> double& { return c.tuning.isa_link_efficiency; }));
  r.push_back(real("switch.nvls.reduce_GBps", "GB/s", 1e-3, 1e7, "NVLS reduction throughput",
      "input bytes per second one switch plane's NVLS unit sums; bounds NVLS bandwidth as GPUs are added",
      [](Config& c) -> double& { return c.tuning.nvls_reduce_GBps; }));
  r.push_back(boolean("quant.fused", "Fused quantisation",
      "(de)quantisation fused into the communication kernels and hidden (the seed's assumption): no HBM passes",
      [](Config& c) -> bool& { return c.tuning.quant_fused; }));
  r.push_back(real("quant.launch_ns", "ns", 0, 1e8, "Quantisation kernel launch",
      "launch cost of each separate quantise / dequantise kernel on an accelerator (0: part of the collective's kernel)",
      [](Config& c) -> double& { return c.tuning.quant_launch_ns; }));
  return r;
}

std::string trim(const std::string& s) {
  auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  auto e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

[[noreturn]] void range_error(const ParamInfo& p, const std::string& got) {
  throw Error(fmt::format("{}: {} is out of range; allowed {}", p.path, got, format_range(p)));
}

// Parses a number; byte-valued parameters take the one size grammar (base/units.h).
double parse_number(const ParamInfo& p, const std::string& raw) {
  std::string t = trim(raw);
  if (t.empty()) throw Error(fmt::format("{}: empty value; allowed {}", p.path, format_range(p)));
  if (p.unit == "bytes")
    return static_cast<double>(parse_size_bytes(t, p.path, 0, std::numeric_limits<std::uint64_t>::max()));
  std::size_t used = 0;
  double v = 0;
  try {
    v = std::stod(t, &used);
  } catch (const std::out_of_range&) {
    range_error(p, t);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != t.size() || std::isnan(v))
    throw Error(fmt::format("{}: '{}' is not a number; allowed {}", p.path, raw, format_range(p)));
  return v;
}

ParamValue checked_number(const ParamInfo& p, double v, const std::string& shown) {
  if (!std::isfinite(v)) range_error(p, shown);
  if (p.type == ParamType::Int) {
    if (std::floor(v) != v)
      throw Error(fmt::format("{}: {} is not a whole number; allowed {}", p.path, shown, format_range(p)));
    if (v < p.min || v > p.max) range_error(p, shown);
    return ParamValue(static_cast<std::int64_t>(v));
  }
  if (v < p.min || v > p.max) range_error(p, shown);
  return ParamValue(v);
}

}  // namespace

std::string ParamInfo::group() const { return path.substr(0, path.find('.')); }

const std::vector<ParamInfo>& params() {
  static const std::vector<ParamInfo> registry = build_registry();
  return registry;
}

const ParamInfo* find_param(std::string_view path) {
  for (const auto& p : params())
    if (p.path == path) return &p;
  return nullptr;
}

const ParamInfo& param(std::string_view path) {
  if (const ParamInfo* p = find_param(path)) return *p;
  throw Error(fmt::format("unknown parameter '{}'; `scin params` lists them all", path));
}

std::string to_string(ParamType t) {
  switch (t) {
    case ParamType::Int: return "int";
    case ParamType::Real: return "real";
    case ParamType::Bool: return "bool";
    case ParamType::Enum: return "enum";
    case ParamType::String: return "string";
  }
  return "?";
}

std::string format_range(const ParamInfo& p) {
  switch (p.type) {
    case ParamType::Bool: return "true or false";
    case ParamType::String: return "any text";
    case ParamType::Enum: return fmt::format("one of {}", fmt::join(p.choices, ", "));
    case ParamType::Int:
      return fmt::format("{:.0f} to {:.0f}{}", p.min, p.max, p.unit.empty() ? "" : " " + p.unit);
    case ParamType::Real:
      return fmt::format("{:g} to {:g}{}", p.min, p.max, p.unit.empty() ? "" : " " + p.unit);
  }
  return "";
}

std::string format_value(const ParamInfo&, const ParamValue& v) {
  return std::visit(
      [](const auto& x) -> std::string {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, bool>) return x ? "true" : "false";
        else if constexpr (std::is_same_v<T, std::string>) return x;
        else if constexpr (std::is_same_v<T, double>) return fmt::format("{:g}", x);
        else return fmt::format("{}", x);
      },
      v);
}

void set_param(Config& cfg, std::string_view path, const std::string& raw) {
  const ParamInfo& p = param(path);
  std::string t = trim(raw);
  switch (p.type) {
    case ParamType::Bool: {
      std::string l = ascii_lower(t);
      if (l == "true" || l == "1" || l == "yes" || l == "on") p.set(cfg, true);
      else if (l == "false" || l == "0" || l == "no" || l == "off") p.set(cfg, false);
      else throw Error(fmt::format("{}: '{}' is not a boolean; allowed true or false", p.path, raw));
      return;
    }
    case ParamType::Enum: {
      std::string l = ascii_lower(t);
      for (const auto& c : p.choices)
        if (c == l) {
          p.set(cfg, c);
          return;
        }
      throw Error(fmt::format("{}: '{}' is not allowed; allowed {}", p.path, raw, format_range(p)));
    }
    case ParamType::String: p.set(cfg, t); return;
    case ParamType::Int:
    case ParamType::Real: p.set(cfg, checked_number(p, parse_number(p, t), raw)); return;
  }
}

void set_param(Config& cfg, std::string_view path, double value) {
  const ParamInfo& p = param(path);
  switch (p.type) {
    case ParamType::Bool: p.set(cfg, value != 0); return;
    case ParamType::Enum: {
      if (std::floor(value) != value || value < 0 || value >= static_cast<double>(p.choices.size()))
        throw Error(fmt::format("{}: index {} is not allowed; allowed {}", p.path, value, format_range(p)));
      p.set(cfg, p.choices[static_cast<std::size_t>(value)]);
      return;
    }
    case ParamType::String: p.set(cfg, fmt::format("{:g}", value)); return;
    default: p.set(cfg, checked_number(p, value, format_number(value)));
  }
}

void set_param(Config& cfg, std::string_view path, const nlohmann::json& v) {
  const ParamInfo& p = param(path);
  if (v.is_string()) return set_param(cfg, path, v.get<std::string>());
  if (v.is_boolean()) {
    if (p.type != ParamType::Bool)
      throw Error(fmt::format("{}: a boolean was given; allowed {}", p.path, format_range(p)));
    p.set(cfg, v.get<bool>());
    return;
  }
  if (v.is_number()) {
    if (p.type == ParamType::Enum || p.type == ParamType::String)
      throw Error(fmt::format("{}: a number was given; allowed {}", p.path, format_range(p)));
    if (p.type == ParamType::Bool)
      throw Error(fmt::format("{}: a number was given; allowed true or false", p.path));
    p.set(cfg, checked_number(p, v.get<double>(), v.dump()));
    return;
  }
  throw Error(fmt::format("{}: {} has the wrong type; allowed {}", p.path, describe_json(v), format_range(p)));
}

void apply_assignment(Config& cfg, const std::string& a) {
  auto eq = a.find('=');
  if (eq == std::string::npos || eq == 0)
    throw Error(fmt::format("--set: '{}' is not PATH=VALUE (e.g. links.bandwidth_GBps=900)", a));
  set_param(cfg, trim(a.substr(0, eq)), a.substr(eq + 1));
}

ParamValue get_param(const Config& cfg, std::string_view path) { return param(path).get(cfg); }

std::string get_param_text(const Config& cfg, std::string_view path) {
  const ParamInfo& p = param(path);
  return format_value(p, p.get(cfg));
}

double get_param_number(const Config& cfg, std::string_view path) {
  const ParamInfo& p = param(path);
  ParamValue v = p.get(cfg);
  if (auto* b = std::get_if<bool>(&v)) return *b ? 1 : 0;
  if (auto* i = std::get_if<std::int64_t>(&v)) return static_cast<double>(*i);
  if (auto* d = std::get_if<double>(&v)) return *d;
  const auto& s = std::get<std::string>(v);
  auto it = std::find(p.choices.begin(), p.choices.end(), s);
  return it == p.choices.end() ? 0 : static_cast<double>(it - p.choices.begin());
}

void validate(const Config& cfg) {
  // One pass over the registry (O(P)): each parameter is read once through its own getter.
  for (const auto& p : params()) {
    if (p.type != ParamType::Int && p.type != ParamType::Real) continue;
    ParamValue v = p.get(cfg);
    double x = 0;
    if (auto* i = std::get_if<std::int64_t>(&v)) x = static_cast<double>(*i);
    else if (auto* d = std::get_if<double>(&v)) x = *d;
    else x = get_param_number(cfg, p.path);
    if (!std::isfinite(x) || x < p.min || x > p.max) range_error(p, format_value(p, v));
  }
  if (cfg.fabric.topology == Topology::Mesh && cfg.fabric.planes != 1)
    throw Error(fmt::format("fabric.planes: a mesh has no switch planes; set 1 (got {})", cfg.fabric.planes));
  check_fabric_shape(cfg);  // radix and two-tier shape (core/fabric/graph.cc)
  if (!cfg.fabric.graph_file.empty()) check_fabric(load_fabric_graph(cfg.fabric.graph_file));
  if (cfg.packet.payload_bytes + cfg.packet.header_bytes > cfg.packet.port_buffer_bytes)
    throw Error(fmt::format("packet.port_buffer_bytes: {} bytes cannot hold one packet of {} + {} bytes",
                            cfg.packet.port_buffer_bytes, cfg.packet.payload_bytes, cfg.packet.header_bytes));
  if (cfg.sw.isa.enabled && cfg.sw.isa.buffer_bytes < cfg.packet.payload_bytes)
    throw Error(fmt::format("switch.isa.buffer_bytes: {} bytes is smaller than one packet payload ({} bytes)",
                            cfg.sw.isa.buffer_bytes, cfg.packet.payload_bytes));
  if (cfg.quant.codec == Codec::Int4 && cfg.quant.block_elems % 2 != 0)
    throw Error(fmt::format("quant.block_elems: INT4 packs two values per byte; use an even block size (got {})",
                            cfg.quant.block_elems));
}

}  // namespace scin
