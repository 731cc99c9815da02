#include "ui/chart_panel.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <memory>

#include <QAbstractBarSeries>
#include <QAbstractSeries>
#include <QXYSeries>
#include <QCursor>
#include <QTextDocument>
#include <QLegendMarker>
#include <QLineSeries>
#include <QPen>
#include <QPointer>
#include <QEvent>
#include <QFontMetricsF>
#include <QPushButton>
#include <QRegularExpression>
#include <QSet>
#include <QToolTip>
#include <QVBoxLayout>

#include "analysis/table.h"

namespace scin::ui {

QString tickNumber(double v) {
  if (v == 0) return QStringLiteral("0");
  const double a = std::fabs(v);
  if (a >= 1e-3 && a < 1e7) {
    // Enough decimals for the value's first significant digit, no trailing zeros.
    const int decimals = std::max(0, -static_cast<int>(std::floor(std::log10(a) + 1e-9)));
    QString t = QString::number(v, 'f', decimals + 2);
    if (t.contains(QLatin1Char('.'))) {
      while (t.endsWith(QLatin1Char('0'))) t.chop(1);
      if (t.endsWith(QLatin1Char('.'))) t.chop(1);
    }
    return t;
  }
  // 2e-05 -> 2e-5, 3e+07 -> 3e7
  QString t = QString::number(v, 'g', 2);
  t.replace(QStringLiteral("e+0"), QStringLiteral("e")).replace(QStringLiteral("e+"), QStringLiteral("e"));
  t.replace(QStringLiteral("e-0"), QStringLiteral("e-"));
  return t;
}

std::vector<double> logTicks(double lo, double hi) {
  std::vector<double> out;
  if (!(lo > 0) || !(hi > lo)) return out;
  const int d0 = static_cast<int>(std::floor(std::log10(lo) + 1e-9));
  const int d1 = static_cast<int>(std::ceil(std::log10(hi) - 1e-9));
  const int decades = d1 - d0;
  const std::vector<double> mant = decades <= 1   ? std::vector<double>{1, 2, 3, 5}
                                   : decades <= 4 ? std::vector<double>{1, 2, 5}
                                   : decades <= 7 ? std::vector<double>{1, 3}
                                                  : std::vector<double>{1};
  const int every = decades > 12 ? 2 : 1;
  for (int d = d0; d <= d1; ++d) {
    if (mant.size() == 1 && (d - d0) % every != 0) continue;
    for (double m : mant) {
      const double v = m * std::pow(10.0, d);
      if (v >= lo * (1 - 1e-9) && v <= hi * (1 + 1e-9)) out.push_back(v);
    }
  }
  return out;
}

std::vector<int> pow2Exponents(int e0, int e1, int step) {
  std::vector<int> out;
  if (e1 < e0) return out;
  if (step <= 0) step = e1 - e0 > 16 ? 5 : e1 - e0 > 8 ? 2 : 1;
  out.push_back(e0);
  // Interior multiples of step, at least step/2 (rounded up) from both ends.
  const int gap = std::max(1, (step + 1) / 2);
  for (int e = e0 + 1; e < e1; ++e)
    if (e % step == 0 && e - e0 >= gap && e1 - e >= gap) out.push_back(e);
  if (e1 > e0) out.push_back(e1);
  return out;
}

QCategoryAxis* addLogAxis(QChart* chart, QLogValueAxis* log, Qt::Alignment align,
                          const std::function<QString(double)>& label) {
  auto* cat = new QCategoryAxis;
  cat->setLabelsPosition(QCategoryAxis::AxisLabelsPositionOnValue);
  cat->setTitleText(log->titleText());
  cat->setGridLineVisible(true);
  // Labels at logTicks() (powers of two, at most ~12, for a base-2 axis), in log10 positions.
  auto labels = [label, base2 = log->base() == 2](double lo10, double hi10) {
    std::vector<std::pair<QString, double>> out;
    const double lo = std::pow(10.0, lo10), hi = std::pow(10.0, hi10);
    std::vector<double> ticks;
    if (base2) {
      const int e0 = static_cast<int>(std::ceil(std::log2(lo) - 1e-9));
      const int e1 = static_cast<int>(std::floor(std::log2(hi) + 1e-9));
      // At most ~12 labels, both ends labelled.
      for (int e : pow2Exponents(e0, e1, std::max(1, (e1 - e0 + 11) / 12))) ticks.push_back(std::exp2(e));
    } else {
      ticks = logTicks(lo, hi);
    }
    for (double v : ticks) out.emplace_back(label ? label(v) : tickNumber(v), std::log10(v));
    return out;
  };
  const double lo10 = std::log10(log->min()), hi10 = std::log10(log->max());
  cat->setStartValue(lo10);
  for (const auto& [text, v] : labels(lo10, hi10))
    // Category labels must be unique; a repeat (rounding) is left unlabelled.
    if (!cat->categoriesLabels().contains(text)) cat->append(text, v);
  cat->setRange(lo10, hi10);
  chart->addAxis(log, align);
  chart->addAxis(cat, align);
  log->setVisible(false);
  followRange(cat, labels);
  QObject::connect(log, &QLogValueAxis::rangeChanged, cat, [cat](qreal mn, qreal mx) {
    if (mn > 0 && mx > 0) cat->setRange(std::log10(mn), std::log10(mx));
  });
  return cat;
}


namespace {

// The labels of one followRange axis, rebuilt on zoom and (with a chart) on resize.
struct AxisLabeler : QObject {
  std::function<std::vector<std::pair<QString, double>>(double, double)> labels;
  QPointer<QChart> chart;  // set by fitLabelsToWidth
  bool busy = false;

