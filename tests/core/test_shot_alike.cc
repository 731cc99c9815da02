// One-shot, two-shot, two-shot-q8 and ring-q8 from their builders' structure
// (issue 14; engines/analytic/shot_alike.h): the analytic result without
// compiling the schedule equals booking the compiled schedule to the last bit
// (time, every breakdown term, the critical path, max_link_bytes, every step's
// start and finish), whether the pushes were booked in order (no ready queue)
// or by book().
#include <cstdint>
#include <initializer_list>
#include <numeric>
#include <optional>
#include <stop_token>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "base/cancel.h"
#include "engines/analytic/analytic.h"
#include "engines/analytic/ring_closed.h"
#include "engines/analytic/ring_leaves.h"
#include "engines/analytic/shot_alike.h"
#include "engines/simulate.h"
#include "fabric/params.h"
#include "fabric/preset.h"
#include "model/cost_model.h"
#include "schedule/algorithms.h"
#include "shortcut_tests.h"

using namespace scin;

namespace {

constexpr Algorithm kAlgos[] = {Algorithm::OneShot, Algorithm::TwoShot, Algorithm::TwoShotQ8, Algorithm::RingQ8};

// Ring-q8 points expect_shot_alike_exact saw booked in closed order by leaves alike.
std::size_t& closed_by_leaves_seen() {
  static std::size_t n = 0;
  return n;
}

// run_analytic_shot against booking the compiled schedule, twice: with
// per-step timings (one-shot and the two-shots booked in order, ring-q8 by
// book()), and without (one-shot and the two-shots in closed order where
// every rank is ready at once, `all_ready_at_once`; else in order again).
// False if the shortcut declined (nothing compared).
bool expect_shot_alike_exact(const Config& c, Algorithm a, std::uint64_t bytes, DType dtype = DType::Bf16,
                             bool all_ready_at_once = true, bool ring_closed = true) {
  SCOPED_TRACE(fmt::format("{} {} GPUs, {} planes, {} B", to_string(a), c.fabric.gpus, c.fabric.planes, bytes));
  const Collective coll{bytes, dtype};
  const bool ring = a == Algorithm::RingQ8;
  ShotBooking how = ShotBooking::Queue;
  const std::optional<AnalyticResult> fast = run_analytic_shot(c, coll, a, {}, true, &how);
  if (!fast) {
    EXPECT_EQ(shot_alike_steps(c, a), 0u);  // (the estimate compiles then)
    return false;
  }
  EXPECT_EQ(how, ring ? ShotBooking::Queue : ShotBooking::InOrder);
  const Schedule s = compile(c, a, coll);
  const AnalyticResult full = run_analytic(c, s);
  EXPECT_EQ(fast->steps.size(), s.steps.size());
  EXPECT_EQ(shot_alike_steps(c, a), s.steps.size());  // what estimate() counts, without compiling
  expect_same_booking(*fast, full, s.steps.size());
  EXPECT_GT(full.critical_path.size(), 3u);
  EXPECT_GT(full.time_ns, 0.0);
  EXPECT_GT(full.max_link_bytes, 0.0);
  const std::optional<AnalyticResult> closed = run_analytic_shot(c, coll, a, {}, false, &how);
  EXPECT_TRUE(closed.has_value());
  if (!closed) return false;
  // Ring-q8 on two tiers by leaves alike where they are (ring_leaves.h), else in closed order
  // (ring_closed.h) where no use would queue (`ring_closed`).
  // Before both, in closed order by leaves alike where that holds (ring_closed.h).
  const bool leaves = ring && shot::ring_leaves_apply(c, coll);
  if (how == ShotBooking::ClosedLeaves) {
    EXPECT_TRUE(ring && c.fabric.topology == Topology::TwoTier);
    ++closed_by_leaves_seen();
  } else {
    EXPECT_EQ(how, leaves                                          ? ShotBooking::Leaves
                   : (ring ? ring_closed : all_ready_at_once) ? ShotBooking::Closed
                   : ring                                      ? ShotBooking::Queue
                                                               : ShotBooking::InOrder);
  }
  expect_same_booking(*closed, full, 0);  // time, every term, the critical path, max_link_bytes
  bool estimate_closed = false;  // what estimate() assumes of this run
  EXPECT_EQ(shot_alike_steps(c, a, &estimate_closed, &coll), s.steps.size());
  // (Ring-q8: uses that would overlap are found only as it books; on two tiers the estimate assumes them.)
  const bool star = c.fabric.topology == Topology::Star;
  EXPECT_EQ(estimate_closed, ring ? star : how == ShotBooking::Closed);
  return true;
}

// nvl576-style with `gpus` on `leaves` leaves and the parameters `more`.
Config tiers(int gpus, int leaves, std::initializer_list<std::pair<const char*, double>> more) {
  Config c = load_preset("nvl576-style");
  set_param(c, "fabric.gpus", gpus);
  set_param(c, "fabric.leaves", leaves);
  for (const auto& [path, value] : more) set_param(c, path, value);
  validate(c);
  return c;
}

const std::uint64_t kSizes[] = {8, std::uint64_t{1} << 16, (std::uint64_t{1} << 20) + 2, std::uint64_t{1} << 26,
                                std::uint64_t{1} << 30};

}  // namespace

