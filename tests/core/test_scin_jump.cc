// The periodic jump over SCIN's waves (engines/analytic/wave_jump.h,
// docs/performance.md section 62): where it is taken, the booking equals
// booking every step (Part::run, and the compiled schedule for whole points).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <random>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "engines/analytic/analytic.h"
#include "engines/analytic/part_booking.h"
#include "engines/analytic/scin_alike.h"
#include "engines/analytic/walk_repeat.h"
#include "fabric/params.h"
#include "fabric/preset.h"
#include "schedule/algorithms.h"
#include "part_compare.h"
#include "shortcut_tests.h"

using namespace scin;

namespace {

// Runs `full` step by step in the waves' order: each wave's steps one after another, and a
// wave's last step followed by the first step of the wave F later (the order run_waves keeps).
void run_wave_by_wave(part::Part& full, std::size_t W, std::size_t upw, int F) {
  std::vector<long long> next(upw * W);
  for (std::size_t w = 0; w < W; ++w) {
    for (std::size_t sub = 0; sub + 1 < upw; ++sub) next[upw * w + sub] = static_cast<long long>(upw * w + sub + 1);
    next[upw * w + upw - 1] = w + static_cast<std::size_t>(F) < W ? static_cast<long long>(upw * (w + static_cast<std::size_t>(F))) : -1;
  }
  full.run(4, [&](std::size_t i) { return next[i]; }, {});
}

// A cost on `queues` (uses after the first fed with `fed`) whose times are on
// the cost grid: fixed costs, latencies and durations multiples of 1/8 ns.
// `lead`: its fed uses get their data after latency terms 0 and 2 (an ISA
// read's lead, StepCost::fed_lead_terms: booked in two events where it is > 0);
// `paced`: and start only when their units are free (StepCost::fed_paced).
part::Cost grid_cost(std::mt19937_64& rng, std::initializer_list<int> queues, bool fed, bool lead = false,
                     bool paced = false, double long_lead = 0) {
  std::uniform_int_distribution<int> small(0, 7);
  StepCost c;
  c.fixed_ns = small(rng) % 3 == 0 ? 0.0 : 0.5 * small(rng);
  c.latency_ns[0] = small(rng) % 2 ? 0.0 : 0.25 * small(rng);
  c.latency_ns[2] = 0.125 * (small(rng) % 3);
  if (fed && lead) c.latency_ns[0] += long_lead * (1 + small(rng));
  for (std::size_t u = 0; u < queues.size(); ++u) {
    ResourceUse us;
    us.amount_bytes = small(rng) == 0 ? 0.0 : 1.0 + 0.5 * small(rng);
    us.rate_GBps = small(rng) % 2 ? 1.0 : 0.5;
    us.fed_by_transfers = fed && u > 0;
    c.uses.push_back(us);
  }
  if (fed && lead) c.fed_lead_terms = 1u << 0 | 1u << 2;
  c.fed_paced = fed && lead && paced;
  part::Cost out;
  out.set(c);
  std::size_t u = 0;
  for (int q : queues) out.q[u++] = q;
  return out;
}

// A plane's waves as scin_alike.cc lays them out (pw steps per wave, a
// multicast releasing the read F waves on), reads ready as INQ's quantise
// chains make them (from a start, `gap` ns apart; 0: together; from two
// thirds of the waves on `bump` ns later), the last wave now and then of
// another size. run_waves (with the jump) against run();
// returns the waves it jumped (-1: run_waves declined).
// `laid`: `fast` written by Part::lay_waves (as scin_alike.cc writes its planes).
long long jump_books_as_run(std::mt19937_64& rng, int pw, int F, std::size_t W, double gap, bool last_other, double bump,
                            bool laid = false, bool lead = false, bool paced = false, double long_lead = 0,
                            bool same_lead = true) {
  std::uniform_int_distribution<int> small(0, 7);
  std::vector<part::Cost> kinds;
  for (int z = 0; z < 2; ++z) {
    kinds.push_back(pw == 3 ? grid_cost(rng, {0, 2, 3}, true, lead, paced, long_lead)
                            : grid_cost(rng, {0, 2}, true, lead, paced, long_lead));
    if (pw == 3) kinds.push_back(grid_cost(rng, {3}, false));
    kinds.push_back(grid_cost(rng, {1}, false));
  }
  if (same_lead && lead) {  // (as every ISA read of a part has: the same path, the same latencies)
    StepCost c = kinds[static_cast<std::size_t>(pw)].c;
    c.latency_ns[0] = kinds[0].c.latency_ns[0];
    c.latency_ns[2] = kinds[0].c.latency_ns[2];
    kinds[static_cast<std::size_t>(pw)].set(c);
  }
  const auto upw = static_cast<std::size_t>(pw);
  part::Part fast, full;
  const double t0 = 0.5 * small(rng);
  for (part::Part* pt : {&fast, &full}) {
    pt->resize(upw * W);
    for (std::size_t w = 0; w < W; ++w) {
      const std::size_t z = last_other && w + 1 == W ? 1 : 0;
      for (std::size_t sub = 0; sub < upw; ++sub) {
        pt->cost[upw * w + sub] = &kinds[z * upw + sub];
        pt->pending[upw * w + sub] = sub > 0 || w >= static_cast<std::size_t>(F) ? 1 : 0;
      }
      pt->ready[upw * w] = t0 + gap * static_cast<double>(w) + (3 * w >= 2 * W ? bump : 0.0);  // (bump: later from 2/3 on)
    }
  }
  if (laid) {  // (the same part, by lay_waves: kinds[z * pw + sub] are its costs of size z)
    std::vector<std::uint8_t> zs(W, 0);
    if (last_other) zs[W - 1] = 1;
    auto ready_of = [&](std::size_t w) { return full.ready[upw * w]; };
    if (pw == 3)
      fast.lay_waves<3>(W, F, kinds.data(), last_other ? 2 : 1, zs.data(), ready_of);
    else
      fast.lay_waves<2>(W, F, kinds.data(), last_other ? 2 : 1, zs.data(), ready_of);
    for (std::size_t i = 0; i < upw * W; ++i) {  // (what it laid is what the test wrote)
      EXPECT_EQ(fast.cost_at(i), full.cost[i]);
      EXPECT_EQ(i % upw ? fast.ready_at(i, true) : fast.read_ready_at(i / upw, upw), full.ready[i]);
    }
  }
  if (!fast.run_waves(pw, F, {})) return -1;
  if (laid) {  // (laid, the jump checks less and writes less: it must jump over the same waves as unlaid)
    part::Part plain = full;
    EXPECT_TRUE(plain.run_waves(pw, F, {}));
    EXPECT_EQ(fast.jumped_waves, plain.jumped_waves);
  }
  run_wave_by_wave(full, W, upw, F);
  part_test::expect_same_part(fast, full, false);
  if (::testing::Test::HasFailure()) return 0;
  if (fast.latest_write_at >= 0) {  // the multicasts' latest, the first wave with it
    double best = -1;
    long long at = -1;
    for (std::size_t w = 0; w < W; ++w)
      if (const double f = full.finish[upw * w + upw - 1]; f > best) best = f, at = static_cast<long long>(w);
    EXPECT_EQ(fast.latest_write, best);
    EXPECT_EQ(fast.latest_write_at, at);
  }
  return static_cast<long long>(fast.jumped_waves);
}

}  // namespace

