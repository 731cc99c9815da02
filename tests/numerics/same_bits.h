// Bit-for-bit equality of per-rank float arrays (vectors or spans), for the
// numerics tests that compare a fast path with the straightforward one.
#pragma once

#include <cstddef>
#include <cstring>
#include <vector>

namespace scin::numerics_test {

template <class RowA, class RowB>
bool same_bits(const std::vector<RowA>& a, const std::vector<RowB>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t r = 0; r < a.size(); ++r)
    if (a[r].size() != b[r].size() || std::memcmp(a[r].data(), b[r].data(), a[r].size() * sizeof(float)) != 0)
      return false;
  return true;
}

}  // namespace scin::numerics_test
