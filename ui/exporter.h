// Exports: a chart to PNG / SVG / PDF at a chosen size, the data behind it to
// CSV, and a report (HTML or PDF) with the fabric, the sweep, the tool version
// and every chart. Everything renders from the live QChart, so an export looks
// like the screen.
#pragma once

#include <vector>

#include <QSize>
#include <QString>

#include "fabric/config.h"
#include "ui/chart_panel.h"
#include "ui/experiment.h"

namespace scin::ui {

struct ReportInput {
  Config config;
  SweepRequest sweep;
  QString shown;                       // what the charts show: "Preview" or "run #3 …"
  std::vector<ChartPanel*> charts;
};

class Exporter {
 public:
  /// Chart to an image by extension: .png (at `size` × `scale` device pixels),
  /// .svg or .pdf (vector). Returns false and sets `error` on failure.
  static bool exportChart(ChartPanel* chart, const QString& path, QSize size, double scale = 2.0,
                          QString* error = nullptr);
  static bool exportCsv(const ChartPanel* chart, const QString& path, QString* error = nullptr);
  /// .html (charts embedded as PNG) or .pdf.
  static bool exportReport(const ReportInput& in, const QString& path, QString* error = nullptr);
  /// The report as HTML; `image_src(i)` gives the src of chart i's picture.
  static QString reportHtml(const ReportInput& in, const std::vector<QString>& image_srcs);
  static QImage renderChart(ChartPanel* chart, QSize size, double scale);
};

}  // namespace scin::ui
