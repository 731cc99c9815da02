// The engine registry, work estimates, the AlgorithmInfo table (a toy algorithm
// added from outside the core runs on every engine), and the analytic engine's
// booking rules in closed form: backfilling, breakdown attribution, ISA
// units fed by the reads, and ties decided by schedule order.
#include <cmath>

#include <gtest/gtest.h>

#include "base/error.h"
#include "engines/analytic/analytic.h"
#include "engines/data/data_engine.h"
#include "engines/packet/packet_engine.h"
#include "engines/simulate.h"
#include "fabric/preset.h"
#include "model/cost_grid.h"
#include "schedule/builder.h"
#include "core_test_util.h"

using namespace scin;

namespace {

using testing_util::error_of;

// The ideal fabric, with a 10 ns launch, no memory latency or ISA op latency,
// and a 300 ns ring step overhead (the backfilling case).
Config ideal(int n) {
  Config c = testing_util::ideal(n);
  c.accelerator.launch_overhead_ns = 10;
  c.accelerator.mem_latency_ns = 0;
  c.sw.isa.op_latency_ns = 0;
  c.ring.simple = {0, 300, 1.0};
  return c;
}

// ------------------------------------------------------------ a toy algorithm

// "gather-bcast": every rank pushes its buffer to rank 0, rank 0 sums the N
// copies on its HBM, then pushes the sum to every rank. 20 lines through the table.
Algorithm toy() {
  static const Algorithm id = register_algorithm(
      {Algorithm{}, "gather-bcast", "toy: gather to rank 0, sum there, push back", false, false, nullptr,
       [](build::Builder& b) {
         Schedule& s = b.s;
         const build::Span all{0, s.elems};
         const BufferId slots = b.buffer("slots", 0, s.elems * b.n(), b.data_format);
         std::vector<StepId> in = {b.launch(0)};
         std::vector<Region> parts = {build::at(s.input[0], all)};
         for (int r = 1; r < b.n(); ++r) {
           const Region slot{slots, s.elems * r, s.elems};
           in.push_back(b.push(r, build::at(s.input[r], all), slot, {b.launch(r)}, "gather"));
           parts.push_back(slot);
         }
         const StepId sum = b.compute(0, DataOp::Reduce, parts, build::at(s.output[0], all), Unit::AccelSm, in, "sum");
         for (int r = 1; r < b.n(); ++r)
           b.push(0, build::at(s.output[0], all), build::at(s.output[r], all), {sum}, "bcast");
       }});
  return id;
}

TEST(AlgorithmTable, AToyAlgorithmRunsOnEveryEngine) {
  const Algorithm a = toy();
  EXPECT_EQ(to_string(a), "gather-bcast");
  EXPECT_NE(unknown_algorithm_message("x").find("gather-bcast"), std::string::npos);
  const Config c = load_preset("hgx-h200-8");
  const Collective coll{64u << 20, DType::Bf16};
  const SimResult an = simulate(c, a, coll, EngineId::Analytic);
  const SimResult pk = simulate(c, "gather-bcast", coll, "packet");
  EXPECT_EQ(an.algorithm, "gather-bcast");
  // Rank 0's ingress carries 7 S, its HBM reads 8 S and writes S, its egress
  // carries 7 S, one after the other.
  const double S = static_cast<double>(coll.bytes);
  const double expect = 14 * S / (c.links.bandwidth_GBps * c.links.efficiency) + 9 * S / hbm_GBps(c);
  EXPECT_NEAR(an.time_ns, expect, 0.01 * expect);
  EXPECT_NEAR(pk.time_ns / an.time_ns, 1.0, 0.02);
  // The data engine: every rank ends with the sum.
  const Schedule s = compile(c, a, {1024, DType::Fp32});
  std::vector<std::vector<float>> inputs(8, std::vector<float>(256));
  for (int r = 0; r < 8; ++r)
    for (int i = 0; i < 256; ++i) inputs[r][i] = static_cast<float>(r + i);
  const DataResult d = data_engine().run(s, inputs, {true});
  for (int r = 0; r < 8; ++r) EXPECT_EQ(d.outputs[r][5], 8 * 5 + 28) << "rank " << r;
  // The data engine's estimate is the work it then reports.
  EXPECT_EQ(data_engine().estimate(c, s).amount, static_cast<double>(d.elements_processed));
}

TEST(DataEngineEstimate, MemoryIsTheStorageTheRunLaysOutLinearInRanks) {
  // One-shot declares N x N gather slots that no step touches: the estimate
  // counts what the run lays out (DataWorkspace::bytes_for) and its FP32
  // inputs and outputs, so doubling the ranks about doubles it (it was x4).
  Config c = load_preset("hgx-h200-8");
  auto memory = [&](int gpus) {
    c.fabric.gpus = gpus;
    const Schedule s = compile(c, Algorithm::OneShot, {1u << 20, DType::Fp32});
    const WorkEstimate w = data_engine().estimate(c, s);
    EXPECT_EQ(w.memory_bytes, static_cast<double>(DataWorkspace::bytes_for(s)) + 2.0 * gpus * s.elems * 4) << gpus;
    return w.memory_bytes;
  };
  const double m32 = memory(32), m64 = memory(64);
  EXPECT_GT(m64 / m32, 1.8);
  EXPECT_LT(m64 / m32, 2.2);
}

TEST(AlgorithmTable, NamesParseOnceAndErrorsListTheTable) {
  EXPECT_EQ(parse_algorithm("scin-inq"), Algorithm::ScinInq);
  for (const auto& a : algorithms()) EXPECT_EQ(parse_algorithm(a.name), a.id);
  const std::string e = error_of([] { parse_algorithm("nope", "collective.algorithm"); });
  EXPECT_EQ(e.rfind("collective.algorithm: unknown algorithm 'nope'; allowed ring, one-shot,", 0), 0u) << e;
  EXPECT_NE(error_of([] { register_algorithm({Algorithm{}, "ring", "", false, false, nullptr, nullptr}); })
                .find("already registered"), std::string::npos);
  Config mesh = load_preset("mesh-8");
  EXPECT_NE(error_of([&] { require_supported(mesh, Algorithm::Nvls); }).find("algo: nvls needs a switch"),
            std::string::npos);
}

// ------------------------------------------------------------ the registry

TEST(EngineRegistry, ParsesNamesAndRefusesDataForTiming) {
  EXPECT_EQ(parse_engine("data"), EngineId::Data);
  EXPECT_EQ(parse_timing_engine("packet"), EngineId::Packet);
  EXPECT_EQ(engine_names(), (std::vector<std::string>{"analytic", "packet"}));
  EXPECT_NE(error_of([] { parse_timing_engine("data"); }).find("engine: 'data' computes values, not time; allowed analytic, packet"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_engine("quantum", "--engine"); }).find("--engine: 'quantum' is not available"),
            std::string::npos);
  for (const Engine* e : engines()) EXPECT_EQ(parse_engine(e->name()), e->id());
}

