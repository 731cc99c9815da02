// MainWindow, part two: window geometry and settings (fit the screen), chart
// and figure exports, and the report of the run shown.
#include <algorithm>

#include <QCheckBox>
#include <QCloseEvent>
#include <QComboBox>
#include <QDialog>
#include <QDialogButtonBox>
#include <QDockWidget>
#include <QDoubleSpinBox>
#include <QEventLoop>
#include <QFileDialog>
#include <QFormLayout>
#include <QGuiApplication>
#include <QMessageBox>
#include <QScreen>
#include <QSpinBox>
#include <QSettings>
#include <QStatusBar>
#include <QTabWidget>
#include <QTextDocumentFragment>
#include <QTimer>

#include "fabric/params.h"
#include "fabric/preset.h"
#include "ui/analysis_view.h"
#include "ui/exporter.h"
#include "ui/main_window.h"
#include "ui/preview.h"
#include "ui/quant_chart.h"
#include "ui/run_controller.h"
#include "ui/sweep_editor.h"
#include "ui/timeline_chart.h"

namespace scin::ui {

// --- settings and layout ------------------------------------------------------------

QRect MainWindow::availableScreen() const {
  QScreen* s = screen() ? screen() : QGuiApplication::primaryScreen();
  return s ? s->availableGeometry() : QRect(0, 0, 1366, 768);
}

void MainWindow::fitToScreen() {
  // Never larger than the screen; never placed off it.
  const QRect avail = availableScreen();
  const QSize frame = frameGeometry().size() - geometry().size();
  QSize sz = size().boundedTo(avail.size() - frame);
  if (sz != size()) resize(sz);
  QRect g = frameGeometry();
  if (!avail.contains(g)) {
    QPoint tl(std::clamp(g.left(), avail.left(), std::max(avail.left(), avail.right() - g.width())),
              std::clamp(g.top(), avail.top(), std::max(avail.top(), avail.bottom() - g.height())));
    move(tl);
  }
}

void MainWindow::restoreSettings() {
  QSettings s;
  // First start: 1500x950 where there is room, else the screen (1366x768 fits, docks included).
  const QRect avail = availableScreen();
  resize(QSize(1500, 950).boundedTo(avail.size() - QSize(16, 40)));
  const bool restored = restoreGeometry(s.value(QStringLiteral("window/geometry")).toByteArray()) &&
                        restoreState(s.value(QStringLiteral("window/state")).toByteArray());
  fitToScreen();  // a geometry saved on a bigger screen is clamped
  // First start: the docks get their widths once the window is shown with its real size
  // (showEvent); before that the main window's layout ignores resizeDocks.
  sizeDocksOnShow_ = !restored;
  rebuildRecentMenu();
  showTab(s.value(QStringLiteral("window/tab"), QStringLiteral("latency")).toString());
}

void MainWindow::showEvent(QShowEvent* e) {
  QMainWindow::showEvent(e);
  if (!sizeDocksOnShow_) return;
  sizeDocksOnShow_ = false;
  // Wide enough for the Fabric dock's labels and values, narrow enough that the charts get the
  // room; after the show's own layout pass.
  QTimer::singleShot(0, this, [this] {
    const int w = width();
    resizeDocks({findChild<QDockWidget*>(QStringLiteral("fabricDock")),
                 findChild<QDockWidget*>(QStringLiteral("sweepDock"))},
                {std::min(380, w / 4), std::min(300, w / 5)}, Qt::Horizontal);
  });
}

void MainWindow::saveSettings() {
  QSettings s;
  s.setValue(QStringLiteral("window/geometry"), saveGeometry());
  s.setValue(QStringLiteral("window/state"), saveState());
  s.setValue(QStringLiteral("lastDatabase"), databasePath());
  s.setValue(QStringLiteral("window/tab"), currentTab());
}

void MainWindow::closeEvent(QCloseEvent* e) {
  if (fabricDirty()) {
    UnsavedChoice c = UnsavedChoice::Cancel;
    if (unsavedPrompt_) {
      c = unsavedPrompt_();
    } else {
      const auto b = QMessageBox::question(this, tr("Unsaved fabric"),
                                           tr("The fabric has edits that are neither in a run nor saved as a preset. "
                                              "Save them as a user preset?"),
                                           QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel,
                                           QMessageBox::Save);
      c = b == QMessageBox::Save ? UnsavedChoice::Save : b == QMessageBox::Discard ? UnsavedChoice::Discard
                                                                                   : UnsavedChoice::Cancel;
    }
    if (c == UnsavedChoice::Cancel || (c == UnsavedChoice::Save && !savePresetDialog())) {
      e->ignore();
      return;
    }
  }
  // A preview is never waited for: stop it (its worker sees the stop token at
  // its next poll and drops its result) and close.
  preview_->cancel();
  if (runner_->running()) {
    // Nothing is lost: the points so far are committed and the run is stored as cancelled.
    runner_->cancel();
    runner_->wait();
  }
  saveSettings();
  e->accept();
}

// --- exports -------------------------------------------------------------------------

namespace {

bool askSize(QWidget* parent, QSize* size) {
  QDialog d(parent);
  d.setWindowTitle(QObject::tr("Figure size"));
  auto* f = new QFormLayout(&d);
  auto* w = new QSpinBox;
  auto* h = new QSpinBox;
  w->setRange(200, 8000);
  h->setRange(150, 8000);
  w->setValue(size->width());
  h->setValue(size->height());
  w->setSuffix(QStringLiteral(" px"));
  h->setSuffix(QStringLiteral(" px"));
  f->addRow(QObject::tr("Width (PNG at 2× for print; SVG/PDF are vector)"), w);
  f->addRow(QObject::tr("Height"), h);
  auto* bb = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel);
  QObject::connect(bb, &QDialogButtonBox::accepted, &d, &QDialog::accept);
  QObject::connect(bb, &QDialogButtonBox::rejected, &d, &QDialog::reject);
  f->addRow(bb);
  if (d.exec() != QDialog::Accepted) return false;
  *size = QSize(w->value(), h->value());
  return true;
}

// Physical size, font and title of a paper figure; presets for one and two columns.
bool askFigure(QWidget* parent, FigureSize* fig, bool* title) {
  QDialog d(parent);
  d.setWindowTitle(QObject::tr("Figure for a paper"));
  auto* f = new QFormLayout(&d);
  auto* preset = new QComboBox;
  preset->addItems({QObject::tr("Single column (3.5 in × 2.5 in, 8 pt)"), QObject::tr("Double column (7 in × 3.5 in, 9 pt)"),
                    QObject::tr("Custom")});
  auto* unit = new QComboBox;
  unit->addItems({QStringLiteral("in"), QStringLiteral("mm")});
  auto* w = new QDoubleSpinBox;
  auto* h = new QDoubleSpinBox;
  auto* pt = new QDoubleSpinBox;
  pt->setRange(5, 24);
  pt->setSuffix(QStringLiteral(" pt"));
  pt->setDecimals(1);
  auto* withTitle = new QCheckBox(QObject::tr("Draw the title (captions usually replace it)"));
  withTitle->setChecked(*title);
  auto show = [=](QSizeF s_pt) {
    const bool mm = unit->currentIndex() == 1;
    const double f = mm ? 25.4 / 72 : 1.0 / 72;
    for (QDoubleSpinBox* b : {w, h}) {
      b->setRange(mm ? 25 : 1, mm ? 1000 : 40);
      b->setDecimals(mm ? 0 : 2);
      b->setSuffix(mm ? QStringLiteral(" mm") : QStringLiteral(" in"));
    }
    w->setValue(s_pt.width() * f);
    h->setValue(s_pt.height() * f);
  };
  auto current = [=] {
    const double f = unit->currentIndex() == 1 ? 72 / 25.4 : 72;
    return QSizeF(w->value() * f, h->value() * f);
  };
  show(fig->size_pt);
  pt->setValue(fig->font_pt);
  preset->setCurrentIndex(2);
  QObject::connect(preset, &QComboBox::activated, &d, [=](int i) {
    if (i == 2) return;
    const FigureSize p = i == 0 ? FigureSize::singleColumn() : FigureSize::doubleColumn();
    show(p.size_pt);
    pt->setValue(p.font_pt);
  });
  QObject::connect(unit, &QComboBox::activated, &d, [=] {
    const double f = unit->currentIndex() == 1 ? 72 : 72 / 25.4;  // the previous unit
    show(QSizeF(w->value() * f, h->value() * f));
  });
  f->addRow(QObject::tr("Preset"), preset);
  f->addRow(QObject::tr("Unit"), unit);
  f->addRow(QObject::tr("Width"), w);
  f->addRow(QObject::tr("Height"), h);
  f->addRow(QObject::tr("Font size"), pt);
  f->addRow(withTitle);
  auto* bb = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel);
  QObject::connect(bb, &QDialogButtonBox::accepted, &d, &QDialog::accept);
  QObject::connect(bb, &QDialogButtonBox::rejected, &d, &QDialog::reject);
  f->addRow(bb);
  if (d.exec() != QDialog::Accepted) return false;
  fig->size_pt = current();
  fig->font_pt = pt->value();
  *title = withTitle->isChecked();
  return true;
}

}  // namespace

