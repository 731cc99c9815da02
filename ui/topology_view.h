// The topology view: accelerators, switch planes (with their NVLS / ISA / INQ
// capabilities) and links, redrawn whenever the fabric changes. On two tiers
// the leaf and spine switches are drawn instead of planes (each box that switch
// in every plane), with the leaf-spine bundles. Clicking an
// item emits the parameter group it belongs to, which the fabric editor shows.
//
// At scale it stays legible: beyond 16 accelerators they are drawn as groups
// (72 GPUs: 12 groups of 6; 576: 16 groups of 36), beyond 4 planes the planes
// as groups, and the links between two drawn items as one bundle whose width
// grows with its link count; labels and tooltips give the counts.
//
// After a packet-engine run (setLinkLoads) every link or bundle is coloured by
// its load (heat map: the busiest member's fraction of time busy), and
// hovering one shows its bytes and utilisation in both directions.
#pragma once

#include <array>
#include <vector>

#include <QGraphicsView>

#include "model/result.h"
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
  /// Accelerators per drawn accelerator item (1: one item per GPU) and planes per switch item.
  int gpusPerItem() const { return gpusPerItem_; }
  int planesPerItem() const { return planesPerItem_; }

  /// Colours links by the per-link statistics of a packet-engine result
  /// (SimResult.extra "links": bytes and utilisation per direction) and puts
  /// them in the hover text. `source` says which run ("scin, 1 MiB").
  /// Ignored (and false) if the result has no link statistics or was computed
  /// on a fabric of another shape.
  bool setLinkLoads(const SimResult& r, const QString& source);
  void clearLinkLoads();
  bool hasLinkLoads() const { return !loads_.empty(); }

  /// What the picture shows, in words and counts ("8 accelerators × 4 switch
  /// plane(s): 32 links, ..."), and how it groups them: for a label under the
  /// view, in the font people read (in the scene, a dock's scale shrank it to a
  /// few pixels). With link loads shown, rich text: the heat map's key on a
  /// second line, with swatches of its colours. captionChanged() follows it.
  QString caption() const { return caption_; }
  /// How the picture groups accelerators and planes into items, where it does (for a tooltip).
  QString grouping() const { return grouping_; }

  /// What hovering link item `k` (0..linkItems()-1) shows, and its colour.
  QString linkToolTip(int k) const;
  QColor linkColour(int k) const;
  /// Heat-map colour of a utilisation in [0, 1].
  static QColor heatColour(double utilisation);

 Q_SIGNALS:
  /// A parameter group ("accelerator", "links", "switch", "switch.isa") was selected.
  void groupSelected(const QString& prefix);
  void captionChanged(const QString& caption, const QString& grouping);

 protected:
  void resizeEvent(QResizeEvent* e) override;

 private:
  class Builder;
  /// Draws the fabric: into a new scene, or into the previous drawing's items
  /// when it has the same shape (only what changed is repainted).
  void rebuild();
  void draw(Builder& build);
  void onSelection();

  /// Load of one physical link pair (both directions).
  struct Load {
    double up_bytes = 0, down_bytes = 0;  // accelerator -> switch (or lower -> higher rank) / back
    double up_util = 0, down_util = 0;
    bool seen = false;
  };
  FabricDoc* doc_;
  int accels_ = 0, switches_ = 0, links_ = 0;
  int gpusPerItem_ = 1, planesPerItem_ = 1;
  QString caption_, grouping_;
  std::vector<QGraphicsItem*> linkItems_;
  std::vector<QGraphicsItem*> items_;  // every item drawn, in drawing order (Builder)
  std::array<int, 6> shape_{};         // what decides the items drawn: gpus, planes, mesh, heat map, leaves, spines (two tiers)
  // Star: gpus x planes (index gpu * planes + plane); mesh: gpus x gpus (lower index first).
  std::vector<Load> loads_;
  // Two tiers: the leaf-spine links, index (plane x leaves + leaf) x spines + spine (up: leaf -> spine).
  std::vector<Load> trunkLoads_;
  int loadLeaves_ = 0, loadSpines_ = 0;
  int loadGpus_ = 0, loadPlanes_ = 0;
  bool loadMesh_ = false;
  QString loadSource_;
};

}  // namespace scin::ui
