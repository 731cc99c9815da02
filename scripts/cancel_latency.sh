#!/usr/bin/env bash
# Measures how fast Ctrl-C stops long `scin` commands (issue 13: within 100 ms).
# Each case starts a command that runs for many seconds, sends SIGINT after
# DELAY seconds, and reports the command's own measure ("the work stopped N ms
# after the signal": from its watcher seeing the signal to every engine run
# having thrown Cancelled) and the wall time from kill to exit.
#   bash scripts/cancel_latency.sh [BUILD_DIR] [DELAY_SECONDS]
set -uo pipefail
# Job control: a background job of a script without it starts with SIGINT
# ignored (POSIX), so a signal sent before the command installs its handler
# (during a long estimate) was lost and the command ran to the end.
set -m
cd "$(dirname "$0")/.."
BUILD=${1:-build}
DELAY=${2:-3}
SCIN="$BUILD/app/scin"
[ -x "$SCIN" ] || { echo "cancel_latency: $SCIN not built"; exit 2; }
cases=(
  "analytic, 1024 GPUs x 64 planes, 224 points|run --set fabric.gpus=1024 --set fabric.planes=64 --set switch.ports=1024 --threads 1 --force"
  "analytic, 1024 GPUs two tiers, 1 GiB scin-inq|run --preset nvl576-style --gpus 1024 --set fabric.leaves=32 --set switch.ports=128 --bytes 1G --algo scin-inq --force"
  "packet, 8 GPUs, 4 GiB ring|run --engine packet --bytes 4G --algo ring --force"
  "packet, 8 GPUs, 1 GiB, every algorithm|run --engine packet --bytes 1G --force"
  "data engine, quant 16 x 16M elements|quant --elements 16M --gpus 16 --force"
)
printf '%-46s %12s %12s %s\n' case "engine(ms)" "exit(ms)" status
for c in "${cases[@]}"; do
  label=${c%%|*}
  args=${c#*|}
  err=$(mktemp)
  # shellcheck disable=SC2086
  "$SCIN" $args --format csv >/dev/null 2>"$err" &
  pid=$!
  sleep "$DELAY"
  t0=$(date +%s%N)
  kill -INT "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
  rc=$?
  t1=$(date +%s%N)
  engine_ms=$(sed -n 's/.*the work stopped \([0-9]*\) ms after the signal.*/\1/p' "$err")
  grep -q "work still running 100 ms after the signal was abandoned" "$err" && engine_ms=">100 (abandoned)"
  [ -n "$engine_ms" ] || engine_ms="-"
  printf '%-46s %12s %12s %s\n' "$label" "$engine_ms" "$(( (t1 - t0) / 1000000 ))" "exit $rc"
  rm -f "$err"
done
