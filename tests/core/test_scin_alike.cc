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
#include "engines/analytic/scin_alike.h"
#include "engines/simulate.h"
#include "fabric/params.h"
#include "fabric/preset.h"
#include "shortcut_tests.h"
#include "schedule/algorithms.h"

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
// buffer (many waves), quantisation fused into the kernels (no HBM use).
TEST(ScinAlike, EqualsTheFullBookingWithOtherOptions) {
  std::vector<std::pair<const char*, double>> sets = {
      {"accelerator.gpus_per_process", 4}, {"switch.isa.reduce_GBps", 20}, {"switch.isa.inq_GBps", 15},
      {"switch.isa.waves", 1},             {"switch.isa.waves", 64},       {"switch.isa.buffer_bytes", 65536},
      {"quant.fused", 1},                  {"switch.isa.max_outstanding_bytes", 4096}};
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
