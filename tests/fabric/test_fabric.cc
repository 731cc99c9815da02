// Fabrics beyond one star (issue 16): the fabric graph and its checks,
// two-tier routing, hierarchical algorithms (every rank holds the sum on the
// data engine), bytes per link against closed forms, and what must not move.
#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "base/cancel.h"
#include "engines/analytic/analytic.h"
#include "engines/analytic/nvls_alike.h"
#include "engines/analytic/nvls_groups.h"
#include "engines/analytic/nvls_tiers.h"
#include "engines/analytic/nvls_work.h"
#include "engines/analytic/ring_alike.h"
#include "engines/data/data_engine.h"
#include "engines/simulate.h"
#include "error_of.h"
#include "shortcut_tests.h"
#include "fabric/graph.h"
#include "fabric/params.h"
#include "fabric/preset.h"
#include "model/cost_model.h"
#include "model/routed_cost.h"
#include "schedule/algorithms.h"

using namespace scin;
using nlohmann::json;

namespace {

// A small two-tier fabric: `planes` planes of `leaves` leaves (gpus / leaves each) and `spines` spines.
Config two_tier(int gpus, int leaves, int spines, int planes = 1) {
  Config c;
  c.name = "two-tier-test";
  c.fabric.topology = Topology::TwoTier;
  c.fabric.gpus = gpus;
  c.fabric.planes = planes;
  c.fabric.leaves = leaves;
  c.fabric.spines = spines;
  c.sw.isa.enabled = true;
  c.sw.isa.inq = true;
  c.ring.protocol = RingProtocol::Simple;
  return c;
}

// Bytes each resource carries over a whole schedule, from the shared cost model.
std::vector<double> resource_bytes(const Config& cfg, const Schedule& s, const ResourceMap& rm) {
  std::vector<double> b(static_cast<std::size_t>(rm.count()), 0.0);
  for (const Step& st : s.steps)
    for (const ResourceUse& u : step_cost(cfg, s, rm, st).uses) b[static_cast<std::size_t>(u.resource)] += u.amount_bytes;
  return b;
}

struct TierBytes {
  std::vector<double> egress, ingress, up, down;  // per accelerator; per leaf (summed over planes and spines)
};
TierBytes tier_bytes(const Config& cfg, const Schedule& s) {
  const ResourceMap rm = resource_map(s);
  const auto b = resource_bytes(cfg, s, rm);
  TierBytes t;
  t.egress.assign(s.gpus, 0);
  t.ingress.assign(s.gpus, 0);
  t.up.assign(s.leaves, 0);
  t.down.assign(s.leaves, 0);
  for (int p = 0; p < rm.planes; ++p) {
    for (int g = 0; g < s.gpus; ++g) {
      t.egress[g] += b[rm.egress(g, p)];
      t.ingress[g] += b[rm.ingress(g, p)];
    }
    for (int l = 0; l < s.leaves; ++l)
      for (int k = 0; k < s.spines; ++k) {
        t.up[l] += b[rm.uplink(p, l, k)];
        t.down[l] += b[rm.downlink(p, k, l)];
      }
  }
  return t;
}

// Small integers: every partial sum is exact in BF16 whatever the order.
std::vector<std::vector<float>> integer_inputs(int ranks, std::uint64_t elems) {
  std::vector<std::vector<float>> x(static_cast<std::size_t>(ranks), std::vector<float>(elems));
  for (int r = 0; r < ranks; ++r)
    for (std::uint64_t i = 0; i < elems; ++i)
      x[r][i] = static_cast<float>(static_cast<int>((i * 7 + static_cast<std::uint64_t>(r) * 13) % 9) - 4);
  return x;
}

}  // namespace

// ------------------------------------------------------------ the graph

TEST(FabricGraph, GeneratorsBuildTheFabricTheParametersDescribe) {
  const Config nvl72 = load_preset("gb200-nvl72");
  FabricGraph g = fabric_graph(nvl72);
  EXPECT_EQ(g.accelerators(), 72);
  EXPECT_EQ(g.switches(), 18);
  EXPECT_EQ(g.links.size(), 72u * 18u);
  EXPECT_EQ(g.tiers(), 2);
  EXPECT_DOUBLE_EQ(g.links[0].bandwidth_GBps, 900.0 / 18);
  const auto star_used = ports_used(g);
  EXPECT_EQ(*std::max_element(star_used.begin(), star_used.end()), 72);
  check_fabric(g);

  const Config nvl576 = load_preset("nvl576-style");
  g = fabric_graph(nvl576);
  EXPECT_EQ(g.accelerators(), 576);
  EXPECT_EQ(g.switches(), 18 * (16 + 9));
  EXPECT_EQ(g.tiers(), 3);
  // A leaf uses its 72 ports: 36 accelerators + 36 uplinks; a spine 16 leaves x 4 = 64.
  const auto used = ports_used(g);
  for (std::size_t i = 576; i < g.nodes.size(); ++i)
    EXPECT_EQ(used[i], g.nodes[i].tier == 1 ? 72 : 64) << g.nodes[i].name;
  // The trunk from a leaf to one spine carries the leaf's 36 accelerators' plane bandwidth / 9 spines.
  const FabricLink& trunk = g.links[576];
  EXPECT_EQ(g.nodes[trunk.a].name, "p0.leaf0");
  EXPECT_EQ(g.nodes[trunk.b].name, "p0.spine0");
  EXPECT_DOUBLE_EQ(trunk.bandwidth_GBps, 900.0 / 18 * 36 / 9);
  check_fabric(g);
}

TEST(FabricGraph, RadixViolationNamesTheSwitchAndThePortCount) {
  Config c = load_preset("gb200-nvl72");
  c.fabric.gpus = 144;
  EXPECT_EQ(error_of([&] { validate(c); }),
            "fabric: switch plane0 needs 144 ports (144 accelerators) but has 72 (switch.ports)");
  Config t = load_preset("nvl576-style");
  t.fabric.uplinks_per_leaf = 45;
  EXPECT_EQ(error_of([&] { validate(t); }),
            "fabric: leaf switch p0.leaf0 needs 81 ports (36 accelerators + 45 uplinks) but has 72 (switch.ports)");
  t = load_preset("nvl576-style");
  t.fabric.spines = 4;  // 16 leaves x 9 uplinks each on 4 spines
  EXPECT_EQ(error_of([&] { validate(t); }),
            "fabric: spine switch p0.spine0 needs 144 ports (16 leaves x 9 uplinks) but has 72 (switch.ports)");
  t = load_preset("nvl576-style");
  t.fabric.spines = 8;
  EXPECT_EQ(error_of([&] { validate(t); }), "fabric.uplinks_per_leaf: 36 uplinks do not spread evenly over 8 spines");
  t = load_preset("nvl576-style");
  t.fabric.leaves = 7;
  EXPECT_EQ(error_of([&] { validate(t); }), "fabric.leaves: 576 accelerators do not split evenly over 7 leaves");
}

namespace {
json small_graph() {
  return json::parse(R"({
    "nodes": [{"name": "a", "kind": "accelerator"}, {"name": "b", "kind": "accelerator"},
              {"name": "c", "kind": "accelerator"},
              {"name": "s0", "kind": "switch", "ports": 4}, {"name": "s1", "kind": "switch", "ports": 4},
              {"name": "t0", "kind": "switch", "tier": 2, "ports": 4}, {"name": "t1", "kind": "switch", "tier": 2, "ports": 4}],
    "links": [{"a": "a", "b": "s0", "bandwidth_GBps": 100}, {"a": "b", "b": "s0", "bandwidth_GBps": 100},
              {"a": "c", "b": "s1", "bandwidth_GBps": 100},
              {"a": "s0", "b": "t0", "bandwidth_GBps": 100}, {"a": "s0", "b": "t1", "bandwidth_GBps": 100},
              {"a": "s1", "b": "t0", "bandwidth_GBps": 100}, {"a": "s1", "b": "t1", "bandwidth_GBps": 100}]})");
}
}  // namespace

TEST(FabricGraph, ShortestPathsWithDeterministicEcmp) {
  const FabricGraph g = fabric_graph_from_json(small_graph(), "small");
  check_fabric(g);
  FabricRouter r(g);
  EXPECT_EQ(r.route(0, 1), (std::vector<int>{0, 3, 1}));  // same leaf: one switch
  const auto p = r.route(0, 2);
  ASSERT_EQ(p.size(), 5u);  // a, s0, t?, s1, c
  EXPECT_TRUE(p[2] == 5 || p[2] == 6);
  EXPECT_EQ(r.route(0, 2), p);  // the same every time
  // Flows spread over both spines.
  std::map<int, int> spines;
  for (int src : {0, 1})
    for (int dst : {2}) spines[r.route(src, dst)[2]]++, spines[r.route(dst, src)[2]]++;
  FabricRouter r2(g);
  EXPECT_EQ(r2.route(2, 0), r.route(2, 0));
}

TEST(FabricGraph, DisconnectedLoopAndRadixErrorsAreOneLine) {
  json j = small_graph();
  j["links"].erase(2);  // c loses its only link
  EXPECT_EQ(error_of([&] { check_fabric(fabric_graph_from_json(j, "g.json")); }),
            "g.json: c cannot reach a (the fabric is disconnected)");
  j = small_graph();
  j["routes"] = json::parse(R"([{"at": "s0", "dst": "c", "next": "t0"}, {"at": "t0", "dst": "c", "next": "s0"}])");
  EXPECT_EQ(error_of([&] { check_fabric(fabric_graph_from_json(j, "g.json")); }),
            "g.json: routing loop from a to c: s0 -> t0 -> s0");
  j = small_graph();
  j["nodes"][3]["ports"] = 3;
  EXPECT_EQ(error_of([&] { check_fabric(fabric_graph_from_json(j, "g.json")); }),
            "g.json: switch s0 needs 4 ports but has 3");
  j = small_graph();
  j["links"][0]["b"] = "nowhere";
  EXPECT_EQ(error_of([&] { fabric_graph_from_json(j, "g.json"); }), "g.json: links[0].b: no node named 'nowhere'");
}

namespace {
// One switch `s` with `n` accelerators r0..r(n-1), and explicit entries at
// `s` leading to the first `routed` of them.
json star_graph(int n, int routed) {
  json j = {{"nodes", json::array()}, {"links", json::array()}, {"routes", json::array()}};
  for (int i = 0; i < n; ++i) {
    j["nodes"].push_back({{"name", fmt::format("r{}", i)}, {"kind", "accelerator"}});
    j["links"].push_back({{"a", fmt::format("r{}", i)}, {"b", "s"}, {"bandwidth_GBps", 100}});
  }
  j["nodes"].push_back({{"name", "s"}, {"kind", "switch"}, {"ports", n}});
  for (int i = 0; i < routed; ++i) j["routes"].push_back({{"at", "s"}, {"dst", fmt::format("r{}", i)}, {"next", fmt::format("r{}", i)}});
  return j;
}
}  // namespace

TEST(FabricGraph, ExplicitRoutesAreWalkedToTheirDestinationsOnlyAndBounded) {
  // 2000 accelerators, entries for 1000 of them: 1000 x 1999 walks (every
  // pair, 4 M walks with a scan of the switch's 1000 entries per hop, took
  // minutes before); each walk ends at its accelerator.
  EXPECT_NO_THROW(check_fabric(fabric_graph_from_json(star_graph(2000, 1000), "big.json")));
  // Entries for 2001 destinations of 2001 accelerators: 2001 x 2000 walks, above the limit: refused, naming it.
  EXPECT_EQ(error_of([&] { check_fabric(fabric_graph_from_json(star_graph(2001, 2001), "big.json")); }),
            fmt::format("big.json: routes: entries lead to 2001 accelerators of 2001: 4002000 paths to check, above the "
                        "limit of {}; give explicit entries for fewer destinations", kMaxRouteWalks));
  // Of two entries for one destination at one node the later counts, as before.
  json j = small_graph();
  j["routes"] = json::parse(R"([{"at": "s0", "dst": "c", "next": "t1"}, {"at": "s0", "dst": "c", "next": "t0"}])");
  const FabricGraph g = fabric_graph_from_json(j, "g.json");
  EXPECT_EQ(FabricRouter(g).route(0, 2), (std::vector<int>{0, 3, 5, 4, 2}));
  j["routes"] = json::parse(R"([{"at": "s0", "dst": "c", "next": "t0"}, {"at": "s0", "dst": "c", "next": "t1"}])");
  EXPECT_EQ(FabricRouter(fabric_graph_from_json(j, "g.json")).route(0, 2), (std::vector<int>{0, 3, 6, 4, 2}));
}

TEST(FabricGraph, ALoopAfterALongPathIsNamed) {
  // a - s0 - s1 - ... - s39 - c; at s39 traffic for c goes back to s38: the
  // loop closes 41 hops from a (past the walk's short-path search).
  json j = {{"nodes", json::array()}, {"links", json::array()}};
  j["nodes"].push_back({{"name", "a"}, {"kind", "accelerator"}});
  j["nodes"].push_back({{"name", "c"}, {"kind", "accelerator"}});
  for (int i = 0; i < 40; ++i) j["nodes"].push_back({{"name", fmt::format("s{}", i)}, {"kind", "switch"}, {"ports", 2}});
  j["links"].push_back({{"a", "a"}, {"b", "s0"}, {"bandwidth_GBps", 100}});
  for (int i = 0; i + 1 < 40; ++i)
    j["links"].push_back({{"a", fmt::format("s{}", i)}, {"b", fmt::format("s{}", i + 1)}, {"bandwidth_GBps", 100}});
  j["links"].push_back({{"a", "s39"}, {"b", "c"}, {"bandwidth_GBps", 100}});
  EXPECT_NO_THROW(check_fabric(fabric_graph_from_json(j, "chain.json")));
  EXPECT_EQ(FabricRouter(fabric_graph_from_json(j, "chain.json")).route(0, 1).size(), 42u);
  j["routes"] = json::parse(R"([{"at": "s39", "dst": "c", "next": "s38"}])");
  EXPECT_EQ(error_of([&] { check_fabric(fabric_graph_from_json(j, "chain.json")); }),
            "chain.json: routing loop from a to c: s38 -> s39 -> s38");
}

TEST(FabricGraph, PortCountsBeyondTwoBillionAreCountedNotWrapped) {
  // 22000 bundles of 100000 ports between one accelerator and one switch: 2.2e9 ports (an int wrapped negative).
  json j = {{"nodes", json::array({{{"name", "a"}, {"kind", "accelerator"}},
                                   {{"name", "b"}, {"kind", "accelerator"}},
                                   {{"name", "s"}, {"kind", "switch"}, {"ports", 100000}}})},
            {"links", json::array()}};
  for (int i = 0; i < 22000; ++i) j["links"].push_back({{"a", "a"}, {"b", "s"}, {"bandwidth_GBps", 1}, {"ports", 100000}});
  j["links"].push_back({{"a", "b"}, {"b", "s"}, {"bandwidth_GBps", 1}});
  EXPECT_EQ(error_of([&] { check_fabric(fabric_graph_from_json(j, "wide.json")); }),
            "wide.json: switch s needs 2200000001 ports but has 100000");
}