// The packet engine's estimate is its event count to within a factor of 2, and
// the analytic engine's is the step count: callers can warn before a long run.
TEST(EngineRegistry, EstimatesPredictTheWork) {
  const Config c = load_preset("hgx-h200-8");
  for (const char* algo : {"ring", "two-shot", "nvls", "scin", "scin-inq"}) {
    Config run_cfg;
    const Schedule s = schedule_for(c, parse_algorithm(algo), {4u << 20, DType::Bf16}, &run_cfg);
    const WorkEstimate ea = engine(EngineId::Analytic).estimate(run_cfg, s);
    EXPECT_EQ(ea.amount, static_cast<double>(s.steps.size())) << algo;
    const WorkEstimate ep = estimate(c, parse_algorithm(algo), {4u << 20, DType::Bf16}, EngineId::Packet);
    const double events = static_cast<double>(packet::run(run_cfg, s).stats.events);
    EXPECT_GT(ep.amount, events / 2) << algo;
    EXPECT_LT(ep.amount, events * 2) << algo;
    EXPECT_STREQ(ep.unit, "events");
    // Sixteen times the bytes: sixteen times the packets.
    const WorkEstimate big = estimate(c, parse_algorithm(algo), {64u << 20, DType::Bf16}, EngineId::Packet);
    EXPECT_GT(big.amount, 10 * ep.amount) << algo;
  }
}

// ------------------------------------------------------------ analytic booking

// Step B (a ring step with a 300 ns protocol overhead) is booked first, on rank
// 0's uplink from t = 300; step C, ready at 10 ns (after a launch), fits in the
// gap before it and finishes at 10 + 1000 B / 100 GB/s + 2 links + switch = 70.
TEST(AnalyticBooking, BackfillingUsesTheGapBeforeALaterReservation) {
  const Config c = ideal(2);
  build::Builder b(c, "toy", {2000, DType::Bf16});
  Schedule& s = b.s;
  const StepId big = b.ring_send(0, RingProtocol::Simple, DataOp::Copy, {Region{s.input[0], 500, 500}},
                                 Region{s.output[1], 500, 500}, {}, "B");
  const StepId small = b.push(0, Region{s.input[0], 0, 500}, Region{s.output[1], 0, 500}, {b.launch(0)}, "C");
  const AnalyticResult r = run_analytic(c, s);
  EXPECT_DOUBLE_EQ(r.steps[small].finish_ns, 10 + 10 + 10 + 10 + 30);
  EXPECT_DOUBLE_EQ(r.steps[big].finish_ns, 300 + 10 + 50);  // unaffected: C used the gap
  EXPECT_NEAR(r.breakdown.total_ns(), r.time_ns, 1e-9 * r.time_ns);
  EXPECT_DOUBLE_EQ(r.breakdown[Term::Sync], 300);  // B's overhead, then its transfer
}

