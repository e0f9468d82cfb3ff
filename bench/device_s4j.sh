#!/usr/bin/env bash
# Session 4, device call 11: GPU traceback stages with the kernel timed, per-read vs
# interleaved column scratch; e2e; GPU traceback tests.
source bench/device_prelude.sh
timeout 150 python3 -m bench.gpu_traceback_profile 2>&1 | grep -v "Warn\|warn(" | tee $OUT/gpu_tb_profile.log
A() { S2G align $T/snp.gfa $T/snp.fq --variant fast --timings "$@" 2>&1 | grep -v "Warn\|warn(" | grep "wall"; }
{ for k in 1 2 3; do
    echo "== inline 50000"; A -o $T/o1.gaf --batch-size 50000
    echo "== finisher 20000"; S2G_TB_INLINE=0 A -o $T/o3.gaf --batch-size 20000
  done; cmp $T/o1.gaf $T/o3.gaf && echo "GAF identical"
} 2>&1 | tee $OUT/e2e.log
timeout 200 python3 -m pytest -m gpu -q -p no:warnings tests/test_gpu_traceback.py 2>&1 | tail -3 | tee $OUT/gpu_tests.log