// Random planes (SCIN and SCIN+INQ, 1-16 waves in flight, 40-700 waves, the
// reads bound by their inputs or by the pipeline, the inputs later from two
// thirds on (a jump must stop there), grid costs): where run_waves
// jumps, every step's start, finish, bound use and record and the latest
// finishes equal run()'s; and it jumps in most of them.
TEST(ScinJump, WavesJumpAsRun) {
  std::mt19937_64 rng(62);
  int tried = 0, jumped = 0;
  for (bool laid : {false, true})
  for (int pw : {2, 3})
    for (int F : {1, 2, 3, 16})
      for (std::size_t W : {40, 101, 700})
        for (double gap : {0.0, 0.5, 2.0, 7.25, 40.0})
          for (bool last_other : {false, true}) {
            const double bump = last_other ? 0.0 : 100.0 + 0.25 * static_cast<double>(rng() % 8);
            SCOPED_TRACE(fmt::format("pw {} F {} W {} gap {} last other {} bump {} laid {}", pw, F, W, gap, last_other, bump, laid));
            const long long j = jump_books_as_run(rng, pw, F, W, gap, last_other, bump, laid);
            if (HasFailure()) return;
            ++tried;
            if (j > 0) ++jumped;
          }
  EXPECT_GT(jumped, tried / 2) << jumped << " of " << tried;
  std::printf("jumped in %d of %d\n", jumped, tried);
}

