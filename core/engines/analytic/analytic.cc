#include "engines/analytic/analytic.h"

#include <algorithm>
#include <fmt/format.h>
#include <queue>

#include "base/error.h"

namespace scin {

// ------------------------------------------------------------ the engine

AnalyticResult run_analytic(const Config& cfg, const Schedule& s, const RunContext& ctx) {
  const ResourceMap rm = resource_map(s);
  const std::size_t n = s.steps.size();
  AnalyticResult res;
  res.steps.resize(n);
  if (n == 0) return res;

  std::vector<StepCost> costs(n);
  for (std::size_t i = 0; i < n; ++i) costs[i] = step_cost(cfg, s, rm, s.steps[i]);

  // Successor lists and remaining-dependency counts.
  std::vector<std::vector<StepId>> succ(n);
  std::vector<int> pending(n, 0);
  for (std::size_t i = 0; i < n; ++i)
    for (StepId d : s.steps[i].deps) {
      succ[d].push_back(static_cast<StepId>(i));
      ++pending[i];
    }

  // Each resource is a FCFS queue: a step's use of it starts once the step is
  // ready (deps finished, fixed cost paid) and the previous user is done. The
  // uses of one step proceed independently (an egress port and an ingress port
  // drain in parallel), and the step's data has arrived once its last use has
  // ended and the latency has passed.
  // A use's holder is the reservation it queued behind, or for a unit fed by
  // the step's transfers (holder = the step itself), the transfer that fed it last.
  struct Use { double start = 0, end = 0; StepId holder = kNoStep; int holder_use = -1; };
  std::vector<std::size_t> first_use(n + 1, 0);
  for (std::size_t i = 0; i < n; ++i) first_use[i + 1] = first_use[i] + costs[i].uses.size();
  std::vector<Use> uses(first_use[n]);
  // A resource's reservations, sorted and disjoint. A use takes the earliest
  // gap at or after its ready time that is long enough: a unit or port serves
  // whoever is ready while reservations made for later data wait (backfilling),
  // which is what lets a multicast use a port between chunks of reads.
  struct Busy { double start, end; StepId step; int use; };
  std::vector<std::vector<Busy>> resources(static_cast<std::size_t>(rm.count()));
  std::vector<double> ready(n, 0), occ_end(n, 0);
  std::vector<StepId> bound_dep(n, kNoStep);
  std::vector<int> bound_use(n, -1);  // the use that ended last (-1: none)

  using Item = std::pair<double, StepId>;  // (ready time, index): FCFS at resources, ties by order
  std::priority_queue<Item, std::vector<Item>, std::greater<Item>> q;
  for (std::size_t i = 0; i < n; ++i)
    if (pending[i] == 0) q.emplace(0.0, static_cast<StepId>(i));

  std::size_t done = 0;
  while (!q.empty()) {
    auto [r, i] = q.top();
    q.pop();
    if ((++done & 0xfff) == 0) {
      ctx.check();
      ctx.report(static_cast<double>(done) / static_cast<double>(n));
    }
    const StepCost& c = costs[i];
    const double t0 = r + c.fixed_ns;
    double end = t0;
    double fed_end = t0;  // when the step's transfers have delivered everything
    int fed_by = -1;      // the transfer use that ends last
    for (std::size_t k = 0; k < c.uses.size(); ++k) {
      const auto& u = c.uses[k];
      Use& rec = uses[first_use[i] + k];
      rec.start = rec.end = t0;
      if (u.amount_bytes <= 0) continue;
      auto& busy = resources[static_cast<std::size_t>(u.resource)];
      const double d = u.amount_bytes / u.rate_GBps;
      double start = t0;
      StepId holder = kNoStep;
      int holder_use = -1;
      // A unit fed by the transfers works in step with them: it finishes with the
      // last data (or later if it is slower) and leaves the time before free.
      if (u.fed_by_transfers && fed_end - d > start) {
        start = fed_end - d;
        holder = i;
        holder_use = fed_by;
      }
      auto it = std::partition_point(busy.begin(), busy.end(), [start](const Busy& b) { return b.end <= start; });
      const auto last = busy.end();
      for (; it != last && it->start < start + d; ++it) {
        start = std::max(start, it->end);
        holder = it->step;  // this use waits until that reservation ends
        holder_use = it->use;
      }
      rec.start = start;
      rec.end = start + d;
      rec.holder = holder;
      rec.holder_use = holder_use;
      busy.insert(it, Busy{rec.start, rec.end, i, static_cast<int>(k)});
      if (!u.fed_by_transfers && rec.end > fed_end) {
        fed_end = rec.end;
        fed_by = static_cast<int>(k);
      }
      if (rec.end > end) {
        end = rec.end;
        bound_use[i] = static_cast<int>(k);
      }
    }
    const double l = c.latency_total_ns();
    occ_end[i] = end;
    res.steps[i].start_ns = r;
    res.steps[i].finish_ns = end + l;
    double best = -1;
    for (StepId d : s.steps[i].deps)
      if (res.steps[d].finish_ns > best) {
        best = res.steps[d].finish_ns;
        bound_dep[i] = d;
      }
    for (StepId nx : succ[i]) {
      ready[nx] = std::max(ready[nx], res.steps[i].finish_ns);
      if (--pending[nx] == 0) q.emplace(ready[nx], nx);
    }
  }
  if (done != n) throw Error(fmt::format("schedule {}: dependency cycle", s.algorithm));

  // Walk back from the last step to finish, attributing every nanosecond.
  StepId last = 0;
  for (std::size_t i = 0; i < n; ++i)
    if (res.steps[i].finish_ns > res.steps[last].finish_ns) last = static_cast<StepId>(i);
  res.time_ns = res.steps[last].finish_ns;

  std::vector<StepId> path;
  StepId cur = last;
  int use = -2;  // -2: the whole step (latency and last use); >=0: only that use
  while (cur != kNoStep) {
    if (path.empty() || path.back() != cur) path.push_back(cur);
    const StepCost& c = costs[cur];
    if (use == -2) {
      for (int t = 0; t < static_cast<int>(Term::Count); ++t) res.breakdown.ns[t] += c.latency_ns[t];
      use = bound_use[cur];
      if (use < 0) {  // no resource: fixed cost, then the latest dep
        res.breakdown[c.fixed_term] += c.fixed_ns;
        cur = bound_dep[cur];
        use = -2;
        continue;
      }
    }
    const Use& rec = uses[first_use[cur] + static_cast<std::size_t>(use)];
    // Fed by a transfer of its own step: only the time past that transfer's end is its own.
    const double from = rec.holder == cur ? std::min(rec.end, uses[first_use[cur] + static_cast<std::size_t>(rec.holder_use)].end)
                                          : rec.start;
    res.breakdown[c.uses[static_cast<std::size_t>(use)].term] += rec.end - from;
    if (rec.holder != kNoStep) {  // queued behind the previous user of this resource
      cur = rec.holder;
      use = rec.holder_use;
      continue;
    }
    res.breakdown[c.fixed_term] += c.fixed_ns;
    cur = bound_dep[cur];
    use = -2;
  }
  std::reverse(path.begin(), path.end());
  res.critical_path = std::move(path);
  res.max_link_bytes = link_bytes(s).max_link_bytes();
  return res;
}

}  // namespace scin
