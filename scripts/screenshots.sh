#!/bin/sh
# Regenerates docs/screenshots/: offscreen screenshots of scin-explorer
#   - one per chart tab on the default experiment (hgx-h200-8, 8 B - 1 GiB,
#     every algorithm) after a stored run;
#   - the Analysis tab on three stored example sweeps: a multi-axis timing
#     sweep (isa-waves: latency vs ISA waves, one panel per wave regulation),
#     a quant run (quant-blocks: SQNR vs block size per input distribution)
#     and an inference run (inference-tp: TTFT speedup vs batch);
#   - the same three as paper figures (3.5 in single column, 8 pt, SVG + PNG);
#   - measured points (resources/measured/calibration-allreduce.csv, imported
#     with `scin import`) over the seed comparison's latency and bandwidth, the
#     Validation tab, a 36-curve run (link-scaling: the capped legend) and two
#     runs selected together in the Analysis tab.
# Usage: scripts/screenshots.sh [BUILD_DIR]
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
app=$build/ui/scin-explorer
cli=$build/app/scin
out=$root/docs/screenshots
[ -x "$app" ] || { echo "screenshots.sh: $app not built " >&2; exit 1; }
[ -x "$cli" ] || { echo "screenshots.sh: $cli not built " >&2; exit 1; }
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# A private settings/data folder and database, so the user's own are untouched.
export QT_QPA_PLATFORM=offscreen XDG_CONFIG_HOME=$tmp/config XDG_DATA_HOME=$tmp/data XDG_RUNTIME_DIR=$tmp/run
export SCIN_RESOURCE_DIR=${SCIN_RESOURCE_DIR:-$root/resources}
mkdir -m 700 -p "$tmp/run"
db=$tmp/screenshots.scindb
size=1600x1000
# Opening never creates a database: the CLI creates it (run 1, the seed comparison);
# the app then runs the default experiment into it (run 2, shown by every tab).
"$cli" sweep seed-comparison --db "$db" --quiet
"$app" "$db" --preset hgx-h200-8 --run --tab latency --size $size --screenshot "$out/latency.png" --quit
for tab in bandwidth speedup breakdown quant timeline; do
  "$app" "$db" --tab $tab --size $size --screenshot "$out/$tab.png" --quit
done

# A two-tier fabric in the Fabric and Topology docks (tiers drawn at 72 GPUs).
"$app" "$db" --preset nvl36x2 --tab latency --size $size --screenshot "$out/topology-nvl36x2.png" --quit

# The example sweeps, stored as `scin sweep` stores them (runs 1, 2, 3, 4, 5).
examples=$tmp/examples.scindb
for spec in isa-waves quant-blocks inference-tp scin-scale link-scaling; do
  "$cli" sweep "$spec" --db "$examples" --quiet
done
shot() {  # NAME RUN ANALYSIS-FLAGS...
  name=$1 run=$2
  shift 2
  "$app" "$examples" --show-run "$run" --tab analysis --size 1500x900 "$@" \
    --export-chart "$out/figure-$name.svg" --screenshot "$out/analysis-$name.png" --quit
  "$app" "$examples" --show-run "$run" "$@" --export-chart "$out/figure-$name.png" --quit
}
shot isa-waves 1 --x switch.isa.waves --y time_us --facet switch.isa.regulation
shot quant-blocks 2 --x quant.block_elems --y sqnr_dB --facet input.dist
shot inference-tp 3 --x inference.batch --y ttft_speedup --baseline ring
shot scin-scale 4 --x fabric.gpus --y busbw_GBps --facet collective.bytes
shot link-scaling 5 --x collective.bytes --y time_us --facet links.bandwidth_GBps
# Measured vs simulated: runs 1 seed-comparison, 2 link-scaling, 3 the measurements,
# 4 the seed comparison on hgx-b200-8 (to select with run 1 in the Analysis tab).
measured=$tmp/measured.scindb
"$cli" sweep seed-comparison --db "$measured" --quiet
"$cli" sweep link-scaling --db "$measured" --quiet
"$cli" import "$SCIN_RESOURCE_DIR/measured/calibration-allreduce.csv" --db "$measured" >/dev/null
"$app" "$measured" --show-run 1 --tab latency --size $size --screenshot "$out/latency-measured.png" --quit
"$app" "$measured" --show-run 1 --tab bandwidth --size $size --screenshot "$out/bandwidth-measured.png" --quit
"$app" "$measured" --show-run 1 --tab validation --size $size --screenshot "$out/validation.png" --quit
"$app" "$measured" --show-run 2 --tab latency --size $size --screenshot "$out/latency-many-curves.png" --quit
"$app" "$measured" --show-run 2 --tab breakdown --size $size --screenshot "$out/breakdown-many-bars.png" --quit
sed -e 's/"hgx-h200-8"/"hgx-b200-8"/' -e 's/"seed-comparison"/"seed-comparison-b200"/' \
  "$SCIN_RESOURCE_DIR/sweeps/seed-comparison.json" > "$tmp/seed-b200.json"
"$cli" sweep "$tmp/seed-b200.json" --db "$measured" --quiet
"$app" "$measured" --show-run 1,4 --tab analysis --size $size --screenshot "$out/analysis-two-runs.png" --quit
# NVLS on 2 GPUs, which NCCL does not run: the note line says the nvls curve is the mechanism itself (run 5).
sed -e 's/"preset": "hgx-h200-8",/"preset": "hgx-h200-8", "set": {"fabric.gpus": 2},/' -e 's/"seed-comparison"/"seed-comparison-2gpus"/' \
  "$SCIN_RESOURCE_DIR/sweeps/seed-comparison.json" > "$tmp/seed-2gpus.json"
"$cli" sweep "$tmp/seed-2gpus.json" --db "$measured" --quiet
"$app" "$measured" --show-run 5 --tab latency --size $size --screenshot "$out/latency-nvls-2gpus.png" --quit
echo "wrote $(ls "$out"/*.png "$out"/*.svg | wc -l) screenshots and figures to $out"
