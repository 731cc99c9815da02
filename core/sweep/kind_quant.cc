// Point kind "quant": the numerical error of one All-Reduce on generated data
// (numerics/quant_study.h). Settings: input.* (the InputSpec fields).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <limits>

#include "base/error.h"
#include "base/json_input.h"
#include "engines/simulate.h"
#include "numerics/quant_study.h"
#include "sweep/kinds.h"

namespace scin {

namespace {

using json = nlohmann::json;

json check_input(const std::string& key, const json& v, const std::string& field) {
  if (key == "dist" ? !v.is_string() : !v.is_number())
    throw Error(fmt::format("{}: input.{} must be a {}", field, key, key == "dist" ? "string" : "number"));
  // Range-checked, never wrapped (input.seed -1 used to run as 2^64-1).
  if (key == "seed") json_uint(v, field, 0, std::numeric_limits<std::uint64_t>::max());
  if (key == "channels") json_uint(v, field, 1, std::uint64_t{1} << 24);
  if (key == "stddev") json_real(v, field, 0, 1e30);
  if (key == "outlier_fraction") json_real(v, field, 0, 1);
  if (key == "outlier_scale") json_real(v, field, 1, 1e6);
  if (key == "dist") {
    try {
      parse_distribution(v.get<std::string>());
    } catch (const Error& e) {
      throw Error(fmt::format("{}: {}", field, e.what()));
    }
  }
  return v;
}

bool integer_input(const std::string& key) { return key == "seed" || key == "channels"; }

void evaluate_quant(PointRecord& p, const ResolvedPoint& r, const RunContext& ctx) {
  if (sweep_detail::skip_unsupported(p, r)) return;
  QuantStudy st = run_quant(r.config, quant_request(r), ctx);
  if (st.rows.empty()) throw Error("quant study returned no result");
  const QuantRow& row = st.rows.front();
  p.variant = row.variant;
  p.rel_l2 = row.metrics.rel_l2;
  p.sqnr_dB = row.metrics.sqnr_dB;
  p.max_abs = row.metrics.max_abs;
  p.payload_ratio = row.payload_ratio;
  p.error_variance_ratio = row.error_variance_ratio;
  p.max_link_bytes = row.max_link_bytes;
  p.extra = json{{"row", to_json(row)}, {"dtype_round", to_json(st.dtype_round)},
                 {"single_quant", to_json(st.single_quant)}};
}

// One algorithm per point (needs_algorithm): a study of it alone.
WorkEstimate quant_work(const ResolvedPoint& r) {
  return quant_study_work(r.config.fabric.gpus, element_count(r.collective.bytes, r.collective.dtype),
                          r.collective.dtype, 1);
}

}  // namespace

QuantRequest quant_request(const ResolvedPoint& r) {
  QuantRequest req;
  if (!r.algorithm.empty()) req.algorithms = {r.algorithm};
  req.dtype = r.collective.dtype;
  req.elements = element_count(r.collective.bytes, r.collective.dtype);
  const json& in = r.input;
  if (in.contains("dist")) req.input.dist = parse_distribution(in["dist"].get<std::string>());
  if (in.contains("stddev")) req.input.stddev = in["stddev"].get<double>();
  if (in.contains("seed")) req.input.seed = in["seed"].get<std::uint64_t>();
  if (in.contains("outlier_fraction")) req.input.outlier_fraction = in["outlier_fraction"].get<double>();
  if (in.contains("outlier_scale")) req.input.outlier_scale = in["outlier_scale"].get<double>();
  if (in.contains("channels")) req.input.channels = in["channels"].get<std::uint64_t>();
  return req;
}

namespace sweep_detail {
const KindOps& quant_kind() {
  static const KindOps k = [] {
    KindOps o;
    o.kind = PointKind::Quant;
    o.group = "input";
    o.keys = {"dist", "stddev", "seed", "outlier_fraction", "outlier_scale", "channels"};
    o.needs_bytes = false;
    o.default_bytes = 2ull << 20;
    o.check_setting = check_input;
    o.integer_setting = integer_input;
    o.evaluate = evaluate_quant;
    o.work = quant_work;
    return o;
  }();
  return k;
}
}  // namespace sweep_detail

}  // namespace scin
