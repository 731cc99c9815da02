// build_scin's steps from its structure, for SCIN by classes of ports
// (scin_alike.cc): step indices, what a step is from its index, and the steps
// themselves (without deps) for costing. Internal to the analytic engine.
#pragma once

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <vector>

#include "engines/analytic/part_booking.h"
#include "model/cost_grid.h"
#include "schedule/builder.h"

namespace scin::scin_steps {

using part::Cost;
using part::Part;
using part::Rec;

inline bool nonnegative(const StepCost& c) {
  if (!(c.fixed_ns >= 0)) return false;
  for (int k = 0; k < kTermCount; ++k)
    if (!(c.latency_ns[k] >= 0)) return false;
  return true;
}

inline bool same_cost(const StepCost& a, const StepCost& b) {
  if (a.fixed_ns != b.fixed_ns || a.fixed_term != b.fixed_term || a.uses.size() != b.uses.size() ||
      a.fed_lead_terms != b.fed_lead_terms || a.fed_paced != b.fed_paced)
    return false;
  for (int k = 0; k < kTermCount; ++k)
    if (a.latency_ns[k] != b.latency_ns[k]) return false;
  for (std::size_t k = 0; k < a.uses.size(); ++k) {
    const ResourceUse &x = a.uses[k], &y = b.uses[k];
    if (x.amount_bytes != y.amount_bytes || x.rate_GBps != y.rate_GBps || x.term != y.term ||
        x.fed_by_transfers != y.fed_by_transfers)
      return false;
  }
  return true;
}

// build::split(outer.count, parts, align), each span moved into `outer`
// (build::sub), appended to `out`: the same spans without two 64-bit
// divisions per span. Piece i starts at floor(i U / P) units (U units of
// `align` elements, P parts), kept as a quotient and a remainder that grow by
// U = aP + c per piece. Where P U does not fit in 64 bits (build::split's
// products would wrap), build::split itself.
inline void split_append(const build::Span& outer, int parts, std::uint64_t align, std::vector<build::Span>& out) {
  const std::uint64_t elems = outer.count;
  const std::uint64_t units = (elems + align - 1) / align;
  const auto p = static_cast<std::uint64_t>(parts);
  if (parts <= 0 || (units != 0 && p > UINT64_MAX / units)) {
    for (const build::Span& w : build::split(elems, parts, align)) out.push_back(build::sub(outer, w));
    return;
  }
  const std::uint64_t a = units / p, c = units % p;
  std::uint64_t q = 0, rem = 0, b = 0;  // q = floor(i U / P), rem = i U mod P, b = min(elems, q align)
  const std::size_t at = out.size();
  out.resize(at + static_cast<std::size_t>(p));  // (one growth, then plain stores)
  build::Span* const o = out.data() + at;
  for (std::uint64_t i = 0; i < p; ++i) {
    q += a;
    rem += c;
    if (rem >= p) rem -= p, ++q;
    const std::uint64_t e = std::min(elems, q * align);
    o[i] = {outer.offset + b, e - b};
    b = e;
  }
}

// A stripe's waves depend on its count, chunks and alignment only: the last
// layout split per thread is kept (Scin::split_layouts) and copied when asked
// again, and where every plane has that layout, its sizes too (size_layouts).
struct LayoutMemo {
  std::uint64_t count = 0, align = 0;
  int parts = -1;
  std::vector<build::Span> waves;
  bool sized = false;  // (sizes, lsize, of, fi: those of `waves` as the only layout)
  std::vector<std::uint64_t> sizes;
  std::vector<std::uint8_t> lsize;
  std::vector<std::size_t> of, fi;
};
inline LayoutMemo& layout_memo() {
  thread_local LayoutMemo memo;
  return memo;
}

// What a step is, from its index in build_scin's order.
enum class K : std::uint8_t { Launch, Quant, Arrive, Go, Read, Requant, Write, Ack, Acked, Flag, Wait, Dequant };
struct Id {
  K k;
  int p = 0;  // plane
  int r = 0;  // rank
  int w = 0;  // wave (Quant: its index in the rank's run)
};

struct Scin {
  const Config& cfg;
  bool inq;
  build::Builder b;
  Schedule& s;
  ResourceMap rm;
  int n = 0, planes = 0, F = 0, per_wave = 2;
  std::vector<build::Span> stripes;
  std::vector<int> W;                     // waves per plane
  std::vector<std::size_t> plane_start;   // per plane, its wave 0 among all planes' waves
  // A plane's waves are build::split of its stripe's count (a function of the
  // count alone): kept once per distinct stripe count (a layout), within the stripe.
  std::vector<int> layout;                // per plane, its layout
  std::vector<std::size_t> lstart;        // per layout, its first wave in lwaves
  std::vector<build::Span> lwaves;        // every layout's waves, offsets within the stripe
  std::vector<std::uint8_t> lsize;        // per wave of lwaves: its index in `sizes`
  std::vector<std::uint64_t> sizes;       // the waves' distinct sizes (sorted)
  std::vector<BufferId> qin, qout, acc, qacc;
  std::vector<StepId> base;               // per plane: its first step; then the final waits
  std::size_t wtot = 0, total = 0;

