// SCIN and SCIN+INQ by classes of ports (issue 14; engines/analytic/scin_alike.h):
// the analytic result without compiling the schedule equals booking the
// compiled schedule to the last bit (time, every breakdown term, the critical
// path, max_link_bytes, every step's start and finish).
#include <algorithm>
#include <cstdint>
#include <optional>
#include <stop_token>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "base/cancel.h"
#include "engines/analytic/analytic.h"
#include "engines/analytic/jump_counters.h"
#include "engines/analytic/scin_alike.h"
#include "engines/analytic/scin_tiers.h"
#include "engines/simulate.h"
#include "fabric/params.h"
#include "fabric/preset.h"
#include "shortcut_tests.h"
#include "schedule/algorithms.h"
#include "schedule/builder.h"
#include "schedule/compile_options.h"

using namespace scin;

namespace {

// run_analytic_scin against booking the compiled schedule. False if the fast
// path declined (nothing compared).
bool expect_scin_alike_exact(const Config& c, bool inq, std::uint64_t bytes, DType dtype = DType::Bf16) {
  SCOPED_TRACE(fmt::format("{} {} GPUs, {} planes, {} B", inq ? "scin-inq" : "scin", c.fabric.gpus, c.fabric.planes, bytes));
  const Collective coll{bytes, dtype};
  const std::optional<AnalyticResult> fast = run_analytic_scin(c, coll, inq, {}, true);
  if (!fast) return false;
  const Schedule s = compile(c, inq ? Algorithm::ScinInq : Algorithm::Scin, coll);
  const AnalyticResult full = run_analytic(c, s);
  EXPECT_EQ(fast->steps.size(), s.steps.size());
  expect_same_booking(*fast, full, s.steps.size());
  EXPECT_GT(full.critical_path.size(), 3u);
  EXPECT_GT(full.time_ns, 0.0);
  EXPECT_GT(scin_alike_steps(c, coll, inq), 0u);
  return true;
}

const std::uint64_t kSizes[] = {8, std::uint64_t{1} << 16, (std::uint64_t{1} << 20) + 2, std::uint64_t{1} << 26,
                                std::uint64_t{1} << 30};

}  // namespace

// Every shipped star with an ISA, both algorithms, 8 B - 1 GiB (8 B leaves
// most waves empty; 1 MiB + 2 B gives stripes and waves of two sizes; 1 GiB
// gives 1024 waves per plane on hgx-h200-8).
TEST(ScinAlike, EqualsTheFullBookingOnTheShippedStars) {
  for (const char* preset : {"hgx-h200-8", "hgx-b200-8", "hgx-h100-8", "gb200-nvl72", "scin-fpga-4"}) {
    const Config c = load_preset(preset);
    for (bool inq : {false, true})
      for (std::uint64_t bytes : kSizes) {
        if (std::string(preset) == "gb200-nvl72" && bytes > (std::uint64_t{1} << 26)) continue;  // (the full booking's time)
        EXPECT_TRUE(expect_scin_alike_exact(c, inq, bytes)) << preset << " " << inq << " " << bytes;
      }
  }
}

// More GPUs, planes of unequal stripes, another dtype.
TEST(ScinAlike, EqualsTheFullBookingAtMoreGpusAndUnevenStripes) {
  for (bool inq : {false, true}) {
    EXPECT_TRUE(expect_scin_alike_exact(star_of("hgx-h200-8", 3), inq, (std::uint64_t{1} << 16) + 6));
    EXPECT_TRUE(expect_scin_alike_exact(star_of("hgx-h200-8", 3), inq, (std::uint64_t{1} << 24) + 6));
    EXPECT_TRUE(expect_scin_alike_exact(star_of("hgx-h200-8", 64), inq, (std::uint64_t{1} << 20) + 6));
    EXPECT_TRUE(expect_scin_alike_exact(star_of("hgx-b200-8", 128), inq, std::uint64_t{1} << 26));
    EXPECT_TRUE(expect_scin_alike_exact(star_of("hgx-h200-8", 256), inq, std::uint64_t{1} << 20));
    EXPECT_TRUE(expect_scin_alike_exact(load_preset("hgx-h200-8"), inq, (std::uint64_t{1} << 22) + 12, DType::Fp32));
    Config planes3 = load_preset("hgx-h200-8");
    set_param(planes3, "fabric.planes", 3);  // stripes of two sizes at every size
    validate(planes3);
    for (std::uint64_t bytes : {std::uint64_t{1} << 20, std::uint64_t{1} << 28})
      EXPECT_TRUE(expect_scin_alike_exact(planes3, inq, bytes)) << bytes;
  }
}

