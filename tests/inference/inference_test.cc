// Tests of the TP inference model: closed-form per-layer costs on a toy model,
// All-Reduce count and sizes, roofline exactness without communication,
// monotonicity, the shipped model/accelerator specs, and bad input.
#include <gtest/gtest.h>

#include "error_of.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

#include <sys/wait.h>

#include <nlohmann/json.hpp>

#include "cli_util.h"
#include "inference/inference.h"
#include "schedule/algorithms.h"
#include "base/error.h"
#include "fabric/params.h"
#include "fabric/preset.h"
#include "engines/simulate.h"

namespace scin {
namespace {

// hidden 64, 2 layers, 4 heads / 2 KV heads of 16, SwiGLU FFN 128, vocab 256, BF16.
ModelSpec toy() {
  ModelSpec m;
  m.name = "toy";
  m.hidden_size = 64;
  m.layers = 2;
  m.heads = 4;
  m.kv_heads = 2;
  m.head_dim = 16;
  m.ffn_size = 128;
  m.ffn_type = FfnType::SwiGlu;
  m.vocab_size = 256;
  m.bytes_per_element = 2;
  return m;
}

const OpCost& op(const LayerCost& lc, const std::string& name) {
  for (const auto& o : lc.ops)
    if (o.name == name) return o;
  throw std::runtime_error("no op " + name);
}

// The seed's setting: 8x H200, 4 NVSwitch planes with NVLS and a SCIN ISA + INQ.
Config h200() { return load_preset("hgx-h200-8"); }

InferenceRequest toy_request(int tp) {
  InferenceRequest r;
  r.model_spec = std::make_shared<ModelSpec>(toy());
  r.fabric = h200();
  r.tp = tp;
  r.batch = 2;
  r.prompt_tokens = 3;
  r.context_tokens = 5;
  r.algorithms = {"ring", "scin", "scin-inq"};
  r.baseline = "ring";
  return r;
}

// --- closed form, toy model, tp = 2, batch 2, prompt 3 (T = 6 tokens).
// Per rank: 2 query heads (width 32), 1 KV head (width 16), FFN shard 64.
TEST(InferenceLayer, PrefillFlopsAndBytesMatchHandComputedValues) {
  LayerCost lc = layer_cost(toy(), 2, 2, 3, 3);
  ASSERT_EQ(lc.ops.size(), 6u);
  EXPECT_DOUBLE_EQ(op(lc, "qkv").flops, 2.0 * 6 * 64 * 64);             // 49152
  EXPECT_DOUBLE_EQ(op(lc, "qkv").bytes, 2.0 * (64 * 64 + 6 * 64 + 6 * 64));  // 9728
  // causal: 2 sequences x (1+2+3) query-key pairs = 12; 4 FLOPs x width 32 per pair
  EXPECT_DOUBLE_EQ(op(lc, "attention").flops, 1536);
  EXPECT_DOUBLE_EQ(op(lc, "attention").bytes, 2.0 * (2 * 6 * 32 + 2 * 2 * 3 * 16));  // 1152
  EXPECT_DOUBLE_EQ(op(lc, "out_proj").flops, 24576);
  EXPECT_DOUBLE_EQ(op(lc, "out_proj").bytes, 5248);
  EXPECT_DOUBLE_EQ(op(lc, "mlp_up").flops, 98304);    // gate + up: 2 x 6 x 64 x 128
  EXPECT_DOUBLE_EQ(op(lc, "mlp_up").bytes, 18688);
  EXPECT_DOUBLE_EQ(op(lc, "mlp_down").flops, 49152);
  EXPECT_DOUBLE_EQ(op(lc, "mlp_down").bytes, 9728);
  EXPECT_DOUBLE_EQ(op(lc, "elementwise").flops, 0);
  EXPECT_DOUBLE_EQ(op(lc, "elementwise").bytes, 9984);  // norms 1536 + residuals 2304 + SwiGLU 1152 elems
  EXPECT_TRUE(op(lc, "elementwise").elementwise);
  EXPECT_DOUBLE_EQ(lc.flops(), 49152 + 1536 + 24576 + 98304 + 49152);
  // Two All-Reduces of tokens x hidden x 2 bytes
  EXPECT_EQ(lc.allreduces, 2);
  EXPECT_EQ(lc.allreduce_bytes, 6u * 64 * 2);
}

TEST(InferenceLayer, DecodeReadsTheKvCache) {
  LayerCost lc = layer_cost(toy(), 2, 2, 1, 5);
  // each of 2 new tokens sees 5 keys: 10 pairs
  EXPECT_DOUBLE_EQ(op(lc, "attention").flops, 4.0 * 32 * 10);
  // Q + O (2 x 2 tokens x 32) and K + V of the whole cache (2 x 2 seq x 5 x 16), 2 bytes each
  EXPECT_DOUBLE_EQ(op(lc, "attention").bytes, 896);
  EXPECT_EQ(lc.allreduce_bytes, 2u * 64 * 2);
  // weights dominate: per rank weight bytes = half the layer's parameters x 2 bytes
  double weights = 2.0 * (64 * 64 + 32 * 64 + 64 * 128 + 64 * 64);
  EXPECT_DOUBLE_EQ(weights, toy().layer_params() * 2 / 2);
}

TEST(InferenceLayer, NoAllReduceWithoutTensorParallelism) {
  LayerCost lc = layer_cost(toy(), 1, 2, 3, 3);
  EXPECT_EQ(lc.allreduces, 0);
  EXPECT_EQ(lc.allreduce_bytes, 0u);
}

TEST(InferenceLayer, KvHeadsAreReplicatedWhenTpExceedsThem) {
  // tp 4 > 2 KV heads: each rank keeps one KV head, so K/V widths do not shrink further
  LayerCost lc4 = layer_cost(toy(), 4, 1, 1, 8);
  EXPECT_DOUBLE_EQ(op(lc4, "qkv").flops, 2.0 * 1 * 64 * (16 + 2 * 16));
  EXPECT_DOUBLE_EQ(op(lc4, "attention").bytes, 2.0 * (2 * 16 + 2 * 8 * 16));
}

TEST(InferenceLayer, LmHeadIsVocabParallel) {
  OpCost c = lm_head_cost(toy(), 2, 2);
  EXPECT_DOUBLE_EQ(c.flops, 2.0 * 2 * 64 * 128);
  EXPECT_DOUBLE_EQ(c.bytes, 2.0 * (64 * 128 + 2 * 64 + 2 * 128));
}

TEST(InferenceLayer, RooflineTakesTheSlowerOfComputeAndMemory) {
  AcceleratorSpec a;
  a.peak_bf16_TFLOPS = 2;      // 2000 FLOP/ns at efficiency 1
  a.compute_efficiency = 0.5;  // -> 1000 FLOP/ns
  a.hbm_bandwidth_GBps = 100;  // 100 B/ns
  a.hbm_efficiency = 0.5;      // -> 50 B/ns
  EXPECT_DOUBLE_EQ(roofline_ns(a, {"x", 1e6, 1e3, false}), 1000);   // compute-bound
  EXPECT_DOUBLE_EQ(roofline_ns(a, {"x", 1e3, 1e6, false}), 20000);  // memory-bound
}

// --- the whole pass

TEST(InferenceRun, CommunicationFreeFabricGivesTheRooflineExactly) {
  const ModelSpec m = toy();
  const Config cfg = h200();
  auto roofline_total = [&](int tp, const LayerCost& lc) {
    double ns = 0;
    for (const auto& o : lc.ops) ns += roofline_ns(cfg.accelerator, o);
    return (ns * m.layers + roofline_ns(cfg.accelerator, lm_head_cost(m, tp, 2))) / 1e3;
  };
  // tp = 1: no All-Reduce at all
  InferenceResult r1 = run_inference(toy_request(1));
  for (const auto& a : r1.algorithms) {
    EXPECT_DOUBLE_EQ(a.ttft_us(), roofline_total(1, layer_cost(m, 1, 2, 3, 3))) << a.algorithm;
    EXPECT_DOUBLE_EQ(a.tpot_us(), roofline_total(1, layer_cost(m, 1, 2, 1, 5))) << a.algorithm;
    EXPECT_EQ(a.prefill.communication_us + a.prefill.quantisation_us, 0);
    EXPECT_EQ(a.prefill.comm_share, 0);
    EXPECT_DOUBLE_EQ(a.ttft_speedup, 1);
  }
  // tp = 2 with communication switched off
  InferenceRequest req = toy_request(2);
  req.communication = false;
  InferenceResult r2 = run_inference(req);
  for (const auto& a : r2.algorithms) {
    EXPECT_DOUBLE_EQ(a.ttft_us(), roofline_total(2, layer_cost(m, 2, 2, 3, 3))) << a.algorithm;
    EXPECT_DOUBLE_EQ(a.tpot_us(), roofline_total(2, layer_cost(m, 2, 2, 1, 5))) << a.algorithm;
  }
}

TEST(InferenceRun, TwoAllReducesPerLayerTimedBySimulate) {
  InferenceRequest req = toy_request(2);
  InferenceResult r = run_inference(req);
  ASSERT_EQ(r.algorithms.size(), 3u);
  Config cfg = h200();
  set_param(cfg, "fabric.gpus", 2.0);
  for (const auto& a : r.algorithms) {
    const PhaseResult& p = a.prefill;
    EXPECT_EQ(p.allreduces, 4);                      // 2 per layer x 2 layers
    EXPECT_EQ(p.allreduce_bytes, 6u * 64 * 2);       // 6 tokens x 64 x BF16
    EXPECT_EQ(a.decode.allreduce_bytes, 2u * 64 * 2);
    SimResult s = simulate(cfg, a.algorithm, Collective{p.allreduce_bytes, DType::Bf16});
    EXPECT_DOUBLE_EQ(p.allreduce_us, s.time_us());
    EXPECT_NEAR(p.communication_us + p.quantisation_us, 4 * s.time_us(), 1e-9);
    EXPECT_NEAR(p.quantisation_us, 4 * s.breakdown[Term::Quantisation] / 1e3, 1e-9);
    EXPECT_NEAR(p.total_us, p.compute_us + p.communication_us + p.quantisation_us + p.other_us, 1e-9);
    EXPECT_GT(p.comm_share, 0);
    EXPECT_LT(p.comm_share, 1);
  }
  // the quantised All-Reduce reports its (de)quantisation; the 16-bit ones have none
  EXPECT_EQ(r.find("ring")->prefill.quantisation_us, 0);
  EXPECT_EQ(r.find("scin")->prefill.quantisation_us, 0);
  EXPECT_GT(r.find("scin-inq")->prefill.quantisation_us, 0);
  // speedups are baseline / algorithm
  const auto* ring = r.find("ring");
  const auto* inq = r.find("scin-inq");
  EXPECT_DOUBLE_EQ(ring->ttft_speedup, 1);
  EXPECT_DOUBLE_EQ(inq->ttft_speedup, ring->ttft_us() / inq->ttft_us());
  EXPECT_DOUBLE_EQ(inq->tpot_speedup, ring->tpot_us() / inq->tpot_us());
}

// An All-Reduce's own note reaches the algorithm's result: NCCL runs no NVLS on 2 GPUs, so the
// nvls row at tp 2 says its time is the multimem mechanism's; from tp 4 it says nothing, and the
// ring never does (docs/model.md section 9, "NVLS as NCCL runs it").
TEST(InferenceRun, NvlsAtTpTwoCarriesTheNoteOfItsAllReduces) {
  InferenceRequest req = toy_request(2);
  req.algorithms = {"ring", "nvls"};
  InferenceResult r = run_inference(req);
  Config cfg = h200();
  set_param(cfg, "fabric.gpus", 2.0);
  SimResult s = simulate(cfg, "nvls", Collective{r.find("nvls")->prefill.allreduce_bytes, DType::Bf16});
  ASSERT_TRUE(s.extra.contains("note"));
  EXPECT_EQ(r.find("nvls")->note, s.extra["note"].get<std::string>());   // once, though both phases say it
  EXPECT_EQ(r.find("ring")->note, "");
  req.tp = 4;
  InferenceResult r4 = run_inference(req);
  EXPECT_EQ(r4.find("nvls")->note, "");
}

TEST(InferenceRun, CacheMemoisesPerAlgorithmAndSize) {
  AllReduceCache cache;
  InferenceRequest req = toy_request(2);
  run_inference(req, &cache);
  EXPECT_EQ(cache.size(), 6u);   // 3 algorithms x (prefill size, decode size)
  run_inference(req, &cache);
  EXPECT_EQ(cache.size(), 6u);
  req.batch = 4;                 // prefill 12 tokens, decode 4 tokens: new sizes
  run_inference(req, &cache);
  EXPECT_EQ(cache.size(), 12u);
}

// The work budget's view of a study: the estimates of the All-Reduces run_inference
// simulates (each algorithm at the prefill and the decode size, on tp ranks), on the
// engine asked for; none without communication; the errors run_inference gives.
TEST(InferenceWork, IsTheEstimateOfEachAllReduceItSimulates) {
  InferenceRequest req = toy_request(2);
  Config cfg = h200();
  set_param(cfg, "fabric.gpus", 2.0);
  const InferenceResult r = run_inference(req);
  for (const char* engine : {"analytic", "packet"}) {
    req.engine = engine;
    const EngineId id = parse_timing_engine(engine);
    WorkEstimate sum;
    double memory = 0;
    for (const auto& a : r.algorithms)
      for (std::uint64_t bytes : {a.prefill.allreduce_bytes, a.decode.allreduce_bytes}) {
        const WorkEstimate e = estimate(cfg, parse_algorithm(a.algorithm), Collective{bytes, DType::Bf16}, id);
        sum.amount += e.amount;
        sum.seconds += e.seconds;
        memory = std::max(memory, e.memory_bytes);
      }
    const WorkEstimate w = inference_work(req);
    EXPECT_GT(w.amount, 0) << engine;
    EXPECT_NEAR(w.amount, sum.amount, 1e-9 * sum.amount) << engine;
    EXPECT_NEAR(w.seconds, sum.seconds, 1e-9 * sum.seconds) << engine;
    EXPECT_EQ(w.memory_bytes, memory) << engine;   // one All-Reduce after another
    EXPECT_STREQ(w.unit, std::string(engine) == "packet" ? "events" : "steps");
  }
  req.communication = false;
  EXPECT_EQ(inference_work(req).amount, 0);
  req.communication = true;
  req.tp = 3;   // does not divide the toy model's heads: refused as run_inference refuses it
  const std::string why = error_of([&] { inference_work(req); });
  EXPECT_NE(why.find("tp"), std::string::npos) << why;
  EXPECT_EQ(why, error_of([&] { run_inference(req); }));
}

TEST(InferenceRun, MoreTensorParallelismLowersComputePerGpu) {
  InferenceRequest req;
  req.model = "llama-2-7b";
  req.fabric = h200();
  req.batch = 4;
  req.prompt_tokens = 512;
  req.algorithms = {"ring"};
  double last_prefill = 0, last_decode = 0;
  for (int tp : {1, 2, 4, 8}) {
    req.tp = tp;
    InferenceResult r = run_inference(req);
    const auto& a = r.algorithms.at(0);
    if (tp > 1) {
      EXPECT_LT(a.prefill.compute_us, last_prefill) << "tp " << tp;
      EXPECT_LT(a.decode.compute_us, last_decode) << "tp " << tp;
      EXPECT_LT(r.prefill_layer.flops(), layer_cost(load_model("llama-2-7b"), tp / 2, 4, 512, 512).flops());
    }
    last_prefill = a.prefill.compute_us;
    last_decode = a.decode.compute_us;
  }
}

TEST(InferenceRun, FasterLinksNeverSlowTtftOrTpot) {
  InferenceRequest req;
  req.model = "llama-2-7b";
  req.tp = 8;
  req.batch = 2;
  req.prompt_tokens = 256;
  req.algorithms = {"ring", "one-shot", "two-shot", "nvls", "scin", "scin-inq", "ring-q8", "two-shot-q8"};
  req.baseline = "";
  std::vector<double> ttft_prev(req.algorithms.size(), 1e300), tpot_prev(req.algorithms.size(), 1e300);
  for (double bw : {50.0, 100.0, 200.0, 450.0, 900.0, 1800.0}) {
    req.fabric = h200();
    set_param(req.fabric, "links.bandwidth_GBps", bw);
    InferenceResult r = run_inference(req);
    ASSERT_EQ(r.algorithms.size(), req.algorithms.size());
    for (std::size_t i = 0; i < r.algorithms.size(); ++i) {
      EXPECT_LE(r.algorithms[i].ttft_us(), ttft_prev[i] * (1 + 1e-12)) << r.algorithms[i].algorithm << " " << bw;
      EXPECT_LE(r.algorithms[i].tpot_us(), tpot_prev[i] * (1 + 1e-12)) << r.algorithms[i].algorithm << " " << bw;
      ttft_prev[i] = r.algorithms[i].ttft_us();
      tpot_prev[i] = r.algorithms[i].tpot_us();
    }
  }
}

// The worked numbers of docs/model.md (section 6): LLaMA-2-70B, TP 8, H200.
TEST(InferenceRun, Llama2_70bWorkedNumbers) {
  InferenceRequest req;
  req.model = "llama-2-70b";
  req.accelerator = "H200";
  req.fabric = h200();
  req.tp = 8;
  req.batch = 1;
  req.prompt_tokens = 2048;
  req.algorithms = {"ring"};
  req.communication = false;
  InferenceResult r = run_inference(req);
  // decode: 215,053,824 weight + KV bytes per layer per GPU at 4800 x 0.8 GB/s, x 80,
  // plus the LM head shard (65,560,384 bytes)
  EXPECT_DOUBLE_EQ(r.decode_layer.bytes() - op(r.decode_layer, "elementwise").bytes, 215053824.0);
  EXPECT_NEAR(r.algorithms[0].decode.compute_us, 4497.361, 1e-3);
  EXPECT_NEAR(r.algorithms[0].decode.other_us, 3.861, 1e-3);
  // prefill of 2048 tokens: compute-bound GEMMs at 989 x 0.7 TFLOP/s
  EXPECT_NEAR(r.algorithms[0].prefill.compute_us, 51634.094, 1e-3);
  EXPECT_EQ(r.prefill_layer.allreduce_bytes, 32u << 20);   // 32 MiB, as the brief says
  EXPECT_EQ(r.decode_layer.allreduce_bytes, 16u << 10);    // 16 KiB
}

// --- shipped specs

TEST(InferenceSpecs, ModelsLoadWithTheirPublishedShapes) {
  auto names = list_models();
  std::vector<std::string> want = {"llama-2-13b", "llama-2-70b", "llama-2-7b",
                                   "llama-3-70b", "llama-3-8b", "mistral-7b"};
  for (const auto& w : want) {
    bool found = false;
    for (const auto& n : names) found |= n.name == w;
    EXPECT_TRUE(found) << w;
    ModelSpec m = load_model(w);
    EXPECT_FALSE(m.sources.empty()) << w;
    EXPECT_EQ(m.head_dim, 128) << w;
  }
  ModelSpec m70 = load_model("llama-2-70b");
  ModelSpec again = model_from_json(to_json(m70));   // round trip
  EXPECT_EQ(again.ffn_size, m70.ffn_size);
  EXPECT_EQ(again.kv_heads, m70.kv_heads);
  EXPECT_EQ(again.sources, m70.sources);
  EXPECT_EQ(m70.hidden_size, 8192);
  EXPECT_EQ(m70.layers, 80);
  EXPECT_EQ(m70.heads, 64);
  EXPECT_EQ(m70.kv_heads, 8);
  EXPECT_EQ(m70.ffn_size, 28672);
  EXPECT_EQ(m70.vocab_size, 32000);
  // published parameter counts (Hugging Face safetensors totals, norms excluded here)
  EXPECT_NEAR(m70.total_params(), 68.976e9, 0.01e9);
  EXPECT_NEAR(load_model("llama-2-7b").total_params(), 6.738e9, 0.01e9);
  EXPECT_NEAR(load_model("llama-2-13b").total_params(), 13.016e9, 0.01e9);
  EXPECT_NEAR(load_model("llama-3-8b").total_params(), 8.030e9, 0.01e9);
  EXPECT_NEAR(load_model("mistral-7b").total_params(), 7.242e9, 0.01e9);
}

TEST(InferenceSpecs, AcceleratorsSetRegistryParameters) {
  EXPECT_GE(list_accelerators().size(), 3u);
  Config cfg{};
  apply_accelerator(cfg, "H100");
  EXPECT_EQ(cfg.accelerator.name, "H100");
  EXPECT_DOUBLE_EQ(cfg.accelerator.peak_bf16_TFLOPS, 989);
  EXPECT_DOUBLE_EQ(cfg.accelerator.hbm_bandwidth_GBps, 3350);
  apply_accelerator(cfg, "b200");   // case-insensitive
  EXPECT_EQ(cfg.accelerator.name, "B200");
  EXPECT_DOUBLE_EQ(cfg.accelerator.peak_bf16_TFLOPS, 2250);
  EXPECT_DOUBLE_EQ(cfg.accelerator.hbm_bandwidth_GBps, 8000);
  apply_accelerator(cfg, "H200");
  EXPECT_DOUBLE_EQ(cfg.accelerator.hbm_bandwidth_GBps, 4800);
  EXPECT_FALSE(accelerator_sources("H200").at("accelerator.peak_bf16_TFLOPS").empty());
}

// --- bad input

TEST(InferenceErrors, BadInputGivesClearErrors) {
  InferenceRequest req = toy_request(3);   // 4 heads
  std::string e = error_of([&] { run_inference(req); });
  EXPECT_NE(e.find("tp: 3 does not divide the 4 attention heads of toy; allowed 1, 2, 4"), std::string::npos) << e;

  req = toy_request(2);
  req.batch = 0;
  e = error_of([&] { run_inference(req); });
  EXPECT_NE(e.find("batch: 0 is out of range; allowed 1..65536"), std::string::npos) << e;

  req = toy_request(2);
  req.prompt_tokens = 0;
  EXPECT_NE(error_of([&] { run_inference(req); }).find("prompt"), std::string::npos);

  req = toy_request(2);
  req.model_spec.reset();
  req.model = "llama-9-1b";
  e = error_of([&] { run_inference(req); });
  EXPECT_NE(e.find("model: unknown model 'llama-9-1b'; known: llama-2-13b"), std::string::npos) << e;

  req = toy_request(2);
  req.accelerator = "Z900";
  EXPECT_NE(error_of([&] { run_inference(req); }).find("unknown accelerator 'Z900'"), std::string::npos);

  req = toy_request(2);
  req.algorithms = {"telepathy"};
  EXPECT_NE(error_of([&] { run_inference(req); }).find("algo: unknown algorithm 'telepathy'"), std::string::npos);

  req = toy_request(16);   // larger than the 8-GPU fabric
  EXPECT_NE(error_of([&] { run_inference(req); }).find("tp: 16 is out of range; allowed 1..8"), std::string::npos);

  req = toy_request(2);
  req.engine = "abacus";
  EXPECT_NE(error_of([&] { run_inference(req); }).find("engine: 'abacus'"), std::string::npos);

  const auto engines = engine_names();
  if (std::find(engines.begin(), engines.end(), "packet") != engines.end()) {
    req = toy_request(2);
    req.model_spec.reset();
    req.model = "llama-2-70b";
    req.tp = 8;
    req.batch = 64;
    req.prompt_tokens = 8192;
    req.engine = "packet";
    EXPECT_NE(error_of([&] { run_inference(req); }).find("engine: the packet engine simulates every packet"),
              std::string::npos);
  }

  nlohmann::json bad = {{"name", "bad"}, {"hidden_size", 64}, {"layers", 2}, {"heads", 4},
                        {"kv_heads", 3}, {"ffn_size", 128}, {"vocab_size", 10}};
  EXPECT_NE(error_of([&] { model_from_json(bad); }).find("kv_heads: 3 does not divide heads (4)"), std::string::npos);
  bad["kv_heads"] = 2;
  bad["ffn_type"] = "relu";
  EXPECT_NE(error_of([&] { model_from_json(bad); }).find("ffn_type: 'relu' is not allowed"), std::string::npos);
  bad.erase("ffn_type");
  bad["hidden"] = 1;
  EXPECT_NE(error_of([&] { model_from_json(bad); }).find("unknown field 'hidden'"), std::string::npos);
}

// --- the CLI (skipped when the scin executable is not built)

TEST(InferenceCli, JsonOutputAndOneLineErrors) {
  CliResult ok = run_cli("infer --model llama-2-7b --gpu H200 --fabric hgx-h200-8 --tp 8 --batch 1 --prompt 128 "
                      "--algo ring,scin-inq --format json");
  if (ok.status == -1) GTEST_SKIP() << "SCIN_CLI not set or not built";
  ASSERT_EQ(ok.status, 0) << ok.output;
  nlohmann::json j = nlohmann::json::parse(ok.output);
  EXPECT_EQ(j["model"], "llama-2-7b");
  EXPECT_EQ(j["tp"], 8);
  ASSERT_EQ(j["algorithms"].size(), 2u);
  EXPECT_EQ(j["algorithms"][0]["algorithm"], "ring");
  EXPECT_DOUBLE_EQ(j["algorithms"][0]["ttft_speedup"].get<double>(), 1.0);
  EXPECT_EQ(j["algorithms"][1]["prefill"]["allreduce_bytes"], 128 * 4096 * 2);
  EXPECT_GT(j["algorithms"][1]["tpot_speedup"].get<double>(), 1.0);

  CliResult grid = run_cli("infer --model llama-2-7b --tp 4,8 --batch 1,2 --prompt 128 --algo ring,scin --format csv");
  ASSERT_EQ(grid.status, 0) << grid.output;
  EXPECT_EQ(std::count(grid.output.begin(), grid.output.end(), '\n'), 1 + 2 * 2 * 2);   // header + points x algos

  // NCCL runs no NVLS on 2 GPUs (docs/model.md section 9): the nvls row says so in every format,
  // the others say nothing.
  CliResult tp2 = run_cli("infer --model llama-2-7b --tp 2 --prompt 128 --algo ring,nvls --format json");
  ASSERT_EQ(tp2.status, 0) << tp2.output;
  nlohmann::json j2 = nlohmann::json::parse(tp2.output);
  ASSERT_EQ(j2["algorithms"].size(), 2u);
  EXPECT_FALSE(j2["algorithms"][0].contains("note"));
  EXPECT_NE(j2["algorithms"][1].value("note", "").find("NCCL does not run NVLS on 2 GPUs"), std::string::npos)
      << j2["algorithms"][1].dump();
  CliResult tp2t = run_cli("infer --model llama-2-7b --tp 2 --prompt 128 --algo ring,nvls");
  EXPECT_NE(tp2t.output.find("# note (nvls): NCCL does not run NVLS on 2 GPUs"), std::string::npos) << tp2t.output;
  EXPECT_EQ(tp2t.output.find("# note (ring)"), std::string::npos) << tp2t.output;
  CliResult tp8 = run_cli("infer --model llama-2-7b --tp 8 --prompt 128 --algo nvls --format csv");
  ASSERT_EQ(tp8.status, 0) << tp8.output;
  EXPECT_NE(tp8.output.find(",note\n"), std::string::npos) << tp8.output;
  EXPECT_EQ(tp8.output.find("NCCL does not run"), std::string::npos) << tp8.output;

  CliResult bad = run_cli("infer --model llama-2-70b --tp 3");
  EXPECT_EQ(bad.status, 2);
  EXPECT_EQ(bad.output, "scin: error: tp: 3 does not divide the 64 attention heads of llama-2-70b; "
                        "allowed 1, 2, 4, 8, 16, 32, 64\n");
}

}  // namespace
}  // namespace scin
