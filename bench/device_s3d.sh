#!/usr/bin/env bash
# Session 3, device call 4: the 16-bit pair kernel (two reads per group, .s16x2 DPX;
# local mode default) and the 32-bit kernel at 128 registers (int32 bookkeeping):
# speed, exactness against the CPU oracle, GPU tests.
source bench/device_prelude.sh
P="python3 bench/fast_profile.py"
L=$OUT/profile.log
timeout 120 python3 -m bench.fast --skip-random --configs 8x19,4x38 --out $OUT 2>&1 \
  | grep -v "Warn\|warn(" | tee $OUT/fast_bench.log
S2G_FAST_PAIR=0 timeout 60 $P --graphs snp50,linear --configs 8x19 2>&1 | grep -v Warn | tee -a $L
timeout 100 $P --graphs snp50,linear,snp10,snp50b4 --configs 8x19,16x10 2>&1 | grep -v Warn | tee -a $L
timeout 230 python3 -m pytest -m gpu -q -p no:cacheprovider tests/test_fast.py 2>&1 | tail -4 | tee $OUT/gpu_tests.log