// Options that change the shape of the booking: launches that end at
// different times (ranks in classes, INQ), a slow reduce unit and a slow INQ
// unit (waves queue at the units), few and many waves in flight, a small ISA
// buffer (many waves), quantisation fused into the kernels (no HBM use),
// quantisation blocks that do not divide the waves, a slow HBM.
TEST(ScinAlike, EqualsTheFullBookingWithOtherOptions) {
  std::vector<std::pair<const char*, double>> sets = {
      {"accelerator.gpus_per_process", 4}, {"switch.isa.reduce_GBps", 20}, {"switch.isa.inq_GBps", 15},
      {"switch.isa.waves", 1},             {"switch.isa.waves", 64},       {"switch.isa.buffer_bytes", 65536},
      {"quant.fused", 1},                  {"switch.isa.max_outstanding_bytes", 4096},
      {"quant.block_elems", 1000},  // INQ: waves of three sizes (the last clipped)
      {"accelerator.hbm_bandwidth_GBps", 100}};  // INQ: quantise chains that bind the reads
  for (const auto& [path, value] : sets) {
    Config c = star_of("hgx-h200-8", 16);
    set_param(c, path, value);
    if (std::string(path) == "accelerator.gpus_per_process") set_param(c, "accelerator.launch_serial_ns", 700);
    validate(c);
    for (bool inq : {false, true})
      for (std::uint64_t bytes : {std::uint64_t{4096}, (std::uint64_t{1} << 20) + 2, std::uint64_t{1} << 26})
        EXPECT_TRUE(expect_scin_alike_exact(c, inq, bytes)) << path << "=" << value << " " << inq << " " << bytes;
  }
}

// The last stripe's waves are kept per thread (scin_alike.cc) and split
// again when the count, the chunks or the alignment differ: calls in a row
// whose stripes have one count but other chunks (a smaller ISA buffer) or
// another alignment (SCIN's 1 element, SCIN+INQ's quantisation block of 32),
// each exact. (256,256 B: 4 stripes of 32,032 elements, 1,001 blocks.)
TEST(ScinAlike, KeptWavesFollowCountChunksAndAlignment) {
  const Config base = load_preset("hgx-h200-8");
  ASSERT_EQ(base.fabric.planes, 4);
  ASSERT_EQ(base.quant.block_elems, 32);
  Config small_buffer = base;
  set_param(small_buffer, "switch.isa.buffer_bytes", 65536);
  validate(small_buffer);
  ASSERT_NE(build::scin_chunks(base, 32032), build::scin_chunks(small_buffer, 32032));
  struct Call {
    const Config* c;
    bool inq;
    std::uint64_t bytes;
  };
  const std::uint64_t odd = 256256, other = (std::uint64_t{1} << 20) + 6;
  const Call calls[] = {
      {&base, false, odd}, {&small_buffer, false, odd}, {&base, false, odd},  // chunks
      {&base, true, odd},  {&small_buffer, true, odd},  {&base, true, odd},   // chunks
      {&base, false, odd}, {&base, true, odd},          {&base, false, odd},  // alignment
      {&base, false, other}, {&base, false, odd},       {&base, false, other}};  // count
  for (const Call& k : calls) EXPECT_TRUE(expect_scin_alike_exact(*k.c, k.inq, k.bytes)) << k.inq << " " << k.bytes;
}

// Not a one-switch star, or no ISA (or no INQ): declined, the caller compiles.
TEST(ScinAlike, OnlyTheStarWithAnIsaIsCandidate) {
  const Collective coll{std::uint64_t{1} << 20, DType::Bf16};
  for (bool inq : {false, true}) {
    EXPECT_FALSE(run_analytic_scin(load_preset("nvl36x2"), coll, inq).has_value());  // two tiers
    EXPECT_FALSE(run_analytic_scin(load_preset("mesh-8"), coll, inq).has_value());   // no switch
    EXPECT_FALSE(run_analytic_scin(load_preset("hgx-a100-8"), coll, inq).has_value());  // no ISA
    EXPECT_EQ(scin_alike_steps(load_preset("nvl36x2"), coll, inq), 0u);
  }
  Config no_inq = load_preset("hgx-h200-8");
  no_inq.sw.isa.inq = false;
  EXPECT_TRUE(run_analytic_scin(no_inq, coll, false).has_value());
  EXPECT_FALSE(run_analytic_scin(no_inq, coll, true).has_value());
}

// simulate() takes the fast path for the analytic engine and gives what
// booking the compiled schedule gives (and its variant).
TEST(ScinAlike, SimulateAgreesWithBookingTheCompiledSchedule) {
  for (const Config& c : {load_preset("hgx-h200-8"), star_of("hgx-b200-8", 64)})
    for (Algorithm a : {Algorithm::Scin, Algorithm::ScinInq})
      for (std::uint64_t bytes : {std::uint64_t{64}, std::uint64_t{1} << 20, std::uint64_t{1} << 28})
        expect_simulate_books_as_compiled(c, a, bytes);
}

// It polls the stop token while booking.
TEST(ScinAlike, StopsWithCancelled) {
  std::stop_source src;
  RunContext ctx{src.get_token(), [&](double) { src.request_stop(); }};
  EXPECT_THROW(run_analytic_scin(star_of("hgx-h200-8", 1024), {std::uint64_t{1} << 20, DType::Bf16}, false, ctx),
               Cancelled);
}

// ---------------------------------------------------------------- the parts' booking (part_booking.h, scin_steps.h)

#include <random>

#include "engines/analytic/ready_queue.h"
#include "engines/analytic/reserve.h"
#include "engines/analytic/scin_steps.h"
#include "part_compare.h"

namespace {

// The reference: book() over a part as it was before the slots and the
// back-first search (a heap of every ready step, analytic::reserve, each
// use's duration divided in the loop).
struct RefPart {
  struct Busy {
    double start, end;
    int step, use;
  };
  struct Queue {
    std::vector<Busy> v;
    std::size_t head = 0;
  };
  std::vector<double> start, finish;
  std::vector<std::int8_t> bound;
  std::vector<std::vector<part::Rec>> recs;