TEST(FabricGraph, AGraphFileIsCheckedByValidateAndNotSimulated) {
  Config c = load_preset("hgx-h200-8");
  c.fabric.graph_file = std::string(SCIN_FABRIC_TEST_DIR) + "/../bad_inputs/files/fabric-loop.json";
  EXPECT_NE(error_of([&] { validate(c); }).find("routing loop from r0 to r2"), std::string::npos);
  c.fabric.graph_file = std::string(SCIN_FABRIC_TEST_DIR) + "/../bad_inputs/files/fabric-ok.json";
  validate(c);
  EXPECT_NE(error_of([&] { compile(c, Algorithm::Ring, {1024, DType::Bf16}); }).find("fabric.graph_file"),
            std::string::npos);
}

// ------------------------------------------------------------ routing in the schedule

TEST(TwoTierRouting, RoutesClimbToTheFirstCommonSwitch) {
  Config c = two_tier(8, 2, 2, 2);
  Schedule s = compile(c, Algorithm::Ring, {1024, DType::Bf16});
  EXPECT_EQ(s.switch_count(), 8);
  NodeId path[5];
  ASSERT_EQ(s.route(0, 3, 1, path), 3);  // same leaf
  EXPECT_EQ(path[1], s.leaf_node(1, 0));
  ASSERT_EQ(s.route(0, 5, 1, path), 5);  // across the spines
  EXPECT_EQ(path[1], s.leaf_node(1, 0));
  EXPECT_EQ(s.tier(path[2]), 2);
  EXPECT_EQ(s.plane_of(path[2]), 1);
  EXPECT_EQ(path[3], s.leaf_node(1, 1));
  ASSERT_EQ(s.route(s.spine_node(0, 1), 6, 0, path), 3);  // spine, leaf, accelerator
  EXPECT_EQ(path[1], s.leaf_node(0, 1));
  ASSERT_EQ(s.route(s.leaf_node(0, 0), s.leaf_node(0, 1), 0, path), 3);
  EXPECT_EQ(s.tier(path[1]), 2);
}

TEST(TwoTierRouting, OneLeafBehavesExactlyAsAStar) {
  // With one leaf every route is accelerator - leaf - accelerator: the ring costs what it costs on a star.
  for (int planes : {1, 4}) {
    Config star = two_tier(8, 1, 1, planes);
    star.fabric.topology = Topology::Star;
    Config tt = two_tier(8, 1, 1, planes);
    for (std::uint64_t bytes : {std::uint64_t{8}, std::uint64_t{1} << 20, std::uint64_t{64} << 20}) {
      const double a = simulate(star, Algorithm::Ring, {bytes, DType::Bf16}, EngineId::Analytic).time_ns;
      const double b = simulate(tt, Algorithm::Ring, {bytes, DType::Bf16}, EngineId::Analytic).time_ns;
      EXPECT_NEAR(b, a, 1e-9 * a) << bytes << " B, " << planes << " planes";
    }
  }
}

// ------------------------------------------------------------ every rank holds the sum

class Hierarchical : public ::testing::TestWithParam<std::string> {};

TEST_P(Hierarchical, EveryRankHoldsTheSumOnTheDataEngine) {
  const Config c = two_tier(12, 3, 2, 2);
  const std::uint64_t elems = 3 * 1024;
  const Schedule s = schedule_for(c, parse_algorithm(GetParam()), {elems * 2, DType::Bf16});
  const auto x = integer_inputs(c.fabric.gpus, elems);
  const DataResult r = run_data(s, x, {true});
  const bool quantised = info(parse_algorithm(GetParam())).quantised;
  double worst = 0;
  for (int rank = 0; rank < c.fabric.gpus; ++rank)
    for (std::uint64_t i = 0; i < elems; ++i) {
      double sum = 0;
      for (int j = 0; j < c.fabric.gpus; ++j) sum += x[j][i];
      const double got = r.outputs[rank][i];
      ASSERT_FALSE(std::isnan(got)) << "rank " << rank << " element " << i << " never written";
      if (!quantised) {
        ASSERT_EQ(got, sum) << "rank " << rank << " element " << i;
      }
      worst = std::max(worst, std::abs(got - sum));
    }
  // INT8 with one scale per 32 values: at most a few quantisation steps of max |partial| / 127.
  if (quantised) {
    EXPECT_LT(worst, 3 * 48.0 / 127 + 0.5);
  }
}

INSTANTIATE_TEST_SUITE_P(TwoTier, Hierarchical,
                         ::testing::Values("ring", "one-shot", "two-shot", "nvls", "scin", "scin-inq", "scin-inq-uplink"),
                         [](const auto& info) {
                           std::string n = info.param;
                           std::replace(n.begin(), n.end(), '-', '_');
                           return n;
                         });

// ------------------------------------------------------------ bytes per link: closed forms

TEST(TwoTierBytes, MatchClosedForms) {
  const int N = 16, L = 4, m = N / L;
  const Config c = two_tier(N, L, 2, 2);
  const double S = 1 << 20;  // bytes per rank
  const Collective coll{static_cast<std::uint64_t>(S), DType::Bf16};

  // Ring: 2(N-1)/N S through every accelerator link; one ring edge leaves each leaf.
  TierBytes t = tier_bytes(c, schedule_for(c, Algorithm::Ring, coll));
  for (int g = 0; g < N; ++g) {
    EXPECT_NEAR(t.egress[g], 2.0 * (N - 1) / N * S, 1e-6 * S);
    EXPECT_NEAR(t.ingress[g], 2.0 * (N - 1) / N * S, 1e-6 * S);
  }
  for (int l = 0; l < L; ++l) {
    EXPECT_NEAR(t.up[l], 2.0 * (N - 1) / N * S, 1e-6 * S);
    EXPECT_NEAR(t.down[l], 2.0 * (N - 1) / N * S, 1e-6 * S);
  }

  // Hierarchical SCIN: S out of and into every accelerator; one partial sum up and one result down per leaf.
  t = tier_bytes(c, schedule_for(c, Algorithm::Scin, coll));
  for (int g = 0; g < N; ++g) {
    EXPECT_NEAR(t.egress[g], S, 1e-6 * S);
    EXPECT_NEAR(t.ingress[g], S, 1e-6 * S);
  }
  for (int l = 0; l < L; ++l) {
    EXPECT_NEAR(t.up[l], S, 1e-6 * S);
    EXPECT_NEAR(t.down[l], S, 1e-6 * S);
  }

  // NVLS across two tiers: egress S (leaf ld_reduce) + S/m (spine ld_reduce) + S/(mL) (multimem.st);
  // ingress S/m + S/(mL) + the multicast minus its own part; per leaf up S + S/L, down S.
  t = tier_bytes(c, schedule_for(c, Algorithm::Nvls, coll));
  for (int g = 0; g < N; ++g) {
    EXPECT_NEAR(t.egress[g], S + S / m + S / (m * L), 1e-6 * S);
    EXPECT_NEAR(t.ingress[g], S + S / m, 1e-6 * S);
  }
  for (int l = 0; l < L; ++l) {
    EXPECT_NEAR(t.up[l], S + S / L, 1e-6 * S);
    EXPECT_NEAR(t.down[l], S, 1e-6 * S);
  }

  // INQ on the leaf-spine hop only: the accelerator links carry S, the trunks r S (r = payload ratio).
  const double ratio = payload_ratio(c.quant);
  t = tier_bytes(c, schedule_for(c, Algorithm::ScinInqUplink, coll));
  for (int g = 0; g < N; ++g) EXPECT_NEAR(t.egress[g], S, 1e-6 * S);
  for (int l = 0; l < L; ++l) {
    EXPECT_NEAR(t.up[l], ratio * S, 1e-3 * S);
    EXPECT_NEAR(t.down[l], ratio * S, 1e-3 * S);
  }
}

TEST(TwoTierBytes, OversubscribedUplinksSlowTheRingNotTheStar) {
  Config c = two_tier(16, 4, 2, 1);
  const Collective big{64 << 20, DType::Bf16};
  const double full = simulate(c, Algorithm::Ring, big, EngineId::Analytic).time_ns;
  c.fabric.oversubscription = 8;  // a leaf's uplinks: 4 x 450 / 8 = 225 GB/s, below one accelerator's 450
  const double over = simulate(c, Algorithm::Ring, big, EngineId::Analytic).time_ns;
  EXPECT_GT(over, 1.5 * full);
  // SCIN moves S up per leaf, the ring 2(N-1)/N S: oversubscription hurts the ring more.
  const double scin_full = simulate(two_tier(16, 4, 2, 1), Algorithm::Scin, big, EngineId::Analytic).time_ns;
  const double scin_over = simulate(c, Algorithm::Scin, big, EngineId::Analytic).time_ns;
  EXPECT_LT(scin_over / scin_full, over / full);
}

// ------------------------------------------------------------ planes alike (issue 14)

namespace {
// The plane a resource of a two-tier map belongs to (-1: an accelerator's HBM).
int plane_of_resource(const ResourceMap& rm, int r) {
  if (r < rm.ports()) return r % rm.planes;
  const int per_plane = rm.leaves + rm.spines;
  switch (rm.kind(r)) {
    case ResourceKind::NvlsReduce: return (r - rm.nvls(0)) / per_plane;
    case ResourceKind::IsaReduce: return (r - rm.isa_reduce(0)) / per_plane;
    case ResourceKind::IsaInq: return (r - rm.isa_inq(0)) / per_plane;
    case ResourceKind::Hbm: return -1;
    default: return (r - rm.hbm(rm.gpus)) / 2 / (rm.leaves * rm.spines);
  }
}
}  // namespace

TEST(TwoTierPlanesAlike, PlaneZeroAloneIsThePlaneZeroSubsetOfTheFullCost) {
  const Config c = two_tier(16, 4, 2, 3);
  const Collective coll{1 << 20, DType::Bf16};
  EXPECT_FALSE(planes_alike(schedule_for(c, Algorithm::Scin, coll)));  // each plane reduces its own stripe
  for (Algorithm a : {Algorithm::Ring, Algorithm::Nvls}) {
    const Schedule s = schedule_for(c, a, coll);
    ASSERT_TRUE(planes_alike(s)) << s.algorithm;
    const ResourceMap rm = resource_map(s);
    std::size_t plane_uses = 0, hbm_uses = 0, kept_uses = 0;
    for (const Step& st : s.steps) {
      const StepCost full = step_cost(c, s, rm, st);
      StepCost one;
      step_cost(c, s, rm, st, one, true);
      std::vector<ResourceUse> expect;
      for (const ResourceUse& u : full.uses)
        if (plane_of_resource(rm, u.resource) <= 0) expect.push_back(u);
      ASSERT_EQ(one.uses.size(), expect.size()) << st.label;
      for (std::size_t k = 0; k < expect.size(); ++k) {
        EXPECT_EQ(one.uses[k].resource, expect[k].resource) << st.label;
        EXPECT_EQ(one.uses[k].amount_bytes, expect[k].amount_bytes) << st.label;
        EXPECT_EQ(one.uses[k].rate_GBps, expect[k].rate_GBps) << st.label;
      }
      EXPECT_EQ(one.fixed_ns, full.fixed_ns);
      EXPECT_EQ(one.latency_total_ns(), full.latency_total_ns());
      for (const ResourceUse& u : full.uses) ++(u.kind == ResourceKind::Hbm ? hbm_uses : plane_uses);
      kept_uses += one.uses.size();
    }
    EXPECT_GT(plane_uses, 0u);
    EXPECT_EQ(3 * (kept_uses - hbm_uses), plane_uses) << s.algorithm;  // a third of the plane uses
  }
}

TEST(TwoTierPlanesAlike, BookingPlaneZeroGivesTheTimesOfBookingEveryPlane) {
  const Config c = two_tier(16, 4, 2, 3);
  for (Algorithm a : {Algorithm::Ring, Algorithm::Nvls})
    for (std::uint64_t bytes : {std::uint64_t{4096}, std::uint64_t{1} << 24}) {
      const Schedule s = schedule_for(c, a, {bytes, DType::Bf16});
      ASSERT_TRUE(planes_alike(s));
      // The same schedule plus an empty transfer naming plane 1: no longer alike,
      // so every plane is booked; the empty step holds nothing and ends at 0.
      Schedule every = s;
      Step probe;
      probe.kind = StepKind::Write;
      probe.initiator = 0;
      probe.via = every.leaf_node(1, 0);
      probe.op = DataOp::Copy;
      probe.srcs = {Region{every.input[0], 0, 0}};
      probe.dsts = {Region{every.output[0], 0, 0}};
      probe.label = "probe";
      every.steps.push_back(probe);
      ASSERT_FALSE(planes_alike(every));
      const AnalyticResult one = run_analytic(c, s), all = run_analytic(c, every);
      EXPECT_EQ(one.time_ns, all.time_ns) << s.algorithm << " " << bytes;
      for (int t = 0; t < kTermCount; ++t) EXPECT_EQ(one.breakdown.ns[t], all.breakdown.ns[t]) << s.algorithm << " term " << t;
      EXPECT_EQ(one.critical_path, all.critical_path) << s.algorithm << " " << bytes;
    }
}

// ------------------------------------------------------------ ranks alike (the ring)

namespace {

// run_analytic_ring (ranks alike) against booking the compiled ring, for each
// protocol: the same time, breakdown terms, critical path, max_link_bytes and
// every step's start and finish, to the last bit.
void expect_ring_alike_exact(const Config& cfg, std::uint64_t bytes,
                             std::vector<RingProtocol> protocols = {RingProtocol::LL, RingProtocol::LL128,
                                                                    RingProtocol::Simple}) {
  const Collective coll{bytes, DType::Bf16};
  Config c = cfg;
  c.ring.protocol = protocols.front();
  Schedule s = compile(c, Algorithm::Ring, coll);
  for (RingProtocol p : protocols) {
    SCOPED_TRACE(fmt::format("{} GPUs, {} B, {}", cfg.fabric.gpus, bytes, to_string(p)));
    c.ring.protocol = p;
    set_ring_protocol(s, p);
    const std::optional<AnalyticResult> fast = run_analytic_ring(c, coll, {}, true);
    ASSERT_TRUE(fast.has_value());
    const AnalyticResult full = run_analytic(c, s);
    ASSERT_EQ(fast->steps.size(), full.steps.size());
    expect_same_booking(*fast, full, full.steps.size());
    EXPECT_GT(full.critical_path.size(), static_cast<std::size_t>(cfg.fabric.gpus));  // a diagonal through the ranks
  }
}

Config star(int gpus) {
  Config c = load_preset("hgx-h200-8");
  set_param(c, "fabric.gpus", gpus);
  set_param(c, "switch.ports", std::max(64, gpus));
  validate(c);
  return c;
}

}  // namespace

// 8 B leaves most chunks empty, 1 MiB + 2 B splits into two chunk sizes, 1 GiB is bandwidth-bound.
TEST(RanksAlike, RingOnAStarEqualsTheFullBooking) {
  for (int gpus : {8, 64})
    for (std::uint64_t bytes : {std::uint64_t{8}, (std::uint64_t{1} << 20) + 2, std::uint64_t{1} << 30})
      expect_ring_alike_exact(star(gpus), bytes);
  for (std::uint64_t bytes : {(std::uint64_t{1} << 20) + 2, std::uint64_t{1} << 30})
    expect_ring_alike_exact(star(256), bytes, {RingProtocol::Simple});
}

