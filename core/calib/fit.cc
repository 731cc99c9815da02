#include "calib/fit.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <limits>
#include <set>
#include <tuple>

#include "base/error.h"
#include "fabric/params.h"

namespace scin {

std::vector<std::string> default_fit_params() {
  // Documented in docs/model.md ("Calibration"); only those the registry has are used.
  // Not fitted by default: accelerator.launch_overhead_ns (every algorithm pays it
  // together with its own base cost, so only the sums are identifiable) and
  // links.efficiency (set by the large-message ring busbw of NCCL issue 1455).
  static const char* const candidates[] = {
      "ring.ll.base_ns",
      "ring.ll.step_overhead_ns",
      "ring.ll128.base_ns",
      "ring.ll128.step_overhead_ns",
      "ring.simple.base_ns",
      "ring.simple.step_overhead_ns",
      "ring.channels",
      "ramp.ring.half_bytes",
      "ramp.ring.exponent",
      "switch.nvls.efficiency",
      "switch.nvls.sync_overhead_ns",
      "switch.nvls.reduce_GBps",
      "ramp.nvls.half_bytes",
      "ramp.nvls.exponent",
      "one_shot.base_ns",
      "one_shot.link_efficiency",
      "two_shot.base_ns",
      "two_shot.link_efficiency",
      "accelerator.launch_serial_ns",
  };
  std::vector<std::string> out;
  for (const char* p : candidates)
    if (find_param(p)) out.push_back(p);
  return out;
}

namespace {

using Vec = std::vector<double>;
using Mat = std::vector<Vec>;

// Solves A x = b by Gaussian elimination with partial pivoting; false if singular.
bool solve(Mat a, Vec b, Vec& x) {
  const std::size_t n = b.size();
  for (std::size_t c = 0; c < n; ++c) {
    std::size_t piv = c;
    for (std::size_t r = c + 1; r < n; ++r)
      if (std::abs(a[r][c]) > std::abs(a[piv][c])) piv = r;
    if (std::abs(a[piv][c]) < 1e-300) return false;
    std::swap(a[c], a[piv]);
    std::swap(b[c], b[piv]);
    for (std::size_t r = c + 1; r < n; ++r) {
      const double f = a[r][c] / a[c][c];
      for (std::size_t k = c; k < n; ++k) a[r][k] -= f * a[c][k];
      b[r] -= f * b[c];
    }
  }
  x.assign(n, 0);
  for (std::size_t i = n; i-- > 0;) {
    double s = b[i];
    for (std::size_t k = i + 1; k < n; ++k) s -= a[i][k] * x[k];
    x[i] = s / a[i][i];
  }
  return true;
}

double huber(double r, double d) { return std::abs(r) <= d ? 0.5 * r * r : d * (std::abs(r) - 0.5 * d); }
double huber_w(double r, double d) { return std::abs(r) <= d ? 1.0 : d / std::abs(r); }

struct Problem {
  const Config& base;
  std::vector<const MeasuredRow*> rows;
  std::vector<const ParamInfo*> params;   // fitted parameters
  std::vector<std::string> systems;       // systems with an offset
  std::vector<int> row_system;            // index into systems, -1: none
  double lo(std::size_t j) const { return std::log(std::max(params[j]->min, 1e-9)); }
  double hi(std::size_t j) const { return std::log(params[j]->max); }

  Config config(const Vec& theta) const {
    Config c = base;
    for (std::size_t j = 0; j < params.size(); ++j) {
      double v = std::exp(std::clamp(theta[j], lo(j), hi(j)));
      if (params[j]->type == ParamType::Int) v = std::max(params[j]->min, std::round(v));
      set_param(c, params[j]->path, v);
    }
    return c;
  }
  // Fabric model times (no offsets), one per row; identical rows evaluated once.
  Vec model(const Vec& theta) const {
    const Config c = config(theta);
    std::map<std::tuple<int, std::string, std::uint64_t, std::string, int>, double> memo;
    Vec out(rows.size());
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const MeasuredRow& r = *rows[i];
      auto key = std::make_tuple(r.gpus, r.algorithm, r.bytes, r.dtype, r.gpus_per_process);
      auto it = memo.find(key);
      if (it == memo.end()) {
        std::string why;
        auto t = model_time_us(c, r, &why);
        if (!t) throw Error(fmt::format("{}: {}", r.source, why));
        it = memo.emplace(key, *t).first;
      }
      out[i] = it->second;
    }
    return out;
  }
  Vec residuals(const Vec& m, const Vec& off) const {
    Vec r(rows.size());
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const double o = row_system[i] >= 0 ? std::exp(off[static_cast<std::size_t>(row_system[i])]) : 0.0;
      r[i] = std::log(m[i] + o) - std::log(rows[i]->measured_us);
    }
    return r;
  }
  // Jacobian columns: params (numerical, forward difference of 1% in log space), then offsets.
  Mat jacobian(const Vec& theta, const Vec& off, const Vec& m0) const {
    const std::size_t n = rows.size(), p = params.size(), q = systems.size();
    Mat j(n, Vec(p + q, 0));
    const Vec r0 = residuals(m0, off);
    for (std::size_t k = 0; k < p; ++k) {
      Vec t = theta;
      double h = 0.01;
      if (t[k] + h > hi(k)) h = -h;
      t[k] += h;
      const Vec r1 = residuals(model(t), off);
      for (std::size_t i = 0; i < n; ++i) j[i][k] = (r1[i] - r0[i]) / h;
    }
    for (std::size_t i = 0; i < n; ++i)
      if (row_system[i] >= 0) {
        const double o = std::exp(off[static_cast<std::size_t>(row_system[i])]);
        j[i][p + static_cast<std::size_t>(row_system[i])] = o / (m0[i] + o);
      }
    return j;
  }
};

