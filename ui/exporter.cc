#include "ui/exporter.h"

#include <QBuffer>
#include <QFile>
#include <QFileInfo>
#include <QFontMetricsF>
#include <QGraphicsLayout>
#include <QLegend>
#include <QLegendMarker>
#include <QGraphicsScene>
#include <QImage>
#include <QPageSize>
#include <QPainter>
#include <QPdfWriter>
#include <QSvgGenerator>
#include <QTextDocument>

#include "fabric/params.h"
#include "base/version.h"
#include "ui/format.h"

namespace scin::ui {
namespace {

void fail(QString* error, const QString& msg) {
  if (error) *error = msg;
}

// Lays the chart out at `size`, runs `paint`, then restores the on-screen size.
template <class F>
void withChartSize(QChart* chart, QSize size, F paint) {
  QRectF old = chart->geometry();
  // A side legend as wide as its longest entry (up to 45 % of the figure), so no name is elided.
  QLegend* legend = chart->legend();
  const QSizeF oldMin = legend->minimumSize();
  if (legend->alignment() & (Qt::AlignLeft | Qt::AlignRight)) {
    QFontMetricsF fm(legend->font());
    double w = 0;
    for (QLegendMarker* m : legend->markers()) w = std::max(w, fm.horizontalAdvance(m->label()));
    legend->setMinimumWidth(std::min(w + 56, size.width() * 0.45));
  }
  chart->setGeometry(QRectF(QPointF(0, 0), QSizeF(size)));
  chart->layout()->activate();
  paint(chart);
  legend->setMinimumSize(oldMin);
  chart->setGeometry(old);
  chart->layout()->activate();
}

void paintChart(QChart* chart, QPainter* p, const QRectF& target) {
  p->setRenderHint(QPainter::Antialiasing);
  p->fillRect(target, Qt::white);
  chart->scene()->render(p, target, chart->geometry());
}

}  // namespace

QImage Exporter::renderChart(ChartPanel* panel, QSize size, double scale) {
  size.setHeight(std::max(size.height(), panel->minimumChartHeight()));
  return renderChart(panel->chart(), size, scale);
}

QImage Exporter::renderChart(QChart* chart, QSize size, double scale) {
  QImage img(size * scale, QImage::Format_ARGB32_Premultiplied);
  img.setDevicePixelRatio(scale);
  img.fill(Qt::white);
  withChartSize(chart, size, [&](QChart* c) {
    QPainter p(&img);
    paintChart(c, &p, QRectF(QPointF(0, 0), QSizeF(size)));
  });
  return img;
}

bool Exporter::exportChart(ChartPanel* panel, const QString& path, QSize size, double scale, QString* error) {
  const QString ext = QFileInfo(path).suffix().toLower();
  if (size.width() < 100 || size.height() < 100) {
    fail(error, QObject::tr("export size %1×%2 is too small (at least 100×100)").arg(size.width()).arg(size.height()));
    return false;
  }
  // A chart that needs more height than asked for (many bars) is exported taller, not with cut labels.
  size.setHeight(std::max(size.height(), panel->minimumChartHeight()));
  if (ext == QLatin1String("png")) {
    QImage img = renderChart(panel, size, scale);
    if (!img.save(path, "PNG")) {
      fail(error, QObject::tr("could not write %1").arg(path));
      return false;
    }
    return true;
  }
  if (ext == QLatin1String("svg")) {
    QSvgGenerator gen;
    gen.setFileName(path);
    gen.setSize(size);
    gen.setViewBox(QRect(QPoint(0, 0), size));
    gen.setTitle(panel->title());
    gen.setDescription(QStringLiteral("SCIN Explorer %1").arg(QString::fromLatin1(version())));
    bool ok = true;
    withChartSize(panel->chart(), size, [&](QChart* chart) {
      QPainter p;
      if (!p.begin(&gen)) {
        ok = false;
        return;
      }
      paintChart(chart, &p, QRectF(QPointF(0, 0), QSizeF(size)));
      p.end();
    });
    if (!ok || !QFileInfo::exists(path)) {
      fail(error, QObject::tr("could not write %1").arg(path));
      return false;
    }
    return true;
  }
  if (ext == QLatin1String("pdf")) {
    QPdfWriter pdf(path);
    pdf.setTitle(panel->title());
    pdf.setCreator(QStringLiteral("SCIN Explorer %1").arg(QString::fromLatin1(version())));
    pdf.setResolution(96);
    pdf.setPageSize(QPageSize(QSizeF(size), QPageSize::Point));
    pdf.setPageMargins(QMarginsF(0, 0, 0, 0));
    bool ok = true;
    withChartSize(panel->chart(), size, [&](QChart* chart) {
      QPainter p;
      if (!p.begin(&pdf)) {
        ok = false;
        return;
      }
      QRectF page = p.viewport();
      paintChart(chart, &p, page);
      p.end();
    });
    if (!ok) fail(error, QObject::tr("could not write %1").arg(path));
    return ok;
  }
  fail(error, QObject::tr("unknown image format '%1': use .png, .svg or .pdf").arg(ext));
  return false;
}

bool Exporter::exportCsv(const ChartPanel* panel, const QString& path, QString* error) {
  QFile f(path);
  if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate | QIODevice::Text)) {
    fail(error, QObject::tr("could not write %1: %2").arg(path, f.errorString()));
    return false;
  }
  f.write(panel->csv().toUtf8());
  return true;
}

