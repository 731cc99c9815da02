// `--set PATH=VALUE` on the default configuration, then validation.
#include "fabric/params.h"
#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text = scin::fuzz::as_string(data, size);
  scin::fuzz::expect_ok_or_error([&] {
    scin::Config cfg;
    scin::apply_assignment(cfg, text);
    scin::validate(cfg);
    for (const auto& p : scin::params()) (void)scin::get_param_text(cfg, p.path);
  });
  return 0;
}
