// The timing charts as a user sees them, offscreen: size axes labelled over
// their whole range, legends that fit (capped, the rest counted), measured
// points overlaid on a simulated run of the same fabric with the values core
// validates, the Validation tab, several selected runs in the Analysis tab,
// and the Sweep dock showing the stored run's sweep.
#include <cmath>
#include <memory>

#include <QBarCategoryAxis>
#include <QFile>
#include <QLabel>
#include <QMimeData>
#include <QStatusBar>
#include <QCategoryAxis>
#include <QLegendMarker>
#include <QComboBox>
#include <QFontMetricsF>
#include <QGraphicsTextItem>
#include <QLegend>
#include <QLogValueAxis>
#include <QSettings>
#include <QStandardPaths>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QXYSeries>
#include <QtTest>

#include "analysis/combine.h"
#include "base/error.h"
#include "calib/compare.h"
#include "calib/fit.h"
#include "fabric/preset.h"
#include "model/result.h"
#include "store/store.h"
#include "sweep/sweep.h"
#include "ui/analysis_view.h"
#include "ui/chart_panel.h"
#include "ui/charts.h"
#include "ui/charts_measured.h"
#include "ui/exporter.h"
#include "ui/format.h"
#include "ui/main_window.h"
#include "ui/preview.h"
#include "ui/spec_bridge.h"
#include "ui/run_browser.h"
#include "ui/size_chart.h"
#include "ui/sweep_editor.h"
#include "ui/validation_view.h"

using namespace scin;
using namespace scin::ui;

namespace {

void settle(MainWindow& w) {
  QTRY_VERIFY_WITH_TIMEOUT(!w.preview()->busy() && !w.ioBusy() && !w.analysisView()->busy(), 30000);
  QTest::qWait(80);
}

// Shows `w` at the tests' size with the database `db` open and its run `run` selected.
[[nodiscard]] bool showRun(MainWindow& w, const QString& db, std::int64_t run) {
  w.resize(1400, 900);
  w.show();
  if (!w.openDatabase(db)) return false;
  settle(w);
  w.runBrowser()->selectRun(run);
  settle(w);
  return true;
}

// A timing sweep of `algorithms` over 1 KiB..`max_bytes` (x4) on hgx-h200-8, stored.
std::int64_t storeSweep(Store& store, const std::string& name, const std::vector<std::string>& algorithms,
                        const std::string& max_bytes = "4M", const nlohmann::json& set = nlohmann::json::object()) {
  nlohmann::json base = {{"preset", "hgx-h200-8"}, {"engine", "analytic"}, {"collective", {{"dtype", "bf16"}}}};
  if (!set.empty()) base["set"] = set;
  nlohmann::json j = {{"name", name},
                      {"kind", "collective"},
                      {"base", base},
                      {"axes",
                       {{{"path", "collective.algorithm"}, {"values", algorithms}},
                        {{"path", "collective.bytes"}, {"range", {{"min", "1K"}, {"max", max_bytes}, {"factor", 4}}}}}}};
  SweepOptions o;
  o.threads = 1;
  SweepSummary s = run_sweep(store, sweep_spec_from_json(j), o, {});
  return s.status == RunStatus::Done ? s.run_id : -1;
}

struct Measured {
  std::string system, algorithm;
  int gpus;
  std::uint64_t bytes;
  double us;
};

// A measured run as `scin import` stores it.
std::int64_t storeMeasured(Store& store, const std::string& name, const std::vector<Measured>& rows) {
  RunStart st;
  st.experiment = "measured";
  st.name = name;
  st.kind = PointKind::Measured;
  st.engine = "measured";
  st.spec = {{"kind", "measured"}, {"file", name}, {"format", "csv"}, {"rows", rows.size()}};
  st.points_total = rows.size();
  const std::int64_t id = store.begin_run(st);
  std::vector<PointRecord> pts;
  for (const Measured& m : rows) {
    PointRecord p;
    p.index = pts.size();
    p.kind = PointKind::Measured;
    p.algorithm = m.algorithm;
    p.dtype = "bf16";
    p.bytes = m.bytes;
    p.gpus = m.gpus;
    p.system = m.system;
    p.measured_us = m.us;
    p.source = name + ":" + std::to_string(pts.size() + 2);
    pts.push_back(p);
  }
  store.append_points(id, pts);
  store.finish_run(id, RunStatus::Done);
  return id;
}

// (x, y) of the series `name` of `chart`.
std::vector<QPointF> points(QChart* chart, const QString& name) {
  for (QAbstractSeries* s : chart->series())
    if (s->name() == name)
      if (auto* xy = qobject_cast<QXYSeries*>(s)) {
        const QList<QPointF> p = xy->points();
        return {p.begin(), p.end()};
      }
  return {};
}

MeasuredRow row(const Measured& m) {
  MeasuredRow r;
  r.system = m.system;
  r.gpus = m.gpus;
  r.algorithm = m.algorithm;
  r.bytes = m.bytes;
  r.measured_us = m.us;
  r.dtype = "bf16";
  return r;
}

// A result set of n curves over 8 B .. 256 MiB with made-up times.
ResultSet manyCurves(int n) {
  ResultSet rs;
  for (int k = 0; k < n; ++k) {
    Curve c;
    c.algorithm = k % 2 ? "ring" : "scin";
    c.label = QStringLiteral("%1 links.bandwidth_GBps=%2").arg(QString::fromStdString(c.algorithm)).arg(100 + 50 * k);
    c.group = QString::number(k);
    for (int e = 3; e <= 28; e += 5) {
      SimResult r;
      r.bytes = 1ull << e;
      r.time_ns = 1000.0 * (k + 1) + r.bytes / 100.0;
      r.algbw_GBps = r.bytes / r.time_ns;
      r.busbw_GBps = r.algbw_GBps * 1.75;
      c.points.push_back(r);
    }
    rs.curves.push_back(c);
  }
  return rs;
}

}  // namespace

class ChartsUiTest : public QObject {
  Q_OBJECT
 private:
  QTemporaryDir dir_;
  QString db_;
  std::int64_t simRun_ = 0, otherSim_ = 0, b200Run_ = 0, measuredRun_ = 0, measured2_ = 0;
  std::vector<Measured> h200_;

