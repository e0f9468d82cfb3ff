#!/usr/bin/env bash
# The lean launch path (knob lean_cuda, docs/plans/driver_launch.md) on the GPU machine, one
# device call (carry .whl .devdata/bac2):
#   bash bench/device_lean.sh "$OUT"
# 1,000,000 x 150 bp reads on MHC (mhc100k ten times over): a cold run (compiles), a warm
# one (both numba.cuda: S2G_CONFIG=lean_cuda=0), the first lean run (stores the cubins), then
# lean and numba.cuda runs interleaved (RUNS pairs, default 2), each run's GAF compared with
# the warm run's; then
# bench.driver_launch_probe (a kernel's first result: raw ctypes, s2g's _driver, numba.cuda;
# alone and beside 0.6 s of main-thread Python) and `pytest -m gpu tests/test_lean.py`.
# LEAN_TESTS="files" (LEAN_K: a -k expression): those GPU tests with the knob on too
# (LEAN_TESTS_TIMEOUT seconds, 300). SKIP_RUNS=1: the tests only (a machine that ran them);
# SKIP_TESTS=1: the runs and the probe only; SKIP_PROBE=1: no probe; STAGE_LOG=1: one more
# lean run with knob stage_log (its first STAGE_LINES, 40, stage calls). FIRST_LEAN=1: no
# numba.cuda cold and warm runs, the first lean run compiles (and stores), the others' GAF
# compared with its. CPU=1: two CPU-only runs (--variant simd) after them, for the same
# host's ratio.
# Everything goes to OUT/lean.txt as it ends (a call cut at its limit still returns it).
set -uo pipefail
out=$1
log="$out/lean.txt"
export S2G_DEVICE_CACHE=/tmp/dc
mkdir -p /tmp/dc /tmp/g /tmp/lean "$out"
. bench/device_env.sh || exit 1
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  lscpu | grep -E "^Model name" | tr -s ' '; date -u +%FT%TZ; git log --oneline -1 2>/dev/null
} >> "$log"
zcat .devdata/bac2/MHC.gfa.gz > /tmp/g/MHC.gfa || exit 1
for k in $(seq 1 10); do
  zcat .devdata/bac2/mhc100k.fq.gz | awk -v k="$k" 'NR % 4 == 1 { $1 = $1 "_" k } { print }'
done > /tmp/lean/reads.fq
run() {       # run NAME VAR=VALUE...: one s2g align, its --timings and GAF check in the log
  local name=$1; shift
  local t0; t0=$(date +%s.%N)
  env "$@" timeout "${ALIGN_TIMEOUT:-150}" python3 -m s2g align /tmp/g/MHC.gfa \
    /tmp/lean/reads.fq -o "/tmp/lean/$name.gaf" --timings ${EXTRA:-} 2> "/tmp/lean/$name.err"
  local rc=$?
  { echo "## $name ($*) rc=$rc process wall $(awk -v a="$t0" -v b="$(date +%s.%N)" \
      'BEGIN { printf "%.2f", b - a }') s"
    grep "^s2g: [0-9]* reads\|seconds per stage\|start-up\|kernels launched\|GPU busy\|fast window kernel\|traceback form" \
      "/tmp/lean/$name.err" | cut -c1-400
    grep "^s2g: stage " "/tmp/lean/$name.err" | head -${STAGE_LINES:-40}
    [ "$rc" != 0 ] && tail -12 "/tmp/lean/$name.err"
    if [ "$name" != cold ] && [ "$name" != "$ref" ] && [ -f "/tmp/lean/$ref.gaf" ]; then
      cmp -s "/tmp/lean/$ref.gaf" "/tmp/lean/$name.gaf" && echo "GAF identical to $ref" ||
        echo "GAF DIFFERS from $ref"
    fi; } >> "$log"
}
ref=warm
[ -n "${FIRST_LEAN:-}" ] && ref=store
if [ -z "${SKIP_RUNS:-}" ]; then
  if [ -z "${FIRST_LEAN:-}" ]; then
    run cold S2G_CONFIG=lean_cuda=0
    run warm S2G_CONFIG=lean_cuda=0
  fi
  ALIGN_TIMEOUT=${STORE_TIMEOUT:-300} run store S2G_CONFIG=lean_cuda=1
  for i in $(seq 1 "${RUNS:-2}"); do
    run "lean$i" S2G_CONFIG=lean_cuda=1
    run "numba$i" S2G_CONFIG=lean_cuda=0
  done
  # STAGE_LOG=1: one more lean run with knob stage_log (the first stage calls' times)
  [ -n "${STAGE_LOG:-}" ] && run lean_log S2G_CONFIG=lean_cuda=1,stage_log=1
  # CPU=1: the CPU-only path on the same host (--variant simd: its first run compiles), its
  # GAF compared too (the GPU and CPU paths' GAF are byte-identical)
  if [ -n "${CPU:-}" ]; then
    EXTRA="--variant simd" ALIGN_TIMEOUT=300 run cpu_first X=1
    EXTRA="--variant simd" run cpu X=1
  fi
fi
[ -z "${SKIP_PROBE:-}" ] && { echo "## driver_launch_probe"
  timeout 200 python3 -m bench.driver_launch_probe dump /tmp/dlp &&
    for busy in 0 0.6; do for way in driver lean numba; do
      timeout 60 python3 -m bench.driver_launch_probe time /tmp/dlp --way $way --busy $busy
    done; done; } >> "$log" 2>&1
[ -n "${SKIP_TESTS:-}" ] && exit 0
{ echo "## pytest -m gpu tests/test_lean.py"
  timeout "${TESTS_TIMEOUT:-150}" python3 -m pytest -m gpu -q -p no:cacheprovider \
    tests/test_lean.py 2>&1 | tail -6; } >> "$log"
if [ -n "${LEAN_TESTS:-}" ]; then      # other GPU tests through the lean path (e.g. long reads)
  { echo "## S2G_CONFIG=lean_cuda=1 pytest -m gpu $LEAN_TESTS ${LEAN_K:+-k $LEAN_K}"
    S2G_CONFIG=lean_cuda=1 timeout "${LEAN_TESTS_TIMEOUT:-300}" python3 -m pytest -m gpu -q \
      -p no:cacheprovider $LEAN_TESTS ${LEAN_K:+-k "$LEAN_K"} 2>&1 | tail -8; } >> "$log"
fi
