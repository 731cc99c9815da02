// How a Schedule stores its steps: the compiled schedules of every preset (up
// to 72 GPUs), algorithm and a range of sizes equal a reference, field by
// field (digests of every field of every buffer and step, written by the
// std::vector step store that preceded the inline one, issue 14); and copies
// and moves of schedules keep every field.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "fabric/preset.h"
#include "schedule/algorithms.h"
#include "schedule/schedule.h"

using namespace scin;

namespace {

// FNV-1a over the values of every field, in a fixed order (independent of how
// the fields are stored).
struct Digest {
  std::uint64_t h = 1469598103934665603ull;
  void bytes(const void* p, std::size_t n) {
    const auto* c = static_cast<const unsigned char*>(p);
    for (std::size_t i = 0; i < n; ++i) {
      h ^= c[i];
      h *= 1099511628211ull;
    }
  }
  void u(std::uint64_t v) { bytes(&v, sizeof v); }
  void i(std::int64_t v) { u(static_cast<std::uint64_t>(v)); }
  void s(const std::string& t) {
    u(t.size());
    bytes(t.data(), t.size());
  }
};

template <typename Regions>
void digest_regions(Digest& d, const Regions& rs) {
  d.u(rs.size());
  for (const Region& r : rs) {
    d.u(r.buffer);
    d.u(r.offset);
    d.u(r.count);
  }
}

void digest_step(Digest& d, const Step& st) {
  d.i(static_cast<int>(st.kind));
  d.i(st.initiator);
  d.i(st.target);
  d.i(st.via);
  d.i(static_cast<int>(st.op));
  d.i(st.accumulate);
  d.i(static_cast<int>(st.accum));
  d.i(static_cast<int>(st.unit));
  d.i(static_cast<int>(st.protocol));
  d.i(st.ring_step);
  digest_regions(d, st.srcs);
  digest_regions(d, st.dsts);
  d.u(st.deps.size());
  for (StepId x : st.deps) d.u(x);
  d.s(st.label);
}

std::uint64_t digest(const Schedule& s) {
  Digest d;
  d.s(s.algorithm);
  d.s(s.variant);
  d.i(s.gpus);
  d.i(s.planes);
  d.i(static_cast<int>(s.topology));
  d.i(static_cast<int>(s.dtype));
  d.u(s.elems);
  d.u(s.bytes);
  d.i(s.leaves);
  d.i(s.spines);
  d.u(s.buffers.size());
  for (const BufferDecl& b : s.buffers) {
    d.s(b.name);
    d.i(b.node);
    d.u(b.elems);
    d.i(static_cast<int>(b.format));
    d.i(b.block_elems);
    d.i(static_cast<int>(b.scale_format));
  }
  d.u(s.steps.size());
  for (const Step& st : s.steps) digest_step(d, st);
  d.u(s.input.size());
  for (BufferId b : s.input) d.u(b);
  d.u(s.output.size());
  for (BufferId b : s.output) d.u(b);
  return d.h;
}

const char* kDigests = SCIN_SOURCE_DIR "/tests/core/schedule_digests.txt";

// Every compiled schedule the reference covers: "preset algorithm protocol bytes" -> digest.
std::map<std::string, std::pair<std::size_t, std::uint64_t>> compile_all() {
  std::map<std::string, std::pair<std::size_t, std::uint64_t>> out;
  for (const auto& preset : list_presets()) {
    const Config base = load_preset(preset.name);
    if (base.fabric.gpus > 72) continue;  // (seconds per schedule)
    for (const auto& name : supported_algorithms(base)) {
      const Algorithm algo = parse_algorithm(name);
      if (algo > Algorithm::ScinInqUplink) continue;  // a test's registered toy
      const bool ring = info(algo).ring_protocol;
      for (RingProtocol p : {RingProtocol::LL, RingProtocol::LL128, RingProtocol::Simple}) {
        if (!ring && p != RingProtocol::Simple) continue;
        Config cfg = base;
        cfg.ring.protocol = p;
        for (std::uint64_t bytes : {2ull, 8ull, 1000ull, 65536ull, 1ull << 20, 3ull << 20, 64ull << 20, 1ull << 30}) {
          if (bytes > (64ull << 20) && cfg.fabric.gpus > 8) continue;
          const Schedule s = compile(cfg, algo, {bytes, DType::Bf16});
          out[preset.name + " " + name + " " + to_string(p) + " " + std::to_string(bytes)] = {s.steps.size(),
                                                                                             digest(s)};
        }
      }
    }
  }
  return out;
}

}  // namespace