// Systems whose rows repeat a collective another selected system timed, and
// that measured it slower in most such cases.
std::set<std::string> slower_harnesses(const std::vector<MeasuredRow>& rows) {
  std::map<std::tuple<int, std::string, std::uint64_t>, std::map<std::string, double>> by_key;
  for (const auto& r : rows) by_key[{r.gpus, r.algorithm, r.bytes}][r.system] = r.measured_us;
  std::map<std::string, int> slower, faster;
  for (const auto& [key, sys] : by_key) {
    if (sys.size() < 2) continue;
    auto fastest = std::min_element(sys.begin(), sys.end(), [](auto& a, auto& b) { return a.second < b.second; });
    for (const auto& [s, t] : sys) (s == fastest->first ? faster[s] : slower[s])++;
  }
  std::set<std::string> out;
  for (const auto& [s, n] : slower)
    if (n > faster[s]) out.insert(s);
  return out;
}

}  // namespace

namespace {
FitResult fit_pass(const Config& cfg, const std::vector<MeasuredRow>& all_rows, const FitOptions& opts);
}  // namespace

FitResult fit(const Config& cfg, const std::vector<MeasuredRow>& all_rows, const FitOptions& opts) {
  // A parameter whose 95% interval at the solution is undefined or spans more
  // than a factor of 100 is not identified by these rows after all: refuse it,
  // keep its preset value and fit the others again.
  FitOptions o = opts;
  if (o.params.empty()) o.params = default_fit_params();
  std::map<std::string, std::string> late;
  for (int pass = 0;; ++pass) {
    FitResult r = fit_pass(cfg, all_rows, o);
    // One at a time, the widest first: removing it may make the others' intervals narrow.
    // A singular covariance leaves every interval undefined; then the parameter the
    // rows depend on least at the solution goes first (not merely the first listed).
    std::vector<std::string> keep;
    const FittedParam* worst = nullptr;
    double worst_spread = 100;
    double least_sensitive = std::numeric_limits<double>::infinity();
    for (const auto& p : r.params) {
      if (!p.fitted) continue;
      const bool defined = std::isfinite(p.ci_low) && std::isfinite(p.ci_high) && p.ci_low > 0;
      const double spread = defined ? p.ci_high / p.ci_low : std::numeric_limits<double>::infinity();
      if (!defined) {
        if (worst_spread < std::numeric_limits<double>::infinity() || p.sensitivity_at_fit < least_sensitive) {
          least_sensitive = p.sensitivity_at_fit;
          worst_spread = spread;
          worst = &p;
        }
      } else if (spread > worst_spread) {
        worst_spread = spread;
        worst = &p;
      }
    }
    // With no more rows than unknowns there is no interval to judge: exactly determined.
    int unknowns = static_cast<int>(r.offsets_us.size());
    for (const auto& p : r.params) unknowns += p.fitted ? 1 : 0;
    const bool again = worst != nullptr && pass < 4 && r.rows_used > unknowns;
    if (again)
      late[worst->path] =
          std::isinf(worst_spread)
              ? fmt::format("not identifiable at the solution: the fit moved it to {:.4g} but the rows cannot separate "
                            "the fitted parameters (singular covariance, no 95% interval); it is the one they depend "
                            "on least there (RMS d log(time) / d log(p) = {:.2g})",
                            worst->value, worst->sensitivity_at_fit)
              : fmt::format("not identifiable at the solution: the fit moved it to {:.4g} but its 95% "
                            "interval [{:.3g}, {:.3g}] spans more than a factor of 100",
                            worst->value, worst->ci_low, worst->ci_high);
    for (const auto& p : r.params)
      if (!again || p.path != worst->path) keep.push_back(p.path);
    if (!again) {
      // Report every requested parameter, in the requested order.
      std::vector<FittedParam> all;
      for (const auto& n : opts.params.empty() ? default_fit_params() : opts.params) {
        if (auto it = late.find(n); it != late.end()) {
          FittedParam f;
          f.path = n;
          f.unit = param(n).unit;
          f.before = f.value = get_param_number(cfg, n);
          f.reason = it->second;
          all.push_back(f);
          continue;
        }
        for (const auto& p : r.params)
          if (p.path == n) all.push_back(p);
      }
      r.params = std::move(all);
      // Rows of NCCL's own choice are modelled as the algorithm NCCL's tuning model picks at
      // their size, so each informs only that algorithm's costs, and a cost no picked
      // algorithm has is refused. Logs of each algorithm alone identify both.
      const bool auto_rows = std::any_of(all_rows.begin(), all_rows.end(), [](const MeasuredRow& x) {
        return x.algorithm == "nccl-auto";
      });
      if (auto_rows && !late.empty())
        r.notes.push_back(
            "rows of NCCL's own choice (nccl-auto) are modelled as the algorithm and protocol NCCL's tuning model "
            "picks at each size, so each row informs only that algorithm's costs; measure with NCCL_ALGO=Ring and with NCCL_ALGO=NVLS (one log each) so that both "
            "algorithms' costs can be fitted");
      return r;
    }
    o.params = keep;
  }
}