QString Exporter::reportHtml(const ReportInput& in, const std::vector<QString>& srcs, bool paged) {
  auto esc = [](const std::string& t) { return QString::fromStdString(t).toHtmlEscaped(); };
  QString h;
  h += QStringLiteral("<html><head><meta charset=\"utf-8\"><title>SCIN Explorer report</title>"
                      "<style>body{font-family:sans-serif;max-width:1000px;margin:auto}"
                      "table{border-collapse:collapse}td,th{border:1px solid #bbb;padding:2px 6px;font-size:10pt;"
                      "vertical-align:top}th{background:#eee;text-align:left}"
                      "figure{margin:0;page-break-inside:avoid;break-inside:avoid}</style></head><body>");
  h += QStringLiteral("<h1>SCIN Explorer report</h1>");
  h += QStringLiteral("<p>Written by SCIN Explorer %1 (git %2). The charts show: %3.</p>")
           .arg(QString::fromLatin1(version()), QString::fromLatin1(git_revision()), in.shown.toHtmlEscaped());
  if (in.run) {
    h += QStringLiteral("<h2>Stored run #%1 %2</h2><table>").arg(in.run->id).arg(esc(in.run->name));
    for (const auto& [k, v] : in.run->lines())
      h += QStringLiteral("<tr><th>%1</th><td>%2</td></tr>").arg(esc(k), esc(v));
    h += QStringLiteral("</table>");
  } else if (in.sweep) {
    h += QStringLiteral("<h2>Live preview (not stored)</h2><p>%1</p>").arg(in.sweep->summary(in.config).toHtmlEscaped());
  }
  h += QStringLiteral("<h2>Charts</h2>");
  if (in.charts.empty()) h += QStringLiteral("<p>No chart has data.</p>");
  for (std::size_t i = 0; i < in.charts.size(); ++i) {
    // Heading and picture in one block: a page break never separates them.
    const bool brk = paged && i > 0;
    h += QStringLiteral("<figure%1><h3>%2</h3>").arg(brk ? QStringLiteral(" style=\"page-break-before:always\"") : QString(),
                                                     in.charts[i].title.toHtmlEscaped());
    if (i < srcs.size()) h += QStringLiteral("<p><img src=\"%1\" width=\"%2\"></p>").arg(srcs[i]).arg(paged ? 640 : 900);
    h += in.charts[i].html;
    h += QStringLiteral("</figure>");
  }
  if (!in.omitted.isEmpty())
    h += QStringLiteral("<p>Left out (no data): %1.</p>").arg(in.omitted.join(QStringLiteral("; ")).toHtmlEscaped());
  h += QStringLiteral("<h2%1>Fabric</h2><p>%2</p>")
           .arg(paged ? QStringLiteral(" style=\"page-break-before:always\"") : QString(), in.configOrigin.toHtmlEscaped());
  h += QStringLiteral("<p><b>%1</b>: %2 accelerators.</p>").arg(esc(in.config.name)).arg(in.config.fabric.gpus);
  h += QStringLiteral("<table><tr><th>Parameter</th><th>Path</th><th>Value</th><th>Unit</th></tr>");
  for (const auto& p : params())
    h += QStringLiteral("<tr><td>%1</td><td><code>%2</code></td><td>%3</td><td>%4</td></tr>")
             .arg(esc(p.label), QString::fromStdString(p.path), esc(get_param_text(in.config, p.path)), unitSuffix(p.unit));
  h += QStringLiteral("</table></body></html>");
  return h;
}

bool Exporter::exportReport(const ReportInput& in, const QString& path, QString* error) {
  const QString ext = QFileInfo(path).suffix().toLower();
  if (ext == QLatin1String("html") || ext == QLatin1String("htm")) {
    std::vector<QString> srcs;
    for (const ReportChart& c : in.charts) {
      QByteArray png;
      QBuffer buf(&png);
      buf.open(QIODevice::WriteOnly);
      c.image.save(&buf, "PNG");
      srcs.push_back(QStringLiteral("data:image/png;base64,") + QString::fromLatin1(png.toBase64()));
    }
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate)) {
      fail(error, QObject::tr("could not write %1: %2").arg(path, f.errorString()));
      return false;
    }
    f.write(reportHtml(in, srcs).toUtf8());
    return true;
  }
  if (ext == QLatin1String("pdf")) {
    QTextDocument doc;
    std::vector<QString> srcs;
    for (std::size_t i = 0; i < in.charts.size(); ++i) {
      QString name = QStringLiteral("chart%1.png").arg(i);
      doc.addResource(QTextDocument::ImageResource, QUrl(name), in.charts[i].image);
      srcs.push_back(name);
    }
    QPdfWriter pdf(path);
    pdf.setTitle(QStringLiteral("SCIN Explorer report"));
    pdf.setCreator(QStringLiteral("SCIN Explorer %1").arg(QString::fromLatin1(version())));
    pdf.setPageSize(QPageSize(QPageSize::A4));
    pdf.setPageMargins(QMarginsF(15, 15, 15, 15), QPageLayout::Millimeter);
    pdf.setResolution(96);
    // Laid out at the printable width (pixels at 96 dpi): images of 640 px fit with room to spare.
    doc.setDefaultStyleSheet(QStringLiteral("td,th{font-size:8pt}"));
    doc.setHtml(reportHtml(in, srcs, true));
    doc.setPageSize(QSizeF(pdf.width(), pdf.height()));
    doc.print(&pdf);
    if (!QFileInfo::exists(path)) {
      fail(error, QObject::tr("could not write %1").arg(path));
      return false;
    }
    return true;
  }
  fail(error, QObject::tr("unknown report format '%1': use .html or .pdf").arg(ext));
  return false;
}

}  // namespace scin::ui
