// A vector that grows by blocks: elements never move, and growing it copies
// nothing. The packet engine's flow pool (Engine::flows_) is one: two-shot on
// nvl576-style has 576 x 575 pushes in flight at once, and a std::vector of
// 440-byte flows regrew to them by doubling, copying every flow and touching
// twice the pages (a quarter of the run's page faults).
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

namespace scin::packet {

template <class T, unsigned kShift = 9>
class BlockVec {
 public:
  static constexpr std::size_t kBlock = std::size_t{1} << kShift;

  T& operator[](std::size_t i) { return blocks_[i >> kShift][i & (kBlock - 1)]; }
  const T& operator[](std::size_t i) const { return blocks_[i >> kShift][i & (kBlock - 1)]; }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

  /// One more element, value-initialised (a block's elements are made with it).
  T& emplace_back() {
    if ((size_ >> kShift) == blocks_.size()) blocks_.push_back(std::make_unique<T[]>(kBlock));
    return (*this)[size_++];
  }

 private:
  std::vector<std::unique_ptr<T[]>> blocks_;
  std::size_t size_ = 0;
};

}  // namespace scin::packet
