// analysis::decimate_series: a series reduced to the pixels of its panel keeps
// every point below the cap, keeps the extremes and the M4 points of every
// pixel column exactly, one marker per occupied pixel cell, accounts for every
// point it leaves out, and is deterministic.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <set>
#include <vector>

#include <gtest/gtest.h>

#include "analysis/decimate.h"

namespace scin::analysis {
namespace {

/// n points at x = 1..n with a deterministic wiggle in y (a hash of the index).
std::vector<SeriesPoint> wiggly(std::size_t n, double amplitude = 1.0) {
  std::vector<SeriesPoint> pts;
  for (std::size_t i = 0; i < n; ++i) {
    std::uint64_t h = (i + 1) * 0x9E3779B97F4A7C15ull;
    h ^= h >> 31;
    const double w = static_cast<double>(h % 10007) / 10007.0;  // 0 .. 1
    pts.push_back({static_cast<double>(i + 1), 10.0 + amplitude * w + 1e-4 * static_cast<double>(i), i});
  }
  return pts;
}

PixelGrid gridFor(const std::vector<SeriesPoint>& pts, double w, double h, bool log_x = false, bool log_y = false) {
  PixelGrid g;
  g.x0 = pts.front().x;
  g.x1 = pts.back().x;
  g.y0 = g.y1 = pts.front().y;
  for (const auto& p : pts) {
    g.y0 = std::min(g.y0, p.y);
    g.y1 = std::max(g.y1, p.y);
  }
  // a little room so that every point is inside
  const double dx = (g.x1 - g.x0) * 0.01, dy = (g.y1 - g.y0) * 0.01;
  g.x0 -= dx;
  g.x1 += dx;
  g.y0 -= dy;
  g.y1 += dy;
  g.width = w;
  g.height = h;
  g.log_x = log_x;
  g.log_y = log_y;
  return g;
}

long column(const PixelGrid& g, double x) {
  const double f = (x - g.x0) / (g.x1 - g.x0) * std::ceil(g.width);
  return f < 0 ? -1 : f >= std::ceil(g.width) ? static_cast<long>(std::ceil(g.width)) : static_cast<long>(std::floor(f));
}
long row(const PixelGrid& g, double y) {
  const double f = (y - g.y0) / (g.y1 - g.y0) * std::ceil(g.height);
  return f < 0 ? -1 : f >= std::ceil(g.height) ? static_cast<long>(std::ceil(g.height)) : static_cast<long>(std::floor(f));
}

TEST(Decimate, KeepsEveryPointAtOrBelowTheCap) {
  const auto pts = wiggly(500);
  const PixelGrid g = gridFor(pts, 100, 50);
  for (std::size_t cap : {std::size_t{500}, std::size_t{501}, std::size_t{10000}}) {
    const Decimation d = decimate_series(pts, g, cap);
    ASSERT_EQ(d.keep.size(), pts.size()) << cap;
    for (std::size_t i = 0; i < pts.size(); ++i) {
      EXPECT_EQ(d.keep[i], i);
      EXPECT_EQ(d.stands_for[i], 1u);
    }
    EXPECT_EQ(d.line, d.keep);
    EXPECT_FALSE(d.reduced());
    EXPECT_EQ(d.total, 500u);
  }
  // Above the cap on a grid much narrower than the series (50 points per column, 5 rows): reduced.
  EXPECT_TRUE(decimate_series(pts, gridFor(pts, 10, 5), 499).reduced());
  // The default cap: two points per pixel column, at least 64.
  EXPECT_EQ(default_decimation_cap(g), 200u);
  EXPECT_EQ(default_decimation_cap(gridFor(pts, 10, 5)), 64u);
  EXPECT_TRUE(decimate_series(pts, gridFor(pts, 10, 5)).reduced());
  const Decimation wide = decimate_series(pts, gridFor(pts, 250, 5));  // 500 <= 2 x 250: whole
  EXPECT_EQ(wide.keep.size(), 500u);
  EXPECT_EQ(std::count(wide.stands_for.begin(), wide.stands_for.end(), 1u), 500);
}

TEST(Decimate, KeepsTheExtremesAndTheM4PointsOfEveryColumn) {
  const auto pts = wiggly(100000);
  const PixelGrid g = gridFor(pts, 600, 300);
  const Decimation d = decimate_series(pts, g);
  ASSERT_TRUE(d.reduced());
  const std::set<std::size_t> kept(d.keep.begin(), d.keep.end());
  ASSERT_EQ(kept.size(), d.keep.size());
  EXPECT_TRUE(std::is_sorted(d.keep.begin(), d.keep.end()));
  // The global extremes and the ends.
  const auto [lo, hi] = std::minmax_element(pts.begin(), pts.end(), [](const SeriesPoint& a, const SeriesPoint& b) { return a.y < b.y; });
  EXPECT_TRUE(kept.count(static_cast<std::size_t>(lo - pts.begin())));
  EXPECT_TRUE(kept.count(static_cast<std::size_t>(hi - pts.begin())));
  EXPECT_TRUE(kept.count(0));
  EXPECT_TRUE(kept.count(pts.size() - 1));
  // Per pixel column: the first, last, lowest and highest point (computed here
  // independently) are kept, so the kept points span the column's y range.
  std::map<long, std::vector<std::size_t>> byCol;
  for (std::size_t i = 0; i < pts.size(); ++i) byCol[column(g, pts[i].x)].push_back(i);
  EXPECT_GE(byCol.size(), 580u);  // every column is occupied but those of the 1% margins
  for (const auto& [c, idx] : byCol) {
    EXPECT_TRUE(kept.count(idx.front())) << c;
    EXPECT_TRUE(kept.count(idx.back())) << c;
    double ylo = INFINITY, yhi = -INFINITY, klo = INFINITY, khi = -INFINITY;
    for (std::size_t i : idx) {
      ylo = std::min(ylo, pts[i].y);
      yhi = std::max(yhi, pts[i].y);
      if (kept.count(i)) {
        klo = std::min(klo, pts[i].y);
        khi = std::max(khi, pts[i].y);
      }
    }
    EXPECT_EQ(klo, ylo) << c;
    EXPECT_EQ(khi, yhi) << c;
  }
  // The line goes through exactly the M4 points: at most 4 per column, the ends
  // and each column's extremes among them, and all of them kept.
  EXPECT_LE(d.line.size(), 4 * byCol.size());
  EXPECT_TRUE(std::is_sorted(d.line.begin(), d.line.end()));
  for (std::size_t i : d.line) EXPECT_TRUE(kept.count(i));
  {
    const std::set<std::size_t> line(d.line.begin(), d.line.end());
    EXPECT_EQ(line.size(), d.line.size());
    for (const auto& [c, idx] : byCol) {
      EXPECT_TRUE(line.count(idx.front()) && line.count(idx.back())) << c;
      std::size_t l = idx.front(), h = idx.front();
      for (std::size_t i : idx) {
        if (pts[i].y < pts[l].y) l = i;
        if (pts[i].y > pts[h].y) h = i;
      }
      EXPECT_TRUE(line.count(l) && line.count(h)) << c;
    }
  }
  // Every occupied pixel cell has a kept point (one marker per cell at least),
  // and the kept points are bounded by what the grid can show.
  std::set<std::pair<long, long>> cells, keptCells;
  for (std::size_t i = 0; i < pts.size(); ++i) cells.emplace(column(g, pts[i].x), row(g, pts[i].y));
  for (std::size_t i : d.keep) keptCells.emplace(column(g, pts[i].x), row(g, pts[i].y));
  EXPECT_EQ(keptCells, cells);
  EXPECT_LE(d.keep.size(), cells.size() + 3 * 600);
  EXPECT_LT(d.keep.size(), pts.size() / 5);  // 10^5 points on 600 columns: a real reduction
  // Every point is accounted for: the kept points stand for all of them.
  std::uint64_t sum = 0;
  for (auto s : d.stands_for) {
    EXPECT_GE(s, 1u);
    sum += s;
  }
  EXPECT_EQ(sum, pts.size());
}

TEST(Decimate, StandsForCountsTheCell) {
  // 1000 points on one pixel column, all within one pixel cell but the last two.
  std::vector<SeriesPoint> pts;
  for (std::size_t i = 0; i < 998; ++i) pts.push_back({1.0 + 1e-6 * static_cast<double>(i), 5.0, i});
  pts.push_back({1.001, 9.0, 998});
  pts.push_back({1.002, 1.0, 999});
  PixelGrid g;
  g.x0 = 0;
  g.x1 = 2;
  g.y0 = 0;
  g.y1 = 10;
  g.width = 2;  // columns [0,1) and [1,2): every point in column 1
  g.height = 10;
  const Decimation d = decimate_series(pts, g, 10);
  // Kept: the first point (first of the column and of its cell), the highest
  // (998), the lowest and last (999); the cell of 0..997 is 0's.
  EXPECT_EQ(d.keep, (std::vector<std::size_t>{0, 998, 999}));
  EXPECT_EQ(d.line, (std::vector<std::size_t>{0, 998, 999}));
  EXPECT_EQ(d.stands_for, (std::vector<std::uint32_t>{998, 1, 1}));
}

TEST(Decimate, LeavesOutWhatCannotBeDrawnAboveTheCap) {
  auto pts = wiggly(5000);
  pts[10].y = -1;  // not on a log y axis
  pts[20].y = NAN;
  const PixelGrid g = gridFor(pts, 100, 100, false, true);
  PixelGrid gl = g;
  gl.y0 = 9.5;  // (gridFor's minimum is the -1)
  const Decimation d = decimate_series(pts, gl);
  ASSERT_TRUE(d.reduced());
  for (std::size_t i : d.keep) {
    EXPECT_NE(i, 10u);
    EXPECT_NE(i, 20u);
  }
  std::uint64_t sum = 0;
  for (auto s : d.stands_for) sum += s;
  EXPECT_EQ(sum, pts.size() - 2);
  // Below the cap nothing is left out (the painter skips them).
  EXPECT_EQ(decimate_series(pts, gl, 5000).keep.size(), 5000u);
}

TEST(Decimate, ZoomedInKeepsTheSegmentsThatEnterAndLeaveTheView) {
  const auto pts = wiggly(20000);
  PixelGrid g = gridFor(pts, 200, 100);
  g.x0 = 5000.5;  // a zoom onto x in (5000.5, 5100.5): 100 points inside
  g.x1 = 5100.5;
  const Decimation d = decimate_series(pts, g, 150);
  ASSERT_TRUE(d.reduced());
  const std::set<std::size_t> kept(d.keep.begin(), d.keep.end());
  // The last point before the view and the first after it (x = 5000 and 5101 are indices 4999 and 5100).
  EXPECT_TRUE(kept.count(4999));
  EXPECT_TRUE(kept.count(5100));
  // Inside, 100 points on 200 columns: every one is kept.
  for (std::size_t i = 5000; i < 5100; ++i) EXPECT_TRUE(kept.count(i)) << i;
}

TEST(Decimate, LogAxes) {
  std::vector<SeriesPoint> pts;
  for (std::size_t i = 0; i < 50000; ++i) {
    const double x = std::pow(10.0, static_cast<double>(i) / 10000.0);  // 1 .. 1e5
    pts.push_back({x, x * (1 + 0.1 * std::sin(static_cast<double>(i))), i});
  }
  PixelGrid g;
  g.x0 = 0.9;
  g.x1 = 1.1e5;
  g.y0 = 0.8;
  g.y1 = 1.2e5;
  g.log_x = g.log_y = true;
  g.width = 500;
  g.height = 300;
  const Decimation d = decimate_series(pts, g);
  ASSERT_TRUE(d.reduced());
  // 10^4 points per decade on 100 columns per decade: each column of the log
  // axis holds ~100 points; its lowest and highest are kept.
  std::map<long, std::pair<double, double>> range;  // column -> (min, max) of all / of kept
  std::map<long, std::pair<double, double>> keptRange;
  auto col = [&](double x) {
    return static_cast<long>(std::floor((std::log10(x) - std::log10(g.x0)) / (std::log10(g.x1) - std::log10(g.x0)) * 500));
  };
  for (const auto& p : pts) {
    auto [it, fresh] = range.try_emplace(col(p.x), p.y, p.y);
    it->second.first = std::min(it->second.first, p.y);
    it->second.second = std::max(it->second.second, p.y);
  }
  for (std::size_t i : d.keep) {
    const auto& p = pts[i];
    auto [it, fresh] = keptRange.try_emplace(col(p.x), p.y, p.y);
    it->second.first = std::min(it->second.first, p.y);
    it->second.second = std::max(it->second.second, p.y);
  }
  EXPECT_EQ(keptRange, range);
}

TEST(Decimate, Deterministic) {
  const auto pts = wiggly(30000, 5.0);
  const PixelGrid g = gridFor(pts, 321.5, 123.25);
  const Decimation a = decimate_series(pts, g), b = decimate_series(pts, g);
  EXPECT_EQ(a.keep, b.keep);
  EXPECT_EQ(a.stands_for, b.stands_for);
  // A copy of the points (other addresses) gives the same result.
  const auto copy = pts;
  EXPECT_EQ(decimate_series(copy, g).keep, a.keep);
}

TEST(Decimate, DegenerateGridsKeepEverything) {
  const auto pts = wiggly(1000);
  PixelGrid g = gridFor(pts, 0.5, 100);  // less than a pixel wide
  EXPECT_EQ(decimate_series(pts, g, 10).keep.size(), 1000u);
  g = gridFor(pts, 100, 100);
  g.x1 = g.x0;  // empty range
  EXPECT_EQ(decimate_series(pts, g, 10).keep.size(), 1000u);
  EXPECT_TRUE(decimate_series({}, gridFor(pts, 100, 100), 10).keep.empty());
}

}  // namespace
}  // namespace scin::analysis
