#include "numerics/inputs.h"

#include "base/run_context.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cctype>
#include <cmath>
#include <limits>
#include <cstring>
#include <fstream>
#include <numbers>

#include <fmt/format.h>
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include "base/error.h"
#include "base/json_input.h"
#include "numerics/formats.h"
#include "engines/data/data_engine.h"

#if defined(__x86_64__) && defined(__GLIBC__)
#include <immintrin.h>
// glibc's vector math library (libmvec, linked through libm), two doubles per
// call (SSE ABI; it picks its own implementation for the CPU). Documented
// accuracy: a few ulps; the generator below only trusts it to 2^-32.
extern "C" __m128d _ZGVbN2v_log(__m128d);
extern "C" __m128d _ZGVbN2v_cos(__m128d);
// The AVX2 variants, four doubles per call (called only from AVX2 code, when the CPU has it).
extern "C" __m256d _ZGVdN4v_log(__m256d);
extern "C" __m256d _ZGVdN4v_cos(__m256d);
// The AVX-512 variants, eight doubles per call (called only from AVX-512 code, when the CPU has it).
extern "C" __m512d _ZGVeN8v_log(__m512d);
extern "C" __m512d _ZGVeN8v_cos(__m512d);
#define SCIN_HAVE_LIBMVEC 1
#endif

