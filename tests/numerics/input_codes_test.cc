// The ranks' inputs quantised once for several data-engine runs (InputCodes):
// every run that takes shared codes must give the bits of a run that quantises
// for itself, and regions whose blocks are not the input's own block grid, other
// codecs, written inputs and other inputs must not take them.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "engines/data/data_engine.h"
#include "fabric/preset.h"
#include "numerics/codec.h"
#include "numerics/inputs.h"
#include "schedule/algorithms.h"
#include "numerics_test_util.h"

using namespace scin;

namespace {

using numerics_test::same_bits;

Step copy_step(NodeId who, Region src, Region dst) {
  Step st;
  st.kind = StepKind::Compute;
  st.initiator = who;
  st.op = DataOp::Copy;
  st.srcs = {src};
  st.dsts = {dst};
  return st;
}

// Two ranks of `elems` FP32 values (inputs read in place), one codec buffer per rank.
struct Hand {
  Schedule s;
  BufferId q0 = 0, q1 = 0;
};

Hand two_ranks_with_codec(std::uint64_t elems, Format codec, int block) {
  Hand h;
  Schedule& s = h.s;
  s.algorithm = "test";
  s.gpus = 2;
  s.planes = 1;
  s.elems = elems;
  for (int r = 0; r < 2; ++r) {
    s.input.push_back(s.add_buffer({"in", r, elems, Format::Fp32}));
    s.output.push_back(s.add_buffer({"out", r, elems, Format::Fp32}));
  }
  h.q0 = s.add_buffer({"q", 0, elems, codec, block, ScaleFormat::Fp16});
  h.q1 = s.add_buffer({"q", 1, elems, codec, block, ScaleFormat::Fp16});
  return h;
}

// Two ranks of rising values (a block's scale depends on where it is cut).
std::vector<std::vector<float>> rising_inputs(std::uint64_t n) {
  std::vector<std::vector<float>> x(2, std::vector<float>(n));
  for (std::uint64_t i = 0; i < n; ++i) {
    x[0][i] = static_cast<float>(i + 1);
    x[1][i] = -static_cast<float>(3 * i + 7);
  }
  return x;
}

}  // namespace

