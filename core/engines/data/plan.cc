// Shared work of the data engine: see plan.h.
#include "engines/data/plan.h"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace scin {

namespace {

struct Interval {
  std::size_t step;
  std::uint64_t lo, hi;
};

inline bool overlaps(std::uint64_t alo, std::uint64_t ahi, std::uint64_t blo, std::uint64_t bhi) {
  return alo < bhi && blo < ahi;
}

}  // namespace

std::vector<Step> plan_steps(const Schedule& s) {
  const std::size_t nb = s.buffers.size();
  std::vector<std::vector<Interval>> writes(nb), reads(nb);
  for (std::size_t i = 0; i < s.steps.size(); ++i) {
    const Step& st = s.steps[i];
    if (st.op == DataOp::None || st.srcs.size() == 0) continue;
    const std::uint64_t n = st.srcs.front().count;
    for (const Region& r : st.srcs) reads[r.buffer].push_back({i, r.offset, r.offset + n});
    for (const Region& r : st.dsts) {
      writes[r.buffer].push_back({i, r.offset, r.offset + n});
      if (st.op == DataOp::Reduce && st.accumulate) reads[r.buffer].push_back({i, r.offset, r.offset + n});
    }
  }
  std::vector<char> pinned(nb, 0);   // rank inputs and outputs: always materialised
  for (BufferId b : s.input) pinned[b] = 1;
  for (BufferId b : s.output) pinned[b] = 1;
  // Whether [lo, hi) of buffer b is written by a step in (a, z].
  auto written = [&](BufferId b, std::uint64_t lo, std::uint64_t hi, std::size_t a, std::size_t z) {
    for (const Interval& w : writes[b])
      if (w.step > a && w.step <= z && overlaps(w.lo, w.hi, lo, hi)) return true;
    return false;
  };
  auto same_repr = [&](const Region& a, const Region& b) {
    const BufferDecl& x = s.buffers[a.buffer];
    const BufferDecl& y = s.buffers[b.buffer];
    if (x.format != y.format) return false;
    if (!is_codec(x.format)) return true;
    const auto g = static_cast<std::uint64_t>(std::max(x.block_elems, 1));
    return x.block_elems == y.block_elems && x.scale_format == y.scale_format && a.offset % g == 0 &&
           b.offset % g == 0;
  };
  // Forwards: reads of [lo, hi) of buffer b read (to, to_offset + (x - lo)).
  struct Forward {
    std::uint64_t lo, hi;
    BufferId to;
    std::uint64_t to_offset;
  };
  std::vector<std::vector<Forward>> fwd(nb);
  // Each forward points at a region that was readable when it was made, never
  // at a later one, so chains end; empty regions are never forwarded.
  auto resolve = [&](Region r) {
    if (r.count == 0) return r;
    for (;;) {
      bool moved = false;
      for (const Forward& f : fwd[r.buffer])
        if (r.offset >= f.lo && r.offset + r.count <= f.hi) {
          r = Region{f.to, f.to_offset + (r.offset - f.lo), r.count};
          moved = true;
          break;
        }
      if (!moved) return r;
    }
  };
  struct Done {   // a reduction executed as listed
    std::size_t step;
    std::vector<Region> srcs;   // resolved
    Format accum;
    Region dst;
  };
  std::vector<Done> done;
  auto same_region = [](const Region& a, const Region& b) {
    return a.buffer == b.buffer && a.offset == b.offset && a.count == b.count;
  };
  std::vector<Step> plan = s.steps;
  for (std::size_t i = 0; i < plan.size(); ++i) {
    Step& st = plan[i];
    if (st.op == DataOp::None || st.srcs.size() == 0 || st.dsts.size() == 0 || st.srcs.front().count == 0) continue;
    const std::uint64_t n = st.srcs.front().count;
    for (Region& r : st.srcs) r = resolve(r);
    if (st.op == DataOp::Reduce && !st.accumulate) {
      std::vector<Region> srcs(st.srcs.begin(), st.srcs.end());
      bool reused = false;
      for (const Done& d : done) {
        if (d.accum != st.accum || d.srcs.size() != srcs.size()) continue;
        if (!std::equal(srcs.begin(), srcs.end(), d.srcs.begin(), same_region)) continue;
        bool ok = !written(d.dst.buffer, d.dst.offset, d.dst.offset + n, d.step, i - 1);
        for (const Region& r : srcs) ok = ok && !written(r.buffer, r.offset, r.offset + n, d.step, i - 1);
        for (const Region& r : st.dsts)
          ok = ok && same_repr(d.dst, r) &&
               !(r.buffer == d.dst.buffer && overlaps(r.offset, r.offset + n, d.dst.offset, d.dst.offset + n));
        if (!ok) continue;
        st.op = DataOp::Copy;
        st.srcs.clear();
        st.srcs.push_back(d.dst);
        reused = true;
        break;
      }
      // A reduction that overwrites one of its own sources leaves them changed: not reusable.
      bool in_place = false;
      for (const Region& d : st.dsts)
        for (const Region& r : srcs) in_place = in_place || (d.buffer == r.buffer && overlaps(d.offset, d.offset + n, r.offset, r.offset + n));
      if (!reused && !in_place) done.push_back({i, std::move(srcs), st.accum, st.dsts.front()});
    }
    if (st.op != DataOp::Copy) continue;
    const Region src = st.srcs.front();
    DstList kept;
    for (const Region& d : st.dsts) {
      bool elide = !pinned[d.buffer] && same_repr(src, d) &&
                   !(d.buffer == src.buffer && overlaps(d.offset, d.offset + n, src.offset, src.offset + n)) &&
                   !written(d.buffer, d.offset, d.offset + n, i, plan.size());
      std::size_t last = i;
      const auto g = is_codec(s.buffers[d.buffer].format)
                         ? static_cast<std::uint64_t>(std::max(s.buffers[d.buffer].block_elems, 1))
                         : std::uint64_t{1};
      for (const Interval& r : reads[d.buffer]) {
        if (!elide) break;
        if (r.step <= i || !overlaps(r.lo, r.hi, d.offset, d.offset + n)) continue;
        if (r.lo < d.offset || r.hi > d.offset + n || (r.lo - d.offset) % g != 0) elide = false;
        last = std::max(last, r.step);
      }
      elide = elide && !written(src.buffer, src.offset, src.offset + n, i, last);
      if (elide)
        fwd[d.buffer].push_back({d.offset, d.offset + n, src.buffer, src.offset});
      else
        kept.push_back(d);
    }
    st.dsts = kept;
  }
  return plan;
}

}  // namespace scin