// Every shipped star, the three algorithms, 8 B - 1 GiB (8 B leaves shards and
// chunks empty; 1 MiB + 2 B gives shards of two sizes).
TEST(ShotAlike, EqualsTheFullBookingOnTheShippedStars) {
  for (const char* preset : {"hgx-h200-8", "hgx-b200-8", "hgx-h100-8", "hgx-a100-8", "scin-fpga-4", "gb200-nvl72"})
    for (Algorithm a : kAlgos)
      for (std::uint64_t bytes : kSizes) {
        if (std::string(preset) == "gb200-nvl72" && bytes != 8 && bytes != (std::uint64_t{1} << 26)) continue;
        EXPECT_TRUE(expect_shot_alike_exact(load_preset(preset), a, bytes)) << preset << " " << to_string(a) << " " << bytes;
      }
}

// Other GPU counts (odd, more than 8, a large point), three planes, one plane, fp32 and fp16.
TEST(ShotAlike, EqualsTheFullBookingAtOtherGpuCountsAndPlanes) {
  for (Algorithm a : kAlgos) {
    EXPECT_TRUE(expect_shot_alike_exact(star_of("hgx-h200-8", 2), a, (std::uint64_t{1} << 16) + 6));
    EXPECT_TRUE(expect_shot_alike_exact(star_of("hgx-h200-8", 3), a, (std::uint64_t{1} << 16) + 6));
    EXPECT_TRUE(expect_shot_alike_exact(star_of("hgx-h200-8", 5), a, (std::uint64_t{1} << 24) + 10));
    EXPECT_TRUE(expect_shot_alike_exact(star_of("hgx-b200-8", 16), a, std::uint64_t{1} << 20));
    EXPECT_TRUE(expect_shot_alike_exact(star_of("hgx-h200-8", 64), a, (std::uint64_t{1} << 20) + 6));
    // Past 2^16 steps (the per-thread records are released after it), then a small point again.
    EXPECT_TRUE(expect_shot_alike_exact(star_of("hgx-h200-8", 160), a, std::uint64_t{1} << 20));
    EXPECT_TRUE(expect_shot_alike_exact(star_of("hgx-h200-8", 4), a, 4096));
    // Ring-q8 by ranks alike at 128 GPUs (2048 blocks of 32 per rank), and next to it chunks of two sizes.
    EXPECT_TRUE(expect_shot_alike_exact(star_of("hgx-h200-8", 128), a, std::uint64_t{1} << 24));
    EXPECT_TRUE(expect_shot_alike_exact(star_of("hgx-h200-8", 128), a, (std::uint64_t{1} << 24) + 64));
    EXPECT_TRUE(expect_shot_alike_exact(load_preset("hgx-h200-8"), a, (std::uint64_t{1} << 22) + 12, DType::Fp32));
    EXPECT_TRUE(expect_shot_alike_exact(load_preset("hgx-h200-8"), a, 4096, DType::Fp16));
    Config planes3 = load_preset("hgx-h200-8");
    set_param(planes3, "fabric.planes", 3);
    validate(planes3);
    for (std::uint64_t bytes : {std::uint64_t{1} << 20, std::uint64_t{1} << 28})
      EXPECT_TRUE(expect_shot_alike_exact(planes3, a, bytes)) << bytes;
    Config one_plane = load_preset("hgx-h200-8");
    set_param(one_plane, "fabric.planes", 1);
    validate(one_plane);
    EXPECT_TRUE(expect_shot_alike_exact(one_plane, a, std::uint64_t{1} << 20));
  }
}

