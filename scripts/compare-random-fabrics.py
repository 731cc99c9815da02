#!/usr/bin/env python3
"""Runs two builds of `scin` on the same random two-tier fabrics and compares
their `scin run --format json` byte for byte (an optimisation must not move a
result). Fabrics are nvl576-style with random leaves, GPUs a leaf, spines,
oversubscription, HBM bandwidth, INT8 block size and planes, and a random
size range; both builds must refuse the same invalid ones the same way.

Usage: scripts/compare-random-fabrics.py BASE_SCIN NEW_SCIN [--algo ring-q8]
       [--seed 1] [--count 40]
"""
import argparse
import random
import subprocess
import sys


def fabric(rng):
    leaves = rng.choice([2, 3, 4, 6, 8])
    per_leaf = rng.choice([2, 3, 4, 6, 9, 12, 18, 36])
    args = ["--preset", "nvl576-style", "--gpus", str(leaves * per_leaf),
            "--set", f"fabric.leaves={leaves}",
            "--set", f"fabric.spines={rng.choice([1, 2, 3, 4, 9])}",
            "--set", f"fabric.oversubscription={rng.choice([1, 1, 2, 4])}",
            "--set", f"accelerator.hbm_bandwidth_GBps={rng.choice([40, 100, 400, 2000, 8000])}",
            "--set", f"quant.block_elems={rng.choice([16, 32, 64, 256])}"]
    if rng.random() < 0.3:
        args += ["--set", f"fabric.planes={rng.choice([1, 2, 4])}"]
    args += ["-b", rng.choice(["8", "1K", "64K", "1M"]), "-e", rng.choice(["16M", "256M", "1G"]),
             "-f", str(rng.choice([2, 4, 8]))]
    return args


def main():
    p = argparse.ArgumentParser()
    p.add_argument("base")
    p.add_argument("new")
    p.add_argument("--algo", default="ring-q8")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--count", type=int, default=40)
    a = p.parse_args()
    rng = random.Random(a.seed)
    ran = differ = 0
    for _ in range(a.count):
        args = ["run"] + fabric(rng) + ["--algo", a.algo, "--format", "json"]
        b = subprocess.run([a.base] + args, capture_output=True)
        n = subprocess.run([a.new] + args, capture_output=True)
        ran += b.returncode == 0
        if b.stdout != n.stdout or b.returncode != n.returncode:
            differ += 1
            print("DIFFER:", " ".join(args), file=sys.stderr)
    print(f"{a.count} fabrics, {ran} run by both, {a.count - ran} refused, {differ} differ")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
