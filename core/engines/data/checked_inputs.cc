// Inputs checked once for several data-engine runs, and their codes shared
// between runs (CheckedInputs, InputCodes: data_engine.h); check_run (input_codes.h).
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <memory>

#include <fmt/format.h>
#include <tbb/parallel_for.h>

#include "base/error.h"
#include "engines/data/data_engine.h"
#include "engines/data/input_codes.h"
#include "numerics/formats.h"

namespace scin {

CheckedInputs::CheckedInputs(const std::vector<std::vector<float>>& inputs)
    : values_(&inputs),
      bf16_(inputs.size(), 0),
      fp16_(std::make_unique<std::atomic<unsigned char>[]>(inputs.size())) {
  // One pass over every rank's input: the first non-finite element (checked in
  // parallel, reported deterministically), and whether the input is exact in BF16.
  const std::size_t n = inputs.size();
  for (const auto& x : inputs) sizes_.push_back(x.size());
  std::vector<std::size_t> bad(n, SIZE_MAX);
  tbb::parallel_for(std::size_t{0}, n, [&](std::size_t r) {
    const auto& x = inputs[r];
    bool bf16 = true;
    constexpr std::size_t kStride = 4096;
    for (std::size_t lo = 0; lo < x.size(); lo += kStride) {
      const std::size_t hi = std::min(x.size(), lo + kStride);
      // Branch-free over bit patterns (vectorises): exponent all ones = not finite;
      // a BF16 value has no low 16 bits.
      std::uint32_t nonfinite = 0, low = 0;
      for (std::size_t i = lo; i < hi; ++i) {
        const auto u = std::bit_cast<std::uint32_t>(x[i]);
        nonfinite |= static_cast<std::uint32_t>((u & 0x7f800000u) == 0x7f800000u);
        low |= u;
      }
      if (nonfinite) {
        for (std::size_t i = lo; i < hi; ++i)
          if (!std::isfinite(x[i])) {
            bad[r] = i;
            break;
          }
        break;
      }
      bf16 = bf16 && (low & 0xffffu) == 0;
    }
    bf16_[r] = bf16;
  });
  for (std::size_t r = 0; r < n; ++r)
    if (const std::size_t i = bad[r]; i != SIZE_MAX)
      throw Error(fmt::format("data engine: rank {} input element {} is not finite ({})", r, i, inputs[r][i]));
}

namespace {
const std::vector<std::vector<float>> kNoFloats;
}  // namespace

CheckedInputs::CheckedInputs(const std::vector<BigVector<std::uint16_t>>& bf16)
    : values_(&kNoFloats),
      bf16_values_(&bf16),
      bf16_(bf16.size(), 1),
      fp16_(std::make_unique<std::atomic<unsigned char>[]>(bf16.size())) {
  // Every BF16 value is exact in BF16 (and in FP32); only finiteness is checked:
  // exponent all ones, branch-free over runs (vectorises), reported as for floats.
  const std::size_t n = bf16.size();
  for (const auto& x : bf16) sizes_.push_back(x.size());
  std::vector<std::size_t> bad(n, SIZE_MAX);
  tbb::parallel_for(std::size_t{0}, n, [&](std::size_t r) {
    const auto& x = bf16[r];
    constexpr std::size_t kStride = 4096;
    for (std::size_t lo = 0; lo < x.size(); lo += kStride) {
      const std::size_t hi = std::min(x.size(), lo + kStride);
      std::uint32_t nonfinite = 0;
      for (std::size_t i = lo; i < hi; ++i) nonfinite |= static_cast<std::uint32_t>((x[i] & 0x7f80u) == 0x7f80u);
      if (nonfinite) {
        for (std::size_t i = lo; i < hi; ++i)
          if ((x[i] & 0x7f80u) == 0x7f80u) {
            bad[r] = i;
            break;
          }
        break;
      }
    }
  });
  for (std::size_t r = 0; r < n; ++r)
    if (const std::size_t i = bad[r]; i != SIZE_MAX)
      throw Error(fmt::format("data engine: rank {} input element {} is not finite ({})", r, i,
                              num::bf16_to_float(bf16[r][i])));
}

float CheckedInputs::value(int rank, std::uint64_t i) const {
  const auto r = static_cast<std::size_t>(rank);
  return bf16_values_ ? num::bf16_to_float((*bf16_values_)[r][i]) : (*values_)[r][i];
}

bool CheckedInputs::exact(int rank, Format f) const {
  const auto r = static_cast<std::size_t>(rank);
  if (is_codec(f)) return false;
  if (f == Format::Bf16) return bf16_.at(r) != 0;
  if (f != Format::Fp16) return true;
  unsigned char known = fp16_[r].load(std::memory_order_relaxed);
  if (known == 0) {
    bool same = true;
    for (std::uint64_t i = 0; i < sizes_.at(r) && same; ++i) {
      const float x = value(rank, i);
      same = num::round_fp16(x) == x;
    }
    known = same ? 2 : 1;
    fp16_[r].store(known, std::memory_order_relaxed);
  }
  return known == 2;
}

InputCodes::InputCodes(const CheckedInputs& inputs) : st_(std::make_unique<State>()) {
  const std::size_t n = inputs.ranks();
  st_->inputs = &inputs;
  st_->codes.assign(n, nullptr);
  st_->scales.assign(n, nullptr);
  st_->held.resize(n);
}

InputCodes::~InputCodes() = default;

SumUse sum_use(InputCodes::State& codes, const Step& st, std::uint64_t n, const std::vector<int>& input_rank,
               int gpus, std::uint64_t elems) {
  if (st.accum != Format::Fp32 || st.accumulate || st.srcs.size() != static_cast<std::size_t>(gpus)) return {};
  const std::uint64_t off = st.srcs.front().offset;
  std::vector<int> ranks;
  for (const Region& r : st.srcs) {
    if (input_rank[r.buffer] < 0 || r.offset != off) return {};
    ranks.push_back(input_rank[r.buffer]);
  }
  std::vector<int> sorted = ranks;   // every rank's input once
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) return {};
  if (codes.sum_ranks.empty()) codes.sum_ranks = ranks;
  if (ranks != codes.sum_ranks) return {};
  if (codes.sums.empty()) codes.sums.resize(elems);
  return SumUse{true, codes.summed.covers(off, off + n)};
}

