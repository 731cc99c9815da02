// The periodic jump of NVLS by classes of ports (nvls_alike.cc). Internal to
// the analytic engine.
//
// Every cost the engine books is on the cost grid (model/cost_grid.h), so
// every time is an exact sum, a tie is a true tie decided by the step ids, and
// a booking state translated by a multiple of the grid evolves as the
// translate of its evolution. At each boundary (rank 0's ld_reduce of chunk cb
// popped, not yet booked), the whole state that decides the future is taken
// relative to the boundary's time T and chunk cb: the ready set (times - T,
// ids - 2 cb), per rank which of its loads and stores were taken (from the
// first chunk whose store was not, to where every later chunk is untouched:
// neither of the two stores before it taken), each member's busy time from T
// on (classes E and I) with its blocks' last users (the holders the booking
// records for the critical path) and the NVLS unit's blocks from T on with
// their holders. The ready set is compared first; the rest is taken only at
// a boundary whose ready set equals one 1..kPeriods - 1 chunks before. A step not released is untouched or waits for a store (its ready
// time, the first barrier's, is <= T and never decides again). If the state
// equals, bit for bit, the state p chunks earlier (p = 1..kPeriods - 1), and
// every rank's chunk sizes repeat with period p, the booking from here on is
// the last p chunks' booking translated by (P = T - T', p chunks) for as long
// as no step reaches the last chunks: every comparison, max and sum the
// booking makes is translated exactly. So m whole periods are written as the
// translates of the last one (every step's start and finish, the use that
// ended last and on which member, the unit's uses and holders, the order the
// steps were taken: what the critical path's walk reads), the state is
// translated by m periods, and booking goes on to the end. Members alone only
// (n <= 16: member groups are not compared); elsewhere everything is booked.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "engines/analytic/nvls_groups.h"
#include "engines/analytic/nvls_work.h"
#include "engines/analytic/ready_queue.h"

namespace scin::nvls {

class Jump {
 public:
  static constexpr int kPeriods = 5;  // periods of 1..4 chunks are looked for
  using Item = ready_queue::Item;

  // The booking's state, as nvls_alike.cc keeps it.
  struct Booking {
    int n, chunks;
    StepId first_chunk, arrive1;  // the first load's id; the first id after the chunks
    std::vector<double>&ready, &start, &finish;
    std::vector<std::uint8_t>& pending;
    std::vector<std::uint8_t>& bound;
    std::vector<int>& bound_member;
    std::vector<Rec>& rec_u;
    std::vector<Taken>& taken;
    std::vector<std::uint32_t>& taken_at;
    std::size_t& taken_n;
    std::size_t& done;
    Ready& heap;
    Members &members_e, &members_i;
    Queue& unit;
    const std::vector<std::uint8_t>& size_of;  // per chunk (rank * chunks + chunk): its size's index
    const std::vector<Rep>& loads;              // by size
  };

  // `on`: the jump may be taken (members alone, enough chunks); off where no
  // period of 1..kPeriods - 1 chunks fits every rank's chunk sizes.
  Jump(Booking b, Work& w, bool on) : b_(b), w_(w), on_(on) {
    if (!on_) return;
    const auto uc = static_cast<std::size_t>(b_.chunks), un = static_cast<std::size_t>(b_.n);
    // (One size everywhere, the common case: every period fits. `loads` has
    // one entry per distinct size.)
    const std::uint8_t* z = b_.size_of.data();
    const bool one_size = b_.loads.size() == 1;
    bool any = false;
    for (int p = 1; p < kPeriods; ++p) {
      bool ok = true;
      for (std::size_t r = 0; !one_size && ok && r < un; ++r)
        for (std::size_t c = static_cast<std::size_t>(p); ok && c < uc; ++c)
          ok = z[r * uc + c] == z[r * uc + c - static_cast<std::size_t>(p)];
      periodic_[p] = ok;
      any = any || ok;
    }
    on_ = any;
    if (!on_) return;
    w_.took.assign(2 * un * uc, 0);
    w_.lo.assign(un, 0);
    w_.stop.assign(un, 0);
    w_.snaps.resize(kPeriods);
    for (Work::Snap& sn : w_.snaps) sn.cb = -1;
  }