namespace scin {

namespace {

enum class Fn { Log, Cos };

// out[k] ~ log(in[k]) or cos(in[k]), k < n: a few ulps from std::log / std::cos.
template <Fn F>
void fast_batch(const double* in, double* out, std::uint64_t n) {
  std::uint64_t k = 0;
#ifdef SCIN_HAVE_LIBMVEC
  for (; k + 2 <= n; k += 2) {
    const __m128d x = _mm_loadu_pd(in + k);
    _mm_storeu_pd(out + k, F == Fn::Log ? _ZGVbN2v_log(x) : _ZGVbN2v_cos(x));
  }
#endif
  for (; k < n; ++k) out[k] = F == Fn::Log ? std::log(in[k]) : std::cos(in[k]);
}

#ifdef SCIN_HAVE_LIBMVEC
// The same with the AVX2 variants, four per call (AVX2 code: only run when the CPU has it).
template <Fn F>
__attribute__((target("avx2"))) void fast_batch_avx2(const double* in, double* out, std::uint64_t n) {
  std::uint64_t k = 0;
  for (; k + 4 <= n; k += 4) {
    const __m256d x = _mm256_loadu_pd(in + k);
    _mm256_storeu_pd(out + k, F == Fn::Log ? _ZGVdN4v_log(x) : _ZGVdN4v_cos(x));
  }
  for (; k < n; ++k) out[k] = F == Fn::Log ? std::log(in[k]) : std::cos(in[k]);
}
// The same with the AVX-512 variants, eight per call (AVX-512 code: only run when the CPU has it).
template <Fn F>
__attribute__((target("avx512f,avx512dq,avx512vl"))) void fast_batch_avx512(const double* in, double* out, std::uint64_t n) {
  std::uint64_t k = 0;
  for (; k + 8 <= n; k += 8) {
    const __m512d x = _mm512_loadu_pd(in + k);
    _mm512_storeu_pd(out + k, F == Fn::Log ? _ZGVeN8v_log(x) : _ZGVeN8v_cos(x));
  }
  for (; k < n; ++k) out[k] = F == Fn::Log ? std::log(in[k]) : std::cos(in[k]);
}
#endif

// out[k] = std::sqrt(in[k]), k < n, in vector instructions: IEEE square roots
// are correctly rounded, so the same bits (std::sqrt's errno path for a
// negative argument keeps the compiler from vectorising it; none is negative here).
inline void sqrt_batch(const double* in, double* out, std::uint64_t n) {
  std::uint64_t k = 0;
#ifdef SCIN_HAVE_LIBMVEC
  for (; k + 2 <= n; k += 2) _mm_storeu_pd(out + k, _mm_sqrt_pd(_mm_loadu_pd(in + k)));
#endif
  for (; k < n; ++k) out[k] = std::sqrt(in[k]);
}
#ifdef SCIN_HAVE_LIBMVEC
__attribute__((target("avx2"))) void sqrt_batch_avx2(const double* in, double* out, std::uint64_t n) {
  std::uint64_t k = 0;
  for (; k + 4 <= n; k += 4) _mm256_storeu_pd(out + k, _mm256_sqrt_pd(_mm256_loadu_pd(in + k)));
  sqrt_batch(in + k, out + k, n - k);
}
__attribute__((target("avx512f,avx512dq,avx512vl"))) void sqrt_batch_avx512(const double* in, double* out, std::uint64_t n) {
  std::uint64_t k = 0;
  for (; k + 8 <= n; k += 8) {
    const __m512d x = _mm512_loadu_pd(in + k);
    _mm512_storeu_pd(out + k, _mm512_mask_sqrt_pd(x, 0xff, x));   // all lanes (not _mm512_sqrt_pd: GCC 12 warns)
  }
  sqrt_batch(in + k, out + k, n - k);
}
#endif

// Instruction sets of the generator's batches: 0 portable, 1 AVX2, 2 AVX-512.
template <Fn F, int Isa>
[[gnu::always_inline]] inline void fast_batch_for(const double* in, double* out, std::uint64_t n) {
#ifdef SCIN_HAVE_LIBMVEC
  if constexpr (Isa == 2) {
    fast_batch_avx512<F>(in, out, n);
    return;
  }
  if constexpr (Isa == 1) {
    fast_batch_avx2<F>(in, out, n);
    return;
  }
#endif
  fast_batch<F>(in, out, n);
}

template <int Isa>
[[gnu::always_inline]] inline void sqrt_batch_for(const double* in, double* out, std::uint64_t n) {
#ifdef SCIN_HAVE_LIBMVEC
  if constexpr (Isa == 2) {
    sqrt_batch_avx512(in, out, n);
    return;
  }
  if constexpr (Isa == 1) {
    sqrt_batch_avx2(in, out, n);
    return;
  }
#endif
  sqrt_batch(in, out, n);
}

inline std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

inline std::uint64_t counter_hash(std::uint64_t seed, std::uint64_t stream, std::uint64_t index) {
  return splitmix64(splitmix64(splitmix64(seed) ^ stream) ^ index);
}

// static_cast<double>(x) for x < 2^32, the same value, in integer and
// floating-point operations that vectorise (2^52 + x is exact in a double).
inline double u32_to_double(std::uint64_t x) { return std::bit_cast<double>(0x4330000000000000ull | x) - 0x1p52; }

// Uniform in (0, 1] from the top 53 bits.
inline double unit_open0(std::uint64_t h) { return (static_cast<double>(h >> 11) + 1.0) * 0x1p-53; }

void check_spec(const InputSpec& spec) {
  if (!(spec.stddev > 0) || !std::isfinite(spec.stddev))
    throw Error(fmt::format("input stddev: {} must be > 0 and finite", spec.stddev));
  if (!(spec.outlier_fraction >= 0 && spec.outlier_fraction <= 1))
    throw Error(fmt::format("--outlier-fraction: {} is outside [0, 1]", spec.outlier_fraction));
  if (!(spec.outlier_scale >= 1 && spec.outlier_scale <= 1e6))
    throw Error(fmt::format("--outlier-scale: {} is outside [1, 1e6]", spec.outlier_scale));
  if (spec.channels < 1 || spec.channels > (1ull << 24))
    throw Error(fmt::format("channels: {} is outside [1, 16777216]", spec.channels));
}

}  // namespace

std::vector<std::uint64_t> outlier_channels(const InputSpec& spec) {
  check_spec(spec);
  const auto k = static_cast<std::uint64_t>(std::llround(spec.outlier_fraction * static_cast<double>(spec.channels)));
  // Partial Fisher-Yates over channel indices, driven by the seed alone.
  std::vector<std::uint64_t> idx(spec.channels);
  for (std::uint64_t i = 0; i < spec.channels; ++i) idx[i] = i;
  for (std::uint64_t i = 0; i < k; ++i) {
    const std::uint64_t j = i + counter_hash(spec.seed, 0x0ull - 1, i) % (spec.channels - i);
    std::swap(idx[i], idx[j]);
  }
  idx.resize(k);
  std::sort(idx.begin(), idx.end());
  return idx;
}


// One batch of generated values: the same formulas with vector log/cos
// (fast_batch; a few ulps from the scalar ones). A value within 2^-32
// (relative) of a float rounding boundary is recomputed with the scalar
// functions (`exact`), so every float is the one the defining formulas give.
template <class Exact>
struct Batcher {
  static constexpr std::uint64_t kBatch = 256;
  double sigma, two_pi, laplace_b;
  bool laplace;
  const char* is_outlier;   // null: no outlier channels
  std::uint64_t channels;
  double outlier_scale;
  const Exact& exact;

