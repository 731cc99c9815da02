// book() (analytic.cc) over a part of a schedule whose resources no other
// step uses (scin_alike.cc). Internal to the analytic engine.
//
// Steps are taken in order of (ready time, index) and every dep has a smaller
// key than its step (costs >= 0, deps have smaller indices), so the engine
// takes steps in the order of their keys whatever else is queued; the steps
// of a part, restricted to their own queues, are then booked as the whole
// schedule's booking books them: the same reservations, ends and holders.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "base/run_context.h"
#include "model/cost_model.h"
#include "schedule/schedule.h"

namespace scin::part {

// (a lambda inlined where it is called)
#define SCIN_INLINE __attribute__((always_inline))

/// A use's record as book() keeps it; holder: a local step (-1: none).
struct Rec {
  double start = 0, end = 0;
  int holder = -1, holder_use = -1;
  /// The record of a translate by dt in time and ds in steps.
  [[gnu::always_inline]] Rec translated(double dt, int ds) const { return {start + dt, end + dt, holder < 0 ? -1 : holder + ds, holder_use}; }
};

}  // namespace scin::part

#include "engines/analytic/wave_jump.h"
#include "engines/analytic/chain_jump.h"
#include "engines/analytic/loser_tree.h"
#include "engines/analytic/reserve.h"

namespace scin::part {

/// A step's cost, with each use's resource as a local queue. set() also keeps
/// what the booking reads per use (its duration amount / rate, the same
/// division book() makes), so the loop does not go through `c.uses`.
struct Cost {
  StepCost c;
  std::array<int, 4> q{};  // queue of use k (at most 4 uses)
  double l = 0;            // c.latency_total_ns(), summed as book() sums it
  double lead = 0;         // c.fed_lead_ns() (fed uses are reserved this much later, book.h)
  bool paced = false;      // c.fed_paced (fed uses start when their data is there and they are free)
  std::array<double, 4> d{};            // use k's duration (active uses)
  std::array<std::uint8_t, 4> held{};   // use k holds its queue (amount > 0, as book() skips amount <= 0)
  std::array<std::uint8_t, 4> fed{};    // use k is fed by the step's transfers
  std::uint8_t n = 0;                   // uses

  void set(const StepCost& from) {
    c = from;
    l = c.latency_total_ns();
    lead = c.fed_lead_terms ? c.fed_lead_ns() : 0.0;
    paced = c.fed_paced;
    n = static_cast<std::uint8_t>(c.uses.size());
    for (std::size_t k = 0; k < c.uses.size() && k < d.size(); ++k) {
      const ResourceUse& u = c.uses[k];
      held[k] = !(u.amount_bytes <= 0);
      d[k] = held[k] ? u.amount_bytes / u.rate_GBps : 0.0;
      fed[k] = u.fed_by_transfers;
    }
  }
};

/// Local steps 0..m-1 in the order of their schedule indices, in chains: a
/// step has at most one successor inside the part (`succ` of run()), which
/// it releases when it finishes. `ready` starts at the latest finish of each
/// step's deps outside the part; its deps inside are counted in `pending`
/// (a step with none heads a chain).
///
/// The ready steps are taken in order of (ready time, index), as book()'s
/// heap takes them. As a step releases at most one step, there are never more
/// ready steps than chain heads: each head gets a slot, a taken step's slot
/// passes to the step it releases (or empties), and the slots' first is kept
/// by a tournament (loser) tree: log2(slots) comparisons per step instead of
/// a pop and a push. Every key is distinct, so the order is the heap's.
struct Part {
  std::vector<const Cost*> cost;
  std::vector<double> ready, start, finish;
  std::vector<int> pending;
  std::vector<std::uint32_t> first;  // step i's records from first[i]
  std::vector<std::int16_t> bound;   // the use that ended last (-1: none; not bytes: stores of bytes would make
                                     // the compiler reload every vector's fields in the booking loop)
  std::vector<Rec> recs;
  // After run(): the latest finish and the first step with it (-1: none), the latest record's end.
  double latest = -1, latest_rec_end = 0;
  long long latest_at = -1;
  // After run_waves(): the multicasts' latest finish and the first wave with it (-1: none).
  double latest_write = -1;
  long long latest_write_at = -1;

