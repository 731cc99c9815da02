#include "engines/data/data_engine.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <numeric>
#include <unordered_map>

#include <fmt/format.h>
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include "base/error.h"
#include "numerics/codec.h"
#include "numerics/formats.h"

namespace scin {

namespace {

using num::CodecSpec;

struct Buf {
  Format format = Format::Fp32;
  CodecSpec codec;                    // codecs only
  std::vector<float> vals;            // plain formats
  std::vector<std::uint8_t> codes;    // codecs: one code per element
  std::vector<float> scales;          // codecs: one scale per block
  // Blocks of regions that do not start on the buffer's block grid (a slot
  // smaller than one block), keyed by their first element. Such steps run as
  // one task, so this map is never written concurrently.
  std::unordered_map<std::uint64_t, float> odd_scales;
  float fill = 0.0f;                  // value of never-written storage

  float scale_at(std::uint64_t first) const {
    const auto g = static_cast<std::uint64_t>(codec.block_elems);
    if (first % g == 0) return scales[first / g];
    auto it = odd_scales.find(first);
    return it == odd_scales.end() ? fill : it->second;
  }
  void set_scale(std::uint64_t first, float s) {
    const auto g = static_cast<std::uint64_t>(codec.block_elems);
    if (first % g == 0) scales[first / g] = s;
    else odd_scales[first] = s;
  }
};

inline float round_plain(float x, Format f) {
  switch (f) {
    case Format::Bf16: return num::round_bf16(x);
    case Format::Fp16: return num::round_fp16(x);
    default: return x;
  }
}

// Target chunk of elements per task; rounded to a multiple of every block size in a step.
constexpr std::uint64_t kChunkElems = 16384;

class Engine {
 public:
  Engine(const Schedule& s, const DataOptions& opt) : s_(s) {
    bufs_.resize(s.buffers.size());
    const float fill = opt.poison_unwritten ? std::numeric_limits<float>::quiet_NaN() : 0.0f;
    for (const BufferDecl& d : s.buffers)
      if (is_codec(d.format) && d.block_elems < 1)
        throw Error(fmt::format("data engine: buffer {} ({}) has block_elems {}; must be >= 1", d.name,
                                to_string(d.format), d.block_elems));
    // Allocating and filling the buffers is a large share of a run: one task per buffer.
    tbb::parallel_for(std::size_t{0}, s.buffers.size(), [&](std::size_t i) {
      const BufferDecl& d = s.buffers[i];
      Buf& b = bufs_[i];
      b.format = d.format;
      b.fill = fill;
      if (is_codec(d.format)) {
        b.codec = CodecSpec{d.format, d.block_elems, d.scale_format};
        const std::uint64_t g = static_cast<std::uint64_t>(d.block_elems);
        b.codes.assign(d.elems, 0);
        b.scales.assign((d.elems + g - 1) / g, fill);
      } else {
        b.vals.assign(d.elems, fill);
      }
    });
  }

  void load_input(int rank, const std::vector<float>& x) {
    const BufferId id = s_.input.at(static_cast<std::size_t>(rank));
    Buf& b = bufs_.at(id);
    if (s_.buffers[id].elems < x.size())
      throw Error(fmt::format("data engine: input buffer of rank {} holds {} elements, input has {}", rank,
                              s_.buffers[id].elems, x.size()));
    write_plain(b, 0, x.data(), x.size());
  }

  std::vector<float> read_output(int rank) const {
    const BufferId id = s_.output.at(static_cast<std::size_t>(rank));
    std::vector<float> out(s_.elems);
    read(bufs_.at(id), Region{id, 0, s_.elems}, 0, s_.elems, out.data());
    return out;
  }

