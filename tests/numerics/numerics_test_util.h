// Shared by the numerics tests: bit-for-bit equality of per-rank arrays, and
// the data-engine cases that run every algorithm on real numbers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <vector>

#include "engines/data/data_engine.h"
#include "fabric/config.h"
#include "fabric/preset.h"
#include "numerics/inputs.h"
#include "numerics/quant_study.h"
#include "schedule/schedule.h"

namespace scin::numerics_test {

template <class RowA, class RowB>
bool same_bits(const std::vector<RowA>& a, const std::vector<RowB>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t r = 0; r < a.size(); ++r)
    if (a[r].size() != b[r].size() || std::memcmp(a[r].data(), b[r].data(), a[r].size() * sizeof(float)) != 0)
      return false;
  return true;
}

// One data-engine case: GPUs, elements per rank, element type, codec and block.
struct DataCase {
  int gpus;
  std::uint64_t elems;
  DType dtype;
  Codec codec;
  int block;
  std::optional<ScaleFormat> scale = std::nullopt;   // the preset's when unset
};

// hgx-h200-8 with the ring on Simple (its data schedule is protocol-free) and
// the ISA with INQ, so that every algorithm runs; the case's fabric and codec.
inline Config data_case_config(const DataCase& c) {
  Config cfg = load_preset("hgx-h200-8");
  cfg.ring.protocol = RingProtocol::Simple;
  cfg.fabric.gpus = c.gpus;
  cfg.sw.isa.enabled = true;
  cfg.sw.isa.inq = true;
  cfg.quant.codec = c.codec;
  cfg.quant.block_elems = c.block;
  if (c.scale) cfg.quant.scale_format = *c.scale;
  return cfg;
}

// The case's generated inputs, rounded to its element type.
inline std::vector<std::vector<float>> data_case_inputs(const DataCase& c, std::uint64_t seed, Distribution dist) {
  InputSpec spec;
  spec.seed = seed;
  spec.dist = dist;
  auto x = generate_inputs(spec, c.gpus, c.elems);
  for (auto& v : x) round_to_format(v, format_of(c.dtype));
  return x;
}

}  // namespace scin::numerics_test
