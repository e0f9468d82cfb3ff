#!/usr/bin/env bash
# Session 4, device call 3: flat tracebacks + Numba GAF writer; e2e with the traceback on
# the GPU and on the CPU; then the GPU tests of fast, real graphs and traceback.
source bench/device_prelude.sh
timeout 120 python3 -m bench.gpu_traceback_profile 2>&1 | grep -v "Warn\|warn(" | tee $OUT/gpu_tb_profile.log
for k in gpu_cold gpu_warm; do echo "== $k"; ( time S2G align $T/snp.gfa $T/snp.fq -o $T/out_$k.gaf --variant fast --traceback-on gpu ) 2>&1 | grep -v "Warn\|warn("; done 2>&1 | tee $OUT/e2e.log
( echo "== gpu, --batch-size 50000"; time S2G align $T/snp.gfa $T/snp.fq -o $T/out_b50.gaf --variant fast --batch-size 50000 ) 2>&1 | grep -v "Warn\|warn(" | tee -a $OUT/e2e.log
( echo "== cpu traceback"; time S2G align $T/snp.gfa $T/snp.fq -o $T/out_cpu.gaf --variant fast --traceback-on cpu ) 2>&1 | grep -v "Warn\|warn(" | tee -a $OUT/e2e.log
cmp $T/out_gpu_warm.gaf $T/out_cpu.gaf && cmp $T/out_gpu_warm.gaf $T/out_b50.gaf && echo "GAF identical (GPU vs CPU traceback, batch sizes)" | tee -a $OUT/e2e.log
python3 bench/host_profile.py 2>&1 | tail -6 | tee $OUT/host_profile.log
timeout 420 python3 -m pytest -m gpu -q tests/test_gpu_traceback.py tests/test_fast.py tests/test_gpu_real.py 2>&1 | tail -6 | tee $OUT/gpu_tests.log
