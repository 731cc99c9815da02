// Slots (engines/data/slots.h): short-lived regions of a buffer take storage
// that regions alive at other times reuse. Hand-built schedules where a slot
// taken wrongly changes a value, and every algorithm in one workspace; each
// case is compared with executing every step as listed in buffers of their own.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "engines/data/buffers.h"
#include "engines/data/data_engine.h"
#include "engines/data/plan.h"
#include "engines/data/slots.h"
#include "fabric/preset.h"
#include "numerics/inputs.h"
#include "schedule/algorithms.h"
#include "schedule/schedule.h"
#include "numerics_test_util.h"

using namespace scin;

namespace {

Schedule two_ranks(std::uint64_t elems) {
  Schedule s;
  s.algorithm = "test";
  s.gpus = 2;
  s.planes = 1;
  s.elems = elems;
  for (int r = 0; r < 2; ++r) {
    s.input.push_back(s.add_buffer({"in", r, elems, Format::Fp32}));
    s.output.push_back(s.add_buffer({"out", r, elems, r == 0 ? Format::Fp32 : Format::Bf16}));
  }
  return s;
}

// A step computed by rank 0 (every buffer it touches is rank 0's).
Step step(DataOp op, std::vector<Region> srcs, std::vector<Region> dsts, bool accumulate = false) {
  Step st;
  st.kind = StepKind::Compute;
  st.initiator = 0;
  st.op = op;
  st.accumulate = accumulate;
  st.srcs = std::move(srcs);
  st.dsts = std::move(dsts);
  return st;
}

// Rank 1's output: a copy of its input.
Step rank1_output(const Schedule& s) {
  Step st = step(DataOp::Copy, {{s.input[1], 0, s.elems}}, {{s.output[1], 0, s.elems}});
  st.initiator = 1;
  return st;
}

// Values with fractions, so that sums in other orders or from other storage differ.
std::vector<std::vector<float>> inputs(std::uint64_t n) {
  std::vector<std::vector<float>> x(2, std::vector<float>(n));
  for (int r = 0; r < 2; ++r)
    for (std::uint64_t i = 0; i < n; ++i)
      x[static_cast<std::size_t>(r)][i] = static_cast<float>(std::sin(0.7 * static_cast<double>(i) + 3 * r) * 5.0);
  return x;
}

using numerics_test::same_bits;

DataResult run_listed(const Schedule& s, const std::vector<std::vector<float>>& x, bool poison) {
  DataOptions o;
  o.poison_unwritten = poison;
  o.share_work = false;
  return run_data(s, x, o);
}

// slot_storage on the planned steps of `s`: the buffers as laid out (s.buffers when no slot is taken).
std::vector<BufferDecl> laid_out(const Schedule& s) {
  std::vector<Step> steps = plan_steps(s);
  std::vector<BufferDecl> decls;
  if (!slot_storage(s, steps, decls)) return s.buffers;
  return decls;
}

std::uint64_t bytes_of(const std::vector<BufferDecl>& decls) {
  std::uint64_t n = 0;
  for (const BufferDecl& d : decls) n += data_internal::storage_bytes(d);
  return n;
}

}  // namespace

TEST(Slots, PiecesAliveAtOtherTimesShareOneSlot) {
  // A chain of pieces, each written by a reduction and read by the next steps
  // only: an FP32 buffer's pieces share one slot, a codec buffer's (INT8, G = 8,
  // the last piece a partial block) another; the values are those of every step as listed.
  const std::uint64_t n = 94, piece = 24;
  Schedule s = two_ranks(n);
  const BufferId t = s.add_buffer({"t", 0, n, Format::Fp32});
  const BufferId q = s.add_buffer({"q", 0, n, Format::Int8Block, 8, ScaleFormat::Fp16});
  const BufferId in0 = s.input[0];
  const BufferId o16 = s.add_buffer({"o16", 0, n, Format::Bf16});
  for (std::uint64_t lo = 0; lo < n; lo += piece) {
    const std::uint64_t c = std::min(piece, n - lo);
    s.add(step(DataOp::Reduce, {{in0, lo, c}, {in0, lo, c}}, {{t, lo, c}}));
    s.add(step(DataOp::Reduce, {{t, lo, c}, {in0, lo, c}}, {{s.output[0], lo, c}}));
    s.add(step(DataOp::Copy, {{t, lo, c}}, {{q, lo, c}}));
    s.add(step(DataOp::Reduce, {{q, lo, c}, {in0, lo, c}}, {{o16, lo, c}}));
  }
  s.add(step(DataOp::Reduce, {{o16, 0, n}, {s.output[0], 0, n}}, {{s.output[0], 0, n}}));
  s.add(rank1_output(s));
  const std::vector<BufferDecl> decls = laid_out(s);
  ASSERT_EQ(decls.size(), s.buffers.size() + 2);   // o16 is read whole: it keeps its storage
  EXPECT_EQ(decls[t].elems, 0u);
  EXPECT_EQ(decls[q].elems, 0u);
  EXPECT_EQ(decls[s.buffers.size()].elems, piece);
  EXPECT_EQ(decls[s.buffers.size() + 1].elems, piece);
  EXPECT_EQ(decls[s.buffers.size() + 1].format, Format::Int8Block);
  EXPECT_LT(bytes_of(decls), bytes_of(s.buffers));
  const auto x = inputs(n);
  for (bool poison : {false, true}) {
    const DataResult slots = run_data(s, x, {poison});
    const DataResult listed = run_listed(s, x, poison);
    EXPECT_TRUE(same_bits(slots.outputs, listed.outputs)) << poison;
    for (std::uint64_t i = 0; i < n; ++i) EXPECT_TRUE(std::isfinite(slots.outputs[0][i])) << i;
  }
}

