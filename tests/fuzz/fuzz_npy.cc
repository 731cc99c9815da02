// .npy reader (header dictionary, shape, dtype, data) on arbitrary bytes.
#include "fuzz_util.h"
#include "numerics/inputs.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = scin::fuzz::temp_file(data, size, ".npy");
  scin::fuzz::expect_ok_or_error([&] { scin::read_npy(path, 1u << 16); });
  return 0;
}
