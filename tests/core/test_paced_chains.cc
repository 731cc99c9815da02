// Paced reads that wait in step (engines/analytic/paced_chains.h): book()
// with chains gives the booking of every read queued alone, to the last bit,
// on random schedules where many reads wait for the same units, other steps
// reserve those units at the rounds' keys, and reads differ in their data's
// arrival and their units' durations.
#include <algorithm>
#include <cstdint>
#include <random>
#include <span>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "engines/analytic/analytic.h"
#include "engines/analytic/book.h"

using namespace scin;

namespace {

// Steps given in full (book()'s View).
struct GivenView {
  std::vector<std::vector<StepId>> dep;
  std::vector<StepKind> kinds;
  std::vector<StepCost> costs;
  int nres = 0;
  std::string nm = "paced-test";
  std::size_t size() const { return dep.size(); }
  std::span<const StepId> deps(std::size_t i) const { return dep[i]; }
  StepKind kind(std::size_t i) const { return kinds[i]; }
  bool cost(std::size_t i, StepCost& c) const {
    c = costs[i];
    return true;
  }
  int resources() const { return nres; }
  const std::string& name() const { return nm; }
  StepId add(StepKind k, StepCost c, std::vector<StepId> d) {
    dep.push_back(std::move(d));
    kinds.push_back(k);
    costs.push_back(std::move(c));
    return static_cast<StepId>(dep.size() - 1);
  }
};

ResourceUse use(int q, double bytes, double rate, bool fed) {
  ResourceUse u;
  u.resource = q;
  u.amount_bytes = bytes;
  u.rate_GBps = rate;
  u.fed_by_transfers = fed;
  return u;
}

// G groups of units (a reduce and an INQ unit each, as an ISA's), W waves: a
// wave's read per group (a port's transfer, then both units fed a lead later,
// paced), its requantise (the INQ unit) and its multicast (a port); a read
// waits for the multicast F waves before it. Data arrives from launches on a
// 1 ns grid (ties between rounds' keys and other steps' ready times); now and
// then a read of other durations, or a step that takes a group's INQ unit at
// a grid time.
GivenView random_plane(std::mt19937_64& rng, int G, int W, int F) {
  std::uniform_int_distribution<int> small(0, 7);
  GivenView v;
  const int ports = 2;
  v.nres = 2 * G + ports;
  auto port = [&](int g) { return 2 * G + g % ports; };
  std::vector<double> reduce_bytes(static_cast<std::size_t>(G)), inq_bytes(static_cast<std::size_t>(G));
  for (int g = 0; g < G; ++g) {
    reduce_bytes[static_cast<std::size_t>(g)] = 2.0 + small(rng);
    inq_bytes[static_cast<std::size_t>(g)] = 1.0 + small(rng);
  }
  const double lead = 1.0 + small(rng) % 3;
  std::vector<StepId> mcast(static_cast<std::size_t>(G * W), kNoStep);
  for (int w = 0; w < W; ++w) {
    for (int g = 0; g < G; ++g) {
      StepCost launch;
      launch.fixed_ns = static_cast<double>(small(rng) + (w * (small(rng) % 3)));
      const StepId l = v.add(StepKind::Launch, launch, {});
      StepCost rd;
      rd.fixed_ns = small(rng) % 4 == 0 ? 1.0 : 0.0;
      rd.latency_ns[0] = lead;
      rd.latency_ns[2] = small(rng) % 2;
      rd.fed_lead_terms = 1u << 0;
      rd.fed_paced = true;
      const bool other = small(rng) == 0;  // (durations unlike the group's: not in step with it)
      rd.uses.push_back(use(port(g), 1.0 + small(rng) % 3, 1.0, false));
      rd.uses.push_back(use(2 * g, reduce_bytes[static_cast<std::size_t>(g)] + (other ? 1.0 : 0.0), 1.0, true));
      rd.uses.push_back(use(2 * g + 1, inq_bytes[static_cast<std::size_t>(g)], 1.0, true));
      std::vector<StepId> d{l};
      if (w >= F) d.push_back(mcast[static_cast<std::size_t>((w - F) * G + g)]);
      const StepId r = v.add(StepKind::Read, rd, d);
      StepCost rq;
      rq.uses.push_back(use(2 * g + 1, 1.0 + small(rng) % 2, 1.0, false));
      const StepId q = v.add(StepKind::Compute, rq, {r});
      StepCost mc;
      mc.latency_ns[1] = small(rng) % 2;
      mc.uses.push_back(use(port(g + 1), 1.0 + small(rng) % 2, 1.0, false));
      mcast[static_cast<std::size_t>(w * G + g)] = v.add(StepKind::Write, mc, {q});
      if (small(rng) == 0) {  // a step on the group's units at a grid time
        StepCost x;
        x.fixed_ns = static_cast<double>(small(rng) * (w + 1));
        x.uses.push_back(use(2 * g + small(rng) % 2, 1.0, 1.0, false));
        v.add(StepKind::Compute, x, {l});
      }
    }
  }
  return v;
}

void expect_same(const AnalyticResult& a, const AnalyticResult& b) {
  EXPECT_EQ(a.time_ns, b.time_ns);
  for (int t = 0; t < kTermCount; ++t) EXPECT_EQ(a.breakdown.ns[t], b.breakdown.ns[t]) << "term " << t;
  EXPECT_EQ(a.critical_path, b.critical_path);
  ASSERT_EQ(a.steps.size(), b.steps.size());
  for (std::size_t i = 0; i < a.steps.size(); ++i) {
    EXPECT_EQ(a.steps[i].start_ns, b.steps[i].start_ns) << "step " << i;
    EXPECT_EQ(a.steps[i].finish_ns, b.steps[i].finish_ns) << "step " << i;
    if (::testing::Test::HasFailure()) return;
  }
}

}  // namespace