// Without per-step timings (simulate()'s call), where the ranks repeat with
// a period p < N (one chunk size; a star: p = 1; launches serialised per
// process of 4 GPUs: 4; two tiers: a leaf's ranks) the first p ranks' times
// stand for every rank's: the same time, terms, critical path and
// max_link_bytes as booking the compiled ring. Two chunk sizes on a star take
// every send's finish in closed form (`two`); elsewhere two chunk sizes whose
// pattern repeats every few chunks (N / gcd(N, elements)) take a period that
// is a multiple of it; two sizes in no shorter pattern, and launches
// serialised over all 16 GPUs (no period), take the recurrence over every
// rank (and agree too).
TEST(RanksAlike, SendsAlikeEqualTheFullBooking) {
  Config serial = star(16);
  set_param(serial, "accelerator.gpus_per_process", 4);
  set_param(serial, "accelerator.launch_serial_ns", 700);
  validate(serial);
  Config one_process = serial;
  set_param(one_process, "accelerator.gpus_per_process", 16);
  validate(one_process);
  struct Case {
    Config c;
    std::uint64_t bytes;
    bool alike, two = false;
  };
  const std::vector<Case> cases = {
      {star(8), std::uint64_t{1} << 30, true},          {star(64), std::uint64_t{1} << 20, true},
      {star(256), std::uint64_t{1} << 28, true},        {load_preset("hgx-b200-8"), 4096, true},
      {star(64), (std::uint64_t{1} << 20) + 2, false, true},  {star(64), 8, false, true},
      {serial, std::uint64_t{1} << 20, true},           {two_tier(16, 4, 2, 3), std::uint64_t{1} << 26, true},
      {load_preset("nvl36x2"), std::uint64_t{72} * 64 * 4096, true},  // (72 chunks of 4096 blocks)
      {load_preset("nvl36x2"), std::uint64_t{1} << 28, true},   // (two sizes, every 9th chunk: a period of a leaf)
      {load_preset("nvl36x2"), (std::uint64_t{1} << 28) + 2, false},  // (two sizes in no pattern shorter than 72)
      {serial, (std::uint64_t{1} << 20) + 2, false},                  // (two sizes, launches not alike)
      {serial, (16 * 4096 + 8) * 2, true},                            // (two sizes every 2nd chunk: 4)
      {two_tier(16, 4, 2, 3), (16 * 4096 + 8) * 2, true},             // (the same on leaves of 4)
      {one_process, std::uint64_t{1} << 20, false}};
  for (const Case& k : cases)
    for (RingProtocol p : {RingProtocol::LL, RingProtocol::LL128, RingProtocol::Simple}) {
      SCOPED_TRACE(fmt::format("{} GPUs, {} B, {}", k.c.fabric.gpus, k.bytes, to_string(p)));
      Config c = k.c;
      c.ring.protocol = p;
      const Collective coll{k.bytes, DType::Bf16};
      const std::size_t before = ring_sends_alike_total(), before_two = ring_two_sizes_total();
      const std::optional<AnalyticResult> fast = run_analytic_ring(c, coll);
      ASSERT_TRUE(fast.has_value());
      EXPECT_EQ(ring_sends_alike_total() - before, k.alike ? 1u : 0u);
      EXPECT_EQ(ring_two_sizes_total() - before_two, k.two ? 1u : 0u);
      const AnalyticResult full = run_analytic(c, compile(c, Algorithm::Ring, coll));
      expect_same_booking(*fast, full, 0);
      EXPECT_GT(full.critical_path.size(), static_cast<std::size_t>(c.fabric.gpus));
    }
}

// Two chunk sizes on a star in closed form (ring_alike.cc, TwoSizes), against
// booking the compiled ring: 2-40 GPUs, sizes from one element to a few per
// rank and a large one, BF16 and FP32, each protocol, with fixed costs and
// latencies that make every step's figures differ, with and without per-step
// timings (every send's start and finish). Also the protocol choice
// (run_analytic_ring_fastest) and simulate()'s estimate of the work (N steps,
// not N^2).
TEST(RanksAlike, TwoChunkSizesInClosedFormEqualTheFullBooking) {
  int taken = 0;
  for (int gpus : {2, 3, 5, 8, 13, 24, 40})
    for (DType dt : {DType::Bf16, DType::Fp32}) {
      Config base = star(gpus);
      if (gpus == 13) set_param(base, "accelerator.launch_overhead_ns", 3333.3);  // (off the grid before rounding)
      if (gpus == 5) set_param(base, "accelerator.hbm_bandwidth_GBps", 40);  // (the reduction bounds: phases differ)
      for (std::uint64_t elems : {std::uint64_t{1}, std::uint64_t{3}, static_cast<std::uint64_t>(gpus) + 1,
                                  static_cast<std::uint64_t>(3 * gpus - 1), (std::uint64_t{1} << 22) + 5}) {
        const Collective coll{elems * static_cast<std::uint64_t>(dtype_bytes(dt)), dt};
        for (RingProtocol p : {RingProtocol::LL, RingProtocol::LL128, RingProtocol::Simple}) {
          SCOPED_TRACE(fmt::format("{} GPUs, {} elements of {} B, {}", gpus, elems, dtype_bytes(dt), to_string(p)));
          Config c = base;
          c.ring.protocol = p;
          const std::size_t before = ring_two_sizes_total();
          const std::optional<AnalyticResult> fast = run_analytic_ring(c, coll);
          ASSERT_TRUE(fast.has_value());
          const bool two = elems % static_cast<std::uint64_t>(gpus) != 0;
          EXPECT_EQ(ring_two_sizes_total() - before, two ? 1u : 0u);
          taken += two;
          const AnalyticResult full = run_analytic(c, compile(c, Algorithm::Ring, coll));
          expect_same_booking(*fast, full, 0);
          // With per-step timings: every step's start and finish.
          const std::optional<AnalyticResult> steps = run_analytic_ring(c, coll, {}, true);
          ASSERT_TRUE(steps.has_value());
          ASSERT_EQ(steps->steps.size(), full.steps.size());
          expect_same_booking(*steps, full, full.steps.size());
          EXPECT_EQ(ring_two_sizes_total() - before, two ? 2u : 0u);
          std::size_t period = 9;
          ASSERT_TRUE(ring_ranks_alike(c, coll, &period));
          EXPECT_EQ(period, 1u);
        }
        Config autoc = base;
        autoc.ring.protocol = RingProtocol::Auto;
        const std::optional<RingChoice> choice = run_analytic_ring_fastest(autoc, coll);
        ASSERT_TRUE(choice.has_value());
        Config chosen = base;
        chosen.ring.protocol = choice->protocol;
        expect_same_booking(choice->result, run_analytic(chosen, compile(chosen, Algorithm::Ring, coll)), 0);
      }
    }
  EXPECT_GT(taken, 150);
  // At 1024 GPUs and 8 B (four chunks of one element, 1020 empty): N steps' work.
  const Config big = star(1024);
  const WorkEstimate w = estimate(big, Algorithm::Ring, Collective{8, DType::Bf16}, EngineId::Analytic);
  EXPECT_LT(w.memory_bytes, 1e6);  // (the recurrence over every rank: 8 bytes a step, 16.8 MB)
  EXPECT_LT(w.seconds, 0.015);
}

// Ranks that are not alike but still never queue: launches serialised per
// process (each rank's launch ends at another time), and a switchless mesh.
TEST(RanksAlike, RingWithUnequalRanksOrOnAMeshEqualsTheFullBooking) {
  Config c = star(16);
  set_param(c, "accelerator.gpus_per_process", 4);
  set_param(c, "accelerator.launch_serial_ns", 700);
  validate(c);
  expect_ring_alike_exact(c, std::uint64_t{1} << 20);
  expect_ring_alike_exact(load_preset("mesh-8"), std::uint64_t{1} << 24);
}

// Two tiers: the ranks at a leaf boundary cross the trunks (other latencies,
// and with oversubscription a slower hop), each trunk crossed by one rank only.
TEST(RanksAlike, RingOnTwoTiersEqualsTheFullBooking) {
  for (int leaves : {2, 4})
    for (double over : {1.0, 4.0}) {
      Config c = two_tier(16, leaves, 2, 3);
      c.fabric.oversubscription = over;
      validate(c);
      for (std::uint64_t bytes : {std::uint64_t{4096}, (std::uint64_t{1} << 20) + 2, std::uint64_t{1} << 26})
        expect_ring_alike_exact(c, bytes);
    }
  Config c = load_preset("nvl36x2");
  expect_ring_alike_exact(c, std::uint64_t{1} << 28, {RingProtocol::Simple});
}

// Where a send's resources might not be free when it is ready, the fast path
// is refused and simulate() books the compiled schedule (whose result the
// recurrence would not give here: a negative step cost lets a use start
// before the previous send's use on the same port has ended).
TEST(RanksAlike, RefusedWhenAUseCouldQueue) {
  Config c = star(8);
  c.ring.protocol = RingProtocol::Simple;
  const Collective coll{std::uint64_t{1} << 20, DType::Bf16};
  ASSERT_TRUE(run_analytic_ring(c, coll).has_value());
  c.ring.simple.step_overhead_ns = -500;  // not a valid fabric (validate refuses it): only the engine sees it
  EXPECT_FALSE(ring_ranks_alike(c, coll));
  EXPECT_FALSE(run_analytic_ring(c, coll).has_value());
  Config l = star(8);
  l.ring.protocol = RingProtocol::Simple;
  l.links.latency_ns = -1000;  // the latency sum of a send below zero
  EXPECT_FALSE(run_analytic_ring(l, coll).has_value());
}

// It polls the stop token as the engine does (every 16 sends of every rank).
TEST(RanksAlike, StopsWithCancelled) {
  Config c = star(128);
  c.ring.protocol = RingProtocol::Simple;
  std::stop_source src;
  int reports_after_stop = 0;
  RunContext ctx{src.get_token(), [&](double) {
                   if (src.stop_requested()) ++reports_after_stop;
                   src.request_stop();
                 }};
  EXPECT_THROW(run_analytic_ring(c, {std::uint64_t{1} << 20, DType::Bf16}, ctx), Cancelled);
  EXPECT_EQ(reports_after_stop, 0);
}

// run_analytic_ring_fastest (simulate()'s Auto protocol) gives what
// run_analytic_ring once per protocol gives: the first of the smallest time in
// LL, LL128, Simple order, and that protocol's result to the last bit; and it
// refuses the ring where any protocol is refused.
TEST(RanksAlike, FastestProtocolEqualsEachProtocolAlone) {
  std::vector<Config> fabrics = {load_preset("hgx-h200-8"), star(64), two_tier(16, 4, 2, 3), load_preset("mesh-8")};
  std::map<RingProtocol, int> won;
  for (const Config& f : fabrics)
    for (std::uint64_t bytes : {std::uint64_t{8}, std::uint64_t{4096}, std::uint64_t{65536}, (std::uint64_t{1} << 20) + 2,
                                std::uint64_t{1} << 26, std::uint64_t{1} << 30}) {
      SCOPED_TRACE(fmt::format("{} GPUs, {} B", f.fabric.gpus, bytes));
      const Collective coll{bytes, DType::Bf16};
      const std::optional<RingChoice> fast = run_analytic_ring_fastest(f, coll);
      ASSERT_TRUE(fast.has_value());
      std::optional<AnalyticResult> best;
      RingProtocol best_p = RingProtocol::Auto;
      for (RingProtocol p : {RingProtocol::LL, RingProtocol::LL128, RingProtocol::Simple}) {
        Config c = f;
        c.ring.protocol = p;
        std::optional<AnalyticResult> a = run_analytic_ring(c, coll);
        ASSERT_TRUE(a.has_value());
        if (!best || a->time_ns < best->time_ns) {
          best = std::move(a);
          best_p = p;
        }
      }
      EXPECT_EQ(fast->protocol, best_p);
      ++won[fast->protocol];
      EXPECT_EQ(fast->result.time_ns, best->time_ns);
      for (int t = 0; t < kTermCount; ++t) EXPECT_EQ(fast->result.breakdown.ns[t], best->breakdown.ns[t]) << "term " << t;
      EXPECT_EQ(fast->result.critical_path, best->critical_path);
      EXPECT_EQ(fast->result.max_link_bytes, best->max_link_bytes);
      EXPECT_TRUE(fast->result.steps.empty());
      EXPECT_GT(fast->result.critical_path.size(), static_cast<std::size_t>(f.fabric.gpus));
    }
  EXPECT_GE(won.size(), 2u);  // the sizes above are won by more than one protocol
  // Refused for every protocol if one is: a negative step overhead on Simple only.
  Config bad = star(8);
  bad.ring.simple.step_overhead_ns = -500;
  EXPECT_FALSE(run_analytic_ring_fastest(bad, {std::uint64_t{1} << 20, DType::Bf16}).has_value());
  bad.ring.protocol = RingProtocol::LL;
  EXPECT_TRUE(run_analytic_ring(bad, {std::uint64_t{1} << 20, DType::Bf16}).has_value());
}

// simulate() takes the fast path for the analytic engine and gives what
// booking the compiled ring gives, the protocol choice included.
TEST(RanksAlike, SimulateAgreesWithBookingTheCompiledRing) {
  for (const Config& c : {star(64), two_tier(16, 4, 2, 3)}) {
    for (std::uint64_t bytes : {std::uint64_t{64}, std::uint64_t{1} << 20, std::uint64_t{1} << 28}) {
      Config a = c;
      a.ring.protocol = RingProtocol::Auto;
      const SimResult r = simulate(a, Algorithm::Ring, {bytes, DType::Bf16}, EngineId::Analytic);
      Config p = c;
      for (RingProtocol q : {RingProtocol::LL, RingProtocol::LL128, RingProtocol::Simple})
        if (r.variant == to_string(q)) p.ring.protocol = q;
      ASSERT_NE(p.ring.protocol, RingProtocol::Auto) << r.variant;
      const AnalyticResult full = run_analytic(p, compile(p, Algorithm::Ring, {bytes, DType::Bf16}));
      EXPECT_EQ(r.time_ns, full.time_ns) << bytes;
      for (int t = 0; t < kTermCount; ++t) EXPECT_EQ(r.breakdown.ns[t], full.breakdown.ns[t]);
      EXPECT_EQ(r.max_link_bytes, full.max_link_bytes);
      for (RingProtocol q : {RingProtocol::LL, RingProtocol::LL128, RingProtocol::Simple}) {
        p.ring.protocol = q;
        EXPECT_GE(run_analytic(p, compile(p, Algorithm::Ring, {bytes, DType::Bf16})).time_ns, r.time_ns);
      }
    }
  }
}

// ------------------------------------------------------------ presets and engines

