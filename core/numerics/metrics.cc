#include "numerics/metrics.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/error.h"

namespace scin {

ErrorMetrics ErrorSums::metrics() const {
  ErrorMetrics m;
  m.max_abs = max_abs;
  m.rel_l2 = ref2 > 0 ? std::sqrt(err2 / ref2) : std::sqrt(err2);
  m.sqnr_dB = err2 > 0 ? 10.0 * std::log10(ref2 / err2) : std::numeric_limits<double>::infinity();
  m.cosine = (out2 > 0 && ref2 > 0) ? dot / std::sqrt(out2 * ref2) : (out2 == ref2 ? 1.0 : 0.0);
  return m;
}

namespace {

void check_size(std::span<const float> out, const std::vector<double>& exact) {
  if (out.size() != exact.size())
    throw Error(fmt::format("metrics: output has {} elements, reference {}", out.size(), exact.size()));
}

}  // namespace

ErrorMetrics measure_one(std::span<const float> out, const std::vector<double>& exact) {
  check_size(out, exact);
  ErrorSums s;
  for (std::size_t i = 0; i < out.size(); ++i) s.add(out[i], exact[i]);
  return s.metrics();
}

std::pair<ErrorMetrics, ErrorMetrics> measure_two(std::span<const float> a, std::span<const float> b,
                                                  const std::vector<double>& exact) {
  check_size(a, exact);
  check_size(b, exact);
  ErrorSums sa, sb;   // two independent chains of additions: they overlap in time
  for (std::size_t i = 0; i < exact.size(); ++i) {
    sa.add(a[i], exact[i]);
    sb.add(b[i], exact[i]);
  }
  return {sa.metrics(), sb.metrics()};
}

ErrorMetrics measure(const std::vector<std::span<const float>>& outputs, const std::vector<double>& exact) {
  return measure_ranks(outputs, [&exact](std::span<const float> out) { return measure_one(out, exact); });
}

ErrorMetrics measure_ranks(const std::vector<std::span<const float>>& outputs,
                           const std::function<ErrorMetrics(std::span<const float>)>& one) {
  if (outputs.empty()) throw Error("metrics: no outputs");
  ErrorMetrics worst;
  double worst_rel = -1;
  double max_abs = 0;
  bool identical = true;
  ErrorMetrics first;
  for (std::size_t r = 0; r < outputs.size(); ++r) {
    // A rank whose output equals rank 0's bit for bit has rank 0's metrics (the
    // usual case: an All-Reduce leaves every rank the same sum); measure the others.
    const bool same = r > 0 && outputs[r].size() == outputs[0].size() &&
                      (outputs[r].data() == outputs[0].data() ||
                       std::memcmp(outputs[r].data(), outputs[0].data(), outputs[0].size() * sizeof(float)) == 0);
    ErrorMetrics m = same ? first : one(outputs[r]);
    if (r == 0) first = m;
    if (!same && r > 0) identical = false;
    if (!(m.max_abs <= max_abs)) max_abs = m.max_abs;
    const double rel = std::isnan(m.rel_l2) ? std::numeric_limits<double>::infinity() : m.rel_l2;
    if (rel > worst_rel) {
      worst_rel = rel;
      worst = m;
      worst.worst_rank = static_cast<int>(r);
    }
  }
  worst.max_abs = max_abs;
  worst.ranks_identical = identical;
  return worst;
}

ErrorMetrics measure(const std::vector<std::vector<float>>& outputs, const std::vector<double>& exact) {
  return measure(std::vector<std::span<const float>>(outputs.begin(), outputs.end()), exact);
}

std::vector<double> exact_sum(const std::vector<std::vector<float>>& inputs) {
  if (inputs.empty()) return {};
  const std::size_t n = inputs.front().size();
  for (const auto& x : inputs)
    if (x.size() != n) throw Error("exact_sum: inputs differ in length");
  std::vector<double> s(n);
  // In blocks that stay in cache: each element is still summed rank 0, 1, ...
  // in order, starting from 0.0 (the same additions, the same bits).
  constexpr std::size_t kBlock = 2048;
  for (std::size_t lo = 0; lo < n; lo += kBlock) {
    const std::size_t hi = std::min(n, lo + kBlock);
    double* d = s.data();
    for (std::size_t i = lo; i < hi; ++i) d[i] = 0.0;
    for (const auto& x : inputs) {
      const float* v = x.data();
      for (std::size_t i = lo; i < hi; ++i) d[i] += v[i];
    }
  }
  return s;
}

nlohmann::json to_json(const ErrorMetrics& m) {
  nlohmann::json j;
  j["rel_l2"] = m.rel_l2;
  j["sqnr_dB"] = std::isfinite(m.sqnr_dB) ? nlohmann::json(m.sqnr_dB) : nlohmann::json(nullptr);
  j["max_abs"] = m.max_abs;
  j["cosine"] = m.cosine;
  j["ranks_identical"] = m.ranks_identical;
  j["worst_rank"] = m.worst_rank;
  return j;
}

}  // namespace scin