  template <int Isa>
  [[gnu::always_inline]] inline void run(std::uint64_t key, std::uint64_t lo, std::uint64_t n, float* x) const {
    double arg[kBatch], lg[kBatch], cs[kBatch];
    std::uint64_t hs[kBatch];
    for (std::uint64_t k = 0; k < n; ++k) hs[k] = splitmix64(key ^ (lo + k));
    if (laplace) {
      for (std::uint64_t k = 0; k < n; ++k) {
        const double u = unit_open0(hs[k]) - 0.5;
        arg[k] = std::max(1.0 - 2.0 * std::fabs(u), 0x1p-53);
      }
      fast_batch_for<Fn::Log, Isa>(arg, lg, n);
      for (std::uint64_t k = 0; k < n; ++k) {
        const double u = unit_open0(hs[k]) - 0.5;
        cs[k] = -laplace_b * std::copysign(lg[k], u);
      }
    } else {
      for (std::uint64_t k = 0; k < n; ++k) arg[k] = (u32_to_double(hs[k] >> 32) + 1.0) * 0x1p-32;
      fast_batch_for<Fn::Log, Isa>(arg, lg, n);
      for (std::uint64_t k = 0; k < n; ++k) arg[k] = two_pi * (u32_to_double(hs[k] & 0xffffffffull) * 0x1p-32);
      fast_batch_for<Fn::Cos, Isa>(arg, cs, n);
      for (std::uint64_t k = 0; k < n; ++k) arg[k] = -2.0 * lg[k];
      sqrt_batch_for<Isa>(arg, lg, n);   // lg[k] = std::sqrt(-2 log u1), the same bits
      for (std::uint64_t k = 0; k < n; ++k) {
        double v = sigma * lg[k] * cs[k];
        if (is_outlier && is_outlier[(lo + k) % channels]) v *= outlier_scale;
        cs[k] = v;
      }
    }
    // Zero, NaN or infinity (the tests fail) or too close to a boundary: the
    // scalar formula decides. (Branch-free first pass, so that it vectorises.)
    unsigned char unsure[kBatch];
    unsigned any = 0;
    for (std::uint64_t k = 0; k < n; ++k) {
      const double v = cs[k];
      const double m = std::fabs(v) * 0x1p-32;
      const float f = static_cast<float>(v);
      const bool sure = (m > 0) & (static_cast<float>(v - m) == f) & (static_cast<float>(v + m) == f);
      x[lo + k] = f;
      unsure[k] = !sure;
      any |= !sure;
    }
    for (std::uint64_t k = 0; any && k < n; ++k)
      if (unsure[k]) x[lo + k] = exact(hs[k], lo + k);
  }
};

#ifdef SCIN_HAVE_LIBMVEC
// The batch with AVX2 code and libmvec's 4-wide log/cos (chosen at run time;
// no FMA: the arithmetic is the default build's, operation for operation).
template <class B>
__attribute__((target("avx2"))) void batch_avx2(const B& gen, std::uint64_t key, std::uint64_t lo, std::uint64_t n,
                                                float* x) {
  gen.template run<1>(key, lo, n, x);
}
// The batch with AVX-512 code (64-bit multiplies for the hash) and libmvec's
// 8-wide log/cos. AVX-512F has fused multiply-adds; where the compiler may
// contract a product and a sum here, the product is exact (a power-of-two
// scaling: 2|u|, |v| 2^-32, the 2^-53 of a 53-bit integer), so the sums are
// the default build's; and every float is still checked against the 2^-32
// margin, the scalar formula deciding within it.
template <class B>
__attribute__((target("avx512f,avx512dq,avx512vl"))) void batch_avx512(const B& gen, std::uint64_t key,
                                                                        std::uint64_t lo, std::uint64_t n, float* x) {
  gen.template run<2>(key, lo, n, x);
}

static std::atomic<int> g_forced_isa{-1};   // force_generator_isa: -1 = the CPU's best
static int best_isa() {
  static const int best = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
                                  __builtin_cpu_supports("avx512vl") ? 2 : __builtin_cpu_supports("avx2") ? 1 : 0;
  return best;
}
#endif

std::vector<std::vector<float>> generate_inputs(const InputSpec& spec, int ranks, std::uint64_t elems,
                                                const RunContext* ctx) {
  check_spec(spec);
  if (ranks < 1) throw Error(fmt::format("ranks: {} must be >= 1", ranks));
  std::vector<char> is_outlier;
  if (spec.dist == Distribution::Outliers) {
    is_outlier.assign(spec.channels, 0);
    for (auto c : outlier_channels(spec)) is_outlier[c] = 1;
  }
  // Each rank's array zero-filled in place (not copied from a zeroed template:
  // half the memory traffic), then generated.
  std::vector<std::vector<float>> out(static_cast<std::size_t>(ranks));
  for (auto& v : out) v.resize(elems);
  const double sigma = spec.stddev;
  const double two_pi = 2.0 * std::numbers::pi;
  const double laplace_b = sigma / std::numbers::sqrt2;
  const bool laplace = spec.dist == Distribution::Laplace;
  // The defining formulas, with the C library's scalar log and cos.
  auto exact_value = [&](std::uint64_t h, std::uint64_t i) {
    double v;
    if (laplace) {
      const double u = unit_open0(h) - 0.5;   // (-0.5, 0.5]
      const double a = std::max(1.0 - 2.0 * std::fabs(u), 0x1p-53);
      v = -laplace_b * std::copysign(std::log(a), u);
    } else {
      // Box-Muller from two 32-bit halves.
      const double u1 = (static_cast<double>(h >> 32) + 1.0) * 0x1p-32;          // (0, 1]
      const double u2 = static_cast<double>(h & 0xffffffffull) * 0x1p-32;        // [0, 1)
      v = sigma * std::sqrt(-2.0 * std::log(u1)) * std::cos(two_pi * u2);
      if (!is_outlier.empty() && is_outlier[i % spec.channels]) v *= spec.outlier_scale;
    }
    return static_cast<float>(v);
  };
  Batcher<decltype(exact_value)> gen{sigma, two_pi, laplace_b, laplace, is_outlier.empty() ? nullptr : is_outlier.data(), spec.channels,
              spec.outlier_scale, exact_value};
#ifdef SCIN_HAVE_LIBMVEC
  const int forced = g_forced_isa.load(std::memory_order_relaxed);
  const int isa = forced >= 0 ? std::min(forced, best_isa()) : best_isa();
#else
  constexpr int isa = 0;
#endif
  for (int r = 0; r < ranks; ++r) {
    if (ctx) ctx->check();
    float* x = out[static_cast<std::size_t>(r)].data();
    const std::uint64_t key = splitmix64(splitmix64(spec.seed) ^ (static_cast<std::uint64_t>(r) + 1));
    tbb::parallel_for(tbb::blocked_range<std::uint64_t>(0, elems, 8192), [&](const tbb::blocked_range<std::uint64_t>& rg) {
      for (std::uint64_t lo = rg.begin(); lo < rg.end(); lo += decltype(gen)::kBatch) {
        const std::uint64_t n = std::min(decltype(gen)::kBatch, rg.end() - lo);
#ifdef SCIN_HAVE_LIBMVEC
        if (isa == 2) {
          batch_avx512(gen, key, lo, n, x);
          continue;
        }
        if (isa == 1) {
          batch_avx2(gen, key, lo, n, x);
          continue;
        }
#endif
        gen.run<0>(key, lo, n, x);
      }
    });
  }
  return out;
}

int force_generator_isa(int isa) {
#ifdef SCIN_HAVE_LIBMVEC
  g_forced_isa.store(isa, std::memory_order_relaxed);
  return isa < 0 ? best_isa() : std::min(isa, best_isa());
#else
  (void)isa;
  return 0;
#endif
}

// ---------------------------------------------------------------- .npy

namespace {

// The .npy header is a Python dict literal: {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }.
// It is rewritten to JSON (quotes, tuples, booleans, trailing commas) and read by
// the one JSON reader, so its nesting and values are checked like any document.
nlohmann::json header_as_json(const std::string& header, const std::string& path) {
  std::string j;
  j.reserve(header.size() + 16);
  for (std::size_t i = 0; i < header.size(); ++i) {
    const char c = header[i];
    if (c == '\'' || c == '"') {   // a Python string literal
      std::size_t end = header.find(c, i + 1);
      if (end == std::string::npos) throw Error(fmt::format("{}: .npy header has an unterminated string", path));
      j += '"';
      for (std::size_t k = i + 1; k < end; ++k) {
        if (header[k] == '"' || header[k] == '\\') j += '\\';
        j += header[k];
      }
      j += '"';
      i = end;
    } else if (c == '(') {
      j += '[';
    } else if (c == ')' || c == ']' || c == '}') {
      while (!j.empty() && (j.back() == ' ' || j.back() == ',')) j.pop_back();   // trailing comma
      j += c == ')' ? ']' : c;
    } else if (header.compare(i, 4, "True") == 0) {
      j += "true";
      i += 3;
    } else if (header.compare(i, 5, "False") == 0) {
      j += "false";
      i += 4;
    } else if (header.compare(i, 4, "None") == 0) {
      j += "null";
      i += 3;
    } else {
      j += c;
    }
  }
  nlohmann::json h = parse_json_text(j, path + ": .npy header", {false, 8});
  if (!h.is_object()) throw Error(fmt::format("{}: .npy header is not a dictionary", path));
  return h;
}

const nlohmann::json& header_entry(const nlohmann::json& h, const char* key, const std::string& path) {
  auto it = h.find(key);
  if (it == h.end()) throw Error(fmt::format("{}: .npy header has no '{}' entry", path, key));
  return *it;
}

}  // namespace

NpyArray read_npy(const std::string& path, std::uint64_t max_elements) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(fmt::format("{}: cannot open .npy file", path));
  unsigned char pre[10];
  in.read(reinterpret_cast<char*>(pre), 8);
  if (in.gcount() != 8 || std::memcmp(pre, "\x93NUMPY", 6) != 0)
    throw Error(fmt::format("{}: not a .npy file (bad magic; expected \\x93NUMPY)", path));
  const int major = pre[6];
  std::uint64_t hlen = 0;
  if (major == 1) {
    in.read(reinterpret_cast<char*>(pre), 2);
    if (in.gcount() != 2) throw Error(fmt::format("{}: .npy header is truncated", path));
    hlen = pre[0] | (static_cast<std::uint64_t>(pre[1]) << 8);
  } else if (major == 2 || major == 3) {
    in.read(reinterpret_cast<char*>(pre), 4);
    if (in.gcount() != 4) throw Error(fmt::format("{}: .npy header is truncated", path));
    hlen = pre[0] | (static_cast<std::uint64_t>(pre[1]) << 8) | (static_cast<std::uint64_t>(pre[2]) << 16) |
           (static_cast<std::uint64_t>(pre[3]) << 24);
  } else {
    throw Error(fmt::format("{}: .npy format version {} is not supported (1, 2 or 3)", path, major));
  }
  if (hlen > (1u << 20)) throw Error(fmt::format("{}: .npy header length {} is implausible", path, hlen));
  std::string header(hlen, '\0');
  in.read(header.data(), static_cast<std::streamsize>(hlen));
  if (static_cast<std::uint64_t>(in.gcount()) != hlen) throw Error(fmt::format("{}: .npy header is truncated", path));
  if (header.find('{') == std::string::npos || header.find('}') == std::string::npos)
    throw Error(fmt::format("{}: .npy header is not a dictionary", path));

