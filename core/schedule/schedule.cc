#include "schedule/schedule.h"
#include "schedule/check_step.h"

#include "base/run_context.h"

#include "fabric/graph.h"

#include <algorithm>
#include <fmt/format.h>

#include "base/error.h"

namespace scin {

BufferId Schedule::add_buffer(BufferDecl b) {
  buffers.push_back(std::move(b));
  return static_cast<BufferId>(buffers.size() - 1);
}

StepId Schedule::add(Step s) {
  steps.push_back(std::move(s));
  return static_cast<StepId>(steps.size() - 1);
}

Format format_of(DType t) {
  switch (t) {
    case DType::Bf16: return Format::Bf16;
    case DType::Fp16: return Format::Fp16;
    case DType::Fp32: return Format::Fp32;
  }
  return Format::Fp32;
}

Format codec_format(Codec c) {
  switch (c) {
    case Codec::Int8: return Format::Int8Block;
    case Codec::Int4: return Format::Int4Block;
    case Codec::Fp8E4M3: return Format::Fp8E4M3Block;
    case Codec::Fp8E5M2: return Format::Fp8E5M2Block;
  }
  return Format::Int8Block;
}

bool is_codec(Format f) { return f != Format::Fp32 && f != Format::Bf16 && f != Format::Fp16; }

const char* to_string(Format f) {
  switch (f) {
    case Format::Fp32: return "fp32";
    case Format::Bf16: return "bf16";
    case Format::Fp16: return "fp16";
    case Format::Int8Block: return "int8-block";
    case Format::Int4Block: return "int4-block";
    case Format::Fp8E4M3Block: return "fp8e4m3-block";
    case Format::Fp8E5M2Block: return "fp8e5m2-block";
  }
  return "?";
}

const char* to_string(DType t) {
  switch (t) {
    case DType::Bf16: return "bf16";
    case DType::Fp16: return "fp16";
    case DType::Fp32: return "fp32";
  }
  return "?";
}

const char* to_string(StepKind k) {
  switch (k) {
    case StepKind::Launch: return "launch";
    case StepKind::Write: return "write";
    case StepKind::Read: return "read";
    case StepKind::Compute: return "compute";
    case StepKind::Signal: return "signal";
    case StepKind::Wait: return "wait";
  }
  return "?";
}

const char* to_string(Unit u) {
  switch (u) {
    case Unit::None: return "none";
    case Unit::AccelSm: return "accelerator";
    case Unit::NvlsReduce: return "nvls";
    case Unit::IsaReduce: return "isa";
    case Unit::IsaInq: return "inq";
  }
  return "?";
}

DType parse_dtype(const std::string& text) {
  if (text == "bf16") return DType::Bf16;
  if (text == "fp16") return DType::Fp16;
  if (text == "fp32") return DType::Fp32;
  throw Error(fmt::format("dtype: '{}' is not supported; allowed bf16, fp16, fp32", text));
}

std::uint64_t region_bytes(const BufferDecl& b, std::uint64_t count) {
  switch (b.format) {
    case Format::Fp32: return count * 4;
    case Format::Bf16:
    case Format::Fp16: return count * 2;
    default: break;
  }
  const std::uint64_t bits = b.format == Format::Int4Block ? 4 : 8;
  const std::uint64_t g = static_cast<std::uint64_t>(std::max(1, b.block_elems));
  const std::uint64_t blocks = (count + g - 1) / g;
  return (count * bits + 7) / 8 + blocks * static_cast<std::uint64_t>(scale_bytes(b.scale_format));
}

std::uint64_t region_bytes(const Schedule& s, const Region& r) {
  return region_bytes(s.buffers.at(r.buffer), r.count);
}

void check_schedule_nodes(const Schedule& s) {
  const int nodes = s.node_count();
  for (const auto& b : s.buffers)
    if (b.node < 0 || b.node >= nodes)
      throw Error(fmt::format("schedule {}: buffer {} on missing node {}", s.algorithm, b.name, b.node));
}

// One step's checks, throwing the error (check_schedule's loop body; check_step.h's step_ok first).
namespace detail {

void check_one_step(const Schedule& s, std::size_t i, int nodes) {
  auto fail = [&](std::size_t at, const std::string& why) {
    throw Error(fmt::format("schedule {}: step {} ({}): {}", s.algorithm, at,
                            at < s.steps.size() ? s.steps[at].label : "", why));
  };
  const Step& st = s.steps[i];
  for (StepId d : st.deps)
    if (d >= i) fail(i, fmt::format("depends on step {} that does not come earlier", d));
  if (st.initiator < 0 || st.initiator >= nodes) fail(i, "initiator is not a node");
  auto check_region = [&](const Region& r) {
    if (r.buffer >= s.buffers.size()) fail(i, "region names a missing buffer");
    const auto& b = s.buffers[r.buffer];
    if (r.offset + r.count > b.elems)
      fail(i, fmt::format("region [{}, {}) exceeds buffer {} of {} elements", r.offset,
                          r.offset + r.count, b.name, b.elems));
  };
  for (const auto& r : st.srcs) check_region(r);
  for (const auto& r : st.dsts) check_region(r);
  if (st.op != DataOp::None) {
    if (st.srcs.empty() || st.dsts.empty()) fail(i, "a data step needs sources and destinations");
    const auto n = st.srcs.front().count;
    for (const auto& r : st.srcs)
      if (r.count != n) fail(i, "sources differ in element count");
    for (const auto& r : st.dsts)
      if (r.count != n) fail(i, "destinations differ in element count from the sources");
  }
  if (st.kind == StepKind::Write) {
    if (st.srcs.empty()) fail(i, "a write needs a source");
    if (s.buffers[st.srcs[0].buffer].node != st.initiator) fail(i, "a write's first source is not on its initiator");
    // Further sources are summed in at the (single) destination: a fused receive-reduce.
    if (st.srcs.size() > 1) {
      if (st.dsts.size() != 1 || st.op != DataOp::Reduce) fail(i, "a write with local sources must reduce into one destination");
      for (std::size_t k = 1; k < st.srcs.size(); ++k)
        if (s.buffers[st.srcs[k].buffer].node != s.buffers[st.dsts[0].buffer].node)
          fail(i, "a write's extra sources must be on the destination node");
    }
  }
  if (st.kind == StepKind::Read && st.dsts.size() != 1) fail(i, "a read has exactly one destination");
  if (st.kind == StepKind::Signal && (st.target < 0 || st.target >= nodes)) fail(i, "signal target is not a node");
  if (st.kind == StepKind::Compute) {
    for (const auto& r : st.srcs)
      if (s.buffers[r.buffer].node != st.initiator) fail(i, "compute reads a buffer on another node");
    for (const auto& r : st.dsts)
      if (s.buffers[r.buffer].node != st.initiator) fail(i, "compute writes a buffer on another node");
  }
}

}  // namespace detail


void check_schedule(const Schedule& s, const RunContext* ctx) {
  check_schedule_nodes(s);
  const int nodes = s.node_count();
  std::size_t work = 0, next_poll = 0;
  for (std::size_t i = 0; i < s.steps.size(); ++i) {
    const Step& st = s.steps[i];
    work += 1 + st.deps.size() + st.srcs.size() + st.dsts.size();
    if (ctx && work >= next_poll) {
      ctx->check();
      next_poll = work + (1u << 16);
    }
    check_step(s, i, nodes);
  }
}

double LinkBytes::max_link_bytes() const {
  double m = 0;
  for (double b : egress_bytes) m = std::max(m, b);
  for (double b : ingress_bytes) m = std::max(m, b);
  return m;
}

LinkBytes link_bytes(const Schedule& s) { return link_bytes(s, {}); }

void add_link_bytes(const Schedule& s, const Step& st, double w, LinkBytes& lb) {
  if (st.via == kNoNode) return;  // local
  auto node_of = [&](const Region& r) { return s.buffers[r.buffer].node; };
  if (st.kind == StepKind::Write) {
    const double b = w * static_cast<double>(region_bytes(s, st.srcs[0]));
    const NodeId from = st.initiator;
    const bool from_accel = !s.is_switch(from);
    if (st.via == kDirect) {
      for (const auto& d : st.dsts) {
        NodeId to = node_of(d);
        if (to == from) continue;
        lb.egress_bytes[from] += b;
        lb.ingress_bytes[to] += b;
      }
    } else {
      if (from_accel) lb.egress_bytes[from] += b;  // one copy up; the switch replicates
      for (const auto& d : st.dsts) {
        NodeId to = node_of(d);
        if (!s.is_switch(to)) lb.ingress_bytes[to] += b;
      }
    }
  } else if (st.kind == StepKind::Read) {
    const NodeId to = node_of(st.dsts[0]);
    for (const auto& r : st.srcs) {
      NodeId from = node_of(r);
      if (from == to && st.srcs.size() == 1) continue;  // a local read
      if (!s.is_switch(from)) lb.egress_bytes[from] += w * static_cast<double>(region_bytes(s, r));
      if (st.srcs.size() == 1 && !s.is_switch(to))
        lb.ingress_bytes[to] += w * static_cast<double>(region_bytes(s, r));
    }
    if (st.srcs.size() > 1 && !s.is_switch(to))
      lb.ingress_bytes[to] += w * static_cast<double>(region_bytes(s, st.dsts[0]));
  }
}

LinkBytes link_bytes(const Schedule& s, const std::vector<double>& plane_weight) {
  LinkBytes lb;
  lb.egress_bytes.assign(static_cast<std::size_t>(s.gpus), 0.0);
  lb.ingress_bytes.assign(static_cast<std::size_t>(s.gpus), 0.0);
  for (const Step& st : s.steps) {
    // (Exact: whole bytes times whole weights, summed below 2^53.)
    const double w = plane_weight.empty() || !s.is_switch(st.initiator)
                         ? 1.0
                         : plane_weight[static_cast<std::size_t>(s.plane_of(st.initiator))];
    add_link_bytes(s, st, w, lb);
  }
  return lb;
}


// ------------------------------------------------------------ two-tier routing

int Schedule::tier(NodeId n) const {
  if (!is_switch(n)) return 0;
  if (!two_tier()) return 1;
  return (n - gpus) % (leaves + spines) < leaves ? 1 : 2;
}

int Schedule::plane_of(NodeId n) const {
  if (!is_switch(n)) return -1;
  return two_tier() ? (n - gpus) / (leaves + spines) : n - gpus;
}

int Schedule::leaf_of(NodeId n) const {
  if (!is_switch(n)) return n / gpus_per_leaf();
  return (n - gpus) % (leaves + spines);
}

int Schedule::route(NodeId a, NodeId b, int plane, NodeId out[5], int spine) const {
  // Each end climbs to its first switch: an accelerator to its leaf; a switch is its own.
  NodeId up_a[2], up_b[2];
  int na = 0, nb = 0;
  up_a[na++] = a;
  if (tier(a) == 0) up_a[na++] = leaf_node(plane, leaf_of(a));
  up_b[nb++] = b;
  if (tier(b) == 0) up_b[nb++] = leaf_node(plane, leaf_of(b));
  int k = 0;
  for (int i = 0; i < na; ++i) out[k++] = up_a[i];
  const NodeId ta = up_a[na - 1], tb = up_b[nb - 1];
  if (ta == tb) {
    --k;  // the common switch is listed once
  } else if (tier(ta) == tier(tb)) {
    // Two leaves meet at a spine, two spines at a leaf: equal-cost choices, ECMP on the flow.
    out[k++] = tier(ta) == 1 ? spine_node(plane, spine >= 0 ? spine : ecmp_pick(a, b, spines)) : leaf_node(plane, ecmp_pick(a, b, leaves));
  }
  for (int i = nb - 1; i >= 0; --i) out[k++] = up_b[i];
  return k;
}

}  // namespace scin
