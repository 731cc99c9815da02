// `scin run`: time All-Reduce algorithms on a fabric across message sizes,
// printed like nccl-tests (plus the real bytes on the busiest link).

#include <algorithm>
#include <set>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include "cli/budget.h"
#include "cli/commands.h"
#include "cli/common.h"
#include "base/error.h"
#include "base/huge_pages.h"
#include "fabric/preset.h"
#include "base/units.h"
#include "calib/nccl_tuning.h"
#include "engines/simulate.h"
#include "sweep/builders.h"

namespace scin::cli {
namespace {

struct RunOptions {
  FabricOptions fabric;
  std::vector<std::string> algos;
  std::string min_bytes = "8", max_bytes = "1G", bytes;
  std::string factor = "2";
  std::string dtype = "bf16";
  std::string format = "table";
  std::string engine = "analytic";
  bool explain = false;
  bool wide = false;
  bool estimate_only = false;  // --estimate
  BudgetOptions budget;
  int threads = 0;   // --threads: 0 = all cores
};

// Prints `line` without trailing whitespace.
void put(std::string line) {
  while (!line.empty() && (line.back() == ' ' || line.back() == '\t')) line.pop_back();
  fmt::print("{}\n", line);
}

bool shows_protocol(const Config& cfg, const std::string& algo) {
  return algo == "ring" && cfg.ring.protocol == RingProtocol::Auto;
}

// nccl-tests' closing line: the mean bus bandwidth over the sizes of one algorithm.
std::string avg_busbw_line(const std::vector<SimResult>& res, std::size_t na, std::size_t k) {
  double sum = 0;
  std::size_t n = 0;
  for (std::size_t i = k; i < res.size(); i += na, ++n) sum += res[i].busbw_GBps;
  return fmt::format("# Avg bus bandwidth    : {:.4f}", n ? sum / static_cast<double>(n) : 0.0);
}

void print_header(const Config& cfg, DType dtype, const std::string& engine) {
  put(fmt::format("# scin run: preset {} ({}), {} accelerators, engine {}, dtype {}", cfg.name, cfg.accelerator.name,
                  cfg.fabric.gpus, engine, to_string(dtype)));
  put("# time in us; algbw = size/time and busbw = algbw x 2(N-1)/N in GB/s (10^9 B/s), as nccl-tests;");
  put("# link = real bytes on the busiest accelerator link direction (busbw misleads for in-network algorithms)");
}

// The default: one nccl-tests-like block per algorithm, at most ~90 columns.
void print_blocks(const Config& cfg, const std::vector<std::string>& algos, const std::vector<std::uint64_t>& sizes,
                  const std::vector<SimResult>& res, DType dtype, const std::string& engine) {
  const std::size_t na = algos.size();
  print_header(cfg, dtype, engine);
  for (std::size_t k = 0; k < na; ++k) {
    const bool proto = shows_protocol(cfg, algos[k]);
    put("#");
    put(fmt::format("# {}", algos[k]));
    put(fmt::format("#{:>12} {:>12} {:>5}  {:>11} {:>10} {:>10} {:>15}{}", "size", "count", "type", "time",
                    "algbw", "busbw", "link(B)", proto ? fmt::format(" {:>6}", "proto") : ""));
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      const SimResult& r = res[i * na + k];
      put(fmt::format(" {:>12} {:>12} {:>5}  {:>11.2f} {:>10.2f} {:>10.2f} {:>15.0f}{}", sizes[i],
                      r.bytes / static_cast<std::uint64_t>(dtype_bytes(dtype)), to_string(dtype), r.time_us(), r.algbw_GBps, r.busbw_GBps,
                      r.max_link_bytes, proto ? fmt::format(" {:>6}", r.variant) : ""));
    }
    put(avg_busbw_line(res, na, k));
  }
}

// --wide: every algorithm side by side (one row per size).
void print_table(const Config& cfg, const std::vector<std::string>& algos, const std::vector<std::uint64_t>& sizes,
                 const std::vector<SimResult>& res, DType dtype, const std::string& engine) {
  const std::size_t na = algos.size();
  print_header(cfg, dtype, engine);
  std::string h1 = fmt::format("#{:>12} {:>12} {:>5}", "", "", "");
  std::string h2 = fmt::format("#{:>12} {:>12} {:>5}", "size", "count", "type");
  for (const auto& a : algos) {
    const bool proto = shows_protocol(cfg, a);
    const int w = 44 + (proto ? 7 : 0);
    h1 += fmt::format("  {:^{}}", a, w);
    h2 += fmt::format("  {:>10} {:>10} {:>10} {:>11}", "time", "algbw", "busbw", "link(B)");
    if (proto) h2 += fmt::format(" {:>6}", "proto");
  }
  put(h1);
  put(h2);
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    std::string row = fmt::format(" {:>12} {:>12} {:>5}", sizes[i], res[i * na].bytes / static_cast<std::uint64_t>(dtype_bytes(dtype)),
                                  to_string(dtype));
    for (std::size_t k = 0; k < na; ++k) {
      const SimResult& r = res[i * na + k];
      row += fmt::format("  {:>10.2f} {:>10.2f} {:>10.2f} {:>11.0f}", r.time_us(), r.algbw_GBps, r.busbw_GBps,
                         r.max_link_bytes);
      if (shows_protocol(cfg, algos[k])) row += fmt::format(" {:>6}", r.variant);
    }
    put(row);
  }
  for (std::size_t k = 0; k < na; ++k) put(avg_busbw_line(res, na, k) + " (" + algos[k] + ")");
}

