// All-Reduce algorithms: each compiles (config, collective) into a Schedule.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "fabric/config.h"
#include "schedule/schedule.h"

namespace scin {

struct Collective {
  std::uint64_t bytes = 0;   // message size per rank, S
  DType dtype = DType::Bf16;
};

struct AlgorithmInfo {
  std::string name;          // CLI name: "ring", "nvls", "scin-inq", ...
  std::string description;
  bool quantised = false;    // moves a block-quantised payload
};

/// Every algorithm, in display order.
const std::vector<AlgorithmInfo>& algorithms();
const AlgorithmInfo* find_algorithm(const std::string& name);

/// Empty if `cfg`'s fabric can run `algo`, else the reason (e.g. "nvls needs a
/// switch with NVLS reduction (switch.nvls.enabled); mesh-8 has no switch").
std::string unsupported_reason(const Config& cfg, const std::string& algo);

/// The algorithms `cfg` supports, in display order.
std::vector<std::string> supported_algorithms(const Config& cfg);

/// Compiles `algo`. For "ring", `cfg.ring.protocol` must not be Auto here (the
/// simulation layer tries each protocol and keeps the fastest, as NCCL does).
/// Throws Error for unknown or unsupported algorithms and bad sizes.
Schedule compile(const Config& cfg, const std::string& algo, const Collective& c);

/// Elements per rank of a message of `bytes` in `dtype` (bytes must be a
/// positive multiple of the element size).
std::uint64_t element_count(std::uint64_t bytes, DType dtype);
int dtype_bytes(DType t);

/// Payload ratio of a block codec against 16-bit values: (bits*G + scale_bits) / (16 G).
double payload_ratio(const QuantSpec& q);

}  // namespace scin
