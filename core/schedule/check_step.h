// check_schedule() in parts (schedule.cc), for an engine that passes over the
// steps anyway: the packet engine's set-up reads every step once, and a ring
// at 1024 accelerators has 2 M steps of 208 bytes (416 MB): checking them in a
// pass of their own read them all twice. Call check_schedule_nodes(s) once,
// then check_step(s, i) for every step in order, before using step i: the same
// checks and the same errors as check_schedule(). (A header of its own, so that
// schedule.h, included by most of the tree, is unchanged.)
#pragma once

#include <cstddef>

#include "schedule/schedule.h"

namespace scin {

void check_schedule_nodes(const Schedule& s);

namespace detail {

/// One step's checks, throwing the error if one fails (check_schedule's loop body).
[[gnu::noinline]] void check_one_step(const Schedule& s, std::size_t i, int nodes);

// The bounds of `n` regions and, if `counted`, their counts equal to `count`:
// true only if all hold. Out of line, for a wide step's lists (an NVLS
// ld_reduce's 1024 sources, a multicast's 1024 destinations): inlined in the
// packet engine's set-up the loop kept few values in registers (~20
// instructions a region).
[[gnu::noinline]] inline bool regions_ok(const Region* r, std::size_t n, const BufferDecl* buf, std::size_t nb,
                                         bool counted, std::uint64_t count) {
  if (counted) {
    for (std::size_t k = 0; k < n; ++k)
      if (r[k].buffer >= nb || r[k].offset + r[k].count > buf[r[k].buffer].elems || r[k].count != count) return false;
  } else {
    for (std::size_t k = 0; k < n; ++k)
      if (r[k].buffer >= nb || r[k].offset + r[k].count > buf[r[k].buffer].elems) return false;
  }
  return true;
}

// check_one_step's conditions as one test, on raw pointers: true only if
// check_one_step would throw nothing (it may say false for a good step: the
// caller then runs check_one_step, which throws or not). A ring at 1024
// accelerators checks 2 M steps; check_one_step's region lambda and list
// accessors took ~250 instructions a step.
[[gnu::always_inline]] inline bool step_ok(const Schedule& s, std::size_t i, int nodes) {
  const Step& st = s.steps[i];
  const BufferDecl* const buf = s.buffers.data();
  const std::size_t nb = s.buffers.size();
  const StepId* dep = st.deps.data();
  for (std::size_t k = 0, n = st.deps.size(); k < n; ++k)
    if (dep[k] >= i) return false;
  if (st.initiator < 0 || st.initiator >= nodes) return false;
  const Region* src = st.srcs.data();
  const Region* dst = st.dsts.data();
  const std::size_t ns = st.srcs.size(), nd = st.dsts.size();
  // One pass over each list: its regions' bounds and, for a data operation,
  // their counts against the first source's (an NVLS ld_reduce at 1024
  // accelerators has 1024 sources, its multicast 1024 destinations: two passes
  // each were ~19 instructions a region). The same conditions, conjoined.
  const bool counted = st.op != DataOp::None;
  if (counted && (ns == 0 || nd == 0)) return false;
  const std::uint64_t n = counted ? src[0].count : 0;
  bool ok = true;
  if (ns + nd > 4) [[unlikely]] {
    if (!regions_ok(src, ns, buf, nb, counted, n) || !regions_ok(dst, nd, buf, nb, counted, n)) return false;
  } else {
    for (std::size_t k = 0; k < ns; ++k) {
      const Region& r = src[k];
      ok &= r.buffer < nb && r.offset + r.count <= buf[r.buffer].elems;
      ok &= !counted || r.count == n;
    }
    for (std::size_t k = 0; k < nd; ++k) {
      const Region& r = dst[k];
      ok &= r.buffer < nb && r.offset + r.count <= buf[r.buffer].elems;
      ok &= !counted || r.count == n;
    }
    if (!ok) return false;
  }
  switch (st.kind) {
    case StepKind::Write:
      if (ns == 0 || buf[src[0].buffer].node != st.initiator) return false;
      if (ns > 1) {
        if (nd != 1 || st.op != DataOp::Reduce) return false;
        const NodeId to = buf[dst[0].buffer].node;
        for (std::size_t k = 1; k < ns; ++k) ok &= buf[src[k].buffer].node == to;
      }
      return ok;
    case StepKind::Read: return nd == 1;
    case StepKind::Signal: return st.target >= 0 && st.target < nodes;
    case StepKind::Compute:
      for (std::size_t k = 0; k < ns; ++k) ok &= buf[src[k].buffer].node == st.initiator;
      for (std::size_t k = 0; k < nd; ++k) ok &= buf[dst[k].buffer].node == st.initiator;
      return ok;
    default: return true;
  }
}

}  // namespace detail

/// Step i's checks (`nodes`: s.node_count()); step_ok first, inline (the packet
/// engine's set-up checks 2 M steps of a ring at 1024 accelerators: the call
/// into schedule.cc and back was ~30 instructions of ~170 a step), and only if
/// it says no the code that throws.
[[gnu::always_inline]] inline void check_step(const Schedule& s, std::size_t i, int nodes) {
  if (!detail::step_ok(s, i, nodes)) [[unlikely]]
    detail::check_one_step(s, i, nodes);
}
inline void check_step(const Schedule& s, std::size_t i) { check_step(s, i, s.node_count()); }

}  // namespace scin
