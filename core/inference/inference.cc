#include "inference/inference.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <map>
#include <tuple>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "schedule/algorithms.h"
#include "base/error.h"
#include "base/json_input.h"
#include "base/text.h"
#include "fabric/params.h"
#include "fabric/preset.h"
#include "engines/simulate.h"

namespace scin {
namespace fs = std::filesystem;

namespace {

struct Entry {
  std::string name, description;
  fs::path file;
};

std::vector<Entry> list_dir(const std::string& sub) {
  std::vector<Entry> out;
  fs::path dir = resource_dir() / sub;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return out;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().extension() != ".json") continue;
    Entry info{e.path().stem().string(), "", e.path()};
    try {
      auto j = read_json_document(e.path());
      if (const auto* d = j.is_object() ? json_member(j, "description", e.path().string()) : nullptr)
        info.description = json_string(*d, "description");
    } catch (const std::exception& err) {
      info.description = std::string("(unreadable: ") + err.what() + ")";
    }
    out.push_back(std::move(info));
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  return out;
}

// A resource by name (case-insensitive) or by path to a .json file.
fs::path resolve(const std::string& kind, const std::string& sub, const std::string& name_or_path) {
  if (name_or_path.empty()) throw Error(fmt::format("{}: no name given", kind));
  fs::path p(name_or_path);
  if (p.extension() == ".json" || name_or_path.find('/') != std::string::npos) {
    if (!fs::exists(p)) throw Error(fmt::format("{}: file '{}' does not exist", kind, name_or_path));
    return p;
  }
  auto entries = list_dir(sub);
  for (const auto& e : entries)
    if (ascii_lower(e.name) == ascii_lower(name_or_path)) return e.file;
  std::vector<std::string> names;
  for (const auto& e : entries) names.push_back(e.name);
  throw Error(fmt::format("{}: unknown {} '{}'; known: {}", kind, kind, name_or_path,
                          names.empty() ? std::string("(none)") : fmt::format("{}", fmt::join(names, ", "))));
}

void check_range(const std::string& field, double v, double lo, double hi) {
  if (!(v >= lo && v <= hi))
    throw Error(fmt::format("{}: {} is out of range; allowed {}..{}", field, v, lo, hi));
}

int member_int(const nlohmann::json& j, const char* key, const std::string& origin) {
  if (!j.contains(key)) throw Error(fmt::format("{}: {}: missing (an integer)", origin, key));
  return static_cast<int>(json_int(j.at(key), fmt::format("{}: {}", origin, key), 0, 1 << 30));
}

DType dtype_for(int bytes_per_element) { return bytes_per_element == 4 ? DType::Fp32 : DType::Bf16; }

}  // namespace

// ---------------------------------------------------------------- model specs

const char* to_string(FfnType t) { return t == FfnType::SwiGlu ? "swiglu" : "gelu"; }

double ModelSpec::layer_params() const {
  double h = hidden_size, d = head_dim;
  double attn = h * (heads + 2.0 * kv_heads) * d + heads * d * h;
  double mlp = (ffn_type == FfnType::SwiGlu ? 3.0 : 2.0) * h * ffn_size;
  return attn + mlp;
}

double ModelSpec::total_params() const {
  return layers * layer_params() + 2.0 * static_cast<double>(vocab_size) * hidden_size;
}

void validate(const ModelSpec& m) {
  auto pre = [&](const char* f) { return fmt::format("model {}: {}", m.name.empty() ? "?" : m.name, f); };
  check_range(pre("hidden_size"), m.hidden_size, 1, 1 << 20);
  check_range(pre("layers"), m.layers, 1, 10000);
  check_range(pre("heads"), m.heads, 1, 1 << 16);
  check_range(pre("kv_heads"), m.kv_heads, 1, m.heads);
  if (m.heads % m.kv_heads != 0)
    throw Error(fmt::format("{}: {} does not divide heads ({})", pre("kv_heads"), m.kv_heads, m.heads));
  check_range(pre("head_dim"), m.head_dim, 1, 1 << 16);
  check_range(pre("ffn_size"), m.ffn_size, 1, 1 << 24);
  check_range(pre("vocab_size"), m.vocab_size, 1, 1 << 24);
  if (m.bytes_per_element != 2 && m.bytes_per_element != 4)
    throw Error(fmt::format("{}: {} is not allowed; allowed 2 (BF16) or 4 (FP32)",
                            pre("bytes_per_element"), m.bytes_per_element));
}