TEST(InputCodes, SharedOnlyOnTheInputsOwnBlockGrid) {
  // Rising values: a block's scale depends on where it is cut. Run `warm`
  // first (it quantises input regions on the grid, filling the cache), then
  // `probe`, whose regions cut blocks elsewhere, start off the grid, use another
  // codec or read a written input: each must equal a run without shared codes.
  const std::uint64_t n = 96;
  const std::vector<std::vector<float>> x = rising_inputs(n);
  const CheckedInputs checked(x);

  Hand warm = two_ranks_with_codec(n, Format::Int8Block, 32);
  {
    Schedule& s = warm.s;
    // Rank 0: [32, 96) (ends at the input's end), rank 1: [0, 64): on the grid, shared.
    s.add(copy_step(0, {s.input[0], 32, 64}, {warm.q0, 32, 64}));
    s.add(copy_step(0, {warm.q0, 32, 64}, {s.output[0], 32, 64}));
    s.add(copy_step(1, {s.input[1], 0, 64}, {warm.q1, 0, 64}));
    s.add(copy_step(1, {warm.q1, 0, 64}, {s.output[1], 0, 64}));
  }
  std::vector<Hand> probes;
  {
    // [0, 50): block [32, 50) is cut at 50, not the cached [32, 64).
    Hand h = two_ranks_with_codec(n, Format::Int8Block, 32);
    h.s.add(copy_step(0, {h.s.input[0], 0, 50}, {h.q0, 0, 50}));
    h.s.add(copy_step(0, {h.q0, 0, 50}, {h.s.output[0], 0, 50}));
    // Source off the grid (to the input's end) into a destination on it:
    // blocks [16, 48), [48, 80), [80, 96), not the input's.
    h.s.add(copy_step(1, {h.s.input[1], 16, 80}, {h.q1, 0, 80}));
    h.s.add(copy_step(1, {h.q1, 0, 80}, {h.s.output[1], 0, 80}));
    probes.push_back(std::move(h));
  }
  {
    // Block size 16 and INT4: other codecs than the cache's.
    Hand h = two_ranks_with_codec(n, Format::Int8Block, 16);
    h.s.add(copy_step(0, {h.s.input[0], 32, 64}, {h.q0, 32, 64}));
    h.s.add(copy_step(0, {h.q0, 32, 64}, {h.s.output[0], 32, 64}));
    probes.push_back(std::move(h));
    Hand k = two_ranks_with_codec(n, Format::Int4Block, 32);
    k.s.add(copy_step(1, {k.s.input[1], 0, 64}, {k.q1, 0, 64}));
    k.s.add(copy_step(1, {k.q1, 0, 64}, {k.s.output[1], 0, 64}));
    probes.push_back(std::move(k));
  }
  {
    // Rank 0's input buffer written (by rank 1's input) before it is quantised:
    // not read in place, so not the cached codes of rank 0's input.
    Hand h = two_ranks_with_codec(n, Format::Int8Block, 32);
    Step w = copy_step(1, {h.s.input[1], 0, n}, {h.s.input[0], 0, n});
    w.kind = StepKind::Write;
    h.s.add(w);
    h.s.add(copy_step(0, {h.s.input[0], 32, 64}, {h.q0, 32, 64}));
    h.s.add(copy_step(0, {h.q0, 32, 64}, {h.s.output[0], 32, 64}));
    probes.push_back(std::move(h));
  }
  {
    // The cached regions again, and one inside them: these do take the codes.
    Hand h = two_ranks_with_codec(n, Format::Int8Block, 32);
    h.s.add(copy_step(0, {h.s.input[0], 64, 32}, {h.q0, 0, 32}));
    h.s.add(copy_step(0, {h.q0, 0, 32}, {h.s.output[0], 0, 32}));
    h.s.add(copy_step(1, {h.s.input[1], 0, 64}, {h.q1, 32, 64}));
    h.s.add(copy_step(1, {h.q1, 32, 64}, {h.s.output[1], 32, 64}));
    probes.push_back(std::move(h));
  }
  InputCodes codes(checked);
  DataOptions opt;
  opt.input_codes = &codes;
  DataWorkspace ws;
  {
    const DataResult want = run_data(warm.s, x);
    const DataRun got = run_data(warm.s, checked, ws, opt);
    EXPECT_TRUE(same_bits(got.outputs, want.outputs));
  }
  EXPECT_EQ(codes.held_elements(), 128u);   // rank 0 [32, 96), rank 1 [0, 64)
  for (std::size_t k = 0; k < probes.size(); ++k) {
    const DataResult want = run_data(probes[k].s, x);
    const DataRun got = run_data(probes[k].s, checked, ws, opt);
    EXPECT_TRUE(same_bits(got.outputs, want.outputs)) << "probe " << k;
  }
  EXPECT_EQ(codes.held_elements(), 128u);   // nothing else was on the grid with the cache's codec
  // The probe that cuts at 50 does differ from the cached block: the test can fail.
  std::vector<float> cut(50), whole(64);
  const num::CodecSpec spec{Format::Int8Block, 32, ScaleFormat::Fp16};
  num::fake_quantise(x[0].data(), 50, spec, cut.data());
  num::fake_quantise(x[0].data() + 32, 64, spec, whole.data());
  EXPECT_NE(std::memcmp(cut.data() + 32, whole.data(), 18 * sizeof(float)), 0);

  // Other inputs (another CheckedInputs) never take these codes.
  std::vector<std::vector<float>> y = x;
  for (auto& v : y)
    for (float& e : v) e *= 0.5f;
  const CheckedInputs other(y);
  const DataResult want = run_data(warm.s, y);
  const DataRun got = run_data(warm.s, other, ws, opt);
  EXPECT_TRUE(same_bits(got.outputs, want.outputs));
}

