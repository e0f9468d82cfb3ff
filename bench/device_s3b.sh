#!/usr/bin/env bash
# Session 3, device call 2: kernel v3 of `fast` (PRMT substitution, F carried a row ahead,
# virtual slot 0 instead of a third code path, int32 column counters): speed, exactness
# on the GPU, end to end. Logs under $OUT.
source bench/device_prelude.sh
P="python3 bench/fast_profile.py"
L=$OUT/profile.log
timeout 150 python3 -m bench.fast --skip-random --configs 8x19,4x38,16x10 --out $OUT 2>&1 \
  | grep -v "Warn\|warn(" | tee $OUT/fast_bench.log
timeout 120 $P --graphs snp50,linear,snp200,snp10,snp50b4 --configs 8x19 2>&1 | grep -v Warn | tee -a $L
timeout 60 $P --graphs snp50 --configs 8x24 --len 10000 --reads 2048 2>&1 | grep -v Warn | tee -a $L
for k in cold warm; do echo "== $k"; ( time S2G align $T/snp.gfa $T/snp.fq -o $T/out_$k.gaf --variant fast ) 2>&1 | grep -v "Warn\|warn("; done 2>&1 | tee $OUT/e2e.log
timeout 230 python3 -m pytest -m gpu -q -p no:cacheprovider tests/test_fast.py 2>&1 | tail -4 | tee $OUT/gpu_tests.log
