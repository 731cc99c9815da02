#include "ui/timeline_chart.h"

#include <QApplication>
#include <QLabel>
#include <QLegend>
#include <QLineSeries>
#include <QValueAxis>
#include <algorithm>
#include <cmath>
#include <thread>

#include <QMetaObject>
#include <QPointer>

#include "schedule/algorithms.h"
#include "fabric/params.h"
#include "ui/format.h"

namespace scin::ui {

TimelineChart::TimelineChart(FabricDoc* doc, QWidget* parent)
    : ChartPanel(QStringLiteral("timeline"), tr("Link utilisation over time (packet engine)"), parent), doc_(doc) {
  chart()->legend()->setAlignment(Qt::AlignBottom);
  // Legend markers drawn as the series' own line (solid or dashed), not a colour square.
  chart()->legend()->setMarkerShape(QLegend::MarkerShapeFromSeries);
  algo_ = new QComboBox;
  for (const auto& a : algorithms()) algo_->addItem(QString::fromStdString(a.name));
  algo_->setCurrentText(QStringLiteral("scin"));
  size_ = new QComboBox;
  for (int e = 10; e <= 26; e += 2) size_->addItem(sizeText(1ull << e), QVariant::fromValue<qulonglong>(1ull << e));
  size_->setCurrentIndex(size_->findData(QVariant::fromValue<qulonglong>(1ull << 20)));
  controls()->insertWidget(0, new QLabel(tr("Algorithm")));
  controls()->insertWidget(1, algo_);
  controls()->insertWidget(2, new QLabel(tr("Message size")));
  controls()->insertWidget(3, size_);
  timer_.setSingleShot(true);
  timer_.setInterval(150);
  connect(&timer_, &QTimer::timeout, this, &TimelineChart::recompute);
  auto restale = [this] {
    stale_ = true;
    if (isVisible()) timer_.start();
  };
  connect(algo_, &QComboBox::activated, this, restale);
  connect(size_, &QComboBox::activated, this, restale);
  connect(doc_, &FabricDoc::changed, this, restale);
}

TimelineChart::~TimelineChart() { *alive_ = false; }

void TimelineChart::finished(const SimResult& r) {
  running_ = false;
  result_ = r;
  redraw();
  Q_EMIT computed(r);
  if (stale_ && isVisible()) timer_.start();
}

void TimelineChart::showEvent(QShowEvent* e) {
  ChartPanel::showEvent(e);
  if (stale_) timer_.start(0);
}

void TimelineChart::setSelection(const QString& algorithm, std::uint64_t bytes) {
  algo_->setCurrentText(algorithm);
  int i = size_->findData(QVariant::fromValue<qulonglong>(bytes));
  if (i < 0) {
    size_->addItem(sizeText(bytes), QVariant::fromValue<qulonglong>(bytes));
    i = size_->count() - 1;
  }
  size_->setCurrentIndex(i);
  stale_ = true;
}

void TimelineChart::recompute() {
  if (running_) return;  // finished() restarts us if the inputs changed meanwhile
  running_ = true;
  stale_ = false;
  Config cfg = doc_->config();
  std::string algo = algo_->currentText().toStdString();
  std::uint64_t bytes = size_->currentData().toULongLong();
  QPointer<TimelineChart> self(this);
  std::shared_ptr<bool> alive = alive_;
  std::thread([cfg, algo, bytes, self, alive]() mutable {
    SimResult r;
    try {
      set_param(cfg, "packet.timeline_samples", static_cast<double>(kSamples));
      r = simulate(cfg, algo, Collective{bytes, DType::Bf16}, "packet");
    } catch (const std::exception& e) {
      r.algorithm = algo;
      r.extra = {{"error", e.what()}};
    }
    // Queued to the GUI thread; dropped if the chart is gone by then.
    QMetaObject::invokeMethod(qApp, [self, alive, r] {
      if (*alive && self) self->finished(r);
    }, Qt::QueuedConnection);
  }).detach();
}

void TimelineChart::redraw() {
  clearChart();
  const nlohmann::json& x = result_.extra;
  if (x.contains("error")) {
    chart()->setTitle(tr("Link utilisation: %1").arg(QString::fromStdString(x["error"].get<std::string>()).toHtmlEscaped()));
    return;
  }
  if (!x.contains("timeline")) return;
  const auto& tl = x["timeline"];
  const double bin_ns = tl.value("bin_ns", 0.0);
  const int n = tl.value("samples", 0);
  if (n <= 0 || bin_ns <= 0) return;
  chart()->setTitle(tr("Link utilisation over time: %1, %2 per rank, packet engine (total %3)")
                        .arg(QString::fromStdString(result_.algorithm), sizeText(result_.bytes),
                             timeText(result_.time_ns)));
  std::vector<double> egress(static_cast<std::size_t>(n)), ingress(static_cast<std::size_t>(n));
  int ne = 0, ni = 0;
  std::string busiest;
  double busiest_sum = -1;
  const nlohmann::json* busiest_u = nullptr;
  for (const auto& l : tl["links"]) {
    const std::string name = l["name"].get<std::string>();
    const auto& u = l["utilisation"];
    bool in = name.rfind("sw", 0) == 0;  // "sw0->r3": switch to accelerator
    double sum = 0;
    for (int k = 0; k < n && k < static_cast<int>(u.size()); ++k) {
      double v = u[static_cast<std::size_t>(k)].get<double>();
      (in ? ingress : egress)[static_cast<std::size_t>(k)] += v;
      sum += v;
    }
    (in ? ni : ne)++;
    if (sum > busiest_sum) {
      busiest_sum = sum;
      busiest = name;
      busiest_u = &u;
    }
  }
  // Series are painted in the order they are added: the two means first (thin,
  // solid), the busiest link last (thick, dashed) so it stays visible where it
  // coincides with a mean, as it does when every link carries the same traffic.
  auto addSeries = [&](const QString& name, const QPen& pen, auto valueAt) {
    auto* s = new QLineSeries;
    s->setName(name);
    s->setPen(pen);
    for (int k = 0; k < n; ++k) s->append((k + 0.5) * bin_ns / 1e3, valueAt(k));
    connect(s, &QLineSeries::hovered, this, [this, s](const QPointF& p, bool on) {
      if (on) showTip(QStringLiteral("<b>%1</b><br>t = %2<br>utilisation %3%")
                          .arg(s->name(), timeText(p.x() * 1e3))
                          .arg(p.y() * 100, 0, 'f', 1));
    });
    chart()->addSeries(s);
  };
  auto at = [](const std::vector<double>& v, int k) { return v[static_cast<std::size_t>(k)]; };
  if (ne) addSeries(tr("egress: mean of %1 links").arg(ne), QPen(QColor(0x1f, 0x77, 0xb4), 1.5),
                    [&](int k) { return at(egress, k) / ne; });
  if (ni) addSeries(tr("ingress: mean of %1 links").arg(ni), QPen(QColor(0x2c, 0xa0, 0x2c), 1.5),
                    [&](int k) { return at(ingress, k) / ni; });
  QString note;
  if (busiest_u) {
    auto busiestAt = [&](int k) {
      return k < static_cast<int>(busiest_u->size()) ? (*busiest_u)[static_cast<std::size_t>(k)].get<double>() : 0.0;
    };
    const bool in = busiest.rfind("sw", 0) == 0;
    QString link = QString::fromStdString(busiest).replace(QStringLiteral("->"), QStringLiteral(" → "));
    QPen pen(QColor(0xd6, 0x27, 0x28), 3, Qt::DashLine);
    pen.setCapStyle(Qt::FlatCap);
    addSeries(tr("busiest link %1 (dashed)").arg(link), pen, busiestAt);
    // Say so when the busiest link is no busier than the mean of its direction:
    // the two lines then lie on top of each other.
    const std::vector<double>& mean = in ? ingress : egress;
    const int count = in ? ni : ne;
    double diff = 0;
    for (int k = 0; k < n && count > 0; ++k) diff = std::max(diff, std::abs(busiestAt(k) - at(mean, k) / count));
    if (count > 0 && diff < 1e-3)
      note = tr("; the busiest link equals the %1 mean (every %1 link is equally loaded)").arg(in ? tr("ingress") : tr("egress"));
  }
  // The title is rich text: a second line says what the lines are.
  chart()->setTitle(chart()->title() + QStringLiteral("<br>") +
                    tr("Egress: accelerator → switch, ingress: switch → accelerator%1").arg(note));
  auto* ax = new QValueAxis;
  ax->setRange(0, n * bin_ns / 1e3);
  ax->applyNiceNumbers();
  ax->setTitleText(tr("Time since start (µs)"));
  ax->setLabelFormat(QStringLiteral("%g"));
  auto* ay = new QValueAxis;
  ay->setRange(0, 1.0);
  ay->setTickCount(6);
  ay->setTitleText(tr("Link utilisation (fraction of time busy)"));
  ay->setLabelFormat(QStringLiteral("%.1f"));
  chart()->addAxis(ax, Qt::AlignBottom);
  chart()->addAxis(ay, Qt::AlignLeft);
  for (QAbstractSeries* s : chart()->series()) {
    s->attachAxis(ax);
    s->attachAxis(ay);
  }
  connectLegend();
}

QString TimelineChart::csv() const {
  QString out = QStringLiteral("link,t_us,utilisation\n");
  const nlohmann::json& x = result_.extra;
  if (!x.contains("timeline")) return out;
  const double bin_ns = x["timeline"].value("bin_ns", 0.0);
  for (const auto& l : x["timeline"]["links"]) {
    const auto& u = l["utilisation"];
    for (std::size_t k = 0; k < u.size(); ++k)
      out += QStringLiteral("%1,%2,%3\n")
                 .arg(QString::fromStdString(l["name"].get<std::string>()))
                 .arg((static_cast<double>(k) + 0.5) * bin_ns / 1e3, 0, 'g', 10)
                 .arg(u[k].get<double>(), 0, 'g', 8);
  }
  return out;
}

}  // namespace scin::ui
