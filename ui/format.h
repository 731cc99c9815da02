// Small presentation helpers shared by the widgets: human units for sizes and
// times, stable colours per algorithm. Pure functions, no state.
#pragma once

#include <cstdint>

#include <QColor>
#include <QString>

namespace scin::ui {

/// 8 B, 1 KiB, 1.5 MiB, 1 GiB (binary units, as the size axes use).
QString sizeText(std::uint64_t bytes);
/// A size given as a double (e.g. bytes on the busiest link): same units, 3 significant digits.
QString bytesText(double bytes);
/// A time in ns shown in the most readable unit: "850 ns", "12.4 µs", "3.21 ms".
QString timeText(double ns);
/// A duration in seconds (an estimate, a wait): "850 µs", "12 ms", "4.2 s", "35 s", "7 min", "2.5 h".
QString durationText(double seconds);
/// A bandwidth in GB/s (10^9 B/s): "365.2 GB/s".
QString bandwidthText(double GBps);

/// The colour of an algorithm's curves, the same in every chart and export.
QColor algorithmColor(const QString& algorithm);

/// The parameter's unit for a person: "" -> "", "bytes" -> "B".
QString unitSuffix(const std::string& unit);

}  // namespace scin::ui
