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
//  - A copy into another representation (a dequantisation, a rounding, a
//    quantisation) of content that an earlier such copy already converted into
//    the same representation becomes a copy of that earlier result, provided it
//    is still held. Content is followed through copies element by element
//    (codec content on the block grid only): the 8 ranks' dequantise steps of
//    a quantised All-Reduce decode the same gathered codes, so one decodes and
//    7 copy.
// One-shot's slot copies and its N identical reductions are the main case.
// `same_output_as_rank0` (optional): per rank, whether its output buffer ends
// holding the same content as rank 0's over the schedule's elements (then the
// same bits; never set for rank 0, and false where not known).
std::vector<Step> plan_steps(const Schedule& s, std::vector<char>* same_output_as_rank0 = nullptr);

// Buffers (of `buffers`: the schedule's and any slots) a run of `steps` reads
// or writes (inputs, and outputs not known to equal rank 0's, included): the
// workspace lays them out first.
std::vector<char> touched_buffers(const Schedule& s, std::size_t buffers, const std::vector<Step>& steps,
                                  const std::vector<char>& same_output_as_rank0);

}  // namespace scin
