#include "ui/format.h"

#include <cmath>
#include <string>

#include "base/units.h"

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

QString timeText(double ns) {
  if (ns < 1e3) return QStringLiteral("%1 ns").arg(ns, 0, 'f', ns < 10 ? 2 : 0);
  if (ns < 1e6) return QStringLiteral("%1 µs").arg(ns / 1e3, 0, 'f', ns < 1e4 ? 2 : 1);
  if (ns < 1e9) return QStringLiteral("%1 ms").arg(ns / 1e6, 0, 'f', 3);
  return QStringLiteral("%1 s").arg(ns / 1e9, 0, 'f', 3);
}

QString bandwidthText(double GBps) { return QStringLiteral("%1 GB/s").arg(GBps, 0, 'f', 1); }

QColor algorithmColor(const QString& a) {
  if (a == QLatin1String("ring")) return QColor(0x1f, 0x77, 0xb4);
  if (a == QLatin1String("one-shot")) return QColor(0x8c, 0x56, 0x4b);
  if (a == QLatin1String("two-shot")) return QColor(0x9a, 0x9a, 0x1f);
  if (a == QLatin1String("nvls")) return QColor(0x2c, 0xa0, 0x2c);
  if (a == QLatin1String("scin")) return QColor(0xd6, 0x27, 0x28);
  if (a == QLatin1String("scin-inq")) return QColor(0x94, 0x67, 0xbd);
  if (a == QLatin1String("ring-q8")) return QColor(0x17, 0xbe, 0xcf);
  if (a == QLatin1String("two-shot-q8")) return QColor(0xff, 0x7f, 0x0e);
  // Anything new: a stable hue from the name.
  return QColor::fromHsv(static_cast<int>(qHash(a) % 360), 160, 200);
}

QString unitSuffix(const std::string& unit) {
  if (unit.empty()) return {};
  if (unit == "bytes") return QStringLiteral("B");
  return QString::fromStdString(unit);
}

}  // namespace scin::ui
