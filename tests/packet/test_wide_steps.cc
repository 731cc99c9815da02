// Steps over every rank (an NVLS ld_reduce's sources, a multicast's
// destinations), which the packet engine costs and shapes one by one, not by
// shape (step_costs.h): the per-source work skipped or cached for sources
// alike must give what each source costed alone gives.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <initializer_list>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "engines/packet/engine.h"
#include "engines/packet/packet_engine.h"
#include "engines/packet/stats.h"
#include "fabric/params.h"
#include "fabric/preset.h"
#include "model/cost_model.h"
#include "model/step_cost_without_ports.h"
#include "schedule/algorithms.h"

namespace scin {
namespace {

Config preset(const std::string& name, std::initializer_list<const char*> sets = {}) {
  Config c = load_preset(name);
  for (const char* a : sets) apply_assignment(c, a);
  return c;
}

Schedule nvls_schedule(const Config& c, std::uint64_t bytes) { return compile(c, "nvls", Collective{bytes, DType::Bf16}); }

bool is_ld_reduce(const Step& st) {
  return st.kind == StepKind::Read && st.unit == Unit::NvlsReduce && st.op == DataOp::Reduce && st.srcs.size() > 1;
}

// The NVLS units' uses of an ld_reduce hold the sum of its sources' plain bytes
// (plain_bytes() each, added in source order) over the planes. step_cost adds a
// source alike to the one before (count, buffer format, block, scale) without
// asking plain_bytes() again: here sources change count and format between
// neighbours and back (fp32 is 4 bytes a value, bf16 and the block formats 2).
TEST(PacketWideSteps, NvlsReduceCostSumsEverySourcesPlainBytes) {
  const Config c = preset("hgx-h200-8");
  Schedule s = nvls_schedule(c, 1 << 20);
  ASSERT_GE(s.input.size(), 8u);
  auto set = [&](std::size_t rank, Format f, int block, ScaleFormat sf) {
    BufferDecl& b = s.buffers[s.input[rank]];
    b.format = f, b.block_elems = block, b.scale_format = sf;
  };
  set(1, Format::Fp32, 0, ScaleFormat::Fp16);
  set(3, Format::Int8Block, 32, ScaleFormat::Fp16);
  set(4, Format::Fp32, 0, ScaleFormat::Fp16);
  const ResourceMap rm = resource_map(s);
  std::size_t checked = 0;
  StepCost without;
  for (std::size_t i = 0; i < s.steps.size(); ++i) {
    Step st = s.steps[i];
    if (!is_ld_reduce(st)) continue;
    // Counts that differ too (this step is costed, never run): the third and
    // the seventh source one element shorter (the seventh of the format of
    // its neighbours, bf16, the eighth as long as the sixth again).
    ASSERT_EQ(st.srcs.size(), 8u);
    st.srcs[2].count -= 1;
    st.srcs[6].count -= 1;
    double want = 0;
    for (const Region& r : st.srcs) want += plain_bytes(s, r);
    const StepCost cost = step_cost(c, s, rm, st);
    step_cost_without_ports(c, s, rm, st, without);
    int units = 0;
    for (const StepCost* x : {&cost, static_cast<const StepCost*>(&without)})
      for (const ResourceUse& u : x->uses) {
        if (u.kind != ResourceKind::NvlsReduce) continue;
        ++units;
        const double got = u.amount_bytes * static_cast<double>(rm.planes);
        EXPECT_EQ(got, want) << "step " << i << ": " << got << " plain bytes, expected " << want;
      }
    EXPECT_EQ(units, 2 * rm.planes) << "step " << i;
    ++checked;
    if (::testing::Test::HasFailure()) return;
  }
  EXPECT_GT(checked, 0u);
}

void expect_same_run(const packet::Run& a, const packet::Run& b, const std::string& what) {
  EXPECT_EQ(std::memcmp(&a.result.time_ns, &b.result.time_ns, sizeof(double)), 0) << what;
  ASSERT_EQ(a.steps.size(), b.steps.size()) << what;
  for (std::size_t i = 0; i < a.steps.size(); ++i) {
    EXPECT_EQ(std::memcmp(&a.steps[i].start_ns, &b.steps[i].start_ns, sizeof(double)), 0) << what << " step " << i;
    EXPECT_EQ(std::memcmp(&a.steps[i].finish_ns, &b.steps[i].finish_ns, sizeof(double)), 0) << what << " step " << i;
    if (::testing::Test::HasFailure()) return;
  }
  nlohmann::json x = packet::to_json(a.stats), y = packet::to_json(b.stats);
  for (auto* j : {&x, &y}) j->erase("wall_s"), j->erase("cpu_s");
  EXPECT_EQ(x.dump(), y.dump()) << what;
}

// An ld_reduce's groups go to its plane's group log only if source slot a is
// rank a for every a (Flow::every_gpu, from make_flow_shape's in_gpu_order).
// Sources swapped (the first two, or the last two) in every ld_reduce: no log
// entry is made, and the run is the one without group logs; in rank order the
// log is used.
TEST(PacketWideSteps, SourcesOutOfRankOrderTakeNoGroupLog) {
  const std::vector<std::pair<const char*, std::uint64_t>> cases = {{"fabric.gpus=8", 3000}, {"fabric.gpus=64", 65536}};
  for (const auto& [gpus, bytes] : cases) {
    for (int swap = 0; swap < 3; ++swap) {  // 0: in order, 1: first two swapped, 2: last two
      const Config c = preset("hgx-h200-8", {gpus});  // (gpus: a const char*)
      Schedule s = nvls_schedule(c, bytes);
      std::size_t reads = 0;
      for (Step& st : s.steps) {
        if (!is_ld_reduce(st)) continue;
        ++reads;
        const std::size_t n = st.srcs.size();
        if (swap == 1) std::swap(st.srcs[0], st.srcs[1]);
        if (swap == 2) std::swap(st.srcs[n - 2], st.srcs[n - 1]);
      }
      ASSERT_GT(reads, 0u);
      const std::string what = fmt::format("{} {} B swap {}", gpus, bytes, swap);
      const std::uint64_t logged0 = packet::testing::group_log_entries.load();
      const packet::Run on = packet::run(c, s);
      const std::uint64_t logged = packet::testing::group_log_entries.load() - logged0;
      if (swap == 0) EXPECT_GT(logged, 0u) << what;
      else EXPECT_EQ(logged, 0u) << what;
      packet::testing::group_log = false;
      const packet::Run off = packet::run(c, s);
      packet::testing::group_log = true;
      expect_same_run(on, off, what);
      if (::testing::Test::HasFailure()) return;
    }
  }
}

// Set-up writes the successors of a run of steps with one wide dependency
// list (an NVLS barrier's waits, each on every arrive) list by list
// (testing::successor_blocks counts the runs); with testing::fast_paths off,
// step by step. Same lists, so the same run: NVLS at 64 and 256 GPUs; and at
// 64 GPUs with one wait listing an arrive twice (its run is cut there and
// its list is not filled by lists: step by step its successors come
// a, a, a+1, a+1 ...) and another wait's list reversed.
TEST(PacketWideSteps, BarrierSuccessorsFilledListByListGiveTheSameRun) {
  struct Case {
    const char* gpus;
    std::uint64_t bytes;
    bool edit;
  };
  for (const Case& k : {Case{"fabric.gpus=64", 65536, false}, Case{"fabric.gpus=256", 262144, false},
                        Case{"fabric.gpus=64", 65536, true}}) {
    const Config c = preset("hgx-h200-8", {k.gpus});
    Schedule s = nvls_schedule(c, k.bytes);
    const std::string what = fmt::format("{} {} B{}", k.gpus, k.bytes, k.edit ? " edited" : "");
    std::size_t wide = 0;
    std::vector<std::size_t> waits;
    for (std::size_t i = 0; i < s.steps.size(); ++i) {
      if (s.steps[i].kind != StepKind::Wait || s.steps[i].deps.size() < 16) continue;
      ++wide;
      waits.push_back(i);
    }
    ASSERT_GE(wide, 8u) << what;
    if (k.edit) {
      Step& dup = s.steps[waits[3]];
      dup.deps.push_back(dup.deps[5]);  // listed twice
      Step& rev = s.steps[waits[6]];
      std::reverse(rev.deps.begin(), rev.deps.end());
    }
    const std::uint64_t blocks0 = packet::testing::successor_blocks.load();
    const packet::Run on = packet::run(c, s);
    const std::uint64_t blocks = packet::testing::successor_blocks.load() - blocks0;
    EXPECT_GT(blocks, 0u) << what;
    packet::testing::fast_paths = false;
    const packet::Run off = packet::run(c, s);
    packet::testing::fast_paths = true;
    EXPECT_EQ(packet::testing::successor_blocks.load() - blocks0, blocks) << what;  // none while off
    expect_same_run(on, off, what);
    if (::testing::Test::HasFailure()) return;
  }
}

}  // namespace
}  // namespace scin
