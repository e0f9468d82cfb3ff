#!/usr/bin/env bash
# One device call for the 1 Gbp row when device time is short (bench/device_genome.sh does
# the rest): the 1 Gbp build, with a tiny seeded GPU run meanwhile that compiles what the
# carried Numba cache lacks after a code change (OUT/warm.log), then RUNS (2) timed runs.
#   bash bench/device_genome_fast.sh "$OUT"          (carry .whl and .devcache)
set -uo pipefail
out=$1
mkdir -p /tmp/dc "$out"
[ -f .devcache/dc.tgz ] && [ ! -d /tmp/dc/numba ] && tar xzf .devcache/dc.tgz -C /tmp/dc
export S2G_DEVICE_CACHE=/tmp/dc
. bench/device_env.sh > /dev/null 2>&1 || exit 1
# CHECK=1: the GPU seeds/chains check (tests/seeds_gpu_cudasim_check.py --gpu: the index
# upload and the chain kernels against the CPU's chains) beside the build (OUT/check.txt)
[ -n "${CHECK:-}" ] && (timeout 400 python3 tests/seeds_gpu_cudasim_check.py 4 --gpu \
  > "$out/check.txt" 2>&1; echo "rc=$?" >> "$out/check.txt") &
( python3 -m s2g simulate /tmp/w --total-bases 2000000 --reads 20000 --seed 1 &&
  python3 -m s2g index /tmp/w.gfa &&
  python3 -m s2g align /tmp/w.gfa /tmp/w.fq -o /tmp/w.gaf --variant fast --seeded --timings
) > "$out/warm.log" 2>&1 &
STEP=build SIZES=${SIZES:-1000000000} bash bench/device_genome.sh "$out" > /dev/null 2>&1
wait
tail -3 "$out/warm.log"
[ -f "$out/check.txt" ] && tail -3 "$out/check.txt"
RUNS=${RUNS:-2} STEP=align CPU=${CPU:-0} SIZES=${SIZES:-1000000000} ALIGN_TIMEOUT=150 \
  bash bench/device_genome.sh "$out" 2>&1 | grep -v WARNING
tar czf "$out/dc.tgz" -C /tmp/dc .    # Numba's cache, for the next call (.devcache/)
