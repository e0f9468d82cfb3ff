#!/usr/bin/env bash
# Session 4, device call 9: GPU traceback in the aligning thread (default now) vs in the
# finisher thread (S2G_TB_INLINE=0), e2e 100,000 x 150 bp.
source bench/device_prelude.sh
A() { S2G align $T/snp.gfa $T/snp.fq --variant fast --timings "$@" 2>&1 | grep -v "Warn\|warn("; }
{ echo "== cold (compiles)"; A -o $T/o_cold.gaf
  for k in 1 2 3; do echo "== inline, batch 20000"; A -o $T/o_in.gaf; echo "== finisher thread, batch 20000"; S2G_TB_INLINE=0 A -o $T/o_fin.gaf; done
  for k in 1 2; do echo "== inline, batch 50000"; A -o $T/o_in50.gaf --batch-size 50000; done
  echo "== cpu traceback"; A -o $T/o_cpu.gaf --traceback-on cpu
  cmp $T/o_in.gaf $T/o_fin.gaf && cmp $T/o_in.gaf $T/o_in50.gaf && cmp $T/o_in.gaf $T/o_cpu.gaf && echo "GAF identical (inline, finisher, batch 50000, CPU traceback)"
} 2>&1 | tee $OUT/e2e_inline.log
