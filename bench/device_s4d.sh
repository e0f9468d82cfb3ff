#!/usr/bin/env bash
# Session 4, device call 5: where the end-to-end time goes (--timings), batch sizes,
# fixed start-up cost (1,000 reads).
source bench/device_prelude.sh
head -4000 $T/snp.fq > $T/small.fq
A() { S2G align $T/snp.gfa "$@" --variant fast --timings 2>&1 | grep -v "Warn\|warn("; }
{ echo "== cold (compiles)"; A $T/snp.fq -o $T/o_cold.gaf
  for b in 20000 50000 100000; do echo "== batch $b"; A $T/snp.fq -o $T/o_$b.gaf --batch-size $b; A $T/snp.fq -o $T/o_$b.gaf --batch-size $b; done
  echo "== no traceback, batch 50000"; A $T/snp.fq -o $T/o_nt.gaf --batch-size 50000 --no-traceback
  echo "== 1,000 reads (fixed costs)"; A $T/small.fq -o $T/o_small.gaf
  cmp $T/o_20000.gaf $T/o_100000.gaf && echo "GAF identical across batch sizes"
} 2>&1 | tee $OUT/e2e_timings.log