// The same where the reads' fed units get their data a lead after the
// transfers (part_deferred.h): SCIN+INQ's reads then book in two events, and
// the jump's snapshot holds the reads waiting for their data; paced or not
// (paced: a read whose units are busy when its data is there is taken again
// when they are free); leads of a few ns, or long ones (up to 32 ns, several
// reads waiting at once, as an ISA read's 2L + M is several waves long).
// Where run_waves answers, every step equals run()'s (which books them as
// book() does); most jump. Also with the last wave's read of another lead
// (no ISA part has that: run_waves declines, or, where it answers, equals run():
// a read without a lead booked its units when taken, before an earlier read's
// data arrived, which run_waves booked first until it checked the leads).
TEST(ScinJump, DeferredReadsJumpAsRun) {
  std::mt19937_64 rng(63);
  int tried = 0, jumped = 0, waited = 0, waited_jumped = 0;
  for (bool same_lead : {true, false})
  for (double long_lead : {0.0, 4.0})
  for (bool paced : {false, true})
  for (bool laid : {false, true})
    for (int pw : {2, 3})
      for (int F : {1, 2, 3, 16})
        for (std::size_t W : {40, 300})
          for (double gap : {0.0, 0.5, 7.25, 40.0})
            for (bool last_other : {false, true}) {
              const double bump = last_other ? 0.0 : 100.0 + 0.25 * static_cast<double>(rng() % 8);
              SCOPED_TRACE(fmt::format("pw {} F {} W {} gap {} last other {} bump {} laid {} paced {} long lead {} same lead {}", pw,
                                       F, W, gap, last_other, bump, laid, paced, long_lead, same_lead));
              const long long j = jump_books_as_run(rng, pw, F, W, gap, last_other, bump, laid, true, paced, long_lead, same_lead);
              if (HasFailure()) return;
              if (!same_lead) continue;
              ++tried;
              if (j > 0) ++jumped;
              if (pw == 3 && j >= 0) ++waited;
              if (pw == 3 && j > 0) ++waited_jumped;
            }
  EXPECT_GT(jumped, tried / 2) << jumped << " of " << tried;
  EXPECT_GT(waited, tried / 4) << waited << " of " << tried;  // (SCIN+INQ's answered, not declined)
  EXPECT_GT(waited_jumped, waited / 2) << waited_jumped << " of " << waited;
  std::printf("jumped in %d of %d; SCIN+INQ answered %d, jumped in %d\n", jumped, tried, waited, waited_jumped);
}

namespace {

// run_analytic_scin against booking the compiled schedule; the waves jumped.
std::size_t expect_jump_exact(const Config& c, bool inq, std::uint64_t bytes) {
  SCOPED_TRACE(fmt::format("{} {} GPUs, {} B", inq ? "scin-inq" : "scin", c.fabric.gpus, bytes));
  const Collective coll{bytes, DType::Bf16};
  const std::size_t before = part::jumped_waves_total();
  const std::optional<AnalyticResult> fast = run_analytic_scin(c, coll, inq, {}, true);
  EXPECT_TRUE(fast.has_value());
  if (!fast) return 0;
  const std::size_t jumped = part::jumped_waves_total() - before;
  const Schedule s = compile(c, inq ? Algorithm::ScinInq : Algorithm::Scin, coll);
  const AnalyticResult full = run_analytic(c, s);
  EXPECT_EQ(fast->steps.size(), s.steps.size());
  expect_same_booking(*fast, full, s.steps.size());
  return jumped;
}

}  // namespace