  void run(const std::vector<const part::Cost*>& cost, std::vector<double> ready, std::vector<int> pending,
           const std::vector<long long>& succ, int queues) {
    const std::size_t m = cost.size();
    std::vector<Queue> qs(static_cast<std::size_t>(queues));
    start.assign(m, 0);
    finish.assign(m, 0);
    bound.assign(m, -1);
    recs.assign(m, {});
    std::vector<ready_queue::Item> heap;
    for (std::size_t i = 0; i < m; ++i)
      if (pending[i] == 0) ready_queue::push(heap, ready[i], static_cast<StepId>(i));
    while (!heap.empty()) {
      const auto [r, id] = ready_queue::pop(heap);
      const std::size_t i = id;
      const StepCost& c = cost[i]->c;
      const double t0 = r + c.fixed_ns;
      double end = t0, fed_end = t0;
      int fed_by = -1;
      recs[i].assign(c.uses.size(), part::Rec{});
      for (std::size_t u = 0; u < c.uses.size(); ++u) {
        const ResourceUse& us = c.uses[u];
        part::Rec& rec = recs[i][u];
        rec = part::Rec{t0, t0, -1, -1};
        if (us.amount_bytes <= 0) continue;
        const double d = us.amount_bytes / us.rate_GBps;
        double st = t0;
        int holder = -1, holder_use = -1;
        if (us.fed_by_transfers && fed_end - d > st) {
          st = fed_end - d;
          holder = static_cast<int>(i);
          holder_use = fed_by;
        }
        analytic::reserve(qs[static_cast<std::size_t>(cost[i]->q[u])], r, st, d, holder, holder_use, static_cast<int>(i),
                          static_cast<int>(u));
        rec = part::Rec{st, st + d, holder, holder_use};
        if (!us.fed_by_transfers && rec.end > fed_end) fed_end = rec.end, fed_by = static_cast<int>(u);
        if (rec.end > end) end = rec.end, bound[i] = static_cast<std::int8_t>(u);
      }
      start[i] = r;
      finish[i] = end + cost[i]->l;
      if (const long long j = succ[i]; j >= 0) {
        const auto uj = static_cast<std::size_t>(j);
        ready[uj] = std::max(ready[uj], finish[i]);
        if (--pending[uj] == 0) ready_queue::push(heap, ready[uj], static_cast<StepId>(uj));
      }
    }
  }
};

// A random part of `m` steps in `chains` chains (step i of chain i % chains,
// or in runs), costs from a few kinds over `queues` queues. Times on a coarse
// grid, so that ready times tie (the index decides), reservations touch
// (blocks join) and gaps are filled.
void expect_part_books_as_reference(std::mt19937_64& rng, std::size_t m, std::size_t chains, int queues, bool runs) {
  std::uniform_int_distribution<int> small(0, 7);
  std::vector<part::Cost> kinds(6);
  for (std::size_t k = 0; k < kinds.size(); ++k) {
    StepCost c;
    c.fixed_ns = small(rng) % 3 == 0 ? 0.0 : 0.5 * small(rng);
    c.latency_ns[0] = small(rng) % 2 ? 0.0 : 0.25 * small(rng);
    c.latency_ns[2] = 1.0 / 3.0 * (small(rng) % 3);
    const int uses = 1 + small(rng) % 3;
    for (int u = 0; u < uses; ++u) {
      ResourceUse us;
      us.amount_bytes = small(rng) == 0 ? 0.0 : 1.0 + small(rng);
      us.rate_GBps = small(rng) % 2 ? 1.0 : 0.5 + 0.25 * small(rng);
      us.fed_by_transfers = u > 0 && small(rng) % 2;
      c.uses.push_back(us);
    }
    kinds[k].set(c);
    for (int u = 0; u < uses; ++u) kinds[k].q[static_cast<std::size_t>(u)] = small(rng) % queues;
  }
  part::Part pt;
  pt.resize(m);
  std::vector<long long> succ(m, -1);
  std::vector<std::size_t> last(chains, m);  // each chain's last step so far
  const std::size_t run_len = (m + chains - 1) / chains;
  for (std::size_t i = 0; i < m; ++i) {
    const std::size_t ch = runs ? i / run_len : i % chains;
    pt.cost[i] = &kinds[static_cast<std::size_t>(small(rng)) % kinds.size()];
    pt.ready[i] = 0.5 * small(rng) + (small(rng) % 4 == 0 ? 0.25 * static_cast<double>(i) : 0.0);
    if (last[ch] < m) {
      succ[last[ch]] = static_cast<long long>(i);
      pt.pending[i] = 1;
    }
    last[ch] = i;
  }
  RefPart ref;
  ref.run(pt.cost, pt.ready, pt.pending, succ, queues);
  pt.run(queues, [&](std::size_t i) { return succ[i]; }, {});
  for (std::size_t i = 0; i < m; ++i) {
    SCOPED_TRACE(fmt::format("step {} of {}, {} chains", i, m, chains));
    ASSERT_EQ(pt.start[i], ref.start[i]);
    ASSERT_EQ(pt.finish[i], ref.finish[i]);
    ASSERT_EQ(pt.bound[i], ref.bound[i]);
    ASSERT_EQ(pt.cost[i]->n, ref.recs[i].size());
    for (std::size_t u = 0; u < ref.recs[i].size(); ++u) {
      const part::Rec& a = pt.recs[pt.first[i] + u];
      const part::Rec& b = ref.recs[i][u];
      ASSERT_EQ(a.start, b.start);
      ASSERT_EQ(a.end, b.end);
      ASSERT_EQ(a.holder, b.holder);
      ASSERT_EQ(a.holder_use, b.holder_use);
    }
  }
}

}  // namespace

