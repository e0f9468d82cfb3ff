#!/usr/bin/env bash
# Session 4, device call 14: final check after the summary moved to the finisher thread
# and the chunk padding rule: GPU traceback tests, e2e at the defaults (4 runs), GAF
# equal to the CPU traceback's.
source bench/device_prelude.sh
timeout 200 python3 -m pytest -m gpu -q -p no:warnings tests/test_gpu_traceback.py 2>&1 | tail -3 | tee $OUT/gpu_tests.log
A() { S2G align $T/snp.gfa $T/snp.fq --variant fast --timings "$@" 2>&1 | grep -v "Warn\|warn("; }
{ echo "== cold"; A -o $T/o0.gaf; for k in 1 2 3 4; do echo "== defaults"; A -o $T/o1.gaf; done
  echo "== cpu traceback"; A -o $T/o2.gaf --traceback-on cpu
  cmp $T/o1.gaf $T/o2.gaf && echo "GAF identical (GPU vs CPU traceback)"
} 2>&1 | tee $OUT/e2e.log
