#include "calib/nccl_sym.h"

#include <cmath>
#include <fmt/format.h>

#include "base/error.h"
#include "calib/nccl_tuning.h"

namespace scin {

namespace {

// The smooth min / max NCCL's model uses (src/sym_kernels.cc: softmin, softplus).
double soft_min(double x, double ceiling, double softness) {
  return ceiling - softness * std::log1p(std::expm1(ceiling / softness) * std::exp(-x / softness));
}
double soft_plus(double x, double softness) {
  const double z = x / softness;
  return z >= 100 ? x : softness * std::log1p(std::exp(z));
}

struct Kernel {
  const char* name;
  const char* algorithm;
  bool ll;         // an LL kernel (lower fixed cost)
  bool multimem;   // needs NVLS multicast
};

}  // namespace

NcclSymPick nccl_sym_pick(int ranks, std::uint64_t bytes, bool blackwell, bool multimem) {
  if (ranks < 2) throw Error(fmt::format("nccl-sym: {} ranks; NCCL's symmetric kernels need 2 or more", ranks));
  if (bytes == 0) throw Error("nccl-sym: 0 bytes");
  static const Kernel kernels[] = {
      {"AllReduce_AGxLL_R", "one-shot", true, false},
      {"AllReduce_AGxLLMC_R", "one-shot", true, true},
      {"AllReduce_RSxLD_AGxST", "two-shot", false, false},
      {"AllReduce_RSxLDMC_AGxSTMC", "two-shot", false, true},
  };
  // Constants of NCCL's queryModel_lsa: bandwidths in GiB/s as bytes per microsecond.
  constexpr double GiBps = double(1 << 30) / 1e6;
  constexpr double ll_bus_factor = 9;   // LL: twice the bytes, processing, no unrolling
  constexpr int max_blocks = 64;        // ncclSymkMaxBlocks
  constexpr int min_blocks = 1;         // NCCL's default config.minCTAs
  constexpr double sm_penalty = 0.025;  // 2.5% more time per SM used, when comparing kernels
  const double n = ranks, s = static_cast<double>(bytes);
  NcclSymPick best;
  double best_score = 0;
  for (const Kernel& k : kernels) {
    if (k.multimem && !multimem) continue;
    const bool ldmc = k.multimem && !k.ll;
    double bus_bytes = 0, multiplier = 1;
    int blocks_max = max_blocks;
    if (k.ll) {
      bus_bytes = n * s * ll_bus_factor;
      if (k.multimem) multiplier = 1.1;  // "to beat non-MC LL"
    } else if (!ldmc) {
      bus_bytes = 2 * s * (n - 1) / n;
    } else {
      bus_bytes = s / n + s;
      multiplier = n;
      const int sms = blackwell ? 32 : 16;      // divUp(16 on Hopper, 32 on Blackwell; ranks)
      blocks_max = (sms + ranks - 1) / ranks;
    }
    const double base_us = blackwell ? (k.ll ? 11.0 : 19.5) : (k.ll ? 4.5 : 7.8);
    const double sm_bw = (blackwell ? 55.0 : 65.0) * GiBps;
    const double peak = (blackwell ? (ldmc ? 1000.0 : 600.0) : (ldmc ? 480.0 : 320.0)) * GiBps;
    auto time = [&](int blocks) {
      const double bw = soft_min(blocks * sm_bw * multiplier, peak, sm_bw);
      return base_us + soft_plus(bus_bytes / bw - 1, 1);
    };
    // The fewest blocks within 2.5% of the time at the most blocks.
    int blocks = blocks_max;
    double t = time(blocks_max);
    for (int b = min_blocks; b < blocks_max; ++b)
      if (time(b) <= 1.025 * t) {
        blocks = b;
        t = time(b);
        break;
      }
    const double score = t * (1 + sm_penalty * blocks);
    if (best.kernel.empty() || score < best_score) {
      best = {k.name, k.algorithm, t};
      best_score = score;
    }
  }
  return best;
}

NcclSymPick nccl_sym_pick(const Config& cfg, std::uint64_t bytes) {
  const bool blackwell = nccl_generation(cfg.accelerator.name) == GpuGeneration::Blackwell;
  return nccl_sym_pick(cfg.fabric.gpus, bytes, blackwell, cfg.sw.nvls.enabled && cfg.fabric.gpus > 2);
}

}  // namespace scin
