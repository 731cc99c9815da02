// One-shot, two-shot, two-shot-q8 and ring-q8 without compiling them (issue
// 14: small points at 8 GPUs, and 1024-GPU points in milliseconds). Internal
// to the analytic engine and simulate().
#pragma once

#include <optional>

#include "base/run_context.h"
#include "engines/analytic/analytic.h"
#include "fabric/config.h"
#include "schedule/algorithms.h"

namespace scin {

/// The analytic result of build_one_shot's (Algorithm::OneShot),
/// build_two_shot's (TwoShot, TwoShotQ8) or build_ring_q's (Algorithm::RingQ8)
/// schedule on a one-switch-per-plane star or on two tiers, without
/// compiling it: the steps are generated from the builder's structure
/// as compact records (what each step is, on which ranks and regions) and
/// their dependency lists, in the builder's order, and booked by the engine's
/// own book() (book.h) through a view that costs each step as step_cost()
/// costs the step the builder makes. Steps that differ only in their ranks
/// are costed once per kind and shard or chunk count, and get their own
/// ranks' ports and HBM (shot_steps.h, CostClasses: on a star the cost
/// depends on the ranks only through those resources; launches, which
/// accelerator.gpus_per_process makes rank-dependent, and every step on two
/// tiers, where a pair's route decides its uses, are costed one by one).
/// The same steps, the same deps in the same order and the same costs go
/// through the same booking, so the result equals run_analytic() on the
/// compiled schedule bit for bit (time, every breakdown term, the critical
/// path, max_link_bytes, every step's start and finish in `steps`). What it
/// saves is writing and checking the 208-byte Steps (compile() and
/// check_schedule()) and most of step_cost(). One-shot and the two-shots are
/// booked without the ready queue where their pushes allow it
/// (book_in_order.h: every port's uses arrive in the engine's order at start
/// times that never decrease, so each queues behind the port's last use
/// alone): the same records and times, in O(steps) without a heap or gap
/// search. Without `with_steps` (no per-step timings wanted: simulate()),
/// one-shot and the two-shots whose ranks are all ready at once are booked in
/// closed order without step records, on a star or two tiers (shot_closed.h:
/// O(N) memory, N^2 additions; O(N) on a star, shot_star.h), and ring-q8 on a star or two tiers where no use would queue
/// (ring_closed.h: O(N) with ranks alike, else 8 bytes and a few additions a
/// step); ring-q8 on two tiers first in closed order by leaves alike where no
/// use would queue (ring_closed.h: leaf 0's 3mN steps, a few additions
/// each: ClosedLeaves), then by leaves alike (ring_leaves.h: one leaf's
/// ranks' 3mN steps booked, their times standing for every leaf's). `how`
/// (optional): which booking answered.
/// Returns nothing for another algorithm, on a mesh or a graph file, where the
/// algorithm is unsupported, for fewer than two GPUs: the caller compiles and
/// books then.
enum class ShotBooking { Queue, InOrder, Closed, Leaves, ClosedLeaves };
std::optional<AnalyticResult> run_analytic_shot(const Config& cfg, const Collective& c, Algorithm algo,
                                                const RunContext& ctx = {}, bool with_steps = true,
                                                ShotBooking* how = nullptr);

/// For estimates (simulate.cc's estimate()): the number of steps
/// run_analytic_shot() books for `cfg` and `algo` (the compiled schedule's:
/// one-shot 2N^2 + N, two-shot 4N^2, two-shot-q8 4N^2 + 2N, ring-q8 3N^2, at any size) if it
/// answers, else 0 (then the schedule is compiled and booked). O(1).
/// `closed` (optional): whether simulate()'s run (no per-step timings) books
/// them in closed order: one-shot and the two-shots on a star or two tiers
/// when every rank's launch ends at once (shot_closed.h: one GPU per process, or no
/// launch serialisation), ring-q8 on a star (ring_closed.h, unless uses
/// would overlap on an HBM, which it finds as it books; on two tiers, where
/// they do at large sizes, the estimate assumes the queue). `closed_steps`
/// (optional, for ring-q8): the steps that booking computes: 3N - 1 with
/// ranks alike (launches at once and `coll` cut into chunks of equal whole
/// blocks), else 3N^2; on two tiers 3mN where leaves are alike (ring_leaves.h).
std::size_t shot_alike_steps(const Config& cfg, Algorithm algo, bool* closed = nullptr,
                             const Collective* coll = nullptr, std::size_t* closed_steps = nullptr);

}  // namespace scin
