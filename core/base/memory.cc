#include "base/memory.h"
#include "base/big_alloc.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

namespace scin {

namespace {
constexpr std::size_t kHugePage = std::size_t{2} << 20;
}  // namespace

void advise_huge_pages(void* p, std::size_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  const auto at = reinterpret_cast<std::uintptr_t>(p);
  const std::uintptr_t lo = (at + kHugePage - 1) / kHugePage * kHugePage, hi = (at + bytes) / kHugePage * kHugePage;
  if (p && hi > lo) madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_HUGEPAGE);   // advice: failure is harmless
#else
  (void)p;
  (void)bytes;
#endif
}

void* big_alloc(std::size_t bytes) {
  if (bytes < kHugePage) return std::aligned_alloc(64, (std::max<std::size_t>(bytes, 1) + 63) / 64 * 64);
  const std::size_t n = (bytes + kHugePage - 1) / kHugePage * kHugePage;
  void* p = std::aligned_alloc(kHugePage, n);
  advise_huge_pages(p, n);
  return p;
}

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
