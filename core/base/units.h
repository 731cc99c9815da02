// Units used throughout SCIN Explorer.
//
// Every quantity carries its unit in its name: `_bytes`, `_ns`, `_us`, `_GBps`.
// GBps means 10^9 bytes per second. Because 1 GB/s == 1 byte/ns, a time in ns is
// simply bytes / GBps, which keeps the arithmetic below free of conversion factors.
#pragma once

#include <cstdint>
#include <string>

namespace scin {

constexpr double kNsPerUs = 1e3;
constexpr double kNsPerS = 1e9;

/// Time in ns to move `bytes` at `GBps` (10^9 B/s). Zero bandwidth is rejected
/// by validation before this is ever called.
constexpr double transfer_ns(double bytes, double GBps) { return bytes / GBps; }

/// Bandwidth in GB/s (10^9 B/s) of moving `bytes` in `ns`.
constexpr double bandwidth_GBps(double bytes, double ns) { return ns > 0 ? bytes / ns : 0.0; }

/// Parses a size such as "8", "64K", "1M", "2G" (powers of two, as nccl-tests does;
/// a trailing "B"/"iB" is accepted). Throws scin::Error naming `field` on bad input.
std::uint64_t parse_size_bytes(const std::string& text, const std::string& field);

/// Human-readable size in binary units: 8 B, 1 KiB, 1.5 MiB, 1 GiB.
std::string format_size_bytes(std::uint64_t bytes);

}  // namespace scin
