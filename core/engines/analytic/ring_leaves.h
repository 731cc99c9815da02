// Ring-q8 on two tiers by leaves alike (issue 14: a 1024-GPU 1 GiB point
// booked 3 million steps, 0.8 s). Internal to the analytic engine
// (shot_alike.cc) and simulate()'s estimate.
#pragma once

#include <cstddef>

#include "base/run_context.h"
#include "engines/analytic/shot_steps.h"
#include "fabric/config.h"

namespace scin::shot {

/// Whether book_ring_leaves() may answer for ring-q8 on `cfg` and `coll`
/// (it can still decline after booking: a tie, below): two tiers of at
/// least two leaves of at least three accelerators, no graph file, every
/// launch ending at once (no launch serialisation), whole blocks cut into
/// chunks whose counts repeat every leaf (chunk c + m as chunk c: N /
/// gcd(blocks, N) divides m; at 576 GPUs on 16 leaves every power of two
/// from 1 KiB). `steps` (optional): the steps it books, 3 x (accelerators
/// per leaf) x N.
bool ring_leaves_apply(const Config& cfg, const Collective& coll, std::size_t* steps = nullptr);

/// build_ring_q's steps, in its order, with its dependency lists (the step
/// indices RingQIds gives, shot_steps.h), for ranks 0..m-1 of the N-rank ring
/// (after ring_q_head()): m = N, the whole schedule; m < N, a leaf's ranks
/// with each rank's deps on its neighbours turned onto 0..m-1 (rank m-1's
/// sends name rank m as their receiver: their route and bytes).
void ring_q_steps(Shape& x, Steps& st, int m);

/// The analytic result of build_ring_q's schedule (x.ring, after
/// ring_q_head() and shapes_done()) on two tiers, from one leaf's ranks:
/// time, every breakdown term, the critical path (the full schedule's step
/// indices) and max_link_bytes as booking the full schedule gives them, to
/// the last bit; no per-step timings.
///
/// The ring runs rank r -> r + 1; with m accelerators a leaf, the only send
/// between leaves is a leaf's last rank's to the next leaf's first, on its
/// own trunks (one uplink, one downlink: no other send uses them, and every
/// trunk has the same rate and hops whatever the spine ECMP picks). Chunk c
/// + m has chunk c's count and every launch ends at once, so turning the
/// ring by m ranks maps every step onto one of the same cost, on the
/// turned ranks' resources, with deps turned alike: ranks r and r + m have
/// the same times. The steps of ranks 0..m-1 are generated (3mN), rank
/// m-1's send going to rank m's resources booked as rank 0's, and booked
/// by book(). Book() takes steps by (ready time, index): the one order the
/// turn does not keep is a send from rank m-1 against rank m's own steps
/// of its round (the sender's index is below the receiver's there, above it
/// at rank 0), which only matters where two of them are ready at the same
/// instant on one resource: then, and where a use lands on a resource
/// other than the ranks' ports and HBMs and the trunks, this returns false
/// and the caller books every step. The critical path is walked as book()
/// walks it and each step moved to its full index, its rank followed from
/// the last step (each step of the path is its neighbour's rank or one
/// rank before or after it).
bool book_ring_leaves(const Config& cfg, Shape& x, const ResourceMap& rm, bool one_plane, const RunContext& ctx,
                      AnalyticResult& res);

}  // namespace scin::shot
