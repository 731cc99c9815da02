// What the periodic jumps (wave_jump.h) and the walk over their periods
// (walk_repeat.h) passed over, per thread: for tests. Internal to the analytic engine.
#pragma once

#include <cstddef>

namespace scin::part {

/// Waves written as translates on this thread, over every run (for tests).
inline std::size_t& jumped_waves_total() {
  thread_local std::size_t n = 0;
  return n;
}

/// Reads of jumped waves whose key the check took from a stretch where the
/// readiness repeats (jump_waves, Part::reads_repeat) rather than one by one,
/// on this thread, over every run (for tests).
inline std::size_t& stretch_waves_total() {
  thread_local std::size_t n = 0;
  return n;
}

/// Periods of the walk passed over by WalkRepeat on this thread, over every run (for tests).
inline std::size_t& walked_repeats_total() {
  thread_local std::size_t n = 0;
  return n;
}

/// SCIN+INQ planes on two tiers taken as an earlier plane's booking
/// translated (scin_inq_planes.cc), not booked, on this thread, over every
/// run (for tests).
inline std::size_t& translated_planes_total() {
  thread_local std::size_t n = 0;
  return n;
}

}  // namespace scin::part
