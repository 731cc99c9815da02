#include "engines/data/data_engine.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <numeric>
#include <unordered_map>

#include <fmt/format.h>
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include "base/error.h"
#include "engines/data/buffers.h"
#include "engines/data/coverage.h"
#include "engines/data/input_codes.h"
#include "engines/data/plan.h"
#include "engines/data/slots.h"
#include "numerics/codec.h"
#include "numerics/formats.h"

namespace scin {

using namespace data_internal;

namespace {

using num::CodecSpec;

// Per-thread scratch of at least n floats, contents unspecified (every user
// writes before it reads): a step's chunks are not allocated and zero-filled
// per task. Two slots: the chunk's running values and one decoded source.
float* scratch(std::size_t n, int slot) {
  thread_local std::vector<float> buf[2];
  std::vector<float>& b = buf[slot];
  if (b.size() < n) b.resize(n);
  return b.data();
}

// Target chunk of elements per task; rounded to a multiple of every block size in a step.
constexpr std::uint64_t kChunkElems = 16384;

}  // namespace

namespace {

class Engine {
 public:
  // `decls`: the buffers as laid out (the schedule's, and slots: slots.h);
  // `alias[i]`: buffer i is rank-input storage read in place (never written by
  // a step, already exact in its format, exactly as long as the input): FP32
  // values (`vals`) or, for a BF16 buffer, BF16 patterns (`half`).
  // `cached[i]` >= 0: buffer i reads that rank's shared input codes in place
  // (cached_code_buffers; `codes` then holds them): no storage of its own.
  Engine(const Schedule& s, const std::vector<BufferDecl>& decls, const std::vector<Step>& steps,
         const DataOptions& opt, std::byte* storage, const std::vector<InputAlias>& alias,
         const std::vector<char>& touched, InputCodes::State* codes, const std::vector<int>& cached)
      : s_(s), decls_(decls), steps_(&steps) {
    bufs_.resize(decls.size());
    const float fill = opt.poison_unwritten ? std::numeric_limits<float>::quiet_NaN() : 0.0f;
    std::uint64_t at = 0;
    // Storage for the buffers the run touches (laid_bytes): the others are
    // never read or written (copies not materialised, outputs known to equal
    // rank 0's), and take none.
    for (std::size_t i = 0; i < decls.size(); ++i) {
      const BufferDecl& d = decls[i];
      Buf& b = bufs_[i];
      b.format = d.format;
      b.fill = fill;
      b.elems = d.elems;
      if (!touched[i]) continue;
      if (i < alias.size() && alias[i].rank >= 0) {
        // Read only: no step writes buffer i.
        b.vals = const_cast<float*>(alias[i].vals);
        b.half = const_cast<std::uint16_t*>(alias[i].half);
        b.elem_cov.reset(d.elems);
        continue;
      }
      if (is_codec(d.format)) {
        b.codec = CodecSpec{d.format, d.block_elems, d.scale_format};
        b.blocks = codec_blocks(d);
        if (i < cached.size() && cached[i] >= 0) {   // written only by copies the cache takes
          b.codes = codes->codes[static_cast<std::size_t>(cached[i])];
          b.scales = codes->scales[static_cast<std::size_t>(cached[i])];
          b.in_cache = true;
          continue;
        }
        b.codes = reinterpret_cast<std::uint8_t*>(storage + at);
        b.scales = reinterpret_cast<float*>(storage + at + align_up(d.elems));
      } else {
        if (d.format == Format::Bf16 || d.format == Format::Fp16)
          b.half = reinterpret_cast<std::uint16_t*>(storage + at);
        else
          b.vals = reinterpret_cast<float*>(storage + at);
      }
      at += storage_bytes(d);
    }
  }

  // Shares quantised inputs through `codes` (bound to the run's inputs):
  // buffers read in place from a rank's input are that rank's (alias: as in the constructor).
  void share_input_codes(InputCodes::State* codes, const std::vector<InputAlias>& alias) {
    codes_ = codes;
    input_rank_.assign(decls_.size(), -1);
    for (int r = 0; r < s_.gpus; ++r) {
      const BufferId id = s_.input.at(static_cast<std::size_t>(r));
      if (alias[id].rank == r) input_rank_[id] = r;
    }
  }

