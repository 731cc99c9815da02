// Schedules: structure, the bytes each accelerator moves, and errors.
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "schedule/algorithms.h"
#include "schedule/check_step.h"
#include "schedule/compile_options.h"
#include "base/error.h"
#include "fabric/preset.h"

using namespace scin;

namespace {
Config star(int n, int planes = 1) {
  Config c;
  c.fabric.gpus = n;
  c.fabric.planes = planes;
  c.sw.isa.enabled = true;
  c.sw.isa.inq = true;
  c.ring.protocol = RingProtocol::Simple;
  return c;
}
}  // namespace

// compile() checks every schedule it returns (check_schedule); this checks the
// interface every engine relies on: one input and one output buffer per rank.
TEST(Algorithms, EveryScheduleHasOneInputAndOutputPerRank) {
  for (const auto& info : list_presets()) {
    Config cfg = load_preset(info.name);
    if (cfg.ring.protocol == RingProtocol::Auto) cfg.ring.protocol = RingProtocol::LL;
    for (const auto& algo : supported_algorithms(cfg))
      for (std::uint64_t bytes : {2ull, 8ull, 1000ull, 65536ull, 3ull << 20}) {
        Schedule s = compile(cfg, algo, {bytes, DType::Bf16});
        EXPECT_EQ(s.input.size(), static_cast<std::size_t>(cfg.fabric.gpus));
        EXPECT_EQ(s.output.size(), static_cast<std::size_t>(cfg.fabric.gpus));
        EXPECT_EQ(s.elems, bytes / 2);
      }
  }
}

TEST(Algorithms, RingHas2NMinus1StepsPerRank) {
  for (int n : {2, 4, 8}) {
    Schedule s = compile(star(n), "ring", {1 << 20, DType::Bf16});
    int writes = 0;
    for (const auto& st : s.steps) writes += st.kind == StepKind::Write;
    EXPECT_EQ(writes, 2 * (n - 1) * n);
  }
}

TEST(Algorithms, BytesPerLinkMatchTheBrief) {
  const int n = 8;
  const double S = 8.0 * 1024 * 1024;  // divisible by N and by every block count used
  Config c = star(n, 4);
  auto lb = [&](const std::string& algo) { return link_bytes(compile(c, algo, {static_cast<std::uint64_t>(S), DType::Bf16})); };
  for (int r = 0; r < n; ++r) {
    EXPECT_DOUBLE_EQ(lb("ring").egress_bytes[r], 2.0 * (n - 1) / n * S);
    EXPECT_DOUBLE_EQ(lb("ring").ingress_bytes[r], 2.0 * (n - 1) / n * S);
    EXPECT_DOUBLE_EQ(lb("two-shot").egress_bytes[r], 2.0 * (n - 1) / n * S);
    EXPECT_DOUBLE_EQ(lb("one-shot").egress_bytes[r], (n - 1) * S);
    EXPECT_DOUBLE_EQ(lb("nvls").egress_bytes[r], S + S / n);
    EXPECT_DOUBLE_EQ(lb("nvls").ingress_bytes[r], S / n + S);
    EXPECT_DOUBLE_EQ(lb("scin").egress_bytes[r], S);
    EXPECT_DOUBLE_EQ(lb("scin").ingress_bytes[r], S);
  }
  // INQ: (8G + s) / (16G) of the 16-bit payload each way.
  for (int g : {32, 128}) {
    for (ScaleFormat f : {ScaleFormat::Fp16, ScaleFormat::Fp32}) {
      c.quant.block_elems = g;
      c.quant.scale_format = f;
      const double ratio = (8.0 * g + 8 * scale_bytes(f)) / (16.0 * g);
      EXPECT_DOUBLE_EQ(payload_ratio(c.quant), ratio);
      auto q = lb("scin-inq");
      EXPECT_DOUBLE_EQ(q.egress_bytes[0], ratio * S) << g;
      EXPECT_DOUBLE_EQ(q.ingress_bytes[5], ratio * S) << g;
    }
  }
  c.quant.block_elems = 32;
  c.quant.scale_format = ScaleFormat::Fp16;
  EXPECT_DOUBLE_EQ(payload_ratio(c.quant), 0.53125);
  c.quant.block_elems = 128;
  EXPECT_DOUBLE_EQ(payload_ratio(c.quant), 0.5078125);
}

