#include "ui/quant_chart.h"

#include <QApplication>
#include <QMetaObject>
#include <QPointer>

#include <algorithm>
#include <cmath>
#include <map>

#include <QCategoryAxis>
#include <QLabel>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QValueAxis>
#include <QtConcurrent/QtConcurrentRun>

#include "base/cancel.h"
#include "schedule/algorithms.h"
#include "fabric/params.h"
#include "ui/figure.h"
#include "ui/format.h"

namespace scin::ui {

QuantChart::QuantChart(FabricDoc* doc, QWidget* parent)
    : ChartPanel(QStringLiteral("quant"), tr("Quantisation error vs block size"), parent), doc_(doc) {
  codec_ = new QComboBox;
  for (const auto& c : param("quant.codec").choices) codec_->addItem(QString::fromStdString(c));
  codec_->setToolTip(QString::fromStdString(param("quant.codec").help));
  metric_ = new QComboBox;
  metric_->addItem(tr("Relative L2 error (lower is better)"));
  metric_->addItem(tr("SQNR, dB (higher is better)"));
  controls()->insertWidget(0, new QLabel(tr("Codec")));
  controls()->insertWidget(1, codec_);
  controls()->insertWidget(2, new QLabel(tr("Metric")));
  controls()->insertWidget(3, metric_);
  timer_.setSingleShot(true);
  timer_.setInterval(150);
  connect(&timer_, &QTimer::timeout, this, &QuantChart::recompute);
  slow_.setSingleShot(true);
  slow_.setInterval(kProgressAfterMs);
  connect(&slow_, &QTimer::timeout, this, [this] {
    if (!computing_) return;
    showProgress_ = true;
    redraw();
  });
  connect(&watcher_, &QFutureWatcher<Outcome>::finished, this, [this] {
    computing_ = false;
    showProgress_ = false;
    slow_.stop();
    Outcome out = watcher_.result();
    if (!out.cancelled) {
      studies_ = std::move(out.studies);
      error_ = studies_.empty() ? out.error : QString();
    }
    redraw();
    if (stale_ && isVisible()) timer_.start();
  });
  connect(codec_, &QComboBox::activated, this, [this] {
    stale_ = true;
    timer_.start();
  });
  connect(metric_, &QComboBox::activated, this, [this] { redraw(); });
  connect(doc_, &FabricDoc::changed, this, [this] {
    stale_ = true;
    if (watcher_.isRunning()) stop_.request_stop();   // its result is stale: stop it, then start anew
    if (isVisible()) timer_.start();
  });
}

QuantChart::~QuantChart() {
  stop_.request_stop();
  watcher_.waitForFinished();
}

void QuantChart::showEvent(QShowEvent* e) {
  ChartPanel::showEvent(e);
  if (stale_) timer_.start(0);
}

void QuantChart::recompute() {
  if (watcher_.isRunning()) return;  // the finished handler restarts us if stale
  stale_ = false;
  computing_ = true;
  Config base = doc_->config();
  std::string codec = codec_->currentText().toStdString();
  stop_ = std::stop_source();
  percent_ = 0;
  slow_.start();
  // Progress, posted to this thread in steps of 2% (dropped once the chart is gone).
  QPointer<QuantChart> self(this);
  auto report = percentSteps([self](int pc) {
    QMetaObject::invokeMethod(qApp, [self, pc] {
      if (!self || !self->computing_) return;
      self->percent_ = pc;
      if (self->showProgress_) self->redraw();
    }, Qt::QueuedConnection);
  });
  RunContext run_ctx;
  run_ctx.stop = stop_.get_token();
  redraw();   // says it is computing
  watcher_.setFuture(QtConcurrent::run([base, codec, run_ctx, report] {
    Outcome out;
    out.studies.reserve(blockSizes().size());   // `full` stays valid
    const QuantStudy* full = nullptr;           // the first study of every algorithm
    const double studies = static_cast<double>(blockSizes().size());
    for (int g : blockSizes()) {
      // This study's progress as a share of all of them.
      RunContext ctx = run_ctx;
      const double done = static_cast<double>(out.studies.size());
      ctx.progress = [report, done, studies](double f) { report((done + f) / studies); };
      Config c = base;
      try {
        set_param(c, "quant.codec", codec);
        set_param(c, "quant.block_elems", static_cast<double>(g));
        QuantRequest req;
        req.elements = kElementsPerRank;
        if (!full) {
          out.studies.push_back(run_quant(c, req, ctx));
          full = &out.studies.back();
          continue;
        }
        // The other block sizes run the quantised algorithms only: the others'
        // rows do not depend on the block size (the same inputs, schedules and
        // sums), so they are the first study's.
        for (const QuantRow& r : full->rows)
          if (r.quantised) req.algorithms.push_back(r.algorithm);
        if (req.algorithms.empty()) {   // (empty would mean every algorithm)
          out.studies.push_back(run_quant(c, req, ctx));
          continue;
        }
        out.studies.push_back(with_unquantised_rows_of(run_quant(c, req, ctx), *full));
      } catch (const Cancelled&) {
        out.cancelled = true;
        return out;
      } catch (const std::exception& e) {
        // An unsupported combination leaves that block size out.
        if (out.error.isEmpty()) out.error = QString::fromStdString(e.what());
      }
    }
    return out;
  }));
}

// Curves on the same line (scin-inq and two-shot-q8 quantise alike; the
// 16-bit algorithms all round the same sum): each later one is dashed over
// the first in its own phase, so every colour shows, and its legend entry
// names the first: "two-shot-q8 (= scin-inq)", "scin (16-bit) (= nvls)".
void QuantChart::markCoincidingCurves(const std::map<std::string, QLineSeries*>& series) {
  std::vector<QLineSeries*> order;
  std::vector<QString> shortName;  // the algorithm ("nvls"), or a reference's whole name
  for (const auto& [k, s] : series) {
    order.push_back(s);
    shortName.push_back(k.starts_with('~') ? s->name() : QString::fromStdString(k));
  }
  auto same = [](const QLineSeries* a, const QLineSeries* b) {
    if (a->count() != b->count()) return false;
    for (int i = 0; i < a->count(); ++i) {
      const QPointF p = a->at(i), q = b->at(i);
      if (p.x() != q.x() || !analysis::same_value(p.y(), q.y())) return false;
    }
    return true;
  };
  std::vector<int> base(order.size(), -1);
  for (std::size_t j = 0; j < order.size(); ++j)
    for (std::size_t i = 0; i < j && base[j] < 0; ++i)
      if (base[i] < 0 && same(order[i], order[j])) base[j] = static_cast<int>(i);
  for (std::size_t j = 0; j < order.size(); ++j) {
    if (base[j] < 0) continue;
    const int group = 1 + static_cast<int>(std::count(base.begin(), base.end(), base[j]));
    const int rank = 1 + static_cast<int>(std::count(base.begin(), base.begin() + static_cast<std::ptrdiff_t>(j), base[j]));
    QPen pen = order[j]->pen();
    setCoveringDash(pen, rank, group);
    order[j]->setPen(pen);
    order[j]->setName(tr("%1 (= %2)").arg(order[j]->name(), shortName[static_cast<std::size_t>(base[j])]));
  }
}

void QuantChart::redraw() {
  clearChart();
  const bool sqnr = metric_->currentIndex() == 1;
  chart()->setTitle(tr("All-Reduce error vs exact sum, %1 blocks, Gaussian inputs, %2 elements per rank, worst rank")
                        .arg(codec_->currentText())
                        .arg(kElementsPerRank));
  if (studies_.empty() || (computing_ && showProgress_)) {
    const int gpus = doc_->config().fabric.gpus;
    setEmptyText(computing_ ? tr("Computing the quantisation error of %1 accelerators on %2 elements per rank, "
                                 "for %3 block sizes… %4%")
                                  .arg(gpus)
                                  .arg(kElementsPerRank)
                                  .arg(blockSizes().size())
                                  .arg(percent_)
                 : error_.isEmpty() ? QString()
                                    : tr("The data engine cannot run this fabric: %1").arg(error_));
    return;
  }
  setEmptyText(QString());
  auto metricOf = [sqnr](const ErrorMetrics& m) { return sqnr ? m.sqnr_dB : m.rel_l2; };
  std::map<std::string, QLineSeries*> series;
  double lo = 1e300, hi = -1e300;
  auto add = [&](const std::string& key, const QString& name, QColor col, Qt::PenStyle style, double g, double v) {
    if (!std::isfinite(v) || (!sqnr && v <= 0)) return;
    QLineSeries*& s = series[key];
    if (!s) {
      s = new QLineSeries;
      s->setName(name);
      s->setPen(QPen(col, 2, style));
      s->setPointsVisible(true);
      connect(s, &QLineSeries::hovered, this, [this, s, sqnr](const QPointF& p, bool on) {
        if (!on || s->count() == 0) return;
        int best = 0;
        for (int k = 1; k < s->count(); ++k)
          if (std::fabs(s->at(k).x() - p.x()) < std::fabs(s->at(best).x() - p.x())) best = k;
        showTip(QStringLiteral("<b>%1</b><br>G = %2 values per scale<br>%3")
                    .arg(s->name())
                    .arg(std::exp2(s->at(best).x()))
                    .arg(sqnr ? tr("SQNR %1 dB").arg(s->at(best).y(), 0, 'f', 2)
                              : tr("relative L2 error %1").arg(s->at(best).y(), 0, 'e', 3)));
      });
    }
    s->append(std::log2(g), v);
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  };
  for (const QuantStudy& st : studies_) {
    double g = st.quant.block_elems;
    for (const QuantRow& r : st.rows)
      add(r.algorithm, QString::fromStdString(r.algorithm) + (r.quantised ? QString() : tr(" (16-bit)")),
          algorithmColor(QString::fromStdString(r.algorithm)), r.quantised ? Qt::SolidLine : Qt::DotLine, g,
          metricOf(r.metrics));
    // The references in greys: black is ring-q8's colour (Okabe-Ito), and a
    // legend entry must be told by its colour, not only by its dash.
    add("~single", tr("reference: sum quantised once"), QColor(0x80, 0x80, 0x80), Qt::DashLine, g,
        metricOf(st.single_quant));
    add("~round", tr("reference: sum in %1").arg(QString::fromLatin1(to_string(st.dtype))),
        QColor(0xb8, 0xb8, 0xb8), Qt::DashDotLine, g, metricOf(st.dtype_round));
  }
  markCoincidingCurves(series);
  for (auto& [k, s] : series) {
    chart()->addSeries(s);
    showDashInLegend(chart(), s);  // (the 16-bit baselines dotted, the references dashed)
  }
  auto* x = new QCategoryAxis;
  x->setLabelsPosition(QCategoryAxis::AxisLabelsPositionOnValue);
  for (int g : blockSizes()) x->append(QString::number(g), std::log2(g));
  x->setRange(std::log2(blockSizes().front()), std::log2(blockSizes().back()));
  x->setTitleText(tr("Block size G (values per scale, log scale)"));
  QAbstractAxis* y;
  QLogValueAxis* logY = nullptr;
  if (sqnr) {
    auto* v = new QValueAxis;
    v->setRange(lo - 2, hi + 2);
    v->applyNiceNumbers();
    v->setTitleText(tr("SQNR (dB)"));
    y = v;
  } else {
    auto* v = new QLogValueAxis;
    v->setBase(10);
    v->setRange(std::pow(10, std::floor(std::log10(lo))), std::pow(10, std::ceil(std::log10(hi))));
    v->setTitleText(tr("Relative L2 error ‖ŷ − y‖ / ‖y‖ (ratio, log scale)"));
    y = logY = v;
  }
  chart()->addAxis(x, Qt::AlignBottom);
  if (logY)
    addLogAxis(chart(), logY, Qt::AlignLeft);
  else
    chart()->addAxis(y, Qt::AlignLeft);
  for (auto& [k, s] : series) {
    s->attachAxis(x);
    s->attachAxis(y);
  }
  connectLegend();
}

QString QuantChart::csv() const {
  QString out = QStringLiteral("algorithm,codec,block_elems,quantised,rel_l2,sqnr_dB,max_abs,payload_ratio,error_variance_ratio\n");
  for (const QuantStudy& st : studies_) {
    for (const QuantRow& r : st.rows)
      out += QStringLiteral("%1,%2,%3,%4,%5,%6,%7,%8,%9\n")
                 .arg(QString::fromStdString(r.algorithm), QString::fromLatin1(to_string(st.quant.codec)))
                 .arg(st.quant.block_elems)
                 .arg(r.quantised ? 1 : 0)
                 .arg(r.metrics.rel_l2, 0, 'g', 8)
                 .arg(r.metrics.sqnr_dB, 0, 'g', 8)
                 .arg(r.metrics.max_abs, 0, 'g', 8)
                 .arg(r.payload_ratio, 0, 'g', 8)
                 .arg(r.error_variance_ratio, 0, 'g', 8);
  }
  return out;
}

}  // namespace scin::ui