  void resize(std::size_t m) {
    uni_pw_ = 0;
    rests_unwritten_ = unwritten_chains_ = false;
    rr_mode_ = 0;
    cost.assign(m, nullptr);
    ready.assign(m, 0.0);
    pending.assign(m, 0);
  }
  // m steps whose cost, ready and pending the caller writes, every one.
  void size_to(std::size_t m) {
    uni_pw_ = 0;
    rests_unwritten_ = unwritten_chains_ = false;
    rr_mode_ = 0;
    cost.resize(m);
    ready.resize(m);
    pending.resize(m);
  }

  /// Records by step index: step i's uses from first[i] (book() appends them
  /// in the order taken; only where they are differs, not what they hold).
  void place_records() {
    const std::size_t m = cost.size();
    first.resize(m);
    std::size_t all = 0;
    for (std::size_t i = 0; i < m; ++i) {
      first[i] = static_cast<std::uint32_t>(all);
      all += cost[i]->n;
    }
    recs.resize(all);
  }

  /// Books the part; `succ(i)`: the step i releases (< 0: none).
  template <class Succ>
  void run(int queues, Succ succ, const RunContext& ctx);

  /// The waves of one SCIN plane (scin_alike.cc), booked as run() books
  /// them without the slots: local step pw w + sub is wave w's read (sub 0),
  /// requantise (pw = 3: sub 1) and multicast (sub pw - 1); each releases the
  /// next, a multicast the read F waves on (`ready` and `pending` as for run(),
  /// left as they are). Queues: 0 and 1 (the egress and ingress classes) and
  /// 2 (the reduce unit) are used by one kind of step each; 3 (the INQ unit,
  /// pw = 3) by reads and requantises.
  ///
  /// Only a queue's own users' order matters to its reservations, and run()
  /// takes steps by increasing (ready time, index). So when the reads' keys
  /// increase with the wave, and so do the requantises' and the multicasts',
  /// reads and multicasts can be taken wave after wave, and reads and
  /// requantises merged by key (queue 3): each queue then sees its users in
  /// run()'s order. And a queue whose requested starts do not decrease books
  /// every use at its end (a gap before its last block would end at a request
  /// made earlier, so at or before this one): its last block is all the state
  /// it needs. Both are checked as the waves are booked; false (nothing kept)
  /// when either fails: then run().
  bool run_waves(int pw, int F, const RunContext& ctx) {
    if (pw == 2) return run_waves_<2>(F, ctx);  // (SCIN: queue 3 unused, known when it compiles)
    if (pw == 3) return run_waves_<3>(F, ctx);
    return false;
  }
  /// A plane's W waves laid out as run_waves reads them, by a caller that
  /// knows their shape (scin_alike.cc): wave w's steps cost `wc[zs[w] PW +
  /// sub]` (`ns` sizes), its read is ready at `read_ready(w)`, the other
  /// steps at 0, pending as run() reads it. Each of the ns PW costs is checked
  /// once (its queues as run_waves' layout check has them, whether it is on
  /// the grid); the next run_waves then skips its step-by-step layout check
  /// (`laid_`). Only the reads' `ready` is written: the rests' (0) and
  /// `pending` are not, nor, with one size, `cost` and `first` (cost_at and
  /// first_at tell them); lay_all() writes them all (for run()).
  /// `told` (one size only): the reads' readiness is max(base, qf[w]) (qf
  /// null: base), told by read_ready_at and not written (the booking reads it there).
  /// (`chain`: the part whose finishes qf points into, from step `off`: where
  /// a jump left its times lazy, they are read through step_finish, and the
  /// jump over the plane's waves reads its repeats: reads_repeat.)
  struct ReadsTold {
    double base = 0;
    const double* qf = nullptr;
    const Part* chain = nullptr;
    std::size_t off = 0;
  };
  template <int PW, class ReadyOf>
  void lay_waves(std::size_t W, int F, const Cost* wc, std::size_t ns, const std::uint8_t* zs, ReadyOf read_ready,
                 const ReadsTold* told = nullptr);
  /// Wave w's read's readiness (after lay_waves; its pw steps a wave).
  [[gnu::always_inline]] double read_ready_at(std::size_t w, std::size_t pw) const {
    return rr_mode_ == 0 ? ready[pw * w] : rr_mode_ == 1 ? rr_base_ : std::max(rr_base_, read_qf_at(w));
  }
  /// The told readiness's qf[w] (its chain's finish; -inf without one).
  [[gnu::always_inline]] double read_qf_at(std::size_t w) const {
    if (rr_mode_ == 2) return rr_qf_[w];
    if (rr_mode_ == 3) return step_finish(*rr_chain_, rr_off_ + w);
    return -std::numeric_limits<double>::infinity();
  }
  /// Where the told reads' qf repeats with a period of p waves: for every
  /// wave v in [w, end), qf[v] = qf[v - p] + Pr exactly (the chain's steps
  /// lazy translates, their period dividing p; no qf: end unbounded, Pr
  /// -inf). end <= w: none at w, and none before `next`.
  struct Repeat {
    std::size_t end, next;
    double Pr;
  };
  Repeat reads_repeat(std::size_t w, std::size_t p) const;

