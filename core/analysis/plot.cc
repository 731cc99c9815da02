#include "analysis/plot.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string_view>

#include <fmt/format.h>

namespace scin::analysis {
namespace {

// A panel title's name for a value that shows its unit: the key without its
// unit suffix ("latency = 100 ns", not "latency_ns = 100 ns"); a name whose
// suffix is not the unit shown is kept whole.
std::string name_beside_unit(const std::string& short_name, const std::string& shown) {
  // (A time may be shown in a larger unit than its key's: 12.3 ms for 12300 us.)
  static const std::pair<const char*, std::vector<const char*>> suffixes[] = {
      {"_ns", {" ns", " µs", " ms", " s"}}, {"_us", {" µs", " ms", " s"}}, {"_ms", {" ms", " s"}},
      {"_GBps", {" GB/s"}}, {"_TFLOPS", {" TFLOP/s"}}, {"_bytes", {"B"}}};
  for (const auto& [suffix, units] : suffixes) {
    const std::string_view suf(suffix);
    if (short_name.size() <= suf.size() || !short_name.ends_with(suf)) continue;
    for (const char* u : units)
      if (shown.ends_with(u)) return short_name.substr(0, short_name.size() - suf.size());
  }
  return short_name;
}

std::string join(const std::vector<std::string>& v, const std::string& sep) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : sep) + x;
  return s;
}

std::string axis_keys(const AnalysisTable& t) {
  std::vector<std::string> k;
  for (const Column& c : t.axes) k.push_back(c.key);
  return join(k, ", ");
}

std::string metric_keys(const AnalysisTable& t) {
  std::vector<std::string> k;
  for (const Column& c : t.metrics) k.push_back(c.key);
  return join(k, ", ");
}

std::string norm_key(const std::string& k) {
  if (k == "bytes" || k == "size") return "collective.bytes";
  if (k == "algorithm") return "collective.algorithm";
  return k;
}

// Position of `text` among the distinct values of axis `a` (table order).
int value_rank(const std::vector<AxisValue>& values, const std::string& text) {
  for (std::size_t i = 0; i < values.size(); ++i)
    if (values[i].text == text) return static_cast<int>(i);
  return static_cast<int>(values.size());
}

}  // namespace

std::size_t PlotData::point_count() const {
  std::size_t n = 0;
  for (const Facet& f : facets)
    for (const Series& s : f.series) n += s.points.size();
  return n;
}

std::vector<const Series*> PlotData::legend() const {
  std::vector<const Series*> out;
  std::set<std::string> seen;
  for (const Facet& f : facets)
    for (const Series& s : f.series)
      if (seen.insert(s.key).second) out.push_back(&s);
  return out;
}

PlotQuery default_query(const AnalysisTable& t) {
  PlotQuery q;
  q.y = t.metrics.empty() ? std::string() : t.metrics.front().key;
  const int bytes = t.axis_index("collective.bytes");
  const std::vector<int> varying = t.varying_axes();
  auto varies = [&](int a) { return std::find(varying.begin(), varying.end(), a) != varying.end(); };
  if (bytes >= 0 && varies(bytes)) {
    q.x = "collective.bytes";
  } else {
    q.x.clear();
    for (int a : varying)
      if (t.axes[static_cast<std::size_t>(a)].numeric) {
        q.x = t.axes[static_cast<std::size_t>(a)].key;
        break;
      }
    if (q.x.empty()) q.x = varying.empty() ? t.axes.front().key : t.axes[static_cast<std::size_t>(varying.front())].key;
  }
  const std::vector<AxisValue> algos = t.distinct(t.axis_index("collective.algorithm"));
  q.baseline = algos.empty() ? "ring" : algos.front().text;
  for (const AxisValue& a : algos)
    if (a.text == "ring") q.baseline = "ring";
  q.facet = auto_facet(t, q);
  return q;
}

