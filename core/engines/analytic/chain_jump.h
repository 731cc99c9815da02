// The periodic jump over INQ's quantise chains (part_layout.h's run_chains),
// by wave_jump.h's argument: a state equal, relative to its time and place,
// to the one a period back repeats that period's booking translated.
// Internal to the analytic engine.
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "engines/analytic/wave_jump.h"

namespace scin::part {

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
  const std::size_t q = J.period(s, pos, T);
  if (q == 0) return false;
  const double Pt = T - J.ring[(pos - q) % 5].T;
  double* const wstart = pt.start.data();
  double* const wfinish = pt.finish.data();
  const double* const start = pt.start.data();
  const double* const finish = pt.finish.data();
  const auto* const cost = pt.cost.data();
  for (std::size_t o = 0; o < nc; ++o)  // (the last period's keys on the grid: then so is every time it booked)
    for (std::size_t k = C.at[o] - q; k < C.at[o]; ++k)
      if (!on_grid(start[k])) return false;
  // Each chain's step k >= at is the translate of step at - q + (k - at) mod q
  // by (k - at) / q + 1 periods; it holds if its cost is that one's and its
  // key, max(ready, the step before's finish), that one's translated start.
  // Checked without writing, up to the first that does not: r steps hold, so
  // (r - 1) / q periods do (a period's q steps and the key of the next
  // period's first, which must be there).
  // (A translate by j periods is written as the one a period back translated
  // by P: the same value where it counts, as in jump_waves. Where lay_chains
  // laid the part (steps after a chain's first ready at 0, every time >= 0),
  // a step's key is the finish of the step before; past the first step
  // checked and the first q after the chain's head, that is the translate of
  // the key q steps back: not checked.)
  const bool any_cost = !pt.uniform_, follow = pt.rests_at_zero_;
  std::size_t mj = SIZE_MAX;
  for (std::size_t o = 0; o < nc && mj > 0; ++o) {
    const std::size_t k0 = C.at[o], lim = mj == SIZE_MAX ? C.end[o] : std::min(C.end[o], k0 + mj * q + 1);
    const std::size_t checked_to = std::min(lim, follow ? std::max(k0 + 1, C.head[o] + q + 1) : lim);  // (keys checked below it)
    std::size_t k = k0;
    for (; k < checked_to; ++k) {  // (each translate's start and finish written as it is checked)
      const double st = start[k - q] + Pt;
      if ((any_cost && cost[k] != cost[k - q]) || std::max(pt.ready_at(k, k != C.head[o]), finish[k - 1]) != st) break;
      wstart[k] = st;
      wfinish[k] = finish[k - q] + Pt;
    }
    if (k == checked_to && k < lim) {
      // (from here the steps are not written: lazy, below. Of one cost, every
      // one holds; else up to the first whose cost differs from its step in
      // the period before k0, k0 - q .. k0 - 1, the first that differs from the one q back)
      if (!any_cost) {
        k = lim;
      } else {
        for (std::size_t t = (k - k0) % q; k < lim && cost[k] == cost[k0 - q + t]; ++k)
          if (++t == q) t = 0;
      }
    }
    const std::size_t r = k - k0;
    mj = std::min(mj, r == 0 ? 0 : (r - 1) / q);
  }
  if (mj == SIZE_MAX) mj = 0;
  for (std::size_t o = 0; o < nc && mj > 0; ++o)  // (every translate below 2^32 ns: the last period's are the largest)
    for (std::size_t k = C.at[o] - q; k < C.at[o]; ++k)
      if (!(finish[k] + static_cast<double>(mj) * Pt < 0x1p32)) return false;
  if (mj == 0) {
    ++J.fails;
    return false;
  }
  // Each chain's last 4 steps before its next one written (the booking reads
  // the last; a later jump's last period is within them); every step jumped
  // over is lazy (those 4 as well: their translates are what is written), its
  // times too (step_start, step_finish; the planes' readiness reads them so).
  const std::size_t sm0 = mj * q;
  for (std::size_t o = 0; o < nc; ++o) {
    const std::size_t k0 = C.at[o], hi = sm0 > 4 ? k0 + sm0 - 4 : k0;
    for (std::size_t k = hi; k < k0 + sm0; ++k) {
      const std::size_t kk = (k - k0) / q + 1;
      put_translate(pt, k, k - kk * q, static_cast<double>(kk) * Pt, static_cast<int>(kk * q));
    }
    pt.lazy.push_back({k0, k0 + sm0, q, Pt});
  }
  pt.lazy_times_ = true;
  const Rec* const recs = pt.recs.data();
  const double Pm = static_cast<double>(mj) * Pt;
  const std::size_t sm = mj * q;
  for (std::size_t o = 0; o < nc; ++o) {  // what the booking keeps, over the last period
    for (std::size_t k = C.at[o] + sm - q; k < C.at[o] + sm; ++k) {
      const double f = finish[k];
      if (f > C.late || (f == C.late && static_cast<long long>(k) < C.late_at)) C.late = f, C.late_at = static_cast<long long>(k);
      for (std::size_t u = 0, n = pt.cost_at(k)->n, r0 = pt.first_at(k); u < n; ++u) C.rec_end = std::max(C.rec_end, recs[r0 + u].end);
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
