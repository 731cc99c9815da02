// The one size grammar (base/units.h): parse, then the result is in range and
// round-trips through its decimal form.
#include <cstdlib>

#include "base/units.h"
#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text = scin::fuzz::as_string(data, size);
  scin::fuzz::expect_ok_or_error([&] {
    const std::uint64_t b = scin::parse_size_bytes(text, "size", 1, std::uint64_t{1} << 62);
    if (b < 1 || b > (std::uint64_t{1} << 62)) std::abort();
    if (scin::parse_size_bytes(std::to_string(b), "size") != b) std::abort();
    (void)scin::format_size_bytes(b);
  });
  return 0;
}