// The reference was written once by the std::vector step store
// (SCIN_WRITE_SCHEDULE_DIGESTS=1 test_core --gtest_filter='ScheduleStore.*').
TEST(ScheduleStore, CompiledSchedulesEqualTheReference) {
  const auto got = compile_all();
  if (std::getenv("SCIN_WRITE_SCHEDULE_DIGESTS")) {
    std::ofstream out(kDigests);
    for (const auto& [key, v] : got) out << key << " " << v.first << " " << std::hex << v.second << std::dec << "\n";
    GTEST_SKIP() << "wrote " << kDigests;
  }
  std::ifstream in(kDigests);
  ASSERT_TRUE(in) << kDigests;
  std::map<std::string, std::pair<std::size_t, std::uint64_t>> want;
  for (std::string line; std::getline(in, line);) {
    std::istringstream ls(line);
    std::string preset, algo, proto, bytes;
    std::size_t steps = 0;
    std::uint64_t h = 0;
    ls >> preset >> algo >> proto >> bytes >> steps >> std::hex >> h;
    ASSERT_TRUE(ls) << line;
    want[preset + " " + algo + " " + proto + " " + bytes] = {steps, h};
  }
  ASSERT_GT(want.size(), 300u);
  EXPECT_EQ(got.size(), want.size());
  std::size_t steps = 0;
  for (const auto& [key, v] : want) {
    auto it = got.find(key);
    ASSERT_NE(it, got.end()) << key;
    EXPECT_EQ(it->second.first, v.first) << key << ": step count";
    EXPECT_EQ(it->second.second, v.second) << key << ": digest";
    steps += v.first;
  }
  EXPECT_GT(steps, 1000000u);
}

// Copies and moves keep every field: a copy (construction and assignment over
// a schedule of another shape) digests as the original; a moved-to schedule
// digests as the original did; steps copied, moved and swapped one by one too.
TEST(ScheduleStore, CopiesAndMovesKeepEveryField) {
  const Config cfg = load_preset("hgx-h200-8");
  for (const char* algo : {"one-shot", "two-shot", "nvls", "scin", "scin-inq", "ring-q8", "two-shot-q8"})
    for (std::uint64_t bytes : {8ull, 1ull << 20}) {
      const Schedule s = compile(cfg, algo, {bytes, DType::Bf16});
      const std::uint64_t h = digest(s);
      Schedule copy = s;
      EXPECT_EQ(digest(copy), h) << algo;
      Schedule other = compile(cfg, "ring-q8", {4096, DType::Bf16});
      other = s;
      EXPECT_EQ(digest(other), h) << algo;
      Schedule moved = std::move(copy);
      EXPECT_EQ(digest(moved), h) << algo;
      Schedule assigned = compile(cfg, "nvls", {64ull << 20, DType::Bf16});
      assigned = std::move(moved);
      EXPECT_EQ(digest(assigned), h) << algo;
      // Step by step: copy, move and swap every step through temporaries.
      std::vector<Step> steps;
      for (const Step& st : s.steps) {
        Step a = st;
        Step b = std::move(a);
        Step c;
        c = b;
        Step d;
        d = std::move(c);
        steps.push_back(std::move(d));
      }
      for (std::size_t i = 0; i + 1 < steps.size(); i += 2) std::swap(steps[i], steps[i + 1]);
      for (std::size_t i = 0; i + 1 < steps.size(); i += 2) std::swap(steps[i], steps[i + 1]);
      ASSERT_EQ(steps.size(), s.steps.size());
      for (std::size_t i = 0; i < steps.size(); ++i) {
        Digest x, y;
        digest_step(x, steps[i]);
        digest_step(y, s.steps[i]);
        ASSERT_EQ(x.h, y.h) << algo << " step " << i;
      }
    }
}