  // Serial part of loading rank inputs: marks them written.
  void mark_input(int rank, std::uint64_t n) {
    bufs_.at(s_.input.at(static_cast<std::size_t>(rank))).mark_written(0, n);
  }

  void load_input(int rank, const float* x, std::uint64_t n) {
    const BufferId id = s_.input.at(static_cast<std::size_t>(rank));
    Buf& b = bufs_.at(id);
    if (s_.buffers[id].elems < n)
      throw Error(fmt::format("data engine: input buffer of rank {} holds {} elements, input has {}", rank,
                              s_.buffers[id].elems, n));
    write_plain(b, 0, x, n);
  }

  // Whether ranks a and b hold the same output bits, read as stored (16-bit
  // outputs only: FP32 outputs are views, compared by the caller).
  bool same_output(int a, int b) {
    Buf& x = bufs_.at(s_.output.at(static_cast<std::size_t>(a)));
    Buf& y = bufs_.at(s_.output.at(static_cast<std::size_t>(b)));
    if (!x.half || !y.half || x.format != y.format) return false;
    x.prepare_read(0, s_.elems);
    y.prepare_read(0, s_.elems);
    return std::memcmp(x.half, y.half, s_.elems * sizeof(std::uint16_t)) == 0;
  }

  // Rank `rank`'s output: a view of the buffer when it holds plain values,
  // else its BF16 patterns in `bf16` when asked and held so, else decoded into `scratch`.
  std::span<const float> output(int rank, BigVector<float>& scratch, std::span<const std::uint16_t>* bf16) {
    const BufferId id = s_.output.at(static_cast<std::size_t>(rank));
    Buf& b = bufs_.at(id);
    b.prepare_read(0, s_.elems);
    if (b.vals) return {b.vals, s_.elems};
    if (bf16 && b.half && b.format == Format::Bf16) {
      *bf16 = {b.half, s_.elems};
      return {};
    }
    scratch.resize(s_.elems);
    read(b, Region{id, 0, s_.elems}, 0, s_.elems, scratch.data());
    return scratch;
  }

  // Executes `st` (steps_[index]: the schedule's step, or what plan_steps made
  // of it); the counts are those of the schedule's step.
  void run_step(std::size_t index, DataResult& res) {
    const Step& listed = s_.steps[index];
    if (listed.op == DataOp::None) return;
    const std::uint64_t n = listed.srcs.front().count;
    if (n == 0) return;
    ++res.data_steps;
    res.elements_processed += n * (listed.srcs.size() + listed.dsts.size());
    const Step& st = (*steps_)[index];
    if (st.dsts.size() == 0) return;   // every destination forwarded
    // Chunks are a multiple of every codec block size of the step. Blocks of a
    // codec region start at the region's offset. A region off the
    // buffer's block grid (schedule.h asks algorithms to avoid them; they arise
    // from slots of a size that is not a whole number of blocks) keeps its
    // scales in a map keyed by block start, so such a step runs as one task.
    std::uint64_t align = 1;
    bool serial = false;
    auto visit = [&](const Region& r) {
      const BufferDecl& d = decls_[r.buffer];
      if (!is_codec(d.format)) return;
      const auto g = static_cast<std::uint64_t>(d.block_elems);
      if (r.offset % g != 0) serial = true;
      align = std::lcm(align, g);
    };
    for (const auto& r : st.srcs) visit(r);
    for (const auto& r : st.dsts) visit(r);
    std::uint64_t chunk = serial ? n : std::max<std::uint64_t>(1, kChunkElems / align) * align;
    // A destination overlapping a source at a different position would let one
    // task overwrite what another still reads: run such a step as one chunk.
    for (const auto& d : st.dsts)
      for (const auto& r : st.srcs)
        if (d.buffer == r.buffer && d.offset != r.offset && d.offset < r.offset + n && r.offset < d.offset + n)
          chunk = n;
    chunk = std::min(chunk, n);
    // Fill what this step reads and nothing wrote yet, then record what it writes.
    for (const auto& r : st.srcs) bufs_[r.buffer].prepare_read(r.offset, n);
    if (st.op == DataOp::Reduce && st.accumulate)
      for (const auto& r : st.dsts) bufs_[r.buffer].prepare_read(r.offset, n);
    for (const auto& r : st.dsts) bufs_[r.buffer].mark_written(r.offset, n);
    const CacheUse cu =
        codes_ && st.op == DataOp::Copy ? cache_use(*codes_, st, n, input_rank_, decls_, s_.elems) : CacheUse{};
    for (std::size_t k = 0; k < st.dsts.size(); ++k)   // cached_code_buffers' promise, checked
      if (bufs_[st.dsts[k].buffer].in_cache && (cu.rank < 0 || !cu.use[k]))
        throw Error(fmt::format("data engine: step {}: a cached-code buffer written otherwise", st.label));
    sum_ = codes_ && st.op == DataOp::Reduce ? sum_use(*codes_, st, n, input_rank_, s_.gpus, s_.elems) : SumUse{};
    const std::uint64_t chunks = (n + chunk - 1) / chunk;
    tbb::parallel_for(tbb::blocked_range<std::uint64_t>(0, chunks), [&](const tbb::blocked_range<std::uint64_t>& rg) {
      float* tmp = scratch(chunk, 0);
      for (std::uint64_t c = rg.begin(); c != rg.end(); ++c) {
        const std::uint64_t lo = c * chunk;
        const std::uint64_t len = std::min(chunk, n - lo);
        if (st.op == DataOp::Copy)
          copy_chunk(st, lo, len, tmp, cu);
        else
          reduce_chunk(st, lo, len, tmp);
      }
    });
    if (sum_.on && !sum_.held) codes_->summed.cover(st.srcs.front().offset, st.srcs.front().offset + n);
    if (cu.rank >= 0 && !cu.held)
      codes_->held[static_cast<std::size_t>(cu.rank)].cover(st.srcs.front().offset, st.srcs.front().offset + n);
  }