// The slots (a tournament over the chains' heads) and the back-first search
// book as the heap and analytic::reserve do, use for use, on random chains:
// 1-70 chains (one slot, a power of two, one more, more than the steps),
// 1-3 queues, parts of 1-3,000 steps; the same Part reused between runs.
TEST(ScinAlike, PartBooksAsTheHeapAndReserve) {
  std::mt19937_64 rng(14);
  for (std::size_t chains : {1, 2, 3, 4, 5, 8, 16, 17, 33, 70})
    for (int queues : {1, 2, 3})
      for (std::size_t m : {1, 7, 64, 500, 3000})
        for (bool runs : {false, true}) expect_part_books_as_reference(rng, m, chains, queues, runs);
}

// split_append is build::split moved into the outer span, piece for piece:
// 1-4,096 parts, sizes from 0 up to 2^52 near multiples of the part count
// and at random, aligns 1, 16 and 1000, and where P U would not fit in 64 bits.
TEST(ScinAlike, SplitAppendIsSplit) {
  std::mt19937_64 rng(7);
  std::size_t checked = 0;
  auto check = [&](std::uint64_t elems, int parts, std::uint64_t align) {
    const build::Span outer{rng() % 1000, elems};
    std::vector<build::Span> got = {{1, 2}};  // (appended after what is there)
    scin_steps::split_append(outer, parts, align, got);
    const std::vector<build::Span> want = build::split(elems, parts, align);
    ASSERT_EQ(got.size(), want.size() + 1) << elems << " " << parts << " " << align;
    for (std::size_t i = 0; i < want.size(); ++i) {
      ASSERT_EQ(got[i + 1].offset, outer.offset + want[i].offset) << elems << " " << parts << " " << align << " " << i;
      ASSERT_EQ(got[i + 1].count, want[i].count) << elems << " " << parts << " " << align << " " << i;
      ++checked;
    }
  };
  for (std::uint64_t align : {1, 16, 1000})
    for (int parts : {1, 2, 3, 7, 16, 64, 1000, 1024, 4095, 4096}) {
      const auto p = static_cast<std::uint64_t>(parts);
      for (std::uint64_t elems : {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{5}, p - 1, p, p + 1, 3 * p * align - 1,
                                  3 * p * align + 1, (std::uint64_t{1} << 26) + 6, (std::uint64_t{1} << 29) + 2,
                                  (std::uint64_t{1} << 52) - 1, rng() % (std::uint64_t{1} << 40)})
        check(elems, parts, align);
    }
  check(~std::uint64_t{0} / 3, 4096, 1);  // P U wraps: build::split itself
  EXPECT_GT(checked, 100000u);
}

// ---------------------------------------------------------------- the waves and chains booked in order (part_booking.h)

