// The algorithm table, parsing and compile(). The builders live by family in
// algorithms_{ring,shot,switch}.cc on the helpers of schedule/builder.h.
#include "schedule/algorithms.h"

#include <algorithm>
#include <fmt/format.h>

#include "base/error.h"
#include "schedule/builder.h"
#include "schedule/compile_options.h"

namespace scin {
namespace {

std::string where(const Config& cfg) { return cfg.name.empty() ? "this fabric" : cfg.name; }

std::string needs_nvls(const Config& cfg) {
  if (cfg.fabric.topology == Topology::Mesh)
    return fmt::format("nvls needs a switch; {} is a switchless mesh", where(cfg));
  if (!cfg.sw.nvls.enabled) return fmt::format("nvls needs in-switch reduction (switch.nvls.enabled) on {}", where(cfg));
  if (!cfg.sw.multicast) return fmt::format("nvls needs switch multicast (switch.multicast) on {}", where(cfg));
  return "";
}

std::string needs_isa(const Config& cfg, const char* algo, bool inq) {
  if (cfg.fabric.topology == Topology::Mesh)
    return fmt::format("{} needs a switch; {} is a switchless mesh", algo, where(cfg));
  if (!cfg.sw.isa.enabled)
    return fmt::format("{} needs an in-switch accelerator (switch.isa.enabled) on {}", algo, where(cfg));
  if (!cfg.sw.multicast) return fmt::format("{} needs switch multicast (switch.multicast) on {}", algo, where(cfg));
  if (inq && !cfg.sw.isa.inq) return fmt::format("{} needs an INQ unit (switch.isa.inq) on {}", algo, where(cfg));
  return "";
}

std::string needs_uplink_inq(const Config& cfg) {
  if (cfg.fabric.topology != Topology::TwoTier)
    return fmt::format("scin-inq-uplink needs a two-tier fabric (fabric.topology two-tier); {} is a {}", where(cfg),
                       to_string(cfg.fabric.topology));
  return needs_isa(cfg, "scin-inq-uplink", true);
}

std::vector<AlgorithmInfo> builtin() {
  using build::Builder;
  std::vector<AlgorithmInfo> t = {
      {Algorithm::Ring, "ring", "NCCL-style ring: reduce-scatter + all-gather in 2(N-1) steps (LL, LL128, Simple)",
       false, true, nullptr, [](Builder& b) { build::build_ring(b, b.cfg.ring.protocol); }},
      {Algorithm::OneShot, "one-shot", "every rank pushes its whole buffer to every peer and reduces locally", false,
       false, nullptr, [](Builder& b) { build::build_one_shot(b); }},
      {Algorithm::TwoShot, "two-shot", "reduce-scatter by pushes to shard owners, local sum, all-gather by pushes",
       false, false, nullptr, [](Builder& b) { build::build_two_shot(b, false); }},
      {Algorithm::Nvls, "nvls", "NVLink SHARP: multimem.ld_reduce to the issuer, then multimem.st multicast", false,
       false, needs_nvls, [](Builder& b) { b.s.two_tier() ? build::build_nvls_tiers(b) : build::build_nvls(b); }},
      {Algorithm::Scin, "scin", "switch-centric: the in-switch accelerator reads, reduces and multicasts", false,
       false, [](const Config& c) { return needs_isa(c, "scin", false); },
       [](Builder& b) { b.s.two_tier() ? build::build_scin_tiers(b, false, false) : build::build_scin(b, false); }},
      {Algorithm::ScinInq, "scin-inq", "SCIN with in-network block quantisation (INT8 + one scale per block)", true,
       false, [](const Config& c) { return needs_isa(c, "scin-inq", true); },
       [](Builder& b) { b.s.two_tier() ? build::build_scin_tiers(b, true, false) : build::build_scin(b, true); }},
      {Algorithm::RingQ8, "ring-q8", "ring with a block-quantised payload, re-quantised at every hop", true, false,
       nullptr, [](Builder& b) { build::build_ring_q(b); }},
      {Algorithm::TwoShotQ8, "two-shot-q8",
       "two-shot with a block-quantised payload (QuickReduce / Flash Communication)", true, false, nullptr,
       [](Builder& b) { build::build_two_shot(b, true); }},
      {Algorithm::ScinInqUplink, "scin-inq-uplink",
       "hierarchical SCIN quantising only the leaf-spine hop (two-tier fabrics; INT8 + one scale per block)", true,
       false, needs_uplink_inq, [](Builder& b) { build::build_scin_tiers(b, false, true); }},
  };
  return t;
}

std::vector<AlgorithmInfo>& table() {
  static std::vector<AlgorithmInfo> t = builtin();
  return t;
}

}  // namespace

const std::vector<AlgorithmInfo>& algorithms() { return table(); }

const AlgorithmInfo& info(Algorithm a) {
  const auto i = static_cast<std::size_t>(a);
  if (i >= table().size()) throw Error(fmt::format("algo: no algorithm with id {}", i));
  return table()[i];
}

const std::string& to_string(Algorithm a) { return info(a).name; }

const AlgorithmInfo* find_algorithm(std::string_view name) {
  for (const auto& a : table())
    if (a.name == name) return &a;
  return nullptr;
}

std::string unknown_algorithm_message(std::string_view name, std::string_view field) {
  std::vector<std::string_view> names;
  for (const auto& a : table()) names.push_back(a.name);
  return fmt::format("{}: unknown algorithm '{}'; allowed {}", field, name, fmt::join(names, ", "));
}

Algorithm parse_algorithm(std::string_view name, std::string_view field) {
  if (const AlgorithmInfo* a = find_algorithm(name)) return a->id;
  throw Error(unknown_algorithm_message(name, field));
}

Algorithm register_algorithm(AlgorithmInfo a) {
  if (a.name.empty()) throw Error("algorithm: a registered algorithm needs a name");
  if (find_algorithm(a.name)) throw Error(fmt::format("algorithm: '{}' is already registered", a.name));
  if (!a.build) throw Error(fmt::format("algorithm: '{}' has no builder", a.name));
  if (table().size() > 255) throw Error("algorithm: the table is full (256 algorithms)");
  a.id = static_cast<Algorithm>(table().size());
  table().push_back(std::move(a));
  return table().back().id;
}

std::string unsupported_reason(const Config& cfg, Algorithm algo) {
  const AlgorithmInfo& a = info(algo);
  return a.unsupported ? a.unsupported(cfg) : std::string();
}

std::string unsupported_reason(const Config& cfg, const std::string& algo) {
  return unsupported_reason(cfg, parse_algorithm(algo));
}

void require_supported(const Config& cfg, Algorithm algo, std::string_view field) {
  if (auto why = unsupported_reason(cfg, algo); !why.empty()) throw Error(fmt::format("{}: {}", field, why));
}

std::vector<std::string> supported_algorithms(const Config& cfg) {
  std::vector<std::string> out;
  for (const auto& a : table())
    if (unsupported_reason(cfg, a.id).empty()) out.push_back(a.name);
  return out;
}

namespace {
// What compile() and ring_form() require before building.
void check_compilable(const Config& cfg, Algorithm algo) {
  if (!cfg.fabric.graph_file.empty())
    throw Error("fabric.graph_file: a node/link list is checked and drawn but not simulated; the engines run the "
                "star, mesh and two-tier generators (fabric.topology)");
  require_supported(cfg, algo);
  if (info(algo).ring_protocol && cfg.ring.protocol == RingProtocol::Auto)
    throw Error("ring.protocol: compile() needs a concrete protocol (auto is resolved by simulate())");
}
}  // namespace

Schedule compile(const Config& cfg, Algorithm algo, const Collective& c) { return compile(cfg, algo, c, RunContext{}); }

Schedule compile(const Config& cfg, Algorithm algo, const Collective& c, const RunContext& ctx) {
  return compile(cfg, algo, c, ctx, CompileOptions{});
}

Schedule compile(const Config& cfg, Algorithm algo, const Collective& c, const RunContext& ctx,
                 const CompileOptions& opt) {
  const AlgorithmInfo& a = info(algo);
  check_compilable(cfg, algo);
  build::Builder b(cfg, a.name, c, opt.storage);
  b.labels = opt.labels;
  b.planes = opt.planes;
  b.quantise_once = opt.quantise_once;
  b.leaves_once = opt.leaves_once;
  if (opt.quantise_once && (cfg.fabric.topology != Topology::TwoTier || algo != Algorithm::ScinInq))
    throw Error("compile: quantising on one rank for all is for two-tier SCIN+INQ");
  if (opt.leaves_once && (cfg.fabric.topology != Topology::TwoTier || !cfg.fabric.graph_file.empty() ||
                          (algo != Algorithm::Scin && algo != Algorithm::ScinInq && algo != Algorithm::ScinInqUplink) ||
                          (algo == Algorithm::ScinInq && !opt.quantise_once)))
    throw Error("compile: building one leaf for all is for two-tier SCIN (SCIN+INQ quantised on one rank)");
  if (opt.planes && (opt.planes->size() != static_cast<std::size_t>(std::max(0, cfg.fabric.planes)) ||
                     !cfg.fabric.graph_file.empty() || cfg.fabric.topology != Topology::TwoTier ||
                     (algo != Algorithm::Scin && algo != Algorithm::ScinInq && algo != Algorithm::ScinInqUplink)))
    throw Error("compile: building some planes only is for two-tier SCIN, one flag per plane");
  if (ctx.stop.stop_possible()) b.ctx = &ctx;
  a.build(b);
  if (opt.check) check_schedule(b.s, b.ctx);
  return std::move(b.s);
}

Schedule compile(const Config& cfg, const std::string& algo, const Collective& c) {
  return compile(cfg, parse_algorithm(algo), c);
}

RingForm ring_form(const Config& cfg, const Collective& c) {
  check_compilable(cfg, Algorithm::Ring);
  const build::Builder b(cfg, info(Algorithm::Ring).name, c);
  return build::ring_form(b, cfg.ring.protocol);
}

void set_ring_protocol(Schedule& s, RingProtocol p) {
  if (s.algorithm != "ring") throw Error(fmt::format("set_ring_protocol: schedule {} is not the ring", s.algorithm));
  if (p == RingProtocol::Auto) throw Error("ring.protocol: set_ring_protocol() needs a concrete protocol");
  s.variant = to_string(p);
  for (Step& st : s.steps)
    if (st.ring_step) st.protocol = p;
}

int dtype_bytes(DType t) { return t == DType::Fp32 ? 4 : 2; }

std::uint64_t element_count(std::uint64_t bytes, DType dtype) {
  const auto eb = static_cast<std::uint64_t>(dtype_bytes(dtype));
  if (bytes == 0) throw Error("bytes: message size must be at least one element");
  if (bytes % eb != 0)
    throw Error(fmt::format("bytes: {} is not a multiple of the {} element size ({} bytes)", bytes,
                            to_string(dtype), eb));
  if (bytes > (std::uint64_t{1} << 40)) throw Error(fmt::format("bytes: {} exceeds the 1 TiB limit", bytes));
  return bytes / eb;
}

double payload_ratio(const QuantSpec& q) {
  const double g = q.block_elems;
  return (codec_bits(q.codec) * g + 8.0 * scale_bytes(q.scale_format)) / (16.0 * g);
}

}  // namespace scin
