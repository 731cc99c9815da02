// The state of InputCodes (data_engine.h): the ranks' inputs quantised once
// for several data-engine runs; and the checks of a run's inputs. Internal to the data engine.
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

// The checks of a run that do not read input values: schedule, sizes, formats
// (throws Error; checked_inputs.cc).
void check_run(const Schedule& s, const std::vector<std::vector<float>>& inputs_per_rank);

}  // namespace scin
