// Quant and inference studies stop through the RunContext they are given (no
// thread-local state): directly, part-way through a study, and as sweep points.
#include <gtest/gtest.h>

#include <chrono>
#include <stop_token>
#include <thread>

#include "base/cancel.h"
#include "fabric/preset.h"
#include "inference/inference.h"
#include "numerics/quant_study.h"
#include "sweep/sweep.h"

namespace scin {
namespace {

// A context whose progress sink requests a stop at its first report, and
// counts the reports: a study that polls the token stops after its first unit.
struct StopAtFirstReport {
  std::stop_source src;
  int reports = 0;
  RunContext ctx() {
    RunContext c;
    c.stop = src.get_token();
    c.progress = [this](double) {
      ++reports;
      src.request_stop();
    };
    return c;
  }
};

TEST(RunContextCancel, QuantStudyStopsBetweenAlgorithms) {
  const Config c = load_preset("hgx-h200-8");
  QuantRequest req;
  req.algorithms = {"ring", "scin-inq", "ring-q8"};
  req.elements = 4096;
  StopAtFirstReport s;
  EXPECT_THROW(run_quant(c, req, s.ctx()), Cancelled);
  EXPECT_EQ(s.reports, 1);   // the first algorithm ran, the second saw the stop
  std::stop_source stopped;
  stopped.request_stop();
  EXPECT_THROW(run_quant(c, req, RunContext{stopped.get_token(), {}}), Cancelled);
  EXPECT_EQ(run_quant(c, req, RunContext{}).rows.size(), 3u);   // no stop: every row
}

TEST(RunContextCancel, InferenceStopsBetweenAlgorithms) {
  InferenceRequest req;
  req.model = "llama-2-7b";
  req.fabric = load_preset("hgx-h200-8");
  req.prompt_tokens = 128;
  req.algorithms = {"ring", "nvls", "scin"};
  StopAtFirstReport s;
  EXPECT_THROW(run_inference(req, nullptr, s.ctx()), Cancelled);
  EXPECT_EQ(s.reports, 1);
  // A stop requested before the call reaches the All-Reduce simulations too.
  std::stop_source stopped;
  stopped.request_stop();
  AllReduceCache cache;
  EXPECT_THROW(run_inference(req, &cache, RunContext{stopped.get_token(), {}}), Cancelled);
  EXPECT_EQ(cache.size(), 0u);
  EXPECT_EQ(run_inference(req, &cache).algorithms.size(), 3u);
}

// One long point per sweep (seconds of work); the stop token is set 50 ms in.
// A point that did not poll would run to its end and be stored; a stopped one
// is dropped and the run ends cancelled with nothing stored.
SweepSummary run_and_stop(const char* spec_json) {
  const SweepSpec spec = sweep_spec_from_json(nlohmann::json::parse(spec_json));
  std::stop_source src;
  SweepOptions opts;
  opts.threads = 1;
  opts.stop = src.get_token();
  std::uint64_t stored = 0;
  SweepSink sink;
  sink.on_point = [&](const PointRecord&) { ++stored; };
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    src.request_stop();
  });
  SweepSummary sum = run_sweep(spec, opts, sink);
  stopper.join();
  EXPECT_EQ(stored, 0u);
  return sum;
}

TEST(RunContextCancel, AQuantSweepPointStopsPartWay) {
  const SweepSummary sum = run_and_stop(R"({
    "name": "q", "kind": "quant",
    "base": {"preset": "hgx-h200-8", "collective": {"algorithm": "ring-q8", "bytes": "4M", "dtype": "bf16"}},
    "axes": [{"path": "quant.block_elems", "values": [32]}]})");
  EXPECT_EQ(sum.status, RunStatus::Cancelled);
  EXPECT_EQ(sum.progress.done, 0u);
}

TEST(RunContextCancel, AnInferenceSweepPointStopsPartWay) {
  const SweepSummary sum = run_and_stop(R"({
    "name": "i", "kind": "inference",
    "base": {"preset": "hgx-h200-8", "engine": "packet", "collective": {"algorithm": "ring"},
             "inference": {"model": "llama-2-7b", "prompt_tokens": 8192}},
    "axes": [{"path": "inference.batch", "values": [1]}]})");
  EXPECT_EQ(sum.status, RunStatus::Cancelled);
  EXPECT_EQ(sum.progress.done, 0u);
}

}  // namespace
}  // namespace scin
