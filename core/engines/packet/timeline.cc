#include "engines/packet/timeline.h"

#include <algorithm>

namespace scin::packet {

void Timeline::init(int samples, std::size_t links) {
  samples_ = samples;
  links_ = links;
  bin_ = 1000;
  busy_.assign(samples > 0 ? links * static_cast<std::size_t>(samples) : 0, 0);
}

void Timeline::rebin() {
  const auto n = static_cast<std::size_t>(samples_);
  for (std::size_t l = 0; l < links_; ++l) {
    Ps* row = busy_.data() + l * n;
    for (std::size_t k = 0; k < n / 2; ++k) row[k] = row[2 * k] + row[2 * k + 1];
    if (n % 2) row[n / 2] = row[n - 1];
    for (std::size_t k = (n + 1) / 2; k < n; ++k) row[k] = 0;
  }
  bin_ *= 2;
}

int Timeline::used(Ps total) const {
  const Ps bins = (total + bin_ - 1) / bin_;
  return static_cast<int>(std::min<Ps>(samples_, std::max<Ps>(1, bins)));
}

double Timeline::utilisation(std::size_t link, int k) const {
  const Ps b = busy_[link * static_cast<std::size_t>(samples_) + static_cast<std::size_t>(k)];
  return std::min(1.0, static_cast<double>(b) / static_cast<double>(bin_));
}

}  // namespace scin::packet