namespace {

using part_test::expect_same_part;

// A random cost on `queues` (in order; uses after the first fed with `fed`),
// amounts on a coarse grid (some 0: not held), rates of a few kinds.
part::Cost random_cost(std::mt19937_64& rng, std::initializer_list<int> queues, bool fed) {
  std::uniform_int_distribution<int> small(0, 7);
  StepCost c;
  c.fixed_ns = small(rng) % 3 == 0 ? 0.0 : 0.5 * small(rng);
  c.latency_ns[0] = small(rng) % 2 ? 0.0 : 0.25 * small(rng);
  c.latency_ns[2] = 1.0 / 3.0 * (small(rng) % 3);
  for (std::size_t u = 0; u < queues.size(); ++u) {
    ResourceUse us;
    us.amount_bytes = small(rng) == 0 ? 0.0 : 1.0 + small(rng);
    us.rate_GBps = small(rng) % 2 ? 1.0 : 0.5 + 0.25 * small(rng);
    us.fed_by_transfers = fed && u > 0;
    c.uses.push_back(us);
  }
  part::Cost out;
  out.set(c);
  std::size_t u = 0;
  for (int q : queues) out.q[u++] = q;
  return out;
}

// A plane's waves as scin_alike.cc lays them out (pw steps per wave, a
// multicast releasing the read F waves on), costs of one or two wave sizes,
// reads ready at a start (`spread`: and later with the wave, now and then
// out of order). Returns whether run_waves answered (then it equals run()).
bool waves_book_as_run(std::mt19937_64& rng, int pw, int F, std::size_t W, bool two_sizes, int spread) {
  std::uniform_int_distribution<int> small(0, 7);
  std::vector<part::Cost> kinds;
  for (int z = 0; z < (two_sizes ? 2 : 1); ++z) {
    kinds.push_back(pw == 3 ? random_cost(rng, {0, 2, 3}, true) : random_cost(rng, {0, 2}, true));
    if (pw == 3) kinds.push_back(random_cost(rng, {3}, false));
    kinds.push_back(random_cost(rng, {1}, false));
  }
  const auto upw = static_cast<std::size_t>(pw);
  part::Part fast, full;
  for (part::Part* pt : {&fast, &full}) pt->resize(upw * W);
  std::mt19937_64 same = rng;  // (the same ready times for both)
  for (part::Part* pt : {&fast, &full}) {
    std::mt19937_64 r = same;
    double t = 0.5 * static_cast<double>(small(r));
    for (std::size_t w = 0; w < W; ++w) {
      const std::size_t z = two_sizes && (w % 5 == 3 || w + 1 == W) ? 1 : 0;
      for (std::size_t sub = 0; sub < upw; ++sub) {
        pt->cost[upw * w + sub] = &kinds[z * upw + sub];
        pt->pending[upw * w + sub] = sub > 0 || w >= static_cast<std::size_t>(F) ? 1 : 0;
      }
      if (spread == 1) t += 0.25 * small(r);
      if (spread == 2 && small(r) == 0) t -= 1.0;
      pt->ready[upw * w] = t;
    }
  }
  rng.discard(64);
  if (!fast.run_waves(pw, F, {})) return false;
  std::vector<long long> next(upw * W);
  for (std::size_t w = 0; w < W; ++w) {
    for (std::size_t sub = 0; sub + 1 < upw; ++sub) next[upw * w + sub] = static_cast<long long>(upw * w + sub + 1);
    next[upw * w + upw - 1] = w + static_cast<std::size_t>(F) < W ? static_cast<long long>(upw * (w + static_cast<std::size_t>(F))) : -1;
  }
  full.run(4, [&](std::size_t i) { return next[i]; }, {});
  expect_same_part(fast, full);
  return true;
}

}  // namespace

// run_waves (a plane's waves taken wave after wave, reads and requantises
// merged by key, queues booked at their ends) books as run() wherever it
// answers, and answers for the pipelines it is for: SCIN and SCIN+INQ, 1-64
// waves in flight, 1-600 waves of one or two sizes, reads ready together, in
// order, or out of order (then it may decline).
TEST(ScinAlike, WavesBookAsRun) {
  std::mt19937_64 rng(51);
  int answered = 0, tried = 0;
  for (int pw : {2, 3})
    for (int F : {1, 2, 3, 16, 64})
      for (std::size_t W : {1, 2, 5, 17, 100, 600})
        for (bool two : {false, true})
          for (int spread : {0, 1, 2})
            for (int rep = 0; rep < 3; ++rep) {
              SCOPED_TRACE(fmt::format("pw {} F {} W {} two sizes {} spread {}", pw, F, W, two, spread));
              ++tried;
              if (waves_book_as_run(rng, pw, F, W, two, spread)) ++answered;
              if (HasFatalFailure()) return;
            }
  EXPECT_GT(answered, tried / 2) << answered << " of " << tried;
}

// run_chains (up to 8 chains on one queue, heads by a scan) books as run()
// wherever it answers: 1-8 chains of 1-300 steps, costs of a few kinds, some
// without uses, chains ready together or apart.
TEST(ScinAlike, ChainsBookAsRun) {
  std::mt19937_64 rng(52);
  std::uniform_int_distribution<int> small(0, 7);
  int answered = 0, tried = 0;
  for (std::size_t chains : {1, 2, 3, 4, 8, 9})
    for (std::size_t len : {1, 3, 40, 300})
      for (int rep = 0; rep < 6; ++rep) {
        std::vector<part::Cost> kinds;
        for (int k = 0; k < 3; ++k) kinds.push_back(random_cost(rng, {0}, false));
        kinds.push_back(random_cost(rng, {}, false));
        const std::size_t m = chains * len;
        std::vector<std::uint8_t> head(m, 0);
        part::Part fast, full;
        const double l = 0.5 * small(rng);
        for (part::Part* pt : {&fast, &full}) pt->resize(m);
        for (std::size_t k = 0; k < m; ++k) {
          head[k] = k % len == 0;
          const part::Cost* c = &kinds[rep % 2 ? static_cast<std::size_t>(small(rng)) % kinds.size() : (k % len) % 5 == 4 ? 1 : 0];
          const double ready = head[k] ? (rep % 3 == 0 ? l : 0.25 * small(rng)) : 0.0;
          for (part::Part* pt : {&fast, &full}) {
            pt->cost[k] = c;
            pt->ready[k] = ready;
            pt->pending[k] = head[k] ? 0 : 1;
          }
        }
        ++tried;
        if (!fast.run_chains(head.data(), {})) continue;
        ++answered;
        full.run(1, [&](std::size_t k) { return k + 1 < m && !head[k + 1] ? static_cast<long long>(k + 1) : -1LL; }, {});
        SCOPED_TRACE(fmt::format("{} chains of {}, rep {}", chains, len, rep));
        expect_same_part(fast, full);
        if (HasFatalFailure()) return;
      }
  EXPECT_GT(answered, tried / 2) << answered << " of " << tried;
}

