// One-shot's and the two-shots' booking in closed order, without step records
// (issue 14: a 1024-GPU point in milliseconds). Internal to the analytic
// engine (shot_alike.cc).
#pragma once

#include "base/run_context.h"
#include "engines/analytic/shot_steps.h"
#include "fabric/config.h"

namespace scin::shot {

/// The analytic result of build_one_shot's (x.one_shot) or build_two_shot's
/// schedule (x.quantised: two-shot-q8) on a star or two tiers, from the
/// structure alone:
/// time, every breakdown term, the critical path and max_link_bytes as booking
/// the compiled schedule gives them, to the last bit; no per-step timings
/// (`res.steps` stays empty). `x` after two_shot_head() and shapes_done().
///
/// Where every rank is ready at once (its launch, and its quantise, end at
/// the same time: one process per GPU), the scatter's pushes all become ready
/// then, and book() takes them in index order; the gather's pushes of shard j
/// become ready when j's reduce ends, and are taken by (that time, index).
/// Ports (and trunks) are used by pushes alone and an HBM by its rank's own
/// steps one after another, so each use starts at the later of (ready + fixed) and the end of
/// its queue's last use (book_in_order.h says why no gap can take it), and a
/// queue is its last end and user: O(N) state, O(N^2) additions for the N^2
/// pushes; on a star, each phase in closed form where it holds
/// (shot_star.h: O(N) per phase). Pushes are costed once per phase, shard size and (on two tiers)
/// whether the pair is in one leaf; a pair's uses are placed from their roles
/// (its ports, and between leaves the trunks of the spine ECMP picks for it),
/// in step_cost()'s order. The waits keep their first latest dep, and the critical path is
/// walked back as book() walks it (book.h, walk_from), replaying the queues
/// it runs along. Returns false where a condition fails (ranks
/// ready at different times, a push or compute on another resource, a
/// negative fixed cost or latency, start times that would decrease on a
/// queue): the caller books the steps then.
bool book_closed(const Config& cfg, Shape& x, CostClasses& classes, const ResourceMap& rm, bool one_plane,
                 const RunContext& ctx, AnalyticResult& res);

}  // namespace scin::shot
