// Measured timings as `scin calibrate`, `validate` and `import` read them: the
// nccl-tests log and JSON report parsers, the measured CSV parser, and load_measured's format
// detection on arbitrary bytes. CSV rows that parse must survive a round trip
// through to_measured_csv with the same rows.
#include <cstdlib>

#include "calib/measured.h"
#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text = scin::fuzz::as_string(data, size);
  scin::fuzz::expect_ok_or_error([&] { (void)scin::parse_nccl_tests(text, "fuzz.log"); });
  scin::fuzz::expect_ok_or_error([&] { (void)scin::parse_nccl_tests_json(text, "fuzz.json"); });
  scin::fuzz::expect_ok_or_error([&] {
    const auto rows = scin::parse_measured_csv(text, "fuzz.csv");
    const auto again = scin::parse_measured_csv(scin::to_measured_csv(rows), "round trip");
    if (again.size() != rows.size()) std::abort();
    for (std::size_t i = 0; i < rows.size(); ++i)
      if (again[i].gpus != rows[i].gpus || again[i].bytes != rows[i].bytes ||
          again[i].algorithm != rows[i].algorithm || again[i].system != rows[i].system)
        std::abort();
  });
  const std::string path = scin::fuzz::temp_file(data, size, ".measured");
  scin::fuzz::expect_ok_or_error([&] { (void)scin::load_measured(path); });
  return 0;
}