namespace {

// run_analytic_scin_tiers against booking the compiled schedule (every plane):
// time, every term, the critical path (the full schedule's indices),
// max_link_bytes. False if it declined.
bool expect_scin_tiers_exact(const Config& c, std::uint64_t bytes, DType dtype = DType::Bf16,
                             Algorithm algo = Algorithm::Scin) {
  SCOPED_TRACE(fmt::format("{} {} GPUs, {} leaves, {} planes, {} B", info(algo).name, c.fabric.gpus,
                           c.fabric.leaves, c.fabric.planes, bytes));
  const Collective coll{bytes, dtype};
  const std::optional<AnalyticResult> fast = run_analytic_scin_tiers(c, coll, algo);
  if (!fast) return false;
  const Schedule s = compile(c, algo, coll);
  const AnalyticResult full = run_analytic(c, s);
  expect_same_booking(*fast, full, 0);
  // (Its links counted in O(steps): answered, and as every region counts them.)
  const std::optional<double> links = scin_tiers_max_link_bytes(s, std::vector<double>(static_cast<std::size_t>(c.fabric.planes), 1.0));
  EXPECT_TRUE(links.has_value());
  if (links) {
    EXPECT_EQ(*links, link_bytes(s).max_link_bytes());
  }
  EXPECT_GT(full.critical_path.size(), 3u);
  std::size_t total = 0;
  ScinTiersRegions regions;
  const std::size_t booked = scin_tiers_steps(c, coll, algo, &total, &regions);
  EXPECT_GT(booked, 0u);
  EXPECT_EQ(total, s.steps.size());  // what estimate() counts
  auto named = [](const Schedule& sc) {
    std::size_t k = 0;
    for (const Step& st : sc.steps) k += st.srcs.size() + st.dsts.size();
    return k;
  };
  EXPECT_EQ(regions.total, named(s));
  // The schedule it books: the counts estimate() takes without compiling it,
  // and its estimate against the compiled one's (1 us and a Step per step to
  // compile): within a factor of two.
  const std::optional<Schedule> reduced = compile_scin_tiers(c, coll, algo);
  if (!reduced) {
    ADD_FAILURE() << "compile_scin_tiers declined where run_analytic_scin_tiers answered";
    return true;
  }
  EXPECT_EQ(booked, reduced->steps.size());
  EXPECT_EQ(regions.booked, named(*reduced));
  const WorkEstimate x = estimate(c, algo, coll, EngineId::Analytic);
  WorkEstimate direct = engine(EngineId::Analytic).estimate(c, *reduced);
  direct.seconds += static_cast<double>(booked) * 1e-6;
  direct.memory_bytes += static_cast<double>(booked) * static_cast<double>(sizeof(Step));
  EXPECT_EQ(x.amount, static_cast<double>(total));
  EXPECT_GT(x.seconds, 0.5 * direct.seconds);
  EXPECT_LT(x.seconds, 2.0 * direct.seconds);
  EXPECT_GT(x.memory_bytes, 0.5 * direct.memory_bytes);
  EXPECT_LT(x.memory_bytes, 2.0 * direct.memory_bytes);
  expect_simulate_books_as_compiled(c, algo, bytes);
  return true;
}

// hgx-h200-8 made two-tier: 64 GPUs on 4 leaves of 16, 2 spines.
Config hgx_two_tier_64() {
  Config c = load_preset("hgx-h200-8");
  set_param(c, "fabric.gpus", 64);
  set_param(c, "fabric.topology", "two-tier");
  set_param(c, "fabric.leaves", 4);
  set_param(c, "fabric.spines", 2);
  set_param(c, "switch.ports", 32);
  validate(c);
  return c;
}

Config nvl576_at(int gpus, int leaves) {
  Config c = load_preset("nvl576-style");
  set_param(c, "fabric.gpus", gpus);
  set_param(c, "fabric.leaves", leaves);
  validate(c);
  return c;
}

}  // namespace

// Two tiers: the planes of each stripe size booked once (SCIN+INQ: each leaf's
// first rank's quantise steps). nvl36x2 as shipped (18 planes: 1 GiB gives
// stripes of two sizes, 64 MiB + 36 B too, 18 x 2^20 elements one),
// nvl576-style at 72 and 144 GPUs, FP32, one spine, oversubscribed trunks.
TEST(ScinTiers, EqualsTheFullBookingOnTwoTiers) {
  const Config nvl36x2 = load_preset("nvl36x2");
  for (const Algorithm algo : {Algorithm::Scin, Algorithm::ScinInq, Algorithm::ScinInqUplink}) {
    for (std::uint64_t bytes : {std::uint64_t{8}, std::uint64_t{1} << 16, (std::uint64_t{1} << 20) + 2, std::uint64_t{1} << 26,
                                (std::uint64_t{1} << 26) + 36, std::uint64_t{18} << 21, std::uint64_t{1} << 30})
      EXPECT_TRUE(expect_scin_tiers_exact(nvl36x2, bytes, DType::Bf16, algo)) << bytes;
    EXPECT_TRUE(expect_scin_tiers_exact(nvl576_at(72, 2), std::uint64_t{1} << 24, DType::Bf16, algo));
    EXPECT_TRUE(expect_scin_tiers_exact(nvl576_at(144, 4), (std::uint64_t{1} << 22) + 2, DType::Bf16, algo));
    EXPECT_TRUE(expect_scin_tiers_exact(nvl36x2, std::uint64_t{1} << 24, DType::Fp32, algo));
    for (const auto& [path, value] : {std::pair<const char*, double>{"fabric.spines", 1}, {"fabric.oversubscription", 4},
                                      {"accelerator.hbm_bandwidth_GBps", 20}, {"quant.block_elems", 256}}) {
      Config c = load_preset("nvl36x2");
      set_param(c, path, value);
      validate(c);
      EXPECT_TRUE(expect_scin_tiers_exact(c, (std::uint64_t{1} << 24) + 2, DType::Bf16, algo)) << path;
    }
  }
}

