// Preset documents: the JSON reader (depth limit) and config_from_json; a
// preset that loads must serialise and load again to the same parameters.
#include <cstdlib>

#include "base/json_input.h"
#include "fabric/params.h"
#include "fabric/preset.h"
#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text = scin::fuzz::as_string(data, size);
  scin::fuzz::expect_ok_or_error([&] {
    scin::Config cfg = scin::config_from_json(scin::parse_json_text(text, "preset"), "preset");
    scin::Config again = scin::config_from_json(scin::config_to_json(cfg), "round trip");
    for (const auto& p : scin::params())
      if (scin::get_param_text(cfg, p.path) != scin::get_param_text(again, p.path)) std::abort();
  });
  return 0;
}
