// The NVLS fast path's step costs and working memory (nvls_alike.cc,
// run_analytic_nvls). Internal to the analytic engine.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "engines/analytic/nvls_groups.h"
#include "engines/analytic/ready_queue.h"
#include "model/cost_model.h"
#include "schedule/builder.h"
#include "schedule/schedule.h"

namespace scin::nvls {

// A use as the engine records it (start, end, the reservation it queued behind).
struct Rec {
  double start = 0, end = 0;
  StepId holder = kNoStep;
};

// The cost of an ld_reduce or multimem.st of one chunk size, read off one
// costed step: fixed cost, latencies, and per class one use's amount, rate
// and term (the class check below makes them every member's).
struct Rep {
  StepCost c;
  double e_amount = 0, e_rate = 1, i_amount = 0, i_rate = 1, u_amount = 0, u_rate = 1;
  Term e_term = Term::Serialisation, i_term = Term::Serialisation, u_term = Term::Reduction;
  bool has_u = false;
  double e_d = 0, i_d = 0, u_d = 0;  // amount / rate of each class's use (durations()), as the engine divides
  void durations() {
    e_d = e_amount / e_rate;
    i_d = i_amount / i_rate;
    u_d = u_amount / u_rate;
  }
};

inline bool same_use(const ResourceUse& a, const ResourceUse& b) {
  return a.amount_bytes == b.amount_bytes && a.rate_GBps == b.rate_GBps && a.term == b.term &&
         a.fed_by_transfers == b.fed_by_transfers;
}

// A representative step's cost and its egress and ingress use.
inline void set_rep(Rep& rep, const StepCost& c, const ResourceUse& egress, const ResourceUse& ingress) {
  rep.c = c;
  rep.e_amount = egress.amount_bytes;
  rep.e_rate = egress.rate_GBps;
  rep.e_term = egress.term;
  rep.i_amount = ingress.amount_bytes;
  rep.i_rate = ingress.rate_GBps;
  rep.i_term = ingress.term;
}

// ld_reduce of rank i: uses egress(j) for every j in order, then ingress(i),
// then (issue 15) the NVLS unit of plane 0. Nothing else, nothing fed.
inline bool read_rep(const StepCost& c, const ResourceMap& rm, int n, int i, Rep& rep) {
  const auto un = static_cast<std::size_t>(n);
  if (c.uses.size() != un + 1 && c.uses.size() != un + 2) return false;
  for (std::size_t j = 0; j < un; ++j)
    if (c.uses[j].resource != rm.egress(static_cast<int>(j), 0) || !same_use(c.uses[j], c.uses[0])) return false;
  const ResourceUse& in = c.uses[un];
  if (in.resource != rm.ingress(i, 0)) return false;
  for (const ResourceUse& u : c.uses)
    if (u.fed_by_transfers) return false;
  set_rep(rep, c, c.uses[0], in);
  rep.has_u = c.uses.size() == un + 2;
  if (rep.has_u) {
    const ResourceUse& u = c.uses[un + 1];
    if (u.resource != rm.nvls(0)) return false;
    rep.u_amount = u.amount_bytes;
    rep.u_rate = u.rate_GBps;
    rep.u_term = u.term;
  }
  return true;
}

// multimem.st of rank i: egress(i), then ingress(j) for every j in order.
inline bool store_rep(const StepCost& c, const ResourceMap& rm, int n, int i, Rep& rep) {
  const auto un = static_cast<std::size_t>(n);
  if (c.uses.size() != un + 1) return false;
  if (c.uses[0].resource != rm.egress(i, 0)) return false;
  for (std::size_t j = 0; j < un; ++j)
    if (c.uses[j + 1].resource != rm.ingress(static_cast<int>(j), 0) || !same_use(c.uses[j + 1], c.uses[1])) return false;
  for (const ResourceUse& u : c.uses)
    if (u.fed_by_transfers) return false;
  set_rep(rep, c, c.uses[0], c.uses[1]);
  return true;
}

// A load or store as taken (the critical path replays members' queues in this order).
struct Taken {
  StepId id;
  std::uint32_t k;  // rank * chunks + chunk
  std::uint16_t rank;
  bool load;
};

// A member's queue booked again alone for the critical path: its uses up to
// taken[upto - 1], each use's start, end and holder by x (2 * chunk + store).
// With the jump (nvls_walk.h, Replays): `jump` 0 before the reference
// period's end, 1 the copies skipped (their uses the reference's translated),
// 2 booked; `at_from` the queue at the reference period's start.
struct Replay {
  int key = -1;  // class * n + member
  int cls = 0, member = 0, jump = 0;
  std::size_t upto = 0;
  Queue q;
  std::vector<Rec> recs;
  std::vector<Queue::Busy> at_from;
};

// The ready steps by (ready time, id), least first (the engine's order; ids
// are distinct and no time is NaN, so any correct queue pops the same
// sequence): an array kept sorted from `head` on (pop: the item at head;
// push: moved down from the end past the larger items), or ready_queue.h's
// binary heap. A pushed step, ready at a finish time, is mostly among the
// latest ready: fewer moves than the heap's levels, without its sift-down
// (NVLS at 8 GPUs, 1 GiB: -17%, docs/performance.md section 45). A push that
// moves more than kMoves items turns the array into the heap (a sorted array
// is a heap) for the rest of the run, which bounds the pushes' cost on any
// order of times.
struct Ready {
  using Item = ready_queue::Item;
  static constexpr std::size_t kMoves = 64;
  bool sorted = true;
  std::vector<Item> v;
  std::size_t head = 0;
  void reset(bool sorted_array = true) {
    sorted = sorted_array;
    v.clear();
    head = 0;
  }
  bool empty() const { return head == v.size(); }
  std::size_t size() const { return v.size() - head; }
  const Item& front() const { return v[head]; }
  // (Inline in the booking loop, the vector's push_back too; the array
  // compacted only when it is full.)
#if defined(__GNUC__)
  __attribute__((always_inline, flatten))
#endif
  void push(const Item& x) {
    if (!sorted) {
      ready_queue::push(v, x.first, x.second);
      return;
    }
    if (v.size() == v.capacity() && head >= 16 && 2 * head >= v.size()) compact();
    const std::size_t end = v.size();
    v.push_back(x);
    Item* const a = v.data();
    std::size_t k = end;
    for (; k > head && ready_queue::before(x, a[k - 1]); --k) a[k] = a[k - 1];
    a[k] = x;
    if (end - k > kMoves) {  // a heap from here on
      compact();
      sorted = false;
    }
  }
#if defined(__GNUC__)
  __attribute__((always_inline))
#endif
  Item pop() {
    if (!sorted) return ready_queue::pop(v);
    const Item x = v[head++];
    if (head == v.size()) {
      v.clear();
      head = 0;
    }
    return x;
  }

