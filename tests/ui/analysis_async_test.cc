// The Analysis view never computes on the GUI thread (issue 14): a table of
// 10^5 points is set while every worker of the pool is held, so nothing can be
// computed anywhere but on the GUI thread; the view must not change until the
// workers are let go, and then reach exactly the plot analysis::make_plot gives
// for the default query. Newer requests supersede older ones (a stale result
// is dropped, even one arriving late), and replacing the table or closing the
// view while a worker runs is safe. No timing is asserted: workers are held
// and released through semaphores, results are awaited with QTRY_.
#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

#include <QComboBox>
#include <QDir>
#include <QHeaderView>
#include <QLabel>
#include <QLocale>
#include <QSemaphore>
#include <QSignalSpy>
#include <QThreadPool>
#include <QtTest>

#include "analysis/decimate.h"
#include "analysis/plot.h"
#include "analysis/table.h"
#include "store/store.h"
#include "tests/ui/synthetic_runs.h"
#include "ui/analysis_view.h"
#include "ui/points_model.h"

using namespace scin;
using namespace scin::ui;

namespace {

std::shared_ptr<const analysis::AnalysisTable> timingTable(int algos, int sizes, std::int64_t id) {
  return scin::test_data::synthetic_timing_table(algos, sizes, id, "synthetic");
}

/// A small run: two algorithms at three sizes, nothing else swept.
std::shared_ptr<const analysis::AnalysisTable> smallTable(std::int64_t id) {
  RunInfo run;
  run.id = id;
  run.name = "small";
  run.kind = PointKind::Collective;
  run.status = RunStatus::Done;
  std::vector<PointRecord> pts;
  for (const char* a : {"ring", "scin"})
    for (int b = 0; b < 3; ++b) {
      PointRecord p;
      p.index = pts.size();
      p.algorithm = a;
      p.bytes = std::uint64_t{4096} << b;
      p.gpus = 8;
      p.time_us = 10.0 * (b + 1) + (a[0] == 's' ? 1 : 2);
      p.busbw_GBps = 1;
      pts.push_back(std::move(p));
    }
  return std::make_shared<const analysis::AnalysisTable>(analysis::build_table(run, pts));
}

/// Holds every thread of the global pool (QtConcurrent's) until release().
class PoolHold {
 public:
  PoolHold() {
    QThreadPool* pool = QThreadPool::globalInstance();
    n_ = pool->maxThreadCount();
    for (int i = 0; i < n_; ++i)
      pool->start([this] {
        started_.release();
        gate_.acquire();
      });
    started_.acquire(n_);  // every thread is inside a holder now
  }
  ~PoolHold() { release(); }
  void release() {
    gate_.release(n_);
    n_ = 0;
  }

 private:
  int n_ = 0;
  QSemaphore started_, gate_;
};

/// Every (facet, series key, x, y) of a plot, in order: equal plots give equal lists.
std::vector<std::tuple<std::string, std::string, double, double>> content(const analysis::PlotData& p) {
  std::vector<std::tuple<std::string, std::string, double, double>> out;
  for (const auto& f : p.facets)
    for (const auto& s : f.series)
      for (const auto& pt : s.points) out.emplace_back(f.value, s.key, pt.x, pt.y);
  return out;
}

}  // namespace

class AnalysisAsyncTest : public QObject {
  Q_OBJECT
 private:
  std::shared_ptr<const analysis::AnalysisTable> large_;

 private Q_SLOTS:
  void initTestCase() {
    QThreadPool::globalInstance()->setMaxThreadCount(std::max(2, QThreadPool::globalInstance()->maxThreadCount()));
    large_ = timingTable(8, 25, 1);
    QCOMPARE(large_->rows.size(), std::size_t{100000});
  }

