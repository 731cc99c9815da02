// `scin infer`: LLM inference under tensor parallelism. TTFT (one prefill) and
// TPOT (one decode step) per All-Reduce algorithm, with a breakdown, the
// communication share and the speedup over a baseline. Model, batch, prompt,
// context and TP accept comma-separated lists and are swept as a grid.
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "cli/budget.h"
#include "cli/commands.h"
#include "cli/common.h"
#include "inference/inference.h"
#include "base/error.h"
#include "fabric/params.h"
#include "fabric/preset.h"
#include "sweep/builders.h"

namespace scin::cli {
namespace {

struct InferOptions {
  std::vector<std::string> models{"llama-2-70b"};
  std::string accelerator;               // empty: the preset's accelerator.* (inference.accelerator)
  std::string fabric = "hgx-h200-8";
  std::vector<std::string> sets;
  std::vector<std::string> tp{"8"}, batch{"1"}, prompt_tokens{"2048"}, context_tokens;
  std::vector<std::string> algos;
  std::string baseline = "ring";
  std::string engine = "analytic";
  std::string format = "table";
  bool summary = false;
  bool explain = false;
  bool no_comm = false;
  bool list_models = false;
  bool list_gpus = false;
  BudgetOptions budget;
};

std::vector<int> int_list(const std::vector<std::string>& items, const std::string& field, int lo, int hi) {
  std::vector<int> out;
  // The bounds the model checks; the model adds the rules between values (tp divides the heads).
  for (const auto& s : split_list(items, "--" + field))
    out.push_back(static_cast<int>(parse_integer(s, "--" + field, lo, hi)));
  if (out.empty()) throw Error(fmt::format("{}: no value given", field));
  return out;
}

std::string pct(double share) { return fmt::format("{:.1f}", 100 * share); }

void print_point_table(const InferenceResult& r) {
  fmt::print("# {} on {} ({}), tp {}, batch {}, prompt {}, context {}, engine {}{}\n", r.model, r.fabric,
             r.accelerator, r.tp, r.batch, r.prompt_tokens, r.context_tokens, r.engine,
             r.baseline.empty() ? "" : ", speedup vs " + r.baseline);
  const auto& a0 = r.algorithms.at(0);
  fmt::print("# prefill: {} tokens, {} All-Reduces of {} bytes; decode: {} tokens, {} All-Reduces of {} bytes\n",
             a0.prefill.tokens, a0.prefill.allreduces, a0.prefill.allreduce_bytes, a0.decode.tokens,
             a0.decode.allreduces, a0.decode.allreduce_bytes);
  fmt::print("# times in us; comm = All-Reduce time without (de)quantisation, quant = (de)quantisation inside it,\n"
             "# other = elementwise ops; comm% = (comm + quant) / total\n");
  fmt::print("{:<12} | {:>11} {:>11} {:>10} {:>9} {:>9} {:>6} {:>7} | {:>9} {:>9} {:>9} {:>8} {:>8} {:>6} {:>7}\n",
             "algorithm", "TTFT", "compute", "comm", "quant", "other", "comm%", "speedup", "TPOT", "compute",
             "comm", "quant", "other", "comm%", "speedup");
  for (const auto& a : r.algorithms) {
    const auto& p = a.prefill;
    const auto& d = a.decode;
    fmt::print("{:<12} | {:>11.1f} {:>11.1f} {:>10.1f} {:>9.1f} {:>9.1f} {:>6} {:>7} | {:>9.1f} {:>9.1f} {:>9.1f} "
               "{:>8.1f} {:>8.1f} {:>6} {:>7}\n",
               a.algorithm, p.total_us, p.compute_us, p.communication_us, p.quantisation_us, p.other_us,
               pct(p.comm_share), r.baseline.empty() ? "-" : fmt::format("{:.3f}x", a.ttft_speedup), d.total_us,
               d.compute_us, d.communication_us, d.quantisation_us, d.other_us, pct(d.comm_share),
               r.baseline.empty() ? "-" : fmt::format("{:.3f}x", a.tpot_speedup));
  }
  for (const auto& a : r.algorithms)
    if (!a.note.empty()) fmt::print("# note ({}): {}\n", a.algorithm, a.note);
}

// Per-layer operators of one point: FLOPs, bytes, roofline time and which bound applies.
void print_explain(const InferenceResult& r, const AcceleratorSpec& acc) {
  for (int phase = 0; phase < 2; ++phase) {
    const LayerCost& lc = phase == 0 ? r.prefill_layer : r.decode_layer;
    fmt::print("\n# {} layer, per GPU ({} at {:.0f} x {:.2f} TFLOP/s, {:.0f} x {:.2f} GB/s HBM)\n",
               phase == 0 ? "prefill" : "decode", r.accelerator, acc.peak_bf16_TFLOPS, acc.compute_efficiency,
               acc.hbm_bandwidth_GBps, acc.hbm_efficiency);
    fmt::print("{:<12} {:>16} {:>16} {:>12} {:>8}\n", "operator", "FLOPs", "bytes", "time_us", "bound");
    double total = 0;
    for (const auto& op : lc.ops) {
      const double t = roofline_ns(acc, op);
      total += t;
      const bool compute = op.flops / (acc.peak_bf16_TFLOPS * 1e3 * acc.compute_efficiency) >=
                           op.bytes / (acc.hbm_bandwidth_GBps * acc.hbm_efficiency);
      fmt::print("{:<12} {:>16.0f} {:>16.0f} {:>12.3f} {:>8}\n", op.name, op.flops, op.bytes, t / 1e3,
                 compute ? "compute" : "memory");
    }
    fmt::print("{:<12} {:>16.0f} {:>16.0f} {:>12.3f}\n", "layer", lc.flops(), lc.bytes(), total / 1e3);
    fmt::print("+ {} All-Reduces of {} bytes per layer\n", lc.allreduces, lc.allreduce_bytes);
  }
}

void print_csv(const std::vector<InferenceResult>& results) {
  fmt::print("model,accelerator,fabric,engine,tp,batch,prompt,context,algorithm,baseline,"
             "ttft_us,ttft_compute_us,ttft_communication_us,ttft_quantisation_us,ttft_other_us,ttft_comm_share,"
             "ttft_speedup,tpot_us,tpot_compute_us,tpot_communication_us,tpot_quantisation_us,tpot_other_us,"
             "tpot_comm_share,tpot_speedup,prefill_allreduce_bytes,prefill_allreduce_us,decode_allreduce_bytes,"
             "decode_allreduce_us,note\n");
  for (const auto& r : results)
    for (const auto& a : r.algorithms) {
      const auto& p = a.prefill;
      const auto& d = a.decode;
      fmt::print("{},{},{},{},{},{},{},{},{},{},{:.3f},{:.3f},{:.3f},{:.3f},{:.3f},{:.5f},{:.5f},{:.3f},{:.3f},"
                 "{:.3f},{:.3f},{:.3f},{:.5f},{:.5f},{},{:.4f},{},{:.4f},{}\n",
                 csv_field(r.model), csv_field(r.accelerator), csv_field(r.fabric), r.engine, r.tp, r.batch,
                 r.prompt_tokens, r.context_tokens, a.algorithm, r.baseline, p.total_us, p.compute_us,
                 p.communication_us, p.quantisation_us, p.other_us, p.comm_share, a.ttft_speedup, d.total_us,
                 d.compute_us, d.communication_us, d.quantisation_us, d.other_us, d.comm_share, a.tpot_speedup,
                 p.allreduce_bytes, p.allreduce_us, d.allreduce_bytes, d.allreduce_us, csv_field(a.note));
    }
}

// Maximum and minimum speedup of every algorithm over the grid, and where it occurs.
void print_summary(const std::vector<InferenceResult>& results, const std::string& format) {
  struct Extreme {
    double max = 0, min = 1e300;
    const InferenceResult* at_max = nullptr;
    const InferenceResult* at_min = nullptr;
  };
  std::vector<std::string> order;
  std::map<std::string, std::pair<Extreme, Extreme>> ex;   // ttft, tpot
  for (const auto& r : results)
    for (const auto& a : r.algorithms) {
      if (!ex.count(a.algorithm)) order.push_back(a.algorithm);
      auto& [t, d] = ex[a.algorithm];
      if (a.ttft_speedup > t.max) t.max = a.ttft_speedup, t.at_max = &r;
      if (a.ttft_speedup < t.min) t.min = a.ttft_speedup, t.at_min = &r;
      if (a.tpot_speedup > d.max) d.max = a.tpot_speedup, d.at_max = &r;
      if (a.tpot_speedup < d.min) d.min = a.tpot_speedup, d.at_min = &r;
    }
  auto where = [](const InferenceResult* r) {
    return fmt::format("{} tp {} batch {} prompt {} context {}", r->model, r->tp, r->batch, r->prompt_tokens,
                       r->context_tokens);
  };
  if (format == "json") {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& name : order) {
      const auto& [t, d] = ex[name];
      j.push_back({{"algorithm", name}, {"baseline", results.front().baseline}, {"points", results.size()},
                   {"max_ttft_speedup", t.max}, {"max_ttft_at", where(t.at_max)},
                   {"min_ttft_speedup", t.min}, {"min_ttft_at", where(t.at_min)},
                   {"max_tpot_speedup", d.max}, {"max_tpot_at", where(d.at_max)},
                   {"min_tpot_speedup", d.min}, {"min_tpot_at", where(d.at_min)}});
    }
    fmt::print("{}\n", j.dump(2));
    return;
  }
  if (format == "csv") {
    fmt::print("algorithm,baseline,points,max_ttft_speedup,max_ttft_at,min_ttft_speedup,min_ttft_at,"
               "max_tpot_speedup,max_tpot_at,min_tpot_speedup,min_tpot_at\n");
    for (const auto& name : order) {
      const auto& [t, d] = ex[name];
      fmt::print("{},{},{},{:.4f},{},{:.4f},{},{:.4f},{},{:.4f},{}\n", name, results.front().baseline,
                 results.size(), t.max, csv_field(where(t.at_max)), t.min, csv_field(where(t.at_min)), d.max,
                 csv_field(where(d.at_max)), d.min, csv_field(where(d.at_min)));
    }
    return;
  }
  fmt::print("# speedup over {} across {} points ({} on {}, {})\n", results.front().baseline, results.size(),
             results.front().accelerator, results.front().fabric, results.front().engine);
  fmt::print("{:<12} {:>9} {:<44} {:>9} {:<44}\n", "algorithm", "max TTFT", "at", "max TPOT", "at");
  for (const auto& name : order) {
    const auto& [t, d] = ex[name];
    fmt::print("{:<12} {:>8.3f}x {:<44} {:>8.3f}x {:<44}\n", name, t.max, where(t.at_max), d.max, where(d.at_max));
  }
  fmt::print("{:<12} {:>9} {:<44} {:>9} {:<44}\n", "", "min TTFT", "at", "min TPOT", "at");
  for (const auto& name : order) {
    const auto& [t, d] = ex[name];
    fmt::print("{:<12} {:>8.3f}x {:<44} {:>8.3f}x {:<44}\n", name, t.min, where(t.at_min), d.min, where(d.at_min));
  }
}

void run(const InferOptions& o) {
  check_format(o.format, {"table", "csv", "json"});
  if (o.list_models || o.list_gpus) {
    if (o.list_models) {
      fmt::print("{:<14} {:>7} {:>6} {:>11} {:>6} {:>8} {:>7} {:>7}  {}\n", "model", "hidden", "layers",
                 "heads/kv", "ffn", "vocab", "params", "mlp", "description");
      for (const auto& info : list_models()) {
        ModelSpec m = load_model(info.name);
        fmt::print("{:<14} {:>7} {:>6} {:>11} {:>6} {:>8} {:>6.2f}B {:>7}  {}\n", m.name, m.hidden_size, m.layers,
                   fmt::format("{}/{}", m.heads, m.kv_heads), m.ffn_size, m.vocab_size, m.total_params() / 1e9,
                   to_string(m.ffn_type), m.description);
      }
    }
    if (o.list_gpus) {
      for (const auto& info : list_accelerators()) {
        Config c{};
        apply_accelerator(c, info.name);
        fmt::print("{:<6} {:>7.0f} TFLOP/s x {:.2f}  {:>6.0f} GB/s HBM x {:.2f}  {}\n", info.name,
                   c.accelerator.peak_bf16_TFLOPS, c.accelerator.compute_efficiency, c.accelerator.hbm_bandwidth_GBps,
                   c.accelerator.hbm_efficiency, info.description);
      }
    }
    return;
  }
  Config cfg = load_preset(o.fabric);
  if (!o.accelerator.empty()) apply_accelerator(cfg, o.accelerator);
  for (const auto& a : o.sets) apply_assignment(cfg, a);
  validate(cfg);

  // The grid is the SweepSpec an inference sweep uses (core/sweep/builders.h).
  InferenceGrid grid;
  grid.models = split_list(o.models, "--model");
  if (grid.models.empty()) throw Error("model: no model given; see `scin infer --list-models`");
  grid.accelerator = o.accelerator;
  grid.tp = int_list(o.tp, "tp", 1, 1024);
  grid.batch = int_list(o.batch, "batch", 1, 65536);
  grid.prompt_tokens = int_list(o.prompt_tokens, "prompt-tokens", 1, 1 << 20);
  grid.context_tokens = o.context_tokens.empty() ? std::vector<int>{0} : int_list(o.context_tokens, "context-tokens", 1, 1 << 20);
  const auto algos = split_list(o.algos, "--algo");
  const AcceleratorSpec cfg_for_explain = cfg.accelerator;
  const auto points = resolve_points(inference_sweep(FabricChoice{o.fabric, 0, o.sets}, grid, o.engine));

  auto request = [&](std::size_t i) {
    InferenceRequest req = inference_request(points[i]);
    // --accelerator applies before --set (so --set accelerator.* refines it), as cfg was built.
    req.fabric = cfg;
    req.accelerator.clear();
    req.algorithms = algos;
    req.baseline = o.baseline;
    req.communication = !o.no_comm;
    return req;
  };
  // The grid's All-Reduces against --max-work, as `scin run` checks its runs (a packet-engine
  // study on a large fabric ran for days unasked). Each point counts its own All-Reduces, also
  // those an earlier point simulated (they are memoised): an estimate from above.
  std::vector<WorkEstimate> each;
  for (std::size_t i = 0; i < points.size(); ++i) each.push_back(inference_work(request(i)));
  const WorkEstimate total = total_work(each, 1);   // one point after another
  const bool progress =
      enforce_budget(total, o.budget, fmt::format("scin infer ({} point{} on the {} engine)", points.size(),
                                                  points.size() == 1 ? "" : "s", o.engine)) ||
      (points.size() > 1 && o.engine == "packet");

  AllReduceCache cache;
  std::vector<InferenceResult> results;
  // Progress counts grid points; Ctrl-C cancels.
  const std::vector<WorkEstimate> work(points.size(), WorkEstimate{1, "points", 1, 0});
  run_jobs(work, progress, /*parallel=*/false, [&](std::size_t i, const RunContext& ctx) {
    results.push_back(run_inference(request(i), &cache, ctx));
  });

  if (o.summary) {
    if (o.baseline.empty()) throw Error("summary: needs a --baseline algorithm");
    print_summary(results, o.format);
  } else if (o.format == "json") {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& r : results) j.push_back(to_json(r));
    fmt::print("{}\n", (results.size() == 1 ? j[0] : j).dump(2));
  } else if (o.format == "csv") {
    print_csv(results);
  } else {
    for (std::size_t i = 0; i < results.size(); ++i) {
      if (i) fmt::print("\n");
      print_point_table(results[i]);
      if (o.explain) print_explain(results[i], cfg_for_explain);
    }
  }
}

}  // namespace

