// One-shot's and the two-shots' pushes on a star in closed form (issue 14:
// their cost linear in GPUs). Internal to shot_closed.cc.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace scin::shot {

/// A push's cost with its uses by role: the sender's or the receiver's port
/// (base + rank x stride), or on two tiers the trunk up from the sender's leaf
/// or down to the receiver's leaf through the spine ECMP picks for the pair;
/// each use d ns long (amount <= 0: books nothing). shot_closed.cc makes one
/// per phase, shard size and (two tiers) whether the pair crosses the spines.
struct PushShape {
  enum class Role : std::uint8_t { Sender, Receiver, Up, Down };
  struct U {
    Role role;
    int base, stride;  // a port: base + rank x stride
    int plane;
    double d;
    bool books;
  };
  double fixed = 0, latency = 0;
  std::vector<U> u;
};

namespace star {

/// A push as the closed forms see it: its fixed cost and latency (ns) and,
/// if it books, how long it holds its sender's egress port and its
/// receiver's ingress port (ns, on the cost grid, > 0). Every push that
/// books uses the same port of each rank: one queue per rank and direction.
struct Push {
  double fixed = 0, latency = 0, send = 0, recv = 0;
  bool books = false;
};

/// The pushes of shard j (`shapes[index[2 j]]`, a star's) as Push, or false
/// where one would book something else than one use of its sender's port and
/// one of its receiver's, the same ports for every shard that books.
bool pushes(const std::vector<PushShape>& shapes, const std::vector<std::uint32_t>& index, std::size_t n,
            std::vector<Push>& out);

/// The ports' queues after a phase (the next phase starts from them).
struct Queues {
  std::vector<double> egress_end, ingress_end;  // per rank; -infinity: no use yet
  double ready = 0, from = 0;                   // the phase's ready time and first start (its uses' bounds)
  bool any = false;                             // whether the phase booked a use
};

/// Per receiving rank: the latest finish of the pushes to it, and the
/// first (lowest) sending rank whose push finishes then.
struct Latest {
  std::vector<double> fin;
  std::vector<std::size_t> from;
};

/// The scatter: every rank r pushes shard j (`shard[j]`) to every rank
/// j != r, all ready at `ready`, taken sender-major (r, then j). Each
/// push's finish as book_in_order's queues give it (a use starts at the later
/// of ready + fixed and its queue's last end) without booking the N^2 pushes:
/// r's egress port holds shards 0..j but r's own, j's ingress port the same
/// shard once per sender before it, so a finish is a prefix sum and, per
/// receiver, the latest is among four senders (the first, the first after j,
/// the last, and the first before j with the shortest shard). O(N). False
/// (nothing written) where that does not hold: pushes that book with
/// different fixed costs, or a time past 2^33 ns, where sums of the cost
/// grid stop being exact (cost_grid.h).
bool scatter(double ready, const std::vector<Push>& shard, Latest& out, Queues& q);

/// The gather: rank j pushes shard j (`shard[j]`) to every rank r != j,
/// ready at `ready[j]`, the owners taken in `order` (by ready time, then
/// rank), the queues starting where the scatter left them (`q`). j's egress
/// port holds its pushes one after another (a line in r per shard size);
/// r's ingress port takes the owners in order, so its end is a max-plus
/// composition of the owners before and after r (prefix and suffix, O(1)
/// per rank), and the latest push to r is its last owner's or the highest of
/// each shard size's egress lines on either side of r. O(N x shard sizes).
/// False where that does not hold: pushes that book with different fixed
/// costs or latencies, more than four shard sizes, a start before the
/// scatter's, or a time past 2^33 ns.
bool gather(const std::vector<double>& ready, const std::vector<std::size_t>& order, const std::vector<Push>& shard,
            const Queues& q, Latest& out);

/// Phases book_closed() took in closed form on this thread, over every run (for tests).
inline std::size_t& phases_in_closed_form() {
  thread_local std::size_t n = 0;
  return n;
}

}  // namespace star
}  // namespace scin::shot
