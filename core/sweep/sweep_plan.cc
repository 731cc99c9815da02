// Starting a stored run, or taking over an interrupted one: shared by the TBB
// runner (sweep_runner.cc) and the MPI runner (sweep_mpi.cc).
#include <oneapi/tbb/info.h>

#include <algorithm>

#include <fmt/format.h>

#include "base/error.h"
#include "sweep/sweep_internal.h"

namespace scin::sweep_detail {

int sweep_threads(int requested) {
  if (requested < 0 || requested > 1024)
    throw Error(fmt::format("--threads: {} is out of range; allowed 0 (all cores) to 1024", requested));
  return std::max(1, requested > 0 ? requested : tbb::info::default_concurrency());
}

RunPlan begin_or_resume(Store* store, const SweepSpec& spec, const SweepOptions& opts, std::uint64_t total,
                        int threads, int ranks) {
  RunPlan plan;
  if (!store || opts.resume_run == 0) {
    plan.todo.emplace_back(0, total);
  } else {
    RunInfo prev = store->get_run(opts.resume_run);
    if (prev.points_total != total)
      throw Error(fmt::format("--resume: run {} has {} points but its spec now expands to {}", prev.id,
                              prev.points_total, total));
    store->resume_run(opts.resume_run, threads, ranks);
    plan.run_id = opts.resume_run;
    std::uint64_t next = 0;
    for (std::uint64_t i : store->point_indices(opts.resume_run)) {
      if (i > next) plan.todo.emplace_back(next, i);
      next = i + 1;
      ++plan.already;
    }
    if (next < total) plan.todo.emplace_back(next, total);
  }
  if (store && opts.resume_run == 0) {
    RunStart rs;
    rs.experiment = spec.experiment.empty() ? spec.name : spec.experiment;
    rs.name = opts.run_name.empty() ? spec.name : opts.run_name;
    rs.notes = opts.notes;
    rs.tags = opts.tags;
    rs.kind = spec.kind;
    rs.engine = spec.base.engine;
    rs.spec = to_json(spec);
    rs.points_total = total;
    rs.threads = threads;
    rs.ranks = ranks;
    rs.config = resolved_config_json(spec);
    plan.run_id = store->begin_run(rs);
  }
  return plan;
}

}  // namespace scin::sweep_detail
