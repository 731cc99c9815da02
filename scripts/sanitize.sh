#!/usr/bin/env bash
# The whole test suite under AddressSanitizer + UndefinedBehaviorSanitizer (GCC,
# build-sanitize/), then — when clang with libFuzzer is installed — the libFuzzer
# harnesses of tests/fuzz (clang, build-fuzz/, coverage-instrumented core, also
# ASan+UBSan) and a 3-second smoke run of each.
#
#   bash scripts/sanitize.sh            # both
#   bash scripts/sanitize.sh --ci       # lean (CI, from scripts/test.sh): no GUI, no fuzzers; only
#                                       # the core, store (and its fault injection), bad-input
#                                       # catalogue and fuzz-seed replay tests, in build-sanitize-ci/
#   SCIN_SANITIZE_GUI=OFF bash scripts/sanitize.sh   # without the Qt app and its tests (faster)
#   bash scripts/fuzz.sh NAME SECONDS   # then fuzz one parser for longer
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS=$(nproc 2>/dev/null || echo 2)
SAN="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
export QT_QPA_PLATFORM=offscreen
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:detect_stack_use_after_return=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$PWD/scripts/lsan.supp:print_suppressions=0}

if [ "${1:-}" = "--ci" ]; then
  # Parsers, engines, budgets, the store and its faults, the CLI's errors: the
  # tests where a memory error or UB would hide. The rest (numerics, packet,
  # golden, GUI) runs in the full mode.
  B=build-sanitize-ci
  start=$(date +%s)
  cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER="${CXX:-g++}" \
    -DCMAKE_CXX_FLAGS="$SAN" -DCMAKE_EXE_LINKER_FLAGS="$SAN" -DCMAKE_SHARED_LINKER_FLAGS="$SAN" \
    -DSCIN_BUILD_BENCH=OFF -DSCIN_BUILD_GUI=OFF >/dev/null
  replays=$(cd tests/fuzz && ls fuzz_*.cc | sed 's/\.cc$/_replay/')
  # shellcheck disable=SC2086
  cmake --build $B -j "$JOBS" --target scin test_core test_store test_store_faults $replays
  for d in core store bad_inputs fuzz; do
    ctest --test-dir $B/tests/$d --output-on-failure -j "$JOBS" --timeout 1200
  done
  echo "sanitize --ci: clean ($(( $(date +%s) - start )) s)"
  exit 0
fi

# 1. The test suite (GCC: the compiler CI uses; clang 14 lacks _Float16, which a numerics test needs).
cmake -S . -B build-sanitize -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER="${CXX:-g++}" \
  -DCMAKE_CXX_FLAGS="$SAN" -DCMAKE_EXE_LINKER_FLAGS="$SAN" -DCMAKE_SHARED_LINKER_FLAGS="$SAN" \
  -DSCIN_BUILD_BENCH=OFF -DSCIN_BUILD_GUI="${SCIN_SANITIZE_GUI:-ON}" >/dev/null
cmake --build build-sanitize -j "$JOBS"
ctest --test-dir build-sanitize --output-on-failure -j "$JOBS" --timeout 1200

# 2. libFuzzer harnesses (clang only).
probe=$(mktemp -d)
trap 'rm -rf "$probe"' EXIT
echo 'extern "C" int LLVMFuzzerTestOneInput(const unsigned char*, unsigned long) { return 0; }' > "$probe/f.cc"
if ! { command -v clang++ >/dev/null 2>&1 && clang++ -fsanitize=fuzzer,address "$probe/f.cc" -o "$probe/f" 2>/dev/null; }; then
  echo "sanitize: clang with libFuzzer not found (apt-get install clang libclang-rt-14-dev); fuzz seeds were replayed only"
  exit 0
fi
cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_CXX_FLAGS="$SAN -fsanitize=fuzzer-no-link" -DCMAKE_EXE_LINKER_FLAGS="$SAN" \
  -DSCIN_BUILD_BENCH=OFF -DSCIN_BUILD_GUI=OFF -DSCIN_FUZZERS=ON >/dev/null
cmake --build build-fuzz -j "$JOBS" --target scin_fuzzers
ctest --test-dir build-fuzz --output-on-failure -j "$JOBS" -R '^fuzz_smoke_'