 private:
  // Decodes elements [lo, lo+len) of region r into out.
  __attribute__((always_inline)) void read(const Buf& b, const Region& r, std::uint64_t lo, std::uint64_t len, float* out) const {
    const std::uint64_t first = r.offset + lo;
    if (b.vals) {
      std::memcpy(out, b.vals + first, len * sizeof(float));
      return;
    }
    if (b.half) {
      const std::uint16_t* h = b.half + first;
      if (b.format == Format::Bf16)
        for (std::uint64_t i = 0; i < len; ++i) out[i] = num::bf16_to_float(h[i]);
      else
        for (std::uint64_t i = 0; i < len; ++i) out[i] = num::fp16_to_float(h[i]);
      return;
    }
    const auto g = static_cast<std::uint64_t>(b.codec.block_elems);
    if (first % g == 0) {   // on the grid: the blocks' scales are consecutive
      num::dequantise_blocks(b.codes + first, len, b.scales + first / g, b.codec, out);
      return;
    }
    for (std::uint64_t k = 0; k < len; k += g) {
      const std::uint64_t m = std::min(g, len - k);
      num::dequantise_block(b.codes + first + k, m, b.scale_at(first + k), b.format, out + k);
    }
  }

  // Adds elements [lo, lo+len) of region r into acc in FP32.
  __attribute__((always_inline)) void read_add(const Buf& b, const Region& r, std::uint64_t lo, std::uint64_t len, float* acc) const {
    const std::uint64_t first = r.offset + lo;
    if (b.vals) {
      const float* v = b.vals + first;
      for (std::uint64_t i = 0; i < len; ++i) acc[i] += v[i];
      return;
    }
    if (b.half) {
      const std::uint16_t* h = b.half + first;
      if (b.format == Format::Bf16)
        for (std::uint64_t i = 0; i < len; ++i) acc[i] += num::bf16_to_float(h[i]);
      else
        for (std::uint64_t i = 0; i < len; ++i) acc[i] += num::fp16_to_float(h[i]);
      return;
    }
    const auto g = static_cast<std::uint64_t>(b.codec.block_elems);
    if (first % g == 0) {
      num::dequantise_add_blocks(b.codes + first, len, b.scales + first / g, b.codec, acc);
      return;
    }
    for (std::uint64_t k = 0; k < len; k += g) {
      const std::uint64_t m = std::min(g, len - k);
      num::dequantise_add_block(b.codes + first + k, m, b.scale_at(first + k), b.format, acc + k);
    }
  }

