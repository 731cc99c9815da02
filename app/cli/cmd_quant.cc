// `scin quant`: run All-Reduce algorithms on real data (generated or .npy) with
// the data engine and report the numerical error of each against the exact
// sum, plus the payload ratio on the wire.
#include <cmath>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/budget.h"
#include "cli/commands.h"
#include "cli/common.h"
#include "schedule/algorithms.h"
#include "base/error.h"
#include "fabric/params.h"
#include "base/units.h"
#include "numerics/quant_study.h"
#include "sweep/builders.h"

namespace scin::cli {
namespace {

struct QuantOptions {
  FabricOptions fabric;
  std::vector<std::string> algos;
  std::string elements = "1M";
  std::string dist = "gaussian";
  double outlier_fraction = 0.005;
  double outlier_scale = 20;
  std::uint64_t channels = 4096;
  std::string block, scale, codec;   // empty: keep the preset's quant.*
  std::vector<std::string> npy;
  std::uint64_t seed = 1;
  std::string dtype = "bf16";
  std::string format = "table";
  BudgetOptions budget;
  int threads = 0;   // --threads: 0 = all cores
};

std::string sqnr_text(double v) { return std::isfinite(v) ? fmt::format("{:.2f}", v) : "inf"; }

void print_table(const Config& cfg, const QuantStudy& s) {
  fmt::print("# scin quant: preset {}, {} ranks, {} elements per rank ({}), ", cfg.name, s.gpus, s.elements,
             to_string(s.dtype));
  if (s.npy_files.empty()) {
    fmt::print("{} inputs, seed {}", to_string(s.input.dist), s.input.seed);
    if (s.input.dist == Distribution::Outliers)
      fmt::print(" (outlier fraction {}, scale {}, {} channels)", s.input.outlier_fraction, s.input.outlier_scale,
                 s.input.channels);
    fmt::print("\n");
  } else {
    fmt::print("inputs from {} .npy file(s)\n", s.npy_files.size());
  }
  fmt::print("# codec {} block {} scale {}; errors against the exact (double) sum of the {}-rounded inputs, worst rank\n",
             to_string(s.quant.codec), s.quant.block_elems, to_string(s.quant.scale_format), to_string(s.dtype));
  fmt::print("# reference: exact sum rounded to {}: rel_l2 {:.3e}; quantised once ({}): rel_l2 {:.3e}\n",
             to_string(s.dtype), s.dtype_round.rel_l2, to_string(s.quant.codec), s.single_quant.rel_l2);
  fmt::print("# var/1q = error variance / that of one quantisation of the exact sum; payload = wire bytes / unquantised\n");
  fmt::print("{:<12} {:<12} {:>10} {:>9} {:>10} {:>10} {:>7} {:>9} {:>8}\n", "algorithm", "variant", "rel_l2",
             "SQNR_dB", "max_abs", "cosine", "var/1q", "identical", "payload");
  for (const auto& r : s.rows) {
    const auto& m = r.metrics;
    fmt::print("{:<12} {:<12} {:>10.3e} {:>9} {:>10.3e} {:>10.7f} {:>7.2f} {:>9} {:>8.4f}\n", r.algorithm, r.variant,
               m.rel_l2, sqnr_text(m.sqnr_dB), m.max_abs, m.cosine, r.error_variance_ratio,
               m.ranks_identical ? "yes" : "NO", r.payload_ratio);
  }
}

void print_csv(const Config& cfg, const QuantStudy& s) {
  fmt::print("preset,gpus,elements,dtype,dist,seed,quant.codec,quant.block_elems,quant.scale_format,algorithm,variant,"
             "rel_l2,sqnr_dB,max_abs,cosine,ranks_identical,error_variance_ratio,payload_ratio,wire_bytes,"
             "max_link_bytes\n");
  const std::string dist = s.npy_files.empty() ? to_string(s.input.dist) : "npy";
  for (const auto& r : s.rows) {
    const auto& m = r.metrics;
    fmt::print("{},{},{},{},{},{},{},{},{},{},{},{:.6e},{},{:.6e},{:.9f},{},{:.4f},{:.6f},{:.0f},{:.0f}\n",
               csv_field(cfg.name), s.gpus, s.elements, to_string(s.dtype), dist, s.input.seed,
               to_string(s.quant.codec), s.quant.block_elems, to_string(s.quant.scale_format), r.algorithm,
               csv_field(r.variant), m.rel_l2, sqnr_text(m.sqnr_dB), m.max_abs, m.cosine,
               m.ranks_identical ? "true" : "false", r.error_variance_ratio, r.payload_ratio, r.wire_bytes,
               r.max_link_bytes);
  }
}

}  // namespace

void add_quant_command(CLI::App& app) {
  auto opt = std::make_shared<QuantOptions>();
  auto* cmd = app.add_subcommand(
      "quant", "run All-Reduce algorithms on real data and measure the numerical error of quantised schemes");
  add_fabric_options(*cmd, opt->fabric);
  cmd->add_option("--algo", opt->algos, "algorithms, comma separated (default: all the fabric supports)");
  cmd->add_option("--elements", opt->elements,
                  fmt::format("elements per rank (K/M suffixes, powers of two; at most {})", kMaxQuantElemsPerRank))
      ->capture_default_str();
  cmd->add_option("--dist", opt->dist, "input distribution: gaussian|laplace|outliers")->capture_default_str();
  cmd->add_option("--outlier-fraction", opt->outlier_fraction, "outliers: share of channels that are outliers [0, 1]")
      ->capture_default_str();
  cmd->add_option("--outlier-scale", opt->outlier_scale, "outliers: magnitude multiplier of outlier channels [1, 1e6]")
      ->capture_default_str();
  cmd->add_option("--channels", opt->channels, "outliers: channels per row (element i is channel i % channels)")
      ->capture_default_str();
  cmd->add_option("--block", opt->block, "values per scale, G (quant.block_elems)");
  cmd->add_option("--scale", opt->scale, "scale format fp16|bf16|fp32 (quant.scale_format)");
  cmd->add_option("--codec", opt->codec, "int8|int4|fp8e4m3|fp8e5m2 (quant.codec)");
  cmd->add_option("--npy", opt->npy,
                  "real tensors: one .npy per rank, or one file split across ranks (float16, float32, float64, "
                  "bfloat16 as uint16); overrides --elements and --dist");
  cmd->add_option("--seed", opt->seed, "seed of the generated inputs")->capture_default_str();
  cmd->add_option("--dtype", opt->dtype, "collective element type: bf16|fp16|fp32")->capture_default_str();
  cmd->add_option("--format", opt->format, "table|csv|json")->capture_default_str();
  add_budget_options(*cmd, opt->budget);
  add_threads_option(*cmd, opt->threads);
  cmd->callback([opt] {
    check_format(opt->format, {"table", "csv", "json"});
    const ThreadLimit threads(opt->threads);
    // The same SweepSpec a quant sweep uses (core/sweep/builders.h): one point
    // per algorithm; the study runs them together on the same inputs.
    FabricChoice fabric = fabric_choice(opt->fabric);
    if (!opt->block.empty()) fabric.sets.push_back("quant.block_elems=" + opt->block);
    if (!opt->scale.empty()) fabric.sets.push_back("quant.scale_format=" + opt->scale);
    if (!opt->codec.empty()) fabric.sets.push_back("quant.codec=" + opt->codec);
    std::uint64_t n = 1;
    if (opt->npy.empty()) {
      n = parse_count(opt->elements, "--elements", "elements", 1, kMaxQuantElemsPerRank);   // per rank
    }
    parse_distribution(opt->dist);   // names --dist in its error
    std::vector<std::string> algos = split_list(opt->algos, "--algo");
    for (const auto& a : algos) parse_algorithm(a, "algo");   // names --algo in its error
    if (algos.empty()) algos = supported_algorithms(build_config(opt->fabric));
    const DType dtype = parse_dtype(opt->dtype);
    const nlohmann::json input{{"dist", opt->dist}, {"outlier_fraction", opt->outlier_fraction},
                               {"outlier_scale", opt->outlier_scale}, {"channels", opt->channels},
                               {"seed", opt->seed}};
    const auto points = resolve_points(quant_sweep(fabric, algos, n * dtype_bytes(dtype), opt->dtype, input));
    const Config& cfg = points.front().config;
    validate(cfg);
    QuantRequest req = quant_request(points.front());
    req.algorithms = algos;
    req.npy_files = opt->npy;
    const WorkEstimate work = quant_study_work(cfg.fabric.gpus, req.elements, dtype, algos.size());
    const bool progress = enforce_budget(work, opt->budget, fmt::format("scin quant ({} algorithms)", algos.size()));
    QuantStudy s;
    run_jobs({work}, progress, /*parallel=*/false, [&](std::size_t, const RunContext& ctx) { s = run_quant(cfg, req, ctx); });
    if (opt->format == "json") {
      nlohmann::json j = to_json(s);
      j["preset"] = cfg.name;
      fmt::print("{}\n", j.dump(2));
    } else if (opt->format == "csv") {
      print_csv(cfg, s);
    } else {
      print_table(cfg, s);
    }
  });
}

}  // namespace scin::cli
