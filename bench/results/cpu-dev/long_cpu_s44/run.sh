#!/usr/bin/env bash
# Long reads on one CPU core and on two: s2g before (commit 7c2a487, a worktree at
# $BEFORE), s2g now, GraphAligner, alternating, process walls (GNU time) and peak RSS.
# usage: bash run.sh GRAPH READS THREADS RUNS GA_BINARY BEFORE_WORKTREE
set -u
G=$1; R=$2; T=$3; N=$4; GA=$5; BEFORE=$6
for k in $(seq 1 "$N"); do
  /usr/bin/time -f "before t=$T: %e s %M KB" env PYTHONPATH="$BEFORE" NUMBA_NUM_THREADS=$T \
    python -m s2g align "$G" "$R" --variant simd -o /tmp/lc_before.gaf 2>&1 | tail -1
  /usr/bin/time -f "now t=$T: %e s %M KB" env NUMBA_NUM_THREADS=$T \
    python -m s2g align "$G" "$R" --variant simd -o /tmp/lc_now.gaf 2>&1 | tail -1
  /usr/bin/time -f "graphaligner t=$T: %e s %M KB" "$GA" -g "$G" -f "$R" -a /tmp/lc_ga.gaf \
    -x vg -t "$T" 2>&1 >/dev/null | tail -1
done
cmp -s /tmp/lc_before.gaf /tmp/lc_now.gaf && echo "s2g GAF identical before/now" || echo "s2g GAF DIFFERS"