  // Stores len values (FP32) at element `first` of b, converting to b's format.
  // For codecs `first` is block aligned; blocks are cut at first + len.
  __attribute__((always_inline)) static void write_plain(Buf& b, std::uint64_t first, const float* x, std::uint64_t len) {
    if (b.half) {
      std::uint16_t* h = b.half + first;
      if (b.format == Format::Bf16)
        for (std::uint64_t i = 0; i < len; ++i)
          h[i] = static_cast<std::uint16_t>(std::bit_cast<std::uint32_t>(num::round_bf16_fast(x[i])) >> 16);
      else
        for (std::uint64_t i = 0; i < len; ++i) h[i] = num::fp16_bits(x[i]);
      return;
    }
    if (!is_codec(b.format)) {   // FP32 (inputs read in place are never written)
      std::memcpy(b.vals + first, x, len * sizeof(float));
      return;
    }
    const auto g = static_cast<std::uint64_t>(b.codec.block_elems);
    if (first % g == 0) {
      num::quantise_blocks(x, len, b.codec, b.codes + first, b.scales + first / g);
      return;
    }
    for (std::uint64_t k = 0; k < len; k += g) {
      const std::uint64_t m = std::min(g, len - k);
      b.set_scale(first + k, num::quantise_block(x + k, m, b.codec, b.codes + first + k));
    }
  }

  void copy_chunk(const Step& st, std::uint64_t lo, std::uint64_t len, float* tmp, const CacheUse& cu) {
    const Region& sr = st.srcs.front();
    const Buf& src = bufs_[sr.buffer];
    const float* x = nullptr;   // the source's values, decoded once
    bool cached = cu.held;      // the cache holds this chunk's codes
    for (std::size_t k = 0; k < st.dsts.size(); ++k) {
      const Region& dr = st.dsts[k];
      Buf& dst = bufs_[dr.buffer];
      if (cu.rank >= 0 && cu.use[k]) {
        // The input's codes on its own block grid: quantised into the cache
        // once (the same blocks and calls as write_plain), then copied.
        const CodecSpec& c = codes_->spec;
        const auto g = static_cast<std::uint64_t>(c.block_elems);
        const auto r = static_cast<std::size_t>(cu.rank);
        std::uint8_t* cc = codes_->codes[r] + sr.offset + lo;
        float* cs = codes_->scales[r] + (sr.offset + lo) / g;
        if (!cached) {
          // An input read in place: its FP32 values, or its BF16 patterns decoded.
          if (!x) {
            if (src.vals) {
              x = src.vals + sr.offset + lo;
            } else {
              read(src, sr, lo, len, tmp);
              x = tmp;
            }
          }
          num::quantise_blocks(x, len, c, cc, cs);
          cached = true;
        }
        if (dst.in_cache) continue;   // reads the cache itself (the same offset)
        std::memcpy(dst.codes + dr.offset + lo, cc, len);
        std::memcpy(dst.scales + (dr.offset + lo) / g, cs, (len + g - 1) / g * sizeof(float));
        continue;
      }
      if (is_codec(src.format) && is_codec(dst.format) && src.codec == dst.codec) {
        // A forwarded payload: codes and scales travel unchanged.
        const auto g = static_cast<std::uint64_t>(src.codec.block_elems);
        std::memmove(dst.codes + dr.offset + lo, src.codes + sr.offset + lo, len);
        const std::uint64_t from = sr.offset + lo, to = dr.offset + lo, blocks = (len + g - 1) / g;
        if (from % g == 0 && to % g == 0 && (&src != &dst || to / g >= from / g + blocks || from / g >= to / g + blocks)) {
          // Both on the grid, not overlapping: the blocks' scales are consecutive (the same values as below).
          std::memcpy(dst.scales + to / g, src.scales + from / g, blocks * sizeof(float));
          continue;
        }
        for (std::uint64_t k = 0; k < len; k += g) dst.set_scale(to + k, src.scale_at(from + k));
        continue;
      }
      if (!is_codec(src.format) && src.format == dst.format) {
        if (src.half && dst.half) {
          std::memmove(dst.half + dr.offset + lo, src.half + sr.offset + lo, len * sizeof(std::uint16_t));
          continue;
        }
        if (src.vals && dst.vals) {
          std::memmove(dst.vals + dr.offset + lo, src.vals + sr.offset + lo, len * sizeof(float));
          continue;
        }
      }
      if (!x) {
        if (src.vals) {
          x = src.vals + sr.offset + lo;   // FP32 held (or an input read in place): no copy
        } else {
          read(src, sr, lo, len, tmp);
          x = tmp;
        }
      }
      write_plain(dst, dr.offset + lo, x, len);
    }
  }