  void relabel(QCategoryAxis* axis, double lo, double hi) {
    if (busy || !(hi > lo)) return;
    busy = true;
    std::vector<std::pair<QString, double>> in;
    for (const auto& [text, v] : labels(lo, hi))
      if (v >= lo - 1e-9 && v <= hi + 1e-9 &&
          std::none_of(in.begin(), in.end(), [&text = text](const auto& e) { return e.first == text; }))
        in.emplace_back(text, v);
    if (chart && chart->plotArea().width() > 1 && in.size() > 2) {
      // Greedy from the left: a label stays when it clears the last one kept and the last label.
      const QFontMetricsF fm(axis->labelsFont());
      const double px = chart->plotArea().width() / (hi - lo), pad = 2 * fm.averageCharWidth();
      auto clear = [&](const std::pair<QString, double>& a, const std::pair<QString, double>& b) {
        return (b.second - a.second) * px >= (fm.horizontalAdvance(a.first) + fm.horizontalAdvance(b.first)) / 2 + pad;
      };
      std::vector<std::pair<QString, double>> kept{in.front()};
      for (std::size_t i = 1; i + 1 < in.size(); ++i)
        if (clear(kept.back(), in[i]) && clear(in[i], in.back())) kept.push_back(in[i]);
      kept.push_back(in.back());
      // Qt Charts also elides every label of a category axis to the same width,
      // the axis width / (labels + 1) less twice its 4 px label padding
      // (HorizontalAxis::updateGeometry): while the widest does not fit, every
      // other inner label goes ("32 MiB" showed as "32 M..." in a narrow chart).
      const auto widest = [&] {
        double w = 0;
        for (const auto& k : kept) w = std::max(w, fm.horizontalAdvance(k.first));
        return w;
      };
      while (kept.size() > 2 && widest() > chart->plotArea().width() / static_cast<double>(kept.size() + 1) - 8) {
        std::vector<std::pair<QString, double>> fewer;
        for (std::size_t i = 0; i < kept.size(); ++i)
          if (i == 0 || i + 1 == kept.size() || i % 2 == 0) fewer.push_back(kept[i]);
        if (fewer.size() == kept.size()) break;
        kept = std::move(fewer);
      }
      in = std::move(kept);
    }
    for (const QString& l : axis->categoriesLabels()) axis->remove(l);
    axis->setStartValue(lo);
    for (const auto& [text, v] : in) axis->append(text, v);
    axis->setRange(lo, hi);
    busy = false;
  }
};

constexpr const char* kLabelerName = "scinAxisLabeler";

// Measured series' legend labels too wide to stand beside the plot
// ("measured ring (HGX H200 (stas00 all_reduce_bench)) − 18.2 µs harness" and
// "measured ring (HGX H200 (stas00 nccl-tests latency))" both elided to
// "measured ring (HGX H200 (st..." at 1366 px): each keeps what tells it apart,
// its algorithm and the words of its system after those all share
// ("measured ring · all_reduce_bench"; "measured ring" for one system), from the
// series' kMeasuredAlgorithm and kMeasuredSystem properties. The harness
// offset is in the chart's notes. Without those properties, the names stay.
QStringList compactMeasured(const QList<QAbstractSeries*>& series) {
  QStringList names, head, system;
  bool known = true;
  for (const QAbstractSeries* s : series) {
    names << s->name();
    head << QStringLiteral("measured ") + s->property(kMeasuredAlgorithm).toString();
    system << s->property(kMeasuredSystem).toString();
    known = known && s->property(kMeasuredAlgorithm).isValid() && s->property(kMeasuredSystem).isValid();
  }
  if (!known || names.isEmpty()) return names;
  QString common = system.front();
  for (const QString& s : system)
    while (!s.startsWith(common)) common.chop(1);
  if (std::all_of(system.begin(), system.end(), [&](const QString& s) { return s == common; })) return head;
  common = common.left(common.lastIndexOf(QLatin1Char(' ')) + 1);  // (whole words)
  QStringList out;
  for (qsizetype i = 0; i < names.size(); ++i) {
    QString rest = system[i].mid(common.size());
    while (rest.endsWith(QLatin1Char(')')) && rest.count(QLatin1Char(')')) > rest.count(QLatin1Char('('))) rest.chop(1);
    if (rest.startsWith(QLatin1Char('(')) && rest.endsWith(QLatin1Char(')'))) rest = rest.mid(1, rest.size() - 2);
    out << (rest.isEmpty() ? head[i] : head[i] + QStringLiteral(" · ") + rest);
  }
  return out;
}

}  // namespace

void followRange(QCategoryAxis* axis, std::function<std::vector<std::pair<QString, double>>(double, double)> labels) {
  auto* l = new AxisLabeler;
  l->setParent(axis);
  l->setObjectName(QLatin1String(kLabelerName));
  l->labels = std::move(labels);
  QObject::connect(axis, &QCategoryAxis::rangeChanged, l, [axis, l](qreal lo, qreal hi) { l->relabel(axis, lo, hi); });
}

void showDashInLegend(QChart* chart, QAbstractSeries* series) {
  const auto* xy = qobject_cast<QXYSeries*>(series);
  if (!xy || xy->pen().style() == Qt::SolidLine || xy->pen().style() == Qt::CustomDashLine) return;
  for (QLegendMarker* m : chart->legend()->markers(series)) m->setShape(QLegend::MarkerShapeFromSeries);
}

void fitLabelsToWidth(QChart* chart, QCategoryAxis* axis) {
  auto* l = static_cast<AxisLabeler*>(axis->findChild<QObject*>(QLatin1String(kLabelerName), Qt::FindDirectChildrenOnly));
  if (!l || !chart) return;
  l->chart = chart;
  QObject::connect(chart, &QChart::plotAreaChanged, l, [axis, l] { l->relabel(axis, axis->min(), axis->max()); });
  l->relabel(axis, axis->min(), axis->max());
}

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
  note_ = new QLabel;
  note_->setObjectName(QStringLiteral("chartNote"));
  note_->setWordWrap(true);
  note_->setStyleSheet(QStringLiteral("color:#8a4b00"));
  note_->setVisible(false);
  lay->addWidget(note_);
  chart_ = new QChart;
  chart_->setTitle(title);
  chart_->legend()->setAlignment(Qt::AlignRight);
  chart_->setAnimationOptions(QChart::NoAnimation);
  view_ = new ZoomChartView(chart_);
  view_->setRenderHint(QPainter::Antialiasing);
  view_->setRubberBand(QChartView::RectangleRubberBand);
  // Help goes to What's This: a tooltip would replace the hover read-out of the values.
  view_->setWhatsThis(tr("Drag: zoom to a rectangle · wheel: zoom · middle-drag or arrows: pan · "
                       "right click or 0: reset · click a legend entry to hide its series"));
  empty_ = new QLabel;
  empty_->setObjectName(QStringLiteral("emptyText"));
  empty_->setAlignment(Qt::AlignCenter);
  empty_->setWordWrap(true);
  empty_->setMargin(24);
  empty_->setStyleSheet(QStringLiteral("color:#555; background:white"));
  scroll_ = new QScrollArea;
  scroll_->setWidget(view_);
  scroll_->setWidgetResizable(true);
  scroll_->setFrameShape(QFrame::NoFrame);
  scroll_->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  stack_ = new QStackedWidget;
  stack_->addWidget(scroll_);
  stack_->addWidget(empty_);
  lay->addWidget(stack_, 1);
  view_->installEventFilter(this);
  auto* reset = new QPushButton(tr("Reset zoom"));
  connect(reset, &QPushButton::clicked, this, &ChartPanel::resetZoom);
  controls_->addStretch(1);
  controls_->addWidget(reset);
}