  NpyArray a;
  const nlohmann::json h = header_as_json(header, path);
  a.descr = json_string(header_entry(h, "descr", path), path + ": .npy descr");
  if (json_bool(header_entry(h, "fortran_order", path), path + ": .npy fortran_order"))
    throw Error(fmt::format("{}: Fortran-order arrays are not supported; save in C order", path));
  const nlohmann::json& dims = header_entry(h, "shape", path);
  if (!dims.is_array()) throw Error(fmt::format("{}: .npy shape must be a tuple of integers", path));
  std::uint64_t count = 1;
  std::string shape;
  for (const auto& d : dims) {
    const std::uint64_t n = json_uint(d, path + ": .npy shape", 0, 1ull << 40);
    a.shape.push_back(n);
    shape += (shape.empty() ? "" : ", ") + std::to_string(n);
    if (n != 0 && count > (1ull << 40) / n) throw Error(fmt::format("{}: .npy shape ({}) is too large", path, shape));
    count *= n;
  }
  if (count > max_elements)
    throw Error(fmt::format("{}: shape ({}) holds {} elements; at most {} are accepted", path, shape, count,
                            max_elements));
  int elem_bytes;
  std::string kind = a.descr;
  if (kind.size() == 3 && (kind[0] == '>' )) {
    throw Error(fmt::format("{}: big-endian dtype '{}' is not supported; use little-endian", path, a.descr));
  }
  if (kind.size() == 3 && (kind[0] == '<' || kind[0] == '|' || kind[0] == '=')) kind = kind.substr(1);
  if (kind == "f2" || kind == "u2" || kind == "V2") elem_bytes = 2;
  else if (kind == "f4") elem_bytes = 4;
  else if (kind == "f8") elem_bytes = 8;
  else
    throw Error(fmt::format("{}: dtype '{}' is not supported; use float16 '<f2', float32 '<f4', float64 '<f8' or "
                            "bfloat16 as uint16 '<u2'", path, a.descr));
  const std::uint64_t need = count * static_cast<std::uint64_t>(elem_bytes);
  const auto data_pos = in.tellg();
  in.seekg(0, std::ios::end);
  const auto avail = static_cast<std::uint64_t>(in.tellg() - data_pos);
  in.seekg(data_pos);
  if (avail < need)
    throw Error(fmt::format("{}: data is truncated: shape ({}) of '{}' needs {} bytes, file has {}", path, shape,
                            a.descr, need, avail));
  std::vector<unsigned char> raw(need);
  in.read(reinterpret_cast<char*>(raw.data()), static_cast<std::streamsize>(raw.size()));
  if (static_cast<std::uint64_t>(in.gcount()) != raw.size())
    throw Error(fmt::format("{}: data is truncated", path));
  a.data.resize(count);
  for (std::uint64_t i = 0; i < count; ++i) {
    const unsigned char* p = raw.data() + i * static_cast<std::uint64_t>(elem_bytes);
    float v;
    if (elem_bytes == 2) {
      const auto bits = static_cast<std::uint16_t>(p[0] | (p[1] << 8));
      v = kind == "f2" ? num::fp16_to_float(bits) : num::bf16_to_float(bits);
    } else if (elem_bytes == 4) {
      std::memcpy(&v, p, 4);
    } else {
      double d;
      std::memcpy(&d, p, 8);
      v = static_cast<float>(d);
    }
    if (!std::isfinite(v)) {
      if (elem_bytes == 8) {
        double d;
        std::memcpy(&d, p, 8);
        if (std::isfinite(d))
          throw Error(fmt::format("{}: element {} = {:g} overflows float32 (largest finite {:g})", path, i, d,
                                  std::numeric_limits<float>::max()));
      }
      throw Error(fmt::format("{}: element {} is not finite ({})", path, i, v));
    }
    a.data[i] = v;
  }
  return a;
}

