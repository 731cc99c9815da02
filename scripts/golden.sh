#!/bin/sh
# Rewrites tests/golden/*.json from the current build: `scin run --format json`
# on every preset, analytic (8 B - 1 GiB) and packet (8 B - 4 MiB, factor 8),
# without the engines' statistics ("extra"). Run it only when a change is meant
# to move results, and say why in the commit. Usage: scripts/golden.sh [BUILD_DIR]
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
scin=${1:-$root/build}/app/scin
for p in gb200-nvl72 hgx-a100-8 hgx-b200-8 hgx-h100-8 hgx-h200-8 mesh-8 scin-fpga-4; do
  "$scin" run --preset $p --format json > "$root/tests/golden/analytic-$p.json.tmp"
done
# The packet engine on the 8-GPU presets (a 72-GPU packet sweep is a benchmark, not a test).
for p in hgx-a100-8 hgx-b200-8 hgx-h100-8 hgx-h200-8 mesh-8 scin-fpga-4; do
  "$scin" run --preset $p --engine packet -b 8 -e 4M -f 8 --format json > "$root/tests/golden/packet-$p.json.tmp"
done
python3 - "$root/tests/golden" <<'PY'
import glob, json, os, sys
for tmp in glob.glob(sys.argv[1] + "/*.json.tmp"):
    d = json.load(open(tmp))
    for r in d["results"]:
        r.pop("extra", None)
    json.dump(d, open(tmp[:-4], "w"), indent=0, sort_keys=True)
    os.remove(tmp)
PY
echo "golden files rewritten in $root/tests/golden"