void print_explain(const std::vector<SimResult>& res) {
  for (const SimResult& r : res) {
    fmt::print("\n{}{} @ {} ({} bytes): {:.3f} us, algbw {:.2f} GB/s, busbw {:.2f} GB/s, busiest link {:.0f} bytes\n",
               r.algorithm, r.variant.empty() ? "" : " (" + r.variant + ")", format_size_bytes(r.bytes), r.bytes,
               r.time_us(), r.algbw_GBps, r.busbw_GBps, r.max_link_bytes);
    const double total = r.breakdown.total_ns();
    for (int t = 0; t < static_cast<int>(Term::Count); ++t) {
      const double ns = r.breakdown.ns[t];
      if (ns <= 0) continue;
      put(fmt::format("  {:>14}  {:>12.3f} us  {:>5.1f}%  {}", to_string(static_cast<Term>(t)), ns / 1e3,
                      total > 0 ? 100 * ns / total : 0.0, describe(static_cast<Term>(t))));
    }
  }
}

// --estimate: each run's estimate (what the work budget checks) and the total, in
// the keys `scin bench --runs 0` uses.
void print_estimates(const Config& cfg, const std::vector<std::string>& algos, const std::vector<ResolvedPoint>& points,
                     const std::vector<WorkEstimate>& work, const WorkEstimate& total, const std::string& format,
                     const std::string& engine) {
  const std::size_t na = algos.size();
  const std::size_t threads = static_cast<std::size_t>(tbb::this_task_arena::max_concurrency());
  if (format == "json") {
    nlohmann::json j;
    j["preset"] = cfg.name;
    j["gpus"] = cfg.fabric.gpus;
    j["engine"] = engine;
    j["estimates"] = nlohmann::json::array();
    for (std::size_t i = 0; i < work.size(); ++i)
      j["estimates"].push_back({{"algorithm", algos[i % na]},
                                {"bytes", points[i].collective.bytes},
                                {"estimated_work", work[i].amount},
                                {"work_unit", work[i].unit},
                                {"estimated_cpu_s", work[i].seconds},
                                {"estimated_memory_bytes", work[i].memory_bytes}});
    j["total"] = {{"runs", work.size()},
                  {"estimated_cpu_s", total.seconds},
                  {"threads", threads},
                  {"estimated_memory_bytes", total.memory_bytes}};
    fmt::print("{}\n", j.dump(2));
    return;
  }
  if (format == "csv") {
    fmt::print("preset,gpus,engine,algorithm,bytes,estimated_work,work_unit,estimated_cpu_s,estimated_memory_bytes\n");
    for (std::size_t i = 0; i < work.size(); ++i)
      fmt::print("{},{},{},{},{},{:.6g},{},{:.6g},{:.6g}\n", csv_field(cfg.name), cfg.fabric.gpus, engine, algos[i % na],
                 points[i].collective.bytes, work[i].amount, work[i].unit, work[i].seconds, work[i].memory_bytes);
    return;
  }
  put(fmt::format("# scin run --estimate: preset {} ({}), {} accelerators, engine {}: the work of each run, not run",
                  cfg.name, cfg.accelerator.name, cfg.fabric.gpus, engine));
  put(fmt::format("# {:>16} {:>12} {:>12} {:>7} {:>14} {:>12}", "algorithm", "size", "work", "unit", "cpu (1 core)",
                  "memory"));
  auto memory = [](double bytes) { return format_size_bytes(static_cast<std::uint64_t>(std::max(0.0, bytes))); };
  for (std::size_t i = 0; i < work.size(); ++i)
    put(fmt::format("  {:>16} {:>12} {:>12.4g} {:>7} {:>14} {:>12}", algos[i % na],
                    format_size_bytes(points[i].collective.bytes), work[i].amount, work[i].unit,
                    format_estimated_duration(work[i].seconds), memory(work[i].memory_bytes)));
  put(fmt::format("# total: {} run{}: {} of CPU on one core, at most {} at once on {} thread{} (--max-work is in "
                  "seconds of CPU)",
                  work.size(), work.size() == 1 ? "" : "s", format_estimated_duration(total.seconds),
                  memory(total.memory_bytes), threads, threads == 1 ? "" : "s"));
}

}  // namespace