ModelSpec model_from_json(const nlohmann::json& j, const std::string& origin) {
  if (!j.is_object()) throw Error(fmt::format("{}: expected a JSON object at the top level", origin));
  static const std::vector<std::string> known = {
      "name", "description", "sources", "notes", "hidden_size", "layers", "heads", "kv_heads",
      "head_dim", "ffn_size", "ffn_type", "vocab_size", "bytes_per_element", "params", "$schema"};
  for (auto it = j.begin(); it != j.end(); ++it)
    if (std::find(known.begin(), known.end(), it.key()) == known.end())
      throw Error(fmt::format("{}: unknown field '{}'; allowed {}", origin, it.key(), fmt::join(known, ", ")));
  ModelSpec m;
  if (j.contains("name")) {
    if (!j["name"].is_string()) throw Error(fmt::format("{}: name: expected a string", origin));
    m.name = j["name"].get<std::string>();
  }
  if (j.contains("description") && j["description"].is_string()) m.description = j["description"].get<std::string>();
  m.hidden_size = member_int(j, "hidden_size", origin);
  m.layers = member_int(j, "layers", origin);
  m.heads = member_int(j, "heads", origin);
  m.kv_heads = j.contains("kv_heads") ? member_int(j, "kv_heads", origin) : m.heads;
  m.head_dim = j.contains("head_dim") ? member_int(j, "head_dim", origin)
                                      : (m.heads > 0 ? m.hidden_size / m.heads : 0);
  m.ffn_size = member_int(j, "ffn_size", origin);
  m.vocab_size = member_int(j, "vocab_size", origin);
  if (j.contains("bytes_per_element")) m.bytes_per_element = member_int(j, "bytes_per_element", origin);
  if (j.contains("ffn_type")) {
    if (!j["ffn_type"].is_string()) throw Error(fmt::format("{}: ffn_type: expected a string", origin));
    std::string t = ascii_lower(j["ffn_type"].get<std::string>());
    if (t == "swiglu") m.ffn_type = FfnType::SwiGlu;
    else if (t == "gelu") m.ffn_type = FfnType::Gelu;
    else throw Error(fmt::format("{}: ffn_type: '{}' is not allowed; allowed swiglu, gelu", origin, t));
  }
  if (j.contains("sources") && j["sources"].is_object())
    for (auto it = j["sources"].begin(); it != j["sources"].end(); ++it)
      if (it.value().is_string()) m.sources[it.key()] = it.value().get<std::string>();
  if (m.name.empty()) m.name = origin;
  validate(m);
  return m;
}

nlohmann::json to_json(const ModelSpec& m) {
  nlohmann::json j;
  j["name"] = m.name;
  j["description"] = m.description;
  j["hidden_size"] = m.hidden_size;
  j["layers"] = m.layers;
  j["heads"] = m.heads;
  j["kv_heads"] = m.kv_heads;
  j["head_dim"] = m.head_dim;
  j["ffn_size"] = m.ffn_size;
  j["ffn_type"] = to_string(m.ffn_type);
  j["vocab_size"] = m.vocab_size;
  j["bytes_per_element"] = m.bytes_per_element;
  j["params"] = m.total_params();
  if (!m.sources.empty()) j["sources"] = m.sources;
  return j;
}