std::string auto_facet(const AnalysisTable& t, const PlotQuery& q0, std::size_t max_curves) {
  auto fullest = [](const PlotData& p) {
    std::size_t m = 0;
    for (const Facet& f : p.facets) m = std::max(m, f.series.size());
    return m;
  };
  PlotQuery q = q0;
  q.facet.clear();
  const PlotData one = make_plot(t, q);
  if (one.empty() || fullest(one) <= max_curves) return {};
  const std::string x = norm_key(q.x);
  std::string best;
  std::size_t best_curves = fullest(one), best_panels = 0;
  for (int a : t.varying_axes()) {
    const std::string& key = t.axes[static_cast<std::size_t>(a)].key;
    const std::size_t panels = t.distinct(a).size();
    if (key == x || key == "collective.algorithm" || panels > kMaxAutoPanels) continue;
    q.facet = key;
    const PlotData p = make_plot(t, q);
    if (p.empty()) continue;
    const std::size_t curves = fullest(p);
    if (curves < best_curves || (curves == best_curves && !best.empty() && panels < best_panels)) {
      best = key;
      best_curves = curves;
      best_panels = panels;
    }
  }
  return best;
}

namespace {
/// What the plotted points say of themselves (extra.note), once per note with
/// the algorithms and the number of points it concerns; at most kShown notes.
void add_point_notes(const AnalysisTable& t, PlotData& p) {
  if (t.notes.empty()) return;
  struct Use {
    std::set<std::string> algorithms;
    std::size_t points = 0;
  };
  std::map<std::int32_t, Use> uses;
  for (const Facet& f : p.facets)
    for (const Series& s : f.series)
      for (const SeriesPoint& pt : s.points) {
        const Row& row = t.rows[pt.row];
        if (row.note < 0) continue;
        Use& u = uses[row.note];
        ++u.points;
        if (!row.axes.empty()) u.algorithms.insert(row.axes.front().text);  // collective.algorithm comes first
      }
  constexpr std::size_t kShown = 4;
  std::size_t shown = 0;
  for (const auto& [note, u] : uses) {
    if (++shown > kShown) break;
    p.notes.push_back(fmt::format("{}: {} ({} point{})", fmt::join(u.algorithms, ", "),
                                  t.notes[static_cast<std::size_t>(note)], u.points, u.points == 1 ? "" : "s"));
  }
  if (uses.size() > kShown)
    p.notes.push_back(fmt::format("{} more note(s) on the plotted points: hover a point to read its own", uses.size() - kShown));
}

bool same_values(const Series& a, const Series& b) {
  if (a.points.size() != b.points.size()) return false;
  for (std::size_t i = 0; i < a.points.size(); ++i) {
    if (a.points[i].x != b.points[i].x || !same_value(a.points[i].y, b.points[i].y)) return false;
  }
  return true;
}

// Marks each series whose points equal an earlier series' of its facet (it
// would hide that one) and notes the pairs once per plot, with the panels
// where they coincide when that is not every panel holding both.
void note_same_values(PlotData& p) {
  struct Pair {
    std::string later, earlier;
    std::size_t same = 0, both = 0;
  };
  std::vector<Pair> pairs;
  auto pair_of = [&](const std::string& later, const std::string& earlier) -> Pair& {
    for (Pair& q : pairs)
      if (q.later == later && q.earlier == earlier) return q;
    return pairs.emplace_back(Pair{later, earlier});
  };
  std::map<std::string, std::string> label_of;
  for (Facet& f : p.facets)
    for (std::size_t j = 0; j < f.series.size(); ++j) {
      Series& s = f.series[j];
      label_of[s.key] = s.label;
      for (std::size_t i = 0; i < j && s.same_as.empty(); ++i)
        if (same_values(f.series[i], s)) s.same_as = f.series[i].key;
      if (!s.same_as.empty()) ++pair_of(s.key, s.same_as).same;
    }
  if (pairs.empty()) return;
  for (const Facet& f : p.facets)
    for (Pair& q : pairs) {
      bool later = false, earlier = false;
      for (const Series& s : f.series) {
        later = later || s.key == q.later;
        earlier = earlier || s.key == q.earlier;
      }
      if (later && earlier) ++q.both;
    }
  auto pair_text = [&](const Pair& q) {
    return fmt::format("{} has the same values as {}{}", label_of[q.later], label_of[q.earlier],
                       q.same < q.both ? fmt::format(" in {} of {} panels", q.same, q.both) : std::string());
  };
  // A pair or two are named; more (a setting that changes nothing) would fill
  // the note line, so they are counted, with one example: the legend names
  // each one's twin.
  if (pairs.size() <= kSameValuesPairsNamed) {
    for (const Pair& q : pairs) p.notes.push_back(pair_text(q) + " (drawn dashed over it)");
    return;
  }
  p.notes.push_back(fmt::format("{} curves have the same values as another curve, e.g. {}; each is drawn dashed over "
                                "its twin (a legend entry per curve says \"(= twin)\")",
                                pairs.size(), pair_text(pairs.front())));
}

}  // namespace