TEST(Slots, APieceReadBeforeItIsWrittenKeepsItsOwnStorage) {
  // t[0,32) is written and read, then t[32,64) is accumulated into before
  // anything wrote it (it reads the fill value, NaN with poison): in the first
  // piece's slot it would read that piece's sum instead.
  const std::uint64_t n = 64, h = 32;
  Schedule s = two_ranks(n);
  const BufferId t = s.add_buffer({"t", 0, n, Format::Fp32});
  const BufferId in0 = s.input[0];
  s.add(step(DataOp::Reduce, {{in0, 0, h}, {in0, 0, h}}, {{t, 0, h}}));
  s.add(step(DataOp::Reduce, {{t, 0, h}, {in0, 0, h}}, {{s.output[0], 0, h}}));
  s.add(step(DataOp::Reduce, {{in0, h, h}}, {{t, h, h}}, true));
  s.add(step(DataOp::Copy, {{t, h, h}}, {{s.output[0], h, h}}));
  s.add(rank1_output(s));
  EXPECT_EQ(laid_out(s)[t].elems, n);
  const auto x = inputs(n);
  for (bool poison : {false, true}) {
    const DataResult slots = run_data(s, x, {poison});
    const DataResult listed = run_listed(s, x, poison);
    EXPECT_TRUE(same_bits(slots.outputs, listed.outputs)) << poison;
    for (std::uint64_t i = h; i < n; ++i) {
      if (poison) EXPECT_TRUE(std::isnan(slots.outputs[0][i])) << i;
      else EXPECT_EQ(slots.outputs[0][i], 0.0f + x[0][i]) << i;
    }
  }
}

TEST(Slots, OverlappingRegionsKeepTheirStorage) {
  // t[0,64) is written, t[32,96) written over its second half, then t[0,64)
  // read: it must see the second write, which separate slots would hide (t
  // is larger than the two regions, so that slots would take fewer bytes).
  const std::uint64_t n = 96;
  Schedule s = two_ranks(n);
  const BufferId t = s.add_buffer({"t", 0, 4 * n, Format::Fp32});
  const BufferId in0 = s.input[0];
  s.add(step(DataOp::Reduce, {{in0, 0, 64}, {in0, 0, 64}}, {{t, 0, 64}}));
  s.add(step(DataOp::Reduce, {{in0, 32, 64}, {in0, 0, 64}}, {{t, 32, 64}}));
  s.add(step(DataOp::Reduce, {{t, 0, 64}, {in0, 0, 64}}, {{s.output[0], 0, 64}}));
  s.add(rank1_output(s));
  EXPECT_EQ(laid_out(s)[t].elems, 4 * n);
  const auto x = inputs(n);
  for (bool poison : {false, true}) {
    const DataResult slots = run_data(s, x, {poison});
    const DataResult listed = run_listed(s, x, poison);
    EXPECT_TRUE(same_bits(slots.outputs, listed.outputs)) << poison;
    for (std::uint64_t i = 32; i < 64; ++i) EXPECT_EQ(slots.outputs[0][i], (0.0f + x[0][i] + x[0][i - 32]) + x[0][i]) << i;
  }
}