  bool on() const { return on_; }
  // The first load's id.
  StepId first_chunk() const { return b_.first_chunk; }
  // The chunks per rank jumped (0: none).
  int jumped() const { return jumped_; }
  // What the jump copied (for the critical path's walk, nvls_walk.h).
  const Period& period() const { return per_; }

  // Each step popped from the ready set, before it is booked. True if it
  // jumped: `top` is then back in the ready set (translated), and the caller
  // pops again.
  bool popped(const Item& top) {
    if (top.second < b_.first_chunk) {
      ++pre_taken_;
      return false;
    }
    const StepId x = top.second - b_.first_chunk;
    if (x >= 2 * static_cast<StepId>(b_.chunks) || x % 2 != 0) return false;  // not rank 0's ld_reduce
    return boundary(top, static_cast<int>(x / 2));
  }
  // A load or store (by x = 2 * (rank * chunks + chunk) + store) booked.
  void took(std::size_t x) { w_.took[x] = 1; }

 private:
  Booking b_;
  Work& w_;
  bool on_;
  bool periodic_[kPeriods] = {};
  std::size_t pre_taken_ = 0;  // launches, first barrier's signals and waits taken
  int jumped_ = 0;
  Period per_;
  bool written_ = false;

  StepId chunk_id(int rank, int c, bool store) const {
    return b_.first_chunk + 2 * (static_cast<StepId>(rank) * static_cast<StepId>(b_.chunks) + static_cast<StepId>(c)) +
           (store ? 1 : 0);
  }

  // The state at boundary cb, time T (`top` not yet booked), into sn: its
  // ready set's part (ready_part) and the rest (rest_part); false if not comparable.
  bool ready_part(double T, const Item& top, int cb, Work::Snap& sn) {
    std::vector<double>& out = sn.ready;
    out.clear();
    sn.full = false;
    if (pre_taken_ != 3 * static_cast<std::size_t>(b_.n)) return false;  // the first barrier not passed by all
    // (`top` was popped: it is before every item left. The sorted array
    // keeps them in order from its head on, so only the heap is sorted.)
    std::vector<Item>& items = w_.items;
    const Ready& heap = b_.heap;
    const std::size_t from = heap.sorted ? heap.head : 0, count = heap.v.size() - from;
    items.resize(count + 1);
    items[0] = top;
    std::copy_n(heap.v.begin() + static_cast<std::ptrdiff_t>(from), count, items.begin() + 1);
    if (!heap.sorted) std::sort(items.begin(), items.end(), ready_queue::before);
    const double shift = 2.0 * static_cast<double>(cb);
    out.resize(1 + 2 * items.size());
    double* o = out.data();
    *o++ = static_cast<double>(items.size());
    for (const Item& it : items) {
      if (it.second < b_.first_chunk || it.second >= b_.arrive1) return false;
      *o++ = it.first - T;
      *o++ = static_cast<double>(it.second) - shift;
    }
    sn.t = T;
    sn.taken_n = b_.taken_n;
    sn.cb = cb;
    return true;
  }
  bool rest_part(double T, int cb, Work::Snap& sn) {
    std::vector<double>& out = sn.v;
    out.clear();
    const double shift = 2.0 * static_cast<double>(cb);
    const auto uc = static_cast<std::size_t>(b_.chunks);
    const std::vector<std::uint8_t>& took = w_.took;
    int stop_max = 0;
    for (int rk = 0; rk < b_.n; ++rk) {
      const std::size_t base = 2 * static_cast<std::size_t>(rk) * uc;  // x of (rk, chunk 0, load)
      auto store_taken = [&](int c) { return took[base + 2 * static_cast<std::size_t>(c) + 1] != 0; };
      int& l = w_.lo[static_cast<std::size_t>(rk)];
      while (l < b_.chunks && store_taken(l)) ++l;
      out.push_back(static_cast<double>(l - cb));
      int c = l;
      for (;; ++c) {
        if (c >= l + 2 && !store_taken(c - 2) && !store_taken(c - 1)) break;  // untouched from c on
        if (c >= b_.chunks) return false;
        out.push_back(took[base + 2 * static_cast<std::size_t>(c)] + 2 * took[base + 2 * static_cast<std::size_t>(c) + 1]);
      }
      out.push_back(-1);
      w_.stop[static_cast<std::size_t>(rk)] = c;
      stop_max = std::max(stop_max, c);
    }
    if (!b_.members_e.busy_from(T, shift, out) || !b_.members_i.busy_from(T, shift, out)) return false;
    const Queue& unit = b_.unit;
    std::size_t a = unit.head;
    while (a < unit.v.size() && unit.v[a].end <= T) ++a;
    out.push_back(static_cast<double>(unit.v.size() - a));
    for (; a < unit.v.size(); ++a) {
      out.push_back(std::max(unit.v[a].start, T) - T);
      out.push_back(unit.v[a].end - T);
      out.push_back(static_cast<double>(unit.v[a].step) - shift);
    }
    sn.stop = stop_max;
    sn.full = true;
    return true;
  }

