#include "ui/topology_view.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <numbers>

#include <QGraphicsEllipseItem>
#include <QGraphicsRectItem>
#include <QGraphicsScene>
#include <QGraphicsSimpleTextItem>
#include <QFontMetricsF>
#include <QPen>

#include "ui/format.h"

namespace scin::ui {
namespace {

constexpr int kGroupRole = 0;
constexpr int kLinkRole = 1;    // index into linkItems_
constexpr int kMaxItems = 16;   // accelerators drawn one by one up to this; beyond, groups
constexpr int kMaxPlaneItems = 4;

}  // namespace

// Adds the items of one drawing to the scene in a fixed order; or, given the
// items of the previous drawing, updates them in place, as long as this drawing
// has items of the same kinds in the same order. Qt's setters ignore unchanged
// values, so only what changed is repainted: a bandwidth edit repaints one
// caption instead of the whole picture (which cost more than the chart's
// repaint on every edit). complete() says whether the old items fitted exactly.
class TopologyView::Builder {
 public:
  Builder(QGraphicsScene* s, std::vector<QGraphicsItem*>* items, bool reuse) : s_(s), items_(items), reuse_(reuse) {
    if (!reuse_) items_->clear();
  }
  QGraphicsLineItem* line(const QLineF& l, const QPen& pen) {
    if (auto* it = take<QGraphicsLineItem>()) {
      it->setLine(l);
      it->setPen(pen);
      return it;
    }
    return keep(s_->addLine(l, pen));
  }
  QGraphicsRectItem* rect(const QRectF& r, const QPen& pen, const QBrush& brush) {
    if (auto* it = take<QGraphicsRectItem>()) {
      it->setRect(r);
      it->setPen(pen);
      it->setBrush(brush);
      return it;
    }
    return keep(s_->addRect(r, pen, brush));
  }
  QGraphicsSimpleTextItem* text(const QString& t, const QFont& f) {
    if (auto* it = take<QGraphicsSimpleTextItem>()) {
      if (it->font() != f) it->setFont(f);
      it->setText(t);
      return it;
    }
    return keep(s_->addSimpleText(t, f));
  }
  /// Text centred on c.
  QGraphicsSimpleTextItem* centredText(const QString& t, QPointF c, const QFont& f = {}) {
    auto* item = text(t, f);
    QRectF r = item->boundingRect();
    item->setPos(c.x() - r.width() / 2, c.y() - r.height() / 2);
    return item;
  }
  bool complete() const { return !reuse_ || (fits_ && next_ == items_->size()); }

