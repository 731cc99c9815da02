// FigureCanvas (declared in ui/analysis_view.h): the on-screen plot with its
// nearest-point tracker and zoom. The figure is drawn into a picture (on a
// worker for large plots); paint events copy it and draw the hover, the rubber
// band and the read-out over it.
#include <cmath>

#include <QFontMetricsF>
#include <QFutureWatcher>
#include <QLocale>
#include <QMouseEvent>
#include <QResizeEvent>
#include <QShowEvent>
#include <QPainter>
#include <QWheelEvent>
#include <QtConcurrent/QtConcurrentRun>

#include "ui/analysis_view.h"

namespace scin::ui {

using analysis::Series;

namespace {

bool sameView(const std::optional<ViewRange>& a, const std::optional<ViewRange>& b) {
  if (a.has_value() != b.has_value()) return false;
  return !a || (a->x0 == b->x0 && a->x1 == b->x1 && a->y0 == b->y0 && a->y1 == b->y1);
}

}  // namespace

bool FigureCanvas::Key::operator==(const Key& o) const {
  return plot == o.plot && pixels == o.pixels && dpr == o.dpr && dpi == o.dpi && options.font_pt == o.options.font_pt &&
         options.title == o.options.title && options.legend == o.options.legend && options.log_x == o.options.log_x &&
         options.log_y == o.options.log_y && sameView(options.view, o.options.view) && options.hidden == o.options.hidden &&
         options.decimate == o.options.decimate && options.free_y == o.options.free_y;
}

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
  points_ = plot_ ? plot_->point_count() : 0;
  hiSeries_ = nullptr;
  tracker_.clear();
  view_.reset();
  update();
  owePicture();
}

void FigureCanvas::setLog(bool x, bool y) {
  if (x == logX_ && y == logY_) return;
  logX_ = x;
  logY_ = y;
  view_.reset();
  update();
  owePicture();
}

void FigureCanvas::setFreeY(bool on) {
  if (on == freeY_) return;
  freeY_ = on;
  view_.reset();
  update();
  owePicture();
}

void FigureCanvas::resetZoom() {
  view_.reset();
  update();
  owePicture();
  Q_EMIT zoomChanged();
}

void FigureCanvas::setView(const std::optional<ViewRange>& v) {
  view_ = v;
  update();
  owePicture();
  Q_EMIT zoomChanged();
}

void FigureCanvas::setHidden(const std::set<std::string>& keys) {
  hidden_ = keys;
  hiSeries_ = nullptr;
  tracker_.clear();
  update();
  owePicture();
}

FigureOptions FigureCanvas::options() const {
  FigureOptions o;
  o.hidden = hidden_;
  o.font_pt = fontPt_;
  o.log_x = logX_;
  o.log_y = logY_;
  o.free_y = freeY_;
  o.view = view_;
  o.legend = false;  // the legend is the list beside the canvas
  o.title = true;
  return o;
}

double FigureCanvas::ptPerPx() const { return 72.0 / std::max(1, logicalDpiY()); }

std::size_t FigureCanvas::pointCount() const { return points_; }

bool FigureCanvas::drawsOnWorker() const { return plot_ && points_ > kSyncPoints; }

FigureCanvas::Key FigureCanvas::currentKey() const {
  Key k;
  k.plot = plot_.get();
  k.dpr = devicePixelRatioF();
  k.pixels = QSize(static_cast<int>(std::lround(width() * k.dpr)), static_cast<int>(std::lround(height() * k.dpr)));
  k.dpi = std::max(1, logicalDpiY());
  k.options = options();
  k.options.decimate = true;  // the screen: each series reduced to its panel's pixels
  return k;
}

bool FigureCanvas::rendering() const { return drawing_ || owed_; }

void FigureCanvas::owePicture() {
  if (owed_) return;
  owed_ = true;
  QMetaObject::invokeMethod(
      this,
      [this] {
        owed_ = false;
        if (!drawing_ && isVisible() && drawsOnWorker() && width() > 0 && height() > 0 && !current()) startDrawing();
      },
      Qt::QueuedConnection);
}

void FigureCanvas::resizeEvent(QResizeEvent* e) {
  QWidget::resizeEvent(e);
  owePicture();
}

void FigureCanvas::showEvent(QShowEvent* e) {
  QWidget::showEvent(e);
  owePicture();
}

FigureCanvas::Frame FigureCanvas::draw(const Key& key, std::shared_ptr<const analysis::PlotData> plot) {
  Frame f;
  f.key = key;
  f.plot = std::move(plot);
  if (key.pixels.isEmpty()) return f;
  f.image = QImage(key.pixels, QImage::Format_ARGB32_Premultiplied);
  f.image.setDevicePixelRatio(key.dpr);
  // The widget's logical DPI, so that fonts in points come out as on the widget.
  const int dpm = static_cast<int>(std::lround(key.dpi / 0.0254));
  f.image.setDotsPerMeterX(dpm);
  f.image.setDotsPerMeterY(dpm);
  f.image.fill(Qt::white);
  if (!f.plot) return f;
  QPainter p(&f.image);
  const double ptPerPx = 72.0 / key.dpi;
  p.scale(1 / ptPerPx, 1 / ptPerPx);
  const QSizeF size(key.pixels.width() / key.dpr * ptPerPx, key.pixels.height() / key.dpr * ptPerPx);
  f.layout = paintFigure(&p, size, *f.plot, key.options);
  return f;
}

