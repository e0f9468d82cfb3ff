#!/usr/bin/env bash
# Seeded windows' searches on the GPU (knob gpu_window_search, s2g/seeded/windows_gpu.py)
# checked and timed on the GPU machine, one call (carry .whl .devcache .devdata/bac2, the
# last with MHC and Mbovis graphs and reads):
#   bash bench/device_windows.sh "$OUT"
# 1. tests/windows_gpu_cudasim_check.py 4 --gpu: the compiled kernel's chain lists against
#    the host's (OUT/check.txt);
# 2. `pytest -m gpu -k "not long"` on the windows, seeded, traceback and device-choice tests
#    (OUT/gpu_tests.txt; GPU_TESTS_TIMEOUT seconds, 240);
# 3. bench/device_threads.sh on MHC and M. bovis, 1,000,000 x 150 bp reads, the knob off
#    and the default (on), each twice, interleaved; every run's GAF compared with the first warm
#    run's (the default: the CPU path's bytes, checked in earlier sessions), the
#    --timings lines in OUT/<graph>_summary.md. GRAPHS, CONFIGS as device_threads.sh;
#    NO_PROF= (empty) adds its py-spy run on MHC (carry .whlx too).
set -uo pipefail
out=$1
mkdir -p "$out" /tmp/dc
export S2G_DEVICE_CACHE=/tmp/dc
[ -f .devcache/dc.tgz ] && tar xzf .devcache/dc.tgz -C /tmp/dc
( . bench/device_env.sh > /dev/null 2>&1
  timeout 100 python3 tests/windows_gpu_cudasim_check.py 4 --gpu > "$out/check.txt" 2>&1
  echo "rc=$?" >> "$out/check.txt" )
tail -3 "$out/check.txt"
GPU_TESTS=${GPU_TESTS-"tests/test_windows_gpu.py tests/test_seeded.py tests/test_gpu_traceback.py tests/test_device_choice.py"} \
  GPU_K=${GPU_K-"not long"} GPU_TESTS_TIMEOUT=${GPU_TESTS_TIMEOUT:-240} \
  GRAPHS=${GRAPHS:-"MHC:mhc100k Mbovis:Mbovis100k"} \
  CONFIGS=${CONFIGS:-"S2G_CONFIG=gpu_window_search=0 X=1"} NO_PROBE=1 NO_PROF=${NO_PROF-1} \
  ALIGN_TIMEOUT=${ALIGN_TIMEOUT:-50} bash bench/device_threads.sh "$out" > "$out/threads.log" 2>&1
tail -30 "$out/threads.log"
