// The thread count of a `--threads` value, one rule for every command and
// front end (scin sweep, run, quant; the MPI runner's workers).
#pragma once

namespace scin {

/// Largest `--threads` value accepted.
inline constexpr int kMaxThreads = 1024;

/// The worker threads a `--threads` value asks for: `requested` itself, or
/// for 0 all cores (TBB's default concurrency, at least 1). Error naming
/// --threads and the allowed range for a value outside 0..kMaxThreads.
int resolve_threads(int requested);

}  // namespace scin