TEST(TwoTierPresets, EveryInSwitchAlgorithmRunsOnTheShippedFabrics) {
  for (const char* name : {"gb200-nvl72", "nvl36x2", "nvl576-style"}) {
    const Config c = load_preset(name);
    for (const char* algo : {"ring", "nvls", "scin", "scin-inq"}) {
      const SimResult r = simulate(c, algo, {1 << 20, DType::Bf16});
      EXPECT_GT(r.time_ns, 0) << name << " " << algo;
      EXPECT_NEAR(r.breakdown.total_ns(), r.time_ns, 1e-6 * r.time_ns) << name << " " << algo;
    }
  }
  EXPECT_NE(unsupported_reason(load_preset("gb200-nvl72"), Algorithm::ScinInqUplink).find("two-tier"), std::string::npos);
}

// The packet engine routes a two-tier ring hop by hop: the ring crosses the
// spine twice (r3 -> r4 and r7 -> r0), so each leaf's trunk up to the spine
// carries 2 (N - 1) / N of the message, every packet of it, and the trunks
// down carry the same; no other trunk direction is used.
TEST(TwoTierPresets, ThePacketEngineRoutesARingOverTheTrunks) {
  const Config c = two_tier(8, 2, 1);
  const std::uint64_t bytes = 1 << 20;
  const SimResult r = simulate(c, Algorithm::Ring, {bytes, DType::Bf16}, EngineId::Packet);
  ASSERT_GT(r.time_ns, 0);
  const nlohmann::json& j = r.extra;
  std::map<std::string, double> trunk;
  for (const auto& l : j.at("links"))
    if (l.at("name").get<std::string>().rfind("sw", 0) == 0 && l.at("name").get<std::string>().find("->sw") != std::string::npos)
      trunk[l.at("name").get<std::string>()] = l.at("payload_bytes").get<double>();
  ASSERT_EQ(trunk.size(), 4u);  // leaf0 <-> spine, leaf1 <-> spine
  for (const auto& [name, b] : trunk) EXPECT_DOUBLE_EQ(b, 2.0 * 7 / 8 * bytes) << name;
  // The busiest accelerator link carries what the analytic engine books.
  EXPECT_DOUBLE_EQ(r.max_link_bytes, simulate(c, Algorithm::Ring, {bytes, DType::Bf16}, EngineId::Analytic).max_link_bytes);
}

// ------------------------------------------------------------ ports alike (issue 14)

namespace {

// Which class a port of a star belongs to: 2p (egress of plane p) or 2p + 1
// (ingress of plane p); -1 for anything else.
int port_class(const ResourceMap& rm, int r) {
  if (r >= rm.ports()) return -1;
  const int half = rm.gpus * rm.planes;
  return 2 * ((r % half) % rm.planes) + (r < half ? 0 : 1);
}
int class_representative(const ResourceMap& rm, int cls) {
  return cls % 2 == 0 ? rm.egress(0, cls / 2) : rm.ingress(0, cls / 2);
}

// `s` plus an empty step that fails the ports-alike condition and holds
// nothing. `before_booking`: a write from accelerator 0 across plane 0, so
// ports_alike() refuses the schedule and it is booked in full from the start;
// otherwise an ISA multicast of plane 0 to accelerator 0 alone after step
// `after`: ports_alike() accepts, the step fails the condition when it is
// taken and run_analytic books the whole schedule again.
Schedule with_probe(const Schedule& s, bool before_booking, StepId after = 0) {
  Schedule t = s;
  Step probe;
  probe.kind = StepKind::Write;
  probe.op = DataOp::Copy;
  probe.initiator = before_booking ? 0 : t.switch_node(0);
  probe.via = t.switch_node(0);
  if (!before_booking) {
    probe.unit = Unit::IsaReduce;
    probe.deps = {after};
  }
  probe.srcs = {Region{t.input[0], 0, 0}};
  probe.dsts = {Region{t.output[0], 0, 0}};
  probe.label = "probe";
  t.steps.push_back(probe);
  return t;
}

}  // namespace

TEST(PortsAlike, OnlySwitchIssuedTransfersOnAStarAreCandidates) {
  const Config c = star_of("hgx-h200-8", 8);
  const Collective coll{1 << 20, DType::Bf16};
  EXPECT_TRUE(ports_alike(compile(c, Algorithm::Scin, coll)));
  EXPECT_TRUE(ports_alike(compile(c, Algorithm::ScinInq, coll)));
  Config ring = c;
  ring.ring.protocol = RingProtocol::Simple;
  for (Algorithm a : {Algorithm::Ring, Algorithm::Nvls, Algorithm::OneShot, Algorithm::TwoShot})
    EXPECT_FALSE(ports_alike(compile(ring, a, coll))) << to_string(a);
  // Two tiers: hierarchical SCIN's transfers are all issued by switches (a
  // class per leaf, plane and direction); NVLS's reads are the accelerators'.
  EXPECT_TRUE(ports_alike(compile(two_tier(16, 4, 2, 3), Algorithm::Scin, coll)));
  EXPECT_FALSE(ports_alike(compile(two_tier(16, 4, 2, 3), Algorithm::Nvls, coll)));
  EXPECT_FALSE(ports_alike(with_probe(compile(c, Algorithm::Scin, coll), true)));
  EXPECT_TRUE(ports_alike(with_probe(compile(c, Algorithm::Scin, coll), false)));
}

// Costed by class, a step's uses are its full uses with each class of ports
// (every accelerator's egress, or ingress, of one plane, each used once for the
// same amount) reduced to one use on the class's representative, where the
// class's first use stood.
TEST(PortsAlike, ClassCostIsTheFullCostWithOneUsePerClass) {
  for (const Config& c : {star_of("hgx-h200-8", 8), star_of("gb200-nvl72", 72)})
    for (Algorithm a : {Algorithm::Scin, Algorithm::ScinInq})
      for (std::uint64_t bytes : {std::uint64_t{8}, (std::uint64_t{1} << 20) + 2}) {
        const Schedule s = compile(c, a, {bytes, DType::Bf16});
        SCOPED_TRACE(fmt::format("{} {} GPUs {} B", s.algorithm, c.fabric.gpus, bytes));
        const ResourceMap rm = resource_map(s);
        std::size_t full_ports = 0, class_uses = 0;
        StepCost one;
        for (const Step& st : s.steps) {
          const StepCost full = step_cost(c, s, rm, st);
          ASSERT_TRUE(step_cost(c, s, rm, st, one, false, true)) << st.label;
          std::vector<ResourceUse> expect;
          std::map<int, std::vector<ResourceUse>> by_class;
          for (const ResourceUse& u : full.uses) {
            const int k = port_class(rm, u.resource);
            if (k < 0) {
              expect.push_back(u);
              continue;
            }
            ++full_ports;
            if (by_class[k].empty()) {
              expect.push_back(u);
              expect.back().resource = class_representative(rm, k);
            }
            by_class[k].push_back(u);
          }
          // The condition itself, from the full cost: every member once, the same amount and rate.
          for (const auto& [k, us] : by_class) {
            ASSERT_EQ(us.size(), static_cast<std::size_t>(s.gpus)) << st.label;
            std::vector<int> members;
            for (const ResourceUse& u : us) {
              members.push_back(u.resource);
              EXPECT_EQ(u.amount_bytes, us[0].amount_bytes);
              EXPECT_EQ(u.rate_GBps, us[0].rate_GBps);
            }
            std::sort(members.begin(), members.end());
            EXPECT_EQ(std::unique(members.begin(), members.end()), members.end()) << st.label;
          }
          ASSERT_EQ(one.uses.size(), expect.size()) << st.label;
          for (std::size_t k = 0; k < expect.size(); ++k) {
            EXPECT_EQ(one.uses[k].resource, expect[k].resource) << st.label;
            EXPECT_EQ(one.uses[k].amount_bytes, expect[k].amount_bytes) << st.label;
            EXPECT_EQ(one.uses[k].rate_GBps, expect[k].rate_GBps) << st.label;
            EXPECT_EQ(one.uses[k].term, expect[k].term) << st.label;
            EXPECT_EQ(one.uses[k].fed_by_transfers, expect[k].fed_by_transfers) << st.label;
            if (port_class(rm, one.uses[k].resource) >= 0) ++class_uses;
          }
          EXPECT_EQ(one.fixed_ns, full.fixed_ns);
          for (int t = 0; t < kTermCount; ++t) EXPECT_EQ(one.latency_ns[t], full.latency_ns[t]);
        }
        EXPECT_GT(class_uses, 0u);
        EXPECT_EQ(class_uses * static_cast<std::size_t>(s.gpus), full_ports);
      }
}

// A step that uses a class other than uniformly is refused (step_cost returns false).
TEST(PortsAlike, UnevenOrPartialUseOfAClassIsRefused) {
  const Config c = star_of("hgx-h200-8", 8);
  const Schedule s = compile(c, Algorithm::Scin, {1 << 20, DType::Bf16});
  const ResourceMap rm = resource_map(s);
  const Step* read = nullptr;
  const Step* multicast = nullptr;
  for (const Step& st : s.steps) {
    if (!read && st.kind == StepKind::Read) read = &st;
    if (!multicast && st.kind == StepKind::Write) multicast = &st;
  }
  ASSERT_TRUE(read && multicast);
  StepCost out;
  ASSERT_TRUE(step_cost(c, s, rm, *read, out, false, true));
  ASSERT_TRUE(step_cost(c, s, rm, *multicast, out, false, true));
  Step st = *read;
  std::swap(st.srcs[0], st.srcs[1]);  // the same set, another order
  EXPECT_FALSE(step_cost(c, s, rm, st, out, false, true));
  st = *read;
  st.srcs.pop_back();  // a subset
  EXPECT_FALSE(step_cost(c, s, rm, st, out, false, true));
  st = *read;
  st.srcs[3].count -= 1;  // unequal amounts
  EXPECT_FALSE(step_cost(c, s, rm, st, out, false, true));
  st = *multicast;
  st.dsts.pop_back();
  EXPECT_FALSE(step_cost(c, s, rm, st, out, false, true));
  st = *multicast;
  st.dsts[2] = st.dsts[5];  // one accelerator twice, another not at all
  EXPECT_FALSE(step_cost(c, s, rm, st, out, false, true));
  // Without port classes every step is costed.
  EXPECT_TRUE(step_cost(c, s, rm, st, out));
  EXPECT_EQ(out.uses.size(), st.dsts.size());
}

// Booking each class's representative alone gives the full booking's time,
// every breakdown term, the critical path and every step's times, to the last
// bit; the full booking is forced by a probe step refused before booking, and
// by one refused mid-run (the fallback books again).
TEST(PortsAlike, BookingOneRepresentativeEqualsTheFullBooking) {
  for (const Config& c : {star_of("hgx-h200-8", 8), star_of("hgx-h200-8", 64), star_of("gb200-nvl72", 72)})
    for (Algorithm a : {Algorithm::Scin, Algorithm::ScinInq})
      for (std::uint64_t bytes : {std::uint64_t{8}, (std::uint64_t{1} << 20) + 2, std::uint64_t{64} << 20}) {
        const Schedule s = compile(c, a, {bytes, DType::Bf16});
        SCOPED_TRACE(fmt::format("{} {} GPUs {} B", s.algorithm, c.fabric.gpus, bytes));
        ASSERT_TRUE(ports_alike(s));
        const AnalyticResult fast = run_analytic(c, s);
        const Schedule before = with_probe(s, true);
        ASSERT_FALSE(ports_alike(before));
        expect_same_booking(fast, run_analytic(c, before), s.steps.size());
        // The probe goes after a step half-way through the schedule (and must not end last).
        const Schedule mid = with_probe(s, false, static_cast<StepId>(s.steps.size() / 2));
        ASSERT_TRUE(ports_alike(mid));
        const AnalyticResult fallback = run_analytic(c, mid);
        ASSERT_LT(fallback.steps.back().finish_ns, fallback.time_ns);
        EXPECT_GT(fallback.steps.back().start_ns, 0.0);
        expect_same_booking(fast, fallback, s.steps.size());
        EXPECT_GT(fast.critical_path.size(), 3u);
      }
}

// ------------------------------------------------------------ ports alike on two tiers

namespace {

// The two-tier fabrics hierarchical SCIN is checked on: nvl36x2 as shipped (2
// leaves of 36, 18 planes), nvl576-style at 144 GPUs (4 leaves), and 16 GPUs
// on 4 leaves, 2 spines and 3 planes.
std::vector<Config> tier_fabrics() {
  Config nvl576 = load_preset("nvl576-style");
  set_param(nvl576, "fabric.gpus", 144);
  set_param(nvl576, "fabric.leaves", 4);
  validate(nvl576);
  return {load_preset("nvl36x2"), nvl576, two_tier(16, 4, 2, 3)};
}

// A port's class on two tiers: (direction, plane, leaf) numbered, and its
// representative, the port of the leaf's first accelerator; -1: not a port.
int tier_port_class(const ResourceMap& rm, int r, int per_leaf) {
  if (r >= rm.ports()) return -1;
  const int half = rm.gpus * rm.planes, k = r % half;
  return ((r < half ? 0 : 1) * rm.planes + k % rm.planes) * rm.gpus + (k / rm.planes) / per_leaf;
}
int tier_class_representative(const ResourceMap& rm, int cls, int per_leaf) {
  const int leaf = cls % rm.gpus, plane = (cls / rm.gpus) % rm.planes;
  return cls / (rm.gpus * rm.planes) == 0 ? rm.egress(leaf * per_leaf, plane) : rm.ingress(leaf * per_leaf, plane);
}

}  // namespace

// On two tiers a class is a leaf's accelerator ports of one plane and
// direction: costed by class, a step's uses are its full uses with each class
// reduced to one use on the port of the leaf's first accelerator, where the
// class's first use stood; its latency and fixed cost are the full cost's.
TEST(PortsAlike, TwoTierClassCostIsTheFullCostWithOneUsePerLeafClass) {
  for (const Config& c : tier_fabrics())
    for (Algorithm a : {Algorithm::Scin, Algorithm::ScinInq, Algorithm::ScinInqUplink})
      for (std::uint64_t bytes : {std::uint64_t{8}, (std::uint64_t{1} << 20) + 2}) {
        const Schedule s = compile(c, a, {bytes, DType::Bf16});
        SCOPED_TRACE(fmt::format("{} {} GPUs on {} leaves, {} B", s.algorithm, c.fabric.gpus, c.fabric.leaves, bytes));
        const ResourceMap rm = resource_map(s);
        const int m = s.gpus_per_leaf();
        std::size_t full_ports = 0, class_uses = 0;
        StepCost one;
        for (const Step& st : s.steps) {
          const StepCost full = step_cost(c, s, rm, st);
          ASSERT_TRUE(step_cost(c, s, rm, st, one, false, true)) << st.label;
          std::vector<ResourceUse> expect;
          std::map<int, std::vector<ResourceUse>> by_class;
          for (const ResourceUse& u : full.uses) {
            const int k = tier_port_class(rm, u.resource, m);
            if (k < 0) {
              expect.push_back(u);
              continue;
            }
            ++full_ports;
            if (by_class[k].empty()) {
              expect.push_back(u);
              EXPECT_EQ(u.resource, tier_class_representative(rm, k, m)) << st.label;  // (the first member is the first accelerator's)
            }
            by_class[k].push_back(u);
          }
          // The condition itself, from the full cost: every member of the leaf once, the same amount and rate.
          for (const auto& [k, us] : by_class) {
            ASSERT_EQ(us.size(), static_cast<std::size_t>(m)) << st.label;
            std::vector<int> members;
            for (const ResourceUse& u : us) {
              members.push_back(u.resource);
              EXPECT_EQ(u.amount_bytes, us[0].amount_bytes);
              EXPECT_EQ(u.rate_GBps, us[0].rate_GBps);
            }
            std::sort(members.begin(), members.end());
            EXPECT_EQ(std::unique(members.begin(), members.end()), members.end()) << st.label;
          }
          ASSERT_EQ(one.uses.size(), expect.size()) << st.label;
          for (std::size_t k = 0; k < expect.size(); ++k) {
            EXPECT_EQ(one.uses[k].resource, expect[k].resource) << st.label;
            EXPECT_EQ(one.uses[k].amount_bytes, expect[k].amount_bytes) << st.label;
            EXPECT_EQ(one.uses[k].rate_GBps, expect[k].rate_GBps) << st.label;
            EXPECT_EQ(one.uses[k].term, expect[k].term) << st.label;
            EXPECT_EQ(one.uses[k].fed_by_transfers, expect[k].fed_by_transfers) << st.label;
            if (tier_port_class(rm, one.uses[k].resource, m) >= 0) ++class_uses;
          }
          EXPECT_EQ(one.fixed_ns, full.fixed_ns);
          for (int t = 0; t < kTermCount; ++t) EXPECT_EQ(one.latency_ns[t], full.latency_ns[t]);
        }
        EXPECT_GT(class_uses, 0u);
        EXPECT_EQ(class_uses * static_cast<std::size_t>(m), full_ports);
      }
}

