// The periodic jump over a SCIN plane's waves (part_booking.h's run_waves,
// docs/performance.md section 62). Internal to the analytic engine.
//
// Every cost is on the cost grid (cost_grid.h) and every time below 2^32 ns,
// so each sum, max and comparison the booking makes is exact, and booking from
// a state translated by P (times) and s (steps) gives the same booking
// translated by P and s. At each read a (about to be taken, its key T) the
// booking's state is written relative to (T, a); when it equals, word for
// word, the state p = 1-4 reads back (and P = T - T' > 0), the waves from
// there repeat the last p waves' booking translated by P per period while
// (checked step by step as they are written) each step's cost is the one p
// waves back and its key, max(ready, the dep's finish), is the translate of
// that one's: then the records of those periods are the translates, written
// without booking, and the state is translated to the end of the last one.
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

namespace scin::part {

/// On the cost grid (a multiple of 2^-20 ns) and below 2^32 ns in size, or
/// infinite (a queue never asked): sums of two such stay exact.
inline bool on_grid(double v) {
  if (std::isinf(v)) return true;
  const double y = v * 0x1p20;
  return std::fabs(v) < 0x1p32 && y == std::trunc(y);
}
// A cost's fixed cost, latency and use durations on the grid.
template <class C>
bool on_grid_cost(const C& k) {
  bool ok = on_grid(k.c.fixed_ns) && on_grid(k.l);
  for (std::size_t u = 0; u < k.n && u < k.d.size(); ++u) ok = ok && on_grid(k.d[u]);
  return ok;
}

/// A queue booked at its end only (run_waves): its last block's end and holder, the last request.
struct Fifo {
  double from = -std::numeric_limits<double>::infinity(), end = 0;
  int step = -1, use = -1;
  /// A queue that is only ever asked in order of start: the use starts at
  /// `st` or at the last one's end, whichever is later (that one's holder).
  /// False for a request before an earlier one (it might fill a gap: the
  /// caller books the part the general way).
  [[gnu::always_inline]] bool book(double& st, double d, int& holder, int& holder_use, int s, int u) {
    if (st < from) return false;
    from = st;
    if (step >= 0 && end > st) st = end, holder = step, holder_use = use;
    end = st + d;
    step = s;
    use = u;
    return true;
  }
};

/// run_waves' state between steps: the next read a and requantise (or
/// multicast) b, the single-user queues, each stream's last key, and what the
/// booking keeps (the latest finishes, the latest record end).
struct WaveLoop {
  std::size_t a = 0, b = 0;
  Fifo fifo[3];
  double last_read = -std::numeric_limits<double>::infinity(), last_req = last_read, last_write = last_read;
  double late = -1, rec_end = 0, late_write = -1;
  long long late_at = -1, late_write_at = -1;
};

/// run_chains' state between steps: up to 8 chains, each's first step, end
/// (one past its last), next step (done: the part's size) and that one's key;
/// the HBM queue; the latest finish (its step) and record end.
struct ChainLoop {
  std::size_t nc = 0, head[8] = {}, end[8] = {}, at[8] = {};
  double key[8] = {};
  Fifo fq;
  double late = -1, rec_end = 0;
  long long late_at = -1;
};

/// run_waves' snapshots: the last five, by read index mod 5.
struct WaveJump {
  struct Snap {
    std::size_t a = SIZE_MAX;      // the read it was taken at (SIZE_MAX: none)
    double T = 0;                  // that read's key
    bool grid = false;             // every time in it on the grid
    std::vector<std::uint64_t> w;  // the state relative to (T, a), word by word
  };
  Snap ring[5];
  std::size_t snaps = 0, fails = 0, budget = 0;
  void reset(std::size_t W) {
    for (Snap& s : ring) s.a = SIZE_MAX;
    snaps = fails = 0;
    budget = std::max<std::size_t>(64, W / 4);
  }
  // Whether to go on snapshotting: not past the first quarter of the waves
  // (at least 64) without a period, nor after copies failed twice.
  bool wanted() { return ++snaps <= budget && fails < 2; }
};

/// Waves written as translates on this thread, over every run (for tests).
inline std::size_t& jumped_waves_total() {
  thread_local std::size_t n = 0;
  return n;
}

/// Steps [i0, i1) of `pt` written as the translates of the steps sh before
/// (times + Pt, holders + sh), up to the first whose cost differs from that
/// one's or whose finish would reach 2^32 ns; returns that step (i1: none).
template <class P>
std::size_t copy_steps(P& pt, std::size_t i0, std::size_t i1, std::size_t sh, double Pt) {
  const auto* const cost = pt.cost.data();
  auto* const start = pt.start.data();
  auto* const finish = pt.finish.data();
  auto* const bound = pt.bound.data();
  std::size_t k = i0;
  while (k < i1 && cost[k] == cost[k - sh] && finish[k - sh] + Pt < 0x1p32) ++k;
  for (std::size_t i = i0; i < k; ++i) {
    start[i] = start[i - sh] + Pt;
    finish[i] = finish[i - sh] + Pt;
    bound[i] = bound[i - sh];
  }
  // (the records of consecutive steps are consecutive, as many as the costs' uses)
  const std::size_t r0 = pt.first[i0], r1 = k < pt.first.size() ? pt.first[k] : pt.recs.size();
  auto* const d = pt.recs.data() + r0;
  const auto* const o = pt.recs.data() + pt.first[i0 - sh];
  const int ish = static_cast<int>(sh);
  for (std::size_t r = 0; r < r1 - r0; ++r) {
    const auto& x = o[r];
    d[r] = {x.start + Pt, x.end + Pt, x.holder < 0 ? -1 : x.holder + ish, x.holder_use};
  }
  return k;
}

/// The jump at read a of `pt` (PW steps per wave, F waves in flight, W
/// waves), key T, state L: a snapshot; if a period is found and at least one
/// copy holds, the copies written, L moved to the read after them, true.
template <int PW, class P>
bool jump_waves(P& pt, WaveLoop& L, std::size_t a, double T, std::size_t F, std::size_t W) {
  constexpr std::size_t pw = PW;
  WaveJump& J = pt.jump_;
  const std::size_t b = L.b;
  WaveJump::Snap& s = J.ring[a % 5];
  s.a = a;
  s.T = T;
  s.w.clear();
  bool grid = on_grid(T);
  const double* const fin = pt.finish.data();
  auto put = [&](double v) {
    grid = grid && on_grid(v);
    s.w.push_back(std::bit_cast<std::uint64_t>(v - T));
  };
  const long long base = static_cast<long long>(pw * a);
  auto put_step = [&](int step) { s.w.push_back(step < 0 ? ~std::uint64_t{0} : static_cast<std::uint64_t>(step - base)); };
  s.w.push_back(a - b);
  for (std::size_t w = b; w < a; ++w) put(fin[pw * w]);                 // reads taken, their requantise (multicast) not
  for (std::size_t w = a - F; w < b; ++w) put(fin[pw * w + pw - 1]);     // multicasts whose read F waves on is not taken
  for (const Fifo& q : L.fifo) {
    put(q.from);
    put(q.end);
    put_step(q.step);
    s.w.push_back(static_cast<std::uint64_t>(q.use));
  }
  if (PW == 3) {  // the INQ unit's blocks that end after T (the others are never looked at again); a start
                  // before T compares as T does with every later use's start and end (both after T)
    const auto& q3 = pt.qs_[3];
    for (std::size_t k = q3.head; k < q3.v.size(); ++k)
      if (const auto& bl = q3.v[k]; bl.end > T) {
        grid = grid && on_grid(bl.start);
        put(std::max(bl.start, T));
        put(bl.end);
        put_step(bl.step);
        s.w.push_back(static_cast<std::uint64_t>(bl.use));
      }
  }
  put(L.last_read);
  put(L.last_req);
  put(L.last_write);
  s.grid = grid;
  if (!grid) return false;
  // The period: the nearest earlier snapshot equal to this one.
  std::size_t p = 0;
  for (std::size_t q = 1; q <= 4 && p == 0 && q <= a; ++q) {
    const WaveJump::Snap& o = J.ring[(a - q) % 5];
    if (o.a == a - q && o.grid && o.T < T && o.w == s.w) p = q;
  }
  if (p == 0 || a + p >= W) return false;
  const double Pt = T - J.ring[(a - p) % 5].T;  // (exact: both on the grid)
  const std::size_t sh = pw * p;                // steps per period
  auto* const start = pt.start.data();
  auto* const finish = pt.finish.data();
  auto* const recs = pt.recs.data();
  const auto* const first = pt.first.data();
  const auto* const cost = pt.cost.data();
  const double* const ready = pt.ready.data();
  // (the last period's keys on the grid: then so is every time it booked)
  for (std::size_t w = a - p; w < a; ++w)
    if (!on_grid(start[pw * w])) return false;
  for (std::size_t w = b - p; w < b; ++w)
    for (std::size_t sub = 1; sub < pw; ++sub)
      if (!on_grid(start[pw * w + sub])) return false;
  // Period j (= 1 .. mmax) takes the requantises (multicasts) of waves
  // b + (j-1)p .. b + jp - 1 and the reads of waves a + (j-1)p .. a + jp - 1,
  // and decides on the key of read a + jp too. The waves are written in order
  // (each step from the one sh before, written or booked already): from wave
  // b its requantise and multicast (rests), from wave a its read. A step is a
  // translate if its cost is the one sh before and its key, max(ready, the
  // dep's finish), its translated start; period j holds if its steps and
  // read a + jp are. The first read that does not: rr (from a), the first
  // rest: rs (from b); then m = min((rr - 1) / p, rs / p) periods hold.
  const std::size_t mmax = (W - 1 - a) / p;
  auto read_ok = [&](std::size_t w) { return std::max(ready[pw * w], finish[pw * (w - F) + pw - 1]) == start[pw * w]; };
  auto rest_ok = [&](std::size_t w) {
    bool ok = true;
    for (std::size_t sub = 1; sub < pw; ++sub) ok = ok && std::max(ready[pw * w + sub], finish[pw * w + sub - 1]) == start[pw * w + sub];
    return ok;
  };
  std::size_t rr = mmax * p + 1, rs = mmax * p;  // (none failed)
  const std::size_t wend = a + mmax * p;
  for (std::size_t w = b; w < wend; ++w) {
    const bool rest = w - b < rs, read = w >= a && w - a < rr;
    if (!rest && !read) break;
    if (rest && read) {  // (the whole wave)
      const std::size_t k = copy_steps(pt, pw * w, pw * w + pw, sh, Pt);
      if (k == pw * w || !read_ok(w)) rr = w - a;
      if (k < pw * w + pw || !rest_ok(w)) rs = w - b;
    } else if (rest) {
      if (copy_steps(pt, pw * w + 1, pw * w + pw, sh, Pt) < pw * w + pw || !rest_ok(w)) rs = w - b;
    } else if (copy_steps(pt, pw * w, pw * w + 1, sh, Pt) == pw * w || !read_ok(w)) {
      rr = w - a;
    }
  }
  // Read a + mmax p: only its key (the decisions of period mmax compare it), against T + mmax P.
  if (rr > mmax * p && std::max(ready[pw * wend], finish[pw * (wend - F) + pw - 1]) != T + static_cast<double>(mmax) * Pt)
    rr = mmax * p;
  const std::size_t m = std::min(rr == 0 ? 0 : (rr - 1) / p, rs / p);
  if (m == 0) {
    ++J.fails;
    return false;
  }
  // What the booking keeps, over the last period (every earlier one's times are smaller by P or more).
  const double Pm = static_cast<double>(m) * Pt;
  const std::size_t lo_r = a + (m - 1) * p, lo_b = b + (m - 1) * p;
  auto keep = [&](std::size_t i) {
    const double f = finish[i];
    if (f > L.late || (f == L.late && static_cast<long long>(i) < L.late_at)) L.late = f, L.late_at = static_cast<long long>(i);
    for (std::size_t u = 0, n = cost[i]->n; u < n; ++u) L.rec_end = std::max(L.rec_end, recs[first[i] + u].end);
  };
  for (std::size_t w = lo_r; w < lo_r + p; ++w) keep(pw * w);
  for (std::size_t w = lo_b; w < lo_b + p; ++w) {
    for (std::size_t sub = 1; sub < pw; ++sub) keep(pw * w + sub);
    if (const double f = finish[pw * w + pw - 1]; f > L.late_write) L.late_write = f, L.late_write_at = static_cast<long long>(w);
  }
  // The state, m periods on.
  const int ms = static_cast<int>(m * sh);
  for (Fifo& q : L.fifo) {
    q.from += Pm;
    q.end += Pm;
    if (q.step >= 0) q.step += ms;
  }
  if (PW == 3)
    for (auto& bl : pt.qs_[3].v) {
      bl.start += Pm;
      bl.end += Pm;
      bl.step += ms;
    }
  L.last_read += Pm;
  L.last_req += Pm;
  L.last_write += Pm;
  L.a = a + m * p;
  L.b = b + m * p;
  pt.jumped_waves += m * p;
  jumped_waves_total() += m * p;
  return true;
}

/// The jump over INQ's quantise chains (run_chains), at chain 0's next step
/// (about to be taken, key T): the state relative to (T, that step's place in
/// its chain) is each chain's place and key, and the HBM queue; when it equals
/// the state q = 1-4 of chain 0's steps back, each chain's steps from there
/// are its last q steps' translates while (checked step by step) the costs are
/// the ones q steps back and the keys the translates, and no chain ends.
template <class P>
bool jump_chains(P& pt, ChainLoop& C) {
  WaveJump& J = pt.chain_jump_;
  const std::size_t nc = C.nc, m = pt.cost.size(), pos = C.at[0] - C.head[0];
  const double T = C.key[0];
  WaveJump::Snap& s = J.ring[pos % 5];
  s.a = pos;
  s.T = T;
  s.w.clear();
  bool grid = on_grid(T);
  auto put = [&](double v) {
    grid = grid && on_grid(v);
    s.w.push_back(std::bit_cast<std::uint64_t>(v - T));
  };
  for (std::size_t o = 0; o < nc; ++o) {
    if (C.at[o] >= m) return false;  // (every chain going on)
    s.w.push_back(C.at[o] - C.head[o] - pos);
    put(C.key[o]);
  }
  put(C.fq.from);
  put(C.fq.end);
  std::size_t hc = 0;  // the queue's holder: its chain and place relative to pos
  if (C.fq.step >= 0) {
    while (hc + 1 < nc && C.head[hc + 1] <= static_cast<std::size_t>(C.fq.step)) ++hc;
    s.w.push_back(hc);
    s.w.push_back(static_cast<std::size_t>(C.fq.step) - C.head[hc] - pos);
  } else {
    s.w.push_back(~std::uint64_t{0});
  }
  s.w.push_back(static_cast<std::uint64_t>(C.fq.use));
  s.grid = grid;
  if (!grid) return false;
  std::size_t q = 0;
  for (std::size_t k = 1; k <= 4 && q == 0 && k <= pos; ++k) {
    const WaveJump::Snap& o = J.ring[(pos - k) % 5];
    if (o.a == pos - k && o.grid && o.T < T && o.w == s.w) q = k;
  }
  if (q == 0) return false;
  const double Pt = T - J.ring[(pos - q) % 5].T;
  auto* const start = pt.start.data();
  auto* const finish = pt.finish.data();
  auto* const recs = pt.recs.data();
  const auto* const first = pt.first.data();
  const auto* const cost = pt.cost.data();
  const double* const ready = pt.ready.data();
  for (std::size_t o = 0; o < nc; ++o)  // (the last period's keys on the grid: then so is every time it booked)
    for (std::size_t k = C.at[o] - q; k < C.at[o]; ++k)
      if (!on_grid(start[k])) return false;
  // Each chain's steps from its next one on, written in order as the
  // translates of the steps q before, up to the first that is not (its cost
  // differs, or its key max(ready, the step before's finish) is not its
  // translated start): r steps hold, so (r - 1) / q periods do (a period's q
  // steps and the key of the next period's first, which must be there).
  std::size_t mj = SIZE_MAX;
  for (std::size_t o = 0; o < nc && mj > 0; ++o) {
    const std::size_t k0 = C.at[o], lim = mj == SIZE_MAX ? C.end[o] : std::min(C.end[o], k0 + mj * q + 1);
    if (lim <= k0) {
      mj = 0;
      break;
    }
    std::size_t k = copy_steps(pt, k0, lim, q, Pt);
    for (std::size_t i = k0; i < k; ++i)
      if (std::max(ready[i], finish[i - 1]) != start[i]) {
        k = i;
        break;
      }
    const std::size_t r = k - k0;
    mj = std::min(mj, r == 0 ? 0 : (r - 1) / q);
  }
  if (mj == SIZE_MAX) mj = 0;
  if (mj == 0) {
    ++J.fails;
    return false;
  }
  const double Pm = static_cast<double>(mj) * Pt;
  const std::size_t sm = mj * q;
  for (std::size_t o = 0; o < nc; ++o) {  // what the booking keeps, over the last period
    for (std::size_t k = C.at[o] + sm - q; k < C.at[o] + sm; ++k) {
      const double f = finish[k];
      if (f > C.late || (f == C.late && static_cast<long long>(k) < C.late_at)) C.late = f, C.late_at = static_cast<long long>(k);
      for (std::size_t u = 0, n = cost[k]->n; u < n; ++u) C.rec_end = std::max(C.rec_end, recs[first[k] + u].end);
    }
    C.at[o] += sm;
    C.key[o] += Pm;
  }
  C.fq.from += Pm;
  C.fq.end += Pm;
  if (C.fq.step >= 0) C.fq.step += static_cast<int>(sm);
  pt.jumped_chain_steps += sm * nc;
  return true;
}

}  // namespace scin::part