  // `storage`: lists to build the schedule's head into (Builder's), given back when done.
  Scin(const Config& c, const Collective& coll, bool q, Schedule* storage)
      : cfg(c), inq(q), b(c, info(q ? Algorithm::ScinInq : Algorithm::Scin).name, coll, storage), s(b.s), keep(storage) {
    b.labels = false;
  }
  ~Scin() {
    if (!keep) return;
    keep->buffers = std::move(s.buffers);
    keep->input = std::move(s.input);
    keep->output = std::move(s.output);
  }
  Scin(const Scin&) = delete;
  Scin& operator=(const Scin&) = delete;
  Schedule* keep = nullptr;

  // A step that holds nothing (signals and waits) into `st`, reused: only the
  // fields build_scin sets on it (the others stay at their defaults).
  void set_free(Step& st, const Id& d) const {
    const NodeId sw = s.switch_node(d.p);
    st.target = kNoNode;
    st.via = kNoNode;
    auto signal = [&](NodeId from, NodeId to, Unit u) {
      st.kind = StepKind::Signal;
      st.initiator = from;
      st.target = to;
      st.unit = u;
      st.via = s.is_switch(to) ? to : from;
    };
    auto wait = [&](NodeId at, Unit u) {
      st.kind = StepKind::Wait;
      st.initiator = at;
      st.unit = u;
    };
    switch (d.k) {
      case K::Arrive: signal(d.r, sw, inq ? Unit::AccelSm : Unit::IsaReduce); break;
      case K::Ack: signal(d.r, sw, Unit::None); break;
      case K::Flag: signal(sw, d.r, Unit::IsaReduce); break;
      case K::Wait: wait(d.r, inq ? Unit::AccelSm : Unit::IsaReduce); break;
      default: wait(sw, Unit::IsaReduce); break;  // Go, Acked
    }
  }
  // Each plane's layout and waves (plane_start, W, wtot), each distinct stripe count split once.
  void split_layouts(std::uint64_t align) {
    std::size_t tot = 0;
    LayoutMemo& memo = layout_memo();
    for (int p = 0; p < planes; ++p) {
      const std::uint64_t count = stripes[static_cast<std::size_t>(p)].count;
      int L = -1;
      for (int o = 0; o < p && L < 0; ++o)
        if (stripes[static_cast<std::size_t>(o)].count == count) L = layout[static_cast<std::size_t>(o)];
      if (L < 0) {
        L = static_cast<int>(lstart.size());
        lstart.push_back(lwaves.size());
        const int parts = build::scin_chunks(cfg, count);
        if (parts != memo.parts || count != memo.count || align != memo.align) {
          memo.waves.clear();
          split_append({0, count}, parts, align, memo.waves);
          memo.parts = parts, memo.count = count, memo.align = align;
          memo.sized = false;
        }
        lwaves.insert(lwaves.end(), memo.waves.begin(), memo.waves.end());
      }
      layout.push_back(L);
      const std::size_t Wp = (static_cast<std::size_t>(L) + 1 < lstart.size() ? lstart[static_cast<std::size_t>(L) + 1] : lwaves.size()) -
                             lstart[static_cast<std::size_t>(L)];
      plane_start.push_back(tot);
      W.push_back(static_cast<int>(Wp));
      tot += Wp;
    }
    plane_start.push_back(tot);
    wtot = tot;
  }
  // The waves' distinct sizes (sorted; false past 255), each wave's among
  // them, and per layout and size its first wave and how many ([layout][size]).
  bool size_layouts(std::vector<std::size_t>& lfirst, std::vector<std::size_t>& lwaves_of) {
    LayoutMemo& memo = layout_memo();
    const bool kept = lstart.size() == 1 && memo.sized;  // (one layout: memo.waves)
    if (kept) {
      sizes = memo.sizes;
    } else {
      std::uint64_t last = 0;
      const build::Span* const lw = lwaves.data();
      for (std::size_t k = 0, nw = lwaves.size(); k < nw; ++k) {
        const std::uint64_t z = lw[k].count;
        if ((k > 0 && z == last) || std::find(sizes.begin(), sizes.end(), z) != sizes.end()) {
          last = z;
          continue;
        }
        last = z;
        sizes.push_back(z);
        if (sizes.size() > 255) return false;
      }
      std::sort(sizes.begin(), sizes.end());
    }
    const std::size_t ns = sizes.size(), nl = lstart.size();
    lsize.resize(lwaves.size());
    lfirst.assign(nl * ns, 0);
    lwaves_of.assign(nl * ns, 0);
    if (kept) {
      lsize = memo.lsize;
      lwaves_of = memo.of;
      lfirst = memo.fi;
    }
    for (std::size_t L = 0; L < nl && !kept; ++L) {
      // (locals: the stores to lsize, bytes, would otherwise reload every vector's fields)
      std::uint8_t z = 0;
      const build::Span* const lw = lwaves.data();
      const std::uint64_t* const sz = sizes.data();
      std::uint8_t* const ls = lsize.data();
      std::size_t* const of = lwaves_of.data() + L * ns;
      std::size_t* const fi = lfirst.data() + L * ns;
      const std::size_t k0 = lstart[L], k1 = L + 1 < nl ? lstart[L + 1] : lwaves.size();
      for (std::size_t k = k0; k < k1; ++k) {
        if (sz[z] != lw[k].count) z = static_cast<std::uint8_t>(std::lower_bound(sz, sz + ns, lw[k].count) - sz);
        ls[k] = z;
        if (of[z]++ == 0) fi[z] = k - k0;
      }
    }
    if (nl == 1 && !kept) {
      memo.sizes = sizes;
      memo.lsize = lsize;
      memo.of = lwaves_of;
      memo.fi = lfirst;
      memo.sized = true;
    }
    return true;
  }

