// `scin sweep | runs | show | export | annotate | delete`: the experiment database (.scindb).
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <chrono>
#include <map>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/commands.h"
#include "cli/budget.h"
#include "cli/common.h"
#include "cli/store_cli.h"
#include "base/error.h"
#include "base/text.h"
#include "fabric/preset.h"
#include "base/units.h"
#include "store/store.h"
#include "sweep/sweep.h"
#include "sweep/sweep_mpi.h"
#include "base/huge_pages.h"

namespace scin::cli {

namespace fs = std::filesystem;

// A database path without an extension gets ".scindb", unless a file of that exact name exists.
fs::path db_path(const std::string& text) {
  if (text.empty()) throw Error("--db: give the experiment database file (FILE.scindb)");
  fs::path p(text);
  std::error_code ec;
  if (!p.has_extension() && !fs::exists(p, ec)) p += kDbExtension;
  return p;
}

// Browsing commands never create a file (a mistyped --db is an error, not a new database);
// they open read-write when they can, so an old file is migrated and dead runs are marked.
// A damaged file opens read-only with a warning on stderr.
Store open_existing(const std::string& text, Access access, bool check) {
  fs::path p = db_path(text);
  std::error_code ec;
  if (!fs::exists(p, ec)) throw Error(fmt::format("--db: no such experiment database '{}'", p.string()));
  Store s = Store::open(p, access, check);
  if (!s.damage().empty())
    fmt::print(stderr, "scin: warning: {} is damaged ({}); opened read-only; `scin recover {} --out NEW.scindb` "
               "copies every readable run\n", p.string(), s.damage(), p.string());
  return s;
}

std::pair<fs::path, std::int64_t> parse_run_ref(const std::string& text, const std::string& flag) {
  auto colon = text.rfind(':');
  std::int64_t id = 0;
  if (colon != std::string::npos && colon + 1 < text.size()) {
    try {
      std::size_t used = 0;
      id = std::stoll(text.substr(colon + 1), &used);
      if (used != text.size() - colon - 1) id = 0;
    } catch (const std::exception&) {
      id = 0;
    }
  }
  if (colon == std::string::npos || colon == 0 || id <= 0)
    throw Error(fmt::format("{}: expected FILE:RUN (e.g. exp.scindb:3), got '{}'", flag, text));
  return {db_path(text.substr(0, colon)), id};
}

namespace {

// A spec argument is a file, or the name of one under resources/sweeps/.
fs::path spec_path(const std::string& text) {
  fs::path p(text);
  std::error_code ec;
  if (fs::exists(p, ec)) return p;
  if (p.parent_path().empty()) {
    try {
      fs::path r = resource_dir() / "sweeps" / p;
      if (!r.has_extension()) r += ".json";
      if (fs::exists(r, ec)) return r;
    } catch (const Error&) {
    }
  }
  throw Error(fmt::format("SPEC: no sweep spec file '{}' (nor resources/sweeps/{})", text, text));
}

// SIGINT / SIGTERM cancel the sweep (SignalGuard, cli/budget.h): no new point
// starts, a long point stops part-way, everything computed in order is
// committed and the run is marked cancelled; a second signal only counts.
std::string eta_text(const SweepProgress& p) {
  if (p.done >= p.total) return "0 s";
  if (p.rate_points_per_s <= 0) return "?";
  return format_duration(p.eta_s);
}

struct SweepCli {
  std::string spec, db, name, notes, rerun, resume;
  std::vector<std::string> tags;
  int threads = 0;
  bool dry_run = false;
  bool quiet = false;
  bool mpi = false;
  BudgetOptions budget;
};

void sweep_on_rank0(const SweepCli& o, MpiSession& mpi) {
  SweepSpec spec;
  fs::path db_file = o.db.empty() ? fs::path() : db_path(o.db);
  std::int64_t resume = 0;
  std::string run_name = o.name;
  bool restartable = true;  // (base/huge_pages.h: every input can be read again)
  if (!o.rerun.empty() || !o.resume.empty()) {
    const bool re = !o.rerun.empty();
    auto [file, id] = parse_run_ref(re ? o.rerun : o.resume, re ? "--rerun" : "--resume");
    RunInfo old;
    {
      Store src = open_existing(file.string(), Access::Auto, false);
      old = src.get_run(id);
    }
    spec = sweep_spec_from_run(old);   // the recorded presets: no preset file is read
    if (re) {
      if (db_file.empty()) db_file = file;
      if (run_name.empty()) run_name = fmt::format("{} (re-run of {})", old.name, id);
    } else {
      if (!o.db.empty() && fs::absolute(db_file) != fs::absolute(file))
        throw Error("--resume: the run is resumed in its own file; drop --db");
      db_file = file;
      resume = id;
      run_name = old.name;
    }
  } else {
    const fs::path file = spec_path(o.spec);
    std::error_code ec;
    restartable = fs::is_regular_file(file, ec);  // (a pipe read once cannot be read again)
    spec = load_sweep_spec(file);
  }
  const std::uint64_t total = point_count(spec);
  const std::size_t threads = o.threads > 0 ? static_cast<std::size_t>(o.threads)
                                            : static_cast<std::size_t>(std::thread::hardware_concurrency());
  if (o.dry_run) {
    fmt::print("sweep '{}' (kind {}): {} points\n", spec.name, to_string(spec.kind), total);
    for (const auto& g : spec.axes) {
      std::vector<std::string> parts;
      for (const auto& a : g.axes) parts.push_back(fmt::format("{} ({} values)", a.path, axis_values(a).size()));
      fmt::print("  axis {}\n", fmt::join(parts, " zipped with "));
    }
    const std::uint64_t show = std::min<std::uint64_t>(total, 10);
    for (std::uint64_t i = 0; i < show; ++i) fmt::print("  point {}: {}\n", i, point_axes(spec, i).dump());
    if (show < total) fmt::print("  ... {} more\n", total - show);
    // What the budget will check (scin run --estimate prints the same per run).
    const WorkEstimate work = sweep_work(spec, threads);
    if (work.seconds > 0 || work.amount > 0)
      fmt::print("  estimated work: {:.3g} {}, {} of CPU on one core, at most {} at once on {} thread{}\n", work.amount,
                 work.unit, format_estimated_duration(work.seconds),
                 format_size_bytes(static_cast<std::uint64_t>(std::max(0.0, work.memory_bytes))), threads,
                 threads == 1 ? "" : "s");
    release_sweep_workers(mpi);
    return;
  }
  // Every point's estimate, when all were estimated: the runner takes the last ones longest first.
  std::vector<double> point_seconds;
  {
    const WorkEstimate work = sweep_work(spec, threads, &point_seconds);
    // Nothing printed or stored yet: a sweep that will allocate much restarts
    // here once with the C library's heap on huge pages (base/huge_pages.h),
    // unless MPI was initialised (a rank must not replace itself).
    if (!mpi.active() && restartable) restart_with_huge_pages_if_worth_it(work.memory_bytes);
    enforce_budget(work, o.budget, fmt::format("sweep '{}' ({} points)", spec.name, total));
  }
  // The only command that creates a database: --db NEW makes it; an existing
  // file is checked first (a damaged file is never written).
  Store store = Store::open(db_file, Access::Create, /*check=*/true);
  if (!store.damage().empty())
    throw Error(fmt::format("{}: the file is damaged ({}); nothing was written; `scin recover {} --out NEW.scindb` "
                            "copies every readable run", db_file.string(), store.damage(), db_file.string()));
  for (auto id : store.recovered_runs())
    fmt::print(stderr, "scin: run {} was left running by a process that is gone; marked interrupted\n", id);

  std::atomic<bool> cancel{false};
  SignalGuard signals;
  const bool tty = isatty(fileno(stderr)) != 0;
  double last_line = -10;
  SweepSink sink;
  sink.on_progress = [&](const SweepProgress& p) {
    if (SignalGuard::count()) cancel = true;
    if (o.quiet) return;
    const double pct = p.total ? 100.0 * static_cast<double>(p.done) / static_cast<double>(p.total) : 100.0;
    if (tty) {
      const int width = 30;
      int fill = static_cast<int>(pct / 100.0 * width);
      fmt::print(stderr, "\r[{}{}] {}/{} ({:.1f}%) {:.0f} points/s ETA {}   ", std::string(fill, '#'),
                 std::string(width - fill, '.'), p.done, p.total, pct, p.rate_points_per_s, eta_text(p));
    } else if (p.elapsed_s - last_line >= 2.0 || p.done == p.total) {
      last_line = p.elapsed_s;
      fmt::print(stderr, "progress: {}/{} points ({:.1f}%), {:.0f} points/s, ETA {}\n", p.done, p.total, pct,
                 p.rate_points_per_s, eta_text(p));
    }
    std::fflush(stderr);
  };
  SweepOptions opts;
  opts.threads = o.threads;
  opts.cancel = &cancel;
  opts.run_name = run_name;
  opts.resume_run = resume;
  opts.notes = o.notes;
  opts.tags = o.tags;
  opts.progress_interval_s = tty ? 0.1 : 0.5;
  opts.point_seconds = std::move(point_seconds);
  // Poll Ctrl-C between progress calls as well.
  std::atomic<bool> watching{true};
  std::thread watcher([&] {
    int seen = 0;
    while (watching.load()) {
      const int n = SignalGuard::count();
      if (n > seen) {
        cancel = true;
        fmt::print(stderr, "{}scin: {}; cancelling — the points computed so far are kept\n", tty ? "\n" : "",
                   n == 1 ? "interrupted" : "interrupted again");
        seen = n;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  });
  SweepSummary sum;
  try {
    sum = run_sweep_mpi(store, spec, opts, sink, mpi);   // run_sweep with one rank
  } catch (...) {
    watching = false;
    watcher.join();
    throw;
  }
  watching = false;
  watcher.join();
  if (tty && !o.quiet) fmt::print(stderr, "\n");
  const auto& p = sum.progress;
  const std::string workers = mpi.size() > 1 ? fmt::format("{} ranks x {} threads", mpi.size(), sum.threads)
                                             : fmt::format("{} threads", sum.threads);
  fmt::print("run {} '{}' {}: {} of {} points ({} skipped) in {} ({:.0f} points/s, {}, {} memo hits)\n",
             sum.run_id, run_name.empty() ? spec.name : run_name, to_string(sum.status), p.done, p.total, p.skipped,
             format_duration(p.elapsed_s), p.rate_points_per_s, workers, p.memo_hits);
  fmt::print("stored in {} (see `scin show --db {} --run {}`)\n", store.path().string(), store.path().string(),
             sum.run_id);
  std::fflush(stdout);
  if (sum.status == RunStatus::Cancelled) throw Error("sweep cancelled; the points computed so far are kept");
  if (sum.status == RunStatus::Interrupted)
    throw Error(fmt::format("a rank stopped answering; run {} is interrupted with the points committed so far; "
                            "`scin sweep --resume {}:{}` finishes it", sum.run_id, store.path().string(), sum.run_id));
}

// Under an MPI launcher (or --mpi) rank 0 reads the spec and owns the file; the
// other ranks only evaluate what it sends them (core/sweep/sweep_mpi.h).
void run_sweep_command(const SweepCli& o) {
  MpiSession mpi(o.mpi);
  if (mpi.rank() > 0) {
    try {
      serve_sweep_mpi(mpi);
    } catch (const std::exception& e) {   // rank 0 waits for this rank's batches: end the job
      fmt::print(stderr, "scin: error: rank {}: {}\n", mpi.rank(), e.what());
      mpi.abort(2);
    }
    return;
  }
  try {
    sweep_on_rank0(o, mpi);
    if (mpi.job() == MpiSession::Job::Running) mpi.abort(0);   // cancelled with every point in: workers mid-batch
  } catch (const std::exception& e) {
    if (mpi.job() != MpiSession::Job::Running) {
      release_sweep_workers(mpi);
      throw;
    }
    // The workers hold batches (or a rank is gone): end the whole job.
    fmt::print(stderr, "scin: error: {}\n", e.what());
    mpi.abort(2);
  }
}

void print_runs(Store& store, const std::string& format) {
  auto runs = store.list_runs();
  if (format == "json") {
    nlohmann::json j = nlohmann::json::array();
    for (auto& r : runs) {
      auto x = to_json(r);
      x.erase("spec");
      x.erase("config");
      j.push_back(x);
    }
    fmt::print("{}\n", j.dump(2));
    return;
  }
  if (runs.empty()) {
    fmt::print("no runs in {}\n", store.path().string());
    return;
  }
  // (ranks and threads: the MPI ranks and threads of scin that computed the run; a measured
  // run was computed by none, its GPUs are in its points)
  // The name and experiment columns as wide as their longest entry (a file name as a
  // measured run's name overran a fixed 24 and pushed the row's other columns right).
  std::size_t name_w = 24, experiment_w = 16;
  for (const auto& r : runs) {
    name_w = std::max(name_w, text_columns(r.name));
    experiment_w = std::max(experiment_w, text_columns(r.experiment));
  }
  fmt::print("{:>4}  {:<11}  {}  {}  {:<10}  {:>17}  {:>5}  {:>7}  {:<20}  {}\n", "id", "status", pad_columns("name", name_w),
             pad_columns("experiment", experiment_w), "kind", "points", "ranks", "threads", "started (UTC)", "tags");
  for (const auto& r : runs) {
    const bool measured = r.kind == PointKind::Measured;
    std::string line = fmt::format("{:>4}  {:<11}  {}  {}  {:<10}  {:>17}  {:>5}  {:>7}  {:<20}  {}", r.id,
                                   to_string(r.status), pad_columns(r.name, name_w), pad_columns(r.experiment, experiment_w),
                                   r.problem.empty() ? to_string(r.kind) : "?",
                                   fmt::format("{}/{}", r.points_stored, r.points_total),
                                   measured ? std::string("-") : std::to_string(r.ranks),
                                   measured ? std::string("-") : std::to_string(r.threads), r.started_at,
                                   fmt::join(r.tags, ","));
    while (!line.empty() && line.back() == ' ') line.pop_back();
    fmt::print("{}\n", line);
    if (!r.problem.empty()) fmt::print("      ^ run {} is damaged: {}\n", r.id, r.problem);
  }
}

}  // namespace

void print_config(const RunInfo& r) {
  if (!r.config_recorded()) {
    fmt::print("run {}: configuration not recorded (written by scin {} before runs recorded their fabric)\n", r.id,
               r.tool_version);
    return;
  }
  const auto& c = r.config;
  fmt::print("run {}: resolved configuration (preset '{}', scin {} ({}))\n", r.id, c.value("preset", ""),
             c.value("tool_version", ""), c.value("git_revision", ""));
  if (c.contains("presets") && c["presets"].is_object())
    for (auto it = c["presets"].begin(); it != c["presets"].end(); ++it) {
      const auto& e = it.value();
      if (e.contains("file") && e["file"].is_string())
        fmt::print("# preset '{}' from {} (fnv1a64 {})\n", it.key(), e["file"].get<std::string>(),
                   e.value("file_fnv1a64", "?"));
      else
        fmt::print("# preset '{}' as recorded{}\n", it.key(), it.key().empty() ? " (registry defaults)" : "");
    }
  if (!c.contains("parameters") || !c["parameters"].is_object()) return;
  std::size_t w = 0;
  for (auto it = c["parameters"].begin(); it != c["parameters"].end(); ++it) w = std::max(w, it.key().size());
  for (auto it = c["parameters"].begin(); it != c["parameters"].end(); ++it) {
    const auto& e = it.value();
    std::string v = e.contains("value") ? (e["value"].is_string() ? e["value"].get<std::string>() : e["value"].dump()) : "?";
    std::string unit = e.value("unit", "");
    fmt::print("{:<{}} = {}{}\n", it.key(), w, v, unit.empty() ? "" : " " + unit);
  }
}

namespace {

void show_run(Store& store, std::int64_t id) {
  RunInfo r = store.get_run(id);
  if (!r.problem.empty()) {
    fmt::print("run {}: {}\n  damaged row: {}\n", r.id, r.name, r.problem);
    return;
  }
  fmt::print("run {}: {}\n", r.id, r.name);
  fmt::print("  experiment   {}\n", r.experiment);
  fmt::print("  status       {}\n", to_string(r.status));
  fmt::print("  kind         {} (engine {})\n", to_string(r.kind), r.engine);
  fmt::print("  points       {} stored of {} ({} skipped)\n", r.points_stored, r.points_total, r.points_skipped);
  fmt::print("  started      {}\n", r.started_at);
  fmt::print("  finished     {}\n", r.finished_at.empty() ? "-" : r.finished_at);
  fmt::print("  tool         scin {} ({}), {} rank{} x {} threads, host {} pid {}\n", r.tool_version, r.git_revision,
             r.ranks, r.ranks == 1 ? "" : "s", r.threads, r.host, r.pid);
  if (!r.tags.empty()) fmt::print("  tags         {}\n", fmt::join(r.tags, ", "));
  if (!r.notes.empty()) fmt::print("  notes        {}\n", r.notes);
  fmt::print("  config       {}\n", r.config_recorded()
                                          ? fmt::format("recorded (preset '{}'; `scin show --config`)",
                                                        r.config.value("preset", ""))
                                          : std::string("not recorded (run from before schema 3)"));
  fmt::print("spec:\n{}\n", r.spec.dump(2));

  auto pts = store.points(id);
  std::map<std::string, std::size_t> skipped_reasons;
  for (const auto& p : pts)
    if (p.status != PointStatus::Ok) ++skipped_reasons[p.message];
  if (r.kind == PointKind::Collective) {
    struct Agg { std::size_t n = 0; double min_us = 0, max_us = 0, best_busbw = 0; };
    std::map<std::string, Agg> by;
    for (const auto& p : pts) {
      if (p.status != PointStatus::Ok) continue;
      Agg& a = by[p.algorithm];
      if (a.n == 0 || p.time_us < a.min_us) a.min_us = p.time_us;
      if (a.n == 0 || p.time_us > a.max_us) a.max_us = p.time_us;
      a.best_busbw = std::max(a.best_busbw, p.busbw_GBps);
      ++a.n;
    }
    fmt::print("summary (per algorithm):\n  {:<14} {:>7} {:>14} {:>14} {:>16}\n", "algorithm", "points",
               "min time_us", "max time_us", "best busbw_GBps");
    for (const auto& [name, a] : by)
      fmt::print("  {:<14} {:>7} {:>14.3f} {:>14.3f} {:>16.2f}\n", name, a.n, a.min_us, a.max_us, a.best_busbw);
  } else if (r.kind == PointKind::Quant) {
    fmt::print("summary (per algorithm, worst rel_l2):\n");
    std::map<std::string, double> worst;
    for (const auto& p : pts)
      if (p.status == PointStatus::Ok) worst[p.algorithm] = std::max(worst[p.algorithm], p.rel_l2);
    for (const auto& [name, w] : worst) fmt::print("  {:<14} {:.4g}\n", name, w);
  } else {
    fmt::print("summary (per algorithm, best over the run):\n  {:<14} {:>12} {:>12}\n", "algorithm", "TTFT_us",
               "TPOT_us");
    std::map<std::string, std::pair<double, double>> best;
    for (const auto& p : pts) {
      if (p.status != PointStatus::Ok) continue;
      auto it = best.find(p.algorithm);
      if (it == best.end()) best[p.algorithm] = {p.ttft_us, p.tpot_us};
      else it->second = {std::min(it->second.first, p.ttft_us), std::min(it->second.second, p.tpot_us)};
    }
    for (const auto& [name, b] : best) fmt::print("  {:<14} {:>12.1f} {:>12.1f}\n", name, b.first, b.second);
  }
  for (const auto& [why, n] : skipped_reasons) fmt::print("skipped {} points: {}\n", n, why);
}

}  // namespace

void add_store_commands(CLI::App& app) {
  add_history_commands(app);
  {
    auto o = std::make_shared<SweepCli>();
    auto* cmd = app.add_subcommand("sweep", "run a sweep spec in parallel and store every point in a .scindb file");
    cmd->add_option("SPEC", o->spec, "sweep spec JSON file (or the name of one in resources/sweeps/)");
    cmd->add_option("--db", o->db, "experiment database (created if missing; .scindb added if no extension)");
    cmd->add_option("--rerun", o->rerun, "re-run stored run FILE:RUN from the database alone (its recorded presets) "
                                         "into a new run (in --db, default FILE)");
    cmd->add_option("--resume", o->resume, "continue interrupted or cancelled run FILE:RUN: evaluate only the "
                                           "points it lacks");
    add_threads_option(*cmd, o->threads);
    auto* name = cmd->add_option("--name", o->name, "run name (default: the spec's name)");
    cmd->add_option("--notes", o->notes, "free-text notes stored with the run");
    cmd->add_option("--tag", o->tags, "tag the run (repeatable)");
    cmd->add_flag("--dry-run", o->dry_run, "list the axes and the first points without running anything");
    cmd->add_flag("-q,--quiet", o->quiet, "no progress output");
    cmd->add_flag("--mpi", o->mpi, "initialise MPI even without a launcher's environment (mpirun and srun are "
                                   "detected); rank 0 writes, the other ranks evaluate (docs/cluster.md)");
    add_budget_options(*cmd, o->budget);
    cmd->callback([o, name] {
      // An option that was given must say something (issue 13: "" was silently ignored).
      if (name->count() > 0) require_not_empty(o->name, "--name");
      for (const auto& t : o->tags) require_not_empty(t, "--tag");
      const int sources = !o->spec.empty() + !o->rerun.empty() + !o->resume.empty();
      if (sources != 1) throw Error("sweep: give exactly one of SPEC, --rerun FILE:RUN or --resume FILE:RUN");
      if (!o->dry_run && o->db.empty() && o->spec.size())
        throw Error("--db: give the experiment database file (FILE.scindb)");
      run_sweep_command(*o);
    });
  }
  {
    auto db = std::make_shared<std::string>();
    auto format = std::make_shared<std::string>("table");
    auto* cmd = app.add_subcommand("runs", "list the runs in an experiment database");
    cmd->add_option("--db", *db, "experiment database")->required();
    cmd->add_option("--format", *format, "table|json")->capture_default_str();
    cmd->callback([db, format] {
      if (*format != "table" && *format != "json")
        throw Error(fmt::format("--format: '{}' is not supported; allowed table, json", *format));
      Store store = open_existing(*db);
      print_runs(store, *format);
    });
  }
  {
    auto db = std::make_shared<std::string>();
    auto run = std::make_shared<std::int64_t>(0);
    auto config = std::make_shared<bool>(false);
    auto* cmd = app.add_subcommand("show", "print a run's spec, metadata and a summary of its points");
    cmd->add_option("--db", *db, "experiment database")->required();
    cmd->add_option("--run", *run, "run id (see `scin runs`)")->required();
    cmd->add_flag("--config", *config, "print the run's resolved configuration (every parameter, value and unit)");
    cmd->callback([db, run, config] {
      Store store = open_existing(*db);
      if (*config) print_config(store.get_run(*run));
      else show_run(store, *run);
    });
  }
  {
    struct ExportCli { std::string db, format = "csv", out; std::int64_t run = 0; };
    auto o = std::make_shared<ExportCli>();
    auto* cmd = app.add_subcommand("export", "export a run's points as CSV or JSON");
    cmd->add_option("--db", o->db, "experiment database")->required();
    cmd->add_option("--run", o->run, "run id (see `scin runs`)")->required();
    cmd->add_option("--format", o->format, "csv|json")->capture_default_str();
    cmd->add_option("--out", o->out, "output file (default: standard output)");
    cmd->callback([o] {
      if (o->format != "csv" && o->format != "json")
        throw Error(fmt::format("--format: '{}' is not supported; allowed csv, json", o->format));
      Store store = open_existing(o->db);
      RunInfo r = store.get_run(o->run);
      std::ofstream file;
      std::ostream* out = &std::cout;
      if (!o->out.empty()) {
        file.open(o->out);
        if (!file) throw Error(fmt::format("--out: cannot write '{}'", o->out));
        out = &file;
      }
      std::uint64_t written = 0;
      if (o->format == "csv") {
        // In chunks, so a run of millions of points never sits in memory at once.
        constexpr std::uint64_t kChunk = 65536;
        for (std::uint64_t first = 0;; first += kChunk) {
          auto pts = store.points(o->run, first, kChunk);
          if (pts.empty() && first > 0) break;
          export_csv(r, pts, *out, first == 0);
          written += pts.size();
          if (pts.size() < kChunk) break;
        }
      } else {
        auto pts = store.points(o->run);
        *out << export_json(r, pts).dump(2) << '\n';
        written = pts.size();
      }
      out->flush();
      if (!*out) throw Error(fmt::format("--out: writing '{}' failed", o->out.empty() ? "stdout" : o->out));
      if (!o->out.empty()) fmt::print(stderr, "wrote {} points of run {} to {}\n", written, o->run, o->out);
    });
  }
  {
    struct AnnotateCli {
      std::string db, name, notes;
      std::vector<std::string> tags, untags;
      std::int64_t run = 0;
    };
    auto o = std::make_shared<AnnotateCli>();
    auto* cmd = app.add_subcommand("annotate", "rename a run, set its notes, add or remove tags");
    cmd->add_option("--db", o->db, "experiment database")->required();
    cmd->add_option("--run", o->run, "run id (see `scin runs`)")->required();
    auto* name = cmd->add_option("--name", o->name, "new run name");
    auto* notes = cmd->add_option("--notes", o->notes, "replace the run's notes");
    cmd->add_option("--tag", o->tags, "add a tag (repeatable)");
    cmd->add_option("--untag", o->untags, "remove a tag (repeatable)");
    cmd->callback([o, name, notes] {
      if (name->count() > 0) require_not_empty(o->name, "--name");
      for (const auto& t : o->tags) require_not_empty(t, "--tag");
      for (const auto& t : o->untags) require_not_empty(t, "--untag");
      Store store = open_existing(o->db, Access::ReadWrite, /*check=*/true);
      store.get_run(o->run);
      if (!o->name.empty()) store.rename_run(o->run, o->name);
      if (notes->count() > 0) store.set_notes(o->run, o->notes);
      for (const auto& t : o->tags) store.add_tag(o->run, t);
      for (const auto& t : o->untags) store.remove_tag(o->run, t);
      RunInfo r = store.get_run(o->run);
      fmt::print("run {} '{}': tags [{}], notes '{}'\n", r.id, r.name, fmt::join(r.tags, ", "), r.notes);
    });
  }
  {
    auto db = std::make_shared<std::string>();
    auto run = std::make_shared<std::int64_t>(0);
    auto* cmd = app.add_subcommand("delete", "delete a run and its points (the only way anything is deleted)");
    cmd->add_option("--db", *db, "experiment database")->required();
    cmd->add_option("--run", *run, "run id (see `scin runs`)")->required();
    cmd->callback([db, run] {
      Store store = open_existing(*db, Access::ReadWrite, /*check=*/true);
      RunInfo r = store.get_run(*run);
      store.delete_run(*run);
      fmt::print("deleted run {} '{}' ({} points)\n", r.id, r.name, r.points_stored);
    });
  }
}

}  // namespace scin::cli
