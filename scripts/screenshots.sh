#!/bin/sh
# Regenerates docs/screenshots/*.png: one screenshot of scin-explorer per chart
# tab, offscreen, on the default experiment (hgx-h200-8, 8 B - 1 GiB, every
# algorithm) after a stored run. Usage: scripts/screenshots.sh [BUILD_DIR]
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
app=$build/ui/scin-explorer
out=$root/docs/screenshots
[ -x "$app" ] || { echo "screenshots.sh: $app not built " >&2; exit 1; }
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# A private settings/data folder and database, so the user's own are untouched.
export QT_QPA_PLATFORM=offscreen XDG_CONFIG_HOME=$tmp/config XDG_DATA_HOME=$tmp/data XDG_RUNTIME_DIR=$tmp/run
export SCIN_RESOURCE_DIR=${SCIN_RESOURCE_DIR:-$root/resources}
mkdir -m 700 -p "$tmp/run"
db=$tmp/screenshots.scindb
size=1600x1000
"$app" "$db" --preset hgx-h200-8 --run --tab latency --size $size --screenshot "$out/latency.png" --quit
for tab in bandwidth speedup breakdown quant timeline; do
  "$app" "$db" --tab $tab --size $size --screenshot "$out/$tab.png" --quit
done
echo "wrote $(ls "$out"/*.png | wc -l) screenshots to $out"