  std::size_t lwave(int p, std::size_t w) const { return lstart[static_cast<std::size_t>(layout[static_cast<std::size_t>(p)])] + w; }
  std::uint8_t size_of(int p, std::size_t w) const { return lsize[lwave(p, w)]; }
  // Wave k of all planes' waves (in plane order), in the message.
  build::Span wave(std::size_t k) const {
    const int p = static_cast<int>(std::upper_bound(plane_start.begin(), plane_start.end(), k) - plane_start.begin()) - 1;
    return build::sub(stripes[static_cast<std::size_t>(p)], lwaves[lwave(p, k - plane_start[static_cast<std::size_t>(p)])]);
  }
  StepId run_of(int r) const { return static_cast<StepId>(static_cast<std::size_t>(r) * (1 + wtot)); }
  StepId quant_id(int r, int p, int w) const {
    return run_of(r) + 1 + static_cast<StepId>(plane_start[static_cast<std::size_t>(p)]) + static_cast<StepId>(w);
  }
  StepId wave_id(int p, int w, int sub) const {
    return base[static_cast<std::size_t>(p)] + static_cast<StepId>(n + 1 + per_wave * w + sub);
  }
  StepId after_waves(int p) const { return wave_id(p, W[static_cast<std::size_t>(p)], 0); }  // ack r0
  StepId final_id(int r) const { return base[static_cast<std::size_t>(planes)] + static_cast<StepId>(r * (inq ? 2 : 1)); }

  Id decode(StepId id) const {
    if (id < base[0]) {
      const int r = static_cast<int>(id / (1 + wtot));
      const std::size_t k = id % (1 + wtot);
      if (k == 0) return {K::Launch, 0, r, 0};
      return {K::Quant, 0, r, static_cast<int>(k - 1)};
    }
    if (id >= base[static_cast<std::size_t>(planes)]) {
      const StepId off = id - base[static_cast<std::size_t>(planes)];
      if (!inq) return {K::Wait, 0, static_cast<int>(off), 0};
      return {off % 2 ? K::Dequant : K::Wait, 0, static_cast<int>(off / 2), 0};
    }
    const int p = static_cast<int>(std::upper_bound(base.begin(), base.end(), id) - base.begin()) - 1;
    const auto un = static_cast<StepId>(n);
    StepId off = id - base[static_cast<std::size_t>(p)];
    if (off < un) return {K::Arrive, p, static_cast<int>(off), 0};
    if (off == un) return {K::Go, p, 0, 0};
    off -= un + 1;
    const auto wp = static_cast<StepId>(W[static_cast<std::size_t>(p)]);
    if (off < static_cast<StepId>(per_wave) * wp) {
      const int w = static_cast<int>(off / static_cast<StepId>(per_wave)), sub = static_cast<int>(off % static_cast<StepId>(per_wave));
      return {sub == 0 ? K::Read : sub == per_wave - 1 ? K::Write : K::Requant, p, 0, w};
    }
    off -= static_cast<StepId>(per_wave) * wp;
    if (off < un) return {K::Ack, p, static_cast<int>(off), 0};
    if (off == un) return {K::Acked, p, 0, 0};
    return {K::Flag, p, static_cast<int>(off - un - 1), 0};
  }

