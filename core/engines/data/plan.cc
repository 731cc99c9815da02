// Shared work of the data engine: see plan.h.
#include "engines/data/plan.h"

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <map>
#include <tuple>
#include <unordered_map>
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

// One buffer's intervals by start, for "which of them overlap [lo, hi)": an
// interval that does starts after lo - (the longest interval's length), so a
// binary search skips the rest (a one-shot's gather buffer at N ranks holds N
// regions, each written once and read once: scanning them all per copy was
// N^3 at N ranks).
class IntervalIndex {
 public:
  explicit IntervalIndex(std::vector<Interval> v) : v_(std::move(v)) {
    std::stable_sort(v_.begin(), v_.end(), [](const Interval& a, const Interval& b) { return a.lo < b.lo; });
    for (const Interval& x : v_) longest_ = std::max(longest_, x.hi - x.lo);
  }
  // Calls f(interval) for each interval overlapping [lo, hi) until f returns true.
  template <class F>
  void overlapping(std::uint64_t lo, std::uint64_t hi, F&& f) const {
    const std::uint64_t from = lo > longest_ ? lo - longest_ : 0;
    auto it = std::lower_bound(v_.begin(), v_.end(), from, [](const Interval& x, std::uint64_t at) { return x.lo < at; });
    for (; it != v_.end() && it->lo < hi; ++it)
      if (overlaps(it->lo, it->hi, lo, hi) && f(*it)) return;
  }

 private:
  std::vector<Interval> v_;
  std::uint64_t longest_ = 0;
};

// Where a buffer's elements come from: element x of a piece [lo, hi) holds the
// same bits as element pos + (x - lo) of `content` (what one step wrote into
// one destination, or a rank's loaded input). Elements in no piece are unknown.
// Codec buffers: a piece also stands for the scales of the blocks starting in
// it (pieces are only made by regions on the block grid, see Planner).
struct Piece {
  std::uint64_t hi;
  std::uint32_t content;
  std::uint64_t pos;
};

// A region's pieces relative to its start, adjacent parts of one content merged.
struct Part {
  std::uint64_t lo, hi;
  std::uint32_t content;
  std::uint64_t pos;
  bool operator==(const Part&) const = default;
};

class Provenance {
 public:
  explicit Provenance(std::size_t buffers) : m_(buffers) {}

  void clear(BufferId b, std::uint64_t lo, std::uint64_t hi) {
    if (lo >= hi) return;
    auto& m = m_[b];
    auto it = m.upper_bound(lo);
    if (it != m.begin()) {
      auto p = std::prev(it);
      if (p->first < lo && p->second.hi > lo) {
        const Piece whole = p->second;
        p->second.hi = lo;
        if (whole.hi > hi) m.emplace(hi, Piece{whole.hi, whole.content, whole.pos + (hi - p->first)});
      }
    }
    it = m.lower_bound(lo);
    while (it != m.end() && it->first < hi) {
      if (it->second.hi > hi) {
        const Piece tail{it->second.hi, it->second.content, it->second.pos + (hi - it->first)};
        m.erase(it);
        m.emplace(hi, tail);
        break;
      }
      it = m.erase(it);
    }
  }

  void set(BufferId b, std::uint64_t lo, std::uint64_t hi, std::uint32_t content, std::uint64_t pos) {
    clear(b, lo, hi);
    if (lo < hi) m_[b].emplace(lo, Piece{hi, content, pos});
  }

  // The parts of [lo, hi) of buffer b; false if an element is unknown.
  bool get(BufferId b, std::uint64_t lo, std::uint64_t hi, std::vector<Part>& out) const {
    out.clear();
    const auto& m = m_[b];
    std::uint64_t at = lo;
    auto it = m.upper_bound(lo);
    if (it == m.begin()) return lo >= hi;
    --it;
    while (at < hi) {
      if (it == m.end() || it->first > at || it->second.hi <= at) return false;
      const std::uint64_t end = std::min(hi, it->second.hi);
      const Part p{at - lo, end - lo, it->second.content, it->second.pos + (at - it->first)};
      if (!out.empty() && out.back().content == p.content && out.back().hi == p.lo &&
          out.back().pos + (out.back().hi - out.back().lo) == p.pos)
        out.back().hi = p.hi;
      else
        out.push_back(p);
      at = end;
      ++it;
    }
    return true;
  }

