// Which of NCCL's symmetric-memory All-Reduce kernels NCCL runs (docs/model.md section 9,
// "NCCL's symmetric kernels"). torch's --sym-mem makes NCCL (2.27 and later) pick one
// kernel per call by its own cost model, ncclSymkPickKernel in NVIDIA/nccl
// src/sym_kernels.cc; this is that model for All-Reduce within one NVLink domain, so a
// measured `nccl-sym` row is modelled as the kernel family NCCL would have run.
#pragma once

#include <cstdint>
#include <string>

#include "fabric/config.h"

namespace scin {

struct NcclSymPick {
  std::string kernel;     // NCCL's name: AllReduce_AGxLL_R, _AGxLLMC_R, _RSxLD_AGxST, _RSxLDMC_AGxSTMC
  std::string algorithm;  // our stand-in: "one-shot" (the AG kernels) or "two-shot" (the RS kernels)
  double nccl_model_us = 0;  // NCCL's own estimate of the kernel's time (its model; our engines give the time used)
};

/// NCCL's pick for an All-Reduce of `bytes` per rank over `ranks` GPUs: Blackwell constants
/// when `blackwell` (compute capability 10), Hopper's otherwise; the multimem (MC) kernels
/// only when `multimem` (NVLS in the switch and more than 2 ranks, as NCCL's
/// hasLsaMultimem). Throws Error for ranks < 2 or bytes = 0.
NcclSymPick nccl_sym_pick(int ranks, std::uint64_t bytes, bool blackwell, bool multimem);

/// The pick on a fabric: Blackwell when the accelerator's name starts with B or GB (B200,
/// GB200, B300), multimem when the switch has NVLS and the fabric more than 2 GPUs.
NcclSymPick nccl_sym_pick(const Config& cfg, std::uint64_t bytes);

}  // namespace scin