std::vector<ModelInfo> list_models() {
  std::vector<ModelInfo> out;
  for (auto& e : list_dir("models")) out.push_back({e.name, e.description, e.file});
  return out;
}

ModelSpec load_model(const std::string& name_or_path) {
  fs::path f = resolve("model", "models", name_or_path);
  ModelSpec m = model_from_json(read_json_document(f), f.filename().string());
  return m;
}

// ---------------------------------------------------------- accelerator specs

std::vector<AcceleratorInfo> list_accelerators() {
  std::vector<AcceleratorInfo> out;
  for (auto& e : list_dir("accelerators")) out.push_back({e.name, e.description, e.file});
  return out;
}

void apply_accelerator(Config& cfg, const std::string& name_or_path) {
  fs::path f = resolve("accelerator", "accelerators", name_or_path);
  auto j = read_json_document(f);
  std::string origin = f.filename().string();
  if (!j.is_object() || !j.contains("accelerator") || !j["accelerator"].is_object())
    throw Error(fmt::format("{}: expected an \"accelerator\" object of accelerator.* parameters", origin));
  const auto values = flatten_params(j["accelerator"], "accelerator", origin);
  Config trial = cfg;
  for (const auto& [path, value] : values) {
    if (!find_param(path))
      throw Error(fmt::format("{}: unknown parameter '{}'; `scin params` lists them all", origin, path));
    try {
      set_param(trial, path, value);
    } catch (const Error& e) {
      throw Error(fmt::format("{}: {}", origin, e.what()));
    }
  }
  if (trial.accelerator.name.empty() || trial.accelerator.name == cfg.accelerator.name)
    trial.accelerator.name = j.contains("name") ? json_string(j["name"], origin + ": name") : f.stem().string();
  cfg = std::move(trial);
}

std::map<std::string, std::string> accelerator_sources(const std::string& name_or_path) {
  auto j = read_json_document(resolve("accelerator", "accelerators", name_or_path));
  std::map<std::string, std::string> out;
  if (j.contains("sources") && j["sources"].is_object())
    for (auto it = j["sources"].begin(); it != j["sources"].end(); ++it)
      if (it.value().is_string()) out[it.key()] = it.value().get<std::string>();
  return out;
}

// ---------------------------------------------------------- per-layer costs

double LayerCost::flops() const {
  double s = 0;
  for (const auto& o : ops) s += o.flops;
  return s;
}

double LayerCost::bytes() const {
  double s = 0;
  for (const auto& o : ops) s += o.bytes;
  return s;
}

namespace {

// Checks that `tp` can split the model Megatron-style; returns KV heads per rank.
int kv_heads_per_rank(const ModelSpec& m, int tp) {
  if (tp < 1) throw Error(fmt::format("tp: {} is out of range; allowed 1..{}", tp, m.heads));
  if (m.heads % tp != 0) {
    std::vector<int> divisors;
    for (int d = 1; d <= m.heads; ++d)
      if (m.heads % d == 0) divisors.push_back(d);
    throw Error(fmt::format("tp: {} does not divide the {} attention heads of {}; allowed {}", tp,
                            m.heads, m.name, fmt::join(divisors, ", ")));
  }
  if (m.ffn_size % tp != 0)
    throw Error(fmt::format("tp: {} does not divide the FFN size {} of {}", tp, m.ffn_size, m.name));
  if (m.kv_heads >= tp) {
    if (m.kv_heads % tp != 0)
      throw Error(fmt::format("tp: {} does not divide the {} KV heads of {}", tp, m.kv_heads, m.name));
    return m.kv_heads / tp;
  }
  // Fewer KV heads than ranks: each KV head is replicated on tp / kv_heads ranks (vLLM, Megatron).
  if (tp % m.kv_heads != 0)
    throw Error(fmt::format("tp: {} is not a multiple of the {} KV heads of {}", tp, m.kv_heads, m.name));
  return 1;
}

}  // namespace

