#include "ui/experiment.h"

#include <algorithm>

#include "model/algorithms.h"
#include "model/error.h"
#include "model/params.h"
#include "model/schedule.h"
#include "ui/format.h"

namespace scin::ui {

std::vector<std::uint64_t> SweepRequest::sizes() const {
  return size_range(min_bytes, max_bytes, factor);
}

std::vector<std::string> SweepRequest::effective_algorithms(const Config& cfg) const {
  std::vector<std::string> supported = supported_algorithms(cfg);
  if (algorithms.empty()) return supported;
  std::vector<std::string> out;
  for (const auto& a : algorithms)
    if (std::find(supported.begin(), supported.end(), a) != supported.end()) out.push_back(a);
  return out;
}

std::size_t SweepRequest::point_count(const Config& cfg) const {
  std::size_t axis = axis_path.empty() ? 1 : std::max<std::size_t>(1, axis_values.size());
  try {
    return sizes().size() * effective_algorithms(cfg).size() * axis;
  } catch (const Error&) {
    return 0;
  }
}

QString SweepRequest::summary(const Config& cfg) const {
  QString s = QStringLiteral("%1 – %2 ×%3, %4 algorithms, %5, %6 engine")
                  .arg(sizeText(min_bytes), sizeText(max_bytes))
                  .arg(factor)
                  .arg(effective_algorithms(cfg).size())
                  .arg(QString::fromStdString(dtype), QString::fromStdString(engine));
  if (!axis_path.empty()) {
    QStringList v;
    for (const auto& x : axis_values) v << QString::fromStdString(x);
    s += QStringLiteral(", %1 ∈ {%2}").arg(QString::fromStdString(axis_path), v.join(QStringLiteral(", ")));
  }
  return s;
}

const Curve* ResultSet::find(const std::string& algorithm) const {
  for (const auto& c : curves)
    if (c.algorithm == algorithm && !c.overlay) return &c;
  return nullptr;
}

ResultSet computeAnalytic(const Config& cfg, const SweepRequest& req) {
  ResultSet rs;
  rs.title = QStringLiteral("Preview");
  std::vector<std::uint64_t> sizes;
  try {
    validate(cfg);
    sizes = req.sizes();
  } catch (const Error& e) {
    rs.errors.push_back(e.what());
    return rs;
  }
  DType dtype = parse_dtype(req.dtype);
  for (const auto& algo : req.effective_algorithms(cfg)) {
    Curve c;
    c.algorithm = algo;
    c.label = QString::fromStdString(algo);
    try {
      for (std::uint64_t s : sizes) {
        if (s % static_cast<std::uint64_t>(dtype_bytes(dtype)) != 0) continue;
        c.points.push_back(simulate(cfg, algo, Collective{s, dtype}, "analytic"));
      }
    } catch (const Error& e) {
      rs.errors.push_back(algo + ": " + e.what());
      continue;
    }
    rs.curves.push_back(std::move(c));
  }
  return rs;
}

}  // namespace scin::ui
