// Model and accelerator spec files for `scin infer` (--model FILE, --gpu FILE).
#include "base/json_input.h"
#include "fabric/config.h"
#include "fuzz_util.h"
#include "inference/inference.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text = scin::fuzz::as_string(data, size);
  scin::fuzz::expect_ok_or_error([&] {
    scin::ModelSpec m = scin::model_from_json(scin::parse_json_text(text, "model"), "model");
    (void)scin::model_from_json(scin::to_json(m), "round trip");
  });
  const std::string path = scin::fuzz::temp_file(data, size, ".json");
  scin::fuzz::expect_ok_or_error([&] {
    scin::Config cfg;
    scin::apply_accelerator(cfg, path);
  });
  return 0;
}