// The inline list itself (schedule/inline_vec.h): values in order whether
// inline or on the heap, copies independent of their original, moves that
// leave the source empty (a heap block is handed over, not copied).
TEST(ScheduleStore, InlineVecKeepsValuesInlineAndOnTheHeap) {
  using V = InlineVec<StepId, 4>;
  static_assert(sizeof(V) == 32);
  V v;
  EXPECT_TRUE(v.empty());
  EXPECT_EQ(v.capacity(), 4u);
  for (StepId i = 0; i < 4; ++i) v.push_back(10 + i);
  EXPECT_TRUE(v.is_inline());
  v.push_back(v[0]);  // grows while the value lives in the list
  EXPECT_FALSE(v.is_inline());
  EXPECT_EQ(v.capacity(), 8u);
  for (StepId i = 0; i < 100; ++i) v.push_back(v[i]);  // every growth copies from the list itself
  ASSERT_EQ(v.size(), 105u);
  for (std::size_t i = 0; i < 4; ++i) EXPECT_EQ(v[i], 10 + i);
  EXPECT_EQ(v[4], 10u);
  for (std::size_t i = 5; i < v.size(); ++i) EXPECT_EQ(v[i], v[i - 5]) << i;
  EXPECT_EQ(v.front(), 10u);
  EXPECT_EQ(v.back(), v[104]);

  // Copies are equal and independent, inline or not.
  V small = {1, 2, 3};
  V big = v;
  V small_copy = small;
  EXPECT_TRUE(small_copy.is_inline());
  EXPECT_EQ(small_copy, small);
  EXPECT_EQ(big, v);
  EXPECT_NE(big.data(), v.data());
  big[7] = 999;
  small_copy[0] = 999;
  EXPECT_NE(big, v);
  EXPECT_NE(small_copy, small);
  EXPECT_EQ(v[7], 12u);
  EXPECT_EQ(small[0], 1u);

  // Moves: a heap block changes hands; inline values are copied; the source is empty.
  const StepId* block = v.data();
  V taken = std::move(v);
  EXPECT_EQ(taken.data(), block);
  EXPECT_EQ(taken.size(), 105u);
  EXPECT_TRUE(v.empty());  // NOLINT(bugprone-use-after-move): the moved-from state is specified
  EXPECT_TRUE(v.is_inline());
  V small_taken = std::move(small);
  EXPECT_EQ(small_taken, (V{1, 2, 3}));
  EXPECT_TRUE(small.empty());  // NOLINT(bugprone-use-after-move)
  // Assignment over a list that holds a heap block (the block is released, ASan checks).
  big = small_taken;
  EXPECT_EQ(big, (V{1, 2, 3}));
  big = std::move(taken);
  EXPECT_EQ(big.size(), 105u);
  EXPECT_EQ(big.data(), block);
  big = big;  // NOLINT: self-assignment keeps the values
  EXPECT_EQ(big.size(), 105u);
  big = {7};
  EXPECT_EQ(big, (V{7}));

  // The rest of the vector-like interface.
  const std::vector<StepId> from = {5, 6, 7, 8, 9, 10};
  V w = from;
  EXPECT_FALSE(w.is_inline());
  EXPECT_TRUE(std::equal(w.begin(), w.end(), from.begin(), from.end()));
  w.pop_back();
  EXPECT_EQ(w.size(), 5u);
  EXPECT_EQ(w.back(), 9u);
  w.clear();
  EXPECT_TRUE(w.empty());
  EXPECT_EQ(w.capacity(), 6u);  // clear keeps the block
  const std::array<StepId, 3> three = {1, 1, 2};
  w.assign(three.begin(), three.end());
  EXPECT_EQ(w, (V{1, 1, 2}));
  V r;
  r.reserve(3);
  EXPECT_TRUE(r.is_inline());
  r.reserve(9);
  EXPECT_FALSE(r.is_inline());
  EXPECT_EQ(r.capacity(), 9u);
  r.resize(2);
  EXPECT_EQ(r, (V{0, 0}));
  EXPECT_NE(r, (V{0, 0, 0}));

  // Regions: a step's one destination and two sources fit inline.
  DstList d = {Region{3, 4, 5}};
  EXPECT_TRUE(d.is_inline());
  SrcList s = {Region{1, 2, 3}, Region{4, 5, 6}};
  EXPECT_TRUE(s.is_inline());
  s.push_back(d[0]);
  EXPECT_FALSE(s.is_inline());
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[0].buffer, 1u);
  EXPECT_EQ(s[1].offset, 5u);
  EXPECT_EQ(s[2].count, 5u);
}
