#!/usr/bin/env bash
# The main job: install, build, then open SCIN Explorer on the default
# experiment (ring vs NVLS vs SCIN vs SCIN+INQ on an 8-GPU H200-class fabric).
# Without a display (or with SCIN_CLI_ONLY=1) it prints the same comparison as a table.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
if [ -x build/ui/scin-explorer ] && [ -z "${SCIN_CLI_ONLY:-}" ] && { [ -n "${DISPLAY:-}" ] || [ -n "${WAYLAND_DISPLAY:-}" ]; }; then
  exec build/ui/scin-explorer --preset hgx-h200-8 --run "$@"
fi
exec build/app/scin run --preset hgx-h200-8 "$@"
