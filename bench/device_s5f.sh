#!/usr/bin/env bash
# Session 5, device call 6: device buffers allocated once (s2g/variants/_devpool.py) in
# the fast kernel's and the GPU traceback's host code. GPU tests of both, e2e at the
# defaults (5 warm runs) and the GPU traceback profile.
source bench/device_prelude.sh
timeout 420 python3 -m pytest -m gpu -q -p no:warnings tests/test_fast.py tests/test_gpu_traceback.py 2>&1 | tail -3 | tee $OUT/gpu_tests.log
A() { S2G align $T/snp.gfa $T/snp.fq --variant fast --timings "$@" 2>&1 | grep -v "Warn\|warn("; }
{ for k in 1 2 3 4 5; do echo "== defaults"; A -o $T/o1.gaf; done
  echo "== cpu traceback"; A -o $T/o2.gaf --traceback-on cpu
  cmp $T/o1.gaf $T/o2.gaf && echo "GAF identical (GPU vs CPU traceback)"
} 2>&1 | tee $OUT/e2e.log
timeout 90 python3 -m bench.gpu_traceback_profile 2>&1 | grep -v Warn | tail -12 | tee $OUT/gpu_tb_profile.log
