// The steps a data-engine run executes (internal to the data engine).
#pragma once

#include <vector>

#include "schedule/schedule.h"

namespace scin {

// The schedule moves data as a real fabric would; on one host many of those
// moves only make a second copy of values that stay unchanged. plan_steps()
// rewrites a schedule's steps into ones that compute the same buffer contents
// wherever they are read (every value bit for bit, the outputs included), in
// two ways:
//  - A copy's destination region D is not materialised when reading D later
//    is the same as reading its source S: D and S hold the same representation
//    (the same plain format, or the same codec with both regions on the block
//    grid), every later read of D lies inside D (and on the block grid for a
//    codec), nothing writes D afterwards, nothing writes S until D's last read,
//    and D is no rank's input or output. Reads of D then read S.
//  - A reduction (not accumulating) whose sources, read through those
//    forwards, are the same regions in the same order as an earlier
//    reduction's, with the same running-sum format, none of them written since,
//    becomes a copy of the earlier result (identical arithmetic gives identical
//    bits), provided that result is unchanged and in the same representation
//    (a reduction that writes over one of its own sources is never reused).
// One-shot's slot copies and its N identical reductions are the main case.
std::vector<Step> plan_steps(const Schedule& s);

}  // namespace scin
