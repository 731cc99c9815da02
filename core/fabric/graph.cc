#include "fabric/graph.h"

#include <algorithm>
#include <deque>
#include <map>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "base/json_input.h"

namespace scin {
namespace {

FabricNode switch_node(const Config& cfg, std::string name, int tier, int plane) {
  FabricNode n;
  n.name = std::move(name);
  n.kind = FabricNodeKind::Switch;
  n.tier = tier;
  n.plane = plane;
  n.ports = cfg.sw.ports;
  n.nvls = cfg.sw.nvls.enabled;
  n.isa = cfg.sw.isa.enabled;
  n.inq = cfg.sw.isa.enabled && cfg.sw.isa.inq;
  return n;
}

}  // namespace

int FabricGraph::accelerators() const {
  return static_cast<int>(std::count_if(nodes.begin(), nodes.end(),
                                        [](const FabricNode& n) { return n.kind == FabricNodeKind::Accelerator; }));
}

int FabricGraph::tiers() const {
  int t = 0;
  for (const auto& n : nodes) t = std::max(t, n.tier);
  return t + 1;
}

int uplinks_per_leaf(const Config& cfg) {
  const auto& f = cfg.fabric;
  return f.uplinks_per_leaf > 0 ? f.uplinks_per_leaf : f.gpus / std::max(1, f.leaves);
}

FabricGraph fabric_graph(const Config& cfg) {
  check_fabric_shape(cfg);
  const auto& f = cfg.fabric;
  FabricGraph g;
  g.name = cfg.name;
  for (int r = 0; r < f.gpus; ++r) g.nodes.push_back({fmt::format("r{}", r)});
  const double lat = cfg.links.latency_ns;
  if (f.topology == Topology::Mesh) {
    const double bw = cfg.links.bandwidth_GBps / std::max(1, f.gpus - 1);
    for (int a = 0; a < f.gpus; ++a)
      for (int b = a + 1; b < f.gpus; ++b) g.links.push_back({a, b, bw, lat, 1});
    return g;
  }
  const double port_bw = cfg.links.bandwidth_GBps / f.planes;
  if (f.topology == Topology::Star) {
    for (int p = 0; p < f.planes; ++p) {
      const int sw = static_cast<int>(g.nodes.size());
      g.nodes.push_back(switch_node(cfg, fmt::format("plane{}", p), 1, p));
      for (int r = 0; r < f.gpus; ++r) g.links.push_back({r, sw, port_bw, lat, 1});
    }
    return g;
  }
  const int per_leaf = f.gpus / f.leaves;
  const int up = uplinks_per_leaf(cfg);
  const double trunk_bw = port_bw * per_leaf / f.oversubscription / f.spines;
  for (int p = 0; p < f.planes; ++p) {
    const int first = static_cast<int>(g.nodes.size());
    for (int l = 0; l < f.leaves; ++l) g.nodes.push_back(switch_node(cfg, fmt::format("p{}.leaf{}", p, l), 1, p));
    for (int s = 0; s < f.spines; ++s) g.nodes.push_back(switch_node(cfg, fmt::format("p{}.spine{}", p, s), 2, p));
    for (int r = 0; r < f.gpus; ++r) g.links.push_back({r, first + r / per_leaf, port_bw, lat, 1});
    for (int l = 0; l < f.leaves; ++l)
      for (int s = 0; s < f.spines; ++s) g.links.push_back({first + l, first + f.leaves + s, trunk_bw, lat, up / f.spines});
  }
  return g;
}

void check_fabric_shape(const Config& cfg) {
  const auto& f = cfg.fabric;
  const int ports = cfg.sw.ports;
  if (f.topology == Topology::Star && f.gpus > ports)
    throw Error(fmt::format("fabric: switch plane0 needs {} ports ({} accelerators) but has {} (switch.ports)",
                            f.gpus, f.gpus, ports));
  if (f.topology != Topology::TwoTier) return;
  if (f.gpus % f.leaves != 0)
    throw Error(fmt::format("fabric.leaves: {} accelerators do not split evenly over {} leaves", f.gpus, f.leaves));
  const int per_leaf = f.gpus / f.leaves;
  const int up = uplinks_per_leaf(cfg);
  if (up % f.spines != 0)
    throw Error(fmt::format("fabric.uplinks_per_leaf: {} uplinks do not spread evenly over {} spines", up, f.spines));
  if (per_leaf + up > ports)
    throw Error(fmt::format("fabric: leaf switch p0.leaf0 needs {} ports ({} accelerators + {} uplinks) but has {} "
                            "(switch.ports)", per_leaf + up, per_leaf, up, ports));
  if (f.leaves * (up / f.spines) > ports)
    throw Error(fmt::format("fabric: spine switch p0.spine0 needs {} ports ({} leaves x {} uplinks) but has {} "
                            "(switch.ports)", f.leaves * (up / f.spines), f.leaves, up / f.spines, ports));
}

std::vector<std::int64_t> ports_used(const FabricGraph& g) {
  std::vector<std::int64_t> used(g.nodes.size(), 0);
  for (const auto& l : g.links) {
    used[static_cast<std::size_t>(l.a)] += l.ports;
    used[static_cast<std::size_t>(l.b)] += l.ports;
  }
  return used;
}

// ------------------------------------------------------------ JSON node/link lists

FabricGraph fabric_graph_from_json(const nlohmann::json& j, const std::string& origin) {
  auto fail = [&](const std::string& what) { throw Error(fmt::format("{}: {}", origin, what)); };
  if (!j.is_object()) fail("a fabric graph is an object with \"nodes\" and \"links\"");
  if (!j.contains("nodes") || !j["nodes"].is_array() || j["nodes"].empty()) fail("nodes: a non-empty array is required");
  if (!j.contains("links") || !j["links"].is_array()) fail("links: an array is required");
  if (j["nodes"].size() > 100000 || j["links"].size() > 1000000) fail("more than 100000 nodes or 1000000 links");
  FabricGraph g;
  g.name = origin;
  std::map<std::string, int> index;
  auto str = [&](const nlohmann::json& o, const char* key, const std::string& where) {
    if (!o.contains(key) || !o[key].is_string()) fail(fmt::format("{}.{}: a string is required", where, key));
    return o[key].get<std::string>();
  };
  auto num = [&](const nlohmann::json& o, const char* key, const std::string& where, double lo, double hi, double def) {
    if (!o.contains(key)) return def;
    if (!o[key].is_number()) fail(fmt::format("{}.{}: a number is required", where, key));
    const double v = o[key].get<double>();
    if (!(v >= lo && v <= hi)) fail(fmt::format("{}.{}: {} is out of range {}..{}", where, key, v, lo, hi));
    return v;
  };
  auto flag = [&](const nlohmann::json& o, const char* key, const std::string& where) {
    if (!o.contains(key)) return false;
    if (!o[key].is_boolean()) fail(fmt::format("{}.{}: true or false is required", where, key));
    return o[key].get<bool>();
  };
  for (std::size_t i = 0; i < j["nodes"].size(); ++i) {
    const auto& o = j["nodes"][i];
    const std::string where = fmt::format("nodes[{}]", i);
    if (!o.is_object()) fail(where + ": an object is required");
    FabricNode n;
    n.name = str(o, "name", where);
    const std::string kind = str(o, "kind", where);
    if (kind == "switch") n.kind = FabricNodeKind::Switch;
    else if (kind != "accelerator") fail(fmt::format("{}.kind: '{}'; allowed accelerator, switch", where, kind));
    n.tier = static_cast<int>(num(o, "tier", where, 0, 16, n.kind == FabricNodeKind::Switch ? 1 : 0));
    n.plane = static_cast<int>(num(o, "plane", where, -1, 1024, -1));
    if (n.kind == FabricNodeKind::Switch) {
      if (!o.contains("ports")) fail(where + ".ports: a switch needs its port count");
      n.ports = static_cast<int>(num(o, "ports", where, 1, 100000, 0));
      n.nvls = flag(o, "nvls", where);
      n.isa = flag(o, "isa", where);
      n.inq = flag(o, "inq", where);
    }
    if (!index.emplace(n.name, static_cast<int>(g.nodes.size())).second)
      fail(fmt::format("{}.name: '{}' is used twice", where, n.name));
    g.nodes.push_back(std::move(n));
  }
  auto node = [&](const nlohmann::json& o, const char* key, const std::string& where) {
    const std::string name = str(o, key, where);
    auto it = index.find(name);
    if (it == index.end()) fail(fmt::format("{}.{}: no node named '{}'", where, key, name));
    return it->second;
  };
  for (std::size_t i = 0; i < j["links"].size(); ++i) {
    const auto& o = j["links"][i];
    const std::string where = fmt::format("links[{}]", i);
    if (!o.is_object()) fail(where + ": an object is required");
    FabricLink l;
    l.a = node(o, "a", where);
    l.b = node(o, "b", where);
    if (l.a == l.b) fail(fmt::format("{}: links node '{}' to itself", where, g.nodes[l.a].name));
    if (!o.contains("bandwidth_GBps")) fail(where + ".bandwidth_GBps: required");
    l.bandwidth_GBps = num(o, "bandwidth_GBps", where, 1e-3, 1e7, 0);
    l.latency_ns = num(o, "latency_ns", where, 0, 1e7, 100);
    l.ports = static_cast<int>(num(o, "ports", where, 1, 100000, 1));
    g.links.push_back(l);
  }
  if (j.contains("routes")) {
    if (!j["routes"].is_array()) fail("routes: an array is required");
    if (j["routes"].size() > 1000000) fail(fmt::format("routes: {} entries; allowed at most 1000000", j["routes"].size()));
    for (std::size_t i = 0; i < j["routes"].size(); ++i) {
      const auto& o = j["routes"][i];
      const std::string where = fmt::format("routes[{}]", i);
      if (!o.is_object()) fail(where + ": an object is required");
      g.routes.push_back({node(o, "at", where), node(o, "dst", where), node(o, "next", where)});
    }
  }
  return g;
}

FabricGraph load_fabric_graph(const std::filesystem::path& file) {
  return fabric_graph_from_json(read_json_document(file), file.string());
}

// ------------------------------------------------------------ routing and checks

FabricRouter::FabricRouter(const FabricGraph& g) : g_(g), adj_(g.nodes.size()), explicit_(g.nodes.size()) {
  for (const auto& l : g.links) {
    adj_[static_cast<std::size_t>(l.a)].push_back(l.b);
    adj_[static_cast<std::size_t>(l.b)].push_back(l.a);
  }
  for (auto& a : adj_) {
    std::sort(a.begin(), a.end());
    a.erase(std::unique(a.begin(), a.end()), a.end());
  }
  // Per node its entries as (destination, next hop), sorted by destination; of
  // two entries for one destination the later in the file counts.
  for (const auto& r : g.routes) explicit_[static_cast<std::size_t>(r.at)].emplace_back(r.dst, r.next);
  for (auto& e : explicit_) {
    std::stable_sort(e.begin(), e.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
    std::size_t kept = 0;
    for (std::size_t i = 0; i < e.size(); ++i) {
      if (i + 1 < e.size() && e[i + 1].first == e[i].first) continue;  // (a later entry for the same destination)
      e[kept++] = e[i];
    }
    e.resize(kept);
  }
}

std::vector<int> FabricRouter::distances_to(int dst) const {
  std::vector<int> d(g_.nodes.size(), -1);
  std::deque<int> q{dst};
  d[static_cast<std::size_t>(dst)] = 0;
  while (!q.empty()) {
    const int u = q.front();
    q.pop_front();
    for (int v : adj_[static_cast<std::size_t>(u)])
      if (d[static_cast<std::size_t>(v)] < 0) {
        d[static_cast<std::size_t>(v)] = d[static_cast<std::size_t>(u)] + 1;
        // Only switches forward: an accelerator is a path's end, never a hop.
        if (g_.nodes[static_cast<std::size_t>(v)].kind == FabricNodeKind::Switch) q.push_back(v);
      }
  }
  return d;
}

std::vector<int> FabricRouter::route(int src, int dst) const { return route(src, dst, distances_to(dst)); }

std::vector<int> FabricRouter::route(int src, int dst, const std::vector<int>& dist) const {
  const auto& name = [&](int n) -> const std::string& { return g_.nodes[static_cast<std::size_t>(n)].name; };
  if (dist[static_cast<std::size_t>(src)] < 0)
    throw Error(fmt::format("{}: {} cannot reach {} (the fabric is disconnected)", g_.name, name(src), name(dst)));
  std::vector<int> path{src};
  // Nodes already on the path: searched in the path while it is short (a
  // walk costs its length, not the fabric's size: check_fabric walks up to
  // kMaxRouteWalks of them), marked in `seen` once it is long.
  constexpr std::size_t kShortPath = 32;
  std::vector<char> seen;
  auto on_path = [&](int v) {
    if (path.size() <= kShortPath) return std::find(path.begin(), path.end(), v) != path.end();
    if (seen.empty()) {
      seen.assign(g_.nodes.size(), 0);
      for (int u : path) seen[static_cast<std::size_t>(u)] = 1;
    }
    return seen[static_cast<std::size_t>(v)] != 0;
  };
  int cur = src;
  while (cur != dst) {
    int next = -1;
    const auto& entries = explicit_[static_cast<std::size_t>(cur)];
    const auto e = std::lower_bound(entries.begin(), entries.end(), dst, [](const auto& x, int d) { return x.first < d; });
    if (e != entries.end() && e->first == dst) next = e->second;
    if (next >= 0) {
      const auto& a = adj_[static_cast<std::size_t>(cur)];
      if (!std::binary_search(a.begin(), a.end(), next))
        throw Error(fmt::format("{}: route at {} for {} leads to {}, which is not linked to it", g_.name, name(cur),
                                name(dst), name(next)));
    } else {
      std::vector<int> best;
      for (int v : adj_[static_cast<std::size_t>(cur)])
        if (dist[static_cast<std::size_t>(v)] >= 0 &&
            dist[static_cast<std::size_t>(v)] == dist[static_cast<std::size_t>(cur)] - 1 &&
            (v == dst || g_.nodes[static_cast<std::size_t>(v)].kind == FabricNodeKind::Switch))
          best.push_back(v);
      if (best.empty())
        throw Error(fmt::format("{}: {} cannot reach {} (the fabric is disconnected)", g_.name, name(cur), name(dst)));
      next = best[static_cast<std::size_t>(ecmp_pick(src, dst, static_cast<int>(best.size())))];
    }
    if (on_path(next)) {
      path.push_back(next);
      std::vector<std::string> names;
      auto it = std::find(path.begin(), path.end(), next);
      for (; it != path.end(); ++it) names.push_back(name(*it));
      throw Error(fmt::format("{}: routing loop from {} to {}: {}", g_.name, name(src), name(dst), fmt::join(names, " -> ")));
    }
    path.push_back(next);
    if (!seen.empty()) seen[static_cast<std::size_t>(next)] = 1;
    if (next != dst && g_.nodes[static_cast<std::size_t>(next)].kind != FabricNodeKind::Switch)
      throw Error(fmt::format("{}: route from {} to {} passes through accelerator {}", g_.name, name(src), name(dst), name(next)));
    cur = next;
  }
  return path;
}

void check_fabric(const FabricGraph& g) {
  const auto used = ports_used(g);
  for (std::size_t i = 0; i < g.nodes.size(); ++i) {
    const auto& n = g.nodes[i];
    if (n.kind == FabricNodeKind::Switch && used[i] > n.ports)
      throw Error(fmt::format("{}: switch {} needs {} ports but has {}", g.name, n.name, used[i], n.ports));
  }
  if (g.accelerators() < 2) throw Error(fmt::format("{}: a fabric needs at least 2 accelerators", g.name));
  FabricRouter router(g);
  std::vector<int> accs;
  for (std::size_t i = 0; i < g.nodes.size(); ++i)
    if (g.nodes[i].kind == FabricNodeKind::Accelerator) accs.push_back(static_cast<int>(i));
  // Every accelerator reaches the first one: one search from it (a walk from
  // each was O(A N): minutes at 10^5 nodes).
  const std::vector<int> to_first = router.distances_to(accs[0]);
  for (int a : accs)
    if (to_first[static_cast<std::size_t>(a)] < 0)
      throw Error(fmt::format("{}: {} cannot reach {} (the fabric is disconnected)", g.name,
                              g.nodes[static_cast<std::size_t>(a)].name, g.nodes[static_cast<std::size_t>(accs[0])].name));
  // Explicit routes: a walk to a destination without entries of its own
  // follows shortest paths (one hop nearer each time: no loop, no dead end
  // where the first search passed), so only the accelerators the entries
  // lead to are walked to, from every accelerator (every pair was walked
  // before: 4000 accelerators and one entry took minutes).
  std::vector<char> is_dst(g.nodes.size(), 0);
  for (const auto& r : g.routes) is_dst[static_cast<std::size_t>(r.dst)] = 1;
  std::int64_t dsts = 0;
  for (int b : accs) dsts += is_dst[static_cast<std::size_t>(b)];
  const auto n_accs = static_cast<std::int64_t>(accs.size());
  if (dsts * (n_accs - 1) > kMaxRouteWalks)
    throw Error(fmt::format("{}: routes: entries lead to {} accelerators of {}: {} paths to check, above the limit of {}; "
                            "give explicit entries for fewer destinations",
                            g.name, dsts, n_accs, dsts * (n_accs - 1), kMaxRouteWalks));
  for (int b : accs) {
    if (!is_dst[static_cast<std::size_t>(b)]) continue;
    const std::vector<int> dist = router.distances_to(b);
    for (int a : accs)
      if (a != b) router.route(a, b, dist);
  }
}

}  // namespace scin
