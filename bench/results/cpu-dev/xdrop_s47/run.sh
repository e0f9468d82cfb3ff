#!/usr/bin/env bash
# Long reads on one CPU core: s2g before (a worktree of the previous commit at BEFORE, run from
# inside it so its package is the one imported), s2g now (this checkout, installed), and
# GraphAligner, alternating; process wall and peak RSS by GNU time; checks that the two
# s2g GAFs are identical and rescores GraphAligner's beside s2g's (bench.gaf_rescore).
# usage: bash run.sh GRAPH THREADS RUNS GA_BINARY BEFORE READS...
set -u
G=$(realpath "$1"); T=$2; N=$3; GA=$4; BEFORE=$(realpath "$5"); shift 5
HERE=$(pwd)
for R in "$@"; do
  R=$(realpath "$R"); name=$(basename "$R" .fq)
  for k in $(seq 1 "$N"); do
    (cd "$BEFORE" && /usr/bin/time -f "$name before t=$T: %e s %M KB" env NUMBA_NUM_THREADS=$T \
      python -m s2g align "$G" "$R" --variant simd -o /tmp/lc_before.gaf 2>&1 | tail -1)
    /usr/bin/time -f "$name now t=$T: %e s %M KB" env NUMBA_NUM_THREADS=$T \
      python -m s2g align "$G" "$R" --variant simd -o /tmp/lc_now.gaf 2>&1 | tail -1
    /usr/bin/time -f "$name graphaligner t=$T: %e s %M KB" "$GA" -g "$G" -f "$R" \
      -a /tmp/lc_ga.gaf -x vg -t "$T" 2>&1 >/dev/null | tail -1
  done
  cmp -s /tmp/lc_before.gaf /tmp/lc_now.gaf && echo "$name: s2g GAF identical before/now" \
    || echo "$name: s2g GAF DIFFERS before/now"
  (cd "$HERE" && python -m bench.gaf_rescore /tmp/lc_now.gaf /tmp/lc_ga.gaf 2>&1 | tail -2)
done
