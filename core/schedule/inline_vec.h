// InlineVec<T, N>: a vector of trivially copyable values whose first N live
// inside the object; only a longer list takes a heap block. A Step's sources,
// destinations and dependencies are such lists (schedule.h): most steps name
// one or two regions and up to four dependencies, so a compiled schedule no
// longer allocates (and frees) three blocks per step (issue 14, small points:
// that was a quarter to a third of a point's CPU at 8 GPUs).
//
// The interface is the subset of std::vector the schedule code uses (size,
// iteration, operator[], front/back, push_back, pop_back, reserve, assign,
// clear, ==), plus construction from an initializer list or a std::vector.
//
// The heap blocks come from a per-thread cache by size class
// (schedule/inline_vec.cc): a schedule's wide lists, freed when simulate()
// reuses its storage, serve the next point's lists without malloc/free.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <iterator>
#include <new>
#include <type_traits>
#include <vector>

namespace scin {

namespace detail {
/// A block of at least `bytes` (> 0) bytes, aligned for any InlineVec value.
void* inline_vec_alloc(std::size_t bytes);
/// Returns a block of inline_vec_alloc(bytes), with the same `bytes`.
void inline_vec_free(void* p, std::size_t bytes) noexcept;
}  // namespace detail

template <typename T, std::uint32_t N>
class InlineVec {
  static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>,
                "InlineVec copies its values as bytes");
  static_assert(N > 0);
  static_assert(alignof(T) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__);

 public:
  using value_type = T;
  using size_type = std::size_t;
  using difference_type = std::ptrdiff_t;
  using reference = T&;
  using const_reference = const T&;
  using pointer = T*;
  using const_pointer = const T*;
  using iterator = T*;
  using const_iterator = const T*;

  InlineVec() noexcept = default;
  InlineVec(std::initializer_list<T> v) { assign(v.begin(), v.end()); }
  InlineVec(const std::vector<T>& v) { assign(v.begin(), v.end()); }  // NOLINT: implicit, as a vector converts
  template <typename It, typename = decltype(*std::declval<It&>()++)>
  InlineVec(It first, It last) {
    assign(first, last);
  }
  InlineVec(const InlineVec& o) { assign(o.begin(), o.end()); }
  InlineVec(InlineVec&& o) noexcept { take(o); }
  ~InlineVec() { release(); }

  InlineVec& operator=(const InlineVec& o) {
    if (this != &o) assign(o.begin(), o.end());
    return *this;
  }
  InlineVec& operator=(InlineVec&& o) noexcept {
    if (this != &o) {
      release();
      take(o);
    }
    return *this;
  }
  InlineVec& operator=(std::initializer_list<T> v) {
    assign(v.begin(), v.end());
    return *this;
  }
  InlineVec& operator=(const std::vector<T>& v) {
    assign(v.begin(), v.end());
    return *this;
  }

  template <typename It>
  void assign(It first, It last) {
    const auto n = static_cast<std::size_t>(std::distance(first, last));
    n_ = 0;
    reserve(n);
    T* p = data();
    for (; first != last; ++first) *p++ = *first;
    n_ = static_cast<std::uint32_t>(n);
  }

  std::size_t size() const noexcept { return n_; }
  bool empty() const noexcept { return n_ == 0; }
  std::size_t capacity() const noexcept { return heap_ ? cap_ : N; }
  /// True while the values live inside the object (no heap block).
  bool is_inline() const noexcept { return heap_ == nullptr; }
  static constexpr std::size_t inline_capacity() noexcept { return N; }

  T* data() noexcept { return heap_ ? heap_ : local(); }
  const T* data() const noexcept { return heap_ ? heap_ : local(); }
  iterator begin() noexcept { return data(); }
  iterator end() noexcept { return data() + n_; }
  const_iterator begin() const noexcept { return data(); }
  const_iterator end() const noexcept { return data() + n_; }
  const_iterator cbegin() const noexcept { return begin(); }
  const_iterator cend() const noexcept { return end(); }

  T& operator[](std::size_t i) noexcept { return data()[i]; }
  const T& operator[](std::size_t i) const noexcept { return data()[i]; }
  T& front() noexcept { return data()[0]; }
  const T& front() const noexcept { return data()[0]; }
  T& back() noexcept { return data()[n_ - 1]; }
  const T& back() const noexcept { return data()[n_ - 1]; }

  void reserve(std::size_t n) {
    if (n <= capacity()) return;
    T* p = static_cast<T*>(detail::inline_vec_alloc(n * sizeof(T)));
    if (n_) std::memcpy(static_cast<void*>(p), static_cast<const void*>(data()), n_ * sizeof(T));
    release();
    heap_ = p;
    cap_ = static_cast<std::uint32_t>(n);
  }
  void push_back(const T& v) {
    if (n_ == capacity()) {
      const T copy = v;  // `v` may live in this list
      reserve(2 * capacity());
      data()[n_++] = copy;
      return;
    }
    data()[n_++] = v;
  }
  template <typename... A>
  T& emplace_back(A&&... a) {
    push_back(T{std::forward<A>(a)...});
    return back();
  }
  void pop_back() noexcept { --n_; }
  void clear() noexcept { n_ = 0; }
  void resize(std::size_t n) {
    reserve(n);
    for (std::size_t i = n_; i < n; ++i) new (static_cast<void*>(data() + i)) T{};
    n_ = static_cast<std::uint32_t>(n);
  }

  friend bool operator==(const InlineVec& a, const InlineVec& b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin());
  }
  friend bool operator!=(const InlineVec& a, const InlineVec& b) { return !(a == b); }

 private:
  T* local() noexcept { return std::launder(reinterpret_cast<T*>(buf_)); }
  const T* local() const noexcept { return std::launder(reinterpret_cast<const T*>(buf_)); }
  void release() noexcept {
    if (heap_) detail::inline_vec_free(heap_, std::size_t{cap_} * sizeof(T));
    heap_ = nullptr;
    cap_ = 0;
  }
  // Takes `o`'s values (its heap block, or a copy of its inline values); `o` is left empty. *this holds nothing.
  void take(InlineVec& o) noexcept {
    n_ = o.n_;
    if (o.heap_) {
      heap_ = o.heap_;
      cap_ = o.cap_;
      o.heap_ = nullptr;
      o.cap_ = 0;
    } else if (n_) {
      std::memcpy(buf_, o.buf_, n_ * sizeof(T));
    }
    o.n_ = 0;
  }

  T* heap_ = nullptr;       // null: the values are in buf_
  std::uint32_t n_ = 0;
  std::uint32_t cap_ = 0;   // of heap_
  alignas(T) unsigned char buf_[N * sizeof(T)];
};

}  // namespace scin