// A multicast an accelerator issues on two tiers (NVLS's multimem.st) books
// the links of every destination's route once (routed_cost.cc lists them
// without routing each destination): checked against Schedule::route and
// link_resource destination by destination, plane by plane, on NVLS's stores
// and on edited destination lists (reversed, a repeat, the sender itself,
// one leaf only, its own leaf only), each list's latency the worst route's.
TEST(RoutedCost, AcceleratorMulticastTreeListsEveryRoutesLinksOnce) {
  std::vector<Config> fabrics = tier_fabrics();
  fabrics.push_back(two_tier(24, 3, 3, 2));
  for (const Config& c : fabrics) {
    const Schedule s = compile(c, Algorithm::Nvls, {(std::uint64_t{1} << 20) + 2, DType::Bf16});
    SCOPED_TRACE(fmt::format("{} GPUs on {} leaves, {} spines, {} planes", c.fabric.gpus, c.fabric.leaves,
                             c.fabric.spines, c.fabric.planes));
    const ResourceMap rm = resource_map(s);
    const int m = s.gpus_per_leaf();
    std::size_t checked = 0;
    for (const Step& st : s.steps) {
      if (st.kind != StepKind::Write || s.is_switch(st.initiator) || st.dsts.size() < 2) continue;
      const NodeId a = st.initiator;
      Step reversed = st, repeated = st, one_leaf = st, own_leaf = st;
      std::reverse(reversed.dsts.begin(), reversed.dsts.end());
      repeated.dsts.push_back(st.dsts[1]);
      one_leaf.dsts.clear();
      own_leaf.dsts.clear();
      const int far_leaf = (s.leaf_of(a) + 1) % s.leaves;
      for (const Region& r : st.dsts) {
        const NodeId b = s.buffers[r.buffer].node;
        if (s.leaf_of(b) == far_leaf) one_leaf.dsts.push_back(r);
        if (s.leaf_of(b) == s.leaf_of(a)) own_leaf.dsts.push_back(r);
      }
      ASSERT_EQ(one_leaf.dsts.size(), static_cast<std::size_t>(m));
      for (const Step* v : std::initializer_list<const Step*>{&st, &reversed, &repeated, &one_leaf, &own_leaf}) {
        if (v->dsts.size() < 2) continue;
        const StepCost got = step_cost(c, s, rm, *v);
        // The reference: each destination routed (the tree's spine: ECMP on the sender).
        const int spine = ecmp_pick(a, kNoNode, s.spines);
        std::vector<int> expect;
        routed::PathLatency worst;
        for (int p = 0; p < s.planes; ++p) {
          std::vector<int> links;
          for (const Region& r : v->dsts) {
            const NodeId b = s.buffers[r.buffer].node;
            if (b == a) continue;
            NodeId path[5];
            const int n = s.route(a, b, p, path, spine);
            for (int k = 0; k + 1 < n; ++k) links.push_back(routed::link_resource(s, rm, path[k], path[k + 1], p));
            const routed::PathLatency l = routed::path_latency(c, s, a, b, p);
            if (p == 0 && l.total() > worst.total()) worst = l;
          }
          std::sort(links.begin(), links.end());
          links.erase(std::unique(links.begin(), links.end()), links.end());
          expect.insert(expect.end(), links.begin(), links.end());
        }
        // Every link carries the same share at its kind's rate (a port's, a trunk's).
        std::vector<int> links;
        double port_rate = 0, trunk_rate = 0;
        for (const ResourceUse& u : got.uses) {
          ASSERT_TRUE(is_port(u.kind) || u.kind == ResourceKind::Uplink || u.kind == ResourceKind::Downlink);
          links.push_back(u.resource);
          EXPECT_EQ(u.amount_bytes, got.uses[0].amount_bytes);
          double& rate = is_port(u.kind) ? port_rate : trunk_rate;
          if (rate == 0) rate = u.rate_GBps;
          EXPECT_EQ(u.rate_GBps, rate);
        }
        EXPECT_DOUBLE_EQ(got.uses[0].amount_bytes * s.planes, static_cast<double>(region_bytes(s, st.dsts[0])));
        if (trunk_rate > 0) {
          EXPECT_DOUBLE_EQ(trunk_rate / port_rate, routed::trunk_raw_GBps(c, s) / port_raw_GBps(c, s));
        }
        EXPECT_EQ(links, expect) << st.label;
        EXPECT_EQ(got.latency_ns[static_cast<int>(Term::LinkLatency)], worst.link_ns) << st.label;
        EXPECT_EQ(got.latency_ns[static_cast<int>(Term::SwitchLatency)], worst.switch_ns) << st.label;
        ++checked;
      }
    }
    EXPECT_GT(checked, static_cast<std::size_t>(4 * c.fabric.gpus));
  }
}

// A two-tier step that names a leaf's accelerators other than all, in order,
// the same bytes from each, or that an accelerator issues, is refused.
TEST(PortsAlike, TwoTierPartialOrUnevenLeafIsRefused) {
  const Config c = two_tier(16, 4, 2, 3);
  const Schedule s = compile(c, Algorithm::Scin, {1 << 20, DType::Bf16});
  const ResourceMap rm = resource_map(s);
  const Step* read = nullptr;       // a leaf's read of its accelerators
  const Step* multicast = nullptr;  // a spine's multicast to every accelerator
  for (const Step& st : s.steps) {
    if (!read && st.kind == StepKind::Read && !s.is_switch(s.buffers[st.srcs[0].buffer].node)) read = &st;
    if (!multicast && st.kind == StepKind::Write && st.dsts.size() == 16) multicast = &st;
  }
  ASSERT_TRUE(read && multicast);
  StepCost out;
  ASSERT_TRUE(step_cost(c, s, rm, *read, out, false, true));
  ASSERT_TRUE(step_cost(c, s, rm, *multicast, out, false, true));
  Step st = *read;
  std::swap(st.srcs[0], st.srcs[1]);  // another order
  EXPECT_FALSE(step_cost(c, s, rm, st, out, false, true));
  st = *read;
  st.srcs.pop_back();  // a subset
  EXPECT_FALSE(step_cost(c, s, rm, st, out, false, true));
  st = *read;
  st.srcs[2].count -= 1;  // unequal amounts
  EXPECT_FALSE(step_cost(c, s, rm, st, out, false, true));
  st = *read;
  st.initiator = s.leaf_node(0, 3);  // another leaf's accelerators (their routes share trunks)
  st.via = st.initiator;
  ASSERT_NE(s.leaf_of(s.buffers[read->srcs[0].buffer].node), 3);
  EXPECT_FALSE(step_cost(c, s, rm, st, out, false, true));
  st = *multicast;
  st.dsts.pop_back();  // three leaves and a part
  EXPECT_FALSE(step_cost(c, s, rm, st, out, false, true));
  st = *multicast;
  st.dsts.resize(4);  // one whole leaf: a class
  EXPECT_TRUE(step_cost(c, s, rm, st, out, false, true));
  st = *multicast;
  st.dsts[2] = st.dsts[5];  // one accelerator twice, another not at all
  EXPECT_FALSE(step_cost(c, s, rm, st, out, false, true));
  st = *multicast;
  st.initiator = 0;  // issued by an accelerator
  EXPECT_FALSE(step_cost(c, s, rm, st, out, false, true));
  // Without port classes every step is costed, every destination's port.
  EXPECT_TRUE(step_cost(c, s, rm, st, out));
}

// Booking each leaf class's representative alone gives the full booking's
// time, every breakdown term, the critical path, max_link_bytes and every
// step's times, to the last bit (the full booking forced by a probe refused
// before booking, and by one refused mid-run).
TEST(PortsAlike, TwoTierBookingOneRepresentativeEqualsTheFullBooking) {
  int compared = 0;
  for (const Config& c : tier_fabrics())
    for (Algorithm a : {Algorithm::Scin, Algorithm::ScinInq, Algorithm::ScinInqUplink})
      for (std::uint64_t bytes : {std::uint64_t{8}, (std::uint64_t{1} << 20) + 2, std::uint64_t{64} << 20}) {
        const Schedule s = compile(c, a, {bytes, DType::Bf16});
        SCOPED_TRACE(fmt::format("{} {} GPUs on {} leaves, {} B", s.algorithm, c.fabric.gpus, c.fabric.leaves, bytes));
        if (planes_alike(s)) continue;  // (plane 0 alone is booked then)
        ASSERT_TRUE(ports_alike(s));
        const AnalyticResult fast = run_analytic(c, s);
        const Schedule before = with_probe(s, true);
        ASSERT_FALSE(ports_alike(before));
        expect_same_booking(fast, run_analytic(c, before), s.steps.size());
        const Schedule mid = with_probe(s, false, static_cast<StepId>(s.steps.size() / 2));
        ASSERT_TRUE(ports_alike(mid));
        const AnalyticResult fallback = run_analytic(c, mid);
        ASSERT_LT(fallback.steps.back().finish_ns, fallback.time_ns);
        expect_same_booking(fast, fallback, s.steps.size());
        EXPECT_GT(fast.critical_path.size(), 3u);
        ++compared;
      }
  EXPECT_GE(compared, 20);
}

// ------------------------------------------------------------ NVLS by classes of ports

namespace {

// run_analytic_nvls against booking the compiled NVLS schedule: the same time,
// breakdown terms, critical path, max_link_bytes and every step's start and
// finish, to the last bit. False if the fast path declined (nothing compared).
// `fast` (a shortcut's NVLS result for c and coll) against booking the
// compiled schedule, every step's timing included; the compiled step count.
std::size_t expect_nvls_booked_as_compiled(const AnalyticResult& fast, const Config& c, const Collective& coll) {
  const Schedule s = compile(c, Algorithm::Nvls, coll);
  const AnalyticResult full = run_analytic(c, s);
  EXPECT_EQ(fast.steps.size(), s.steps.size());
  expect_same_booking(fast, full, s.steps.size());
  EXPECT_GT(full.critical_path.size(), 3u);
  return s.steps.size();
}

bool expect_nvls_alike_exact(const Config& c, std::uint64_t bytes) {
  SCOPED_TRACE(fmt::format("{} GPUs, {} planes, {} B", c.fabric.gpus, c.fabric.planes, bytes));
  const Collective coll{bytes, DType::Bf16};
  const std::optional<AnalyticResult> fast = run_analytic_nvls(c, coll, {}, true);
  if (!fast) return false;
  expect_nvls_booked_as_compiled(*fast, c, coll);
  return true;
}

}  // namespace

// 8 B leaves most chunks empty, 1 MiB + 2 B gives shards and chunks of two
// sizes, 16 MiB - 1 GiB gives a rank 16 - 1024 chunks (on 8 GPUs; 2 - 128 on
// gb200-nvl72), whose ld_reduces meet the rank's own multimem.sts on its
// egress: the members of a class part and meet again (nvls_groups.h). The fast
// path answers at every size and equals the full booking.
TEST(NvlsAlike, EqualsTheFullBookingOnTheShippedStars) {
  for (const char* preset : {"hgx-h200-8", "hgx-b200-8", "hgx-h100-8", "gb200-nvl72"}) {
    const Config c = load_preset(preset);
    for (std::uint64_t bytes : {std::uint64_t{8}, std::uint64_t{1} << 16, (std::uint64_t{1} << 20) + 2,
                                std::uint64_t{1} << 24, std::uint64_t{1} << 26, std::uint64_t{1} << 30})
      EXPECT_TRUE(expect_nvls_alike_exact(c, bytes)) << preset << " " << bytes;
  }
}

// Many chunks per rank at more GPUs (the 1024-GPU 1 GiB point has 8), and
// shards of two sizes with many chunks each.
TEST(NvlsAlike, EqualsTheFullBookingAtMoreGpus) {
  EXPECT_TRUE(expect_nvls_alike_exact(star_of("hgx-h200-8", 3), (std::uint64_t{1} << 16) + 6));  // shards of two sizes
  EXPECT_TRUE(expect_nvls_alike_exact(star_of("hgx-h200-8", 3), (std::uint64_t{1} << 24) + 6));  // and 42-43 chunks each
  EXPECT_TRUE(expect_nvls_alike_exact(star_of("hgx-h200-8", 16), std::uint64_t{1} << 30));        // 512 chunks per rank
  for (int gpus : {64, 256})
    EXPECT_TRUE(expect_nvls_alike_exact(star_of("hgx-h200-8", gpus), (std::uint64_t{1} << 20) + 6)) << gpus;
  EXPECT_TRUE(expect_nvls_alike_exact(star_of("hgx-b200-8", 64), std::uint64_t{1} << 28));   // 32 chunks
  EXPECT_TRUE(expect_nvls_alike_exact(star_of("hgx-h200-8", 128), std::uint64_t{1} << 27));  // 8 chunks, as 1024 GPUs at 1 GiB
  EXPECT_TRUE(expect_nvls_alike_exact(star_of("hgx-h200-8", 256), std::uint64_t{1} << 26));  // 2 chunks
  EXPECT_TRUE(expect_nvls_alike_exact(star_of("hgx-h200-8", 256), std::uint64_t{1} << 28));  // 8 chunks
  EXPECT_TRUE(expect_nvls_alike_exact(star_of("hgx-h200-8", 1024), std::uint64_t{1} << 26));  // one chunk per rank
}

