// Ring-q8 with fewer blocks than ranks on a star, in closed form (issue 14:
// at 1024 GPUs the sizes of one block, 8-64 B, cost 3N^2 finishes). Internal
// to the analytic engine (ring_closed.cc).
#pragma once

#include <cstddef>
#include <vector>

#include "engines/analytic/shot_steps.h"

namespace scin::shot {

/// Every step's finish of build_ring_q's schedule on a star where each chunk
/// holds one block or none (fewer blocks than ranks), no two neighbouring
/// chunks hold one, and every launch ends at once: O(1) a step, O(N) in all.
///
/// In the chunks' frame (rank r's step of round k carries chunk r - k, what
/// rank r - 1 carried the round before) every stage is a longest path that
/// stays on its chunk or comes from the next one: a round's send ends at
/// V(k, c) = q(c) + s(c) + max(V(k-1, c), V(k-1, c+1)), the gather's stages
/// alike from X(c) = max(sum(c) + V(N-2, c), V(N-2, c+1)). Where a chunk with
/// a block costs no less than an empty one at every stage, the longest path
/// to chunk c waits on the nearest full chunk at or after it, d chunks on,
/// as long as it can and then walks the d empty ones: V(k, c) = L + full
/// rounds 0..k-d + d empty rounds (all empty when d > k); a gather stage j
/// ends at X(full) + (j + 1 - d) full stages + d empty ones where d <= j,
/// else at X(c + j) + j + 1 empty stages (X grows towards the full chunk).
/// Costs are cost-grid multiples and times stay below 2^33
/// ns, so these are the step-by-step sums to the bit (cost_grid.h).
///
/// No use queues: an empty chunk's steps use no HBM; a full chunk's send
/// reduces into rank t while t quantises chunks one on (empty) or further
/// (full, of an earlier round, so ended: every full chunk's round k ends at
/// the same time, later than round k - 1's); the sum of a full chunk starts
/// after its rank's last quantise ended. Costs are at least 0 and a gather's
/// more, so the first of the latest steps is a last gather or a dequantise.
struct RingSparse {
  // A step's cost (fixed + longest use + latency) per size class (0: empty,
  // 1: one block): the first quantise, the others, the reduce-scatter send,
  // the sum, the gather send; the dequantise (one class).
  double qf[2] = {}, q[2] = {}, s[2] = {}, sum[2] = {}, g[2] = {}, dq = 0;
  double launch = 0;  // every launch's end
  std::size_t n = 0;
  std::vector<int> to_full;  // per chunk: chunks on to the nearest with a block (0: its own)

  /// Sets `to_full` from each chunk's block count (0 or 1) and checks the
  /// conditions above on the costs; false where one fails.
  bool holds(const std::vector<std::uint8_t>& full);
  /// The finish of step (t, r) of RingQIds (not a launch).
  double finish(const RingQIds& ids, std::size_t t, std::size_t r) const;
  /// The first of the latest steps (a dequantise) and its finish.
  StepId last(const RingQIds& ids, double& latest) const;

 private:
  double round_end(std::size_t k, int d) const;  // V(k, c) with d = to_full[c]
  double gather_start(std::size_t c) const;      // X(c)
  double gather_end(std::size_t j, std::size_t c) const;
};

}  // namespace scin::shot
