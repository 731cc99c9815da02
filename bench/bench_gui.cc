// The app's live preview, headless: a fabric edit -> the preview's curves
// repainted (issue 14 target: < 16 ms at 8 GPUs for the default sweep).
// BM_AnalysisOpenLargeRun: the Analysis tab opening a 10^5-point run (how long
// the GUI thread is blocked; see the comment there); BM_AnalysisLargeRunInteract:
// hovering, resizing and zooming such a run.
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
#include <time.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <optional>
#include <vector>

#include <QApplication>
#include <QElapsedTimer>
#include <QMouseEvent>
#include <QWheelEvent>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTabWidget>
#include <QTableView>

#include <benchmark/benchmark.h>

#include "analysis/plot.h"
#include "analysis/table.h"
#include "fabric/preset.h"
#include "tests/ui/synthetic_runs.h"
#include "ui/analysis_view.h"
#include "ui/chart_panel.h"
#include "ui/fabric_doc.h"
#include "ui/main_window.h"
#include "ui/points_model.h"
#include "ui/preview.h"

namespace {

/// The application, timing each event it delivers (outermost deliveries only).
class TimedApp : public QApplication {
 public:
  using QApplication::QApplication;
  static inline qint64 longestNs = 0;  // the longest delivery since reset
  bool notify(QObject* o, QEvent* e) override {
    if (depth_ > 0) return QApplication::notify(o, e);
    ++depth_;
    QElapsedTimer t;
    t.start();
    const bool r = QApplication::notify(o, e);
    longestNs = std::max(longestNs, t.nsecsElapsed());
    --depth_;
    return r;
  }

