// The model's honest limits and the documented settings (docs/model.md sections 3 and 9):
// NVLS and ISA bandwidth saturate with GPU count as closed forms of the preset's
// parameters; the seed paper's ratios come from two documented knobs; where ring and
// NVLS reach half of their peak bandwidth. Tests named "...FittedData" compare with
// rows the preset was calibrated on: they check the fit, they do not validate it.
#include <cmath>
#include <string>

#include <gtest/gtest.h>

#include "calib/compare.h"
#include "calib/measured.h"
#include "calib/nccl_tuning.h"
#include "engines/simulate.h"
#include "fabric/params.h"
#include "fabric/preset.h"
#include "model/result.h"

namespace {

using namespace scin;

constexpr std::uint64_t kGiB = 1ull << 30;

// The large-message busbw without the fixed costs: the bytes added between 128 and
// 256 MiB over the time they add, x 2(N-1)/N. With the size ramp off the time is
// affine in the size there, so this is the bandwidth a 16 GiB message tends to.
double asymptotic_busbw(Config c, const std::string& algo) {
  set_param(c, "ramp.nvls.half_bytes", 0.0);   // the ramp is a size effect, not a GPU-count one
  const std::uint64_t a = 128ull << 20, b = 256ull << 20;
  const double ta = simulate(c, algo, Collective{a, DType::Bf16}, "analytic").time_ns;
  const double tb = simulate(c, algo, Collective{b, DType::Bf16}, "analytic").time_ns;
  return static_cast<double>(b - a) / (tb - ta) * busbw_factor(c.fabric.gpus);
}

// Large-message busbw bounds (docs/model.md section 3 and 9), B = link bandwidth
// per direction, e = links.efficiency, P planes, N GPUs, factor 2(N-1)/N:
//   NVLS: algbw = min(B e e_nvls N/(N+1), P R_nvls / N)   (link-bound: 2R(N-1)/(N+1) busbw)
//   ISA:  algbw = min(B e_isa, P R_isa / N)
double nvls_bound_busbw(const Config& c, int n) {
  const double link = c.links.bandwidth_GBps * c.links.efficiency * c.sw.nvls.efficiency * n / (n + 1.0);
  const double reduce = c.fabric.planes * get_param_number(c, "switch.nvls.reduce_GBps") / n;
  return 2.0 * (n - 1) / n * std::min(link, reduce);
}
double isa_bound_busbw(const Config& c, int n) {
  const double e = c.tuning.isa_link_efficiency > 0 ? c.tuning.isa_link_efficiency : c.links.efficiency;
  const double link = c.links.bandwidth_GBps * e;
  const double reduce = c.fabric.planes * c.sw.isa.reduce_GBps / n;
  return 2.0 * (n - 1) / n * std::min(link, reduce);
}

TEST(Saturation, NvlsAndIsaBusbwFollowTheClosedFormOfEveryPresetUpTo144Gpus) {
  for (const char* name : {"hgx-h100-8", "hgx-h200-8", "hgx-b200-8", "gb200-nvl72"}) {
    Config c = load_preset(name);
    const double nvls_ceiling = 2 * c.links.bandwidth_GBps * c.links.efficiency * c.sw.nvls.efficiency;
    for (int n : {4, 8, 16, 36, 72, 144}) {
      // A what-if switch with a port per GPU: the NVL72 chip has 72 (switch.ports).
      set_param(c, "switch.ports", static_cast<double>(std::max(n, c.sw.ports)));
      set_param(c, "fabric.gpus", static_cast<double>(n));
      const double nv = asymptotic_busbw(c, "nvls");
      // At 4 GPUs on NVLink5 (B200, GB200) NVLS is below the bound: its chunk
      // pipeline is short and each chunk pays the ld_reduce round trip (the
      // breakdown shows link, switch and memory latency growing with the size).
      if (n >= 8 || c.links.bandwidth_GBps <= 450)
        EXPECT_NEAR(nv / nvls_bound_busbw(c, n), 1.0, 0.005) << name << " nvls N=" << n;
      else
        EXPECT_LT(nv, nvls_bound_busbw(c, n)) << name << " nvls N=" << n;
      EXPECT_LT(nv, nvls_ceiling) << name << " N=" << n;   // never twice the NVLS link rate
      const double isa = asymptotic_busbw(c, "scin");
      EXPECT_NEAR(isa / isa_bound_busbw(c, n), 1.0, 0.005) << name << " isa N=" << n;
    }
  }
}

TEST(Saturation, Nvl72ReachesAbout840AndEightGpuHopperAbout480) {
  // Issue 15's figures: ~840 GB/s NVLS busbw on a 72-GPU NVL72 and ~480 on 8 H100/H200
  // (NVIDIA/nccl issue 1455: 480 at 8 H100; 482 at 16 GiB on 8 H200, a calibration row).
  const Config nvl = load_preset("gb200-nvl72");
  EXPECT_NEAR(asymptotic_busbw(nvl, "nvls"), 840, 0.02 * 840);
  EXPECT_NEAR(asymptotic_busbw(nvl, "scin"), 840, 0.02 * 840);   // the ISA has the same per-plane limit
  for (const char* name : {"hgx-h100-8", "hgx-h200-8"})
    EXPECT_NEAR(asymptotic_busbw(load_preset(name), "nvls"), 480, 0.05 * 480) << name;
  // Past the reduction bound more GPUs lower NVLS busbw: it does not grow without bound.
  Config c = nvl;
  set_param(c, "switch.ports", 144.0);   // a what-if 144-port chip (NVL72's has 72)
  set_param(c, "fabric.gpus", 144.0);
  EXPECT_LT(asymptotic_busbw(c, "nvls"), asymptotic_busbw(nvl, "nvls"));
}

// docs/model.md "Reproducing the seed's setting": SCIN+INQ over the calibrated ring on
// hgx-h200-8, bf16, at 8 B and 1 GiB. The docs claim 8.52x / 3.81x with the two
// paper knobs (within 5% of the paper's 8.7x / 3.8x) and 4.26x / 2.60x by default.
double speedup(const Config& c, std::uint64_t bytes) {
  const Collective coll{bytes, DType::Bf16};
  return simulate(c, "ring", coll, "analytic").time_ns / simulate(c, "scin-inq", coll, "analytic").time_ns;
}

TEST(SeedSetting, PaperKnobsGiveThePapersRatiosAndDefaultsDoNot) {
  Config c = load_preset("hgx-h200-8");
  const double small_default = speedup(c, 8), large_default = speedup(c, kGiB);
  EXPECT_NEAR(small_default, 4.26, 0.05);
  EXPECT_NEAR(large_default, 2.60, 0.05);
  set_param(c, "quant.fused", "true");
  set_param(c, "switch.isa.link_efficiency", 1.0);
  const double small_seed = speedup(c, 8), large_seed = speedup(c, kGiB);
  EXPECT_NEAR(small_seed, 8.52, 0.05);
  EXPECT_NEAR(large_seed, 3.81, 0.05);
  EXPECT_NEAR(small_seed / 8.7, 1.0, 0.05);   // the paper's figures, within 5%
  EXPECT_NEAR(large_seed / 3.8, 1.0, 0.05);
}

TEST(HalfPeak, InterpolatesAMeasuredCrossingAndReportsNoneWithoutABracket) {
  auto row = [](std::uint64_t bytes, double busbw_GBps) {
    MeasuredRow r;
    r.gpus = 8;
    r.algorithm = "nvls";
    r.bytes = bytes;
    r.measured_us = static_cast<double>(bytes) / 1e3 / (busbw_GBps / 1.75);
    return r;
  };
  // Peak 400; 100 at 1 MiB, 300 at 4 MiB: half (200) is half-way in log size: 2 MiB.
  EXPECT_NEAR(measured_half_peak_bytes({row(4 << 20, 300), row(1 << 20, 100), row(64 << 20, 400)}) / (2 << 20), 1.0, 1e-9);
  EXPECT_TRUE(std::isnan(measured_half_peak_bytes({row(1 << 20, 300), row(4 << 20, 400)})));
}

TEST(HalfPeak, ModelCrossingIsWhereBusbwIsHalfItsPeak) {
  const Config c = load_preset("hgx-h200-8");
  const double h = model_half_peak_bytes(c, "nvls", 8, DType::Fp32, 16 * kGiB);
  ASSERT_TRUE(std::isfinite(h));
  const double peak = simulate(c, "nvls", Collective{16 * kGiB, DType::Fp32}, "analytic").busbw_GBps;
  auto at = [&](double s) {
    return simulate(c, "nvls", Collective{static_cast<std::uint64_t>(s) / 4 * 4, DType::Fp32}, "analytic").busbw_GBps;
  };
  EXPECT_LT(at(h * 0.9), peak / 2);
  EXPECT_GT(at(h * 1.1), peak / 2);
}

TEST(HalfPeak, H200NvlsModelWithinAFactorOf1p3OfFittedData) {
  // The 14 NVLS rows of resources/measured/calibration-allreduce.csv (stas00
  // all_reduce_bench, 2 MiB - 16 GiB) are calibration rows of hgx-h200-8: this checks
  // the fit reaches half bandwidth where they do, once the harness offset the fit
  // found (calibration.harness_offsets_us) is removed from the measured times.
  const MeasuredFile m = load_measured(std::string(SCIN_MEASURED_DIR) + "/calibration-allreduce.csv");
  std::vector<MeasuredRow> nvls;
  for (const auto& r : m.rows)
    if (r.algorithm == "nvls" && r.system.find("H200") != std::string::npos) nvls.push_back(r);
  ASSERT_EQ(nvls.size(), 14u);
  const double measured = measured_half_peak_bytes(nvls, 19.73);
  const double raw = measured_half_peak_bytes(nvls);
  const double model = model_half_peak_bytes(load_preset("hgx-h200-8"), "nvls", 8, DType::Fp32, 16 * kGiB);
  EXPECT_GT(raw, measured);   // the harness's fixed cost moves the raw crossing up
  EXPECT_NEAR(std::log(model / measured), 0.0, std::log(1.3)) << model << " vs " << measured;
}

}  // namespace

