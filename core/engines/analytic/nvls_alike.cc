// NVLS by classes of ports (analytic.h, run_analytic_nvls): the one-switch
// NVLS schedule timed without compiling its 2NC steps of N regions each.
#include "engines/analytic/analytic.h"
#include "engines/analytic/nvls_alike.h"

#include <algorithm>
#include <cstdint>

#include "engines/analytic/nvls_groups.h"
#include "engines/analytic/nvls_jump.h"
#include "engines/analytic/nvls_walk.h"
#include "engines/analytic/nvls_work.h"
#include "engines/analytic/ready_queue.h"
#include "model/cost_grid.h"
#include "schedule/builder.h"

namespace scin {

namespace {

using namespace nvls;

// The loop's small lambdas inlined: called out of line, decode() returned its
// Id through the stack (a byte and two ints stored, read back as one word: a
// store-forwarding stall per step, ~10% of the 1 GiB point at 8 GPUs).
#if defined(__GNUC__)
#define SCIN_NVLS_INLINE __attribute__((always_inline))
#else
#define SCIN_NVLS_INLINE
#endif

// run_analytic_nvls; with `steps_only`, its conditions alone (everything up
// to booking: the steps' costs and their shape): *steps_only = the step count
// and an empty result if they hold (booking then always answers).
// `jump`: the periodic jump (below) where it applies; `jumped_chunks`
// (optional): the chunks per rank it skipped (0 if it did not apply);
// `repeats` (optional, 2): the periods the critical path's walk repeated and
// the member replays that skipped the copies (nvls_walk.h); `skip_copies`
// false: the replays book the copies (the records then written) as where
// their queues do not repeat (tests).
SCIN_NVLS_CLONES std::optional<AnalyticResult> nvls_alike(const Config& cfg, const Collective& coll, const RunContext& ctx,
                                         bool with_steps, std::size_t* steps_only, bool jump = true,
                                         int* jumped_chunks = nullptr, int* repeats = nullptr, bool skip_copies = true) {
  if (jumped_chunks) *jumped_chunks = 0;
  if (repeats) repeats[0] = repeats[1] = 0;
  if (cfg.fabric.topology != Topology::Star || !cfg.fabric.graph_file.empty()) return std::nullopt;
  if (!unsupported_reason(cfg, Algorithm::Nvls).empty()) return std::nullopt;
  // The schedule's head as compile() declares it (in and out per rank), then
  // build_nvls's buffers; its steps are generated below in build_nvls's order.
  build::Builder b(cfg, info(Algorithm::Nvls).name, coll);
  b.labels = false;
  Schedule& s = b.s;
  const int n = b.n();
  if (n < 2 || n > 65535) return std::nullopt;  // (Taken's rank)
  const auto un = static_cast<std::size_t>(n);
  const NodeId sw0 = s.switch_node(0);
  const std::vector<build::Span> shards = build::split(s.elems, n);
  const int chunks = build::nvls_chunks(s);
  const auto uc = static_cast<std::size_t>(chunks);
  std::vector<BufferId> reg;
  for (int r = 0; r < n; ++r) reg.push_back(b.buffer("ld_reduce", r, s.elems, b.data_format));
  const ResourceMap rm = resource_map(s);
  // Planes alike (planes_alike(): every transfer of NVLS crosses kAllPlanes
  // from an accelerator): plane 0's uses only, as run_analytic books it.
  const bool one_plane = s.topology != Topology::Mesh && s.planes > 1;

  // Step ids in build_nvls's order.
  const StepId N = static_cast<StepId>(n), C = static_cast<StepId>(chunks);
  const StepId arrive0 = N, wait0 = 2 * N, first_chunk = 3 * N, arrive1 = 3 * N + 2 * N * C, wait1 = arrive1 + N;
  const std::size_t total = 5 * un + 2 * un * uc;
  auto chunk_id = [&](int i, int c, bool store) {
    return first_chunk + 2 * (static_cast<StepId>(i) * C + static_cast<StepId>(c)) + (store ? 1 : 0);
  };

  // The chunks' spans, and one costed ld_reduce and multimem.st per chunk size.
  thread_local Work work;
  const WorkTrim trim{work, total};
  // Each shard's chunks (chunk_shards, nvls_groups.h): rows of `spans`.
  std::vector<build::Span>& spans = work.spans;
  std::vector<std::uint64_t> shard_sizes, sizes;  // sizes: of the chunks, sorted, distinct
  std::vector<std::size_t> row;
  if (!nvls::chunk_shards(shards, chunks, spans, shard_sizes, row, sizes)) return std::nullopt;
  auto span_of = [&](int i, int c) {
    const auto ui = static_cast<std::size_t>(i);
    return build::sub(shards[ui], spans[row[ui] * uc + static_cast<std::size_t>(c)]);
  };
  auto load_step = [&](int i, int c) {
    const build::Span sp = span_of(i, c);
    Step st;
    st.kind = StepKind::Read;
    st.initiator = i;
    st.via = kAllPlanes;
    st.op = DataOp::Reduce;
    st.accum = Format::Fp32;
    st.unit = Unit::NvlsReduce;
    st.srcs.reserve(un);
    for (int j = 0; j < n; ++j) st.srcs.push_back(build::at(s.input[static_cast<std::size_t>(j)], sp));
    st.dsts = {build::at(reg[static_cast<std::size_t>(i)], sp)};
    return st;
  };
  auto store_step = [&](int i, int c) {
    const build::Span sp = span_of(i, c);
    Step st;
    st.kind = StepKind::Write;
    st.initiator = i;
    st.via = kAllPlanes;
    st.op = DataOp::Copy;
    st.unit = Unit::NvlsReduce;
    st.srcs = {build::at(reg[static_cast<std::size_t>(i)], sp)};
    st.dsts.reserve(un);
    for (int j = 0; j < n; ++j) st.dsts.push_back(build::at(s.output[static_cast<std::size_t>(j)], sp));
    return st;
  };
  if (sizes.size() > 255) return std::nullopt;
  std::vector<Rep> loads(sizes.size()), stores(sizes.size());
  std::vector<std::uint8_t>& size_of = work.size_of;  // per chunk: its index in `sizes`
  size_of.resize(un * uc);
  // Per chunk its size's index (a row per shard size, copied per rank).
  std::vector<std::uint8_t> by_row(shard_sizes.size() * uc);
  {
    for (std::size_t k = 0, last_z = ~std::uint64_t{0}, q = 0; k < by_row.size(); ++k) {
      if (spans[k].count != last_z) {
        last_z = spans[k].count;
        q = static_cast<std::size_t>(std::lower_bound(sizes.begin(), sizes.end(), last_z) - sizes.begin());
      }
      by_row[k] = static_cast<std::uint8_t>(q);
    }
    for (std::size_t i = 0; i < un; ++i)
      std::copy_n(by_row.begin() + static_cast<std::ptrdiff_t>(row[i] * uc), uc,
                  size_of.begin() + static_cast<std::ptrdiff_t>(i * uc));
    std::vector<int> costed(sizes.size(), 0);
    std::size_t uncosted = sizes.size();
    StepCost c;
    for (int i = 0; i < n; ++i) {
      // (a rank before the last with every size costed has nothing to cost)
      if (i < n - 1 && uncosted == 0) continue;
      for (int c_ = 0; c_ < chunks; ++c_) {
        const std::size_t k = static_cast<std::size_t>(i) * uc + static_cast<std::size_t>(c_);
        const std::size_t q = size_of[k];
        // Each size costed at its first chunk, and checked again at its last
        // rank's (the cost of a transfer depends on its bytes, not its rank).
        const bool first = costed[q] == 0, again = costed[q] == 1 && i == n - 1;
        if (!first && !again) continue;
        uncosted -= first ? 1 : 0;
        Rep l, st;
        analytic_step_cost(cfg, s, rm, load_step(i, c_), c, one_plane);
        if (!read_rep(c, rm, n, i, l)) return std::nullopt;
        analytic_step_cost(cfg, s, rm, store_step(i, c_), c, one_plane);
        if (!store_rep(c, rm, n, i, st)) return std::nullopt;
        if (first) {
          loads[q] = std::move(l);
          stores[q] = std::move(st);
        } else {
          const Rep& l0 = loads[q];
          const Rep& s0 = stores[q];
          if (!same_cost(l.c, l0.c) || !same_cost(st.c, s0.c) || l.e_amount != l0.e_amount || l.e_rate != l0.e_rate ||
              l.i_amount != l0.i_amount || l.i_rate != l0.i_rate || l.has_u != l0.has_u || l.u_amount != l0.u_amount ||
              l.u_rate != l0.u_rate || st.e_amount != s0.e_amount || st.e_rate != s0.e_rate ||
              st.i_amount != s0.i_amount || st.i_rate != s0.i_rate)
            return std::nullopt;
        }
        ++costed[q];
      }
    }
  }
  // A use of positive amount must take positive time (joins and the holder
  // argument assume reservations of positive length).
  for (std::vector<Rep>* reps : {&loads, &stores})
    for (Rep& r : *reps) {
      r.durations();
      if (r.e_amount > 0 && !(r.e_amount / r.e_rate > 0)) return std::nullopt;
      if (r.i_amount > 0 && !(r.i_amount / r.i_rate > 0)) return std::nullopt;
      if (r.has_u && r.u_amount > 0 && !(r.u_amount / r.u_rate > 0)) return std::nullopt;
    }

  // Launches, barrier signals and waits use nothing: a fixed cost and latency each.
  std::vector<StepCost> launch_c(un), arrive_c(un), wait_c(un);
  for (int r = 0; r < n; ++r) {
    const auto ur = static_cast<std::size_t>(r);
    analytic_step_cost(cfg, s, rm, build::launch_step(r, false, RingProtocol::Simple, false), launch_c[ur], one_plane);
    Step sig;
    sig.kind = StepKind::Signal;
    sig.initiator = r;
    sig.target = sw0;
    sig.unit = Unit::NvlsReduce;
    sig.via = sw0;
    analytic_step_cost(cfg, s, rm, sig, arrive_c[ur], one_plane);
    Step w;
    w.kind = StepKind::Wait;
    w.initiator = r;
    w.unit = Unit::NvlsReduce;
    analytic_step_cost(cfg, s, rm, w, wait_c[ur], one_plane);
    if (!launch_c[ur].uses.empty() || !arrive_c[ur].uses.empty() || !wait_c[ur].uses.empty()) return std::nullopt;
  }
  // No cost is negative: a step is then ready no earlier than the one taken
  // before it, and no use starts before its step's ready time (what the
  // groups' merging, like the engine's pruning, relies on).
  auto nonnegative = [](const StepCost& c) {
    if (!(c.fixed_ns >= 0)) return false;
    for (int k = 0; k < kTermCount; ++k)
      if (!(c.latency_ns[k] >= 0)) return false;
    return true;
  };
  for (std::size_t r = 0; r < un; ++r)
    if (!nonnegative(launch_c[r]) || !nonnegative(arrive_c[r]) || !nonnegative(wait_c[r])) return std::nullopt;
  for (std::size_t q = 0; q < sizes.size(); ++q)
    if (!nonnegative(loads[q].c) || !nonnegative(stores[q].c)) return std::nullopt;
  if (steps_only) {
    *steps_only = total;
    return AnalyticResult{};
  }

  // What a step is, from its id.
  enum class K : std::uint8_t { Launch, Arrive0, Wait0, Load, Store, Arrive1, Wait1 };
  struct Id {
    K k;
    int r;  // rank (initiator)
    int c;  // chunk (loads and stores)
  };
  const nvls::DivBy over_c(C);
  const StepId chunk_steps = arrive1 - first_chunk;
  auto decode = [&](StepId id) SCIN_NVLS_INLINE -> Id {
    // (loads and stores first; ids below first_chunk wrap above chunk_steps)
    if (const StepId y = id - first_chunk; y < chunk_steps) {
      const StepId x = y / 2, rank = over_c(x);
      return {y % 2 ? K::Store : K::Load, static_cast<int>(rank), static_cast<int>(x - rank * C)};
    }
    if (id < arrive0) return {K::Launch, static_cast<int>(id), 0};
    if (id < wait0) return {K::Arrive0, static_cast<int>(id - arrive0), 0};
    if (id < first_chunk) return {K::Wait0, static_cast<int>(id - wait0), 0};
    if (id < wait1) return {K::Arrive1, static_cast<int>(id - arrive1), 0};
    return {K::Wait1, static_cast<int>(id - wait1), 0};
  };
  // Each cost's latencies summed once (latency_total_ns(), the same sum the
  // engine takes per step), by step kind as cost_of() picks the cost.
  std::vector<double> launch_l(un), arrive_l(un), wait_l(un), load_l(sizes.size()), store_l(sizes.size());
  for (std::size_t r = 0; r < un; ++r) {
    launch_l[r] = launch_c[r].latency_total_ns();
    arrive_l[r] = arrive_c[r].latency_total_ns();
    wait_l[r] = wait_c[r].latency_total_ns();
  }
  for (std::size_t q = 0; q < sizes.size(); ++q) {
    load_l[q] = loads[q].c.latency_total_ns();
    store_l[q] = stores[q].c.latency_total_ns();
  }
  auto latency_of = [&](const Id& d) SCIN_NVLS_INLINE -> double {
    const auto ur = static_cast<std::size_t>(d.r);
    switch (d.k) {
      case K::Launch: return launch_l[ur];
      case K::Arrive0:
      case K::Arrive1: return arrive_l[ur];
      case K::Wait0:
      case K::Wait1: return wait_l[ur];
      case K::Load: return load_l[size_of[ur * uc + static_cast<std::size_t>(d.c)]];
      default: return store_l[size_of[ur * uc + static_cast<std::size_t>(d.c)]];
    }
  };
  auto cost_of = [&](const Id& d) SCIN_NVLS_INLINE -> const StepCost& {
    const auto ur = static_cast<std::size_t>(d.r);
    switch (d.k) {
      case K::Launch: return launch_c[ur];
      case K::Arrive0:
      case K::Arrive1: return arrive_c[ur];
      case K::Wait0:
      case K::Wait1: return wait_c[ur];
      case K::Load: return loads[size_of[ur * uc + static_cast<std::size_t>(d.c)]].c;
      default: return stores[size_of[ur * uc + static_cast<std::size_t>(d.c)]].c;
    }
  };

  // The engine's loop (run_analytic's book()), over the generated steps.
  std::vector<double>& ready = work.ready;
  std::vector<double>& start = work.start;
  std::vector<double>& finish = work.finish;
  std::vector<std::uint8_t>& pending = work.pending;
  // (Every step but the launches is released once, by one step or a
  // barrier: its ready time is that finish; not cleared.)
  ready.resize(total);
  // (start, finish and the uses' records: written as each step is booked, or
  // for the jump's copies by materialise(); not cleared.)
  start.resize(total);
  finish.resize(total);
  // Every load and store waits for one step: a store for its load, a load
  // for the first barrier's wait (chunks 0 and 1) or the store 2 chunks
  // before (whose release carries the wait's finish too: the same max).
  pending.assign(total, 1);
  for (StepId i = 0; i < N; ++i) pending[i] = 0;  // (launches; barriers: below)
  // Per load and store: which use ended last (0 none, 1 E, 2 I, 3 the NVLS
  // unit: the use the critical path follows) and, for E and I, on which
  // member (the first with that end); the unit's uses as booked.
  const std::size_t pairs = un * uc;
  std::vector<Rec>& rec_u = work.rec_u;
  std::vector<std::uint8_t>& bound = work.bound;
  std::vector<int>& bound_member = work.bound_member;
  rec_u.resize(pairs);
  bound.resize(2 * pairs);
  bound_member.resize(2 * pairs);
  // (Per thread, reset per run: their storage is reused; small points allocate nothing for them.)
  thread_local Members members_e, members_i;
  // Up to 64 members, groups that never merge are cheaper than looking for
  // groups to merge before every shared use (BM_AnalyticScale/nvls/64 and
  // BM_Point8/nvls/1073741824: 9.8 -> 8.2 and 9.9 -> 8.1 ms, performance.md
  // section 34); the times are the same either way.
  const bool merge = n > 64;
  // Up to 16 members, no groups at all (Members' `alone`): at 8 GPUs every
  // member's queue is one block from the front on, booked in a few
  // instructions (Slots::book), which is cheaper than a member leaving its
  // group and joining another on every own use (performance.md section 43).
  const bool alone = n <= 16;
  members_e.reset(n, merge, alone);
  members_i.reset(n, merge, alone);
  Queue unit;
  // Members alone: every member use's start and holder as booked (Members::
  // shared and own), read by the critical path's walk; n + 1 per x, by x.
  const std::size_t stride = un + 1;
  if (alone) work.member_records(2 * pairs * stride);
  double* const mstart = alone ? work.mstart.get() : nullptr;
  StepId* const mhold = alone ? work.mhold.get() : nullptr;
  // The loads and stores as taken (the critical path replays members' queues in this order).
  std::vector<Taken>& taken = work.taken;
  taken.resize(2 * pairs);
  std::size_t taken_n = 0;
  std::vector<std::uint32_t>& taken_at = work.taken_at;
  taken_at.resize(2 * pairs);

  // The ready steps by (ready time, id), the engine's order: a sorted array
  // while pushes move few items, else ready_queue.h's heap (nvls_work.h,
  // Ready: the same pops).
  using Item = ready_queue::Item;
  Ready& heap = work.heap;
  heap.reset();
  // The step pushed last waits outside the heap (`held`) until another push or
  // the next pop: popped at once if it is before the heap's first (the order
  // is (ready time, id), ids distinct: the least of heap and held is the
  // heap's pop without it), else pushed then. A load's store, released as the
  // load is booked, is often the next step taken.
  Item held{};
  bool holding = false;
  auto push = [&](double t, StepId i) SCIN_NVLS_INLINE {
    if (holding) heap.push(held);
    held = Item{t, i};
    holding = true;
  };
  for (int r = 0; r < n; ++r) push(0.0, static_cast<StepId>(r));
  auto release = [&](StepId nx, double f) SCIN_NVLS_INLINE {
    ready[nx] = f;
    if (--pending[nx] == 0) push(f, nx);
  };

  // A barrier's waits each depend on all n signals: each wait is ready at the
  // latest signal's finish (the max from 0, in any order the same), and all
  // are released, in order, by the last signal, as n x n releases would.
  double barrier_ready[2] = {0.0, 0.0};
  int barrier_count[2] = {0, 0};
  auto barrier = [&](int b, StepId waits, double f) {
    barrier_ready[b] = std::max(barrier_ready[b], f);
    if (++barrier_count[b] == n)
      for (int j = 0; j < n; ++j) release(waits + static_cast<StepId>(j), barrier_ready[b]);
  };

  std::size_t done = 0;

  // The periodic jump (nvls_jump.h; docs/model.md section 3).
  Jump jump_at({n, chunks, first_chunk, arrive1, ready, start, finish, pending, bound, bound_member, rec_u, taken,
                taken_at, taken_n, done, heap, members_e, members_i, unit, size_of, loads},
               work, jump && alone && chunks >= 16);
  bool jump_on = jump_at.on();

  while (holding || !heap.empty()) {
    Item top;
    if (holding && (heap.empty() || ready_queue::before(held, heap.front()))) {
      top = held;
    } else {
      if (holding) heap.push(held);
      top = heap.pop();
    }
    holding = false;
    if (jump_on) {
      const bool jumped = jump_at.popped(top);
      jump_on = jump_at.on();
      if (jumped) continue;
    }
    const auto [r, id] = top;
    if ((++done & 0x3ff) == 0) {
      ctx.check();
      ctx.report(static_cast<double>(done) / static_cast<double>(total));
    }
    const Id d = decode(id);
    const bool xfer = d.k == K::Load || d.k == K::Store;
    const std::size_t k = xfer ? static_cast<std::size_t>(d.r) * uc + static_cast<std::size_t>(d.c) : 0;
    // (cost_of(d) and latency_of(d), read once per step)
    const std::uint8_t z = xfer ? size_of[k] : 0;
    const StepCost& c = !xfer ? cost_of(d) : d.k == K::Load ? loads[z].c : stores[z].c;
    const double latency = !xfer ? latency_of(d) : d.k == K::Load ? load_l[z] : store_l[z];
    const double t0 = r + c.fixed_ns;
    double end = t0;
    if (xfer) {
      const std::size_t x = 2 * k + (d.k == K::Store ? 1 : 0);
      bound[x] = 0;
      // Uses in step_cost's order (the first of the latest ends is the bound one):
      // a load's E members, its I member, the unit; a store's E member, its I members.
      auto ended = [&](double e, std::uint8_t code, int member) SCIN_NVLS_INLINE {
        if (e > end) end = e, bound[x] = code, bound_member[x] = member;
      };
      double* const ms = alone ? mstart + x * stride : nullptr;  // (members alone: x's row)
      StepId* const mh = alone ? mhold + x * stride : nullptr;
      if (d.k == K::Load) {
        const Rep& p = loads[z];
        if (p.e_amount > 0) {
          const auto [e, m] = members_e.shared(r, t0, p.e_d, id, ms, mh);
          ended(e, 1, m);
        }
        if (p.i_amount > 0) ended(members_i.own(r, d.r, t0, p.i_d, id, alone ? ms + un : nullptr, alone ? mh + un : nullptr), 2, d.r);
        if (p.has_u && p.u_amount > 0) {
          const double du = p.u_d;
          unit.prune(r);
          StepId h = kNoStep;
          const double st = unit.book(t0, du, id, h);
          rec_u[k] = {st, st + du, h};
          ended(st + du, 3, 0);
        }
      } else {
        const Rep& p = stores[z];
        if (p.e_amount > 0) ended(members_e.own(r, d.r, t0, p.e_d, id, alone ? ms + un : nullptr, alone ? mh + un : nullptr), 1, d.r);
        if (p.i_amount > 0) {
          const auto [e, m] = members_i.shared(r, t0, p.i_d, id, ms, mh);
          ended(e, 2, m);
        }
      }
      taken_at[x] = static_cast<std::uint32_t>(taken_n);
      taken[taken_n++] = {id, static_cast<std::uint32_t>(k), static_cast<std::uint16_t>(d.r), d.k == K::Load};
      if (jump_on) jump_at.took(x);
    }
    start[id] = r;
    finish[id] = end + latency;
    const double f = finish[id];
    switch (d.k) {
      case K::Launch: release(arrive0 + id, f); break;
      case K::Arrive0: barrier(0, wait0, f); break;
      case K::Wait0:
        for (int c2 = 0; c2 < std::min(chunks, 2); ++c2) release(chunk_id(d.r, c2, false), f);
        break;
      case K::Load: release(id + 1, f); break;
      case K::Store:
        if (d.c + 2 < chunks) release(chunk_id(d.r, d.c + 2, false), std::max(f, finish[wait0 + static_cast<StepId>(d.r)]));
        if (d.c == chunks - 1) release(arrive1 + static_cast<StepId>(d.r), f);
        break;
      case K::Arrive1: barrier(1, wait1, f); break;
      case K::Wait1: break;
    }
  }
  if (done != total) return std::nullopt;
  if (jumped_chunks) *jumped_chunks = jump_at.jumped();
  AnalyticResult res;
  // The copies' records (nvls_jump.h) are not written unless every step's
  // timing is asked for: a copy's is read as the translate of the record
  // back() periods before it (`fin`: a step's finish).
  if (with_steps) jump_at.materialise();
  const Period& per = jump_at.period();
  auto fin = [&](StepId i) { return jump_at.finish_of(i); };
  const StepId last = jump_at.latest(total);
  res.time_ns = fin(last);
  if (with_steps) {
    res.steps.resize(total);
    for (std::size_t i = 0; i < total; ++i) res.steps[i] = StepTiming{start[i], finish[i]};
  }
  // max_link_bytes (nvls_work.h).
  res.max_link_bytes = link_bytes(s, by_row, row, sizes, uc);
  if (!(res.max_link_bytes >= 0)) return std::nullopt;

  // The critical path, walked back as run_analytic walks it. A use on a
  // member of E or I queued behind the reservation that ends where it starts
  // on that member, its holder: the same class and member's use of the holder
  // step. Members alone recorded each use's start and holder as booked (a
  // copy's: the translate of the reference period's). Groups keep no holders:
  // the members the path visits are booked again alone (their uses in the
  // order taken, with the same ready times: the same reservations), keeping
  // each use's start, end and holder; a replay stops at the use the walk asks
  // for and goes on from there if a later question needs more (each member
  // mostly booked once). The walk repeats its stretch through the copies
  // where it translates (nvls_walk.h).
  Replays replays(work, {n, taken, taken_at, start, loads, stores, size_of, pairs, first_chunk, jump_at, skip_copies});
  thread_local std::vector<WalkRepeat::Entry> walk_log;
  WalkRepeat rep(per, walk_log);
  auto bound_dep = [&](StepId i) {
    const Id d = decode(i);
    auto latest = [&](StepId from, int count) {
      StepId b = kNoStep;
      double best = -1;
      for (int j = 0; j < count; ++j)
        if (finish[from + static_cast<StepId>(j)] > best) {
          best = finish[from + static_cast<StepId>(j)];
          b = from + static_cast<StepId>(j);
        }
      return b;
    };
    switch (d.k) {
      case K::Launch: return kNoStep;
      case K::Arrive0: return static_cast<StepId>(d.r);
      case K::Wait0: return latest(arrive0, n);
      case K::Load: {
        StepId b = wait0 + static_cast<StepId>(d.r);
        if (d.c >= 2 && fin(chunk_id(d.r, d.c - 2, true)) > finish[b]) b = chunk_id(d.r, d.c - 2, true);
        if (rep.on()) {  // (a repeat needs the store to decide in every translate)
          if (b == wait0 + static_cast<StepId>(d.r)) {
            rep.not_periodic();
          } else {
            rep.read_chunk(d.c - 2);
            rep.margin(fin(b) - finish[wait0 + static_cast<StepId>(d.r)]);
          }
        }
        return b;
      }
      case K::Store: return i - 1;  // its ld_reduce
      case K::Arrive1: return chunk_id(d.r, chunks - 1, true);
      default: return latest(arrive1, n);
    }
  };
  // Members alone: the member uses as booked (replays for groups, and where `skip_copies` is off: tests).
  const bool recorded = alone && skip_copies;
  int translated = 0;  // member uses of the copies read (recorded)
  Path path{work.path};
  StepId cur = last;
  int cls = -1;  // -1: the whole step (latency and the use that ended last); 1 E, 2 I, 3 the NVLS unit
  int member = 0;  // for E and I: which member's queue
  while (cur != kNoStep) {
    const bool push = path.empty() || path.back() != cur;
    const Id d = decode(cur);
    const bool xfer = d.k == K::Load || d.k == K::Store;
    if (rep.on()) {  // (member: meaningful for E and I only)
      rep.enter(cur, cls, cls == 1 || cls == 2 ? member : 0, xfer ? d.c : -1, path.size(), push, res.breakdown);
      if (rep.repeat(cur, path, res.breakdown)) continue;
    }
    if (push) path.push_back(cur);
    const StepCost& c = cost_of(d);
    const std::size_t k = xfer ? static_cast<std::size_t>(d.r) * uc + static_cast<std::size_t>(d.c) : 0;
    const std::size_t x = 2 * k + (d.k == K::Store ? 1 : 0);
    const int jb = xfer ? jump_at.back(cur) : 0;  // (a copy's record: the one jb periods back's)
    const std::size_t xb = x - 2 * static_cast<std::size_t>(per.p * jb);
    if (cls < 0) {
      for (int t = 0; t < kTermCount; ++t) res.breakdown.ns[t] += c.latency_ns[t];
      cls = xfer ? bound[xb] : 0;
      member = xfer ? bound_member[xb] : 0;
      if (cls == 0) {  // no resource: fixed cost, then the latest dep
        res.breakdown[c.fixed_term] += c.fixed_ns;
        cur = bound_dep(cur);
        cls = -1;
        continue;
      }
    }
    const Rep& p = d.k == K::Load ? loads[size_of[k]] : stores[size_of[k]];
    bool periodic = true;
    Rec rec;
    if (cls == 3) {
      const Rec& u = rec_u[xb / 2];
      const double dt = static_cast<double>(jb) * per.P;
      const auto did = static_cast<StepId>(2 * per.p * jb);
      rec = {u.start + dt, u.end + dt, u.holder == kNoStep ? kNoStep : u.holder + did};
    } else if (recorded) {  // as booked (the shared use's member's, else the own use's)
      const bool sh = (d.k == K::Load) == (cls == 1);
      rec = recorded_use(mstart, mhold, xb * stride + (sh ? static_cast<std::size_t>(member) : un),
                         cls == 1 ? p.e_d : p.i_d, jb, per);
      translated += jb > 0 ? 1 : 0;
    } else {
      rec = replays.use(cls, member, x, periodic);
    }
    if (rep.on() && !periodic) rep.not_periodic();
    res.breakdown[cls == 1 ? p.e_term : cls == 2 ? p.i_term : p.u_term] += rec.end - rec.start;
    if (rec.holder != kNoStep) {  // queued behind the previous user of this member
      cur = rec.holder;
      continue;
    }
    res.breakdown[c.fixed_term] += c.fixed_ns;
    cur = bound_dep(cur);
    cls = -1;
  }
  if (repeats) repeats[0] = rep.repeated(), repeats[1] = recorded ? translated : replays.skipped();
  path.out(res.critical_path);
  return res;
}

}  // namespace

std::optional<AnalyticResult> run_analytic_nvls(const Config& cfg, const Collective& c, const RunContext& ctx,
                                                bool with_steps) {
  return nvls_alike(cfg, c, ctx, with_steps, nullptr);
}

std::optional<AnalyticResult> run_analytic_nvls_jump(const Config& cfg, const Collective& c, bool with_steps, bool jump,
                                                     int* jumped_chunks, int* repeats, bool skip_copies) {
  return nvls_alike(cfg, c, {}, with_steps, nullptr, jump, jumped_chunks, repeats, skip_copies);
}

std::size_t nvls_alike_steps(const Config& cfg, const Collective& c) {
  std::size_t steps = 0;
  return nvls_alike(cfg, c, {}, false, &steps) ? steps : 0;
}

}  // namespace scin
