// Ring-q8 with fewer blocks than ranks on a star, in closed form (ring_sparse.h).
#include "engines/analytic/ring_sparse.h"

#include <algorithm>
#include <cmath>

#include "engines/analytic/ring_chunks.h"

namespace scin::shot {

bool RingSparse::holds(const std::vector<std::uint8_t>& full) {
  if (n < 3 || full.size() != n) return false;
  // Costs of at least 0 (an empty chunk's quantise and sum cost nothing
  // where they launch nothing), gathers and a full chunk's round of more; a
  // full chunk's stage no cheaper than an empty one's.
  for (int k = 0; k < 2; ++k)
    for (double c : {qf[k], q[k], s[k], sum[k], g[k]})
      if (!(c >= 0) || !std::isfinite(c)) return false;
  if (!(dq >= 0) || !std::isfinite(dq) || !(launch >= 0)) return false;
  if (!(g[0] > 0) || !(g[1] > 0) || !(q[1] + s[1] > 0)) return false;
  if (qf[1] + s[1] < qf[0] + s[0] || q[1] + s[1] < q[0] + s[0] || sum[1] < sum[0] || g[1] < g[0]) return false;
  // Every time below 2^33 ns: the longest chain is N - 1 rounds, a sum, N - 1 gathers and a dequantise.
  const double most = std::max({qf[1] + s[1], q[1] + s[1], sum[1], g[1], dq});
  if (launch + 2.0 * static_cast<double>(n + 1) * most >= 0x1p33) return false;
  // Full chunks never neighbours; the nearest at or after each chunk, cyclically (one at least).
  for (std::size_t c = 0; c < n; ++c)
    if (full[c] && full[(c + 1) % n]) return false;
  to_full = analytic_detail::chunks_to_marked(full);
  return !to_full.empty();
}

double RingSparse::round_end(std::size_t k, int d) const {
  const auto kd = static_cast<double>(k);
  if (static_cast<std::size_t>(d) > k) return launch + (qf[0] + s[0]) + kd * (q[0] + s[0]);
  return launch + (qf[1] + s[1]) + (kd - d) * (q[1] + s[1]) + d * (q[0] + s[0]);
}

double RingSparse::gather_start(std::size_t c) const {
  const int d = to_full[c];
  if (d == 0) return sum[1] + round_end(n - 2, 0);  // (its neighbour's send: empty, no later)
  return std::max(sum[0] + round_end(n - 2, d), round_end(n - 2, d - 1));
}

// Where the full chunk is within reach (d <= j), waiting on it and walking
// the d empty ones is the longest: any path among the empty chunks starts
// from an X no greater than the full chunk's (sum[0] <= sum[1], V no
// greater further from it) and costs no more per stage. Else the path
// starts as far on as it reaches, j chunks (X grows towards the full one).
double RingSparse::gather_end(std::size_t j, std::size_t c) const {
  const int d = to_full[c];
  const auto jd = static_cast<double>(j);
  if (static_cast<std::size_t>(d) <= j)
    return gather_start((c + static_cast<std::size_t>(d)) % n) + (jd + 1 - d) * g[1] + d * g[0];
  return gather_start((c + j) % n) + (jd + 1) * g[0];
}

double RingSparse::finish(const RingQIds& ids, std::size_t t, std::size_t r) const {
  auto cls = [&](std::size_t c) { return to_full[c] == 0 ? 1 : 0; };
  if (t < ids.sum_rep()) {
    const std::size_t k = t / 2, c = (r + n - k) % n;
    if (t % 2) return round_end(k, to_full[c]);
    if (k == 0) return launch + qf[cls(c)];
    return std::max(round_end(k - 1, to_full[c]), round_end(k - 1, to_full[(c + 1) % n])) + q[cls(c)];
  }
  if (t == ids.sum_rep()) {
    const std::size_t c = (r + 1) % n;
    return sum[cls(c)] + round_end(n - 2, to_full[c]);
  }
  if (t < ids.dequant_rep()) return gather_end(t - ids.ag_rep(0), (r + 1 + n - (t - ids.ag_rep(0))) % n);
  return dq + std::max(gather_end(n - 2, (r + 2) % n), gather_end(n - 2, (r + 3) % n));
}

StepId RingSparse::last(const RingQIds& ids, double& latest) const {
  // The latest is a dequantise's (every step leads to one; costs are at
  // least 0). Steps before the gather's last stage end earlier (each gather
  // costs more than 0), so the first of the latest is a last-stage gather
  // ending then (a dequantise of no cost), else the first such dequantise.
  latest = -1;
  for (std::size_t r = 0; r < n; ++r) latest = std::max(latest, finish(ids, ids.dequant_rep(), r));
  for (std::size_t t : {ids.ag_rep(n - 2), ids.dequant_rep()})
    for (std::size_t r = 0; r < n; ++r)
      if (finish(ids, t, r) == latest) return ids.id(t, r);
  return kNoStep;
}

}  // namespace scin::shot
