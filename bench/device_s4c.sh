#!/usr/bin/env bash
# Session 4, device call 4: e2e after caching the traceback kernel on disk and making
# the GAF writer sequential (no second parallel region beside the traceback's).
source bench/device_prelude.sh
for k in gpu_cold gpu_warm gpu_warm2; do echo "== $k"; ( time S2G align $T/snp.gfa $T/snp.fq -o $T/out_$k.gaf --variant fast --traceback-on gpu ) 2>&1 | grep -v "Warn\|warn("; done 2>&1 | tee $OUT/e2e.log
( echo "== cpu traceback"; time S2G align $T/snp.gfa $T/snp.fq -o $T/out_cpu.gaf --variant fast --traceback-on cpu ) 2>&1 | grep -v "Warn\|warn(" | tee -a $OUT/e2e.log
( echo "== no traceback"; time S2G align $T/snp.gfa $T/snp.fq -o $T/out_nt.gaf --variant fast --no-traceback ) 2>&1 | grep -v "Warn\|warn(" | tee -a $OUT/e2e.log
cmp $T/out_gpu_warm.gaf $T/out_cpu.gaf && echo "GAF identical (GPU vs CPU traceback)" | tee -a $OUT/e2e.log
python3 bench/host_profile.py 2>&1 | tail -6 | tee $OUT/host_profile.log