void write_npy(const std::string& path, const std::vector<float>& data, const std::string& descr,
               const std::vector<std::uint64_t>& shape) {
  if (descr != "<f4" && descr != "<f2" && descr != "<u2")
    throw Error(fmt::format("write_npy: descr '{}' is not one of <f4, <f2, <u2", descr));
  std::string shp;
  if (shape.empty()) {
    shp = fmt::format("({},)", data.size());
  } else {
    shp = "(";
    for (std::size_t i = 0; i < shape.size(); ++i) shp += fmt::format("{}{}", i ? ", " : "", shape[i]);
    shp += shape.size() == 1 ? ",)" : ")";
  }
  std::string header = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': {}, }}", descr, shp);
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::ofstream out(path, std::ios::binary);
  if (!out) throw Error(fmt::format("{}: cannot write .npy file", path));
  out.write("\x93NUMPY\x01\x00", 8);
  const char len[2] = {static_cast<char>(header.size() & 0xff), static_cast<char>(header.size() >> 8)};
  out.write(len, 2);
  out.write(header.data(), static_cast<std::streamsize>(header.size()));
  for (float v : data) {
    if (descr == "<f4") {
      out.write(reinterpret_cast<const char*>(&v), 4);
    } else {
      const std::uint16_t b = descr == "<f2" ? num::fp16_bits(v) : num::bf16_bits(v);
      const char c[2] = {static_cast<char>(b & 0xff), static_cast<char>(b >> 8)};
      out.write(c, 2);
    }
  }
  if (!out) throw Error(fmt::format("{}: write failed", path));
}

