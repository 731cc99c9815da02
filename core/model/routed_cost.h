// Step costs on a routed (two-tier) fabric: every link along a transfer's route
// is a resource use, so the engines stay generic schedulers. Used by
// step_cost() (cost_model.cc) when the schedule's topology is two-tier; star
// and mesh keep their one-hop costs there, unchanged.
//
// Routes come from the schedule (Schedule::route: up to the first common
// switch, down from it, deterministic ECMP over spines). A multicast crosses
// each link of its tree once; the sources of a reducing read each cross their
// route up to the reducing switch, and the sum crosses the route to the
// reader. Equations: docs/model.md, "Two-tier fabrics".
#pragma once

#include "model/cost_model.h"

namespace scin::routed {

/// Link and switch latency of one traversal from `a` to `b` in `plane`:
/// links x links.latency_ns and the switches in between x switch.latency_ns.
struct PathLatency {
  double link_ns = 0, switch_ns = 0;
  double total() const { return link_ns + switch_ns; }
};
PathLatency path_latency(const Config& cfg, const Schedule& s, NodeId a, NodeId b, int plane);

/// The resource of the directed link a -> b (adjacent nodes of `plane`).
int link_resource(const Schedule& s, const ResourceMap& rm, NodeId a, NodeId b, int plane);

/// Raw rate of one leaf <-> spine bundle in one direction: the leaf's
/// accelerator bandwidth in this plane / oversubscription / spines.
double trunk_raw_GBps(const Config& cfg, const Schedule& s);

/// Payload rate of resource `r` (a port or a trunk) for rate factor `factor`.
double link_payload_GBps(const Config& cfg, const Schedule& s, const ResourceMap& rm, int r, double factor);

void signal_cost(const Config& cfg, const Schedule& s, const Step& st, StepCost& c);
/// `first_plane_only` as step_cost's (cost_model.h): of a transfer over all planes, plane 0's links alone.
/// `port_classes` as step_cost's on two tiers: a multicast to whole leaves of
/// accelerators (in order) uses each leaf's ingress class once, as the port of
/// the leaf's first accelerator. Returns false where the step names
/// accelerators otherwise (`c` is then incomplete); always true without it.
bool write_cost(const Config& cfg, const Schedule& s, const ResourceMap& rm, const Step& st, double bytes,
                double factor, bool first_plane_only, StepCost& c, bool port_classes = false);
/// A read issued by a switch's ISA: latency and the source links (units are
/// booked by the caller). `port_classes`: a leaf's read of the same bytes from
/// each of its own accelerators (in order) uses the leaf's egress class once,
/// as its first accelerator's port; false for any other read of accelerators.
bool isa_read_cost(const Config& cfg, const Schedule& s, const ResourceMap& rm, const Step& st, double factor,
                   StepCost& c, bool port_classes = false);
/// A read issued by an accelerator (NVLS ld_reduce when several sources are reduced in a switch).
void accel_read_cost(const Config& cfg, const Schedule& s, const ResourceMap& rm, const Step& st, double factor,
                     bool first_plane_only, StepCost& c);

}  // namespace scin::routed