void ChartPanel::setResults(const ResultSet& rs) {
  rs_ = rs;
  // New results clear the last empty text; a chart's redraw sets its own (speedup, validation).
  setEmptyText({});
  redraw();
}

std::function<void(double)> ChartPanel::percentSteps(std::function<void(int)> step) {
  auto last = std::make_shared<std::atomic<int>>(-1);
  return [last, step = std::move(step)](double fraction) {
    const int pc = std::clamp(static_cast<int>(fraction * 50), 0, 50) * 2;
    if (last->exchange(pc) != pc) step(pc);
  };
}

void ChartPanel::setEmptyText(const QString& text) {
  emptyText_ = text;
  empty_->setText(text);
  stack_->setCurrentWidget(text.isEmpty() ? static_cast<QWidget*>(scroll_) : empty_);
}

void ChartPanel::setMinimumChartHeight(int px) { view_->setMinimumHeight(std::max(0, px)); }

int ChartPanel::minimumChartHeight() const { return view_->minimumHeight(); }

void ChartPanel::setNote(const QString& text) {
  note_->setText(text);
  note_->setVisible(!text.isEmpty());
}

QString ChartPanel::note() const { return note_->text(); }

QString ChartPanel::reportHtml() const {
  const QString n = note();
  if (n.isEmpty()) return {};
  // The note is rich text where it marks words up, else plain lines.
  const QString body = Qt::mightBeRichText(n) ? n : n.toHtmlEscaped().replace(QLatin1Char('\n'), QStringLiteral("<br>"));
  return QStringLiteral("<p class=\"note\">%1</p>").arg(body);
}