  // With the workers held, setTable and a replot return without computing
  // anything: the view still shows what it showed (query, plot, table of the
  // plot), its pickers wait. Let go, it shows the default plot, exactly.
  void largeTableIsPlottedOnAWorker() {
    AnalysisView av;
    av.resize(1200, 800);
    av.show();
    av.setTable(smallTable(2));
    QTRY_VERIFY_WITH_TIMEOUT(!av.busy(), 60000);
    const analysis::PlotQuery before = av.query();
    const auto plotBefore = av.plot();
    QVERIFY(plotBefore && !plotBefore->empty());
    QSignalSpy ready(&av, &AnalysisView::plotReady);
    {
      PoolHold hold;
      av.setTable(large_, analysis::default_query(*large_) /* as the run loader passes it */);
      QVERIFY(av.busy());
      QVERIFY(av.table() == large_);
      QTest::qWait(100);  // the event loop runs; no worker can
      // Nothing was worked out on this thread: not the query (default_query and
      // auto_facet would choose panels), not the plot.
      QCOMPARE(av.query().x, before.x);
      QCOMPARE(av.query().facet, before.facet);
      QVERIFY(av.plot() == plotBefore);
      QCOMPARE(av.shownTable()->run.id, std::int64_t{2});
      QCOMPARE(ready.count(), 0);
      for (QComboBox* c : av.findChildren<QComboBox*>()) QVERIFY(!c->isEnabled());
      hold.release();
      QTRY_VERIFY_WITH_TIMEOUT(!av.busy(), 120000);
    }
    QCOMPARE(ready.count(), 1);
    const analysis::PlotQuery want = analysis::default_query(*large_);
    QVERIFY(!want.facet.empty());  // 4000 curves in one panel: auto_facet splits them
    QCOMPARE(av.query().x, want.x);
    QCOMPARE(av.query().y, want.y);
    QCOMPARE(av.query().facet, want.facet);
    QVERIFY(av.shownTable() == large_);
    const analysis::PlotData direct = analysis::make_plot(*large_, want);
    QCOMPARE(av.plot()->point_count(), std::size_t{100000});
    QCOMPARE(av.plot()->facets.size(), direct.facets.size());
    QVERIFY(content(*av.plot()) == content(direct));
    QCOMPARE(av.legendTexts().size(), static_cast<qsizetype>(direct.legend().size()));
    for (QComboBox* c : av.findChildren<QComboBox*>()) QVERIFY(c->isEnabled());
    QCOMPARE(av.logX(), large_->find(want.x)->log_default);
    // The points table holds every point, sorted by point index (its default
    // sort, through PointsProxy's direct comparison, in the header's order).
    {
      QAbstractItemModel* m = av.pointsTable()->model();
      QCOMPARE(m->rowCount(), 100000);
      QCOMPARE(m->headerData(0, Qt::Horizontal).toString(), QStringLiteral("point"));
      QCOMPARE(av.pointsTable()->horizontalHeader()->sortIndicatorSection(), 0);
      const bool down = av.pointsTable()->horizontalHeader()->sortIndicatorOrder() == Qt::DescendingOrder;
      for (int r = 0; r < m->rowCount(); ++r)
        if (m->index(r, 0).data(Qt::UserRole).toULongLong() != static_cast<qulonglong>(down ? 99999 - r : r))
          QFAIL(qPrintable(QStringLiteral("row %1: point %2").arg(r).arg(m->index(r, 0).data(Qt::UserRole).toULongLong())));
      av.pointsTable()->sortByColumn(0, down ? Qt::AscendingOrder : Qt::DescendingOrder);
      QCOMPARE(m->index(0, 0).data(Qt::UserRole).toULongLong(), qulonglong{down ? 0u : 99999u});
      QCOMPARE(m->index(99999, 0).data(Qt::UserRole).toULongLong(), qulonglong{down ? 99999u : 0u});
      // Sorting 10^5 rows by another column is worked out on a worker: while
      // it is held, the rows keep their order and the event loop runs.
      auto* pm = qobject_cast<PointsModel*>(m);
      QVERIFY(pm);
      int ycol = -1;
      for (int c = 0; c < m->columnCount(); ++c)
        if (m->headerData(c, Qt::Horizontal).toString().startsWith(QString::fromStdString(want.y))) ycol = c;
      QVERIFY(ycol > 0);
      const qulonglong firstBefore = m->index(0, 0).data(Qt::UserRole).toULongLong();
      QSignalSpy sorted(pm, &PointsModel::sortFinished);
      {
        PoolHold hold;
        av.pointsTable()->sortByColumn(ycol, Qt::DescendingOrder);
        QVERIFY(pm->sortPending());
        QTest::qWait(50);
        QCOMPARE(m->index(0, 0).data(Qt::UserRole).toULongLong(), firstBefore);
        hold.release();
        QTRY_VERIFY_WITH_TIMEOUT(!pm->sortPending(), 60000);
      }
      QCOMPARE(sorted.count(), 1);
      double top = -INFINITY;
      for (const auto& f : av.plot()->facets)
        for (const auto& s : f.series)
          for (const auto& pt : s.points) top = std::max(top, pt.y);
      QCOMPARE(m->index(0, ycol).data(Qt::UserRole).toDouble(), top);
      for (int r = 1; r < m->rowCount(); ++r)
        if (m->index(r - 1, ycol).data(Qt::UserRole).toDouble() < m->index(r, ycol).data(Qt::UserRole).toDouble())
          QFAIL(qPrintable(QStringLiteral("row %1 out of order").arg(r)));
      // Back to point order: a reversal, done at once.
      av.pointsTable()->sortByColumn(0, Qt::AscendingOrder);
      QVERIFY(!pm->sortPending());
      QCOMPARE(m->index(0, 0).data(Qt::UserRole).toULongLong(), qulonglong{0});
    }

    // Without the loader's defaults the view works them out itself, on a worker too.
    {
      PoolHold hold;
      av.setTable(smallTable(3));
      QTest::qWait(50);
      QVERIFY(av.shownTable() == large_);
      QCOMPARE(av.query().facet, want.facet);
      hold.release();
      QTRY_VERIFY_WITH_TIMEOUT(!av.busy(), 60000);
    }
    QCOMPARE(av.shownTable()->run.id, std::int64_t{3});
    QVERIFY(av.query().facet.empty());
    QCOMPARE(av.plot()->point_count(), std::size_t{6});
  }

