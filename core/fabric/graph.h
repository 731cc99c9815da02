// The fabric as a graph (issue 16): accelerators, switches with a port count
// and capabilities, links with bandwidth and latency, tiers; routing (shortest
// path, deterministic ECMP over equal-cost next hops, or explicit forwarding
// entries); and the checks a fabric must pass (radix, connectivity, no routing
// loop).
//
// Two sources of graphs:
//   - fabric_graph(cfg): the generator's graph (star, mesh, two-tier) from the
//     `fabric.*` parameters. Node ids are the schedule's node ids (accelerators
//     0..gpus-1, then switches plane by plane), so the UI can draw a run's links.
//   - fabric_graph_from_json(): a node/link list for anything else (format in
//     docs/model.md, "Fabric graphs"); checked and drawn, not simulated (the
//     engines run the generators).
// This is the API the topology view draws from: nodes with tier and plane,
// links with endpoints and per-direction bandwidth.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "fabric/config.h"

namespace scin {

enum class FabricNodeKind { Accelerator, Switch };

struct FabricNode {
  std::string name;                    // "r3", "plane0", "p0.leaf1", "p0.spine0", or as a JSON fabric names it
  FabricNodeKind kind = FabricNodeKind::Accelerator;
  int tier = 0;                        // 0 accelerators, 1 star plane switch or leaf, 2 spine, ...
  int plane = -1;                      // switch plane (-1: an accelerator, or not known)
  int ports = 0;                       // switches: radix (ports it has)
  bool nvls = false, isa = false, inq = false;  // switch capabilities
};

struct FabricLink {
  int a = 0, b = 0;                    // node indices; the link is full duplex
  double bandwidth_GBps = 0;           // per direction (all its ports together)
  double latency_ns = 0;
  int ports = 1;                       // ports it takes at each end (a bundle of parallel links)
};

/// An explicit forwarding entry: at node `at`, traffic for `dst` goes to `next`.
struct FabricRoute {
  int at = 0, dst = 0, next = 0;
};

struct FabricGraph {
  std::string name;                    // for messages: the preset or file
  std::vector<FabricNode> nodes;
  std::vector<FabricLink> links;
  std::vector<FabricRoute> routes;     // empty: shortest paths everywhere
  int accelerators() const;
  int switches() const { return static_cast<int>(nodes.size()) - accelerators(); }
  int tiers() const;                   // highest tier + 1
};

/// Deterministic ECMP: which of `n` equal-cost next hops the flow (src, dst)
/// takes (a splitmix64 hash of the pair; the same answer every run). Inline:
/// the two-tier bookings ask it once per pair, a million times at 1024 GPUs
/// (a power-of-two `n` takes the remainder as a mask, the same value).
inline int ecmp_pick(int src, int dst, int n) {
  if (n <= 1) return 0;
  std::uint64_t z = (static_cast<std::uint64_t>(static_cast<std::uint32_t>(src)) << 32) ^ static_cast<std::uint32_t>(dst);
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  const auto m = static_cast<std::uint64_t>(n);
  return static_cast<int>((m & (m - 1)) == 0 ? z & (m - 1) : z % m);
}

/// The generator's graph for `cfg` (star, mesh or two-tier).
FabricGraph fabric_graph(const Config& cfg);

/// Parses a node/link list; throws Error naming `origin` and the bad field.
FabricGraph fabric_graph_from_json(const nlohmann::json& j, const std::string& origin);
FabricGraph load_fabric_graph(const std::filesystem::path& file);

/// Ports each node uses (sum of its links' ports; 64-bit: a million links of
/// 100000 ports each do not overflow).
std::vector<std::int64_t> ports_used(const FabricGraph& g);

/// Throws Error (one line) for a switch with fewer ports than its links use,
/// a disconnected fabric, or an explicit route that loops or leads nowhere.
/// Cost: one search from the first accelerator, and with explicit routes one
/// search per accelerator they lead to plus a walk from every accelerator to
/// it (at most kMaxRouteWalks walks: more is refused, naming `routes`).
void check_fabric(const FabricGraph& g);

/// The most walks check_fabric() makes to check explicit routes (their
/// destinations x accelerators): about a second of CPU.
inline constexpr std::int64_t kMaxRouteWalks = 4'000'000;

/// Checks the generator's radix and shape rules from the parameters alone
/// (no graph is built): a star plane switch needs `gpus` ports, a leaf its
/// accelerators plus uplinks, a spine leaves x uplinks_per_leaf / spines.
void check_fabric_shape(const Config& cfg);

/// Uplinks per leaf the two-tier generator uses (fabric.uplinks_per_leaf, 0: one per local accelerator).
int uplinks_per_leaf(const Config& cfg);

/// Routing on a graph: explicit entries where the graph has them, else the
/// shortest path, choosing among equal-cost next hops by a hash of the flow
/// (source, destination): deterministic ECMP.
class FabricRouter {
 public:
  explicit FabricRouter(const FabricGraph& g);
  /// Node indices from `src` to `dst`, both included. Throws Error for an
  /// unreachable destination or a routing loop (naming the nodes).
  std::vector<int> route(int src, int dst) const;
  /// The same with `dist` = distances_to(dst), for many sources to one destination.
  std::vector<int> route(int src, int dst, const std::vector<int>& dist) const;
  /// Hops from each node to `dst` through switches (-1: it cannot reach it).
  std::vector<int> distances_to(int dst) const;

 private:
  const FabricGraph& g_;
  std::vector<std::vector<int>> adj_;          // neighbours, sorted
  std::vector<std::vector<std::pair<int, int>>> explicit_;  // [at] -> (destination, next hop), by destination
};

}  // namespace scin
