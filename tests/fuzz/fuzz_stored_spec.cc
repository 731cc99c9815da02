// Stored run specs (runs.spec_json) as the store reads them: never throws on bad
// text (a discarded value), and an object is read field by field with the
// typed getters, as `scin show` and the app do.
#include "base/json_input.h"
#include "fuzz_util.h"
#include "sweep/sweep.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text = scin::fuzz::as_string(data, size);
  nlohmann::json j = scin::parse_json_or_discarded(text);
  if (j.is_discarded() || !j.is_object()) return 0;
  scin::fuzz::expect_ok_or_error([&] {
    if (const auto* d = scin::json_member(j, "description", "spec")) (void)scin::json_string(*d, "description");
    (void)scin::sweep_spec_from_json(j, "stored spec");
  });
  (void)j.dump();
  return 0;
}
