// Exports: a chart to PNG / SVG / PDF at a chosen size, the data behind it to
// CSV, and a report (HTML or PDF) with the fabric, the sweep, the tool version
// and every chart. Everything renders from the live QChart, so an export looks
// like the screen.
#pragma once

#include <optional>
#include <vector>

#include <QImage>

#include <QSize>
#include <QString>

#include "analysis/table.h"
#include "fabric/config.h"
#include "ui/chart_panel.h"
#include "ui/experiment.h"

namespace scin::ui {

/// One chart of a report, already rendered.
struct ReportChart {
  QString title;
  QImage image;
  /// HTML under the picture: the chart's notes, a table of its numbers ("": none).
  QString html;
};

struct ReportInput {
  QString shown;                       // what the charts show, plain text: "Preview" or "run #3 …"
  /// The stored run the report describes (from the database), or none for the live preview.
  std::optional<analysis::RunSummary> run;
  Config config;                       // the run's fabric (resolved from its spec) or the editors'
  QString configOrigin;                // where `config` comes from, one line
  std::optional<SweepRequest> sweep;   // the editors' sweep (preview only)
  std::vector<ReportChart> charts;     // only charts that have data
  QStringList omitted;                 // titles of charts left out (no data)
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
  /// The report as HTML; `image_srcs[i]` is the src of chart i's picture,
  /// `paged` puts each chart (with its heading) on a page of its own.
  static QString reportHtml(const ReportInput& in, const std::vector<QString>& image_srcs, bool paged = false);
  static QImage renderChart(ChartPanel* chart, QSize size, double scale);
  /// A chart that is no panel's main one (the Validation tab's error chart).
  static QImage renderChart(QChart* chart, QSize size, double scale);
};

}  // namespace scin::ui
