// Ring-q8's booking in closed order, without step records (issue 14: a
// 1024-GPU point in milliseconds). Internal to the analytic engine
// (shot_alike.cc).
#pragma once

#include <cstddef>
#include <vector>

#include "base/run_context.h"
#include "engines/analytic/shot_steps.h"
#include "fabric/config.h"

namespace scin::shot {

/// The analytic result of build_ring_q's schedule (x.ring) on a star, from
/// its structure alone: time, every breakdown term, the critical path and
/// max_link_bytes as booking the compiled schedule gives them, to the last
/// bit; no per-step timings (`res.steps` stays empty). `x` after
/// ring_q_head() and shapes_done().
///
/// It holds where no use queues. A rank's ports serve its sends (egress) and
/// the sends into it (ingress), one after another through their deps. Its
/// HBM serves two chains: its quantise steps Q_k and the fused reduce of
/// the send into it S_k (round k), where Q_k+1 waits for S_k, S_k+1 for S_k,
/// its sum for the last S and its dequantise for everything; but Q_k and
/// S_k, and S_k+1 and Q_k, are not ordered by deps. Where they do not
/// overlap in time either, every use starts at its step's ready time +
/// fixed cost whatever order book() takes them in (an earliest gap at or
/// after that time is free), so each step's finish is its latest dep's
/// finish + fixed cost + its longest use + latency, and the critical path
/// is walked back as book() walks it (book.h, walk_from) through deps alone.
///
/// Ranks alike, where every chunk has the same element count and every
/// launch ends at once: step k of every rank costs the same on its own
/// ranks' resources (CostClasses) and waits for the same deps' times, so one
/// rank's 3N - 1 steps stand for all 3N^2, booked on rank 0's queues, which
/// check that each use starts after the last one ended (O(N) time and
/// memory). Else every step's finish is computed round by round (O(N^2)
/// time, 8 bytes a step), checking per rank that S_k does not overlap Q_k
/// and starts after Q_k-1 ends, and that the sum starts after the last Q;
/// on a star where the chunks' sizes and the launches repeat every w < N
/// ranks, for ranks 0..w-1 alone (O(wN)); on two tiers, where they repeat
/// every leaf of m ranks and every leaf's sends into the next cost as leaf
/// 0's on trunks of their own, for leaf 0's ranks alone (O(mN)), their HBM
/// uses booked as book() books them, where they queue too (in the order of
/// their ready times: ring_closed_parts.h; declined where two tied in time
/// would land otherwise in the other order).
/// `only_by_leaves`: on two tiers, return false unless by leaves (the caller
/// tries book_ring_leaves then).
/// Returns false where a condition fails (a use on another rank's or
/// another kind of resource, a fed unit, a negative fixed cost or latency,
/// uses that would overlap on an HBM): the caller books the steps then.
bool book_ring_closed(const Config& cfg, Shape& x, CostClasses& classes, const ResourceMap& rm, bool one_plane,
                      const RunContext& ctx, AnalyticResult& res, bool only_by_leaves = false);

/// Ring-q8 bookings in closed order step by step, on this thread, that found
/// the ranks repeating every w < N (chunk sizes and launches) and booked
/// ranks 0..w-1 alone (for tests).
inline std::size_t& ring_q_ranks_period_total() {
  thread_local std::size_t n = 0;
  return n;
}

/// For tests: false turns off ring-q8's closed order by leaves on two tiers
/// on this thread (book_ring_leaves answers then).
inline bool& ring_q_closed_by_leaves() {
  thread_local bool on = true;
  return on;
}

/// Ring-q8 bookings in closed order by leaves on this thread in which some
/// HBM use queued behind another (for tests).
inline std::size_t& ring_q_hbm_queued_total() {
  thread_local std::size_t n = 0;
  return n;
}

/// Ring-q8 bookings on this thread that found fewer blocks than ranks on a
/// star and took every finish in closed form (ring_sparse.h) (for tests).
inline std::size_t& ring_q_sparse_total() {
  thread_local std::size_t n = 0;
  return n;
}

/// For tests: where set, a booking in that closed form also writes every
/// step's finish there, in step order (launches included; O(N^2)).
inline std::vector<double>*& ring_q_sparse_finishes() {
  thread_local std::vector<double>* out = nullptr;
  return out;
}

}  // namespace scin::shot
