// Paper figures: an analysis plot written at a physical size (inches or mm)
// with fonts in points, as vector SVG / PDF with real text or a 300 dpi PNG,
// and its data as CSV with a header block naming the run, the tool version and
// the configuration (core/analysis/plot.h plot_csv).
#pragma once

#include <QSizeF>
#include <QString>

#include "analysis/plot.h"
#include "ui/figure.h"

namespace scin::ui {

/// Presets: single column (3.5 in x 2.5 in), double column (7 in x 3.5 in).
struct FigureSize {
  QSizeF size_pt{252, 180};   // points (1/72 in)
  double font_pt = 8;
  static FigureSize singleColumn() { return {QSizeF(3.5 * 72, 2.5 * 72), 8}; }
  static FigureSize doubleColumn() { return {QSizeF(7 * 72, 3.5 * 72), 9}; }
};

/// Parses "3.5x2.5in", "89x60mm", "7in" (height = width / 1.4) into points.
/// False with a message naming the allowed forms on bad input.
bool parseFigureSize(const QString& text, QSizeF* size_pt, QString* error);

/// Writes the plot by extension: .svg, .pdf (vector, real text), .png (300 dpi)
/// or .csv (needs `table`). `options` gives scales, title and zoom.
bool exportPlot(const analysis::AnalysisTable& table, const analysis::PlotData& plot, FigureOptions options,
                const FigureSize& size, const QString& path, QString* error);

/// The plot rendered to an image of `size` at `dpi` (reports, screenshots).
QImage renderPlot(const analysis::PlotData& plot, FigureOptions options, const FigureSize& size, double dpi);

}  // namespace scin::ui
