// Sweep specs as the CLI reads them (comments allowed): parse, validate, and
// serialise back; a spec that validates must validate again from its JSON.
#include "base/json_input.h"
#include "fuzz_util.h"
#include "sweep/sweep.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text = scin::fuzz::as_string(data, size);
  scin::JsonParseOptions opt;
  opt.allow_comments = true;
  scin::fuzz::expect_ok_or_error([&] {
    scin::SweepSpec s = scin::sweep_spec_from_json(scin::parse_json_text(text, "spec", opt), "spec");
    (void)scin::sweep_spec_from_json(scin::to_json(s), "round trip");
  });
  return 0;
}