void MainWindow::exportCurrentChart() {
  if (tabs_->currentWidget() == analysis_) {
    QString path = QFileDialog::getSaveFileName(this, tr("Export figure"), QStringLiteral("figure.pdf"),
                                                tr("PDF (*.pdf);;SVG (*.svg);;PNG, 300 dpi (*.png)"));
    if (path.isEmpty()) return;
    QSettings s;
    FigureSize fig = FigureSize::singleColumn();
    fig.size_pt = s.value(QStringLiteral("export/figure_pt"), fig.size_pt).toSizeF();
    fig.font_pt = s.value(QStringLiteral("export/font_pt"), fig.font_pt).toDouble();
    bool title = s.value(QStringLiteral("export/title"), false).toBool();
    if (!askFigure(this, &fig, &title)) return;
    s.setValue(QStringLiteral("export/figure_pt"), fig.size_pt);
    s.setValue(QStringLiteral("export/font_pt"), fig.font_pt);
    s.setValue(QStringLiteral("export/title"), title);
    QString err;
    if (!analysis_->exportFigure(path, fig, title, &err)) showError(tr("Export"), err);
    else statusBar()->showMessage(tr("Wrote %1").arg(path), 5000);
    return;
  }
  auto* c = qobject_cast<ChartPanel*>(tabs_->currentWidget());
  if (!c) return;
  QString path = QFileDialog::getSaveFileName(this, tr("Export chart"), c->id() + QStringLiteral(".svg"),
                                              tr("SVG (*.svg);;PDF (*.pdf);;PNG (*.png)"));
  if (path.isEmpty()) return;
  QSettings s;
  QSize size = s.value(QStringLiteral("export/size"), QSize(1200, 750)).toSize();
  if (!askSize(this, &size)) return;
  s.setValue(QStringLiteral("export/size"), size);
  QString err;
  if (!Exporter::exportChart(c, path, size, 2.0, &err)) showError(tr("Export"), err);
  else statusBar()->showMessage(tr("Wrote %1").arg(path), 5000);
}

