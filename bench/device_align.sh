#!/usr/bin/env bash
# `s2g align` on a given graph and reads, GPU against CPU only, on the GPU machine (device
# tool), one call:
#   bash bench/device_align.sh "$OUT" GRAPH.gfa READS.fq.gz [s2g align options...]
# Runs `s2g align GRAPH READS --timings` with the machine's default (the GPU path) twice
# (the first compiles what is not cached; the second is the one to read), then once with
# `--variant simd` (CPU only, every vCPU), and compares the GAF of the GPU and CPU runs.
# Each step's log goes to $OUT as it ends (a call cut at its limit still returns them);
# ALIGN_TIMEOUT seconds a step (default 240).
set -uo pipefail
. bench/device_env.sh || exit 1
out=$1 graph=$2 reads=$3
shift 3
mkdir -p "$out" /tmp/da
cp "$graph" /tmp/da/g.gfa        # the graph cache and index are written beside the GFA
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null
  lscpu | grep -E "^Model name|^CPU\(s\)" | tr -s ' '; date -u +%FT%TZ
  echo "# s2g align $graph $reads --timings $*"; } | tee "$out/device.log"
t=${ALIGN_TIMEOUT:-240}
for run in gpu_cold gpu_warm; do
  timeout "$t" python3 -m s2g align /tmp/da/g.gfa "$reads" -o "/tmp/da/$run.gaf" --timings "$@" \
    > "$out/$run.log" 2>&1
  grep -v "Warn\|warn(" "$out/$run.log" | tail -7
done
timeout "$t" python3 -m s2g align /tmp/da/g.gfa "$reads" -o /tmp/da/cpu.gaf --timings \
  --variant simd "$@" > "$out/cpu.log" 2>&1
grep -v "Warn\|warn(" "$out/cpu.log" | tail -4
cmp /tmp/da/gpu_warm.gaf /tmp/da/cpu.gaf && echo "GAF identical (GPU, CPU)" | tee "$out/cmp.log"
