// The heap blocks of InlineVec (schedule/inline_vec.h): a per-thread cache of
// freed blocks by size class (issue 14, small points at 8 GPUs).
//
// A compiled SCIN schedule at 8 GPUs has, per plane and wave, a read of 8
// ranks and a multicast to 8 (a block of 8 regions each), and per plane the
// 8- and 16-entry dependency lists of its barriers and write acks. simulate()
// frees them when the next point reuses the schedule's storage and the next
// compile asks for the same blocks again. glibc keeps only 7 blocks per size
// in its thread cache; the rest went through its bins (malloc_consolidate,
// unlink_chunk), about a third of a SCIN compile. Here a freed block goes on
// its thread's list for its size class and the next request of that class
// takes it back: two pointer moves.
//
// Classes are powers of two from 32 to 4096 bytes (a block of class c has
// 32 << c bytes, so any request of the class fits it); larger blocks go
// straight to operator new / delete. A thread keeps at most kKeepBytes per
// class (a large point's many blocks are returned to malloc) and frees its
// lists when it ends. A block may be freed on another thread than the one
// that allocated it: it then joins that thread's list (every block comes from
// operator new, so any thread may return it to malloc).
#include "schedule/inline_vec.h"

#include <bit>
#include <new>

namespace scin::detail {
namespace {

constexpr int kClasses = 8;                  // 32, 64, ..., 4096 bytes
constexpr std::size_t kMinBlock = 32;
constexpr std::size_t kMaxBlock = kMinBlock << (kClasses - 1);
constexpr std::size_t kKeepBytes = 256 << 10;  // per class and thread

struct FreeBlock {
  FreeBlock* next;
};

struct BlockCache {
  FreeBlock* head[kClasses] = {};
  std::size_t kept[kClasses] = {};  // bytes on each list
  ~BlockCache();
};

// Set once the thread's cache is destroyed (thread exit; the main thread's
// static destruction): blocks freed later (a static schedule) go to malloc.
// A bool with no destructor stays valid until the thread is gone.
thread_local bool cache_gone = false;
thread_local BlockCache cache;

BlockCache::~BlockCache() {
  cache_gone = true;
  for (int c = 0; c < kClasses; ++c)
    while (FreeBlock* b = head[c]) {
      head[c] = b->next;
      ::operator delete(b);
    }
}

// The class of a request of `bytes` (1 .. kMaxBlock bytes).
int size_class(std::size_t bytes) {
  return bytes <= kMinBlock ? 0 : static_cast<int>(std::bit_width(bytes - 1)) - 5;
}

}  // namespace

void* inline_vec_alloc(std::size_t bytes) {
  if (bytes > kMaxBlock || cache_gone) return ::operator new(bytes);
  const int c = size_class(bytes);
  BlockCache& k = cache;
  if (FreeBlock* b = k.head[c]) {
    k.head[c] = b->next;
    k.kept[c] -= kMinBlock << c;
    return b;
  }
  return ::operator new(kMinBlock << c);
}

void inline_vec_free(void* p, std::size_t bytes) noexcept {
  if (bytes > kMaxBlock || cache_gone) {
    ::operator delete(p);
    return;
  }
  const int c = size_class(bytes);
  BlockCache& k = cache;
  if (k.kept[c] + (kMinBlock << c) > kKeepBytes) {
    ::operator delete(p);
    return;
  }
  auto* b = static_cast<FreeBlock*>(p);
  b->next = k.head[c];
  k.head[c] = b;
  k.kept[c] += kMinBlock << c;
}

}  // namespace scin::detail
