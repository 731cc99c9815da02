#!/usr/bin/env bash
# Speed-up of `scin sweep` across MPI ranks (core/sweep/sweep_mpi.h) on a
# packet-engine spec: points/s with 1, 2, 4 ranks (one TBB thread each), the
# median of REPS runs, and the cores the job actually got: user+sys of every
# process of the job over wall time (a shared machine gives less than asked).
#
#   bench/mpi_sweep.sh [BUILD_DIR] [REPS] [RANKS...]      (default: build 3 1 2 4)
#   MPIRUN_FLAGS="--bind-to none" bench/mpi_sweep.sh     (extra mpirun options)
set -euo pipefail
build=${1:-build}
reps=${2:-3}
shift $(( $# > 2 ? 2 : $# )) || true
ranks=("$@")
[ ${#ranks[@]} -eq 0 ] && ranks=(1 2 4)
scin=$(realpath "$build/app/scin")
spec=$(realpath "$(dirname "$0")/mpi_packet_sweep.json")
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1   # containers run as root
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "# $(nproc) cores online; load average $(cut -d' ' -f1-3 /proc/loadavg)"
printf "%-6s %-14s %-12s %-11s %-20s %s\n" ranks points_per_s wall_s cores_got points_per_core_s runs
TIMEFORMAT='%R %U %S'
median() { sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
for k in "${ranks[@]}"; do
  : > "$tmp/rates"; : > "$tmp/walls"; : > "$tmp/cores"
  for ((i = 0; i < reps; i++)); do
    rm -f "$tmp/b.scindb"*
    # bash's `time` covers mpirun and every rank it started (waited-for children).
    t=$( { time mpirun --oversubscribe ${MPIRUN_FLAGS:-} -np "$k" "$scin" sweep "$spec" --db "$tmp/b.scindb" -q --threads 1 \
             > "$tmp/out" 2>&1; } 2>&1 )
    read -r wall user sys <<< "$t"
    # The job's own rate, as rank 0 reports it (without MPI start-up).
    sed -n "s/.* in .* (\([0-9.]*\) points\/s.*/\1/p" "$tmp/out" >> "$tmp/rates"
    echo "$wall" >> "$tmp/walls"
    awk -v w="$wall" -v u="$user" -v s="$sys" 'BEGIN {printf "%.2f\n", (u + s) / w}' >> "$tmp/cores"
  done
  rate=$(median < "$tmp/rates")
  cores=$(median < "$tmp/cores")
  # Throughput per core the job got: what the ranks would give on cores of their own.
  per_core=$(awk -v r="$rate" -v c="$cores" 'BEGIN {printf "%.0f", (c > 0) ? r / c : 0}')
  printf "%-6s %-14s %-12s %-11s %-20s %s\n" "$k" "$rate" "$(median < "$tmp/walls")" "$cores" "$per_core" "$reps"
done