  void run_step(std::size_t index, DataResult& res) {
    const Step& st = s_.steps[index];
    if (st.op == DataOp::None) return;
    const std::uint64_t n = st.srcs.front().count;
    if (n == 0) return;
    // Chunks are a multiple of every codec block size of the step. Blocks of a
    // codec region start at the region's offset. A region off the
    // buffer's block grid (schedule.h asks algorithms to avoid them; they arise
    // from slots of a size that is not a whole number of blocks) keeps its
    // scales in a map keyed by block start, so such a step runs as one task.
    std::uint64_t align = 1;
    bool serial = false;
    auto visit = [&](const Region& r) {
      const BufferDecl& d = s_.buffers[r.buffer];
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
    const std::uint64_t chunks = (n + chunk - 1) / chunk;
    tbb::parallel_for(tbb::blocked_range<std::uint64_t>(0, chunks), [&](const tbb::blocked_range<std::uint64_t>& rg) {
      std::vector<float> tmp(chunk);
      for (std::uint64_t c = rg.begin(); c != rg.end(); ++c) {
        const std::uint64_t lo = c * chunk;
        const std::uint64_t len = std::min(chunk, n - lo);
        if (st.op == DataOp::Copy)
          copy_chunk(st, lo, len, tmp.data());
        else
          reduce_chunk(st, lo, len, tmp.data());
      }
    });
    ++res.data_steps;
    res.elements_processed += n * (st.srcs.size() + st.dsts.size());
  }

 private:
  // Decodes elements [lo, lo+len) of region r into out.
  void read(const Buf& b, const Region& r, std::uint64_t lo, std::uint64_t len, float* out) const {
    const std::uint64_t first = r.offset + lo;
    if (!is_codec(b.format)) {
      std::memcpy(out, b.vals.data() + first, len * sizeof(float));
      return;
    }
    const auto g = static_cast<std::uint64_t>(b.codec.block_elems);
    for (std::uint64_t k = 0; k < len; k += g) {
      const std::uint64_t m = std::min(g, len - k);
      num::dequantise_block(b.codes.data() + first + k, m, b.scale_at(first + k), b.format, out + k);
    }
  }

  // Adds elements [lo, lo+len) of region r into acc in FP32.
  void read_add(const Buf& b, const Region& r, std::uint64_t lo, std::uint64_t len, float* acc) const {
    const std::uint64_t first = r.offset + lo;
    if (!is_codec(b.format)) {
      const float* v = b.vals.data() + first;
      for (std::uint64_t i = 0; i < len; ++i) acc[i] += v[i];
      return;
    }
    const auto g = static_cast<std::uint64_t>(b.codec.block_elems);
    for (std::uint64_t k = 0; k < len; k += g) {
      const std::uint64_t m = std::min(g, len - k);
      num::dequantise_add_block(b.codes.data() + first + k, m, b.scale_at(first + k), b.format, acc + k);
    }
  }

  // Stores len values (FP32) at element `first` of b, converting to b's format.
  // For codecs `first` is block aligned; blocks are cut at first + len.
  static void write_plain(Buf& b, std::uint64_t first, const float* x, std::uint64_t len) {
    if (!is_codec(b.format)) {
      float* v = b.vals.data() + first;
      switch (b.format) {
        case Format::Bf16:
          for (std::uint64_t i = 0; i < len; ++i) v[i] = num::round_bf16_fast(x[i]);
          break;
        case Format::Fp16:
          for (std::uint64_t i = 0; i < len; ++i) v[i] = num::round_fp16(x[i]);
          break;
        default:
          std::memcpy(v, x, len * sizeof(float));
      }
      return;
    }
    const auto g = static_cast<std::uint64_t>(b.codec.block_elems);
    for (std::uint64_t k = 0; k < len; k += g) {
      const std::uint64_t m = std::min(g, len - k);
      b.set_scale(first + k, num::quantise_block(x + k, m, b.codec, b.codes.data() + first + k));
    }
  }

  void copy_chunk(const Step& st, std::uint64_t lo, std::uint64_t len, float* tmp) {
    const Region& sr = st.srcs.front();
    const Buf& src = bufs_[sr.buffer];
    bool decoded = false;
    for (const Region& dr : st.dsts) {
      Buf& dst = bufs_[dr.buffer];
      if (is_codec(src.format) && is_codec(dst.format) && src.codec == dst.codec) {
        // A forwarded payload: codes and scales travel unchanged.
        const auto g = static_cast<std::uint64_t>(src.codec.block_elems);
        std::memmove(dst.codes.data() + dr.offset + lo, src.codes.data() + sr.offset + lo, len);
        for (std::uint64_t k = 0; k < len; k += g)
          dst.set_scale(dr.offset + lo + k, src.scale_at(sr.offset + lo + k));
        continue;
      }
      if (!is_codec(src.format) && src.format == dst.format) {
        std::memmove(dst.vals.data() + dr.offset + lo, src.vals.data() + sr.offset + lo, len * sizeof(float));
        continue;
      }
      if (!decoded) {
        read(src, sr, lo, len, tmp);
        decoded = true;
      }
      write_plain(dst, dr.offset + lo, tmp, len);
    }
  }

  void reduce_chunk(const Step& st, std::uint64_t lo, std::uint64_t len, float* tmp) {
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
      std::fill(tmp, tmp + len, 0.0f);
      for (const Region& sr : st.srcs) read_add(bufs_[sr.buffer], sr, lo, len, tmp);
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
    std::vector<float> src(len);
    auto sum_into_tmp = [&](const Region* dr) {
      if (dr) {
        read(bufs_[dr->buffer], *dr, lo, len, tmp);
        for (std::uint64_t i = 0; i < len; ++i) tmp[i] = round_plain(tmp[i], f);
      } else {
        std::fill(tmp, tmp + len, 0.0f);
      }
      for (const Region& sr : st.srcs) {
        read(bufs_[sr.buffer], sr, lo, len, src.data());
        for (std::uint64_t i = 0; i < len; ++i) tmp[i] = round_plain(tmp[i] + src[i], f);
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
  std::vector<Buf> bufs_;
};

}  // namespace

void round_to_format(std::vector<float>& v, Format f) {
  if (is_codec(f)) throw Error(fmt::format("round_to_format: {} is not an element format", to_string(f)));
  for (float& x : v) x = round_plain(x, f);
}

DataResult run_data(const Schedule& s, const std::vector<std::vector<float>>& inputs_per_rank,
                    const DataOptions& opt, const RunContext& ctx) {
  check_schedule(s);
  if (inputs_per_rank.size() != static_cast<std::size_t>(s.gpus))
    throw Error(fmt::format("data engine: {} input arrays for {} ranks", inputs_per_rank.size(), s.gpus));
  if (s.input.size() != static_cast<std::size_t>(s.gpus) || s.output.size() != static_cast<std::size_t>(s.gpus))
    throw Error(fmt::format("data engine: schedule {} declares {} inputs and {} outputs for {} ranks", s.algorithm,
                            s.input.size(), s.output.size(), s.gpus));
  for (int r = 0; r < s.gpus; ++r) {
    const auto& x = inputs_per_rank[static_cast<std::size_t>(r)];
    if (x.size() != s.elems)
      throw Error(fmt::format("data engine: rank {} input has {} elements; the schedule has {} per rank", r,
                              x.size(), s.elems));
    if (s.buffers.at(s.output[static_cast<std::size_t>(r)]).elems < s.elems)
      throw Error(fmt::format("data engine: output buffer of rank {} is smaller than {} elements", r, s.elems));
  }
  // First non-finite input per rank (checked in parallel, reported deterministically).
  std::vector<std::size_t> bad(static_cast<std::size_t>(s.gpus), SIZE_MAX);
  tbb::parallel_for(0, s.gpus, [&](int r) {
    const auto& x = inputs_per_rank[static_cast<std::size_t>(r)];
    for (std::size_t i = 0; i < x.size(); ++i)
      if (!std::isfinite(x[i])) {
        bad[static_cast<std::size_t>(r)] = i;
        break;
      }
  });
  for (int r = 0; r < s.gpus; ++r)
    if (const std::size_t i = bad[static_cast<std::size_t>(r)]; i != SIZE_MAX)
      throw Error(fmt::format("data engine: rank {} input element {} is not finite ({})", r, i,
                              inputs_per_rank[static_cast<std::size_t>(r)][i]));
  Engine e(s, opt);
  // Ranks' input buffers are distinct (check_schedule does not demand it, so guard).
  std::vector<BufferId> ins(s.input);
  std::sort(ins.begin(), ins.end());
  const bool distinct = std::adjacent_find(ins.begin(), ins.end()) == ins.end();
  if (distinct)
    tbb::parallel_for(0, s.gpus, [&](int r) { e.load_input(r, inputs_per_rank[static_cast<std::size_t>(r)]); });
  else
    for (int r = 0; r < s.gpus; ++r) e.load_input(r, inputs_per_rank[static_cast<std::size_t>(r)]);
  DataResult res;
  for (std::size_t i = 0; i < s.steps.size(); ++i) {
    ctx.check();
    e.run_step(i, res);
    if (ctx.progress) ctx.report(static_cast<double>(i + 1) / static_cast<double>(s.steps.size()));
  }
  res.outputs.resize(static_cast<std::size_t>(s.gpus));
  tbb::parallel_for(0, s.gpus, [&](int r) { res.outputs[static_cast<std::size_t>(r)] = e.read_output(r); });
  return res;
}

}  // namespace scin
