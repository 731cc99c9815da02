// One-shot's and the two-shots' pushes on a star in closed form (shot_star.h).
#include "engines/analytic/shot_star.h"

#include <algorithm>
#include <initializer_list>
#include <limits>

namespace scin::shot::star {

namespace {

// Below this, sums of cost-grid multiples are exact (cost_grid.h): a prefix
// sum, a difference of two and a product by a count equal a queue's
// additions one by one, bit for bit.
constexpr double kExact = 0x1p33;
constexpr double kNone = -std::numeric_limits<double>::infinity();
constexpr std::size_t kNo = static_cast<std::size_t>(-1);

// The one fixed cost (and latency) of the pushes that book; false: they differ.
bool common(const std::vector<Push>& shard, double& fixed, double* latency) {
  bool first = true;
  for (const Push& p : shard) {
    if (!p.books) continue;
    if (first) {
      fixed = p.fixed;
      if (latency) *latency = p.latency;
      first = false;
    } else if (p.fixed != fixed || (latency && p.latency != *latency)) {
      return false;
    }
  }
  return true;
}

// x -> max(a, x + b): a queue's end after uses that each start at the later
// of their t0 and the previous end (per use a = t0 + d, b = d).
struct MaxPlus {
  double a = kNone, b = 0;
  double operator()(double x) const { return std::max(a, x + b); }
};
// f, then g.
MaxPlus then(const MaxPlus& f, const MaxPlus& g) { return {std::max(g.a, f.a + g.b), f.b + g.b}; }

// The latest (value, rank) offered, the lower rank on a tie.
struct Best {
  double v = kNone;
  std::size_t at = kNo;
  void offer(double value, std::size_t r) {
    if (r != kNo && (at == kNo || value > v || (value == v && r < at))) v = value, at = r;
  }
};

// Per rank r, the rank j < r (lo) and j > r (hi) among those `in(j)` selects
// with the highest key(j), the lowest on a tie; kNo: none.
template <class In, class Key>
void sides(std::size_t n, In in, Key key, std::size_t* lo, std::size_t* hi) {
  std::size_t best = kNo;
  for (std::size_t r = 0; r < n; ++r) {
    lo[r] = best;
    if (in(r) && (best == kNo || key(r) > key(best))) best = r;
  }
  best = kNo;
  for (std::size_t r = n; r-- > 0;) {
    hi[r] = best;
    if (in(r) && (best == kNo || key(r) >= key(best))) best = r;
  }
}

}  // namespace

bool pushes(const std::vector<PushShape>& shapes, const std::vector<std::uint32_t>& index, std::size_t n,
            std::vector<Push>& out) {
  out.assign(n, Push{});
  int send_base = -1, recv_base = -1;
  for (std::size_t j = 0; j < n; ++j) {
    const PushShape& p = shapes[index[2 * j]];
    Push& o = out[j];
    o.fixed = p.fixed;
    o.latency = p.latency;
    if (p.u.empty()) continue;
    if (p.u.size() != 2 || p.u[0].books != p.u[1].books || p.u[0].role == p.u[1].role) return false;
    o.books = p.u[0].books;
    if (!o.books) continue;
    for (const PushShape::U& u : p.u) {
      const bool send = u.role == PushShape::Role::Sender;
      if (!send && u.role != PushShape::Role::Receiver) return false;
      int& base = send ? send_base : recv_base;
      if (base >= 0 && base != u.base) return false;  // (another plane's port: another queue)
      base = u.base;
      (send ? o.send : o.recv) = u.d;
    }
  }
  return true;
}

bool scatter(double ready, const std::vector<Push>& shard, Latest& out, Queues& q) {
  const std::size_t n = shard.size();
  double fixed = 0;
  if (n < 2 || !common(shard, fixed, nullptr)) return false;
  const double t0 = ready + fixed;
  auto d = [&](std::size_t j) { return shard[j].books ? shard[j].send : 0.0; };
  // sum[j]: shards 0..j's egress time; low[j]: the first rank below j with the shortest.
  std::vector<double> sum(n);
  std::vector<std::size_t> low(n, kNo);
  double s = 0, recv_max = 0;
  std::size_t booking = 0;
  for (std::size_t j = 0; j < n; ++j) {
    if (j > 0) low[j] = low[j - 1] == kNo || d(j - 1) < d(low[j - 1]) ? j - 1 : low[j - 1];
    s += d(j);
    sum[j] = s;
    if (shard[j].books) ++booking, recv_max = std::max(recv_max, shard[j].recv);
  }
  if (!(t0 + s < kExact) || !(t0 + static_cast<double>(n - 1) * recv_max < kExact)) return false;
  out.fin.assign(n, 0);
  out.from.assign(n, 0);
  for (std::size_t j = 0; j < n; ++j) {
    const Push& p = shard[j];
    const std::size_t first = j == 0 ? 1 : 0, last = j == n - 1 ? n - 2 : n - 1;
    if (!p.books) {  // (every push of shard j: its uses end at their t0)
      out.fin[j] = (ready + p.fixed) + p.latency;
      out.from[j] = first;
      continue;
    }
    // r's egress port has held shards 0..j but r's own; j's ingress port shard j once per sender up to r.
    auto fin = [&](std::size_t r) {
      const double e = t0 + (r < j ? sum[j] - d(r) : sum[j]);
      const double i = t0 + static_cast<double>(r - (r > j ? 1 : 0) + 1) * p.recv;
      return std::max(e, i) + p.latency;
    };
    Best b;
    for (std::size_t r : {first, low[j], j + 1 < n ? j + 1 : kNo, last})
      if (r != kNo) b.offer(fin(r), r);
    out.fin[j] = b.v;
    out.from[j] = b.at;
  }
  q.egress_end.assign(n, kNone);
  q.ingress_end.assign(n, kNone);
  for (std::size_t r = 0; r < n; ++r) {
    if (booking > (shard[r].books ? 1u : 0u)) q.egress_end[r] = t0 + (s - d(r));
    if (shard[r].books) q.ingress_end[r] = t0 + static_cast<double>(n - 1) * shard[r].recv;
  }
  q.ready = ready;
  q.from = t0;
  q.any = booking > 0;
  return true;
}

bool gather(const std::vector<double>& ready, const std::vector<std::size_t>& order, const std::vector<Push>& shard,
            const Queues& q, Latest& out) {
  const std::size_t n = shard.size();
  double fixed = 0, latency = 0;
  if (n < 2 || order.size() != n || ready.size() != n || q.egress_end.size() != n ||
      !common(shard, fixed, &latency))
    return false;
  // Per owner that books: its shard size (a class, at most four), and when
  // its egress port starts its pushes (after its scatter's).
  std::vector<double> sizes;
  std::vector<std::size_t> size_of(n, 0);
  std::vector<double> base(n, kNone), idle(n, kNone);  // idle: a push that books nothing, its finish
  for (std::size_t j = 0; j < n; ++j) {
    const Push& p = shard[j];
    if (!p.books) {
      idle[j] = (ready[j] + p.fixed) + p.latency;
      continue;
    }
    if (q.any && (ready[j] < q.ready || ready[j] + fixed < q.from)) return false;
    const auto at = std::find(sizes.begin(), sizes.end(), p.send);
    if (at == sizes.end() && sizes.size() == 4) return false;
    size_of[j] = static_cast<std::size_t>(at - sizes.begin());
    if (at == sizes.end()) sizes.push_back(p.send);
    base[j] = std::max(ready[j] + fixed, q.egress_end[j]);
    if (!(base[j] + static_cast<double>(n) * p.send < kExact)) return false;
  }
  // The ingress ports: the owners in order as max-plus maps, prefix and
  // suffix compositions; pos[r]: r's place in the order; last, second: the
  // last two places that book.
  std::vector<MaxPlus> pre(n + 1), suf(n + 1);
  std::vector<std::size_t> pos(n);
  std::size_t last = kNo, second = kNo;
  for (std::size_t p = 0; p < n; ++p) {
    const std::size_t j = order[p];
    pos[j] = p;
    const MaxPlus f = shard[j].books ? MaxPlus{(ready[j] + fixed) + shard[j].recv, shard[j].recv} : MaxPlus{};
    pre[p + 1] = then(pre[p], f);
    if (shard[j].books) second = last, last = p;
  }
  for (std::size_t p = n; p-- > 0;) {
    const std::size_t j = order[p];
    suf[p] = shard[j].books ? then(MaxPlus{(ready[j] + fixed) + shard[j].recv, shard[j].recv}, suf[p + 1]) : suf[p + 1];
  }
  // Per shard size, the owners on either side of r with the latest egress start; likewise the idle pushes' finishes.
  const std::size_t m = sizes.size();
  std::vector<std::size_t> lo((m + 1) * n), hi((m + 1) * n);
  for (std::size_t c = 0; c < m; ++c)
    sides(n, [&](std::size_t j) { return shard[j].books && size_of[j] == c; }, [&](std::size_t j) { return base[j]; },
          &lo[c * n], &hi[c * n]);
  sides(n, [&](std::size_t j) { return !shard[j].books; }, [&](std::size_t j) { return idle[j]; }, &lo[m * n], &hi[m * n]);
  out.fin.assign(n, 0);
  out.from.assign(n, 0);
  for (std::size_t r = 0; r < n; ++r) {
    // j's push to r is its (r + 1)-th below r, its r-th above.
    auto egress = [&](std::size_t j) { return base[j] + static_cast<double>(r + (r < j ? 1 : 0)) * shard[j].send; };
    Best b;
    const std::size_t in_last = last == kNo ? kNo : order[last] != r ? order[last] : second == kNo ? kNo : order[second];
    if (in_last != kNo) {  // the latest of r's ingress: its last owner's push, the owners but r composed
      const double in = then(pre[pos[r]], suf[pos[r] + 1])(q.ingress_end[r]);
      if (!(in < kExact)) return false;
      b.offer(std::max(egress(in_last), in) + latency, in_last);
    }
    for (std::size_t c = 0; c < m; ++c)
      for (std::size_t j : {lo[c * n + r], hi[c * n + r]})
        if (j != kNo) b.offer(egress(j) + latency, j);
    for (std::size_t j : {lo[m * n + r], hi[m * n + r]})
      if (j != kNo) b.offer(idle[j], j);
    out.fin[r] = b.v;
    out.from[r] = b.at;
  }
  return true;
}

}  // namespace scin::shot::star
