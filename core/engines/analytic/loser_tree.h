// A tournament (loser) tree over slots of (time, step) keys: the first key
// after one slot's key changed in log2(slots) comparisons (part_booking.h's
// run()). Internal to the analytic engine.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "schedule/schedule.h"

namespace scin::part {

struct LoserTree {
  struct Key {
    double t;
    StepId id;  // kNoStep: an empty slot (after every step, whatever its time)
  };
  // (a.t, a.id) < (b.t, b.id), without branches (ready_queue::before).
  static bool before(const Key& a, const Key& b) {
    return static_cast<bool>(static_cast<int>(a.t < b.t) | (static_cast<int>(a.t == b.t) & static_cast<int>(a.id < b.id)));
  }
  // The tree's inner nodes 1..leaves-1 hold the losers of their matches;
  // returns the winner (the first key).
  std::size_t build(std::size_t leaves) {
    loser.assign(leaves, 0);
    wins.assign(2 * leaves, 0);
    for (std::size_t s = 0; s < leaves; ++s) wins[leaves + s] = static_cast<std::uint32_t>(s);
    for (std::size_t v = leaves; v-- > 1;) {
      const std::uint32_t a = wins[2 * v], b = wins[2 * v + 1];
      const bool b_first = before(key[b], key[a]);
      wins[v] = b_first ? b : a;
      loser[v] = b_first ? a : b;
    }
    return leaves == 1 ? 0 : wins[1];
  }
  // After the winner's key changed: its matches on the way to the root again.
  std::size_t replay(std::size_t w, std::size_t leaves) {
    auto cur = static_cast<std::uint32_t>(w);
    for (std::size_t v = (w + leaves) / 2; v >= 1; v /= 2) {
      const std::uint32_t other = loser[v];
      const bool swap = before(key[other], key[cur]);
      loser[v] = swap ? cur : other;
      cur = swap ? other : cur;
    }
    return cur;
  }

  std::vector<Key> key;  // by slot
  std::vector<std::uint32_t> loser, wins;
};

}  // namespace scin::part
