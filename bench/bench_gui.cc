// The app's live preview, headless: a fabric edit -> the preview's curves
// repainted (issue 14 target: < 16 ms at 8 GPUs for the default sweep).
//
//   QT_QPA_PLATFORM=offscreen build/bench/bench_gui --benchmark_repetitions=5
//       --benchmark_report_aggregates_only=true   (one command line)
//
// One iteration = one edit of links.bandwidth_GBps through the fabric
// document (as the editor's spin box does: undo step, topology redraw,
// preview request), then the event loop runs until the preview's newest
// result is complete and the chart in front has been repainted (repaint() of
// the widget). Counters: first_ms (edit -> first, coarse result shown),
// final_ms (edit -> complete curves repainted), cores (user+sys CPU over wall
// of the whole process while measuring: the preview's worker thread included).
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <vector>

#include <QApplication>
#include <QElapsedTimer>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTabWidget>

#include <benchmark/benchmark.h>

#include "ui/chart_panel.h"
#include "ui/fabric_doc.h"
#include "ui/main_window.h"
#include "ui/preview.h"

namespace {

double cpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

/// The app's main window on a new database in `dir`, on the Latency tab, shown.
std::unique_ptr<scin::ui::MainWindow> bench_window(const QTemporaryDir& dir) {
  auto w = std::make_unique<scin::ui::MainWindow>();
  w->resize(1400, 900);
  w->createDatabase(dir.filePath(QStringLiteral("bench.scindb")));
  w->showTab(QStringLiteral("latency"));
  w->show();
  return w;
}

void BM_PreviewEditToRepaint(benchmark::State& state) {
  using scin::ui::MainWindow;
  QTemporaryDir dir;
  auto w = bench_window(dir);
  auto settle = [&] {
    while (w->preview()->busy()) QCoreApplication::processEvents(QEventLoop::AllEvents, 5);
  };
  settle();
  QWidget* front = w->chart(QStringLiteral("latency"));
  bool shownComplete = false;
  bool firstSeen = false;
  double firstNs = 0;
  QElapsedTimer t;
  QObject::connect(w.get(), &MainWindow::chartsUpdated, w.get(), [&] {
    front->repaint();  // paint now, as the next frame would
    if (!firstSeen) {
      firstSeen = true;
      firstNs = static_cast<double>(t.nsecsElapsed());
    }
    if (!w->preview()->busy()) shownComplete = true;
  });
  std::vector<double> first, final_;
  const double cpu0 = cpuSeconds();
  const auto wall0 = std::chrono::steady_clock::now();
  double bw = 450;
  for (auto _ : state) {
    bw = bw == 450 ? 900 : 450;
    shownComplete = firstSeen = false;
    t.start();
    w->fabric()->setParam("links.bandwidth_GBps", scin::ParamValue(bw));
    while (!shownComplete) QCoreApplication::processEvents(QEventLoop::AllEvents, 1);
    const double ns = static_cast<double>(t.nsecsElapsed());
    state.SetIterationTime(ns / 1e9);
    first.push_back(firstNs / 1e6);
    final_.push_back(ns / 1e6);
  }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  auto median = [](std::vector<double> v) {
    if (v.empty()) return 0.0;
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
    return v[v.size() / 2];
  };
  state.counters["first_ms"] = median(first);
  state.counters["final_ms"] = median(final_);
  state.counters["cores"] = wall > 0 ? (cpuSeconds() - cpu0) / wall : 0;
  state.counters["points"] = static_cast<double>(w->preview()->status().points_done);
  w->setUnsavedPrompt([] { return MainWindow::UnsavedChoice::Discard; });
  w->close();
}
BENCHMARK(BM_PreviewEditToRepaint)->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(40);

// The GUI thread's share of the same path, with the curves already computed:
// the edit (undo step, editors, topology, preview request), delivering the
// complete 224-point result (as the worker's last message does) and
// repainting the chart in front. This is what the GUI thread must do within
// a frame; the worker's compute runs beside it.
void BM_PreviewGuiPath(benchmark::State& state) {
  using scin::ui::MainWindow;
  QTemporaryDir dir;
  auto w = bench_window(dir);
  while (w->preview()->busy()) QCoreApplication::processEvents(QEventLoop::AllEvents, 5);
  const scin::ui::ResultSet full = w->shown();
  QWidget* front = w->chart(QStringLiteral("latency"));
  double bw = 450;
  for (auto _ : state) {
    bw = bw == 450 ? 900 : 450;
    QElapsedTimer t;
    t.start();
    w->fabric()->setParam("links.bandwidth_GBps", scin::ParamValue(bw));
    Q_EMIT w->preview()->ready(full);
    front->repaint();
    state.SetIterationTime(static_cast<double>(t.nsecsElapsed()) / 1e9);
    state.PauseTiming();
    w->preview()->cancel();  // the worker's results are not part of this measurement
    QCoreApplication::processEvents();
    state.ResumeTiming();
  }
  state.counters["curves"] = static_cast<double>(full.curves.size());
  w->setUnsavedPrompt([] { return MainWindow::UnsavedChoice::Discard; });
  w->close();
}
BENCHMARK(BM_PreviewGuiPath)->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(40);

}  // namespace

int main(int argc, char** argv) {
  QApplication app(argc, argv);
  QStandardPaths::setTestModeEnabled(true);
  QCoreApplication::setOrganizationName(QStringLiteral("scin-bench"));
  QCoreApplication::setApplicationName(QStringLiteral("scin-explorer-bench"));
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
