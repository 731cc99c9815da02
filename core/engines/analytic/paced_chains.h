// Paced ISA reads that wait in step with another (book.h). Internal to the
// analytic engine.
//
// A paced read (StepCost::fed_paced) whose units are busy when its data
// arrives is taken again at the first gap of its units, in (time, index)
// order with every other step, until they are free. k reads waiting for the
// same units are each taken once per read the units serve before them: a
// leaf's units in a two-tier SCIN+INQ point had ~22 reads waiting, 3.2 M
// takes at 1024 GPUs, 3.6x the point's time (docs/performance.md section 103).
//
// Reads that wait for the same units, with the same durations, until the same
// key (their data there by then) probe the same gaps: between two of them taken
// at one key, only a reservation of those units by a step taken in between can
// make their outcomes differ. A chain keeps such reads: its head (the first by
// index) is queued and taken as before; the others (shadows, in index order)
// are not queued, and wait while the head waits (a failed probe has no other
// effect). When the head takes its units at key r, the next shadow is queued at
// r in its place: it is taken there, after the head, as it would have been, and
// finds the units taken (its blocker then comes from its own probe). A
// reservation of a chain's unit by a step taken at the round's key between the
// head and a shadow queues the shadows after that step at the key (they see
// it there, as they would have). So every step is taken at the same (time,
// index), with the same outcome and the same blocker, as through the ready
// queue alone: the result is the same to the last bit (tests/core/
// test_paced_chains.cc books random planes both ways).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "schedule/schedule.h"

namespace scin::analytic {

/// The fed units a waiting read probes, in its uses' order: resource, the
/// use's duration and its earliest start (`base`: its data there, lead
/// included). More than kMax units: n = kNone (probed through its cost, never chained).
struct FedProbe {
  static constexpr std::uint8_t kMax = 2, kNone = 0xff;
  std::uint8_t n = 0;
  int q[kMax] = {};
  double d[kMax] = {}, base[kMax] = {};
  bool kept() const { return n != kNone && n > 0; }
  /// The same units for the same durations (the bases may differ).
  bool same_units(const FedProbe& o) const {
    if (n != o.n || !kept()) return false;
    for (std::uint8_t k = 0; k < n; ++k)
      if (q[k] != o.q[k] || d[k] != o.d[k]) return false;
    return true;
  }
  double max_base() const {
    double m = 0;
    for (std::uint8_t k = 0; k < n; ++k) m = std::max(m, base[k]);
    return m;
  }
};

struct PacedChain {
  StepId head = kNoStep;
  std::vector<StepId> shadows;  // in index order, all after the head; [first, end) still in the chain
  std::size_t first = 0;
  double key = 0;       // the round: the key the head was (or is to be) taken at
  double next_key = 0;  // the head's key after its last wait
  StepId ahead_of = kNoStep;  // the head's probe at `key` was taken right after this step's (kNoStep: when taken)
  FedProbe units;             // the head's
  bool has_shadows() const { return first < shadows.size(); }
  StepId last() const { return shadows.back(); }
};

/// The chains of one booking: at most one per unit (`owner`).
struct PacedChains {
  std::vector<PacedChain> chains;
  std::vector<int> free_ids;
  std::vector<int> owner;  // by resource: its chain (-1: none)
  // Shadows that joined; shadows a reservation queued again; heads whose probe taken ahead it undid.
  std::size_t joined = 0, requeued = 0, undone = 0;

  void clear(std::size_t resources) {
    joined = requeued = undone = 0;
    chains.clear();
    free_ids.clear();
    owner.assign(resources, -1);
  }
  int owner_of(const FedProbe& p) const {
    const int c = owner[static_cast<std::size_t>(p.q[0])];
    for (std::uint8_t k = 1; k < p.n; ++k)
      if (owner[static_cast<std::size_t>(p.q[k])] != c) return -2;  // (units of several chains, or some of none)
    return c;
  }
  /// A chain headed by `head` (taken at `key`, waiting until `next_key`) on its free units.
  int open(StepId head, double key, double next_key, const FedProbe& p) {
    int id;
    if (!free_ids.empty()) {
      id = free_ids.back();
      free_ids.pop_back();
    } else {
      id = static_cast<int>(chains.size());
      chains.emplace_back();
    }
    PacedChain& c = chains[static_cast<std::size_t>(id)];
    c.head = head;
    c.shadows.clear();
    c.first = 0;
    c.key = key;
    c.next_key = next_key;
    c.ahead_of = kNoStep;
    c.units = p;
    for (std::uint8_t k = 0; k < p.n; ++k) owner[static_cast<std::size_t>(p.q[k])] = id;
    return id;
  }
  void close(int id) {
    const PacedChain& c = chains[static_cast<std::size_t>(id)];
    for (std::uint8_t k = 0; k < c.units.n; ++k) owner[static_cast<std::size_t>(c.units.q[k])] = -1;
    free_ids.push_back(id);
  }
};

}  // namespace scin::analytic