  /// After lay_waves: every step's cost, first record, pending and ready written (as run() reads them).
  void lay_all();
  /// Step i's cost and the index of its first record (lay_waves of one size: not in `cost` and `first`).
  [[gnu::always_inline]] const Cost* cost_at(std::size_t i) const {
    if (!uni_pw_) return cost[i];
    return uni_[i - uni_pw_ * div_small(i, uni_pw_)];
  }
  [[gnu::always_inline]] std::uint32_t first_at(std::size_t i) const {
    if (!uni_pw_) return first[i];
    const std::size_t w = div_small(i, uni_pw_);
    return static_cast<std::uint32_t>(w) * uni_per_ + uni_pre_[i - uni_pw_ * w];
  }
  /// A step's ready time where lay_waves left the rests' unwritten (at 0).
  double ready_at(std::size_t i, bool rest) const { return rest && rests_unwritten_ ? 0.0 : ready[i]; }

  /// INQ's quantise chains laid out as run_chains reads them, by a caller
  /// that knows their shape (scin_alike.cc) and wrote every step's cost: a
  /// chain starts at each k with `head[k]` (ready at `r0`, pending none), the
  /// other steps ready at 0, pending one. Ready, pending and each step's first
  /// record written and the costs checked (queue 0, on the grid) where they
  /// change, in one pass; the next run_chains then skips its layout check.
  ///
  /// `one`: every step costs *one, and the caller wrote no `cost`: then only
  /// the heads' ready is written (the others' is 0; `cost` and `first` are
  /// told by cost_at and first_at, pending is not written; lay_all() writes them).
  void lay_chains(const std::uint8_t* head, double r0, const Cost* one = nullptr);
  // Waves (steps of chains) written as translates of earlier ones by the last run_waves (run_chains; wave_jump.h).
  std::size_t jumped_waves = 0, jumped_chain_steps = 0;
  // Steps not written (translates of earlier ones: read them with wave_jump.h's step_start etc.).
  std::vector<Lazy> lazy;
  bool lazy_times_ = false;  // (a jump left the lazy steps' start and finish unwritten too)