 private:
  void compact() {
    v.erase(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(head));
    head = 0;
  }
};

// What the jump copied (Jump::apply): m periods of p chunks and P ns after
// the reference period, taken[from, to); in chunks [lo, hi) of every rank
// each record is the translate of the one p chunks before.
struct Period {
  bool on = false;
  int p = 0, m = 0, lo = 0, hi = 0;
  double P = 0;
  std::size_t from = 0, to = 0;
};

// A run's working memory, one per thread, kept for its next run (a 1 GiB
// point at 8 GPUs allocated ~3 MB per run: every run paid its page faults).
struct Work {
  std::vector<build::Span> spans;
  std::vector<std::uint8_t> size_of, bound;
  std::vector<double> ready, start, finish;
  std::vector<std::uint8_t> pending;  // (each step waits for at most one release: 0 or 1)
  std::vector<int> bound_member;
  std::vector<Rec> rec_u;
  std::vector<Taken> taken;
  std::vector<std::uint32_t> taken_at;  // by x: its index in `taken`
  // Members alone: each load's and store's member uses as booked, n + 1 per
  // x (its shared use's n members, then its own use): start and holder. Not
  // initialised (only booked uses' are written, and only they are read): a
  // large point touches the pages of its booked chunks only.
  std::unique_ptr<double[]> mstart;
  std::unique_ptr<StepId[]> mhold;
  std::size_t mcap = 0;
  void member_records(std::size_t need) {
    if (need <= mcap) return;
    mstart.reset(new double[need]);
    mhold.reset(new StepId[need]);
    mcap = need;
  }
  Ready heap;
  std::vector<Replay> replays;
  std::size_t live_replays = 0;
  // The periodic jump (nvls_alike.cc): per load and store (by x) whether it
  // was taken; per rank the first chunk whose store was not, and the window's
  // end; the states at the last boundaries; the ready set at a boundary.
  std::vector<std::uint8_t> took;
  std::vector<int> lo, stop;
  struct Snap {
    std::vector<double> ready, v;  // the ready set's part; the rest (if `full`)
    double t = 0;
    std::size_t taken_n = 0;
    int cb = -1, stop = 0;
    bool full = false;
  };
  std::vector<Snap> snaps;
  std::vector<ready_queue::Item> items;
  std::vector<StepId> path;  // the critical path's walk (nvls_walk.h, Path)
};

// Drops a large run's memory when the run ends: a thread keeps at most a
// run of 2^16 steps' (a few MB; 1 GiB at 8 GPUs is 16,424 steps).
struct WorkTrim {
  Work& w;
  std::size_t steps;
  ~WorkTrim() {
    if (steps > (std::size_t{1} << 16)) w = Work{};
  }
};

// max_link_bytes of NVLS by classes (nvls_alike.cc): accelerator j's egress
// carries every ld_reduce's chunk and its own stores, its ingress its own
// ld_reduces' chunks and every store: sums of whole byte counts below 2^53,
// so exact in any order (a rank's chunks of one size summed as their count x
// their bytes). -1 if not below 2^53. `rows`: per shard size (uc chunks
// each) each chunk's index in `sizes` (elements per chunk); `row[i]`: rank
// i's row.
inline double link_bytes(const Schedule& s, const std::vector<std::uint8_t>& rows, const std::vector<std::size_t>& row,
                         const std::vector<std::uint64_t>& sizes, std::size_t uc) {
  const std::size_t nq = sizes.size(), nrows = rows.size() / uc;
  std::vector<std::uint64_t> count(nrows * nq, 0);
  for (std::size_t r = 0; r < nrows; ++r)
    for (std::size_t c = 0; c < uc; ++c) ++count[r * nq + rows[r * uc + c]];
  double all = 0, own_max = 0;
  for (std::size_t i = 0; i < row.size(); ++i) {
    double own = 0;
    for (std::size_t q = 0; q < nq; ++q)
      own += static_cast<double>(count[row[i] * nq + q]) *
             static_cast<double>(region_bytes(s.buffers[s.input[i]], sizes[q]));
    all += own;
    own_max = std::max(own_max, own);
  }
  return all + own_max < 9007199254740992.0 ? all + own_max : -1;
}

inline bool same_cost(const StepCost& a, const StepCost& b) {
  if (a.fixed_ns != b.fixed_ns || a.fixed_term != b.fixed_term) return false;
  for (int k = 0; k < kTermCount; ++k)
    if (a.latency_ns[k] != b.latency_ns[k]) return false;
  return true;
}

}  // namespace scin::nvls