  // Requests made while the workers are held all run once they are let go, in
  // any order; only the newest is shown (one plotReady), whatever finishes last.
  void newestQueryWins() {
    AnalysisView av;
    av.show();
    QSignalSpy ready(&av, &AnalysisView::plotReady);
    analysis::PlotQuery newest;
    {
      PoolHold hold;
      av.setTable(large_);
      // The user's query before the table's own default is known: it wins.
      analysis::PlotQuery q1 = analysis::default_query(*large_);
      q1.y = "busbw_GBps";
      av.setQuery(q1);
      newest = q1;
      newest.x = "switch.isa.waves";
      newest.y = "time_us";
      newest.facet = "switch.isa.regulation";
      newest.filters["collective.algorithm"] = {"scin"};
      newest.filters["collective.bytes"] = {"1 KiB"};
      av.setQuery(newest);
      QCOMPARE(ready.count(), 0);
      hold.release();
      QTRY_VERIFY_WITH_TIMEOUT(!av.busy(), 120000);
    }
    QCOMPARE(ready.count(), 1);
    QCOMPARE(av.query().x, newest.x);
    QCOMPARE(av.query().facet, newest.facet);
    const analysis::PlotData direct = analysis::make_plot(*large_, newest);
    QVERIFY(direct.empty_reason.empty());
    QCOMPARE(av.plot()->y.key, std::string("time_us"));
    QCOMPARE(av.plot()->x.key, std::string("switch.isa.waves"));
    QCOMPARE(av.plot()->facets.size(), std::size_t{4});
    QCOMPARE(av.plot()->point_count(), std::size_t{5 * 4 * 5 * 5});
    QVERIFY(content(*av.plot()) == content(direct));
    for (QComboBox* c : av.findChildren<QComboBox*>()) QVERIFY(c->isEnabled());
  }

