// Large arrays on transparent huge pages where the kernel gives them on
// request (Linux THP in "madvise" mode): a study's arrays of megabytes are
// first touched once per run, and each 4 KiB page's fault costs about as much
// as filling it; a 2 MiB page takes one fault for 512 of them.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <new>
#include <utility>
#include <vector>

namespace scin {

/// Storage of `bytes` (uninitialised, 64-byte aligned; big_free releases it,
/// or std::free, which never keeps it).
/// From 2 MiB up: 2 MiB aligned, rounded up to whole 2 MiB, and advised as
/// huge pages before anything touches it; a block of the same whole 2 MiB
/// that big_free kept is handed out again first (its pages are already
/// mapped: no faults, no zeroing by the kernel, old contents). Null when out
/// of memory.
void* big_alloc(std::size_t bytes);

/// Releases big_alloc storage of `bytes` (the size it was asked for). Blocks
/// from 2 MiB up are kept for the next big_alloc of the same whole 2 MiB while
/// the kept blocks total at most big_alloc_kept_limit_bytes (a quantisation
/// study allocates the same arrays again for every study of a sweep); the
/// rest go back to the C library.
void big_free(void* p, std::size_t bytes) noexcept;

/// The bound on the bytes big_free keeps: 256 MiB.
inline constexpr std::size_t big_alloc_kept_limit_bytes = std::size_t{256} << 20;

/// The bytes big_free keeps now (for tests and reports).
std::size_t big_alloc_kept_bytes() noexcept;

/// Returns every kept block to the C library.
void big_alloc_release_kept() noexcept;

/// Writes `byte` over every kept block (tests: storage handed out again must be
/// written before it is read).
void big_alloc_fill_kept(unsigned char byte) noexcept;

/// Advises the whole 2 MiB pages inside [p, p + bytes) as huge pages (storage
/// not touched yet takes them on first touch; nothing else changes).
void advise_huge_pages(void* p, std::size_t bytes);

/// An allocator of big_alloc storage for std::vector. Elements a vector makes
/// without a value (resize(n), vector(n)) are default-initialised, as by
/// `new T`: arithmetic values are left unset (the kernel's fresh pages are
/// not filled a second time). Write them before reading them.
template <class T>
struct BigAllocator {
  using value_type = T;
  BigAllocator() noexcept = default;
  template <class U>
  BigAllocator(const BigAllocator<U>&) noexcept {}
  T* allocate(std::size_t n) {
    if (n > static_cast<std::size_t>(-1) / sizeof(T)) throw std::bad_array_new_length();
    void* p = big_alloc(n * sizeof(T));
    if (!p) throw std::bad_alloc();
    return static_cast<T*>(p);
  }
  void deallocate(T* p, std::size_t n) noexcept { big_free(p, n * sizeof(T)); }
  template <class U>
  void construct(U* p) noexcept(noexcept(::new (static_cast<void*>(p)) U)) {
    ::new (static_cast<void*>(p)) U;   // default-initialised
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
  template <class U>
  bool operator==(const BigAllocator<U>&) const noexcept { return true; }
};

template <class T>
using BigVector = std::vector<T, BigAllocator<T>>;

}  // namespace scin
