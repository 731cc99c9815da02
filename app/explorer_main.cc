// scin-explorer: the desktop application.
//
//   scin-explorer [FILE.scindb] [--preset NAME] [--run] [--tab NAME]
//                 [--screenshot PNG] [--quit]
//
// With no FILE it opens the last database (or the default one) on the default
// experiment: the seed's comparison on an 8-GPU H200-class fabric, computed
// and plotted. The options make the docs' screenshots reproducible offscreen.
#include <cstdio>

#include <QApplication>
#include <QCommandLineParser>
#include <QEventLoop>
#include <QScreen>
#include <QSettings>
#include <QTimer>

#include "base/version.h"
#include "ui/main_window.h"
#include "ui/preview.h"
#include "ui/run_controller.h"

int main(int argc, char** argv) {
  // Crisp at fractional scale factors (150 %, 175 %) instead of rounding.
  QGuiApplication::setHighDpiScaleFactorRoundingPolicy(Qt::HighDpiScaleFactorRoundingPolicy::PassThrough);
  QApplication app(argc, argv);
  QApplication::setApplicationName(QStringLiteral("scin-explorer"));
  QApplication::setOrganizationName(QStringLiteral("scin"));
  QApplication::setApplicationVersion(QString::fromLatin1(scin::version()));
  QApplication::setApplicationDisplayName(QStringLiteral("SCIN Explorer"));

  QCommandLineParser cli;
  cli.setApplicationDescription(QStringLiteral("SCIN Explorer: All-Reduce design-space explorer"));
  cli.addHelpOption();
  cli.addVersionOption();
  cli.addPositionalArgument(QStringLiteral("FILE"), QStringLiteral("experiment database (.scindb) to open"));
  QCommandLineOption preset(QStringLiteral("preset"), QStringLiteral("load fabric preset NAME"), QStringLiteral("NAME"));
  QCommandLineOption run(QStringLiteral("run"), QStringLiteral("run the sweep once the window is up"));
  QCommandLineOption tab(QStringLiteral("tab"),
                         QStringLiteral("show chart tab NAME (latency, bandwidth, speedup, breakdown, quant, timeline)"),
                         QStringLiteral("NAME"));
  QCommandLineOption shot(QStringLiteral("screenshot"), QStringLiteral("save a PNG of the window"), QStringLiteral("PNG"));
  QCommandLineOption quit(QStringLiteral("quit"), QStringLiteral("quit when done (after --run / --screenshot)"));
  QCommandLineOption size(QStringLiteral("size"), QStringLiteral("window size WxH (default 1500x950)"), QStringLiteral("WxH"));
  cli.addOptions({preset, run, tab, shot, quit, size});
  cli.process(app);

  scin::ui::MainWindow w;
  QString file = cli.positionalArguments().value(0);
  if (file.isEmpty()) file = QSettings().value(QStringLiteral("lastDatabase")).toString();
  if (file.isEmpty()) file = scin::ui::MainWindow::defaultDatabasePath();
  bool fileFailed = false;
  if (!w.openDatabase(file) && !cli.positionalArguments().isEmpty()) {
    fileFailed = true;
    std::fprintf(stderr, "scin-explorer: %s\n", qPrintable(w.lastError()));
    // Keep going with the default database, as the window does.
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

  if (!cli.isSet(run) && !cli.isSet(shot) && !cli.isSet(quit)) return app.exec();

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
  if (cli.isSet(shot)) {
    QPixmap pm = w.grab();
    if (!pm.save(cli.value(shot))) {
      std::fprintf(stderr, "scin-explorer: could not write %s\n", qPrintable(cli.value(shot)));
      rc = 1;
    }
  }
  if (cli.isSet(quit)) {
    w.close();
    return rc;
  }
  return app.exec();
}