TEST(Slots, EveryAlgorithmInOneWorkspaceGivesTheListedBits) {
  // The study's way: every algorithm of hgx-h200-8 (ISA and INQ) in one
  // workspace, so slots hold the previous algorithm's values; element counts
  // that do and do not fill whole blocks and chunks, every element type and
  // several codecs. ring-q8 and two-shot-q8 must take slots (partial sums and
  // payloads), in fewer bytes than the schedule's buffers.
  const std::vector<numerics_test::DataCase> cases = {
      {8, 37, DType::Bf16, Codec::Int8, 32},     {8, 4099, DType::Fp16, Codec::Int4, 16},
      {3, 20001, DType::Fp32, Codec::Fp8E4M3, 64}, {16, 777, DType::Bf16, Codec::Int8, 100},
      {4, 65536 + 48, DType::Bf16, Codec::Int8, 48}};
  for (const auto& c : cases) {
    const Config cfg = numerics_test::data_case_config(c);
    const auto x = numerics_test::data_case_inputs(c, c.elems, Distribution::Outliers);
    DataWorkspace ws;
    for (bool poison : {false, true}) {
      for (const std::string& algo : supported_algorithms(cfg)) {
        const Schedule s = compile(cfg, algo, {c.elems * static_cast<std::uint64_t>(dtype_bytes(c.dtype)), c.dtype});
        if (algo == "ring-q8" || algo == "two-shot-q8") {
          const std::vector<BufferDecl> decls = laid_out(s);
          EXPECT_GT(decls.size(), s.buffers.size()) << algo << " " << c.gpus << " " << c.elems;
          EXPECT_LT(bytes_of(decls), bytes_of(s.buffers)) << algo;
        }
        DataOptions o;
        o.poison_unwritten = poison;
        const DataRun run = run_data(s, x, ws, o);
        const DataResult listed = run_listed(s, x, poison);
        std::vector<std::vector<float>> got;
        for (const auto& v : run.outputs) got.emplace_back(v.begin(), v.end());
        EXPECT_TRUE(same_bits(got, listed.outputs)) << c.gpus << " " << c.elems << " " << algo << " " << poison;
        EXPECT_EQ(run.data_steps, listed.data_steps) << algo;
        EXPECT_EQ(run.elements_processed, listed.elements_processed) << algo;
      }
    }
  }
}

TEST(Slots, OneShotReducesOnceForAllRanksAtManyRanks) {
  // (Shared work, plan.h.) Every rank of a one-shot sums the same N inputs (its gathered copies read
  // through their sources): the plan runs one reduction per chunk and copies
  // its result to the other ranks, at 8 and at 128 ranks.
  for (const int gpus : {8, 128}) {
    Config cfg = load_preset("hgx-h200-8");
    cfg.fabric.gpus = gpus;
    const Schedule s = compile(cfg, "one-shot", {4096 * 2, DType::Bf16});
    const std::vector<Step> plan = plan_steps(s);
    std::size_t listed = 0, planned = 0;
    for (const Step& st : s.steps) listed += st.op == DataOp::Reduce && !st.accumulate;
    for (const Step& st : plan) planned += st.op == DataOp::Reduce && !st.accumulate;
    EXPECT_EQ(listed % static_cast<std::size_t>(gpus), 0u) << gpus;
    EXPECT_GT(listed, 0u) << gpus;
    EXPECT_EQ(planned, listed / static_cast<std::size_t>(gpus)) << gpus;
  }
}

TEST(Slots, ARegionWrittenWholeAgainIsAliveAnew) {
  // t[0,32) is written and read (steps 0-1), u[0,32) written and read (2-3),
  // then t[0,32) written whole again by a copy that does not read it and read
  // (4-5): its two lives and u's take one slot; with t alive from 0 to 5, u
  // would need a second. The values are those of every step as listed.
  const std::uint64_t n = 32;
  Schedule s = two_ranks(n);
  const BufferId t = s.add_buffer({"t", 0, 4 * n, Format::Fp32});
  const BufferId u = s.add_buffer({"u", 0, 4 * n, Format::Fp32});
  const BufferId in0 = s.input[0], out0 = s.output[0];
  s.add(step(DataOp::Reduce, {{in0, 0, n}, {in0, 0, n}}, {{t, 0, n}}));
  s.add(step(DataOp::Reduce, {{t, 0, n}, {in0, 0, n}}, {{out0, 0, n}}));
  s.add(step(DataOp::Reduce, {{out0, 0, n}, {in0, 0, n}}, {{u, 0, n}}));
  s.add(step(DataOp::Reduce, {{u, 0, n}, {out0, 0, n}}, {{out0, 0, n}}));
  s.add(step(DataOp::Copy, {{out0, 0, n}}, {{t, 0, n}}));
  s.add(step(DataOp::Reduce, {{t, 0, n}, {in0, 0, n}}, {{out0, 0, n}}));
  s.add(rank1_output(s));
  const std::vector<BufferDecl> decls = laid_out(s);
  ASSERT_EQ(decls.size(), s.buffers.size() + 1);
  EXPECT_EQ(decls[t].elems, 0u);
  EXPECT_EQ(decls[u].elems, 0u);
  EXPECT_EQ(decls.back().elems, n);
  const auto x = inputs(n);
  for (bool poison : {false, true}) {
    const DataResult slots = run_data(s, x, {poison});
    const DataResult listed = run_listed(s, x, poison);
    EXPECT_TRUE(same_bits(slots.outputs, listed.outputs)) << poison;
    for (std::uint64_t i = 0; i < n; ++i) {
      const float a = (0.0f + x[0][i] + x[0][i]) + x[0][i];            // out0 after step 1
      const float b = (a + (0.0f + a + x[0][i])) ;                      // after step 3: u + out0
      EXPECT_EQ(slots.outputs[0][i], 0.0f + b + x[0][i]) << i;          // step 5: t (= b) + in0
    }
  }
}