// Ring on the ideal fabric, term by term: 2(N-1) steps each paying the protocol
// overhead (sync), two links and a switch, and 2(N-1)/N S / B of serialisation.
TEST(AnalyticBooking, RingBreakdownIsTheClosedFormTermByTerm) {
  for (int n : {2, 4, 8}) {
    Config c = ideal(n);
    c.accelerator.launch_overhead_ns = 0;
    c.ring.simple = {0, 5, 1.0};
    const std::uint64_t S = static_cast<std::uint64_t>(n) << 20;
    const SimResult r = simulate(c, "ring", {S, DType::Bf16});
    const Breakdown& b = r.breakdown;
    // nccl-tests' bus bandwidth: a ring at a size where alpha is small runs at the link rate.
    EXPECT_NEAR(r.busbw_GBps, 100, 1) << n;
    const double steps = 2.0 * (n - 1);
    EXPECT_NEAR(b[Term::Sync], steps * 5, 1e-6) << n;
    EXPECT_NEAR(b[Term::LinkLatency], steps * 20, 1e-6) << n;
    EXPECT_NEAR(b[Term::SwitchLatency], steps * 30, 1e-6) << n;
    EXPECT_NEAR(b[Term::Serialisation], steps / n * static_cast<double>(S) / 100, 1e-6 * S) << n;
    EXPECT_EQ(b[Term::Reduction] + b[Term::Quantisation] + b[Term::Launch] + b[Term::MemoryLatency], 0) << n;
  }
}

// One ISA read of two sources: the reducer works as the data lands. Faster than
// the links, it adds nothing (the time is the reads'); slower, it sets the time
// and the breakdown names it.
TEST(AnalyticBooking, IsaReducerFedByReadsIsChargedOnlyWhenItIsTheBottleneck) {
  for (double reduce_GBps : {1000.0, 10.0}) {
    Config c = ideal(2);
    c.sw.isa.reduce_GBps = reduce_GBps;
    c.sw.isa.max_outstanding_bytes = 1ull << 30;
    build::Builder b(c, "toy", {100000, DType::Bf16});
    Schedule& s = b.s;
    const NodeId sw = s.switch_node(0);
    b.read(sw, sw, DataOp::Reduce, Unit::IsaReduce, {Region{s.input[0], 0, s.elems}, Region{s.input[1], 0, s.elems}},
           Region{b.buffer("acc", sw, s.elems, Format::Fp32), 0, s.elems}, {}, "isa read+reduce");
    const AnalyticResult r = run_analytic(c, s);
    const double reads = 100000 / 100.0, reduce = 2 * 100000 / reduce_GBps;
    const double expect = std::max(reads, reduce) + 2 * 10;  // + request and response link latency
    EXPECT_NEAR(r.time_ns, expect, 1e-9 * expect) << reduce_GBps;
    EXPECT_NEAR(r.breakdown[Term::Reduction], reduce > reads ? reduce : 0, 1e-6) << reduce_GBps;
    EXPECT_NEAR(r.breakdown[Term::Serialisation], reduce > reads ? 0 : reads, 1e-6) << reduce_GBps;
    EXPECT_NEAR(r.breakdown.total_ns(), r.time_ns, 1e-9 * r.time_ns);
  }
}