bool ChartPanel::hasData() const { return emptyText_.isEmpty() && hasDataIgnoringText(); }

bool ChartPanel::hasDataIgnoringText() const {
  for (QAbstractSeries* s : chart_->series()) {
    if (auto* xy = qobject_cast<QXYSeries*>(s); xy && xy->count() > 0) return true;
    if (auto* bar = qobject_cast<QAbstractBarSeries*>(s); bar && bar->count() > 0) return true;
  }
  return false;
}

void ChartPanel::resetZoom() { chart_->zoomReset(); }

void ChartPanel::unlist(QAbstractSeries* s) {
  unlisted_ << s;
  capLegend();
}

void ChartPanel::clearChart() {
  legendMore_ = nullptr;
  legendKeys_ = nullptr;
  unlisted_.clear();
  legendCap_ = 0;
  chart_->removeAllSeries();
  for (QAbstractAxis* a : chart_->axes()) {
    chart_->removeAxis(a);
    delete a;
  }
}

QStringList ChartPanel::seriesNames() const {
  QStringList out;
  for (QAbstractSeries* s : chart_->series())
    if (s != legendMore_ && s != legendKeys_) out << s->name();
  return out;
}

QStringList ChartPanel::legendTexts() const {
  // The entries capLegend() keeps (the markers' own visibility lags the layout).
  QStringList out;
  int i = 0;
  for (QLegendMarker* m : chart_->legend()->markers()) {
    if (m->series() == legendMore_ || m->series() == legendKeys_ || unlisted_.contains(m->series())) continue;
    if (m->series()->objectName() == QLatin1String("measured")) {
      out << m->label();  // never capped
      continue;
    }
    if (legendCap_ == 0 || i < legendCap_) out << m->label();
    ++i;
  }
  if (legendMore_ && legendCap_ > 0) out << legendMore_->name();
  if (legendKeys_)  // (markers(nullptr) lists every marker)
    for (QLegendMarker* m : chart_->legend()->markers(legendKeys_))
      if (m->isVisible()) out << m->label();
  return out;
}

