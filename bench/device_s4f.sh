#!/usr/bin/env bash
# Session 4, device call 7: e2e timeline (when aligning starts and ends), batch sizes,
# with and without the start-up warm thread.
source bench/device_prelude.sh
A() { S2G align $T/snp.gfa $T/snp.fq --variant fast --timings "$@" 2>&1 | grep -v "Warn\|warn("; }
{ echo "== cold (compiles)"; A -o $T/o_cold.gaf
  for b in 20000 32768 65536; do echo "== batch $b"; for k in 1 2; do A -o $T/o_$b.gaf --batch-size $b; done; done
  echo "== batch 20000, no warm thread"; for k in 1 2; do S2G_NO_WARM=1 A -o $T/o_nw.gaf; done
  echo "== batch 20000, no traceback"; A -o $T/o_nt.gaf --no-traceback
  cmp $T/o_20000.gaf $T/o_65536.gaf && cmp $T/o_cold.gaf $T/o_nw.gaf && echo "GAF identical across batch sizes"
} 2>&1 | tee $OUT/e2e_timeline.log
