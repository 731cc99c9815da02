// The link-utilisation timeline: one packet-engine simulation of a chosen
// algorithm and message size with per-link utilisation sampling
// (packet.timeline_samples), drawn as utilisation (0..1) over time for the
// mean of all egress and all ingress links (thin, solid) and the busiest link
// (thick, dashed, on top: it often coincides with one of the means). Computed on a
// detached worker thread (a packet simulation cannot be interrupted, and
// closing the window must not wait for it); only built when the packet engine
// is linked in.
#pragma once

#include <memory>

#include <QComboBox>
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
  void finished(const SimResult& r);
  bool running_ = false;
  // Lets a worker that outlives the chart (a slow packet simulation at exit) drop its result.
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
  SimResult result_;
  QString error_;
  bool stale_ = true;
};

}  // namespace scin::ui
