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

#include "engines/analytic/jump_counters.h"
#include "model/cost_grid.h"

namespace scin::part {

/// On the cost grid (a multiple of 2^-20 ns) and below 2^32 ns in size, or
/// infinite (a queue never asked): sums of two such stay exact.
inline bool on_grid(double v) { return std::isinf(v) || within_cost_grid(v); }
// A cost's fixed cost, latency and use durations on the grid.
template <class C>
bool on_grid_cost(const C& k) {
  bool ok = on_grid(k.c.fixed_ns) && on_grid(k.l) && on_grid(k.lead);
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
/// Where the reads defer (part_deferred.h, p2): their second events are
/// taken from a2 (< a: reads a2 .. a - 1 wait for their data), the last one's key.
struct WaveLoop {
  std::size_t a = 0, b = 0, a2 = 0;
  bool p2 = false;
  Fifo fifo[3];
  double last_read = -std::numeric_limits<double>::infinity(), last_req = last_read, last_write = last_read, last_p2 = last_read;
  double late = -1, rec_end = 0, late_write = -1;
  long long late_at = -1, late_write_at = -1;
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
  /// The period of snapshot `s`, taken at `at` (key T): the nearest of the
  /// 1-4 before it that equals it word for word (on the grid, earlier in
  /// time); 0: none.
  std::size_t period(const Snap& s, std::size_t at, double T) const {
    for (std::size_t q = 1; q <= 4 && q <= at; ++q) {
      const Snap& o = ring[(at - q) % 5];
      if (o.a == at - q && o.grid && o.T < T && o.w == s.w) return q;
    }
    return 0;
  }
};

/// x / d for the small divisors of the walk and the parts (a wave's 2 or 3
/// steps, a period's 1-12), without a division instruction where d is one of them.
[[gnu::always_inline]] inline std::size_t div_small(std::size_t x, std::size_t d) {
  switch (d) {
    case 1: return x;
    case 2: return x / 2;
    case 3: return x / 3;
    case 4: return x / 4;
    case 6: return x / 6;
    case 9: return x / 9;
    case 12: return x / 12;
    default: return x / d;
  }
}

/// Steps [lo, hi) of a part that were not written: step i is the translate
/// of step i - k sh (k = (i - lo) / sh + 1, in [lo - sh, lo), written or
/// booked) by k Pt in time and k sh in steps.
struct Lazy {
  std::size_t lo, hi, sh;
  double Pt;
};
/// Where step i's values are: a step written or booked, and the time and
/// steps to add.
struct Real {
  std::size_t i;
  double dt;
  int ds;
};
template <class P>
[[gnu::always_inline]] inline Real real_step(const P& pt, std::size_t i) {
  for (const Lazy& z : pt.lazy)
    if (i >= z.lo && i < z.hi) {
      const std::size_t k = div_small(i - z.lo, z.sh) + 1;
      return {i - k * z.sh, static_cast<double>(k) * z.Pt, static_cast<int>(k * z.sh)};
    }
  return {i, 0.0, 0};
}
/// A part's step i: its start and finish (written, or translated where a
/// jump left them unwritten: lazy_times_), bound use and record of use u
/// (translated where not written).
template <class P>
double step_start(const P& pt, std::size_t i) {
  if (!pt.lazy_times_) return pt.start[i];
  const Real r = real_step(pt, i);
  return pt.start[r.i] + r.dt;
}
template <class P>
double step_finish(const P& pt, std::size_t i) {
  if (!pt.lazy_times_) return pt.finish[i];
  const Real r = real_step(pt, i);
  return pt.finish[r.i] + r.dt;
}
template <class P>
int step_bound(const P& pt, std::size_t i) {
  return pt.bound[real_step(pt, i).i];
}
template <class P>
Rec step_rec(const P& pt, std::size_t i, std::size_t u) {
  const Real r = real_step(pt, i);
  const Rec& x = pt.recs[pt.first_at(r.i) + u];
  return x.translated(r.dt, r.ds);
}
/// A step's records as written, or translated where read (a step the jump did not write).
struct RecView {
  const Rec* x = nullptr;
  double dt = 0;
  int ds = 0;  // (0: as written)
  [[gnu::always_inline]] Rec operator[](std::size_t u) const {
    if (ds == 0) return x[u];
    return x[u].translated(dt, ds);
  }
};
/// Step i's records (where written: read them translated) and its bound use.
template <class P>
[[gnu::always_inline]] inline RecView step_view(const P& pt, std::size_t i, int& bound) {
  if (pt.lazy.empty()) {
    bound = pt.bound[i];
    return {&pt.recs[pt.first_at(i)], 0.0, 0};
  }
  const Real r = real_step(pt, i);
  bound = pt.bound[r.i];
  return {&pt.recs[pt.first_at(r.i)], r.dt, r.ds};
}

/// Step i of `pt` written as the translate of step o by dt in time, ds in steps.
template <class P>
void put_translate(P& pt, std::size_t i, std::size_t o, double dt, int ds) {
  pt.start[i] = pt.start[o] + dt;
  pt.finish[i] = pt.finish[o] + dt;
  pt.bound[i] = pt.bound[o];
  Rec* const d = pt.recs.data() + pt.first_at(i);
  const Rec* const x = pt.recs.data() + pt.first_at(o);
  for (std::size_t u = 0, n = pt.cost_at(i)->n; u < n; ++u)
    d[u] = x[u].translated(dt, ds);
}

/// Wave w's place in a stream of translates that starts at wave `base`
/// (period p waves): the wave it translates (in [base - p, base)) and how
/// many periods on it is; next() moves to wave w + 1.
struct Period {
  std::size_t ref, k, base, p;
  double dt, P;  // k P (sums of grid values: exact)
  Period(std::size_t b, std::size_t per, double Pt) : ref(b - per), k(1), base(b), p(per), dt(Pt), P(Pt) {}
  void next() {
    if (++ref == base) ref = base - p, ++k, dt += P;
  }
};
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
  const std::size_t aw = L.p2 ? L.a2 : a;  // (reads aw .. a - 1 wait for their data: part_deferred.h)
  for (std::size_t w = b; w < aw; ++w) put(fin[pw * w]);                // reads done, their requantise (multicast) not
  if (L.p2) {  // the reads waiting: their second event's key and what their first left for it
    s.w.push_back(a - aw);
    for (std::size_t w = aw; w < a; ++w) {
      const auto& d = pt.deferred_[pw * w];
      put(pt.p2_key_[w]);
      put(d.t0);
      put(d.end);
      put(d.fed_end);
      s.w.push_back(static_cast<std::uint64_t>(d.fed_by));
      s.w.push_back(static_cast<std::uint64_t>(d.last_use));
      put_step(d.blocker);  // (paced: the reservation its units waited for)
      s.w.push_back(static_cast<std::uint64_t>(d.blocker_use));
    }
    put(L.last_p2);
  }
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
  const std::size_t p = J.period(s, a, T);
  if (p == 0 || a + p >= W) return false;
  const double Pt = T - J.ring[(a - p) % 5].T;  // (exact: both on the grid)
  const std::size_t sh = pw * p;                // steps per period
  // The reads waiting for their data get it in the first period: each the
  // translate of the one p waves back (done, or written here before it),
  // their costs the same. Their finish, bound use and fed records written now
  // (the checks below read the finishes; if no period holds, their second
  // events write them again).
  for (std::size_t w = aw; w < a; ++w)
    if (!pt.uniform_ && pt.cost[pw * w] != pt.cost[pw * (w - p)]) return false;
  for (std::size_t w = aw; w < a; ++w) {
    const std::size_t i = pw * w, o = pw * (w - p);
    pt.finish[i] = pt.finish[o] + Pt;
    pt.bound[i] = pt.bound[o];
    const auto* const k = pt.cost_at(i);
    Rec* const d = pt.recs.data() + pt.first_at(i);
    const Rec* const x = pt.recs.data() + pt.first_at(o);
    for (std::size_t u = 0; u < k->n; ++u)
      if (k->fed[u] && k->held[u]) d[u] = x[u].translated(Pt, static_cast<int>(sh));
  }
  const double* const start = pt.start.data();
  const double* const finish = pt.finish.data();
  const auto* const cost = pt.cost.data();
  // (the last period's keys on the grid: then so is every time it booked)
  for (std::size_t w = a - p; w < a; ++w)
    if (!on_grid(start[pw * w])) return false;
  for (std::size_t w = b - p; w < b; ++w)
    for (std::size_t sub = 1; sub < pw; ++sub)
      if (!on_grid(start[pw * w + sub])) return false;
  // Period j (= 1 .. mmax) takes the requantises (multicasts) of waves
  // b + (j-1)p .. b + jp - 1 and the reads of waves a + (j-1)p .. a + jp - 1,
  // and decides on the key of read a + jp too. A read of wave w >= a is the
  // translate of the read of wave a - p + (w - a) mod p by (w - a) / p + 1
  // periods, a rest of wave w >= b likewise from b. A step holds if its cost
  // is that one's and its key, max(ready, its dep's finish), the translate of
  // that one's start; period j holds if its steps and read a + jp do. Checked
  // wave by wave without writing: the first read that does not hold rr (from
  // a), the first rest rs (from b); then m = min((rr - 1) / p, rs / p).
  const std::size_t mmax = (W - 1 - a) / p, wend = a + mmax * p;
  std::size_t rr = mmax * p + 1, rs = mmax * p;  // (none failed)
  // (each translate's start and finish written as it is checked: the later
  // checks read them, as the booking would; the records are written below.
  // A translate by k periods is written as the one a period back translated
  // by P: the same value, every time on the grid and below 2^32 ns where it
  // counts, i.e. in the periods that hold, see below.)
  double* const wstart = pt.start.data();
  double* const wfinish = pt.finish.data();
  const bool any_cost = !pt.uniform_;  // (uniform: every wave's costs are the same, nothing to compare)
  // Rests of waves b .. a - 1 (their reads booked): each checked.
  const std::size_t w1 = std::min(a, wend);
  for (std::size_t w = b; w < w1 && w - b < rs; ++w) {
    const std::size_t i = pw * w;
    for (std::size_t sub = 1; sub < pw; ++sub) {
      const double st = start[i + sub - sh] + Pt;
      if ((any_cost && cost[i + sub] != cost[i + sub - sh]) || std::max(pt.ready_at(i + sub, true), finish[i + sub - 1]) != st) {
        rs = w - b;
        break;
      }
      wstart[i + sub] = st;
      wfinish[i + sub] = finish[i + sub - sh] + Pt;
    }
  }
  // Waves a on: the read, then its rests. Where lay_waves laid the part
  // (rests ready at 0, finishes >= 0), a rest's key is its dep's finish, so
  // a rest of a translated read is the translate: not checked. Only as far
  // as m (below) may need: reads up to a + rs (the key of read a + mp, mp <=
  // rs), rests up to b + rr - 1 (mp <= rr - 1).
  const bool rests_follow = pt.rests_at_zero_;
  // Where lay_waves laid the part with one size and no rest of waves b .. a - 1
  // failed: the rests are the translates (above) and so are the reads up to
  // the first whose key is not; their times are not written (the part's
  // times are then lazy: step_start and step_finish translate them). A wave
  // u >= a is the translate of wave a - p + (u - a) mod p by (u - a) / p + 1
  // periods: its read's start and its multicast's finish (the key of read u + F) so.
  const bool unwritten = rests_follow && !any_cost && rs == mmax * p;
  auto mcast_finish = [&](std::size_t u) {  // (wave u's multicast's finish, as written or translated)
    if (!unwritten || u < a) return finish[pw * u + pw - 1];
    const std::size_t j = (u - a) / p;
    return finish[pw * (a - p + (u - a - j * p)) + pw - 1] + static_cast<double>(j + 1) * Pt;
  };
  // Over whole stretches where the reads' readiness repeats (Part::reads_repeat:
  // qf[v] = qf[v - p] + Pr, Pr <= P; SCIN: no qf): wave v's key is
  // max(base, qf[v], fu(v)), fu(v) the finish of multicast v - F, and its
  // expected key E(v) = E(v - p) + P > base (E of a read before a: its start,
  // >= base). From v - F >= a on, fu(v) = fu(v - p) + P. So if waves v - p
  // (each) had the key E and, where Pr < P, qf <= fu, then max(qf[v], fu(v))
  // is max(qf[v - p] + Pr, fu(v - p) + P): with Pr = P the one before plus P,
  // and with Pr < P fu(v - p) + P (qf stays below): E(v) either way, and
  // qf[v] <= fu(v) again (every sum exact on the grid). Once p waves in a row
  // hold so, every wave to the stretch's end does: not checked one by one.
  if (unwritten) {
    std::size_t w = a, u = a - F, t = 0, j = 1, tu = 0, ju = 1;  // (u = w - F; from a on, tu and ju its place)
    double dt = Pt, du = Pt;
    std::size_t all = 0, below = 0, next_try = a + F;  // (waves in a row that held; of them with qf <= fu)
    while (w < wend) {
      double fu;
      if (u < a) {
        fu = finish[pw * u + pw - 1];
      } else {
        fu = finish[pw * (a - p + tu) + pw - 1] + du;
        if (++tu == p) tu = 0, ++ju, du = static_cast<double>(ju) * Pt;
      }
      const double qf = pt.read_qf_at(w);
      const double rk = pt.rr_mode_ == 0 ? pt.ready[pw * w] : std::max(pt.rr_base_, qf);
      if (std::max(rk, fu) != start[pw * (a - p + t)] + dt) {
        rr = w - a;
        break;
      }
      ++all;
      below = pt.rr_mode_ != 0 && qf <= fu ? below + 1 : 0;
      ++w, ++u;
      if (++t == p) t = 0, ++j, dt = static_cast<double>(j) * Pt;
      if (w < next_try || w >= wend || all < p) continue;
      const auto rep = pt.reads_repeat(w, p);
      if (rep.end <= w || !(rep.Pr == Pt ? all >= p : rep.Pr < Pt && below >= p)) {
        next_try = rep.end > w ? w + 1 : std::max(w + 1, rep.next);
        continue;
      }
      // (waves w .. end - 1 hold: on from the stretch's end)
      stretch_waves_total() += std::min(rep.end, wend) - w;
      w = std::min(rep.end, wend);
      j = (w - a) / p + 1, t = (w - a) % p, dt = static_cast<double>(j) * Pt;
      u = w - F, ju = (u - a) / p + 1, tu = (u - a) % p, du = static_cast<double>(ju) * Pt;
      all = below = 0;
      next_try = w + p;
    }
  }
  for (std::size_t w = a; w < wend && !unwritten; ++w) {
    const bool read = w - a < rr && w - a <= rs, rest = w - b < rs && w - b < rr;
    if (!read && !rest) break;
    const std::size_t i = pw * w;
    if (read) {
      const double st = start[i - sh] + Pt;
      if ((any_cost && cost[i] != cost[i - sh]) || std::max(pt.read_ready_at(w, pw), finish[pw * (w - F) + pw - 1]) != st) rr = w - a;
      wstart[i] = st;
      wfinish[i] = finish[i - sh] + Pt;
    }
    if (!rest) continue;
    for (std::size_t sub = 1; sub < pw; ++sub) {
      const double st = start[i + sub - sh] + Pt;
      if (!rests_follow &&
          ((any_cost && cost[i + sub] != cost[i + sub - sh]) || std::max(pt.ready_at(i + sub, true), finish[i + sub - 1]) != st)) {
        rs = w - b;
        break;
      }
      wstart[i + sub] = st;
      wfinish[i + sub] = finish[i + sub - sh] + Pt;
    }
  }
  // Read a + mmax p: only its key (the decisions of period mmax compare it), against T + mmax P.
  if (rr > mmax * p) {
    if (std::max(pt.read_ready_at(wend, pw), mcast_finish(wend - F)) != T + static_cast<double>(mmax) * Pt) rr = mmax * p;
  }
  const std::size_t m = std::min(rr == 0 ? 0 : (rr - 1) / p, rs / p);
  // (every translate below 2^32 ns: the last period's are the largest)
  const double Pm = static_cast<double>(m) * Pt;
  for (std::size_t i = pw * (a - p); i < pw * a && m > 0; ++i)
    if (!(finish[i] + Pm < 0x1p32) || !(finish[pw * (b - p) + i - pw * (a - p)] + Pm < 0x1p32)) return false;
  if (m == 0) {
    ++J.fails;
    return false;
  }
  // Written: the rests of waves b .. min(a, b') - 1 (from b), then every step
  // of the last F' = max(F, 4) waves before b' = b + mp (the last period,
  // whose records the booking keeps, with room to spare) and the reads of
  // waves b' .. a' - 1 (from a, as steps from pw a: the same translates).
  // The steps between (from pw a) are left as lazy translates.
  const std::size_t b2 = b + m * p, a2 = a + m * p, F2 = std::max<std::size_t>(F, 4);
  const std::size_t lo = pw * a, hi = b2 > a + F2 ? pw * (b2 - F2) : lo;
  const int ish = static_cast<int>(sh);
  {
    Period q(b, p, Pt);
    for (std::size_t w = b; w < std::min(a, b2); ++w, q.next())
      for (std::size_t sub = 1; sub < pw; ++sub)
        put_translate(pt, pw * w + sub, pw * q.ref + sub, q.dt, static_cast<int>(q.k) * ish);
  }
  for (std::size_t i = std::max(hi, lo); i < pw * a2; ++i) {
    if (i >= pw * b2 && i % pw != 0) continue;  // (waves b' .. a' - 1: their reads only)
    const std::size_t k = (i - lo) / sh + 1;
    put_translate(pt, i, i - k * sh, static_cast<double>(k) * Pt, static_cast<int>(k) * ish);
  }
  if (hi > lo) pt.lazy.push_back({lo, hi, sh, Pt});
  pt.lazy_times_ = pt.lazy_times_ || unwritten;
  // What the booking keeps, over the last period (every earlier one's times are smaller by P or more).
  const std::size_t lo_r = a + (m - 1) * p, lo_b = b + (m - 1) * p;
  const Rec* const recs = pt.recs.data();
  auto keep = [&](std::size_t i) {
    const double f = finish[i];
    if (f > L.late || (f == L.late && static_cast<long long>(i) < L.late_at)) L.late = f, L.late_at = static_cast<long long>(i);
    for (std::size_t u = 0, n = pt.cost_at(i)->n, r0 = pt.first_at(i); u < n; ++u) L.rec_end = std::max(L.rec_end, recs[r0 + u].end);
  };
  if (!L.p2) {
    for (std::size_t w = lo_r; w < lo_r + p; ++w) keep(pw * w);
  } else {  // (the reads done: the last period's second events; those waiting: their first events' records)
    for (std::size_t w = aw + (m - 1) * p; w < aw + m * p; ++w) keep(pw * w);
    for (std::size_t w = std::max(aw + m * p, lo_r); w < lo_r + p; ++w) {
      const auto* const k = pt.cost_at(pw * w);
      for (std::size_t u = 0, r0 = pt.first_at(pw * w); u < k->n; ++u)
        if (!(k->fed[u] && k->held[u])) L.rec_end = std::max(L.rec_end, recs[r0 + u].end);
    }
    // The reads waiting after the jump: their first events' outcome, m periods on (from the
    // waiting reads aw .. a - 1; sources below their translates, so written from the last).
    for (std::size_t w = a + m * p; w-- > aw + m * p;) {
      const std::size_t o = w - m * p;
      auto d = pt.deferred_[pw * o];
      d.t0 += Pm, d.end += Pm, d.fed_end += Pm;
      if (d.blocker >= 0) d.blocker += static_cast<int>(m * sh);
      pt.deferred_[pw * w] = d;
      pt.p2_key_[w] = pt.p2_key_[o] + Pm;
    }
    L.a2 = aw + m * p;
    L.last_p2 += Pm;
  }
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

}  // namespace scin::part
