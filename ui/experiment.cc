#include "ui/experiment.h"

#include <algorithm>
#include <cmath>
#include <set>

#include <QRegularExpression>
#include <QStringList>

#include "schedule/algorithms.h"
#include "base/error.h"
#include "fabric/params.h"
#include "schedule/schedule.h"
#include "sweep/sweep.h"
#include "ui/format.h"

namespace scin::ui {
namespace {

constexpr double kMaxAxisValues = 10000;

nlohmann::json paramJson(const Config& cfg, const ParamInfo& p) {
  ParamValue v = p.get(cfg);
  return std::visit([](const auto& x) { return nlohmann::json(x); }, v);
}

std::string num(double v) { return QString::number(v, 'g', 10).toStdString(); }

[[noreturn]] void fail(const ParamInfo& p, const std::string& what) {
  throw Error(p.path + ": " + what + "; allowed " + format_range(p));
}

}  // namespace

std::string rangeText(double min, double max, double factor, double step, int count) {
  std::string s = num(min) + ".." + num(max);
  if (factor > 0) return s + " x" + num(factor);
  if (count > 0) return s + " count " + std::to_string(count);
  if (step > 0) return s + " step " + num(step);
  return s;
}

ParsedAxis parseExtraAxis(const ExtraAxis& a) {
  if (a.path.empty()) throw Error("choose a parameter for the axis");
  const ParamInfo& p = param(a.path);  // throws for an unknown path
  const QString text = QString::fromStdString(a.values).trimmed();
  if (text.isEmpty())
    fail(p, "no values; type a list (e.g. 450, 900) or a range (e.g. 100..300 step 50)");
  ParsedAxis out;
  Config c;
  auto check = [&](const auto& v) {
    set_param(c, p.path, v);  // throws naming the path and the allowed range
    out.values.push_back(paramJson(c, p));
  };
  if (!text.contains(QStringLiteral(".."))) {
    const QStringList items = text.split(QLatin1Char(','));
    if (static_cast<double>(items.size()) > kMaxAxisValues) fail(p, "more than 10000 values");
    for (const QString& item : items) {
      const QString v = item.trimmed();
      if (v.isEmpty()) fail(p, "empty value in the list '" + a.values + "'");
      check(v.toStdString());
    }
    return out;
  }
  // A range: MIN..MAX [step S | x F | count N].
  static const QRegularExpression re(
      QStringLiteral(R"(^(\S+?)\s*\.\.\s*(\S+?)(?:\s*(step|x|×|\*|count)\s*(\S+))?$)"),
      QRegularExpression::CaseInsensitiveOption);
  const auto m = re.match(text);
  const std::string syntax = "write a range as MIN..MAX step S, MIN..MAX x F or MIN..MAX count N";
  if (!m.hasMatch()) fail(p, "'" + a.values + "' is not a list or a range (" + syntax + ")");
  if (p.type != ParamType::Int && p.type != ParamType::Real)
    fail(p, "a range needs a numeric parameter; list the values instead");
  bool ok1 = false, ok2 = false;
  out.is_range = true;
  out.min = m.captured(1).toDouble(&ok1);
  out.max = m.captured(2).toDouble(&ok2);
  if (!ok1 || !ok2 || !std::isfinite(out.min) || !std::isfinite(out.max))
    fail(p, "the range '" + a.values + "' needs numbers at both ends");
  if (out.min < p.min || out.max > p.max)
    fail(p, "the range " + num(out.min) + ".." + num(out.max) + " goes outside the allowed range");
  if (out.max < out.min) fail(p, "the range ends below its start (" + num(out.min) + ".." + num(out.max) + ")");
  const QString kind = m.captured(3).toLower();
  double n = 0;
  if (kind.isEmpty()) {
    if (p.type != ParamType::Int) fail(p, "a range of a real-valued parameter needs a step (" + syntax + ")");
    out.step = 1;
  } else {
    bool ok = false;
    const double v = m.captured(4).toDouble(&ok);
    if (!ok || !std::isfinite(v)) fail(p, "'" + m.captured(4).toStdString() + "' is not a number (" + syntax + ")");
    if (kind == QLatin1String("step")) {
      if (v <= 0) fail(p, "the step must be greater than 0");
      out.step = v;
    } else if (kind == QLatin1String("count")) {
      if (v < 2 || v != std::floor(v)) fail(p, "count must be a whole number of at least 2");
      out.count = static_cast<int>(std::min(v, kMaxAxisValues + 1));
    } else {
      if (v <= 1) fail(p, "the factor must be greater than 1");
      if (out.min <= 0) fail(p, "a geometric range (x F) must start above 0");
      out.factor = v;
    }
  }
  if (out.step > 0) n = std::floor((out.max - out.min) / out.step) + 1;
  else if (out.factor > 0) n = std::floor(std::log(out.max / out.min) / std::log(out.factor)) + 1;
  else n = out.count;
  if (n > kMaxAxisValues) fail(p, "the range '" + a.values + "' has more than 10000 values");
  Axis ax;
  ax.path = p.path;
  ax.range = AxisRange{out.min, out.max, out.factor, out.step, out.count};
  for (const auto& v : axis_values(ax)) check(v);
  return out;
}

QString SweepRequest::axisError() const {
  std::set<std::string> seen;
  std::size_t groupLen = 0;
  for (std::size_t i = 0; i < axes.size(); ++i) {
    const ExtraAxis& a = axes[i];
    std::size_t len = 0;
    try {
      len = parseExtraAxis(a).values.size();
    } catch (const std::exception& e) {
      return QStringLiteral("Axis %1: %2").arg(i + 1).arg(QString::fromUtf8(e.what()));
    }
    if (!seen.insert(a.path).second)
      return QStringLiteral("Axis %1: %2 is already swept by another axis")
          .arg(i + 1)
          .arg(QString::fromStdString(a.path));
    if (a.zip && i > 0 && len != groupLen)
      return QStringLiteral("Axis %1: %2 is zipped with the axis above, so it needs %3 values (has %4)")
          .arg(i + 1)
          .arg(QString::fromStdString(a.path))
          .arg(groupLen)
          .arg(len);
    if (!a.zip || i == 0) groupLen = len;
  }
  return {};
}

std::size_t SweepRequest::axis_combinations() const {
  if (!axisError().isEmpty()) return 0;
  std::size_t n = 1;
  for (std::size_t i = 0; i < axes.size(); ++i)
    if (!axes[i].zip || i == 0) n *= parseExtraAxis(axes[i]).values.size();
  return n;
}

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
  std::size_t axis = axis_combinations();
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
  for (std::size_t i = 0; i < axes.size(); ++i)
    s += QStringLiteral("%1 %2 ∈ {%3}")
             .arg(axes[i].zip && i > 0 ? QStringLiteral(" zipped with") : QStringLiteral(","),
                  QString::fromStdString(axes[i].path), QString::fromStdString(axes[i].values));
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
