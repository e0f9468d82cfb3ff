#!/usr/bin/env bash
# The next device call (issues 4 and 5; about 6 minutes on an H200): the suite rows still
# missing, then the long-read comparison that timed out in session 2. Merge afterwards:
#   cp -r <files_at>/suite4 bench/results/nvidia-h200/runs/4
#   python -m bench --merge bench/results/nvidia-h200/runs/{1,2,3,4} \
#       --drop-variants v1,v2,1:fast --out bench/results/nvidia-h200
source bench/device_prelude.sh
timeout 300 python3 -m bench --experiments branching,node_length,real --variants v3 --skip-v0 \
  --no-peer --time-limit 240 --no-report --real-dir .realdata --out $OUT/suite4 2>&1 | grep "GCUPS\|fail\|rror" | tail -30
timeout 200 python3 -m bench.fast --skip-random --configs 8x19 \
  --long 10000:8192:8x24:20000,10000:8192:8x19:20000 --out $OUT 2>&1 | grep -v "Warn\|warn(" | tail -20
