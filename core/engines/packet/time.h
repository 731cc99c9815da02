// Simulated time inside the packet engine: integer picoseconds.
//
// Configuration and results speak nanoseconds (doubles); the engine converts
// once at its edges. Integer time makes equal times equal (no `==` on doubles)
// and orders events exactly. A duration that is not a whole number of ps (a
// packet's serialisation at 112.5 GB/s is 2417.78 ps) is rounded by a Carry:
// the remainder goes to the next duration of the same server, so n back-to-back
// packets take the exact total within half a picosecond, without drift.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

namespace scin::packet {

using Ps = std::int64_t;

constexpr Ps kNever = std::numeric_limits<Ps>::max();

/// Nearest whole ps of a time or duration `ns` >= 0 (truncation of x + 0.5: no libm call).
inline Ps to_ps(double ns) { return static_cast<Ps>(ns * 1000.0 + 0.5); }
inline double to_ns(Ps t) { return static_cast<double>(t) / 1000.0; }

/// A duration in fixed point, 2^-20 ps: what per-packet durations are
/// precomputed in, so the hot path rounds with integer operations only.
using Fine = std::int64_t;
constexpr int kFineBits = 20;
inline Fine to_fine(double ns) { return static_cast<Fine>(ns * (1000.0 * (1 << kFineBits)) + 0.5); }

/// A fixed-point duration rounded to the nearest ps.
inline Ps to_ps(Fine d) { return (d + (Fine{1} << (kFineBits - 1))) >> kFineBits; }

/// Rounds a server's successive durations to whole ps, carrying the remainder:
/// the sum of the returned durations is the exact sum rounded to the nearest ps.
class Carry {
 public:
  Ps add(Fine d) {
    const Fine a = rem_ + d;
    rem_ = a & ((Fine{1} << kFineBits) - 1);
    return a >> kFineBits;
  }
  /// `ns` >= 0.
  Ps round(double ns) { return add(to_fine(ns)); }

 private:
  Fine rem_ = Fine{1} << (kFineBits - 1);  // half a ps: rounds to nearest
};

/// A FIFO server (a reduction unit): busy until `free`. An accelerator's HBM
/// is booked by reservation instead (fit / book): a step may reserve it for
/// later (a write's receive-reduce starts after the step's fixed cost) and
/// work that comes first takes a gap before it, as the analytic engine's
/// resource queues backfill.
struct Server {
  Ps free = 0;
  Carry carry;
  std::vector<std::pair<Ps, Ps>> booked;  // reservations [start, end), sorted, disjoint
  /// Occupies the server for `dur_ns` from max(start, free); returns the end.
  Ps occupy(Ps start, double dur_ns) {
    free = std::max(start, free) + carry.round(dur_ns);
    return free;
  }
  /// The earliest time >= start at which `dur` fits between the reservations
  /// (those that end by `now` are dropped first: nothing is booked before now).
  Ps fit(Ps now, Ps start, Ps dur) {
    std::size_t gone = 0;
    while (gone < booked.size() && booked[gone].second <= now) ++gone;
    booked.erase(booked.begin(), booked.begin() + static_cast<std::ptrdiff_t>(gone));
    for (const auto& [b, e] : booked)
      if (start + dur > b && start < e) start = e;
    return start;
  }
  /// Reserves [start, start + dur) (a gap fit() found).
  void book(Ps start, Ps dur) {
    const auto at = std::lower_bound(booked.begin(), booked.end(), std::pair{start, start});
    booked.insert(at, {start, start + dur});
    free = std::max(free, start + dur);
  }
};

}  // namespace scin::packet
