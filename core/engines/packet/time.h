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

namespace scin::packet {

using Ps = std::int64_t;

constexpr Ps kNever = std::numeric_limits<Ps>::max();

inline Ps to_ps(double ns) { return static_cast<Ps>(std::llround(ns * 1000.0)); }
inline double to_ns(Ps t) { return static_cast<double>(t) / 1000.0; }

/// Rounds a server's successive durations to whole ps, carrying the remainder.
class Carry {
 public:
  Ps round(double ns) {
    const double exact = ns * 1000.0 + rem_ps_;
    const Ps r = static_cast<Ps>(std::llround(exact));
    rem_ps_ = exact - static_cast<double>(r);
    return r;
  }

 private:
  double rem_ps_ = 0;
};

/// A FIFO server (a reduction unit, an accelerator's HBM): busy until `free`.
struct Server {
  Ps free = 0;
  Carry carry;
  /// Occupies the server for `dur_ns` from max(start, free); returns the end.
  Ps occupy(Ps start, double dur_ns) {
    free = std::max(start, free) + carry.round(dur_ns);
    return free;
  }
};

}  // namespace scin::packet
