#!/usr/bin/env bash
# Session 5, device call 5: after keep merges and the cache-key fix, every GPU test
# (fast kernel, real graphs, GPU traceback), e2e at the defaults (GAF equal to the CPU
# traceback's), and 4x19 against 8x19 on the merge-heavy graphs.
source bench/device_prelude.sh
timeout 430 python3 -m pytest -m gpu -q -p no:warnings tests/test_fast.py tests/test_gpu_real.py \
  tests/test_gpu_traceback.py 2>&1 | tail -4 | tee $OUT/gpu_tests.log
A() { S2G align $T/snp.gfa $T/snp.fq --variant fast --timings "$@" 2>&1 | grep -v "Warn\|warn("; }
{ echo "== cold"; A -o $T/o0.gaf; for k in 1 2 3 4 5; do echo "== defaults"; A -o $T/o1.gaf; done
  echo "== cpu traceback"; A -o $T/o2.gaf --traceback-on cpu
  cmp $T/o1.gaf $T/o2.gaf && echo "GAF identical (GPU vs CPU traceback)"
} 2>&1 | tee $OUT/e2e.log
timeout 60 python3 bench/fast_profile.py --graphs drb1,snp10 --configs 4x19 --reads 32768 2>&1 | grep -v Warn | tee $OUT/profile.log