  template <int PW>
  bool run_waves_(int F, const RunContext& ctx) {
    constexpr int pw = PW;
    const std::size_t m = cost.size();
    jumped_waves = 0;
    lazy.clear();
    lazy_times_ = false;
    const bool was_laid = laid_ && !laid_chains_ && laid_pw_ == PW;  // (lay_waves wrote the layout)
    const bool laid = was_laid && laid_ok_;                          // (and it is run_waves')
    laid_ = laid_chains_ = false;
    uniform_ = laid && laid_uniform_;
    rests_at_zero_ = laid && laid_nonneg_;
    if (F < 1 || m % static_cast<std::size_t>(pw) != 0 || (was_laid && !laid_ok_)) return false;
    const std::size_t W = m / static_cast<std::size_t>(pw), uF = static_cast<std::size_t>(F);
    const auto upw = static_cast<std::size_t>(pw);
    const Cost* checked[3] = {nullptr, nullptr, nullptr};  // (a wave's costs repeat: checked when they change)
    bool grid = !laid || laid_grid_;  // every cost on the cost grid (the jump's translates exact)
    // The layout checked and each step's first record, in one pass (locals:
    // the pending and cost arrays are read through pointers that stay).
    first.resize(m);
    std::uint32_t* const fst = first.data();
    const int* const pend = pending.data();
    const Cost* const* const cs = cost.data();
    std::size_t all = laid ? laid_recs_ : 0;
    for (std::size_t w = 0, i = 0; w < W && !laid; ++w)
      for (std::size_t sub = 0; sub < upw; ++sub, ++i) {
        const Cost& k = *cs[i];
        fst[i] = static_cast<std::uint32_t>(all);
        all += k.n;
        if (pend[i] != ((sub > 0 || w >= uF) ? 1 : 0)) return false;
        if (checked[sub] == &k) continue;
        checked[sub] = &k;
        // (every read the same lead: their fed uses are then booked in their order, below; a read
        // without one books its units when it is taken, maybe before an earlier read's data arrives)
        if (sub == 0 && k.lead != cs[0]->lead) return false;
        grid = grid && on_grid_cost(k);
        // (queues: a read's 0, 2, 3; a requantise's 3; a multicast's 1)
        for (std::size_t u = 0; u < k.n; ++u)
          if (sub == 0 ? !(k.q[u] == 0 || k.q[u] == 2 || (k.q[u] == 3 && pw == 3)) : k.q[u] != (sub + 1 == upw ? 1 : 3))
            return false;
      }
    auto& qs = qs_;
    qs.resize(4);
    qs[3].v.clear();
    qs[3].head = 0;
    WaveLoop L;
    start.resize(m);
    finish.resize(m);
    bound.resize(m);
    recs.resize(all);
    bool ok = true;
    auto res = [&](int q, double r, double& st, double d, int& holder, int& holder_use, int step, int use) SCIN_INLINE {
      if (PW == 3 && q == 3) {  // (pw = 2: no use on queue 3, checked above)
        reserve(qs[3], r, st, d, holder, holder_use, step, use);
        return true;
      }
      if (!L.fifo[q].book(st, d, holder, holder_use, step, use)) return ok = false;
      return true;
    };
    auto keep = [&](std::size_t i, double f) SCIN_INLINE {
      if (f > L.late || (f == L.late && static_cast<long long>(i) < L.late_at)) L.late = f, L.late_at = static_cast<long long>(i);
    };
    // Each stream's keys must not decrease (indices grow with the wave).
    auto read_key = [&](std::size_t a) SCIN_INLINE {
      return a >= uF ? std::max(read_ready_at(a, upw), finish[upw * (a - uF) + upw - 1]) : read_ready_at(a, upw);
    };
    auto take_read = [&](std::size_t a, double r) SCIN_INLINE {
      if (r < L.last_read || (PW == 3 && defers(upw * a))) return false;
      L.last_read = r;
      keep(upw * a, take(upw * a, r, res, L.rec_end));
      return ok;
    };
    // A requantise (pw = 3) and the multicast it releases, or a read's multicast.
    auto take_rest = [&](std::size_t b) SCIN_INLINE {
      std::size_t i = upw * b + 1;
      double r = std::max(ready_at(i, true), finish[i - 1]);
      if (pw == 3) {
        if (r < L.last_req) return false;
        L.last_req = r;
        const double f = take(i, r, res, L.rec_end);
        keep(i, f);
        if (!ok) return false;
        ++i;
        r = std::max(ready_at(i, true), f);
      }
      if (r < L.last_write) return false;
      L.last_write = r;
      const double f = take(i, r, res, L.rec_end);
      keep(i, f);
      if (f > L.late_write) L.late_write = f, L.late_write_at = static_cast<long long>(b);
      return ok;
    };
    // The periodic jump (wave_jump.h): snapshots at reads from F + 4 on (and
    // where reads wait for their data, once those are too), while they may
    // still find a period and save something.
    WaveJump& J = jump_;
    J.reset(W);
    bool jump_on = grid && W >= 2 * uF + 16;
    auto jump = [&](std::size_t a, double T) SCIN_INLINE {
      if (!jump_on || a < uF + 4 || (L.p2 && L.a2 < uF + 4) || a + 1 >= W) return false;
      if (!J.wanted()) return jump_on = false;
      return jump_waves<PW>(*this, L, a, T, uF, W);
    };
    const bool deferred = PW == 3 && defers(0);  // (the reads' fed units wait for their data: part_deferred.h)
    auto probe = [&](int q, double st, double d, int& step, int& use) {  // (paced reads: res's queues, unchanged)
      if (PW == 3 && q == 3) return analytic::first_fit(qs[3], st, d, step, use);
      const Fifo& f = L.fifo[q];
      if (f.step >= 0 && f.end > st) st = f.end, step = f.step, use = f.use;
      return st;
    };
    if (deferred && !waves_deferred_(L, W, uF, res, probe, keep, read_key, take_rest, jump, ok, ctx)) return false;
    while (!deferred && L.b < W) {
      std::size_t& a = L.a;
      std::size_t& b = L.b;
      if (((a + b) & 0x3ff) == 0) ctx.check();
      if (pw == 2) {
        a = b;
        const double r = read_key(b);
        if (jump(b, r)) continue;
        if (!take_read(b, r) || !take_rest(b)) return false;
        ++b;
        continue;
      }
      // The read's multicast F waves back is done once requantise a - F (and its multicast) is.
      const bool read_ready = a < W && (a < uF || a - uF < b);
      if (read_ready && b < a) {
        const double ra = read_key(a), rb = std::max(ready_at(upw * b + 1, true), finish[upw * b]);
        if (ra < rb) {  // (equal: the requantise first, its index is the smaller)
          if (jump(a, ra)) continue;
          if (!take_read(a, ra)) return false;
          ++a;
        } else {
          if (!take_rest(b)) return false;
          ++b;
        }
      } else if (read_ready) {
        const double ra = read_key(a);
        if (jump(a, ra)) continue;
        if (!take_read(a, ra)) return false;
        ++a;
      } else {
        if (!take_rest(b)) return false;
        ++b;
      }
    }
    latest = L.late;
    latest_at = L.late_at;
    latest_rec_end = L.rec_end;
    latest_write = L.late_write;
    latest_write_at = L.late_write_at;
    return true;
  }
  /// INQ's quantise chains of one class of ranks (scin_alike.cc): local
  /// step k releases k + 1 unless `head[k + 1]`; steps with `head[k]` are
  /// ready at `ready[k]`, the others pending one step; every use on queue 0
  /// (the HBM). Booked as run() books them: the chains' heads taken by
  /// (ready time, index) by a scan over up to 8 chains, queue 0 at its end
  /// while its requested starts do not decrease (checked; run_waves). False
  /// (nothing kept) where that fails or there are more chains: then run().
  bool run_chains(const std::uint8_t* head, const RunContext& ctx);