// Options that change the shape of the booking: launches that end at
// different times (one process driving 4 GPUs), slow HBM (the quantise steps
// and fused reduces queue on it), quantisation fused into the kernels (no HBM
// use), other codecs and block sizes, a size ramp and algorithm link
// efficiencies, a slow link.
TEST(ShotAlike, EqualsTheFullBookingWithOtherOptions) {
  std::vector<std::pair<const char*, double>> sets = {
      {"accelerator.gpus_per_process", 4}, {"accelerator.hbm_bandwidth_GBps", 40},  {"quant.fused", 1},
      {"quant.block_elems", 256},          {"two_shot.link_efficiency", 0.5}, {"links.bandwidth_GBps", 20},
      {"two_shot.base_ns", 3000}};
  for (const auto& [path, value] : sets) {
    Config c = star_of("hgx-h200-8", 8);
    set_param(c, path, value);
    if (std::string(path) == "accelerator.gpus_per_process") set_param(c, "accelerator.launch_serial_ns", 700);
    validate(c);
    for (Algorithm a : kAlgos)
      for (std::uint64_t bytes : {std::uint64_t{4096}, (std::uint64_t{1} << 20) + 2, std::uint64_t{1} << 26})
        EXPECT_TRUE(expect_shot_alike_exact(c, a, bytes, DType::Bf16, std::string(path) != "accelerator.gpus_per_process"))
            << path << "=" << value << " " << to_string(a) << " " << bytes;
  }
  Config int4 = star_of("hgx-h200-8", 8);
  int4.quant.codec = Codec::Int4;
  validate(int4);
  for (Algorithm a : {Algorithm::TwoShotQ8, Algorithm::RingQ8})
    EXPECT_TRUE(expect_shot_alike_exact(int4, a, (std::uint64_t{1} << 20) + 2)) << to_string(a);
}

// Ties on the critical path: with no latencies and no launch or kernel
// costs, pushes of empty shards (8 B) finish at once and equal flags meet at
// every wait, so the closed orders' tie rules (the first of the latest steps,
// a wait's first latest flag) decide the path as book() does.
TEST(ShotAlike, TiesOnThePathAreBrokenAsBookDoes) {
  for (int gpus : {3, 5})
    for (int planes : {1, 4}) {
      Config c = star_of("hgx-h200-8", gpus);
      set_param(c, "fabric.planes", planes);
      for (const char* z : {"accelerator.mem_latency_ns", "links.latency_ns", "switch.latency_ns", "accelerator.sync_overhead_ns",
                            "accelerator.launch_overhead_ns", "ring.simple.step_overhead_ns", "ring.simple.base_ns"})
        set_param(c, z, 0.0);
      validate(c);
      for (Algorithm a : kAlgos)
        for (std::uint64_t bytes : {std::uint64_t{8}, std::uint64_t{4096}, std::uint64_t{3} << 12, (std::uint64_t{1} << 20) + 2}) {
          if (a == Algorithm::RingQ8 && bytes != 8) continue;  // (its fused reduces overlap its quantise steps here: book())
          EXPECT_TRUE(expect_shot_alike_exact(c, a, bytes)) << gpus << " GPUs " << planes << " planes " << to_string(a) << " " << bytes;
        }
    }
}

