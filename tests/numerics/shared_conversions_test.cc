// Shared work, conversions (engines/data/plan.h): a copy into another
// representation of content an earlier copy already converted becomes a copy of
// that result, only while the result and the content are what they were; ranks'
// outputs known to hold rank 0's content share its view. Hand-built schedules
// whose shortcut, taken wrongly, changes a value; every case is compared with
// executing each step as listed.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include <gtest/gtest.h>

#include "engines/data/data_engine.h"
#include "engines/data/plan.h"
#include "schedule/schedule.h"
#include "numerics_test_util.h"

using namespace scin;

namespace {

constexpr std::uint64_t kElems = 96;   // three blocks of 32

// A copy by the source's node: a Compute on one node, else a Write to the other.
Step copy_step(const Schedule& s, Region src, Region dst) {
  Step st;
  st.initiator = s.buffers[src.buffer].node;
  st.kind = s.buffers[dst.buffer].node == st.initiator ? StepKind::Compute : StepKind::Write;
  st.op = DataOp::Copy;
  st.srcs = {src};
  st.dsts = {dst};
  return st;
}

// Values whose blocks have different scales and whose BF16 and FP16
// roundings differ.
std::vector<std::vector<float>> inputs(int ranks) {
  std::vector<std::vector<float>> x(static_cast<std::size_t>(ranks), std::vector<float>(kElems));
  for (int r = 0; r < ranks; ++r)
    for (std::uint64_t i = 0; i < kElems; ++i)
      x[static_cast<std::size_t>(r)][i] =
          static_cast<float>(std::sin(0.37 * static_cast<double>(i) + r) * (1.0 + static_cast<double>((i / 32 + r) % 3)) +
                             0.001 * static_cast<double>(i));
  return x;
}

using numerics_test::same_bits;

struct Hand {
  Schedule s;
  std::size_t reused = 0;        // step that copies an earlier conversion
  std::size_t fresh_src = 0;     // conversion of changed content
  std::size_t fresh_dst = 0;     // conversion whose earlier result was overwritten
  std::size_t other_repr = 0;    // conversion into FP16 of content converted to BF16
};

// Ranks' outputs: 0 = X (BF16), 1 = B, 2 = C, 3 = E (FP16), 4 = Y (BF16), 5 = Z.
// `last_equal`: rank 5's output is converted from the same codes as rank 0's
// (else from codes changed since).
Hand build(bool last_equal) {
  Hand h;
  Schedule& s = h.s;
  s.algorithm = "test";
  s.gpus = 6;
  s.planes = 1;
  s.elems = kElems;
  const Format outs[6] = {Format::Bf16, Format::Bf16, Format::Bf16, Format::Fp16, Format::Bf16, Format::Bf16};
  for (int r = 0; r < 6; ++r) {
    s.input.push_back(s.add_buffer({"in", r, kElems, Format::Fp32}));
    s.output.push_back(s.add_buffer({"out", r, kElems, outs[r]}));
  }
  const BufferId qa = s.add_buffer({"qa", 0, kElems, Format::Int8Block, 32, ScaleFormat::Fp16});
  const BufferId qb = s.add_buffer({"qb", 1, kElems, Format::Int8Block, 32, ScaleFormat::Fp16});
  const BufferId a = s.add_buffer({"a", 0, kElems, Format::Bf16});
  const BufferId in0 = s.input[0], in1 = s.input[1];
  const BufferId x = s.output[0], b = s.output[1], c = s.output[2], e = s.output[3], y = s.output[4], z = s.output[5];
  s.add(copy_step(s, {in0, 0, kElems}, {qa, 0, kElems}));   // quantise
  s.add(copy_step(s, {qa, 0, kElems}, {qb, 0, kElems}));    // the same codes elsewhere
  s.add(copy_step(s, {qa, 0, kElems}, {a, 0, kElems}));     // decoded once ...
  h.reused = s.steps.size();
  s.add(copy_step(s, {qb, 0, kElems}, {x, 0, kElems}));     // ... and copied: the same codes
  h.other_repr = s.steps.size();
  s.add(copy_step(s, {qb, 0, kElems}, {e, 0, kElems}));     // FP16: decoded again
  s.add(copy_step(s, {qb, 0, kElems}, {y, 0, kElems}));     // the same again (copies a or x)
  // The middle block of qb changes: qb is no longer qa's codes.
  s.add(copy_step(s, {in1, 32, 32}, {qb, 32, 32}));
  h.fresh_src = s.steps.size();
  s.add(copy_step(s, {qb, 0, kElems}, {b, 0, kElems}));
  // a, x and y change (a's first block): qa's conversion has no unchanged result.
  s.add(copy_step(s, {in1, 0, 32}, {a, 0, 32}));
  s.add(copy_step(s, {in1, 0, 32}, {x, 0, 32}));
  s.add(copy_step(s, {in1, 64, 32}, {y, 64, 32}));
  h.fresh_dst = s.steps.size();
  s.add(copy_step(s, {qa, 0, kElems}, {c, 0, kElems}));
  s.add(copy_step(s, {last_equal ? qa : qb, 0, kElems}, {z, 0, kElems}));
  return h;
}

DataResult run(const Schedule& s, const std::vector<std::vector<float>>& x, bool share, bool poison) {
  DataOptions o;
  o.share_work = share;
  o.poison_unwritten = poison;
  return run_data(s, x, o);
}

}  // namespace