 private:
  // Books step i, ready at r, through `res` (a queue's reserve); keeps its
  // start, finish, bound use and records. Returns its finish.
  // (with the number of uses known when it compiles, for SCIN's costs of 1-3 uses)
  template <class Res>
  [[gnu::always_inline]] double take(std::size_t i, double r, Res& res, double& rec_end) {
    switch (cost_at(i)->n) {
      case 1: return take_n<1>(i, r, res, rec_end);
      case 2: return take_n<2>(i, r, res, rec_end);
      case 3: return take_n<3>(i, r, res, rec_end);
      default: return take_n<0>(i, r, res, rec_end);
    }
  }
  // N > 0: the cost has N uses; 0: any number.
  template <std::size_t N, class Res>
  [[gnu::always_inline]] double take_n(std::size_t i, double r, Res& res, double& rec_end) {
    const Cost& k = *cost_at(i);
    const double t0 = r + k.c.fixed_ns;
    double end = t0, fed_end = t0;
    int fed_by = -1;
    int last_use = -1;
    Rec* const rec = recs.data() + first_at(i);
    const std::size_t n = N > 0 ? N : k.n;
#pragma GCC unroll 4
    for (std::size_t u = 0; u < n; ++u) {
      if (!k.held[u]) {
        rec[u] = Rec{t0, t0, -1, -1};
        rec_end = std::max(rec_end, t0);
        continue;
      }
      const double d = k.d[u];
      double st = t0;
      int holder = -1, holder_use = -1;
      if (k.fed[u] && fed_end - d > st) {
        st = fed_end - d;
        holder = static_cast<int>(i);
        holder_use = fed_by;
      }
      // (a read with a lead, SCIN's run_waves only: its reduce unit, used by reads
      // alone and booked at its end in their order, gets what its second event
      // would give it; part_deferred.h)
      if (k.fed[u] && k.lead > 0) {
        const double want = st + k.lead;
        double at = want;
        res(k.q[u], r, at, d, holder, holder_use, static_cast<int>(i), static_cast<int>(u));
        if (at != want) st = at - k.lead;
      } else {
        res(k.q[u], r, st, d, holder, holder_use, static_cast<int>(i), static_cast<int>(u));
      }
      const double e = st + d;
      rec[u] = Rec{st, e, holder, holder_use};
      rec_end = std::max(rec_end, e);
      if (!k.fed[u] && e > fed_end) {
        fed_end = e;
        fed_by = static_cast<int>(u);
      }
      if (e > end) {
        end = e;
        last_use = static_cast<int>(u);
      }
    }
    bound[i] = static_cast<std::int16_t>(last_use);
    start[i] = r;
    return finish[i] = end + k.l;
  }

