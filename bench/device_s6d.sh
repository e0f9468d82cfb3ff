#!/usr/bin/env bash
# Session 6, device call 4: the bench suite's fast rows after calls 2-3 (on-device checks
# against the CPU oracle: random graphs in every mode, SNP, 10 kbp, the real graphs), then
# end to end on 100,000 x 150 bp (3 warm runs; GAF equal with the traceback on the CPU).
source bench/device_prelude.sh
timeout 420 python3 -m bench.fast --out $OUT --configs 8x19 \
  --long "10000:8192:8x24:20000,10000:12672:8x24:20000" 2>&1 | grep -v Warn | tee $OUT/fast.log | tail -12
A() { S2G align $T/snp.gfa $T/snp.fq --variant fast --timings "$@" 2>&1 | grep -v "Warn\|warn("; }
{ echo "== cold"; A -o $T/o0.gaf; for k in 1 2 3; do echo "== defaults"; A -o $T/o1.gaf; done
  echo "== cpu traceback"; A -o $T/o2.gaf --traceback-on cpu
  cmp $T/o1.gaf $T/o2.gaf && echo "GAF identical (GPU vs CPU traceback)"
} 2>&1 | tee $OUT/e2e.log | grep -i "total\|wall\|GCUPS\|identical\|differ"
