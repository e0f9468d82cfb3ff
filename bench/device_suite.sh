#!/usr/bin/env bash
# Device call: end-to-end align (100k reads), the last GPU tests, the bench suite's GPU rows.
source bench/device_prelude.sh
python3 -c 'import time; t=time.time(); from s2g.variants import fast; fast.get_kernel(8, 19, 0); print(f"JIT of the 8x19 local kernel: {time.time()-t:.1f} s")'
for k in 1 2; do ( time S2G align $T/snp.gfa $T/snp.fq -o $T/out$k.gaf --variant fast ) 2>&1 | grep -v "Warn\|warn("; done
S2G align $T/snp.gfa $T/snp.fq -o $T/nt.gaf --variant fast --no-traceback
cmp $T/out1.gaf $T/out2.gaf && echo "two runs identical"; wc -l $T/out1.gaf
timeout 150 python3 -m pytest -m gpu -q -p no:cacheprovider tests/test_gpu_real.py -k "c4 or lpa" 2>&1 | tail -3
timeout 300 python3 -m bench --variants v3,v4,fast --skip-v0 --no-peer --time-limit 230 --no-report \
  --real-dir .realdata --out $OUT/suite 2>&1 | grep -v "Warn\|warn(" | tail -60