 private Q_SLOTS:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName(QStringLiteral("scin-test"));
    QCoreApplication::setApplicationName(QStringLiteral("scin-explorer-charts-test"));
    QSettings().clear();
    QVERIFY(dir_.isValid());
    db_ = dir_.filePath(QStringLiteral("charts.scindb"));
    Store store = Store::open(db_.toStdString(), Access::Create);
    simRun_ = storeSweep(store, "h200 ring nvls", {"ring", "nvls"});
    otherSim_ = storeSweep(store, "h200 scin", {"scin"}, "16M");
    QVERIFY(simRun_ > 0 && otherSim_ > 0);
    // Rows of the same fabric (8 GPUs, a system naming H200) and rows that must not match.
    h200_ = {{"HGX H200 (test bench)", "ring", 8, 1024, 31.5},
             {"HGX H200 (test bench)", "ring", 8, 65536, 40.25},
             {"HGX H200 (test bench)", "ring", 8, 4u << 20, 95.0},
             {"HGX H200 (test bench)", "nvls", 8, 4u << 20, 60.0}};
    std::vector<Measured> rows = h200_;
    rows.push_back({"HGX H200 (test bench)", "ring", 4, 65536, 30.0});   // 4 GPUs: another fabric
    rows.push_back({"HGX B200 (test bench)", "ring", 8, 65536, 20.0});   // another accelerator
    measuredRun_ = storeMeasured(store, "h200.csv", rows);
    measured2_ = storeMeasured(store, "h200-second.csv", {{"H200 lab", "ring", 8, 1u << 20, 50.0}});
    storeMeasured(store, "b200.csv", {{"HGX B200 (test bench)", "ring", 8, 65536, 20.0}});
  }

  void sizeAxisLabelsCoverTheWholeRange() {
    // Both ends always labelled, whole KiB / MiB / GiB between.
    QCOMPARE(pow2Exponents(3, 28), (std::vector<int>{3, 10, 15, 20, 25, 28}));
    QCOMPARE(pow2Exponents(3, 30), (std::vector<int>{3, 10, 15, 20, 25, 30}));
    QCOMPARE(pow2Exponents(10, 14), (std::vector<int>{10, 11, 12, 13, 14}));
    std::unique_ptr<QCategoryAxis> ax(makeSizeAxis(8, 256ull << 20));
    const QStringList labels = ax->categoriesLabels();
    QCOMPARE(labels.front(), QStringLiteral("8 B"));
    QCOMPARE(labels.back(), QStringLiteral("256 MiB"));
    QCOMPARE(ax->endValue(labels.back()), 28.0);
    QVERIFY(labels.contains(QStringLiteral("1 KiB")) && labels.contains(QStringLiteral("1 MiB")));
    std::unique_ptr<QCategoryAxis> full(makeSizeAxis(8, 1ull << 30));
    QCOMPARE(full->categoriesLabels().back(), QStringLiteral("1 GiB"));

    // The chart: the x labels run from the smallest to the largest size shown.
    LatencyChart lat;
    lat.resize(1000, 600);
    lat.show();
    lat.setResults(manyCurves(2));
    QTest::qWait(50);
    auto* x = qobject_cast<QCategoryAxis*>(lat.chart()->axes(Qt::Horizontal).value(0));
    QVERIFY(x);
    QCOMPARE(x->min(), 3.0);
    QCOMPARE(x->max(), 28.0);
    QCOMPARE(x->categoriesLabels().back(), QStringLiteral("256 MiB"));
    QCOMPARE(x->endValue(x->categoriesLabels().back()), 28.0);
    QCOMPARE(x->categoriesLabels().front(), QStringLiteral("8 B"));
    QCOMPARE(x->categoriesLabels().size(), 6);  // 8 B, 1 KiB, 32 KiB, 1 MiB, 32 MiB, 256 MiB: room for all

    // Narrow: fewer labels, each clear of its neighbours at the plot's width; both ends kept.
    lat.resize(380, 400);
    QTest::qWait(50);
    const QStringList few = x->categoriesLabels();
    QVERIFY2(few.size() < 6 && few.size() >= 2, qPrintable(few.join(QStringLiteral(", "))));
    QCOMPARE(few.front(), QStringLiteral("8 B"));
    QCOMPARE(few.back(), QStringLiteral("256 MiB"));
    const QFontMetricsF fm(x->labelsFont());
    const double px = lat.chart()->plotArea().width() / (x->max() - x->min());
    for (int i = 1; i < few.size(); ++i)
      QVERIFY2((x->endValue(few[i]) - x->endValue(few[i - 1])) * px >=
                   (fm.horizontalAdvance(few[i]) + fm.horizontalAdvance(few[i - 1])) / 2,
               qPrintable(few.join(QStringLiteral(", "))));
    // Each label fits the width Qt Charts gives every label of the axis (it elides a wider one:
    // "32 MiB" was drawn as "32 M..." at about 560 px): the plot's width / (labels + 1), less
    // 2 x 4 px padding. (At 380 px both ends alone do not: the ends are kept all the same.)
    for (const int width : {560, 700, 1000}) {
      lat.resize(width, 500);
      QTest::qWait(50);
      const QStringList kept = x->categoriesLabels();
      QVERIFY(kept.size() > 2);
      for (const QString& l : kept)
        QVERIFY2(fm.horizontalAdvance(l) <= lat.chart()->plotArea().width() / (kept.size() + 1) - 8,
                 qPrintable(QStringLiteral("%1 px: ").arg(width) + kept.join(QStringLiteral(", "))));
    }
    lat.resize(1000, 600);
    QTest::qWait(50);
    QCOMPARE(x->categoriesLabels().size(), 6);  // and back when it widens
  }

  void base2LogAxisLabelsItsTop() {
    QChart chart;
    auto* log = new QLogValueAxis;
    log->setBase(2);
    log->setRange(std::exp2(3), std::exp2(27));
    QCategoryAxis* cat = addLogAxis(&chart, log, Qt::AlignLeft);
    const QStringList l = cat->categoriesLabels();
    QVERIFY(!l.isEmpty());
    QCOMPARE(cat->endValue(l.back()), std::log10(std::exp2(27)));
    QCOMPARE(cat->endValue(l.front()), std::log10(std::exp2(3)));
  }

  // A side legend takes a third of the chart; names the third would cut take
  // up to 40% where they then stand whole, and where some would be cut even
  // so (a sweep's long labels) the legend keeps its third and the plot its room.
  void legendWidensOnlyWhereItMakesEveryNameWhole() {
    LatencyChart lat;
    lat.resize(900, 460);
    lat.show();
    const double third = [&] { return std::max(160.0, lat.view()->width() / 3.0); }();
    const auto named = [](int n, const QString& stem) {
      ResultSet rs = manyCurves(n);
      for (int k = 0; k < n; ++k) rs.curves[static_cast<std::size_t>(k)].label = stem.arg(k);
      return rs;
    };
    const QFontMetricsF fm(lat.chart()->legend()->font());
    // Between a third and 40% of the view: widened to the widest name.
    QString mid = QStringLiteral("ring %1 ");
    while (fm.horizontalAdvance(mid.arg(10)) + 40 <= third + 20) mid += QLatin1Char('x');
    QVERIFY(fm.horizontalAdvance(mid.arg(10)) + 40 <= lat.view()->width() * 0.4);
    lat.setResults(named(4, mid));
    QTest::qWait(50);
    QCOMPARE(lat.chart()->legend()->maximumWidth(), fm.horizontalAdvance(mid.arg(0)) + 40);
    // Longer than 40%: a third, the names elided.
    lat.setResults(named(4, QStringLiteral("ring (gpus=2 links.bandwidth_GBps=300 links.latency_ns=150 k=%1) and more")));
    QTest::qWait(50);
    QVERIFY2(lat.chart()->legend()->maximumWidth() <= third + 0.5,
             qPrintable(QStringLiteral("%1 > %2").arg(lat.chart()->legend()->maximumWidth()).arg(third)));
  }

  // A sweep's curves beside a laptop's chart: "ring (gpus=8 leaves=1 preset=..." lost the
  // value that tells curves apart. The entries name the values, an entry after them the
  // keys; the series keep their names (hover, CSV); a wide chart shows the names whole.
  void legendOfASweepNamesValuesAndKeysOnce() {
    ResultSet rs = manyCurves(6);
    QStringList full, compact;
    for (int k = 0; k < 6; ++k) {
      Curve& c = rs.curves[static_cast<std::size_t>(k)];
      const int gpus = 8 << (k / 2);
      const char* preset = k % 2 ? "nvl576-style" : "gb200-nvl72";
      c.label = QStringLiteral("%1 (fabric.gpus=%2 fabric.leaves=1 preset=%3)")
                    .arg(QString::fromStdString(c.algorithm)).arg(gpus).arg(QString::fromLatin1(preset));
      full << c.label;
      compact << QStringLiteral("%1 (%2, 1, %3)").arg(QString::fromStdString(c.algorithm)).arg(gpus).arg(QString::fromLatin1(preset));
    }
    LatencyChart lat;
    lat.resize(700, 500);
    lat.show();
    lat.setResults(rs);
    QTest::qWait(50);
    QCOMPARE(lat.seriesNames(), full);
    // A dashed curve's entry shows its line, a solid one's a swatch.
    for (QAbstractSeries* sr : lat.chart()->series())
      if (auto* line = qobject_cast<QLineSeries*>(sr); line && !line->name().isEmpty() && line->objectName().isEmpty())
        for (QLegendMarker* m : lat.chart()->legend()->markers(sr))
          QCOMPARE(m->shape() == QLegend::MarkerShapeFromSeries, line->pen().style() != Qt::SolidLine);
    QStringList shown = lat.legendTexts();
    QCOMPARE(shown, compact + QStringList{QStringLiteral("(gpus, leaves, preset)")});
    const QFontMetricsF fm(lat.chart()->legend()->font());
    for (const QString& t : shown)
      QVERIFY2(fm.horizontalAdvance(t) + 40 <= lat.chart()->legend()->maximumWidth(), qPrintable(t));
    lat.resize(2600, 900);
    QTest::qWait(50);
    QCOMPARE(lat.legendTexts(), full);
  }

  // The baseline box offers a choice only where there is one: it was live and empty on an
  // inference or measured run's Speedup tab.
  void speedupBaselineIsLiveOnlyWithTwoAlgorithms() {
    SpeedupChart sp;
    sp.resize(800, 500);
    auto* box = sp.findChild<QComboBox*>();
    QVERIFY(box);
    sp.setResults(manyCurves(4));  // ring and scin
    QVERIFY(box->isEnabled());
    QCOMPARE(box->count(), 2);
    ResultSet one = manyCurves(1);  // scin alone
    sp.setResults(one);
    QVERIFY(!box->isEnabled());
    sp.setResults(ResultSet{});
    QVERIFY(!box->isEnabled());
    QVERIFY(!sp.emptyText().isEmpty());
  }

  void legendOfManyCurvesIsCappedAndCounted() {
    LatencyChart lat;
    lat.resize(1000, 460);
    lat.show();
    lat.setResults(manyCurves(40));
    QTest::qWait(50);
    QCOMPARE(lat.seriesNames().size(), 40);         // every curve is drawn
    const int cap = lat.legendCap();
    QVERIFY2(cap > 3 && cap < 40, qPrintable(QString::number(cap)));
    const QStringList shown = lat.legendTexts();
    QCOMPARE(shown.size(), cap + 1);
    QCOMPARE(shown.front(), lat.seriesNames().front());
    QVERIFY2(shown.back().startsWith(QStringLiteral("+ %1 more: hover a curve").arg(40 - cap)), qPrintable(shown.back()));
    // The entries fit the legend's box (a row is a text line plus ~9 px).
    const QRectF legend = lat.chart()->legend()->geometry();
    const double row = QFontMetricsF(lat.chart()->legend()->font()).height() + 9;
    QVERIFY2(shown.size() * row <= legend.height(), qPrintable(QStringLiteral("%1 x %2 > %3").arg(shown.size()).arg(row).arg(legend.height())));
    // A taller chart lists more; few curves are all listed.
    lat.resize(1000, 800);
    QTest::qWait(50);
    QVERIFY(lat.legendCap() > cap);
    lat.setResults(manyCurves(5));
    QCOMPARE(lat.legendCap(), 0);
    QCOMPARE(lat.legendTexts().size(), 5);
    // Hiding a listed series strikes it out; the cap still holds after a toggle.
    lat.setResults(manyCurves(40));
    QTest::qWait(20);
    const QString last = lat.seriesNames().back();
    lat.setSeriesVisible(last, false);
    lat.setSeriesVisible(last, true);
    QCOMPARE(lat.legendTexts().size(), lat.legendCap() + 1);
  }

  // The share view: each bar's terms as shares of its own total, which its
  // label carries; a bar 300x shorter than another reads as well as the long one.
  void breakdownSharesShowEachBarsTerms() {
    ResultSet rs;
    const double terms[2][2] = {{1.2e6, 0.3e6}, {1000, 4000}};   // ring 1.5 ms, scin 5 us: (launch, sync) in ns
    const char* algos[2] = {"ring", "scin"};
    for (int k = 0; k < 2; ++k) {
      Curve c;
      c.algorithm = algos[k];
      c.label = QString::fromLatin1(algos[k]);
      SimResult r;
      r.bytes = 1 << 20;
      r.breakdown.ns[static_cast<int>(Term::Launch)] = terms[k][0];
      r.breakdown.ns[static_cast<int>(Term::Sync)] = terms[k][1];
      r.time_ns = terms[k][0] + terms[k][1];
      c.points.push_back(r);
      rs.curves.push_back(c);
    }
    BreakdownChart br;
    br.resize(900, 500);
    br.setSize(1 << 20);
    br.setResults(rs);
    QVERIFY(!br.shares());
    QCOMPARE(br.barValue(QStringLiteral("scin"), QStringLiteral("sync")), 4.0);   // µs
    // On the time axis too each bar's label carries its total (a short bar's number stays readable).
    auto* yTime = qobject_cast<QBarCategoryAxis*>(br.chart()->axes(Qt::Vertical).value(0));
    QVERIFY(yTime);
    QVERIFY2(yTime->categories().contains(QStringLiteral("scin · ") + scin::ui::timeText(5000)),
             qPrintable(yTime->categories().join(QLatin1Char('|'))));
    br.setShares(true);
    QCOMPARE(br.barValue(QStringLiteral("scin"), QStringLiteral("launch")), 20.0);   // %
    QCOMPARE(br.barValue(QStringLiteral("scin"), QStringLiteral("sync")), 80.0);
    QCOMPARE(br.barValue(QStringLiteral("ring"), QStringLiteral("launch")), 80.0);
    auto* y = qobject_cast<QBarCategoryAxis*>(br.chart()->axes(Qt::Vertical).value(0));
    QVERIFY(y);
    QVERIFY2(y->categories().contains(QStringLiteral("scin · ") + scin::ui::timeText(5000)), qPrintable(y->categories().join(QLatin1Char('|'))));
    QCOMPARE(br.chart()->axes(Qt::Horizontal).value(0)->titleText(), QStringLiteral("Share of the algorithm's latency (%)"));
    auto* x = qobject_cast<QValueAxis*>(br.chart()->axes(Qt::Horizontal).value(0));
    QVERIFY(x);
    QCOMPARE(x->max(), 100.0);
    br.setShares(false);
    QCOMPARE(br.barValue(QStringLiteral("ring"), QStringLiteral("launch")), 1200.0);
  }

  // Qt Charts' cost grows with the square of its series: a run of thousands of
  // curves draws the first kMaxCurves, says so, and still exports every curve.
  // A sweep's curves are named by full parameter paths; the breakdown's bar
  // labels name each value by its axis's short name, unless two bars would then
  // read alike.
  void breakdownBarsNameAxesByTheirShortNames() {
    BreakdownChart br;
    br.resize(900, 600);
    br.setSize(8);
    ResultSet rs = manyCurves(3);
    br.setResults(rs);
    QCOMPARE(br.barValue(QStringLiteral("scin bandwidth_GBps=100"), QStringLiteral("launch")), 0.0);
    QCOMPARE(br.barValue(QStringLiteral("ring bandwidth_GBps=150"), QStringLiteral("launch")), 0.0);
    QCOMPARE(br.barValue(QStringLiteral("scin links.bandwidth_GBps=100"), QStringLiteral("launch")), -1.0);
    rs.curves[0].label = QStringLiteral("scin (links.latency_ns=1)");
    rs.curves[2].label = QStringLiteral("scin (switch.latency_ns=1)");
    br.setResults(rs);
    QCOMPARE(br.barValue(QStringLiteral("scin (links.latency_ns=1)"), QStringLiteral("launch")), 0.0);
    QCOMPARE(br.barValue(QStringLiteral("scin (switch.latency_ns=1)"), QStringLiteral("launch")), 0.0);
    QCOMPARE(br.barValue(QStringLiteral("scin (latency_ns=1)"), QStringLiteral("launch")), -1.0);
  }

  // Qt Charts cuts a bar label to "..." when the bar is lower than the label:
  // a sweep of 36 bars in a 600 px tab showed every label so. The chart asks
  // for a row per bar; the tab scrolls, an exported figure grows, and every
  // label reads whole.
  // A stored run's curves name their axes as the Analysis view does ("gpus",
  // "bandwidth_GBps"), by path only where two short names would read alike.
  void curvesOfAStoredRunNameTheirAxesByShortNames() {
    auto point = [](const std::string& algo, nlohmann::json axes) {
      PointRecord p;
      p.algorithm = algo;
      p.bytes = 4096;
      p.gpus = 8;
      p.time_us = 10;
      axes["collective.bytes"] = 4096;
      axes["collective.algorithm"] = algo;
      p.axes = std::move(axes);
      return p;
    };
    ResultSet rs = toResultSet({point("ring", {{"fabric.gpus", 8}, {"links.bandwidth_GBps", 900}}),
                                point("nvls", {{"fabric.gpus", 4}, {"links.bandwidth_GBps", 450.0}})});
    QCOMPARE(rs.curves.size(), std::size_t(2));
    QCOMPARE(rs.curves[0].label, QStringLiteral("ring (gpus=8 bandwidth_GBps=900)"));
    QCOMPARE(rs.curves[1].label, QStringLiteral("nvls (gpus=4 bandwidth_GBps=450)"));
    rs = toResultSet({point("scin", {{"links.latency_ns", 100}, {"switch.latency_ns", 250}})});
    QCOMPARE(rs.curves[0].label, QStringLiteral("scin (links.latency_ns=100 switch.latency_ns=250)"));
    rs = toResultSet({point("scin", {})}, QStringLiteral("#2 run"));
    QCOMPARE(rs.curves[0].label, QStringLiteral("scin (#2 run)"));
  }

  void breakdownWithManyBarsKeepsEveryLabelWhole() {
    // 36 bars named as a three-axis sweep names them.
    const int n = 36;
    ResultSet rs = manyCurves(n);
    QStringList expected;
    for (int k = 0; k < n; ++k) {
      Curve& c = rs.curves[static_cast<std::size_t>(k)];
      const int gpus = 2 << (k % 3), bw = 300 + 150 * (k / 3 % 4), lat = 100 + 25 * (k / 12);
      c.label = QStringLiteral("%1 (fabric.gpus=%2 links.bandwidth_GBps=%3 links.latency_ns=%4)")
                    .arg(QString::fromStdString(c.algorithm)).arg(gpus).arg(bw).arg(lat);
      expected << QStringLiteral("%1 (%2, %3, %4)").arg(QString::fromStdString(c.algorithm)).arg(gpus).arg(bw).arg(lat);
      for (SimResult& r : c.points) r.breakdown.ns[0] = r.time_ns;
    }
    BreakdownChart br;
    br.resize(900, 600);
    br.show();
    br.setSize(8);
    br.setResults(rs);
    QTest::qWait(50);
    // The names go to the axis title once; each bar keeps its values.
    QAbstractAxis* y = br.chart()->axes(Qt::Vertical).value(0);
    QCOMPARE(y->titleText(), QStringLiteral("Algorithm (gpus, bandwidth_GBps, latency_ns)"));
    QCOMPARE(br.barValue(expected[5], QStringLiteral("launch")), rs.curves[5].points[0].time_ns / 1e3);
    const int rowPx = QFontMetrics(y->labelsFont()).height();
    QVERIFY2(br.minimumChartHeight() >= (n + 1) * rowPx, qPrintable(QString::number(br.minimumChartHeight())));
    QVERIFY(br.view()->height() >= br.minimumChartHeight());
    QVERIFY(br.height() < br.minimumChartHeight());  // so the tab scrolls
    // Each label ends with its bar's total.
    QSet<QString> labels;
    for (int k = 0; k < n; ++k)
      for (const SimResult& r : rs.curves[static_cast<std::size_t>(k)].points)
        if (r.bytes == 8) labels.insert(expected[k] + QStringLiteral(" · ") + scin::ui::timeText(r.time_ns));
    QCOMPARE(labels.size(), n);
    int whole = 0, cut = 0;
    for (QGraphicsItem* it : br.chart()->scene()->items())
      if (auto* t = dynamic_cast<QGraphicsTextItem*>(it); t && t->isVisible()) {
        const QString text = t->toPlainText();
        if (labels.contains(text)) ++whole;
        else if (text.endsWith(QStringLiteral("..."))) ++cut;
      }
    QCOMPARE(cut, 0);
    QCOMPARE(whole, n);
    // The keys are said where they are seen (the axis title is mid-way down a scrolled
    // chart), and the terms' key is above the plot, each name whole.
    QVERIFY2(br.chart()->title().contains(QStringLiteral("rows: algorithm (gpus, bandwidth_GBps, latency_ns)")),
             qPrintable(br.chart()->title()));
    QCOMPARE(br.chart()->legend()->alignment(), Qt::AlignTop);
    QCOMPARE(br.chart()->legend()->markers().size(), 1);  // (the one term set here)
    QCOMPARE(br.chart()->legend()->markers().front()->label(), QStringLiteral("launch"));
    // Fewer bars need no more than the tab has, and keep their names.
    br.setResults(manyCurves(4));
    QVERIFY(br.minimumChartHeight() < 600);
    QCOMPARE(br.chart()->axes(Qt::Vertical).value(0)->titleText(), QStringLiteral("Algorithm"));
    br.setResults(rs);
    const QImage img = Exporter::renderChart(&br, QSize(1000, 600), 1.0);
    QCOMPARE(img.height(), br.minimumChartHeight());
    QCOMPARE(img.width(), 1000);
  }

  // Twelve bars of a two-axis sweep (isa-waves) on a laptop: "scin (regulation=none
  // waves..." was cut before its distinguishing value and its total; each bar now shows
  // its values and total whole, the keys once in the title, the terms' key beside it.
  void breakdownOfATwoAxisSweepShowsEachBarsValuesAndTotal() {
    ResultSet rs = manyCurves(12);
    QStringList expected;
    for (int k = 0; k < 12; ++k) {
      Curve& c = rs.curves[static_cast<std::size_t>(k)];
      c.algorithm = "scin";
      const QString reg = k < 6 ? QStringLiteral("none") : QStringLiteral("paced");
      const int waves = 1 << (k % 6);
      c.label = QStringLiteral("scin (switch.isa.regulation=%1 switch.isa.waves=%2)").arg(reg).arg(waves);
      for (SimResult& r : c.points) r.breakdown.ns[0] = r.time_ns;
      for (const SimResult& r : c.points)
        if (r.bytes == 8) expected << QStringLiteral("scin (%1, %2) · %3").arg(reg).arg(waves).arg(scin::ui::timeText(r.time_ns));
    }
    BreakdownChart br;
    br.resize(700, 560);
    br.show();
    br.setSize(8);
    br.setResults(rs);
    QTest::qWait(50);
    QVERIFY2(br.chart()->title().contains(QStringLiteral("rows: algorithm (regulation, waves)")),
             qPrintable(br.chart()->title()));
    QCOMPARE(br.chart()->legend()->alignment(), Qt::AlignRight);
    QSet<QString> shown;
    for (QGraphicsItem* it : br.chart()->scene()->items())
      if (auto* t = dynamic_cast<QGraphicsTextItem*>(it); t && t->isVisible()) shown.insert(t->toPlainText());
    for (const QString& e : expected) QVERIFY2(shown.contains(e), qPrintable(e));
    // Made narrower, the labels are fitted again to the room left (their middles elided):
    // every bar's total still stands at the end of its label (Qt cut the labels fitted
    // to 700 px at their end, where the totals are).
    br.resize(460, 560);
    QSet<QString> totals;
    for (const QString& e : expected) totals.insert(e.mid(e.indexOf(QStringLiteral(" · "))));
    auto totalsShown = [&] {
      int n = 0;
      for (QGraphicsItem* it : br.chart()->scene()->items())
        if (auto* t = dynamic_cast<QGraphicsTextItem*>(it); t && t->isVisible()) {
          const QString text = t->toPlainText();
          const qsizetype dot = text.lastIndexOf(QStringLiteral(" · "));
          n += dot > 0 && totals.contains(text.mid(dot)) ? 1 : 0;
        }
      return n;
    };
    QTRY_COMPARE(totalsShown(), static_cast<int>(expected.size()));
    QCOMPARE(br.chart()->legend()->alignment(), Qt::AlignTop);  // (narrow: the terms' key above the bars)
  }

  void sizeChartsDrawAtMostTheirCapOfCurves() {
    const int n = static_cast<int>(SizeChart::kMaxCurves) + 50;
    LatencyChart lat;
    lat.resize(1000, 600);
    lat.show();
    lat.setResults(manyCurves(n));
    QTest::qWait(20);
    QCOMPARE(lat.seriesNames().size(), static_cast<int>(SizeChart::kMaxCurves));
    QCOMPARE(lat.seriesNames().front(), manyCurves(1).curves[0].label);
    QVERIFY2(lat.note().contains(QStringLiteral("first %1 of %2 curves").arg(SizeChart::kMaxCurves).arg(n)),
             qPrintable(lat.note()));
    QCOMPARE(lat.csv().count(QLatin1Char('\n')), 1 + n * 6);   // header + 6 sizes per curve, every curve
    lat.setResults(manyCurves(40));
    QCOMPARE(lat.seriesNames().size(), 40);
    QVERIFY(!lat.note().contains(QStringLiteral("curves (one per")));
  }

  // A live preview refining or following an edit changes only the values:
  // the chart replaces its series' points in place (same series objects) and
  // shows exactly the new values; new names, a y range in other decades or
  // another metric draw the chart anew, also with exactly the new values.
  void sizeChartUpdatesValuesInPlace() {
    auto expectShows = [](const SizeChart& chart, const ResultSet& rs, auto value) {
      for (const Curve& c : rs.curves) {
        const auto data = chart.seriesData(c.label);
        QCOMPARE(data.size(), c.points.size());
        for (std::size_t i = 0; i < data.size(); ++i) {
          QCOMPARE(data[i].first, static_cast<double>(c.points[i].bytes));
          QCOMPARE(data[i].second, value(c.points[i]));
        }
      }
    };
    auto scaled = [](ResultSet rs, double f) {
      for (Curve& c : rs.curves)
        for (SimResult& r : c.points) {
          r.time_ns *= f;
          r.algbw_GBps /= f;
          r.busbw_GBps /= f;
        }
      return rs;
    };
    auto us = [](const SimResult& r) { return r.time_ns / 1e3; };
    LatencyChart lat;
    lat.resize(1000, 600);
    lat.show();
    const ResultSet a = manyCurves(3);
    lat.setResults(a);
    expectShows(lat, a, us);
    QAbstractSeries* first = lat.chart()->series().front();
    const ResultSet b = scaled(a, 1.01);  // the same decades
    lat.setResults(b);
    QVERIFY(lat.chart()->series().front() == first);
    expectShows(lat, b, us);
    ResultSet partial = b;  // refining: fewer points on the same curves, both ends included
    for (Curve& c : partial.curves) c.points.erase(c.points.begin() + 1, c.points.end() - 2);
    lat.setResults(partial);
    QVERIFY(lat.chart()->series().front() == first);
    expectShows(lat, partial, us);
    lat.setResults(b);
    expectShows(lat, b, us);
    const ResultSet slow = scaled(a, 1000);  // other decades: new axes
    lat.setResults(slow);
    expectShows(lat, slow, us);
    auto* axis = qobject_cast<QLogValueAxis*>(lat.chart()->axes(Qt::Vertical).front());
    QVERIFY(axis);
    QVERIFY(axis->max() >= slow.curves.back().points.back().time_ns / 1e3);
    ResultSet renamed = slow;
    renamed.curves[1].label = QStringLiteral("renamed");
    lat.setResults(renamed);
    expectShows(lat, renamed, us);
    QVERIFY(lat.seriesNames().contains(QStringLiteral("renamed")));
    // Another metric of the same results: drawn anew with its values.
    BandwidthChart bw;
    bw.resize(1000, 600);
    bw.show();
    bw.setResults(a);
    expectShows(bw, a, [](const SimResult& r) { return r.busbw_GBps; });
    bw.setMetric(BandwidthChart::AlgBw);
    expectShows(bw, a, [](const SimResult& r) { return r.algbw_GBps; });
  }

  // File > Import measurements (and dropping a log or CSV on the window): each file becomes
  // a measured run of the open database, as `scin import` stores it; a malformed file
  // imports nothing and is shown with its line.
  void importingMeasurementFilesAddsMeasuredRuns() {
    MainWindow w;
    w.resize(1200, 800);
    w.show();
    QVERIFY(w.createDatabase(dir_.filePath(QStringLiteral("import.scindb"))));
    settle(w);
    const QString log = QStringLiteral(SCIN_CALIB_FIXTURES "/allreduce-mpirun-older-format.log");
    const auto ids = w.importMeasurements({log});
    QCOMPARE(ids.size(), std::size_t(1));
    const RunInfo run = w.store()->get_run(ids[0]);
    QCOMPARE(run.kind, PointKind::Measured);
    QCOMPARE(run.name, std::string("allreduce-mpirun-older-format.log"));
    const auto pts = w.store()->points(ids[0]);
    QCOMPARE(pts.size(), std::size_t(3));
    QCOMPARE(pts[0].bytes, std::uint64_t(1048576));
    QCOMPARE(pts[0].measured_us, 41.37);
    QCOMPARE(run.spec["ignored_lines"].size(), std::size_t(3));
    QVERIFY(w.statusBar()->currentMessage().contains(QStringLiteral("3 points")));
    // A suite's log: the other benchmark's table is counted apart from the lines that are no row.
    {
      const QString suite = dir_.filePath(QStringLiteral("suite.log"));
      QFile in(QStringLiteral(SCIN_CALIB_FIXTURES "/allreduce-g8-single-process.log")), f(suite);
      QVERIFY(in.open(QIODevice::ReadOnly));
      QVERIFY(f.open(QIODevice::WriteOnly));
      const QByteArray one = in.readAll();
      f.write("$ ./build/all_gather_perf -g 8\n" + one + "$ ./build/all_reduce_perf -g 8\n" + one);
      f.close();
      const auto more = w.importMeasurements({suite});
      QCOMPARE(more.size(), std::size_t(1));
      QCOMPARE(w.store()->points(more[0]).size(), std::size_t(13));
      const QString msg = w.statusBar()->currentMessage();
      QVERIFY2(msg.contains(QStringLiteral("13 points (skipped 1 other benchmark table(s), 2 other line(s)")),
               qPrintable(msg));
      w.store()->delete_run(more[0]);
    }
    // A malformed file: nothing stored, the error names the line.
    const QString bad = dir_.filePath(QStringLiteral("bad.csv"));
    {
      QFile f(bad);
      QVERIFY(f.open(QIODevice::WriteOnly));
      f.write("system,gpus,algorithm,bytes,measured_us\nH200,8,ring,8,fast\n");
    }
    QVERIFY(w.importMeasurements({log, bad}).empty());
    QVERIFY2(w.lastError().contains(QStringLiteral("bad.csv:2: measured_us")), qPrintable(w.lastError()));
    QCOMPARE(w.store()->list_runs().size(), std::size_t(1));
    // Dropping a CSV imports it (a database would be opened instead).
    const QString good = dir_.filePath(QStringLiteral("good.csv"));
    {
      QFile f(good);
      QVERIFY(f.open(QIODevice::WriteOnly));
      f.write("system,gpus,algorithm,bytes,measured_us\nH200 lab,8,ring,8,14.9\n");
    }
    QMimeData mime;
    mime.setUrls({QUrl::fromLocalFile(good)});
    QDragEnterEvent enter(QPoint(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(&w, &enter);
    QVERIFY(enter.isAccepted());
    QDropEvent drop(QPointF(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(&w, &drop);
    QVERIFY(drop.isAccepted());
    QCOMPARE(w.databasePath(), dir_.filePath(QStringLiteral("import.scindb")));
    QCOMPARE(w.store()->list_runs().size(), std::size_t(2));
    // nccl-tests' JSON report (-J) is a measurement file; another JSON file is not.
    QVERIFY(MainWindow::isMeasurementFile(QStringLiteral(SCIN_CALIB_FIXTURES "/allreduce-g8-report.json")));
    const QString other = dir_.filePath(QStringLiteral("preset.json"));
    {
      QFile f(other);
      QVERIFY(f.open(QIODevice::WriteOnly));
      f.write("{\"name\": \"my-fabric\", \"fabric\": {\"gpus\": 8}}\n");
    }
    QVERIFY(!MainWindow::isMeasurementFile(other));
    QMimeData json;
    json.setUrls({QUrl::fromLocalFile(QStringLiteral(SCIN_CALIB_FIXTURES "/allreduce-g8-report.json"))});
    QDragEnterEvent enterJson(QPoint(10, 10), Qt::CopyAction, &json, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(&w, &enterJson);
    QDropEvent dropJson(QPointF(10, 10), Qt::CopyAction, &json, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(&w, &dropJson);
    QVERIFY(dropJson.isAccepted());
    QCOMPARE(w.store()->list_runs().size(), std::size_t(3));
    settle(w);
  }

  // On a 1366x768 screen the Validation tab's charts keep the height their y axis titles need:
  // the model's notes (nine lines for an imported -g 8 log) scroll beside the table
  // rather than push the charts up (they cut "Latency (µs, log scale)" to "Latency (µs, ...").
  void validationChartsKeepTheirAxisTitlesOnALaptopScreen() {
    const QString path = dir_.filePath(QStringLiteral("laptop-validation.scindb"));
    std::int64_t sim = 0;
    {
      Store store = Store::open(path.toStdString(), Access::Create);
      sim = storeSweep(store, "h200", {"ring", "nvls"});
    }
    MainWindow w;
    w.resize(1366, 700);  // 768 less a taskbar and the title bar
    w.show();
    QVERIFY(w.openDatabase(path));
    settle(w);
    QCOMPARE(w.importMeasurements({QStringLiteral(SCIN_CALIB_FIXTURES "/allreduce-g8-single-process.log")}).size(),
             std::size_t(1));
    settle(w);
    w.runBrowser()->selectRun(sim);
    settle(w);
    QVERIFY(w.showTab(QStringLiteral("validation")));
    QTRY_VERIFY(!w.measuredOverlay()->busy());
    QCOMPARE(w.measuredOverlay()->match().choices.size(), std::size_t(1));
    w.measuredOverlay()->setCurrent(0);
    auto* v = qobject_cast<ValidationView*>(w.chart(QStringLiteral("validation")));
    QVERIFY(v);
    QTRY_VERIFY2(v->hasData(), qPrintable(v->emptyText() + QStringLiteral(" choices %1 current %2")
                                                              .arg(w.measuredOverlay()->match().choices.size())
                                                              .arg(w.measuredOverlay()->current())));
    QTest::qWait(100);
    auto* model = v->findChild<QLabel*>(QStringLiteral("validationModel"));
    QVERIFY(model && model->text().contains(QStringLiteral("launch_serial_ns")));  // the long notes
    for (QChart* c : {v->chart(), v->errorChart()}) {
      auto* y = c->axes(Qt::Vertical).value(0);
      QVERIFY(y);
      const qreal need = QFontMetricsF(y->titleFont()).horizontalAdvance(y->titleText());
      QVERIFY2(c->plotArea().height() >= need,
               qPrintable(QStringLiteral("'%1' needs %2 px, the plot is %3 px tall")
                              .arg(y->titleText())
                              .arg(need)
                              .arg(c->plotArea().height())));
    }
    // Both half-width size axes label their last size (128 MiB: it was left
    // unlabelled, even in a wide report), and every label fits the width Qt Charts
    // gives each (it elides wider ones); the legend names the algorithm whole
    // ("measured nccl-auto" showed as "measure...").
    for (QChart* c : {v->chart(), v->errorChart()}) {
      auto* x = qobject_cast<QCategoryAxis*>(c->axes(Qt::Horizontal).value(0));
      QVERIFY(x);
      const QStringList labels = x->categoriesLabels();
      QVERIFY(labels.size() >= 2);
      QCOMPARE(labels.back(), QStringLiteral("128 MiB"));
      QCOMPARE(labels.front(), QStringLiteral("8 B"));
      const QFontMetricsF fm(x->labelsFont());
      for (const QString& l : labels)
        QVERIFY2(fm.horizontalAdvance(l) <= c->plotArea().width() / (labels.size() + 1) - 8, qPrintable(l));
      QStringList shown;
      for (QLegendMarker* m : c->legend()->markers())
        if (m->isVisible()) shown << m->label();
      QVERIFY2(shown.contains(QStringLiteral("nccl-auto")), qPrintable(shown.join(QStringLiteral(", "))));
    }
    // The table shows all its rows; the words are all there, scrolled.
    QTableWidget* t = v->statsTable();
    QVERIFY(t->isVisible());
    QVERIFY(t->rowCount() >= 4);
    const QRect last = t->visualItemRect(t->item(t->rowCount() - 1, 0));
    QVERIFY2(last.bottom() <= t->viewport()->height(),
             qPrintable(QStringLiteral("last row ends at %1 of %2").arg(last.bottom()).arg(t->viewport()->height())));
    QVERIFY(model->isVisibleTo(v));
  }

  // A run whose sweep varies the preset (the fabrics example) is compared with measured
  // rows at the preset they name, not at its base configuration (the registry defaults,
  // which no point ran: 21% MAPE where its H200 member gave 2%), and each preset's match
  // is its own entry. On a 1366-pixel screen the Bandwidth tab's controls (its metric
  // and measured-run boxes) kept the window 1516 pixels wide.
  void presetSweepComparesEachPresetAndBandwidthTabFitsALaptop() {
    const QString path = dir_.filePath(QStringLiteral("laptop-presets.scindb"));
    std::int64_t sim = 0, meas = 0;
    const std::vector<Measured> rows = {{"HGX H200 (bench)", "ring", 8, 1u << 20, 60.0},
                                        {"HGX H100 (bench)", "ring", 8, 1u << 20, 70.0},
                                        {"HGX A100 (bench)", "ring", 8, 1u << 20, 80.0}};
    {
      Store store = Store::open(path.toStdString(), Access::Create);
      nlohmann::json j = {{"name", "presets"},
                          {"kind", "collective"},
                          {"base", {{"collective", {{"dtype", "bf16"}}}}},
                          {"axes",
                           {{{"path", "preset"}, {"values", {"hgx-h100-8", "hgx-h200-8"}}},
                            {{"path", "collective.algorithm"}, {"values", {"ring"}}},
                            {{"path", "collective.bytes"}, {"values", {"64K", "1M"}}}}}};
      SweepOptions o;
      o.threads = 1;
      sim = run_sweep(store, sweep_spec_from_json(j), o, {}).run_id;
      meas = storeMeasured(store, "labs.csv", rows);
    }
    MainWindow w;
    w.resize(1366, 700);  // 768 less a taskbar and the title bar
    w.show();
    QVERIFY(w.openDatabase(path));
    settle(w);
    w.runBrowser()->selectRun(sim);
    settle(w);
    QTRY_VERIFY(!w.measuredOverlay()->busy());
    const MeasuredMatch& m = w.measuredOverlay()->match();
    QVERIFY(m.presetAxis);
    QCOMPARE(m.choices.size(), std::size_t(2));  // the A100 row names neither preset
    const char* presets[] = {"hgx-h100-8", "hgx-h200-8"};
    for (std::size_t i = 0; i < 2; ++i) {
      const MeasuredChoice& c = m.choices[i];
      QCOMPARE(c.run_id, meas);
      QCOMPARE(c.preset, QString::fromLatin1(presets[i]));
      QVERIFY2(c.label().startsWith(c.preset + QStringLiteral(" · #")), qPrintable(c.label()));
      QVERIFY2(c.fabric.startsWith(c.preset), qPrintable(c.fabric));
      QCOMPARE(c.report.overall.rows, 1);
      const MeasuredRow& r = c.report.rows.at(0).row;
      QCOMPARE(QString::fromStdString(r.system), QString::fromStdString(rows[1 - i].system));
      QCOMPARE(c.report.rows.at(0).model_us, validate_rows(load_preset(presets[i]), {r}).rows.at(0).model_us);
    }
    w.measuredOverlay()->setCurrent(1);
    QVERIFY(w.showTab(QStringLiteral("validation")));
    auto* v = qobject_cast<ValidationView*>(w.chart(QStringLiteral("validation")));
    QVERIFY(v);
    QTRY_VERIFY2(v->hasData(), qPrintable(v->emptyText()));
    auto* model = v->findChild<QLabel*>(QStringLiteral("validationModel"));
    QVERIFY(model);
    QVERIFY2(model->text().contains(QStringLiteral("hgx-h200-8 (H200, 8 GPUs)")) &&
                 model->text().contains(QStringLiteral("varies the preset")) &&
                 !model->text().contains(QStringLiteral("base configuration")),
             qPrintable(model->text()));
    // The Bandwidth tab, its measured points shown: the window stays within the screen.
    QVERIFY(w.showTab(QStringLiteral("bandwidth")));
    settle(w);
    QTest::qWait(100);
    QVERIFY2(w.minimumSizeHint().width() <= 1366 && w.width() <= 1366,
             qPrintable(QStringLiteral("minimum %1, width %2").arg(w.minimumSizeHint().width()).arg(w.width())));
    auto* bw = w.chart(QStringLiteral("bandwidth"));
    for (auto* box : bw->findChildren<QComboBox*>())
      QVERIFY2(box->sizeHint().width() <= 300, qPrintable(box->currentText()));
    // And on a 1280-pixel screen.
    QVERIFY2(w.minimumSizeHint().width() <= 1280, qPrintable(QString::number(w.minimumSizeHint().width())));
  }

  // A report of a run with a measured run picked holds what the Validation tab shows:
  // both charts, the table of MAPE and bias (core's numbers) and how the rows were
  // modelled; it held the model-vs-measured chart alone.
  void reportHoldsTheValidationTabsErrorChartAndTable() {
    MainWindow w;
    QVERIFY(showRun(w, db_, simRun_));
    QTRY_VERIFY(!w.measuredOverlay()->busy());
    const MeasuredMatch& m = w.measuredOverlay()->match();
    int pick = -1;
    for (std::size_t i = 0; i < m.choices.size(); ++i)
      if (m.choices[i].run_id == measuredRun_) pick = static_cast<int>(i);
    QVERIFY(pick >= 0);
    w.measuredOverlay()->setCurrent(pick);
    auto* v = qobject_cast<ValidationView*>(w.chart(QStringLiteral("validation")));
    QTRY_VERIFY(v->hasData());
    QCOMPARE(v->extraCharts().size(), std::size_t(1));
    const QString path = dir_.filePath(QStringLiteral("validation-report.html"));
    QString err;
    QVERIFY2(w.exportReportTo(path, &err), qPrintable(err));
    QFile f(path);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QString h = QString::fromUtf8(f.readAll());
    const int model = h.indexOf(QStringLiteral("<h3>Model (lines) vs measured (markers)</h3>"));
    const int error = h.indexOf(QStringLiteral("<h3>Model error (below 0: model too fast)</h3>"));
    QVERIFY(model > 0 && error > model);
    // The table: core's figures for these rows, overall and per regime.
    std::vector<MeasuredRow> rows;
    for (const Measured& r : h200_) rows.push_back(row(r));
    const ValidationReport rep = validate_rows(load_preset("hgx-h200-8"), rows);
    const int table = h.indexOf(QStringLiteral("<th>MAPE %</th>"), error);
    QVERIFY(table > error);
    const QString overall = QStringLiteral("<tr><th>overall</th><td style=\"text-align:right\">%1</td>"
                                           "<td style=\"text-align:right\">%2</td><td style=\"text-align:right\">%3</td>")
                                .arg(rep.overall.rows)
                                .arg(QString::number(rep.overall.mape_pct, 'f', 1), QString::number(rep.overall.bias_pct, 'f', 1));
    QVERIFY2(h.indexOf(overall, table) > table, qPrintable(overall));
    QVERIFY(h.indexOf(QStringLiteral("<th>≤ 64 KiB</th>"), table) > table);
    QVERIFY(h.contains(QStringLiteral("Measured: run ") + w.measuredOverlay()->chosen()->label().toHtmlEscaped()));
    QVERIFY(h.contains(QStringLiteral("model ÷ measured − 1")));
    // Every chart with data is one picture: the error chart counts.
    int pictures = w.analysisView()->hasData() ? 1 : 0;
    for (ChartPanel* c : w.charts())
      if (c->hasData()) pictures += 1 + static_cast<int>(c->extraCharts().size());
    QCOMPARE(h.count(QStringLiteral("data:image/png;base64,")), pictures);
  }

  void measuredPointsOverlayTheSimulatedRun() {
    MainWindow w;
    QVERIFY(showRun(w, db_, simRun_));
    MeasuredOverlay* m = w.measuredOverlay();
    QCOMPARE(m->match().run_id, simRun_);
    QCOMPARE(m->match().gpus, 8);
    // Two measured runs match (same GPU count, system names H200); b200.csv does not.
    QCOMPARE(m->match().choices.size(), std::size_t(2));
    QCOMPARE(m->match().choices[0].run_id, measuredRun_);
    QCOMPARE(m->current(), 0);
    auto* lat = qobject_cast<LatencyChart*>(w.chart(QStringLiteral("latency")));
    auto* bw = qobject_cast<BandwidthChart*>(w.chart(QStringLiteral("bandwidth")));
    const QString ring = QStringLiteral("measured ring (HGX H200 (test bench))");
    const QString nvls = QStringLiteral("measured nvls (HGX H200 (test bench))");
    QCOMPARE(lat->measuredSeriesNames(), (QStringList{ring, nvls}));  // in row order
    QVERIFY(lat->seriesNames().contains(QStringLiteral("ring")));  // the run's own curves stay
    // (One system, too long to stand beside the plot at 1400 px: the legend names the algorithms.)
    QVERIFY(lat->legendTexts().contains(QStringLiteral("measured ring")) &&
            lat->legendTexts().contains(QStringLiteral("measured nvls")));
    // Exactly the measured points of that fabric: 3 ring rows (not the 4-GPU nor the B200 one).
    const auto pts = lat->seriesData(ring);
    QCOMPARE(pts.size(), std::size_t(3));
    for (std::size_t i = 0; i < 3; ++i) {
      QCOMPARE(pts[i].first, static_cast<double>(h200_[i].bytes));
      QCOMPARE(pts[i].second, h200_[i].us);
    }
    // Markers without lines.
    for (QAbstractSeries* s : lat->chart()->series())
      if (s->name() == ring) QCOMPARE(s->type(), QAbstractSeries::SeriesTypeScatter);
    // Bandwidth: busbw of the measured time, as nccl-tests reports it.
    bw->setMetric(BandwidthChart::BusBw);
    const auto bus = bw->seriesData(ring);
    QCOMPARE(bus.size(), std::size_t(3));
    QCOMPARE(bus[2].second, static_cast<double>(h200_[2].bytes) / (h200_[2].us * 1e3) * busbw_factor(8));
    bw->setMetric(BandwidthChart::LinkBytes);
    QVERIFY(bw->measuredSeriesNames().isEmpty());  // no measured counterpart
    bw->setMetric(BandwidthChart::BusBw);

    // The pick: the second run, or none.
    auto* combo = lat->findChild<QComboBox*>(QStringLiteral("measuredCombo"));
    QVERIFY(combo && !combo->isHidden());
    QCOMPARE(combo->count(), 3);
    m->setCurrent(1);
    QCOMPARE(lat->measuredSeriesNames(), QStringList{QStringLiteral("measured ring (H200 lab)")});
    QCOMPARE(bw->measuredSeriesNames(), QStringList{QStringLiteral("measured ring (H200 lab)")});
    QCOMPARE(combo->currentIndex(), 2);
    combo->activated(0);
    QVERIFY(lat->measuredSeriesNames().isEmpty());
    m->setCurrent(0);

    // The live preview has no overlay.
    w.runBrowser()->tree()->clearSelection();
    settle(w);
    QCOMPARE(m->match().run_id, std::int64_t(0));
    QVERIFY(lat->measuredSeriesNames().isEmpty());
    QVERIFY(combo->isHidden());
  }

  void measuredPointsOfATimedHarnessAreDrawnLessItsFixedCost() {
    // hgx-h200-8 records a fixed cost for the torch all_reduce_bench harness: its points are
    // drawn less it (the comparison the Validation tab and scin validate make), named so.
    const double offset_us = preset_harness_offsets("hgx-h200-8").at("HGX H200 (stas00 all_reduce_bench)");
    QVERIFY(offset_us > 10 && offset_us < 30);
    const QString path = dir_.filePath(QStringLiteral("harness.scindb"));
    std::int64_t sim = 0;
    {
      Store store = Store::open(path.toStdString(), Access::Create);
      sim = storeSweep(store, "h200 ring", {"ring"});
      QVERIFY(sim > 0);
      storeMeasured(store, "torch.csv",
                    {{"HGX H200 (stas00 all_reduce_bench)", "ring", 8, 65536, 39.24},
                     {"HGX H200 (stas00 all_reduce_bench)", "ring", 8, 1u << 20, 45.95},
                     {"HGX H200 (bench)", "ring", 8, 1u << 20, 27.8}});  // another harness: no offset
    }
    MainWindow w;
    QVERIFY(showRun(w, path, sim));
    QCOMPARE(w.measuredOverlay()->current(), 0);
    auto* lat = qobject_cast<LatencyChart*>(w.chart(QStringLiteral("latency")));
    auto* bw = qobject_cast<BandwidthChart*>(w.chart(QStringLiteral("bandwidth")));
    const QString torch = QStringLiteral("measured ring (HGX H200 (stas00 all_reduce_bench)) − %1 harness")
                              .arg(timeText(offset_us * 1e3));
    const QString plain = QStringLiteral("measured ring (HGX H200 (bench))");
    QCOMPARE(lat->measuredSeriesNames(), (QStringList{torch, plain}));
    const auto t = lat->seriesData(torch);
    QCOMPARE(t.size(), std::size_t(2));
    QCOMPARE(t[0].second, 39.24 - offset_us);
    QCOMPARE(t[1].second, 45.95 - offset_us);
    QCOMPARE(lat->seriesData(plain).at(0).second, 27.8);
    bw->setMetric(BandwidthChart::BusBw);
    QCOMPARE(bw->seriesData(torch).at(1).second, double(1u << 20) / ((45.95 - offset_us) * 1e3) * busbw_factor(8));
    const QString tip = lat->measuredTip(torch, 1u << 20);
    QVERIFY2(tip.contains(QStringLiteral("harness's fixed cost")) && tip.contains(QStringLiteral("measured 46.0 µs")) &&
                  tip.contains(QStringLiteral("+ harness 18.2 µs = ")), qPrintable(tip));
    QVERIFY(!lat->measuredTip(plain, 1u << 20).contains(QStringLiteral("harness")));
    const QString note = lat->note();
    QVERIFY2(note.contains(QStringLiteral("HGX H200 (stas00 all_reduce_bench) are drawn less its harness's fixed cost ")) &&
                 !note.contains(QStringLiteral("HGX H200 (bench) are drawn")),
             qPrintable(note));
    // On a laptop screen the legend beside the plot is too narrow for those names (both were
    // elided to "measured ring (HGX H200 (..."): each entry keeps what tells it apart.
    w.resize(1366, 768);
    w.show();
    QVERIFY(w.showTab(QStringLiteral("latency")));
    settle(w);
    QTRY_VERIFY(lat->legendTexts().contains(QStringLiteral("measured ring · stas00 all_reduce_bench")));
    QVERIFY(lat->legendTexts().contains(QStringLiteral("measured ring · bench")));
    QCOMPARE(lat->measuredSeriesNames(), (QStringList{torch, plain}));  // (the series keep their names)
    // Their entries show each series' marker (one algorithm's systems share a colour).
    for (QAbstractSeries* sr : lat->chart()->series())
      if (sr->objectName() == QLatin1String("measured"))
        for (QLegendMarker* m : lat->chart()->legend()->markers(sr)) QCOMPARE(m->shape(), QLegend::MarkerShapeFromSeries);
    // Wide enough: the names whole.
    w.resize(2600, 1400);
    QTRY_VERIFY(lat->legendTexts().contains(torch));
    QVERIFY(lat->legendTexts().contains(plain));
  }

  void validationTabShowsCoreNumbers() {
    MainWindow w;
    w.resize(1400, 900);
    w.show();
    QVERIFY(w.openDatabase(db_));
    settle(w);
    QVERIFY(w.showTab(QStringLiteral("validation")));
    auto* v = qobject_cast<ValidationView*>(w.chart(QStringLiteral("validation")));
    QVERIFY(v);
    QVERIFY(!v->emptyText().isEmpty());  // the preview: nothing to validate, and it says so
    w.runBrowser()->selectRun(simRun_);
    settle(w);
    QVERIFY2(v->emptyText().isEmpty(), qPrintable(v->emptyText()));
    QVERIFY(v->hasData());
    // What core's validation says for these rows on the run's configuration.
    std::vector<MeasuredRow> rows;
    for (const Measured& r : h200_) rows.push_back(row(r));
    const ValidationReport rep = validate_rows(load_preset("hgx-h200-8"), rows);
    QCOMPARE(rep.overall.rows, 4);
    // Model vs measured: the model line and the measured markers per algorithm.
    QVERIFY(v->seriesNames().contains(QStringLiteral("model ring")));
    const auto meas = points(v->chart(), QStringLiteral("ring"));
    QCOMPARE(meas.size(), std::size_t(3));
    const auto model = points(v->chart(), QStringLiteral("model ring"));
    QCOMPARE(model.size(), std::size_t(3));
    for (std::size_t i = 0; i < 3; ++i) {
      QCOMPARE(std::exp2(model[i].x()), static_cast<double>(h200_[i].bytes));
      QCOMPARE(model[i].y(), rep.rows[i].model_us);
      QCOMPARE(meas[i].y(), h200_[i].us);
    }
    // Error vs size: (model / measured - 1) in %.
    QVERIFY(v->errorSeriesNames().contains(QStringLiteral("ring")));
    for (QAbstractSeries* s : v->errorChart()->series())
      if (s->name() == QStringLiteral("ring")) {
        auto* xy = qobject_cast<QXYSeries*>(s);
        QCOMPARE(xy->count(), 3);
        for (int i = 0; i < 3; ++i) QCOMPARE(xy->at(i).y(), rep.rows[static_cast<std::size_t>(i)].error * 100);
      }
    // The table: per regime, per algorithm and overall, with core's MAPE.
    QTableWidget* t = v->statsTable();
    QVERIFY(t->isVisible());
    int overall = -1, small = -1;
    for (int r = 0; r < t->rowCount(); ++r) {
      if (t->verticalHeaderItem(r)->text() == QStringLiteral("overall")) overall = r;
      if (t->verticalHeaderItem(r)->text() == QStringLiteral("≤ 64 KiB")) small = r;
    }
    QVERIFY(overall >= 0 && small >= 0);
    QCOMPARE(t->item(overall, 0)->text(), QStringLiteral("4"));
    QCOMPARE(t->item(overall, 1)->text(), QString::number(rep.overall.mape_pct, 'f', 1));
    QCOMPARE(t->item(small, 0)->text(), QString::number(rep.by_regime.at("small").rows));
    QCOMPARE(t->item(small, 1)->text(), QString::number(rep.by_regime.at("small").mape_pct, 'f', 1));
    // The CSV holds every modelled row.
    QCOMPARE(v->csv().count(QLatin1Char('\n')), 1 + 4);
    // Rows modelled as what NCCL runs instead carry a note (core's RowError::note): the ring
    // row at 4 MiB runs the LL128 that NCCL's tuning model picks there (our engines' fastest
    // is LL); the others are modelled as measured. The view names the one note, once.
    QVERIFY(v->csv().section(QLatin1Char('\n'), 0, 0).endsWith(QStringLiteral(",source,note")));
    for (const RowError& e : rep.rows) {
      if (e.row.algorithm == "ring" && e.row.bytes == (4u << 20))
        QVERIFY2(e.note.find("NCCL's tuning model picks Ring/LL128") != std::string::npos, e.note.c_str());
      else
        QVERIFY2(e.note.empty(), e.note.c_str());
    }
    auto* modelLabel = v->findChild<QLabel*>(QStringLiteral("validationModel"));
    QVERIFY(modelLabel);
    QVERIFY2(modelLabel->text().contains(QStringLiteral("1 measured row(s) modelled as ring-ll128")),
             qPrintable(modelLabel->text()));
    QCOMPARE(modelLabel->text().count(QStringLiteral("modelled as")), 1);
  }

  // Notes that results carry reach the user (issue 15): NVLS on 2 GPUs, which
  // NCCL does not run. The simulated nvls curve is the multimem mechanism itself
  // (core's extra.note, as `scin run --gpus 2 --algo nvls` prints it), and a
  // measured nvls row of 2 GPUs is modelled as the ring NCCL runs instead
  // (core's RowError::note). Both are in the hovered point's tooltip and in the
  // note line of the latency and bandwidth charts; the Validation tab's markers
  // say the row's note too.
  void notesOfNvlsOnTwoGpusAreShown() {
    QTemporaryDir d;
    const QString db = d.filePath(QStringLiteral("nvls2.scindb"));
    std::int64_t sim = 0;
    const std::vector<Measured> rows = {{"HGX H200 (test bench)", "nvls", 2, 65536, 30.0},
                                        {"HGX H200 (test bench)", "nvls", 2, 1u << 20, 45.0},
                                        {"HGX H200 (test bench)", "ring", 2, 65536, 25.0}};
    std::string simNote;
    std::vector<MeasuredRow> measured;
    RunInfo simInfo;
    {
      Store store = Store::open(db.toStdString(), Access::Create);
      sim = storeSweep(store, "h200 2 GPUs", {"ring", "nvls"}, "4M", {{"fabric.gpus", 2}});
      QVERIFY(sim > 0);
      storeMeasured(store, "two.csv", rows);
      // What core stored: every nvls point carries the same note, ring points none.
      for (const PointRecord& p : store.points(sim)) {
        const bool has = p.extra.is_object() && p.extra.contains("note");
        QCOMPARE(has, p.algorithm == "nvls");
        if (has) simNote = p.extra["note"].get<std::string>();
      }
      simInfo = store.get_run(sim);
    }
    QVERIFY(simNote.find("NCCL does not run NVLS on 2 GPUs") != std::string::npos);
    for (const Measured& r : rows) measured.push_back(row(r));
    // Core's model of these rows on the run's configuration: the nvls rows as ring, with a note.
    const ValidationReport rep = validate_rows(run_base_config(simInfo), measured);
    QCOMPARE(rep.rows.size(), std::size_t(3));
    const std::string rowNote = rep.rows[0].note;
    QVERIFY(rowNote.rfind("modelled as ring: ", 0) == 0);
    QCOMPARE(rep.rows[1].note, rowNote);
    QVERIFY(rep.rows[2].note.empty());

    MainWindow w;
    QVERIFY(showRun(w, db, sim));
    MeasuredOverlay* m = w.measuredOverlay();
    QCOMPARE(m->match().gpus, 2);
    QCOMPARE(m->current(), 0);
    const QString sn = QString::fromStdString(simNote), rn = QString::fromStdString(rowNote);
    for (const QString& tab : {QStringLiteral("latency"), QStringLiteral("bandwidth")}) {
      auto* c = qobject_cast<SizeChart*>(w.chart(tab));
      QVERIFY(c);
      // The note line: the simulated curve's note, once, and the measured rows'.
      const QString note = c->note();
      QVERIFY2(note.contains(QStringLiteral("nvls: ") + sn), qPrintable(note));
      QCOMPARE(note.count(sn), 1);
      QVERIFY2(note.contains(QStringLiteral("2 measured nvls row(s) ") + rn), qPrintable(note));
      QVERIFY(!note.contains(QStringLiteral("measured ring")));
      // The tooltips: the nvls point's says it, the ring point's does not.
      QVERIFY(c->pointTip(QStringLiteral("nvls"), 65536).contains(sn.toHtmlEscaped()));
      QVERIFY(c->pointTip(QStringLiteral("nvls"), 65536).contains(QStringLiteral("64 KiB")));
      QVERIFY(!c->pointTip(QStringLiteral("ring"), 65536).isEmpty());
      QVERIFY(!c->pointTip(QStringLiteral("ring"), 65536).contains(QStringLiteral("NCCL does not run")));
      const QString nvlsRows = QStringLiteral("measured nvls (HGX H200 (test bench))");
      QVERIFY(c->measuredSeriesNames().contains(nvlsRows));
      const QString tip = c->measuredTip(nvlsRows, 1u << 20);
      QVERIFY2(tip.contains(QStringLiteral("model: ") + rn.toHtmlEscaped()), qPrintable(tip));
      QVERIFY(tip.contains(QStringLiteral("two.csv:3")));  // the row's source line
      QVERIFY(!c->measuredTip(QStringLiteral("measured ring (HGX H200 (test bench))"), 65536).contains(QStringLiteral("model:")));
    }
    // The Validation tab: the model line names the note, and so does the row's marker.
    QVERIFY(w.showTab(QStringLiteral("validation")));
    auto* v = qobject_cast<ValidationView*>(w.chart(QStringLiteral("validation")));
    QVERIFY(v);
    auto* modelLabel = v->findChild<QLabel*>(QStringLiteral("validationModel"));
    QVERIFY(modelLabel && modelLabel->text().contains(rn));
    const QString vt = v->rowTip(QStringLiteral("nvls"), 65536, 30.0);
    QVERIFY2(vt.contains(QStringLiteral("model: ") + rn.toHtmlEscaped()), qPrintable(vt));
    QVERIFY(vt.contains(QString::number(rep.rows[0].error * 100, 'f', 1)));
    QVERIFY(!v->rowTip(QStringLiteral("ring"), 65536, 25.0).contains(QStringLiteral("model:")));
  }

  void analysisPlotsEverySelectedRun() {
    MainWindow w;
    w.resize(1400, 900);
    w.show();
    QVERIFY(w.openDatabase(db_));
    settle(w);
    w.showRuns({simRun_, otherSim_});
    settle(w);
    AnalysisView* av = w.analysisView();
    QVERIFY(av->table());
    QCOMPARE(av->table()->run.id, simRun_);
    QVERIFY(av->table()->axis_index(analysis::kRunAxis) >= 0);
    Store s = Store::open(db_.toStdString(), Access::ReadOnly);
    QCOMPARE(av->table()->rows.size(), s.points(simRun_).size() + s.points(otherSim_).size());
    QTRY_VERIFY(!av->busy() && av->plot());
    // Series of both runs; the legend names the run where it differs.
    const QStringList legend = av->legendTexts();
    QCOMPARE(av->query().x, std::string("collective.bytes"));
    const QString a = QStringLiteral("#%1").arg(simRun_), b = QStringLiteral("#%1").arg(otherSim_);
    QVERIFY2(legend.filter(a).size() == 2 && legend.filter(b).size() == 1, qPrintable(legend.join(QLatin1Char('|'))));
    std::set<std::string> runs;
    for (const auto* series : av->plot()->legend())
      for (const auto& [k, v] : series->fields)
        if (k == analysis::kRunAxis) runs.insert(v);
    QCOMPARE(runs.size(), std::size_t(2));
    // A series carries its run's stored values: the scin curve equals run #otherSim_'s points.
    for (const auto* series : av->plot()->legend())
      if (series->algorithm == "scin") {
        const auto pts = s.points(otherSim_);
        QCOMPARE(series->points.size(), pts.size());
        for (std::size_t i = 0; i < pts.size(); ++i) QCOMPARE(series->points[i].y, pts[i].time_us);
      }
  }

  void combiningRunsOfAnotherKindIsAnError() {
    Store s = Store::open(db_.toStdString(), Access::ReadOnly);
    const RunInfo sim = s.get_run(simRun_), meas = s.get_run(measuredRun_);
    const auto a = analysis::build_table(sim, s.points(simRun_));
    const auto b = analysis::build_table(meas, s.points(measuredRun_));
    QVERIFY_THROWS_EXCEPTION(scin::Error, analysis::combine_tables({a, b}));
    // One table comes back unchanged (no run axis).
    QCOMPARE(analysis::combine_tables({a}).axes.size(), a.axes.size());
  }

  void sweepDockShowsTheStoredRunsSweep() {
    MainWindow w;
    w.resize(1400, 900);
    w.show();
    QVERIFY(w.openDatabase(db_));
    settle(w);
    SweepEditor* ed = w.sweepEditor();
    SweepRequest mine;
    mine.min_bytes = 64;
    mine.max_bytes = 1 << 20;
    mine.factor = 2;
    mine.algorithms = {"scin"};
    ed->setRequest(mine);
    settle(w);
    w.runBrowser()->selectRun(otherSim_);
    settle(w);
    QVERIFY(ed->showingStored());
    QVERIFY2(ed->storedText().contains(QStringLiteral("#%1").arg(otherSim_)), qPrintable(ed->storedText()));
    // The widgets hold the run's sweep (1 KiB .. 16 MiB, scin), read-only.
    auto* from = ed->findChildren<QComboBox*>().value(0);
    QVERIFY(from);
    QCOMPARE(from->currentData().toULongLong(), 1024ull);
    QVERIFY(!from->isEnabled());
    QVERIFY(ed->algorithmBox("scin")->isChecked());
    QVERIFY(!ed->algorithmBox("ring")->isChecked());
    // Not an edit: the editor's own sweep is unchanged and comes back with the preview.
    QCOMPARE(ed->request(), mine);
    w.runBrowser()->tree()->clearSelection();
    settle(w);
    QVERIFY(!ed->showingStored());
    QCOMPARE(ed->request(), mine);
    QCOMPARE(from->currentData().toULongLong(), 64ull);
    QVERIFY(from->isEnabled());
  }
};

QTEST_MAIN(ChartsUiTest)
#include "charts_ui_test.moc"