  // tmp = +0 + elements [lo, lo+len) of region r: the first addition of a
  // running sum from +0 (fill and add in one pass; a codec is filled, then added).
  __attribute__((always_inline)) void read_first(const Buf& b, const Region& r, std::uint64_t lo, std::uint64_t len, float* tmp) const {
    const std::uint64_t first = r.offset + lo;
    if (b.vals) {
      const float* v = b.vals + first;
      for (std::uint64_t i = 0; i < len; ++i) tmp[i] = 0.0f + v[i];
      return;
    }
    if (b.half) {
      const std::uint16_t* h = b.half + first;
      if (b.format == Format::Bf16)
        for (std::uint64_t i = 0; i < len; ++i) tmp[i] = 0.0f + num::bf16_to_float(h[i]);
      else
        for (std::uint64_t i = 0; i < len; ++i) tmp[i] = 0.0f + num::fp16_to_float(h[i]);
      return;
    }
    // A codec: its decoded values, then +0 + each (the product rounded first, as
    // read_add adds it to a +0 fill: the same sums, without the fill).
    read(b, r, lo, len, tmp);
    for (std::uint64_t i = 0; i < len; ++i) tmp[i] = 0.0f + tmp[i];
  }

  // Reductions run in an AVX2 build where the CPU has it (num::kernels_use_avx2):
  // the same FP32 additions and BF16/FP16 roundings element by element, wider.
  void reduce_chunk(const Step& st, std::uint64_t lo, std::uint64_t len, float* tmp) {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    if (num::kernels_use_avx2()) {
      reduce_chunk_avx2(st, lo, len, tmp);
      return;
    }
#endif
    reduce_chunk_impl(st, lo, len, tmp);
  }
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  __attribute__((target("avx2"))) void reduce_chunk_avx2(const Step& st, std::uint64_t lo, std::uint64_t len,
                                                         float* tmp) {
    reduce_chunk_impl(st, lo, len, tmp);
  }
#endif