void add_run_command(CLI::App& app) {
  auto opt = std::make_shared<RunOptions>();
  auto* cmd = app.add_subcommand("run", "time All-Reduce algorithms across message sizes (nccl-tests style)");
  add_fabric_options(*cmd, opt->fabric);
  cmd->add_option("--algo", opt->algos, "algorithms, comma separated (default: all the fabric supports)");
  cmd->add_option("-b,--minbytes", opt->min_bytes, "smallest message size per rank (a SIZE, see below)")->capture_default_str();
  cmd->add_option("-e,--maxbytes", opt->max_bytes, "largest message size per rank (a SIZE)")->capture_default_str();
  cmd->add_option("-f,--stepfactor", opt->factor, "multiply the size by this factor each row, 2..1024")->capture_default_str();
  cmd->add_option("--bytes", opt->bytes, "a single message size (a SIZE; overrides -b/-e/-f)");
  cmd->add_option("--dtype", opt->dtype, "element type: bf16|fp16|fp32")->capture_default_str();
  cmd->add_option("--engine", opt->engine, "analytic|packet")->capture_default_str();
  cmd->add_option("--format", opt->format, "table|csv|json")->capture_default_str();
  cmd->add_flag("--explain", opt->explain, "print each result's time breakdown in words and numbers");
  cmd->add_flag("--wide", opt->wide, "table format: every algorithm side by side (wider than 120 columns)");
  cmd->add_flag("--estimate", opt->estimate_only,
                "print each run's estimated work (events or steps, CPU seconds on one core, peak memory) and the "
                "total instead of running them (nothing is refused)");
  add_budget_options(*cmd, opt->budget);
  add_threads_option(*cmd, opt->threads);
  cmd->footer(std::string("SIZE: ") + kSizeGrammar + ". The same grammar holds for --set on byte parameters "
              "(--set switch.isa.buffer_bytes=8MiB), presets and sweep specs.\n"
              "Default output: one block per algorithm ending with nccl-tests' \"# Avg bus bandwidth\" line; "
              "--wide prints all algorithms side by side.");
  cmd->callback([opt] {
    check_format(opt->format, {"table", "csv", "json"});
    const ThreadLimit threads(opt->threads);
    Config cfg = build_config(opt->fabric);
    const DType dtype = parse_dtype(opt->dtype);
    std::vector<std::uint64_t> sizes;
    if (!opt->bytes.empty()) {
      sizes = {parse_size_bytes(opt->bytes, "--bytes")};
    } else {
      const std::uint64_t min_bytes = parse_size_bytes(opt->min_bytes, "-b/--minbytes");
      const std::uint64_t max_bytes = parse_size_bytes(opt->max_bytes, "-e/--maxbytes");
      if (max_bytes < min_bytes)
        throw Error(fmt::format("-e/--maxbytes: {} ({}) is below -b/--minbytes {} ({})", opt->max_bytes,
                                format_size_bytes(max_bytes), opt->min_bytes, format_size_bytes(min_bytes)));
      sizes = size_range(min_bytes, max_bytes,
                         static_cast<std::uint64_t>(parse_integer(opt->factor, "-f/--stepfactor", 2, 1024)));
    }
    std::vector<std::string> algos = split_list(opt->algos, "--algo");
    if (algos.empty()) algos = supported_algorithms(cfg);
    std::vector<Algorithm> algo_ids;
    for (const auto& a : algos) {
      algo_ids.push_back(parse_algorithm(a, "--algo"));
      require_supported(cfg, algo_ids.back());
    }
    const EngineId engine = parse_timing_engine(opt->engine, "--engine");
    const std::size_t na = algos.size();
    std::vector<SimResult> res(sizes.size() * na);
    // Elements must divide evenly: round each size down to whole elements, like nccl-tests.
    const std::uint64_t eb = static_cast<std::uint64_t>(dtype_bytes(dtype));
    for (auto& s : sizes) {
      if (s < eb) throw Error(fmt::format("bytes: {} is smaller than one {} element", s, to_string(dtype)));
      s -= s % eb;
    }
    // The points are those of the SweepSpec every front end builds (core/sweep/builders.h):
    // sizes outer, algorithms inner.
    const auto points = resolve_points(
        collective_sweep(fabric_choice(opt->fabric), algos, sizes,
                         opt->dtype, opt->engine));
    // The work first: refuse what would run for long or not fit in memory,
    // warn and show progress for what takes more than a few seconds.
    std::vector<WorkEstimate> work(res.size());
    // Last index first: sizes grow with the index, so the costly estimates start
    // first and do not leave one core alone at the end.
    // (One point: on this thread, without starting TBB's scheduler and its
    // allocator, which cost a one-point run ~1 ms of start-up.)
    auto estimate_one = [&](std::size_t k) {
      const std::size_t i = res.size() - 1 - k;
      work[i] = estimate(points[i].config, algo_ids[i % na], points[i].collective, engine);
    };
    if (res.size() == 1)
      estimate_one(0);
    else
      tbb::parallel_for(std::size_t{0}, res.size(), estimate_one);
    const WorkEstimate total = total_work(work, tbb::this_task_arena::max_concurrency());
    if (opt->estimate_only) {
      print_estimates(cfg, algos, points, work, total, opt->format, opt->engine);
      return;
    }
    // Nothing printed yet: a run that will allocate much restarts here once with
    // the C library's heap on huge pages (base/huge_pages.h; the same results).
    restart_with_huge_pages_if_worth_it(total.memory_bytes);
    const bool progress = enforce_budget(total, opt->budget,
                                         fmt::format("scin run ({} run{} on the {} engine)", res.size(), res.size() == 1 ? "" : "s", opt->engine));
    run_jobs(work, progress, /*parallel=*/true, [&](std::size_t i, const RunContext& ctx) {
      res[i] = simulate(points[i].config, algo_ids[i % na], points[i].collective, engine, ctx);
    });

    if (opt->format == "json") {
      nlohmann::json j;
      j["preset"] = cfg.name;
      j["gpus"] = cfg.fabric.gpus;
      j["engine"] = opt->engine;
      j["dtype"] = to_string(dtype);
      j["results"] = nlohmann::json::array();
      for (const auto& r : res) j["results"].push_back(to_json(r));
      fmt::print("{}\n", j.dump(2));
    } else if (opt->format == "csv") {
      fmt::print("preset,gpus,engine,algorithm,variant,bytes,count,dtype,time_us,algbw_GBps,busbw_GBps,max_link_bytes");
      for (int t = 0; t < static_cast<int>(Term::Count); ++t) fmt::print(",{}_ns", to_string(static_cast<Term>(t)));
      fmt::print("\n");
      for (const auto& r : res) {
        fmt::print("{},{},{},{},{},{},{},{},{:.6f},{:.6f},{:.6f},{:.0f}", csv_field(cfg.name), r.gpus, r.engine,
                   r.algorithm, csv_field(r.variant), r.bytes, r.bytes / eb, to_string(r.dtype), r.time_us(),
                   r.algbw_GBps, r.busbw_GBps, r.max_link_bytes);
        for (int t = 0; t < static_cast<int>(Term::Count); ++t) fmt::print(",{:.3f}", r.breakdown.ns[t]);
        fmt::print("\n");
      }
    } else {
      if (opt->wide) print_table(cfg, algos, sizes, res, dtype, opt->engine);
      else print_blocks(cfg, algos, sizes, res, dtype, opt->engine);
      // What a result says about itself (e.g. nvls where NCCL would not run it), once per algorithm.
      std::set<std::string> said;
      for (const auto& r : res)
        if (r.extra.is_object() && r.extra.contains("note") && said.insert(r.algorithm).second)
          put(fmt::format("# note ({}): {}", r.algorithm, r.extra["note"].get<std::string>()));
      // Which of these NCCL itself would run without NCCL_ALGO (its own tuning model).
      const bool nccl_algos = std::any_of(algos.begin(), algos.end(), [](const std::string& a) {
        return a == "ring" || a == "nvls";
      });
      if (nccl_algos) {
        put("# NCCL's own choice without NCCL_ALGO (its tuning model; measured nccl-auto rows are modelled as it):");
        for (const std::string& run : nccl_choice_runs(cfg, sizes)) put("#   " + run);
      }
    }
    if (opt->explain) print_explain(res);
  });
}

}  // namespace scin::cli
