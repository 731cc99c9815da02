// scin-explorer: the desktop application.
//
//   scin-explorer [FILE.scindb] [--preset NAME] [--run] [--tab NAME]
//                 [--show-run ID] [--x PATH|bytes] [--y METRIC] [--series PATH,...]
//                 [--facet PATH] [--filter PATH=V1,V2]... [--baseline ALGO]
//                 [--log-x|--lin-x] [--log-y|--lin-y]
//                 [--export-chart OUT.{svg,pdf,png,csv}] [--figure-size 3.5x2.5in] [--font-pt 8] [--title]
//                 [--export-report OUT.{html,pdf}] [--screenshot PNG] [--size WxH] [--quit]
//
// With no FILE it opens the last database (or the default one) on the default
// experiment: the seed's comparison on an 8-GPU H200-class fabric, computed
// and plotted. The options script the Analysis view and its exports (docs,
// tests, users' own scripts) and work offscreen (QT_QPA_PLATFORM=offscreen).
// --help and --version need no display: they are answered before Qt starts; without a
// display (and no QT_QPA_PLATFORM) it says so and exits 2 rather than let Qt abort.
#include <cstdio>
#include <cstdlib>
#include <set>

#include <QApplication>
#include <QCommandLineParser>
#include <QEventLoop>
#include <QScreen>
#include <QSettings>
#include <QTimer>

#include "analysis/table.h"
#include "base/version.h"
#include "ui/analysis_view.h"
#include "ui/figure_export.h"
#include "ui/main_window.h"
#include "ui/preview.h"
#include "ui/quant_chart.h"
#include "ui/run_browser.h"
#include "ui/run_controller.h"
#include "ui/timeline_chart.h"

