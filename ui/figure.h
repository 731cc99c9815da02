// Draws an analysis plot (core/analysis/plot.h) with QPainter: one panel per
// facet sharing their axes, readable non-overlapping ticks on linear, log and
// byte axes, a colour-blind-safe palette (Okabe-Ito) with distinct markers and
// dash patterns, and (for exports) a legend that wraps below the panels and
// never elides. The same code paints the screen and the SVG / PDF / PNG
// exports, in units of points (1/72 in) so a figure has a physical size.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include <QColor>
#include <QPainter>
#include <QPen>
#include <QRectF>

#include "analysis/decimate.h"
#include "analysis/plot.h"

namespace scin::ui {

/// Okabe & Ito (2008) colour-blind-safe palette, ordered for contrast on white.
QColor paletteColor(int i);
/// Marker shape i (circle, square, triangle, diamond, inverted triangle, plus, cross).
void drawMarker(QPainter* p, int shape, const QPointF& c, double size, const QColor& color);
/// The same marker at each of `centres` (pen and brush set once).
void drawMarkers(QPainter* p, int shape, const std::vector<QPointF>& centres, double size, const QColor& color);
Qt::PenStyle dashStyle(int i);
/// Colour / marker / dash of a series (algorithms keep one colour everywhere
/// when colour encodes the algorithm).
struct SeriesLook {
  QColor color;
  int marker = 0;
  Qt::PenStyle dash = Qt::SolidLine;
};
SeriesLook seriesLook(const analysis::PlotData& plot, const analysis::Series& s);
/// The pen of a series drawn over another with the same values
/// (analysis::Series::same_as): dashed, so that the one under it shows through.
/// With `group` curves on one line, the one drawn `rank`-th over the first
/// (1 .. group-1) dashes its own share of each period: every colour shows.
void setCoveringDash(QPen& pen, int rank = 1, int group = 2);
/// Legend text of a series: its label, and "(= other)" when it has the same
/// values as another series ("(= other in some panels)" when not in all).
QString legendText(const analysis::PlotData& plot, const analysis::Series& s);

/// One legend line: a sample (line in a colour and dash, a marker or none) and its text.
struct LegendItem {
  QString text;
  QColor color;
  Qt::PenStyle dash = Qt::SolidLine;
  int marker = -1;        // -1: a line without a marker
  bool covering = false;  // drawn over a curve with the same values (setCoveringDash)
  bool starts_row = false;  // the legend starts a new row with this item
  std::vector<std::string> keys{};  // factoredLegend: the keys of the curves the item stands for
};
/// A factored legend for `entries` (curves of `plot`): one item per colour
/// (named by the colour field's value, drawn with its colour and dash, no
/// marker) then one per marker (named by the other fields, grey). Empty when
/// colour and marker do not each follow their own fields (one field, five or
/// more colours, a colour named two ways) -- then only a legend per curve is right.
std::vector<LegendItem> factoredLegend(const analysis::PlotData& plot, const std::vector<const analysis::Series*>& entries);

/// The visible data range (in data units) shared by every panel.
struct ViewRange {
  double x0 = 0, x1 = 1, y0 = 0, y1 = 1;
};

struct FigureOptions {
  double font_pt = 9;      // tick labels; titles are 1.1x, legend 1x
  bool title = true;       // draw the plot title
  bool legend = true;      // draw the legend below the panels (exports)
  bool log_x = false, log_y = false;
  /// Each panel its own y range and tick labels (their values differ by orders
  /// of magnitude: a shared linear scale flattens the small ones). Not while zoomed.
  bool free_y = false;
  std::optional<ViewRange> view;   // zoomed range; default: the data's range
  int highlight_facet = -1;        // hover: facet, series, point to emphasise
  const analysis::Series* highlight = nullptr;
  std::size_t highlight_point = 0;
  /// Series keys not drawn (hidden from the legend by the user).
  std::set<std::string> hidden;
  /// Draw each series reduced to the pixels of its panel on the painter's
  /// device (analysis/decimate.h): the screen. Exports draw every point.
  bool decimate = false;
};

/// Where things went, for hit-testing the screen figure.
struct FigureLayout {
  struct Panel {
    QRectF plot;           // the data area, in points
    int facet = 0;
    bool own_y = false;    // FigureOptions::free_y: y0..y1 is this panel's, not range's
    double y0 = 0, y1 = 1;
  };
  std::vector<Panel> panels;
  ViewRange range;         // what is shown (after padding)
  bool log_x = false, log_y = false;
  double line_width = 1, marker_size = 4;  // in points, as drawn
  QString y_title;                          // the y axis title as drawn
  double y_title_width = 0, y_title_room = 0;  // its length and the length it may take, in points
  /// With FigureOptions::decimate: per panel, per series of its facet (in
  /// order), the points drawn (a hidden series: none, total = its size).
  std::vector<std::vector<analysis::Decimation>> drawn;
  /// What `panel` shows: range, with the panel's own y where it has one.
  ViewRange rangeOf(const Panel& panel) const;
  QPointF map(const Panel& panel, double x, double y) const;
  /// Data coordinates of a position inside a panel.
  QPointF unmap(const Panel& panel, const QPointF& pos) const;
  /// The pixels of `panel` at `pxPerPt` device pixels per point, as series are decimated to.
  analysis::PixelGrid pixelGrid(const Panel& panel, double pxPerPt) const;
};

/// The data range of a plot (positive values only on a log axis), padded;
/// of its facet `facet` alone when that is >= 0.
ViewRange dataRange(const analysis::PlotData& plot, bool log_x, bool log_y, int facet = -1);

/// Paints the plot into (0,0,size) — in points: scale the painter so that one
/// unit is 1/72 in before calling. Returns the layout.
FigureLayout paintFigure(QPainter* p, const QSizeF& size, const analysis::PlotData& plot, const FigureOptions& o);

/// The hover emphasis (o.highlight's point: cross-hair and ring) over a figure
/// painted with layout `L`, as paintFigure draws it.
void paintHighlight(QPainter* p, const FigureLayout& L, const analysis::PlotData& plot, const FigureOptions& o);

/// Ticks of an axis from lo to hi whose labels (in `font` on `device`) do not
/// overlap over `length` points: positions in data units and their labels.
/// `pow2`: prefer powers of two; `scale`: labels show value / scale (µs as ms).
struct Tick {
  double value;
  QString label;
  /// A horizontal label's centre from its tick, in points: the first and last
  /// labels move inwards so that every label stays within the axis's length.
  double shift = 0;
  /// A size in short form ("256M": 256 MiB), where the full labels of a
  /// narrow axis would not say where its data end (compactBytesNote()).
  bool compact = false;
};
/// What the axis title adds when its ticks are short sizes: "1K = 1024".
QString compactBytesNote();
std::vector<Tick> axisTicks(const analysis::Column& c, double lo, double hi, bool log, double length,
                            bool horizontal, const QFont& font, QPaintDevice* device,
                            const std::vector<std::string>& categories = {}, bool pow2 = false, double scale = 1);

/// Where a log axis labelled only every few decades (ticks all powers of ten)
/// gets a grid line and tick mark without a label: the decades between lo and
/// hi its ticks skip (a small panel's "10, 1000" still shows 100).
std::vector<double> unlabelledDecades(const std::vector<Tick>& ticks, double lo, double hi, bool log);

/// The axis title with unit and scale: "Latency (µs, log)".
QString axisTitle(const analysis::Column& c, bool log);

/// A font of `pt` points for text painted in point units on `device`.
QFont pointFont(double pt, QPaintDevice* device, bool bold = false);

}  // namespace scin::ui
