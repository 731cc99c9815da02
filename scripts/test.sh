#!/usr/bin/env bash
# Installs, builds and runs every test (CTest + GoogleTest/QtTest), offscreen;
# then the core, store, bad-input and fuzz-replay tests again under
# AddressSanitizer + UndefinedBehaviorSanitizer (scripts/sanitize.sh --ci: a cold
# build and run took 1,278 CPU-s, about 11 min of wall time on 2 free cores;
# SCIN_SKIP_SANITIZE=1 skips that step).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
export QT_QPA_PLATFORM=offscreen
JOBS=$(nproc 2>/dev/null || echo 2)
ctest --test-dir build --output-on-failure -j "$JOBS" --timeout 600
if [ "${SCIN_SKIP_SANITIZE:-0}" != 1 ]; then
  bash scripts/sanitize.sh --ci
fi
