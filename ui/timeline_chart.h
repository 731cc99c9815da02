// The link-utilisation timeline: one packet-engine simulation of a chosen
// algorithm and message size with per-link utilisation sampling
// (packet.timeline_samples), drawn as utilisation (0..1) over time for the
// mean of all egress and all ingress links (thin, solid) and the busiest link
// (thick, dashed, on top: it often coincides with one of the means). Computed on a
// detached worker thread (closing the window must not wait for it): the run
// is estimated first and not started above kMaxSeconds of packet simulation
// or the memory available (the chart says why and offers to simulate anyway,
// memory permitting); a run whose inputs change meanwhile is stopped; a run
// estimated at kShowProgressSeconds or more says so, with its progress, in
// place of the chart. Only built when the packet engine is linked in.
#pragma once

#include <memory>
#include <stop_token>

#include <QComboBox>
#include <QPushButton>
#include <QTimer>

#include "engines/simulate.h"
#include "ui/chart_panel.h"
#include "ui/fabric_doc.h"

namespace scin::ui {

class TimelineChart : public ChartPanel {
  Q_OBJECT
 public:
  explicit TimelineChart(FabricDoc* doc, QWidget* parent = nullptr);
  ~TimelineChart() override;
  QString csv() const override;
  void recompute();
  bool busy() const { return running_; }
  void setSelection(const QString& algorithm, std::uint64_t bytes);
  const SimResult& result() const { return result_; }
  static constexpr int kSamples = 200;
  /// A run estimated above this is not started until "Simulate anyway" is pressed.
  static constexpr double kMaxSeconds = 60;
  /// A run estimated at this or more replaces the chart by its progress.
  static constexpr double kShowProgressSeconds = 0.25;
  /// What the chart says instead of a chart ("" when it shows one): a refusal, or a long run's progress.
  QString statusText() const { return emptyText(); }

 Q_SIGNALS:
  /// A packet-engine result arrived (the topology view colours links by it).
  void computed(const scin::SimResult& r);

 protected:
  void redraw() override;
  void showEvent(QShowEvent* e) override;

 private:
  FabricDoc* doc_;
  QComboBox* algo_;
  QComboBox* size_;
  QTimer timer_;
  QPushButton* anyway_;
  void finished(const SimResult& r);
  void progressed(double events, int percent);   // (events: the run's estimate)
  QString what() const;   // "scin at 1 MiB on 576 accelerators"
  bool running_ = false;
  bool force_ = false;    // the next run ignores the time limit ("Simulate anyway")
  std::stop_source stop_;
  double runEvents_ = 0;
  int runPercent_ = -1;   // -1: the running run is short (no progress shown)
  QString refused_;       // why the last run was not started
  // Lets a worker that outlives the chart (a slow packet simulation at exit) drop its result.
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
  SimResult result_;
  QString error_;
  bool stale_ = true;
};

}  // namespace scin::ui
