// Per-link busy time in time bins (packet.timeline_samples of them). The bins
// start at 1 ns and double (pairs merged) whenever a packet starts past the
// last one, so the whole run always fits.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "engines/packet/time.h"

namespace scin::packet {

class Timeline {
 public:
  void init(int samples, std::size_t links);
  bool on() const { return samples_ > 0; }
  /// Link `link` serialises from `start` for `ser`: counted in the bin of its start.
  void add(std::size_t link, Ps start, Ps ser) {
    while (start >= bin_ * samples_) rebin();
    busy_[link * static_cast<std::size_t>(samples_) + static_cast<std::size_t>(start / bin_)] += ser;
  }
  int samples() const { return samples_; }
  Ps bin() const { return bin_; }
  /// Bins that cover [0, total].
  int used(Ps total) const;
  /// Fraction of bin k that link `link` was busy (at most 1).
  double utilisation(std::size_t link, int k) const;

 private:
  void rebin();
  int samples_ = 0;
  std::size_t links_ = 0;
  Ps bin_ = 1000;
  std::vector<Ps> busy_;  // links x samples
};

}  // namespace scin::packet
