#!/usr/bin/env bash
# A/B a benchmark between a base commit and the working tree on the GPU machine, one call:
#   bash bench/device_ab.sh OUT BASE ROUNDS command...
# e.g. bash bench/device_ab.sh "$OUT" 1f63ee5 2 python3 -m bench.simd --reads 1024 --reps 3
#        --modes local --threads 1,16 --v0-reads 8 --out {out}
# BASE is checked out with `git worktree` (it must be in the machine's copy of .git) into
# /tmp/s2g-ab-base; the command then runs ROUNDS times in each tree, alternating (base
# first), with {out} replaced by $OUT/<base|new>_<round> and {side} by base or new (a file
# each side keeps across rounds, e.g. a graph whose cache and index each side builds once:
# `cp MHC.gfa /tmp/base.gfa; cp MHC.gfa /tmp/new.gfa` first, then `... s2g align
# /tmp/{side}.gfa reads.fq -o {out}.gaf --timings`); stdout+stderr of each run in
# $OUT/<base|new>_<round>.log. The carried wheels go on PYTHONPATH after the tree itself.
set -uo pipefail
if [ $# -lt 4 ]; then
  echo "usage: bash bench/device_ab.sh OUT BASE ROUNDS command..." >&2
  exit 2
fi
out=$(realpath -m "$1"); base=$2; rounds=$3; shift 3
mkdir -p "$out"
here=$PWD
if [ -d .whl ] && [ -z "${S2G_NO_WHEELS:-}" ]; then
  python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl || exit 1
fi
rm -rf /tmp/s2g-ab-base
git worktree prune 2>/dev/null
git worktree add -f --detach /tmp/s2g-ab-base "$base" >/dev/null || { echo "no commit $base here" >&2; exit 1; }
# both trees' modules compiled as an install's are (bench/device_env.sh says why)
[ -n "${S2G_NO_PYC:-}" ] || python3 -m compileall -q -j 0 s2g bench /tmp/s2g-ab-base/s2g \
  /tmp/s2g-ab-base/bench > /dev/null 2>&1
{
  nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null || echo "no nvidia-smi"
  lscpu | grep -E "^Model name|^CPU\(s\)|^Thread|^Core|^Socket|^L1d|^L2|^L3" | tr -s ' '
  date -u +%FT%TZ
  echo "base $(git -C /tmp/s2g-ab-base rev-parse HEAD); new: working tree"
} | tee "$out/host.txt"
export PYTHONUNBUFFERED=1
for r in $(seq 1 "$rounds"); do
  for side in base new; do
    tree=$here; [ "$side" = base ] && tree=/tmp/s2g-ab-base
    dest="$out/${side}_$r"
    mkdir -p "$dest"
    cmd=("${@//\{out\}/$dest}")
    cmd=("${cmd[@]//\{side\}/$side}")
    echo "== $side round $r: ${cmd[*]}" | tee -a "$out/ab.log"
    (cd "$tree" && PYTHONPATH="$tree:/tmp/site" "${cmd[@]}") > "$dest.log" 2>&1
    echo "exit $?" >> "$dest.log"
    tail -6 "$dest.log" | tee -a "$out/ab.log"
  done
done