// SCIN+INQ's planes whose quantise steps are an earlier plane's, later by a
// constant, are taken as that plane's booking translated, not booked
// (scin_inq_planes.cc): hgx-h200-8 made two-tier, its 4 planes of one stripe
// size and waves of one size: one booked, three translated, and the
// result is the full schedule's booking to the last bit. Where waves come in
// two sizes (nvl36x2's 18 planes at 1 GiB: 2^24 blocks do not divide evenly
// over 18 stripes and their waves), planes are booked.
TEST(ScinTiers, InqPlanesAlikeAreTranslatedExactly) {
  const Config c = hgx_two_tier_64();
  for (std::uint64_t bytes : {std::uint64_t{1} << 20, std::uint64_t{1} << 26}) {
    const std::size_t before = part::translated_planes_total();
    EXPECT_TRUE(expect_scin_tiers_exact(c, bytes, DType::Bf16, Algorithm::ScinInq)) << bytes;
    // (expect_scin_tiers_exact runs it twice: run_analytic_scin_tiers, simulate().)
    EXPECT_EQ(part::translated_planes_total() - before, 2u * 3u) << bytes;
  }
  const std::size_t before = part::translated_planes_total();
  EXPECT_TRUE(run_analytic_scin_tiers(load_preset("nvl36x2"), {std::uint64_t{1} << 30, DType::Bf16}, Algorithm::ScinInq));
  EXPECT_LT(part::translated_planes_total() - before, 17u);
}

// SCIN, SCIN+INQ and scin-inq-uplink on two tiers book their first leaf's
// per-leaf steps for every leaf (CompileOptions::leaves_once): the reduced
// schedule has one leaf's reads, acks and flags, and its booking is the full
// schedule's to the last bit (time, every term, the critical path moved to
// the full schedule's steps, link bytes), paced and unregulated ISA waves,
// one and two waves in flight, slow INQ units, several spines, sizes from one
// block to many waves.
TEST(ScinTiers, BooksOneLeafForAll) {
  const Config c = hgx_two_tier_64();
  for (const Algorithm algo : {Algorithm::Scin, Algorithm::ScinInq, Algorithm::ScinInqUplink}) {
    SCOPED_TRACE(info(algo).name);
    const Collective coll{std::uint64_t{1} << 24, DType::Bf16};
    const std::optional<Schedule> reduced = compile_scin_tiers(c, coll, algo);
    ASSERT_TRUE(reduced.has_value());
    std::size_t reads = 0, flags = 0;
    for (const Step& st : reduced->steps) {
      if (st.kind == StepKind::Read && !reduced->is_switch(reduced->buffers[st.srcs[0].buffer].node)) ++reads;
      if (st.kind == StepKind::Signal && reduced->is_switch(st.initiator) && !reduced->is_switch(st.target)) ++flags;
    }
    const std::size_t align = algo == Algorithm::Scin ? 1 : static_cast<std::size_t>(c.quant.block_elems);
    const std::size_t stripe = (std::uint64_t{1} << 23) / 4 / align * align;
    EXPECT_EQ(reads, static_cast<std::size_t>(build::scin_chunks(c, stripe)));  // (one leaf's reads of its ranks, one plane)
    EXPECT_EQ(flags, 16u);  // (its 16 ranks' flags)
    for (const char* regulation : {"paced", "none"})
      for (double in_flight : {1.0, 2.0}) {
        Config v = c;
        set_param(v, "switch.isa.regulation", regulation);
        set_param(v, "switch.isa.waves", in_flight);
        validate(v);
        for (std::uint64_t bytes : {std::uint64_t{64}, (std::uint64_t{1} << 20) + 128, std::uint64_t{1} << 26})
          EXPECT_TRUE(expect_scin_tiers_exact(v, bytes, DType::Bf16, algo)) << regulation << " " << in_flight;
      }
    Config slow = nvl576_at(144, 4);
    set_param(slow, "switch.isa.inq_GBps", 50);
    set_param(slow, "fabric.spines", 3);
    validate(slow);
    EXPECT_TRUE(expect_scin_tiers_exact(slow, (std::uint64_t{1} << 24) + 2, DType::Bf16, algo));
  }
}