TEST(Algorithms, MeshUsesDirectLinks) {
  Config m = load_preset("mesh-8");
  Schedule s = compile(m, "one-shot", {1 << 20, DType::Bf16});
  for (const auto& st : s.steps)
    if (st.kind == StepKind::Write) {
      EXPECT_EQ(st.via, kDirect);
    }
  EXPECT_DOUBLE_EQ(link_bytes(s).egress_bytes[3], 7.0 * (1 << 20));
}

TEST(Algorithms, UnsupportedCombinationsAreClearErrors) {
  Config m = load_preset("mesh-8");
  try {
    compile(m, "nvls", {1024, DType::Bf16});
    FAIL() << "nvls compiled on a mesh";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("nvls needs a switch"), std::string::npos) << e.what();
  }
  EXPECT_THROW(compile(m, "scin", {1024, DType::Bf16}), Error);
  Config h = load_preset("hgx-h100-8");
  h.sw.isa.inq = false;
  EXPECT_NE(unsupported_reason(h, "scin-inq").find("switch.isa.inq"), std::string::npos);
  h.sw.nvls.enabled = false;
  EXPECT_NE(unsupported_reason(h, "nvls").find("switch.nvls.enabled"), std::string::npos);
  EXPECT_THROW(compile(h, "tree", {1024, DType::Bf16}), Error);
  EXPECT_THROW(compile(h, "scin", {0, DType::Bf16}), Error);
  EXPECT_THROW(compile(h, "scin", {7, DType::Bf16}), Error);   // not whole elements
  EXPECT_THROW(compile(h, "scin", {6, DType::Fp32}), Error);
  EXPECT_EQ(supported_algorithms(m), (std::vector<std::string>{"ring", "one-shot", "two-shot", "ring-q8", "two-shot-q8"}));
}

TEST(Algorithms, TinyMessagesSmallerThanTheRankCount) {
  // 2 bytes of BF16 = one element on 8 ranks: most shards are empty but every
  // schedule still compiles and delivers to every rank.
  Config h = load_preset("hgx-h200-8");
  h.ring.protocol = RingProtocol::LL;
  for (const auto& algo : supported_algorithms(h)) {
    Schedule s = compile(h, algo, {2, DType::Bf16});
    EXPECT_EQ(s.elems, 1u) << algo;
    EXPECT_GE(link_bytes(s).max_link_bytes(), 1.0) << algo;
  }
}

// simulate() compares ring protocols on one schedule re-targeted with
// set_ring_protocol(): that must equal compiling each protocol afresh.
TEST(Algorithms, RingRetargetedToAProtocolEqualsItsCompile) {
  for (int n : {2, 3, 8}) {
    for (std::uint64_t bytes : {8ull, 1000ull, 3ull << 20}) {
      Config c = star(n, 2);
      c.ring.protocol = RingProtocol::LL;
      Schedule moved = compile(c, "ring", {bytes, DType::Bf16});
      for (RingProtocol p : {RingProtocol::LL128, RingProtocol::Simple, RingProtocol::LL}) {
        c.ring.protocol = p;
        const Schedule fresh = compile(c, "ring", {bytes, DType::Bf16});
        set_ring_protocol(moved, p);
        EXPECT_EQ(moved.variant, fresh.variant);
        ASSERT_EQ(moved.steps.size(), fresh.steps.size());
        for (std::size_t i = 0; i < fresh.steps.size(); ++i) {
          const Step& a = moved.steps[i];
          const Step& b = fresh.steps[i];
          ASSERT_EQ(a.kind, b.kind) << i;
          ASSERT_EQ(a.protocol, b.protocol) << i;
          ASSERT_EQ(a.ring_step, b.ring_step) << i;
          ASSERT_EQ(a.deps, b.deps) << i;
          ASSERT_EQ(a.label, b.label) << i;
          ASSERT_EQ(a.srcs.size(), b.srcs.size()) << i;
          for (std::size_t k = 0; k < a.srcs.size(); ++k) {
            EXPECT_EQ(a.srcs[k].buffer, b.srcs[k].buffer);
            EXPECT_EQ(a.srcs[k].offset, b.srcs[k].offset);
            EXPECT_EQ(a.srcs[k].count, b.srcs[k].count);
          }
        }
      }
    }
  }
  Schedule other = compile(star(4), "one-shot", {4096, DType::Bf16});
  EXPECT_THROW(set_ring_protocol(other, RingProtocol::LL), Error);
}