// docs/model.md section 9, "Two-shot's fixed cost": fitted on 8x H200 (the --sym-mem rows
// where NCCL runs a two-shot kernel, 32 KiB - 1 MiB), 2.23 us above one-shot's; every other
// Ampere or Hopper preset with a one-shot kernel cost carries that difference, and a Blackwell
// preset carries it scaled by NCCL's own gap between its non-LL and LL symmetric kernels there
// against Hopper's (src/sym_kernels.cc: (19.5 - 11) / (7.8 - 4.5) us). So one-shot (one
// barrier) is the faster of the two for small messages and two-shot (a quarter of the bytes per link at 8 GPUs) for
// large ones, crossing between 128 and 256 KiB on hgx-h200-8 (vLLM's custom All-Reduce
// runs one-stage below 256 KB at 8 GPUs).
TEST(ShotKernels, TwoShotPaysMoreFixedCostThanOneShotAndOvertakesItAboveTheCrossing) {
  const Config h200 = load_preset("hgx-h200-8");
  const double extra_ns = h200.tuning.two_shot_base_ns - h200.tuning.one_shot_base_ns;
  EXPECT_NEAR(extra_ns, 2232, 1);
  for (const auto& info : list_presets()) {
    const Config c = load_preset(info.name);
    if (c.tuning.one_shot_base_ns == 0) continue;
    const bool blackwell = nccl_generation(c.accelerator.name) == GpuGeneration::Blackwell;
    EXPECT_NEAR(c.tuning.two_shot_base_ns - c.tuning.one_shot_base_ns,
                blackwell ? extra_ns * (19.5 - 11.0) / (7.8 - 4.5) : extra_ns, 1e-3)
        << info.name;
  }
  auto t_us = [&](const char* algo, std::uint64_t bytes) {
    return simulate(h200, algo, Collective{bytes, DType::Bf16}, "analytic").time_ns / 1e3;
  };
  for (std::uint64_t bytes : {8ull, 4096ull, 65536ull, 131072ull})
    EXPECT_LT(t_us("one-shot", bytes), t_us("two-shot", bytes)) << bytes;
  for (std::uint64_t bytes : {262144ull, 1ull << 20, 16ull << 20})
    EXPECT_GT(t_us("one-shot", bytes), t_us("two-shot", bytes)) << bytes;
  // The fixed cost is the whole difference to a preset without it, at any size.
  Config zero = h200;
  set_param(zero, "two_shot.base_ns", 0.0);
  for (std::uint64_t bytes : {8ull, 1ull << 20})
    EXPECT_NEAR(t_us("two-shot", bytes) -
                    simulate(zero, "two-shot", Collective{bytes, DType::Bf16}, "analytic").time_ns / 1e3,
                h200.tuning.two_shot_base_ns / 1e3, 1e-6)
        << bytes;
}