bool ChartPanel::eventFilter(QObject* o, QEvent* e) {
  if (o == view_ && e->type() == QEvent::Resize && !chart_->series().isEmpty()) capLegend();
  return QWidget::eventFilter(o, e);
}

void ChartPanel::capLegend() {
  QLegend* legend = chart_->legend();
  // A legend beside the plot takes at most a third of a narrow chart (its entries elide; hover names a curve).
  if (legend->alignment() & (Qt::AlignLeft | Qt::AlignRight))
    legend->setMaximumWidth(std::max(160.0, view_->width() / 3.0));
  else
    legend->setMaximumWidth(QWIDGETSIZE_MAX);  // (a legend above or below the plot spans it: a tall breakdown's)
  // One entry per curve (bar charts list their sets: few, never capped).
  QList<QLegendMarker*> curves, pinned;
  for (QLegendMarker* m : legend->markers())
    if (unlisted_.contains(m->series()))
      m->setVisible(false);
    else if (m->series() == legendMore_ || m->series() == legendKeys_ || m->type() == QLegendMarker::LegendMarkerTypeBar)
      continue;
    else if (m->series()->objectName() == QLatin1String("measured"))
      pinned << m;  // measured points are always listed (after the curves they compare with)
    else
      curves << m;
  // Room for the entries beside the plot: the view's height less the title
  // and margins, one text line and spacing per entry.
  const QFontMetricsF fm(legend->font());
  // (A marker row is the text line plus ~9 px of padding in Qt Charts; err on the safe side.)
  const double entryH = fm.height() + 10;
  const double titleH = chart_->title().isEmpty() ? 0 : QFontMetricsF(chart_->titleFont()).height() * 2;
  const double room = std::max(0.0, view_->height() - titleH - 60);
  const int fit = std::max(6, static_cast<int>(room / entryH));
  for (QLegendMarker* m : pinned) m->setVisible(true);
  {
    QStringList full;
    QList<QAbstractSeries*> measured;
    bool wide = false;
    for (QLegendMarker* m : pinned) {
      full << m->series()->name();
      measured << m->series();
      // (A measured marker's icon, drawn as its series' marker, and padding take ~48 px of the legend's width.)
      wide = wide || fm.horizontalAdvance(full.back()) + 48 > legend->maximumWidth();
    }
    const QStringList shown = wide ? compactMeasured(measured) : full;
    double widest = 0;
    for (qsizetype i = 0; i < pinned.size(); ++i) {
      pinned[i]->setLabel(shown[i]);
      widest = std::max(widest, fm.horizontalAdvance(shown[i]) + 48);
    }
    // (Those may take up to 40% of the chart's width, so that most stand whole.)
    if (wide && (legend->alignment() & (Qt::AlignLeft | Qt::AlignRight)))
      legend->setMaximumWidth(std::max(legend->maximumWidth(), std::min(widest, view_->width() * 0.4)));
  }
  // Curves' names that the third would cut may take up to 40% as well where
  // every one then stands whole (the quant chart's "reference: sum in bf16 (=
  // nvls)"); where some would still elide (a sweep's "ring (gpus=2
  // bandwidth_GBps=300 ...)"), the plot keeps its room.
  // Where they would still be cut, a sweep's curves are named by their values ("ring (8, 1,
  // gb200-nvl72)", compactLabels) and an entry after them names the keys once: cut, the
  // values that tell curves apart were lost ("ring (gpus=8 leaves=1 preset=...").
  QString keys;
  if (legend->alignment() & (Qt::AlignLeft | Qt::AlignRight)) {
    QStringList names;
    double widest = 0;
    for (QLegendMarker* m : curves) {
      names << m->series()->name();
      widest = std::max(widest, fm.horizontalAdvance(names.back()) + 40);
    }
    if (widest > legend->maximumWidth() && widest <= view_->width() * 0.4) legend->setMaximumWidth(widest);
    CompactLabels shown{names, {}};
    if (widest > legend->maximumWidth())
      shown = compactLabels(names, QFontMetrics(legend->font()), 40, static_cast<int>(legend->maximumWidth()));
    for (qsizetype i = 0; i < curves.size(); ++i) curves[i]->setLabel(shown.labels[i]);
    keys = shown.keys;
    if (!keys.isEmpty()) {  // (the keys' entry whole, within 45% of the chart)
      const double keyW = fm.horizontalAdvance(QStringLiteral("(%1)").arg(keys)) + 48;
      legend->setMaximumWidth(std::max(legend->maximumWidth(), std::min(keyW, view_->width() * 0.45)));
    }
  } else {
    for (QLegendMarker* m : curves) m->setLabel(m->series()->name());
  }
  // A legend entry with no points: no line, and a blank legend icon.
  auto entryOnly = [&](const char* name) {
    auto* e = new QLineSeries;
    e->setObjectName(QString::fromLatin1(name));
    e->setPen(QPen(Qt::transparent));
    chart_->addSeries(e);
    for (QAbstractAxis* a : curves.front()->series()->attachedAxes()) e->attachAxis(a);
    return e;
  };
  if (!keys.isEmpty() && !legendKeys_ && !curves.isEmpty()) legendKeys_ = entryOnly("legendKeys");
  if (legendKeys_) {
    legendKeys_->setName(QStringLiteral("(%1)").arg(keys));
    for (QLegendMarker* m : legend->markers(legendKeys_)) m->setVisible(!keys.isEmpty());
  }
  const int n = static_cast<int>(curves.size());
  const int room_for_curves = std::max(3, fit - static_cast<int>(pinned.size()) - (keys.isEmpty() ? 0 : 1));
  legendCap_ = n > room_for_curves ? room_for_curves - 1 : 0;
  if (legendCap_ > 0 && !legendMore_) legendMore_ = entryOnly("legendMore");
  for (int i = 0; i < n; ++i) curves[i]->setVisible(legendCap_ == 0 || i < legendCap_);
  if (legendMore_) {
    const int more = n - legendCap_;
    // Short, so the legend (as wide as its longest curve name) does not cut it.
    legendMore_->setName(tr("+ %1 more: hover a curve").arg(more));
    for (QLegendMarker* m : legend->markers(legendMore_)) m->setVisible(legendCap_ > 0);
  }
}