 private:
  template <class T>
  T* take() {
    if (!reuse_ || !fits_) return nullptr;
    T* it = next_ < items_->size() ? dynamic_cast<T*>((*items_)[next_]) : nullptr;
    if (!it) {
      fits_ = false;  // another shape: the caller starts again from an empty scene
      return nullptr;
    }
    ++next_;
    return it;
  }
  template <class T>
  T* keep(T* it) {
    if (!reuse_) items_->push_back(it);
    return it;
  }
  QGraphicsScene* s_;
  std::vector<QGraphicsItem*>* items_;
  bool reuse_;
  bool fits_ = true;
  std::size_t next_ = 0;
};

namespace {

void tag(QGraphicsItem* item, const char* group, const QString& tip) {
  item->setData(kGroupRole, QString::fromLatin1(group));
  item->setToolTip(tip);
  item->setFlag(QGraphicsItem::ItemIsSelectable, true);
}

/// Members per drawn item so that at most `max_items` are drawn: the smallest
/// divisor of n that does it (72 -> 6, 576 -> 36), else ceil(n / max_items).
int perItem(int n, int max_items) {
  if (n <= max_items) return 1;
  for (int d = 2; d <= n; ++d)
    if (n % d == 0 && n / d <= max_items) return d;
  return (n + max_items - 1) / max_items;
}

QString rangeLabel(const QString& what, int first, int last) {
  return first == last ? QStringLiteral("%1 %2").arg(what).arg(first)
                       : QStringLiteral("%1 %2–%3").arg(what).arg(first).arg(last);
}

QString pct(double u) { return QStringLiteral("%1%").arg(u * 100, 0, 'f', u < 0.1 ? 1 : 0); }

}  // namespace

QColor TopologyView::heatColour(double u) {
  u = std::clamp(u, 0.0, 1.0);
  // Light grey (idle) -> amber -> red (always busy): readable on white.
  const QColor a(0xc8, 0xc8, 0xc8), b(0xf5, 0xa6, 0x23), c(0xc6, 0x28, 0x28);
  auto mix = [](const QColor& x, const QColor& y, double t) {
    return QColor::fromRgbF(static_cast<float>(x.redF() + (y.redF() - x.redF()) * t),
                            static_cast<float>(x.greenF() + (y.greenF() - x.greenF()) * t),
                            static_cast<float>(x.blueF() + (y.blueF() - x.blueF()) * t));
  };
  return u < 0.5 ? mix(a, b, u / 0.5) : mix(b, c, (u - 0.5) / 0.5);
}

TopologyView::TopologyView(FabricDoc* doc, QWidget* parent) : QGraphicsView(parent), doc_(doc) {
  setScene(new QGraphicsScene(this));
  setRenderHint(QPainter::Antialiasing);
  setMinimumSize(240, 120);  // (a laptop's dock: its caption is a label beneath)
  setMouseTracking(true);
  connect(doc_, &FabricDoc::changed, this, [this](const QString&) { rebuild(); });
  connect(scene(), &QGraphicsScene::selectionChanged, this, &TopologyView::onSelection);
  rebuild();
}

bool TopologyView::setLinkLoads(const SimResult& r, const QString& source) {
  const Config& c = doc_->config();
  const auto it = r.extra.find("links");
  if (it == r.extra.end() || !it->is_array() || r.gpus != c.fabric.gpus) return false;
  const bool mesh = c.fabric.topology == Topology::Mesh;
  const bool tiers = c.fabric.topology == Topology::TwoTier;
  const int n = c.fabric.gpus, p = mesh ? 0 : c.fabric.planes;
  const int L = tiers ? c.fabric.leaves : 0, S = tiers ? c.fabric.spines : 0;
  std::vector<Load> loads(static_cast<std::size_t>(mesh ? n * n : n * p));
  std::vector<Load> trunks(static_cast<std::size_t>(p * L * S));
  bool any = false;
  for (const auto& l : *it) {
    if (!l.is_object()) continue;
    const std::string dir = l.value("direction", std::string());
    // A leaf-spine link of two tiers: its switch nodes (as Schedule numbers
    // them: gpus + plane x (leaves + spines) + leaf, or + leaves + spine);
    // reported as "direct", the switches as gpu and peer, before 2026-12-06.
    if (dir == "trunk" || (dir == "direct" && !mesh)) {
      const bool old = dir == "direct";
      const int from = l.value(old ? "gpu" : "from_switch", -1) - n, to = l.value(old ? "peer" : "to_switch", -1) - n;
      if (!tiers || from < 0 || to < 0 || from / (L + S) != to / (L + S) || from / (L + S) >= p) return false;
      const int plane = from / (L + S), a = from % (L + S), b = to % (L + S);
      const bool up = a < L;  // leaf -> spine
      const int leaf = up ? a : b, spine = (up ? b : a) - L;
      if (leaf >= L || spine < 0 || spine >= S) return false;
      Load& t = trunks[static_cast<std::size_t>((plane * L + leaf) * S + spine)];
      (up ? t.up_bytes : t.down_bytes) += l.value("payload_bytes", 0.0);
      double& u = up ? t.up_util : t.down_util;
      u = std::max(u, l.value("utilisation", 0.0));
      t.seen = true;
      continue;
    }
    const int gpu = l.value("gpu", -1);
    const double bytes = l.value("payload_bytes", 0.0), util = l.value("utilisation", 0.0);
    Load* ld = nullptr;
    bool up = true;
    if (dir == "direct") {
      const int peer = l.value("peer", -1);
      if (!mesh || gpu < 0 || peer < 0 || gpu >= n || peer >= n) return false;
      ld = &loads[static_cast<std::size_t>(std::min(gpu, peer) * n + std::max(gpu, peer))];
      up = gpu < peer;
    } else {
      const int plane = l.value("plane", -1);
      if (mesh || gpu < 0 || plane < 0 || gpu >= n || plane >= p) return false;
      ld = &loads[static_cast<std::size_t>(gpu * p + plane)];
      up = dir == "egress";
    }
    (up ? ld->up_bytes : ld->down_bytes) += bytes;
    double& u = up ? ld->up_util : ld->down_util;
    u = std::max(u, util);
    ld->seen = any = true;
  }
  if (!any) return false;
  loads_ = std::move(loads);
  trunkLoads_ = std::move(trunks);
  loadLeaves_ = L;
  loadSpines_ = S;
  loadGpus_ = n;
  loadPlanes_ = p;
  loadMesh_ = mesh;
  loadSource_ = source;
  rebuild();
  return true;
}

void TopologyView::clearLinkLoads() {
  loads_.clear();
  trunkLoads_.clear();
  loadSource_.clear();
  rebuild();
}

QString TopologyView::linkToolTip(int k) const {
  if (k < 0 || k >= static_cast<int>(linkItems_.size())) return {};
  return linkItems_[static_cast<std::size_t>(k)]->toolTip();
}

QColor TopologyView::linkColour(int k) const {
  if (k < 0 || k >= static_cast<int>(linkItems_.size())) return {};
  const auto* l = dynamic_cast<const QGraphicsLineItem*>(linkItems_[static_cast<std::size_t>(k)]);
  return l ? l->pen().color() : QColor();
}

void TopologyView::rebuild() {
  QGraphicsScene* s = scene();
  QSignalBlocker block(s);
  const QRectF oldRect = s->sceneRect();
  // The previous drawing's items, updated in place if this one has the same
  // shape; else (or when there is none) a new scene. The shape (which items
  // are drawn, and which of their properties are set at all) follows from
  // these alone; the builder checks the items' kinds besides.
  const Config& c = doc_->config();
  const bool mesh = c.fabric.topology == Topology::Mesh;
  const int gpus = c.fabric.gpus, planes = mesh ? 0 : c.fabric.planes;
  // Loads from a fabric of another shape no longer apply.
  const bool tiers = c.fabric.topology == Topology::TwoTier;
  if (!loads_.empty() && (loadGpus_ != gpus || loadPlanes_ != planes || loadMesh_ != mesh ||
                          loadLeaves_ != (tiers ? c.fabric.leaves : 0) || loadSpines_ != (tiers ? c.fabric.spines : 0))) {
    loads_.clear();
    loadSource_.clear();
  }
  const std::array<int, 6> shape{gpus, planes, mesh ? 1 : 0, loads_.empty() ? 0 : 1, tiers ? c.fabric.leaves : 0,
                                 tiers ? c.fabric.spines : 0};
  bool reuse = !items_.empty() && shape == shape_;
  shape_ = shape;
  for (;;) {
    if (!reuse) s->clear();
    Builder b(s, &items_, reuse);
    draw(b);
    if (b.complete()) break;
    reuse = false;  // (stray items made by the failed pass go with clear())
  }
  const QRectF rect = s->itemsBoundingRect().adjusted(-10, -10, 10, 10);
  if (rect != oldRect || !reuse) {
    s->setSceneRect(rect);
    fitInView(s->sceneRect(), Qt::KeepAspectRatio);
  }
}

void TopologyView::draw(Builder& build) {
  linkItems_.clear();
  accels_ = switches_ = links_ = 0;
  const Config& c = doc_->config();
  const int gpus = c.fabric.gpus;
  const bool mesh = c.fabric.topology == Topology::Mesh;
  const int planes = mesh ? 0 : c.fabric.planes;
  const bool heat = !loads_.empty();
  // Two tiers: leaf and spine switches drawn (each box that switch in every plane).
  const bool tiers = c.fabric.topology == Topology::TwoTier;
  const int perLeaf = tiers ? gpus / std::max(1, c.fabric.leaves) : gpus;
  const int uplinks = tiers ? (c.fabric.uplinks_per_leaf > 0 ? c.fabric.uplinks_per_leaf : perLeaf) : 0;
  gpusPerItem_ = perItem(gpus, kMaxItems);
  const int nodes = (gpus + gpusPerItem_ - 1) / gpusPerItem_;
  planesPerItem_ = planes > 0 ? perItem(planes, kMaxPlaneItems) : 1;
  const int boxes = planes > 0 ? (planes + planesPerItem_ - 1) / planesPerItem_ : 0;
  const double radius = (nodes > 12 ? 200 : 170) + (tiers ? 50 : 0);  // (two tiers: room for the leaves inside)
  QFont small;
  small.setPointSizeF(small.pointSizeF() * 0.85);
  auto gpuFirst = [&](int i) { return i * gpusPerItem_; };
  auto gpuLast = [&](int i) { return std::min(gpus, (i + 1) * gpusPerItem_) - 1; };
  auto planeFirst = [&](int b) { return b * planesPerItem_; };
  auto planeLast = [&](int b) { return std::min(planes, (b + 1) * planesPerItem_) - 1; };

  const QString perLink = tr("%1 per direction, %2 one way, efficiency %3")
                              .arg(bandwidthText(planes > 1 ? c.links.bandwidth_GBps / planes : c.links.bandwidth_GBps),
                                   timeText(c.links.latency_ns))
                              .arg(c.links.efficiency);
  std::vector<QPointF> pos;
  for (int i = 0; i < nodes; ++i) {
    double a = 2 * std::numbers::pi * i / nodes - std::numbers::pi / 2;
    pos.emplace_back(radius * std::cos(a), radius * std::sin(a));
  }
  std::vector<QRectF> sw;
  for (int b = 0; b < boxes; ++b) {
    double w = 130, h = 56;
    double y = -h / 2 + (b - (boxes - 1) / 2.0) * (h + 10);
    sw.emplace_back(-w / 2, y, w, h);
  }

  // One drawn line: `count` physical link pairs; its load is the busiest member's.
  // `per` describes one link; `trunk`: a leaf-spine bundle (its two directions
  // named so; a run reported before trunks had their loads is not coloured).
  auto addLink = [&](QPointF a, QPointF b, int count, const QString& what, const std::vector<const Load*>& members,
                     const QString& per, bool trunk) {
    const bool loaded = !trunk || !members.empty();
    const double width = count == 1 ? (mesh ? 1.0 : 2.0) : std::min(6.0, 1.5 + 0.9 * std::log2(count));
    QString tip = count == 1 ? tr("Link %1: %2").arg(what, per)
                             : tr("Bundle of %1 links, %2: each %3").arg(count).arg(what, per);
    QColor colour = mesh && count == 1 ? QColor(0x88, 0x88, 0x88) : QColor(0x55, 0x55, 0x55);
    if (count > 1) colour.setAlpha(150);  // bundles cross: let the ones behind show
    if (heat && !loaded) tip += tr("\nLast packet run (%1): leaf-spine loads not recorded").arg(loadSource_);
    if (heat && loaded) {
      Load sum;
      double up_max = 0, down_max = 0, up_mean = 0, down_mean = 0;
      for (const Load* l : members) {
        sum.up_bytes += l->up_bytes;
        sum.down_bytes += l->down_bytes;
        up_max = std::max(up_max, l->up_util);
        down_max = std::max(down_max, l->down_util);
        up_mean += l->up_util;
        down_mean += l->down_util;
      }
      const double m = static_cast<double>(std::max<std::size_t>(1, members.size()));
      colour = heatColour(std::max(up_max, down_max));
      if (count > 1) colour.setAlpha(200);
      const QString up = trunk ? tr("leaf → spine") : mesh ? tr("lower → higher rank") : tr("accelerator → switch");
      const QString down = trunk ? tr("spine → leaf") : mesh ? tr("higher → lower rank") : tr("switch → accelerator");
      tip += tr("\nLast packet run (%1):").arg(loadSource_);
      if (count == 1) {
        tip += tr("\n  %1: %2, busy %3\n  %4: %5, busy %6")
                   .arg(up, sizeText(static_cast<std::uint64_t>(sum.up_bytes)), pct(up_max))
                   .arg(down, sizeText(static_cast<std::uint64_t>(sum.down_bytes)), pct(down_max));
      } else {
        tip += tr("\n  %1: %2 in all, busy %3 on average, %4 at most\n  %5: %6 in all, busy %7 on average, %8 at most")
                   .arg(up, sizeText(static_cast<std::uint64_t>(sum.up_bytes)), pct(up_mean / m), pct(up_max))
                   .arg(down, sizeText(static_cast<std::uint64_t>(sum.down_bytes)), pct(down_mean / m), pct(down_max));
      }
    }
    QPen pen(colour, heat ? std::max(width, 2.5) : width);
    pen.setCapStyle(Qt::RoundCap);
    auto* l = build.line(QLineF(a, b), pen);
    tag(l, "links", tip);
    l->setData(kLinkRole, static_cast<int>(linkItems_.size()));
    l->setAcceptHoverEvents(true);
    linkItems_.push_back(l);
    ++links_;
    return l;
  };
  auto loadAt = [&](int i, int j) -> const Load* {
    if (!heat) return nullptr;
    return &loads_[static_cast<std::size_t>(mesh ? std::min(i, j) * gpus + std::max(i, j) : i * planes + j)];
  };
  // Links first, so nodes sit on top.
  if (mesh) {
    for (int i = 0; i < nodes; ++i)
      for (int j = i + 1; j < nodes; ++j) {
        std::vector<const Load*> members;
        int count = 0;
        for (int a = gpuFirst(i); a <= gpuLast(i); ++a)
          for (int b = gpuFirst(j); b <= gpuLast(j); ++b) {
            ++count;
            if (heat) members.push_back(loadAt(a, b));
          }
        addLink(pos[i], pos[j], count,
                rangeLabel(tr("GPU"), gpuFirst(i), gpuLast(i)) + QStringLiteral(" ↔ ") +
                    rangeLabel(tr("GPU"), gpuFirst(j), gpuLast(j)),
                members, perLink, false);
      }
  } else if (!tiers) {
    for (int i = 0; i < nodes; ++i)
      for (int b = 0; b < boxes; ++b) {
        std::vector<const Load*> members;
        int count = 0;
        for (int g = gpuFirst(i); g <= gpuLast(i); ++g)
          for (int p = planeFirst(b); p <= planeLast(b); ++p) {
            ++count;
            if (heat) members.push_back(loadAt(g, p));
          }
        addLink(pos[i], sw[static_cast<std::size_t>(b)].center(), count,
                rangeLabel(tr("GPU"), gpuFirst(i), gpuLast(i)) + QStringLiteral(" ↔ ") +
                    rangeLabel(tr("plane"), planeFirst(b), planeLast(b)),
                members, perLink, false);
      }
  }
  // A switch box (a stack of switches: a second outline behind suggests it), counted.
  auto switchBox = [&](const QRectF& box, bool stacked, const QString& tip) {
    auto* r = build.rect(box, QPen(Qt::black, 1.5), QBrush(QColor(0xe8, 0xee, 0xf7)));
    if (stacked) {
      auto* back = build.rect(box.translated(4, -4), QPen(QColor(0x66, 0x66, 0x66), 1), QBrush(QColor(0xd5, 0xdd, 0xea)));
      back->setZValue(r->zValue() - 1);
    }
    tag(r, "switch", tip);
    ++switches_;
  };
  // A switch box's capability badges along its bottom edge.
  auto badges = [&](const QRectF& box) {
    struct Badge { const char* text; bool on; const char* group; QString tip; };
    Badge list[] = {
        {"NVLS", c.sw.nvls.enabled, "switch.nvls", tr("NVLink SHARP: multimem ld_reduce / st in the switch")},
        {"ISA", c.sw.isa.enabled, "switch.isa",
         tr("SCIN in-switch accelerator: %1 reduction, %2 buffer, %3 waves")
             .arg(bandwidthText(c.sw.isa.reduce_GBps), sizeText(c.sw.isa.buffer_bytes))
             .arg(c.sw.isa.waves)},
        {"INQ", c.sw.isa.enabled && c.sw.isa.inq, "switch.isa",
         tr("In-network quantisation: block INT8, %1 values per scale").arg(c.quant.block_elems)},
    };
    double x = box.left() + 8;
    for (const Badge& bd : list) {
      QRectF br(x, box.bottom() - 22, 36, 16);
      auto* bi = build.rect(br, QPen(bd.on ? QColor(0x1b, 0x5e, 0x20) : QColor(0xaa, 0xaa, 0xaa)),
                            QBrush(bd.on ? QColor(0xc8, 0xe6, 0xc9) : QColor(0xf2, 0xf2, 0xf2)));
      tag(bi, bd.group, bd.tip + (bd.on ? QString() : tr(" (off)")));
      auto* t = build.centredText(QString::fromLatin1(bd.text), br.center(), small);
      t->setBrush(bd.on ? QColor(0x1b, 0x5e, 0x20) : QColor(0x99, 0x99, 0x99));
      x += 40;
    }
  };
  if (tiers) {
    // Leaves (or groups of them) on an inner circle, each towards its
    // accelerators (a leaf's accelerators are consecutive, as the GPU items
    // are around the circle); spines (or groups) stacked in the centre. A box
    // stands for that switch in every plane; a leaf-spine bundle carries its
    // leaves' uplinks to its spines in every plane.
    const int L = std::max(1, c.fabric.leaves), S = std::max(1, c.fabric.spines);
    const int leavesPer = perItem(L, 8), spinesPer = perItem(S, kMaxPlaneItems);
    const int leafItems = (L + leavesPer - 1) / leavesPer, spineItems = (S + spinesPer - 1) / spinesPer;
    const int per = std::max(1, perLeaf);
    auto leafItemOf = [&](int g) { return std::min(L - 1, g / per) / leavesPer; };
    const double inner = 0.62 * radius;
    std::vector<QRectF> leafBox, spineBox;
    for (int k = 0; k < leafItems; ++k) {
      const int g0 = k * leavesPer * per, g1 = std::min(gpus, (k + 1) * leavesPer * per) - 1;
      const double mid = (g0 / gpusPerItem_ + g1 / gpusPerItem_) / 2.0;
      const double a = leafItems == 1 && nodes == 1 ? std::numbers::pi / 2 : 2 * std::numbers::pi * mid / nodes - std::numbers::pi / 2;
      const QPointF at(inner * std::cos(a), inner * std::sin(a));
      leafBox.emplace_back(at.x() - 48, at.y() - 18, 96, 36);
    }
    for (int j = 0; j < spineItems; ++j)
      spineBox.emplace_back(-65, -24 + (j - (spineItems - 1) / 2.0) * 58, 130, 48);
    const double linkGBps = c.links.bandwidth_GBps / std::max(1, planes);
    const double uplinkGBps = per * linkGBps / std::max(1, uplinks) / std::max(1e-9, c.fabric.oversubscription);
    const QString perUplink = tr("%1 per direction, %2 one way").arg(bandwidthText(uplinkGBps), timeText(c.links.latency_ns));
    const QString inPlanes = planes > 1 ? tr(" (×%1 planes)").arg(planes) : QString();
    // Accelerators to their leaves (loads from the packet run, as on a star).
    for (int i = 0; i < nodes; ++i)
      for (int k = leafItemOf(gpuFirst(i)); k <= leafItemOf(gpuLast(i)); ++k) {
        std::vector<const Load*> members;
        int count = 0, first = -1, last = -1;
        for (int g = gpuFirst(i); g <= gpuLast(i); ++g) {
          if (leafItemOf(g) != k) continue;
          first = first < 0 ? g : first;
          last = g;
          for (int p = 0; p < planes; ++p) {
            ++count;
            if (heat) members.push_back(loadAt(g, p));
          }
        }
        addLink(pos[static_cast<std::size_t>(i)], leafBox[static_cast<std::size_t>(k)].center(), count,
                rangeLabel(tr("GPU"), first, last) + QStringLiteral(" ↔ ") +
                    rangeLabel(tr("leaf"), k * leavesPer, std::min(L, (k + 1) * leavesPer) - 1) + inPlanes,
                members, perLink, false);
      }
    // Leaves to spines: each leaf spreads its uplinks evenly over the spines.
    for (int k = 0; k < leafItems; ++k)
      for (int j = 0; j < spineItems; ++j) {
        const int l0 = k * leavesPer, l1 = std::min(L, (k + 1) * leavesPer) - 1;
        const int s0 = j * spinesPer, s1 = std::min(S, (j + 1) * spinesPer) - 1;
        int count = 0;
        for (int sp = s0; sp <= s1; ++sp) count += uplinks / S + (sp < uplinks % S ? 1 : 0);
        count *= (l1 - l0 + 1) * std::max(1, planes);
        if (count == 0) continue;
        std::vector<const Load*> members;  // (the packet engine's links: one per leaf, spine and plane)
        if (heat && !trunkLoads_.empty())
          for (int p = 0; p < planes; ++p)
            for (int lf = l0; lf <= l1; ++lf)
              for (int sp = s0; sp <= s1; ++sp) members.push_back(&trunkLoads_[static_cast<std::size_t>((p * L + lf) * S + sp)]);
        addLink(leafBox[static_cast<std::size_t>(k)].center(), spineBox[static_cast<std::size_t>(j)].center(), count,
                rangeLabel(tr("leaf"), l0, l1) + QStringLiteral(" ↔ ") + rangeLabel(tr("spine"), s0, s1) + inPlanes, members,
                perUplink, true);
      }
    const QString swTip = tr("%1 port-to-port%2").arg(timeText(c.sw.latency_ns), c.sw.multicast ? tr(", multicast") : QString());
    for (int k = 0; k < leafItems; ++k) {
      const QRectF& box = leafBox[static_cast<std::size_t>(k)];
      const int l0 = k * leavesPer, l1 = std::min(L, (k + 1) * leavesPer) - 1;
      switchBox(box, l1 > l0 || planes > 1,
                tr("%1 in every one of %2 plane(s): %3 ports each (%4 accelerators, %5 uplinks), %6")
                    .arg(rangeLabel(l1 > l0 ? tr("Leaf switches") : tr("Leaf switch"), l0, l1))
                    .arg(planes)
                    .arg(per + uplinks)
                    .arg(per)
                    .arg(uplinks)
                    .arg(swTip));
      build.centredText(rangeLabel(l1 > l0 ? tr("Leaves") : tr("Leaf"), l0, l1), box.center() - QPointF(0, 7));
      build.centredText(planes > 1 ? tr("×%1 planes").arg(planes) : tr("1 plane"), box.center() + QPointF(0, 8), small);
    }
    for (int j = 0; j < spineItems; ++j) {
      const QRectF& box = spineBox[static_cast<std::size_t>(j)];
      const int s0 = j * spinesPer, s1 = std::min(S, (j + 1) * spinesPer) - 1;
      switchBox(box, s1 > s0 || planes > 1,
                tr("%1 in every one of %2 plane(s): %3 ports each (%4 leaves), %5")
                    .arg(rangeLabel(s1 > s0 ? tr("Spine switches") : tr("Spine switch"), s0, s1))
                    .arg(planes)
                    .arg(L * uplinks / S)
                    .arg(L)
                    .arg(swTip));
      build.centredText(rangeLabel(s1 > s0 ? tr("Spines") : tr("Spine"), s0, s1) + inPlanes, box.center() - QPointF(0, 9));
      badges(box);
    }
  }
  // Switch planes (or groups of planes) with capability badges.
  for (int b = 0; !tiers && b < boxes; ++b) {
    const QRectF& box = sw[static_cast<std::size_t>(b)];
    const int count = planeLast(b) - planeFirst(b) + 1;
    const QString which = count == 1 ? tr("Switch plane %1").arg(b)
                                     : tr("%1 switch planes (%2)").arg(count).arg(rangeLabel(tr("planes"), planeFirst(b), planeLast(b)));
    switchBox(box, count > 1,
              tr("%1: %2 port-to-port%3, %4 ports each")
                  .arg(which)
                  .arg(timeText(c.sw.latency_ns))
                  .arg(c.sw.multicast ? tr(", multicast") : QString())
                  .arg(gpus));
    QString name = count == 1 ? tr("Switch %1").arg(planeFirst(b))
                              : tr("Planes %1–%2 (×%3)").arg(planeFirst(b)).arg(planeLast(b)).arg(count);
    build.centredText(name, box.center() - QPointF(0, 12));
    badges(box);
  }
  // Accelerators (or groups of them).
  const QString accTip = tr("%1: HBM %2, launch %3")
                             .arg(QString::fromStdString(c.accelerator.name),
                                  bandwidthText(c.accelerator.hbm_bandwidth_GBps),
                                  timeText(c.accelerator.launch_overhead_ns));
  for (int i = 0; i < nodes; ++i) {
    const int count = gpuLast(i) - gpuFirst(i) + 1;
    const QString label = count == 1 ? tr("GPU %1").arg(gpuFirst(i)) : tr("GPU %1–%2").arg(gpuFirst(i)).arg(gpuLast(i));
    const double w = std::max(64.0, QFontMetricsF(QFont()).horizontalAdvance(label) + 12);
    QRectF r(pos[i].x() - w / 2, pos[i].y() - 18, w, 36);
    if (count > 1) {
      auto* back = build.rect(r.translated(3, -3), QPen(QColor(0x66, 0x66, 0x66), 1), QBrush(QColor(0xf3, 0xe0, 0xb5)));
      back->setZValue(1);
    }
    auto* a = build.rect(r, QPen(Qt::black, 1.2), QBrush(QColor(0xfd, 0xf1, 0xd6)));
    a->setZValue(2);
    QString tip = count == 1 ? tr("GPU %1 — %2").arg(gpuFirst(i)).arg(accTip)
                             : tr("%1 accelerators (GPU %2–%3) — each %4").arg(count).arg(gpuFirst(i)).arg(gpuLast(i)).arg(accTip);
    if (mesh && count > 1) tip += tr("\n%1 links inside the group (not drawn)").arg(count * (count - 1) / 2);
    tag(a, "accelerator", tip);
    ++accels_;
    auto* t1 = build.centredText(label, r.center() - QPointF(0, 7));
    auto* t2 = build.centredText(count == 1 ? QString::fromStdString(c.accelerator.name) : tr("×%1").arg(count),
                           r.center() + QPointF(0, 8), small);
    t1->setZValue(3);
    t2->setZValue(3);
  }
  // Caption: what the picture shows, in words and counts.
  const long long physical = mesh ? static_cast<long long>(gpus) * (gpus - 1) / 2
                                  : static_cast<long long>(gpus) * planes;
  QString caption = tiers ? tr("%1 accelerators on %2 leaf and %3 spine switch(es) in each of %4 plane(s): %5 accelerator "
                               "links, %6 per accelerator per direction")
                               .arg(gpus)
                               .arg(c.fabric.leaves)
                               .arg(c.fabric.spines)
                               .arg(planes)
                               .arg(physical)
                               .arg(bandwidthText(c.links.bandwidth_GBps))
                   : mesh ? tr("%1 accelerators, full mesh (no switch): %2 links, %3 per accelerator per direction")
                               .arg(gpus)
                               .arg(physical)
                               .arg(bandwidthText(c.links.bandwidth_GBps))
                         : tr("%1 accelerators × %2 switch plane(s): %3 links, %4 per accelerator per direction")
                               .arg(gpus)
                               .arg(planes)
                               .arg(physical)
                               .arg(bandwidthText(c.links.bandwidth_GBps));
  QString grouping;
  if (gpusPerItem_ > 1) grouping += tr("%1 groups of %2 accelerators").arg(nodes).arg(gpusPerItem_);
  if (planesPerItem_ > 1 && !tiers)
    grouping += (grouping.isEmpty() ? QString() : tr(", ")) + tr("%1 groups of %2 planes").arg(boxes).arg(planesPerItem_);
  if (!grouping.isEmpty())
    grouping = tr("Drawn as %1; each line is a bundle (width grows with its link count; hover for counts)").arg(grouping);
  // The heat map's key (idle ... always busy) goes with the caption, as rich text: drawn in
  // the scene, a dock scaled it to a few pixels with the picture.
  if (heat) {
    QString swatches;
    for (double t : {0.0, 0.25, 0.5, 0.75, 1.0})
      swatches += QStringLiteral("<span style=\"color:%1\">&#9632;</span>").arg(heatColour(t).name());
    caption = caption.toHtmlEscaped() + QStringLiteral("<br>") +
              tr("Link load, busiest link of each line (packet run %1): idle %2 busy 100%")
                  .arg(loadSource_.toHtmlEscaped(), swatches);
  }
  // Under the picture, in a label (caption()): in the scene its one long line widened
  // the scene, so a dock scaled the picture down and the caption to a few pixels.
  if (caption != caption_ || grouping != grouping_) {
    caption_ = caption;
    grouping_ = grouping;
    Q_EMIT captionChanged(caption_, grouping_);
  }
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
