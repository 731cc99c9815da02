#include "base/threads.h"

#include <algorithm>

#include <fmt/format.h>
#include <oneapi/tbb/info.h>

#include "base/error.h"

namespace scin {

int resolve_threads(int requested) {
  if (requested < 0 || requested > kMaxThreads)
    throw Error(fmt::format("--threads: {} is out of range; allowed 0 (all cores) to {}", requested, kMaxThreads));
  return std::max(1, requested > 0 ? requested : tbb::info::default_concurrency());
}

}  // namespace scin
