#include "analysis/decimate.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace scin::analysis {
namespace {

double tx(double v, bool log) { return log ? std::log10(v) : v; }

bool drawable(const SeriesPoint& p, const PixelGrid& g) {
  return std::isfinite(p.x) && std::isfinite(p.y) && (!g.log_x || p.x > 0) && (!g.log_y || p.y > 0);
}

// The pixel index of v along an axis of `n` pixels from lo to hi (transformed
// values), clamped to -1 (before) .. n (after): everything outside is one bucket.
long pixel(double v, double lo, double hi, long n) {
  const double f = (v - lo) / (hi - lo) * static_cast<double>(n);
  if (!(f >= 0)) return -1;  // (NaN cannot reach here: drawable() checked)
  if (f >= static_cast<double>(n)) return n;
  return static_cast<long>(std::floor(f));
}

}  // namespace

std::size_t default_decimation_cap(const PixelGrid& grid) {
  const double w = std::isfinite(grid.width) ? std::max(0.0, grid.width) : 0.0;
  return std::max<std::size_t>(64, static_cast<std::size_t>(std::ceil(w)) * 2);
}

Decimation decimate_series(const std::vector<SeriesPoint>& pts, const PixelGrid& g, std::size_t cap) {
  Decimation d;
  d.total = pts.size();
  if (cap == 0) cap = default_decimation_cap(g);
  const double X0 = tx(g.x0, g.log_x), X1 = tx(g.x1, g.log_x), Y0 = tx(g.y0, g.log_y), Y1 = tx(g.y1, g.log_y);
  const bool usable = std::isfinite(X0) && std::isfinite(X1) && std::isfinite(Y0) && std::isfinite(Y1) && X1 > X0 &&
                      Y1 > Y0 && g.width >= 1 && g.height >= 1 && g.width < 1e7 && g.height < 1e7;
  if (pts.size() <= cap || !usable) {
    d.keep.resize(pts.size());
    std::iota(d.keep.begin(), d.keep.end(), std::size_t{0});
    d.stands_for.assign(pts.size(), 1);
    d.line = d.keep;
    return d;
  }
  const long W = static_cast<long>(std::ceil(g.width)), H = static_cast<long>(std::ceil(g.height));
  // Per column (-1 .. W): first, last, lowest, highest drawable point (M4).
  constexpr std::size_t kNone = std::numeric_limits<std::size_t>::max();
  struct Col {
    std::size_t first = kNone, last = kNone, lo = kNone, hi = kNone;
  };
  std::vector<Col> cols(static_cast<std::size_t>(W + 2));
  // (cell, index) of every drawable point; cell = column-major pixel index.
  std::vector<std::pair<std::uint64_t, std::size_t>> cells;
  cells.reserve(pts.size());
  for (std::size_t i = 0; i < pts.size(); ++i) {
    const SeriesPoint& p = pts[i];
    if (!drawable(p, g)) continue;
    const long c = pixel(tx(p.x, g.log_x), X0, X1, W), r = pixel(tx(p.y, g.log_y), Y0, Y1, H);
    Col& col = cols[static_cast<std::size_t>(c + 1)];
    if (col.first == kNone) col.first = col.lo = col.hi = i;
    col.last = i;
    if (p.y < pts[col.lo].y) col.lo = i;   // strict: the first of equal values
    if (p.y > pts[col.hi].y) col.hi = i;
    cells.emplace_back(static_cast<std::uint64_t>(c + 1) * static_cast<std::uint64_t>(H + 2) + static_cast<std::uint64_t>(r + 1), i);
  }
  // Markers: the first point of each occupied cell stands for the cell.
  std::sort(cells.begin(), cells.end());
  std::vector<std::uint32_t> stands(pts.size(), 0);  // 0: not kept
  for (std::size_t k = 0; k < cells.size();) {
    std::size_t e = k;
    while (e < cells.size() && cells[e].first == cells[k].first) ++e;
    stands[cells[k].second] = static_cast<std::uint32_t>(e - k);
    k = e;
  }
  // Line: the M4 points of each column, kept as well (standing for themselves
  // unless they represent a cell already; the cell's count stays with its representative).
  for (const Col& col : cols) {
    if (col.first == kNone) continue;
    for (std::size_t i : {col.first, col.last, col.lo, col.hi}) d.line.push_back(i);
    for (std::size_t i : {col.first, col.last, col.lo, col.hi})
      if (stands[i] == 0) {
        stands[i] = 1;
        // A kept point that was counted in its cell's representative no longer is.
        const long c = pixel(tx(pts[i].x, g.log_x), X0, X1, W), r = pixel(tx(pts[i].y, g.log_y), Y0, Y1, H);
        const std::uint64_t key = static_cast<std::uint64_t>(c + 1) * static_cast<std::uint64_t>(H + 2) + static_cast<std::uint64_t>(r + 1);
        const auto rep = std::lower_bound(cells.begin(), cells.end(), std::pair{key, std::size_t{0}});
        --stands[rep->second];
      }
  }
  std::sort(d.line.begin(), d.line.end());
  d.line.erase(std::unique(d.line.begin(), d.line.end()), d.line.end());
  for (std::size_t i = 0; i < pts.size(); ++i)
    if (stands[i] > 0) {
      d.keep.push_back(i);
      d.stands_for.push_back(stands[i]);
    }
  return d;
}

}  // namespace scin::analysis