void ChartPanel::setSeriesVisible(const QString& name, bool visible) {
  for (QAbstractSeries* s : chart_->series())
    if (s->name() == name) s->setVisible(visible);
  int i = 0;  // position among the listed curves (what the cap counts)
  for (QLegendMarker* m : chart_->legend()->markers()) {
    if (m->series() == legendMore_ || m->series() == legendKeys_ || unlisted_.contains(m->series())) continue;
    const bool pinned = m->series()->objectName() == QLatin1String("measured");
    const int at = pinned ? 0 : i++;
    if (m->series()->name() != name) continue;
    // A marker the cap leaves out stays out (hiding a series hides its marker: show it struck out).
    m->setVisible(legendCap_ == 0 || at < legendCap_);
    QFont f = m->font();
    f.setStrikeOut(!visible);
    m->setFont(f);
  }
}

void ChartPanel::connectLegend() {
  for (QLegendMarker* m : chart_->legend()->markers()) {
    if (m->type() == QLegendMarker::LegendMarkerTypeBar) continue;  // bar sets toggle nothing useful
    if (m->series() == legendMore_ || m->series() == legendKeys_) continue;
    connect(m, &QLegendMarker::clicked, this, [this, m] {
      setSeriesVisible(m->series()->name(), !m->series()->isVisible());
    });
  }
  capLegend();
}