LayerCost layer_cost(const ModelSpec& m, int tp, int batch, int new_tokens, int context_tokens) {
  validate(m);
  const int kvpr = kv_heads_per_rank(m, tp);
  check_range("batch", batch, 1, 1 << 20);
  check_range("new_tokens", new_tokens, 1, 1 << 24);
  if (context_tokens < new_tokens)
    throw Error(fmt::format("context: {} is below the {} new tokens; allowed {}..{}", context_tokens,
                            new_tokens, new_tokens, 1 << 24));
  check_range("context", context_tokens, 1, 1 << 24);

  const double e = m.bytes_per_element;
  const double h = m.hidden_size;
  const double B = batch, n = new_tokens, C = context_tokens;
  const double T = B * n;                                   // tokens in this pass
  const double hq = static_cast<double>(m.heads / tp) * m.head_dim;  // query width per rank
  const double hkv = static_cast<double>(kvpr) * m.head_dim;        // K (or V) width per rank
  const double qkv = hq + 2 * hkv;
  const double k_up = m.ffn_type == FfnType::SwiGlu ? 2 : 1;  // gate + up, or up
  const double f = static_cast<double>(m.ffn_size / tp);
  // Query-key pairs: new token i (0..n-1) sees the C-n cached tokens plus i+1 new ones (causal).
  const double pairs = B * (n * (C - n) + n * (n + 1) / 2);

  LayerCost lc;
  lc.ops.push_back({"qkv", 2 * T * h * qkv, e * (h * qkv + T * h + T * qkv), false});
  lc.ops.push_back({"attention", 4 * hq * pairs, e * (2 * T * hq + 2 * B * C * hkv), false});
  lc.ops.push_back({"out_proj", 2 * T * hq * h, e * (hq * h + T * hq + T * h), false});
  lc.ops.push_back({"mlp_up", 2 * T * h * k_up * f, e * (h * k_up * f + T * h + T * k_up * f), false});
  lc.ops.push_back({"mlp_down", 2 * T * f * h, e * (f * h + T * f + T * h), false});
  // Two RMSNorms (read + write T x h), two residual adds (read 2, write 1), the activation
  // (SwiGLU reads gate and up, writes one; GELU reads one, writes one).
  const double act = m.ffn_type == FfnType::SwiGlu ? 3 * T * f : 2 * T * f;
  lc.ops.push_back({"elementwise", 0, e * (2 * 2 * T * h + 2 * 3 * T * h + act), true});
  lc.allreduces = tp > 1 ? 2 : 0;
  lc.allreduce_bytes = tp > 1 ? static_cast<std::uint64_t>(T) * static_cast<std::uint64_t>(m.hidden_size) *
                                    static_cast<std::uint64_t>(m.bytes_per_element)
                              : 0;
  return lc;
}

OpCost lm_head_cost(const ModelSpec& m, int tp, int tokens) {
  const double e = m.bytes_per_element, h = m.hidden_size, t = tokens;
  const double v = static_cast<double>(m.vocab_size) / tp;   // vocab-parallel shard
  return {"lm_head", 2 * t * h * v, e * (h * v + t * h + t * v), false};
}

double roofline_ns(const AcceleratorSpec& a, const OpCost& op) {
  // 1 TFLOP/s = 10^3 FLOP/ns; 1 GB/s = 1 byte/ns.
  double compute_ns = op.flops / (a.peak_bf16_TFLOPS * 1e3 * a.compute_efficiency);
  double memory_ns = op.bytes / (a.hbm_bandwidth_GBps * a.hbm_efficiency);
  return std::max(compute_ns, memory_ns);
}

// --------------------------------------------------------------- the run

struct AllReduceCache::Impl {
  std::map<std::tuple<std::string, std::string, std::string, std::uint64_t>, SimResult> results;
};

AllReduceCache::AllReduceCache() : impl_(std::make_unique<Impl>()) {}
AllReduceCache::~AllReduceCache() = default;
std::size_t AllReduceCache::size() const { return impl_->results.size(); }