// scin_tiers_full_step (the builder's layout) sends each step of a plane built
// for its first leaf alone to the same step of the full plane: the same kind,
// on the same spine, or on leaf `tail` (its acks, wait and flags) or the first
// leaf (the rest) and their ranks; for every leaf as the tail.
TEST(ScinTiers, OneLeafStepsSitInTheFullPlane) {
  const Config c = hgx_two_tier_64();
  const Collective coll{(std::uint64_t{1} << 16) + 256, DType::Bf16};
  for (const Algorithm algo : {Algorithm::Scin, Algorithm::ScinInqUplink}) {
    SCOPED_TRACE(info(algo).name);
    CompileOptions one;
    one.leaves_once = true;
    const Schedule full = compile(c, algo, coll), reduced = compile(c, algo, coll, {}, one);
    const int m = full.gpus_per_leaf(), leaves = full.leaves;
    const bool q = algo == Algorithm::ScinInqUplink;
    // (Plane 0's steps come first in both.)
    const std::uint64_t align = q ? static_cast<std::uint64_t>(c.quant.block_elems) : 1;
    const std::size_t waves = static_cast<std::size_t>(
        build::scin_chunks(c, build::split(coll.bytes / 2, c.fabric.planes, align)[0].count));
    ASSERT_GT(waves, 1u);
    ASSERT_EQ(reduced.steps.size() + static_cast<std::size_t>(c.fabric.planes) *
                                         (build::scin_tiers_plane_steps(full.gpus, static_cast<std::size_t>(leaves), waves, q, q) -
                                          build::scin_tiers_plane_steps(static_cast<std::size_t>(m), 1, waves, q, q)),
              full.steps.size());
    const std::size_t one_plane = build::scin_tiers_plane_steps(static_cast<std::size_t>(m), 1, waves, q, q);
    const std::size_t tail_from = one_plane - (2 * static_cast<std::size_t>(m) + 1);
    for (int tail = 0; tail < leaves; ++tail)
      for (std::size_t j = 0; j < one_plane; ++j) {
        const std::size_t f = build::scin_tiers_full_step(j, static_cast<std::size_t>(m), static_cast<std::size_t>(leaves),
                                                          waves, q, q, static_cast<std::size_t>(tail));
        ASSERT_LT(f, full.steps.size());
        const Step &a = reduced.steps[j], &b = full.steps[f];
        const int leaf = j >= tail_from ? tail : 0;
        auto moved = [&](NodeId x) -> NodeId {
          if (x == full.leaf_node(0, 0)) return full.leaf_node(0, leaf);
          return full.is_switch(x) ? x : static_cast<NodeId>(x + leaf * m);
        };
        EXPECT_EQ(b.kind, a.kind) << j << " tail " << tail;
        EXPECT_EQ(b.initiator, moved(a.initiator)) << j << " tail " << tail;
        if (a.kind == StepKind::Signal) {
          EXPECT_EQ(b.target, moved(a.target)) << j << " tail " << tail;
        }
      }
  }
}

// SCIN+INQ with launches at different times (its ranks' quantise steps are
// not alike), a star, one plane: declined, the caller compiles every plane.
TEST(ScinTiers, DeclinesWhatItCannotStandFor) {
  const Collective coll{std::uint64_t{1} << 20, DType::Bf16};
  Config gpp = load_preset("nvl36x2");
  set_param(gpp, "accelerator.gpus_per_process", 4);
  validate(gpp);
  EXPECT_FALSE(run_analytic_scin_tiers(gpp, coll, Algorithm::ScinInq).has_value());
  EXPECT_TRUE(run_analytic_scin_tiers(gpp, coll, Algorithm::Scin).has_value());
  EXPECT_TRUE(run_analytic_scin_tiers(gpp, coll, Algorithm::ScinInqUplink).has_value());  // (the switches quantise)
  EXPECT_FALSE(run_analytic_scin_tiers(load_preset("hgx-h200-8"), coll, Algorithm::Scin).has_value());
  EXPECT_FALSE(run_analytic_scin_tiers(load_preset("nvl36x2"), coll, Algorithm::Nvls).has_value());
  Config one = load_preset("nvl36x2");
  set_param(one, "fabric.planes", 1);
  validate(one);
  EXPECT_FALSE(run_analytic_scin_tiers(one, coll, Algorithm::Scin).has_value());
  EXPECT_FALSE(run_analytic_scin_tiers(one, coll, Algorithm::ScinInqUplink).has_value());
  EXPECT_EQ(scin_tiers_steps(one, coll, Algorithm::Scin), 0u);
}

// SCIN+INQ's planes booked one at a time (scin_inq_planes.h) report progress
// in order, within [0, 1], and stop when asked.
TEST(ScinTiers, InqPlanesReportProgressInOrderAndStop) {
  Config c = load_preset("nvl576-style");
  set_param(c, "fabric.gpus", 1024);
  set_param(c, "switch.ports", 128);
  validate(c);
  const Collective coll{std::uint64_t{1} << 30, DType::Bf16};
  std::vector<double> seen;
  RunContext ctx;
  ctx.progress = [&](double f) { seen.push_back(f); };
  ASSERT_TRUE(run_analytic_scin_tiers(c, coll, Algorithm::ScinInq, ctx).has_value());
  ASSERT_GE(seen.size(), 18u);  // (each plane's booking reports)
  EXPECT_TRUE(std::is_sorted(seen.begin(), seen.end()));
  EXPECT_GE(seen.front(), 0.0);
  EXPECT_LE(seen.back(), 1.0);
  std::stop_source stop;
  stop.request_stop();
  EXPECT_THROW(run_analytic_scin_tiers(c, coll, Algorithm::ScinInq, {stop.get_token(), {}}), Cancelled);
}
