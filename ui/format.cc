#include "ui/format.h"

#include <cmath>
#include <string>

#include "base/units.h"
#include "ui/figure.h"

namespace scin::ui {

QString sizeText(std::uint64_t bytes) { return QString::fromStdString(format_size_bytes(bytes)); }

QString bytesText(double bytes) {
  static const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (std::fabs(bytes) >= 1024 && u < 4) {
    bytes /= 1024;
    ++u;
  }
  return QStringLiteral("%1 %2").arg(bytes, 0, 'g', 4).arg(QLatin1String(units[u]));
}

QString durationText(double s) {
  if (s < 1e-3) return QStringLiteral("%1 µs").arg(s * 1e6, 0, 'f', 0);
  if (s < 1) return QStringLiteral("%1 ms").arg(s * 1e3, 0, 'f', 0);
  if (s < 120) return QStringLiteral("%1 s").arg(s, 0, 'f', s < 10 ? 1 : 0);
  if (s < 2 * 3600) return QStringLiteral("%1 min").arg(s / 60, 0, 'f', 0);
  return QStringLiteral("%1 h").arg(s / 3600, 0, 'f', 1);
}

QString timeText(double ns) {
  if (ns < 1e3) return QStringLiteral("%1 ns").arg(ns, 0, 'f', ns < 10 ? 2 : 0);
  if (ns < 1e6) return QStringLiteral("%1 µs").arg(ns / 1e3, 0, 'f', ns < 1e4 ? 2 : 1);
  if (ns < 1e9) return QStringLiteral("%1 ms").arg(ns / 1e6, 0, 'f', 3);
  return QStringLiteral("%1 s").arg(ns / 1e9, 0, 'f', 3);
}

QString bandwidthText(double GBps) { return QStringLiteral("%1 GB/s").arg(GBps, 0, 'f', 1); }

QColor algorithmColor(const QString& a) {
  // Okabe-Ito, the same slots as the Analysis tab (ui/figure.cc): colour-blind safe.
  static const char* order[] = {"ring", "one-shot", "two-shot", "nvls", "scin", "scin-inq", "ring-q8", "two-shot-q8"};
  for (int i = 0; i < 8; ++i)
    if (a == QLatin1String(order[i])) return paletteColor(i);
  // NCCL's own choices, which only measured rows carry: fixed colours away from the palette's.
  if (a == QLatin1String("nccl-sym")) return QColor(0x8C, 0x56, 0x1E);   // brown
  if (a == QLatin1String("nccl-auto")) return QColor(0x6E, 0x6E, 0x6E);  // grey
  // Anything new: a stable hue from the name.
  return QColor::fromHsv(static_cast<int>(qHash(a) % 360), 160, 200);
}

QString unitSuffix(const std::string& unit) {
  if (unit.empty()) return {};
  if (unit == "bytes") return QStringLiteral("B");
  return QString::fromStdString(unit);
}

}  // namespace scin::ui