// Whole points drawn at random (2-16 GPUs, 16-300 MiB, a few presets and
// options), SCIN and SCIN+INQ: each equals booking the compiled schedule, and
// many of them jump (most of those of whole MiB).
TEST(ScinJump, RandomPointsEqualTheFullBooking) {
  std::mt19937_64 rng(620);
  const char* presets[] = {"hgx-h200-8", "hgx-b200-8", "hgx-h100-8", "scin-fpga-4"};
  const std::pair<const char*, double> options[] = {{"", 0},
                                                    {"switch.isa.waves", 4},
                                                    {"switch.isa.buffer_bytes", 1 << 20},
                                                    {"accelerator.hbm_bandwidth_GBps", 400},
                                                    {"switch.isa.inq_GBps", 60},
                                                    {"switch.isa.reduce_GBps", 100}};
  const int gpus[] = {2, 3, 4, 8, 16};
  int tried = 0, jumped = 0;
  for (int k = 0; k < 24; ++k) {
    Config c = star_of(presets[rng() % 4], gpus[rng() % 5]);
    const auto& [path, value] = options[rng() % 6];
    if (*path) set_param(c, path, value);
    validate(c);
    // (whole MiB, or any whole number of bf16 elements: then the waves are mostly of two sizes, seldom periodic)
    const std::uint64_t bytes = k % 2 ? (std::uint64_t{16} << 20) + 2 * (rng() % (std::uint64_t{142} << 20))
                                      : (std::uint64_t{1} << 20) * (16 + rng() % 284);
    for (bool inq : {false, true}) {
      SCOPED_TRACE(fmt::format("{} {}={} {} B", k, path, value, bytes));
      const std::size_t j = expect_jump_exact(c, inq, bytes);
      if (HasFailure()) return;
      ++tried;
      if (j > 0) ++jumped;
    }
  }
  EXPECT_GT(jumped, tried / 3) << jumped << " of " << tried;
  std::printf("jumped in %d of %d\n", jumped, tried);
}

// The 1 GiB points of the benchmark jump over most of their waves.
// Their reads are checked a stretch at a time (SCIN: ready together; SCIN+INQ:
// their chains' lazy finishes), and SCIN+INQ's critical path is walked over
// its quantise chain a period at a time (part::WalkRepeat).
TEST(ScinJump, TakenAtOneGibibyte) {
  const Config c = load_preset("hgx-h200-8");
  std::size_t s0 = part::stretch_waves_total(), r0 = part::walked_repeats_total();
  EXPECT_GT(expect_jump_exact(c, false, std::uint64_t{1} << 30), 900u);  // (SCIN books one plane of 1024 waves)
  const std::size_t scin_stretch = part::stretch_waves_total() - s0, scin_walk = part::walked_repeats_total() - r0;
  s0 = part::stretch_waves_total(), r0 = part::walked_repeats_total();
  EXPECT_GT(expect_jump_exact(c, true, std::uint64_t{1} << 30), 3600u);  // (SCIN+INQ four)
  const std::size_t inq_stretch = part::stretch_waves_total() - s0, inq_walk = part::walked_repeats_total() - r0;
  std::printf("stretches: SCIN %zu, SCIN+INQ %zu waves; walk periods passed over: SCIN %zu, SCIN+INQ %zu\n", scin_stretch, inq_stretch,
              scin_walk, inq_walk);
  EXPECT_GT(scin_stretch, 900u);
  EXPECT_GT(inq_stretch, 3600u);
  EXPECT_GT(inq_walk, 900u);
}