TEST(PacedChains, BookAsEveryReadQueuedAlone) {
  std::mt19937_64 rng(20261205);
  std::size_t joined = 0, requeued = 0, undone = 0, waited = 0;
  RunContext ctx;
  for (int trial = 0; trial < 300; ++trial) {
    const int G = 1 + static_cast<int>(rng() % 4), W = 4 + static_cast<int>(rng() % 40), F = 1 + static_cast<int>(rng() % 12);
    GivenView v = random_plane(rng, G, W, F);
    AnalyticWorkspace chained, alone;
    alone.chain_paced = false;
    AnalyticResult a, b;
    ASSERT_TRUE(analytic::book(v, ctx, chained, a));
    ASSERT_TRUE(analytic::book(v, ctx, alone, b));
    SCOPED_TRACE(::testing::Message() << "trial " << trial << ": " << G << " groups, " << W << " waves, " << F << " in flight");
    expect_same(a, b);
    // Every use's record: its start and the reservation it queued behind (a paced read's: its blocker).
    ASSERT_EQ(chained.uses.size, alone.uses.size);
    for (std::size_t k = 0; k < alone.uses.size; ++k) {
      EXPECT_EQ(chained.uses[k].start, alone.uses[k].start) << "use " << k;
      EXPECT_EQ(chained.uses[k].holder, alone.uses[k].holder) << "use " << k;
      EXPECT_EQ(chained.uses[k].holder_use, alone.uses[k].holder_use) << "use " << k;
      if (::testing::Test::HasFailure()) return;
    }
    if (::testing::Test::HasFailure()) return;
    joined += chained.chains.joined;
    requeued += chained.chains.requeued;
    undone += chained.chains.undone;
    EXPECT_EQ(alone.chains.joined, 0u);
    for (std::size_t i = 0; i < v.size(); ++i)
      if (v.kinds[i] == StepKind::Read && b.steps[i].finish_ns > b.steps[i].start_ns + 20) ++waited;
  }
  // The cases the chains change: reads that waited, shadows, shadows a reservation queued again,
  // and heads whose probe taken ahead a reservation undid. (Without those two, no outcome here
  // changes: a shadow that misses a reservation probes again at its head's next key and finds what
  // it would have; only a tie of two units' gaps could name another blocker. So the cases are counted.
  // Likewise a shadow joined to a head waiting until another key: not counted, not caught here.)
  EXPECT_GT(waited, 1000u);
  EXPECT_GT(joined, 1000u);
  EXPECT_GT(requeued, 10u);
  EXPECT_GT(undone, 5u);
}
