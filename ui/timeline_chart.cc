#include "ui/timeline_chart.h"

#include <QApplication>
#include <QLabel>
#include <QLegend>
#include <QLineSeries>
#include <QValueAxis>
#include <algorithm>
#include <cmath>
#include <thread>
#include <utility>

#include <QMetaObject>
#include <QPointer>

#include "schedule/algorithms.h"
#include "fabric/params.h"
#include "ui/format.h"

namespace scin::ui {

namespace {
// "4.9 M", "336 G": an estimate's magnitude, not its digits.
QString roughCount(double n) {
  const char* units[] = {"", " k", " M", " G", " T"};
  int k = 0;
  while (n >= 1000 && k < 4) n /= 1000, ++k;
  return QString::number(n, 'g', 2) + QLatin1String(units[k]);
}
}  // namespace

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
  anyway_ = new QPushButton(tr("Simulate anyway"));
  anyway_->setObjectName(QStringLiteral("simulateAnyway"));
  anyway_->setToolTip(tr("Run this packet simulation although it is estimated above %1 s (it can be stopped by "
                         "choosing another algorithm or size)").arg(kMaxSeconds));
  anyway_->setVisible(false);
  controls()->insertWidget(4, anyway_);
  connect(anyway_, &QPushButton::clicked, this, [this] {
    force_ = true;
    stale_ = true;
    timer_.start(0);
  });
  timer_.setSingleShot(true);
  timer_.setInterval(150);
  connect(&timer_, &QTimer::timeout, this, &TimelineChart::recompute);
  auto restale = [this] {
    stale_ = true;
    force_ = false;
    if (running_) stop_.request_stop();  // its result is stale: stop it (finished() starts anew)
    if (isVisible()) timer_.start();
  };
  connect(algo_, &QComboBox::activated, this, restale);
  connect(size_, &QComboBox::activated, this, restale);
  connect(doc_, &FabricDoc::changed, this, restale);
}

TimelineChart::~TimelineChart() {
  *alive_ = false;
  stop_.request_stop();
}

QString TimelineChart::what() const {
  return tr("%1 at %2 on %3 accelerators")
      .arg(algo_->currentText(), sizeText(size_->currentData().toULongLong()))
      .arg(doc_->config().fabric.gpus);
}

void TimelineChart::finished(const SimResult& r) {
  running_ = false;
  runPercent_ = -1;
  const bool cancelled = r.extra.contains("cancelled");
  refused_ = r.extra.contains("refused") ? QString::fromStdString(r.extra["refused"].get<std::string>()) : QString();
  if (!cancelled && refused_.isEmpty()) result_ = r;
  if (!cancelled) {
    redraw();
    if (refused_.isEmpty()) Q_EMIT computed(r);
  }
  if (stale_ && isVisible()) timer_.start();
}

void TimelineChart::progressed(double events, int percent) {
  if (!running_) return;
  runEvents_ = events;
  runPercent_ = percent;
  redraw();
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
  runPercent_ = -1;
  Config cfg = doc_->config();
  std::string algo = algo_->currentText().toStdString();
  std::uint64_t bytes = size_->currentData().toULongLong();
  const bool force = std::exchange(force_, false);
  stop_ = std::stop_source();
  QPointer<TimelineChart> self(this);
  std::shared_ptr<bool> alive = alive_;
  // Posted to the GUI thread; dropped if the chart is gone by then.
  auto post = [self, alive](auto f) {
    QMetaObject::invokeMethod(qApp, [self, alive, f] {
      if (*alive && self) f(self.data());
    }, Qt::QueuedConnection);
  };
  std::thread([cfg, algo, bytes, force, post, token = stop_.get_token()]() mutable {
    SimResult r;
    r.algorithm = algo;
    r.bytes = bytes;
    try {
      set_param(cfg, "packet.timeline_samples", static_cast<double>(kSamples));
      const Collective c{bytes, DType::Bf16};
      const WorkEstimate w = estimate(cfg, parse_algorithm(algo), c, EngineId::Packet);
      WorkBudget budget;
      budget.max_seconds = force ? 0 : kMaxSeconds;   // the memory available still bounds it
      const BudgetCheck check = check_budget(w, budget, "this packet simulation",
                                             force ? "use a smaller size or fabric"
                                                   : "press Simulate anyway, or choose a smaller size or fabric");
      if (check.refused()) {
        r.extra = {{"refused", check.message}};
      } else {
        RunContext ctx;
        ctx.stop = token;
        if (w.seconds >= kShowProgressSeconds) {
          const double est = w.amount;
          post([est](TimelineChart* t) { t->progressed(est, 0); });
          ctx.progress = percentSteps([post, est](int pc) { post([est, pc](TimelineChart* t) { t->progressed(est, pc); }); });
        }
        r = simulate(cfg, algo, c, "packet", ctx);
      }
    } catch (const Cancelled&) {
      r.extra = {{"cancelled", true}};
    } catch (const std::exception& e) {
      r.extra = {{"error", e.what()}};
    }
    post([r](TimelineChart* t) { t->finished(r); });
  }).detach();
}

