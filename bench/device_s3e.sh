#!/usr/bin/env bash
# Session 3, device call 5: end to end with the pair kernel, long reads and real graphs
# (bench.fast, exact checks included), and the suite's n_reads rows for `fast` (merge as
# runs/5: python -m bench --merge runs/{1,2,3,4,5} --drop-variants v1,v2,1:fast,2:fast).
source bench/device_prelude.sh
for k in cold warm; do echo "== $k"; ( time S2G align $T/snp.gfa $T/snp.fq -o $T/out_$k.gaf --variant fast ) 2>&1 | grep -v "Warn\|warn("; done 2>&1 | tee $OUT/e2e.log
( echo "== warm, --batch-size 50000"; time S2G align $T/snp.gfa $T/snp.fq -o $T/out_b50.gaf --variant fast --batch-size 50000 ) 2>&1 | grep -v "Warn\|warn(" | tee -a $OUT/e2e.log
cmp $T/out_cold.gaf $T/out_b50.gaf && echo "GAF identical across runs" | tee -a $OUT/e2e.log
timeout 280 python3 -m bench.fast --skip-random --configs 8x19 --out $OUT 2>&1 \
  | grep -v "Warn\|warn(" | tee $OUT/fast_bench.log
timeout 100 python3 -m bench --experiments n_reads --variants fast --skip-v0 --no-peer \
  --time-limit 80 --no-report --commit "${S2G_COMMIT:-unknown}" --out $OUT/suite5 2>&1 | grep "GCUPS\|fail\|rror" | tail -12