PlotData make_plot(const AnalysisTable& t, const PlotQuery& q0) {
  PlotData p;
  PlotQuery q = q0;
  q.x = norm_key(q.x);
  q.facet = norm_key(q.facet);
  for (auto& s : q.series) s = norm_key(s);
  std::map<std::string, std::set<std::string>> filters;
  for (const auto& [k, v] : q.filters) filters[norm_key(k)] = v;

  if (t.rows.empty()) {
    p.empty_reason = t.skipped > 0 ? fmt::format("No point of this run has a result: {} point(s) skipped or failed{}",
                                                 t.skipped, t.skip_reasons.empty() ? "" : " (" + t.skip_reasons.front() + ")")
                                   : "This run has no stored points yet.";
    return p;
  }
  const int xi = t.axis_index(q.x);
  if (xi < 0) {
    p.empty_reason = fmt::format("No axis '{}' in this run; its axes are: {}", q.x, axis_keys(t));
    return p;
  }
  const int yi = t.metric_index(q.y);
  if (yi < 0) {
    p.empty_reason = fmt::format("No metric '{}' in this {} run; it has: {}", q.y, t.run.kind, metric_keys(t));
    return p;
  }
  int fi = -1;
  if (!q.facet.empty()) {
    fi = t.axis_index(q.facet);
    if (fi < 0) {
      p.empty_reason = fmt::format("No axis '{}' to facet by; the axes are: {}", q.facet, axis_keys(t));
      return p;
    }
    if (fi == xi) {
      p.empty_reason = "The facet axis and the x axis are the same; choose another facet.";
      return p;
    }
  }
  p.x = t.axes[static_cast<std::size_t>(xi)];
  p.y = t.metrics[static_cast<std::size_t>(yi)];
  const std::size_t nax = t.axes.size();
  std::vector<std::vector<AxisValue>> distinct(nax);
  for (std::size_t a = 0; a < nax; ++a) distinct[a] = t.distinct(static_cast<int>(a));

  // Rows that pass the filters.
  std::vector<std::size_t> rows;
  for (std::size_t r = 0; r < t.rows.size(); ++r) {
    bool ok = true;
    for (std::size_t a = 0; a < nax && ok; ++a) {
      auto f = filters.find(t.axes[a].key);
      if (f != filters.end() && !f->second.count(t.rows[r].axes[a].text)) ok = false;
    }
    if (ok) rows.push_back(r);
  }
  if (rows.empty()) {
    p.empty_reason = "The value filters leave no point; widen them.";
    return p;
  }

  // Whether axis a moves with axis `by` (zipped with it): one value of a per
  // value of `by` over the shown rows, and more than one in all (a row's "–",
  // a combined table's run without the axis, counts as a value only where
  // `missing_counts`). `first_row` gets each value of `by`'s first row.
  std::map<std::string, std::size_t> first_row;
  auto moves_with = [&](std::size_t a, int by, bool missing_counts) {
    first_row.clear();
    std::set<std::string> values;
    for (std::size_t r : rows) {
      const auto& av = t.rows[r].axes[a].text;
      if (missing_counts || av != "–") values.insert(av);
      auto [it, fresh] = first_row.emplace(t.rows[r].axes[static_cast<std::size_t>(by)].text, r);
      if (!fresh && t.rows[it->second].axes[a].text != av) return false;
    }
    return values.size() > 1;
  };
  // An axis that moves with x neither splits series nor is held fixed: it rides along.
  std::vector<bool> follows_x(nax, false);
  for (std::size_t a = 0; a < nax; ++a) {
    if (static_cast<int>(a) == xi || !moves_with(a, xi, true)) continue;
    follows_x[a] = true;
    p.notes.push_back(fmt::format("{} moves with {} (zipped)", t.axes[a].key, t.axes[static_cast<std::size_t>(xi)].key));
  }
  // An axis that moves with the facet (one value per panel, not the same in
  // every panel) rides along too: its value joins the panel's title. `rider_row`:
  // a row of each panel, for the riders' values there.
  std::vector<bool> follows_facet(nax, false);
  std::vector<int> riders;
  std::map<std::string, std::size_t> rider_row;
  if (fi >= 0)
    for (std::size_t a = 0; a < nax; ++a) {
      if (static_cast<int>(a) == xi || static_cast<int>(a) == fi || follows_x[a] || !moves_with(a, fi, false)) continue;
      follows_facet[a] = true;
      riders.push_back(static_cast<int>(a));
      rider_row = first_row;
      p.facet_riders.push_back(t.axes[a].key);
      p.notes.push_back(fmt::format("{} moves with {}: named in the panel titles", t.axes[a].key,
                                    t.axes[static_cast<std::size_t>(fi)].key));
    }
  if (fi >= 0) {
    // (The panels' values carry their units: "panels: Link bandwidth · Link latency".)
    auto name = [&](std::size_t a) { return t.axes[a].label.empty() ? t.axes[a].short_name : t.axes[a].label; };
    std::vector<std::string> names{name(static_cast<std::size_t>(fi))};
    for (int a : riders) names.push_back(name(static_cast<std::size_t>(a)));
    p.facet_label = join(names, " · ");
  }
  // Fields that split series; the other varying axes are held at one value.
  std::vector<int> split;
  if (q.series.empty()) {
    for (std::size_t a = 0; a < nax; ++a)
      if (static_cast<int>(a) != xi && static_cast<int>(a) != fi && !follows_x[a] && !follows_facet[a])
        split.push_back(static_cast<int>(a));
    // An axis fixed by x and the other splitting axes (a zip member such as
    // fabric.leaves beside preset, with fabric.gpus on x) rides along too:
    // splitting by it would cut each curve into one-point pieces.
    for (std::size_t k = split.size(); k-- > 0;) {
      const auto a = static_cast<std::size_t>(split[k]);
      // fixed(with_x): is axis a a function of (x?, other split axes, facet)?
      auto fixed = [&](bool with_x) {
        std::map<std::string, std::string> of_rest;
        for (std::size_t r : rows) {
          std::string key = with_x ? t.rows[r].axes[static_cast<std::size_t>(xi)].text : std::string();
          for (std::size_t j = 0; j < split.size(); ++j)
            if (j != k) key += '\x1f' + t.rows[r].axes[static_cast<std::size_t>(split[j])].text;
          if (fi >= 0) key += '\x1f' + t.rows[r].axes[static_cast<std::size_t>(fi)].text;
          auto [it, fresh] = of_rest.emplace(key, t.rows[r].axes[a].text);
          if (!fresh && it->second != t.rows[r].axes[a].text) return false;
        }
        return true;
      };
      // Only an axis that needs x to be fixed rides along; one fixed by the
      // other series fields alone (e.g. the run of a combined table) still names curves.
      const bool function = fixed(true) && !fixed(false);
      if (!function || distinct[a].size() < 2) continue;
      p.notes.push_back(fmt::format("{} moves with {} (zipped)", t.axes[a].key, t.axes[static_cast<std::size_t>(xi)].key));
      split.erase(split.begin() + static_cast<std::ptrdiff_t>(k));
    }
  } else {
    for (const auto& k : q.series) {
      const int a = t.axis_index(k);
      if (a < 0) {
        p.empty_reason = fmt::format("No axis '{}' to split series by; the axes are: {}", k, axis_keys(t));
        return p;
      }
      if (a != xi && a != fi && !follows_x[static_cast<std::size_t>(a)] && !follows_facet[static_cast<std::size_t>(a)] &&
          std::find(split.begin(), split.end(), a) == split.end())
        split.push_back(a);
    }
    for (std::size_t a = 0; a < nax; ++a) {
      const int ai = static_cast<int>(a);
      if (ai == xi || ai == fi || follows_x[a] || follows_facet[a] || std::find(split.begin(), split.end(), ai) != split.end())
        continue;
      std::set<std::string> shown;
      for (std::size_t r : rows) shown.insert(t.rows[r].axes[a].text);
      if (shown.size() < 2) continue;
      std::string keep;
      for (const AxisValue& v : distinct[a])
        if (shown.count(v.text)) {
          keep = v.text;
          break;
        }
      // A row without the axis ("–": another run of a combined table) is not held by it.
      std::erase_if(rows, [&](std::size_t r) { return t.rows[r].axes[a].text != keep && t.rows[r].axes[a].text != "–"; });
      p.notes.push_back(fmt::format("{} held at {} (add it to the series to compare)", t.axes[a].key, keep));
    }
  }

  // y values, derived ones (speedups) from the baseline row at the same other axes.
  const int algo = t.axis_index("collective.algorithm");
  std::vector<double> yv(t.rows.size(), kNaN);
  if (p.y.derived != Derived::None) {
    const std::string base_key = p.y.derived == Derived::SpeedupTime   ? "time_us"
                                 : p.y.derived == Derived::SpeedupTtft ? "ttft_us"
                                                                       : "tpot_us";
    const int bi = t.metric_index(base_key);
    const auto& algos = distinct[static_cast<std::size_t>(algo)];
    if (bi < 0 || algo < 0) {
      p.empty_reason = "Speedup needs stored times, which this run does not have.";
      return p;
    }
    if (algos.size() < 2) {
      p.empty_reason = fmt::format("Speedup compares algorithms, but this run has only {}: choose another metric.",
                                   algos.empty() ? std::string("none") : algos.front().text);
      return p;
    }
    if (value_rank(algos, q.baseline) >= static_cast<int>(algos.size())) {
      std::vector<std::string> names;
      for (const auto& a : algos) names.push_back(a.text);
      p.empty_reason = fmt::format("The baseline '{}' is not in this run; choose one of: {}", q.baseline, join(names, ", "));
      return p;
    }
    auto other_key = [&](const Row& r) {
      std::string k;
      for (std::size_t a = 0; a < nax; ++a)
        if (static_cast<int>(a) != algo) k += r.axes[a].text + '\x1f';
      return k;
    };
    std::map<std::string, double> base;
    for (const Row& r : t.rows)
      if (r.axes[static_cast<std::size_t>(algo)].text == q.baseline) base[other_key(r)] = r.metrics[static_cast<std::size_t>(bi)];
    for (std::size_t r = 0; r < t.rows.size(); ++r) {
      auto b = base.find(other_key(t.rows[r]));
      const double v = t.rows[r].metrics[static_cast<std::size_t>(bi)];
      if (b != base.end() && v > 0) yv[r] = b->second / v;
    }
    p.notes.push_back("speedup = " + q.baseline + " " + base_key + " / " + base_key + " at the same other axis values");
    p.y.label = p.y.label + " over " + q.baseline;
    p.y.key = p.y.key + "_over_" + q.baseline;
  } else {
    for (std::size_t r = 0; r < t.rows.size(); ++r) yv[r] = t.rows[r].metrics[static_cast<std::size_t>(yi)];
  }

  // x: numbers, or category positions for a text axis.
  const auto& xvals = distinct[static_cast<std::size_t>(xi)];
  p.x_categorical = !p.x.numeric;
  std::vector<std::string> cats;
  if (p.x_categorical) {
    std::set<std::string> shown;
    for (std::size_t r : rows) shown.insert(t.rows[r].axes[static_cast<std::size_t>(xi)].text);
    for (const AxisValue& v : xvals)
      if (shown.count(v.text)) cats.push_back(v.text);
    p.x_categories = cats;
  }

  // Group rows into facets and series.
  std::vector<std::string> facet_values;
  if (fi >= 0) {
    std::set<std::string> shown;
    for (std::size_t r : rows) shown.insert(t.rows[r].axes[static_cast<std::size_t>(fi)].text);
    for (const AxisValue& v : distinct[static_cast<std::size_t>(fi)])
      if (shown.count(v.text)) facet_values.push_back(v.text);
  } else {
    facet_values.push_back("");
  }
  std::size_t dropped = 0;
  // Series sort key: value ranks of the split fields.
  std::map<std::string, std::vector<int>> rank_of;
  for (const std::string& fv : facet_values) {
    Facet f;
    f.value = fv;
    if (fi >= 0) {
      // A panel titled by its value alone still says its unit ("100 ns", not "100"),
      // also where a combined table's column is not numeric in every run.
      auto with_unit = [](const Column& c, const AxisValue& v) {
        const bool add_unit = (c.numeric || std::isfinite(v.number)) && !c.bytes && !c.unit.empty() && !v.text.empty() &&
                              v.text.find(c.unit) == std::string::npos;
        return add_unit ? v.text + (c.unit == "×" ? "" : " ") + c.unit : v.text;
      };
      // The parts of the title: the facet's value, then the axes zipped with it
      // ("300 GB/s · 150 ns", "bandwidth_GBps = 300 GB/s · latency_ns = 150 ns"),
      // leaving out the values a run of a combined table does not have ("–").
      std::vector<std::string> shown, titled;
      auto add_part = [&](const Column& c, const AxisValue& v) {
        if (v.text == "–") return;
        shown.push_back(with_unit(c, v));
        titled.push_back(name_beside_unit(c.short_name, shown.back()) + " = " + shown.back());
      };
      const Column& fc = t.axes[static_cast<std::size_t>(fi)];
      for (const AxisValue& v : distinct[static_cast<std::size_t>(fi)])
        if (v.text == fv) add_part(fc, v);
      for (int a : riders) {
        const Column& rc = t.axes[static_cast<std::size_t>(a)];
        const AxisValue& v = t.rows[rider_row.at(fv)].axes[static_cast<std::size_t>(a)];
        f.riders.emplace_back(rc.key, v.text);
        add_part(rc, v);
      }
      f.shown = shown.empty() ? fv : join(shown, " · ");
      f.title = titled.empty() ? fc.short_name + " = " + fv : join(titled, " · ");
    }
    std::map<std::string, std::size_t> index;
    for (std::size_t r : rows) {
      const Row& row = t.rows[r];
      if (fi >= 0 && row.axes[static_cast<std::size_t>(fi)].text != fv) continue;
      if (!std::isfinite(yv[r])) {
        ++dropped;
        continue;
      }
      std::string key;
      std::vector<int> ranks;
      for (int a : split) {
        const auto& v = row.axes[static_cast<std::size_t>(a)].text;
        key += (key.empty() ? "" : "|") + t.axes[static_cast<std::size_t>(a)].key + "=" + v;
        ranks.push_back(value_rank(distinct[static_cast<std::size_t>(a)], v));
      }
      auto [it, fresh] = index.emplace(key, f.series.size());
      if (fresh) {
        Series s;
        s.key = key;
        s.algorithm = algo >= 0 ? row.axes[static_cast<std::size_t>(algo)].text : std::string();
        for (int a : split) s.fields.emplace_back(t.axes[static_cast<std::size_t>(a)].key, row.axes[static_cast<std::size_t>(a)].text);
        f.series.push_back(std::move(s));
        rank_of[key] = ranks;
      }
      SeriesPoint pt;
      const AxisValue& xv = row.axes[static_cast<std::size_t>(xi)];
      pt.x = p.x_categorical ? static_cast<double>(std::find(cats.begin(), cats.end(), xv.text) - cats.begin()) : xv.number;
      pt.y = yv[r];
      pt.row = r;
      f.series[it->second].points.push_back(pt);
    }
    std::stable_sort(f.series.begin(), f.series.end(),
                     [&](const Series& a, const Series& b) { return rank_of[a.key] < rank_of[b.key]; });
    for (Series& s : f.series)
      std::stable_sort(s.points.begin(), s.points.end(), [](const SeriesPoint& a, const SeriesPoint& b) { return a.x < b.x; });
    if (!f.series.empty()) p.facets.push_back(std::move(f));
  }
  if (dropped > 0) p.notes.push_back(fmt::format("{} point(s) without a {} value left out", dropped, p.y.key));
  add_point_notes(t, p);
  if (p.facets.empty()) {
    p.empty_reason = fmt::format("No point has a value of {} for the shown axes.", p.y.key);
    return p;
  }

  // Which split fields differ between series; the first two carry the encoding.
  std::vector<std::size_t> differing;  // positions in `split`
  std::vector<std::vector<std::string>> seen(split.size());
  for (const Facet& f : p.facets)
    for (const Series& s : f.series)
      for (std::size_t k = 0; k < split.size(); ++k)
        if (std::find(seen[k].begin(), seen[k].end(), s.fields[k].second) == seen[k].end())
          seen[k].push_back(s.fields[k].second);
  for (std::size_t k = 0; k < split.size(); ++k) {
    if (seen[k].size() > 1) differing.push_back(k);
    const auto& d = distinct[static_cast<std::size_t>(split[k])];
    std::stable_sort(seen[k].begin(), seen[k].end(),
                     [&](const std::string& a, const std::string& b) { return value_rank(d, a) < value_rank(d, b); });
  }
  // Colour: the first differing field. Style: the combination of all the
  // others (ranked in value order), so three or more fields stay apart too.
  const std::size_t ck = differing.empty() ? split.size() : differing[0];
  if (ck < split.size()) p.color_field = t.axes[static_cast<std::size_t>(split[ck])].key;
  std::vector<std::string> style_keys;
  for (std::size_t i = 1; i < differing.size(); ++i) style_keys.push_back(t.axes[static_cast<std::size_t>(split[differing[i]])].key);
  p.style_field = join(style_keys, "+");
  auto pos = [&](std::size_t k, const std::string& v) {
    return static_cast<int>(std::find(seen[k].begin(), seen[k].end(), v) - seen[k].begin());
  };
  auto style_tuple = [&](const Series& s) {
    std::vector<int> r;
    for (std::size_t i = 1; i < differing.size(); ++i) r.push_back(pos(differing[i], s.fields[differing[i]].second));
    return r;
  };
  std::set<std::vector<int>> tuples;
  for (const Facet& f : p.facets)
    for (const Series& s : f.series) tuples.insert(style_tuple(s));
  const std::vector<std::vector<int>> tuple_order(tuples.begin(), tuples.end());
  for (Facet& f : p.facets)
    for (Series& s : f.series) {
      std::vector<std::string> parts;
      for (std::size_t k : differing) {
        const Column& c = t.axes[static_cast<std::size_t>(split[k])];
        // A field the series' run does not have ("–", a combined table) is left out of its name:
        // "ring" beside "ring · gpus=2" (the names stay distinct, the keys keep the field).
        if (s.fields[k].second == "–") continue;
        parts.push_back(c.key == "collective.algorithm" ? s.fields[k].second : c.short_name + "=" + s.fields[k].second);
      }
      s.label = parts.empty() ? (s.algorithm.empty() ? p.y.label : s.algorithm) : join(parts, " · ");
      s.color = ck < split.size() ? pos(ck, s.fields[ck].second) : 0;
      s.style = differing.size() > 1 ? static_cast<int>(std::find(tuple_order.begin(), tuple_order.end(), style_tuple(s)) -
                                                        tuple_order.begin())
                                     : s.color;
    }
  note_same_values(p);
  p.title = fmt::format("{} vs {} — #{} {}", p.y.label, p.x.label, t.run.id, t.run.name);
  return p;
}

}  // namespace scin::analysis