  // At each boundary: the ready set's part first (cheap); the rest only where
  // it equals the ready part of a boundary 1..kPeriods - 1 chunks before (so
  // the rest is there to compare with at the next boundary: where the state
  // repeats, the jump is found a period after the first repeat). The jump is
  // taken where the whole state equals a full state p chunks before.
  bool boundary(const Item& top, int cb) {
    const double T = top.first;
    Work::Snap& sn = w_.snaps[static_cast<std::size_t>(cb % kPeriods)];
    if (!ready_part(T, top, cb, sn)) {
      sn.cb = -1;
      return false;
    }
    bool any = false;
    for (int p = 1; p < kPeriods && p <= cb && !any; ++p) {
      const Work::Snap& ref = w_.snaps[static_cast<std::size_t>((cb - p) % kPeriods)];
      any = periodic_[p] && ref.cb == cb - p && ref.ready == sn.ready;
    }
    if (!any) return false;
    if (!rest_part(T, cb, sn)) {
      sn.cb = -1;
      return false;
    }
    for (int p = 1; p < kPeriods && p <= cb; ++p) {
      const Work::Snap& ref = w_.snaps[static_cast<std::size_t>((cb - p) % kPeriods)];
      if (!periodic_[p] || ref.cb != cb - p || !ref.full || ref.ready != sn.ready || ref.v != sn.v) continue;
      const double P = T - ref.t;
      const int m = (b_.chunks - 3 - sn.stop) / p;  // the copies' stores stay below chunks - 2
      if (!(P > 0) || m < 1 || !(T + static_cast<double>(m + 1) * P < 0x1p32)) return false;
      apply(m, p, P, T, ref.taken_n);
      on_ = false;
      return true;
    }
    return false;
  }

