// SCIN on two tiers by planes alike (scin_tiers.h).
#include "engines/analytic/scin_tiers.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include "base/error.h"
#include "engines/analytic/scin_inq_planes.h"
#include "schedule/builder.h"
#include "schedule/compile_options.h"

namespace scin {

namespace {

// build_scin_tiers' steps: which planes stand for the rest (the first of
// each stripe size), each plane's step count; with INQ the ranks' quantise
// steps first (a launch and every plane's waves per rank; in the reduced
// schedule rank 0's alone) and a wait and a dequantise per rank last.
// Nothing where run_analytic_scin_tiers does not answer.
struct PlaneLayout {
  std::vector<char> built;         // per plane: compiled (the first of its size)
  std::vector<double> weight;      // per plane: how many planes it stands for (0: not built)
  std::vector<std::size_t> steps;  // per plane: its steps
  std::vector<std::size_t> booked_steps;  // per plane: its steps in the reduced schedule (INQ: one leaf's)
  std::vector<std::size_t> waves;  // per plane: its waves
  std::vector<std::size_t> stands_on;  // per plane: the built plane of its stripe size
  std::size_t per_rank = 0;        // INQ: a rank's launch and quantise steps (else 0)
  std::size_t total = 0, booked = 0;  // the full schedule's steps; the reduced one's
  std::size_t total_regions = 0, booked_regions = 0;  // their sources and destinations (for estimates)
};

std::optional<PlaneLayout> plane_layout(const Config& cfg, const Collective& coll, Algorithm algo) {
  if (algo != Algorithm::Scin && algo != Algorithm::ScinInq && algo != Algorithm::ScinInqUplink) return std::nullopt;
  const bool inq = algo == Algorithm::ScinInq, uplink = algo == Algorithm::ScinInqUplink;
  if (cfg.fabric.topology != Topology::TwoTier || !cfg.fabric.graph_file.empty()) return std::nullopt;
  if (!unsupported_reason(cfg, algo).empty()) return std::nullopt;
  // (INQ: every rank's quantise steps alike, standing on its leaf's first rank's, need every launch at once.)
  if (inq && launches_serialised(cfg)) return std::nullopt;
  const int planes = cfg.fabric.planes, n = cfg.fabric.gpus, leaves = cfg.fabric.leaves;
  if (planes < 2 || n < 2 || leaves < 1 || n % leaves != 0) return std::nullopt;
  const std::uint64_t align = inq || uplink ? static_cast<std::uint64_t>(cfg.quant.block_elems) : 1;
  const std::vector<build::Span> stripes = build::split(element_count(coll.bytes, coll.dtype), planes, align);
  PlaneLayout L;
  L.built.assign(static_cast<std::size_t>(planes), 0);
  L.weight.assign(static_cast<std::size_t>(planes), 0.0);
  std::vector<std::size_t> firsts;
  const auto un = static_cast<std::size_t>(n), ul = static_cast<std::size_t>(leaves);
  // A wave's regions: each leaf's read (m sources, a destination; INQ: its
  // quantise, one each), the spine's read (a source per leaf, a destination;
  // INQ: its requantise) and multicast (a source, n destinations). Arrives,
  // counters, signals, acks and flags name none. Uplink: each leaf's read (m
  // sources, a destination) and quantise, the spine's read (a source per
  // leaf), requantise and multicast to the leaves (a source, a destination
  // per leaf), each leaf's dequantise and multicast (a source, m destinations).
  const std::size_t wave_regions =
      uplink ? 2 * un + 8 * ul + 4 : 2 * un + 2 * ul + 2 + (inq ? 2 * ul + 2 : 0);
  // The first leaf's per-leaf steps alone are booked (CompileOptions::leaves_once): its read (m
  // + 1; INQ, uplink: its quantise, 2), the spine's read (a source per leaf, a destination;
  // INQ, uplink: its requantise) and multicast (INQ, SCIN: a source, n destinations; uplink: a
  // destination per leaf), uplink: the leaf's dequantise and multicast (a source, m destinations).
  const std::size_t m = un / ul;
  const std::size_t booked_wave_regions = uplink ? 2 * m + 2 * ul + 10 : un + m + ul + (inq ? 7 : 3);
  for (std::size_t p = 0; p < stripes.size(); ++p) {
    // (INQ: a plane's start depends on where its quantise chains queue on
    // each rank's HBM, behind the earlier planes': no two planes start alike,
    // but those of a size have the same steps, booked one at a time:
    // scin_inq_planes.h.)
    std::size_t first = p;
    for (std::size_t f : firsts)
      if (stripes[f].count == stripes[p].count) first = f;
    if (first == p) {
      firsts.push_back(p);
      L.built[p] = 1;
    }
    L.weight[first] += 1;
    L.stands_on.push_back(first);
    const auto w = static_cast<std::size_t>(build::scin_chunks(cfg, stripes[p].count));
    L.waves.push_back(w);
    L.steps.push_back(build::scin_tiers_plane_steps(un, ul, w, inq || uplink, uplink));
    L.booked_steps.push_back(build::scin_tiers_plane_steps(m, 1, w, inq || uplink, uplink));
    if (inq) L.per_rank += w;
    L.total += L.steps.back();
    L.total_regions += w * wave_regions;
    if (first == p) {
      L.booked += L.booked_steps.back();
      L.booked_regions += w * booked_wave_regions;
    }
  }
  // (No two planes alike and one leaf, SCIN and uplink: nothing to save.)
  if (firsts.size() == stripes.size() && !inq && ul == 1) return std::nullopt;
  if (inq) {
    L.per_rank += 1;  // its launch
    L.total += un * L.per_rank + un;  // and each rank's dequantise
    L.booked += L.per_rank + un;  // (rank 0's run alone: CompileOptions::quantise_once)
    // (A quantise step and a dequantise name a source and a destination each.)
    L.total_regions += 2 * (un * (L.per_rank - 1) + un);
    L.booked_regions += 2 * (L.per_rank - 1 + un);
  }
  L.total += un;  // each rank's final wait
  L.booked += un;
  return L;
}

}  // namespace

std::size_t scin_tiers_steps(const Config& cfg, const Collective& c, Algorithm algo, std::size_t* total,
                             ScinTiersRegions* regions) {
  try {
    const std::optional<PlaneLayout> L = plane_layout(cfg, c, algo);
    if (!L) return 0;
    if (total) *total = L->total;
    if (regions) *regions = {L->total_regions, L->booked_regions};
    return L->booked;
  } catch (const Error&) {
    return 0;  // (a bad size: the compiled path reports it)
  }
}

// link_bytes(s, weight).max_link_bytes() of build_scin_tiers' reduced schedule
// in O(steps), not O(regions) (2.1 M at 1024 GPUs, 1 GiB: a pass over 51 MB
// was 8-14% of the point): each accelerator's egress takes every wave's ISA
// read of its leaf (the same bytes from every source, its first named) and its
// ingress every wave's multicast that reaches it (from the spine to every
// accelerator, or uplink from its leaf to the leaf's), the same for every
// accelerator, so the first one each step names stands for all. Sums of whole
// bytes times whole weights below 2^53, exact in any order. Nothing where a
// step is of another shape (the caller counts every region then).
// (test_scin_alike.cc's expect_scin_tiers_exact compares max_link_bytes with
// the full schedule's.)
std::optional<double> scin_tiers_max_link_bytes(const Schedule& s, const std::vector<double>& weight) {
  LinkBytes lb;
  lb.egress_bytes.assign(static_cast<std::size_t>(s.gpus), 0.0);
  lb.ingress_bytes.assign(static_cast<std::size_t>(s.gpus), 0.0);
  auto node = [&](const Region& r) { return s.buffers[r.buffer].node; };
  for (const Step& st : s.steps) {
    if (st.via == kNoNode || (st.kind != StepKind::Read && st.kind != StepKind::Write)) continue;
    if (!s.is_switch(st.initiator) || st.srcs.empty() || st.dsts.empty()) return std::nullopt;
    const double w = weight[static_cast<std::size_t>(s.plane_of(st.initiator))];
    if (st.kind == StepKind::Read) {
      if (!s.is_switch(node(st.dsts[0]))) return std::nullopt;  // (a read to an accelerator)
      const Region& r = st.srcs.front();
      const NodeId from = node(r);
      if (s.is_switch(from)) continue;  // (a spine's read of its leaves)
      if (st.srcs.size() != static_cast<std::size_t>(s.gpus_per_leaf()) || st.srcs.back().count != r.count)
        return std::nullopt;
      lb.egress_bytes[static_cast<std::size_t>(from)] += w * static_cast<double>(region_bytes(s, r));
    } else {
      const NodeId to = node(st.dsts.front());
      if (s.is_switch(to)) continue;  // (uplink: the spine's multicast to the leaves)
      if (st.dsts.size() != static_cast<std::size_t>(s.gpus) && st.dsts.size() != static_cast<std::size_t>(s.gpus_per_leaf()))
        return std::nullopt;
      lb.ingress_bytes[static_cast<std::size_t>(to)] += w * static_cast<double>(region_bytes(s, st.srcs[0]));
    }
  }
  return lb.max_link_bytes();
}

namespace {
double max_link_bytes(const Schedule& s, const std::vector<double>& weight) {
  const std::optional<double> m = scin_tiers_max_link_bytes(s, weight);
  return m ? *m : link_bytes(s, weight).max_link_bytes();
}

// The planes of L->built, INQ's quantise steps on each leaf's first rank.
Schedule compile_reduced(const Config& cfg, const Collective& coll, Algorithm algo, const PlaneLayout& L,
                         const RunContext& ctx, bool check) {
  CompileOptions opt;
  opt.check = check;
  opt.labels = false;
  opt.planes = &L.built;
  opt.quantise_once = algo == Algorithm::ScinInq;
  opt.leaves_once = true;
  Schedule s = compile(cfg, algo, coll, ctx, opt);
  if (s.steps.size() != L.booked) throw Error("run_analytic_scin_tiers: the planes' step counts disagree with the builder");
  return s;
}
}  // namespace

std::optional<Schedule> compile_scin_tiers(const Config& cfg, const Collective& coll, Algorithm algo) {
  const std::optional<PlaneLayout> L = plane_layout(cfg, coll, algo);
  if (!L) return std::nullopt;
  return compile_reduced(cfg, coll, algo, *L, {}, true);
}

std::optional<AnalyticResult> run_analytic_scin_tiers(const Config& cfg, const Collective& coll, Algorithm algo,
                                                      const RunContext& ctx) {
  const std::optional<PlaneLayout> L = plane_layout(cfg, coll, algo);
  if (!L) return std::nullopt;
  // (Booked at once, not checked again: compile_scin_tiers' schedules are, in the tests.)
  const Schedule s = compile_reduced(cfg, coll, algo, *L, ctx, false);
  if (algo == Algorithm::ScinInq) {
    const auto n = static_cast<std::size_t>(cfg.fabric.gpus);
    // Its planes booked one at a time (scin_inq_planes.h): where built blocks sit.
    analytic::InqPlanes Q;
    Q.ranks = n;
    Q.per_rank = L->per_rank;
    Q.waves = L->waves;
    Q.stands_on = L->stands_on;
    Q.steps = L->booked_steps;
    Q.full_steps = L->steps;
    Q.leaves = static_cast<std::size_t>(cfg.fabric.leaves);
    Q.per_leaf = n / Q.leaves;
    std::size_t wave = 0, at = L->per_rank;  // (after rank 0's run)
    for (std::size_t p = 0; p < L->steps.size(); ++p) {
      Q.plane_start.push_back(wave);
      wave += L->waves[p];
      Q.block.push_back(L->built[p] ? at : Q.block[L->stands_on[p]]);
      if (L->built[p]) at += L->booked_steps[p];
    }
    Q.finals = at;
    std::optional<AnalyticResult> res = analytic::book_inq_planes(cfg, s, Q, ctx);
    if (res) res->max_link_bytes = max_link_bytes(s, L->weight);
    return res;
  }
  AnalyticResult res = run_analytic_without_link_bytes(cfg, s, ctx);  // (its links weighted below)
  res.steps.clear();
  // The path's indices in the full schedule: a built plane's block at its
  // plane's, the final steps after every plane.
  // (A plane's steps are its first leaf's, moved to the full plane's: the
  // acks, wait and flags to those of the leaf whose rank's wait ends the path.)
  std::vector<std::size_t> full_first, reduced_first, plane_of;  // per built plane, in order
  std::size_t full = 0, reduced = 0;
  for (std::size_t p = 0; p < L->steps.size(); ++p) {
    if (L->built[p]) {
      full_first.push_back(full);
      reduced_first.push_back(reduced);
      plane_of.push_back(p);
      reduced += L->booked_steps[p];
    }
    full += L->steps[p];
  }
  const auto n = static_cast<std::size_t>(cfg.fabric.gpus), ul = static_cast<std::size_t>(cfg.fabric.leaves);
  std::size_t tail_leaf = 0;
  for (StepId id : res.critical_path)
    if (id >= reduced && !s.is_switch(s.steps[id].initiator)) tail_leaf = static_cast<std::size_t>(s.steps[id].initiator) / (n / ul);
  for (StepId& id : res.critical_path) {
    const std::size_t i = id;
    std::size_t to = 0;
    if (i >= reduced) {  // a final wait
      to = full + (i - reduced);
    } else {  // in the last built plane that starts at or before it
      const std::size_t k = static_cast<std::size_t>(std::upper_bound(reduced_first.begin(), reduced_first.end(), i) -
                                                     reduced_first.begin()) - 1;
      to = full_first[k] + build::scin_tiers_full_step(i - reduced_first[k], n / ul, ul, L->waves[plane_of[k]],
                                                       algo == Algorithm::ScinInqUplink, algo == Algorithm::ScinInqUplink, tail_leaf);
    }
    id = static_cast<StepId>(to);
  }
  res.max_link_bytes = max_link_bytes(s, L->weight);
  return res;
}

}  // namespace scin
