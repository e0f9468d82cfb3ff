#!/usr/bin/env bash
# Session 4, device call 6: e2e after the start-up overlap and the codes slice.
source bench/device_prelude.sh
head -4000 $T/snp.fq > $T/small.fq
A() { S2G align $T/snp.gfa "$@" --variant fast --timings 2>&1 | grep -v "Warn\|warn("; }
{ echo "== cold (compiles)"; A $T/snp.fq -o $T/o_cold.gaf
  for b in 20000 50000; do echo "== batch $b"; for k in 1 2 3; do ( time A $T/snp.fq -o $T/o_$b.gaf --batch-size $b ) 2>&1 | grep -v "^$\|user\|sys"; done; done
  echo "== 1,000 reads (fixed costs)"; A $T/small.fq -o $T/o_small.gaf; A $T/small.fq -o $T/o_small.gaf
  echo "== CPU traceback (reference GAF)"; A $T/snp.fq -o $T/o_cpu.gaf --traceback-on cpu
  cmp $T/o_20000.gaf $T/o_cpu.gaf && cmp $T/o_50000.gaf $T/o_cpu.gaf && echo "GAF identical (GPU/CPU traceback, batch sizes)"
} 2>&1 | tee $OUT/e2e_timings.log
