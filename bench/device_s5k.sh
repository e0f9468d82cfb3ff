#!/usr/bin/env bash
# Session 5, device call 11: after the cli refactor (GPU traceback half passed as a value):
# e2e at the defaults, GAF equal to the CPU traceback's.
source bench/device_prelude.sh >/dev/null 2>&1
A() { S2G align $T/snp.gfa $T/snp.fq --variant fast --timings "$@" 2>&1 | grep -v "Warn\|warn("; }
{ for k in 1 2 3; do echo "== defaults"; A -o $T/o1.gaf; done
  echo "== cpu traceback"; A -o $T/o2.gaf --traceback-on cpu
  cmp $T/o1.gaf $T/o2.gaf && echo "GAF identical (GPU vs CPU traceback)"
} 2>&1 | tee $OUT/e2e.log
