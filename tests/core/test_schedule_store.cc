// How a Schedule stores its steps: the compiled schedules of every preset (up
// to 72 GPUs), algorithm and a range of sizes equal a reference, field by
// field (digests of every field of every buffer and step, written by the
// std::vector step store that preceded the inline one, issue 14); and copies
// and moves of schedules keep every field.
#include <gtest/gtest.h>

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
