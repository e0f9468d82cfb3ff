#!/usr/bin/env bash
# Session 4, device call 8: e2e by batch size (no warm thread), GPU traceback profile,
# then every GPU test of fast, the real graphs and the traceback.
source bench/device_prelude.sh
A() { S2G align $T/snp.gfa $T/snp.fq --variant fast --timings "$@" 2>&1 | grep -v "Warn\|warn("; }
{ echo "== cold (compiles)"; A -o $T/o_cold.gaf
  for b in 20000 32768 50000; do echo "== batch $b"; for k in 1 2 3; do A -o $T/o_$b.gaf --batch-size $b; done; done
  cmp $T/o_20000.gaf $T/o_50000.gaf && cmp $T/o_cold.gaf $T/o_32768.gaf && echo "GAF identical across batch sizes"
} 2>&1 | tee $OUT/e2e_batches.log
timeout 100 python3 -m bench.gpu_traceback_profile 2>&1 | grep -v "Warn\|warn(" | tee $OUT/gpu_tb_profile.log
timeout 440 python3 -m pytest -m gpu -q -p no:warnings tests/test_gpu_traceback.py tests/test_fast.py tests/test_gpu_real.py 2>&1 | tail -4 | tee $OUT/gpu_tests.log
