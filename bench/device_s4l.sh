#!/usr/bin/env bash
# Session 4, device call 13: 10 kbp reads, strip shapes (G lanes x K rows per lane), each
# checked against the CPU oracle on 8 reads; 150 bp on the same 20 kbp graph beside them.
source bench/device_prelude.sh
timeout 420 python3 -m bench.fast --skip-random --configs 8x19 --reads 32768 \
  --long "10000:8192:8x24:20000,10000:8192:16x24:20000,10000:8192:32x24:20000,10000:8192:16x19:20000" \
  --out $OUT 2>&1 | grep -v "Warn\|warn(" | tee $OUT/long_configs.log
