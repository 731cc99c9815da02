// The critical path's walk (scin_alike.cc) over a part's lazy steps, a
// period at a time (docs/performance.md section 73). Internal to the analytic engine.
#pragma once

#include <algorithm>
#include <cstddef>

#include "engines/analytic/jump_counters.h"
#include "engines/analytic/part_booking.h"
#include "model/result.h"

namespace scin::part {

/// The critical path's walk over a part's lazy steps (Part::lazy: step i in
/// [lo, hi) is the translate of step i - sh by Pt, in time and steps). What
/// the walk does at a step and use (what it adds to the breakdown, where it
/// goes next) depends on the step's kind, cost, bound use and records relative
/// to the step, and on its dep where that is the step before in its chain (a
/// quantise step not heading a chain, a requantise, a multicast): the same at
/// a translate (every time on the cost grid and below 2^32 ns where the jump
/// was taken, so differences of translates are exact). So when the walk, from
/// a step and use of such a range, comes back to the same use of a step D (a
/// multiple of sh) before in the same range, through steps of ranges of that
/// part with the same sh and Pt (and deps only as above), it goes on so:
/// period r visits the steps r D before, while they are in their ranges, i.e.
/// for R = min over the visited steps s of (s - its range's lo) / D more
/// periods, with the same path (D back) and the same additions to each term in
/// the same order (made at once where that is exact: every value and partial
/// sum a grid value >= 0 below 2^32 ns).
struct WalkRepeat {
  const Part* pt = nullptr;  // the part traced (null: none)
  StepId offset = 0;         // (its local steps' first index: a chain part serves several ranks)
  std::size_t k0 = 0, lo0 = 0, sh = 0, slack = 0, np0 = 0;
  double Pt = 0;
  int use0 = -2, steps = 0, nadd = 0;
  int term[32] = {};
  double val[32] = {};

  // The range of `p`'s lazy steps that holds local step i (null: none).
  static const Lazy* range(const Part& p, std::size_t i) {
    for (const Lazy& z : p.lazy)
      if (i >= z.lo && i < z.hi) return &z;
    return nullptr;
  }
  // Tracing from step i's use `use` (the path then np long, i its last).
  void start(const Part* p, StepId off, std::size_t i, int use, std::size_t np) {
    const Lazy* z = range(*p, i);
    if (!z || z->sh == 0) return;
    pt = p, offset = off, k0 = i, lo0 = z->lo, sh = z->sh, Pt = z->Pt, slack = i - z->lo, np0 = np, use0 = use;
    steps = nadd = 0;
  }
  // Back at the starting use, at a step of the start's range a multiple of sh before.
  bool back_at(const Part* p, StepId off, std::size_t i, int use) const {
    return p == pt && off == offset && use == use0 && i < k0 && i >= lo0 && (k0 - i) % sh == 0;
  }
  // Another step visited: in a range like the start's (false: no period here).
  bool visit(const Part* p, StepId off, std::size_t i) {
    if (p != pt || off != offset || ++steps > 16) return false;
    const Lazy* z = range(*p, i);
    if (!z || z->sh != sh || z->Pt != Pt) return false;
    slack = std::min(slack, i - z->lo);
    return true;
  }
  // An addition to term t (0 is none: the sum stays, bit for bit, as no sum is -0).
  void note(int t, double v) {
    if (nadd == 32) {
      pt = nullptr;
      return;
    }
    term[nadd] = t, val[nadd] = v;
    ++nadd;
  }
  // Periods more, back at step i.
  std::size_t repeats(std::size_t i) const { return slack / (k0 - i); }
  // The additions of R more periods, per term in their order.
  void replay(Breakdown& b, std::size_t R) const {
    for (int t = 0; t < kTermCount; ++t) {
      double sum = 0;
      bool exact = on_grid(b.ns[t]) && b.ns[t] >= 0, any = false;
      for (int j = 0; j < nadd; ++j)
        if (term[j] == t) {
          any = true;
          exact = exact && on_grid(val[j]) && val[j] >= 0;
          sum += val[j];
        }
      if (!any) continue;
      const double total = static_cast<double>(R) * sum;
      if (exact && on_grid(sum) && b.ns[t] + total < 0x1p32) {  // (every partial sum a grid value below 2^32: exact)
        b.ns[t] += total;
        continue;
      }
      for (std::size_t r = 0; r < R; ++r)
        for (int j = 0; j < nadd; ++j)
          if (term[j] == t) b.ns[t] += val[j];
    }
    walked_repeats_total() += R;
  }
};

}  // namespace scin::part