  // A large table's job (slow) superseded by a small one's (fast, on the other
  // worker): the large result arrives after the small one and is dropped.
  void staleTableArrivingLateIsDropped() {
    AnalysisView av;
    av.show();
    QSignalSpy ready(&av, &AnalysisView::plotReady);
    const auto small = smallTable(4);
    av.setTable(large_);
    av.setTable(small);
    QTRY_VERIFY_WITH_TIMEOUT(ready.count() >= 1, 60000);
    const bool largeStillRunning = av.busy();  // usually: it is then dropped below
    QTRY_VERIFY_WITH_TIMEOUT(!av.busy(), 120000);
    if (!largeStillRunning) qInfo("the large table's job finished first this time (dropped all the same)");
    QCOMPARE(ready.count(), 1);
    QVERIFY(av.table() == small);
    QVERIFY(av.shownTable() == small);
    QVERIFY(content(*av.plot()) == content(analysis::make_plot(*small, analysis::default_query(*small))));
    QCOMPARE(av.legendTexts(), (QStringList{QStringLiteral("ring"), QStringLiteral("scin")}));
  }

  // The table replaced by none, and the view closed, while workers hold the
  // only other reference to the data: no use after free, the message shows.
  void replacingOrClosingWhileAJobRunsIsSafe() {
    {
      auto av = std::make_unique<AnalysisView>();
      av->show();
      av->setMessage(QStringLiteral("nothing stored"));
      auto t = timingTable(8, 25, 5);
      std::weak_ptr<const analysis::AnalysisTable> weak = t;
      {
        PoolHold hold;
        av->setTable(t);
        t.reset();  // the view and its worker hold the table now
        av->setTable(nullptr);
        QVERIFY(!weak.expired());  // the queued worker still holds it
        hold.release();
        QTRY_VERIFY_WITH_TIMEOUT(!av->busy(), 120000);
      }
      QTRY_VERIFY(weak.expired());  // released once the worker is done
      QCOMPARE(av->emptyText(), QStringLiteral("nothing stored"));
      QVERIFY(!av->shownTable());
      QString err;
      QVERIFY(!av->exportFigure(QStringLiteral("unused.png"), FigureSize::singleColumn(), false, &err));
    }
    {
      auto av = std::make_unique<AnalysisView>();
      av->show();
      auto t = timingTable(8, 25, 6);
      std::weak_ptr<const analysis::AnalysisTable> weak = t;
      av->setTable(t);
      t.reset();
      av.reset();  // closed while its worker runs
      QVERIFY(QThreadPool::globalInstance()->waitForDone(120000));
      QTRY_VERIFY(weak.expired());
    }
  }
  // A run of two 50000-point curves (issue 14): the picture is drawn on a
  // worker, each series reduced to the pixels of its panel (what core's
  // decimate_series keeps: the extremes among them), and the view says so; the
  // tracker shows true points; the points table lists all 10^5. With the workers
  // held, a resize leaves the previous picture up (the GUI thread draws nothing)
  // until they are let go.
  void longSeriesAreDrawnAtScreenResolutionOnAWorker() {
    const auto dense = scin::test_data::synthetic_dense_table(2, 50000, 7, "dense");
    AnalysisView av;
    av.resize(1200, 800);
    av.show();
    av.setTable(dense, analysis::default_query(*dense));
    QTRY_VERIFY_WITH_TIMEOUT(!av.busy(), 120000);
    FigureCanvas* canvas = av.canvas();
    QTRY_VERIFY_WITH_TIMEOUT(canvas->reduced().series == 2, 60000);
    const analysis::PlotData& plot = *av.plot();
    QCOMPARE(plot.point_count(), std::size_t{100000});
    QCOMPARE(plot.facets.size(), std::size_t{1});
    const FigureCanvas::Reduced r = canvas->reduced();
    QCOMPARE(r.points, std::size_t{100000});
    // Markers: one per occupied pixel cell (the wiggle spreads a column's ~50
    // points over ~150 rows: most keep a cell of their own).
    QVERIFY2(r.drawn > 1000 && r.drawn < 50000, qPrintable(QString::number(r.drawn)));
    // The note says it.
    bool said = false;
    for (QLabel* l : av.findChildren<QLabel*>())
      if (l->isVisible() && l->text().contains(QStringLiteral("2 series drawn at screen resolution (100,000 points;")))
        said = true;
    QVERIFY(said);
    // What was drawn is core's decimation at the panel's size in pixels: each
    // series' lowest and highest points are among the kept ones.
    const FigureLayout& layout = canvas->shownLayout();
    QCOMPARE(layout.drawn.size(), std::size_t{1});
    QCOMPARE(layout.drawn[0].size(), std::size_t{2});
    const auto& panel = layout.panels[0];
    for (std::size_t si = 0; si < 2; ++si) {
      const analysis::Series& s = plot.facets[0].series[si];
      const analysis::Decimation& d = layout.drawn[0][si];
      QCOMPARE(d.total, std::size_t{50000});
      const analysis::PixelGrid g = layout.pixelGrid(panel, canvas->logicalDpiY() / 72.0 * canvas->devicePixelRatioF());
      const analysis::Decimation direct = analysis::decimate_series(s.points, g);
      QVERIFY(d.keep == direct.keep);
      QVERIFY(d.line == direct.line);
      QVERIFY(d.line.size() <= 4 * static_cast<std::size_t>(std::ceil(g.width)) + 8);  // the line: at most 4 points per pixel column
      const auto [lo, hi] = std::minmax_element(s.points.begin(), s.points.end(),
                                                [](const analysis::SeriesPoint& a, const analysis::SeriesPoint& b) { return a.y < b.y; });
      for (auto it : {lo, hi}) QVERIFY(std::binary_search(d.keep.begin(), d.keep.end(), static_cast<std::size_t>(it - s.points.begin())));
    }
    // The tracker over the highest point of the first series shows that point's true values.
    {
      const analysis::Series& s = plot.facets[0].series[0];
      const auto hi = std::max_element(s.points.begin(), s.points.end(),
                                       [](const analysis::SeriesPoint& a, const analysis::SeriesPoint& b) { return a.y < b.y; });
      const QPointF at = layout.map(panel, hi->x, hi->y) / (72.0 / canvas->logicalDpiY());
      const QString text = canvas->trackAt(at.toPoint());
      QVERIFY2(text.contains(QStringLiteral("point #%1").arg(dense->rows[hi->row].point_index)) ||
                   text.contains(QStringLiteral("drawn at screen resolution")),
               qPrintable(text));
      QVERIFY2(text.contains(QStringLiteral("series of 50,000 points, drawn at screen resolution")), qPrintable(text));
    }
    // Every point is in the table.
    QCOMPARE(av.pointsTable()->model()->rowCount(), 100000);
    if (const QString dir = qEnvironmentVariable("SCIN_UI_SHOTS"); !dir.isEmpty())
      av.grab().save(QDir(dir).filePath(QStringLiteral("analysis-dense.png")));

    // Resized with every worker held: the GUI thread keeps the previous picture.
    const QRectF before = canvas->shownLayout().panels[0].plot;
    {
      PoolHold hold;
      av.resize(900, 700);
      QTest::qWait(150);
      QVERIFY(canvas->rendering());
      QVERIFY(av.busy());
      QCOMPARE(canvas->shownLayout().panels[0].plot, before);
      hold.release();
      QTRY_VERIFY_WITH_TIMEOUT(!canvas->rendering(), 120000);
    }
    QVERIFY(canvas->shownLayout().panels[0].plot.width() < before.width());
    QCOMPARE(canvas->reduced().points, std::size_t{100000});
  }
};

QTEST_MAIN(AnalysisAsyncTest)
#include "analysis_async_test.moc"
