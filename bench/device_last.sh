#!/usr/bin/env bash
# Device call: end-to-end align with the on-disk kernel cache (cold, then warm), and the
# bench suite's remaining experiments for the GPU variants.
source bench/device_prelude.sh
for k in cold warm warm2; do echo "== $k"; ( time S2G align $T/snp.gfa $T/snp.fq -o $T/out_$k.gaf --variant fast ) 2>&1 | grep -v "Warn\|warn("; done
cmp $T/out_cold.gaf $T/out_warm.gaf && echo "cold and warm runs identical"; ls ~/.cache/s2g/kernels | head -3
timeout 200 python3 -m bench --experiments branching,node_length,real --variants fast,v4 --skip-v0 --no-peer \
  --time-limit 140 --budget 0.5 --no-report --real-dir .realdata --out $OUT/suite2 2>&1 | grep -v "Warn\|warn(" | grep "GCUPS\|skip\|FAIL\|done\|rror" | tail -40
