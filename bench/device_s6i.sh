#!/usr/bin/env bash
# Session 6, device call 9: after the 4 x 38 default, the GPU tests that run the fast
# kernel end to end (real graphs, GPU traceback), then end to end (3 warm runs, GAF
# compared with the CPU traceback's).
source bench/device_prelude.sh >/dev/null 2>&1
timeout 300 python3 -m pytest -m gpu -q -p no:warnings tests/test_gpu_real.py tests/test_gpu_traceback.py 2>&1 | tail -3 | tee $OUT/gpu_tests.log
A() { S2G align $T/snp.gfa $T/snp.fq --variant fast --timings "$@" 2>&1 | grep "stage\|reads/s"; }
{ echo "== cold"; A -o $T/o0.gaf; for k in 1 2 3; do echo "== defaults"; A -o $T/o1.gaf; done
  echo "== cpu traceback"; A -o $T/o2.gaf --traceback-on cpu
  cmp $T/o1.gaf $T/o2.gaf && echo "GAF identical (GPU vs CPU traceback)"; } 2>&1 | tee $OUT/e2e.log
