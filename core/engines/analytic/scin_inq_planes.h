// SCIN+INQ on two tiers with its planes booked one at a time (issue 14: at
// 1024 GPUs and 1 GiB every plane was compiled, 385 MB). Internal to the
// analytic engine (scin_tiers.cc).
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

#include "base/run_context.h"
#include "engines/analytic/analytic.h"
#include "fabric/config.h"
#include "schedule/schedule.h"

namespace scin::analytic {

/// Where things are in build_scin_tiers' reduced SCIN+INQ schedule (rank 0's
/// launch and quantise run of every plane's waves, standing for every rank's:
/// CompileOptions::quantise_once; then the block of each built plane, then
/// each rank's wait and dequantise) and in the full one (every rank's run,
/// every plane's block, the same final steps).
struct InqPlanes {
  std::size_t ranks = 0;                // accelerators
  std::size_t per_rank = 0;             // a run: its launch and the waves of every plane
  std::vector<std::size_t> plane_start; // per plane: its wave 0's place in a run after the launch
  std::vector<std::size_t> waves;       // per plane
  std::vector<std::size_t> stands_on;   // per plane: the built plane of its stripe size
  std::vector<std::size_t> block;       // per plane: its block's first step in the reduced schedule (built planes)
  std::vector<std::size_t> steps;       // per plane: its block's steps
  std::size_t finals = 0;               // the reduced schedule's first wait
  /// Per plane: its steps in the full schedule. Where they are more than
  /// `steps`, the block has its first leaf's per-leaf steps alone
  /// (CompileOptions::leaves_once: `leaves` leaves of `per_leaf` ranks in the
  /// full one) and a path's steps are moved to the full block's (the leaf of
  /// the rank whose flag the path enters, for the acks, wait and flags; the
  /// first leaf's, the first latest, for the rest).
  std::vector<std::size_t> full_steps;
  std::size_t leaves = 1, per_leaf = 0;
};

/// The analytic result of the full SCIN+INQ schedule from the reduced one `s`
/// (time, every breakdown term, the critical path in the full schedule's
/// indices; not max_link_bytes, not per-step timings), equal to run_analytic()
/// of the full schedule to the last bit. A plane's block depends only on its
/// own steps and its waves' quantise steps, and uses only its own switches,
/// ports and trunks (the ISA reads no HBM), so booked alone with those
/// quantise steps' finishes as given it is booked as the whole schedule books
/// it (part_booking.h's argument: steps are taken in order of (ready time,
/// index), and its steps keep their ready times and their order). So: the
/// quantise run is booked once (its HBM queue), then each plane's block
/// (a built plane's block of its size, its quantise deps standing in as steps
/// that finish when those of the plane booked do), keeping each rank's flag
/// finish, then the run again with each rank's wait on every plane's flags
/// and its dequantise (the other ranks' HBM holds no quantise step: theirs
/// all end before the dequantise is ready). The critical path is walked back
/// through the last booking, the plane of the flag it reaches (booked again)
/// and the quantise run that plane's path reaches, as the run of the rank
/// whose step left for it (an arrive's, a leaf read's first source's).
/// A plane whose quantise finishes are a booked plane's later by one grid
/// multiple d is that booking later by d (cost_grid.h: exact), not booked.
/// Memory: one plane's bookings at a time.
/// Nothing where the schedule is not of that shape, or a step of a plane
/// finishes as late as the last dequantise (then the full schedule's last
/// step could be that step): the caller compiles every plane.
std::optional<AnalyticResult> book_inq_planes(const Config& cfg, const Schedule& s, const InqPlanes& L,
                                              const RunContext& ctx);

}  // namespace scin::analytic