std::uint64_t InputCodes::summed_elements() const { return st_->summed.total(); }

std::uint64_t InputCodes::buffers_read_in_place() const { return st_->buffers_in_place; }

std::uint64_t InputCodes::held_elements() const {
  std::uint64_t t = 0;
  for (const Coverage& c : st_->held) t += c.total();
  return t;
}

CacheUse cache_use(InputCodes::State& codes, const Step& st, std::uint64_t n, const std::vector<int>& input_rank,
                   const std::vector<BufferDecl>& decls, std::uint64_t elems) {
  CacheUse cu;
  const Region& sr = st.srcs.front();
  const int rank = input_rank[sr.buffer];
  if (rank < 0) return cu;
  cu.use.assign(st.dsts.size(), 0);
  bool any = false;
  for (std::size_t k = 0; k < st.dsts.size(); ++k) {
    const Region& dr = st.dsts[k];
    const BufferDecl& d = decls[dr.buffer];
    if (!is_codec(d.format)) continue;
    const num::CodecSpec c{d.format, d.block_elems, d.scale_format};
    if (codes.has_spec && !(c == codes.spec)) continue;
    const auto g = static_cast<std::uint64_t>(d.block_elems);
    const std::uint64_t end = sr.offset + n;
    if (sr.offset % g != 0 || dr.offset % g != 0 || (end % g != 0 && end != elems)) continue;
    if (!codes.has_spec) {
      codes.spec = c;
      codes.has_spec = true;
    }
    cu.use[k] = 1;
    any = true;
  }
  if (!any) return cu;
  const auto r = static_cast<std::size_t>(rank);
  const auto g = static_cast<std::uint64_t>(codes.spec.block_elems);
  codes.allocate(r, elems, g);
  cu.rank = rank;
  cu.held = codes.held[r].covers(sr.offset, sr.offset + n);
  return cu;
}

