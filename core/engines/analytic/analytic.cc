#include "engines/analytic/analytic.h"

#include <algorithm>
#include <fmt/format.h>

#include "base/error.h"

namespace scin {

// ------------------------------------------------------------ the engine

// Every switch plane alike (analytic.h): all accelerator traffic crosses
// kAllPlanes; nothing addresses one plane or is issued by a switch. On a
// two-tier fabric a transfer's route (its leaf and, by ECMP on the end
// points, its spine) is the same in every plane, so the planes' links and
// NVLS units see the same uses too.
bool planes_alike(const Schedule& s) {
  if (s.topology == Topology::Mesh || s.planes <= 1) return false;
  for (const Step& st : s.steps) {
    if (st.kind != StepKind::Write && st.kind != StepKind::Read && st.kind != StepKind::Compute) continue;
    if (s.is_switch(st.initiator)) return false;
    if (st.kind != StepKind::Compute && st.via != kAllPlanes && st.via != kNoNode) return false;
  }
  return true;
}

AnalyticResult run_analytic(const Config& cfg, const Schedule& s, const RunContext& ctx) {
  AnalyticWorkspace ws;
  return run_analytic(cfg, s, ctx, ws);
}

AnalyticResult run_analytic(const Config& cfg, const Schedule& s, const RunContext& ctx, AnalyticWorkspace& ws) {
  const ResourceMap rm = resource_map(s);
  const std::size_t n = s.steps.size();
  AnalyticResult res;
  res.steps.resize(n);
  if (n == 0) return res;

  // Successors in one flat array (CSR) and remaining-dependency counts.
  auto& succ_first = ws.succ_first;
  succ_first.assign(n + 1, 0);
  auto& pending = ws.pending;
  pending.assign(n, 0);
  for (std::size_t i = 0; i < n; ++i) {
    pending[i] = static_cast<int>(s.steps[i].deps.size());
    for (StepId d : s.steps[i].deps) ++succ_first[d + 1];
  }
  for (std::size_t i = 0; i < n; ++i) succ_first[i + 1] += succ_first[i];
  auto& succ = ws.succ;
  succ.resize(succ_first[n]);
  {
    auto& fill = ws.fill;
    fill.assign(succ_first.begin(), succ_first.end() - 1);
    for (std::size_t i = 0; i < n; ++i)
      for (StepId d : s.steps[i].deps) succ[fill[d]++] = static_cast<StepId>(i);
  }

  // Each resource is a FCFS queue: a step's use of it starts once the step is
  // ready (deps finished, fixed cost paid) and the previous user is done. The
  // uses of one step proceed independently (an egress port and an ingress port
  // drain in parallel), and the step's data has arrived once its last use has
  // ended and the latency has passed.
  // A use's holder is the reservation it queued behind, or for a unit fed by
  // the step's transfers (holder = the step itself), the transfer that fed it last.
  // Step costs are computed when a step is taken (one reused StepCost, no
  // per-step allocation) and again for the steps of the critical path only;
  // the use records are appended in the order steps are taken.
  using Use = AnalyticWorkspace::Use;
  auto& first_use = ws.first_use;
  first_use.assign(n, 0);
  auto& uses = ws.uses;
  uses.clear();
  // A resource's reservations, sorted and disjoint. A use takes the earliest
  // gap at or after its ready time that is long enough: a unit or port serves
  // whoever is ready while reservations made for later data wait (backfilling),
  // which is what lets a multicast use a port between chunks of reads.
  // Steps are taken in order of ready time r, and every use starts at or after
  // its step's r, so reservations that end by the current r can never be
  // queued behind again: `head` skips them and the list is compacted, which
  // keeps each list as short as the reservations still ahead.
  using Busy = AnalyticWorkspace::Busy;
  using Queue = AnalyticWorkspace::Queue;
  auto& resources = ws.resources;
  resources.resize(static_cast<std::size_t>(rm.count()));
  for (Queue& qu : resources) {
    qu.v.clear();
    qu.head = 0;
  }
  auto& ready = ws.ready;
  ready.assign(n, 0);
  auto& bound_dep = ws.bound_dep;
  bound_dep.assign(n, kNoStep);
  auto& bound_use = ws.bound_use;
  bound_use.assign(n, -1);  // the use that ended last (-1: none)
  StepCost& c = ws.cost;
  // Planes alike: book plane 0's copy of each use only. The other planes'
  // queues see the same uses at the same times, so they end at the same
  // instants; plane 0's uses come first in a step's list, so the use that ends
  // last (and the critical path through it) is the same one.
  const bool one_plane = planes_alike(s);
  auto cost = [&](StepId i) { step_cost(cfg, s, rm, s.steps[i], c, one_plane); };

  using Item = std::pair<double, StepId>;  // (ready time, index): FCFS at resources, ties by order
  auto& heap = ws.heap;
  heap.clear();
  const auto later = std::greater<Item>{};
  auto push = [&](double t, StepId i) {
    heap.emplace_back(t, i);
    std::push_heap(heap.begin(), heap.end(), later);
  };
  for (std::size_t i = 0; i < n; ++i)
    if (pending[i] == 0) push(0.0, static_cast<StepId>(i));

  std::size_t done = 0, polled_uses = 0;
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), later);
    const auto [r, i] = heap.back();
    heap.pop_back();
    // Every 4096 steps, or sooner when steps are wide (an NVLS step at 1024 GPUs x 64 planes books
    // thousands of uses): a stop request is seen within ~2^18 uses (milliseconds).
    if ((++done & 0xfff) == 0 || uses.size - polled_uses > (1u << 18)) {
      polled_uses = uses.size;
      ctx.check();
      ctx.report(static_cast<double>(done) / static_cast<double>(n));
    }
    cost(i);
    first_use[i] = uses.size;
    uses.grow_to(uses.size + c.uses.size());
    const double t0 = r + c.fixed_ns;
    double end = t0;
    double fed_end = t0;  // when the step's transfers have delivered everything
    int fed_by = -1;      // the transfer use that ends last
    for (std::size_t k = 0; k < c.uses.size(); ++k) {
      const auto& u = c.uses[k];
      Use& rec = uses[first_use[i] + k];
      rec = Use{t0, t0, kNoStep, -1};
      if (u.amount_bytes <= 0) continue;
      Queue& qu = resources[static_cast<std::size_t>(u.resource)];
      auto& busy = qu.v;
      while (qu.head < busy.size() && busy[qu.head].end <= r) ++qu.head;
      if (qu.head >= 64 && 2 * qu.head >= busy.size()) {
        busy.erase(busy.begin(), busy.begin() + static_cast<std::ptrdiff_t>(qu.head));
        qu.head = 0;
      }
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
      auto it = std::partition_point(busy.begin() + static_cast<std::ptrdiff_t>(qu.head), busy.end(),
                                     [start](const Busy& b) { return b.end <= start; });
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
      // Reservations that touch are kept as one block whose holder is its last
      // user: the gap search then skips a busy stretch in one step, with the
      // same outcome (a block has no gap, and a use after it waits for its last user).
      const auto head_it = busy.begin() + static_cast<std::ptrdiff_t>(qu.head);
      const bool join_prev = it != head_it && (it - 1)->end == rec.start;
      const bool join_next = it != busy.end() && it->start == rec.end;
      if (join_prev && join_next) {
        (it - 1)->end = it->end;
        (it - 1)->step = it->step;
        (it - 1)->use = it->use;
        busy.erase(it);
      } else if (join_prev) {
        (it - 1)->end = rec.end;
        (it - 1)->step = i;
        (it - 1)->use = static_cast<int>(k);
      } else if (join_next) {
        it->start = rec.start;
      } else {
        busy.insert(it, Busy{rec.start, rec.end, i, static_cast<int>(k)});
      }
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
    res.steps[i].start_ns = r;
    res.steps[i].finish_ns = end + l;
    double best = -1;
    for (StepId d : s.steps[i].deps)
      if (res.steps[d].finish_ns > best) {
        best = res.steps[d].finish_ns;
        bound_dep[i] = d;
      }
    for (std::uint32_t k = succ_first[i]; k < succ_first[i + 1]; ++k) {
      const StepId nx = succ[k];
      ready[nx] = std::max(ready[nx], res.steps[i].finish_ns);
      if (--pending[nx] == 0) push(ready[nx], nx);
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
  StepId costed = kNoStep;  // the step `c` holds the cost of
  while (cur != kNoStep) {
    if (path.empty() || path.back() != cur) path.push_back(cur);
    if (costed != cur) {
      cost(cur);
      costed = cur;
    }
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
