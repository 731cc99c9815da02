// Which algorithm and protocol NCCL runs for an All-Reduce it chooses itself (docs/model.md
// section 9, "NCCL's own choice"). Without NCCL_ALGO / NCCL_PROTO, NCCL picks the algorithm and
// protocol whose time by its own cost model is least (NVIDIA/nccl src/graph/tuning.cc, since
// 2026 src/tuning/{cost_model,ring,tree,nvls}.cc), not the one that is truly fastest. This is
// that model for one NVLink domain, so a measured `nccl-auto` row is modelled as what NCCL ran;
// our engines, with their calibrated costs, give its time.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "fabric/config.h"

namespace scin {

enum class GpuGeneration { Ampere, Hopper, Blackwell };

struct NcclTunerInput {
  int ranks = 8;
  double nvlink_GBps = 370.8;  // NCCL's view of a GPU's NVLink bandwidth (its per-link constant x links)
  GpuGeneration generation = GpuGeneration::Hopper;
  bool nvls = true;            // NCCL has NVLS on this communicator (NVLS switch, enough ranks)
  bool ring_only = false;      // NCCL_ALGO=Ring: NCCL picks the protocol alone
};

struct NcclAutoPick {
  std::string nccl_algorithm;  // NCCL's name: "Ring", "Tree" or "NVLS"
  std::string nccl_protocol;   // "LL", "LL128" or "Simple"
  std::string algorithm;       // our stand-in: "ring-ll", "ring-ll128", "ring-simple" or "nvls"
  double nccl_model_us = 0;    // NCCL's own estimate (its model; our engines give the time used)
};

/// NCCL's pick for an All-Reduce of `bytes` per rank. Tree, which scin has no schedule for, is
/// stood in for by the ring with the same protocol (NCCL's model never picks it within one
/// NVLink domain of up to 16 GPUs; at 72 without NVLS it picks Tree/LL128 at one size between
/// 16 and 64 MiB: docs/model.md). Throws Error for ranks < 2, bytes = 0 or a bandwidth that is
/// not positive.
NcclAutoPick nccl_auto_pick(const NcclTunerInput& in, std::uint64_t bytes);

/// The generation NCCL's constants are taken for: Blackwell when the accelerator's name starts
/// with B or GB (B200, GB200, B300), Ampere for A100 / A800 / A30 / A10, Hopper otherwise.
GpuGeneration nccl_generation(const std::string& accelerator_name);

/// NCCL's tuner input on a fabric: its NVLink bandwidth is `links.bandwidth_GBps` times NCCL's
/// per-link constant over the line rate (20.0 / 25, 20.6 / 25, 40.1 / 50 GB/s for Ampere, Hopper,
/// Blackwell: SM80/SM90/SM100_NVLINK_BW in src/include/topo.h), independent of the fitted
/// `links.efficiency`; NVLS where the switch has it and NCCL runs it (schedule/nvls_policy.h).
NcclTunerInput nccl_tuner_input(const Config& cfg);

NcclAutoPick nccl_auto_pick(const Config& cfg, std::uint64_t bytes);

/// NCCL's pick over `sizes` (ascending), one entry per run of equal picks: {"Ring/LL 8 B - 1 MiB",
/// "NVLS/Simple 2 MiB - 1 GiB"}. Empty for no sizes.
std::vector<std::string> nccl_choice_runs(const Config& cfg, const std::vector<std::uint64_t>& sizes);

/// The protocol NCCL runs its ring with when asked for Ring alone (NCCL_ALGO=Ring): "ring-ll",
/// "ring-ll128" or "ring-simple".
NcclAutoPick nccl_ring_pick(const Config& cfg, std::uint64_t bytes);

}  // namespace scin