std::vector<int> cached_code_buffers(InputCodes::State& codes, const Schedule& s, const std::vector<Step>& steps,
                                     const std::vector<InputAlias>& alias) {
  const std::size_t nb = s.buffers.size();
  std::vector<int> rank(nb, -1);
  std::vector<char> ok(nb, 0);
  for (std::size_t b = 0; b < nb; ++b) ok[b] = is_codec(s.buffers[b].format) && s.buffers[b].elems == s.elems;
  for (BufferId b : s.input) ok[b] = 0;
  for (BufferId b : s.output) ok[b] = 0;
  // The copies the cache takes (Engine::cache_use): from rank r's input read in
  // place, into a codec region on the block grid ending on it or at the end.
  auto input_of = [&](const Region& r) {
    const int k = r.buffer < alias.size() ? alias[r.buffer].rank : -1;
    return k >= 0 && s.input[static_cast<std::size_t>(k)] == r.buffer ? k : -1;
  };
  auto takes = [&](const Region& sr, const Region& dr, std::uint64_t n) {
    const BufferDecl& d = s.buffers[dr.buffer];
    if (!is_codec(d.format) || d.block_elems < 1) return false;
    const auto g = static_cast<std::uint64_t>(d.block_elems);
    const std::uint64_t end = sr.offset + n;
    return sr.offset % g == 0 && dr.offset % g == 0 && (end % g == 0 || end == s.elems);
  };
  auto running = [&](std::size_t i) {
    const Step& listed = s.steps[i];
    return listed.op != DataOp::None && !listed.srcs.empty() && listed.srcs.front().count != 0 &&
           steps[i].op != DataOp::None && !steps[i].dsts.empty();
  };
  num::CodecSpec spec = codes.spec;   // the cache's codec, or the one its first use will take
  bool has_spec = codes.has_spec;
  std::vector<Coverage> written(nb);
  for (std::size_t i = 0; i < steps.size() && i < s.steps.size(); ++i) {
    if (!running(i)) continue;
    const Step& st = steps[i];
    const std::uint64_t n = s.steps[i].srcs.front().count;
    const int from = st.op == DataOp::Copy ? input_of(st.srcs.front()) : -1;
    for (const Region& r : st.srcs)
      if (r.buffer < nb && ok[r.buffer] && !written[r.buffer].covers(r.offset, r.offset + n)) ok[r.buffer] = 0;
    for (const Region& r : st.dsts) {
      const bool taken = from >= 0 && takes(st.srcs.front(), r, n);
      const BufferDecl& d = s.buffers[r.buffer];
      if (taken && !has_spec) {
        spec = num::CodecSpec{d.format, d.block_elems, d.scale_format};
        has_spec = true;
      }
      if (r.buffer >= nb || !ok[r.buffer]) continue;
      const bool same = taken && num::CodecSpec{d.format, d.block_elems, d.scale_format} == spec &&
                        r.offset == st.srcs.front().offset && (rank[r.buffer] < 0 || rank[r.buffer] == from);
      if (!same || (st.op == DataOp::Reduce && st.accumulate)) {
        ok[r.buffer] = 0;
        continue;
      }
      rank[r.buffer] = from;
      written[r.buffer].cover(r.offset, r.offset + n);
    }
  }
  for (std::size_t b = 0; b < nb; ++b) {
    if (!ok[b] || rank[b] < 0) {
      rank[b] = -1;
      continue;
    }
    ++codes.buffers_in_place;
    const auto r = static_cast<std::size_t>(rank[b]);
    const auto g = static_cast<std::uint64_t>(spec.block_elems);
    codes.allocate(r, s.elems, g);
  }
  return rank;
}

