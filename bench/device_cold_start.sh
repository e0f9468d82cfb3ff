#!/usr/bin/env bash
# Cold start (issue 16) on the GPU machine (device tool), one call, < 4 minutes:
#   bash bench/device_cold_start.sh "$OUT"
# The bundled example (graphs/example.gfa, 200 x 150 bp) with empty caches (fresh
# NUMBA_CACHE_DIR, S2G_CACHE_DIR for the `fast` kernel sources, CUDA_CACHE_PATH), each
# scenario in its own empty caches, then the same command again warm:
#   1. `s2g align` (auto: fast + GPU traceback): first use, compile workers in the background
#   2. `s2g align --variant cpu`: the same on the CPU
#   3. `python -m s2g.warmup` (what an install step runs), then the first `s2g align`
#   4. S2G_PREWARM=0: first use compiling in-process (the old behaviour), for comparison
#      (cut at 100 s)
# Every GAF is compared with the first one. Log: $OUT/cold_start.log.
# SEEDED="GRAPH.gfa READS.fq[.gz]" adds scenario 5: `s2g align --seeded` of those reads
# (the graph copied to an empty /tmp/cold5, so its cache and index are built there) with
# empty caches (cut at 420 s), then warm twice (60 s each; GAF compared with the cold
# run's): its "compiled ahead" line names each task's seconds (seeded, the window
# kernel's fast_kernel, the long_kernel tasks of long reads); ONLY_SEEDED=1 runs scenario
# 5 alone (within the device's 600 s a call), e.g.
#   ONLY_SEEDED=1 SEEDED=".devdata/dev/MHC.gfa .devdata/dev/long10k.fq.gz" bash bench/device_cold_start.sh "$OUT"
set -uo pipefail
. bench/device_env.sh || exit 1
out=$1
log=$out/cold_start.log
mkdir -p "$out"
g=graphs/example.gfa r=graphs/example.fq
{
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null
  lscpu | grep -E "^Model name|^CPU\(s\)" | tr -s ' '
  python3 -c "import numba, numba_cuda; print('numba', numba.__version__, 'numba-cuda', numba_cuda.__version__)"
  date -u +%FT%TZ
  git log --oneline -1 2>/dev/null
} 2>&1 | tee "$log"

fresh() {            # empty caches for one scenario
  local d
  d=$(mktemp -d /tmp/cold.XXXX)
  export NUMBA_CACHE_DIR=$d/numba S2G_CACHE_DIR=$d/kernels CUDA_CACHE_PATH=$d/nv
}

run() {              # run LABEL [env...] -- s2g args...
  local label=$1; shift
  local t0 t1
  t0=$(date +%s%N)
  env "$@" 2>&1 | grep -v "Warn\|warn(" | sed "s/^/  /" | tee -a "$log"
  t1=$(date +%s%N)
  echo "$label: $(( (t1 - t0) / 1000000 )) ms end to end" | tee -a "$log"
}

same() {
  cmp -s "$out/ref.gaf" "$1" && echo "  GAF == scenario 1's" | tee -a "$log" \
    || echo "  GAF DIFFERS from scenario 1's: $1" | tee -a "$log"
}

if [ -z "${ONLY_SEEDED:-}" ]; then
echo "# 1. s2g align (auto), empty caches, then warm" | tee -a "$log"
fresh
run "1 cold auto" python3 -m s2g align $g $r -o "$out/ref.gaf" --timings
ls "$S2G_CACHE_DIR" 2>/dev/null | grep -c '\.py$' | sed 's/^/  fast kernel sources: /' | tee -a "$log"
run "1 warm auto" python3 -m s2g align $g $r -o "$out/a2.gaf" --timings
same "$out/a2.gaf"

echo "# 2. s2g align --variant cpu, empty caches, then warm" | tee -a "$log"
fresh
run "2 cold cpu" python3 -m s2g align $g $r -o "$out/c1.gaf" --timings --variant cpu
run "2 warm cpu" python3 -m s2g align $g $r -o "$out/c2.gaf" --timings --variant cpu
same "$out/c1.gaf"

echo "# 3. python -m s2g.warmup on empty caches, then the first s2g align (auto and cpu)" | tee -a "$log"
fresh
run "3 warmup" python3 -m s2g.warmup
run "3 first auto after warmup" python3 -m s2g align $g $r -o "$out/w1.gaf" --timings
same "$out/w1.gaf"
run "3 first cpu after warmup" python3 -m s2g align $g $r -o "$out/w2.gaf" --timings --variant cpu
same "$out/w2.gaf"

echo "# 4. S2G_PREWARM=0 (compile in-process, as before), empty caches" | tee -a "$log"
fresh
run "4 cold auto in-process" S2G_PREWARM=0 timeout 100 python3 -m s2g align $g $r -o "$out/p1.gaf" --timings
same "$out/p1.gaf"
fi

if [ -n "${SEEDED:-}" ]; then
  read -r sg sr extra <<< "$SEEDED"
  if [ -z "${sr:-}" ] || [ -n "${extra:-}" ] || [ ! -f "$sg" ] || [ ! -f "$sr" ]; then
    echo "SEEDED must name a graph and a reads file, got: $SEEDED" | tee -a "$log" >&2
    exit 2
  fi
  echo "# 5. seeded: s2g align --seeded $sg $sr, empty caches, then warm twice" | tee -a "$log"
  fresh
  rm -rf /tmp/cold5 && mkdir -p /tmp/cold5 && cp "$sg" /tmp/cold5/g.gfa
  run "5 cold seeded" timeout 420 python3 -m s2g align /tmp/cold5/g.gfa "$sr" --seeded \
    -o "$out/s1.gaf" --timings
  for k in 2 3; do
    run "5 warm seeded $k" timeout 60 python3 -m s2g align /tmp/cold5/g.gfa "$sr" --seeded \
      -o "$out/s$k.gaf" --timings
    cmp -s "$out/s1.gaf" "$out/s$k.gaf" && echo "  GAF == the cold run's" | tee -a "$log" \
      || echo "  GAF DIFFERS from the cold run's" | tee -a "$log"
  done
fi
echo "# done $(date -u +%FT%TZ)" | tee -a "$log"