namespace {

FitResult fit_pass(const Config& cfg, const std::vector<MeasuredRow>& all_rows, const FitOptions& opts) {
  FitResult res;
  res.cfg = cfg;
  std::vector<MeasuredRow> rows;
  for (const auto& r : all_rows)
    if (model_time_us(cfg, r)) rows.push_back(r);
  if (rows.empty()) throw Error("calibrate: none of the measured rows can be modelled on this preset");
  res.rows_used = static_cast<int>(rows.size());

  // Harness offsets.
  std::set<std::string> off_sys;
  if (opts.auto_offsets) off_sys = slower_harnesses(rows);
  for (const auto& r : rows)
    for (const auto& sub : opts.offset_systems)
      if (r.system.find(sub) != std::string::npos) off_sys.insert(r.system);

  const std::vector<std::string> names = opts.params.empty() ? default_fit_params() : opts.params;
  Problem pb{cfg, {}, {}, {}, {}};
  for (const auto& r : rows) pb.rows.push_back(&r);
  pb.systems.assign(off_sys.begin(), off_sys.end());
  for (const auto& r : rows) {
    auto it = std::find(pb.systems.begin(), pb.systems.end(), r.system);
    pb.row_system.push_back(it == pb.systems.end() ? -1 : static_cast<int>(it - pb.systems.begin()));
  }
  std::vector<FittedParam> info;
  std::vector<const ParamInfo*> candidates;
  for (const auto& n : names) {
    const ParamInfo& p = param(n);
    if (p.type != ParamType::Real && p.type != ParamType::Int)
      throw Error(fmt::format("calibrate: {} is a {} parameter; only numbers can be fitted", n, to_string(p.type)));
    FittedParam f;
    f.path = n;
    f.unit = p.unit;
    f.before = f.value = get_param_number(cfg, n);
    info.push_back(f);
    candidates.push_back(&p);
  }
  Vec theta0;
  for (std::size_t j = 0; j < candidates.size(); ++j) {
    // A parameter that is off (0) starts from a seed in its unit: 16 MiB (where
    // issue 15 reports real systems reach half bandwidth), 1 us, or 1; a per-algorithm
    // link efficiency whose 0 means links.efficiency starts from that value (at 1 it would
    // sit above the framing ceiling, where no row depends on it).
    const bool inherits_links = info[j].path.ends_with(".link_efficiency") && find_param("links.efficiency");
    const double seed = candidates[j]->unit == "bytes" ? double(16 << 20)
                        : candidates[j]->unit == "ns" ? 1000.0
                        : inherits_links              ? get_param_number(cfg, "links.efficiency")
                                                      : 1.0;
    const double v = info[j].before > 0 ? info[j].before : std::clamp(seed, std::max(candidates[j]->min, 1e-9), candidates[j]->max);
    theta0.push_back(std::log(v));
  }

  // Initial offsets: the median gap between the harness and the model, at least 0.1 us.
  pb.params = candidates;
  const Vec m_init = pb.model(theta0);
  Vec off(pb.systems.size());
  for (std::size_t s = 0; s < pb.systems.size(); ++s) {
    std::vector<double> gaps;
    for (std::size_t i = 0; i < rows.size(); ++i)
      if (pb.row_system[i] == static_cast<int>(s)) gaps.push_back(rows[i].measured_us - m_init[i]);
    std::nth_element(gaps.begin(), gaps.begin() + static_cast<long>(gaps.size() / 2), gaps.end());
    off[s] = std::log(std::max(0.1, gaps[gaps.size() / 2]));
  }

  // Identifiability: sensitivity, then independence (Gram-Schmidt: offsets first,
  // then parameters from the most to the least sensitive).
  {
    const Mat j = pb.jacobian(theta0, off, m_init);
    const std::size_t n = rows.size(), p = candidates.size(), q = pb.systems.size();
    std::vector<std::size_t> order;
    for (std::size_t k = 0; k < p; ++k) {
      double ss = 0;
      for (std::size_t i = 0; i < n; ++i) ss += j[i][k] * j[i][k];
      info[k].sensitivity = std::sqrt(ss / static_cast<double>(n));
      if (info[k].sensitivity < opts.min_sensitivity)
        info[k].reason = fmt::format("not identifiable: the measured rows barely depend on it (RMS d log(time) / "
                                     "d log({}) = {:.2g} < {:g})", info[k].path, info[k].sensitivity, opts.min_sensitivity);
      else
        order.push_back(k);
    }
    std::stable_sort(order.begin(), order.end(), [&](auto a, auto b) { return info[a].sensitivity > info[b].sensitivity; });
    std::vector<Vec> basis;
    std::vector<std::string> basis_name;
    auto column = [&](std::size_t k) {
      Vec c(n);
      for (std::size_t i = 0; i < n; ++i) c[i] = j[i][k];
      return c;
    };
    auto add = [&](Vec c, const std::string& name, std::string* why) {
      double norm = 0;
      for (double x : c) norm += x * x;
      norm = std::sqrt(norm);
      if (norm == 0) return false;
      for (double& x : c) x /= norm;
      std::vector<std::pair<double, std::string>> proj;
      for (std::size_t b = 0; b < basis.size(); ++b) {
        double d = 0;
        for (std::size_t i = 0; i < n; ++i) d += c[i] * basis[b][i];
        for (std::size_t i = 0; i < n; ++i) c[i] -= d * basis[b][i];
        proj.emplace_back(std::abs(d), basis_name[b]);
      }
      double rest = 0;
      for (double x : c) rest += x * x;
      rest = std::sqrt(rest);
      if (rest < opts.min_independence) {
        std::sort(proj.rbegin(), proj.rend());
        std::vector<std::string> with;
        for (std::size_t t = 0; t < proj.size() && t < 2; ++t) with.push_back(proj[t].second);
        if (why)
          *why = fmt::format("not identifiable: its effect on these rows is a combination of {} (independent part "
                             "{:.2g} < {:g}); add rows where they differ", fmt::join(with, " and "), rest,
                             opts.min_independence);
        return false;
      }
      for (double& x : c) x /= rest;
      basis.push_back(std::move(c));
      basis_name.push_back(name);
      return true;
    };
    for (std::size_t s = 0; s < q; ++s) add(column(p + s), "the harness offset of '" + pb.systems[s] + "'", nullptr);
    for (std::size_t k : order)
      if (add(column(k), info[k].path, &info[k].reason)) info[k].fitted = true;
  }
  std::vector<std::size_t> fitted_idx;
  pb.params.clear();
  Vec theta;
  for (std::size_t k = 0; k < candidates.size(); ++k)
    if (info[k].fitted) {
      fitted_idx.push_back(k);
      pb.params.push_back(candidates[k]);
      theta.push_back(theta0[k]);
    }

  // Levenberg-Marquardt on the Huber cost (iteratively reweighted).
  const std::size_t n = rows.size(), p = pb.params.size(), q = pb.systems.size(), dim = p + q;
  const double d = opts.huber_delta;
  auto cost_of = [&](const Vec& r) {
    double c = 0;
    for (double x : r) c += huber(x, d);
    return c;
  };
  Vec m = pb.model(theta);
  Vec r = pb.residuals(m, off);
  double cost = cost_of(r);
  double lambda = 1e-2;
  int it = 0;
  for (; it < opts.max_iterations && dim > 0; ++it) {
    const Mat j = pb.jacobian(theta, off, m);
    Mat a(dim, Vec(dim, 0));
    Vec g(dim, 0);
    for (std::size_t i = 0; i < n; ++i) {
      const double w = huber_w(r[i], d);
      for (std::size_t x = 0; x < dim; ++x) {
        g[x] += w * j[i][x] * r[i];
        for (std::size_t y = 0; y < dim; ++y) a[x][y] += w * j[i][x] * j[i][y];
      }
    }
    bool improved = false;
    for (int tries = 0; tries < 12 && !improved; ++tries) {
      Mat a2 = a;
      Vec neg(dim);
      for (std::size_t x = 0; x < dim; ++x) {
        a2[x][x] += lambda * a[x][x] + 1e-12;
        neg[x] = -g[x];
      }
      Vec step;
      if (!solve(a2, neg, step)) {
        lambda *= 10;
        continue;
      }
      Vec t2 = theta, o2 = off;
      for (std::size_t x = 0; x < p; ++x) t2[x] = std::clamp(theta[x] + std::clamp(step[x], -2.0, 2.0), pb.lo(x), pb.hi(x));
      for (std::size_t s = 0; s < q; ++s) o2[s] = std::clamp(off[s] + std::clamp(step[p + s], -2.0, 2.0), std::log(1e-3), std::log(1e6));
      const Vec m2 = pb.model(t2);
      const Vec r2 = pb.residuals(m2, o2);
      const double c2 = cost_of(r2);
      if (c2 < cost) {
        const double gain = cost - c2;
        theta = t2;
        off = o2;
        m = m2;
        r = r2;
        cost = c2;
        lambda = std::max(1e-7, lambda / 3);
        improved = true;
        if (gain < 1e-6 * std::max(1e-3, cost)) it = opts.max_iterations;
      } else {
        lambda *= 4;
      }
    }
    if (!improved) break;
  }
  res.iterations = it;
  res.cost = cost;

  // Confidence intervals from the weighted Gauss-Newton covariance at the solution.
  Vec var(dim, std::numeric_limits<double>::quiet_NaN());
  if (dim > 0 && n > dim) {
    const Mat j = pb.jacobian(theta, off, m);
    Mat a(dim, Vec(dim, 0));
    double s2 = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const double w = huber_w(r[i], d);
      s2 += w * r[i] * r[i];
      for (std::size_t x = 0; x < dim; ++x)
        for (std::size_t y = 0; y < dim; ++y) a[x][y] += w * j[i][x] * j[i][y];
    }
    s2 /= static_cast<double>(n - dim);
    for (std::size_t x = 0; x < p; ++x) {
      double ss = 0;
      for (std::size_t i = 0; i < n; ++i) ss += j[i][x] * j[i][x];
      info[fitted_idx[x]].sensitivity_at_fit = std::sqrt(ss / static_cast<double>(n));
    }
    for (std::size_t x = 0; x < dim; ++x) {
      Vec e(dim, 0), col;
      e[x] = 1;
      if (solve(a, e, col)) var[x] = s2 * col[x];
    }
  }
  res.cfg = pb.config(theta);
  for (std::size_t x = 0; x < p; ++x) {
    FittedParam& f = info[fitted_idx[x]];
    f.value = get_param_number(res.cfg, f.path);
    const double sd = std::sqrt(var[x]);
    f.ci_low = std::isfinite(sd) ? f.value * std::exp(-1.96 * sd) : std::numeric_limits<double>::quiet_NaN();
    f.ci_high = std::isfinite(sd) ? f.value * std::exp(1.96 * sd) : std::numeric_limits<double>::quiet_NaN();
  }
  for (std::size_t s = 0; s < q; ++s) {
    const double o = std::exp(off[s]);
    const double sd = std::sqrt(var[p + s]);
    res.offsets_us[pb.systems[s]] = o;
    res.offsets_ci_us[pb.systems[s]] = std::isfinite(sd) ? std::make_pair(o * std::exp(-1.96 * sd), o * std::exp(1.96 * sd))
                                                         : std::make_pair(std::nan(""), std::nan(""));
  }
  res.params = std::move(info);
  std::map<std::string, double> before_off;
  for (std::size_t s = 0; s < q; ++s) {
    std::vector<double> gaps;
    for (std::size_t i = 0; i < rows.size(); ++i)
      if (pb.row_system[i] == static_cast<int>(s)) gaps.push_back(rows[i].measured_us - m_init[i]);
    std::sort(gaps.begin(), gaps.end());
    before_off[pb.systems[s]] = std::max(0.0, gaps[gaps.size() / 2]);
  }
  res.before = validate_rows(cfg, rows, before_off);
  res.after = validate_rows(res.cfg, rows, res.offsets_us);
  return res;
}

}  // namespace

}  // namespace scin