// The tie rule (docs/model.md section 3): every cost the engine books is on
// the cost grid (model/cost_grid.h), so ready times are exact sums and two
// ready times equal in exact arithmetic are equal, and schedule order decides.
// Rank 0 runs two HBM passes of 0.1 and 0.2 ns, rank 1 one of 0.3 ns (in
// floating point 0.1 + 0.2 > 0.3); then rank 2 runs two 1 ns passes on its
// HBM, X after rank 0's and Y after rank 1's: both are ready at 0.3 ns, and
// the one the schedule lists first goes first.
TEST(AnalyticBooking, EqualReadyTimesAreOrderedBySchedule) {
  ASSERT_NE(0.1 + 0.2, 0.3);
  ASSERT_EQ(on_cost_grid_ns(0.1) + on_cost_grid_ns(0.2), on_cost_grid_ns(0.3));
  // The rounding is std::nearbyint's on the scaled value (its fast form included).
  std::uint64_t seed = 1;
  for (int k = 0; k < 100000; ++k) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    const double x = std::ldexp(static_cast<double>(seed >> 11), -53) * std::ldexp(1.0, static_cast<int>(k % 70) - 30);
    const double want = std::nearbyint(x * 0x1p20) * cost_grid_ns;
    ASSERT_EQ(on_cost_grid_ns(x), want == 0 && x > 0 ? cost_grid_ns : want) << x;
    ASSERT_EQ(on_cost_grid_ns(-x), -std::nearbyint(x * 0x1p20) * cost_grid_ns) << x;
  }
  EXPECT_EQ(on_cost_grid_ns(0.5 * cost_grid_ns), cost_grid_ns);  // positive: at least one step
  EXPECT_EQ(on_cost_grid_ns(2.5 * cost_grid_ns), 2 * cost_grid_ns);  // halves to even
  EXPECT_EQ(on_cost_grid_ns(3.5 * cost_grid_ns), 4 * cost_grid_ns);
  for (bool x_first : {true, false}) {
    Config c = testing_util::ideal(3);
    c.accelerator.hbm_bandwidth_GBps = 40;  // a pass over e bf16 elements (read and write): 4e / 40 ns
    c.accelerator.hbm_efficiency = 1;
    build::Builder b(c, "toy", {64, DType::Bf16});
    Schedule& s = b.s;
    auto pass = [&](int rank, std::uint64_t elems, DepList deps, const char* label) {
      return b.compute(rank, DataOp::Copy, {Region{s.input[rank], 0, elems}}, Region{s.output[rank], 0, elems},
                       Unit::AccelSm, deps, label);
    };
    const StepId a1 = pass(0, 1, {}, "0.1 ns");
    const StepId a2 = pass(0, 2, {a1}, "0.2 ns");
    const StepId b1 = pass(1, 3, {}, "0.3 ns");
    StepId x, y;
    if (x_first) {
      x = pass(2, 10, {a2}, "X");
      y = pass(2, 10, {b1}, "Y");
    } else {
      y = pass(2, 10, {b1}, "Y");
      x = pass(2, 10, {a2}, "X");
    }
    const AnalyticResult r = run_analytic(c, s);
    const double ready = on_cost_grid_ns(0.3);
    EXPECT_EQ(r.steps[x].start_ns, ready) << x_first;
    EXPECT_EQ(r.steps[y].start_ns, ready) << x_first;
    const StepId first = x_first ? x : y, second = x_first ? y : x;
    EXPECT_EQ(r.steps[first].finish_ns, ready + 1) << x_first;
    EXPECT_EQ(r.steps[second].finish_ns, ready + 2) << x_first;  // queued behind the first
    EXPECT_EQ(r.time_ns, ready + 2);
    EXPECT_EQ(r.breakdown.total_ns(), r.time_ns);  // every term on the grid: an exact sum
  }
}

}  // namespace

// The analytic engine reuses one working memory per thread from run to run
// (engine.cc) and trims it after a large run. Its results must be those of a
// fresh workspace, whatever ran before: points of every algorithm, a 1 GiB
// point with thousands of steps in between, run twice in alternating order.
TEST(EngineRegistry, AnalyticRunsWithAReusedWorkspaceEqualFreshRuns) {
  const TimingEngine& e = timing_engine(EngineId::Analytic);
  for (const char* preset : {"hgx-h200-8", "nvl36x2"}) {
    Config cfg = load_preset(preset);
    cfg.ring.protocol = RingProtocol::Simple;
    std::vector<Schedule> scheds;
    for (const auto& a : supported_algorithms(cfg))
      for (std::uint64_t bytes : {8ull, 1ull << 20, 1ull << 30})
        if (bytes < (1ull << 30) || a == "scin-inq") scheds.push_back(compile(cfg, a, {bytes, DType::Bf16}));
    ASSERT_GT(scheds.size(), 10u);
    for (int round = 0; round < 2; ++round)
      for (std::size_t k = 0; k < scheds.size(); ++k) {
        const Schedule& s = scheds[round == 0 ? k : scheds.size() - 1 - k];
        const SimResult reused = e.run(cfg, s, RunContext{});
        const AnalyticResult fresh = run_analytic(cfg, s);
        ASSERT_EQ(reused.time_ns, fresh.time_ns) << preset << " " << s.algorithm << " " << s.bytes;
        ASSERT_EQ(reused.max_link_bytes, fresh.max_link_bytes);
        for (int t = 0; t < kTermCount; ++t) ASSERT_EQ(reused.breakdown.ns[t], fresh.breakdown.ns[t]);
      }
  }
}
