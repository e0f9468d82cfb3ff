#!/usr/bin/env bash
# The fast kernel's traceback form (knob gpu_tb_warp, s2g/trace/gpu_warp.py) on the GPU
# machine, one device call (carry .whl, .devcache, .devdata/bac2):
#   bash bench/device_tbw.sh "$OUT"
# 1. tests/tbw_cudasim_check.py on the GPU (S2G_TBW_GPU=1): its cases with the compiled
#    kernels against the CPU traceback, and the registers of the forms it used
#    (OUT/check.txt; TBW_CASES cases, default 12).
# 2. With BENCH=1: MHC and M. bovis, 1,000,000 x 150 bp reads (bench/device_threads.sh's
#    runs, CPU=0), the configurations interleaved (each twice), GAF compared with the
#    warm run's (OUT/<graph>_summary.md); GRAPHS="MHC:mhc100k": one graph; CONFIGS: the
#    configurations (default "X=1 S2G_CONFIG=gpu_tb_warp=0": the default, on, and off; each
#    given twice).
# 3. OUT/dc.tgz: Numba's cache after the call (copy it to .devcache/dc.tgz for the next).
set -uo pipefail
out=$1
export S2G_DEVICE_CACHE=/tmp/dc
mkdir -p /tmp/dc "$out"
[ -f .devcache/dc.tgz ] && tar xzf .devcache/dc.tgz -C /tmp/dc
. bench/device_env.sh || exit 1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/check.txt"
(cd tests && S2G_TBW_GPU=1 timeout "${CHECK_TIMEOUT:-300}" python3 tbw_cudasim_check.py \
  "${TBW_CASES:-12}" 0 2>&1; echo "check: exit status $?" ) | grep -v "Warning\|warn(\|key = " \
  | tail -30 | tee -a "$out/check.txt"
if [ -n "${BENCH:-}" ]; then
  NO_PROBE=1 CONFIGS=${CONFIGS:-"X=1 S2G_CONFIG=gpu_tb_warp=0"} bash bench/device_threads.sh "$out" 2>&1 \
    | grep -v "^WARNING: Target" | tail -30
fi
# the kernels compiled here, for the session's next call (copy OUT/dc.tgz to .devcache/)
tar czf "$out/dc.tgz" -C /tmp/dc .
