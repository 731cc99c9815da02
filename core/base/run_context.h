// What a long computation gets from its caller, passed down explicitly (no
// thread-local or global state): a stop request and a progress sink.
//   - Engines, sweeps and studies poll stop_requested() at a bounded interval
//     (the packet engine every few thousand events) and throw Cancelled.
//   - progress(fraction) may be called from the computing thread with a value in
//     [0, 1]; the sink must be cheap and thread-safe (the GUI posts to its thread).
// A default-constructed RunContext never stops and reports nowhere.
#pragma once

#include <functional>
#include <stop_token>

#include "base/cancel.h"

namespace scin {

struct RunContext {
  std::stop_token stop;                           // from a std::stop_source owned by the caller
  std::function<void(double fraction)> progress;  // optional

  bool stop_requested() const { return stop.stop_requested(); }
  /// Throws Cancelled once a stop was requested.
  void check() const {
    if (stop.stop_requested()) throw Cancelled();
  }
  void report(double fraction) const {
    if (progress) progress(fraction);
  }
};

}  // namespace scin
