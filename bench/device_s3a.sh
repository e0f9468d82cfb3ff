#!/usr/bin/env bash
# Session 3, device call 1 (about 9 minutes on an H200): the GPU tests after session 2's
# last changes (fast prologue guard, 48 KB fallback, V2-V4 start_batch), then the suite's
# missing v3 rows (branching, node_length, real). Merge afterwards:
#   cp -r <files_at>/suite4 bench/results/nvidia-h200/runs/4
#   python -m bench --merge bench/results/nvidia-h200/runs/{1,2,3,4} \
#       --drop-variants v1,v2,1:fast --out bench/results/nvidia-h200
source bench/device_prelude.sh
timeout 380 python3 -m pytest -m gpu -q -p no:cacheprovider --durations=12 \
  tests/test_fast.py tests/test_gpu_real.py 2>&1 | grep -v "Warn\|warn(" | tail -25
timeout 170 python3 -m bench --experiments branching,node_length,real --variants v3 --skip-v0 \
  --no-peer --time-limit 140 --no-report --real-dir .realdata --commit "${S2G_COMMIT:-unknown}" \
  --out $OUT/suite4 2>&1 | grep "GCUPS\|fail\|rror" | tail -30
