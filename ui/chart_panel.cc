#include "ui/chart_panel.h"

#include <QAbstractSeries>
#include <QCursor>
#include <QLegendMarker>
#include <QPushButton>
#include <QToolTip>
#include <QVBoxLayout>

namespace scin::ui {

void ZoomChartView::wheelEvent(QWheelEvent* e) {
  double steps = e->angleDelta().y() / 120.0;
  if (steps == 0) return;
  chart()->zoom(steps > 0 ? 1.25 : 0.8);
  e->accept();
}

void ZoomChartView::keyPressEvent(QKeyEvent* e) {
  switch (e->key()) {
    case Qt::Key_Left: chart()->scroll(-20, 0); break;
    case Qt::Key_Right: chart()->scroll(20, 0); break;
    case Qt::Key_Up: chart()->scroll(0, 20); break;
    case Qt::Key_Down: chart()->scroll(0, -20); break;
    case Qt::Key_Plus: chart()->zoomIn(); break;
    case Qt::Key_Minus: chart()->zoomOut(); break;
    case Qt::Key_0: chart()->zoomReset(); break;
    default: QChartView::keyPressEvent(e);
  }
}

void ZoomChartView::mousePressEvent(QMouseEvent* e) {
  if (e->button() == Qt::MiddleButton) {
    panning_ = true;
    last_ = e->position();
    e->accept();
    return;
  }
  if (e->button() == Qt::RightButton) {  // QChartView zooms out on right click; reset is clearer
    chart()->zoomReset();
    e->accept();
    return;
  }
  QChartView::mousePressEvent(e);
}

void ZoomChartView::mouseMoveEvent(QMouseEvent* e) {
  if (panning_) {
    QPointF d = e->position() - last_;
    chart()->scroll(-d.x(), d.y());
    last_ = e->position();
    e->accept();
    return;
  }
  QChartView::mouseMoveEvent(e);
}

void ZoomChartView::mouseReleaseEvent(QMouseEvent* e) {
  if (panning_ && e->button() == Qt::MiddleButton) {
    panning_ = false;
    e->accept();
    return;
  }
  if (e->button() == Qt::RightButton) {
    e->accept();
    return;
  }
  QChartView::mouseReleaseEvent(e);
}

ChartPanel::ChartPanel(const QString& id, const QString& title, QWidget* parent)
    : QWidget(parent), id_(id), title_(title) {
  setObjectName(id);
  auto* lay = new QVBoxLayout(this);
  lay->setContentsMargins(2, 2, 2, 2);
  controls_ = new QHBoxLayout;
  lay->addLayout(controls_);
  chart_ = new QChart;
  chart_->setTitle(title);
  chart_->legend()->setAlignment(Qt::AlignRight);
  chart_->setAnimationOptions(QChart::NoAnimation);
  view_ = new ZoomChartView(chart_);
  view_->setRenderHint(QPainter::Antialiasing);
  view_->setRubberBand(QChartView::RectangleRubberBand);
  view_->setToolTip(tr("Drag: zoom to a rectangle · wheel: zoom · middle-drag or arrows: pan · "
                       "right click or 0: reset · click a legend entry to hide its series"));
  lay->addWidget(view_, 1);
  auto* reset = new QPushButton(tr("Reset zoom"));
  connect(reset, &QPushButton::clicked, this, &ChartPanel::resetZoom);
  controls_->addStretch(1);
  controls_->addWidget(reset);
}

void ChartPanel::setResults(const ResultSet& rs) {
  rs_ = rs;
  redraw();
}

void ChartPanel::resetZoom() { chart_->zoomReset(); }

void ChartPanel::clearChart() {
  chart_->removeAllSeries();
  for (QAbstractAxis* a : chart_->axes()) {
    chart_->removeAxis(a);
    delete a;
  }
}

QStringList ChartPanel::seriesNames() const {
  QStringList out;
  for (QAbstractSeries* s : chart_->series()) out << s->name();
  return out;
}

void ChartPanel::setSeriesVisible(const QString& name, bool visible) {
  for (QAbstractSeries* s : chart_->series())
    if (s->name() == name) s->setVisible(visible);
  for (QLegendMarker* m : chart_->legend()->markers()) {
    if (m->series()->name() != name) continue;
    m->setVisible(true);
    QFont f = m->font();
    f.setStrikeOut(!visible);
    m->setFont(f);
  }
}

void ChartPanel::connectLegend() {
  for (QLegendMarker* m : chart_->legend()->markers()) {
    if (m->type() == QLegendMarker::LegendMarkerTypeBar) continue;  // bar sets toggle nothing useful
    connect(m, &QLegendMarker::clicked, this, [this, m] {
      setSeriesVisible(m->series()->name(), !m->series()->isVisible());
    });
  }
}

void ChartPanel::showTip(const QString& text) { QToolTip::showText(QCursor::pos(), text); }

}  // namespace scin::ui
