#!/usr/bin/env bash
# Installs, builds and runs every test (CTest + GoogleTest/QtTest), offscreen.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
export QT_QPA_PLATFORM=offscreen
JOBS=$(nproc 2>/dev/null || echo 2)
ctest --test-dir build --output-on-failure -j "$JOBS" --timeout 600
