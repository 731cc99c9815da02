// Sweeps across processes with MPI (Open MPI; any MPI-3 library works):
//
//   mpirun -np K scin sweep SPEC --db F.scindb      (or srun under Slurm)
//
// Master-worker. Rank 0 owns the database and is its only writer; it hands out
// batches of point indices dynamically, and ranks 1..K-1 evaluate them (each
// with its own TBB threads, --threads per rank) and send the points back.
// Rank 0 also evaluates batches on a thread of its own between messages, so K
// ranks are K evaluating processes. Batches are sized from measured time (about
// half a second of work each, shrinking towards the end so no rank idles while
// another finishes a long tail) and every worker holds a second batch so it
// never waits for rank 0 between two.
//
// Rank 0 commits points in index order (a contiguous prefix, like the
// one-process runner), so the stored run is identical to a one-process run of
// the same spec: same points, same values (the same binary evaluates every
// point; the wire format is exact), same order. The run records how many ranks
// ran it (RunInfo::ranks, `scin runs`).
//
// A rank that dies: Open MPI tears the whole job down (SIGTERM to every rank,
// then SIGKILL). Rank 0 commits the in-order points as they arrive (at least
// every SweepOptions::batch_interval_s), so little is lost; on the tear-down's
// SIGTERM (any cancel: under mpirun, Ctrl-C is the same SIGTERM) it commits
// what it holds in order, marks the run interrupted and writes nothing more.
// If SIGKILL comes first, the run row keeps the dead rank-0 pid and the next
// read-write open of the file marks it interrupted (store.h, liveness). Either
// way what was committed stays, and `scin sweep --resume F:N` (with or
// without mpirun) evaluates exactly the points the run lacks.
//
// The scin binary works without a launcher: MPI is initialised only when the
// process was started by one (Open MPI's mpirun/mpiexec, or a PMIx/PMI
// launcher such as Slurm's srun) or when asked explicitly (--mpi).
#pragma once

#include "sweep/sweep.h"

namespace scin {

/// The MPI environment of this process. Initialises MPI on construction when
/// launched by an MPI launcher or `force`; finalises it on destruction.
/// Without MPI: rank 0 of 1. One Session per process.
class MpiSession {
 public:
  explicit MpiSession(bool force);
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;

  bool active() const { return active_; }   // MPI was initialised
  int rank() const { return rank_; }
  int size() const { return size_; }
  /// Ends the whole job (MPI_Abort) with `code`: when a peer may be gone and a
  /// clean MPI_Finalize could wait for it forever.
  [[noreturn]] void abort(int code);

  /// Rank 0: the worker ranks wait for a job, were released (no job), or run one.
  enum class Job { Waiting, Released, Running };
  Job job() const { return job_; }
  void set_job(Job j) { job_ = j; }

 private:
  Job job_ = Job::Waiting;
  bool active_ = false;
  int rank_ = 0;
  int size_ = 1;
};

/// True when an MPI launcher started this process (its environment says so).
bool launched_by_mpi();

/// Rank 0: runs the sweep over every rank of `mpi` into `store` (see the file
/// comment). With a single rank this is run_sweep(store, ...). The summary's
/// status is Done, or Interrupted after a cancel (opts.cancel / opts.stop: the
/// job is being torn down; the caller ends it with MpiSession::abort, as the
/// workers may still hold batches; resume finishes the run).
SweepSummary run_sweep_mpi(Store& store, const SweepSpec& spec, const SweepOptions& opts, const SweepSink& sink,
                           MpiSession& mpi);

/// Ranks 1..K-1: wait for rank 0's job, evaluate the batches it hands out,
/// return when it says stop. Returns false when rank 0 called the job off
/// before it started (it failed: bad spec, damaged file), true after a run.
bool serve_sweep_mpi(MpiSession& mpi);

/// Rank 0, when no sweep will run (an error before it started, --dry-run):
/// tells the waiting workers there is no job (they return false). Does
/// nothing once the workers were released or given the job.
void release_sweep_workers(MpiSession& mpi);

}  // namespace scin
