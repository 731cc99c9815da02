// The state of InputCodes (data_engine.h): the ranks' inputs quantised once
// for several data-engine runs; and the checks of a run's inputs. Internal to the data engine.
#pragma once

#include <cstdint>
#include <vector>

#include "base/big_alloc.h"
#include "engines/data/coverage.h"
#include "engines/data/data_engine.h"
#include "numerics/codec.h"

namespace scin {

struct InputCodes::State {
  const CheckedInputs* inputs = nullptr;              // the inputs these codes are of
  bool has_spec = false;
  num::CodecSpec spec;                                // the cache's codec (the first one used)
  std::vector<std::uint8_t*> codes;                  // per rank: one code per input element (null until first use)
  std::vector<float*> scales;                         // per rank: one scale per block of the input's grid
  // The storage of every rank's codes and scales, one array each (allocated at
  // the first use of any rank, touched only where written): from 2 MiB up on
  // huge pages, where per-rank arrays of one or a few MiB would take 4 KiB pages.
  BigVector<std::uint8_t> code_store;
  BigVector<float> scale_store;
  // Makes rank r's codes and scales point into the storage (`elems` per rank, blocks of g).
  void allocate(std::size_t r, std::uint64_t elems, std::uint64_t g) {
    if (codes[r]) return;
    const std::uint64_t code_stride = (elems + 63) / 64 * 64, blocks = (elems + g - 1) / g;
    const std::uint64_t scale_stride = (blocks + 15) / 16 * 16;
    if (code_store.empty()) {
      code_store.resize(code_stride * codes.size());
      scale_store.resize(scale_stride * codes.size());
    }
    codes[r] = code_store.data() + r * code_stride;
    scales[r] = scale_store.data() + r * scale_stride;
  }
  std::vector<Coverage> held;                         // per rank: elements whose codes and block scales are held
  std::uint64_t buffers_in_place = 0;                 // codec buffers that read the codes in place, over runs (tests)
  // FP32 sums of the inputs read in place, added from +0 in the rank order
  // `sum_ranks` (the first order a run used), per element; `summed`: elements held.
  std::vector<int> sum_ranks;
  BigVector<float> sums;
  Coverage summed;
};

// Whether a reduction takes or leaves the shared input sums (sum_use).
struct SumUse {
  bool on = false;
  bool held = false;   // the sums of its region are held: written, not added again
};

// For reduction `st` of n elements (input_rank: per buffer, the rank whose
// input it reads in place, or -1): an FP32 running sum from +0 (not
// accumulating) of every rank's input read in place, each once, all at the same
// offset, in the rank order of the sums held (the first order used: set here,
// and the sums allocated, `elems` per rank) takes or leaves them.
SumUse sum_use(InputCodes::State& codes, const Step& st, std::uint64_t n, const std::vector<int>& input_rank,
               int gpus, std::uint64_t elems);

// How a copy step uses the shared input codes: `rank` -1 = not at all; else
// the destinations with use[k] take the codes of rank `rank`'s input region
// (already held when `held`, else quantised into the cache first).
struct CacheUse {
  int rank = -1;
  bool held = false;
  std::vector<char> use;
};

// Which destinations of copy `st` (n elements; `decls`: the buffers as laid
// out) take shared input codes: the source is a rank's input read in place
// (input_rank: per buffer, that rank or -1), the destination a codec buffer
// with the cache's codec (the first one used: set here), both regions start on
// the block grid and the region ends on it or at the input's end `elems` (then
// its blocks are the input's). Allocates the rank's cache arrays.
CacheUse cache_use(InputCodes::State& codes, const Step& st, std::uint64_t n, const std::vector<int>& input_rank,
                   const std::vector<BufferDecl>& decls, std::uint64_t elems);

// A buffer read in place from rank `rank`'s input (-1: not): its FP32 values,
// or (a BF16 buffer, inputs held as BF16 patterns) its patterns.
struct InputAlias {
  int rank = -1;
  const float* vals = nullptr;
  const std::uint16_t* half = nullptr;
};

// Per buffer of `s`: whether it reads a rank's input in place (a buffer no step
// writes, one rank's input only, of the input's length, the input exact in its
// format; inputs held as BF16 patterns are read in place by BF16 buffers only).
std::vector<InputAlias> input_aliases(const Schedule& s, const CheckedInputs& checked);

// Per buffer of `s` (index < s.buffers.size()): the rank whose shared input
// codes (`codes`) the buffer reads in place instead of holding a copy, or -1.
// A codec buffer of s.elems elements with the cache's codec (the one the run's
// first shared copy would choose), no rank's input or output, whose every
// write among the running `steps` (planned, before slots) is a copy of the same
// rank's input read in place (`alias`) into the same offset on the block grid,
// the region ending on the grid or at the input's end (so the cache takes it:
// Engine::cache_use), and whose every read lies in regions written before it.
// Its codes and scales are then the cache's, element for element, whenever it
// is read. Allocates the cache arrays of the ranks it names.
std::vector<int> cached_code_buffers(InputCodes::State& codes, const Schedule& s, const std::vector<Step>& steps,
                                     const std::vector<InputAlias>& alias);

// Rank `rank`'s input as floats: the values held, or the BF16 patterns decoded into `scratch`.
const float* input_floats(const CheckedInputs& checked, int rank, std::vector<float>& scratch);

// The checks of a run that do not read input values: schedule, the ranks'
// input sizes, formats (throws Error; checked_inputs.cc).
void check_run(const Schedule& s, const std::vector<std::uint64_t>& sizes);

}  // namespace scin
