// A plotted series reduced to what a plot area of a given size in pixels can
// show (issue 14: a run of 10^5 points must not block the app while it paints).
// Pure and UI-independent: the app's canvas calls it on its render worker with
// each panel's pixel size, again whenever the size or the zoom changes.
//
// Above a cap, a series keeps
//   - for its line, per pixel column the first, the last, the lowest and the
//     highest point (M4: Jugel et al., "M4: a visualization-oriented time series
//     data aggregation", VLDB 2014). The polyline through them covers the same
//     pixels as the polyline through every point, as long as the points are in
//     ascending x (analysis::Series guarantees it); points left and right of the
//     grid fall in one column on each side, so the segments entering and leaving
//     the view are kept exactly;
//   - for its markers, the first point (in series order) of each occupied pixel
//     cell: a marker drawn there covers the others of its cell to within a pixel.
// Kept points are original points (never averaged), so whatever shows them
// (a tracker, a table) shows true values.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "analysis/plot.h"

namespace scin::analysis {

/// How a panel maps data onto pixels: [x0, x1] x [y0, y1] (data units; log10 of
/// them on a log axis) onto width x height pixels, y upwards.
struct PixelGrid {
  double x0 = 0, x1 = 1, y0 = 0, y1 = 1;
  bool log_x = false, log_y = false;
  double width = 0, height = 0;
};

struct Decimation {
  /// Indices into the series' points to draw, ascending: markers at each.
  std::vector<std::size_t> keep;
  /// The points the line goes through, ascending (a subset of keep: the M4
  /// points of each pixel column; all of keep when nothing was left out).
  std::vector<std::size_t> line;
  /// Per kept point, how many points of the series it stands for: itself and
  /// the points of its pixel cell that were left out (1 when nothing was left
  /// out). They add up to the series' drawable points.
  std::vector<std::uint32_t> stands_for;
  std::size_t total = 0;     // points of the series
  bool reduced() const { return keep.size() < total; }
};

/// The default cap of decimate_series for a grid: two points per pixel column
/// (at least 64). A series of at most this many points is drawn whole.
std::size_t default_decimation_cap(const PixelGrid& grid);

/// The points of `pts` to draw on `grid` (see the file comment). A series of at
/// most `cap` points (0: default_decimation_cap) is kept whole, every point
/// standing for itself. Above the cap, points that cannot be drawn (not finite,
/// or <= 0 on a log axis) are left out; the first and last drawable points and
/// those with the lowest and highest y are always kept. Deterministic: the same
/// points and grid give the same result.
Decimation decimate_series(const std::vector<SeriesPoint>& pts, const PixelGrid& grid, std::size_t cap = 0);

}  // namespace scin::analysis
