#include "base/memory.h"

#include <algorithm>
#include <fstream>
#include <string>
#include <sys/resource.h>
#include <unistd.h>

namespace scin {

std::uint64_t available_memory_bytes() {
  std::uint64_t avail = 0;
  std::ifstream in("/proc/meminfo");
  std::string key, unit;
  std::uint64_t kib = 0;
  while (in >> key >> kib) {
    std::getline(in, unit);
    if (key == "MemAvailable:") {
      avail = kib * 1024;
      break;
    }
  }
#ifdef _SC_AVPHYS_PAGES
  if (avail == 0) {
    const long pages = sysconf(_SC_AVPHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (pages > 0 && page > 0) avail = static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page);
  }
#endif
  for (int res : {RLIMIT_AS, RLIMIT_DATA}) {
    struct rlimit rl{};
    if (getrlimit(res, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
      const auto cap = static_cast<std::uint64_t>(rl.rlim_cur);
      avail = avail ? std::min(avail, cap) : cap;
    }
  }
  return avail;
}

std::uint64_t peak_resident_bytes() {
  struct rusage ru{};
  if (getrusage(RUSAGE_SELF, &ru) != 0) return 0;
  return static_cast<std::uint64_t>(ru.ru_maxrss) * 1024;  // Linux: KiB
}

}  // namespace scin