// Ring-q8 in closed order step by step (chunks of two sizes, launches that
// end at different times: one process driving every GPU), 2-13 GPUs: the
// step that ends last, found by the greatest finish and then its first
// occurrence, falls at every place of a four-way unrolled scan.
TEST(ShotAlike, RingQ8InClosedOrderFindsTheLastStepAtEveryGpuCount) {
  for (int gpus = 2; gpus <= 13; ++gpus) {
    Config c = star_of("hgx-h200-8", gpus);
    set_param(c, "accelerator.gpus_per_process", gpus);
    set_param(c, "accelerator.launch_serial_ns", 900);
    validate(c);
    for (std::uint64_t bytes : {std::uint64_t{8}, static_cast<std::uint64_t>(gpus + 1) * 64, (std::uint64_t{1} << 20) + 2})
      EXPECT_TRUE(expect_shot_alike_exact(c, Algorithm::RingQ8, bytes)) << gpus << " GPUs, " << bytes << " B";
  }
}

// Ring-q8 step by step where the ranks repeat every w < N: chunks of two
// sizes whose pattern repeats every 2 or 4 chunks (blocks = N k + N/2 or N/4;
// blocks of 32 elements), with launches alike or serialised per process of 4
// GPUs (w = 4): ranks 0..w-1 booked alone, the same result as the compiled
// schedule booked; chunks of two sizes in no shorter pattern book every rank.
TEST(ShotAlike, RingQ8WithARanksPeriodEqualsTheFullBooking) {
  for (int gpus : {4, 8, 12, 16, 64})
    for (bool serial : {false, true}) {
      Config c = star_of("hgx-h200-8", gpus);
      if (serial) {
        set_param(c, "accelerator.gpus_per_process", 4);
        set_param(c, "accelerator.launch_serial_ns", 900);
        validate(c);
      }
      const auto g = static_cast<std::uint64_t>(gpus);
      for (std::uint64_t blocks : {g * 5 + g / 2, g * 40 + g / 4, g * 7 + 1}) {
        const std::size_t before = shot::ring_q_ranks_period_total();
        EXPECT_TRUE(expect_shot_alike_exact(c, Algorithm::RingQ8, blocks * 32 * 2))
            << gpus << " GPUs, " << blocks << " blocks" << (serial ? ", serialised" : "");
        // The sizes repeat every N / gcd(N, blocks) chunks, the launches every 4 ranks (serialised) or 1.
        const bool period = std::lcm(g / std::gcd(g, blocks), std::uint64_t{serial ? 4u : 1u}) < g;
        EXPECT_EQ(shot::ring_q_ranks_period_total() - before, period ? 1u : 0u) << gpus << " GPUs, " << blocks << " blocks";
      }
    }
}

