// The ring by ranks alike (analytic.h, run_analytic_ring) for several
// protocols at once: simulate()'s protocol choice without compiling the ring.
#pragma once

#include <optional>

#include "engines/analytic/analytic.h"

namespace scin {

struct RingChoice {
  AnalyticResult result;  // as run_analytic_ring(cfg with `protocol`, c) gives it
  RingProtocol protocol = RingProtocol::LL;
};

/// The fastest of LL, LL128 and Simple by ranks alike: what calling
/// run_analytic_ring() once per protocol in that order and keeping the first
/// of the smallest time gives, bit for bit (time, breakdown, critical path,
/// max_link_bytes; no per-step timings). Nothing if run_analytic_ring() would
/// refuse any of the three. The protocol-independent part (the ring's form,
/// its resource map, the chunk classes and representative steps) is made
/// once, and only the winner's critical path is walked.
/// `cfg.ring.protocol` is ignored (may be Auto).
std::optional<RingChoice> run_analytic_ring_fastest(const Config& cfg, const Collective& c, const RunContext& ctx = {});

/// Ring recurrences on this thread, over every run, that found the ranks
/// repeating with a period p < N and computed the first p ranks' times
/// for all (for tests).
inline std::size_t& ring_sends_alike_total() {
  thread_local std::size_t n = 0;
  return n;
}

/// Ring recurrences on this thread, over every run, that found two chunk
/// sizes on ranks otherwise alike and took every send's finish in closed
/// form (O(N); ring_alike.cc, TwoSizes) (for tests).
inline std::size_t& ring_two_sizes_total() {
  thread_local std::size_t n = 0;
  return n;
}

}  // namespace scin
