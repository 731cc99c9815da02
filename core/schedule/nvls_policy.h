// What NCCL does with NVLS at few GPUs (issue 15; docs/model.md section 9,
// "NVLS as NCCL runs it"). The `nvls` algorithm models the multimem mechanism
// at any GPU count; NCCL itself does not run it below switch.nvls.nccl_min_gpus.
#pragma once

#include <string>

#include "fabric/config.h"

namespace scin {

/// True when NCCL would run NVLS on `cfg`: from switch.nvls.nccl_min_gpus GPUs
/// (3: NCCL's ncclNvlsInit, src/transport/nvls.cc, leaves nvlsSupport = 0 when
/// the communicator has 2 GPUs or fewer), with NVLS in the switch.
bool nccl_runs_nvls(const Config& cfg);

/// Empty when NCCL runs NVLS on `cfg`; otherwise the sentence a result of the
/// `nvls` algorithm carries: NCCL would not run it, NCCL_ALGO=NVLS runs ring.
std::string nccl_nvls_note(const Config& cfg);

}  // namespace scin
