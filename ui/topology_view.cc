#include "ui/topology_view.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include <QGraphicsEllipseItem>
#include <QGraphicsRectItem>
#include <QGraphicsScene>
#include <QGraphicsSimpleTextItem>
#include <QPen>

#include "ui/format.h"

namespace scin::ui {
namespace {

constexpr int kGroupRole = 0;
constexpr int kMaxDrawn = 16;   // beyond this, draw the first ones and an ellipsis

QGraphicsSimpleTextItem* centredText(QGraphicsScene* s, const QString& t, QPointF c, QFont f = {}) {
  auto* item = s->addSimpleText(t, f);
  QRectF r = item->boundingRect();
  item->setPos(c.x() - r.width() / 2, c.y() - r.height() / 2);
  return item;
}

void tag(QGraphicsItem* item, const char* group, const QString& tip) {
  item->setData(kGroupRole, QString::fromLatin1(group));
  item->setToolTip(tip);
  item->setFlag(QGraphicsItem::ItemIsSelectable, true);
}

}  // namespace

TopologyView::TopologyView(FabricDoc* doc, QWidget* parent) : QGraphicsView(parent), doc_(doc) {
  setScene(new QGraphicsScene(this));
  setRenderHint(QPainter::Antialiasing);
  setMinimumSize(240, 200);
  connect(doc_, &FabricDoc::changed, this, [this](const QString&) { rebuild(); });
  connect(scene(), &QGraphicsScene::selectionChanged, this, &TopologyView::onSelection);
  rebuild();
}

void TopologyView::rebuild() {
  QGraphicsScene* s = scene();
  QSignalBlocker block(s);
  s->clear();
  accels_ = switches_ = links_ = 0;
  const Config& c = doc_->config();
  const int gpus = c.fabric.gpus;
  const int drawn = std::min(gpus, kMaxDrawn);
  const bool mesh = c.fabric.topology == Topology::Mesh;
  const int planes = mesh ? 0 : c.fabric.planes;
  const double radius = 170;
  QFont small;
  small.setPointSizeF(small.pointSizeF() * 0.85);

  QString linkTip = tr("Link: %1 per direction, %2 one way, efficiency %3%4")
                        .arg(bandwidthText(c.links.bandwidth_GBps), timeText(c.links.latency_ns))
                        .arg(c.links.efficiency)
                        .arg(planes > 1 ? tr(", split over %1 planes").arg(planes) : QString());
  std::vector<QPointF> pos;
  for (int i = 0; i < drawn; ++i) {
    double a = 2 * std::numbers::pi * i / drawn - std::numbers::pi / 2;
    pos.emplace_back(radius * std::cos(a), radius * std::sin(a));
  }
  // Switch planes in the middle, stacked.
  std::vector<QRectF> sw;
  for (int p = 0; p < planes && p < 4; ++p) {
    double w = 130, h = 56;
    double y = -h / 2 + (p - (std::min(planes, 4) - 1) / 2.0) * (h + 10);
    sw.emplace_back(-w / 2, y, w, h);
  }
  // Links first, so nodes sit on top.
  QPen linkPen(QColor(0x55, 0x55, 0x55), 2);
  if (mesh) {
    for (int i = 0; i < drawn; ++i)
      for (int j = i + 1; j < drawn; ++j) {
        auto* l = s->addLine(QLineF(pos[i], pos[j]), QPen(QColor(0x88, 0x88, 0x88), 1));
        tag(l, "links", linkTip);
        ++links_;
      }
  } else {
    for (int i = 0; i < drawn; ++i)
      for (const QRectF& r : sw) {
        auto* l = s->addLine(QLineF(pos[i], r.center()), linkPen);
        tag(l, "links", linkTip);
        ++links_;
      }
  }
  // Switch planes with capability badges.
  for (std::size_t p = 0; p < sw.size(); ++p) {
    auto* r = s->addRect(sw[p], QPen(Qt::black, 1.5), QBrush(QColor(0xe8, 0xee, 0xf7)));
    tag(r, "switch", tr("Switch plane %1: %2 port-to-port%3")
                         .arg(p)
                         .arg(timeText(c.sw.latency_ns))
                         .arg(c.sw.multicast ? tr(", multicast") : QString()));
    ++switches_;
    QString name = planes > 4 && p == 3 ? tr("… %1 planes").arg(planes) : tr("Switch %1").arg(p);
    centredText(s, name, sw[p].center() - QPointF(0, 12));
    // Badges: NVLS, ISA, INQ.
    struct Badge { const char* text; bool on; const char* group; QString tip; };
    Badge badges[] = {
        {"NVLS", c.sw.nvls.enabled, "switch.nvls", tr("NVLink SHARP: multimem ld_reduce / st in the switch")},
        {"ISA", c.sw.isa.enabled, "switch.isa",
         tr("SCIN in-switch accelerator: %1 reduction, %2 buffer, %3 waves")
             .arg(bandwidthText(c.sw.isa.reduce_GBps), sizeText(c.sw.isa.buffer_bytes))
             .arg(c.sw.isa.waves)},
        {"INQ", c.sw.isa.enabled && c.sw.isa.inq, "switch.isa",
         tr("In-network quantisation: block INT8, %1 values per scale").arg(c.quant.block_elems)},
    };
    double x = sw[p].left() + 8;
    for (const Badge& b : badges) {
      QRectF br(x, sw[p].bottom() - 22, 36, 16);
      auto* bi = s->addRect(br, QPen(b.on ? QColor(0x1b, 0x5e, 0x20) : QColor(0xaa, 0xaa, 0xaa)),
                            QBrush(b.on ? QColor(0xc8, 0xe6, 0xc9) : QColor(0xf2, 0xf2, 0xf2)));
      tag(bi, b.group, b.tip + (b.on ? QString() : tr(" (off)")));
      auto* t = centredText(s, QString::fromLatin1(b.text), br.center(), small);
      t->setBrush(b.on ? QColor(0x1b, 0x5e, 0x20) : QColor(0x99, 0x99, 0x99));
      x += 40;
    }
  }
  // Accelerators.
  QString accTip = tr("%1: HBM %2, launch %3")
                       .arg(QString::fromStdString(c.accelerator.name),
                            bandwidthText(c.accelerator.hbm_bandwidth_GBps),
                            timeText(c.accelerator.launch_overhead_ns));
  for (int i = 0; i < drawn; ++i) {
    QRectF r(pos[i].x() - 30, pos[i].y() - 18, 60, 36);
    auto* a = s->addRect(r, QPen(Qt::black, 1.2), QBrush(QColor(0xfd, 0xf1, 0xd6)));
    tag(a, "accelerator", accTip);
    ++accels_;
    bool last = gpus > drawn && i == drawn - 1;
    centredText(s, last ? tr("… %1").arg(gpus - 1) : tr("GPU %1").arg(i), r.center() - QPointF(0, 6));
    centredText(s, QString::fromStdString(c.accelerator.name), r.center() + QPointF(0, 8), small);
  }
  // Caption: what the picture shows, in words.
  QString caption = mesh ? tr("%1 accelerators, full mesh (no switch), %2 per accelerator per direction")
                               .arg(gpus)
                               .arg(bandwidthText(c.links.bandwidth_GBps))
                         : tr("%1 accelerators × %2 switch plane(s), %3 per accelerator per direction")
                               .arg(gpus)
                               .arg(planes)
                               .arg(bandwidthText(c.links.bandwidth_GBps));
  centredText(s, caption, QPointF(0, radius + 40));
  s->setSceneRect(s->itemsBoundingRect().adjusted(-10, -10, 10, 10));
  fitInView(s->sceneRect(), Qt::KeepAspectRatio);
}

void TopologyView::resizeEvent(QResizeEvent* e) {
  QGraphicsView::resizeEvent(e);
  fitInView(scene()->sceneRect(), Qt::KeepAspectRatio);
}

void TopologyView::onSelection() {
  for (QGraphicsItem* it : scene()->selectedItems()) {
    QString g = it->data(kGroupRole).toString();
    if (!g.isEmpty()) {
      Q_EMIT groupSelected(g);
      return;
    }
  }
}

}  // namespace scin::ui
