#include "ui/spec_bridge.h"

#include <algorithm>
#include <set>
#include <utility>
#include <vector>

#include <QStringList>

#include "analysis/table.h"
#include "base/error.h"
#include "fabric/params.h"
#include "fabric/preset.h"
#include "schedule/schedule.h"
#include "sweep/builders.h"

namespace scin::ui {
namespace {

// A curve's axes other than size and algorithm, by their short names (as the
// Analysis view names them: "gpus=8 bandwidth_GBps=900") unless two of them
// would read alike ("links.latency_ns" and "switch.latency_ns"): then by path.
QString axisKey(const nlohmann::json& axes) {
  std::vector<std::pair<std::string, QString>> kv;
  std::set<std::string> short_names;
  bool distinct = true;
  for (auto it = axes.begin(); it != axes.end(); ++it) {
    if (it.key() == "collective.bytes" || it.key() == "collective.algorithm") continue;
    const auto& val = it.value();
    QString v = val.is_string()   ? QString::fromStdString(val.get<std::string>())
                : val.is_number() ? QString::number(val.get<double>(), 'g', 10)  // 900, not 900.0
                                  : QString::fromStdString(val.dump());
    kv.emplace_back(it.key(), v);
    distinct = short_names.insert(analysis::short_axis_name(it.key())).second && distinct;
  }
  QString key;
  for (const auto& [path, v] : kv)
    key += QStringLiteral(" %1=%2").arg(QString::fromStdString(distinct ? analysis::short_axis_name(path) : path), v);
  return key.trimmed();
}

}  // namespace

SweepSpec toSweepSpec(const Config& cfg, const SweepRequest& req, const std::string& name) {
  // Built by core (sweep/builders.h), as every front end's sweep is: the UI
  // only turns its typed request into axes.
  if (QString err = req.axisError(); !err.isEmpty()) throw Error(err.toStdString());
  CollectiveGrid g;
  g.name = name;
  g.description = req.summary(cfg).toStdString();
  try {
    for (const auto& pr : list_presets())
      if (pr.name == cfg.name) g.preset = cfg.name;  // names the fabric; base.set overrides every parameter
  } catch (const Error&) {
  }
  for (std::size_t i = 0; i < req.axes.size(); ++i) {
    const ExtraAxis& a = req.axes[i];
    ParsedAxis pa = parseExtraAxis(a);
    Axis ax;
    ax.path = a.path;
    if (pa.is_range) ax.range = AxisRange{pa.min, pa.max, pa.factor, pa.count > 0 || pa.factor > 0 ? 0 : pa.step, pa.count};
    else ax.values = pa.values;
    if (a.zip && i > 0) g.axes.back().axes.push_back(std::move(ax));
    else g.axes.push_back(AxisGroup{{std::move(ax)}});
  }
  g.algorithms = req.effective_algorithms(cfg);
  g.min_bytes = req.min_bytes;
  g.max_bytes = req.max_bytes;
  g.factor = req.factor;
  g.dtype = req.dtype;
  g.engine = req.engine;
  return config_sweep(cfg, g);
}

bool fromSweepSpec(const nlohmann::json& spec_json, Config* cfg, SweepRequest* req) {
  try {
    SweepSpec s = sweep_spec_from_json(spec_json, "stored spec");
    if (s.kind != PointKind::Collective) return false;
    Config c = s.base.preset.empty() ? Config{} : load_preset(s.base.preset);
    for (const auto& [path, v] : s.base.set) set_param(c, path, v);
    SweepRequest r;
    r.engine = s.base.engine;
    r.dtype = s.base.dtype;
    r.algorithms.clear();
    if (!s.base.algorithm.empty()) r.algorithms.push_back(s.base.algorithm);
    if (s.base.bytes) r.min_bytes = r.max_bytes = s.base.bytes;
    for (const auto& g : s.axes)
      for (std::size_t k = 0; k < g.axes.size(); ++k) {
        const Axis& a = g.axes[k];
        if (a.path == "collective.algorithm") {
          r.algorithms.clear();
          for (const auto& v : axis_values(a)) r.algorithms.push_back(v.get<std::string>());
        } else if (a.path == "collective.bytes") {
          auto vals = axis_values(a);
          if (vals.empty()) continue;
          r.min_bytes = vals.front().get<std::uint64_t>();
          r.max_bytes = vals.back().get<std::uint64_t>();
          r.factor = a.range && a.range->factor >= 2 ? static_cast<std::uint64_t>(a.range->factor)
                     : vals.size() > 1 ? std::max<std::uint64_t>(2, vals[1].get<std::uint64_t>() / r.min_bytes)
                                       : 2;
        } else if (a.path == "collective.dtype") {
          r.dtype = axis_values(a).front().get<std::string>();
        } else if (a.path == "engine") {
          r.engine = axis_values(a).front().get<std::string>();
        } else if (find_param(a.path)) {
          ExtraAxis x;
          x.path = a.path;
          x.zip = k > 0;
          auto numberOf = [](const nlohmann::json& v) {
            return v.is_number() ? v.get<double>() : QString::fromStdString(v.dump()).toDouble();
          };
          if (a.range && a.range->min.is_number() && a.range->max.is_number()) {
            x.values = rangeText(numberOf(a.range->min), numberOf(a.range->max), a.range->factor,
                                 a.range->step, a.range->count);
          } else {
            QStringList vals;
            for (const auto& v : axis_values(a))
              vals << (v.is_string()   ? QString::fromStdString(v.get<std::string>())
                       : v.is_number() ? QString::number(v.get<double>(), 'g', 10)
                                       : QString::fromStdString(v.dump()));
            x.values = vals.join(QStringLiteral(", ")).toStdString();
          }
          r.axes.push_back(std::move(x));
        }
      }
    if (cfg) *cfg = c;
    if (req) *req = r;
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

SimResult toSimResult(const PointRecord& p) {
  SimResult r;
  r.algorithm = p.algorithm;
  r.variant = p.variant;
  r.engine = p.engine;
  r.bytes = p.bytes;
  try {
    r.dtype = parse_dtype(p.dtype);
  } catch (const Error&) {
  }
  r.gpus = p.gpus;
  r.time_ns = p.time_us * 1e3;
  r.algbw_GBps = p.algbw_GBps;
  r.busbw_GBps = p.busbw_GBps;
  r.max_link_bytes = p.max_link_bytes;
  r.breakdown = p.breakdown;
  r.extra = p.extra;
  return r;
}

void appendPoints(ResultSet& rs, const std::vector<PointRecord>& pts, const QString& run_label,
                  bool overlay) {
  for (const PointRecord& p : pts) {
    if (p.kind != PointKind::Collective) continue;
    if (p.status != PointStatus::Ok) {
      std::string msg = p.algorithm + ": " + p.message;
      if (std::find(rs.errors.begin(), rs.errors.end(), msg) == rs.errors.end()) rs.errors.push_back(msg);
      continue;
    }
    QString group = axisKey(p.axes);
    if (!run_label.isEmpty()) group = group.isEmpty() ? run_label : run_label + QLatin1Char(' ') + group;
    auto it = std::find_if(rs.curves.begin(), rs.curves.end(), [&](const Curve& c) {
      return c.algorithm == p.algorithm && c.group == group && c.overlay == overlay;
    });
    if (it == rs.curves.end()) {
      Curve c;
      c.algorithm = p.algorithm;
      c.group = group;
      c.overlay = overlay;
      c.label = group.isEmpty() ? QString::fromStdString(p.algorithm)
                                : QStringLiteral("%1 (%2)").arg(QString::fromStdString(p.algorithm), group);
      rs.curves.push_back(std::move(c));
      it = rs.curves.end() - 1;
    }
    SimResult r = toSimResult(p);
    auto pos = std::lower_bound(it->points.begin(), it->points.end(), r.bytes,
                                [](const SimResult& a, std::uint64_t b) { return a.bytes < b; });
    it->points.insert(pos, std::move(r));
  }
}

ResultSet toResultSet(const std::vector<PointRecord>& pts, const QString& run_label, bool overlay) {
  ResultSet rs;
  rs.title = run_label;
  appendPoints(rs, pts, run_label, overlay);
  return rs;
}

}  // namespace scin::ui