int main(int argc, char** argv) {
  QCommandLineParser cli;
  cli.setApplicationDescription(QStringLiteral("SCIN Explorer: All-Reduce design-space explorer"));
  QCommandLineOption help(QStringList{QStringLiteral("h"), QStringLiteral("help")}, QStringLiteral("show this help"));
  QCommandLineOption versionOpt(QStringList{QStringLiteral("v"), QStringLiteral("version")}, QStringLiteral("show the version"));
  cli.addPositionalArgument(QStringLiteral("FILE"), QStringLiteral("experiment database (.scindb) to open"));
  QCommandLineOption preset(QStringLiteral("preset"), QStringLiteral("load fabric preset NAME"), QStringLiteral("NAME"));
  QCommandLineOption run(QStringLiteral("run"), QStringLiteral("run the sweep once the window is up"));
  QCommandLineOption tab(QStringLiteral("tab"),
                         QStringLiteral("show chart tab NAME (analysis, latency, bandwidth, speedup, breakdown, validation, quant, timeline)"),
                         QStringLiteral("NAME"));
  QCommandLineOption shot(QStringLiteral("screenshot"), QStringLiteral("save a PNG of the window"), QStringLiteral("PNG"));
  QCommandLineOption quit(QStringLiteral("quit"), QStringLiteral("quit when done (after --run / exports / --screenshot)"));
  QCommandLineOption size(QStringLiteral("size"), QStringLiteral("window size WxH (default: 1500x950 or the screen)"), QStringLiteral("WxH"));
  QCommandLineOption showRun(QStringLiteral("show-run"), QStringLiteral("show stored run ID (default: the newest); ID,ID2,... overlays more runs"), QStringLiteral("ID"));
  QCommandLineOption xOpt(QStringLiteral("x"), QStringLiteral("Analysis x axis: an axis path of the run, or bytes"), QStringLiteral("PATH"));
  QCommandLineOption yOpt(QStringLiteral("y"), QStringLiteral("Analysis y metric (time_us, busbw_GBps, speedup, sqnr_dB, ttft_us, ...)"), QStringLiteral("METRIC"));
  QCommandLineOption seriesOpt(QStringLiteral("series"), QStringLiteral("comma-separated axis paths that split curves (others held at one value)"), QStringLiteral("PATHS"));
  QCommandLineOption facetOpt(QStringLiteral("facet"), QStringLiteral("one panel per value of axis PATH"), QStringLiteral("PATH"));
  QCommandLineOption filterOpt(QStringLiteral("filter"), QStringLiteral("show only these values of an axis (repeatable)"), QStringLiteral("PATH=V1,V2"));
  QCommandLineOption baselineOpt(QStringLiteral("baseline"), QStringLiteral("speedup baseline algorithm"), QStringLiteral("ALGO"));
  QCommandLineOption logX(QStringLiteral("log-x"), QStringLiteral("logarithmic x axis")), linX(QStringLiteral("lin-x"), QStringLiteral("linear x axis"));
  QCommandLineOption logY(QStringLiteral("log-y"), QStringLiteral("logarithmic y axis")), linY(QStringLiteral("lin-y"), QStringLiteral("linear y axis"));
  QCommandLineOption freeY(QStringLiteral("free-y"), QStringLiteral("each panel its own y scale (default: where the panels' largest values differ 20x on a linear axis)")),
      sameY(QStringLiteral("same-y"), QStringLiteral("one y scale for every panel"));
  QCommandLineOption exportChart(QStringLiteral("export-chart"), QStringLiteral("write the Analysis figure (.svg, .pdf, .png at 300 dpi) or its data (.csv)"), QStringLiteral("OUT"));
  QCommandLineOption figSize(QStringLiteral("figure-size"), QStringLiteral("figure size, e.g. 3.5x2.5in (default), 7x3.5in, 89x60mm"), QStringLiteral("WxH{in|mm}"));
  QCommandLineOption fontPt(QStringLiteral("font-pt"), QStringLiteral("figure font size in points (default 8)"), QStringLiteral("PT"));
  QCommandLineOption titleOpt(QStringLiteral("title"), QStringLiteral("draw the title in exported figures"));
  QCommandLineOption exportReport(QStringLiteral("export-report"), QStringLiteral("write the report of the run shown (.html or .pdf)"), QStringLiteral("OUT"));
  cli.addOptions({help, versionOpt, preset, run, tab, shot, quit, size, showRun, xOpt, yOpt, seriesOpt, facetOpt, filterOpt,
                  baselineOpt, logX, linX, logY, linY, freeY, sameY, exportChart, figSize, fontPt, titleOpt, exportReport});
  // Parsed before QApplication exists: --help works without a display.
  QStringList args;
  for (int i = 0; i < argc; ++i) args << QString::fromLocal8Bit(argv[i]);
  if (!cli.parse(args)) {
    std::fprintf(stderr, "scin-explorer: %s\n", qPrintable(cli.errorText()));
    return 2;
  }
  if (cli.isSet(help)) {
    QString text = cli.helpText();
    text.replace(QStringLiteral("<executable_name>"), QStringLiteral("scin-explorer"));
    std::fputs(qPrintable(text), stdout);
    return 0;
  }
  if (cli.isSet(versionOpt)) {
    std::printf("scin-explorer %s (git %s)\n", scin::version(), scin::git_revision());
    return 0;
  }
  scin::ui::FigureSize figure = scin::ui::FigureSize::singleColumn();
  if (cli.isSet(figSize)) {
    QString err;
    if (!scin::ui::parseFigureSize(cli.value(figSize), &figure.size_pt, &err)) {
      std::fprintf(stderr, "scin-explorer: --figure-size: %s\n", qPrintable(err));
      return 2;
    }
  }
  if (cli.isSet(fontPt)) {
    bool ok = false;
    figure.font_pt = cli.value(fontPt).toDouble(&ok);
    if (!ok || figure.font_pt < 4 || figure.font_pt > 36) {
      std::fprintf(stderr, "scin-explorer: --font-pt '%s': a number of points from 4 to 36\n", qPrintable(cli.value(fontPt)));
      return 2;
    }
  }

  // No display and no platform named: Qt would abort ("no Qt platform plugin could be
  // initialized ... reinstalling may fix this"), which misleads. Say what is missing instead.
#if defined(__linux__)
  auto unset = [](const char* var) { const char* v = std::getenv(var); return !v || !*v; };
  if (unset("QT_QPA_PLATFORM") && unset("DISPLAY") && unset("WAYLAND_DISPLAY")) {
    std::fprintf(stderr,
                 "scin-explorer: no display: DISPLAY and WAYLAND_DISPLAY are unset. Run it in a desktop session "
                 "(or over ssh -X), or without a window with QT_QPA_PLATFORM=offscreen for --screenshot, "
                 "--export-chart and --export-report; `scin` computes the same results with no display.\n");
    return 2;
  }
#endif

  // Crisp at fractional scale factors (150 %, 175 %) instead of rounding.
  QGuiApplication::setHighDpiScaleFactorRoundingPolicy(Qt::HighDpiScaleFactorRoundingPolicy::PassThrough);
  QApplication app(argc, argv);
  QApplication::setApplicationName(QStringLiteral("scin-explorer"));
  QApplication::setOrganizationName(QStringLiteral("scin"));
  QApplication::setApplicationVersion(QString::fromLatin1(scin::version()));
  QApplication::setApplicationDisplayName(QStringLiteral("SCIN Explorer"));

  scin::ui::MainWindow w;
  QString file = cli.positionalArguments().value(0);
  if (file.isEmpty()) file = QSettings().value(QStringLiteral("lastDatabase")).toString();
  if (file.isEmpty()) file = scin::ui::MainWindow::defaultDatabasePath();
  bool fileFailed = false;
  if (!w.openDatabase(file)) {
    // Opening never creates: a file given on the command line that is missing is
    // an error; a last database that was moved away is not. Either way keep
    // going with the default database.
    if (!cli.positionalArguments().isEmpty()) {
      fileFailed = true;
      std::fprintf(stderr, "scin-explorer: %s\n", qPrintable(w.lastError()));
    }
    w.openDatabase(scin::ui::MainWindow::defaultDatabasePath());
  }
  if (cli.isSet(preset) && !w.loadPreset(cli.value(preset))) {
    std::fprintf(stderr, "scin-explorer: unknown preset '%s'\n", qPrintable(cli.value(preset)));
    if (cli.isSet(quit)) return 2;
  }
  if (cli.isSet(size)) {
    QStringList wh = cli.value(size).split(QLatin1Char('x'));
    w.resize(wh.value(0).toInt(), wh.value(1).toInt());
  }
  if (cli.isSet(tab) && !w.showTab(cli.value(tab))) {
    std::fprintf(stderr, "scin-explorer: unknown tab '%s'\n", qPrintable(cli.value(tab)));
    if (cli.isSet(quit)) return 2;
  }
  w.show();

  const bool analysisFlags = cli.isSet(showRun) || cli.isSet(xOpt) || cli.isSet(yOpt) || cli.isSet(seriesOpt) ||
                             cli.isSet(facetOpt) || cli.isSet(filterOpt) || cli.isSet(baselineOpt) || cli.isSet(logX) ||
                             cli.isSet(linX) || cli.isSet(logY) || cli.isSet(linY) || cli.isSet(freeY) || cli.isSet(sameY);
  if (!cli.isSet(run) && !cli.isSet(shot) && !cli.isSet(quit) && !analysisFlags && !cli.isSet(exportChart) &&
      !cli.isSet(exportReport))
    return app.exec();

  // Scripted: wait for the preview (and the run, and a stored run loading on its
  // worker), then screenshot and/or quit.
  auto waitFor = [](auto done, int timeout_ms) {
    QEventLoop loop;
    QTimer poll;
    poll.setInterval(20);
    QObject::connect(&poll, &QTimer::timeout, &loop, [&] {
      if (done()) loop.quit();
    });
    QTimer::singleShot(timeout_ms, &loop, &QEventLoop::quit);
    poll.start();
    loop.exec();
  };
  int rc = fileFailed ? 1 : 0;
  if (cli.isSet(run)) {
    if (!w.startRun()) rc = 1;
    waitFor([&] { return !w.isRunning(); }, 600000);
    if (w.lastRunStatus() != QLatin1String("done")) rc = 1;
    std::fprintf(stderr, "scin-explorer: run #%lld %s\n", static_cast<long long>(w.lastRunId()),
                 qPrintable(w.lastRunStatus()));
  }
  waitFor([&] { return !w.preview()->busy() && !w.ioBusy(); }, 60000);
  // Let the coalesced redraw and layout settle.
  waitFor([] { return false; }, 300);
  scin::ui::AnalysisView* av = w.analysisView();
  auto settle = [&] {
    waitFor([&] { return !w.preview()->busy() && !w.ioBusy() && !av->busy(); }, 120000);
  };
  if (cli.isSet(showRun)) {
    bool ok = true;
    std::vector<std::int64_t> ids;
    for (const QString& part : cli.value(showRun).split(QLatin1Char(','), Qt::SkipEmptyParts)) {
      bool one = false;
      ids.push_back(part.trimmed().toLongLong(&one));
      ok = ok && one;
    }
    ok = ok && !ids.empty();
    if (ok && ids.size() == 1) w.runBrowser()->selectRun(ids.front());
    else if (ok) w.showRuns(ids);
    settle();
    if (!ok || !av->table() || av->table()->run.id != ids.front()) {
      std::fprintf(stderr, "scin-explorer: --show-run '%s': no such run in %s\n", qPrintable(cli.value(showRun)),
                   qPrintable(w.databasePath()));
      rc = 1;
    }
  }
  if (analysisFlags && av->table()) {
    scin::analysis::PlotQuery q = av->query();
    if (cli.isSet(xOpt)) q.x = cli.value(xOpt).toStdString();
    if (cli.isSet(yOpt)) q.y = cli.value(yOpt).toStdString();
    if (cli.isSet(facetOpt)) q.facet = cli.value(facetOpt).toStdString();
    if (cli.isSet(baselineOpt)) q.baseline = cli.value(baselineOpt).toStdString();
    if (cli.isSet(seriesOpt)) {
      q.series.clear();
      for (const QString& p : cli.value(seriesOpt).split(QLatin1Char(','), Qt::SkipEmptyParts)) q.series.push_back(p.trimmed().toStdString());
    }
    for (const QString& f : cli.values(filterOpt)) {
      const QString path = f.section(QLatin1Char('='), 0, 0).trimmed();
      std::set<std::string> vals;
      for (const QString& v : f.section(QLatin1Char('='), 1).split(QLatin1Char(','), Qt::SkipEmptyParts)) vals.insert(v.trimmed().toStdString());
      q.filters[path.toStdString()] = vals;
    }
    // The scale follows the column's nature unless asked.
    const scin::analysis::Column* xc = av->table()->find(q.x == "bytes" ? std::string("collective.bytes") : q.x);
    const scin::analysis::Column* yc = av->table()->find(q.y);
    bool lx = xc ? xc->log_default : av->logX(), ly = yc ? yc->log_default : av->logY();
    if (cli.isSet(logX)) lx = true;
    if (cli.isSet(linX)) lx = false;
    if (cli.isSet(logY)) ly = true;
    if (cli.isSet(linY)) ly = false;
    av->setQuery(q);
    av->setLog(lx, ly);
    if (cli.isSet(freeY)) av->setFreeY(true);
    if (cli.isSet(sameY)) av->setFreeY(false);
    settle();
    if (!av->emptyText().isEmpty()) std::fprintf(stderr, "scin-explorer: %s\n", qPrintable(av->emptyText()));
  }
  // The run shown may have switched tabs on its own (a quant run opens on Analysis): --tab wins.
  if (cli.isSet(tab)) {
    settle();
    w.showTab(cli.value(tab));
    // The live charts (link timeline, quantisation error) compute once shown:
    // what is saved or exported next waits for them (at most 2 min; a long
    // packet run shows its progress meanwhile).
    waitFor([] { return false; }, 300);
    auto* timeline = qobject_cast<scin::ui::TimelineChart*>(w.chart(QStringLiteral("timeline")));
    auto* quant = qobject_cast<scin::ui::QuantChart*>(w.chart(QStringLiteral("quant")));
    waitFor([&] { return !(timeline && timeline->busy()) && !(quant && quant->busy()); }, 120000);
  }
  if (cli.isSet(exportChart)) {
    settle();
    QString err;
    if (!av->exportFigure(cli.value(exportChart), figure, cli.isSet(titleOpt), &err)) {
      std::fprintf(stderr, "scin-explorer: --export-chart: %s\n", qPrintable(err));
      rc = 1;
    }
  }
  if (cli.isSet(exportReport)) {
    settle();
    QString err;
    if (!w.exportReportTo(cli.value(exportReport), &err)) {
      std::fprintf(stderr, "scin-explorer: --export-report: %s\n", qPrintable(err));
      rc = 1;
    }
  }
  waitFor([] { return false; }, 100);
  if (cli.isSet(shot)) {
    QPixmap pm = w.grab();
    if (!pm.save(cli.value(shot))) {
      std::fprintf(stderr, "scin-explorer: could not write %s\n", qPrintable(cli.value(shot)));
      rc = 1;
    }
  }
  if (cli.isSet(quit)) {
    w.close();
    if (scin::ui::Preview::workersAlive() > 0) {  // as below: never wait for a preview worker
      std::fflush(nullptr);
      std::_Exit(rc);
    }
    return rc;
  }
  const int code = app.exec();
  // Quit never waits for a live-preview computation still inside an engine
  // call (it holds no file; its result would be dropped): end without it.
  if (scin::ui::Preview::workersAlive() > 0) {
    std::fflush(nullptr);
    std::_Exit(code);
  }
  return code;
}
