// Synthetic stored runs for the Analysis view's tests and benchmarks
// (tests/ui/analysis_async_test.cc, bench/bench_gui.cc): no simulation, only
// made-up times, so large tables cost nothing to make.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "analysis/table.h"
#include "store/store.h"

namespace scin::test_data {

/// The stored run both tables below belong to, and their algorithm names.
inline RunInfo synthetic_run(std::int64_t id, const std::string& name) {
  RunInfo run;
  run.id = id;
  run.name = name;
  run.kind = PointKind::Collective;
  run.status = RunStatus::Done;
  return run;
}
inline constexpr const char* synthetic_algorithms[] = {"ring", "tree", "scin", "scin-inq", "nvls", "rhd", "direct", "hier"};

/// A stored timing run: `algos` algorithms (at most 8 names, repeated beyond)
/// x `sizes` sizes (1 KiB doubling) x waves (5) x regulation (4) x latency (5)
/// x bandwidth (5); 8 x 25 gives 10^5 points (one panel would hold 4000 curves,
/// so the default view is split into panels by auto_facet).
inline std::shared_ptr<const analysis::AnalysisTable> synthetic_timing_table(int algos, int sizes, std::int64_t id,
                                                                              const std::string& name) {
  const RunInfo run = synthetic_run(id, name);
  const char* regs[] = {"paced", "greedy", "burst", "none"};
  std::vector<PointRecord> pts;
  pts.reserve(static_cast<std::size_t>(algos) * static_cast<std::size_t>(sizes) * 500);
  for (int a = 0; a < algos; ++a)
    for (int b = 0; b < sizes; ++b)
      for (int w = 0; w < 5; ++w)
        for (int r = 0; r < 4; ++r)
          for (int l = 0; l < 5; ++l)
            for (int g = 0; g < 5; ++g) {
              PointRecord p;
              p.index = pts.size();
              p.algorithm = synthetic_algorithms[a % 8];
              p.bytes = std::uint64_t{1024} << b;
              p.gpus = 8;
              p.axes = {{"switch.isa.waves", 1 << w}, {"switch.isa.regulation", regs[r]},
                        {"links.latency_ns", 100 * (l + 1)}, {"links.bandwidth_GBps", 100 * (g + 1)}};
              p.time_us = 1 + a + 1e-3 * static_cast<double>(p.bytes) / (100.0 * (g + 1)) + 0.1 * (l + 1) + 0.01 * w + r;
              p.busbw_GBps = 1e-3 * static_cast<double>(p.bytes) / p.time_us;
              p.algbw_GBps = p.busbw_GBps;
              pts.push_back(std::move(p));
            }
  return std::make_shared<const analysis::AnalysisTable>(analysis::build_table(run, pts));
}

/// A stored timing run whose series are long: `algos` algorithms at one size (1 MiB)
/// x `n` values of links.latency_ns (10, 20, ...), so the default view has one
/// panel of `algos` curves of `n` points each over latency. The times wiggle
/// (a deterministic hash per point, +-25%) so that a series has many distinct y
/// per pixel column: 2 x 50000 gives 10^5 points.
inline std::shared_ptr<const analysis::AnalysisTable> synthetic_dense_table(int algos, int n, std::int64_t id,
                                                                             const std::string& name) {
  const RunInfo run = synthetic_run(id, name);
  std::vector<PointRecord> pts;
  pts.reserve(static_cast<std::size_t>(algos) * static_cast<std::size_t>(n));
  for (int a = 0; a < algos; ++a)
    for (int k = 0; k < n; ++k) {
      PointRecord p;
      p.index = pts.size();
      p.algorithm = synthetic_algorithms[a % 8];
      p.bytes = std::uint64_t{1} << 20;
      p.gpus = 8;
      p.axes = {{"links.latency_ns", 10 * (k + 1)}};
      std::uint64_t h = (static_cast<std::uint64_t>(a) << 32 | static_cast<std::uint64_t>(k)) * 0x9E3779B97F4A7C15ull;
      h ^= h >> 29;
      const double wiggle = static_cast<double>(h % 1001) / 1000.0 - 0.5;  // -0.5 .. 0.5
      p.time_us = (20.0 * (a + 1) + 1e-3 * 10 * (k + 1)) * (1 + 0.5 * wiggle);
      p.busbw_GBps = 1e-3 * static_cast<double>(p.bytes) / p.time_us;
      p.algbw_GBps = p.busbw_GBps;
      pts.push_back(std::move(p));
    }
  return std::make_shared<const analysis::AnalysisTable>(analysis::build_table(run, pts));
}

}  // namespace scin::test_data
