// The Analysis tab, driven offscreen over real stored sweeps (the shipped
// example specs): chart series equal the stored points for every run kind,
// legends are complete, figures carry real text at a physical size, the report
// holds every chart with data, scripted flags work, odd stored specs are shown.
#include <cmath>
#include <set>

#include <QCategoryAxis>
#include <QChart>
#include <QFile>
#include <QFontMetricsF>
#include <QImage>
#include <QLabel>
#include <QProcess>
#include <QSettings>
#include <QStandardPaths>
#include <QRegularExpression>
#include <QHeaderView>
#include <QListWidget>
#include <QTemporaryDir>
#include <QTreeWidget>
#include <QTextDocumentFragment>
#include <QXmlStreamReader>
#include <QtTest>

#include <sqlite3.h>

#include "analysis/table.h"
#include "fabric/preset.h"
#include "store/store.h"
#include "sweep/sweep.h"
#include "ui/analysis_view.h"
#include "ui/chart_panel.h"
#include "ui/charts.h"
#include "ui/figure.h"
#include "ui/figure_export.h"
#include "ui/main_window.h"
#include "ui/preview.h"
#include "ui/run_browser.h"

using namespace scin;
using namespace scin::ui;

namespace {

void settle(MainWindow& w) {
  QTRY_VERIFY_WITH_TIMEOUT(!w.preview()->busy() && !w.ioBusy() && !w.analysisView()->busy(), 30000);
  QTest::qWait(50);
}

// Texts of every <text> element of an SVG file.
QStringList svgTexts(const QString& path) {
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly)) return {};
  QXmlStreamReader xml(&f);
  QStringList out;
  while (!xml.atEnd())
    if (xml.readNext() == QXmlStreamReader::StartElement && xml.name() == QLatin1String("text"))
      out << xml.readElementText(QXmlStreamReader::IncludeChildElements).trimmed();
  return out;
}

double storedValue(const PointRecord& p, const std::string& metric) {
  if (metric == "time_us") return p.time_us;
  if (metric == "busbw_GBps") return p.busbw_GBps;
  if (metric == "sqnr_dB") return p.sqnr_dB;
  if (metric == "rel_l2") return p.rel_l2;
  if (metric == "ttft_us") return p.ttft_us;
  if (metric == "tpot_us") return p.tpot_us;
  return NAN;
}

}  // namespace

class AnalysisUiTest : public QObject {
  Q_OBJECT
 private:
  QTemporaryDir dir_;
  QString db_;
  std::map<std::string, std::int64_t> runs_;           // spec name -> run id
  std::map<std::int64_t, std::vector<PointRecord>> points_;

  void show(MainWindow& w, std::int64_t id) {
    w.runBrowser()->selectRun(id);
    settle(w);
    QVERIFY(w.analysisView()->table());
    QCOMPARE(w.analysisView()->table()->run.id, id);
  }
  // The examples' database opened in `w`, and the run of example sweep `name` shown.
  void openAndShow(MainWindow& w, const char* name) {
    QVERIFY(w.openDatabase(db_));
    settle(w);
    show(w, runs_.at(name));
  }
  // openAndShow(), then the Analysis tab's x, panels and (if given) y.
  AnalysisView* openAndPlot(MainWindow& w, const char* name, const char* x, const char* facet, const char* y = nullptr) {
    openAndShow(w, name);
    AnalysisView* av = w.analysisView();
    analysis::PlotQuery q = av->query();
    q.x = x;
    q.facet = facet;
    if (y) q.y = y;
    av->setQuery(q);
    return av;
  }

