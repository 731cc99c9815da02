// Storage of short-lived regions (internal to the data engine).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "schedule/schedule.h"

namespace scin {

// A schedule declares every buffer whole for the whole run, but many are used
// in a few pieces, each alive for a few steps: a ring's partial sums and
// quantised payloads (each hop writes one chunk that the next hop reads once).
// slot_storage() gives such pieces storage of their own ("slots") that pieces
// alive at other times reuse, so a run touches less memory (fewer page faults)
// with the same arithmetic on the same values.
//
// A buffer's pieces take slots when the buffer is no rank's input or output,
// the steps that run (`steps`, as run_step executes them: the listed step's op
// is not None and its count not 0, and the step keeps a destination) access it
// only in regions that are pairwise equal or disjoint, each region's first
// access writes it whole (a copy's or a non-accumulating reduction's
// destination, not also read by that step), and, for a codec, every region
// starts on the block grid. A region is alive from its first access to its
// last (both inclusive), and written whole again by a step that does not read
// it (a ring's all-gather over its reduce-scatter's partial sum), alive anew:
// the values before are never read again. Regions alive at a common step never
// share a slot.
// Slots are new buffers (the same format, codec and node as the buffer, the
// largest region's length) appended to `decls`, a copy of the schedule's
// buffers in which the buffers moved to slots have 0 elements; `steps` is
// rewritten to address the slots at offset 0. Nothing changes (returns false)
// when the slots would not take fewer bytes than the buffers they replace.
// `pinned` (optional, per schedule buffer): buffers with pinned[b] >= 0 keep
// their regions (buffers that read shared input codes in place).
// `unread_outputs` (optional, per rank, plan_steps' same_output_as_rank0):
// ranks whose output buffer is never read after the run (the run returns rank
// 0's output for them), so such a buffer takes slots like any other when it is
// not also rank 0's output, a rank's input, or the output of a rank not marked
// (a ring's partial sums in the other ranks' outputs: each lives for one hop).
bool slot_storage(const Schedule& s, std::vector<Step>& steps, std::vector<BufferDecl>& decls,
                  const std::vector<int>* pinned = nullptr, const std::vector<char>* unread_outputs = nullptr);

// Bytes of workspace storage a run lays out for `decls` (the schedule's buffers
// or slot_storage's): buffers it touches (touched_buffers, plan.h) and does not
// read in place (`in_place`, optional: an input read as it is, shared input
// codes). Linear in ranks for every algorithm: a one-shot's N x N gather
// buffers are read through their sources (plan_steps), never laid out.
std::uint64_t laid_bytes(const std::vector<BufferDecl>& decls, const std::vector<char>& touched,
                         const std::vector<char>* in_place = nullptr);

}  // namespace scin
