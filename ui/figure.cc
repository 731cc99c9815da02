#include "ui/figure.h"

#include <algorithm>
#include <cmath>

#include <QFontMetricsF>
#include <QPainterPath>

#include "ui/chart_panel.h"

namespace scin::ui {
namespace {

using analysis::Column;
using analysis::PlotData;
using analysis::Series;

double tx(double v, bool log) { return log ? std::log10(v) : v; }
double untx(double v, bool log) { return log ? std::pow(10.0, v) : v; }

// Canonical colour slots of the algorithms, so ring is the same blue in every chart.
int algorithmSlot(const std::string& a) {
  static const char* order[] = {"ring", "one-shot", "two-shot", "nvls", "scin", "scin-inq", "ring-q8", "two-shot-q8"};
  for (int i = 0; i < 8; ++i)
    if (a == order[i]) return i;
  return -1;
}

QString tickText(const Column& c, double v) {
  if (c.bytes) return QString::fromStdString(analysis::format_value(c, v));
  QString t = tickNumber(v);
  if (c.unit == "×") t += QStringLiteral("×");
  return t;
}

std::vector<double> niceLinear(double lo, double hi, double step) {
  std::vector<double> out;
  if (!(step > 0)) return out;
  const double first = std::ceil(lo / step - 1e-9) * step;
  for (double v = first; v <= hi + step * 1e-9 && out.size() < 200; v += step) out.push_back(std::fabs(v) < step * 1e-9 ? 0 : v);
  return out;
}

// Candidate tick sets from dense to sparse.
std::vector<std::vector<double>> candidates(const Column& c, double lo, double hi, bool log, std::size_t ncat, bool pow2,
                                            bool ends) {
  std::vector<std::vector<double>> out;
  if (ncat > 0) {
    for (std::size_t every : {1, 2, 3, 4, 5, 10, 20, 50}) {
      std::vector<double> t;
      for (std::size_t i = 0; i < ncat; i += every)
        if (static_cast<double>(i) >= lo - 1e-9 && static_cast<double>(i) <= hi + 1e-9) t.push_back(static_cast<double>(i));
      out.push_back(t);
    }
    return out;
  }
  if (log && lo > 0 && hi > lo) {
    if (c.bytes || pow2) {  // powers of two
      const int e0 = static_cast<int>(std::ceil(std::log2(lo) - 1e-9));
      const int e1 = static_cast<int>(std::floor(std::log2(hi) + 1e-9));
      auto aligned = [&](int every) {
        std::vector<double> t;
        for (int e = e0; e <= e1; ++e)
          if (((e % every) + every) % every == 0) t.push_back(std::exp2(e));
        return t;
      };
      // Each density first with the range's first and last powers too
      // (`ends`: a narrow x axis of sizes 1 KiB - 256 MiB then says where its
      // data end, 1 KiB, 1 MiB, 256 MiB, not only 1 KiB and 1 MiB), where
      // their labels fit.
      // Two aligned labels that name neither end (1 MiB, 32 MiB of 64 KiB -
      // 256 MiB) come after every set with the ends, and after the ends alone.
      std::vector<std::vector<double>> pairs;
      if (ends && e1 > e0) pairs.push_back({std::exp2(e0), std::exp2(e1)});
      for (int every : {1, 2, 3, 4, 5, 10}) {
        const std::vector<double> t = aligned(every);
        if (ends && e1 > e0) {
          std::vector<double> with = t;
          if (with.empty() || with.front() != std::exp2(e0)) with.insert(with.begin(), std::exp2(e0));
          if (with.back() != std::exp2(e1)) with.push_back(std::exp2(e1));
          if (with.size() > t.size()) out.push_back(with);
        }
        if (t.size() > 2 || (t.size() == 2 && !ends)) out.push_back(t);
        else if (t.size() == 2) pairs.push_back(t);
      }
      out.insert(out.end(), pairs.begin(), pairs.end());
      // Sizes read in binary units: 1 MiB, not "977 KiB" from a decimal tick.
      if (c.bytes && !out.empty()) return out;
    }
    const int d0 = static_cast<int>(std::floor(std::log10(lo) + 1e-9));
    const int d1 = static_cast<int>(std::ceil(std::log10(hi) - 1e-9));
    const std::vector<std::vector<double>> mants{{1, 2, 3, 5}, {1, 2, 5}, {1, 3}, {1}};
    for (const auto& m : mants) {
      std::vector<double> t;
      for (int d = d0; d <= d1; ++d)
        for (double k : m) {
          const double v = k * std::pow(10.0, d);
          if (v >= lo * (1 - 1e-9) && v <= hi * (1 + 1e-9)) t.push_back(v);
        }
      if (t.size() >= 2) out.push_back(t);
    }
    for (int every : {2, 3, 5, 10}) {
      std::vector<double> t;
      for (int d = d0; d <= d1; ++d)
        if (((d % every) + every) % every == 0 && std::pow(10.0, d) >= lo && std::pow(10.0, d) <= hi) t.push_back(std::pow(10.0, d));
      if (t.size() >= 2) out.push_back(t);
    }
    if (!out.empty()) return out;
    // Less than a decade with no round values inside: linear steps, drawn on the log scale.
  }
  const double span = hi - lo;
  if (!(span > 0)) return {{lo}};
  double step = std::pow(10.0, std::floor(std::log10(span / 20)));
  for (int guard = 0; guard < 40; ++guard) {
    for (double m : {1.0, 2.0, 2.5, 5.0}) {
      const double s = step * m;
      auto t = niceLinear(lo, hi, s);
      if (t.size() <= 20 && t.size() >= 2) out.push_back(t);
    }
    step *= 10;
    if (span / step < 1) break;
  }
  if (out.empty()) out.push_back({lo, hi});
  return out;
}

double textHeight(const QFont& f, QPaintDevice* d) { return QFontMetricsF(f, d).height(); }
double textWidth(const QFont& f, QPaintDevice* d, const QString& s) { return QFontMetricsF(f, d).horizontalAdvance(s); }

}  // namespace

QColor paletteColor(int i) {
  // Okabe & Ito, "Color Universal Design" (2008); yellow last (weak on white).
  static const QColor c[] = {QColor(0x00, 0x72, 0xB2), QColor(0xD5, 0x5E, 0x00), QColor(0x00, 0x9E, 0x73),
                             QColor(0xCC, 0x79, 0xA7), QColor(0xE6, 0x9F, 0x00), QColor(0x56, 0xB4, 0xE9),
                             QColor(0x00, 0x00, 0x00), QColor(0xB8, 0xA9, 0x00)};
  return c[((i % 8) + 8) % 8];
}

void setCoveringDash(QPen& pen, int rank, int group) {
  constexpr double kDash = 3.0;  // pen widths
  group = std::max(group, 2);
  rank = std::clamp(rank, 1, group - 1);
  pen.setDashPattern({kDash, kDash * (group - 1)});
  pen.setDashOffset(kDash * (group - rank));  // this curve's dash starts rank dashes into the period
}

QString legendText(const analysis::PlotData& plot, const analysis::Series& s) {
  QString text = QString::fromStdString(s.label);
  // One panel (most plots): the series itself says; no scan per legend entry.
  if (plot.facets.size() == 1 && s.same_as.empty()) return text;
  std::string other;
  bool everywhere = true;
  for (const analysis::Facet& f : plot.facets)
    for (const Series& t : f.series) {
      if (t.key != s.key) continue;
      if (t.same_as.empty()) everywhere = false;
      else if (other.empty()) other = t.same_as;
    }
  if (other.empty()) return text;
  QString otherLabel = QString::fromStdString(other);
  for (const analysis::Facet& f : plot.facets)
    for (const Series& t : f.series)
      if (t.key == other) otherLabel = QString::fromStdString(t.label);
  // Only what differs from this curve's own name ("regulation=paced · waves=1 (=
  // regulation=none)", not "(= regulation=none · waves=1)": three lines in a side legend).
  {
    const QString sep = QStringLiteral(" · ");
    const QStringList mine = text.split(sep);
    QStringList differ;
    for (const QString& part : otherLabel.split(sep))
      if (!mine.contains(part)) differ << part;
    if (!differ.isEmpty() && differ.size() < otherLabel.split(sep).size()) otherLabel = differ.join(sep);
  }
  return everywhere ? QStringLiteral("%1 (= %2)").arg(text, otherLabel)
                    : QStringLiteral("%1 (= %2 in some panels)").arg(text, otherLabel);
}

std::vector<LegendItem> factoredLegend(const PlotData& plot, const std::vector<const Series*>& entries) {
  // Colour and marker must each follow one thing: the colour field alone picks
  // colour and dash, the style fields alone the marker (seriesLook: true while
  // fewer than five colours are in use; past them markers turn open).
  if (plot.color_field.empty() || plot.style_field.empty() || entries.empty()) return {};
  const QString sep = QStringLiteral(" · ");
  std::map<int, LegendItem> colours, styles;
  for (const Series* s : entries) {
    if (s->color >= 5 || s->style >= 14) return {};
    // A field a combined run lacks ("–") is left out of the label: its parts are then not colour, then style.
    for (const auto& field : s->fields)
      if (field.second == "–") return {};
    const QString label = QString::fromStdString(s->label);
    const auto cut = label.indexOf(sep);
    if (cut < 0) return {};
    const SeriesLook look = seriesLook(plot, *s);
    const LegendItem colour{label.left(cut), look.color, look.dash, -1, false};
    const LegendItem style{label.mid(cut + sep.size()), QColor(0x44, 0x44, 0x44), Qt::SolidLine, look.marker, false};
    // One colour index must always come with one name (and a style index with one), or this is no factoring.
    auto [c, cnew] = colours.emplace(s->color, colour);
    if (!cnew && c->second.text != colour.text) return {};
    auto [t, tnew] = styles.emplace(s->style, style);
    if (!tnew && t->second.text != style.text) return {};
    c->second.keys.push_back(s->key);
    t->second.keys.push_back(s->key);
  }
  if (colours.size() < 2 || styles.size() < 2) return {};
  std::vector<LegendItem> out;
  for (auto& [k, v] : colours) out.push_back(v);
  for (auto& [k, v] : styles) out.push_back(v);
  out[colours.size()].starts_row = true;  // the markers on a row of their own
  return out;
}

Qt::PenStyle dashStyle(int i) {
  static const Qt::PenStyle s[] = {Qt::SolidLine, Qt::DashLine, Qt::DotLine, Qt::DashDotLine, Qt::DashDotDotLine};
  return s[((i % 5) + 5) % 5];
}

void drawMarkers(QPainter* p, int shape, const std::vector<QPointF>& centres, double size, const QColor& color) {
  if (centres.empty()) return;
  const double r = size / 2;
  p->save();
  const bool filled = ((shape / 7) % 2) == 0;  // past 7 shapes: the open variants
  p->setBrush(filled ? QBrush(color) : QBrush(Qt::NoBrush));  // open: see what lies beneath
  const int kind = ((shape % 7) + 7) % 7;
  p->setPen(QPen(color, kind >= 5 ? std::max(0.8, size / 4) : std::max(0.5, size / 6)));
  QPolygonF poly;
  for (const QPointF& c : centres) {
    switch (kind) {
      case 0: p->drawEllipse(c, r, r); break;
      case 1: p->drawRect(QRectF(c.x() - r * 0.9, c.y() - r * 0.9, r * 1.8, r * 1.8)); break;
      case 2: poly = {QPointF(c.x(), c.y() - r * 1.1), QPointF(c.x() + r, c.y() + r * 0.8), QPointF(c.x() - r, c.y() + r * 0.8)}; p->drawPolygon(poly); break;
      case 3: poly = {QPointF(c.x(), c.y() - r * 1.2), QPointF(c.x() + r, c.y()), QPointF(c.x(), c.y() + r * 1.2), QPointF(c.x() - r, c.y())}; p->drawPolygon(poly); break;
      case 4: poly = {QPointF(c.x(), c.y() + r * 1.1), QPointF(c.x() + r, c.y() - r * 0.8), QPointF(c.x() - r, c.y() - r * 0.8)}; p->drawPolygon(poly); break;
      case 5:
        p->drawLine(QPointF(c.x() - r * 1.2, c.y()), QPointF(c.x() + r * 1.2, c.y()));
        p->drawLine(QPointF(c.x(), c.y() - r * 1.2), QPointF(c.x(), c.y() + r * 1.2));
        break;
      default:
        p->drawLine(QPointF(c.x() - r, c.y() - r), QPointF(c.x() + r, c.y() + r));
        p->drawLine(QPointF(c.x() - r, c.y() + r), QPointF(c.x() + r, c.y() - r));
        break;
    }
  }
  p->restore();
}

void drawMarker(QPainter* p, int shape, const QPointF& c, double size, const QColor& color) {
  drawMarkers(p, shape, {c}, size, color);
}

SeriesLook seriesLook(const PlotData& plot, const Series& s) {
  SeriesLook l;
  int color = s.color;
  if (plot.color_field == "collective.algorithm" && algorithmSlot(s.algorithm) >= 0) color = algorithmSlot(s.algorithm);
  l.color = paletteColor(color);
  // With a separate style field, marker and dash follow it; with one field
  // they follow the colour index too (redundant coding survives greyscale).
  if (plot.style_field.empty()) {
    l.marker = color % 14;
    l.dash = dashStyle(color / 8);
  } else {
    // Marker: the other fields; dash: the colour field too, so that (marker,
    // dash) alone tells curves apart in greyscale. Past five dash patterns the
    // markers switch to their open variants.
    // (The plot's own rank of the colour value, not the algorithm's palette slot.)
    l.marker = (s.style + 7 * ((s.color / 5) % 2)) % 14;
    l.dash = dashStyle(s.color % 5);
  }
  return l;
}

QFont pointFont(double pt, QPaintDevice* device, bool bold) {
  QFont f;
  const double dpi = device ? device->logicalDpiY() : 72.0;
  f.setPointSizeF(std::max(1.0, pt * 72.0 / dpi));
  f.setBold(bold);
  return f;
}

// `f`, smaller (down to 70%) if `text` is wider than `room`.
static QFont fittedFont(QFont f, QPaintDevice* dev, const QString& text, double room) {
  const double need = textWidth(f, dev, text);
  if (need > room) f.setPointSizeF(f.pointSizeF() * std::max(0.7, room / need));
  return f;
}

QString axisTitle(const Column& c, bool log) {
  QString t = QString::fromStdString(c.label);
  QString unit = QString::fromStdString(c.unit);
  if (c.bytes) unit = QStringLiteral("bytes");
  QStringList extra;
  if (!unit.isEmpty()) extra << unit;
  if (log) extra << QStringLiteral("log");
  return extra.isEmpty() ? t : QStringLiteral("%1 (%2)").arg(t, extra.join(QStringLiteral(", ")));
}

QString compactBytesNote() { return QStringLiteral("1K = 1024"); }

// A size label in short form: "256 MiB" -> "256M", "8 B" -> "8".
static QString compactSize(QString label) {
  if (label.endsWith(QStringLiteral(" B"))) return label.chopped(2);
  if (label.endsWith(QStringLiteral("iB")) && label.size() > 4 && label[label.size() - 4] == QLatin1Char(' '))
    return label.left(label.size() - 4) + label[label.size() - 3];
  return label;
}

std::vector<Tick> axisTicks(const Column& c, double lo, double hi, bool log, double length, bool horizontal,
                            const QFont& font, QPaintDevice* device, const std::vector<std::string>& categories, bool pow2,
                            double scale) {
  const auto sets = candidates(c, lo / scale, hi / scale, log, categories.size(), pow2, horizontal);
  const double th = textHeight(font, device), cap = QFontMetricsF(font, device).capHeight();
  const double gap = th * 0.6;
  const double span = tx(hi, log) - tx(lo, log);
  // The part of the axis between the first and the last label.
  auto cover = [&](const std::vector<Tick>& t) {
    return t.size() < 2 || !(span > 0) ? 0.0 : (tx(t.back().value, log) - tx(t.front().value, log)) / span;
  };
  // The first set whose labels fit (`fits`); else the sparsest, as its ends.
  auto fit = [&](bool compact, bool& fits) {
    std::vector<Tick> best;
    fits = false;
    for (const auto& set : sets) {
      std::vector<Tick> ticks;
      for (double v : set) {
        QString label = categories.empty() ? tickText(c, v)
                                           : QString::fromStdString(categories[static_cast<std::size_t>(std::lround(v))]);
        ticks.push_back({v * scale, compact ? compactSize(label) : label, 0, compact});
      }
      // A horizontal label stays within the axis's length: one at an end moves
      // inwards (it would run under the next panel's first label).
      std::vector<double> width(ticks.size(), 0.0);
      if (horizontal && span > 0)
        for (std::size_t i = 0; i < ticks.size(); ++i) {
          width[i] = textWidth(font, device, ticks[i].label);
          const double at = (tx(ticks[i].value, log) - tx(lo, log)) / span * length;
          if (width[i] < length) ticks[i].shift = std::clamp(at, width[i] / 2, length - width[i] / 2) - at;
        }
      // Labels must be distinct and must not overlap.
      bool ok = span > 0;
      for (std::size_t i = 1; ok && i < ticks.size(); ++i) {
        const double d = (tx(ticks[i].value, log) - tx(ticks[i - 1].value, log)) / span * length + ticks[i].shift - ticks[i - 1].shift;
        const double need = horizontal ? (width[i] + width[i - 1]) / 2 + gap
                                       : cap + th * 0.4;  // (digits stand cap-high: a clear 0.4 line between)
        if (d < need || ticks[i].label == ticks[i - 1].label) ok = false;
      }
      best = ticks;
      if (ok) {
        fits = true;
        return ticks;
      }
    }
    // Nothing fits (a tiny panel): the ends only, centred on their ticks (moved
    // inwards, two labels in a tiny panel would touch).
    if (best.size() > 2) best = {best.front(), best.back()};
    for (Tick& t : best) t.shift = 0;
    return best;
  };
  bool fits = false;
  std::vector<Tick> ticks = fit(false, fits);
  // Sizes on a narrow horizontal axis whose full labels leave a quarter of it
  // unnamed (1 KiB - 256 MiB in a third of a 3.5 in column: "1 KiB", "1 MiB"):
  // the short form where it names more ("1K", "1M", "256M").
  if (c.bytes && horizontal && categories.empty() && (!fits || cover(ticks) < 0.75)) {
    bool fits_short = false;
    std::vector<Tick> short_ticks = fit(true, fits_short);
    if (fits_short && (!fits || cover(short_ticks) > cover(ticks) + 1e-9)) return short_ticks;
  }
  return ticks;
}

std::vector<double> unlabelledDecades(const std::vector<Tick>& ticks, double lo, double hi, bool log) {
  std::vector<double> out;
  if (!log || ticks.size() < 2 || !(lo > 0) || !(hi > lo)) return out;
  auto decade = [](double v) { return v > 0 && std::fabs(std::log10(v) - std::round(std::log10(v))) < 1e-9; };
  for (const Tick& t : ticks)
    if (!decade(t.value)) return out;
  for (int d = static_cast<int>(std::ceil(std::log10(lo) - 1e-9)); d <= static_cast<int>(std::floor(std::log10(hi) + 1e-9)); ++d) {
    const double v = std::pow(10.0, d);
    const bool labelled = std::any_of(ticks.begin(), ticks.end(), [&](const Tick& t) { return std::fabs(t.value / v - 1) < 1e-9; });
    if (!labelled) out.push_back(v);
  }
  return out;
}

ViewRange dataRange(const PlotData& plot, bool log_x, bool log_y, int facet) {
  double x0 = INFINITY, x1 = -INFINITY, y0 = INFINITY, y1 = -INFINITY;
  for (std::size_t k = 0; k < plot.facets.size(); ++k) {
    if (facet >= 0 && static_cast<std::size_t>(facet) != k) continue;
    for (const auto& s : plot.facets[k].series)
      for (const auto& pt : s.points) {
        if ((log_x && !(pt.x > 0)) || (log_y && !(pt.y > 0))) continue;
        x0 = std::min(x0, pt.x);
        x1 = std::max(x1, pt.x);
        y0 = std::min(y0, pt.y);
        y1 = std::max(y1, pt.y);
      }
  }
  ViewRange r;
  if (!std::isfinite(x0)) return r;
  if (plot.x_categorical) {
    r.x0 = -0.5;
    r.x1 = static_cast<double>(plot.x_categories.size()) - 0.5;
  } else if (log_x) {
    const double pad = x1 > x0 ? std::pow(x1 / x0, 0.04) : 2.0;
    r.x0 = x0 / pad;
    r.x1 = x1 * pad;
  } else {
    const double pad = x1 > x0 ? (x1 - x0) * 0.04 : std::max(1.0, std::fabs(x0) * 0.1);
    r.x0 = x0 - pad;
    r.x1 = x1 + pad;
  }
  if (log_y) {
    const double pad = y1 > y0 ? std::pow(y1 / y0, 0.06) : 2.0;
    r.y0 = y0 / pad;
    r.y1 = y1 * pad;
    // Out to the nearest value the ticks are likely to label (1-2-3-5 on a decade or so, 1-3
    // on more: axisTicks' densest sets that fit) where it is near (within 0.15 decade), so a
    // tick is labelled beyond the data at both ends: SCIN's 8x peak stood above a 5x top label.
    const double decades = std::log10(r.y1 / r.y0);
    const std::vector<double> mants = decades > 2    ? std::vector<double>{1, 3, 10}
                                      : decades > 1.5 ? std::vector<double>{1, 2, 5, 10}
                                                      : std::vector<double>{1, 2, 3, 5, 10};
    auto nice = [&mants](double v, bool up) {
      const double e = std::pow(10.0, std::floor(std::log10(v)));
      double best = up ? 10 * e : e;
      for (double m : mants) {
        const double c = m * e;
        if (up ? (c >= v && c < best) : (c <= v && c > best)) best = c;
      }
      return best;
    };
    if (const double t = nice(r.y1, true); t / r.y1 <= 1.42) r.y1 = t;
    if (const double b = nice(r.y0, false); r.y0 / b <= 1.42) r.y0 = b;
  } else {
    const double pad = y1 > y0 ? (y1 - y0) * 0.06 : std::max(std::fabs(y0) * 0.1, 1e-12);
    r.y0 = (y0 >= 0 && y0 < 0.35 * y1) ? 0 : y0 - pad;
    r.y1 = y1 + pad;
  }
  return r;
}

ViewRange FigureLayout::rangeOf(const Panel& panel) const {
  ViewRange r = range;
  if (panel.own_y) {
    r.y0 = panel.y0;
    r.y1 = panel.y1;
  }
  return r;
}

QPointF FigureLayout::map(const Panel& panel, double x, double y) const {
  const ViewRange range = rangeOf(panel);
  const double fx = (tx(x, log_x) - tx(range.x0, log_x)) / (tx(range.x1, log_x) - tx(range.x0, log_x));
  const double fy = (tx(y, log_y) - tx(range.y0, log_y)) / (tx(range.y1, log_y) - tx(range.y0, log_y));
  return {panel.plot.left() + fx * panel.plot.width(), panel.plot.bottom() - fy * panel.plot.height()};
}

QPointF FigureLayout::unmap(const Panel& panel, const QPointF& pos) const {
  const ViewRange range = rangeOf(panel);
  const double fx = (pos.x() - panel.plot.left()) / panel.plot.width();
  const double fy = (panel.plot.bottom() - pos.y()) / panel.plot.height();
  const double x = tx(range.x0, log_x) + fx * (tx(range.x1, log_x) - tx(range.x0, log_x));
  const double y = tx(range.y0, log_y) + fy * (tx(range.y1, log_y) - tx(range.y0, log_y));
  return {untx(x, log_x), untx(y, log_y)};
}

analysis::PixelGrid FigureLayout::pixelGrid(const Panel& panel, double pxPerPt) const {
  const ViewRange range = rangeOf(panel);
  analysis::PixelGrid g;
  g.x0 = range.x0;
  g.x1 = range.x1;
  g.y0 = range.y0;
  g.y1 = range.y1;
  g.log_x = log_x;
  g.log_y = log_y;
  g.width = panel.plot.width() * pxPerPt;
  g.height = panel.plot.height() * pxPerPt;
  return g;
}

void paintHighlight(QPainter* p, const FigureLayout& L, const PlotData& plot, const FigureOptions& o) {
  if (!o.highlight || o.highlight_facet < 0 || o.highlight_point >= o.highlight->points.size()) return;
  for (const auto& pan : L.panels) {
    if (pan.facet != o.highlight_facet || static_cast<std::size_t>(pan.facet) >= plot.facets.size()) continue;
    const QRectF& pr = pan.plot;
    const double lineW = L.line_width, markerSize = L.marker_size;
    p->save();
    p->setRenderHint(QPainter::Antialiasing);
    p->setClipRect(pr.adjusted(-markerSize, -markerSize, markerSize, markerSize));
    const auto& pt = o.highlight->points[o.highlight_point];
    const QPointF q = L.map(pan, pt.x, pt.y);
    p->setPen(QPen(QColor(0x33, 0x33, 0x33), lineW * 0.6, Qt::DashLine));
    p->drawLine(QPointF(pr.left(), q.y()), QPointF(pr.right(), q.y()));
    p->drawLine(QPointF(q.x(), pr.top()), QPointF(q.x(), pr.bottom()));
    p->setPen(QPen(Qt::black, lineW * 1.2));
    p->setBrush(Qt::NoBrush);
    p->drawEllipse(q, markerSize * 1.3, markerSize * 1.3);
    p->restore();
  }
}

FigureLayout paintFigure(QPainter* p, const QSizeF& size, const PlotData& plot, const FigureOptions& o) {
  FigureLayout L;
  QPaintDevice* dev = p->device();
  const double fs = o.font_pt;
  const QFont fTick = pointFont(fs, dev), fTitle = pointFont(fs * 1.15, dev, true), fLabel = pointFont(fs, dev);
  const double th = textHeight(fTick, dev);
  const double m = fs * 0.6;
  p->save();
  p->setRenderHint(QPainter::Antialiasing);
  p->fillRect(QRectF(QPointF(0, 0), size), Qt::white);
  const double W = size.width(), H = size.height();
  if (plot.empty()) {
    p->setFont(fLabel);
    p->setPen(QColor(0x55, 0x55, 0x55));
    p->drawText(QRectF(m * 4, m * 4, W - m * 8, H - m * 8), Qt::AlignCenter | Qt::TextWordWrap,
                QString::fromStdString(plot.empty_reason));
    p->restore();
    return L;
  }
  L.log_x = o.log_x && !plot.x_categorical;
  L.log_y = o.log_y;
  L.range = o.view ? *o.view : dataRange(plot, L.log_x, L.log_y);

  double top = m;
  if (o.title && !plot.title.empty()) {
    p->setFont(fTitle);
    p->setPen(Qt::black);
    QRectF r = QFontMetricsF(fTitle, dev).boundingRect(QRectF(m, top, W - 2 * m, H), Qt::TextWordWrap | Qt::AlignHCenter,
                                                       QString::fromStdString(plot.title));
    p->drawText(QRectF(m, top, W - 2 * m, r.height()), Qt::TextWordWrap | Qt::AlignHCenter, QString::fromStdString(plot.title));
    top += r.height() + m * 0.5;
  }

  // Grid of panels.
  const std::size_t n = plot.facets.size();
  const int cols = n <= 1 ? 1 : n <= 3 ? static_cast<int>(n) : static_cast<int>(std::ceil(std::sqrt(static_cast<double>(n))));
  const int rows = static_cast<int>((n + static_cast<std::size_t>(cols) - 1) / static_cast<std::size_t>(cols));
  const bool facetTitles = n > 1 || !plot.facets.front().title.empty();
  const double yTitleW = th * 1.2, xTitleH = th * 1.3, tickLen = fs * 0.35, xTickH = th + tickLen + fs * 0.2;
  const double facetLineH = th * 1.25, gap = fs * 1.2;
  double facetH = facetTitles ? facetLineH : 0;

  // Legend layout (bottom, wrapping rows, full text): one entry per curve, or,
  // when those do not fit and colour and marker encode separate fields, one
  // entry per colour (its line and dash) and one per marker (grey): "ring",
  // "nvls", ..., then "gpus=2", "gpus=4", ... -- a factored legend.
  std::vector<const Series*> entries;
  for (const Series* s : plot.legend())
    if (!o.hidden.count(s->key)) entries.push_back(s);
  const double sampleW = fs * 2.6, entryGap = fs * 1.2;
  using Item = LegendItem;
  struct Entry {
    QRectF box;
    QRectF text;
    Item item;
  };
  std::vector<Entry> legend;
  double legendH = 0;
  std::size_t legendMore = 0;  // items drawn but left out of a full legend
  double legendMoreY = 0;
  bool factored = false;
  auto layoutLegend = [&](const std::vector<Item>& items) {
    legend.clear();
    legendMore = 0;
    legendMoreY = 0;
    // Equal columns as wide as the longest entry (as many as fit); an entry
    // wider than the figure wraps its text, nothing is elided. A group of
    // entries that starts a row of its own (a factored legend's markers) has
    // its own columns.
    QFontMetricsF fm(fLabel, dev);
    const double maxText = W - 2 * m - sampleW - fs * 0.4;
    std::vector<QRectF> sizes;
    for (const Item& it : items) sizes.push_back(fm.boundingRect(QRectF(0, 0, maxText, H), Qt::TextWordWrap, it.text));
    std::vector<int> ncolsOf(items.size()), groupEnd(items.size());
    std::vector<double> stepOf(items.size());
    for (std::size_t b = 0; b < items.size();) {
      std::size_t e = b + 1;
      while (e < items.size() && !items[e].starts_row) ++e;
      double colW = 0;
      for (std::size_t i = b; i < e; ++i) colW = std::max(colW, sampleW + fs * 0.4 + sizes[i].width());
      const int ncols = std::max(1, static_cast<int>((W - 2 * m + entryGap) / (colW + entryGap)));
      const double pitch = ncols > 1 ? (W - 2 * m - colW) / (ncols - 1) : 0;
      for (std::size_t i = b; i < e; ++i) {
        ncolsOf[i] = ncols;
        groupEnd[i] = static_cast<int>(e);
        stepOf[i] = std::min(pitch, colW + entryGap * 2);
      }
      b = e;
    }
    // The legend may take at most ~40% of the figure, and no more than leaves
    // every panel a plot at least three tick labels high (a 2 x 2 grid at
    // 3.5 x 2.5 in otherwise kept panels one tick high): a figure with more
    // curves than that keeps a readable plot and says how many it leaves out
    // of the legend (narrow them with --filter / --series or the menus).
    const double minGridH = rows * (facetH + xTickH + 3 * th) + (rows - 1) * gap + xTitleH;
    const double maxLegendH = std::max(3 * fm.height(), std::min(H * 0.4, H - 2 * m - top - minGridH));
    double y = 0, rowH = 0;
    int c = -1;
    for (std::size_t i = 0; i < items.size(); ++i) {
      c = (c + 1 < ncolsOf[i] && !(items[i].starts_row && c >= 0)) ? c + 1 : 0;
      if (c == 0 && i > 0) {
        y += rowH + fs * 0.3;
        rowH = 0;
        // Room for this row, and for the "+ N more" line unless this row is the last.
        const bool lastRow = static_cast<std::size_t>(groupEnd[i]) == items.size() &&
                             items.size() - i <= static_cast<std::size_t>(ncolsOf[i]);
        if (y + (lastRow ? 1 : 2) * fm.height() > maxLegendH) {
          legendMore = items.size() - i;
          legendMoreY = y;
          y += fm.height();
          break;
        }
      }
      const double x = m + c * stepOf[i];
      const QRectF& tr = sizes[i];
      legend.push_back({QRectF(x, y, sampleW + fs * 0.4 + tr.width(), tr.height()),
                        QRectF(x + sampleW + fs * 0.4, y, tr.width() + 1, tr.height()), items[i]});
      rowH = std::max(rowH, tr.height());
    }
    legendH = y + rowH + m;
  };
  if (o.legend && entries.size() > 1) {
    std::vector<Item> items;
    for (const Series* s : entries) {
      const SeriesLook look = seriesLook(plot, *s);
      items.push_back({legendText(plot, *s), look.color, look.dash, look.marker,
                       !s->same_as.empty() && !o.hidden.count(s->same_as)});
    }
    layoutLegend(items);
    const std::vector<Item> split = factoredLegend(plot, entries);
    if (legendMore > 0 && !split.empty() && split.size() < entries.size()) {
      const double fullH = legendH;
      const std::size_t fullMore = legendMore;
      layoutLegend(split);
      factored = legendMore < fullMore || (legendMore == fullMore && legendH <= fullH);
      if (!factored) layoutLegend(items);
    }
  }

  // The grid's layout for an x title of `xTitleH` (one line, or two when the
  // panels' key does not fit beside the axis title).
  const double gridTop = top;
  double gridBottom = 0, plotH = 0, yScale = 1, yTickW = 0, gridLeft = 0, plotW = 0;
  Column yShown = plot.y;
  std::vector<Tick> yTicks, xTicks;
  std::vector<double> yBare, xBare;  // unlabelled decades
  // Free y: each panel its own range, ticks and labels (the unit's scale, µs
  // or ms, stays one for all: from the whole plot's range).
  const bool freeY = o.free_y && n > 1 && !o.view;
  std::vector<ViewRange> facetRange;
  std::vector<std::vector<Tick>> facetYTicks;
  std::vector<std::vector<double>> facetYBare;
  if (freeY)
    for (std::size_t k = 0; k < n; ++k) facetRange.push_back(dataRange(plot, L.log_x, L.log_y, static_cast<int>(k)));
  std::string facetKey;
  auto layoutGrid = [&](double titleH) {
    gridBottom = H - m - legendH - titleH;
    plotH = std::max(10.0, (gridBottom - gridTop - rows * (facetH + xTickH) - (rows - 1) * gap) / rows);
    // Times shown in ms or s when the values are large (the title says which). On a
    // log axis, when its low end is large too: a 3 us - 5 ms axis reads 10, 100,
    // 1000 us, not 0.01, 0.1, 1 ms (unless its top would need 7 digits).
    yShown = plot.y;
    yScale = 1;
    if (plot.y.unit == "µs" || plot.y.unit == "ns") {
      static const char* units[] = {"ns", "µs", "ms", "s"};
      int u = plot.y.unit == "ns" ? 0 : 1;
      const double top = std::max(std::fabs(L.range.y0), std::fabs(L.range.y1));
      const double low = std::min(std::fabs(L.range.y0), std::fabs(L.range.y1));
      auto large = [&] { return L.log_y ? low / yScale >= 1e3 || top / yScale >= 1e6 : top / yScale >= 1e4; };
      while (large() && u < 3) {
        yScale *= 1e3;
        ++u;
      }
      yShown.unit = units[u];
    }
    yTicks = axisTicks(yShown, L.range.y0, L.range.y1, L.log_y, plotH, false, fTick, dev, {}, false, yScale);
    yTickW = 0;
    facetYTicks.clear();
    if (freeY)
      for (const ViewRange& r : facetRange)
        facetYTicks.push_back(axisTicks(yShown, r.y0, r.y1, L.log_y, plotH, false, fTick, dev, {}, false, yScale));
    auto widest = [&](const std::vector<Tick>& ticks) {
      for (const Tick& t : ticks) yTickW = std::max(yTickW, textWidth(fTick, dev, t.label));
    };
    if (freeY) for (const auto& ticks : facetYTicks) widest(ticks);
    else widest(yTicks);
    yTickW += tickLen + fs * 0.3;
    gridLeft = m + yTitleW + yTickW;
    // (With free y every column has its tick labels: room for them between panels.)
    const double colExtra = freeY ? yTickW : 0.0;
    plotW = std::max(10.0, (W - m - gridLeft - (cols - 1) * (gap + colExtra)) / cols - fs * 0.6);
    // x values that are all powers of two (waves, GPUs, block sizes) get ticks on powers of two.
    bool pow2 = !plot.x_categorical;
    for (const auto& f : plot.facets)
      for (const auto& s : f.series)
        for (const auto& pt : s.points)
          pow2 = pow2 && pt.x >= 1 && std::exp2(std::round(std::log2(pt.x))) == pt.x;
    xTicks = axisTicks(plot.x, L.range.x0, L.range.x1, L.log_x, plotW, true, fTick, dev, plot.x_categories, pow2);
    yBare = unlabelledDecades(yTicks, L.range.y0, L.range.y1, L.log_y);
    facetYBare.clear();
    for (std::size_t k = 0; k < facetYTicks.size(); ++k)
      facetYBare.push_back(unlabelledDecades(facetYTicks[k], facetRange[k].y0, facetRange[k].y1, L.log_y));
    xBare = unlabelledDecades(xTicks, L.range.x0, L.range.x1, L.log_x && !plot.x_categorical);

    L.panels.clear();
    for (std::size_t k = 0; k < n; ++k) {
      const int c = static_cast<int>(k) % cols, r = static_cast<int>(k) / cols;
      FigureLayout::Panel pan;
      pan.facet = static_cast<int>(k);
      const double x0 = gridLeft + c * (plotW + gap + fs * 0.6 + colExtra);
      const double y0 = gridTop + r * (facetH + plotH + xTickH + gap) + facetH;
      pan.plot = QRectF(x0, y0, plotW, plotH);
      if (freeY) {
        pan.own_y = true;
        pan.y0 = facetRange[k].y0;
        pan.y1 = facetRange[k].y1;
      }
      L.panels.push_back(pan);
    }

    // Panel titles "key = value": when one does not fit its panel, every panel
    // shows its value alone and the x-axis title names the key once (with the
    // axes zipped with it: "bandwidth_GBps · latency_ns").
    facetKey.clear();
    if (facetTitles) {
      const QFontMetricsF fm(fLabel, dev);
      for (const auto& pan : L.panels) {
        const analysis::Facet& f = plot.facets[static_cast<std::size_t>(pan.facet)];
        const auto eq = f.title.find(" = ");
        if (eq != std::string::npos && fm.horizontalAdvance(QString::fromStdString(f.title)) > pan.plot.width())
          facetKey = plot.facet_label.empty() ? f.title.substr(0, eq) : plot.facet_label;
      }
    }
  };
  // Panel titles: one font for all (smaller down to 70% when one is too wide);
  // a value with the axes zipped with it ("300 GB/s · 150 ns") still too wide
  // takes two lines ("300 GB/s" over "150 ns"); beyond that it is cut in the middle.
  QFont facetFont = fLabel;
  bool facetTwoLines = false;
  auto facetText = [&](const analysis::Facet& f) { return QString::fromStdString(facetKey.empty() ? f.title : f.shown); };
  // The lines of a panel's title: one, or the facet's value over its riders' values.
  // A value alone that is too long for one line (a measured system: "HGX H200 (stas00
  // nccl-tests latency)", cut to "HGX H20…atency)" in every panel alike) breaks before its
  // parenthesis, else at the space nearest its middle.
  auto facetLines = [&](const analysis::Facet& f) {
    const QString full = facetText(f);
    if (!facetTwoLines) return QStringList{full};
    if (const auto cut = full.indexOf(QStringLiteral(" · ")); cut >= 0) return QStringList{full.left(cut), full.mid(cut + 3)};
    qsizetype at = full.indexOf(QStringLiteral(" ("));
    if (at <= 0)
      for (qsizetype i = 0; i < full.size(); ++i)
        if (full[i] == QLatin1Char(' ') && (at <= 0 || std::abs(i - full.size() / 2) < std::abs(at - full.size() / 2))) at = i;
    if (at <= 0) return QStringList{full};
    return QStringList{full.left(at), full.mid(at + 1)};
  };
  // A title line still too long for its panel first loses the words most panels' titles
  // share, longest first ("stas00" of five measured systems: "(stas00 nccl-tests latency)"
  // and "(stas00 sym-mem latency)" were both cut to "(stas00 …latency)"), then its middle.
  auto fitFacetLine = [&](const QString& line, const QFontMetricsF& fm, double width) {
    if (fm.horizontalAdvance(line) <= width) return line;
    auto core = [](const QString& w) {
      qsizetype a = 0, b = w.size();
      while (a < b && (w[a] == QLatin1Char('(') || w[a] == QLatin1Char('['))) ++a;
      while (b > a && (w[b - 1] == QLatin1Char(')') || w[b - 1] == QLatin1Char(']') || w[b - 1] == QLatin1Char(','))) --b;
      return std::pair<qsizetype, qsizetype>{a, b};
    };
    QStringList words = line.split(QLatin1Char(' '));
    std::vector<int> shared(static_cast<std::size_t>(words.size()), 0);
    for (qsizetype i = 0; i < words.size(); ++i) {
      const auto [a, b] = core(words[i]);
      if (b - a < 2) continue;
      const QString w = words[i].mid(a, b - a);
      for (const analysis::Facet& f : plot.facets)
        for (const QString& other : facetText(f).split(QLatin1Char(' ')))
          if (const auto [c, d] = core(other); other.mid(c, d - c) == w) {
            ++shared[static_cast<std::size_t>(i)];
            break;
          }
    }
    QString out = line;
    for (;;) {
      qsizetype best = -1;
      for (qsizetype i = 0; i < words.size(); ++i) {
        const int n = shared[static_cast<std::size_t>(i)];
        if (n < 2) continue;
        const int bn = best < 0 ? 0 : shared[static_cast<std::size_t>(best)];
        if (best < 0 || n > bn || (n == bn && words[i].size() > words[best].size())) best = i;
      }
      if (best < 0) break;
      const auto [a, b] = core(words[best]);
      const bool closes = words[best].endsWith(QLatin1Char(')')) || words[best].endsWith(QLatin1Char(']'));
      words[best] = words[best].left(a) + QChar(0x2026) + (closes ? words[best].right(1) : QString());
      shared[static_cast<std::size_t>(best)] = 0;
      out = words.join(QLatin1Char(' '));
      if (fm.horizontalAdvance(out) <= width) break;
    }
    return fm.elidedText(out, Qt::ElideMiddle, width);
  };
  auto fitFacetTitles = [&] {
    facetFont = fLabel;
    if (!facetTitles) return;
    for (const auto& pan : L.panels)
      for (const QString& line : facetLines(plot.facets[static_cast<std::size_t>(pan.facet)])) {
        const QFont f = fittedFont(fLabel, dev, line, pan.plot.width());
        if (f.pointSizeF() < facetFont.pointSizeF()) facetFont = f;
      }
  };
  // (Short size labels say what K is: "(bytes, log; 1K = 1024)".)
  auto xBaseNow = [&] {
    const bool compact = std::any_of(xTicks.begin(), xTicks.end(), [](const Tick& t) { return t.compact; });
    const QString t = axisTitle(plot.x, L.log_x);
    if (!compact) return t;
    return t.endsWith(QLatin1Char(')')) ? t.chopped(1) + QStringLiteral("; ") + compactBytesNote() + QLatin1Char(')')
                                        : t + QStringLiteral(" (") + compactBytesNote() + QLatin1Char(')');
  };
  QString xBase = xBaseNow();
  auto panelsKey = [&] { return QStringLiteral("panels: %1").arg(QString::fromStdString(facetKey)); };
  auto gridWidth = [&] {
    return std::max(L.panels.back().plot.right(),
                    L.panels[std::min<std::size_t>(L.panels.size(), static_cast<std::size_t>(cols)) - 1].plot.right()) -
           gridLeft;
  };
  // The x title with the panels' key on one line down to 70% of the font; if
  // that is too long, the key goes on a second line (never elided: a figure
  // must say what its panels are). Each choice only goes from one line to two,
  // and a choice changes the panels' size, so lay out again until neither changes.
  bool xTwoLines = false;
  for (int pass = 0; pass < 3; ++pass) {
    layoutGrid(xTwoLines ? 2 * xTitleH : xTitleH);
    xBase = xBaseNow();
    fitFacetTitles();
    bool facet2 = facetTwoLines, x2 = xTwoLines;
    if (facetTitles && !facetKey.empty())
      for (const auto& pan : L.panels) {
        const auto& f = plot.facets[static_cast<std::size_t>(pan.facet)];
        const QString t = facetText(f);
        if (!f.riders.empty() && textWidth(facetFont, dev, t) > pan.plot.width()) facet2 = true;
        if (f.riders.empty() && textWidth(fittedFont(fLabel, dev, t, pan.plot.width()), dev, t) > pan.plot.width()) facet2 = true;
      }
    if (!facetKey.empty()) {
      const QString oneLine = xBase + QStringLiteral("; ") + panelsKey();
      if (textWidth(fittedFont(fLabel, dev, oneLine, gridWidth()), dev, oneLine) > gridWidth()) x2 = true;
    }
    if (facet2 == facetTwoLines && x2 == xTwoLines) break;
    facetTwoLines = facet2;
    xTwoLines = x2;
    facetH = facetTwoLines ? 2 * facetLineH : facetLineH;
  }
  xTwoLines = xTwoLines && !facetKey.empty();

  const double lineW = std::max(0.6, fs / 9.0 * 1.1), markerSize = std::max(2.5, fs * 0.5);
  for (const auto& pan : L.panels) {
    const auto& facet = plot.facets[static_cast<std::size_t>(pan.facet)];
    const QRectF& pr = pan.plot;
    // grid, frame, ticks
    p->setPen(QPen(QColor(0xe3, 0xe3, 0xe3), lineW * 0.6));
    p->setFont(fTick);
    const auto k = static_cast<std::size_t>(pan.facet);
    for (const Tick& t : freeY ? facetYTicks[k] : yTicks) {
      const double y = L.map(pan, L.range.x0, t.value).y();
      if (y < pr.top() - 0.5 || y > pr.bottom() + 0.5) continue;
      p->setPen(QPen(QColor(0xe3, 0xe3, 0xe3), lineW * 0.6));
      p->drawLine(QPointF(pr.left(), y), QPointF(pr.right(), y));
      p->setPen(QPen(Qt::black, lineW * 0.6));
      p->drawLine(QPointF(pr.left() - tickLen, y), QPointF(pr.left(), y));
      if (freeY || pan.plot.left() == L.panels.front().plot.left())
        p->drawText(QRectF(pr.left() - yTickW, y - th / 2, yTickW - tickLen - fs * 0.2, th), Qt::AlignRight | Qt::AlignVCenter, t.label);
    }
    for (const double v : freeY ? facetYBare[k] : yBare) {
      const double y = L.map(pan, L.range.x0, v).y();
      if (y < pr.top() - 0.5 || y > pr.bottom() + 0.5) continue;
      p->setPen(QPen(QColor(0xe3, 0xe3, 0xe3), lineW * 0.6));
      p->drawLine(QPointF(pr.left(), y), QPointF(pr.right(), y));
      p->setPen(QPen(Qt::black, lineW * 0.6));
      p->drawLine(QPointF(pr.left() - tickLen * 0.6, y), QPointF(pr.left(), y));
    }
    for (const double v : xBare) {
      const double x = L.map(pan, v, L.range.y0).x();
      if (x < pr.left() - 0.5 || x > pr.right() + 0.5) continue;
      p->setPen(QPen(QColor(0xe3, 0xe3, 0xe3), lineW * 0.6));
      p->drawLine(QPointF(x, pr.top()), QPointF(x, pr.bottom()));
      p->setPen(QPen(Qt::black, lineW * 0.6));
      p->drawLine(QPointF(x, pr.bottom()), QPointF(x, pr.bottom() + tickLen * 0.6));
    }
    for (const Tick& t : xTicks) {
      const double x = L.map(pan, t.value, L.log_y ? L.range.y0 : L.range.y0).x();
      if (x < pr.left() - 0.5 || x > pr.right() + 0.5) continue;
      p->setPen(QPen(QColor(0xe3, 0xe3, 0xe3), lineW * 0.6));
      p->drawLine(QPointF(x, pr.top()), QPointF(x, pr.bottom()));
      p->setPen(QPen(Qt::black, lineW * 0.6));
      p->drawLine(QPointF(x, pr.bottom()), QPointF(x, pr.bottom() + tickLen));
      const double w = textWidth(fTick, dev, t.label) + 2;
      p->drawText(QRectF(x + t.shift - w / 2, pr.bottom() + tickLen + fs * 0.1, w, th), Qt::AlignHCenter | Qt::AlignTop, t.label);
    }
    p->setPen(QPen(QColor(0x40, 0x40, 0x40), lineW * 0.7));
    p->setBrush(Qt::NoBrush);
    p->drawRect(pr);
    if (facetTitles) {
      // A value still too long (a measured system's name) is cut in the middle, not clipped at both ends.
      p->setFont(facetFont);
      p->setPen(Qt::black);
      const QFontMetricsF fm(facetFont, dev);
      const QStringList lines = facetLines(facet);
      const double lineH = facetH / lines.size();
      for (int i = 0; i < lines.size(); ++i)
        p->drawText(QRectF(pr.left(), pr.top() - facetH + i * lineH, pr.width(), lineH), Qt::AlignCenter,
                    fitFacetLine(lines[i], fm, pr.width()));
    }
    // series
    p->save();
    p->setClipRect(pr.adjusted(-markerSize, -markerSize, markerSize, markerSize));
    std::vector<analysis::Decimation> drawnHere;
    // Device pixels per point: what one pixel cell of the decimation is.
    const double pxPerPt = std::sqrt(std::fabs(p->deviceTransform().determinant()));
    for (const Series& s : facet.series) {
      if (o.hidden.count(s.key)) {
        if (o.decimate) {
          analysis::Decimation none;
          none.total = s.points.size();
          drawnHere.push_back(std::move(none));
        }
        continue;
      }
      const SeriesLook look = seriesLook(plot, s);
      const analysis::Decimation* dec = nullptr;
      if (o.decimate) {
        drawnHere.push_back(analysis::decimate_series(s.points, L.pixelGrid(pan, pxPerPt)));
        dec = &drawnHere.back();
      }
      QPainterPath path;
      bool started = false;
      std::vector<QPointF> pts;
      auto drawable = [&](const analysis::SeriesPoint& pt) { return !((L.log_x && !(pt.x > 0)) || (L.log_y && !(pt.y > 0))); };
      auto lineTo = [&](const analysis::SeriesPoint& pt) {
        if (!drawable(pt)) return;
        const QPointF q = L.map(pan, pt.x, pt.y);
        if (!started) path.moveTo(q);
        else path.lineTo(q);
        started = true;
      };
      // Reduced: the line through each pixel column's M4 points, a marker per occupied pixel cell.
      if (dec) {
        for (std::size_t i : dec->line) lineTo(s.points[i]);
        for (std::size_t i : dec->keep)
          if (drawable(s.points[i])) pts.push_back(L.map(pan, s.points[i].x, s.points[i].y));
      } else {
        for (const auto& pt : s.points) {
          lineTo(pt);
          if (drawable(pt)) pts.push_back(L.map(pan, pt.x, pt.y));
        }
      }
      QPen pen(look.color, lineW);
      pen.setStyle(look.dash);
      if (!s.same_as.empty() && !o.hidden.count(s.same_as)) {
        // Its place among the curves on the same line in this panel: each dashes its own share.
        int group = 1, rank = 0;
        for (const Series& t : facet.series)
          if (t.same_as == s.same_as) {
            ++group;
            if (&t == &s) rank = group - 1;
          }
        setCoveringDash(pen, rank, group);
      }
      pen.setCapStyle(Qt::FlatCap);
      p->setPen(pen);
      p->setBrush(Qt::NoBrush);
      p->save();
      p->setClipRect(pr);
      p->drawPath(path);
      p->restore();
      const QRectF inside = pr.adjusted(-0.5, -0.5, 0.5, 0.5);
      pts.erase(std::remove_if(pts.begin(), pts.end(), [&](const QPointF& q) { return !inside.contains(q); }), pts.end());
      drawMarkers(p, look.marker, pts, markerSize, look.color);
    }
    if (o.decimate) L.drawn.push_back(std::move(drawnHere));
    p->restore();
  }
  L.line_width = lineW;
  L.marker_size = markerSize;
  paintHighlight(p, L, plot, o);

  // Axis titles, once for the grid.
  p->setFont(fLabel);
  p->setPen(Qt::black);
  const QRectF gridArea(gridLeft, gridTop, L.panels.back().plot.right() - gridLeft, gridBottom - gridTop);
  const double xTitleY = L.panels.back().plot.bottom() + xTickH;
  const double gridRight = gridLeft + gridWidth();
  {
    const double w = gridRight - gridLeft;
    if (xTwoLines) {
      // The axis title, and the panels' key under it (each smaller down to 70%, then cut in the middle).
      int line = 0;
      for (const QString& text : {xBase, panelsKey()}) {
        const QFont f = fittedFont(fLabel, dev, text, w);
        p->setFont(f);
        p->drawText(QRectF(gridLeft, xTitleY + line * xTitleH, w, xTitleH), Qt::AlignHCenter | Qt::AlignVCenter,
                    QFontMetricsF(f, dev).elidedText(text, Qt::ElideMiddle, w));
        ++line;
      }
    } else {
      // (With a panels' key it fits: otherwise it took two lines. An axis title alone too long is cut in the middle.)
      const QString xTitle = facetKey.empty() ? xBase : xBase + QStringLiteral("; ") + panelsKey();
      const QFont f = fittedFont(fLabel, dev, xTitle, w);
      p->setFont(f);
      p->drawText(QRectF(gridLeft, xTitleY, w, xTitleH), Qt::AlignHCenter | Qt::AlignVCenter,
                  QFontMetricsF(f, dev).elidedText(xTitle, Qt::ElideMiddle, w));
    }
    p->setFont(fLabel);
  }
  {
    // Centred on the grid. Longer than the grid is high (a long name with its
    // unit, a short figure): centred on the whole left margin, from the top to
    // the legend (nothing else is drawn left of the y tick labels); a smaller
    // font there, down to 70%; an ellipsis in the middle only beyond that.
    const QString yTitle = axisTitle(yShown, L.log_y);
    const bool fits = textWidth(fLabel, dev, yTitle) <= gridArea.height();
    const double lo = fits ? gridArea.top() : m, hi = fits ? gridArea.bottom() : H - m - legendH;
    const double yLen = hi - lo;
    const QFont f = fittedFont(fLabel, dev, yTitle, yLen);
    const QFontMetricsF fm(f, dev);
    L.y_title = fm.elidedText(yTitle, Qt::ElideMiddle, yLen);
    L.y_title_width = fm.horizontalAdvance(L.y_title);
    L.y_title_room = yLen;
    p->save();
    p->setFont(f);
    p->translate(m, (lo + hi) / 2);
    p->rotate(-90);
    p->drawText(QRectF(-yLen / 2, 0, yLen, yTitleW), Qt::AlignHCenter | Qt::AlignVCenter, L.y_title);
    p->restore();
  }

  // Legend.
  const double legendTop = H - m - legendH + m * 0.3;
  for (const Entry& e : legend) {
    const double y = legendTop + e.box.top() + QFontMetricsF(fLabel, dev).height() / 2;
    QPen pen(e.item.color, lineW);
    pen.setStyle(e.item.dash);
    if (e.item.covering) setCoveringDash(pen);
    p->setPen(pen);
    p->drawLine(QPointF(e.box.left(), y), QPointF(e.box.left() + sampleW, y));
    if (e.item.marker >= 0) drawMarker(p, e.item.marker, QPointF(e.box.left() + sampleW / 2, y), markerSize, e.item.color);
    p->setPen(Qt::black);
    p->setFont(fLabel);
    p->drawText(e.text.translated(0, legendTop), Qt::TextWordWrap | Qt::AlignLeft | Qt::AlignTop, e.item.text);
  }
  if (legendMore > 0) {
    p->setPen(Qt::black);
    p->setFont(fLabel);
    p->drawText(QRectF(m, legendTop + legendMoreY, W - 2 * m, H), Qt::AlignLeft | Qt::AlignTop,
                (factored ? QStringLiteral("+ %1 more legend entries (narrow: --filter, --series)")
                          : QStringLiteral("+ %1 more curves (narrow: --filter, --series)"))
                    .arg(legendMore));
  }
  p->restore();
  return L;
}

}  // namespace scin::ui