  __attribute__((always_inline)) void reduce_chunk_impl(const Step& st, std::uint64_t lo, std::uint64_t len, float* tmp) {
    if (st.accum == Format::Fp32) {
      // FP32 running sum: every addition is one IEEE FP32 add.
      if (st.accumulate) {
        // Each destination keeps its own running value; the sources are added to each.
        for (const Region& dr : st.dsts) {
          read(bufs_[dr.buffer], dr, lo, len, tmp);
          for (const Region& sr : st.srcs) read_add(bufs_[sr.buffer], sr, lo, len, tmp);
          write_plain(bufs_[dr.buffer], dr.offset + lo, tmp, len);
        }
        return;
      }
      float* held = sum_.on ? codes_->sums.data() + st.srcs.front().offset + lo : nullptr;
      if (held && sum_.held) {   // the same additions of the same values, done by an earlier run
        for (const Region& dr : st.dsts) write_plain(bufs_[dr.buffer], dr.offset + lo, held, len);
        return;
      }
      read_first(bufs_[st.srcs.front().buffer], st.srcs.front(), lo, len, tmp);
      for (std::size_t k = 1; k < st.srcs.size(); ++k) read_add(bufs_[st.srcs[k].buffer], st.srcs[k], lo, len, tmp);
      if (held) std::memcpy(held, tmp, len * sizeof(float));
      for (const Region& dr : st.dsts) write_plain(bufs_[dr.buffer], dr.offset + lo, tmp, len);
      return;
    }
    if (is_codec(st.accum))
      throw Error(fmt::format("data engine: step {}: accum format {} is not an arithmetic format", st.label,
                              to_string(st.accum)));
    // BF16 / FP16 running sum, rounded after every addition. The FP32 sum of
    // two 16-bit values rounded to 16 bits is the correctly rounded 16-bit sum
    // (24 >= 2p + 2 for p = 8 and p = 11 significand bits: double rounding is
    // innocuous), which is what a BF16/FP16 add instruction returns.
    const Format f = st.accum;
    float* const src = scratch(len, 1);
    auto sum_into_tmp = [&](const Region* dr) __attribute__((always_inline)) {
      if (dr) {
        read(bufs_[dr->buffer], *dr, lo, len, tmp);
        for (std::uint64_t i = 0; i < len; ++i) tmp[i] = round_plain(tmp[i], f);
      } else if (st.srcs.empty()) {
        std::fill(tmp, tmp + len, 0.0f);
      }
      // From +0 (no destination): the first source is added to +0 directly, not to a fill of tmp.
      bool from_zero = !dr;
      for (const Region& sr : st.srcs) {
        const Buf& b = bufs_[sr.buffer];
        const float* v = src;
        if (b.vals)
          v = b.vals + sr.offset + lo;   // FP32 held (or an input read in place): no copy
        else
          read(b, sr, lo, len, src);
        if (from_zero) {
          from_zero = false;
          if (f == Format::Bf16)   // the loop for one format (vectorises)
            for (std::uint64_t i = 0; i < len; ++i) tmp[i] = num::round_bf16_fast(0.0f + v[i]);
          else
            for (std::uint64_t i = 0; i < len; ++i) tmp[i] = round_plain(0.0f + v[i], f);
          continue;
        }
        if (f == Format::Bf16)
          for (std::uint64_t i = 0; i < len; ++i) tmp[i] = num::round_bf16_fast(tmp[i] + v[i]);
        else
          for (std::uint64_t i = 0; i < len; ++i) tmp[i] = round_plain(tmp[i] + v[i], f);
      }
    };
    if (st.accumulate) {
      for (const Region& dr : st.dsts) {
        sum_into_tmp(&dr);
        write_plain(bufs_[dr.buffer], dr.offset + lo, tmp, len);
      }
      return;
    }
    sum_into_tmp(nullptr);
    for (const Region& dr : st.dsts) write_plain(bufs_[dr.buffer], dr.offset + lo, tmp, len);
  }

