// The work of a sweep before it runs (issue 13's work budget): what the CLI's
// --max-work and the app's Run check, and the per-point estimates the runner
// uses to take the last points longest first.
#include <algorithm>
#include <functional>
#include <vector>

#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include "base/error.h"
#include "engines/engine.h"
#include "sweep/sweep.h"

namespace scin {

WorkEstimate total_work(const std::vector<WorkEstimate>& jobs, std::size_t concurrency) {
  WorkEstimate t;
  std::vector<double> mem;
  for (const auto& w : jobs) {
    const double m = w.memory_bytes;
    WorkEstimate x = w;
    x.memory_bytes = 0;
    t += x;
    mem.push_back(m);
  }
  std::sort(mem.begin(), mem.end(), std::greater<>());
  for (std::size_t i = 0; i < std::min(mem.size(), std::max<std::size_t>(1, concurrency)); ++i)
    t.memory_bytes += mem[i];
  return t;
}

WorkEstimate sweep_work(const SweepSpec& spec, std::size_t concurrency, std::vector<double>* point_seconds) {
  if (point_seconds) point_seconds->clear();
  const std::uint64_t total = point_count(spec);
  if (total == 0 || (spec.kind != PointKind::Collective && spec.kind != PointKind::Quant &&
                     spec.kind != PointKind::Inference))
    return {};
  const std::uint64_t sample = std::min<std::uint64_t>(total, 1000);
  std::vector<WorkEstimate> w(sample);
  const PointResolver resolve(spec);   // the presets are read once, not once per sample
  // On the sweep's own thread count: `--threads 1` means one core throughout.
  tbb::task_arena arena(static_cast<int>(std::max<std::size_t>(1, concurrency)));
  arena.execute([&] {
    tbb::parallel_for(std::uint64_t{0}, sample, [&](std::uint64_t j) {
      // Last sample first: sizes are the innermost axis in most specs, and growing
      // points done last left one core alone at the end.
      const std::uint64_t k = sample - 1 - j;
      try {
        w[k] = point_work(spec.kind, resolve(k * total / sample));
      } catch (const Error&) {
        // skipped by the sweep as well
      }
    });
  });
  if (point_seconds && sample == total)
    for (const WorkEstimate& x : w) point_seconds->push_back(x.seconds);
  WorkEstimate t = total_work(w, concurrency);
  const double scale = static_cast<double>(total) / static_cast<double>(sample);
  t.amount *= scale;
  t.seconds *= scale;
  if (!*t.unit) t.unit = "units";
  return t;
}

}  // namespace scin
