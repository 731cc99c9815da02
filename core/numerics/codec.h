// Block codecs: symmetric max-abs block quantisation (the SCIN INQ scheme).
//
// A block of G values x shares one scale s, stored in the scale format
// (FP16/BF16/FP32, rounded to nearest even):
//   s = round_scale(max|x| / qmax),  code_i = Q(x_i / s),  x'_i = decode(code_i) * s
// INT8: qmax = 127, Q = round to nearest even, clamp to [-127, 127].
// INT4: qmax = 7,   Q = round to nearest even, clamp to [-7, 7].
// FP8 E4M3 / E5M2: qmax = 448 / 57344, Q = FP8 round-to-nearest-even, satfinite.
// A block of zeros gets s = 0. A scale that overflows its format saturates to
// the format's largest finite value. Dequantisation is one FP32 multiply, exact
// for INT8/INT4/FP8 codes times an FP16/BF16 scale.
#pragma once

#include <cstddef>
#include <cstdint>

#include "fabric/config.h"
#include "schedule/schedule.h"

namespace scin::num {

struct CodecSpec {
  Format format = Format::Int8Block;   // one of the block formats
  int block_elems = 32;
  ScaleFormat scale_format = ScaleFormat::Fp16;
  bool operator==(const CodecSpec&) const = default;
};

/// Block format of a QuantSpec's codec.
Format codec_format(Codec c);

/// Largest code magnitude of a block format (127, 7, 448, 57344).
float codec_qmax(Format f);

/// Rounds a (non-negative) scale to `f`, saturating overflow to the largest finite value.
float round_scale(float s, ScaleFormat f);

/// Quantises `n` values (n <= block_elems: one block) to codes and returns the scale.
/// Codes are int8 for INT8/INT4 and FP8 bit patterns for FP8 formats.
float quantise_block(const float* x, std::size_t n, const CodecSpec& c, std::uint8_t* codes);

/// Decodes one block: out[i] = value(codes[i]) * scale.
void dequantise_block(const std::uint8_t* codes, std::size_t n, float scale, Format f, float* out);

/// Adds one block's decoded values into acc (acc[i] += value(codes[i]) * scale), FP32.
void dequantise_add_block(const std::uint8_t* codes, std::size_t n, float scale, Format f, float* acc);

/// The same over a run of consecutive blocks of c.block_elems values (the last
/// cut at n): block k is [kG, min((k+1)G, n)) with scale scales[k]. The same
/// bits as calling the one-block kernels block by block.
void quantise_blocks(const float* x, std::size_t n, const CodecSpec& c, std::uint8_t* codes, float* scales);
void dequantise_blocks(const std::uint8_t* codes, std::size_t n, const float* scales, const CodecSpec& c, float* out);
void dequantise_add_blocks(const std::uint8_t* codes, std::size_t n, const float* scales, const CodecSpec& c,
                           float* acc);

/// Tests: run the block kernels above and the data engine's reductions in their
/// portable build even where the CPU has AVX2 (they give the same bits; default false).
void force_portable_kernels(bool on);
/// Whether those kernels run their AVX2 build now.
bool kernels_use_avx2();
/// Whether quantise_blocks runs INT8/INT4 blocks of a multiple of 16 values
/// in AVX-512 now (the CPU has it and the AVX2 build is on; the same bits).
bool int_blocks_use_avx512();

/// Quantise-then-dequantise `n` values block by block (blocks start at x[0]);
/// the result is what a receiver of the quantised payload would hold.
void fake_quantise(const float* x, std::size_t n, const CodecSpec& c, float* out);

}  // namespace scin::num
