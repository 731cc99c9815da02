// LLM inference under tensor parallelism: time to first token (TTFT) and time
// per output token (TPOT) of a Megatron-style TP forward pass, with the two
// All-Reduces per layer timed by the collective simulator (scin::simulate).
//
// Model:   every transformer layer is QKV GEMM -> attention -> out-projection
//          -> All-Reduce -> MLP up(+gate) -> MLP down -> All-Reduce, each GEMM
//          split across the TP ranks; every operator is timed by its own
//          roofline, max(FLOPs / (peak x compute_efficiency),
//          bytes / (HBM bandwidth x hbm_efficiency)). Elementwise operators
//          (norms, residual adds, activation) are HBM-bound ("other").
//          Compute and communication do not overlap (Megatron TP puts the
//          All-Reduce on the critical path).
// TTFT:    one prefill of batch x prompt tokens, plus the LM head for the last
//          token of every sequence.
// TPOT:    one decode step of `batch` tokens, each attending to `context`
//          cached tokens, plus the LM head.
// The equations, constants and their sources are in docs/model.md (section 6).
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "base/run_context.h"
#include "engines/engine.h"
#include "fabric/config.h"

namespace scin {

// ---------------------------------------------------------------- model specs

enum class FfnType { SwiGlu, Gelu };
const char* to_string(FfnType t);

/// A decoder-only transformer's shape. Stored as JSON under resources/models/.
struct ModelSpec {
  std::string name;            // e.g. "llama-2-70b" (the file's stem)
  std::string description;
  int hidden_size = 0;         // d_model
  int layers = 0;
  int heads = 0;               // query heads
  int kv_heads = 0;            // key/value heads (GQA: fewer than heads)
  int head_dim = 0;            // usually hidden_size / heads
  int ffn_size = 0;            // intermediate size of the MLP
  FfnType ffn_type = FfnType::SwiGlu;   // SwiGLU: gate + up + down; GELU: up + down
  int vocab_size = 0;
  int bytes_per_element = 2;   // weights, activations and KV cache (BF16)
  std::map<std::string, std::string> sources;   // field -> public source

