#include "sweep/builders.h"


namespace scin {

using json = nlohmann::json;

namespace {

json base_of(const FabricChoice& f, const std::string& engine) {
  json set = json::array();
  if (f.gpus != 0) set.push_back("fabric.gpus=" + std::to_string(f.gpus));
  for (const auto& s : f.sets) set.push_back(s);
  json b{{"engine", engine}};
  if (!f.preset.empty()) b["preset"] = f.preset;
  if (!set.empty()) b["set"] = set;
  return b;
}

template <class T>
json values_axis(const char* path, const std::vector<T>& v) {
  return json{{"path", path}, {"values", v}};
}

}  // namespace

SweepSpec collective_sweep(const FabricChoice& fabric, const std::vector<std::string>& algorithms,
                           const std::vector<std::uint64_t>& sizes, const std::string& dtype,
                           const std::string& engine) {
  json base = base_of(fabric, engine);
  base["collective"] = json{{"dtype", dtype}};
  json j{{"name", "run"}, {"kind", "collective"}, {"base", base},
         {"axes", json::array({values_axis("collective.bytes", sizes),
                               values_axis("collective.algorithm", algorithms)})}};
  return sweep_spec_from_json(j, "scin run");
}

SweepSpec inference_sweep(const FabricChoice& fabric, const InferenceGrid& g, const std::string& engine) {
  json base = base_of(fabric, engine);
  if (!g.accelerator.empty()) base["inference"] = json{{"accelerator", g.accelerator}};
  json axes = json::array({values_axis("inference.model", g.models), values_axis("inference.tp", g.tp),
                           values_axis("inference.batch", g.batch),
                           values_axis("inference.prompt_tokens", g.prompt_tokens),
                           values_axis("inference.context_tokens", g.context_tokens)});
  json j{{"name", "infer"}, {"kind", "inference"}, {"base", base}, {"axes", axes}};
  return sweep_spec_from_json(j, "scin infer");
}

SweepSpec quant_sweep(const FabricChoice& fabric, const std::vector<std::string>& algorithms,
                      std::uint64_t bytes_per_rank, const std::string& dtype, const json& input) {
  json base = base_of(fabric, "analytic");
  base["collective"] = json{{"bytes", bytes_per_rank}, {"dtype", dtype}};
  if (!input.empty()) base["input"] = input;
  json j{{"name", "quant"}, {"kind", "quant"}, {"base", base},
         {"axes", json::array({values_axis("collective.algorithm", algorithms)})}};
  return sweep_spec_from_json(j, "scin quant");
}

SweepSpec config_sweep(const Config& cfg, const CollectiveGrid& g) {
  SweepSpec s;
  s.name = g.name;
  s.experiment = "gui";
  s.description = g.description;
  s.kind = PointKind::Collective;
  s.base.preset = g.preset;
  const json params = config_parameters_json(cfg);
  for (auto it = params.begin(); it != params.end(); ++it) s.base.set.emplace_back(it.key(), it.value().at("value"));
  s.base.engine = g.engine;
  s.base.dtype = g.dtype;
  s.axes = g.axes;
  s.axes.push_back(AxisGroup{{Axis{"collective.algorithm", {g.algorithms.begin(), g.algorithms.end()}, {}}}});
  s.axes.push_back(AxisGroup{{Axis{"collective.bytes", {}, AxisRange{g.min_bytes, g.max_bytes,
                                                                      static_cast<double>(g.factor), 0, 0}}}});
  // Through the canonical JSON: the same checks as any spec file (paths, ranges, zips).
  return sweep_spec_from_json(to_json(s), "GUI sweep");
}

std::vector<ResolvedPoint> resolve_points(const SweepSpec& spec) {
  const PointResolver resolve(spec);
  std::vector<ResolvedPoint> out;
  out.reserve(resolve.size());
  for (std::uint64_t i = 0; i < resolve.size(); ++i) out.push_back(resolve(i));
  return out;
}

}  // namespace scin
