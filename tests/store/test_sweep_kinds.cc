// Quantisation-error and inference points: a sweep stores what the numerics
// and inference areas compute directly. Built only when those libraries exist.
#include <gtest/gtest.h>

#include "base/error.h"
#include "fabric/preset.h"
#include "sweep/sweep.h"
#include "store_test_util.h"
#include "numerics/quant_study.h"
#include "inference/inference.h"

namespace scin {
namespace {

using nlohmann::json;

TEST(SweepKinds, QuantPointsEqualTheStudy) {
  test::TempDir dir;
  SweepSpec spec = sweep_spec_from_json(json::parse(R"({
    "name": "q", "kind": "quant",
    "base": {"preset": "hgx-h200-8", "collective": {"bytes": "8K", "dtype": "bf16"}, "input": {"seed": 7}},
    "axes": [{"path": "quant.block_elems", "values": [32, 128]},
             {"path": "collective.algorithm", "values": ["scin-inq", "ring-q8"]}]})"));
  Store store = Store::open(dir / "q.scindb", Access::Create);
  SweepOptions opts;
  opts.threads = 2;
  SweepSummary sum = run_sweep(store, spec, opts, SweepSink{});
  ASSERT_EQ(sum.status, RunStatus::Done);
  auto pts = store.points(sum.run_id);
  ASSERT_EQ(pts.size(), 4u);
  Config cfg = load_preset("hgx-h200-8");
  cfg.quant.block_elems = 128;
  QuantRequest req;
  req.algorithms = {"ring-q8"};
  req.elements = 4096;
  req.input.seed = 7;
  QuantStudy direct = run_quant(cfg, req);
  const PointRecord& p = pts[3];
  ASSERT_EQ(p.status, PointStatus::Ok) << p.message;
  EXPECT_EQ(p.kind, PointKind::Quant);
  EXPECT_EQ(p.algorithm, "ring-q8");
  EXPECT_EQ(p.axes["quant.block_elems"], 128);
  EXPECT_EQ(p.rel_l2, direct.rows[0].metrics.rel_l2);
  EXPECT_EQ(p.payload_ratio, direct.rows[0].payload_ratio);
  EXPECT_GT(p.rel_l2, 0);
  // INQ quantises twice, ring-q8 once per hop: INQ's error is the smaller.
  EXPECT_LT(pts[2].rel_l2, pts[3].rel_l2);

  json bad = to_json(spec);
  bad["axes"].push_back({{"path", "input.dist"}, {"values", {"gaussian", "cauchy"}}});
  EXPECT_THROW(sweep_spec_from_json(bad), Error);
}

TEST(SweepKinds, InferencePointsEqualTheModel) {
  SweepSpec spec = sweep_spec_from_json(json::parse(R"({
    "name": "i", "kind": "inference",
    "base": {"preset": "hgx-h200-8", "inference": {"model": "llama-2-7b", "prompt_tokens": 512}},
    "axes": [{"path": "inference.batch", "values": [1, 2]},
             {"path": "collective.algorithm", "values": ["ring", "scin"]}]})"));
  std::vector<PointRecord> pts;
  SweepSink sink;
  sink.on_point = [&](const PointRecord& p) { pts.push_back(p); };
  run_sweep(spec, SweepOptions{}, sink);
  ASSERT_EQ(pts.size(), 4u);
  InferenceRequest req;
  req.model = "llama-2-7b";
  req.fabric = load_preset("hgx-h200-8");
  req.batch = 2;
  req.prompt_tokens = 512;
  req.algorithms = {"scin"};
  req.baseline = "scin";
  InferenceResult direct = run_inference(req);
  ASSERT_EQ(pts[3].status, PointStatus::Ok) << pts[3].message;
  EXPECT_EQ(pts[3].kind, PointKind::Inference);
  EXPECT_EQ(pts[3].ttft_us, direct.find("scin")->ttft_us());
  EXPECT_EQ(pts[3].tpot_us, direct.find("scin")->tpot_us());
  EXPECT_GT(pts[0].ttft_us, 0);
}

TEST(SweepKinds, KindSettingsBelongToTheirKind) {
  json j = json::parse(R"({"name": "x", "base": {"collective": {"algorithm": "ring", "bytes": 64}},
                           "axes": [{"path": "inference.batch", "values": [1]}]})");
  try {
    sweep_spec_from_json(j);
    FAIL() << "expected an Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("kind inference"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace scin