// compile() without labels (CompileOptions, what simulate() uses on the
// analytic engine) builds the same steps, field by field; only the labels are
// empty. Every preset up to 72 GPUs, every algorithm it supports, sizes from
// one element to hundreds of chunks. On a star, the step list is allocated once.
TEST(Algorithms, UnlabelledCompileEqualsCompileButForLabels) {
  auto same_regions = [](const auto& a, const auto& b) {
    if (a.size() != b.size()) return false;
    for (std::size_t k = 0; k < a.size(); ++k)
      if (a[k].buffer != b[k].buffer || a[k].offset != b[k].offset || a[k].count != b[k].count) return false;
    return true;
  };
  std::size_t compared = 0;
  for (const auto& preset : list_presets()) {
    Config cfg = load_preset(preset.name);
    if (cfg.fabric.gpus > 72) continue;  // (seconds per schedule)
    if (cfg.ring.protocol == RingProtocol::Auto) cfg.ring.protocol = RingProtocol::LL128;
    for (const auto& name : supported_algorithms(cfg))
      for (std::uint64_t bytes : {2ull, 65536ull, 3ull << 20}) {
        const Algorithm algo = parse_algorithm(name);
        if (algo > Algorithm::ScinInqUplink) continue;  // a test's registered toy
        const Collective coll{bytes, DType::Bf16};
        const Schedule full = compile(cfg, algo, coll);
        const Schedule bare = compile(cfg, algo, coll, RunContext{}, CompileOptions{false});
        EXPECT_EQ(bare.variant, full.variant);
        EXPECT_EQ(bare.buffers.size(), full.buffers.size());
        for (std::size_t b = 0; b < std::min(bare.buffers.size(), full.buffers.size()); ++b) {
          EXPECT_EQ(bare.buffers[b].name, full.buffers[b].name);
          EXPECT_EQ(bare.buffers[b].elems, full.buffers[b].elems);
        }
        ASSERT_EQ(bare.steps.size(), full.steps.size()) << preset.name << " " << name << " " << bytes;
        // The star builders reserve their exact step count (one allocation, no regrowth).
        if (!full.two_tier()) {
          EXPECT_EQ(full.steps.capacity(), full.steps.size()) << preset.name << " " << name;
        }
        for (std::size_t i = 0; i < full.steps.size(); ++i) {
          const Step& a = bare.steps[i];
          const Step& b = full.steps[i];
          ASSERT_TRUE(a.kind == b.kind && a.initiator == b.initiator && a.target == b.target && a.via == b.via &&
                      a.op == b.op && a.accumulate == b.accumulate && a.accum == b.accum && a.unit == b.unit &&
                      a.protocol == b.protocol && a.ring_step == b.ring_step && a.deps == b.deps &&
                      same_regions(a.srcs, b.srcs) && same_regions(a.dsts, b.dsts))
              << preset.name << " " << name << " " << bytes << " step " << i << " (" << b.label << ")";
          ASSERT_TRUE(a.label.empty()) << i;
          ASSERT_FALSE(b.label.empty()) << i;
          ++compared;
        }
      }
  }
  EXPECT_GT(compared, 50000u);
}