void round_inputs(std::vector<std::vector<float>>& inputs, DType dtype, const std::string& origin) {
  if (dtype == DType::Fp32) return;
  const float big = dtype == DType::Bf16 ? num::bf16_to_float(0x7f7f) : num::fp16_to_float(0x7bff);
  for (std::size_t r = 0; r < inputs.size(); ++r) {
    float* x = inputs[r].data();
    const std::size_t n = inputs[r].size();
    // In blocks: a branch-free look for values beyond the largest finite value
    // (only those can round to infinity; they are checked one by one), then
    // the block is rounded while it is in cache.
    constexpr std::size_t kBlock = 4096;
    for (std::size_t lo = 0; lo < n; lo += kBlock) {
      const std::size_t hi = std::min(n, lo + kBlock);
      std::uint32_t beyond = 0;
      for (std::size_t i = lo; i < hi; ++i) beyond |= static_cast<std::uint32_t>(std::fabs(x[i]) > big);
      for (std::size_t i = lo; beyond && i < hi; ++i) {
        const float v = x[i];
        if (!(std::fabs(v) > big) || !std::isfinite(v)) continue;
        std::vector<float> one{v};
        round_to_format(one, format_of(dtype));
        if (std::isfinite(one[0])) continue;
        std::string name = to_string(dtype);
        for (auto& c : name) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
        throw Error(fmt::format("{}: rank {} element {} = {:g} overflows {} (largest finite {:g})", origin, r, i, v,
                                name, big));
      }
      if (dtype == DType::Bf16)
        for (std::size_t i = lo; i < hi; ++i) x[i] = num::round_bf16_fast(x[i]);
      else
        for (std::size_t i = lo; i < hi; ++i) x[i] = num::round_fp16(x[i]);
    }
  }
}

