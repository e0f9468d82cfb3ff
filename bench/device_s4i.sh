#!/usr/bin/env bash
# Session 4, device call 10: e2e samples to pick the GPU defaults (batch size; GPU
# traceback in the aligning thread or in the finisher thread), 4 runs each, interleaved.
source bench/device_prelude.sh
A() { S2G align $T/snp.gfa $T/snp.fq --variant fast --timings "$@" 2>&1 | grep -v "Warn\|warn(" | grep "wall"; }
{ echo "== cold (compiles)"; A -o $T/o_cold.gaf
  for k in 1 2 3 4; do
    echo "== inline 50000"; A -o $T/o1.gaf --batch-size 50000
    echo "== finisher 50000"; S2G_TB_INLINE=0 A -o $T/o2.gaf --batch-size 50000
    echo "== finisher 20000"; S2G_TB_INLINE=0 A -o $T/o3.gaf --batch-size 20000
    echo "== inline 32768"; A -o $T/o4.gaf --batch-size 32768
    echo "== inline 100000"; A -o $T/o5.gaf --batch-size 100000
  done
  for f in o2 o3 o4 o5; do cmp $T/o1.gaf $T/$f.gaf || echo "DIFF $f"; done; echo "compared"
} 2>&1 | tee $OUT/e2e_defaults.log
