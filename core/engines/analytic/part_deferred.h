// Reads whose fed units wait for their data (StepCost::fed_lead_terms): booked
// in two events, as book() (book.h) books them; members of part::Part
// (part_booking.h, which includes this file at its end). Internal to the
// analytic engine.
//
// An ISA read's units (its reduce and INQ units) get the data a lead after
// the read's transfers move it: the request down, the memory access and the
// response up. book() books the transfers when the read is taken (its first
// event) and the fed units when the data arrives (its second event, in time
// order with every other step), so work that is ready before the data (a
// requantise of an earlier wave) may take the unit meanwhile.
#pragma once

#include "engines/analytic/reserve.h"

namespace scin::part {

inline bool Part::defers(std::size_t i) const {
  const Cost& k = *cost_at(i);
  if (!(k.lead > 0)) return false;
  for (std::size_t u = 0; u < k.n; ++u)
    if (k.fed[u] && k.held[u]) return true;
  return false;
}

// A use booked from st for d: its record, the latest record end, the step's
// end and the use that ends it. Returns the use's end.
inline double Part::recorded(Rec& rec, double st, double d, int holder, int holder_use, double& rec_end, double& end,
                             int& last_use, std::size_t u) {
  const double e = st + d;
  rec = Rec{st, e, holder, holder_use};
  rec_end = std::max(rec_end, e);
  if (e > end) {
    end = e;
    last_use = static_cast<int>(u);
  }
  return e;
}

// The uses that are not fed (the transfers) booked at r; returns the second
// event's key, when the data reaches the first fed unit.
template <class Res>
double Part::take_first(std::size_t i, double r, Res& res, double& rec_end) {
  const Cost& k = *cost_at(i);
  const double t0 = r + k.c.fixed_ns;
  double end = t0, fed_end = t0;
  int fed_by = -1, last_use = -1;
  Rec* const rec = recs.data() + first_at(i);
  for (std::size_t u = 0; u < k.n; ++u) {
    if (!k.held[u]) {
      rec[u] = Rec{t0, t0, -1, -1};
      rec_end = std::max(rec_end, t0);
      continue;
    }
    if (k.fed[u]) continue;
    const double d = k.d[u];
    double st = t0;
    int holder = -1, holder_use = -1;
    res(k.q[u], r, st, d, holder, holder_use, static_cast<int>(i), static_cast<int>(u));
    const double e = recorded(rec[u], st, d, holder, holder_use, rec_end, end, last_use, u);
    if (e > fed_end) {
      fed_end = e;
      fed_by = static_cast<int>(u);
    }
  }
  double T = kNever;
  for (std::size_t u = 0; u < k.n; ++u)
    if (k.fed[u] && k.held[u]) T = std::min(T, k.lead + std::max(t0, fed_end - k.d[u]));
  if (deferred_.size() <= i) deferred_.resize(cost.size());
  deferred_[i] = Deferred{t0, end, fed_end, fed_by, last_use};
  start[i] = r;
  return T;
}

// The fed uses, at the second event (key r): reserved a lead after the
// transfers' records place them (recorded as the transfers see them, a lead
// earlier than the unit's reservation), finishing with the last data or
// later. Returns the step's finish.
template <class Res>
double Part::take_second(std::size_t i, double r, Res& res, double& rec_end) {
  const Cost& k = *cost_at(i);
  const Deferred& s = deferred_[i];
  double end = s.end;
  int last_use = s.last_use;
  Rec* const rec = recs.data() + first_at(i);
  for (std::size_t u = 0; u < k.n; ++u) {
    if (!k.fed[u] || !k.held[u]) continue;
    const double d = k.d[u];
    double st = s.t0;
    int holder = -1, holder_use = -1;
    if (s.fed_end - d > st) {
      st = s.fed_end - d;
      holder = static_cast<int>(i);
      holder_use = s.fed_by;
    }
    if (k.paced && r > st + k.lead) {  // (taken again: it waited for the units' blocker)
      st = r - k.lead;
      holder = s.blocker;
      holder_use = s.blocker_use;
    }
    const double want = st + k.lead;
    double at = want;
    res(k.q[u], r, at, d, holder, holder_use, static_cast<int>(i), static_cast<int>(u));
    if (at != want) st = at - k.lead;
    recorded(rec[u], st, d, holder, holder_use, rec_end, end, last_use, u);
  }
  bound[i] = static_cast<std::int16_t>(last_use);
  return finish[i] = end + k.l;
}

// Paced fed units (StepCost::fed_paced) at the second event (key r): how far
// past its wanted start the first gap of the slowest fed unit lies (0: every
// one free then; probe(q, start, d, step, use): analytic::first_fit), and the
// reservation it would wait for (kept in the step's Deferred for take_second).
template <class Probe>
double Part::paced_shift(std::size_t i, double r, Probe& probe) {
  const Cost& k = *cost_at(i);
  Deferred& s = deferred_[i];
  double shift = 0;
  for (std::size_t u = 0; u < k.n; ++u) {
    if (!k.fed[u] || !k.held[u]) continue;
    const double d = k.d[u];
    const double want = std::max(r, std::max(s.t0, s.fed_end - d) + k.lead);
    int bs = -1, bu = -1;
    const double at = probe(k.q[u], want, d, bs, bu);
    if (at - want > shift) shift = at - want, s.blocker = bs, s.blocker_use = bu;
  }
  return shift;
}

// SCIN+INQ's waves where the reads defer: three streams, each in wave order
// (its keys not decreasing, checked), merged by (key, index) as run() takes
// them: the reads' first events (a, while its multicast dep is done), their
// second events (L.a2 < a) and the requantises with their multicasts (b <
// L.a2, the read done). The periodic jump is tried at each read (wave_jump.h:
// its snapshot holds the pending second events). False (nothing kept) where a
// check fails (`ok`: the queues' own checks, run_waves_'s `res`): then run().
template <class Res, class Probe, class Keep, class ReadKey, class Rest, class Jump>
bool Part::waves_deferred_(WaveLoop& L, std::size_t W, std::size_t uF, Res& res, Probe& probe, Keep& keep, ReadKey& read_key,
                           Rest& take_rest, Jump& jump, const bool& ok, const RunContext& ctx) {
  constexpr std::size_t upw = 3;
  L.p2 = true;
  L.a2 = 0;
  L.last_p2 = -kNever;
  p2_key_.resize(W);
  deferred_.resize(cost.size());
  double* const T2 = p2_key_.data();
  auto less = [](double x, std::size_t ix, double y, std::size_t iy) { return x < y || (x == y && ix < iy); };
  while (L.b < W) {
    std::size_t &a = L.a, &a2 = L.a2, &b = L.b;
    if (((a + a2 + b) & 0x3ff) == 0) ctx.check();
    const bool can1 = a < W && (a < uF || a - uF < b), can2 = a2 < a, can3 = b < a2;
    const std::size_t i1 = upw * a, i2 = upw * a2, i3 = upw * b + 1;
    const double k1 = can1 ? read_key(a) : kNever, k2 = can2 ? T2[a2] : kNever;
    const double k3 = can3 ? std::max(ready_at(i3, true), finish[upw * b]) : kNever;
    int pick = can1 ? 1 : 0;
    if (can2 && (pick == 0 || less(k2, i2, k1, i1))) pick = 2;
    if (can3 && (pick == 0 || (pick == 1 ? less(k3, i3, k1, i1) : less(k3, i3, k2, i2)))) pick = 3;
    if (pick == 1) {
      if (jump(a, k1)) continue;
      if (!defers(i1) || k1 < L.last_read) return false;
      L.last_read = k1;
      T2[a] = take_first(i1, k1, res, L.rec_end);
      if (!ok) return false;
      ++a;
    } else if (pick == 2) {
      if (k2 < L.last_p2) return false;
      if (const double sh = cost_at(i2)->paced ? paced_shift(i2, k2, probe) : 0.0; sh > 0) {
        T2[a2] = k2 + sh;  // (taken again when its units are free; a later read's data before that: declined above)
        continue;
      }
      L.last_p2 = k2;
      keep(i2, take_second(i2, k2, res, L.rec_end));
      if (!ok) return false;
      ++a2;
    } else if (pick == 3) {
      if (!take_rest(b)) return false;
      ++b;
    } else {
      return false;
    }
  }
  return true;
}

}  // namespace scin::part