// Ranks whose launches end at different times (serialised per process) and a
// slow NVLS unit that queues the ld_reduces: still exact.
TEST(NvlsAlike, EqualsTheFullBookingWithUnequalLaunchesOrASlowUnit) {
  Config c = star_of("hgx-h200-8", 16);
  set_param(c, "accelerator.gpus_per_process", 4);
  set_param(c, "accelerator.launch_serial_ns", 700);
  validate(c);
  Config u = star_of("hgx-h200-8", 16);
  u.tuning.nvls_reduce_GBps = 5;
  Config v = star_of("hgx-h200-8", 64);
  v.tuning.nvls_reduce_GBps = 200;  // the unit about as fast as a port
  for (const Config* x : {&c, &u, &v})
    for (std::uint64_t bytes : {(std::uint64_t{1} << 20) + 2, std::uint64_t{1} << 26, std::uint64_t{1} << 28})
      EXPECT_TRUE(expect_nvls_alike_exact(*x, bytes)) << x->fabric.gpus << " " << bytes;
}

// Where members' own uses are in a shared use's way (at 8 GPUs and 64 MiB,
// rank 0's third ld_reduce meets its second multimem.st on its own egress; the
// first fast path declined there), simulate() answers from the fast path and
// gives what booking the compiled schedule gives.
TEST(NvlsAlike, AnswersWhereAMembersOwnUseIsInTheWay) {
  const Config c = load_preset("hgx-h200-8");
  for (std::uint64_t bytes : {std::uint64_t{1} << 26, std::uint64_t{1} << 30}) {
    const Collective coll{bytes, DType::Bf16};
    EXPECT_TRUE(run_analytic_nvls(c, coll).has_value());
    const SimResult r = simulate(c, Algorithm::Nvls, coll, EngineId::Analytic);
    const AnalyticResult full = run_analytic(c, compile(c, Algorithm::Nvls, coll));
    EXPECT_EQ(r.time_ns, full.time_ns);
    for (int t = 0; t < kTermCount; ++t) EXPECT_EQ(r.breakdown.ns[t], full.breakdown.ns[t]) << "term " << t;
    EXPECT_EQ(r.max_link_bytes, full.max_link_bytes);
  }
}

// ------------------------------------------------------------ NVLS on two tiers from its form

namespace {

Config two_tier_of(const char* preset, std::initializer_list<std::pair<const char*, double>> set) {
  Config c = load_preset(preset);
  for (const auto& [path, value] : set) set_param(c, path, value);
  validate(c);
  return c;
}

// run_analytic_nvls_tiers against booking the compiled schedule: the same
// time, breakdown terms, critical path, max_link_bytes and every step's start
// and finish, to the last bit; the steps it books are the compiled ones and
// the two joins. False if it declined (nothing compared).
bool expect_nvls_tiers_exact(const Config& c, std::uint64_t bytes, DType dtype = DType::Bf16) {
  SCOPED_TRACE(fmt::format("{} GPUs, {} leaves, {} spines, {} planes, {} B", c.fabric.gpus, c.fabric.leaves,
                           c.fabric.spines, c.fabric.planes, bytes));
  const Collective coll{bytes, dtype};
  const std::optional<AnalyticResult> fast = run_analytic_nvls_tiers(c, coll);
  if (!fast) return false;
  EXPECT_EQ(nvls_tiers_steps(c, coll), expect_nvls_booked_as_compiled(*fast, c, coll) + 2);
  return true;
}

}  // namespace

// The shipped two-tier presets at sizes from 8 B (empty chunks) to 256 MiB
// (over 8 chunks a rank: a leaf ld_reduce waits for the store 8 chunks back),
// shards of unequal sizes (40 GPUs, 1000 B), FP32, one spine, oversubscribed
// trunks, one plane (planes not alike), launches at different times, one
// accelerator a leaf (one source per leaf ld_reduce), 144 GPUs on 4 leaves.
TEST(NvlsTiers, EqualsTheFullBookingOnTwoTiers) {
  const Config nvl36x2 = load_preset("nvl36x2");
  for (std::uint64_t bytes : {std::uint64_t{8}, std::uint64_t{1} << 16, (std::uint64_t{1} << 20) + 2,
                              std::uint64_t{1} << 24, std::uint64_t{1} << 28})
    EXPECT_TRUE(expect_nvls_tiers_exact(nvl36x2, bytes)) << bytes;
  EXPECT_TRUE(expect_nvls_tiers_exact(two_tier_of("nvl36x2", {{"fabric.gpus", 40}}), 1000));
  EXPECT_TRUE(expect_nvls_tiers_exact(two_tier_of("nvl36x2", {{"fabric.gpus", 40}}), (std::uint64_t{1} << 24) + 6));
  EXPECT_TRUE(expect_nvls_tiers_exact(nvl36x2, std::uint64_t{1} << 24, DType::Fp32));
  for (const auto& [path, value] : {std::pair<const char*, double>{"fabric.spines", 1},
                                    {"fabric.oversubscription", 4}, {"fabric.planes", 1}})
    EXPECT_TRUE(expect_nvls_tiers_exact(two_tier_of("nvl36x2", {{path, value}}), (std::uint64_t{1} << 22) + 2)) << path;
  EXPECT_TRUE(expect_nvls_tiers_exact(
      two_tier_of("nvl36x2", {{"accelerator.gpus_per_process", 4}, {"accelerator.launch_serial_ns", 700}}),
      std::uint64_t{1} << 22));
  EXPECT_TRUE(expect_nvls_tiers_exact(two_tier_of("nvl576-style", {{"fabric.gpus", 8}, {"fabric.leaves", 8}}),
                                      std::uint64_t{1} << 22));
  EXPECT_TRUE(expect_nvls_tiers_exact(two_tier_of("nvl576-style", {{"fabric.gpus", 144}, {"fabric.leaves", 4}}),
                                      (std::uint64_t{1} << 22) + 2));
}

// Stores of one part size, leaf and spine, and leaf and spine ld_reduces of
// one span size, leaf and spine, are costed from one template each
// (nvls_tiers.cc): each templated step's cost equals analytic_step_cost's on
// the filled step, use by use and resource by resource, and every rank's link
// bytes (the templated stores' added up at the end, the templated reads'
// sources and destination) equal add_link_bytes' of every step one by one
// (seen failing with the stores' ingress bytes left out), on fabrics with one and several spines, one
// plane, oversubscribed trunks, FP32 and parts of two sizes (the results
// against the compiled schedule: EqualsTheFullBookingOnTwoTiers).
TEST(NvlsTiers, StepsCostedFromTemplatesEqualTheirFullCost) {
  struct Restore {
    ~Restore() { nvls_tiers_check_templates() = false; }
  } restore;
  nvls_tiers_check_templates() = true;
  nvls_tiers_template_mismatches() = 0;
  const std::size_t before = nvls_tiers_templated_total();
  const std::vector<std::pair<Config, std::uint64_t>> cases = {
      {load_preset("nvl36x2"), std::uint64_t{1} << 24},
      {two_tier_of("nvl36x2", {{"fabric.gpus", 40}}), (std::uint64_t{1} << 24) + 12},
      {two_tier_of("nvl36x2", {{"fabric.spines", 1}}), (std::uint64_t{1} << 22) + 4},
      {two_tier_of("nvl36x2", {{"fabric.oversubscription", 4}}), std::uint64_t{1} << 22},
      {two_tier_of("nvl36x2", {{"fabric.planes", 1}}), std::uint64_t{1} << 22},
      {two_tier_of("nvl576-style", {{"fabric.gpus", 144}, {"fabric.leaves", 4}}), (std::uint64_t{1} << 22) + 4},
      {two_tier_of("nvl576-style", {{"fabric.gpus", 256}, {"fabric.leaves", 8}}), std::uint64_t{1} << 26},
  };
  for (const auto& [cfg, bytes] : cases) {
    for (DType t : {DType::Bf16, DType::Fp32}) {
      const std::size_t at = nvls_tiers_templated_total(), reads_at = nvls_tiers_templated_reads();
      ASSERT_TRUE(run_analytic_nvls_tiers(cfg, {bytes, t}).has_value());
      const std::size_t reads = nvls_tiers_templated_reads() - reads_at;
      EXPECT_GT(nvls_tiers_templated_total() - at, reads) << cfg.fabric.gpus << " GPUs, " << bytes << " B";
      EXPECT_GT(reads, 0u) << cfg.fabric.gpus << " GPUs, " << bytes << " B";
    }
  }
  EXPECT_GT(nvls_tiers_templated_total(), before);
  EXPECT_EQ(nvls_tiers_template_mismatches(), 0u);
}

// Where the two-tier schedule's size cap leaves fewer chunks than NCCL's
// 128 KiB ones, the result says so (its time is high: docs/model.md); where
// every chunk is there, it says nothing.
TEST(NvlsTiers, ResultsNoteWhereTheChunkCapBinds) {
  const Config c = two_tier_of("nvl576-style", {{"fabric.gpus", 256}, {"fabric.leaves", 8}});
  auto note = [&](std::uint64_t bytes, const char* engine) {
    const SimResult r = simulate(c, "nvls", {bytes, DType::Bf16}, engine);
    return r.extra.is_object() && r.extra.contains("note") ? r.extra["note"].get<std::string>() : std::string();
  };
  // 256 GPUs, 32 a leaf: at most 2M / 256^2 = 30 chunks a shard; 1 GiB has 256 of 128 KiB, 64 MiB 16.
  EXPECT_NE(note(std::uint64_t{1} << 30, "analytic").find("fewer, larger chunks"), std::string::npos);
  EXPECT_EQ(note(std::uint64_t{1} << 26, "analytic").find("fewer, larger chunks"), std::string::npos);
}

// switch.nvls.tiers_max_destinations sets that cap: 64 GPUs on 2 leaves at 64 MiB take NCCL's 16
// chunks of 128 KiB a shard (16 x 64^2 = 65,536 destinations) under the default 2M; capped at
// 32,768 they get 8 (32,768 / 64^2), the time rises, the note names the cap, and the estimate
// counts the steps the capped schedule has.
TEST(NvlsTiers, TheChunkCapIsAParameter) {
  Config c = two_tier_of("nvl576-style", {{"fabric.gpus", 64}, {"fabric.leaves", 2}});
  const Collective coll{std::uint64_t{1} << 26, DType::Bf16};
  auto note = [](const SimResult& r) {
    return r.extra.is_object() && r.extra.contains("note") ? r.extra["note"].get<std::string>() : std::string();
  };
  const SimResult free = simulate(c, "nvls", coll, "analytic");
  EXPECT_EQ(note(free), "");
  EXPECT_EQ(build::nvls_tiers_chunks(coll.bytes, 64, 32, c.sw.nvls.tiers_max_destinations), 16);
  apply_assignment(c, "switch.nvls.tiers_max_destinations=32768");
  EXPECT_EQ(build::nvls_tiers_chunks(coll.bytes, 64, 32, c.sw.nvls.tiers_max_destinations), 8);
  const SimResult capped = simulate(c, "nvls", coll, "analytic");
  EXPECT_NE(note(capped).find("capped at 32768 multicast destinations, switch.nvls.tiers_max_destinations"),
            std::string::npos)
      << note(capped);
  EXPECT_GT(capped.time_ns, free.time_ns);
  const Schedule s = compile(c, Algorithm::Nvls, coll);
  EXPECT_EQ(estimate(c, Algorithm::Nvls, coll, EngineId::Analytic).amount, static_cast<double>(s.steps.size()));
  EXPECT_EQ(s.steps.size(), build::nvls_tiers_counts(coll.bytes, 64, 2, 32768).steps);
  EXPECT_NE(error_of([&] { apply_assignment(c, "switch.nvls.tiers_max_destinations=10"); }).find("out of range"),
            std::string::npos);
}

// A star, or a fabric NVLS does not support: declined (the caller compiles,
// and compile() says why); simulate() on two tiers gives what booking the
// compiled schedule gives; a stop request ends a 1024-GPU point with Cancelled.
TEST(NvlsTiers, DeclinesStarsAndStops) {
  const Collective coll{std::uint64_t{1} << 20, DType::Bf16};
  EXPECT_FALSE(run_analytic_nvls_tiers(load_preset("hgx-h200-8"), coll).has_value());
  EXPECT_EQ(nvls_tiers_steps(load_preset("hgx-h200-8"), coll), 0u);
  Config none = load_preset("nvl36x2");
  none.sw.nvls.enabled = false;
  EXPECT_FALSE(run_analytic_nvls_tiers(none, coll).has_value());
  for (std::uint64_t bytes : {std::uint64_t{8}, std::uint64_t{1} << 26})
    expect_simulate_books_as_compiled(load_preset("nvl36x2"), Algorithm::Nvls, bytes);
  const Config big = two_tier_of("nvl576-style", {{"fabric.gpus", 1024}, {"switch.ports", 128}});
  std::stop_source stop;
  stop.request_stop();
  EXPECT_THROW(run_analytic_nvls_tiers(big, {std::uint64_t{1} << 30, DType::Bf16}, {stop.get_token(), {}}), Cancelled);
}

// The groups of members (nvls_groups.h) against one queue per member: every
// shared use's latest end and the first member with it, every own use's end,
// equal to the last bit, over a random sequence of shared and own uses on a
// grid of times (so ends tie and members' queues part and meet again).
TEST(NvlsAlike, MemberGroupsEqualOneQueuePerMember) {
  for (const int mode : {0, 1, 2})  // merging, not merging, members alone
  for (int n : {2, 7, 64}) {
    const bool merge = mode == 0, alone = mode == 2;
    SCOPED_TRACE(fmt::format("{} members, {}", n, merge ? "merging" : alone ? "alone" : "not merging"));
    nvls::Members groups(n, merge, alone);
    std::vector<nvls::Queue> per(static_cast<std::size_t>(n));
    std::uint64_t rng = 12345;
    auto next = [&rng](int k) {
      rng = rng * 6364136223846793005ull + 1442695040888963407ull;
      return static_cast<int>((rng >> 33) % static_cast<std::uint64_t>(k));
    };
    double r = 0, last_end = 0;
    std::size_t most = 1;
    for (int step = 0; step < 4000; ++step) {
      r += 0.5 * next(3);  // the ready front never goes back
      const double t = r + 0.5 * next(4), d = 0.5 * (1 + next(4));
      StepId h = kNoStep;
      if (next(3) == 0) {
        double best = -1;
        int who = -1;
        for (int m = 0; m < n; ++m) {
          nvls::Queue& q = per[static_cast<std::size_t>(m)];
          q.prune(r);
          const double st = q.search(t, d, h);
          q.insert(st, st + d, static_cast<StepId>(step));
          if (st + d > best) best = st + d, who = m;
        }
        const auto [e, m] = groups.shared(r, t, d);
        ASSERT_EQ(e, best) << step;
        ASSERT_EQ(m, who) << step;
        last_end = std::max(last_end, e);
      } else {
        const int m = next(n);
        nvls::Queue& q = per[static_cast<std::size_t>(m)];
        q.prune(r);
        const double st = q.search(t, d, h);
        q.insert(st, st + d, static_cast<StepId>(step));
        ASSERT_EQ(groups.own(r, m, t, d), st + d) << step;
        last_end = std::max(last_end, st + d);
      }
      ASSERT_LE(groups.groups(), static_cast<std::size_t>(n));
      most = std::max(most, groups.groups());
    }
    if (alone) {
      EXPECT_EQ(most, static_cast<std::size_t>(n));
    } else {
      EXPECT_GT(most, 1u);  // members parted
    }
    // Past every reservation, the same own use by every member: their queues
    // meet again in one group.
    r = last_end + 1;
    for (int m = 0; m < n; ++m) groups.own(r, m, r, 1);
    if (merge) {
      EXPECT_EQ(groups.groups(), 1u);
    }
  }
}