TEST(SharedConversions, CopiedOnlyWhileTheContentAndTheResultAreUnchanged) {
  const auto x = inputs(6);
  for (bool last_equal : {true, false}) {
    const Hand h = build(last_equal);
    // The plan takes the shortcut where it holds, and only there.
    std::vector<char> same;
    const std::vector<Step> plan = plan_steps(h.s, &same);
    const BufferId a = h.s.buffers.size() - 1;
    EXPECT_EQ(plan[h.reused].srcs.front().buffer, a);                        // a copy of a
    EXPECT_TRUE(is_codec(h.s.buffers[plan[h.other_repr].srcs.front().buffer].format));
    EXPECT_TRUE(is_codec(h.s.buffers[plan[h.fresh_src].srcs.front().buffer].format));
    EXPECT_TRUE(is_codec(h.s.buffers[plan[h.fresh_dst].srcs.front().buffer].format));
    // Rank 5 holds rank 0's content only when converted from qa (rank 0's x
    // changed in its first block, and rank 5 converts all of qa: never).
    EXPECT_EQ(same, (std::vector<char>{0, 0, 0, 0, 0, 0}));
    for (bool poison : {false, true}) {
      const DataResult shared = run(h.s, x, true, poison);
      const DataResult listed = run(h.s, x, false, poison);
      EXPECT_TRUE(same_bits(shared.outputs, listed.outputs)) << last_equal << " " << poison;
      EXPECT_EQ(shared.data_steps, listed.data_steps);
      EXPECT_EQ(shared.elements_processed, listed.elements_processed);
      // The changed middle block of qb, the FP16 rounding and the overwritten
      // first block of a show up where they should.
      EXPECT_NE(shared.outputs[1][40], shared.outputs[2][40]);   // b (changed codes) vs c (qa's)
      EXPECT_NE(shared.outputs[2][5], shared.outputs[0][5]);     // c (qa decoded) vs x (overwritten)
      bool fp16_differs = false;
      for (std::uint64_t i = 0; i < kElems; ++i) fp16_differs = fp16_differs || shared.outputs[3][i] != shared.outputs[4][i];
      EXPECT_TRUE(fp16_differs);
    }
  }
}

TEST(SharedConversions, RanksKnownToHoldRankZerosOutputShareItOnlyWhenTheyDo) {
  // A ring-like gather: rank 0's codes are forwarded chunk by chunk to rank 1
  // (rank 1's own last chunk differs in one variant), then both dequantise.
  // With `read_after`, rank 1's output is copied back into rank 0's afterwards:
  // then its write is read and must be executed.
  const auto x = inputs(2);
  for (int variant = 0; variant < 3; ++variant) {
    const bool equal = variant != 1;
    const bool read_after = variant == 2;
    Schedule s;
    s.algorithm = "test";
    s.gpus = 2;
    s.planes = 1;
    s.elems = kElems;
    for (int r = 0; r < 2; ++r) {
      s.input.push_back(s.add_buffer({"in", r, kElems, Format::Fp32}));
      s.output.push_back(s.add_buffer({"out", r, kElems, Format::Bf16}));
    }
    const BufferId q0 = s.add_buffer({"q", 0, kElems, Format::Int8Block, 32, ScaleFormat::Fp16});
    const BufferId q1 = s.add_buffer({"q", 1, kElems, Format::Int8Block, 32, ScaleFormat::Fp16});
    s.add(copy_step(s, {s.input[0], 0, kElems}, {q0, 0, kElems}));
    for (std::uint64_t c = 0; c < 3; ++c)
      s.add(copy_step(s, {(equal || c < 2) ? q0 : s.input[1], 32 * c, 32}, {q1, 32 * c, 32}));
    s.add(copy_step(s, {q0, 0, kElems}, {s.output[0], 0, kElems}));
    s.add(copy_step(s, {q1, 0, kElems}, {s.output[1], 0, kElems}));
    const std::size_t last = s.steps.size() - 1;
    if (read_after) s.add(copy_step(s, {s.output[1], 0, kElems}, {s.output[0], 0, kElems}));
    std::vector<char> same;
    const std::vector<Step> plan = plan_steps(s, &same);
    EXPECT_EQ(same, (std::vector<char>{0, static_cast<char>(equal)}));
    EXPECT_EQ(plan[last].srcs.front().buffer, equal ? s.output[0] : q1);   // decoded once when the codes are equal
    // Rank 1's output is rank 0's view: its write is skipped unless read later.
    EXPECT_EQ(plan[last].dsts.size(), equal && !read_after ? 0u : 1u);
    DataWorkspace ws;
    const DataRun got = run_data(s, x, ws);
    const DataResult listed = run(s, x, false, false);
    for (int r = 0; r < 2; ++r)
      EXPECT_EQ(std::vector<float>(got.outputs[r].begin(), got.outputs[r].end()), listed.outputs[static_cast<std::size_t>(r)])
          << variant << " rank " << r;
    EXPECT_EQ(got.outputs[1].data() == got.outputs[0].data(), equal);   // one view when equal
    EXPECT_NE(listed.outputs[0][70] == listed.outputs[1][70], !equal);
  }
}
