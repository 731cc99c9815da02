// Fabric graph files (`fabric.graph_file`): the JSON reader, the node/link
// parser, the checks (radix, connectivity, explicit routes that loop or lead
// nowhere) and routing between every pair of the first accelerators. A graph
// that passes the checks must route every such pair along linked nodes.
#include <algorithm>
#include <cstdlib>

#include "base/json_input.h"
#include "fabric/graph.h"
#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text = scin::fuzz::as_string(data, size);
  scin::fuzz::expect_ok_or_error([&] {
    const scin::FabricGraph g = scin::fabric_graph_from_json(scin::parse_json_text(text, "graph"), "graph");
    (void)scin::ports_used(g);
    scin::check_fabric(g);
    scin::FabricRouter router(g);
    std::vector<int> accs;
    for (std::size_t i = 0; i < g.nodes.size() && accs.size() < 8; ++i)
      if (g.nodes[i].kind == scin::FabricNodeKind::Accelerator) accs.push_back(static_cast<int>(i));
    for (int a : accs)
      for (int b : accs) {
        if (a == b) continue;
        const std::vector<int> path = router.route(a, b);
        if (path.size() < 2 || path.front() != a || path.back() != b) std::abort();
        for (std::size_t k = 1; k < path.size(); ++k) {
          const bool linked = std::any_of(g.links.begin(), g.links.end(), [&](const scin::FabricLink& l) {
            return (l.a == path[k - 1] && l.b == path[k]) || (l.b == path[k - 1] && l.a == path[k]);
          });
          if (!linked) std::abort();
        }
      }
  });
  return 0;
}