// Members alone (nvls_groups.h) keep a member's queue of at most one block in
// one array and move it into its Queue otherwise: against one Queue per
// member (search then insert), every shared use's latest end and first member
// with it and every own use's end, to the last bit, and each member's start
// and holder as recorded for the critical path (nvls_alike.cc), with the ready front
// moving slowly (one long block per member: booked in place) and fast (gaps,
// blocks ending by the front, queues of several blocks: in Slots and back),
// uses of no length too.
TEST(NvlsAlike, MembersAloneEqualOneQueuePerMember) {
  for (const bool zero : {false, true})
  for (int n : {1, 3, 8, 16}) {
    SCOPED_TRACE(fmt::format("{} members{}", n, zero ? ", uses of no length too" : ""));
    nvls::Members alone(n, false, true);
    std::vector<nvls::Queue> per(static_cast<std::size_t>(n));
    std::uint64_t rng = 4242 + static_cast<std::uint64_t>(n);
    auto next = [&rng](int k) {
      rng = rng * 6364136223846793005ull + 1442695040888963407ull;
      return static_cast<int>((rng >> 33) % static_cast<std::uint64_t>(k));
    };
    double r = 0;
    std::size_t several = 0, shared_uses = 0, held = 0;
    for (int step = 0; step < 30000; ++step) {
      const int regime = (step / 1500) % 3;  // slow, fast, a jump of the front now and then
      r += regime == 0 ? 0.25 * next(2) : regime == 1 ? 0.25 * next(16) : (next(50) == 0 ? 40.0 : 0.25 * next(4));
      const double t = r + 0.5 * next(regime == 0 ? 4 : 64), d = 0.5 * (zero ? next(4) : 1 + next(3));
      // (each member's start and holder as the engine's queue keeps them)
      std::vector<double> start_of(static_cast<std::size_t>(n));
      std::vector<StepId> holder_of(static_cast<std::size_t>(n));
      auto book_one = [&](int m) {
        nvls::Queue& q = per[static_cast<std::size_t>(m)];
        q.prune(r);
        StepId h = kNoStep;
        const double st = q.search(t, d, h);
        q.insert(st, st + d, static_cast<StepId>(step));
        several += q.v.size() - q.head > 2 ? 1 : 0;
        start_of[static_cast<std::size_t>(m)] = st;
        holder_of[static_cast<std::size_t>(m)] = h;
        held += h != kNoStep ? 1 : 0;
        return st + d;
      };
      std::vector<double> starts(static_cast<std::size_t>(n), -1);
      std::vector<StepId> holds(static_cast<std::size_t>(n), 12345);
      if (next(2) == 0) {
        double best = -1;
        int who = -1;
        for (int m = 0; m < n; ++m) {
          const double e = book_one(m);
          if (e > best) best = e, who = m;
        }
        const auto [e, m] = alone.shared(r, t, d, static_cast<StepId>(step), starts.data(), holds.data());
        ++shared_uses;
        ASSERT_EQ(e, best) << step;
        ASSERT_EQ(m, who) << step;
        for (std::size_t k = 0; k < starts.size(); ++k) {
          ASSERT_EQ(starts[k], start_of[k]) << step << " member " << k;
          ASSERT_EQ(holds[k], holder_of[k]) << step << " member " << k;
        }
      } else {
        const int m = next(n);
        const double e = book_one(m);
        ASSERT_EQ(alone.own(r, m, t, d, static_cast<StepId>(step), starts.data(), holds.data()), e) << step;
        ASSERT_EQ(starts[0], start_of[static_cast<std::size_t>(m)]) << step;
        ASSERT_EQ(holds[0], holder_of[static_cast<std::size_t>(m)]) << step;
      }
    }
    EXPECT_GT(alone.in_place(), 15000u);  // booked in the array (in place or an empty queue)
    EXPECT_GT(alone.in_slots(), 2500u);   // and in Slots (the queue then gone back to the array)
    EXPECT_GT(several, 2500u);            // with several blocks queued
    // shared()'s inline case (every member one block taking the shortcut)
    // and its other case (any member not: booked by shared_slow) both came up
    EXPECT_GT(alone.shared_in_line(), 4000u);
    EXPECT_GT(shared_uses - alone.shared_in_line(), 1000u);
    EXPECT_GT(held, 15000u);  // uses that queued behind another (a holder recorded)
  }
}

// Members::shared at 8 members (shared8: four pairs in registers): for each
// member w, the latest end tied from w on (the members before w end earlier,
// one of them with no block or one ended by the front), the first latest
// member is w, and every member's start, holder and next booking are the
// per-member queue's; then a use on ended and live blocks alike.
TEST(NvlsAlike, SharedAtEightMembersFirstLatestMember) {
  for (int w = 0; w < 8; ++w) {
    SCOPED_TRACE(fmt::format("latest from member {}", w));
    nvls::Members alone(8, false, true);
    std::vector<nvls::Queue> per(8);
    StepId step = 0;
    auto own = [&](int m, double r, double t, double d) {
      nvls::Queue& q = per[static_cast<std::size_t>(m)];
      q.prune(r);
      StepId h = kNoStep;
      const double st = q.search(t, d, h);
      q.insert(st, st + d, step);
      double s1 = -1;
      StepId h1 = 12345;
      ASSERT_EQ(alone.own(r, m, t, d, step, &s1, &h1), st + d);
      ASSERT_EQ(s1, st);
      ASSERT_EQ(h1, h);
      ++step;
    };
    // member m's block [0, e_m): e_m = 4 from w on, else 1 + m / 4 (member 1
    // never used: no block)
    for (int m = 0; m < 8; ++m)
      if (m != 1 || w <= 1) own(m, 0.0, 0.0, m >= w ? 4.0 : 1.0 + 0.25 * m);
    auto shared = [&](double r, double t, double d, int who_expected) {
      double best = -1;
      int who = -1;
      std::vector<double> start_of(8);
      std::vector<StepId> holder_of(8);
      for (int m = 0; m < 8; ++m) {
        nvls::Queue& q = per[static_cast<std::size_t>(m)];
        q.prune(r);
        StepId h = kNoStep;
        const double st = q.search(t, d, h);
        q.insert(st, st + d, step);
        start_of[static_cast<std::size_t>(m)] = st;
        holder_of[static_cast<std::size_t>(m)] = h;
        if (st + d > best) best = st + d, who = m;
      }
      std::vector<double> starts(8, -1);
      std::vector<StepId> holds(8, 12345);
      const std::size_t in_line = alone.shared_in_line();
      const auto [e, m] = alone.shared(r, t, d, step, starts.data(), holds.data());
      ++step;
      EXPECT_EQ(alone.shared_in_line(), in_line + 1);  // (the inline case)
      ASSERT_EQ(e, best);
      ASSERT_EQ(m, who);
      ASSERT_EQ(m, who_expected);
      for (std::size_t k = 0; k < 8; ++k) {
        ASSERT_EQ(starts[k], start_of[k]) << "member " << k;
        ASSERT_EQ(holds[k], holder_of[k]) << "member " << k;
      }
    };
    // every live block ends after t and starts before t + d: the shortcut
    shared(0.0, 0.5, 1.0, w);
    // the front past the blocks before w (ending by 3.5: [t, t + d), no
    // holder) but not those from w on (ending at 5): the latest is still w's
    shared(3.75, 4.0, 1.0, w);
    for (int m = 0; m < 8; ++m) own(m, 3.75, 4.0, 0.5);  // (each member's own use: their order checked again)
  }
}

// Queue::book and Slots::book (one pass) leave the queue as search() then
// insert() leave it, with the same start and holder: uses on a time grid
// (ties, touching and nested gaps), also of no length (where book() falls
// back to insert()'s own search).
TEST(NvlsAlike, BookIsSearchThenInsert) {
  for (const bool zero : {false, true}) {
    SCOPED_TRACE(zero ? "uses of no length too" : "uses of positive length");
    nvls::Queue qa, qb;
    nvls::Slots sa, sb;
    std::uint64_t rng = 777;
    auto next = [&rng](int k) {
      rng = rng * 6364136223846793005ull + 1442695040888963407ull;
      return static_cast<int>((rng >> 33) % static_cast<std::uint64_t>(k));
    };
    double r = 0;
    std::size_t joined = 0, most = 0, one_block = 0;
    for (int step = 0; step < 20000; ++step) {
      // The ready front never goes back; in every other stretch of 2000 uses
      // it moves about as fast as the uses fill the queue (gaps between
      // blocks), else slower (the queue one long block, book()'s shortcut).
      r += 0.25 * next((step / 2000) % 2 ? 16 : 2);
      qa.prune(r), qb.prune(r), sa.prune(r), sb.prune(r);
      const double t = r + 0.5 * next(64), d = 0.5 * (zero ? next(3) : 1 + next(2));
      if (qa.v.size() - qa.head == 1 && qa.v.back().end > t && qa.v.back().start < t + d) ++one_block;
      StepId ha = kNoStep, hb = kNoStep;
      const double st = qa.search(t, d, ha);
      const std::size_t before = qa.v.size();
      qa.insert(st, st + d, static_cast<StepId>(step));
      if (qa.v.size() <= before) ++joined;
      ASSERT_EQ(qb.book(t, d, static_cast<StepId>(step), hb), st) << step;
      ASSERT_EQ(hb, ha) << step;
      ASSERT_EQ(qa.v.size() - qa.head, qb.v.size() - qb.head) << step;
      for (std::size_t k = 0; k < qa.v.size() - qa.head; ++k) {
        ASSERT_EQ(qa.v[qa.head + k].start, qb.v[qb.head + k].start) << step;
        ASSERT_EQ(qa.v[qa.head + k].end, qb.v[qb.head + k].end) << step;
        ASSERT_EQ(qa.v[qa.head + k].step, qb.v[qb.head + k].step) << step;
      }
      const double ss = sa.search(t, d);
      sa.insert(ss, ss + d);
      ASSERT_EQ(sb.book(t, d), ss) << step;
      ASSERT_EQ(ss, st) << step;
      ASSERT_TRUE(std::equal(sa.v.begin() + static_cast<std::ptrdiff_t>(sa.head), sa.v.end(),
                             sb.v.begin() + static_cast<std::ptrdiff_t>(sb.head), sb.v.end()))
          << step;
      most = std::max(most, qa.v.size() - qa.head);
    }
    EXPECT_GT(joined, 100u);  // joins were exercised
    EXPECT_GT(one_block, 1000u);  // the one-block shortcut was taken
    EXPECT_LT(one_block, 15000u);  // and often not
    
    EXPECT_GT(most, 8u);      // and uses queued in gaps between several blocks
  }
}

// nvls::Ready as a sorted array against it as ready_queue.h's heap: the same
// pops, over random pushes (times on a coarse grid: ties broken by the id;
// mostly not before the last pop, as the engine's, and anywhere now and then)
// and pops, the queue compacted and emptied. Up to 48 items queued the array
// stays sorted; up to 400, a push moves more than kMoves items and the array
// becomes a heap (and still pops the same).
TEST(NvlsAlike, ReadySortedArrayPopsAsTheHeap) {
  for (const std::size_t cap : {std::size_t{48}, std::size_t{400}}) {
    SCOPED_TRACE(fmt::format("up to {} queued", cap));
    nvls::Ready sorted, heap;
    sorted.reset(true);
    heap.reset(false);
    std::uint64_t rng = 99;
    auto next = [&rng](int k) {
      rng = rng * 6364136223846793005ull + 1442695040888963407ull;
      return static_cast<int>((rng >> 33) % static_cast<std::uint64_t>(k));
    };
    StepId id = 0;
    double now = 0;
    std::size_t pops = 0, most = 0, emptied = 0, moved = 0, pops_sorted = 0;
    for (int step = 0; step < 60000; ++step) {
      const bool drain = (step / 3000) % 3 == 2;
      const bool push = sorted.empty() || (!drain && sorted.size() < cap && next(3) < 2) || (drain && next(6) == 0);
      if (push) {
        // Ids not in time order (a step's id is its place in the schedule).
        const StepId i = static_cast<StepId>(next(2) ? id : 1000000 - id);
        ++id;
        const double t = next(20) == 0 ? 0.25 * next(40) : now + 0.25 * next(12);
        if (!sorted.empty() && ready_queue::before(nvls::Ready::Item{t, i}, sorted.v.back())) ++moved;
        sorted.push({t, i});
        heap.push({t, i});
      } else {
        ASSERT_FALSE(heap.empty());
        ASSERT_EQ(sorted.front(), heap.front()) << step;
        pops_sorted += sorted.sorted ? 1 : 0;
        const auto a = sorted.pop(), b = heap.pop();
        ASSERT_EQ(a, b) << step;
        now = std::max(now, a.first);
        ++pops;
        if (sorted.empty()) ++emptied;
      }
      ASSERT_EQ(sorted.size(), heap.size()) << step;
      ASSERT_EQ(sorted.empty(), heap.empty()) << step;
      most = std::max(most, sorted.size());
    }
    EXPECT_GT(pops, 20000u);
    EXPECT_GT(emptied, 5u);    // emptied along the way
    EXPECT_GT(moved, 10000u);  // pushes moved down past later items
    if (cap < nvls::Ready::kMoves) {
      EXPECT_TRUE(sorted.sorted);  // never more than kMoves moves
      EXPECT_EQ(most, cap);
    } else {
      EXPECT_FALSE(sorted.sorted);  // became a heap
      EXPECT_GT(pops_sorted, 0u);   // after popping as an array
      EXPECT_GT(most, 300u);
    }
  }
}

// nvls::DivBy (the fast path's rank from a chunk step's index) against the
// division: every divisor up to 3000 and near powers of two, numerators at
// both ends, at multiples of the divisor and next to them, and at random.
TEST(NvlsAlike, DivByIsTheDivision) {
  std::vector<std::uint32_t> ds;
  for (std::uint32_t d = 1; d <= 3000; ++d) ds.push_back(d);
  for (int b = 12; b < 32; ++b)
    for (std::uint32_t e : {0u, 1u, 2u, 3u}) {
      ds.push_back((std::uint32_t{1} << b) - e);
      ds.push_back((std::uint32_t{1} << b) + e);
    }
  ds.push_back(0xffffffffu);
  ds.push_back(0xfffffffeu);
  std::uint64_t rng = 99;
  auto next32 = [&rng] {
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<std::uint32_t>(rng >> 32);
  };
  std::size_t checked = 0;
  for (const std::uint32_t d : ds) {
    const nvls::DivBy div(d);
    auto check = [&](std::uint32_t x) {
      ASSERT_EQ(div(x), x / d) << x << " / " << d;
      ++checked;
    };
    for (std::uint32_t x : {0u, 1u, 2u, d - 1, d, d + 1, 0xffffffffu, 0xfffffffeu, 0x80000000u, 0x7fffffffu}) check(x);
    for (std::uint32_t q : {1u, 2u, 3u, 1000u, 0xffffffffu / d}) {
      const std::uint64_t m = std::uint64_t{q} * d;
      if (m > 0xffffffffu) continue;
      const auto x = static_cast<std::uint32_t>(m);
      check(x);
      check(x - 1);
      if (x < 0xffffffffu) check(x + 1);
    }
    for (int i = 0; i < 200; ++i) check(next32() >> (i % 24));
  }
  EXPECT_GT(checked, 600000u);
}