void ChartPanel::showTip(const QString& text) { QToolTip::showText(QCursor::pos(), text); }

// (chart_panel.h.) Qt Charts cuts a label that is too long at its end, or to "...", so the
// part that tells names apart was lost: "scin (switch.isa.regulation=none switch.isa.waves=4)"
// becomes "scin (regulation=none waves=4)", then "scin (none, 4)" with keys "regulation, waves".
CompactLabels compactLabels(const QStringList& labels, const QFontMetrics& fm, int reserve, int room) {
  CompactLabels out{labels, {}};
  auto distinct = [n = labels.size()](const QStringList& l) { return QSet<QString>(l.begin(), l.end()).size() == n; };
  static const QRegularExpression path(QStringLiteral("([A-Za-z_][A-Za-z0-9_.]*)="));
  QStringList shortNames;
  for (const QString& c : labels) {
    QString t;
    qsizetype from = 0;
    for (auto it = path.globalMatch(c); it.hasNext();) {
      const auto m = it.next();
      t += c.mid(from, m.capturedStart(1) - from) +
           QString::fromStdString(analysis::short_axis_name(m.captured(1).toStdString())) + QLatin1Char('=');
      from = m.capturedEnd(0);
    }
    shortNames << t + c.mid(from);
  }
  if (distinct(shortNames)) out.labels = shortNames;
  int widest = 0;
  for (const QString& c : out.labels) widest = std::max(widest, fm.horizontalAdvance(c));
  if (widest + reserve <= room || out.labels.isEmpty()) return out;
  static const QRegularExpression keyed(QStringLiteral("^(\\S+) \\((.*)\\)$"));
  QStringList keys, values;
  for (const QString& c : out.labels) {
    const auto m = keyed.match(c);
    if (!m.hasMatch()) return out;
    QStringList k, v;
    for (const QString& kv : m.captured(2).split(QLatin1Char(' '), Qt::SkipEmptyParts)) {
      const qsizetype eq = kv.indexOf(QLatin1Char('='));
      if (eq <= 0) return out;
      k << kv.left(eq);
      v << kv.mid(eq + 1);
    }
    if (keys.isEmpty()) keys = k;
    if (k.isEmpty() || k != keys) return out;
    values << m.captured(1) + QStringLiteral(" (") + v.join(QStringLiteral(", ")) + QLatin1Char(')');
  }
  if (distinct(values)) out = {values, keys.join(QStringLiteral(", "))};
  return out;
}

}  // namespace scin::ui
