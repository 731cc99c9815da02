// The topology view: accelerators, switch planes (with their NVLS / ISA / INQ
// capabilities) and links, redrawn whenever the fabric changes. Clicking an
// item emits the parameter group it belongs to, which the fabric editor shows.
#pragma once

#include <QGraphicsView>

#include "ui/fabric_doc.h"

namespace scin::ui {

class TopologyView : public QGraphicsView {
  Q_OBJECT
 public:
  explicit TopologyView(FabricDoc* doc, QWidget* parent = nullptr);

  /// Items drawn for accelerators / switch planes / links (tests check these).
  int acceleratorItems() const { return accels_; }
  int switchItems() const { return switches_; }
  int linkItems() const { return links_; }

 Q_SIGNALS:
  /// A parameter group ("accelerator", "links", "switch", "switch.isa") was selected.
  void groupSelected(const QString& prefix);

 protected:
  void resizeEvent(QResizeEvent* e) override;

 private:
  void rebuild();
  void onSelection();

  FabricDoc* doc_;
  int accels_ = 0, switches_ = 0, links_ = 0;
};

}  // namespace scin::ui
