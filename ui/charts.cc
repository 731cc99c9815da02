#include "ui/charts.h"

#include <cmath>

#include <QBarCategoryAxis>
#include <QSet>
#include <QBarSet>
#include <QLabel>
#include <QLegendMarker>
#include <QLogValueAxis>
#include <QHorizontalStackedBarSeries>
#include <QValueAxis>

#include "analysis/table.h"
#include "engines/analytic/analytic.h"
#include "ui/format.h"

namespace scin::ui {
namespace {

QLogValueAxis* logAxis(double lo, double hi, const QString& title) {
  auto* ax = new QLogValueAxis;
  ax->setBase(10);
  ax->setLabelFormat(QStringLiteral("%g"));
  ax->setTitleText(title);
  ax->setMinorTickCount(8);
  if (lo > 0 && hi > 0) ax->setRange(std::pow(10, std::floor(std::log10(lo))), std::pow(10, std::ceil(std::log10(hi))));
  return ax;
}

QValueAxis* linearAxis(double lo, double hi, const QString& title) {
  auto* ax = new QValueAxis;
  ax->setTitleText(title);
  ax->setRange(std::min(0.0, lo), hi > 0 ? hi * 1.05 : 1);
  ax->applyNiceNumbers();
  ax->setLabelFormat(QStringLiteral("%g"));
  return ax;
}

QLabel* controlLabel(const QString& t) { return new QLabel(t); }

}  // namespace

// --- latency ------------------------------------------------------------

LatencyChart::LatencyChart(QWidget* parent)
    : SizeChart(QStringLiteral("latency"), tr("All-Reduce latency vs message size (lower is better)"), parent) {}

std::optional<double> LatencyChart::value(const Curve& c, std::size_t i) const {
  return c.points[i].time_ns / 1e3;
}

QAbstractAxis* LatencyChart::makeYAxis(double lo, double hi) const {
  return logAxis(lo, hi, tr("Latency (µs, log scale)"));
}

QString LatencyChart::valueText(double v) const { return tr("latency %1").arg(timeText(v * 1e3)); }

// The collective alone (less its harness's fixed cost), as the curves: the same comparison
// as the Validation tab and scin validate; the series name says when an offset was taken.
std::optional<double> LatencyChart::measuredValue(const RowError& row) const { return collective_us(row); }

// --- bandwidth ----------------------------------------------------------

BandwidthChart::BandwidthChart(QWidget* parent)
    : SizeChart(QStringLiteral("bandwidth"), tr("Bandwidth vs message size"), parent) {
  metric_ = new QComboBox;
  // Short names (the tab's controls share a laptop screen's width with the measured-run box);
  // each item's formula in its tooltip.
  const std::pair<QString, QString> items[] = {
      {tr("Bus bandwidth (busbw), GB/s"), tr("nccl-tests busbw = algbw × 2(N−1)/N, GB/s")},
      {tr("Algorithm bandwidth (algbw), GB/s"), tr("algbw = message size per rank / time, GB/s")},
      {tr("Bytes on the busiest link direction"), tr("The real bytes the busiest link direction carries")},
      {tr("Busiest-link bytes ÷ message size"), tr("Bytes on the busiest link direction ÷ message size per rank")}};
  for (const auto& [name, formula] : items) {
    metric_->addItem(name);
    metric_->setItemData(metric_->count() - 1, formula, Qt::ToolTipRole);
  }
  metric_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
  metric_->setMinimumContentsLength(24);
  metric_->setToolTip(tr("busbw (nccl-tests: algbw × 2(N−1)/N) assumes point-to-point algorithms, so NVLS and "
                         "SCIN can exceed the link rate; the real bytes on the busiest link show what each scheme "
                         "moves."));
  controls()->insertWidget(0, controlLabel(tr("Show")));
  controls()->insertWidget(1, metric_);
  connect(metric_, &QComboBox::currentIndexChanged, this, [this] { redraw(); });
}

void BandwidthChart::setMetric(Metric m) { metric_->setCurrentIndex(m); }

std::optional<double> BandwidthChart::value(const Curve& c, std::size_t i) const {
  const SimResult& r = c.points[i];
  switch (metric()) {
    case BusBw: return r.busbw_GBps;
    case AlgBw: return r.algbw_GBps;
    case LinkBytes: return r.max_link_bytes;
    case LinkBytesRatio: return r.bytes ? r.max_link_bytes / static_cast<double>(r.bytes) : 0.0;
  }
  return std::nullopt;
}

QAbstractAxis* BandwidthChart::makeYAxis(double lo, double hi) const {
  switch (metric()) {
    case BusBw: return linearAxis(lo, hi, tr("Bus bandwidth (GB/s)"));
    case AlgBw: return linearAxis(lo, hi, tr("Algorithm bandwidth (GB/s)"));
    case LinkBytes: {
      // Base 2: ticks on powers of two, labelled like the size axis (KiB, MiB).
      auto* ax = new QLogValueAxis;
      ax->setBase(2);
      ax->setTitleText(tr("Bytes on busiest link direction (bytes, log scale)"));
      if (lo > 0 && hi > 0) ax->setRange(std::exp2(std::floor(std::log2(lo))), std::exp2(std::ceil(std::log2(hi))));
      return ax;
    }
    case LinkBytesRatio: return linearAxis(0, hi, tr("Busiest-link bytes ÷ message size (ratio, ×)"));
  }
  return nullptr;
}

std::optional<double> BandwidthChart::measuredValue(const RowError& row) const {
  const MeasuredRow& r = row.row;
  const double us = collective_us(row);  // less the harness's fixed cost, as the latency
  if (!(us > 0)) return std::nullopt;
  // As the simulated points: algbw = size / time, busbw = algbw x 2(N-1)/N (nccl-tests).
  const double algbw_GBps = static_cast<double>(r.bytes) / (us * 1e3);
  switch (metric()) {
    case BusBw: return algbw_GBps * busbw_factor(r.gpus);
    case AlgBw: return algbw_GBps;
    default: return std::nullopt;  // measurements do not report link bytes
  }
}

QString BandwidthChart::valueText(double v) const {
  switch (metric()) {
    case BusBw: return tr("busbw %1").arg(bandwidthText(v));
    case AlgBw: return tr("algbw %1").arg(bandwidthText(v));
    case LinkBytes: return tr("busiest link %1").arg(bytesText(v));
    case LinkBytesRatio: return tr("busiest link %1 × message size").arg(v, 0, 'f', 3);
  }
  return {};
}

QString BandwidthChart::tickLabel(double v) const {
  return metric() == LinkBytes ? bytesText(v) : tickNumber(v);
}

QString BandwidthChart::csvColumn() const {
  switch (metric()) {
    case BusBw: return QStringLiteral("busbw_GBps");
    case AlgBw: return QStringLiteral("algbw_GBps");
    case LinkBytes: return QStringLiteral("max_link_bytes");
    case LinkBytesRatio: return QStringLiteral("max_link_bytes_per_message_byte");
  }
  return {};
}

// --- speedup ------------------------------------------------------------

SpeedupChart::SpeedupChart(QWidget* parent)
    : SizeChart(QStringLiteral("speedup"), tr("Speedup over a baseline (higher is better)"), parent) {
  baseline_ = new QComboBox;
  baseline_->setToolTip(tr("Speedup = baseline time ÷ algorithm time, at the same message size."));
  controls()->insertWidget(0, controlLabel(tr("Baseline")));
  controls()->insertWidget(1, baseline_);
  connect(baseline_, &QComboBox::activated, this, [this] { redraw(); });
}

void SpeedupChart::setBaseline(const QString& a) {
  if (baseline_->findText(a) < 0) baseline_->addItem(a);
  baseline_->setCurrentText(a);
  redraw();
}

QString SpeedupChart::baseline() const { return baseline_->currentText(); }

void SpeedupChart::redraw() {
  // Offer every algorithm of the current results as a baseline; keep the choice.
  QString keep = baseline_->currentText();
  if (keep.isEmpty()) keep = QStringLiteral("ring");
  {
    QSignalBlocker b(baseline_);
    baseline_->clear();
    // Every algorithm of any group: a multi-axis run compares within each group.
    for (const Curve& c : rs_.curves)
      if (baseline_->findText(QString::fromStdString(c.algorithm)) < 0)
        baseline_->addItem(QString::fromStdString(c.algorithm));
    if (baseline_->findText(keep) < 0 && baseline_->count() > 0) keep = baseline_->itemText(0);
    baseline_->setCurrentText(keep);
    // (Nothing to pick from where fewer than two algorithms are shown: an empty box was live.)
    baseline_->setEnabled(baseline_->count() > 1);
  }
  chart()->setTitle(tr("Speedup over %1 (baseline time ÷ time; higher is better)").arg(keep));
  SizeChart::redraw();
  // Never blank without a reason.
  if (rs_.curves.empty())
    setEmptyText(tr("Nothing to compare: no timing results are shown."));
  else if (baseline_->count() < 2)
    setEmptyText(tr("Speedup compares algorithms at the same settings, but the results shown hold only %1. "
                    "Sweep several algorithms, or plot another metric in the Analysis tab.")
                     .arg(baseline_->itemText(0)));
  else if (!hasDataIgnoringText())
    setEmptyText(tr("No result of %1 at the same message size and settings to compare with.").arg(keep));
  else
    setEmptyText({});
}

std::optional<double> SpeedupChart::value(const Curve& c, std::size_t i) const {
  const std::string base = baseline().toStdString();
  for (const Curve& b : rs_.curves) {
    if (b.algorithm != base || b.group != c.group) continue;
    for (const SimResult& r : b.points)
      if (r.bytes == c.points[i].bytes && c.points[i].time_ns > 0) return r.time_ns / c.points[i].time_ns;
  }
  return std::nullopt;
}

QAbstractAxis* SpeedupChart::makeYAxis(double lo, double hi) const {
  auto* ax = new QLogValueAxis;
  ax->setBase(2);
  ax->setLabelFormat(QStringLiteral("%gx"));  // printf format: ASCII only
  ax->setTitleText(tr("Speedup over %1 (×, log scale)").arg(baseline()));
  double l = std::pow(2, std::floor(std::log2(std::max(lo, 1e-3))));
  double h = std::pow(2, std::ceil(std::log2(std::max(hi, 1.0) * 1.05)));
  ax->setRange(std::min(l, 0.5), h);
  return ax;
}

QString SpeedupChart::valueText(double v) const {
  return tr("%1× faster than %2").arg(v, 0, 'f', 2).arg(baseline());
}

QString SpeedupChart::tickLabel(double v) const { return tickNumber(v) + QStringLiteral("×"); }

QString SpeedupChart::csvColumn() const {
  return QStringLiteral("speedup_over_%1").arg(baseline());
}

void SpeedupChart::extraSeries(double, double) {}

// --- breakdown ----------------------------------------------------------

BreakdownChart::BreakdownChart(QWidget* parent)
    : ChartPanel(QStringLiteral("breakdown"), tr("Latency breakdown"), parent) {
  size_ = new QComboBox;
  size_->setToolTip(tr("The message size whose latency is broken down."));
  controls()->insertWidget(0, new QLabel(tr("Message size")));
  controls()->insertWidget(1, size_);
  connect(size_, &QComboBox::activated, this, [this] {
    wanted_ = size_->currentData().toULongLong();
    redraw();
  });
  scale_ = new QComboBox;
  scale_->addItem(tr("Time (µs)"));
  scale_->addItem(tr("Share of each total (%)"));
  scale_->setToolTip(tr("Times on one axis, or each bar's terms as shares of its own latency: a short bar next "
                        "to a long one shows its terms. Each bar's total is in its label."));
  controls()->insertWidget(2, new QLabel(tr("Show")));
  controls()->insertWidget(3, scale_);
  connect(scale_, &QComboBox::activated, this, [this] { redraw(); });
  refit_ = new QTimer(this);
  refit_->setSingleShot(true);
  refit_->setInterval(120);
  connect(refit_, &QTimer::timeout, this, [this] {
    if (size_->count() > 0 && width() != fittedWidth_) redraw();
  });
}

void BreakdownChart::resizeEvent(QResizeEvent* e) {
  ChartPanel::resizeEvent(e);
  if (size_->count() > 0 && width() != fittedWidth_) refit_->start();
}

void BreakdownChart::setShares(bool on) {
  scale_->setCurrentIndex(on ? 1 : 0);
  redraw();
}

bool BreakdownChart::shares() const { return scale_->currentIndex() == 1; }

void BreakdownChart::setSize(std::uint64_t bytes) {
  wanted_ = bytes;
  redraw();
}

std::uint64_t BreakdownChart::size() const { return size_->currentData().toULongLong(); }

void BreakdownChart::redraw() {
  clearChart();
  setMinimumChartHeight(0);
  // Sizes on offer: those of the first curve.
  {
    QSignalBlocker b(size_);
    size_->clear();
    if (!rs_.curves.empty())
      for (const SimResult& r : rs_.curves.front().points)
        size_->addItem(sizeText(r.bytes), QVariant::fromValue<qulonglong>(r.bytes));
    int i = size_->findData(QVariant::fromValue<qulonglong>(wanted_));
    if (i < 0 && size_->count() > 0) {
      // Nearest available size.
      int best = 0;
      for (int k = 1; k < size_->count(); ++k)
        if (std::fabs(std::log2(size_->itemData(k).toDouble()) - std::log2(static_cast<double>(wanted_))) <
            std::fabs(std::log2(size_->itemData(best).toDouble()) - std::log2(static_cast<double>(wanted_))))
          best = k;
      i = best;
    }
    size_->setCurrentIndex(i);
  }
  // No sizes (a quant or inference run, whose note the chart shows): the
  // pickers have nothing to pick (they were an empty box and a live one).
  size_->setEnabled(size_->count() > 0);
  scale_->setEnabled(size_->count() > 0);
  if (size_->count() == 0) return;
  std::uint64_t bytes = size();
  const bool share = shares();
  chart()->setTitle(share ? tr("Latency breakdown at %1 per rank: each term's share of its algorithm's latency").arg(sizeText(bytes))
                          : tr("Latency breakdown at %1 per rank (stacked terms sum to the total)").arg(sizeText(bytes)));
  auto* series = new QHorizontalStackedBarSeries;
  QStringList cats;
  std::vector<const SimResult*> rows;
  // Bottom-up, so the first algorithm is the top bar.
  for (auto c = rs_.curves.rbegin(); c != rs_.curves.rend(); ++c)
    for (const SimResult& r : c->points)
      if (r.bytes == bytes) {
        cats << c->label;
        rows.push_back(&r);
      }
  const QStringList fullCats = cats;  // for the tooltips
  auto* y = new QBarCategoryAxis;
  const QFontMetrics labelFm(y->labelsFont());
  // Each bar's total (the terms sum to it) is in its label: on one time axis a 5 us bar beside a
  // 1.4 ms one is a few pixels, and its number is still read there.
  std::vector<double> totals(rows.size(), 0.0);
  QStringList totalText;
  int totalWidth = 0;
  for (std::size_t k = 0; k < rows.size(); ++k) {
    for (int t = 0; t < static_cast<int>(Term::Count); ++t) totals[k] += rows[k]->breakdown.ns[t] / 1e3;
    totalText << QStringLiteral(" · ") + timeText(totals[k] * 1e3);
    totalWidth = std::max(totalWidth, labelFm.horizontalAdvance(totalText.back()));
  }
  // What Qt Charts leaves the labels: its axes on one side take at most 0.4 of the width
  // beside the legend (QtCharts' CartesianChartLayout, maxAxisPortion), less the axis title
  // and padding; it cuts a wider label at its end, where the bar's total is.
  const bool tall = cats.size() > 16;  // (then the time axis goes above the plot)
  const int viewWidth = width() > 100 ? width() - 10 : 900;  // (the panel: its view may not be laid out yet)
  fittedWidth_ = width();
  // The terms' key goes above the plot too where the panel is narrow: beside it, it took a
  // third of the width the labels and bars share.
  const bool keyOnTop = tall || viewWidth < 640;
  int keyWidth = 0;
  if (!keyOnTop) {
    const QFontMetrics keyFm(chart()->font());
    for (int t = 0; t < static_cast<int>(Term::Count); ++t)
      keyWidth = std::max(keyWidth, keyFm.horizontalAdvance(QString::fromLatin1(to_string(static_cast<Term>(t)))) + 40);
  }
  const int room = std::max(80, static_cast<int>(0.4 * (viewWidth - std::min(keyWidth, viewWidth / 3) - 40)) - 40);
  const CompactLabels shown = compactLabels(cats, labelFm, totalWidth, room);
  cats = shown.labels;
  // A name still too wide loses its middle, not its end (the part that tells rows apart) nor its total.
  {
    QStringList elided;
    for (qsizetype k = 0; k < cats.size(); ++k)
      elided << labelFm.elidedText(cats[k], Qt::ElideMiddle, std::max(32, room - totalWidth)) + totalText[k];
    // (Categories must differ: where eliding makes two alike, the names stay whole.)
    const bool distinct = QSet<QString>(elided.begin(), elided.end()).size() == elided.size();
    for (qsizetype k = 0; k < cats.size(); ++k) cats[k] = distinct ? elided[k] : cats[k] + totalText[k];
  }
  if (!shown.keys.isEmpty())
    chart()->setTitle(chart()->title() + QStringLiteral("<br>") + tr("rows: algorithm (%1)").arg(shown.keys));
  static const QColor termColors[] = {QColor(0x7f, 0x7f, 0x7f), QColor(0xbc, 0xbd, 0x22), QColor(0x17, 0xbe, 0xcf),
                                      QColor(0x1f, 0x77, 0xb4), QColor(0x8c, 0x56, 0x4b), QColor(0xd6, 0x27, 0x28),
                                      QColor(0x2c, 0xa0, 0x2c), QColor(0x94, 0x67, 0xbd)};
  double top = 0;
  for (int t = 0; t < static_cast<int>(Term::Count); ++t) {
    auto* set = new QBarSet(QString::fromLatin1(to_string(static_cast<Term>(t))));
    set->setColor(termColors[t % 8]);
    bool any = false;
    for (std::size_t k = 0; k < rows.size(); ++k) {
      double us = rows[k]->breakdown.ns[t] / 1e3;
      *set << (share ? (totals[k] > 0 ? 100 * us / totals[k] : 0.0) : us);
      any |= us > 0;
    }
    if (!any) {
      delete set;
      continue;
    }
    const Term term = static_cast<Term>(t);
    connect(set, &QBarSet::hovered, this, [this, set, term, fullCats, totals, share](bool on, int idx) {
      if (!on) return;
      const double total = totals[static_cast<std::size_t>(idx)];
      const double us = share ? set->at(idx) / 100 * total : set->at(idx);
      showTip(QStringLiteral("<b>%1</b>: %2 = %3 of %4 (%5%)<br><i>%6</i>")
                  .arg(fullCats.value(idx), set->label(), timeText(us * 1e3), timeText(total * 1e3))
                  .arg(total > 0 ? 100 * us / total : 0.0, 0, 'f', 1)
                  .arg(QString::fromLatin1(describe(term)).toHtmlEscaped()));
    });
    series->append(set);
  }
  for (double t : totals) top = std::max(top, t);
  chart()->addSeries(series);
  // Horizontal bars: algorithm names read in full on the left.
  y->append(cats);
  y->setTitleText(shown.keys.isEmpty() ? tr("Algorithm") : tr("Algorithm (%1)").arg(shown.keys));
  auto* x = new QValueAxis;
  x->setRange(0, share ? 100 : top > 0 ? top * 1.08 : 1);
  if (share) x->setTickCount(6);
  else x->applyNiceNumbers();
  x->setLabelFormat(QStringLiteral("%g"));
  x->setTitleText(share ? tr("Share of the algorithm's latency (%)") : tr("Time (µs)"));
  // Many bars scroll: the time axis and the terms' key go on top, where they are seen first.
  chart()->addAxis(x, tall ? Qt::AlignTop : Qt::AlignBottom);
  {
    // (Above the plot the terms share one row: a point smaller, so that their names stand whole.)
    QLegend* key = chart()->legend();
    key->setAlignment(keyOnTop ? Qt::AlignTop : Qt::AlignRight);
    QFont f = chart()->font();
    if (keyOnTop) f.setPointSizeF(f.pointSizeF() - 1);
    key->setFont(f);
    // (Qt gives each entry of a row an equal share: "switch_latency" was cut; the bars'
    // tooltips name each term in full.)
    if (keyOnTop)
      for (QLegendMarker* m : key->markers(series))
        m->setLabel(QString(m->label()).replace(QStringLiteral("_latency"), QStringLiteral(" lat.")));
  }
  chart()->addAxis(y, Qt::AlignLeft);
  series->attachAxis(x);
  series->attachAxis(y);
  // Qt Charts gives each bar's label the bar's height less its padding and
  // cuts a label that does not fit to "..."; with many bars (a sweep of
  // presets x algorithms) every label was "...". So the chart asks for a row
  // per bar, plus the title, the time axis and the margins, and the tab
  // scrolls (and an exported figure grows) when it has less.
  setMinimumChartHeight(static_cast<int>(cats.size() + 1) * (QFontMetrics(y->labelsFont()).height() + 14) + 170);
  connectLegend();
}

double BreakdownChart::barValue(const QString& algorithm, const QString& term) const {
  for (QAbstractSeries* s : chart()->series())
    if (auto* bs = qobject_cast<QHorizontalStackedBarSeries*>(s)) {
      auto* x = qobject_cast<QBarCategoryAxis*>(chart()->axes(Qt::Vertical).value(0));
      int idx = -1;
      if (x)
        for (int k = 0; k < x->categories().size() && idx < 0; ++k) {
          const QString& c = x->categories()[k];
          if (c == algorithm || c.startsWith(algorithm + QStringLiteral(" · "))) idx = k;
        }
      if (idx < 0) return -1;
      for (QBarSet* set : bs->barSets())
        if (set->label() == term) return set->at(idx);
      return 0;
    }
  return -1;
}

QString BreakdownChart::csv() const {
  QString out = QStringLiteral("series,algorithm,bytes,total_ns");
  for (int t = 0; t < static_cast<int>(Term::Count); ++t)
    out += QStringLiteral(",%1_ns").arg(QString::fromLatin1(to_string(static_cast<Term>(t))));
  out += QLatin1Char('\n');
  std::uint64_t bytes = size();
  for (const Curve& c : rs_.curves)
    for (const SimResult& r : c.points) {
      if (r.bytes != bytes) continue;
      out += QStringLiteral("%1,%2,%3,%4").arg(c.label, QString::fromStdString(c.algorithm)).arg(r.bytes).arg(r.time_ns, 0, 'g', 10);
      for (int t = 0; t < static_cast<int>(Term::Count); ++t) out += QStringLiteral(",%1").arg(r.breakdown.ns[t], 0, 'g', 10);
      out += QLatin1Char('\n');
    }
  return out;
}

}  // namespace scin::ui
