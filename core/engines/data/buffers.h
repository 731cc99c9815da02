// The data engine's buffers as held in a workspace (internal to the data engine):
// each schedule buffer in its own format, and the storage they are laid out in.
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

#include "base/big_alloc.h"
#include "base/error.h"
#include "engines/data/coverage.h"
#include "engines/data/data_engine.h"
#include "numerics/codec.h"
#include "numerics/formats.h"

namespace scin::data_internal {

using num::CodecSpec;

// The 16-bit pattern of x rounded to BF16 or FP16.
inline std::uint16_t half_bits(float x, Format f) {
  return f == Format::Bf16 ? static_cast<std::uint16_t>(std::bit_cast<std::uint32_t>(num::round_bf16_fast(x)) >> 16)
                           : num::fp16_bits(x);
}

struct Buf {
  Format format = Format::Fp32;
  CodecSpec codec;                    // codecs only
  std::uint64_t elems = 0;
  std::uint64_t blocks = 0;           // codecs only
  float* vals = nullptr;              // FP32 values, or any plain format's values read in place from an input
  std::uint16_t* half = nullptr;      // BF16/FP16 held as their 16-bit patterns (half the memory)
  std::uint8_t* codes = nullptr;      // codecs: one code per element
  float* scales = nullptr;            // codecs: one scale per block
  Coverage elem_cov;                  // vals or codes written or filled
  Coverage scale_cov;                 // scales (by block) written or filled
  // Blocks of regions that do not start on the buffer's block grid (a slot
  // smaller than one block), keyed by their first element. Such steps run as
  // one task, so this map is never written concurrently.
  std::unordered_map<std::uint64_t, float> odd_scales;
  float fill = 0.0f;                  // value of never-written storage
  bool in_cache = false;              // codes and scales are the shared input codes' (cached_code_buffers)

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
  // Before a step reads [off, off + n): fill what was never written.
  void prepare_read(std::uint64_t off, std::uint64_t n) {
    if (!is_codec(format)) {
      elem_cov.ensure(off, off + n, [&](std::uint64_t lo, std::uint64_t hi) {
        if (half) std::fill(half + lo, half + hi, half_bits(fill, format));
        else std::fill(vals + lo, vals + hi, fill);
      });
      return;
    }
    elem_cov.ensure(off, off + n, [&](std::uint64_t lo, std::uint64_t hi) {
      if (in_cache) throw Error("data engine: a cached-code buffer read before it was written");
      std::memset(codes + lo, 0, hi - lo);
    });
    const auto g = static_cast<std::uint64_t>(codec.block_elems);
    if (off % g == 0)
      scale_cov.ensure(off / g, (off + n + g - 1) / g,
                       [&](std::uint64_t lo, std::uint64_t hi) { std::fill(scales + lo, scales + hi, fill); });
  }
  // After planning a step that writes [off, off + n) (blocks cut at off + n).
  void mark_written(std::uint64_t off, std::uint64_t n) {
    elem_cov.cover(off, off + n);
    if (!is_codec(format)) return;
    const auto g = static_cast<std::uint64_t>(codec.block_elems);
    if (off % g == 0) scale_cov.cover(off / g, (off + n + g - 1) / g);
  }
};

inline float round_plain(float x, Format f) {
  switch (f) {
    case Format::Bf16: return num::round_bf16_fast(x);   // round_bf16's bits, branch-free
    case Format::Fp16: return num::round_fp16(x);
    default: return x;
  }
}

constexpr std::uint64_t kAlignBytes = 64;
inline std::uint64_t align_up(std::uint64_t n) { return (n + kAlignBytes - 1) / kAlignBytes * kAlignBytes; }

inline std::uint64_t codec_blocks(const BufferDecl& d) {
  const auto g = static_cast<std::uint64_t>(std::max(d.block_elems, 1));
  return (d.elems + g - 1) / g;
}

// Bytes of workspace storage buffer `d` takes.
inline std::uint64_t storage_bytes(const BufferDecl& d) {
  if (is_codec(d.format)) return align_up(d.elems) + align_up(codec_blocks(d) * sizeof(float));
  if (d.format == Format::Bf16 || d.format == Format::Fp16) return align_up(d.elems * sizeof(std::uint16_t));
  return align_up(d.elems * sizeof(float));
}

}  // namespace scin::data_internal

namespace scin {

struct DataWorkspace::Storage {
  std::byte* data = nullptr;
  std::uint64_t capacity = 0;
  std::vector<BigVector<float>> decoded;   // outputs decoded to floats (not held as FP32)

  ~Storage() { big_free(data, capacity); }   // kept for the next study's workspace
  void reserve(std::uint64_t bytes) {
    if (bytes <= capacity) return;
    std::free(data);   // not kept, and before the new block: the peak is the larger one alone
    data = nullptr;
    capacity = 0;
    const std::uint64_t n = (bytes + data_internal::kAlignBytes - 1) / data_internal::kAlignBytes * data_internal::kAlignBytes;
    data = static_cast<std::byte*>(big_alloc(n));   // 64-byte aligned; huge pages from 2 MiB
    if (!data) throw Error(fmt::format("data engine: cannot allocate {} MiB of buffers", n >> 20));
    capacity = n;
  }
};

}  // namespace scin
