#!/usr/bin/env bash
# Session 4, device call 1: GPU traceback — tests on the GPU, per-stage profile, and
# `s2g align` end to end with the traceback on the CPU and on the GPU (same GAF).
source bench/device_prelude.sh
timeout 240 python3 -m pytest -m gpu -x -q tests/test_gpu_traceback.py 2>&1 | tail -15 | tee $OUT/gpu_tb_tests.log
timeout 120 python3 -m bench.gpu_traceback_profile 2>&1 | grep -v "Warn\|warn(" | tee $OUT/gpu_tb_profile.log
for k in gpu_cold gpu_warm; do echo "== $k"; ( time S2G align $T/snp.gfa $T/snp.fq -o $T/out_$k.gaf --variant fast --traceback-on gpu ) 2>&1 | grep -v "Warn\|warn("; done 2>&1 | tee $OUT/e2e.log
( echo "== cpu traceback"; time S2G align $T/snp.gfa $T/snp.fq -o $T/out_cpu.gaf --variant fast --traceback-on cpu ) 2>&1 | grep -v "Warn\|warn(" | tee -a $OUT/e2e.log
cmp $T/out_gpu_warm.gaf $T/out_cpu.gaf && echo "GAF identical (GPU vs CPU traceback)" | tee -a $OUT/e2e.log
