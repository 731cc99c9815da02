#include "ui/figure_export.h"

#include <QFile>
#include <QFileInfo>
#include <QImage>
#include <QPageSize>
#include <QPdfWriter>
#include <QRegularExpression>
#include <QSvgGenerator>

#include "base/version.h"

namespace scin::ui {

bool parseFigureSize(const QString& text, QSizeF* size_pt, QString* error) {
  static const QRegularExpression re(QStringLiteral(R"(^\s*([0-9]*\.?[0-9]+)\s*(?:[xX×]\s*([0-9]*\.?[0-9]+))?\s*(in|mm|pt)\s*$)"));
  const auto m = re.match(text);
  if (!m.hasMatch()) {
    if (error) *error = QStringLiteral("figure size '%1': write WxHin, WxHmm or Win (e.g. 3.5x2.5in, 89x60mm)").arg(text);
    return false;
  }
  const QString unit = m.captured(3);
  const double f = unit == QLatin1String("in") ? 72.0 : unit == QLatin1String("mm") ? 72.0 / 25.4 : 1.0;
  const double w = m.captured(1).toDouble() * f;
  const double h = m.captured(2).isEmpty() ? w / 1.4 : m.captured(2).toDouble() * f;
  if (w < 72 || h < 54 || w > 72 * 40 || h > 72 * 40) {
    if (error) *error = QStringLiteral("figure size '%1' out of range: 1 in to 40 in wide, 0.75 in to 40 in high").arg(text);
    return false;
  }
  *size_pt = QSizeF(w, h);
  return true;
}

QImage renderPlot(const analysis::PlotData& plot, FigureOptions options, const FigureSize& size, double dpi) {
  const QSize px((size.size_pt * dpi / 72.0).toSize());
  QImage img(px, QImage::Format_ARGB32_Premultiplied);
  // Fonts are sized against the image's dpi: 72 while painting in points.
  img.setDotsPerMeterX(static_cast<int>(72 / 0.0254));
  img.setDotsPerMeterY(static_cast<int>(72 / 0.0254));
  img.fill(Qt::white);
  {
    QPainter p(&img);
    p.scale(dpi / 72.0, dpi / 72.0);
    options.font_pt = size.font_pt;
    paintFigure(&p, size.size_pt, plot, options);
  }
  img.setDotsPerMeterX(static_cast<int>(dpi / 0.0254));
  img.setDotsPerMeterY(static_cast<int>(dpi / 0.0254));
  return img;
}

bool exportPlot(const analysis::AnalysisTable& table, const analysis::PlotData& plot, FigureOptions options,
                const FigureSize& size, const QString& path, QString* error) {
  const QString ext = QFileInfo(path).suffix().toLower();
  options.font_pt = size.font_pt;
  auto fail = [&](const QString& m) {
    if (error) *error = m;
    return false;
  };
  if (ext == QLatin1String("csv")) {
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate)) return fail(QStringLiteral("could not write %1: %2").arg(path, f.errorString()));
    f.write(QByteArray::fromStdString(analysis::plot_csv(table, plot)));
    return true;
  }
  if (plot.empty()) return fail(QStringLiteral("nothing to draw: %1").arg(QString::fromStdString(plot.empty_reason)));
  const QString creator = QStringLiteral("SCIN Explorer %1").arg(QString::fromLatin1(version()));
  if (ext == QLatin1String("png")) {
    if (!renderPlot(plot, options, size, 300).save(path, "PNG")) return fail(QStringLiteral("could not write %1").arg(path));
    return true;
  }
  if (ext == QLatin1String("svg")) {
    QSvgGenerator gen;
    gen.setFileName(path);
    gen.setResolution(72);  // one SVG unit = one point, so width/height carry the physical size
    gen.setSize(size.size_pt.toSize());
    gen.setViewBox(QRectF(QPointF(0, 0), size.size_pt));
    gen.setTitle(QString::fromStdString(plot.title));
    gen.setDescription(creator);
    QPainter p;
    if (!p.begin(&gen)) return fail(QStringLiteral("could not write %1").arg(path));
    paintFigure(&p, size.size_pt, plot, options);
    p.end();
    if (!QFileInfo::exists(path)) return fail(QStringLiteral("could not write %1").arg(path));
    return true;
  }
  if (ext == QLatin1String("pdf")) {
    QPdfWriter pdf(path);
    pdf.setTitle(QString::fromStdString(plot.title));
    pdf.setCreator(creator);
    pdf.setResolution(72);  // device units are points
    pdf.setPageSize(QPageSize(size.size_pt, QPageSize::Point, QString(), QPageSize::ExactMatch));
    pdf.setPageMargins(QMarginsF(0, 0, 0, 0));
    QPainter p;
    if (!p.begin(&pdf)) return fail(QStringLiteral("could not write %1").arg(path));
    const double sx = p.viewport().width() / size.size_pt.width();
    p.scale(sx, sx);
    paintFigure(&p, size.size_pt, plot, options);
    p.end();
    return true;
  }
  return fail(QStringLiteral("unknown figure format '%1': use .svg, .pdf, .png or .csv").arg(ext));
}

}  // namespace scin::ui
