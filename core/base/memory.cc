#include "base/memory.h"
#include "base/big_alloc.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <string>
#include <utility>
#include <vector>
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

namespace {

// Blocks of whole 2 MiB that big_free kept, by size. Never destroyed (a block
// freed by a static's destructor at exit still finds it); the blocks stay
// reachable from it.
struct Kept {
  std::mutex mutex;
  std::vector<std::pair<std::size_t, void*>> blocks;   // (whole 2 MiB bytes, block)
  std::size_t bytes = 0;
  // Room for every block the bound allows (2 MiB each), so keeping one never allocates.
  Kept() { blocks.reserve(big_alloc_kept_limit_bytes / kHugePage); }
};

Kept& kept() {
  static Kept* k = new Kept;
  return *k;
}

std::size_t whole_huge_pages(std::size_t bytes) { return (bytes + kHugePage - 1) / kHugePage * kHugePage; }

}  // namespace

void* big_alloc(std::size_t bytes) {
  if (bytes < kHugePage) return std::aligned_alloc(64, (std::max<std::size_t>(bytes, 1) + 63) / 64 * 64);
  const std::size_t n = whole_huge_pages(bytes);
  {
    Kept& k = kept();
    std::lock_guard lock(k.mutex);
    for (std::size_t i = k.blocks.size(); i-- > 0;)   // the latest kept first: its pages are the warmest
      if (k.blocks[i].first == n) {
        void* p = k.blocks[i].second;
        k.blocks.erase(k.blocks.begin() + static_cast<std::ptrdiff_t>(i));
        k.bytes -= n;
        return p;
      }
  }
  void* p = std::aligned_alloc(kHugePage, n);
  advise_huge_pages(p, n);
  return p;
}

void big_free(void* p, std::size_t bytes) noexcept {
  if (!p) return;
  if (bytes >= kHugePage) {
    const std::size_t n = whole_huge_pages(bytes);
    Kept& k = kept();
    std::lock_guard lock(k.mutex);
    if (k.bytes + n <= big_alloc_kept_limit_bytes && k.blocks.size() < k.blocks.capacity()) {
      k.blocks.emplace_back(n, p);
      k.bytes += n;
      return;
    }
  }
  std::free(p);
}

std::size_t big_alloc_kept_bytes() noexcept {
  Kept& k = kept();
  std::lock_guard lock(k.mutex);
  return k.bytes;
}

void big_alloc_fill_kept(unsigned char byte) noexcept {
  Kept& k = kept();
  std::lock_guard lock(k.mutex);
  for (auto& [n, p] : k.blocks) std::memset(p, byte, n);
}

void big_alloc_release_kept() noexcept {
  Kept& k = kept();
  std::lock_guard lock(k.mutex);
  for (auto& [n, p] : k.blocks) std::free(p);
  k.blocks.clear();
  k.bytes = 0;
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