const AlgorithmResult* InferenceResult::find(const std::string& algo) const {
  for (const auto& a : algorithms)
    if (a.algorithm == algo) return &a;
  return nullptr;
}

namespace {

struct PhaseShape {
  int new_tokens, context_tokens, head_tokens;
};

// What run_inference checks and derives from a request before it simulates:
// the model, the fabric of `tp` ranks, the algorithms, each phase's layer.
struct InferencePlan {
  ModelSpec model;
  Config cfg;
  bool comm = false;
  int context = 0;
  std::vector<std::string> algos;
  LayerCost prefill, decode;
};

InferencePlan plan_inference(const InferenceRequest& req) {
  InferencePlan plan;
  ModelSpec& model = plan.model;
  model = req.model_spec ? *req.model_spec : load_model(req.model);
  validate(model);
  check_range("batch", req.batch, 1, 65536);
  check_range("prompt", req.prompt_tokens, 1, 1 << 20);
  if (req.context_tokens != 0) check_range("context", req.context_tokens, 1, 1 << 20);
  plan.context = req.context_tokens == 0 ? req.prompt_tokens : req.context_tokens;
  if (static_cast<double>(req.batch) * req.prompt_tokens > static_cast<double>(1 << 24))
    throw Error(fmt::format("batch x prompt: {} tokens in one prefill; allowed at most {}",
                            static_cast<double>(req.batch) * req.prompt_tokens, 1 << 24));

  Config& cfg = plan.cfg;
  cfg = req.fabric;
  validate(cfg);
  if (!req.accelerator.empty()) apply_accelerator(cfg, req.accelerator);
  if (req.tp < 1 || req.tp > req.fabric.fabric.gpus)
    throw Error(fmt::format("tp: {} is out of range; allowed 1..{} (the accelerators of fabric {})",
                            req.tp, req.fabric.fabric.gpus, req.fabric.name));
  kv_heads_per_rank(model, req.tp);   // throws if tp cannot split the model
  plan.comm = req.communication && req.tp > 1;
  if (req.tp > 1) set_param(cfg, "fabric.gpus", static_cast<double>(req.tp));

  std::vector<std::string>& algos = plan.algos;
  algos = req.algorithms;
  if (algos.empty()) algos = supported_algorithms(cfg);
  for (const auto& a : algos) parse_algorithm(a, "algo");
  if (!req.baseline.empty()) {
    parse_algorithm(req.baseline, "baseline");
    if (std::find(algos.begin(), algos.end(), req.baseline) == algos.end())
      algos.insert(algos.begin(), req.baseline);
  }
  for (const auto& a : algos)
    if (auto why = unsupported_reason(cfg, a); !why.empty()) throw Error(fmt::format("algo: {}", why));
  parse_timing_engine(req.engine, "engine");

  // The packet engine simulates every packet: an 8 GiB All-Reduce takes minutes per algorithm.
  constexpr std::uint64_t kPacketMaxBytes = 1ull << 30;
  const std::uint64_t prefill_ar_bytes = static_cast<std::uint64_t>(req.batch) * req.prompt_tokens *
                                         static_cast<std::uint64_t>(model.hidden_size) * model.bytes_per_element;
  if (plan.comm && req.engine == "packet" && prefill_ar_bytes > kPacketMaxBytes)
    throw Error(fmt::format("engine: the packet engine simulates every packet and allows All-Reduces up to {} bytes "
                            "(1 GiB) here; batch x prompt = {} tokens of {} needs {} bytes; use --engine analytic "
                            "or fewer tokens",
                            kPacketMaxBytes, static_cast<std::uint64_t>(req.batch) * req.prompt_tokens, model.name,
                            prefill_ar_bytes));

  plan.prefill = layer_cost(model, req.tp, req.batch, req.prompt_tokens, req.prompt_tokens);
  plan.decode = layer_cost(model, req.tp, req.batch, 1, plan.context);
  return plan;
}

}  // namespace