// INQ's quantise chains (run_chains, 1-8 chains on one HBM queue, heads
// ready together or apart, grid costs, now and then another cost near the
// end): wherever run_chains answers (jumped or not), every step equals
// run()'s; most jump.
TEST(ScinJump, ChainsJumpAsRun) {
  std::mt19937_64 rng(621);
  std::uniform_int_distribution<int> small(0, 7);
  int tried = 0, jumped = 0;
  for (bool laid : {false, true})  // (laid: `fast` written by Part::lay_chains, as scin_alike.cc writes it)
  for (std::size_t chains : {1, 2, 3, 4, 8})
    for (std::size_t len : {40, 150, 500})
      for (int rep = 0; rep < 4; ++rep) {
        if (laid && rep == 2) continue;  // (lay_chains: the steps after a head ready at 0)
        const part::Cost kinds[2] = {grid_cost(rng, {0}, false), grid_cost(rng, {0}, false)};
        const std::size_t m = chains * len;
        std::vector<std::uint8_t> head(m, 0);
        part::Part fast, full;
        for (part::Part* pt : {&fast, &full}) pt->resize(m);
        std::vector<double> start_of(chains);
        for (double& t : start_of) t = rep % 2 ? 0.5 * small(rng) : 1.0;
        if (laid) std::fill(start_of.begin(), start_of.end(), start_of[0]);  // (one readiness for every head)
        for (std::size_t k = 0; k < m; ++k) {
          head[k] = k % len == 0;
          const part::Cost* c = &kinds[rep == 3 && k % len == len - 3 ? 1 : 0];
          // (rep 2: chain 0's step at 3/5 of it ready late, after its dep: the chains' period breaks there)
          const double late = rep == 2 && k == 3 * len / 5 ? 60.0 * static_cast<double>(len) : 0.0;
          for (part::Part* pt : {&fast, &full}) {
            pt->cost[k] = c;
            pt->ready[k] = head[k] ? start_of[k / len] : late;
            pt->pending[k] = head[k] ? 0 : 1;
          }
        }
        SCOPED_TRACE(fmt::format("{} chains of {}, rep {}, laid {}", chains, len, rep, laid));
        if (laid) {
          fast.lay_chains(head.data(), start_of[0]);
          for (std::size_t k = 0; k < m; ++k) {  // (what it wrote is what the test wrote)
            ASSERT_EQ(fast.ready[k], full.ready[k]);
            ASSERT_EQ(fast.pending[k], full.pending[k]);
          }
        }
        ++tried;
        if (!fast.run_chains(head.data(), {})) continue;  // (declined: HBM requests out of order; Part::run books it)
        full.run(1, [&](std::size_t k) { return k + 1 < m && !head[k + 1] ? static_cast<long long>(k + 1) : -1LL; }, {});
        ASSERT_NO_FATAL_FAILURE(part_test::expect_same_part(fast, full, false));
        if (fast.jumped_chain_steps > 0) ++jumped;
      }
  EXPECT_GT(jumped, tried / 2) << jumped << " of " << tried;
  std::printf("chains jumped in %d of %d\n", jumped, tried);
}