  // A step whose units are fed by its transfers with a lead (StepCost::fed_lead_terms)
  // is booked in two events, as book() books it: its other uses when it is
  // taken (take_first, which returns when its data arrives at the units), its
  // fed uses then (take_second, which finishes it). part_deferred.h.
  bool defers(std::size_t i) const;
  struct Deferred {
    double t0 = 0, end = 0, fed_end = 0;
    int fed_by = -1, last_use = -1;
    int blocker = -1, blocker_use = -1;  // (paced: the reservation its units waited for)
  };
  std::vector<std::uint8_t> p2_;    // run(): the step's second event is queued
  std::vector<Deferred> deferred_;  // by step: its first event's outcome (sized by the booking)
  std::vector<double> p2_key_;      // run_waves: by wave, its read's second event's key
  static double recorded(Rec& rec, double st, double d, int holder, int holder_use, double& rec_end, double& end, int& last_use,
                         std::size_t u);
  template <class Res>
  double take_first(std::size_t i, double r, Res& res, double& rec_end);
  template <class Res>
  double take_second(std::size_t i, double r, Res& res, double& rec_end);
  template <class Probe>
  double paced_shift(std::size_t i, double r, Probe& probe);
  // run_waves_ (PW = 3) where the reads defer: three streams merged (part_deferred.h).
  template <class Res, class Probe, class Keep, class ReadKey, class Rest, class Jump>
  bool waves_deferred_(WaveLoop& L, std::size_t W, std::size_t uF, Res& res, Probe& probe, Keep& keep, ReadKey& read_key,
                       Rest& take_rest, Jump& jump, const bool& ok, const RunContext& ctx);