// Ring-q8 with fewer blocks than ranks on a star (ring_sparse.h): every chunk
// one block or none; where no two full chunks are neighbours (at most N/2
// blocks) and launches are alike, every finish in closed form, O(N); the
// same result as the compiled schedule booked, in BF16 and FP32, with slow
// HBM (a full chunk's quantise and fused reduce long), quantisation fused
// (no HBM use) and blocks of 256. More blocks than N/2 (full chunks
// neighbours), or launches serialised, book step by step as before.
TEST(ShotAlike, RingQ8WithFewerBlocksThanRanksInClosedFormEqualsTheFullBooking) {
  int taken = 0;
  for (int gpus : {3, 4, 5, 8, 13, 24, 40, 64})
    for (int variant = 0; variant < 5; ++variant) {
      Config c = star_of("hgx-h200-8", gpus);
      if (variant == 1) set_param(c, "accelerator.hbm_bandwidth_GBps", 40);
      if (variant == 2) set_param(c, "quant.fused", 1);
      if (variant == 3) set_param(c, "quant.block_elems", 256);
      if (variant == 4) {
        set_param(c, "accelerator.gpus_per_process", gpus);
        set_param(c, "accelerator.launch_serial_ns", 900);
      }
      validate(c);
      const auto g = static_cast<std::uint64_t>(gpus);
      const std::uint64_t block = variant == 3 ? 256 : 32;
      for (DType dt : {DType::Bf16, DType::Fp32})
        for (std::uint64_t blocks : {std::uint64_t{1}, std::uint64_t{2}, g / 3, g / 2, g / 2 + 1, g - 1}) {
          if (blocks == 0) continue;
          // (One block short of its elements: a chunk of 29 or 253; more blocks whole: one size.)
          const std::uint64_t bytes = (blocks * block - (blocks == 1 ? 3 : 0)) * static_cast<std::uint64_t>(dtype_bytes(dt));
          const std::size_t before = shot::ring_q_sparse_total();
          EXPECT_TRUE(expect_shot_alike_exact(c, Algorithm::RingQ8, bytes, dt))
              << gpus << " GPUs, " << blocks << " blocks, variant " << variant;
          const bool sparse = variant != 4 && 2 * blocks <= g;
          EXPECT_EQ(shot::ring_q_sparse_total() - before, sparse ? 1u : 0u)
              << gpus << " GPUs, " << blocks << " blocks, variant " << variant;
          taken += sparse;
        }
    }
  EXPECT_GT(taken, 100);
  // simulate()'s estimate at 1024 GPUs, 8 B (one block): O(N) (3N^2 finishes would be 25 MB).
  const WorkEstimate w = estimate(star_of("hgx-h200-8", 1024), Algorithm::RingQ8, {8, DType::Bf16}, EngineId::Analytic);
  EXPECT_LT(w.memory_bytes, 1e7);
  // Every step's finish, against the compiled schedule booked step by step.
  for (int gpus : {3, 8, 13, 40})
    for (std::uint64_t blocks : {std::uint64_t{1}, static_cast<std::uint64_t>(gpus / 3), static_cast<std::uint64_t>(gpus / 2)}) {
      if (blocks == 0) continue;
      SCOPED_TRACE(fmt::format("{} GPUs, {} blocks", gpus, blocks));
      Config c = star_of("hgx-h200-8", gpus);
      set_param(c, "accelerator.hbm_bandwidth_GBps", 40);
      validate(c);
      const Collective coll{blocks * 64, DType::Bf16};
      std::vector<double> finishes;
      shot::ring_q_sparse_finishes() = &finishes;
      const std::optional<AnalyticResult> closed = run_analytic_shot(c, coll, Algorithm::RingQ8, {}, false);
      shot::ring_q_sparse_finishes() = nullptr;
      ASSERT_TRUE(closed.has_value());
      const AnalyticResult full = run_analytic(c, compile(c, Algorithm::RingQ8, coll));
      ASSERT_EQ(finishes.size(), full.steps.size());
      std::size_t differ = 0;
      for (std::size_t i = 0; i < finishes.size(); ++i) differ += finishes[i] != full.steps[i].finish_ns;
      EXPECT_EQ(differ, 0u);
    }
}

// Ring-q8 in closed order where a rank's HBM would queue: with no latencies
// (memory, links, switch, the ring's per-step and sync overheads) and slow
// HBM, a rank's quantise step and the fused reduce of the send into it
// overlap where chunks differ in size (booked by book() then, the same as
// compiled); where they do not (chunks alike, or tiny) it answers.
TEST(ShotAlike, RingQ8FallsBackWhereAnHbmWouldQueue) {
  for (double hbm : {1000.0, 10.0}) {
    Config c = star_of("hgx-h200-8", 8);
    set_param(c, "accelerator.hbm_bandwidth_GBps", hbm);
    for (const char* z : {"accelerator.mem_latency_ns", "links.latency_ns", "switch.latency_ns",
                          "ring.simple.step_overhead_ns", "accelerator.sync_overhead_ns"})
      set_param(c, z, 0.0);
    validate(c);
    EXPECT_TRUE(expect_shot_alike_exact(c, Algorithm::RingQ8, 40000, DType::Bf16, true, false)) << hbm;
    EXPECT_TRUE(expect_shot_alike_exact(c, Algorithm::RingQ8, 1000002, DType::Bf16, true, false)) << hbm;
    EXPECT_TRUE(expect_shot_alike_exact(c, Algorithm::RingQ8, 8, DType::Bf16, true, true)) << hbm;
    EXPECT_TRUE(expect_shot_alike_exact(c, Algorithm::RingQ8, std::uint64_t{1} << 26, DType::Bf16, true, true)) << hbm;
    Config three = c;
    set_param(three, "fabric.gpus", 3);
    validate(three);
    EXPECT_TRUE(expect_shot_alike_exact(three, Algorithm::RingQ8, 4096, DType::Bf16, true, false)) << hbm;
  }
}