WorkEstimate inference_work(const InferenceRequest& req) {
  const InferencePlan plan = plan_inference(req);
  WorkEstimate w;
  if (!plan.comm) return w;
  const EngineId engine = parse_timing_engine(req.engine, "engine");
  const DType dtype = dtype_for(plan.model.bytes_per_element);
  double memory = 0;
  // (run_inference memoises: a prompt of one token simulates one size, not two)
  std::vector<std::uint64_t> sizes = {plan.prefill.allreduce_bytes};
  if (plan.decode.allreduce_bytes != plan.prefill.allreduce_bytes) sizes.push_back(plan.decode.allreduce_bytes);
  for (const auto& algo : plan.algos)
    for (const std::uint64_t bytes : sizes) {
      WorkEstimate e = estimate(plan.cfg, parse_algorithm(algo), Collective{bytes, dtype}, engine);
      memory = std::max(memory, e.memory_bytes);   // (one All-Reduce after another)
      e.memory_bytes = 0;
      w += e;
    }
  w.memory_bytes = memory;
  return w;
}

InferenceResult run_inference(const InferenceRequest& req, AllReduceCache* cache, const RunContext& ctx) {
  const InferencePlan plan = plan_inference(req);
  const ModelSpec& model = plan.model;
  const Config& cfg = plan.cfg;
  const bool comm = plan.comm;
  const int context = plan.context;
  const std::vector<std::string>& algos = plan.algos;
  InferenceResult out;
  out.model = model.name;
  out.accelerator = cfg.accelerator.name;
  out.fabric = req.fabric.name;
  out.engine = req.engine;
  out.tp = req.tp;
  out.batch = req.batch;
  out.prompt_tokens = req.prompt_tokens;
  out.context_tokens = context;
  out.baseline = req.baseline;
  out.prefill_layer = plan.prefill;
  out.decode_layer = plan.decode;

  AllReduceCache local;
  AllReduceCache& memo = cache ? *cache : local;
  const std::string cfg_key = config_to_json(cfg).dump();
  auto& results = memo.impl_->results;
  RunContext sim_ctx;   // each All-Reduce polls the caller's stop; its progress is not the study's
  sim_ctx.stop = ctx.stop;
  auto allreduce = [&](const std::string& algo, std::uint64_t bytes) -> const SimResult& {
    auto key = std::make_tuple(cfg_key, req.engine, algo, bytes);
    auto it = results.find(key);
    if (it == results.end())
      it = results
               .emplace(key, simulate(cfg, algo, Collective{bytes, dtype_for(model.bytes_per_element)}, req.engine,
                                      sim_ctx))
               .first;
    return it->second;
  };

  // Roofline part of a phase: identical for every algorithm.
  auto roofline = [&](const LayerCost& lc, int head_tokens, PhaseResult& p) {
    double compute_ns = 0, other_ns = 0;
    for (const auto& op : lc.ops) (op.elementwise ? other_ns : compute_ns) += roofline_ns(cfg.accelerator, op);
    compute_ns = compute_ns * model.layers + roofline_ns(cfg.accelerator, lm_head_cost(model, req.tp, head_tokens));
    other_ns *= model.layers;
    p.compute_us = compute_ns / 1e3;
    p.other_us = other_ns / 1e3;
  };

  for (const auto& algo : algos) {
    ctx.check();
    AlgorithmResult ar;
    ar.algorithm = algo;
    for (int phase = 0; phase < 2; ++phase) {
      const LayerCost& lc = phase == 0 ? out.prefill_layer : out.decode_layer;
      PhaseResult& p = phase == 0 ? ar.prefill : ar.decode;
      p.tokens = static_cast<std::uint64_t>(req.batch) * (phase == 0 ? req.prompt_tokens : 1);
      roofline(lc, req.batch, p);
      if (comm) {
        const SimResult& r = allreduce(algo, lc.allreduce_bytes);
        double quant_ns = r.breakdown[Term::Quantisation];
        double count = static_cast<double>(lc.allreduces) * model.layers;
        p.allreduces = lc.allreduces * model.layers;
        p.allreduce_bytes = lc.allreduce_bytes;
        p.allreduce_us = r.time_ns / 1e3;
        p.variant = r.variant;
        p.quantisation_us = count * quant_ns / 1e3;
        p.communication_us = count * (r.time_ns - quant_ns) / 1e3;
        if (r.extra.is_object() && r.extra.contains("note")) {
          const std::string note = r.extra["note"].get<std::string>();
          if (ar.note.find(note) == std::string::npos) ar.note += (ar.note.empty() ? "" : "; ") + note;
        }
      }
      p.total_us = p.compute_us + p.other_us + p.communication_us + p.quantisation_us;
      p.comm_share = p.total_us > 0 ? (p.communication_us + p.quantisation_us) / p.total_us : 0;
    }
    out.algorithms.push_back(std::move(ar));
    ctx.report(static_cast<double>(out.algorithms.size()) / static_cast<double>(algos.size()));
  }
  if (!req.baseline.empty()) {
    const AlgorithmResult base = *out.find(req.baseline);
    for (auto& a : out.algorithms) {
      a.ttft_speedup = base.ttft_us() / a.ttft_us();
      a.tpot_speedup = base.tpot_us() / a.tpot_us();
    }
  }
  return out;
}

