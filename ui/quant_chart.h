// The quantisation-error chart: relative L2 error (or SQNR) of each
// algorithm's All-Reduce result against the exact sum, versus the block size G
// of the codec, measured by the data engine (core/numerics/quant_study.h) on
// generated Gaussian inputs. Computed on a worker thread whenever the fabric
// changes while the tab is visible; a change stops the computation under way
// (at 1024 accelerators a study takes tens of seconds), and a study the data
// engine refuses (e.g. more memory than the machine has) says why in the chart.
#pragma once

#include <map>
#include <stop_token>
#include <string>

#include <QComboBox>
#include <QLineSeries>
#include <QFutureWatcher>
#include <QTimer>

#include "numerics/quant_study.h"
#include "ui/chart_panel.h"
#include "ui/fabric_doc.h"

namespace scin::ui {

class QuantChart : public ChartPanel {
  Q_OBJECT
 public:
  explicit QuantChart(FabricDoc* doc, QWidget* parent = nullptr);
  ~QuantChart() override;
  QString csv() const override;
  /// Block sizes on the x axis.
  static std::vector<int> blockSizes() { return {8, 16, 32, 64, 128, 256}; }
  /// Starts a computation now (normally triggered by showing the tab).
  void recompute();
  /// A study is on its worker or its result not yet shown (the watcher stops
  /// running before its finished signal reaches this thread).
  bool busy() const { return computing_; }
  const std::vector<QuantStudy>& studies() const { return studies_; }
  /// Why no study could run (the first block size's error), else empty.
  QString error() const { return error_; }
  static constexpr std::uint64_t kElementsPerRank = 1u << 14;

  /// One computation: a study per block size, and the first error.
  struct Outcome {
    std::vector<QuantStudy> studies;
    QString error;
    bool cancelled = false;
  };

 protected:
  void redraw() override;
  void showEvent(QShowEvent* e) override;

 private:
  void markCoincidingCurves(const std::map<std::string, QLineSeries*>& series);
  FabricDoc* doc_;
  QComboBox* codec_;
  QComboBox* metric_;
  QTimer timer_;
  QFutureWatcher<Outcome> watcher_;
  std::stop_source stop_;   // the running computation's: requested when the fabric changes or on close
  bool computing_ = false;  // see busy()
  // A computation still running after kProgressAfterMs shows its progress in
  // place of the curves (they are the previous fabric's).
  static constexpr int kProgressAfterMs = 300;
  QTimer slow_;
  bool showProgress_ = false;
  int percent_ = 0;
  std::vector<QuantStudy> studies_;   // one per block size
  QString error_;
  bool stale_ = true;
};

}  // namespace scin::ui
