// `scin bench`: how fast the packet engine runs one All-Reduce, several times.
//
// Prints, per run and as the median, the three speed views OMNeT++'s Cmdenv
// reports: events per second, simulated time per wall second, and events per
// simulated microsecond, plus packet serialisations per second. An event is one
// pop from the engine's event heap (see core/engines/packet/engine.cc); a packet
// hop is one packet serialised on one link. The figures come from the engine's
// typed statistics (packet::Stats), not from its JSON.
#include <algorithm>
#include <cctype>
#include <memory>

#include <fmt/format.h>

#include "cli/budget.h"
#include "cli/commands.h"
#include "cli/common.h"
#include "base/error.h"
#include "base/memory.h"
#include "base/units.h"
#include "engines/packet/packet_engine.h"
#include "engines/simulate.h"
#include "fabric/params.h"
#include "schedule/algorithms.h"

namespace scin::cli {
namespace {

struct BenchOptions {
  FabricOptions fabric;
  std::string algo = "scin";
  std::string bytes = "1G";
  std::string dtype = "bf16";
  int runs = 3;
  std::string format = "table";
  BudgetOptions budget;
};

struct Sample {
  double sim_us = 0, wall_s = 0, cpu_s = 0;
  std::uint64_t events = 0, hops = 0, peak_pending = 0;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

void add_bench_command(CLI::App& app) {
  auto opt = std::make_shared<BenchOptions>();
  auto* cmd = app.add_subcommand("bench", "time the packet engine on one All-Reduce (events per second, wall time)");
  add_fabric_options(*cmd, opt->fabric);
  cmd->add_option("--algo", opt->algo, "algorithm to simulate")->capture_default_str();
  cmd->add_option("--bytes", opt->bytes, "message size per rank (K/M/G suffixes)")->capture_default_str();
  cmd->add_option("--dtype", opt->dtype, "element type: bf16|fp16|fp32")->capture_default_str();
  cmd->add_option("--runs", opt->runs, "repetitions; the median is reported (0: print the work budget's estimate only)")->capture_default_str();
  cmd->add_option("--format", opt->format, "table|json")->capture_default_str();
  add_budget_options(*cmd, opt->budget);
  cmd->footer(
      "Speed knob: --set packet.payload_bytes=4096 simulates 16x fewer packets than the default 256 B;\n"
      "bandwidth terms are unchanged (a full packet costs payload / rate at any size), but queues,\n"
      "back-pressure and the partial last packet are resolved 16x more coarsely.");
  cmd->callback([opt] {
    check_format(opt->format, {"table", "json"});
    if (opt->runs < 0 || opt->runs > 1000)
      throw Error(fmt::format("--runs: {} is outside 0..1000 (0: the work budget's estimate only)", opt->runs));
    Config cfg = build_config(opt->fabric);
    const DType dtype = parse_dtype(opt->dtype);
    const std::uint64_t bytes = parse_size_bytes(opt->bytes, "--bytes");
    if (opt->algo == "ring" && cfg.ring.protocol == RingProtocol::Auto) {
      // Time the protocol simulate() would pick (its analytic choice is not part of the timing).
      std::string v = simulate(cfg, opt->algo, Collective{bytes, dtype}, "analytic").variant;
      for (char& ch : v) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      apply_assignment(cfg, "ring.protocol=" + v);
    }
    // What the work budget would have said of this run (events, CPU, memory), to
    // set beside what it took: the estimate's accuracy is measured here.
    const WorkEstimate est = estimate(cfg, parse_algorithm(opt->algo), Collective{bytes, dtype}, EngineId::Packet);
    if (opt->runs == 0) {  // the estimate alone
      if (opt->format == "json") {
        nlohmann::json j;
        j["preset"] = cfg.name, j["algorithm"] = opt->algo, j["bytes"] = bytes;
        j["estimated_events"] = est.amount, j["estimated_cpu_s"] = est.seconds;
        j["estimated_memory_bytes"] = est.memory_bytes;
        j["schedule_steps"] = est.steps, j["schedule_uses"] = est.uses, j["schedule_width"] = est.width;
        j["held_flows_bytes"] = est.held_flows_bytes, j["held_queued_bytes"] = est.held_queued_bytes;
        j["held_isa_bytes"] = est.held_isa_bytes, j["held_copies"] = est.held_copies;
        fmt::print("{}\n", j.dump(2));
      } else {
        fmt::print("# the work budget's estimate: {:.3g} events, {:.3g} s CPU, {:.0f} MB\n", est.amount, est.seconds,
                   est.memory_bytes / 1e6);
      }
      return;
    }
    // The runs' work against --max-work, as `scin run` checks it: a 256-GPU two-tier
    // one-shot at 1 GiB (8 days on one core) started without a word.
    WorkEstimate all = est;
    all.amount *= opt->runs;
    all.seconds *= opt->runs;  // (one after another: the memory is one run's)
    const BudgetCheck check = check_budget(all, work_budget(opt->budget),
                                           fmt::format("scin bench ({} packet run{})", opt->runs, opt->runs == 1 ? "" : "s"),
                                           kBudgetOverride);
    if (check.refused()) throw Error(check.message);
    const Schedule sched = compile(cfg, opt->algo, Collective{bytes, dtype});
    std::vector<Sample> samples;
    for (int i = 0; i < opt->runs; ++i) {
      const packet::Run r = packet::run(cfg, sched);
      Sample s;
      s.sim_us = r.result.time_us();
      s.wall_s = r.stats.wall_s;
      s.cpu_s = r.stats.cpu_s;
      s.events = r.stats.events;
      s.hops = r.stats.packet_hops;
      s.peak_pending = r.stats.peak_pending;
      samples.push_back(s);
    }
    auto col = [&](auto f) {
      std::vector<double> v;
      for (const auto& s : samples) v.push_back(f(s));
      return median(v);
    };
    const double wall = col([](const Sample& s) { return s.wall_s; });
    const double cpu = col([](const Sample& s) { return s.cpu_s; });
    const double ev = static_cast<double>(samples.front().events);
    const double hops = static_cast<double>(samples.front().hops);
    const double sim_us = samples.front().sim_us;
    if (opt->format == "json") {
      nlohmann::json j;
      j["preset"] = cfg.name;
      j["algorithm"] = opt->algo;
      j["bytes"] = bytes;
      j["packet_payload_bytes"] = cfg.packet.payload_bytes;
      j["runs"] = opt->runs;
      j["simulated_us"] = sim_us;
      j["events"] = samples.front().events;
      j["packet_hops"] = samples.front().hops;
      j["median_wall_s"] = wall;
      j["median_cpu_s"] = cpu;
      j["events_per_wall_s"] = wall > 0 ? ev / wall : 0.0;
      j["events_per_cpu_s"] = cpu > 0 ? ev / cpu : 0.0;
      j["packet_hops_per_cpu_s"] = cpu > 0 ? hops / cpu : 0.0;
      j["peak_pending_events"] = samples.front().peak_pending;
      j["estimated_events"] = est.amount;
      j["estimated_cpu_s"] = est.seconds;
      j["estimated_memory_bytes"] = est.memory_bytes;
      j["schedule_steps"] = est.steps;
      j["schedule_uses"] = est.uses;
      j["schedule_width"] = est.width;
      j["peak_resident_bytes"] = peak_resident_bytes();
      fmt::print("{}\n", j.dump(2));
      return;
    }
    fmt::print("# scin bench: {} on {} ({} accelerators), {} per rank, packets of {} + {} B, {} run(s)\n", opt->algo,
               cfg.name, cfg.fabric.gpus, format_size_bytes(bytes), cfg.packet.payload_bytes,
               cfg.packet.header_bytes, opt->runs);
    fmt::print("# event = one pop from the event heap; hop = one packet serialised on one link;\n"
               "# cpu = this thread's CPU time (honest on a loaded machine), wall = elapsed time\n");
    fmt::print("#{:>4} {:>12} {:>12} {:>12} {:>9} {:>9} {:>11} {:>11} {:>11}\n", "run", "sim_us", "events", "hops",
               "wall_s", "cpu_s", "Mev/s_wall", "Mev/s_cpu", "Mhop/s_cpu");
    for (std::size_t i = 0; i < samples.size(); ++i) {
      const Sample& s = samples[i];
      fmt::print(" {:>4} {:>12.2f} {:>12} {:>12} {:>9.3f} {:>9.3f} {:>11.2f} {:>11.2f} {:>11.2f}\n", i + 1, s.sim_us,
                 s.events, s.hops, s.wall_s, s.cpu_s, s.wall_s > 0 ? s.events / s.wall_s / 1e6 : 0.0,
                 s.cpu_s > 0 ? s.events / s.cpu_s / 1e6 : 0.0, s.cpu_s > 0 ? s.hops / s.cpu_s / 1e6 : 0.0);
    }
    fmt::print(" {:>4} {:>12.2f} {:>12.0f} {:>12.0f} {:>9.3f} {:>9.3f} {:>11.2f} {:>11.2f} {:>11.2f}\n", "med", sim_us,
               ev, hops, wall, cpu, wall > 0 ? ev / wall / 1e6 : 0.0, cpu > 0 ? ev / cpu / 1e6 : 0.0,
               cpu > 0 ? hops / cpu / 1e6 : 0.0);
    fmt::print("# simulated time per wall second: {:.3f} us/s; events per simulated us: {:.0f}\n",
               wall > 0 ? sim_us / wall : 0.0, sim_us > 0 ? ev / sim_us : 0.0);
    fmt::print("# the work budget's estimate: {:.3g} events, {:.3g} s CPU, {:.0f} MB; this process's peak: {:.0f} MB\n",
               est.amount, est.seconds, est.memory_bytes / 1e6, static_cast<double>(peak_resident_bytes()) / 1e6);
  });
}

}  // namespace scin::cli
