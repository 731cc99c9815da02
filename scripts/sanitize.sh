#!/usr/bin/env bash
# The whole test suite under AddressSanitizer + UndefinedBehaviorSanitizer, in its
# own build folder (build-sanitize/). With clang and libFuzzer present it also
# builds the libFuzzer harnesses of tests/fuzz (coverage-instrumented core) and
# ctest runs their 3-second smoke runs; otherwise GCC builds the same suite with
# ASan+UBSan and the fuzz seeds are replayed only.
#
#   bash scripts/sanitize.sh            # build + every test
#   bash scripts/fuzz.sh NAME SECONDS   # then fuzz one parser for longer
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${SCIN_SANITIZE_BUILD:-build-sanitize}
JOBS=$(nproc 2>/dev/null || echo 2)

probe=$(mktemp -d)
trap 'rm -rf "$probe"' EXIT
echo 'extern "C" int LLVMFuzzerTestOneInput(const unsigned char*, unsigned long) { return 0; }' > "$probe/f.cc"
if command -v clang++ >/dev/null 2>&1 && clang++ -fsanitize=fuzzer,address "$probe/f.cc" -o "$probe/f" 2>/dev/null; then
  CXX=clang++ FUZZ=ON COV=",fuzzer-no-link"
else
  CXX=${CXX:-g++} FUZZ=OFF COV=""
  echo "sanitize: clang with libFuzzer not found; building with $CXX, fuzz seeds replayed only"
fi

cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER="$CXX" \
  -DCMAKE_CXX_FLAGS="-fsanitize=address,undefined$COV -fno-sanitize-recover=undefined -fno-omit-frame-pointer" \
  -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" -DCMAKE_SHARED_LINKER_FLAGS="-fsanitize=address,undefined" \
  -DSCIN_BUILD_BENCH=OFF -DSCIN_FUZZERS=$FUZZ >/dev/null
cmake --build "$BUILD" -j "$JOBS"

export QT_QPA_PLATFORM=offscreen
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:detect_stack_use_after_return=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$PWD/scripts/lsan.supp:print_suppressions=0}
ctest --test-dir "$BUILD" --output-on-failure -j "$JOBS" --timeout 1200
