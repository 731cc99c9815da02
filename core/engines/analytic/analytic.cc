#include "engines/analytic/analytic.h"

#include <algorithm>
#include <fmt/format.h>

#include "base/error.h"
#include "engines/analytic/ready_queue.h"
#include "engines/analytic/reserve.h"

namespace scin {

// ------------------------------------------------------------ the engine

// Every switch plane alike (analytic.h): all accelerator traffic crosses
// kAllPlanes; nothing addresses one plane or is issued by a switch. On a
// two-tier fabric a transfer's route (its leaf and, by ECMP on the end
// points, its spine) is the same in every plane, so the planes' links and
// NVLS units see the same uses too.
namespace {
bool fabric_has_planes_alike(const Schedule& s) { return s.topology != Topology::Mesh && s.planes > 1; }
bool step_planes_alike(const Schedule& s, const Step& st) {
  if (st.kind != StepKind::Write && st.kind != StepKind::Read && st.kind != StepKind::Compute) return true;
  if (s.is_switch(st.initiator)) return false;
  return st.kind == StepKind::Compute || st.via == kAllPlanes || st.via == kNoNode;
}
}  // namespace

bool planes_alike(const Schedule& s) {
  if (!fabric_has_planes_alike(s)) return false;
  for (const Step& st : s.steps)
    if (!step_planes_alike(s, st)) return false;
  return true;
}

// ------------------------------------------------------------ ranks alike: the ring

namespace {

// What the ranks-alike ring needs: the form, the cost of one send per rank,
// phase and chunk size, and the launches' finish times.
struct RingAlike {
  struct Rep {
    double fixed = 0, latency = 0, longest = -1, bytes = 0;  // longest: the longest booked use (-1: none)
  };
  RingForm f;
  ResourceMap rm;
  bool one_plane = false;
  int classes = 0;
  std::vector<std::uint8_t> cls;  // per chunk: its size class
  std::vector<Rep> reps;
  std::vector<double> launch_finish;
  std::size_t rep_index(int r, int phase, int q) const {
    return (static_cast<std::size_t>(r) * 2 + static_cast<std::size_t>(phase)) * static_cast<std::size_t>(classes) +
           static_cast<std::size_t>(q);
  }
};

// Costs the representatives and checks conditions (a) and (b) of analytic.h.
std::optional<RingAlike> prepare_ring(const Config& cfg, const Collective& coll) {
  RingAlike ra{ring_form(cfg, coll), {}, false, 0, {}, {}, {}};
  const RingForm& f = ra.f;
  const Schedule& s = f.head;
  const int n = f.n();
  if (n < 2 || f.via == kNoNode) return std::nullopt;
  const auto un = static_cast<std::size_t>(n);
  ra.rm = resource_map(s);
  const ResourceMap& rm = ra.rm;

  // Chunk sizes (split() makes at most two) and a few chunks of each, so that
  // every rank finds one it sends in each phase (a rank skips one chunk per phase).
  std::vector<std::uint64_t> sizes(f.chunk_count);
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  if (sizes.size() > 2) return std::nullopt;
  ra.classes = static_cast<int>(sizes.size());
  ra.cls.resize(un);
  std::vector<std::vector<int>> some(sizes.size());
  for (int c = 0; c < n; ++c) {
    const auto q = static_cast<std::size_t>(std::lower_bound(sizes.begin(), sizes.end(), f.chunk_count[static_cast<std::size_t>(c)]) -
                                            sizes.begin());
    ra.cls[static_cast<std::size_t>(c)] = static_cast<std::uint8_t>(q);
    if (some[q].size() < 3) some[q].push_back(c);
  }

  // One send per rank, phase and chunk size, costed as the engine would cost
  // it (plane 0 alone when the compiled ring's planes are alike: every send
  // travels f.via from an accelerator, so the representatives decide it).
  ra.reps.resize(un * 2 * static_cast<std::size_t>(ra.classes));
  std::vector<std::pair<int, int>> rep_t(ra.reps.size(), {-1, -1});  // (rank, send) of each representative
  ra.one_plane = fabric_has_planes_alike(s);
  for (int r = 0; r < n; ++r)
    for (int phase = 0; phase < 2; ++phase)
      for (int q = 0; q < ra.classes; ++q)
        for (int c : some[static_cast<std::size_t>(q)]) {
          // The send of rank r in this phase that carries chunk c, if any.
          const int k = phase == 0 ? ((r - c) % n + n) % n : ((r + 1 - c) % n + n) % n;
          if (k > n - 2) continue;
          const int t = phase == 0 ? k : n - 1 + k;
          rep_t[ra.rep_index(r, phase, q)] = {r, t};
          if (!step_planes_alike(s, f.send(r, t))) ra.one_plane = false;
          break;
        }

  StepCost c;
  std::vector<std::pair<int, int>> owner;  // (resource, rank) of every use of every send
  for (std::size_t i = 0; i < ra.reps.size(); ++i) {
    const auto [r, t] = rep_t[i];
    if (r < 0) continue;
    const Step st = f.send(r, t);
    step_cost(cfg, s, rm, st, c, ra.one_plane);
    RingAlike::Rep& rep = ra.reps[i];
    rep.fixed = c.fixed_ns;
    rep.latency = c.latency_total_ns();
    rep.bytes = static_cast<double>(region_bytes(s, st.srcs[0]));
    if (!(rep.fixed >= 0) || !(rep.latency >= 0)) return std::nullopt;
    for (const ResourceUse& u : c.uses) {
      if (u.fed_by_transfers) return std::nullopt;
      owner.emplace_back(u.resource, r);
      if (u.amount_bytes > 0) rep.longest = std::max(rep.longest, u.amount_bytes / u.rate_GBps);
    }
  }
  std::sort(owner.begin(), owner.end());
  for (std::size_t i = 1; i < owner.size(); ++i)
    if (owner[i].first == owner[i - 1].first && owner[i].second != owner[i - 1].second) return std::nullopt;

  // Launches: no resource, so each finishes at its fixed cost plus latency.
  ra.launch_finish.resize(un);
  for (int r = 0; r < n; ++r) {
    step_cost(cfg, s, rm, f.launch(r), c, ra.one_plane);
    if (!c.uses.empty() || !(c.fixed_ns >= 0) || !(c.latency_total_ns() >= 0)) return std::nullopt;
    const double t0 = 0.0 + c.fixed_ns;
    ra.launch_finish[static_cast<std::size_t>(r)] = t0 + c.latency_total_ns();
  }
  return ra;
}

}  // namespace

bool ring_ranks_alike(const Config& cfg, const Collective& c) { return prepare_ring(cfg, c).has_value(); }

std::optional<AnalyticResult> run_analytic_ring(const Config& cfg, const Collective& coll, const RunContext& ctx,
                                                bool with_steps) {
  std::optional<RingAlike> prepared = prepare_ring(cfg, coll);
  if (!prepared) return std::nullopt;
  const RingAlike& ra = *prepared;
  const RingForm& f = ra.f;
  const Schedule& s = f.head;
  const ResourceMap& rm = ra.rm;
  const bool one_plane = ra.one_plane;
  const int n = f.n();
  const int sends = f.sends();
  const auto un = static_cast<std::size_t>(n);
  const auto& launch_finish = ra.launch_finish;
  StepCost c;

  // The recurrence, in the compiled schedule's step order (so the last step
  // to finish is found as the engine finds it: the first of the latest).
  AnalyticResult res;
  const std::size_t total = un + un * static_cast<std::size_t>(sends);
  if (with_steps) res.steps.resize(total);
  std::vector<double> finish(un * static_cast<std::size_t>(sends));
  std::vector<double> egress(un, 0.0);
  StepId last = 0;
  double last_finish = launch_finish[0];
  for (int r = 0; r < n; ++r) {
    if (with_steps) res.steps[static_cast<std::size_t>(r)] = StepTiming{0.0, launch_finish[static_cast<std::size_t>(r)]};
    if (launch_finish[static_cast<std::size_t>(r)] > last_finish) {
      last_finish = launch_finish[static_cast<std::size_t>(r)];
      last = r;
    }
  }
  for (int t = 0; t < sends; ++t) {
    if ((t & 15) == 0) {
      ctx.check();
      ctx.report(static_cast<double>(t) / static_cast<double>(sends));
    }
    const int phase = f.reduce_scatter(t) ? 0 : 1;
    int chunk = f.chunk(0, t);
    const double* prev = t > 0 ? &finish[static_cast<std::size_t>(t - 1) * un] : nullptr;
    double* row = &finish[static_cast<std::size_t>(t) * un];
    for (int r = 0; r < n; ++r, chunk = chunk + 1 == n ? 0 : chunk + 1) {
      const auto ur = static_cast<std::size_t>(r);
      const double next_launch = launch_finish[r + 1 == n ? 0 : ur + 1];
      // The engine's ready time: the latest finish of the deps (from 0).
      double ready = 0;
      if (prev) {
        ready = std::max(ready, prev[r == 0 ? un - 1 : ur - 1]);
        ready = std::max(ready, prev[ur]);
      } else {
        ready = std::max(ready, launch_finish[ur]);
      }
      ready = std::max(ready, next_launch);
      const RingAlike::Rep& v = ra.reps[ra.rep_index(r, phase, ra.cls[static_cast<std::size_t>(chunk)])];
      const double t0 = ready + v.fixed;
      const double end = v.longest >= 0 ? t0 + v.longest : t0;  // rounding is monotone: the latest use end
      row[ur] = end + v.latency;
      egress[ur] += v.bytes;
      const StepId id = f.send_id(r, t);
      if (with_steps) res.steps[static_cast<std::size_t>(id)] = StepTiming{ready, row[ur]};
      if (row[ur] > last_finish) {
        last_finish = row[ur];
        last = id;
      }
    }
  }
  res.time_ns = last_finish;
  // Each send's bytes leave r's egress and enter r+1's ingress: the same sums.
  for (double b : egress) res.max_link_bytes = std::max(res.max_link_bytes, b);

  // The critical path and its breakdown, walked back as the engine walks it
  // (no use ever queues, so every step is bound by its latest dep).
  const auto sn = static_cast<StepId>(n);
  auto finish_of = [&](StepId id) {
    return id < sn ? launch_finish[static_cast<std::size_t>(id)] : finish[static_cast<std::size_t>(id - sn)];
  };
  std::vector<StepId> path;
  for (StepId cur = last; cur != kNoStep;) {
    path.push_back(cur);
    const bool is_launch = cur < sn;
    const int r = static_cast<int>(is_launch ? cur : (cur - sn) % sn);
    const int t = is_launch ? -1 : static_cast<int>((cur - sn) / sn);
    step_cost(cfg, s, rm, is_launch ? f.launch(r) : f.send(r, t), c, one_plane);
    StepId bound = kNoStep;
    double ready = 0, best = -1;
    if (!is_launch)
      for (StepId d : f.send_deps(r, t)) {
        ready = std::max(ready, finish_of(d));
        if (finish_of(d) > best) {
          best = finish_of(d);
          bound = d;
        }
      }
    for (int k = 0; k < kTermCount; ++k) res.breakdown.ns[k] += c.latency_ns[k];
    const double t0 = ready + c.fixed_ns;
    double end = t0;
    int bound_use = -1;
    for (std::size_t k = 0; k < c.uses.size(); ++k) {
      const ResourceUse& u = c.uses[k];
      if (u.amount_bytes <= 0) continue;
      const double e = t0 + u.amount_bytes / u.rate_GBps;
      if (e > end) {
        end = e;
        bound_use = static_cast<int>(k);
      }
    }
    if (bound_use >= 0) res.breakdown[c.uses[static_cast<std::size_t>(bound_use)].term] += end - t0;
    res.breakdown[c.fixed_term] += c.fixed_ns;
    cur = bound;
  }
  std::reverse(path.begin(), path.end());
  res.critical_path = std::move(path);
  return res;
}

AnalyticResult run_analytic(const Config& cfg, const Schedule& s, const RunContext& ctx) {
  AnalyticWorkspace ws;
  return run_analytic(cfg, s, ctx, ws);
}

namespace {

// Books `s` into `res` (run_analytic). With `port_classes` (ports_alike()
// passed) each step's ports are costed by class (step_cost's port_classes);
// returns false as soon as a step fails that condition (`res` is then
// incomplete and the caller books again without it).
bool book(const Config& cfg, const Schedule& s, const ResourceMap& rm, const RunContext& ctx, AnalyticWorkspace& ws,
          bool one_plane, bool port_classes, AnalyticResult& res) {
  const std::size_t n = s.steps.size();
  res = AnalyticResult{};
  res.steps.resize(n);
  if (n == 0) return true;

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
  using Queue = AnalyticWorkspace::Queue;
  auto& resources = ws.resources;
  resources.resize(static_cast<std::size_t>(rm.count()));
  for (Queue& qu : resources) {
    qu.v.clear();
    qu.head = 0;
  }
  auto& ready = ws.ready;
  ready.assign(n, 0);
  // The dep a step waited for last (its first latest finishing dep; kNoStep:
  // none), found only for the steps of the critical path: the deps' finishes
  // are final once the step is taken, so the walk finds what booking would.
  auto bound_dep = [&](StepId i) {
    StepId bound = kNoStep;
    double best = -1;
    for (StepId d : s.steps[i].deps)
      if (res.steps[d].finish_ns > best) {
        best = res.steps[d].finish_ns;
        bound = d;
      }
    return bound;
  };
  auto& bound_use = ws.bound_use;
  bound_use.assign(n, -1);  // the use that ended last (-1: none)
  StepCost& c = ws.cost;
  // Planes alike: book plane 0's copy of each use only. The other planes'
  // queues see the same uses at the same times, so they end at the same
  // instants; plane 0's uses come first in a step's list, so the use that ends
  // last (and the critical path through it) is the same one.
  // Ports alike (port_classes): every member of a class of ports sees the
  // same uses at the same times (each step that uses one uses all, for the
  // same time), so every member's queue is its representative's: only that
  // one is booked. A step's class use stands where the class's first use
  // stood, so the use that ends last (the first of the latest) and the
  // critical path through it are the same.
  // (one_plane: planes_alike(s), found once by the caller.)
  auto cost = [&](StepId i) { return step_cost(cfg, s, rm, s.steps[i], c, one_plane, port_classes); };

  // The ready queue: (ready time, index), smallest first (ready_queue.h):
  // FCFS at resources, ties by order.
  auto& heap = ws.heap;
  heap.clear();
  auto push = [&](double t, StepId i) { ready_queue::push(heap, t, i); };
  // A launch, signal or wait with no use, fixed cost and latency >= 0 is finished when ready,
  // without the queue: it books nothing, and its successors' keys (time >= its finish >= its
  // ready time, index > its own) exceed its key, so no step is taken earlier or in another
  // order than through the queue. `free_ready` (the CSR's fill list, now unused) holds them.
  std::size_t done = 0, taken = 0, polled_uses = 0;
  bool classes_ok = true;
  auto& free_ready = ws.fill;
  free_ready.clear();
  auto release = [&](StepId nx) {  // every dep of nx has finished
    const StepKind k = s.steps[nx].kind;
    if (k == StepKind::Launch || k == StepKind::Signal || k == StepKind::Wait) {
      classes_ok = classes_ok && cost(nx);
      double l = 0;  // (as below)
      for (double x : c.latency_ns) l += x;
      if (c.uses.empty() && c.fixed_ns >= 0 && l >= 0) {
        res.steps[nx].start_ns = ready[nx];
        res.steps[nx].finish_ns = (ready[nx] + c.fixed_ns) + l;
        first_use[nx] = uses.size;
        ++done;
        free_ready.push_back(nx);
        return;
      }
    }
    push(ready[nx], nx);
  };
  auto finished = [&](StepId i) {  // i's finish is final: update its successors
    for (std::uint32_t k = succ_first[i]; k < succ_first[i + 1]; ++k) {
      const StepId nx = succ[k];
      ready[nx] = std::max(ready[nx], res.steps[i].finish_ns);
      if (--pending[nx] == 0) release(nx);
    }
  };
  auto release_free = [&] {
    for (StepId j; !free_ready.empty();) j = free_ready.back(), free_ready.pop_back(), finished(j);
    return classes_ok;
  };
  for (std::size_t i = 0; i < n; ++i)
    if (pending[i] == 0) release(static_cast<StepId>(i));
  if (!release_free()) return false;

  while (!heap.empty()) {
    const auto [r, i] = ready_queue::pop(heap);
    ++done;
    // Every 4096 steps, or sooner when steps are wide (an NVLS step at 1024 GPUs x 64 planes books
    // thousands of uses): a stop request is seen within ~2^18 uses (milliseconds).
    if ((++taken & 0xfff) == 0 || uses.size - polled_uses > (1u << 18)) {
      polled_uses = uses.size;
      ctx.check();
      ctx.report(static_cast<double>(done) / static_cast<double>(n));
    }
    if (!cost(i)) return false;
    first_use[i] = uses.size;
    if (const std::size_t want = uses.size + c.uses.size(); want <= uses.blocks.size() * uses.kBlock)
      uses.size = want;  // (grow_to's work when no block is added)
    else
      uses.grow_to(want);
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
      analytic::reserve(qu, r, start, d, holder, holder_use, i, static_cast<int>(k));
      rec.start = start;
      rec.end = start + d;
      rec.holder = holder;
      rec.holder_use = holder_use;
      if (!u.fed_by_transfers && rec.end > fed_end) {
        fed_end = rec.end;
        fed_by = static_cast<int>(k);
      }
      if (rec.end > end) {
        end = rec.end;
        bound_use[i] = static_cast<int>(k);
      }
    }
    double l = 0;  // c.latency_total_ns(), inline (the same sum, in the same order)
    for (double x : c.latency_ns) l += x;
    res.steps[i].start_ns = r;
    res.steps[i].finish_ns = end + l;
    finished(i);
    if (!release_free()) return false;
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
        cur = bound_dep(cur);
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
    cur = bound_dep(cur);
    use = -2;
  }
  std::reverse(path.begin(), path.end());
  res.critical_path = std::move(path);
  return true;
}

// link_bytes(s).max_link_bytes() of a schedule booked by port classes, in
// O(steps): every transfer is an ISA read taking the same bytes from every
// accelerator (its egress) or an ISA multicast to every accelerator (its
// ingress), as the booking checked, so every accelerator's egress (ingress)
// adds the same amounts in the same order of steps as link_bytes() adds them.
// Nothing if a read delivers to an accelerator (link_bytes() counts that
// accelerator's ingress alone).
std::optional<double> class_max_link_bytes(const Schedule& s) {
  double egress = 0, ingress = 0;
  for (const Step& st : s.steps) {
    if (st.via == kNoNode) continue;
    if (st.kind == StepKind::Write) {
      ingress += static_cast<double>(region_bytes(s, st.srcs[0]));
    } else if (st.kind == StepKind::Read) {
      if (!s.is_switch(s.buffers[st.dsts[0].buffer].node)) return std::nullopt;
      egress += static_cast<double>(region_bytes(s, st.srcs[0]));
    }
  }
  return std::max({0.0, egress, ingress});
}

// ports_alike(s) without its planes_alike(s) test (the caller knows it is false).
bool ports_alike_unless_planes(const Schedule& s) {
  if (s.topology != Topology::Star || s.gpus < 2) return false;
  // Ports are used by class only by transfers a switch issues (step_cost's
  // port_classes); one an accelerator issues across a plane fails at once.
  bool any = false;
  for (const Step& st : s.steps) {
    if (st.kind != StepKind::Write && st.kind != StepKind::Read) continue;
    if (st.via == kNoNode) continue;  // local (HBM)
    if (!s.is_switch(st.initiator)) return false;
    any = true;
  }
  return any;
}
}  // namespace

bool ports_alike(const Schedule& s) {
  if (s.topology != Topology::Star || s.gpus < 2 || planes_alike(s)) return false;
  return ports_alike_unless_planes(s);
}

AnalyticResult run_analytic(const Config& cfg, const Schedule& s, const RunContext& ctx, AnalyticWorkspace& ws) {
  const ResourceMap rm = resource_map(s);
  AnalyticResult res;
  const bool one_plane = planes_alike(s);  // (one pass over the steps, for both tests)
  const bool by_class = !one_plane && ports_alike_unless_planes(s) && book(cfg, s, rm, ctx, ws, false, true, res);
  if (!by_class) book(cfg, s, rm, ctx, ws, one_plane, false, res);
  if (s.steps.empty()) return res;
  std::optional<double> m;
  if (by_class) m = class_max_link_bytes(s);
  res.max_link_bytes = m ? *m : link_bytes(s).max_link_bytes();
  return res;
}

}  // namespace scin