TEST(InputCodes, CodecBuffersReadTheCachedCodesOnlyWhenEveryWriteTakesThem) {
  // A codec buffer written only by copies that take one rank's input codes at
  // the input's own offsets, and read only where written before, reads the
  // cache's arrays in place (no copy). Probes that break one condition each
  // keep their own storage; every run, with and without poison, must equal a
  // run that quantises for itself.
  const std::uint64_t n = 96;
  const std::vector<std::vector<float>> x = rising_inputs(n);
  Hand in_place = two_ranks_with_codec(n, Format::Int8Block, 32);
  {
    Schedule& s = in_place.s;
    s.add(copy_step(0, {s.input[0], 0, 64}, {in_place.q0, 0, 64}));
    s.add(copy_step(0, {s.input[0], 64, 32}, {in_place.q0, 64, 32}));
    s.add(copy_step(0, {in_place.q0, 0, n}, {s.output[0], 0, n}));
    s.add(copy_step(1, {s.input[1], 0, n}, {in_place.q1, 0, n}));
    s.add(copy_step(1, {in_place.q1, 32, 64}, {s.output[1], 32, 64}));
  }
  std::vector<Hand> probes;
  {
    // q0 read before anything wrote it (the fill or NaN, not the cache's codes).
    Hand h = two_ranks_with_codec(n, Format::Int8Block, 32);
    h.s.add(copy_step(0, {h.q0, 0, 32}, {h.s.output[0], 0, 32}));
    h.s.add(copy_step(0, {h.s.input[0], 0, n}, {h.q0, 0, n}));
    h.s.add(copy_step(0, {h.q0, 32, 64}, {h.s.output[0], 32, 64}));
    // q1 written at another offset than the input's: the cache takes it, shifted.
    h.s.add(copy_step(1, {h.s.input[1], 0, 64}, {h.q1, 32, 64}));
    h.s.add(copy_step(1, {h.q1, 32, 64}, {h.s.output[1], 32, 64}));
    probes.push_back(std::move(h));
  }
  {
    // q0 written from both ranks' inputs; q1 read beyond what was written.
    Hand h = two_ranks_with_codec(n, Format::Int8Block, 32);
    h.s.add(copy_step(0, {h.s.input[0], 0, 32}, {h.q0, 0, 32}));
    Step w = copy_step(1, {h.s.input[1], 32, 64}, {h.q0, 32, 64});
    w.kind = StepKind::Write;
    h.s.add(w);
    h.s.add(copy_step(0, {h.q0, 0, n}, {h.s.output[0], 0, n}));
    h.s.add(copy_step(1, {h.s.input[1], 0, 32}, {h.q1, 0, 32}));
    h.s.add(copy_step(1, {h.q1, 0, 64}, {h.s.output[1], 0, 64}));
    probes.push_back(std::move(h));
  }
  {
    // q1 also written by a forwarded payload (q0's codes), after the input's.
    Hand h = two_ranks_with_codec(n, Format::Int8Block, 32);
    h.s.add(copy_step(0, {h.s.input[0], 0, n}, {h.q0, 0, n}));
    h.s.add(copy_step(1, {h.s.input[1], 0, n}, {h.q1, 0, n}));
    Step w = copy_step(0, {h.q0, 0, 32}, {h.q1, 0, 32});
    w.kind = StepKind::Write;
    h.s.add(w);
    h.s.add(copy_step(1, {h.q1, 0, n}, {h.s.output[1], 0, n}));
    h.s.add(copy_step(0, {h.q0, 0, n}, {h.s.output[0], 0, n}));
    probes.push_back(std::move(h));
  }
  for (bool poison : {false, true}) {
    const CheckedInputs checked(x);
    InputCodes codes(checked);
    DataOptions plain;
    plain.poison_unwritten = poison;
    DataOptions opt = plain;
    opt.input_codes = &codes;
    DataWorkspace ws;
    {
      const DataResult want = run_data(in_place.s, x, plain);
      const DataRun got = run_data(in_place.s, checked, ws, opt);
      EXPECT_TRUE(same_bits(got.outputs, want.outputs)) << poison;
    }
    EXPECT_EQ(codes.buffers_read_in_place(), 2u);
    for (std::size_t k = 0; k < probes.size(); ++k) {
      const DataResult want = run_data(probes[k].s, x, plain);
      const DataRun got = run_data(probes[k].s, checked, ws, opt);
      EXPECT_TRUE(same_bits(got.outputs, want.outputs)) << "probe " << k << " poison " << poison;
    }
    // Only the forwarding probe's q0 qualifies.
    EXPECT_EQ(codes.buffers_read_in_place(), 3u) << poison;
    // Listed execution (no shared work) keeps every buffer's own storage.
    DataOptions listed = opt;
    listed.share_work = false;
    const DataResult want = run_data(in_place.s, x, plain);
    const DataRun got = run_data(in_place.s, checked, ws, listed);
    EXPECT_TRUE(same_bits(got.outputs, want.outputs));
    EXPECT_EQ(codes.buffers_read_in_place(), 3u);
  }
}

