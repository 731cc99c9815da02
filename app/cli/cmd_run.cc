// `scin run`: time All-Reduce algorithms on a fabric across message sizes,
// printed like nccl-tests (plus the real bytes on the busiest link).
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <tbb/parallel_for.h>

#include "cli/commands.h"
#include "cli/common.h"
#include "base/error.h"
#include "fabric/preset.h"
#include "base/units.h"
#include "engines/simulate.h"

namespace scin::cli {
namespace {

struct RunOptions {
  FabricOptions fabric;
  std::vector<std::string> algos;
  std::string min_bytes = "8", max_bytes = "1G", bytes;
  std::uint64_t factor = 2;
  std::string dtype = "bf16";
  std::string format = "table";
  std::string engine = "analytic";
  bool explain = false;
};

void print_table(const Config& cfg, const std::vector<std::string>& algos, const std::vector<std::uint64_t>& sizes,
                 const std::vector<SimResult>& res, DType dtype, const std::string& engine) {
  const std::size_t na = algos.size();
  fmt::print("# scin run: preset {} ({}), {} accelerators, engine {}, dtype {}\n", cfg.name,
             cfg.accelerator.name, cfg.fabric.gpus, engine, to_string(dtype));
  fmt::print("# time in us; algbw = size/time and busbw = algbw x 2(N-1)/N in GB/s (10^9 B/s), as nccl-tests;\n"
             "# link = real bytes on the busiest accelerator link direction (busbw misleads for in-network algorithms)\n");
  std::string h1 = fmt::format("#{:>12} {:>12} {:>5}", "", "", "");
  std::string h2 = fmt::format("#{:>12} {:>12} {:>5}", "size", "count", "type");
  for (const auto& a : algos) {
    const bool proto = a == "ring" && cfg.ring.protocol == RingProtocol::Auto;
    const int w = 44 + (proto ? 7 : 0);
    h1 += fmt::format("  {:^{}}", a, w);
    h2 += fmt::format("  {:>10} {:>10} {:>10} {:>11}", "time", "algbw", "busbw", "link(B)");
    if (proto) h2 += fmt::format(" {:>6}", "proto");
  }
  fmt::print("{}\n{}\n", h1, h2);
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    std::string row = fmt::format(" {:>12} {:>12} {:>5}", sizes[i], res[i * na].bytes / (dtype == DType::Fp32 ? 4 : 2),
                                  to_string(dtype));
    for (std::size_t k = 0; k < na; ++k) {
      const SimResult& r = res[i * na + k];
      row += fmt::format("  {:>10.2f} {:>10.2f} {:>10.2f} {:>11.0f}", r.time_us(), r.algbw_GBps, r.busbw_GBps,
                         r.max_link_bytes);
      if (algos[k] == "ring" && cfg.ring.protocol == RingProtocol::Auto) row += fmt::format(" {:>6}", r.variant);
    }
    fmt::print("{}\n", row);
  }
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
      fmt::print("  {:>14}  {:>12.3f} us  {:>5.1f}%  {}\n", to_string(static_cast<Term>(t)), ns / 1e3,
                 total > 0 ? 100 * ns / total : 0.0, describe(static_cast<Term>(t)));
    }
  }
}

}  // namespace

void add_run_command(CLI::App& app) {
  auto opt = std::make_shared<RunOptions>();
  auto* cmd = app.add_subcommand("run", "time All-Reduce algorithms across message sizes (nccl-tests style)");
  add_fabric_options(*cmd, opt->fabric);
  cmd->add_option("--algo", opt->algos, "algorithms, comma separated (default: all the fabric supports)");
  cmd->add_option("-b,--minbytes", opt->min_bytes, "smallest message size per rank (K/M/G suffixes)")->capture_default_str();
  cmd->add_option("-e,--maxbytes", opt->max_bytes, "largest message size per rank")->capture_default_str();
  cmd->add_option("-f,--stepfactor", opt->factor, "multiply the size by this factor each row")->capture_default_str();
  cmd->add_option("--bytes", opt->bytes, "a single message size (overrides -b/-e/-f)");
  cmd->add_option("--dtype", opt->dtype, "element type: bf16|fp16|fp32")->capture_default_str();
  cmd->add_option("--engine", opt->engine, "analytic|packet")->capture_default_str();
  cmd->add_option("--format", opt->format, "table|csv|json")->capture_default_str();
  cmd->add_flag("--explain", opt->explain, "print each result's time breakdown in words and numbers");
  cmd->callback([opt] {
    check_format(opt->format, {"table", "csv", "json"});
    Config cfg = build_config(opt->fabric);
    const DType dtype = parse_dtype(opt->dtype);
    std::vector<std::uint64_t> sizes;
    if (!opt->bytes.empty()) {
      sizes = {parse_size_bytes(opt->bytes, "bytes")};
    } else {
      sizes = size_range(parse_size_bytes(opt->min_bytes, "minbytes"), parse_size_bytes(opt->max_bytes, "maxbytes"),
                         opt->factor);
    }
    std::vector<std::string> algos = split_list(opt->algos);
    if (algos.empty()) algos = supported_algorithms(cfg);
    std::vector<Algorithm> algo_ids;
    for (const auto& a : algos) {
      algo_ids.push_back(parse_algorithm(a, "algo"));
      require_supported(cfg, algo_ids.back());
    }
    const EngineId engine = parse_timing_engine(opt->engine, "engine");
    const std::size_t na = algos.size();
    std::vector<SimResult> res(sizes.size() * na);
    // Elements must divide evenly: round each size down to whole elements, like nccl-tests.
    const std::uint64_t eb = static_cast<std::uint64_t>(dtype_bytes(dtype));
    for (auto& s : sizes) {
      if (s < eb) throw Error(fmt::format("bytes: {} is smaller than one {} element", s, to_string(dtype)));
      s -= s % eb;
    }
    std::exception_ptr failure;
    tbb::parallel_for(std::size_t{0}, res.size(), [&](std::size_t i) {
      try {
        res[i] = simulate(cfg, algo_ids[i % na], Collective{sizes[i / na], dtype}, engine);
      } catch (...) {
        if (!failure) failure = std::current_exception();
      }
    });
    if (failure) std::rethrow_exception(failure);

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
      print_table(cfg, algos, sizes, res, dtype, opt->engine);
    }
    if (opt->explain) print_explain(res);
  });
}

}  // namespace scin::cli
