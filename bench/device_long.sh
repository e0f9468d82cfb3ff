#!/usr/bin/env bash
# Long-read workloads (issue 15) on the GPU machine (device tool), one call:
#   bash bench/device_long.sh "$OUT" [python -m bench.long_reads options...]
# e.g. bash bench/device_long.sh "$OUT" --workloads sim100k_10k,C4_10k --time-limit 540
# Carried wheels on PYTHONPATH (../shared/device/README.md), then
# `python3 -m bench.long_reads --out "$OUT" --variant fast ...` (later options win, so
# --variant simd works too; the real graphs come from tests/data/real, which the working
# tree carries, unless --real-dir names another folder). Writes $OUT/<workload>.json after every run,
# $OUT/<workload>.log (each s2g command and its stderr), $OUT/long_reads.log (progress),
# $OUT/host.txt, and $OUT/long_reads.md + .png over every workload JSON in $OUT.
# A command may run 10 minutes: give each call a workload subset and --time-limit
# (e.g. 540) so that it stops starting runs in time; graphs and reads stay in
# /tmp/s2g-long-reads while the machine is warm, so a later call reuses them.
set -uo pipefail
if [ $# -lt 1 ]; then
  echo "usage: bash bench/device_long.sh OUT [python -m bench.long_reads options...]" >&2
  exit 2
fi
. bench/device_env.sh || exit 1
out=$1
shift
mkdir -p "$out"
{
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null || echo "no nvidia-smi"
  lscpu | grep -E "^Model name|^CPU\(s\)" | tr -s ' '
  date -u +%FT%TZ
  git log -1 --format='commit %H %cd' 2>/dev/null || true
} | tee "$out/host.txt"
python3 -m bench.long_reads --out "$out" --variant fast "$@" 2>&1 | tee -a "$out/long_reads.log"
exit "${PIPESTATUS[0]}"
