#include "ui/validation_view.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include <QHeaderView>
#include <QLegendMarker>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QScatterSeries>
#include <QSplitter>
#include <QScrollArea>
#include <QStackedWidget>
#include <QHBoxLayout>
#include <QTextDocument>
#include <QVBoxLayout>
#include <QValueAxis>

#include <fmt/format.h>

#include "base/csv.h"
#include "ui/charts_measured.h"
#include "ui/figure.h"
#include "ui/format.h"
#include "ui/size_chart.h"

namespace scin::ui {
namespace {

QString regimeText(const std::string& r) {
  if (r == "small") return QObject::tr("≤ 64 KiB");
  if (r == "mid") return QObject::tr("64 KiB – 64 MiB");
  if (r == "large") return QObject::tr("≥ 64 MiB");
  return QString::fromStdString(r);
}

// The modelled rows of a report, by algorithm (sorted by size within each).
std::map<std::string, std::vector<const RowError*>> byAlgorithm(const ValidationReport& rep) {
  std::map<std::string, std::vector<const RowError*>> out;
  for (const RowError& e : rep.rows)
    if (e.modelled && e.row.measured_us > 0) out[e.row.algorithm].push_back(&e);
  for (auto& [a, v] : out)
    std::stable_sort(v.begin(), v.end(), [](const RowError* x, const RowError* y) { return x->row.bytes < y->row.bytes; });
  return out;
}

QScatterSeries* markers(const QString& name, const QColor& c, QScatterSeries::MarkerShape shape) {
  auto* s = new QScatterSeries;
  s->setName(name);
  s->setMarkerShape(shape);
  s->setMarkerSize(10);
  s->setColor(c);
  s->setBorderColor(QColor(0x20, 0x20, 0x20));
  return s;
}

}  // namespace

ValidationView::ValidationView(MeasuredOverlay* overlay, QWidget* parent)
    : ChartPanel(QStringLiteral("validation"), tr("Model vs measured"), parent), overlay_(overlay) {
  controls()->insertWidget(0, overlay_->makeCombo());
  model_ = new QLabel;
  model_->setObjectName(QStringLiteral("validationModel"));
  model_->setStyleSheet(QStringLiteral("color:#555"));

  errorChart_ = new QChart;
  errorChart_->setTitle(tr("Model error (below 0: model too fast)"));
  errorChart_->legend()->setAlignment(Qt::AlignBottom);
  errorChart_->setAnimationOptions(QChart::NoAnimation);
  errorView_ = new QChartView(errorChart_);
  errorView_->setRenderHint(QPainter::Antialiasing);
  errorView_->setRubberBand(QChartView::RectangleRubberBand);
  chart()->legend()->setAlignment(Qt::AlignBottom);
  stats_ = new QTableWidget;
  stats_->setObjectName(QStringLiteral("validationStats"));
  stats_->setColumnCount(4);
  stats_->setHorizontalHeaderLabels({tr("rows"), tr("MAPE %"), tr("bias %"), tr("max |error| %")});
  stats_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  stats_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  stats_->verticalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  stats_->setToolTip(tr("MAPE: mean |model ÷ measured − 1|; bias: its signed mean (negative: the model is too fast). "
                        "The same numbers as scin validate."));
  // The two charts side by side, the table under them.
  auto* lay = static_cast<QVBoxLayout*>(layout());
  QWidget* stack = view()->parentWidget();
  while (stack && stack->parentWidget() != this) stack = stack->parentWidget();
  const int at = lay->indexOf(stack);
  lay->removeWidget(stack);
  auto* split = new QSplitter(Qt::Horizontal);
  split->addWidget(stack);
  split->addWidget(errorView_);
  // Both charts as wide: the error chart's size labels and axis title must not be clipped.
  split->setStretchFactor(0, 1);
  split->setStretchFactor(1, 1);
  split->setSizes({1000, 1000});
  // Room right of the plots for the last size label ("128 MiB"), centred on the axis' end.
  for (QChart* c : {chart(), errorChart_}) {
    QMargins m = c->margins();
    m.setRight(std::max(m.right(), 28));
    c->setMargins(m);
  }
  stats_->setMaximumHeight(190);
  stats_->setMinimumHeight(60);  // scrolls in a short window
  stats_->setSizeAdjustPolicy(QAbstractScrollArea::AdjustToContents);
  how_ = new QLabel(tr("error = model ÷ measured − 1 (negative: the model is too fast); MAPE = mean |error|; "
                            "bias = mean error. Rows are the measured run's rows of the same GPU count whose system "
                            "names the run's accelerator or preset; the same numbers as <tt>scin validate</tt> on them. "
                            "Measured points are also drawn on the Latency and Bandwidth tabs."));
  how_->setWordWrap(true);
  how_->setAlignment(Qt::AlignLeft | Qt::AlignTop);
  how_->setStyleSheet(QStringLiteral("color:#555"));
  model_->setWordWrap(true);
  // The words scroll rather than take the charts' height: at 1366x768 the model's notes
  // ran to nine lines and left the charts too short for their y axis titles.
  words_ = new QWidget;
  QWidget* words = words_;
  auto* wordsLay = new QVBoxLayout(words);
  wordsLay->setContentsMargins(0, 0, 0, 0);
  wordsLay->addWidget(model_);
  wordsLay->addWidget(how_, 1);
  auto* wordsScroll = new QScrollArea;
  wordsScroll->setObjectName(QStringLiteral("validationWords"));
  wordsScroll->setWidget(words);
  wordsScroll->setWidgetResizable(true);
  wordsScroll->setFrameShape(QFrame::NoFrame);
  wordsScroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  auto* below = new QWidget;
  auto* belowLay = new QHBoxLayout(below);
  belowLay->setContentsMargins(0, 0, 0, 0);
  belowLay->addWidget(stats_, 0, Qt::AlignTop);
  belowLay->addWidget(wordsScroll, 1);
  // Charts above, table and words below, the border draggable; the charts take what the
  // window has beyond the table's rows.
  vsplit_ = new QSplitter(Qt::Vertical);
  vsplit_->setObjectName(QStringLiteral("validationSplit"));
  vsplit_->addWidget(split);
  vsplit_->addWidget(below);
  vsplit_->setStretchFactor(0, 1);
  vsplit_->setStretchFactor(1, 0);
  vsplit_->setCollapsible(0, false);
  connect(vsplit_, &QSplitter::splitterMoved, this, [this] { userSized_ = true; });
  lay->insertWidget(at, vsplit_, 1);
  connect(overlay_, &MeasuredOverlay::changed, this, [this] { redraw(); });
  redraw();
}

QStringList ValidationView::errorSeriesNames() const {
  QStringList out;
  for (QAbstractSeries* s : errorChart_->series()) out << s->name();
  return out;
}

bool ValidationView::hasData() const { return emptyText().isEmpty() && overlay_->chosen() != nullptr; }

void ValidationView::redraw() {
  clearChart();
  errorChart_->removeAllSeries();
  for (QAbstractAxis* a : errorChart_->axes()) {
    errorChart_->removeAxis(a);
    delete a;
  }
  stats_->setRowCount(0);
  const MeasuredMatch& m = overlay_->match();
  const MeasuredChoice* c = overlay_->chosen();
  QString model;
  if (m.run_id > 0 && c)
    model = m.presetAxis ? tr("model: run #%1 at the preset these rows name, %2 (its sweep varies the preset), "
                              "analytic engine")
                               .arg(m.run_id)
                               .arg(c->fabric)
                         : tr("model: run #%1's base configuration, %2, analytic engine").arg(m.run_id).arg(c->fabric);
  if (c && !c->offsets.empty()) {
    QStringList o;
    for (const auto& [sys, us] : c->offsets) o << tr("%1 µs for %2").arg(us, 0, 'f', 1).arg(QString::fromStdString(sys));
    model += tr(", plus the recorded harness offsets its rows take (%1)").arg(o.join(QStringLiteral("; ")));
  }
  model_->setText(model);
  model_->setWordWrap(true);
  QString why;
  if (m.run_id == 0)
    why = tr("Select a stored simulated run in the Runs dock: its model is compared with measured runs of the "
             "same fabric (import nccl-tests logs or CSV with File > Import measurements, or scin import LOG --db FILE).");
  else if (!m.error.isEmpty())
    why = tr("No comparison: %1").arg(m.error);
  else if (m.choices.empty())
    why = m.presetAxis
              ? tr("No measured run in this database matches %1: import measurements of one of those systems with "
                   "File > Import measurements or scin import LOG --db FILE (rows of the preset's GPU count whose "
                   "system names its accelerator or the preset).")
                    .arg(m.fabric)
              : tr("No measured run in this database matches %1: import measurements of that system with "
                   "File > Import measurements or scin import LOG --db FILE (rows of %2 GPUs whose system names the "
                   "accelerator or preset).")
                    .arg(m.fabric)
                    .arg(m.gpus);
  else if (!c)
    why = tr("Pick a measured run above to compare with.");
  errorView_->setVisible(why.isEmpty());
  stats_->setVisible(why.isEmpty());
  how_->setVisible(why.isEmpty());
  setEmptyText(why);
  if (!c) return;

  const auto algos = byAlgorithm(c->report);
  if (algos.empty()) {
    setEmptyText(tr("The model cannot evaluate any row of %1 (%2).")
                     .arg(c->label(), c->report.rows.empty() ? QString() : QString::fromStdString(c->report.rows.front().why)));
    errorView_->setVisible(false);
    stats_->setVisible(false);
    how_->setVisible(false);
    return;
  }
  // Rows the model evaluates as what NCCL runs instead (e.g. ring for NVLS on 2 GPUs) say so.
  std::map<std::string, int> notes;
  for (const RowError& e : c->report.rows)
    if (e.modelled && !e.note.empty()) ++notes[e.note];
  for (const auto& [note, rows] : notes)
    model += (model.isEmpty() ? QString() : QStringLiteral("\n")) +
             tr("%n measured row(s) %1", "", rows).arg(QString::fromStdString(note));
  model_->setText(model);
  chart()->setTitle(tr("Model (lines) vs measured (markers)"));
  std::vector<QAbstractSeries*> modelSeries;
  std::uint64_t min_b = std::numeric_limits<std::uint64_t>::max(), max_b = 0;
  double t_lo = std::numeric_limits<double>::max(), t_hi = 0, e_lo = 0, e_hi = 0;
  for (const auto& [algo, rows] : algos) {
    const QString a = QString::fromStdString(algo);
    const QColor col = algorithmColor(a);
    // The model as a line (one value per size), the measurements as markers.
    // One model line per measured system: a harness offset moves its rows' model.
    std::map<std::string, std::map<std::uint64_t, double>> modelAt;
    for (const RowError* e : rows) modelAt[e->row.system].emplace(e->row.bytes, e->model_us);
    int si = 0;
    for (const auto& [sys, at] : modelAt) {
      auto* model = new QLineSeries;
      model->setName(modelAt.size() > 1 ? tr("model %1 (%2)").arg(a, QString::fromStdString(sys)) : tr("model %1").arg(a));
      QPen pen(col, 2);
      pen.setStyle(dashStyle(si++));
      model->setPen(pen);
      for (const auto& [b, us] : at) model->append(std::log2(static_cast<double>(b)), us);
      chart()->addSeries(model);
      modelSeries.push_back(model);
    }
    // The legends name the algorithms alone (the titles say lines are the model,
    // markers the measurements, and what the error is): "measured nccl-sym" was
    // elided to "measure..." in a half-width chart at 1366 px, every entry alike.
    auto* meas = markers(a, col, QScatterSeries::MarkerShapeCircle);
    // Markers only: rows of several systems at one size would zigzag as a line.
    auto* err = markers(a, col, QScatterSeries::MarkerShapeCircle);
    for (const RowError* e : rows) {
      const double x = std::log2(static_cast<double>(e->row.bytes));
      meas->append(x, e->row.measured_us);
      err->append(x, e->error * 100);
      min_b = std::min(min_b, e->row.bytes);
      max_b = std::max(max_b, e->row.bytes);
      t_lo = std::min({t_lo, e->row.measured_us, e->model_us});
      t_hi = std::max({t_hi, e->row.measured_us, e->model_us});
      e_lo = std::min(e_lo, e->error * 100);
      e_hi = std::max(e_hi, e->error * 100);
    }
    // Hover: the row's numbers and its note (markers of one size and algorithm
    // differ by system: the nearest measured time picks the row).
    for (QScatterSeries* sc : {meas, err}) {
      const bool isError = sc == err;
      connect(sc, &QScatterSeries::hovered, this, [this, a, rows, isError](const QPointF& p, bool on) {
        if (!on) return;
        const RowError* best = nullptr;
        for (const RowError* e : rows)
          if (std::fabs(std::log2(static_cast<double>(e->row.bytes)) - p.x()) < 1e-9 &&
              (!best || std::fabs((isError ? e->error * 100 : e->row.measured_us) - p.y()) <
                            std::fabs((isError ? best->error * 100 : best->row.measured_us) - p.y())))
            best = e;
        if (best) showTip(rowTip(a, best->row.bytes, best->row.measured_us));
      });
    }
    chart()->addSeries(meas);
    errorChart_->addSeries(err);
  }
  // Zero error: where the model meets the measurement.
  auto* zero = new QLineSeries;
  zero->setName(tr("0 % (exact)"));
  zero->setPen(QPen(QColor(0x70, 0x70, 0x70), 1, Qt::DashLine));
  zero->append(std::log2(static_cast<double>(min_b)), 0);
  zero->append(std::log2(static_cast<double>(max_b)), 0);
  errorChart_->addSeries(zero);

  // Half-width charts: a label every 1024x (8 B, 1 KiB, 1 MiB, 1 GiB) and both ends.
  QCategoryAxis* x = makeSizeAxis(min_b, max_b, 10);
  auto* y = new QLogValueAxis;
  y->setBase(10);
  y->setTitleText(tr("Latency (µs, log scale)"));
  y->setRange(std::pow(10, std::floor(std::log10(t_lo))), std::pow(10, std::ceil(std::log10(t_hi))));
  chart()->addAxis(x, Qt::AlignBottom);
  addLogAxis(chart(), y, Qt::AlignLeft);
  for (QAbstractSeries* s : chart()->series()) {
    s->attachAxis(x);
    s->attachAxis(y);
  }
  QCategoryAxis* ex = makeSizeAxis(min_b, max_b, 10);
  x->setTitleText(tr("Message size (log scale)"));
  ex->setTitleText(x->titleText());
  auto* ey = new QValueAxis;
  ey->setTitleText(tr("Model ÷ measured − 1 (%)"));
  const double span = std::max(5.0, std::max(-e_lo, e_hi) * 1.1);
  ey->setRange(std::min(-5.0, e_lo * 1.1), std::max(5.0, e_hi < 0 ? span * 0.1 : e_hi * 1.1));
  ey->applyNiceNumbers();
  ey->setLabelFormat(QStringLiteral("%g"));
  errorChart_->addAxis(ex, Qt::AlignBottom);
  errorChart_->addAxis(ey, Qt::AlignLeft);
  for (QAbstractSeries* s : errorChart_->series()) {
    s->attachAxis(ex);
    s->attachAxis(ey);
  }
  // Half-width charts (or full-width in a report): the labels that fit at the
  // plot's width, both ends always (an end 7 octaves past 1 MiB was left
  // unlabelled whatever the width, lest Qt elide it in a narrow chart).
  fitLabelsToWidth(chart(), x);
  fitLabelsToWidth(errorChart_, ex);
  connectLegend();
  // The legend lists the algorithms once (the measured markers); a line is the model of its colour.
  for (QAbstractSeries* s : modelSeries) unlist(s);
  for (QLegendMarker* lm : errorChart_->legend()->markers(zero)) lm->setVisible(false);
  fillStats();
}

QString ValidationView::rowTip(const QString& algorithm, std::uint64_t bytes, double measured_us) const {
  const MeasuredChoice* c = overlay_->chosen();
  if (!c) return {};
  for (const RowError& e : c->report.rows) {
    if (!e.modelled || e.row.bytes != bytes || e.row.measured_us != measured_us ||
        QString::fromStdString(e.row.algorithm) != algorithm)
      continue;
    QString tip = QStringLiteral("<b>%1</b> at %2 (%3 B), %4 GPUs<br>%5")
                      .arg(algorithm.toHtmlEscaped(), sizeText(bytes))
                      .arg(bytes)
                      .arg(e.row.gpus)
                      .arg(QString::fromStdString(e.row.system).toHtmlEscaped());
    tip += tr("<br>measured %1 · model %2 (%3%4 %)")
               .arg(timeText(e.row.measured_us * 1e3), timeText(e.model_us * 1e3), e.error >= 0 ? QStringLiteral("+") : QString())
               .arg(e.error * 100, 0, 'f', 1);
    if (!e.note.empty()) tip += QStringLiteral("<br>") + tr("model: %1").arg(QString::fromStdString(e.note).toHtmlEscaped());
    tip += QStringLiteral("<br><i>%1</i>").arg(QString::fromStdString(e.row.source).toHtmlEscaped());
    return tip;
  }
  return {};
}

void ValidationView::fillStats() {
  const MeasuredChoice* c = overlay_->chosen();
  if (!c) return;
  const ValidationReport& rep = c->report;
  std::vector<std::pair<QString, ErrorStats>> lines;
  for (const char* r : {"small", "mid", "large"})
    if (auto it = rep.by_regime.find(r); it != rep.by_regime.end()) lines.emplace_back(regimeText(r), it->second);
  for (const auto& [a, s] : rep.by_algorithm) lines.emplace_back(tr("algorithm %1").arg(QString::fromStdString(a)), s);
  lines.emplace_back(tr("overall"), rep.overall);
  stats_->setRowCount(static_cast<int>(lines.size()));
  for (int i = 0; i < static_cast<int>(lines.size()); ++i) {
    const auto& [label, s] = lines[static_cast<std::size_t>(i)];
    stats_->setVerticalHeaderItem(i, new QTableWidgetItem(label));
    auto pct = [&s](double v) { return s.rows > 0 ? QString::number(v, 'f', 1) : QStringLiteral("–"); };   // no rows: no figure
    const QString cells[] = {QString::number(s.rows), pct(s.mape_pct), pct(s.bias_pct), pct(s.max_abs_pct)};
    for (int k = 0; k < 4; ++k) {
      auto* it = new QTableWidgetItem(cells[k]);
      it->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
      stats_->setItem(i, k, it);
    }
  }
  fitBelow();
}

void ValidationView::fitBelow() {
  if (userSized_) return;
  // The part below the charts as tall as the table's rows (at most its maximum, 190) or
  // the words beside it, whichever is taller, but the words no more than 30% of the
  // height: beyond that they scroll and the charts keep the rest.
  int h = stats_->horizontalHeader()->sizeHint().height() + 2 * stats_->frameWidth();
  for (int r = 0; r < stats_->rowCount(); ++r) h += stats_->verticalHeader()->sectionSizeHint(r);
  h = std::clamp(h, stats_->minimumHeight(), stats_->maximumHeight());
  const int total = vsplit_->height() > 0 ? vsplit_->height() : 600;
  const int wordsWidth = std::max(100, vsplit_->width() - stats_->sizeHint().width() - 12);
  const int words = words_->hasHeightForWidth() ? words_->heightForWidth(wordsWidth) : words_->sizeHint().height();
  h = std::max(h, std::min(words, total * 3 / 10));
  vsplit_->setSizes({std::max(1, total - h - vsplit_->handleWidth()), h});
}

void ValidationView::resizeEvent(QResizeEvent* e) {
  ChartPanel::resizeEvent(e);
  fitBelow();
}

std::vector<QChart*> ValidationView::extraCharts() const {
  if (!hasData()) return {};
  return {errorChart_};
}

QString ValidationView::reportHtml() const {
  QString h = ChartPanel::reportHtml();
  if (!hasData()) return h;
  auto para = [](const QString& t) {
    return QStringLiteral("<p>%1</p>").arg(Qt::mightBeRichText(t) ? t : t.toHtmlEscaped().replace(QLatin1Char('\n'), QStringLiteral("<br>")));
  };
  if (const MeasuredChoice* c = overlay_->chosen())
    h += para(tr("Measured: run %1.").arg(c->label()));
  h += para(model_->text());
  h += QStringLiteral("<table><tr><th></th>");
  for (int k = 0; k < stats_->columnCount(); ++k)
    h += QStringLiteral("<th>%1</th>").arg(stats_->horizontalHeaderItem(k)->text().toHtmlEscaped());
  h += QStringLiteral("</tr>");
  for (int r = 0; r < stats_->rowCount(); ++r) {
    h += QStringLiteral("<tr><th>%1</th>").arg(stats_->verticalHeaderItem(r)->text().toHtmlEscaped());
    for (int k = 0; k < stats_->columnCount(); ++k) {
      const QTableWidgetItem* it = stats_->item(r, k);
      h += QStringLiteral("<td style=\"text-align:right\">%1</td>").arg(it ? it->text().toHtmlEscaped() : QString());
    }
    h += QStringLiteral("</tr>");
  }
  h += QStringLiteral("</table>");
  h += para(how_->text());
  return h;
}

QString ValidationView::csv() const {
  QString out = QStringLiteral("algorithm,system,gpus,bytes,measured_us,model_us,error_pct,regime,source,note\n");
  const MeasuredChoice* c = overlay_->chosen();
  if (!c) return out;
  for (const RowError& e : c->report.rows) {
    if (!e.modelled) continue;
    out += QString::fromStdString(csv_record({e.row.algorithm, e.row.system, std::to_string(e.row.gpus),
                                              std::to_string(e.row.bytes), fmt::format("{:.10g}", e.row.measured_us),
                                              fmt::format("{:.10g}", e.model_us), fmt::format("{:.6g}", e.error * 100),
                                              to_string(e.regime), e.row.source, e.note})) +
           QLatin1Char('\n');
  }
  return out;
}

}  // namespace scin::ui