namespace {

// A cost on queue 0 (a quantise step): fixed f, one use of d ns (amount d at 1 GB/s).
part::Cost hbm_cost(double f, double d) {
  StepCost c;
  c.fixed_ns = f;
  c.latency_ns[1] = 0.5;
  ResourceUse us;
  us.amount_bytes = d;
  us.rate_GBps = 1.0;
  c.uses.push_back(us);
  part::Cost out;
  out.set(c);
  out.q[0] = 0;
  return out;
}

// INQ's planes as scin_alike.cc lays them with one launch class: nc quantise
// chains of W steps (one cost, laid by lay_chains, booked by run_chains: its
// jump leaves the chains' times lazy) and the plane of chain o, its reads ready
// at max(base, the chain's finish), told (read_ready_at reads the chain through
// step_finish; the plane's jump checks the reads a stretch at a time where the
// chain repeats). Against the same plane with every read's readiness written
// (run_waves checking wave by wave: the same waves jumped) and run().
// `scin`: SCIN's plane instead (no chain: every read ready at base, told so).
// Returns the waves the told plane jumped (-1: declined).
long long told_books_as_run(std::mt19937_64& rng, int pw, int F, std::size_t W, std::size_t nc, std::size_t o, double quant_d,
                            double base, bool scin) {
  std::vector<part::Cost> kinds;
  kinds.push_back(pw == 3 ? grid_cost(rng, {0, 2, 3}, true) : grid_cost(rng, {0, 2}, true));
  if (pw == 3) kinds.push_back(grid_cost(rng, {3}, false));
  kinds.push_back(grid_cost(rng, {1}, false));
  const part::Cost quant = hbm_cost(0.25 * static_cast<double>(rng() % 4), quant_d);
  const std::size_t m = nc * W;
  std::vector<std::uint8_t> head(m, 0);
  for (std::size_t k = 0; k < m; k += W) head[k] = 1;
  part::Part ch;
  if (!scin) {
    ch.cost.resize(m);
    ch.lay_chains(head.data(), 1.0, &quant);
    EXPECT_TRUE(ch.run_chains(head.data(), {}));
  }
  const std::size_t off = o * W;
  const auto upw = static_cast<std::size_t>(pw);
  auto ready_of = [&](std::size_t w) { return scin ? base : std::max(base, part::step_finish(ch, off + w)); };
  part::Part fast, plain;
  plain.resize(upw * W);
  for (std::size_t w = 0; w < W; ++w) {
    for (std::size_t sub = 0; sub < upw; ++sub) {
      plain.cost[upw * w + sub] = &kinds[sub];
      plain.pending[upw * w + sub] = sub > 0 || w >= static_cast<std::size_t>(F) ? 1 : 0;
    }
    plain.ready[upw * w] = ready_of(w);
  }
  part::Part full = plain;
  const std::vector<std::uint8_t> zs(W, 0);
  const part::Part::ReadsTold told{base, scin ? nullptr : ch.finish.data() + off, scin ? nullptr : &ch, off};
  if (pw == 3)
    fast.lay_waves<3>(W, F, kinds.data(), 1, zs.data(), ready_of, &told);
  else
    fast.lay_waves<2>(W, F, kinds.data(), 1, zs.data(), ready_of, &told);
  for (std::size_t w = 0; w < W; ++w) EXPECT_EQ(fast.read_ready_at(w, upw), plain.ready[upw * w]);
  if (!fast.run_waves(pw, F, {})) return -1;
  EXPECT_TRUE(plain.run_waves(pw, F, {}));
  EXPECT_EQ(fast.jumped_waves, plain.jumped_waves);
  run_wave_by_wave(full, W, upw, F);
  part_test::expect_same_part(fast, full, false);
  return static_cast<long long>(fast.jumped_waves);
}

}  // namespace

// SCIN+INQ's planes read their chains' lazy finishes, and the jump checks
// their reads a stretch at a time where the chain repeats (quantise steps
// slower than the plane's waves, so the reads wait for them, or faster; 1-4
// chains on the HBM queue; reads ready at 0 or later than some quantise
// steps); SCIN's likewise without a chain: every step as run() books it, the
// same waves jumped as checking each read, and the stretches taken in most.
TEST(ScinJump, ToldReadsJumpAsRun) {
  std::mt19937_64 rng(73);
  int tried = 0, jumped = 0, stretched = 0;
  for (bool scin : {false, true})
    for (int pw : {2, 3})
      for (int F : {1, 2, 5, 16})
        for (std::size_t W : {64, 300})
          for (std::size_t nc : {1, 2, 4})
            for (double quant_d : {0.5, 2.0, 6.0, 24.0}) {
              if (scin && (nc > 1 || quant_d > 0.5)) continue;
              const std::size_t o = rng() % nc;
              const double base = rng() % 2 ? 0.0 : 0.5 * static_cast<double>(rng() % 200);
              SCOPED_TRACE(fmt::format("scin {} pw {} F {} W {} chains {} (plane of {}) quantise {} ns base {}", scin, pw, F, W, nc, o,
                                       quant_d, base));
              const std::size_t before = part::stretch_waves_total();
              const long long j = told_books_as_run(rng, pw, F, W, nc, o, quant_d, base, scin);
              if (HasFailure()) return;
              ++tried;
              if (j > 0) ++jumped;
              if (part::stretch_waves_total() > before) ++stretched;
            }
  EXPECT_GT(jumped, tried / 2) << jumped << " of " << tried;
  EXPECT_GT(stretched, tried / 3) << stretched << " of " << tried;
  std::printf("jumped in %d of %d, stretches in %d\n", jumped, tried, stretched);
}
