#include "ui/size_chart.h"

#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <set>

#include <QLogValueAxis>
#include <QPen>
#include <QLegendMarker>
#include <QScatterSeries>
#include <QValueAxis>
#include <QXYSeries>

#include "ui/charts_measured.h"

#include "ui/figure.h"
#include "ui/format.h"

namespace scin::ui {

QCategoryAxis* makeSizeAxis(std::uint64_t min_bytes, std::uint64_t max_bytes, int step) {
  auto* ax = new QCategoryAxis;
  ax->setLabelsPosition(QCategoryAxis::AxisLabelsPositionOnValue);
  int lo = static_cast<int>(std::floor(std::log2(static_cast<double>(std::max<std::uint64_t>(1, min_bytes)))));
  int hi = static_cast<int>(std::ceil(std::log2(static_cast<double>(std::max<std::uint64_t>(1, max_bytes)))));
  if (hi <= lo) hi = lo + 1;
  // Labels on both ends and on every power of two between, or every 2nd/5th
  // one so that each whole KiB/MiB/GiB (exponents 10, 20, 30) is labelled:
  // 8 B, 1 KiB, 32 KiB, 1 MiB, 32 MiB, 256 MiB on an 8 B - 256 MiB axis.
  ax->setStartValue(lo);
  for (int e : pow2Exponents(lo, hi, step)) ax->append(sizeText(1ull << e), e);
  ax->setRange(lo, hi);
  ax->setTitleText(QObject::tr("Message size per rank (bytes, log scale)"));
  ax->setGridLineVisible(true);
  // Zoomed: the powers of two inside the range, denser as the range narrows.
  followRange(ax, [step](double lo, double hi) {
    std::vector<std::pair<QString, double>> out;
    const int e0 = std::max(0, static_cast<int>(std::ceil(lo - 1e-9)));
    const int e1 = std::min(62, static_cast<int>(std::floor(hi + 1e-9)));
    for (int e : pow2Exponents(e0, e1, e1 - e0 > 16 ? step : 0)) out.emplace_back(sizeText(1ull << e), e);
    return out;
  });
  return ax;
}

namespace {

/// An axis's kind, title and range, as SizeChart::Drawn records them.
void describeAxis(const QAbstractAxis* a, int* type, QString* title, double* lo, double* hi) {
  *type = static_cast<int>(a->type());
  *title = a->titleText();
  if (auto* l = qobject_cast<const QLogValueAxis*>(a)) {
    *type += 1000 * static_cast<int>(l->base());
    *lo = l->min();
    *hi = l->max();
  } else if (auto* v = qobject_cast<const QValueAxis*>(a)) {
    *lo = v->min();
    *hi = v->max();
  }
}

}  // namespace

QStringList SizeChart::resultNotes(std::size_t drawn) const {
  // Notes the results carry, once each: a simulated result's (e.g. NVLS on 2
  // GPUs, which NCCL does not run: the curve is the mechanism itself).
  QStringList notes;
  if (drawn < rs_.curves.size())
    notes << tr("Drawing the first %1 of %2 curves (one per algorithm and axis value): the Analysis tab plots "
                "them all, with filters and facets; Export CSV has every curve.")
                 .arg(drawn)
                 .arg(rs_.curves.size());
  std::map<std::string, std::set<std::string>> byNote;  // note -> algorithms
  for (const Curve& c : rs_.curves)
    for (const SimResult& r : c.points)
      if (r.extra.is_object() && r.extra.contains("note") && r.extra["note"].is_string())
        byNote[r.extra["note"].get<std::string>()].insert(r.algorithm);
  for (const auto& [note, algos] : byNote) {
    QStringList a;
    for (const auto& x : algos) a << QString::fromStdString(x);
    notes << tr("%1: %2").arg(a.join(QStringLiteral(", ")), QString::fromStdString(note));
  }
  return notes;
}

bool SizeChart::updateInPlace() {
  if (!drawn_ || (measured_ && measured_->chosen())) return false;
  const std::size_t drawn = std::min(rs_.curves.size(), kMaxCurves);
  const QList<QAbstractSeries*> series = chart()->series();
  if (drawn == 0 || static_cast<std::size_t>(series.size()) != drawn || drawn_->curves.size() != drawn) return false;
  Drawn now;
  now.min_b = std::numeric_limits<std::uint64_t>::max();
  double y_lo = std::numeric_limits<double>::max(), y_hi = -std::numeric_limits<double>::max();
  std::vector<QList<QPointF>> points(drawn);
  for (std::size_t ci = 0; ci < drawn; ++ci) {
    const Curve& c = rs_.curves[ci];
    now.curves.emplace_back(c.label, c.algorithm, c.group, c.overlay);
    for (std::size_t i = 0; i < c.points.size(); ++i) {
      auto v = value(c, i);
      if (!v || !std::isfinite(*v)) continue;
      const std::uint64_t b = c.points[i].bytes;
      points[ci].append(QPointF(std::log2(static_cast<double>(b)), *v));
      now.min_b = std::min(now.min_b, b);
      now.max_b = std::max(now.max_b, b);
      y_lo = std::min(y_lo, *v);
      y_hi = std::max(y_hi, *v);
    }
  }
  if (now.max_b == 0) return false;
  // The y axis these values would get, compared with the one shown.
  std::unique_ptr<QAbstractAxis> y(makeYAxis(y_lo, y_hi));
  describeAxis(y.get(), &now.y_type, &now.y_title, &now.y_min, &now.y_max);
  if (!(now == *drawn_)) return false;
  for (std::size_t ci = 0; ci < drawn; ++ci)
    if (auto* s = qobject_cast<QXYSeries*>(series[static_cast<qsizetype>(ci)])) s->replace(points[ci]);
    else return false;  // (not reached: every curve is a line series)
  setNote(resultNotes(drawn).join(QLatin1Char('\n')));
  return true;
}

void SizeChart::redraw() {
  if (updateInPlace()) return;
  drawn_.reset();
  clearChart();
  measuredNames_.clear();
  if (rs_.curves.empty()) return;
  std::uint64_t min_b = std::numeric_limits<std::uint64_t>::max(), max_b = 0;
  double y_lo = std::numeric_limits<double>::max(), y_hi = -std::numeric_limits<double>::max();
  std::map<QString, int> groupIndex;
  std::set<std::string> algorithms;
  for (const Curve& c : rs_.curves) algorithms.insert(c.algorithm);
  const std::size_t drawn = std::min(rs_.curves.size(), kMaxCurves);
  for (std::size_t ci = 0; ci < drawn; ++ci) {
    const Curve& c = rs_.curves[ci];
    auto* s = new QLineSeries;
    s->setName(c.label);
    QColor col = algorithmColor(QString::fromStdString(c.algorithm));
    int gi = groupIndex.emplace(c.group, static_cast<int>(groupIndex.size())).first->second;
    // Groups (axis values) differ in dash pattern; with one algorithm they also
    // take their own colour (not shades of one hue).
    Qt::PenStyle style = dashStyle(gi);
    if (algorithms.size() == 1 && !c.overlay) {
      col = paletteColor(gi);
      style = dashStyle(gi / 8);
    }
    QPen pen(col, 2);
    pen.setStyle(c.overlay ? Qt::DashLine : style);
    s->setPen(pen);
    s->setPointsVisible(true);
    for (std::size_t i = 0; i < c.points.size(); ++i) {
      auto v = value(c, i);
      if (!v || !std::isfinite(*v)) continue;
      std::uint64_t b = c.points[i].bytes;
      s->append(std::log2(static_cast<double>(b)), *v);
      min_b = std::min(min_b, b);
      max_b = std::max(max_b, b);
      y_lo = std::min(y_lo, *v);
      y_hi = std::max(y_hi, *v);
    }
    // Exact values of the nearest point on hover.
    connect(s, &QLineSeries::hovered, this, [this, s](const QPointF& p, bool on) {
      if (!on || s->count() == 0) return;
      int best = 0;
      for (int k = 1; k < s->count(); ++k)
        if (std::fabs(s->at(k).x() - p.x()) < std::fabs(s->at(best).x() - p.x())) best = k;
      showTip(pointTip(s->name(), static_cast<std::uint64_t>(std::llround(std::exp2(s->at(best).x())))));
    });
    chart()->addSeries(s);
    // (Past eight groups the colours repeat, dashed.)
    showDashInLegend(chart(), s);
  }
  // Measured points of the same fabric: markers, no lines, in the colour of
  // their algorithm; one marker shape per measured system.
  measuredNames_.clear();
  int outside = 0;
  const std::uint64_t run_lo = min_b, run_hi = max_b;
  if (const MeasuredChoice* m = measured_ ? measured_->chosen() : nullptr) {
    std::map<std::pair<std::string, std::string>, QScatterSeries*> byKey;
    std::map<std::string, int> systemIndex;
    for (const RowError& e : m->report.rows) {
      auto v = measuredValue(e);
      if (!v || !std::isfinite(*v) || *v <= 0) continue;
      // Only where the run has points: the overlay compares, it does not extend the chart.
      if (run_hi > 0 && (e.row.bytes < run_lo || e.row.bytes > run_hi)) {
        ++outside;
        continue;
      }
      const int si = systemIndex.emplace(e.row.system, static_cast<int>(systemIndex.size())).first->second;
      QScatterSeries*& s = byKey[{e.row.algorithm, e.row.system}];
      if (!s) {
        s = new QScatterSeries;
        s->setObjectName(QStringLiteral("measured"));
        s->setName(measuredSeriesName(e));
        s->setProperty(kMeasuredAlgorithm, QString::fromStdString(e.row.algorithm));
        s->setProperty(kMeasuredSystem, QString::fromStdString(e.row.system));
        static const QScatterSeries::MarkerShape shapes[] = {QScatterSeries::MarkerShapeCircle,
                                                             QScatterSeries::MarkerShapeRectangle,
                                                             QScatterSeries::MarkerShapeTriangle,
                                                             QScatterSeries::MarkerShapeStar};
        s->setMarkerShape(shapes[si % 4]);
        s->setMarkerSize(11);
        s->setColor(algorithmColor(QString::fromStdString(e.row.algorithm)));
        s->setBorderColor(QColor(0x20, 0x20, 0x20));
        connect(s, &QScatterSeries::hovered, this, [this, s](const QPointF& p, bool on) {
          if (on) showTip(measuredTip(s->name(), static_cast<std::uint64_t>(std::llround(std::exp2(p.x())))));
        });
        chart()->addSeries(s);
        // Its legend entry shows its marker (two systems of one algorithm share a colour:
        // their square swatches were alike).
        for (QLegendMarker* m : chart()->legend()->markers(s)) m->setShape(QLegend::MarkerShapeFromSeries);
        measuredNames_ << s->name();
      }
      s->append(std::log2(static_cast<double>(e.row.bytes)), *v);
      min_b = std::min(min_b, e.row.bytes);
      max_b = std::max(max_b, e.row.bytes);
      y_lo = std::min(y_lo, *v);
      y_hi = std::max(y_hi, *v);
    }
  }
  // Notes: the results' own, then measured rows modelled as what NCCL runs instead and
  // the harness offsets measured points are drawn less.
  QStringList notes = resultNotes(drawn);
  if (const MeasuredChoice* m = measured_ ? measured_->chosen() : nullptr) {
    std::map<std::pair<std::string, std::string>, int> rows;  // (algorithm, note) -> rows drawn
    std::map<std::string, double> less;  // system -> harness offset its drawn points are less
    for (const RowError& e : m->report.rows) {
      if (!measuredValue(e) || (run_hi > 0 && (e.row.bytes < run_lo || e.row.bytes > run_hi))) continue;
      if (e.modelled && !e.note.empty()) ++rows[{e.row.algorithm, e.note}];
      if (e.offset_us > 0) less[e.row.system] = e.offset_us;
    }
    for (const auto& [key, n] : rows)
      notes << tr("%n measured %1 row(s) %2", "", n).arg(QString::fromStdString(key.first), QString::fromStdString(key.second));
    for (const auto& [sys, us] : less)
      notes << tr("Measured points of %1 are drawn less its harness's fixed cost %2 (fitted; the same comparison "
                  "as the Validation tab): the curves are the collective alone.")
                   .arg(QString::fromStdString(sys), timeText(us * 1e3));
  }
  if (measured_ && outside > 0)
    notes << tr("%1 measured point(s) outside the run's sizes (%2 – %3) are not drawn.")
                 .arg(outside)
                 .arg(sizeText(run_lo), sizeText(run_hi));
  setNote(notes.join(QLatin1Char('\n')));
  if (max_b == 0) return;
  double x_lo = std::log2(static_cast<double>(min_b)), x_hi = std::log2(static_cast<double>(max_b));
  extraSeries(x_lo, x_hi);
  QCategoryAxis* x = makeSizeAxis(min_b, max_b);
  QAbstractAxis* y = makeYAxis(y_lo, y_hi);
  chart()->addAxis(x, Qt::AlignBottom);
  fitLabelsToWidth(chart(), x);
  if (auto* log = qobject_cast<QLogValueAxis*>(y))
    addLogAxis(chart(), log, Qt::AlignLeft, [this](double v) { return tickLabel(v); });
  else
    chart()->addAxis(y, Qt::AlignLeft);
  for (QAbstractSeries* s : chart()->series()) {
    s->attachAxis(x);
    s->attachAxis(y);
  }
  connectLegend();
  // What updateInPlace() may update: the curves alone (no measured markers,
  // no extra series, no legend summary entry), on these axes.
  if (measuredNames_.isEmpty() && static_cast<std::size_t>(chart()->series().size()) == drawn) {
    Drawn d;
    for (std::size_t ci = 0; ci < drawn; ++ci) {
      const Curve& c = rs_.curves[ci];
      d.curves.emplace_back(c.label, c.algorithm, c.group, c.overlay);
    }
    d.min_b = min_b;
    d.max_b = max_b;
    describeAxis(y, &d.y_type, &d.y_title, &d.y_min, &d.y_max);
    drawn_ = std::move(d);
  }
}

void SizeChart::setMeasured(MeasuredOverlay* overlay) {
  measured_ = overlay;
  controls()->insertWidget(controls()->count() - 2, overlay->makeCombo());
  connect(overlay, &MeasuredOverlay::changed, this, [this] { redraw(); });
}

QStringList SizeChart::measuredSeriesNames() const { return measuredNames_; }

QString SizeChart::pointTip(const QString& name, std::uint64_t bytes) const {
  for (const Curve& c : rs_.curves) {
    if (c.label != name || c.points.empty()) continue;
    // The point at `bytes`, or the nearest in log(size).
    const SimResult* best = &c.points.front();
    for (const SimResult& r : c.points)
      if (std::fabs(std::log2(static_cast<double>(r.bytes)) - std::log2(static_cast<double>(bytes))) <
          std::fabs(std::log2(static_cast<double>(best->bytes)) - std::log2(static_cast<double>(bytes))))
        best = &r;
    const SimResult& r = *best;
    const std::size_t i = static_cast<std::size_t>(best - c.points.data());
    const std::optional<double> v = value(c, i);
    QString tip = QStringLiteral("<b>%1</b> at %2 (%3 B)").arg(name.toHtmlEscaped(), sizeText(r.bytes)).arg(r.bytes);
    if (v) tip += QStringLiteral("<br>") + valueText(*v);
    tip += tr("<br>time %1 · algbw %2 · busbw %3%4")
               .arg(timeText(r.time_ns), bandwidthText(r.algbw_GBps), bandwidthText(r.busbw_GBps),
                    r.variant.empty() ? QString() : tr(" · %1").arg(QString::fromStdString(r.variant)));
    if (r.extra.is_object() && r.extra.contains("note") && r.extra["note"].is_string())
      tip += QStringLiteral("<br><i>%1</i>").arg(QString::fromStdString(r.extra["note"].get<std::string>()).toHtmlEscaped());
    return tip;
  }
  return {};
}

QString SizeChart::measuredSeriesName(const RowError& e) const {
  const QString base = tr("measured %1 (%2)").arg(QString::fromStdString(e.row.algorithm), QString::fromStdString(e.row.system));
  // A harness's fixed cost (torch's launch and synchronisation around the collective) is not
  // the fabric's: its points are drawn less it, and the name says so.
  return e.offset_us > 0 ? tr("%1 − %2 harness").arg(base, timeText(e.offset_us * 1e3)) : base;
}

QString SizeChart::measuredTip(const QString& name, std::uint64_t bytes) const {
  const MeasuredChoice* m = measured_ ? measured_->chosen() : nullptr;
  if (!m) return {};
  for (const RowError& r : m->report.rows) {
    if (r.row.bytes != bytes || name != measuredSeriesName(r)) continue;
    const std::optional<double> v = measuredValue(r);
    QString tip = QStringLiteral("<b>%1</b> at %2 (%3 B)").arg(name.toHtmlEscaped(), sizeText(r.row.bytes)).arg(r.row.bytes);
    if (v) tip += QStringLiteral("<br>") + valueText(*v);
    tip += tr("<br>measured %1").arg(timeText(r.row.measured_us * 1e3));
    if (r.offset_us > 0)
      tip += tr(", drawn less its harness's fixed cost %1 (fitted, docs/model.md section 9)").arg(timeText(r.offset_us * 1e3));
    if (r.modelled && r.offset_us > 0)
      tip += tr("<br>model %1 + harness %2 = %3 (%4%5 %)")
                 .arg(timeText((r.model_us - r.offset_us) * 1e3), timeText(r.offset_us * 1e3), timeText(r.model_us * 1e3),
                      r.error >= 0 ? QStringLiteral("+") : QString())
                 .arg(r.error * 100, 0, 'f', 1);
    else if (r.modelled)
      tip += tr(" · model %1 (%2%3 %)")
                 .arg(timeText(r.model_us * 1e3), r.error >= 0 ? QStringLiteral("+") : QString())
                 .arg(r.error * 100, 0, 'f', 1);
    if (r.modelled && !r.note.empty())
      tip += QStringLiteral("<br>") + tr("model: %1").arg(QString::fromStdString(r.note).toHtmlEscaped());
    tip += QStringLiteral("<br><i>%1</i>").arg(QString::fromStdString(r.row.source).toHtmlEscaped());
    return tip;
  }
  return {};
}

std::vector<std::pair<double, double>> SizeChart::seriesData(const QString& name) const {
  std::vector<std::pair<double, double>> out;
  for (QAbstractSeries* a : chart()->series())
    if (a->name() == name)
      if (auto* s = qobject_cast<QXYSeries*>(a))
        for (const QPointF& p : s->points()) out.emplace_back(std::exp2(p.x()), p.y());
  return out;
}

QString SizeChart::csv() const {
  QString out = QStringLiteral("series,algorithm,bytes,%1\n").arg(csvColumn());
  for (const Curve& c : rs_.curves)
    for (std::size_t i = 0; i < c.points.size(); ++i)
      if (auto v = value(c, i))
        out += QStringLiteral("%1,%2,%3,%4\n")
                   .arg(c.label, QString::fromStdString(c.algorithm))
                   .arg(c.points[i].bytes)
                   .arg(*v, 0, 'g', 10);
  return out;
}

}  // namespace scin::ui