// Two tiers: one-shot's and the two-shots' pushes cross the leaf <-> spine
// trunks, and are booked in order there too, and in closed order where every
// rank is ready at once (costed once per shard size within a leaf and
// between leaves, each pair's trunks those of the spine ECMP picks for it);
// ring-q8 in closed order (each send between leaves costed alone) where no
// use would queue, else by book(). nvl36x2 as shipped (one spine), and
// nvl576-style (9 spines) at 72 and 144 GPUs (2 and 4 leaves), with launches
// serialised, in FP32.
TEST(ShotAlike, EqualsTheFullBookingOnTwoTiers) {
  auto nvl576_at = [](int gpus, const char* path = nullptr, double value = 0) {
    Config c = load_preset("nvl576-style");
    set_param(c, "fabric.gpus", gpus);
    set_param(c, "fabric.leaves", gpus / 36);
    if (path) set_param(c, path, value);
    validate(c);
    return c;
  };
  const Config fabrics[] = {load_preset("nvl36x2"), nvl576_at(72), nvl576_at(144),
                            nvl576_at(72, "accelerator.gpus_per_process", 4)};
  const std::size_t by_leaves = closed_by_leaves_seen();
  for (const Config& c : fabrics)
    for (Algorithm a : kAlgos)
      for (std::uint64_t bytes : {std::uint64_t{8}, std::uint64_t{1} << 16, (std::uint64_t{1} << 20) + 2, std::uint64_t{1} << 28}) {
        if (c.fabric.gpus == 144 && bytes != (std::uint64_t{1} << 20) + 2) continue;
        // (Ring-q8 at 256 MiB: a send between leaves reduces into the first rank of the next leaf
        // while that rank quantises: the closed order over every rank declines, and the one by
        // leaves, which books the HBMs' queues, answers where the leaves are alike.)
        EXPECT_TRUE(expect_shot_alike_exact(c, a, bytes, DType::Bf16, !launches_serialised(c), bytes < (std::uint64_t{1} << 28)))
            << c.fabric.gpus << " " << to_string(a) << " " << bytes;
      }
  EXPECT_TRUE(expect_shot_alike_exact(load_preset("nvl36x2"), Algorithm::TwoShot, std::uint64_t{1} << 22, DType::Fp32, true));
  EXPECT_GE(closed_by_leaves_seen() - by_leaves, 3u);  // (64 KiB on the 72-GPU fabrics)
}

