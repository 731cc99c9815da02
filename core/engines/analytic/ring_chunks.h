// The ring's chunks in the chunks' frame (ring_alike.cc's two chunk sizes,
// ring_sparse.cc's full and empty chunks). Internal to the analytic engine.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace scin::analytic_detail {

/// Per chunk c, how many chunks on (c, c+1, ... cyclically) the nearest one
/// with `marked` set is (0: c itself); empty if none is marked. Two passes
/// from the last chunk down: the second carries the first marked chunk round.
inline std::vector<int> chunks_to_marked(const std::vector<std::uint8_t>& marked) {
  const std::size_t n = marked.size();
  std::vector<int> to(n, 0);
  std::size_t next = n;
  for (int pass = 0; pass < 2; ++pass)
    for (std::size_t c = n; c-- > 0;) {
      if (marked[c]) next = c;
      if (next < n) to[c] = static_cast<int>(next >= c ? next - c : next + n - c);
    }
  if (next == n) to.clear();
  return to;
}

}  // namespace scin::analytic_detail