 private:
  std::vector<std::map<std::uint64_t, Piece>> m_;   // per buffer: lo -> piece, disjoint
};

}  // namespace

std::vector<Step> plan_steps(const Schedule& s, std::vector<char>* same_output_as_rank0) {
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
  std::vector<IntervalIndex> writes_at, reads_at;
  writes_at.reserve(nb);
  reads_at.reserve(nb);
  for (std::size_t b = 0; b < nb; ++b) {
    writes_at.emplace_back(std::move(writes[b]));
    reads_at.emplace_back(std::move(reads[b]));
  }
  // Whether [lo, hi) of buffer b is written by a step in (a, z].
  auto written = [&](BufferId b, std::uint64_t lo, std::uint64_t hi, std::size_t a, std::size_t z) {
    bool any = false;
    writes_at[b].overlapping(lo, hi, [&](const Interval& w) { return any = w.step > a && w.step <= z; });
    return any;
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
  // Indices into `done` by accumulation format, source count and first
  // source, in execution order: a reduction is compared with those alone (a
  // ring at 256 ranks executes 65,280 reductions; comparing each with every
  // earlier one was 92% of a data-engine run).
  using DoneKey = std::tuple<int, std::size_t, BufferId, std::uint64_t, std::uint64_t>;
  struct DoneHash {
    std::size_t operator()(const DoneKey& k) const {
      std::uint64_t h = 0xcbf29ce484222325ull;
      for (const std::uint64_t x : {static_cast<std::uint64_t>(std::get<0>(k)), static_cast<std::uint64_t>(std::get<1>(k)),
                                    static_cast<std::uint64_t>(std::get<2>(k)), std::get<3>(k), std::get<4>(k)})
        h = (h ^ x) * 0x100000001b3ull;
      return static_cast<std::size_t>(h ^ (h >> 29));
    }
  };
  std::unordered_map<DoneKey, std::vector<std::size_t>, DoneHash> done_by;
  auto done_key = [](Format accum, const std::vector<Region>& srcs) {
    const Region& f = srcs.front();
    return DoneKey{static_cast<int>(accum), srcs.size(), f.buffer, f.offset, f.count};
  };
  auto same_region = [](const Region& a, const Region& b) {
    return a.buffer == b.buffer && a.offset == b.offset && a.count == b.count;
  };
  // Content provenance (see Provenance) and the conversions executed so far.
  Provenance prov(nb);
  std::uint32_t next_content = 1;   // 0: none (see `made`)
  auto grid = [&](BufferId b) {
    const BufferDecl& d = s.buffers[b];
    return is_codec(d.format) ? static_cast<std::uint64_t>(std::max(d.block_elems, 1)) : std::uint64_t{1};
  };
  auto same_format = [&](BufferId a, BufferId b) {
    const BufferDecl& x = s.buffers[a];
    const BufferDecl& y = s.buffers[b];
    return x.format == y.format &&
           (!is_codec(x.format) || (x.block_elems == y.block_elems && x.scale_format == y.scale_format));
  };
  // A write of [off, off + n) of buffer b: codes off the block grid are not
  // tracked; a codec region ending inside a block (not at the buffer's end)
  // sets that block's scale, so the rest of the block becomes unknown.
  auto written_tail = [&](BufferId b, std::uint64_t end) {
    const std::uint64_t g = grid(b);
    if (g > 1 && end % g != 0) prov.clear(b, end, std::min(s.buffers[b].elems, (end + g - 1) / g * g));
  };
  auto fresh = [&](const Region& d, std::uint64_t n, std::uint32_t content) {
    if (d.offset % grid(d.buffer) != 0) {
      prov.clear(d.buffer, d.offset, d.offset + n);
      return;
    }
    prov.set(d.buffer, d.offset, d.offset + n, content, 0);
    written_tail(d.buffer, d.offset + n);
  };
  std::vector<Part> parts;
  auto copied = [&](const Region& src, const Region& d, std::uint64_t n) {
    const std::uint64_t g = grid(d.buffer);
    const bool known = src.offset % g == 0 && d.offset % g == 0 && prov.get(src.buffer, src.offset, src.offset + n, parts);
    prov.clear(d.buffer, d.offset, d.offset + n);
    if (known)
      for (const Part& p : parts) prov.set(d.buffer, d.offset + p.lo, d.offset + p.hi, p.content, p.pos);
    written_tail(d.buffer, d.offset + n);
  };
  for (int r = 0; r < s.gpus && r < static_cast<int>(s.input.size()); ++r)
    fresh(Region{s.input[static_cast<std::size_t>(r)], 0, s.elems}, s.elems, next_content++);
  // A conversion's result is a function of its source's parts (a codec
  // source's on the block grid) and of the destination's representation.
  struct Converted {
    std::vector<Part> src;
    Region dst;
    std::uint32_t content;
  };
  std::map<std::tuple<std::uint64_t, std::uint32_t, std::uint64_t>, std::vector<Converted>> conversions;
  auto on_grid = [&](const Region& src, const std::vector<Part>& ps) {
    const std::uint64_t g = grid(src.buffer);
    if (src.offset % g != 0) return false;
    for (const Part& p : ps)
      if (p.lo % g != 0 || p.pos % g != 0) return false;
    return true;
  };

  std::vector<Step> plan = s.steps;
  for (std::size_t i = 0; i < plan.size(); ++i) {
    Step& st = plan[i];
    if (st.op == DataOp::None || st.srcs.size() == 0 || st.dsts.size() == 0 || st.srcs.front().count == 0) continue;
    const std::uint64_t n = st.srcs.front().count;
    // A copy into another representation of content converted before into the
    // same representation copies that result (still held) instead.
    std::vector<Part> conv_src;
    bool conversion = st.op == DataOp::Copy && !same_format(st.srcs.front().buffer, st.dsts.front().buffer);
    for (const Region& d : st.dsts) conversion = conversion && same_repr(st.dsts.front(), d);
    if (conversion) {
      const Region& src = st.srcs.front();
      if (!prov.get(src.buffer, src.offset, src.offset + n, conv_src) || conv_src.empty() || !on_grid(src, conv_src))
        conversion = false;
    }
    if (conversion) {
      const auto key = std::make_tuple(n, conv_src.front().content, conv_src.front().pos);
      const auto found = conversions.find(key);
      if (found != conversions.end())
        for (const Converted& c : found->second) {
          if (c.src != conv_src || !same_repr(c.dst, st.dsts.front())) continue;
          std::vector<Part> held;
          if (!prov.get(c.dst.buffer, c.dst.offset, c.dst.offset + n, held) || held.size() != 1 ||
              held.front() != Part{0, n, c.content, 0})
            continue;
          bool ok = true;
          for (const Region& d : st.dsts)
            ok = ok && !(d.buffer == c.dst.buffer && overlaps(d.offset, d.offset + n, c.dst.offset, c.dst.offset + n));
          if (!ok) continue;
          st.srcs.clear();
          st.srcs.push_back(Region{c.dst.buffer, c.dst.offset, n});
          conversion = false;   // now a copy of one representation
          break;
        }
    }
    for (Region& r : st.srcs) r = resolve(r);
    if (st.op == DataOp::Reduce && !st.accumulate) {
      std::vector<Region> srcs(st.srcs.begin(), st.srcs.end());
      bool reused = false;
      static const std::vector<std::size_t> none;
      const auto bucket = done_by.find(done_key(st.accum, srcs));
      for (const std::size_t k : bucket == done_by.end() ? none : bucket->second) {
        const Done& d = done[k];
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
      if (!reused && !in_place) {
        done_by[done_key(st.accum, srcs)].push_back(done.size());
        done.push_back({i, std::move(srcs), st.accum, st.dsts.front()});
      }
    }
    // What the step leaves in its destinations (as listed: elided ones included).
    {
      std::vector<std::uint32_t> made;   // per destination: the content it gets, if new
      for (std::size_t k = 0; k < st.dsts.size(); ++k) {
        const Region& d = st.dsts[k];
        if (st.op == DataOp::Copy && same_format(st.srcs.front().buffer, d.buffer)) {
          copied(st.srcs.front(), d, n);
          made.push_back(0);
          continue;
        }
        std::uint32_t content = next_content;
        for (std::size_t j = 0; j < k; ++j)
          if (made[j] != 0 && same_repr(st.dsts[j], d)) content = made[j];
        if (content == next_content) ++next_content;
        made.push_back(content);
        fresh(d, n, content);
      }
      if (conversion) conversions[std::make_tuple(n, conv_src.front().content, conv_src.front().pos)].push_back(
          Converted{std::move(conv_src), st.dsts.front(), made.front()});
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
      // Every later read of D lies inside it (on the block grid); `last`: the latest.
      if (elide)
        reads_at[d.buffer].overlapping(d.offset, d.offset + n, [&](const Interval& r) {
          if (r.step <= i) return false;
          if (r.lo < d.offset || r.hi > d.offset + n || (r.lo - d.offset) % g != 0) elide = false;
          last = std::max(last, r.step);
          return !elide;
        });
      elide = elide && !written(src.buffer, src.offset, src.offset + n, i, last);
      if (elide)
        fwd[d.buffer].push_back({d.offset, d.offset + n, src.buffer, src.offset});
      else
        kept.push_back(d);
    }
    st.dsts = kept;
  }
  if (same_output_as_rank0) {
    // Outputs are never elided, so their parts are their stored bits.
    same_output_as_rank0->assign(s.output.size(), 0);
    std::vector<Part> first, other;
    if (!s.output.empty() && prov.get(s.output.front(), 0, s.elems, first) && !first.empty())
      for (std::size_t r = 1; r < s.output.size(); ++r)
        (*same_output_as_rank0)[r] = prov.get(s.output[r], 0, s.elems, other) && other == first;
    // Such a rank's output is returned as rank 0's: a write into it that no
    // later step reads is not executed (a buffer that is also rank 0's output,
    // or an input, is always written).
    // What the plan reads (sources rewritten and forwarded: the storage read).
    std::vector<std::vector<Interval>> plan_reads(nb);
    for (std::size_t i = 0; i < plan.size(); ++i) {
      const Step& st = plan[i];
      if (st.op == DataOp::None || st.srcs.size() == 0) continue;
      const std::uint64_t n = st.srcs.front().count;
      for (const Region& r : st.srcs) plan_reads[r.buffer].push_back({i, r.offset, r.offset + n});
      if (st.op == DataOp::Reduce && st.accumulate)
        for (const Region& r : st.dsts) plan_reads[r.buffer].push_back({i, r.offset, r.offset + n});
    }
    std::vector<IntervalIndex> plan_reads_at;
    plan_reads_at.reserve(nb);
    for (std::size_t b = 0; b < nb; ++b) plan_reads_at.emplace_back(std::move(plan_reads[b]));
    std::vector<char> skip(nb, 0);
    for (std::size_t r = 1; r < s.output.size(); ++r) skip[s.output[r]] = (*same_output_as_rank0)[r];
    skip[s.output.front()] = 0;
    for (BufferId b : s.input) skip[b] = 0;
    for (std::size_t i = 0; i < plan.size(); ++i) {
      Step& st = plan[i];
      if (st.op == DataOp::None || st.srcs.size() == 0 || st.dsts.size() == 0) continue;
      const std::uint64_t n = st.srcs.front().count;
      DstList kept;
      for (const Region& d : st.dsts) {
        bool dead = skip[d.buffer] != 0;
        if (dead)
          plan_reads_at[d.buffer].overlapping(d.offset, d.offset + n, [&](const Interval& r) {
            return !(dead = r.step <= i);
          });
        if (!dead) kept.push_back(d);
      }
      st.dsts = kept;
    }
  }
  return plan;
}

std::vector<char> touched_buffers(const Schedule& s, std::size_t buffers, const std::vector<Step>& steps,
                                  const std::vector<char>& same_output_as_rank0) {
  std::vector<char> t(std::max(buffers, s.buffers.size()), 0);
  for (const Step& st : steps) {
    if (st.op == DataOp::None) continue;
    for (const Region& r : st.srcs) t[r.buffer] = 1;
    for (const Region& r : st.dsts) t[r.buffer] = 1;
  }
  for (BufferId b : s.input) t[b] = 1;
  for (std::size_t r = 0; r < s.output.size(); ++r)
    if (r == 0 || r >= same_output_as_rank0.size() || !same_output_as_rank0[r]) t[s.output[r]] = 1;
  return t;
}

}  // namespace scin
