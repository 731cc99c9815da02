// A step's cost without its accelerator ports' uses (apart from cost_model.h,
// which most of the tree includes).
#pragma once

#include "fabric/config.h"
#include "model/cost_model.h"
#include "schedule/schedule.h"

namespace scin {

/// step_cost(cfg, s, rm, st, out) without the uses of the accelerator ports
/// (ResourceKind Egress and Ingress) that a star's or a mesh's transfers make:
/// the fixed cost, the latencies and every other use are the same, bit for bit,
/// and in the same order. For an engine that models the ports itself (the
/// packet engine, for a step that crosses the fabric): an NVLS ld_reduce of N
/// sources makes N x planes port uses, built only to be dropped. Two-tier
/// fabrics' routed costs are unchanged (they keep their port uses).
void step_cost_without_ports(const Config& cfg, const Schedule& s, const ResourceMap& rm, const Step& st,
                             StepCost& out);

}  // namespace scin
