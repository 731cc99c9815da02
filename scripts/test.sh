#!/usr/bin/env bash
# Installs, builds and runs every test (CTest + GoogleTest/QtTest), offscreen;
# with SCIN_SANITIZE=1 also the core, store, bad-input and fuzz-replay tests
# under AddressSanitizer + UndefinedBehaviorSanitizer (scripts/sanitize.sh --ci).
# Opt-in until one clean run inside CI's time budget has been measured.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
export QT_QPA_PLATFORM=offscreen
JOBS=$(nproc 2>/dev/null || echo 2)
ctest --test-dir build --output-on-failure -j "$JOBS" --timeout 600
if [ "${SCIN_SANITIZE:-0}" = 1 ]; then
  bash scripts/sanitize.sh --ci
fi