// check_step (schedule/check_step.h) is check_schedule's loop body, with a
// quick test of all its conditions first (step_ok): a step that breaks any one
// condition must still throw check_schedule's error, and only at that step.
// Each case breaks one step of a compiled schedule in one way.
TEST(Algorithms, CheckStepThrowsWhatCheckScheduleThrowsAtTheBrokenStep) {
  Config cfg = star(8, 4);
  struct Case {
    const char* algo;
    const char* what;  // check_schedule's error contains this
    // Breaks a step of the kind it wants; returns its index (or -1: none found).
    std::function<long(Schedule&)> brk;
  };
  auto find = [](Schedule& s, auto pred) -> long {
    for (std::size_t i = 0; i < s.steps.size(); ++i)
      if (pred(s.steps[i], i)) return static_cast<long>(i);
    return -1;
  };
  auto other_node_buffer = [](const Schedule& s, BufferId b) {  // a buffer of the same size on another node
    for (BufferId k = 0; k < s.buffers.size(); ++k)
      if (s.buffers[k].node != s.buffers[b].node && s.buffers[k].elems == s.buffers[b].elems) return k;
    return b;
  };
  auto write2 = [](const Step& st, std::size_t) { return st.kind == StepKind::Write && st.srcs.size() == 2; };
  auto wide_read = [](const Step& st, std::size_t) { return st.kind == StepKind::Read && st.srcs.size() > 4; };
  auto wide_write = [](const Step& st, std::size_t) { return st.kind == StepKind::Write && st.dsts.size() > 4; };
  const std::vector<Case> cases = {
      {"ring", "does not come earlier", [&](Schedule& s) {
         const long i = find(s, [](const Step& st, std::size_t) { return st.deps.size() >= 2; });
         if (i < 0) return i;
         s.steps[i].deps.back() = static_cast<StepId>(i + 1);
         return i; }},
      {"ring", "initiator is not a node", [&](Schedule& s) { s.steps[5].initiator = -1; return 5L; }},
      {"ring", "initiator is not a node", [&](Schedule& s) { s.steps[7].initiator = s.node_count(); return 7L; }},
      {"ring", "missing buffer", [&](Schedule& s) {
         const long i = find(s, write2);
         if (i < 0) return i;
         s.steps[i].srcs[1].buffer = static_cast<BufferId>(s.buffers.size());
         return i; }},
      {"ring", "missing buffer", [&](Schedule& s) {
         const long i = find(s, write2);
         if (i < 0) return i;
         s.steps[i].dsts[0].buffer = static_cast<BufferId>(s.buffers.size() + 3);
         return i; }},
      {"ring", "exceeds buffer", [&](Schedule& s) {
         const long i = find(s, write2);
         if (i < 0) return i;
         s.steps[i].srcs[0].offset = s.buffers[s.steps[i].srcs[0].buffer].elems;
         return i; }},
      {"ring", "exceeds buffer", [&](Schedule& s) {
         const long i = find(s, write2);
         if (i < 0) return i;
         s.steps[i].dsts[0].offset = s.buffers[s.steps[i].dsts[0].buffer].elems - s.steps[i].dsts[0].count + 1;
         return i; }},
      {"ring", "sources differ", [&](Schedule& s) {
         const long i = find(s, write2);
         if (i < 0) return i;
         s.steps[i].srcs[1].count -= 1;
         return i; }},
      {"ring", "destinations differ", [&](Schedule& s) {
         const long i = find(s, write2);
         if (i < 0) return i;
         s.steps[i].dsts[0].count -= 1;
         return i; }},
      {"ring", "needs sources and destinations", [&](Schedule& s) {
         const long i = find(s, write2);
         if (i < 0) return i;
         s.steps[i].srcs.clear();
         return i; }},
      {"ring", "first source is not on its initiator", [&](Schedule& s) {
         const long i = find(s, write2);
         if (i < 0) return i;
         s.steps[i].srcs[0].buffer = other_node_buffer(s, s.steps[i].srcs[0].buffer);
         return i; }},
      {"ring", "must reduce into one destination", [&](Schedule& s) {
         const long i = find(s, write2);
         if (i < 0) return i;
         s.steps[i].op = DataOp::Copy;
         return i; }},
      {"ring", "must reduce into one destination", [&](Schedule& s) {
         const long i = find(s, write2);
         if (i < 0) return i;
         s.steps[i].dsts.push_back(s.steps[i].dsts[0]);
         return i; }},
      {"ring", "extra sources must be on the destination node", [&](Schedule& s) {
         const long i = find(s, write2);
         if (i < 0) return i;
         s.steps[i].srcs[1].buffer = other_node_buffer(s, s.steps[i].srcs[1].buffer);
         return i; }},
      {"nvls", "a read has exactly one destination", [&](Schedule& s) {
         const long i = find(s, [](const Step& st, std::size_t) { return st.kind == StepKind::Read; });
         if (i < 0) return i;
         s.steps[i].dsts.push_back(s.steps[i].dsts[0]);
         return i; }},
      // Wide steps (more than four regions: step_ok's out-of-line regions_ok),
      // each broken in its last region.
      {"nvls", "missing buffer", [&](Schedule& s) {
         const long i = find(s, wide_read);
         if (i < 0) return i;
         s.steps[i].srcs.back().buffer = static_cast<BufferId>(s.buffers.size() + 1);
         return i; }},
      {"nvls", "exceeds buffer", [&](Schedule& s) {
         const long i = find(s, wide_write);
         if (i < 0) return i;
         Region& r = s.steps[i].dsts.back();
         r.offset = s.buffers[r.buffer].elems - r.count + 1;
         return i; }},
      {"nvls", "sources differ", [&](Schedule& s) {
         const long i = find(s, wide_read);
         if (i < 0) return i;
         s.steps[i].srcs.back().count -= 1;
         return i; }},
      {"nvls", "destinations differ", [&](Schedule& s) {
         const long i = find(s, wide_write);
         if (i < 0) return i;
         s.steps[i].dsts.back().count -= 1;
         return i; }},
      {"scin", "signal target is not a node", [&](Schedule& s) {
         const long i = find(s, [](const Step& st, std::size_t) { return st.kind == StepKind::Signal; });
         if (i < 0) return i;
         s.steps[i].target = s.node_count();
         return i; }},
      {"scin-inq", "compute reads a buffer on another node", [&](Schedule& s) {
         const long i = find(s, [](const Step& st, std::size_t) { return st.kind == StepKind::Compute && !st.srcs.empty(); });
         if (i < 0) return i;
         s.steps[i].srcs[0].buffer = other_node_buffer(s, s.steps[i].srcs[0].buffer);
         return i; }},
      {"scin-inq", "compute writes a buffer on another node", [&](Schedule& s) {
         const long i = find(s, [](const Step& st, std::size_t) { return st.kind == StepKind::Compute && !st.dsts.empty(); });
         if (i < 0) return i;
         s.steps[i].dsts[0].buffer = other_node_buffer(s, s.steps[i].dsts[0].buffer);
         return i; }},
  };
  int broken = 0;
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.algo) + ": " + c.what + " (case " + std::to_string(broken) + ")");
    Schedule s = compile(cfg, c.algo, {1 << 16, DType::Bf16});
    check_schedule_nodes(s);
    for (std::size_t i = 0; i < s.steps.size(); ++i) EXPECT_NO_THROW(check_step(s, i));  // as compiled: good
    const long bad = c.brk(s);
    ASSERT_GE(bad, 0) << "no step of the kind this case breaks";
    ++broken;
    try {
      check_schedule(s);
      ADD_FAILURE() << "check_schedule passed a broken schedule";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(c.what), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("step " + std::to_string(bad) + " "), std::string::npos) << e.what();
    }
    for (std::size_t i = 0; i < s.steps.size(); ++i) {
      if (static_cast<long>(i) == bad) {
        try {
          check_step(s, i);
          ADD_FAILURE() << "check_step passed broken step " << i;
        } catch (const Error& e) {
          EXPECT_NE(std::string(e.what()).find(c.what), std::string::npos) << e.what();
        }
      } else {
        EXPECT_NO_THROW(check_step(s, i)) << "step " << i;
      }
    }
  }
  EXPECT_EQ(broken, static_cast<int>(cases.size()));
}
