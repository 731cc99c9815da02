// One-shot's and the two-shots' booking pass on flat queues (shot_closed.cc;
// performance.md section 115). Internal to the analytic engine.
//
// Where every push books at most one use of each role (its sender's port, its
// receiver's port, the uplink and the downlink of the spine ECMP picks), each
// role's uses of every shape are on one plane (one queue per rank, or per leaf
// and spine, and direction) and every shape has the same fixed cost, every
// queue's uses arrive with ready and start times that never decrease (the
// scatter's at T, the gather's in order of their reduce's end, later than T).
// So append_use() takes each, starting it at the later of its start and its
// queue's last end: the booking pass's sums, on arrays of ends by rank or by
// leaf and spine rather than QueueTails by resource id, in a loop of raw
// pointers (through a lambda's captures each push chased a chain of loads for
// its leaf and its shape: 144 -> 53 ms for two-shot at 1024 GPUs).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include "engines/analytic/shot_star.h"
#include "fabric/graph.h"

namespace scin::shot {

class FlatPushes {
 public:
  /// Takes the shapes' durations by role; false where a shape books a role
  /// twice (several planes), a role's uses are on two planes or ports, or the
  /// fixed costs differ (the booking pass books push by push).
  bool prepare(const std::vector<PushShape>& shapes) {
    shapes_ = &shapes;
    flat_.assign(shapes.size(), Flat{});
    int base[2] = {-1, -1}, plane[2] = {-1, -1};  // the sender's and receiver's port; the trunks' plane
    for (std::size_t k = 0; k < shapes.size(); ++k) {
      bool has[4] = {false, false, false, false};
      if (shapes[k].fixed != shapes[0].fixed) return false;
      for (const PushShape::U& u : shapes[k].u) {
        const auto role = static_cast<std::size_t>(u.role);
        int& same = role < 2 ? base[role] : plane[role - 2];
        const int at = role < 2 ? u.base : u.plane;
        if (has[role] || (same >= 0 && same != at)) return false;
        has[role] = true;
        same = at;
        flat_[k].d[role] = u.d;
        flat_[k].books[role] = u.books;
      }
    }
    return !shapes.empty();
  }

  /// Empty queues for `n` ranks on `leaves` leaves of `spines` spines.
  void reset(std::size_t n, std::size_t leaves, int spines) {
    constexpr double kNone = -std::numeric_limits<double>::infinity();
    spines_ = spines;
    out_.assign(n, kNone);
    in_.assign(n, kNone);
    up_.assign(leaves * static_cast<std::size_t>(std::max(1, spines)), kNone);
    down_.assign(up_.size(), kNone);
  }

  /// Rank `from`'s pushes to every other rank in rank order, all ready at
  /// `ready`: push (from, to) has shape `shape[2 x (gather ? from : to) +
  /// crossing]` (the scatter's by the receiver's shard, the gather's by the
  /// sender's); `leaf[r]` is rank r's leaf. `each(to, crossing, fin)` takes
  /// each push's finish, as the booking pass has it.
  template <class Each>
  void row(std::size_t from, double ready, const std::uint32_t* leaf, const std::uint32_t* shape, bool gather,
           Each&& each) {
    const std::size_t n = in_.size();
    const Flat* fl = flat_.data();
    const PushShape* ps = shapes_->data();
    double* in = in_.data();
    double* up = up_.data();
    double* down = down_.data();
    const std::size_t per = static_cast<std::size_t>(std::max(1, spines_));
    const std::uint32_t own = leaf[from];
    double out = out_[from];
    for (std::size_t to = 0; to < n; ++to) {
      if (to == from) continue;
      const bool cross = leaf[to] != own;
      const std::uint32_t k = shape[2 * (gather ? from : to) + (cross ? 1 : 0)];
      const Flat& f = fl[k];
      const double t0 = ready + ps[k].fixed;
      double end = t0;
      if (f.books[0]) end = std::max(end, out = std::max(t0, out) + f.d[0]);
      if (f.books[1]) end = std::max(end, in[to] = std::max(t0, in[to]) + f.d[1]);
      if (f.books[2] || f.books[3]) {  // (only a crossing pair's shape on two tiers uses the trunks)
        const auto spine = static_cast<std::size_t>(ecmp_pick(static_cast<int>(from), static_cast<int>(to), spines_));
        double& u = up[own * per + spine];
        double& d = down[leaf[to] * per + spine];
        if (f.books[2]) end = std::max(end, u = std::max(t0, u) + f.d[2]);
        if (f.books[3]) end = std::max(end, d = std::max(t0, d) + f.d[3]);
      }
      each(to, cross, end + ps[k].latency);
    }
    out_[from] = out;
  }

 private:
  struct Flat {
    double d[4] = {0, 0, 0, 0};  // by PushShape::Role: how long it holds its queue, if it books
    bool books[4] = {false, false, false, false};
  };
  const std::vector<PushShape>* shapes_ = nullptr;
  std::vector<Flat> flat_;
  std::vector<double> out_, in_, up_, down_;  // queue ends: per rank; per leaf and spine
  int spines_ = 1;
};

}  // namespace scin::shot