void MainWindow::exportCurrentCsv() {
  const bool analysis = tabs_->currentWidget() == analysis_;
  auto* c = qobject_cast<ChartPanel*>(tabs_->currentWidget());
  if (!analysis && !c) return;
  QString path = QFileDialog::getSaveFileName(this, tr("Export chart data"),
                                              (analysis ? analysis_->id() : c->id()) + QStringLiteral(".csv"), tr("CSV (*.csv)"));
  if (path.isEmpty()) return;
  QString err;
  const bool ok = analysis ? analysis_->exportFigure(path, FigureSize{}, false, &err) : Exporter::exportCsv(c, path, &err);
  if (!ok) showError(tr("Export"), err);
  else statusBar()->showMessage(tr("Wrote %1").arg(path), 5000);
}

void MainWindow::exportReport() {
  QString path = QFileDialog::getSaveFileName(this, tr("Export report"), QStringLiteral("report.html"),
                                              tr("HTML (*.html);;PDF (*.pdf)"));
  if (path.isEmpty()) return;
  QString err;
  if (!exportReportTo(path, &err)) showError(tr("Export"), err);
  else statusBar()->showMessage(tr("Wrote %1").arg(path), 5000);
}

bool MainWindow::exportReportTo(const QString& path, QString* error) {
  // Every chart computes now (on its worker) whether or not its tab was opened.
  auto* quant = qobject_cast<QuantChart*>(quant_);
  auto* timeline = qobject_cast<TimelineChart*>(timeline_);
  if (quant && !quant->hasData()) quant->recompute();
  if (timeline && !timeline->hasData()) timeline->recompute();
  auto busy = [&] {
    return (quant && quant->busy()) || (timeline && timeline->busy()) || analysis_->busy() || ioBusy();
  };
  if (busy()) {
    QEventLoop loop;
    QTimer poll;
    connect(&poll, &QTimer::timeout, &loop, [&] {
      if (!busy()) loop.quit();
    });
    QTimer::singleShot(180000, &loop, &QEventLoop::quit);
    poll.start(25);
    statusBar()->showMessage(tr("Computing every chart for the report…"));
    loop.exec(QEventLoop::ExcludeUserInputEvents);
  }
  ReportInput in;
  in.shown = shownPlainLabel();
  in.config = doc_->config();
  in.configOrigin = tr("The fabric in the editors.");
  if (auto t = analysis_->table(); t && !showingPreview_) {
    in.run = t->run;
    // The run's fabric: its preset with its overrides, as the sweep applied them.
    try {
      // (Rebuilt from the run's record when the window has it: JSON values, recorded presets.)
      Config c = runFabric_ ? *runFabric_ : t->run.preset.empty() ? Config{} : load_preset(t->run.preset);
      if (!runFabric_)
        for (const auto& a : t->run.set) apply_assignment(c, a);
      in.config = c;
      in.configOrigin = tr("The fabric of run #%1: %2%3 (axes vary on top of it).")
                            .arg(t->run.id)
                            .arg(t->run.preset.empty() ? tr("registry defaults") : QString::fromStdString(t->run.preset),
                                 runFabric_ && runFabricId_ == t->run.id && !runFabricChanges_.isEmpty()
                                     ? QStringLiteral(" ") + runFabricChanges_
                                     : QString());
    } catch (const std::exception& e) {
      in.configOrigin = tr("The stored run's fabric could not be rebuilt (%1); shown: the editors' fabric.")
                            .arg(QString::fromUtf8(e.what()));
    }
  } else {
    in.sweep = sweepEditor_->request();
  }
  if (analysis_->hasData()) {
    const QStringList notes = analysis_->dataNotes();
    in.charts.push_back({QString::fromStdString(analysis_->plot()->title), analysis_->render(FigureSize::doubleColumn(), 110),
                         notes.isEmpty() ? QString()
                                         : QStringLiteral("<p class=\"note\">%1</p>")
                                               .arg(notes.join(QStringLiteral(" · ")).toHtmlEscaped())});
  } else {
    in.omitted << tr("Analysis");
  }
  for (ChartPanel* c : charts()) {
    // Chart titles may hold markup (<br>): the report takes their plain text.
    QString title = QTextDocumentFragment::fromHtml(c->chart()->title().isEmpty() ? c->title() : c->chart()->title())
                        .toPlainText()
                        .replace(QLatin1Char('\n'), QStringLiteral(" — "))
                        .replace(QChar::LineSeparator, QStringLiteral(" — "));
    if ((c == quant_ || c == timeline_) && in.run) title += tr(" (computed live for the fabric in the editors, not stored)");
    if (!c->hasData()) {
      in.omitted << title;
      continue;
    }
    in.charts.push_back({title, Exporter::renderChart(c, QSize(1000, 600), 1.5), {}});
    for (QChart* extra : c->extraCharts())
      in.charts.push_back({extra->title(), Exporter::renderChart(extra, QSize(1000, 600), 1.5), {}});
    in.charts.back().html = c->reportHtml();  // under the panel's last chart
  }
  statusBar()->clearMessage();
  return Exporter::exportReport(in, path, error);
}

}  // namespace scin::ui