TEST(Slots, ARingsPartialSumsInOutputsNeverReadTakeSlots) {
  // An 8-rank BF16 ring: ranks 1-7 return rank 0's output (plan_steps), so
  // their output buffers hold only partial sums and forwarded chunks, each
  // alive for a hop or two: they take slots. Rank 0's output and the inputs
  // keep their storage.
  const numerics_test::DataCase c{8, 8 * 1024, DType::Bf16, Codec::Int8, 32};
  const Config cfg = numerics_test::data_case_config(c);
  const Schedule s = compile(cfg, "ring", {c.elems * 2, c.dtype});
  std::vector<char> same;
  std::vector<Step> steps = plan_steps(s, &same);
  ASSERT_EQ(same, std::vector<char>({0, 1, 1, 1, 1, 1, 1, 1}));
  std::vector<BufferDecl> decls;
  ASSERT_TRUE(slot_storage(s, steps, decls, nullptr, &same));
  EXPECT_EQ(decls[s.output[0]].elems, c.elems);
  for (int r = 1; r < 8; ++r) EXPECT_EQ(decls[s.output[static_cast<std::size_t>(r)]].elems, 0u) << r;
  for (BufferId b : s.input) EXPECT_EQ(decls[b].elems, c.elems);
  std::uint64_t slot_elems = 0;
  for (std::size_t b = s.buffers.size(); b < decls.size(); ++b) slot_elems += decls[b].elems;
  EXPECT_EQ(slot_elems, 9 * c.elems / 8);   // nine chunks' slots where ranks 1-7's outputs took 7 x elems
  // Without the outputs never read nothing moves (every other buffer is an input or output).
  std::vector<Step> listed = plan_steps(s);
  std::vector<BufferDecl> none;
  EXPECT_FALSE(slot_storage(s, listed, none));
  const auto x = numerics_test::data_case_inputs(c, c.elems, Distribution::Outliers);
  DataWorkspace ws;
  for (bool poison : {false, true}) {
    DataOptions o;
    o.poison_unwritten = poison;
    const DataRun run = run_data(s, x, ws, o);
    const DataResult ref = run_listed(s, x, poison);
    std::vector<std::vector<float>> got;
    for (const auto& v : run.outputs) got.emplace_back(v.begin(), v.end());
    EXPECT_TRUE(same_bits(got, ref.outputs)) << poison;
  }
}

TEST(Slots, Bf16OutputsAsPatternsAreTheDecodedOutputsBits) {
  // DataOptions::bf16_outputs (the study's way): every algorithm of a BF16
  // case in one workspace; each rank's output held as BF16 comes as its
  // patterns (its float view empty), the high halves of the decoded floats a
  // run without the option returns, rank for rank.
  const numerics_test::DataCase c{8, 4099, DType::Bf16, Codec::Int8, 32};
  const Config cfg = numerics_test::data_case_config(c);
  const auto x = numerics_test::data_case_inputs(c, c.elems, Distribution::Outliers);
  DataWorkspace ws, plain_ws;
  std::size_t as_patterns = 0;
  for (const std::string& algo : supported_algorithms(cfg)) {
    const Schedule s = compile(cfg, algo, {c.elems * 2, c.dtype});
    DataOptions o;
    o.bf16_outputs = true;
    const DataRun run = run_data(s, x, ws, o);
    const DataRun plain = run_data(s, x, plain_ws, {});
    ASSERT_EQ(run.bf16.size(), 8u) << algo;
    EXPECT_TRUE(plain.bf16.empty()) << algo;
    for (std::size_t r = 0; r < 8; ++r) {
      ASSERT_EQ(plain.outputs[r].size(), c.elems) << algo;
      if (run.bf16[r].empty()) {
        EXPECT_TRUE(std::equal(run.outputs[r].begin(), run.outputs[r].end(), plain.outputs[r].begin())) << algo << r;
        continue;
      }
      ++as_patterns;
      EXPECT_TRUE(run.outputs[r].empty()) << algo << r;
      ASSERT_EQ(run.bf16[r].size(), c.elems) << algo << r;
      for (std::uint64_t i = 0; i < c.elems; ++i)
        ASSERT_EQ(static_cast<std::uint32_t>(run.bf16[r][i]) << 16, std::bit_cast<std::uint32_t>(plain.outputs[r][i]))
            << algo << " rank " << r << " element " << i;
    }
  }
  EXPECT_EQ(as_patterns, 8 * supported_algorithms(cfg).size());
}
