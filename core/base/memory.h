// How much memory this machine can give a computation before it swaps: the
// work budget (engines/engine.h) refuses runs whose estimate exceeds it.
#pragma once

#include <cstdint>

namespace scin {

/// Bytes of memory available to a new allocation now: Linux's MemAvailable
/// (/proc/meminfo), capped by RLIMIT_AS / RLIMIT_DATA when set; elsewhere the
/// free physical pages. 0 when it cannot be determined (callers then skip the check).
std::uint64_t available_memory_bytes();

/// Peak resident memory of this process so far, in bytes (0 when unknown).
std::uint64_t peak_resident_bytes();

}  // namespace scin
