#!/usr/bin/env bash
# Why do the GPU pipeline's stages take 2-4x their serial seconds when they run in threads
# (issue #42; session 57's bench/device_contention.sh)? One device call (carry .whl,
# .whlx, .devcache, .devdata/bac2):
#   bash bench/device_threads.sh "$OUT"
# 1. bench/thread_probe.py: Numba's threading layer, and what a small parallel region, a
#    nogil function and a few numpy calls cost a call from 1, 2 and 4 threads at once.
# 2. MHC and M. bovis, 1,000,000 x 150 bp reads (bench/device_align.sh, CPU=0, REPEAT=10),
#    each configuration of $CONFIGS twice, interleaved (default: the default, the packed
#    uploads, OpenMP's passive wait policy); on MHC also a py-spy run (--idle, 200 Hz;
#    OUT/MHC_prof.json.gz, line numbers in its frames: where each thread's wall goes).
# NO_PROF=1: no py-spy run; ALIGN_TIMEOUT: seconds a run (120). OUT/dc.tgz: Numba's cache.
# GRAPHS="MHC:mhc100k" runs one graph (default both; graph:reads of .devdata/bac2).
# GPU_TESTS="test files" (GPU_K="a -k expression"): `pytest -m gpu` on them first
# (GPU_TESTS_TIMEOUT seconds, 300), with the wheels on PYTHONPATH (OUT/gpu_tests.txt);
# TESTS_LAST=1: after the runs instead (the kernels they compiled are then in the cache).
# LOADS=1: after a graph's runs, one more warm run under bench.cache_load_probe and
# `python -X importtime` (OUT/<graph>_loads.txt: every Numba cache load of the run, its
# thread and wall, and the 30 dearest imports). FIRST_ENVS="W ...": runs before the
# interleaved ones (their own medians; e.g. the lean path's first run, which stores the
# cubins: FIRST_ENVS="S2G_CONFIG=lean_cuda=1+STORE=1"). DRIVER_PROBE=1: after the runs (their kernels then
# load from the cache), bench.driver_launch_probe
# (a kernel's first result through the driver API against numba.cuda, alone and beside 0.6 s
# of main-thread Python, three rounds; OUT/driver_probe.txt). NO_DC=1: no OUT/dc.tgz (it can be too large
# to come back).
# Writes OUT/probe.txt, OUT/<graph>_summary.md, OUT/MHC_prof.{txt,json.gz}.
set -uo pipefail
out=$1
export S2G_DEVICE_CACHE=/tmp/dc
mkdir -p /tmp/dc /tmp/g "$out"
[ -f .devcache/dc.tgz ] && tar xzf .devcache/dc.tgz -C /tmp/dc
. bench/device_env.sh || exit 1
gpu_tests() {
  [ -n "${GPU_TESTS:-}" ] || return 0   # test files; GPU_K: a -k expression
  timeout "${GPU_TESTS_TIMEOUT:-300}" python3 -m pytest -m gpu -q -p no:cacheprovider \
    $GPU_TESTS ${GPU_K:+-k "$GPU_K"} > /tmp/gpu_tests.txt 2>&1
  echo "rc=$?" >> /tmp/gpu_tests.txt
  tail -8 /tmp/gpu_tests.txt | tee "$out/gpu_tests.txt"
}
[ -z "${TESTS_LAST:-}" ] && gpu_tests
[ -z "${NO_PROBE:-}" ] && timeout 120 python3 -m bench.thread_probe 300 2>&1 | tee "$out/probe.txt"
D="X=1"
P="S2G_CONFIG=gpu_pack_uploads=1"
W="OMP_WAIT_POLICY=PASSIVE"
CONFIGS=${CONFIGS:-"$D $P $W"}
for pair in ${GRAPHS:-MHC:mhc100k Mbovis:Mbovis100k}; do
  g=${pair%%:*} r=${pair##*:}
  zcat ".devdata/bac2/$g.gfa.gz" > "/tmp/g/$g.gfa" || exit 1
  rm -rf "/tmp/th/$g"
  prof=
  [ "$g" = MHC ] && [ -d .whlx ] && [ -z "${NO_PROF:-}" ] && prof=1
  PROFILE=$prof CPU=0 REPEAT=10 ALIGN_TIMEOUT=${ALIGN_TIMEOUT:-120} \
    ENVS="${FIRST_ENVS:-} $CONFIGS $CONFIGS" \
    bash bench/device_align.sh "/tmp/th/$g" "/tmp/g/$g.gfa" ".devdata/bac2/$r.fq.gz" \
    > "/tmp/th_$g.out" 2>&1
  cp "/tmp/th/$g/summary.md" "$out/${g}_summary.md"
  [ -f "/tmp/th/$g/gpu_prof.json" ] && gzip -c "/tmp/th/$g/gpu_prof.json" > "$out/${g}_prof.json.gz" &&
    cp "/tmp/th/$g/gpu_prof.txt" "$out/${g}_prof.txt"
  if [ -n "${LOADS:-}" ]; then
    timeout "${ALIGN_TIMEOUT:-120}" python3 -X importtime -m bench.cache_load_probe \
      --out "/tmp/th_${g}_loads.tsv" -- align "/tmp/da/g.gfa" /tmp/da/reads.fq \
      -o /tmp/th_loads.gaf --timings > "/tmp/th_${g}_loads.log" 2>&1
    { grep "^s2g: \|^#\|^  " "/tmp/th_${g}_loads.log" | grep -v "^import time"
      echo "## every load (start_s wall_s thread function found)"; cat "/tmp/th_${g}_loads.tsv"
      echo "## dearest imports (cumulative us)"
      grep "^import time" "/tmp/th_${g}_loads.log" | sort -t'|' -k2 -n -r | head -30
    } > "$out/${g}_loads.txt"
    grep "start-up\|cache loads" "$out/${g}_loads.txt"
  fi
  grep -A3 "^| configuration" "$out/${g}_summary.md" | head -6
  grep -A6 "^| configuration" "$out/${g}_summary.md" | tail -3
done
if [ -n "${DRIVER_PROBE:-}" ]; then
  { timeout 300 python3 -m bench.driver_launch_probe dump /tmp/dlp &&
    for rep in 1 2 3; do for busy in 0 0.6; do for way in driver lean numba; do
      timeout 60 python3 -m bench.driver_launch_probe time /tmp/dlp --way $way --busy $busy
    done; done; done; } > "$out/driver_probe.txt" 2>&1
  grep "first result\|^# way\|error" "$out/driver_probe.txt" | head -40
fi
[ -n "${TESTS_LAST:-}" ] && gpu_tests
[ -z "${NO_DC:-}" ] && tar czf "$out/dc.tgz" -C /tmp/dc .    # Numba's cache (.devcache/)
