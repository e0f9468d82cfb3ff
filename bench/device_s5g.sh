#!/usr/bin/env bash
# Session 5, device call 7: A/B of the device buffer pool on one machine, alternating
# runs (call 6's e2e was slower than call 5's, on another machine: noise or the pool?).
source bench/device_prelude.sh
A() { S2G align $T/snp.gfa $T/snp.fq --variant fast --timings "$@" 2>&1 | grep -v "Warn\|warn("; }
{ A -o $T/o0.gaf >/dev/null   # warm-up (Numba caches on this machine)
  for k in 1 2 3 4 5; do echo "== pool"; A -o $T/o1.gaf; echo "== no pool"; S2G_DEVPOOL=0 A -o $T/o2.gaf; done
  cmp $T/o1.gaf $T/o2.gaf && echo "GAF identical"
} 2>&1 | tee $OUT/e2e_ab.log
for k in 1 2; do
  echo "== pool"; timeout 60 python3 -m bench.gpu_traceback_profile 2>&1 | grep "interleaved\|stage device\|stage kernel" | head -3
  echo "== no pool"; S2G_DEVPOOL=0 timeout 60 python3 -m bench.gpu_traceback_profile 2>&1 | grep "interleaved\|stage device\|stage kernel" | head -3
done 2>&1 | tee $OUT/tb_ab.log