 private:
  int depth_ = 0;
};

double cpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

double threadCpuMs() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
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
  struct PaintCount : QObject {
    int n = 0;
    bool eventFilter(QObject*, QEvent* e) override {
      if (e->type() == QEvent::Paint) ++n;
      return false;
    }
  } paints;  // the chart's repaints (one per delivery)
  static_cast<scin::ui::ChartPanel*>(front)->view()->viewport()->installEventFilter(&paints);
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
  std::vector<double> first, final_, gui_cpu, all_cpu;
  const double cpu0 = cpuSeconds();
  const auto wall0 = std::chrono::steady_clock::now();
  double bw = 450;
  for (auto _ : state) {
    bw = bw == 450 ? 900 : 450;
    shownComplete = firstSeen = false;
    const double gui0 = threadCpuMs(), proc0 = cpuSeconds();
    t.start();
    w->fabric()->setParam("links.bandwidth_GBps", scin::ParamValue(bw));
    // Sleeps until an event comes, as the app's event loop does (a loop of
    // processEvents with a timeout returns at once and would spin, taking a
    // core from the preview's workers).
    while (!shownComplete) QCoreApplication::processEvents(QEventLoop::WaitForMoreEvents);
    const double ns = static_cast<double>(t.nsecsElapsed());
    state.SetIterationTime(ns / 1e9);
    first.push_back(firstNs / 1e6);
    final_.push_back(ns / 1e6);
    gui_cpu.push_back(threadCpuMs() - gui0);
    all_cpu.push_back((cpuSeconds() - proc0) * 1e3);
  }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  auto median = [](std::vector<double> v) {
    if (v.empty()) return 0.0;
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
    return v[v.size() / 2];
  };
  state.counters["first_ms"] = median(first);
  state.counters["final_ms"] = median(final_);
  // CPU per edit: the GUI thread's (the edit, deliveries, repaints) and the
  // whole process's (the workers' is the difference; getrusage ticks coarsely).
  state.counters["gui_cpu_ms"] = median(gui_cpu);
  state.counters["chart_paints"] = static_cast<double>(paints.n) / static_cast<double>(state.iterations());
  state.counters["cpu_ms"] = median(all_cpu);
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

double medianOf(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

// The preview's worker alone (computePreview, no event loop): the default
// 224-point sweep on hgx-h200-8, on state.range(0) threads (0: one per core,
// as the app runs it). Counters: first_ms (the coarse curves handed over);
// the iteration time is the complete preview; both wall. cores: process CPU
// over wall while measuring (what the threads actually got).
void BM_PreviewCompute(benchmark::State& state) {
  const scin::Config cfg = scin::load_preset("hgx-h200-8");
  std::vector<double> first;
  const double cpu0 = cpuSeconds();
  const auto wall0 = std::chrono::steady_clock::now();
  for (auto _ : state) {
    QElapsedTimer t;
    t.start();
    double f = -1;
    scin::ui::computePreview(cfg, scin::ui::SweepRequest{}, false, 0.5, {}, 1e9,
                             [&](const scin::ui::ResultSet& rs, const scin::ui::PreviewStatus&) {
                               if (f < 0) f = static_cast<double>(t.nsecsElapsed()) / 1e6;
                               benchmark::DoNotOptimize(rs.curves.data());
                             },
                             static_cast<unsigned>(state.range(0)));
    state.SetIterationTime(static_cast<double>(t.nsecsElapsed()) / 1e9);
    first.push_back(f);
  }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  state.counters["first_ms"] = medianOf(first);
  state.counters["cores"] = wall > 0 ? (cpuSeconds() - cpu0) / wall : 0;
}
BENCHMARK(BM_PreviewCompute)->Arg(1)->Arg(0)->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(20);

/// A synthetic stored timing run of 10^5 points (tests/ui/synthetic_runs.h):
/// `dense` false: 4000 curves of 25 sizes (the default view has panels);
/// true: 2 curves of 50000 latencies each (one panel, long series).
std::shared_ptr<const scin::analysis::AnalysisTable> largeTable(bool dense) {
  if (dense) {
    static const auto t = scin::test_data::synthetic_dense_table(2, 50000, 2, "dense");
    return t;
  }
  static const auto t = scin::test_data::synthetic_timing_table(8, 25, 1, "large");
  return t;
}

/// Whether the canvas still owes the picture of its current plot, size and zoom
/// (a render on its worker). Canvases that paint synchronously (before branch
/// `paint`) never do: the benchmark source builds against either.
template <class Canvas>
bool stillRendering(const Canvas* c) {
  if constexpr (requires { c->rendering(); }) return c->rendering();
  else return false;
}

/// Whether the points table still owes a sort (worked out on a worker since
/// the GUI thread stopped sorting 10^5 rows itself; before, never).
template <class Model>
bool stillSorting(const Model* m) {
  if constexpr (requires { m->sortPending(); }) return m && m->sortPending();
  else return false;
}

/// Runs the event loop until the canvas shows its current picture and the
/// points table its current sort, then paints it now (as the next frame would).
void untilShown(scin::ui::AnalysisView& view) {
  auto* points = qobject_cast<scin::ui::PointsModel*>(view.pointsTable()->model());
  // (Untimed: processEvents with a timeout ignores WaitForMoreEvents and would spin.)
  while (view.busy() || stillRendering(view.canvas()) || stillSorting(points))
    QCoreApplication::processEvents(QEventLoop::WaitForMoreEvents);
  view.canvas()->repaint();
}

// The Analysis tab opening a stored run of 10^5 points, as the run loader
// hands the table over (AnalysisView::setTable on the GUI thread), until the
// default plot is shown and the canvas repainted. Counters:
//   call_ms   the setTable call itself (GUI thread blocked, input waits);
//   block_ms  the longest the GUI thread is away from its event loop between
//             the call and the repainted plot: the call, or the longest single
//             event delivered (TimedApp::notify), e.g. the worker's plot shown
//             and repainted;
//   gui_cpu_ms CPU time of the GUI thread over the whole interval (it sleeps
//             while waiting for the workers);
//   shown_ms  wall time until the plot is repainted (workers included).
// state.range(0) = 1: the loader's worker already computed the default query
// (what MainWindow::showRuns does); 0: the view works it out itself; 2: as 1,
// on the run of two 50000-point curves.
void BM_AnalysisOpenLargeRun(benchmark::State& state) {
  const auto table = largeTable(state.range(0) == 2);
  std::vector<double> call, block, cpu, shown;
  for (auto _ : state) {
    state.PauseTiming();
    scin::ui::AnalysisView view;
    view.resize(1400, 900);
    view.show();
    QCoreApplication::processEvents();
    std::optional<scin::analysis::PlotQuery> hint;
    if (state.range(0) >= 1) hint = scin::analysis::default_query(*table);
    bool ready = false;
    QObject::connect(&view, &scin::ui::AnalysisView::plotReady, &view, [&] {
      view.canvas()->repaint();  // paint now, as the next frame would
      ready = true;
    });
    QElapsedTimer t;
    state.ResumeTiming();
    t.start();
    const double cpu0 = threadCpuMs();
    view.setTable(table, hint);
    const double c = static_cast<double>(t.nsecsElapsed()) / 1e6;
    TimedApp::longestNs = 0;
    while (!ready) QCoreApplication::processEvents(QEventLoop::WaitForMoreEvents);
    untilShown(view);
    const double ns = static_cast<double>(t.nsecsElapsed());
    const double longest = std::max(c, static_cast<double>(TimedApp::longestNs) / 1e6);
    state.SetIterationTime(ns / 1e9);
    call.push_back(c);
    block.push_back(longest);
    cpu.push_back(threadCpuMs() - cpu0);
    shown.push_back(ns / 1e6);
    state.PauseTiming();
    if (view.plot()->empty() || (state.range(0) < 2 && view.query().facet.empty()))
      state.SkipWithError("the default plot of the large run is not what this benchmark is about");
    state.counters["points"] = static_cast<double>(view.plot()->point_count());
    state.ResumeTiming();
  }
  state.counters["call_ms"] = medianOf(call);
  state.counters["block_ms"] = medianOf(block);
  state.counters["gui_cpu_ms"] = medianOf(cpu);
  state.counters["shown_ms"] = medianOf(shown);
}
BENCHMARK(BM_AnalysisOpenLargeRun)->Arg(0)->Arg(1)->Arg(2)->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(3);

// What the user does with a 10^5-point run open in the Analysis tab, each
// action as its input event delivered to the view, then the next frame painted
// (repaint()), until the picture is current (a render on a worker, if any, done
// and painted). state.range(0): the run (0: 4000 curves x 25 sizes in panels,
// 1: 2 curves x 50000 points); state.range(1): the action (0: the mouse moves
// over the plot, the tracker follows; 1: the window is resized, 1400x900 <->
// 1300x850; 2: one wheel step zooms in or out; 3: a click on the points table's
// y column header, sorting 10^5 rows by it, descending and ascending in turn). Counters:
//   gui_ms    wall time of the event and the frame after it (the GUI thread busy, input waits);
//   block_ms  the longest single event delivery until the picture is current;
//   gui_cpu_ms CPU time of the GUI thread until then;
//   shown_ms  wall time until the current picture is painted.
void BM_AnalysisLargeRunInteract(benchmark::State& state) {
  const auto table = largeTable(state.range(0) == 1);
  scin::ui::AnalysisView view;
  view.resize(1400, 900);
  view.show();
  QCoreApplication::processEvents();
  view.setTable(table, scin::analysis::default_query(*table));
  untilShown(view);
  QWidget* canvas = view.canvas();
  std::vector<double> gui, block, cpu, shown;
  int k = 0;
  for (auto _ : state) {
    ++k;
    QElapsedTimer t;
    t.start();
    const double cpu0 = threadCpuMs();
    TimedApp::longestNs = 0;
    const QPointF at(canvas->width() * (k % 2 ? 0.45 : 0.55), canvas->height() * (k % 2 ? 0.4 : 0.6));
    switch (state.range(1)) {
      case 0: {
        QMouseEvent move(QEvent::MouseMove, at, canvas->mapToGlobal(at), Qt::NoButton, Qt::NoButton, Qt::NoModifier);
        QApplication::sendEvent(canvas, &move);
        break;
      }
      case 1:
        view.resize(k % 2 ? QSize(1300, 850) : QSize(1400, 900));
        QCoreApplication::sendPostedEvents();  // the resize and the layout it triggers
        break;
      case 3: {
        // The y column (after point, series, panel and the axes).
        QAbstractItemModel* m = view.pointsTable()->model();
        int ycol = -1;
        for (int c = 0; c < m->columnCount() && ycol < 0; ++c)
          if (m->headerData(c, Qt::Horizontal).toString().startsWith(QString::fromStdString(view.query().y))) ycol = c;
        view.pointsTable()->sortByColumn(ycol, k % 2 ? Qt::DescendingOrder : Qt::AscendingOrder);
        break;
      }
      default: {
        QWheelEvent wheel(at, canvas->mapToGlobal(at), QPoint(), QPoint(0, k % 2 ? 120 : -120), Qt::NoButton, Qt::NoModifier,
                          Qt::NoScrollPhase, false);
        QApplication::sendEvent(canvas, &wheel);
        break;
      }
    }
    canvas->repaint();
    const double g = static_cast<double>(t.nsecsElapsed()) / 1e6;
    untilShown(view);
    const double ns = static_cast<double>(t.nsecsElapsed());
    state.SetIterationTime(ns / 1e9);
    gui.push_back(g);
    block.push_back(std::max(g, static_cast<double>(TimedApp::longestNs) / 1e6));
    cpu.push_back(threadCpuMs() - cpu0);
    shown.push_back(ns / 1e6);
  }
  state.counters["points"] = static_cast<double>(view.plot()->point_count());
  state.counters["gui_ms"] = medianOf(gui);
  state.counters["block_ms"] = medianOf(block);
  state.counters["gui_cpu_ms"] = medianOf(cpu);
  state.counters["shown_ms"] = medianOf(shown);
}
BENCHMARK(BM_AnalysisLargeRunInteract)
    ->ArgsProduct({{0, 1}, {0, 1, 2, 3}})
    ->ArgNames({"run", "action"})
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3);

}  // namespace

int main(int argc, char** argv) {
  TimedApp app(argc, argv);
  QStandardPaths::setTestModeEnabled(true);
  QCoreApplication::setOrganizationName(QStringLiteral("scin-bench"));
  QCoreApplication::setApplicationName(QStringLiteral("scin-explorer-bench"));
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
