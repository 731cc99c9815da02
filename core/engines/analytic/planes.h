// Internal to the analytic engine (analytic.cc, ring_alike.cc): the step-by-step
// test of planes alike (analytic.h, planes_alike()).
#pragma once

#include "schedule/schedule.h"

namespace scin::analytic_detail {

// Every switch plane alike (analytic.h): all accelerator traffic crosses
// kAllPlanes; nothing addresses one plane or is issued by a switch. On a
// two-tier fabric a transfer's route (its leaf and, by ECMP on the end
// points, its spine) is the same in every plane, so the planes' links and
// NVLS units see the same uses too.
inline bool fabric_has_planes_alike(const Schedule& s) { return s.topology != Topology::Mesh && s.planes > 1; }
inline bool step_planes_alike(const Schedule& s, const Step& st) {
  if (st.kind != StepKind::Write && st.kind != StepKind::Read && st.kind != StepKind::Compute) return true;
  if (s.is_switch(st.initiator)) return false;
  return st.kind == StepKind::Compute || st.via == kAllPlanes || st.via == kNoNode;
}

}  // namespace scin::analytic_detail