// nvls::split_into against build::split: shard sizes from 0 up, near
// multiples of the part count, large and random, 1 to 4096 parts.
TEST(NvlsAlike, SplitIntoIsSplit) {
  std::uint64_t rng = 4242;
  auto next = [&rng] {
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return rng >> 11;
  };
  std::vector<build::Span> out;
  std::size_t pieces = 0;
  for (int parts : {1, 2, 3, 7, 8, 64, 1000, 1024, 4096}) {
    std::vector<std::uint64_t> elems;
    for (std::uint64_t e = 0; e < 50; ++e) elems.push_back(e);
    for (std::uint64_t m : {std::uint64_t{1}, std::uint64_t{5}, std::uint64_t{1} << 20, std::uint64_t{1} << 40})
      for (std::uint64_t e : {m * static_cast<std::uint64_t>(parts) - 1, m * static_cast<std::uint64_t>(parts),
                              m * static_cast<std::uint64_t>(parts) + 1})
        elems.push_back(e);
    for (int i = 0; i < 20; ++i) elems.push_back(next() >> (i % 40));
    for (const std::uint64_t e : elems) {
      nvls::split_into(e, parts, out);
      const std::vector<build::Span> want = build::split(e, parts);
      ASSERT_EQ(out.size(), want.size()) << e << " / " << parts;
      for (std::size_t k = 0; k < want.size(); ++k) {
        ASSERT_EQ(out[k].offset, want[k].offset) << e << " / " << parts << " piece " << k;
        ASSERT_EQ(out[k].count, want[k].count) << e << " / " << parts << " piece " << k;
      }
      pieces += want.size();
    }
  }
  EXPECT_GT(pieces, 100000u);
}

TEST(NvlsAlike, OnlyTheOneSwitchStarIsCandidate) {
  const Collective coll{std::uint64_t{1} << 20, DType::Bf16};
  EXPECT_FALSE(run_analytic_nvls(load_preset("nvl36x2"), coll).has_value());  // two tiers
  EXPECT_FALSE(run_analytic_nvls(load_preset("mesh-8"), coll).has_value());   // no switch
  Config off = load_preset("hgx-h200-8");
  off.sw.nvls.enabled = false;
  EXPECT_FALSE(run_analytic_nvls(off, coll).has_value());
}

// simulate() takes the fast path for the analytic engine and gives what
// booking the compiled schedule gives.
TEST(NvlsAlike, SimulateAgreesWithBookingTheCompiledSchedule) {
  for (const Config& c : {load_preset("hgx-h200-8"), star_of("hgx-b200-8", 64)})
    for (std::uint64_t bytes : {std::uint64_t{64}, std::uint64_t{1} << 20, std::uint64_t{1} << 28}) {
      const Collective coll{bytes, DType::Bf16};
      if (bytes <= (std::uint64_t{1} << 20)) {
        EXPECT_TRUE(run_analytic_nvls(c, coll).has_value());
      }
      const SimResult r = simulate(c, Algorithm::Nvls, coll, EngineId::Analytic);
      const AnalyticResult full = run_analytic(c, compile(c, Algorithm::Nvls, coll));
      EXPECT_EQ(r.time_ns, full.time_ns) << bytes;
      for (int t = 0; t < kTermCount; ++t) EXPECT_EQ(r.breakdown.ns[t], full.breakdown.ns[t]) << "term " << t;
      EXPECT_EQ(r.max_link_bytes, full.max_link_bytes);
    }
}

// Whole numbers below m from a seeded 64-bit LCG: the random points of the NVLS tests below.
struct Draw {
  std::uint64_t seed;
  std::uint64_t operator()(std::uint64_t m) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    return (seed >> 33) % m;
  }
};

// The periodic jump (nvls_alike.cc; docs/model.md section 3): with it, the
// result is the booking's without it, to the last bit (time, every breakdown
// term, the critical path, max_link_bytes, every step's start and finish), on
// random NVLS points: 2-16 GPUs (members alone), 4 MiB - 1 GiB and odd sizes,
// four presets, slow and fast NVLS units, serialised launches, fp32.
TEST(NvlsAlike, PeriodicJumpEqualsBookingEverything) {
  Draw next{0x243f6a8885a308d3ull};
  const char* presets[] = {"hgx-h200-8", "hgx-b200-8", "hgx-h100-8", "gb200-nvl72"};
  int jumped_points = 0, points = 0;
  for (int k = 0; k < 48; ++k) {
    // Mostly 2, 4, 8 or 16 GPUs and whole powers of two (chunks of one size: where the jump applies).
    const int gpus = next(4) != 0 ? 2 << next(4) : 2 + static_cast<int>(next(15));
    Config c = star_of(presets[next(4)], gpus);
    switch (next(5)) {
      case 0: c.tuning.nvls_reduce_GBps = 150 + static_cast<double>(next(300)); break;  // the unit about a port's rate
      case 1:
        set_param(c, "accelerator.gpus_per_process", 4);
        set_param(c, "accelerator.launch_serial_ns", 700);
        break;
      case 2: set_param(c, "switch.nvls.efficiency", 0.7); break;
      default: break;
    }
    validate(c);
    const std::uint64_t bytes = (std::uint64_t{1} << (22 + next(9))) + (next(4) != 0 ? 0 : 4 * next(100000));
    const Collective coll{bytes, next(4) == 0 ? DType::Fp32 : DType::Bf16};
    int jumped = -1, none = -1;
    const auto a = run_analytic_nvls_jump(c, coll, true, true, &jumped);
    const auto b = run_analytic_nvls_jump(c, coll, true, false, &none);
    ASSERT_TRUE(a && b) << gpus << " GPUs, " << bytes << " B";
    ASSERT_EQ(none, 0);
    ASSERT_EQ(a->time_ns, b->time_ns) << gpus << " GPUs, " << bytes << " B, jumped " << jumped;
    for (int t = 0; t < kTermCount; ++t) ASSERT_EQ(a->breakdown.ns[t], b->breakdown.ns[t]) << "term " << t;
    ASSERT_EQ(a->critical_path, b->critical_path);
    ASSERT_EQ(a->max_link_bytes, b->max_link_bytes);
    ASSERT_EQ(a->steps.size(), b->steps.size());
    for (std::size_t i = 0; i < a->steps.size(); ++i) {
      ASSERT_EQ(a->steps[i].start_ns, b->steps[i].start_ns) << "step " << i;
      ASSERT_EQ(a->steps[i].finish_ns, b->steps[i].finish_ns) << "step " << i;
    }
    ++points;
    jumped_points += jumped > 0;
  }
  EXPECT_EQ(points, 48);
  EXPECT_GE(jumped_points, 15);  // (the draw: 22 of 48 jump)
}

// Where the pipeline repeats (section 52 of docs/performance.md: every 2
// chunks from chunk ~27-34 at 8 GPUs, ~99 at 16), the jump is taken and skips
// all but the transient and the last chunks; the result is the booking's
// without it. At 64 GPUs (member groups) it does not apply.
TEST(NvlsAlike, PeriodicJumpTakenWhereThePipelineRepeats) {
  struct Case {
    const char* preset;
    int gpus;
    std::uint64_t bytes;
    int at_least;  // chunks per rank jumped
  };
  for (const Case& k : {Case{"hgx-h200-8", 8, std::uint64_t{1} << 30, 950}, Case{"hgx-h200-8", 8, std::uint64_t{1} << 26, 20},
                        Case{"hgx-b200-8", 8, std::uint64_t{1} << 30, 950}, Case{"hgx-h100-8", 16, std::uint64_t{1} << 30, 380},
                        Case{"hgx-h200-8", 64, std::uint64_t{1} << 28, 0}}) {
    const Config c = star_of(k.preset, k.gpus);
    const Collective coll{k.bytes, DType::Bf16};
    int jumped = -1;
    const auto a = run_analytic_nvls_jump(c, coll, false, true, &jumped);
    const auto b = run_analytic_nvls_jump(c, coll, false, false);
    ASSERT_TRUE(a && b);
    if (k.at_least > 0) {
      EXPECT_GE(jumped, k.at_least) << k.preset << " " << k.gpus << " " << k.bytes;
    } else {
      EXPECT_EQ(jumped, 0) << k.preset << " " << k.gpus;
    }
    EXPECT_EQ(a->time_ns, b->time_ns) << k.preset << " " << k.gpus << " " << k.bytes;
    for (int t = 0; t < kTermCount; ++t) EXPECT_EQ(a->breakdown.ns[t], b->breakdown.ns[t]) << "term " << t;
    EXPECT_EQ(a->critical_path, b->critical_path);
  }
}

// The critical path through the jumped chunks (nvls_walk.h): the member
// replays skip the copies where their queues repeat, and the walk repeats its
// stretch through one period as far as every record it reads translates. The
// result is the walk's through everything booked, bit for bit: the time,
// every term, the critical path (every step on it), every step's timing.
TEST(NvlsAlike, WalkRepeatEqualsWalkingEverything) {
  Draw next{0x13198a2e03707344ull};
  const char* presets[] = {"hgx-h200-8", "hgx-b200-8", "hgx-h100-8", "gb200-nvl72"};
  int repeated_points = 0, skipped_points = 0;
  for (int k = 0; k < 40; ++k) {
    const int gpus = 2 << next(4);  // 2, 4, 8, 16: chunks of one size
    Config c = star_of(presets[next(4)], gpus);
    switch (next(5)) {
      case 0: c.tuning.nvls_reduce_GBps = 150 + static_cast<double>(next(300)); break;
      case 1:
        set_param(c, "accelerator.gpus_per_process", 4);
        set_param(c, "accelerator.launch_serial_ns", 700);
        break;
      case 2: set_param(c, "switch.nvls.efficiency", 0.7); break;
      default: break;
    }
    validate(c);
    const std::uint64_t bytes = std::uint64_t{1} << (25 + next(6));  // 32 MiB - 1 GiB
    const Collective coll{bytes, next(4) == 0 ? DType::Fp32 : DType::Bf16};
    int jumped = -1, repeats[2] = {-1, -1};
    const auto a = run_analytic_nvls_jump(c, coll, k % 2 == 0, true, &jumped, repeats);
    const auto b = run_analytic_nvls_jump(c, coll, k % 2 == 0, false);
    ASSERT_TRUE(a && b) << gpus << " GPUs, " << bytes << " B";
    ASSERT_EQ(a->time_ns, b->time_ns) << gpus << " GPUs, " << bytes << " B";
    for (int t = 0; t < kTermCount; ++t) ASSERT_EQ(a->breakdown.ns[t], b->breakdown.ns[t]) << "term " << t;
    ASSERT_EQ(a->critical_path, b->critical_path) << gpus << " GPUs, " << bytes << " B, repeated " << repeats[0];
    ASSERT_EQ(a->steps.size(), b->steps.size());
    for (std::size_t i = 0; i < a->steps.size(); ++i) {
      ASSERT_EQ(a->steps[i].start_ns, b->steps[i].start_ns) << "step " << i;
      ASSERT_EQ(a->steps[i].finish_ns, b->steps[i].finish_ns) << "step " << i;
    }
    if (jumped == 0) {
      EXPECT_EQ(repeats[0] + repeats[1], 0);
    }
    repeated_points += repeats[0] > 0;
    skipped_points += repeats[1] > 0;
  }
  EXPECT_GE(repeated_points, 15);
  EXPECT_GE(skipped_points, 15);
}

// Where a member's queue does not repeat over the reference period (it has
// repeated wherever the jump was taken so far, docs/performance.md section
// 61), its replay books the copies: their records are written on demand and
// the walk goes through them step by step. Forced here: the same result.
TEST(NvlsAlike, ReplaysBookingTheCopiesEqualWalkingEverything) {
  struct Case {
    const char* preset;
    int gpus;
    std::uint64_t bytes;
  };
  for (const Case& k : {Case{"hgx-h200-8", 8, std::uint64_t{1} << 30}, Case{"hgx-b200-8", 8, std::uint64_t{1} << 28},
                        Case{"hgx-h200-8", 4, std::uint64_t{1} << 26}, Case{"hgx-h100-8", 16, std::uint64_t{1} << 30},
                        Case{"gb200-nvl72", 2, std::uint64_t{1} << 28}}) {
    const Config c = star_of(k.preset, k.gpus);
    const Collective coll{k.bytes, DType::Bf16};
    int jumped = -1, repeats[2] = {-1, -1};
    const auto a = run_analytic_nvls_jump(c, coll, false, true, &jumped, repeats, false);
    const auto b = run_analytic_nvls_jump(c, coll, false, false);
    ASSERT_TRUE(a && b);
    EXPECT_GT(jumped, 0) << k.preset << " " << k.gpus;
    EXPECT_EQ(repeats[1], 0);  // no replay skipped
    EXPECT_EQ(a->time_ns, b->time_ns) << k.preset << " " << k.gpus;
    for (int t = 0; t < kTermCount; ++t) EXPECT_EQ(a->breakdown.ns[t], b->breakdown.ns[t]) << "term " << t;
    EXPECT_EQ(a->critical_path, b->critical_path) << k.preset << " " << k.gpus;
  }
}

// At 8 GPUs and 1 GiB the walk repeats through nearly all the jumped chunks.
TEST(NvlsAlike, WalkRepeatTakenAtOneGiB) {
  for (const char* preset : {"hgx-h200-8", "hgx-b200-8"}) {
    const Config c = star_of(preset, 8);
    const Collective coll{std::uint64_t{1} << 30, DType::Bf16};
    int jumped = -1, repeats[2] = {-1, -1};
    const auto a = run_analytic_nvls_jump(c, coll, false, true, &jumped, repeats);
    const auto b = run_analytic_nvls_jump(c, coll, false, false);
    ASSERT_TRUE(a && b);
    EXPECT_GE(jumped, 950);
    EXPECT_GE(repeats[0] * 2, 900) << preset;  // periods of 2 chunks
    EXPECT_GE(repeats[1], 1) << preset;
    EXPECT_EQ(a->time_ns, b->time_ns);
    for (int t = 0; t < kTermCount; ++t) EXPECT_EQ(a->breakdown.ns[t], b->breakdown.ns[t]) << "term " << t;
    EXPECT_EQ(a->critical_path, b->critical_path);
  }
}

// It polls the stop token every 1024 steps.
TEST(NvlsAlike, StopsWithCancelled) {
  std::stop_source src;
  RunContext ctx{src.get_token(), [&](double) { src.request_stop(); }};
  EXPECT_THROW(run_analytic_nvls(star_of("hgx-h200-8", 1024), {std::uint64_t{1} << 20, DType::Bf16}, ctx), Cancelled);
}
