// Options of compile() for callers that need less than the full schedule.
// Kept out of schedule/algorithms.h (included by most of the tree).
#pragma once

#include <vector>

#include "schedule/algorithms.h"

namespace scin {

struct CompileOptions {
  /// False: every Step::label is left empty; the steps are otherwise exactly
  /// compile()'s (same order, kinds, nodes, regions, deps). For a caller that
  /// only times the schedule (simulate() on the analytic engine): labels are
  /// read only to show steps (critical path, `scin explain`, timelines, errors).
  bool labels = true;
  /// Storage to build into (null: fresh): compile() takes the step, buffer,
  /// input and output lists of *storage and builds into their capacity,
  /// leaving *storage empty. The schedule is the same; a caller compiling
  /// point after point (simulate()) keeps one schedule's storage per thread
  /// instead of allocating and freeing the lists every time.
  Schedule* storage = nullptr;
  /// Two-tier SCIN, SCIN+INQ and scin-inq-uplink only (build_scin_tiers): per plane, whether to build its
  /// steps (null: every plane). The schedule then lacks the other planes'
  /// steps and the ranks' final waits depend on the built planes' flags alone:
  /// not a complete All-Reduce, only for run_analytic_scin_tiers (its planes
  /// alike stand for the rest). compile() checks it as any schedule.
  const std::vector<char>* planes = nullptr;
  /// Two-tier SCIN+INQ only: only rank 0 launches and quantises its input;
  /// every other rank's arrive and every leaf's reads wait for rank 0's steps
  /// instead of their own rank's (the same times where every launch ends
  /// together). For run_analytic_scin_tiers only, as `planes`.
  bool quantise_once = false;
  /// Two-tier SCIN, scin-inq-uplink, and SCIN+INQ with quantise_once: each
  /// built plane's per-leaf steps (arrives, counter, reads, quantises,
  /// signals, uplink's dequantises and multicasts, acks, wait, flags) for its
  /// first leaf alone; the spine's reads still name every leaf's partial but
  /// wait for the first leaf's signal, its multicasts still reach every rank
  /// (uplink: every leaf), and rank r's final wait takes the flag of the
  /// first leaf's rank r mod (ranks per leaf). The leaves touch no resource
  /// of one another, so with every rank's inputs alike the first leaf's steps
  /// time every leaf's. For run_analytic_scin_tiers only, as `planes`.
  bool leaves_once = false;
  /// False: compile() does not run check_schedule() on the schedule. For a
  /// builder's reduced schedule booked at once (run_analytic_scin_tiers: the
  /// same builder's schedules, and compile_scin_tiers()' reduced ones, are
  /// checked in the tests); every schedule a user can see or export is checked.
  bool check = true;
};

/// compile(cfg, algo, c, ctx) with `opt`.
Schedule compile(const Config& cfg, Algorithm algo, const Collective& c, const RunContext& ctx,
                 const CompileOptions& opt);

}  // namespace scin
