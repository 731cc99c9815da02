// Point kind "inference": TTFT and TPOT of one All-Reduce algorithm under
// tensor parallelism (inference/inference.h). Settings: inference.*.
#include <cstdlib>

#include <fmt/format.h>

#include "base/error.h"
#include "base/json_input.h"
#include "inference/inference.h"
#include "sweep/kinds.h"

namespace scin {

namespace {

using json = nlohmann::json;

bool text_setting(const std::string& key) { return key == "model" || key == "accelerator"; }
bool integer_setting(const std::string& key) { return !text_setting(key); }

json check_inference(const std::string& key, const json& v, const std::string& field) {
  bool text = text_setting(key);
  if (text ? !v.is_string() : !v.is_number_integer())
    throw Error(fmt::format("{}: inference.{} must be {}", field, key, text ? "a string" : "an integer"));
  // Range-checked, never wrapped into int (4294967304 ran as TP 8); the model adds the rules
  // between values (tp divides the heads).
  if (!text) {
    const std::int64_t hi = key == "tp" ? 1024 : key == "batch" ? 65536 : 1 << 20;
    json_int(v, field, key == "context_tokens" ? 0 : 1, hi);
  }
  return v;
}

void evaluate_inference(PointRecord& p, const ResolvedPoint& r, const RunContext& ctx) {
  InferenceRequest req = inference_request(r);
  if (sweep_detail::skip_unsupported(p, r)) return;
  InferenceResult res = run_inference(req, nullptr, ctx);
  const AlgorithmResult* a = res.find(r.algorithm);
  if (!a) throw Error("inference returned no result for " + r.algorithm);
  p.ttft_us = a->ttft_us();
  p.tpot_us = a->tpot_us();
  p.variant = a->decode.variant;
  p.extra = json{{"model", res.model}, {"tp", res.tp}, {"prefill", to_json(a->prefill)},
                 {"decode", to_json(a->decode)}};
  if (!a->note.empty()) p.extra["note"] = a->note;
}

}  // namespace

InferenceRequest inference_request(const ResolvedPoint& r) {
  InferenceRequest req;
  req.fabric = r.config;
  req.engine = r.engine;
  if (!r.algorithm.empty()) {
    req.algorithms = {r.algorithm};
    req.baseline = r.algorithm;
  }
  const json& in = r.inference;
  if (in.contains("model")) req.model = in["model"].get<std::string>();
  if (in.contains("accelerator")) req.accelerator = in["accelerator"].get<std::string>();
  if (in.contains("tp")) req.tp = in["tp"].get<int>();
  if (in.contains("batch")) req.batch = in["batch"].get<int>();
  if (in.contains("prompt_tokens")) req.prompt_tokens = in["prompt_tokens"].get<int>();
  if (in.contains("context_tokens")) req.context_tokens = in["context_tokens"].get<int>();
  return req;
}

namespace sweep_detail {
const KindOps& inference_kind() {
  static const KindOps k = [] {
    KindOps o;
    o.kind = PointKind::Inference;
    o.group = "inference";
    o.keys = {"model", "accelerator", "tp", "batch", "prompt_tokens", "context_tokens"};
    o.needs_algorithm = false;
    o.needs_bytes = false;
    o.check_setting = check_inference;
    o.integer_setting = integer_setting;
    o.evaluate = evaluate_inference;
    // (A point of an algorithm the fabric lacks is skipped: estimated as none.)
    o.work = [](const ResolvedPoint& r) { return inference_work(inference_request(r)); };
    return o;
  }();
  return k;
}
}  // namespace sweep_detail

}  // namespace scin