  const Schedule& s_;
  const std::vector<BufferDecl>& decls_;
  const std::vector<Step>* steps_;   // what runs: s_.steps or their plan
  std::vector<Buf> bufs_;
  InputCodes::State* codes_ = nullptr;   // shared input codes and sums, or null
  SumUse sum_;                           // the running step's use of the shared sums
  std::vector<int> input_rank_;          // per buffer: the rank whose input it reads in place, or -1
};

}  // namespace

namespace {

DataRun run_checked(const Schedule& s, const CheckedInputs& checked, DataWorkspace& ws, const DataOptions& opt,
                    const RunContext& ctx);

}  // namespace

DataRun run_data(const Schedule& s, const std::vector<std::vector<float>>& inputs_per_rank, DataWorkspace& ws,
                 const DataOptions& opt, const RunContext& ctx) {
  std::vector<std::uint64_t> sizes;
  for (const auto& x : inputs_per_rank) sizes.push_back(x.size());
  check_run(s, sizes);
  const CheckedInputs checked(inputs_per_rank);
  return run_checked(s, checked, ws, opt, ctx);
}

DataRun run_data(const Schedule& s, const CheckedInputs& inputs, DataWorkspace& ws, const DataOptions& opt,
                 const RunContext& ctx) {
  check_run(s, inputs.sizes());
  return run_checked(s, inputs, ws, opt, ctx);
}

namespace {

DataRun run_checked(const Schedule& s, const CheckedInputs& checked, DataWorkspace& ws, const DataOptions& opt,
                    const RunContext& ctx) {
  const std::vector<InputAlias> alias = input_aliases(s, checked);
  std::vector<int> owners(s.buffers.size(), 0);
  for (BufferId id : s.input) ++owners[id];
  DataWorkspace::Storage& store = ws.storage();
  std::vector<char> same_as_rank0;   // outputs known to equal rank 0's (shared work only)
  std::vector<Step> planned = opt.share_work ? plan_steps(s, &same_as_rank0) : std::vector<Step>{};
  InputCodes::State* codes =
      opt.input_codes && opt.input_codes->state().inputs == &checked ? &opt.input_codes->state() : nullptr;
  // Codec buffers that only hold shared input codes read them from the cache (shared work only).
  const std::vector<int> cached = codes && opt.share_work ? cached_code_buffers(*codes, s, planned, alias) : std::vector<int>{};
  std::vector<BufferDecl> decls;     // with slots for short-lived regions (shared work only)
  const bool slots = opt.share_work && slot_storage(s, planned, decls, &cached, &same_as_rank0);
  const std::vector<Step>& steps = opt.share_work ? planned : s.steps;
  const std::vector<BufferDecl>& laid = slots ? decls : s.buffers;
  // Storage for what the engine lays out (not the schedule's every buffer: a
  // one-shot's gather buffers are N x N x elements, and never materialised).
  const std::vector<char> touched = touched_buffers(s, laid.size(), steps, same_as_rank0);
  std::vector<char> in_place(laid.size(), 0);   // read in place: an input (alias) or shared input codes
  for (std::size_t i = 0; i < laid.size(); ++i)
    in_place[i] = (i < alias.size() && alias[i].rank >= 0) ||
                  (is_codec(laid[i].format) && i < cached.size() && cached[i] >= 0);
  store.reserve(laid_bytes(laid, touched, &in_place));
  Engine e(s, laid, steps, opt, store.data, alias, touched, codes, cached);
  if (codes) e.share_input_codes(codes, alias);
  // Ranks' input buffers are distinct (check_schedule does not demand it, so guard).
  std::vector<int> loads;
  for (int r = 0; r < s.gpus; ++r)
    if (alias[s.input[static_cast<std::size_t>(r)]].rank < 0) {
      e.mark_input(r, s.elems);
      loads.push_back(r);
    }
  const bool distinct = std::all_of(loads.begin(), loads.end(),
                                    [&](int r) { return owners[s.input[static_cast<std::size_t>(r)]] == 1; });
  auto load = [&](int r) {
    std::vector<float> decoded;
    const float* x = input_floats(checked, r, decoded);
    e.load_input(r, x, checked.sizes()[static_cast<std::size_t>(r)]);
  };
  if (distinct)
    tbb::parallel_for(std::size_t{0}, loads.size(), [&](std::size_t k) { load(loads[k]); });
  else
    for (int r : loads) load(r);
  DataResult counts;
  for (std::size_t i = 0; i < s.steps.size(); ++i) {
    ctx.check();
    e.run_step(i, counts);
    if (ctx.progress) ctx.report(static_cast<double>(i + 1) / static_cast<double>(s.steps.size()));
  }
  DataRun run;
  run.data_steps = counts.data_steps;
  run.elements_processed = counts.elements_processed;
  store.decoded.resize(static_cast<std::size_t>(s.gpus));
  run.outputs.resize(static_cast<std::size_t>(s.gpus));
  run.bf16.resize(opt.bf16_outputs ? static_cast<std::size_t>(s.gpus) : 0);
  for (std::size_t r = 0; r < run.outputs.size(); ++r) {
    // A rank whose output storage equals rank 0's bit for bit (an All-Reduce's
    // usual result: known from the plan, else compared) shares rank 0's view.
    const bool known = r > 0 && !same_as_rank0.empty() && same_as_rank0[r];
    if (known || (r > 0 && e.same_output(0, static_cast<int>(r)))) {
      run.outputs[r] = run.outputs[0];
      if (opt.bf16_outputs) run.bf16[r] = run.bf16[0];
      continue;
    }
    run.outputs[r] = e.output(static_cast<int>(r), store.decoded[r], opt.bf16_outputs ? &run.bf16[r] : nullptr);
  }
  return run;
}

}  // namespace

}  // namespace scin