void add_infer_command(CLI::App& app) {
  auto opt = std::make_shared<InferOptions>();
  auto* cmd = app.add_subcommand(
      "infer", "LLM inference with tensor parallelism: TTFT and TPOT per All-Reduce algorithm");
  cmd->add_option("--model", opt->models, "model name(s) or .json path(s), comma separated (see --list-models)")
      ->capture_default_str();
  cmd->add_option("--accelerator", opt->accelerator, "accelerator compute spec: H100|H200|B200 or a .json path "
                                                     "(inference.accelerator; default: the preset's accelerator.*)");
  cmd->add_option("--gpu", opt->accelerator, "deprecated: use --accelerator")->group("");
  cmd->add_option("--fabric,--preset", opt->fabric, "fabric preset name or .json path (see `scin presets`)")
      ->capture_default_str();
  cmd->add_option("--set", opt->sets, "override a parameter: PATH=VALUE (see `scin params`); repeatable");
  cmd->add_option("--tp", opt->tp, "tensor-parallel degree(s), comma separated")->capture_default_str();
  cmd->add_option("--batch", opt->batch, "batch size(s) (sequences), comma separated")->capture_default_str();
  cmd->add_option("--prompt-tokens", opt->prompt_tokens, "prompt length(s) in tokens, comma separated "
                                                         "(inference.prompt_tokens)")->capture_default_str();
  cmd->add_option("--prompt", opt->prompt_tokens, "deprecated: use --prompt-tokens")->group("");
  cmd->add_option("--context-tokens", opt->context_tokens, "KV-cache length(s) at the decode step "
                                                           "(inference.context_tokens; default: the prompt)");
  cmd->add_option("--context", opt->context_tokens, "deprecated: use --context-tokens")->group("");
  cmd->add_option("--algo", opt->algos, "algorithms, comma separated (default: all the fabric supports)");
  cmd->add_option("--baseline", opt->baseline, "algorithm the speedups are relative to ('' for none)")
      ->capture_default_str();
  cmd->add_option("--engine", opt->engine, "analytic|packet")->capture_default_str();
  cmd->add_option("--format", opt->format, "table|csv|json")->capture_default_str();
  cmd->add_flag("--summary", opt->summary, "print only the max/min speedup of each algorithm across the grid");
  cmd->add_flag("--explain", opt->explain, "table: also print each layer's operators (FLOPs, bytes, roofline bound)");
  cmd->add_flag("--no-comm", opt->no_comm, "skip the All-Reduces: the pure compute/HBM roofline");
  cmd->add_flag("--list-models", opt->list_models, "list the model specs and exit");
  cmd->add_flag("--list-gpus", opt->list_gpus, "list the accelerator compute specs and exit");
  add_budget_options(*cmd, opt->budget);
  cmd->callback([opt] { run(*opt); });
}

}  // namespace scin::cli