std::vector<std::vector<float>> load_npy_inputs(const std::vector<std::string>& files, int ranks) {
  if (files.empty()) throw Error("--npy: no files given");
  std::vector<std::vector<float>> out;
  if (files.size() == 1) {
    NpyArray a = read_npy(files[0], kMaxQuantElemsTotal);
    const std::uint64_t n = a.data.size();
    if (n == 0 || n % static_cast<std::uint64_t>(ranks) != 0)
      throw Error(fmt::format("--npy: {} holds {} elements, not a positive multiple of the {} ranks it is split across",
                              files[0], n, ranks));
    const std::uint64_t per = n / static_cast<std::uint64_t>(ranks);
    for (int r = 0; r < ranks; ++r) {
      auto first = a.data.begin() + static_cast<std::ptrdiff_t>(per * static_cast<std::uint64_t>(r));
      out.emplace_back(first, first + static_cast<std::ptrdiff_t>(per));
    }
    return out;
  }
  if (files.size() != static_cast<std::size_t>(ranks))
    throw Error(fmt::format("--npy: give one file per rank ({}) or one file to split; got {}", ranks, files.size()));
  for (const auto& f : files) {
    NpyArray a = read_npy(f, kMaxQuantElemsPerRank);
    if (a.data.empty()) throw Error(fmt::format("--npy: {} holds no elements", f));
    if (!out.empty() && a.data.size() != out.front().size())
      throw Error(fmt::format("--npy: {} holds {} elements but {} holds {}; every rank needs the same count", f,
                              a.data.size(), files.front(), out.front().size()));
    out.push_back(std::move(a.data));
  }
  return out;
}

}  // namespace scin