void TimelineChart::redraw() {
  clearChart();
  anyway_->setVisible(!refused_.isEmpty() && !running_);
  if (running_ && runPercent_ >= 0) {
    setEmptyText(tr("Simulating %1 on the packet engine… %2% of about %3 events")
                     .arg(what())
                     .arg(runPercent_)
                     .arg(roughCount(runEvents_)));
    return;
  }
  if (!refused_.isEmpty()) {
    setEmptyText(tr("Not simulated: %1 (%2).").arg(what(), refused_));
    return;
  }
  setEmptyText(QString());
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
  // Links by kind, from their names: "r3->sw0" egress (accelerator to
  // switch), "sw0->r3" ingress, "sw16->sw40" a trunk between a leaf and a
  // spine (two tiers), "r0->r1" a direct link (mesh). Each kind its own mean:
  // a trunk counted as ingress lowered the ingress mean of nvl576-style by a third.
  enum Kind { Egress, Ingress, Trunk, Direct, kKinds };
  auto kindOf = [](const std::string& name) {
    const bool from_switch = name.rfind("sw", 0) == 0, to_switch = name.find("->sw") != std::string::npos;
    return from_switch ? (to_switch ? Trunk : Ingress) : (to_switch ? Egress : Direct);
  };
  std::vector<double> sums[kKinds];
  for (auto& v : sums) v.assign(static_cast<std::size_t>(n), 0.0);
  int counts[kKinds] = {0, 0, 0, 0};
  std::string busiest;
  double busiest_sum = -1;
  const nlohmann::json* busiest_u = nullptr;
  for (const auto& l : tl["links"]) {
    const std::string name = l["name"].get<std::string>();
    const auto& u = l["utilisation"];
    const Kind kind = kindOf(name);
    double sum = 0;
    for (int k = 0; k < n && k < static_cast<int>(u.size()); ++k) {
      double v = u[static_cast<std::size_t>(k)].get<double>();
      sums[kind][static_cast<std::size_t>(k)] += v;
      sum += v;
    }
    counts[kind]++;
    if (sum > busiest_sum) {
      busiest_sum = sum;
      busiest = name;
      busiest_u = &u;
    }
  }
  // Series are painted in the order they are added: the means first (thin,
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
  const QString kindName[kKinds] = {tr("egress"), tr("ingress"), tr("trunks"), tr("direct")};
  const QColor kindColour[kKinds] = {QColor(0x1f, 0x77, 0xb4), QColor(0x2c, 0xa0, 0x2c), QColor(0x94, 0x67, 0xbd),
                                     QColor(0x8c, 0x56, 0x4b)};
  auto meanAt = [&](int kind, int k) { return sums[kind][static_cast<std::size_t>(k)] / counts[kind]; };
  for (int kind = 0; kind < kKinds; ++kind)
    if (counts[kind])
      addSeries(tr("%1: mean of %2 links").arg(kindName[kind]).arg(counts[kind]), QPen(kindColour[kind], 1.5),
                [&](int k) { return meanAt(kind, k); });
  QString note;
  if (busiest_u) {
    auto busiestAt = [&](int k) {
      return k < static_cast<int>(busiest_u->size()) ? (*busiest_u)[static_cast<std::size_t>(k)].get<double>() : 0.0;
    };
    const Kind kind = kindOf(busiest);
    QString link = QString::fromStdString(busiest).replace(QStringLiteral("->"), QStringLiteral(" → "));
    QPen pen(QColor(0xd6, 0x27, 0x28), 3, Qt::DashLine);
    pen.setCapStyle(Qt::FlatCap);
    addSeries(tr("busiest link %1 (dashed)").arg(link), pen, busiestAt);
    // Say so when the busiest link is no busier than the mean of its kind:
    // the two lines then lie on top of each other.
    double diff = 0;
    for (int k = 0; k < n; ++k) diff = std::max(diff, std::abs(busiestAt(k) - meanAt(kind, k)));
    if (diff < 1e-3)
      note = tr("The busiest link equals the %1 mean (every %1 link is equally loaded)").arg(kindName[kind]);
  }
  // The title is rich text: a second line says what the lines are, a third
  // when the busiest link is the mean (on one line with the second, a laptop
  // screen's chart elided it after "(every...").
  QStringList kinds;
  if (counts[Egress] || counts[Ingress]) kinds << tr("Egress: accelerator → switch, ingress: switch → accelerator");
  if (counts[Trunk]) kinds << tr("trunks: leaf ↔ spine, both directions");
  if (counts[Direct]) kinds << tr("direct: accelerator → accelerator");
  chart()->setTitle(chart()->title() + QStringLiteral("<br>") + kinds.join(QStringLiteral(", ")) +
                    (note.isEmpty() ? QString() : QStringLiteral("<br>") + note));
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