nlohmann::json to_json(const PhaseResult& p) {
  nlohmann::json j;
  j["total_us"] = p.total_us;
  j["compute_us"] = p.compute_us;
  j["communication_us"] = p.communication_us;
  j["quantisation_us"] = p.quantisation_us;
  j["other_us"] = p.other_us;
  j["comm_share"] = p.comm_share;
  j["tokens"] = p.tokens;
  j["allreduces"] = p.allreduces;
  j["allreduce_bytes"] = p.allreduce_bytes;
  j["allreduce_us"] = p.allreduce_us;
  if (!p.variant.empty()) j["variant"] = p.variant;
  return j;
}

namespace {

nlohmann::json to_json(const LayerCost& lc) {
  nlohmann::json j;
  for (const auto& op : lc.ops) j["ops"].push_back({{"name", op.name}, {"flops", op.flops}, {"bytes", op.bytes}});
  j["flops"] = lc.flops();
  j["bytes"] = lc.bytes();
  j["allreduces"] = lc.allreduces;
  j["allreduce_bytes"] = lc.allreduce_bytes;
  return j;
}

}  // namespace

nlohmann::json to_json(const InferenceResult& r) {
  nlohmann::json j;
  j["model"] = r.model;
  j["accelerator"] = r.accelerator;
  j["fabric"] = r.fabric;
  j["engine"] = r.engine;
  j["tp"] = r.tp;
  j["batch"] = r.batch;
  j["prompt"] = r.prompt_tokens;
  j["context"] = r.context_tokens;
  if (!r.baseline.empty()) j["baseline"] = r.baseline;
  j["prefill_layer"] = to_json(r.prefill_layer);
  j["decode_layer"] = to_json(r.decode_layer);
  for (const auto& a : r.algorithms) {
    nlohmann::json ja;
    ja["algorithm"] = a.algorithm;
    ja["ttft_us"] = a.ttft_us();
    ja["tpot_us"] = a.tpot_us();
    if (!r.baseline.empty()) {
      ja["ttft_speedup"] = a.ttft_speedup;
      ja["tpot_speedup"] = a.tpot_speedup;
    }
    if (!a.note.empty()) ja["note"] = a.note;
    ja["prefill"] = to_json(a.prefill);
    ja["decode"] = to_json(a.decode);
    j["algorithms"].push_back(ja);
  }
  return j;
}

}  // namespace scin
