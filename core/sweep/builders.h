// One SweepSpec for every front end: `scin run` (-b/-e/-f over algorithms),
// `scin infer` (model x tp x batch x prompt x context grids), `scin quant`
// (one point per algorithm) and the GUI build their sweeps here, then resolve
// the points with resolve_points(). Nothing here runs a model.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sweep/sweep.h"

namespace scin {

/// The fabric every front end takes: a preset (name or file), --gpus, --set.
struct FabricChoice {
  std::string preset = "hgx-h200-8";
  int gpus = 0;                         // 0: the preset's
  std::vector<std::string> sets;        // "PATH=VALUE", applied in order after --gpus
};

/// `scin run`: sizes (outer) x algorithms (inner), point i = size i / n, algorithm i % n.
SweepSpec collective_sweep(const FabricChoice& fabric, const std::vector<std::string>& algorithms,
                           const std::vector<std::uint64_t>& sizes, const std::string& dtype,
                           const std::string& engine);

struct InferenceGrid {
  std::vector<std::string> models;
  std::string accelerator;              // empty: the preset's accelerator.*
  std::vector<int> tp, batch, prompt_tokens, context_tokens;   // context 0 = the prompt
};
/// `scin infer`: model (slowest) x tp x batch x prompt_tokens x context_tokens.
/// The points carry no algorithm: the front end runs every algorithm per point.
SweepSpec inference_sweep(const FabricChoice& fabric, const InferenceGrid& grid, const std::string& engine);

/// `scin quant`: one point per algorithm on generated inputs (`input` holds input.* keys).
SweepSpec quant_sweep(const FabricChoice& fabric, const std::vector<std::string>& algorithms,
                      std::uint64_t bytes_per_rank, const std::string& dtype, const nlohmann::json& input);

/// The GUI's sweep: one resolved fabric (every registry parameter recorded in
/// base.set; `preset` only names it, empty if it is no shipped preset), the
/// user's extra axes (first slowest; groups of several axes are zipped), then
/// collective.algorithm, then collective.bytes as the geometric range
/// min_bytes..max_bytes x factor (fastest).
struct CollectiveGrid {
  std::string name = "sweep";
  std::string description;
  std::string preset;                   // names the fabric; base.set overrides every parameter
  std::vector<AxisGroup> axes;          // extra axes over registry parameters
  std::vector<std::string> algorithms;
  std::uint64_t min_bytes = 8, max_bytes = 1ull << 30, factor = 2;
  std::string dtype = "bf16";
  std::string engine = "analytic";
};
SweepSpec config_sweep(const Config& cfg, const CollectiveGrid& grid);

/// Every point of a spec resolved (presets loaded once), in index order.
std::vector<ResolvedPoint> resolve_points(const SweepSpec& spec);

}  // namespace scin