 private Q_SLOTS:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName(QStringLiteral("scin-test"));
    QCoreApplication::setApplicationName(QStringLiteral("scin-explorer-analysis-test"));
    QSettings().clear();
    QVERIFY(dir_.isValid());
    db_ = dir_.filePath(QStringLiteral("examples.scindb"));
    // Every shipped example sweep, stored as the CLI would.
    Store store = Store::open(db_.toStdString(), Access::Create);
    for (const auto& e : std::filesystem::directory_iterator(resource_dir() / "sweeps")) {
      SweepSpec spec = load_sweep_spec(e.path());
      SweepOptions o;
      o.threads = 2;
      SweepSummary s = run_sweep(store, spec, o, {});
      QCOMPARE(s.status, RunStatus::Done);
      runs_[spec.name] = s.run_id;
      points_[s.run_id] = store.points(s.run_id);
    }
    QVERIFY(runs_.count("isa-waves") && runs_.count("quant-blocks") && runs_.count("inference-tp"));
  }

  void seriesEqualStoredPointsForEveryKind() {
    MainWindow w;
    w.show();
    QVERIFY(w.openDatabase(db_));
    settle(w);
    const std::vector<std::pair<std::string, std::string>> cases{
        {"isa-waves", "time_us"}, {"quant-blocks", "sqnr_dB"}, {"inference-tp", "tpot_us"}, {"seed-comparison", "busbw_GBps"}};
    for (const auto& [name, metric] : cases) {
      const std::int64_t id = runs_.at(name);
      show(w, id);
      AnalysisView* av = w.analysisView();
      analysis::PlotQuery q = av->query();
      q.y = metric;
      av->setQuery(q);
      settle(w);
      auto plot = av->plot();
      QVERIFY2(plot && !plot->empty(), name.c_str());
      std::size_t n = 0;
      for (const auto& f : plot->facets)
        for (const auto& s : f.series)
          for (const auto& pt : s.points) {
            const PointRecord& p = points_.at(id).at(av->table()->rows.at(pt.row).point_index);
            QCOMPARE(pt.y, storedValue(p, metric));
            QCOMPARE(s.algorithm, p.algorithm);
            ++n;
          }
      QCOMPARE(n, av->table()->rows.size());
      // The points table holds the same points.
      QAbstractItemModel* m = av->pointsTable()->model();
      QCOMPARE(static_cast<std::size_t>(m->rowCount()), n);
      // Sorted by the y column (as numbers, not text), largest first.
      int ycol = -1;
      for (int c = 0; c < m->columnCount(); ++c)
        if (m->headerData(c, Qt::Horizontal).toString().startsWith(QString::fromStdString(metric))) ycol = c;
      QVERIFY(ycol >= 0);
      av->pointsTable()->sortByColumn(ycol, Qt::DescendingOrder);
      double top = -INFINITY;
      for (const auto& f : plot->facets)
        for (const auto& s : f.series)
          for (const auto& pt : s.points) top = std::max(top, pt.y);
      QCOMPARE(m->index(0, ycol).data(Qt::UserRole).toDouble(), top);
      for (int r = 1; r < m->rowCount(); ++r)
        QVERIFY(m->index(r - 1, ycol).data(Qt::UserRole).toDouble() >= m->index(r, ycol).data(Qt::UserRole).toDouble());
      if (name == "quant-blocks" || name == "inference-tp") {
        // Timing tabs say where the points are instead of staying blank.
        QCOMPARE(w.currentTab(), QStringLiteral("analysis"));
        for (const QString& tab : {QStringLiteral("latency"), QStringLiteral("speedup"), QStringLiteral("breakdown")})
          QVERIFY2(w.chart(tab)->emptyText().contains(QStringLiteral("Analysis tab")), qPrintable(tab));
        // The header names the run's algorithms (its points'), not all six: no one-shot in either.
        const QString header = w.findChild<QLabel*>(QStringLiteral("shownHeader"))->text();
        QVERIFY2(header.contains(QStringLiteral("<b>scin-inq</b>")), qPrintable(header));
        QVERIFY2(!header.contains(QStringLiteral("one-shot")), qPrintable(header));
      }
    }
    // A one-algorithm timing run: the Speedup tab explains itself, as does the analysis.
    show(w, runs_.at("isa-waves"));
    QVERIFY(w.chart(QStringLiteral("speedup"))->emptyText().contains(QStringLiteral("only scin")));
    analysis::PlotQuery q = w.analysisView()->query();
    q.y = "speedup";
    w.analysisView()->setQuery(q);
    settle(w);
    QVERIFY(w.analysisView()->emptyText().contains(QStringLiteral("only scin")));
    // No measured run in this database: the Validation tab says so and how to import one (the main
    // window's refresh used to clear the text the view had just set, leaving a blank chart).
    QVERIFY(w.showTab(QStringLiteral("validation")));
    settle(w);
    const QString why = w.chart(QStringLiteral("validation"))->emptyText();
    QVERIFY2(why.startsWith(QStringLiteral("No measured run in this database matches hgx-h200-8")) &&
                 why.contains(QStringLiteral("File > Import measurements")),
             qPrintable(why));
  }

  // The Runs dock on a laptop screen shows each run's status and stored points without
  // scrolling (they sat right of a seconds-long date, behind a horizontal scroll); the date
  // to the minute, its seconds in the tooltip.
  void runsDockShowsStatusAndPointsFirst() {
    QSettings().clear();
    MainWindow w;
    w.resize(1366, 768);
    w.show();
    QVERIFY(w.openDatabase(db_));
    settle(w);
    QTreeWidget* tree = w.runBrowser()->tree();
    QTRY_VERIFY(tree->topLevelItemCount() >= 8);
    QCOMPARE(tree->headerItem()->text(2), QStringLiteral("Status"));
    QCOMPARE(tree->headerItem()->text(3), QStringLiteral("Points"));
    QCOMPARE(tree->headerItem()->text(4), QStringLiteral("Started (UTC)"));
    QTreeWidgetItem* it = tree->topLevelItem(0);
    QCOMPARE(it->text(2), QStringLiteral("done"));
    QVERIFY2(it->text(3).contains(QLatin1Char('/')), qPrintable(it->text(3)));
    QCOMPARE(it->text(4).size(), 16);  // "2026-12-07 19:35"
    QVERIFY(it->toolTip(4).startsWith(it->text(4)) && it->toolTip(4).size() > 16);
    QTest::qWait(50);
    QVERIFY2(tree->header()->sectionViewportPosition(3) + tree->header()->sectionSize(3) <= tree->viewport()->width(),
             qPrintable(QStringLiteral("Points ends at %1 of %2").arg(tree->header()->sectionViewportPosition(3) +
                                                                      tree->header()->sectionSize(3))
                            .arg(tree->viewport()->width())));
  }

  // A factored legend's entry stands for every curve of its colour (or marker): a click
  // hides them all from the chart and the exported figure, a second click shows them.
  void factoredLegendEntryTogglesItsCurves() {
    MainWindow w;
    w.resize(1366, 768);
    w.show();
    QVERIFY(w.openDatabase(db_));
    settle(w);
    show(w, runs_.at("isa-waves"));
    AnalysisView* av = w.analysisView();
    QVERIFY(av->legendFactored());
    auto* legend = av->findChild<QListWidget*>(QStringLiteral("analysisLegend"));
    QVERIFY(legend);
    QListWidgetItem* paced = nullptr;
    for (int i = 0; i < legend->count(); ++i)
      if (legend->item(i)->text() == QStringLiteral("regulation=paced")) paced = legend->item(i);
    QVERIFY(paced);
    std::set<std::string> pacedKeys;
    for (const auto* s : av->plot()->legend())
      if (s->label.rfind("regulation=paced", 0) == 0) pacedKeys.insert(s->key);
    QCOMPARE(pacedKeys.size(), std::size_t{6});
    QVERIFY(paced->toolTip().contains(QStringLiteral("6 curve(s)")));
    legend->scrollToItem(paced);
    QTest::mouseClick(legend->viewport(), Qt::LeftButton, {}, legend->visualItemRect(paced).center());
    QCOMPARE(av->canvas()->options().hidden, pacedKeys);
    QVERIFY(paced->font().strikeOut());
    const QString svg = dir_.filePath(QStringLiteral("paced-hidden.svg"));
    QString err;
    QVERIFY2(av->exportFigure(svg, FigureSize::singleColumn(), false, &err), qPrintable(err));
    QVERIFY(!svgTexts(svg).contains(QStringLiteral("regulation=paced")));
    QTest::mouseClick(legend->viewport(), Qt::LeftButton, {}, legend->visualItemRect(paced).center());
    QVERIFY(av->canvas()->options().hidden.empty());
    QVERIFY(!paced->font().strikeOut());
  }

  void legendsOfExampleSweepsAreComplete() {
    MainWindow w;
    w.show();
    QVERIFY(w.openDatabase(db_));
    settle(w);
    for (const auto& [name, id] : runs_) {
      show(w, id);
      AnalysisView* av = w.analysisView();
      const QStringList legend = av->legendTexts();
      QVERIFY2(!legend.isEmpty(), name.c_str());
      QCOMPARE(QSet<QString>(legend.begin(), legend.end()).size(), legend.size());  // every entry tells its curves apart
      const auto curves = av->plot()->legend();
      const std::vector<LegendItem> factored = factoredLegend(*av->plot(), curves);
      // Eight curves or more on two fields (isa-waves: regulation x waves, link-scaling:
      // algorithm x GPUs): an entry per colour and one per marker, as the figure's legend.
      QCOMPARE(av->legendFactored(), curves.size() >= 8 && !factored.empty());
      if (av->legendFactored()) {
        QStringList want;
        for (const LegendItem& it : factored) want << it.text;
        QCOMPARE(legend, want);
        if (name == "isa-waves") QVERIFY(legend.contains(QStringLiteral("regulation=paced")) && legend.contains(QStringLiteral("waves=32")));
      } else {
        QCOMPARE(static_cast<std::size_t>(legend.size()), curves.size());
        for (const QString& t : legend) {
          QVERIFY2(!t.contains(QChar(0x2026)) && !t.contains(QStringLiteral("...")), qPrintable(t));
          // The label names each differing value in full.
          const auto* s = curves[static_cast<std::size_t>(legend.indexOf(t))];
          QVERIFY2(t.startsWith(QString::fromStdString(s->label)), qPrintable(t));
          QCOMPARE(t, legendText(*av->plot(), *s));  // and "(= other)" when it covers another curve
        }
      }
      // Colour x marker x dash differ between the curves of a chart.
      std::set<std::tuple<QRgb, int, int>> looks;
      for (const auto* s : av->plot()->legend()) {
        const SeriesLook l = seriesLook(*av->plot(), *s);
        looks.insert({l.color.rgb(), l.marker, static_cast<int>(l.dash)});
      }
      QCOMPARE(looks.size(), av->plot()->legend().size());
      // In greyscale the colour is gone: marker and dash alone must still differ.
      std::set<std::pair<int, int>> grey;
      for (const auto* s : av->plot()->legend()) {
        const SeriesLook l = seriesLook(*av->plot(), *s);
        grey.insert({l.marker, static_cast<int>(l.dash)});
      }
      QVERIFY2(grey.size() == av->plot()->legend().size(), name.c_str());
    }
  }

  // scin-scale's busbw against GPUs in panels by size: the 64 KiB panel's values
  // (up to ~50 GB/s) are 1/38 of the 256 MiB panel's, flat on one linear scale.
  // Each panel then has its own y range and tick labels, on screen and in an
  // export, and the notes say so; log y (or the user's choice) puts them on one.
  void panelsOrdersOfMagnitudeApartGetTheirOwnY() {
    MainWindow w;
    w.resize(1500, 900);
    w.show();
    AnalysisView* av = openAndPlot(w, "scin-scale", "fabric.gpus", "collective.bytes", "busbw_GBps");
    av->setLog(true, false);
    QVERIFY(w.showTab(QStringLiteral("analysis")));
    settle(w);
    QTRY_VERIFY_WITH_TIMEOUT(!av->busy() && av->canvas()->shownLayout().panels.size() == 4, 10000);
    QVERIFY(av->freeY());
    QVERIFY2(av->notesText().contains(QStringLiteral("own y scale")), qPrintable(av->notesText()));
    const FigureLayout& L = av->canvas()->shownLayout();
    QCOMPARE(L.panels.size(), std::size_t{4});
    std::map<std::string, double> top;  // panel title -> its y range's top
    for (const auto& pan : L.panels) {
      QVERIFY(pan.own_y);
      const analysis::Facet& f = av->plot()->facets[static_cast<std::size_t>(pan.facet)];
      top[f.value] = pan.y1;
      // Every point of the panel is inside its plot area.
      for (const auto& s : f.series)
        for (const auto& pt : s.points) {
          const QPointF at = L.map(pan, pt.x, pt.y);
          QVERIFY2(pan.plot.adjusted(-0.5, -0.5, 0.5, 0.5).contains(at), qPrintable(QString::fromStdString(f.value)));
        }
    }
    QVERIFY2(top.at("64 KiB") < 100 && top.at("256 MiB") > 1000, qPrintable(QString::number(top.at("64 KiB"))));
    // The export: tick labels of the small panel (tens of GB/s) and of the large one (thousands).
    const QString svg = dir_.filePath(QStringLiteral("free-y.svg"));
    QString err;
    QVERIFY2(av->exportFigure(svg, FigureSize::singleColumn(), false, &err), qPrintable(err));
    const QStringList texts = svgTexts(svg);
    QVERIFY2(texts.contains(QStringLiteral("20")) && texts.contains(QStringLiteral("1000")), qPrintable(texts.join(QLatin1Char('|'))));
    // Log y: one scale again; the user's choice then holds when y goes back to linear.
    av->setLog(true, true);
    QVERIFY(!av->freeY());
    QVERIFY(!av->notesText().contains(QStringLiteral("own y scale")));
    av->setFreeY(false);
    av->setLog(true, false);
    QVERIFY(!av->freeY());
    QTRY_VERIFY_WITH_TIMEOUT(!av->busy() && !av->canvas()->shownLayout().panels.empty() &&
                                 !av->canvas()->shownLayout().panels.front().own_y,
                             10000);
    for (const auto& pan : av->canvas()->shownLayout().panels) QVERIFY(!pan.own_y);
  }

  // switch-latency's time against the switch's latency in panels by size, on log y: each
  // panel spans about a decade of the 3.4 they span together, so one shared scale left
  // each a flat band where the latency's effect did not show. Each panel gets its own
  // scale (the notes say so); scin-scale's busbw on log y (panels half as wide as all)
  // keeps one (panelsOrdersOfMagnitudeApartGetTheirOwnY).
  void logPanelsInNarrowBandsGetTheirOwnY() {
    MainWindow w;
    w.resize(1500, 900);
    w.show();
    AnalysisView* av = openAndPlot(w, "switch-latency", "switch.latency_ns", "collective.bytes", "time_us");
    av->setLog(false, true);
    QVERIFY(w.showTab(QStringLiteral("analysis")));
    settle(w);
    QTRY_VERIFY_WITH_TIMEOUT(!av->busy() && av->canvas()->shownLayout().panels.size() == 5, 10000);
    QVERIFY(av->freeY());
    QVERIFY2(av->notesText().contains(QStringLiteral("own y scale")), qPrintable(av->notesText()));
    // Each panel's range is its own: within a decade and a half of its values.
    for (const auto& pan : av->canvas()->shownLayout().panels) {
      QVERIFY(pan.own_y);
      const analysis::Facet& f = av->plot()->facets[static_cast<std::size_t>(pan.facet)];
      double lo = INFINITY, hi = 0;
      for (const auto& sr : f.series)
        for (const auto& pt : sr.points) lo = std::min(lo, pt.y), hi = std::max(hi, pt.y);
      QVERIFY2(pan.y0 <= lo && pan.y1 >= hi && pan.y1 / pan.y0 < 40 * hi / lo, qPrintable(QString::fromStdString(f.value)));
    }
    // The user's choice holds.
    av->setFreeY(false);
    QVERIFY(!av->freeY());
    av->setLog(false, true);
    QVERIFY(!av->freeY());
  }

  // Five panels of sizes 1 KiB - 256 MiB in a 3.5 in column (switch-latency,
  // one panel per switch latency): each third-wide x axis says where the
  // data end, in short labels the x title explains (it said "1 KiB", "1 MiB").
  void fivePanelsInAColumnNameTheirLastSize() {
    MainWindow w;
    w.show();
    openAndShow(w, "switch-latency");
    AnalysisView* av = w.analysisView();
    QVERIFY(av->plot());
    QCOMPARE(av->plot()->facets.size(), std::size_t{5});
    const QString svg = dir_.filePath(QStringLiteral("switch-latency.svg"));
    QString err;
    QVERIFY2(av->exportFigure(svg, FigureSize::singleColumn(), false, &err), qPrintable(err));
    const QStringList texts = svgTexts(svg);
    QCOMPARE(texts.count(QStringLiteral("256M")), 5);
    QCOMPARE(texts.count(QStringLiteral("1K")), 5);
    QVERIFY(!texts.contains(QStringLiteral("1 MiB")));
    QVERIFY(std::any_of(texts.begin(), texts.end(), [](const QString& t) {
      return t.startsWith(QStringLiteral("Message size")) && t.contains(QStringLiteral("1K = 1024"));
    }));
    // Its log y (about 3 us - 5 ms) in the unit of the data's low end, as the Analysis
    // view shows it: 100 and 10000 us, not 0.01 and 1 ms.
    QVERIFY2(texts.contains(QStringLiteral("Latency (µs, log)")), qPrintable(texts.join(QLatin1Char('|'))));
    QVERIFY(texts.contains(QStringLiteral("100")));
    QVERIFY(!texts.contains(QStringLiteral("0.01")));
    // Twice as wide: the full labels, from 1 KiB to 32 MiB (more than 3/4 of the axis).
    QVERIFY2(av->exportFigure(svg, FigureSize{QSizeF(7 * 72, 2.5 * 72), 8}, false, &err), qPrintable(err));
    const QStringList wide = svgTexts(svg);
    QCOMPARE(wide.count(QStringLiteral("1 KiB")), 5);
    QCOMPARE(wide.count(QStringLiteral("32 MiB")), 5);
    QVERIFY(!wide.contains(QStringLiteral("1K")));
  }

  // On a laptop screen the "Panels by" picker is narrower than its text
  // ("switch.isa.regulation — ISA wave regulation (2 values)" was cut after
  // "ISA wave r" at 1366 x 768): it shows the axis's name and count, the
  // tooltip all of it.
  void axisPickersShowTheAxisNameWhenNarrow() {
    MainWindow w;
    w.resize(1366, 768);
    w.show();
    AnalysisView* av = openAndPlot(w, "isa-waves", "switch.isa.waves", "switch.isa.regulation");
    settle(w);
    auto* facet = av->findChild<FieldCombo*>(QStringLiteral("analysisFacet"));
    QVERIFY(facet);
    const QString full = facet->currentText();
    QVERIFY2(full.startsWith(QStringLiteral("switch.isa.regulation — ")), qPrintable(full));
    QVERIFY(facet->toolTip().startsWith(full));
    // As wide as the window left it at 1366 px: the name and count.
    const int fullW = QFontMetrics(facet->font()).horizontalAdvance(full);
    facet->setFixedWidth(fullW * 4 / 5);
    QCOMPARE(facet->shownText(), QStringLiteral("ISA wave regulation (2 values)"));
    // Narrower still: the name, elided at its end.
    facet->setFixedWidth(120);
    QVERIFY(facet->shownText().endsWith(QChar(0x2026)));
    QVERIFY(!facet->shownText().startsWith(QStringLiteral("switch.")));
    // Wide enough: the whole text.
    facet->setFixedWidth(fullW + 80);
    QCOMPARE(facet->shownText(), full);
  }

  void isaWavesFigureHasEveryLegendEntryAsText() {
    MainWindow w;
    w.show();
    AnalysisView* av = openAndPlot(w, "isa-waves", "switch.isa.waves", "switch.isa.regulation");
    av->setLog(true, true);
    settle(w);
    const QString svg = dir_.filePath(QStringLiteral("waves.svg"));
    QString err;
    QVERIFY2(av->exportFigure(svg, FigureSize::singleColumn(), false, &err), qPrintable(err));
    const QStringList texts = svgTexts(svg);
    for (const QString& entry : av->legendTexts()) QVERIFY2(texts.contains(entry), qPrintable(entry));
    QVERIFY(texts.contains(QStringLiteral("regulation = none")));
    QVERIFY(texts.contains(QStringLiteral("regulation = paced")));
    QVERIFY(texts.contains(QStringLiteral("ISA waves (log)")));
    QVERIFY(texts.contains(QStringLiteral("Latency (µs, log)")));
    for (const QString& t : texts) QVERIFY2(!t.contains(QChar(0x2026)), qPrintable(t));
    // Physical size: 3.5 in x 2.5 in.
    QFile f(svg);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QByteArray head = f.read(400);
    QVERIFY2(head.contains("width=\"88.9mm\"") && head.contains("height=\"63.5mm\""), head.constData());
    // PDF and a 300 dpi PNG of the same figure; CSV with its header block.
    QVERIFY(av->exportFigure(dir_.filePath(QStringLiteral("waves.pdf")), FigureSize::doubleColumn(), true, &err));
    QVERIFY(av->exportFigure(dir_.filePath(QStringLiteral("waves.png")), FigureSize::singleColumn(), false, &err));
    QImage png(dir_.filePath(QStringLiteral("waves.png")));
    QCOMPARE(png.size(), QSize(1050, 750));
    QVERIFY(av->exportFigure(dir_.filePath(QStringLiteral("waves.csv")), FigureSize::singleColumn(), false, &err));
    QFile csv(dir_.filePath(QStringLiteral("waves.csv")));
    QVERIFY(csv.open(QIODevice::ReadOnly));
    const QString c = QString::fromUtf8(csv.readAll());
    QVERIFY(c.contains(QStringLiteral("# run: #%1 isa-waves").arg(runs_.at("isa-waves"))));
    QVERIFY(c.contains(QStringLiteral("# preset: hgx-h200-8")));
    QVERIFY(c.contains(QStringLiteral("point_index,facet,series,collective.algorithm,collective.bytes,switch.isa.waves,time_us")));
    // A curve hidden through the legend leaves the figure (and its legend).
    av->setSeriesVisible(QStringLiteral("size=4 MiB"), false);
    QVERIFY(av->exportFigure(svg, FigureSize::singleColumn(), false, &err));
    QVERIFY(!svgTexts(svg).contains(QStringLiteral("size=4 MiB")));
    QVERIFY(svgTexts(svg).contains(QStringLiteral("size=16 MiB")));
    av->setSeriesVisible(QStringLiteral("size=4 MiB"), true);
    QVERIFY(av->exportFigure(svg, FigureSize::singleColumn(), false, &err));
    QVERIFY(svgTexts(svg).contains(QStringLiteral("size=4 MiB")));
  }

  // A single-column figure of link-scaling faceted by bandwidth, whose latency
  // is zipped with it: the latency rides with its panel (named in each panel's
  // title, splitting no curve), and the x title and the panels' key, too long
  // for one line, take two -- nothing of either is cut.
  void longPanelKeyKeepsTheXUnit() {
    MainWindow w;
    w.show();
    AnalysisView* av = openAndPlot(w, "link-scaling", "collective.bytes", "links.bandwidth_GBps");
    av->setLog(true, true);
    settle(w);
    const QString svg = dir_.filePath(QStringLiteral("links.svg"));
    QString err;
    QVERIFY2(av->exportFigure(svg, FigureSize::singleColumn(), false, &err), qPrintable(err));
    const QStringList texts = svgTexts(svg);
    QVERIFY2(texts.contains(QStringLiteral("Message size per rank (bytes, log)")), qPrintable(texts.join(QLatin1Char('|'))));
    QVERIFY2(texts.contains(QStringLiteral("panels: Link bandwidth · Link latency")), qPrintable(texts.join(QLatin1Char('|'))));
    // (Each panel's title whole, on one line or two: "300 GB/s · 150 ns".)
    for (const char* panel : {"300 GB/s", "150 ns", "450 GB/s", "125 ns", "900 GB/s", "100 ns"})
      QVERIFY2(std::any_of(texts.begin(), texts.end(),
                           [&](const QString& t) {
                             return t == QString::fromUtf8(panel) || t.startsWith(QString::fromUtf8(panel) + QStringLiteral(" · ")) ||
                                    t.endsWith(QStringLiteral(" · ") + QString::fromUtf8(panel));
                           }),
               panel);
    for (const QString& t : texts) {
      QVERIFY2(!t.contains(QChar(0x2026)), qPrintable(t));
      QVERIFY2(!t.contains(QStringLiteral("latency_ns=")), qPrintable(t));
      QVERIFY2(!t.contains(QStringLiteral("more curves")), qPrintable(t));
    }
    // 12 curves do not fit a single column's legend one per line; colour
    // (algorithm) and marker (GPUs) each follow one field, so the legend names
    // each once: 4 colours, then 3 markers on a row of their own.
    const auto plot = av->plot();
    QVERIFY(plot);
    const auto curves = plot->legend();
    QCOMPARE(curves.size(), std::size_t{12});
    const std::vector<LegendItem> items = factoredLegend(*plot, curves);
    QStringList names;
    for (const LegendItem& it : items) names << it.text;
    QCOMPARE(names, (QStringList{QStringLiteral("ring"), QStringLiteral("nvls"), QStringLiteral("scin"), QStringLiteral("scin-inq"),
                                 QStringLiteral("gpus=2"), QStringLiteral("gpus=4"), QStringLiteral("gpus=8")}));
    for (std::size_t i = 0; i < items.size(); ++i) QCOMPARE(items[i].starts_row, i == 4);
    for (const analysis::Series* c : curves) {
      const SeriesLook look = seriesLook(*plot, *c);
      const QString label = QString::fromStdString(c->label);
      const LegendItem& colour = items[static_cast<std::size_t>(names.indexOf(label.section(QStringLiteral(" · "), 0, 0)))];
      const LegendItem& marker = items[static_cast<std::size_t>(names.indexOf(label.section(QStringLiteral(" · "), 1)))];
      QCOMPARE(colour.color, look.color);
      QCOMPARE(colour.dash, look.dash);
      QCOMPARE(colour.marker, -1);
      QCOMPARE(marker.marker, look.marker);
    }
    for (const QString& n : names) QVERIFY2(texts.contains(n), qPrintable(n));
    // One field splitting the curves: nothing to factor.
    analysis::PlotQuery one = av->query();
    one.filters["fabric.gpus"] = {"8"};
    av->setQuery(one);
    settle(w);
    QVERIFY(av->plot());
    QVERIFY(factoredLegend(*av->plot(), av->plot()->legend()).empty());
  }

  // A single-column figure of the inference run: its y title (a long name and
  // its unit) is drawn whole within the grid's height (it ran past both ends).
  void longYTitleFitsTheGrid() {
    MainWindow w;
    w.show();
    openAndShow(w, "inference-tp");
    const auto plot = w.analysisView()->plot();
    QVERIFY(plot);
    const FigureSize size = FigureSize::singleColumn();
    QImage img(size.size_pt.toSize(), QImage::Format_ARGB32_Premultiplied);
    img.setDotsPerMeterX(static_cast<int>(72 / 0.0254));
    img.setDotsPerMeterY(static_cast<int>(72 / 0.0254));
    QPainter p(&img);
    FigureOptions o = w.analysisView()->canvas()->options();
    o.font_pt = size.font_pt;
    const FigureLayout L = paintFigure(&p, size.size_pt, *plot, o);
    p.end();
    QCOMPARE(L.y_title, QStringLiteral("Time to first token (TTFT) (ms, log)"));
    QVERIFY2(L.y_title_width <= L.y_title_room, qPrintable(QStringLiteral("%1 > %2").arg(L.y_title_width).arg(L.y_title_room)));
  }

  // A log y axis reaches the 1-2-3-5 value next to its data where it is near, so a tick
  // is labelled beyond the data at both ends: the seed comparison's speedup (0.7x - 8.2x)
  // ended at 5x, SCIN's peak above the top label and NVLS's dip below the bottom one.
  void logYReachesTheNiceValuesAroundItsData() {
    MainWindow w;
    w.show();
    AnalysisView* av = openAndPlot(w, "seed-comparison", "collective.bytes", "", "speedup");
    av->setLog(true, true);
    settle(w);
    QTRY_VERIFY_WITH_TIMEOUT(!av->busy() && av->plot() && !av->plot()->empty(), 10000);
    const auto plot = av->plot();
    double lo = INFINITY, hi = 0;
    for (const auto& f : plot->facets)
      for (const auto& sr : f.series)
        for (const auto& pt : sr.points)
          if (pt.y > 0) lo = std::min(lo, pt.y), hi = std::max(hi, pt.y);
    QVERIFY2(lo < 1 && hi > 5 && hi < 10, qPrintable(QStringLiteral("%1 %2").arg(lo).arg(hi)));
    const ViewRange r = dataRange(*plot, true, true);
    auto isNice = [](double v) {
      const double m = v / std::pow(10.0, std::floor(std::log10(v) + 1e-9));
      return std::fabs(m - 1) < 1e-9 || std::fabs(m - 2) < 1e-9 || std::fabs(m - 3) < 1e-9 || std::fabs(m - 5) < 1e-9;
    };
    QVERIFY2(isNice(r.y1) && r.y1 >= hi && r.y1 <= 1.42 * hi * std::pow(hi / lo, 0.06), qPrintable(QString::number(r.y1)));
    QVERIFY2(isNice(r.y0) && r.y0 <= lo, qPrintable(QString::number(r.y0)));
    QCOMPARE(r.y1, 10.0);
    QCOMPARE(r.y0, 0.5);
  }

  // The fabrics example skips NVLS on the FPGA preset and every in-switch algorithm on the
  // mesh: the notes name each reason, not the first alone.
  void skippedPointsNameEveryReason() {
    MainWindow w;
    w.show();
    openAndShow(w, "fabrics");
    AnalysisView* av = w.analysisView();
    QTRY_VERIFY_WITH_TIMEOUT(!av->busy() && av->plot(), 10000);
    const QString notes = av->notesText();
    QVERIFY2(notes.contains(QStringLiteral("skipped or failed")) && notes.contains(QStringLiteral("scin-fpga-4")) &&
                 notes.contains(QStringLiteral("mesh-8 is a switchless mesh")),
             qPrintable(notes));
  }

  // A measured run's panels by system in a single column: "HGX H200 (stas00 nccl-tests
  // latency)" was cut to "HGX H20…atency)" in three panels alike. A name too long for one
  // line breaks before its parenthesis: each system stands whole on the first line.
  void longPanelTitlesBreakBeforeTheyAreCut() {
    QTemporaryDir d;
    MainWindow w;
    w.show();
    QVERIFY(w.createDatabase(d.filePath(QStringLiteral("measured.scindb"))));
    settle(w);
    const auto ids = w.importMeasurements({QString::fromStdString((resource_dir() / "measured" / "calibration-allreduce.csv").string())});
    QCOMPARE(ids.size(), std::size_t(1));
    settle(w);
    show(w, ids.front());
    AnalysisView* av = w.analysisView();
    QTRY_VERIFY_WITH_TIMEOUT(!av->busy() && av->plot() && av->plot()->facets.size() >= 4, 10000);
    const QString svg = d.filePath(QStringLiteral("measured.svg"));
    QString err;
    QVERIFY2(av->exportFigure(svg, FigureSize::singleColumn(), false, &err), qPrintable(err));
    const QStringList texts = svgTexts(svg);
    for (const char* system : {"HGX H200", "HGX B200", "HGX H100"})
      QVERIFY2(texts.contains(QString::fromLatin1(system)), qPrintable(texts.join(QLatin1Char('|'))));
    for (const QString& t : texts) QVERIFY2(!t.startsWith(QStringLiteral("HGX H20") + QChar(0x2026)), qPrintable(t));
    // Their second lines lose first the words most systems share ("stas00", then
    // "latency"), not what tells them apart: "(stas00 nccl-tests latency)" and "(stas00
    // sym-mem latency)" were both "(stas00 …latency)".
    for (const char* harness : {"nccl-tests", "sym-mem", "p6-b200"})
      QVERIFY2(std::any_of(texts.begin(), texts.end(), [&](const QString& t) { return t.contains(QString::fromLatin1(harness)); }),
               qPrintable(texts.join(QLatin1Char('|'))));
    QVERIFY(texts.contains(QStringLiteral("(NCCL #1455)")));
  }

  // isa-waves by size: the paced curves equal the unregulated ones. A twin's entry names
  // only what differs ("(= regulation=none)"): the whole other name took three lines.
  void twinsLegendNamesOnlyWhatDiffers() {
    MainWindow w;
    w.show();
    AnalysisView* av = openAndPlot(w, "isa-waves", "collective.bytes", "");
    settle(w);
    QTRY_VERIFY_WITH_TIMEOUT(!av->busy() && av->plot() && !av->plot()->empty(), 10000);
    QStringList texts;
    for (const auto* sr : av->plot()->legend()) texts << legendText(*av->plot(), *sr);
    QVERIFY2(texts.contains(QStringLiteral("regulation=paced · waves=1 (= regulation=none)")), qPrintable(texts.join(QLatin1Char('|'))));
    QVERIFY2(texts.contains(QStringLiteral("regulation=none · waves=1")), qPrintable(texts.join(QLatin1Char('|'))));
  }

  void trackerSnapsToNearestPointWithUnits() {
    MainWindow w;
    w.resize(1300, 760);
    w.show();
    openAndShow(w, "inference-tp");
    FigureCanvas* canvas = w.analysisView()->canvas();
    QTRY_VERIFY(canvas->isVisible());
    canvas->repaint();
    // Near (not on) the first point of the first series: the tracker snaps to it.
    const auto plot = w.analysisView()->plot();
    const auto& s = plot->facets[0].series[0];
    QImage img(canvas->size(), QImage::Format_ARGB32);
    QPainter p(&img);
    const double k = canvas->logicalDpiY() / 72.0;
    p.scale(k, k);
    FigureOptions o = canvas->options();
    FigureLayout L = paintFigure(&p, QSizeF(canvas->width() / k, canvas->height() / k), *plot, o);
    p.end();
    const QPointF at = L.map(L.panels[0], s.points[0].x, s.points[0].y) * k + QPointF(3, -2);
    const QString text = canvas->trackAt(at.toPoint());
    QVERIFY2(text.startsWith(QString::fromStdString(s.label)), qPrintable(text));
    QVERIFY2(text.contains(QStringLiteral(" ms")), qPrintable(text));  // 93 ms, not 93200 µs
    QVERIFY2(text.contains(QStringLiteral("Batch size = 1")), qPrintable(text));
    // Zoom to a range and back.
    canvas->setView(ViewRange{1, 4, 1e3, 1e6});
    QVERIFY(canvas->zoomed());
    canvas->resetZoom();
    QVERIFY(!canvas->zoomed());
  }

  void zoomedTimingChartKeepsLabelsInRange() {
    MainWindow w;
    w.resize(1300, 760);
    w.show();
    openAndShow(w, "seed-comparison");
    QVERIFY(w.showTab(QStringLiteral("latency")));
    QTest::qWait(100);
    QChart* chart = w.chart(QStringLiteral("latency"))->chart();
    const QRectF area = chart->plotArea();
    chart->zoomIn(QRectF(area.left() + area.width() * 0.6, area.top() + area.height() * 0.1, area.width() * 0.3,
                         area.height() * 0.4));
    int checked = 0;
    for (QAbstractAxis* a : chart->axes()) {
      auto* cat = qobject_cast<QCategoryAxis*>(a);
      if (!cat || !cat->isVisible()) continue;
      const QStringList labels = cat->categoriesLabels();
      QVERIFY2(labels.size() >= 2, qPrintable(cat->titleText()));
      for (const QString& l : labels) {
        QVERIFY2(cat->endValue(l) >= cat->min() - 1e-9 && cat->endValue(l) <= cat->max() + 1e-9, qPrintable(l));
      }
      ++checked;
    }
    QCOMPARE(checked, 2);  // size axis and latency axis
    chart->zoomReset();
    auto* x = qobject_cast<QCategoryAxis*>(chart->axes(Qt::Horizontal).value(0));
    QVERIFY(x && x->categoriesLabels().contains(QStringLiteral("1 GiB")));
  }

  void ticksNeverOverlap() {
    QImage dev(10, 10, QImage::Format_ARGB32);
    dev.setDotsPerMeterX(2835);  // 72 dpi: units are points
    dev.setDotsPerMeterY(2835);
    const QFont f = pointFont(8, &dev);
    QFontMetricsF fm(f, &dev);
    analysis::Column bytes;
    bytes.bytes = true;
    analysis::Column plain;
    for (double length : {60.0, 120.0, 250.0, 500.0})
      for (const auto& [col, lo, hi, log] : std::vector<std::tuple<analysis::Column, double, double, bool>>{
               {bytes, 8, 1 << 30, true}, {plain, 0.9, 2100, true}, {plain, 0, 950, false}, {plain, 1.01, 1.3, true},
               {bytes, 3.0e6, 3.3e6, true}}) {
        const auto ticks = axisTicks(col, lo, hi, log, length, true, f, &dev);
        QVERIFY(!ticks.empty());
        // A label's centre: its tick's position and its shift inwards.
        auto centre = [&](const Tick& t) {
          return (log ? std::log10(t.value) - std::log10(lo) : t.value - lo) / (log ? std::log10(hi / lo) : hi - lo) * length + t.shift;
        };
        // (Two labels may be the tiny axis's fallback, centred on the ends: as the overlap check below.)
        for (const Tick& t : ticks) {
          const double w = fm.horizontalAdvance(t.label);
          if (ticks.size() > 2 && w < length) QVERIFY2(centre(t) - w / 2 >= -1e-9 && centre(t) + w / 2 <= length + 1e-9, qPrintable(t.label));
        }
        for (std::size_t i = 1; i < ticks.size(); ++i) {
          const double gap = centre(ticks[i]) - centre(ticks[i - 1]);
          const double need = (fm.horizontalAdvance(ticks[i].label) + fm.horizontalAdvance(ticks[i - 1].label)) / 2;
          if (ticks.size() > 2) QVERIFY2(gap >= need, qPrintable(ticks[i].label));
          QVERIFY(ticks[i].label != ticks[i - 1].label);
        }
      }
    // Sizes 1 KiB - 256 MiB (padded as a plot pads them): a narrow axis names
    // the last size too (it named 1 KiB and 1 MiB only); a wider one has
    // labels within two powers of both ends.
    const double pad = std::pow(std::pow(2.0, 18), 0.04);
    QStringList narrow;
    for (const Tick& t : axisTicks(bytes, 1024 / pad, (1 << 28) * pad, true, 120, true, f, &dev)) narrow << t.label;
    QCOMPARE(narrow, (QStringList{QStringLiteral("1 KiB"), QStringLiteral("1 MiB"), QStringLiteral("256 MiB")}));
    // Too narrow for a middle label: the two ends (64 KiB, 256 MiB), not two
    // labels in between (1 MiB, 32 MiB: scin-scale's exported figure).
    const double pad4 = std::pow(std::pow(2.0, 12), 0.04);
    const auto two = axisTicks(bytes, 65536 / pad4, (1 << 28) * pad4, true, 90, true, f, &dev);
    QVERIFY(!two.empty());
    QCOMPARE(two.front().label, QStringLiteral("64 KiB"));
    QCOMPARE(two.back().label, QStringLiteral("256 MiB"));
    // A third of a 3.5 in column (five panels): the full labels name 1 KiB
    // and 1 MiB only, the short ones both ends ("1K" ... "256M", 1K = 1024).
    const auto third = axisTicks(bytes, 1024 / pad, (1 << 28) * pad, true, 55, true, f, &dev);
    QVERIFY(third.size() >= 2);
    QCOMPARE(third.front().label, QStringLiteral("1K"));
    QCOMPARE(third.back().label, QStringLiteral("256M"));
    for (const Tick& t : third) QVERIFY(t.compact);
    for (const Tick& t : axisTicks(bytes, 1024 / pad, (1 << 28) * pad, true, 120, true, f, &dev))
      QVERIFY2(!t.compact, qPrintable(t.label));  // (where the full labels name the ends, they stay)
    for (double length : {250.0, 500.0}) {
      const auto ticks = axisTicks(bytes, 1024 / pad, (1 << 28) * pad, true, length, true, f, &dev);
      QVERIFY(ticks.size() >= 3);
      QVERIFY2(ticks.front().value <= 4096 && ticks.back().value >= (1 << 26), qPrintable(ticks.back().label));
    }
  }

  // A log axis labelled every other decade (a small panel) still gets a grid
  // line at each decade between; ticks at 1-2-5 or 1-3 steps get none.
  void unlabelledDecadesFillAThinLogAxis() {
    using V = std::vector<double>;
    auto ticks = [](V v) {
      std::vector<Tick> t;
      for (double x : v) t.push_back({x, QString::number(x)});
      return t;
    };
    QCOMPARE(unlabelledDecades(ticks({10, 1000}), 2, 5000, true), (V{100}));
    QCOMPARE(unlabelledDecades(ticks({1e-2, 1, 100}), 4e-3, 300, true), (V{0.1, 10}));
    QCOMPARE(unlabelledDecades(ticks({10, 100, 1000}), 2, 5000, true), V{});
    QCOMPARE(unlabelledDecades(ticks({10, 30, 100}), 5, 200, true), V{});
    QCOMPARE(unlabelledDecades(ticks({10, 1000}), 2, 5000, false), V{});
  }

  // A quant or inference run's stored spec (many lines in the narrow Sweep
  // dock) is shown whole, at the top of the dock: it was clipped to the
  // height the label guessed for a wider dock, and centred.
  void storedSpecOfAQuantRunIsShownWhole() {
    MainWindow w;
    w.resize(1500, 900);
    w.show();
    QVERIFY(w.openDatabase(db_));
    settle(w);
    for (const char* name : {"quant-blocks", "inference-tp"}) {
      show(w, runs_.at(name));
      QApplication::processEvents();
      auto* banner = w.findChild<QLabel*>(QStringLiteral("storedSweep"));
      QVERIFY(banner && banner->isVisible());
      QVERIFY2(banner->text().contains(QStringLiteral("<br>")), qPrintable(banner->text()));  // (the spec, line by line)
      QVERIFY2(banner->height() >= banner->heightForWidth(banner->width()),
               qPrintable(QStringLiteral("%1: %2 px for %3").arg(name).arg(banner->height()).arg(banner->heightForWidth(banner->width()))));
      QVERIFY2(banner->y() < 20, qPrintable(QString::number(banner->y())));
      // The Breakdown tab has no sizes to offer for such a run: its pickers are off.
      auto* breakdown = qobject_cast<BreakdownChart*>(w.chart(QStringLiteral("breakdown")));
      QVERIFY(breakdown);
      for (QComboBox* c : breakdown->findChildren<QComboBox*>()) QVERIFY2(!c->isEnabled(), name);
    }
    // A timing run: they are on again.
    show(w, runs_.at("isa-waves"));
    auto* breakdown = qobject_cast<BreakdownChart*>(w.chart(QStringLiteral("breakdown")));
    for (QComboBox* c : breakdown->findChildren<QComboBox*>()) QVERIFY(c->isEnabled());
  }

  void reportHoldsEveryChartWithData() {
    MainWindow w;
    w.show();
    openAndShow(w, "quant-blocks");
    const QString path = dir_.filePath(QStringLiteral("report.html"));
    QString err;
    QVERIFY2(w.exportReportTo(path, &err), qPrintable(err));
    QFile f(path);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QString h = QString::fromUtf8(f.readAll());
    QVERIFY(h.contains(QStringLiteral("Stored run #%1 quant-blocks").arg(runs_.at("quant-blocks"))));
    QVERIFY(h.contains(QStringLiteral("input.dist: gaussian, outliers")));  // the stored spec, not the editors
    QVERIFY(!h.contains(QStringLiteral("&lt;b&gt;")) && !h.contains(QStringLiteral("&lt;br&gt;")));  // no literal tags
    QVERIFY(h.contains(QString::fromStdString(w.analysisView()->plot()->title).toHtmlEscaped()));
    int withData = w.analysisView()->hasData() ? 1 : 0;
    for (ChartPanel* c : w.charts()) {
      if (c->hasData()) {
        withData += 1 + static_cast<int>(c->extraCharts().size());
        const QString first = QTextDocumentFragment::fromHtml(c->chart()->title()).toPlainText().split(QRegularExpression(QStringLiteral("[\\n\\x{2028}]"))).value(0);
        QVERIFY2(h.contains(first.toHtmlEscaped()), qPrintable(c->id()));
      }
    }
    // The quantisation and timeline charts computed although their tabs were never opened,
    // and say that they are live, not the stored run.
    QVERIFY(w.chart(QStringLiteral("quant"))->hasData());
    QVERIFY(w.chart(QStringLiteral("quant"))->note().contains(QStringLiteral("not read from the stored run")));
    QVERIFY(!w.chart(QStringLiteral("latency"))->hasData());  // a quant run has no timings: left out
    QCOMPARE(h.count(QStringLiteral("data:image/png;base64,")), withData);
    QVERIFY(h.contains(QStringLiteral("Left out (no data)")));
    QVERIFY(w.exportReportTo(dir_.filePath(QStringLiteral("report.pdf")), &err));
  }

  void unreadableStoredSpecIsShownNotFatal() {
    const QString path = dir_.filePath(QStringLiteral("odd.scindb"));
    QVERIFY(QFile::copy(db_, path));
    {
      sqlite3* h = nullptr;
      QCOMPARE(sqlite3_open(path.toUtf8().constData(), &h), SQLITE_OK);
      const std::string sql = "UPDATE runs SET spec_json='\"not json\"' WHERE id=" + std::to_string(runs_.at("isa-waves")) +
                              "; UPDATE runs SET spec_json='[1,2,3]' WHERE id=" + std::to_string(runs_.at("quant-blocks")) + ";";
      QCOMPARE(sqlite3_exec(h, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK);
      sqlite3_close(h);
    }
    MainWindow w;
    w.show();
    QVERIFY(w.openDatabase(path));
    settle(w);
    int unreadable = 0;
    for (int i = 0; i < w.runBrowser()->tree()->topLevelItemCount(); ++i)
      unreadable += w.runBrowser()->tree()->topLevelItem(i)->text(2).contains(QStringLiteral("spec unreadable"));  // (Status)
    QCOMPARE(unreadable, 2);
    show(w, runs_.at("isa-waves"));
    QVERIFY(w.analysisView()->hasData());  // the points are still there
    QVERIFY(!w.analysisView()->table()->run.spec_readable);
    QString err;
    QVERIFY(w.exportReportTo(dir_.filePath(QStringLiteral("odd.html")), &err));
  }

  void windowFitsTheScreen() {
    const QRect avail = QGuiApplication::primaryScreen()->availableGeometry();
    {
      MainWindow w;
      w.show();
      QTest::qWait(50);
      // Docks included, the window can shrink to a 1366x768 screen.
      const QSize min = w.minimumSizeHint().expandedTo(w.minimumSize());
      QVERIFY2(min.width() <= 1366 && min.height() <= 768 - 40, qPrintable(QStringLiteral("%1x%2").arg(min.width()).arg(min.height())));
      QVERIFY(w.height() <= avail.height());
      w.resize(avail.width() * 3, avail.height() * 3);  // saved bigger than the screen...
      w.close();
    }
    MainWindow again;  // ...and clamped when restored
    again.show();
    QTest::qWait(50);
    QVERIFY(again.height() <= avail.height());
    QVERIFY(again.width() <= std::max(avail.width(), again.minimumSizeHint().width()));
    // First start on a 1366x768 screen (the offscreen platform's screen set by a config file).
    const QString cfg = dir_.filePath(QStringLiteral("screen.json"));
    QFile f(cfg);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(R"({"screens": [{"name": "s", "x": 0, "y": 0, "width": 1366, "height": 768, "logicalDpi": 96, "logicalBaseDpi": 96, "dpr": 1}]})");
    f.close();
    QProcess app;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen:configfile=") + cfg);
    env.insert(QStringLiteral("XDG_CONFIG_HOME"), dir_.filePath(QStringLiteral("fresh-cfg")));
    env.insert(QStringLiteral("XDG_DATA_HOME"), dir_.filePath(QStringLiteral("fresh-data")));
    app.setProcessEnvironment(env);
    const QString shot = dir_.filePath(QStringLiteral("first.png"));
    app.start(QStringLiteral(SCIN_EXPLORER_PATH), {db_, QStringLiteral("--screenshot"), shot, QStringLiteral("--quit")});
    QVERIFY(app.waitForFinished(60000));
    QCOMPARE(app.exitCode(), 0);
    const QImage img(shot);
    QVERIFY(!img.isNull());
    QVERIFY2(img.width() <= 1366 && img.height() <= 768, qPrintable(QStringLiteral("%1x%2").arg(img.width()).arg(img.height())));
  }

  void scriptedExportsAndHelpWithoutDisplay() {
    QProcess help;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.remove(QStringLiteral("QT_QPA_PLATFORM"));
    env.remove(QStringLiteral("DISPLAY"));
    env.remove(QStringLiteral("WAYLAND_DISPLAY"));
    help.setProcessEnvironment(env);
    help.start(QStringLiteral(SCIN_EXPLORER_PATH), {QStringLiteral("--help")});
    QVERIFY(help.waitForFinished(30000));
    QCOMPARE(help.exitCode(), 0);
    const QString text = QString::fromUtf8(help.readAllStandardOutput());
    QVERIFY2(text.contains(QStringLiteral("--export-chart")) && text.contains(QStringLiteral("--figure-size")), qPrintable(text));
    // Without a display or a platform the app says so and exits 2 (Qt alone aborts, suggesting a reinstall).
    QProcess nodisplay;
    nodisplay.setProcessEnvironment(env);
    nodisplay.start(QStringLiteral(SCIN_EXPLORER_PATH), {db_, QStringLiteral("--quit")});
    QVERIFY(nodisplay.waitForFinished(30000));
    QCOMPARE(nodisplay.exitStatus(), QProcess::NormalExit);
    QCOMPARE(nodisplay.exitCode(), 2);
    const QString why = QString::fromUtf8(nodisplay.readAllStandardError());
    QVERIFY2(why.contains(QStringLiteral("no display")) && why.contains(QStringLiteral("QT_QPA_PLATFORM=offscreen")), qPrintable(why));

    QProcess run;
    QProcessEnvironment off = QProcessEnvironment::systemEnvironment();
    off.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
    off.insert(QStringLiteral("XDG_CONFIG_HOME"), dir_.filePath(QStringLiteral("cfg")));
    off.insert(QStringLiteral("XDG_DATA_HOME"), dir_.filePath(QStringLiteral("data")));
    run.setProcessEnvironment(off);
    const QString svg = dir_.filePath(QStringLiteral("cli.svg")), report = dir_.filePath(QStringLiteral("cli.html"));
    run.start(QStringLiteral(SCIN_EXPLORER_PATH),
              {db_, QStringLiteral("--show-run"), QString::number(runs_.at("inference-tp")), QStringLiteral("--x"),
               QStringLiteral("inference.batch"), QStringLiteral("--y"), QStringLiteral("ttft_us"), QStringLiteral("--lin-x"),
               QStringLiteral("--export-chart"), svg, QStringLiteral("--figure-size"), QStringLiteral("89x60mm"),
               QStringLiteral("--font-pt"), QStringLiteral("7"), QStringLiteral("--export-report"), report, QStringLiteral("--quit")});
    QVERIFY(run.waitForFinished(120000));
    QVERIFY2(run.exitCode() == 0, run.readAllStandardError().constData());
    const QStringList texts = svgTexts(svg);
    for (const char* a : {"ring", "nvls", "scin", "scin-inq", "Batch size", "Time to first token (TTFT) (ms, log)"})
      QVERIFY2(texts.contains(QString::fromUtf8(a)), a);
    QVERIFY(QFile::exists(report));
    // A bad figure size is refused with the allowed forms.
    QProcess bad;
    bad.setProcessEnvironment(off);
    bad.start(QStringLiteral(SCIN_EXPLORER_PATH), {QStringLiteral("--figure-size"), QStringLiteral("big"), QStringLiteral("--quit")});
    QVERIFY(bad.waitForFinished(30000));
    QCOMPARE(bad.exitCode(), 2);
    QVERIFY(bad.readAllStandardError().contains("3.5x2.5in"));
  }
};

QTEST_MAIN(AnalysisUiTest)
#include "analysis_ui_test.moc"