  /// Parameters of one layer (attention + MLP weights; norms ignored).
  double layer_params() const;
  /// All parameters: layers x layer_params + embedding + LM head.
  double total_params() const;
};

struct ModelInfo {
  std::string name;
  std::string description;
  std::filesystem::path file;
};

/// Models under resources/models/, sorted by name.
std::vector<ModelInfo> list_models();
/// Loads a model by name ("llama-2-70b") or path to a .json file. Throws Error.
ModelSpec load_model(const std::string& name_or_path);
/// Builds and validates a model from JSON; `origin` names it in error messages.
ModelSpec model_from_json(const nlohmann::json& j, const std::string& origin = "model");
nlohmann::json to_json(const ModelSpec& m);
/// Checks every field's range and shape consistency; throws Error naming the field.
void validate(const ModelSpec& m);

// ---------------------------------------------------------- accelerator specs

struct AcceleratorInfo {
  std::string name;            // e.g. "H200" (the file's stem)
  std::string description;
  std::filesystem::path file;
};

/// Accelerators under resources/accelerators/, sorted by name.
std::vector<AcceleratorInfo> list_accelerators();
/// Applies an accelerator spec (name such as "H200" or a .json path) to `cfg`:
/// every value in the file's "accelerator" object is set through the registry
/// (accelerator.* paths only). Throws Error for unknown names or bad values.
void apply_accelerator(Config& cfg, const std::string& name_or_path);
/// The "sources" object of an accelerator file (dotted path -> source).
std::map<std::string, std::string> accelerator_sources(const std::string& name_or_path);

// ---------------------------------------------------------- per-layer costs

/// One operator of a layer on one TP rank.
struct OpCost {
  std::string name;            // "qkv", "attention", "out_proj", "mlp_up", "mlp_down", "elementwise"
  double flops = 0;            // per GPU
  double bytes = 0;            // HBM bytes read + written per GPU
  bool elementwise = false;    // counted as "other" (HBM-bound), not "compute"
};

/// One transformer layer on one TP rank, for `batch` sequences each adding
/// `new_tokens` tokens to a cache that then holds `context_tokens` tokens
/// (prefill: new = context = prompt; decode: new = 1, context = C).
struct LayerCost {
  std::vector<OpCost> ops;
  int allreduces = 0;                  // 2 (Megatron TP), 0 when tp == 1
  std::uint64_t allreduce_bytes = 0;   // each: tokens x hidden x bytes_per_element
  double flops() const;
  double bytes() const;
};

LayerCost layer_cost(const ModelSpec& m, int tp, int batch, int new_tokens, int context_tokens);
/// The LM head (vocab-parallel GEMM) for `tokens` tokens on one TP rank.
OpCost lm_head_cost(const ModelSpec& m, int tp, int tokens);

/// Roofline time of one operator, ns: max(FLOPs / (peak x eff), bytes / (HBM x eff)).
double roofline_ns(const AcceleratorSpec& a, const OpCost& op);

// --------------------------------------------------------------- request

struct InferenceRequest {
  std::string model = "llama-2-70b";   // name or .json path (ignored if model_spec is set)
  std::shared_ptr<const ModelSpec> model_spec;  // optional: an in-memory model (tests, GUI)
  std::string accelerator;             // name or path; empty keeps the fabric's accelerator.*.
                                       // Applied on top of `fabric`, so it overrides accelerator.*
                                       // values set there: to sweep those, leave this empty.
  Config fabric;                       // the fabric preset (its fabric.gpus is the TP limit)
  int tp = 8;                          // tensor-parallel degree (ranks in each All-Reduce)
  int batch = 1;                       // sequences
  int prompt_tokens = 2048;            // prefill length per sequence
  int context_tokens = 0;              // KV-cache length at the decode step; 0 = prompt_tokens
  std::vector<std::string> algorithms; // empty: every algorithm the fabric supports
  std::string baseline = "ring";       // speedups are baseline time / algorithm time
  std::string engine = "analytic";     // "analytic" | "packet"
  bool communication = true;           // false: skip the All-Reduces (pure roofline)
};

/// One phase (prefill or decode) of one algorithm. The parts add up to total_us.
struct PhaseResult {
  double total_us = 0;
  double compute_us = 0;         // GEMMs, attention, LM head (roofline)
  double communication_us = 0;   // All-Reduce time other than quantisation
  double quantisation_us = 0;    // (de)quantisation inside the All-Reduce schedules (INQ, *-q8)
  double other_us = 0;           // elementwise operators (norms, residuals, activation)
  double comm_share = 0;         // (communication + quantisation) / total
  std::uint64_t tokens = 0;      // tokens per forward pass (batch x new tokens)
  std::uint64_t allreduce_bytes = 0;   // size of each All-Reduce
  int allreduces = 0;            // in the whole pass (2 x layers)
  double allreduce_us = 0;       // one All-Reduce
  std::string variant;           // e.g. the ring protocol picked
};

struct AlgorithmResult {
  std::string algorithm;
  PhaseResult prefill;           // TTFT
  PhaseResult decode;            // TPOT
  double ttft_us() const { return prefill.total_us; }
  double tpot_us() const { return decode.total_us; }
  double ttft_speedup = 0;       // baseline TTFT / this TTFT (0 if no baseline)
  double tpot_speedup = 0;
  /// What the simulated All-Reduces say of themselves (SimResult `extra.note`, e.g. that NCCL
  /// would not run NVLS at this TP degree); empty if nothing. Both phases' notes, each once.
  std::string note;
};

struct InferenceResult {
  std::string model;
  std::string accelerator;
  std::string fabric;
  std::string engine;
  int tp = 0, batch = 0, prompt_tokens = 0, context_tokens = 0;
  std::string baseline;          // empty if not computed
  LayerCost prefill_layer;       // per-layer costs, for --explain and tests
  LayerCost decode_layer;
  std::vector<AlgorithmResult> algorithms;
  const AlgorithmResult* find(const std::string& algo) const;
};

/// Memoises All-Reduce times per (fabric config, engine, algorithm, bytes).
/// Pass one to run_inference to share simulations across a sweep. Not thread-safe.
class AllReduceCache {
 public:
  AllReduceCache();
  ~AllReduceCache();
  AllReduceCache(const AllReduceCache&) = delete;
  AllReduceCache& operator=(const AllReduceCache&) = delete;
  std::size_t size() const;      // simulations stored
  struct Impl;
 private:
  friend InferenceResult run_inference(const InferenceRequest&, AllReduceCache*, const RunContext&);
  std::unique_ptr<Impl> impl_;
};

/// Runs the model. Throws Error (naming the field and allowed range) for bad
/// input: unknown model/accelerator/algorithm, tp not dividing heads, zero batch,
/// tp above the fabric's fabric.gpus, a packet-engine All-Reduce above 1 GiB...
/// Thread-safe as long as each thread uses its own cache (or none). Every
/// All-Reduce it simulates gets `ctx` (a stop request throws Cancelled).
InferenceResult run_inference(const InferenceRequest& req, AllReduceCache* cache = nullptr,
                              const RunContext& ctx = {});

/// The work of run_inference(req) before it runs, for the work budget: its
/// All-Reduces' estimates on the engine asked for (each size once per
/// algorithm, as run_inference simulates them; the memory of the largest).
/// Throws Error for the bad input run_inference refuses.
WorkEstimate inference_work(const InferenceRequest& req);

nlohmann::json to_json(const PhaseResult& p);
nlohmann::json to_json(const InferenceResult& r);

}  // namespace scin