  // The steps that hold nothing (and INQ's quantise and dequantise), as build_scin makes them.
  Step make(const Id& d) const {
    Step st;
    switch (d.k) {
      case K::Launch: return build::launch_step(d.r, false, RingProtocol::Simple, false);
      case K::Quant: {
        const build::Span g = wave(static_cast<std::size_t>(d.w));
        st.kind = StepKind::Compute;
        st.initiator = d.r;
        st.op = DataOp::Copy;
        st.unit = Unit::AccelSm;
        st.accum = Format::Fp32;
        st.srcs = {build::at(s.input[static_cast<std::size_t>(d.r)], g)};
        st.dsts = {build::at(qin[static_cast<std::size_t>(d.r)], g)};
        return st;
      }
      case K::Arrive:
      case K::Go:
      case K::Acked:
      case K::Ack:
      case K::Flag:
      case K::Wait: set_free(st, d); return st;
      case K::Dequant:
        st.kind = StepKind::Compute;
        st.initiator = d.r;
        st.op = DataOp::Copy;
        st.unit = Unit::AccelSm;
        st.accum = Format::Fp32;
        st.srcs = {build::at(qout[static_cast<std::size_t>(d.r)], {0, s.elems})};
        st.dsts = {build::at(s.output[static_cast<std::size_t>(d.r)], {0, s.elems})};
        return st;
      default: return st;
    }
  }

  // A wave's read (sub 0), requantise (INQ) or multicast of plane p.
  Step make_wave(int p, std::size_t k, int sub) const {
    const NodeId sw = s.switch_node(p);
    const build::Span global = wave(k);
    const build::Span local{global.offset - stripes[static_cast<std::size_t>(p)].offset, global.count};
    Step st;
    st.initiator = sw;
    st.accum = Format::Fp32;
    if (sub == 0) {
      st.kind = StepKind::Read;
      st.via = sw;
      st.op = DataOp::Reduce;
      st.unit = Unit::IsaReduce;
      st.srcs.reserve(static_cast<std::size_t>(n));
      for (int j = 0; j < n; ++j) st.srcs.push_back(build::at(inq ? qin[static_cast<std::size_t>(j)] : s.input[static_cast<std::size_t>(j)], global));
      st.dsts = {build::at(acc[static_cast<std::size_t>(p)], local)};
    } else if (sub == 1 && inq) {
      st.kind = StepKind::Compute;
      st.op = DataOp::Copy;
      st.unit = Unit::IsaInq;
      st.srcs = {build::at(acc[static_cast<std::size_t>(p)], local)};
      st.dsts = {build::at(qacc[static_cast<std::size_t>(p)], local)};
    } else {
      st.kind = StepKind::Write;
      st.via = sw;
      st.op = DataOp::Copy;
      st.unit = Unit::IsaReduce;
      st.srcs = {build::at(inq ? qacc[static_cast<std::size_t>(p)] : acc[static_cast<std::size_t>(p)], local)};
      st.dsts.reserve(static_cast<std::size_t>(n));
      for (int j = 0; j < n; ++j) st.dsts.push_back(build::at(inq ? qout[static_cast<std::size_t>(j)] : s.output[static_cast<std::size_t>(j)], global));
    }
    return st;
  }

  bool cost(const Step& st, StepCost& c) const { return analytic_step_cost(cfg, s, rm, st, c, false, true) && nonnegative(c); }
};

// A part's cost with its uses mapped to local queues: `expect` lists the
// resource each use must be on, in order; false if the uses differ.
inline bool local_cost(const StepCost& c, std::initializer_list<int> expect, Cost& out) {
  if (c.uses.size() != expect.size() || c.uses.size() > out.q.size()) return false;
  std::size_t k = 0;
  for (int r : expect) {
    const ResourceUse& u = c.uses[k];
    if (u.resource != r) return false;
    if (u.amount_bytes > 0 && !(u.amount_bytes / u.rate_GBps > 0 && u.amount_bytes / u.rate_GBps < 1e300)) return false;
    ++k;
  }
  out.set(c);
  return true;
}

}  // namespace scin::scin_steps