// Ring-q8 on two tiers by leaves alike (ring_leaves.h): one leaf's ranks
// booked stand for every leaf's; the same result as booking the compiled
// schedule (time, every term, the critical path through the turned ranks,
// max_link_bytes), at sizes whose chunks are equal whole blocks (32 x N x k
// elements), small to large, and at 1 MiB and 64 MiB (two sizes of chunk,
// repeating every leaf on some fabrics); nvl36x2 as shipped (36 a leaf, one spine),
// nvl576-style at 144 GPUs (4 leaves, 9 spines), 36 GPUs on 3 leaves with 2
// planes and 3 spines, 3 GPUs a leaf, trunks 4x oversubscribed, slow HBM
// (its uses queue), FP32. Launches serialised, two GPUs a leaf and unequal
// chunks are declined (the other bookings answer). Twice: as they are booked,
// first in closed order by leaves alike (ring_closed.h; their HBM uses queue
// in some: slow HBM, 64 MiB), and with that turned off (book_ring_leaves).
TEST(ShotAlike, RingQ8ByLeavesAlikeEqualsTheFullBookingOnTwoTiers) {
  struct Case {
    Config c;
    bool leaves;  // book_ring_leaves applies
  };
  const Case cases[] = {
      {load_preset("nvl36x2"), true},
      {tiers(144, 4, {}), true},
      {tiers(36, 3, {{"fabric.planes", 2.0}, {"fabric.spines", 3.0}, {"fabric.uplinks_per_leaf", 12.0}}), true},
      {tiers(12, 4, {}), true},
      {tiers(72, 4, {{"fabric.oversubscription", 4.0}}), true},
      {tiers(72, 2, {{"accelerator.hbm_bandwidth_GBps", 40.0}}), true},
      {tiers(72, 2, {{"accelerator.gpus_per_process", 4.0}, {"accelerator.launch_serial_ns", 700.0}}), false},
      {tiers(16, 8, {}), false},
  };
  std::size_t answered = 0, uneven = 0, closed = 0;
  const std::size_t queued_before = shot::ring_q_hbm_queued_total();
  for (const bool closed_order : {true, false}) {
  for (const Case& k : cases) {
    shot::ring_q_closed_by_leaves() = closed_order;
    const Config& c = k.c;
    const auto n = static_cast<std::uint64_t>(c.fabric.gpus);
    // Chunks of 1, 64 and 4096 blocks of 32 each (FP32: 64), then 1 MiB and
    // 64 MiB: chunks of two sizes, alike every leaf where N / gcd(blocks, N)
    // divides the accelerators per leaf (72 GPUs: 16,384 blocks, period 9).
    const std::pair<std::uint64_t, DType> sizes[] = {
        {32 * n * 2, DType::Bf16},        {64 * 32 * n * 2, DType::Bf16}, {4096 * 32 * n * 2, DType::Bf16},
        {64 * 32 * n * 4, DType::Fp32},   {std::uint64_t{1} << 20, DType::Bf16}, {std::uint64_t{1} << 26, DType::Bf16}};
    for (const auto& [bytes, dt] : sizes) {
        SCOPED_TRACE(fmt::format("{} GPUs on {} leaves, {} B, closed order {}", c.fabric.gpus, c.fabric.leaves, bytes, closed_order));
        const Collective coll{bytes, dt};
        ShotBooking how = ShotBooking::Queue;
        const std::optional<AnalyticResult> fast = run_analytic_shot(c, coll, Algorithm::RingQ8, {}, false, &how);
        ASSERT_TRUE(fast.has_value());
        const bool equal_chunks = element_count(bytes, dt) % (32 * n) == 0;
        EXPECT_TRUE(closed_order || how != ShotBooking::ClosedLeaves);
        if (how != ShotBooking::ClosedLeaves) {
          EXPECT_EQ(how == ShotBooking::Leaves, k.leaves && (equal_chunks || shot::ring_leaves_apply(c, coll)));
        }
        const bool by_leaves = how == ShotBooking::Leaves || how == ShotBooking::ClosedLeaves;
        answered += by_leaves;
        closed += how == ShotBooking::ClosedLeaves;
        uneven += by_leaves && !equal_chunks;
        const Schedule s = compile(c, Algorithm::RingQ8, coll);
        const AnalyticResult full = run_analytic(c, s);
        expect_same_booking(*fast, full, 0);
        EXPECT_GT(full.critical_path.size(), 3u);
        // The estimate counts the steps booked: one leaf's.
        bool estimate_closed = false;
        std::size_t booked = 0;
        EXPECT_EQ(shot_alike_steps(c, Algorithm::RingQ8, &estimate_closed, &coll, &booked), s.steps.size());
        EXPECT_EQ(booked, shot::ring_leaves_apply(c, coll) ? s.steps.size() / static_cast<std::size_t>(c.fabric.leaves)
                                                           : s.steps.size());
    }
  }
  }
  shot::ring_q_closed_by_leaves() = true;
  EXPECT_GE(answered, 72u);
  EXPECT_GE(uneven, 16u);
  EXPECT_GE(closed, 40u);            // closed order by leaves: every case it holds for
  EXPECT_GE(answered - closed, 24u);  // book_ring_leaves, with it off
  EXPECT_GE(shot::ring_q_hbm_queued_total() - queued_before, 8u);  // HBM uses that queued, followed exactly
  // simulate()'s estimate where leaves are not alike (1024 GPUs on 16 leaves of 64, 8 B: one
  // block) and chunks are small: in closed order, 8 bytes a step (as queued it was ~350 MB).
  Config wide = tiers(1024, 16, {{"switch.ports", 128.0}});
  const Collective tiny{8, DType::Bf16};
  EXPECT_FALSE(shot::ring_leaves_apply(wide, tiny));
  const WorkEstimate w = estimate(wide, Algorithm::RingQ8, tiny, EngineId::Analytic);
  EXPECT_LT(w.memory_bytes, 5e7);
  EXPECT_LT(w.seconds, 0.2);
  // Chunks of two sizes: declined.
  ShotBooking how = ShotBooking::Queue;
  const Collective odd{(std::uint64_t{1} << 20) + 64, DType::Bf16};
  ASSERT_TRUE(run_analytic_shot(load_preset("nvl36x2"), odd, Algorithm::RingQ8, {}, false, &how).has_value());
  EXPECT_NE(how, ShotBooking::Leaves);
}

