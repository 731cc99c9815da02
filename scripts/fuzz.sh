#!/usr/bin/env bash
# Runs one libFuzzer harness for a while: bash scripts/fuzz.sh NAME [SECONDS]
# (NAME: npy, size, set, preset, sweep_spec, stored_spec, inference_spec, measured).
# Needs the clang build of scripts/sanitize.sh (build-fuzz/). New inputs go to
# build-fuzz/tests/fuzz/corpus_NAME; a crash to build-fuzz/tests/fuzz/crash-*.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${SCIN_FUZZ_BUILD:-build-fuzz}
name=${1:?usage: fuzz.sh NAME [SECONDS]}
secs=${2:-600}
bin="$BUILD/tests/fuzz/fuzz_$name"
[ -x "$bin" ] || { echo "fuzz: $bin not built; run scripts/sanitize.sh (needs clang)"; exit 2; }
seeds=("tests/fuzz/corpus/$name")
case "$name" in
  preset) seeds+=(resources/presets) ;;
  sweep_spec|stored_spec) seeds+=(resources/sweeps) ;;
  inference_spec) seeds+=(resources/models resources/accelerators) ;;
  measured) seeds+=(resources/measured) ;;
esac
mkdir -p "$BUILD/tests/fuzz/corpus_$name"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
exec "$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
  -artifact_prefix="$BUILD/tests/fuzz/" \
  "$BUILD/tests/fuzz/corpus_$name" "${seeds[@]}"
