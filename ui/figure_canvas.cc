// FigureCanvas (declared in ui/analysis_view.h): the on-screen plot with its
// nearest-point tracker and zoom.
#include <cmath>

#include <QFontMetricsF>
#include <QMouseEvent>
#include <QPainter>
#include <QWheelEvent>

#include "ui/analysis_view.h"

namespace scin::ui {

using analysis::Series;

FigureCanvas::FigureCanvas(QWidget* parent) : QWidget(parent) {
  setMouseTracking(true);
  setMinimumSize(240, 180);
  setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
  setObjectName(QStringLiteral("figureCanvas"));
  // The tracker shows values; a tooltip would fight it, so there is none.
  setToolTip(QString());
  setAccessibleDescription(tr("Drag to zoom to a rectangle, wheel to zoom, right or double click to reset; "
                              "hover shows the nearest point"));
}

void FigureCanvas::setPlot(std::shared_ptr<const analysis::AnalysisTable> table,
                           std::shared_ptr<const analysis::PlotData> plot) {
  table_ = std::move(table);
  plot_ = std::move(plot);
  hiSeries_ = nullptr;
  tracker_.clear();
  view_.reset();
  update();
}

void FigureCanvas::setLog(bool x, bool y) {
  if (x == logX_ && y == logY_) return;
  logX_ = x;
  logY_ = y;
  view_.reset();
  update();
}

void FigureCanvas::resetZoom() {
  view_.reset();
  update();
  Q_EMIT zoomChanged();
}

void FigureCanvas::setView(const std::optional<ViewRange>& v) {
  view_ = v;
  update();
  Q_EMIT zoomChanged();
}

void FigureCanvas::setHidden(const std::set<std::string>& keys) {
  hidden_ = keys;
  hiSeries_ = nullptr;
  tracker_.clear();
  update();
}

FigureOptions FigureCanvas::options() const {
  FigureOptions o;
  o.hidden = hidden_;
  o.font_pt = fontPt_;
  o.log_x = logX_;
  o.log_y = logY_;
  o.view = view_;
  o.legend = false;  // the legend is the list beside the canvas
  o.title = true;
  return o;
}

double FigureCanvas::ptPerPx() const { return 72.0 / std::max(1, logicalDpiY()); }

void FigureCanvas::paintEvent(QPaintEvent*) {
  QPainter p(this);
  const double s = 1.0 / ptPerPx();
  p.scale(s, s);
  const QSizeF size(width() * ptPerPx(), height() * ptPerPx());
  if (!plot_) {
    p.fillRect(QRectF(QPointF(0, 0), size), Qt::white);
    return;
  }
  FigureOptions o = options();
  o.highlight = hiSeries_;
  o.highlight_facet = hiFacet_;
  o.highlight_point = hiPoint_;
  layout_ = paintFigure(&p, size, *plot_, o);
  if (dragging_) {
    p.setPen(QPen(QColor(0x00, 0x72, 0xB2), 0.8, Qt::DashLine));
    p.setBrush(QColor(0x00, 0x72, 0xB2, 30));
    p.drawRect(QRectF(dragFrom_, dragTo_).normalized());
  }
  if (!tracker_.isEmpty()) {
    // The read-out: a box beside the point, kept inside the canvas.
    const QFont f = pointFont(fontPt_, this);
    p.setFont(f);
    QFontMetricsF fm(f, this);
    const QRectF textRect = fm.boundingRect(QRectF(0, 0, size.width() * 0.6, size.height()), Qt::AlignLeft, tracker_);
    QRectF box = textRect.adjusted(-4, -3, 4, 3);
    QPointF at = trackerPos_ + QPointF(10, 10);
    if (at.x() + box.width() > size.width()) at.setX(trackerPos_.x() - 10 - box.width());
    if (at.y() + box.height() > size.height()) at.setY(trackerPos_.y() - 10 - box.height());
    at.setX(std::max(0.0, at.x()));
    at.setY(std::max(0.0, at.y()));
    box.moveTopLeft(at);
    p.setPen(QPen(QColor(0x60, 0x60, 0x60), 0.6));
    p.setBrush(QColor(255, 255, 250, 240));
    p.drawRect(box);
    p.setPen(Qt::black);
    p.drawText(box.adjusted(4, 3, -4, -3), Qt::AlignLeft, tracker_);
  }
}

int FigureCanvas::panelAt(const QPointF& pt) const {
  int best = -1;
  double bestD = 1e18;
  for (std::size_t i = 0; i < layout_.panels.size(); ++i) {
    const QRectF& r = layout_.panels[i].plot;
    const double dx = std::max({r.left() - pt.x(), 0.0, pt.x() - r.right()});
    const double dy = std::max({r.top() - pt.y(), 0.0, pt.y() - r.bottom()});
    const double d = dx * dx + dy * dy;
    if (d < bestD) {
      bestD = d;
      best = static_cast<int>(i);
    }
  }
  return best;
}

QString FigureCanvas::trackAt(const QPoint& pos) {
  const QPointF pt = QPointF(pos) * ptPerPx();
  hiSeries_ = nullptr;
  tracker_.clear();
  if (!plot_ || plot_->empty() || !table_ || layout_.panels.empty()) {
    update();
    return tracker_;
  }
  const int pi = panelAt(pt);
  if (pi < 0) return tracker_;
  const auto& panel = layout_.panels[static_cast<std::size_t>(pi)];
  if (!panel.plot.adjusted(-20, -20, 20, 20).contains(pt)) {
    update();
    return tracker_;
  }
  const auto& facet = plot_->facets[static_cast<std::size_t>(panel.facet)];
  double bestD = 1e18;
  QPointF bestQ;
  for (const Series& s : facet.series)
    for (std::size_t k = 0; k < s.points.size() && !hidden_.count(s.key); ++k) {
      const auto& v = s.points[k];
      if ((layout_.log_x && !(v.x > 0)) || (layout_.log_y && !(v.y > 0))) continue;
      const QPointF q = layout_.map(panel, v.x, v.y);
      if (!panel.plot.adjusted(-1, -1, 1, 1).contains(q)) continue;
      const double d = std::hypot(q.x() - pt.x(), q.y() - pt.y());
      if (d < bestD) {
        bestD = d;
        hiSeries_ = &s;
        hiPoint_ = k;
        bestQ = q;
      }
    }
  if (hiSeries_) {
    hiFacet_ = panel.facet;
    const auto& v = hiSeries_->points[hiPoint_];
    const auto& row = table_->rows[v.row];
    QStringList lines;
    lines << hiSeries_->label.c_str();
    if (!facet.title.empty()) lines << QString::fromStdString(facet.title);
    lines << QStringLiteral("%1 = %2").arg(QString::fromStdString(plot_->y.label),
                                           QString::fromStdString(analysis::format_value(plot_->y, v.y)));
    for (std::size_t a = 0; a < table_->axes.size(); ++a)
      lines << QStringLiteral("%1 = %2%3")
                   .arg(QString::fromStdString(table_->axes[a].label), QString::fromStdString(row.axes[a].text),
                        table_->axes[a].unit.empty() || table_->axes[a].bytes
                            ? QString()
                            : QStringLiteral(" ") + QString::fromStdString(table_->axes[a].unit));
    lines << tr("point #%1").arg(row.point_index);
    tracker_ = lines.join(QLatin1Char('\n'));
    trackerPos_ = bestQ;
  }
  update();
  return tracker_;
}

void FigureCanvas::mouseMoveEvent(QMouseEvent* e) {
  if (dragging_) {
    dragTo_ = e->position() * ptPerPx();
    update();
    return;
  }
  trackAt(e->position().toPoint());
}

void FigureCanvas::mousePressEvent(QMouseEvent* e) {
  if (e->button() == Qt::RightButton) {
    resetZoom();
    return;
  }
  if (e->button() != Qt::LeftButton || !plot_ || plot_->empty()) return;
  dragFrom_ = dragTo_ = e->position() * ptPerPx();
  dragPanel_ = panelAt(dragFrom_);
  dragging_ = dragPanel_ >= 0;
  tracker_.clear();
}

void FigureCanvas::mouseReleaseEvent(QMouseEvent* e) {
  if (!dragging_ || e->button() != Qt::LeftButton) return;
  dragging_ = false;
  const QRectF r = QRectF(dragFrom_, dragTo_).normalized();
  if (r.width() > 4 && r.height() > 4 && dragPanel_ >= 0) {
    const auto& panel = layout_.panels[static_cast<std::size_t>(dragPanel_)];
    const QPointF a = layout_.unmap(panel, r.bottomLeft()), b = layout_.unmap(panel, r.topRight());
    setView(ViewRange{a.x(), b.x(), a.y(), b.y()});
  }
  update();
}

void FigureCanvas::mouseDoubleClickEvent(QMouseEvent*) { resetZoom(); }

void FigureCanvas::wheelEvent(QWheelEvent* e) {
  if (layout_.panels.empty()) return;
  const double steps = e->angleDelta().y() / 120.0;
  if (steps == 0) return;
  const QPointF pt = e->position() * ptPerPx();
  const auto& panel = layout_.panels[static_cast<std::size_t>(std::max(0, panelAt(pt)))];
  const double f = std::pow(0.8, steps);
  ViewRange v = layout_.range;
  auto zoom = [f](double lo, double hi, double at, bool log) {
    if (log) {
      const double l = std::log10(lo), h = std::log10(hi), c = std::log10(at);
      return std::pair{std::pow(10.0, c - (c - l) * f), std::pow(10.0, c + (h - c) * f)};
    }
    return std::pair{at - (at - lo) * f, at + (hi - at) * f};
  };
  const QPointF c = layout_.unmap(panel, pt);
  std::tie(v.x0, v.x1) = zoom(v.x0, v.x1, c.x(), layout_.log_x);
  std::tie(v.y0, v.y1) = zoom(v.y0, v.y1, c.y(), layout_.log_y);
  setView(v);
  e->accept();
}

void FigureCanvas::leaveEvent(QEvent*) {
  hiSeries_ = nullptr;
  tracker_.clear();
  update();
}

}  // namespace scin::ui