std::vector<InputAlias> input_aliases(const Schedule& s, const CheckedInputs& checked) {
  const auto* patterns = checked.bf16_patterns();
  // Whether each rank's input is exact in its buffer's format (then the buffer may read it in place).
  std::vector<char> exact(static_cast<std::size_t>(s.gpus), 0);
  tbb::parallel_for(0, s.gpus, [&](int r) {
    const Format f = s.buffers[s.input[static_cast<std::size_t>(r)]].format;
    exact[static_cast<std::size_t>(r)] = patterns ? f == Format::Bf16 : checked.exact(r, f);
  });
  std::vector<int> writes(s.buffers.size(), 0), owners(s.buffers.size(), 0);
  for (const Step& st : s.steps)
    if (st.op != DataOp::None)
      for (const Region& r : st.dsts) ++writes[r.buffer];
  for (BufferId id : s.input) ++owners[id];
  std::vector<InputAlias> alias(s.buffers.size());
  for (int r = 0; r < s.gpus; ++r) {
    const auto k = static_cast<std::size_t>(r);
    const BufferId id = s.input[k];
    if (!exact[k] || writes[id] != 0 || owners[id] != 1 || s.buffers[id].elems != s.elems) continue;
    if (!patterns)
      alias[id] = InputAlias{r, checked.values()[k].data(), nullptr};
    else if (s.buffers[id].format == Format::Bf16)
      alias[id] = InputAlias{r, nullptr, (*patterns)[k].data()};
  }
  return alias;
}

const float* input_floats(const CheckedInputs& checked, int rank, std::vector<float>& scratch) {
  const auto k = static_cast<std::size_t>(rank);
  const auto* patterns = checked.bf16_patterns();
  if (!patterns) return checked.values()[k].data();
  const BigVector<std::uint16_t>& h = (*patterns)[k];
  scratch.resize(h.size());
  for (std::size_t i = 0; i < h.size(); ++i) scratch[i] = num::bf16_to_float(h[i]);
  return scratch.data();
}

void check_run(const Schedule& s, const std::vector<std::uint64_t>& sizes) {
  check_schedule(s);
  if (sizes.size() != static_cast<std::size_t>(s.gpus))
    throw Error(fmt::format("data engine: {} input arrays for {} ranks", sizes.size(), s.gpus));
  if (s.input.size() != static_cast<std::size_t>(s.gpus) || s.output.size() != static_cast<std::size_t>(s.gpus))
    throw Error(fmt::format("data engine: schedule {} declares {} inputs and {} outputs for {} ranks", s.algorithm,
                            s.input.size(), s.output.size(), s.gpus));
  for (const BufferDecl& d : s.buffers)
    if (is_codec(d.format) && d.block_elems < 1)
      throw Error(fmt::format("data engine: buffer {} ({}) has block_elems {}; must be >= 1", d.name,
                              to_string(d.format), d.block_elems));
  for (int r = 0; r < s.gpus; ++r) {
    const std::uint64_t size = sizes[static_cast<std::size_t>(r)];
    if (size != s.elems)
      throw Error(fmt::format("data engine: rank {} input has {} elements; the schedule has {} per rank", r,
                              size, s.elems));
    if (s.buffers.at(s.input[static_cast<std::size_t>(r)]).elems < s.elems)
      throw Error(fmt::format("data engine: input buffer of rank {} holds {} elements, input has {}", r,
                              s.buffers.at(s.input[static_cast<std::size_t>(r)]).elems, s.elems));
    if (s.buffers.at(s.output[static_cast<std::size_t>(r)]).elems < s.elems)
      throw Error(fmt::format("data engine: output buffer of rank {} is smaller than {} elements", r, s.elems));
  }
}

}  // namespace scin