void FigureCanvas::startDrawing() {
  drawing_ = true;
  auto* watcher = new QFutureWatcher<Frame>(this);
  connect(watcher, &QFutureWatcher<Frame>::finished, this, [this, watcher] {
    watcher->deleteLater();
    drawing_ = false;
    // Even a picture of an older size or zoom is better than an older one still:
    // shown (stretched) until the current one is drawn.
    frame_ = watcher->result();
    hiSeries_ = nullptr;
    tracker_.clear();
    update();
    if (!current()) owePicture();  // the size or zoom changed meanwhile: the next picture
    Q_EMIT rendered();
  });
  watcher->setFuture(QtConcurrent::run([key = currentKey(), plot = plot_] { return draw(key, plot); }));
}

FigureCanvas::Reduced FigureCanvas::reduced() const {
  Reduced r;
  if (!frame_.plot) return r;
  for (const auto& panel : frame_.layout.drawn)
    for (const auto& d : panel)
      if (d.reduced() && !d.keep.empty()) {
        ++r.series;
        r.points += d.total;
        r.drawn += d.keep.size();
      }
  return r;
}

void FigureCanvas::paintEvent(QPaintEvent*) {
  QPainter p(this);
  if (!plot_) {
    p.fillRect(rect(), Qt::white);
    return;
  }
  const Key key = currentKey();
  if (!(frame_.key == key) || frame_.image.isNull()) {
    if (!drawsOnWorker()) {
      // A few ms: drawn here, once per plot, size and zoom (hover only copies it).
      frame_ = draw(key, plot_);
      QMetaObject::invokeMethod(this, &FigureCanvas::rendered, Qt::QueuedConnection);
    } else if (!drawing_) {
      startDrawing();
    }
  }
  const bool isCurrent = frame_.key == key && !frame_.image.isNull();
  if (frame_.image.isNull()) p.fillRect(rect(), Qt::white);
  else if (isCurrent) p.drawImage(QPointF(0, 0), frame_.image);
  else p.drawImage(QRectF(rect()), frame_.image);  // the previous picture, stretched, until the new one is drawn
  const double s = 1.0 / ptPerPx();
  p.scale(s, s);
  const QSizeF size(width() * ptPerPx(), height() * ptPerPx());
  if (!isCurrent) {
    // Say so: the picture is being drawn (a large plot, on a worker).
    const QFont f = pointFont(fontPt_, this);
    p.setFont(f);
    const QString text = tr("Drawing %1 points…").arg(QLocale().toString(static_cast<qulonglong>(points_)));
    QFontMetricsF fm(f, this);
    QRectF box(0, 0, fm.horizontalAdvance(text) + 12, fm.height() + 6);
    box.moveTopRight(QPointF(size.width() - 6, 6));
    p.setPen(QPen(QColor(0x60, 0x60, 0x60), 0.6));
    p.setBrush(QColor(255, 255, 235, 235));
    p.drawRect(box);
    p.setPen(Qt::black);
    p.drawText(box, Qt::AlignCenter, text);
    return;
  }
  if (hiSeries_) {
    FigureOptions o = key.options;
    o.highlight = hiSeries_;
    o.highlight_facet = hiFacet_;
    o.highlight_point = hiPoint_;
    paintHighlight(&p, frame_.layout, *plot_, o);
  }
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
  const auto& panels = frame_.layout.panels;
  for (std::size_t i = 0; i < panels.size(); ++i) {
    const QRectF& r = panels[i].plot;
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
  const bool had = hiSeries_ != nullptr || !tracker_.isEmpty();
  hiSeries_ = nullptr;
  tracker_.clear();
  // Only over the current picture: its layout says where every drawn point is.
  const FigureLayout& layout = frame_.layout;
  if (!plot_ || plot_->empty() || !table_ || !current() || frame_.plot != plot_ || layout.panels.empty()) {
    if (had) update();
    return tracker_;
  }
  const int pi = panelAt(pt);
  if (pi < 0) return tracker_;
  const auto& panel = layout.panels[static_cast<std::size_t>(pi)];
  if (!panel.plot.adjusted(-20, -20, 20, 20).contains(pt)) {
    if (had) update();
    return tracker_;
  }
  const auto& facet = plot_->facets[static_cast<std::size_t>(panel.facet)];
  const std::vector<analysis::Decimation>* drawn =
      static_cast<std::size_t>(pi) < layout.drawn.size() ? &layout.drawn[static_cast<std::size_t>(pi)] : nullptr;
  double bestD = 1e18;
  QPointF bestQ;
  std::uint32_t bestStands = 1;
  const analysis::Decimation* bestDec = nullptr;
  // The nearest of the points drawn (every point when the series was not
  // reduced; else the points kept, each standing for those of its pixel).
  auto consider = [&](const Series& s, std::size_t k, std::uint32_t stands, const analysis::Decimation* dec) {
    const auto& v = s.points[k];
    if ((layout.log_x && !(v.x > 0)) || (layout.log_y && !(v.y > 0))) return;
    const QPointF q = layout.map(panel, v.x, v.y);
    if (!panel.plot.adjusted(-1, -1, 1, 1).contains(q)) return;
    const double d = std::hypot(q.x() - pt.x(), q.y() - pt.y());
    if (d < bestD) {
      bestD = d;
      hiSeries_ = &s;
      hiPoint_ = k;
      bestQ = q;
      bestStands = stands;
      bestDec = dec;
    }
  };
  for (std::size_t si = 0; si < facet.series.size(); ++si) {
    const Series& s = facet.series[si];
    if (hidden_.count(s.key)) continue;
    const analysis::Decimation* dec = drawn && si < drawn->size() ? &(*drawn)[si] : nullptr;
    if (dec && dec->reduced())
      for (std::size_t j = 0; j < dec->keep.size(); ++j) consider(s, dec->keep[j], dec->stands_for[j], dec);
    else
      for (std::size_t k = 0; k < s.points.size(); ++k) consider(s, k, 1, nullptr);
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
    if (row.note >= 0 && static_cast<std::size_t>(row.note) < table_->notes.size())
      lines << QString::fromStdString(table_->notes[static_cast<std::size_t>(row.note)]);
    if (bestDec) {
      const QLocale loc;
      lines << tr("series of %1 points, drawn at screen resolution (%2 kept)")
                   .arg(loc.toString(static_cast<qulonglong>(bestDec->total)), loc.toString(static_cast<qulonglong>(bestDec->keep.size())));
      if (bestStands > 1)
        lines << tr("this marker stands for %1 points within one pixel: zoom in to tell them apart (the Points tab lists every point)")
                     .arg(loc.toString(bestStands));
    }
    tracker_ = lines.join(QLatin1Char('\n'));
    trackerPos_ = bestQ;
  }
  if (had || hiSeries_) update();
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
  if (e->button() != Qt::LeftButton || !plot_ || plot_->empty() || !current()) return;
  dragFrom_ = dragTo_ = e->position() * ptPerPx();
  dragPanel_ = panelAt(dragFrom_);
  dragging_ = dragPanel_ >= 0;
  tracker_.clear();
}

void FigureCanvas::mouseReleaseEvent(QMouseEvent* e) {
  if (!dragging_ || e->button() != Qt::LeftButton) return;
  dragging_ = false;
  const QRectF r = QRectF(dragFrom_, dragTo_).normalized();
  if (r.width() > 4 && r.height() > 4 && dragPanel_ >= 0 && static_cast<std::size_t>(dragPanel_) < frame_.layout.panels.size()) {
    const auto& panel = frame_.layout.panels[static_cast<std::size_t>(dragPanel_)];
    const QPointF a = frame_.layout.unmap(panel, r.bottomLeft()), b = frame_.layout.unmap(panel, r.topRight());
    setView(ViewRange{a.x(), b.x(), a.y(), b.y()});
  }
  update();
}

void FigureCanvas::mouseDoubleClickEvent(QMouseEvent*) { resetZoom(); }

void FigureCanvas::wheelEvent(QWheelEvent* e) {
  // The panels of the newest picture (while a new one is drawn, its geometry is
  // close enough); the range is the one asked for last, so quick steps add up.
  FigureLayout layout = frame_.layout;
  if (layout.panels.empty() || frame_.plot != plot_) return;
  const double steps = e->angleDelta().y() / 120.0;
  if (steps == 0) return;
  if (view_) layout.range = *view_;
  const QPointF pt = e->position() * ptPerPx();
  const auto& panel = layout.panels[static_cast<std::size_t>(std::max(0, panelAt(pt)))];
  const double f = std::pow(0.8, steps);
  ViewRange v = layout.rangeOf(panel);  // (with free y, the zoom starts from the panel's own y)
  auto zoom = [f](double lo, double hi, double at, bool log) {
    if (log) {
      const double l = std::log10(lo), h = std::log10(hi), c = std::log10(at);
      return std::pair{std::pow(10.0, c - (c - l) * f), std::pow(10.0, c + (h - c) * f)};
    }
    return std::pair{at - (at - lo) * f, at + (hi - at) * f};
  };
  const QPointF c = layout.unmap(panel, pt);
  std::tie(v.x0, v.x1) = zoom(v.x0, v.x1, c.x(), layout.log_x);
  std::tie(v.y0, v.y1) = zoom(v.y0, v.y1, c.y(), layout.log_y);
  setView(v);
  e->accept();
}

void FigureCanvas::leaveEvent(QEvent*) {
  const bool had = hiSeries_ != nullptr || !tracker_.isEmpty();
  hiSeries_ = nullptr;
  tracker_.clear();
  if (had) update();
}

}  // namespace scin::ui