  // m periods of p chunks and P ns, copied from the reference period
  // (taken[from, taken_n)): the state moved on; the copies' records are
  // written by materialise() (else read through back()).
  void apply(int m, int p, double P, double T, std::size_t from) {
    const std::size_t to = b_.taken_n;
    const int D = m * p;
    // Chunks [max stop, min lo + D) of every rank are all copies.
    per_ = {true, p, m, 0, b_.chunks, P, from, to};
    for (int rk = 0; rk < b_.n; ++rk) {
      per_.lo = std::max(per_.lo, w_.stop[static_cast<std::size_t>(rk)]);
      per_.hi = std::min(per_.hi, w_.lo[static_cast<std::size_t>(rk)] + D);
    }
    b_.taken_n = to + static_cast<std::size_t>(m) * (to - from);
    const double DT = static_cast<double>(m) * P;
    const auto DID = static_cast<StepId>(2 * D);
    // The window's steps moved D chunks on (from the last chunk down: where D
    // is less than the window, a chunk's new place is read before it is written).
    for (int rk = 0; rk < b_.n; ++rk)
      for (int c = w_.stop[static_cast<std::size_t>(rk)] - 1; c >= w_.lo[static_cast<std::size_t>(rk)]; --c)
        for (bool st : {false, true}) {
          const StepId i = chunk_id(rk, c, st), ni = i + DID;
          b_.pending[ni] = b_.pending[i];
          if (b_.pending[i] == 0) b_.ready[ni] = b_.ready[i] + DT;
        }
    // The ready set (snapshot() left it sorted in w_.items, the popped step with it).
    b_.heap.reset();
    for (const Item& it : w_.items) {
      const Item ni{it.first + DT, it.second + DID};
      b_.ready[ni.second] = ni.first;
      b_.pending[ni.second] = 0;
      b_.heap.push(ni);
    }
    b_.members_e.translate(DT, DID);
    b_.members_i.translate(DT, DID);
    b_.unit.prune(T);
    for (std::size_t a = b_.unit.head; a < b_.unit.v.size(); ++a) {
      b_.unit.v[a].start += DT;
      b_.unit.v[a].end += DT;
      b_.unit.v[a].step += DID;
    }
    b_.done += static_cast<std::size_t>(m) * (to - from);
    jumped_ = D;
  }

public:
  // The copies' records written (as booking everything would have), once.
  void materialise() {
    if (!per_.on || written_) return;
    written_ = true;
    const int m = per_.m, p = per_.p;
    const double P = per_.P;
    // The order taken: the reference period's, m times, each p chunks on.
    std::size_t out = per_.to;
    for (int j = 1; j <= m; ++j) {
      const auto did = static_cast<StepId>(2 * p * j);
      const auto dk = static_cast<std::uint32_t>(p * j);
      for (std::size_t e = per_.from; e < per_.to; ++e) {
        const Taken tk = b_.taken[e];
        const std::uint32_t nk = tk.k + dk;
        b_.taken_at[2 * static_cast<std::size_t>(nk) + (tk.load ? 0 : 1)] = static_cast<std::uint32_t>(out);
        b_.taken[out++] = {tk.id + did, nk, tk.rank, tk.load};
      }
    }
    // The records, rank by rank and in chunk order: each load or store the
    // copies take is the translate of the same rank's p chunks before (taken
    // in the reference period or an earlier copy: the copies tile the chunks),
    // by P (so the j-th copy's is the reference's + j P, exact on the grid).
    const int D = m * p;
    const auto dp = static_cast<StepId>(2 * p);
    for (int rk = 0; rk < b_.n; ++rk) {
      const int lo = w_.lo[static_cast<std::size_t>(rk)], stop = w_.stop[static_cast<std::size_t>(rk)];
      for (int st = 0; st < 2; ++st)
        for (int c = lo; c < stop + D; ++c) {
          if (!copied(rk, st, c)) continue;
          const StepId i = chunk_id(rk, c, st != 0);
          const std::size_t x = i - b_.first_chunk, xs = x - dp;
          b_.start[i] = b_.start[i - dp] + P;
          b_.finish[i] = b_.finish[i - dp] + P;
          b_.bound[x] = b_.bound[xs];
          b_.bound_member[x] = b_.bound_member[xs];
          if (st == 0) {
            const std::size_t k = x / 2;
            const Rep& lp = b_.loads[b_.size_of[k]];
            if (lp.has_u && lp.u_amount > 0) {
              const Rec& u = b_.rec_u[k - static_cast<std::size_t>(p)];
              b_.rec_u[k] = {u.start + P, u.end + P, u.holder == kNoStep ? kNoStep : u.holder + dp};
            }
          }
        }
    }
  }