// Two tiers in closed order where the trunks are the bottleneck (4x
// oversubscribed: the critical path runs along a trunk's queue, replayed for
// the walk), with one GPU per leaf (no pair within a leaf), and with 2
// planes and 3 spines.
TEST(ShotAlike, ClosedOrderOnTwoTiersEqualsTheFullBooking) {
  const Config fabrics[] = {tiers(72, 4, {{"fabric.oversubscription", 4.0}}), tiers(8, 8, {}),
                            tiers(36, 3, {{"fabric.planes", 2.0}, {"fabric.spines", 3.0}, {"fabric.uplinks_per_leaf", 12.0}})};
  for (const Config& c : fabrics)
    for (Algorithm a : {Algorithm::OneShot, Algorithm::TwoShot, Algorithm::TwoShotQ8})
      for (std::uint64_t bytes : {std::uint64_t{8}, (std::uint64_t{1} << 20) + 2, std::uint64_t{1} << 26})
        EXPECT_TRUE(expect_shot_alike_exact(c, a, bytes)) << c.fabric.gpus << " " << to_string(a) << " " << bytes;
}

// Not a star or two tiers, or not one of the four: declined, the caller compiles.
TEST(ShotAlike, OnlyStarsAndTwoTiersAreCandidates) {
  const Collective coll{std::uint64_t{1} << 20, DType::Bf16};
  for (Algorithm a : kAlgos) {
    // Two tiers (ShotAlike.EqualsTheFullBookingOnTwoTiers).
    EXPECT_TRUE(run_analytic_shot(load_preset("nvl36x2"), coll, a).has_value());
    EXPECT_GT(shot_alike_steps(load_preset("nvl36x2"), a), 0u);
    EXPECT_FALSE(run_analytic_shot(load_preset("mesh-8"), coll, a).has_value());   // no switch
    EXPECT_TRUE(run_analytic_shot(load_preset("hgx-h200-8"), coll, a).has_value());
    EXPECT_EQ(shot_alike_steps(load_preset("mesh-8"), a), 0u);
  }
  for (Algorithm a : {Algorithm::Ring, Algorithm::Nvls, Algorithm::Scin, Algorithm::ScinInq}) {
    EXPECT_FALSE(run_analytic_shot(load_preset("hgx-h200-8"), coll, a).has_value());
    EXPECT_EQ(shot_alike_steps(load_preset("hgx-h200-8"), a), 0u);
  }
}

// simulate() takes the shortcut for the analytic engine and gives what
// booking the compiled schedule gives (and its variant), on the star and on
// the fabrics where it falls back.
TEST(ShotAlike, SimulateAgreesWithBookingTheCompiledSchedule) {
  for (const Config& c : {load_preset("hgx-h200-8"), star_of("hgx-b200-8", 64), load_preset("mesh-8"), load_preset("nvl36x2")})
    for (Algorithm a : kAlgos)
      for (std::uint64_t bytes : {std::uint64_t{64}, std::uint64_t{1} << 20, std::uint64_t{1} << 28})
        expect_simulate_books_as_compiled(c, a, bytes);
}

// It polls the stop token while booking.
TEST(ShotAlike, StopsWithCancelled) {
  std::stop_source src;
  RunContext ctx{src.get_token(), [&](double) { src.request_stop(); }};
  EXPECT_THROW(run_analytic_shot(star_of("hgx-h200-8", 128), {std::uint64_t{1} << 20, DType::Bf16}, Algorithm::TwoShot, ctx),
               Cancelled);
}

