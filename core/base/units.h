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

/// The one size grammar (CLI flags, --set on byte parameters, preset and sweep
/// values): a whole number of bytes, or a decimal with a K, M, G or T suffix
/// (powers of two, as nccl-tests), optionally followed by B or iB: "8", "64K",
/// "1.5M", "8MB", "8MiB", "1G". The result must be a whole number of bytes in
/// [min, max]. Throws scin::Error naming `field` on bad input.
std::uint64_t parse_size_bytes(const std::string& text, const std::string& field, std::uint64_t min = 1,
                               std::uint64_t max = std::uint64_t{1} << 62);

/// A count of `noun` ("elements") in the same grammar without the B: "1000",
/// "64K", "1.5M". Errors say "count" and name the noun, never bytes.
std::uint64_t parse_count(const std::string& text, const std::string& field, const char* noun,
                          std::uint64_t min = 1, std::uint64_t max = std::uint64_t{1} << 62);

/// One sentence describing the size grammar, for help texts and errors.
extern const char* const kSizeGrammar;
/// The same for counts.
extern const char* const kCountGrammar;

/// Human-readable size in binary units: 8 B, 1 KiB, 1.5 MiB, 1 GiB.
std::string format_size_bytes(std::uint64_t bytes);

}  // namespace scin