  // For a load or store (its id): the periods back to a record booked (its
  // own: 0), i.e. its record is the one 2 p j ids before, + j P, the holder
  // + 2 p j ids. (Chunks [stop, lo + D) are all copies: passed at once.)
  int back(StepId i) const {
    if (!per_.on || i < b_.first_chunk || i >= b_.arrive1) return 0;
    const StepId x = i - b_.first_chunk;
    const int st = static_cast<int>(x % 2);
    const auto k = static_cast<int>(x / 2);
    const int rk = k / b_.chunks;
    int c = k - rk * b_.chunks, j = 0;
    const int lo = w_.lo[static_cast<std::size_t>(rk)], stop = w_.stop[static_cast<std::size_t>(rk)];
    const int D = per_.m * per_.p;
    while (copied(rk, st, c)) {
      const int s = c >= stop && c < lo + D ? (c - stop) / per_.p + 1 : 1;
      j += s;
      c -= s * per_.p;
    }
    return j;
  }
  // Rank rk's window at the boundary the jump was taken at: its first chunk
  // whose store was not taken, and where every later chunk is untouched.
  int lo_of(int rk) const { return w_.lo[static_cast<std::size_t>(rk)]; }
  int stop_of(int rk) const { return w_.stop[static_cast<std::size_t>(rk)]; }
  // A step's finish (a copy's: the translate of the one back() periods before).
  double finish_of(StepId i) const {
    const int j = back(i);
    return j == 0 ? b_.finish[i] : b_.finish[i - static_cast<StepId>(2 * per_.p * j)] + static_cast<double>(j) * per_.P;
  }

  // The first step of the latest finish (of `total`). Along a copies' chain
  // (chunks p apart) each finish is the one before + P, so only a chain's
  // last may be it (chunks [stop, lo + D - p) of a rank are passed at once).
  StepId latest(std::size_t total) const {
    const std::vector<double>& finish = b_.finish;
    StepId last = 0;
    if (!per_.on || written_) {
      for (std::size_t i = 0; i < total; ++i)
        if (finish[i] > finish[last]) last = static_cast<StepId>(i);
      return last;
    }
    double best = finish[0];
    auto consider = [&](StepId id, double f) {
      if (f > best) best = f, last = id;
    };
    for (StepId i = 0; i < b_.first_chunk; ++i) consider(i, finish[i]);
    const int D = per_.m * per_.p, p = per_.p;
    for (int rk = 0; rk < b_.n; ++rk) {
      const int lo = lo_of(rk), stop = stop_of(rk), hi = std::min(stop + D, b_.chunks);
      // (chunks below lo and from stop + D on are no copies': their own
      // finishes, in id order)
      for (StepId id = chunk_id(rk, 0, false); id < chunk_id(rk, lo, false); ++id) consider(id, finish[id]);
      for (int c = lo; c < hi; ++c) {
        if (c >= stop && c + p < lo + D) {
          c = lo + D - p - 1;
          continue;
        }
        for (int st = 0; st < 2; ++st) {
          const StepId id = chunk_id(rk, c, st != 0);
          if (!copied(rk, st, c))
            consider(id, finish[id]);
          else if (!(c + p < b_.chunks && copied(rk, st, c + p)))
            consider(id, finish_of(id));
        }
      }
      for (StepId id = chunk_id(rk, hi, false); id < chunk_id(rk, b_.chunks, false); ++id) consider(id, finish[id]);
    }
    for (auto i = static_cast<std::size_t>(b_.arrive1); i < total; ++i) consider(static_cast<StepId>(i), finish[i]);
    return last;
  }

  // Whether the copies' records are written.
  bool written() const { return written_; }

  // Whether chunk c of rank rk (st: its store) is the copies' (a load or
  // store taken by the boundary m periods on, below lo + D or by its window
  // flag D chunks back, and not by this one).
  bool copied(int rk, int st, int c) const {
    const int lo = w_.lo[static_cast<std::size_t>(rk)], stop = w_.stop[static_cast<std::size_t>(rk)];
    const int D = per_.m * per_.p;
    auto taken_now = [&](int c2) {
      return c2 < lo || (c2 < stop && w_.took[2 * (static_cast<std::size_t>(rk) * static_cast<std::size_t>(b_.chunks) +
                                                   static_cast<std::size_t>(c2)) +
                                              static_cast<std::size_t>(st)] != 0);
    };
    return c >= lo && c < stop + D && !taken_now(c) && (c < lo + D || taken_now(c - D));
  }
};

}  // namespace scin::nvls
