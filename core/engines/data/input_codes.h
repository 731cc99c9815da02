// The state of InputCodes (data_engine.h): the ranks' inputs quantised once
// for several data-engine runs. Internal to the data engine.
#pragma once

#include <cstdint>
#include <vector>

#include "engines/data/coverage.h"
#include "engines/data/data_engine.h"
#include "numerics/codec.h"

namespace scin {

struct InputCodes::State {
  const CheckedInputs* inputs = nullptr;              // the inputs these codes are of
  bool has_spec = false;
  num::CodecSpec spec;                                // the cache's codec (the first one used)
  std::vector<std::vector<std::uint8_t>> codes;       // per rank: one code per input element (allocated on first use)
  std::vector<std::vector<float>> scales;             // per rank: one scale per block of the input's grid
  std::vector<Coverage> held;                         // per rank: elements whose codes and block scales are held
};

}  // namespace scin