  static constexpr double kNever = std::numeric_limits<double>::infinity();
  struct Busy {
    double start, end;
    int step, use;
  };
  struct Queue {
    std::vector<Busy> v;
    std::size_t head = 0;
  };
  // analytic::reserve() (reserve.h), the same reservations: the first
  // reservation from the head on that ends after `start` is looked for from
  // the back first (ends grow along the queue; most uses land at its end or
  // next to it), by binary search beyond a few steps.
  [[gnu::always_inline]] static void reserve(Queue& qu, double ready, double& start, double d, int& holder, int& holder_use, int step,
                      int use);

  // lay_waves' layout (read and cleared by the next run_waves): written, its
  // costs' queues as run_waves has them, on the grid, of one size; its records.
  // And every time it books is >= 0 (reads ready at >= 0, costs >= 0).
  bool laid_ = false, laid_ok_ = false, laid_grid_ = false, laid_uniform_ = false, laid_nonneg_ = false;
  std::size_t laid_recs_ = 0;
  // (lay_chains: laid as chains, and the chains' first steps)
  bool laid_chains_ = false;
  int laid_pw_ = 0;
  int rr_mode_ = 0;  // (lay_waves told: 0 the reads' ready written, 1 all at rr_base_, 2 max(rr_base_, rr_qf_[w]),
                     // 3 max(rr_base_, the chain's step_finish(rr_off_ + w)))
  double rr_base_ = 0;
  const double* rr_qf_ = nullptr;
  const Part* rr_chain_ = nullptr;
  std::size_t rr_off_ = 0;
  bool unwritten_chains_ = false;            // (lay_chains with one cost: ready, pending, cost, first not written)
  const std::uint8_t* lay_head_ = nullptr;  // (lay_chains: its heads and their readiness, for lay_all)
  double lay_r0_ = 0;
  // lay_waves' plane (for lay_all); of one size: the costs of a wave's steps,
  // their records' offsets in a wave and a wave's records (uni_pw_ 0: `cost`
  // and `first` written); the rests' ready and pending not written.
  std::size_t lay_W_ = 0;
  int lay_F_ = 0;
  const Cost* lay_wc_ = nullptr;
  const std::uint8_t* lay_zs_ = nullptr;
  std::size_t uni_pw_ = 0;
  const Cost* uni_[3] = {};
  std::uint32_t uni_pre_[3] = {}, uni_per_ = 0;
  bool rests_unwritten_ = false;
  std::size_t laid_nc_ = 0, laid_head_[8] = {};
  // (run_waves, for the jump: every wave's costs are the first wave's, step
  // by step; rests ready at 0 and every time >= 0, so a rest's key is its dep's finish)
  bool uniform_ = false, rests_at_zero_ = false;
  std::vector<Queue> qs_;  // (kept with the slots for the next run)
  WaveJump jump_, chain_jump_;
  template <class P>
  friend bool jump_chains(P& pt, ChainLoop& C);
  template <int PW, class P>
  friend bool jump_waves(P& pt, WaveLoop& L, std::size_t a, double T, std::size_t F, std::size_t W);
  LoserTree tree_;  // (run()'s slots)
};

}  // namespace scin::part

#include "engines/analytic/part_layout.h"
#include "engines/analytic/part_deferred.h"
#include "engines/analytic/part_run.h"

#undef SCIN_INLINE