TEST(AllAlgorithms, InputCodesSharedByAStudyAreBitIdentical) {
  // Every algorithm in one workspace with one InputCodes, in the study's order
  // and reversed (so that each quantised algorithm is once the one that
  // quantises and once one that copies): outputs equal to runs that quantise
  // for themselves. Sizes and block sizes that do and do not fill whole blocks.
  const std::vector<numerics_test::DataCase> cases = {
      {8, 37, DType::Bf16, Codec::Int8, 32, ScaleFormat::Fp16},
      {8, 1000, DType::Fp16, Codec::Int4, 16, ScaleFormat::Bf16},
      {8, 65536 + 100, DType::Bf16, Codec::Fp8E4M3, 64, ScaleFormat::Fp32},
      {4, 40000, DType::Fp32, Codec::Fp8E5M2, 32, ScaleFormat::Fp16},
      {16, 5000, DType::Bf16, Codec::Int8, 100, ScaleFormat::Fp16},
      {3, 10007, DType::Bf16, Codec::Int8, 48, ScaleFormat::Fp16},
  };
  for (const auto& c : cases) {
    const Config cfg = numerics_test::data_case_config(c);
    const auto x = numerics_test::data_case_inputs(c, c.elems + 5, Distribution::Gaussian);
    std::vector<std::string> algos = supported_algorithms(cfg);
    for (bool reversed : {false, true}) {
      if (reversed) std::reverse(algos.begin(), algos.end());
      const CheckedInputs checked(x);
      InputCodes codes(checked);
      DataOptions opt;
      opt.input_codes = &codes;
      DataWorkspace ws;
      int quantised = 0;
      for (const std::string& algo : algos) {
        const Schedule s = compile(cfg, algo, {c.elems * static_cast<std::uint64_t>(dtype_bytes(c.dtype)), c.dtype});
        const DataResult want = run_data(s, x);
        const DataRun got = run_data(s, checked, ws, opt);
        EXPECT_TRUE(same_bits(got.outputs, want.outputs))
            << c.gpus << " " << c.elems << " G=" << c.block << " " << algo << (reversed ? " reversed" : "");
        EXPECT_EQ(got.data_steps, want.data_steps) << algo;
        EXPECT_EQ(got.elements_processed, want.elements_processed) << algo;
        quantised += find_algorithm(algo)->quantised ? 1 : 0;
      }
      // scin-inq and two-shot-q8 quantise every rank's whole input: it is all held.
      EXPECT_GE(quantised, 3);
      EXPECT_EQ(codes.held_elements(), static_cast<std::uint64_t>(c.gpus) * c.elems) << c.gpus << " " << c.elems;
      // scin-inq's and two-shot-q8's input codec buffers read the cache in place.
      EXPECT_GE(codes.buffers_read_in_place(), 2u * static_cast<std::uint64_t>(c.gpus)) << c.gpus << " " << c.elems;
    }
  }
}
