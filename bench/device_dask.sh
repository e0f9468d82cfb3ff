#!/usr/bin/env bash
# `s2g align --dask` against one process, same reads, same run, on the GPU machine (device
# tool; issue 44):
#   bash bench/device_dask.sh "$OUT" GRAPH.gfa READS.fq.gz [s2g align options...]
# One process: `s2g align GRAPH READS --timings` once cold (compiles what is not cached),
# then RUNS times (default 2). Then for each cluster size k in WORKERS (default: 1 up to
# the GPUs here; a word K:A=1+B=2 gives the workers those variables): a Dask scheduler
# and k workers started apart (one GPU each,
# CUDA_VISIBLE_DEVICES; NUMBA_NUM_THREADS = vCPUs / k, the cores shared), as a cluster a
# user keeps running; `s2g align --dask SCHEDULER_FILE` once to warm the workers (graph,
# index, kernels), then RUNS times; each GAF compared with the one process's. Last,
# `--dask local` once at the largest k (a cluster started and stopped by the command).
# REPEAT=N: the reads N times over (names suffixed _1.._N, as bench/device_align.sh).
# KNOBS="a=1 b=2,c=3": also one run per cluster per word, with S2G_CONFIG set to it on the
# client (e.g. dask_parts=0: the client sends chunks of reads, the way before parts).
# The Numba cache and kernel files go to $S2G_DEVICE_CACHE where set (bench/device_env.sh);
# CACHE_OUT=1 packs it into $OUT/cache.tgz at the end (carry it back as .devcache/).
# Logs in $OUT as each step ends, each with `# process wall S s`; ALIGN_TIMEOUT seconds a
# step (default 240). Without a GPU (CPU workers, for trying the script): WORKERS is
# required and the runs take `-v simd`.
# Needs `distributed`: where the Python has none, carry .whld/ (bench/device_env.sh).
set -uo pipefail
. bench/device_env.sh || exit 1
out=$1 graph=$2 reads=$3
shift 3
mkdir -p "$out" /tmp/dd
cp "$graph" /tmp/dd/g.gfa
python3 -m s2g index /tmp/dd/g.gfa > "$out/index.log" 2>&1 || { cat "$out/index.log"; exit 1; }
if [ "${REPEAT:-1}" -gt 1 ]; then
  for k in $(seq 1 "$REPEAT"); do
    zcat -f "$reads" | awk -v k="$k" 'NR % 4 == 1 { $1 = $1 "_" k } { print }'
  done > /tmp/dd/reads.fq
else
  zcat -f "$reads" > /tmp/dd/reads.fq
fi
reads=/tmp/dd/reads.fq
ngpu=$(nvidia-smi -L 2>/dev/null | grep -c "^GPU")
cpus=$(nproc)
extra=()
[ "$ngpu" = 0 ] && extra=(-v simd)
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null
  lscpu | grep -E "^Model name|^CPU\(s\)" | tr -s ' '; date -u +%FT%TZ
  python3 -c "import distributed; print('distributed', distributed.__version__)"
  echo "# reads $(($(wc -l < "$reads") / 4)); s2g align g.gfa reads.fq --timings $* ${extra[*]}"
} | tee "$out/device.log"
t=${ALIGN_TIMEOUT:-240}
runs=${RUNS:-2}

step() {        # step NAME ARGS...: one timed `s2g align` into $out/NAME.log
  local name=$1
  shift
  echo "# run $name" > "$out/$name.log"
  local t0
  t0=$(date +%s.%N)
  env ${STEP_ENV:-} timeout "$t" python3 -m s2g align /tmp/dd/g.gfa "$reads" -o "/tmp/dd/$name.gaf" --timings \
    --no-progress "$@" "${extra[@]}" >> "$out/$name.log" 2>&1
  echo "# process wall $(awk -v a="$t0" -v b="$(date +%s.%N)" \
    'BEGIN { printf "%.2f", b - a }') s" >> "$out/$name.log"
  grep -h "reads/s\|process wall" "$out/$name.log" | sed "s/^/$name: /"
  if [ "$name" != single_cold ] && [ -f /tmp/dd/single_cold.gaf ]; then
    cmp -s "/tmp/dd/$name.gaf" /tmp/dd/single_cold.gaf && echo "$name: GAF identical" \
      || echo "$name: GAF DIFFERS"
  fi
  [ "$name" != single_cold ] && rm -f "/tmp/dd/$name.gaf"
}

step single_cold "$@"
for r in $(seq 1 "$runs"); do step "single_$r" "$@"; done
v=0
for e in ${SINGLE_ENVS:-}; do     # SINGLE_ENVS="A=1+B=2 ...": one more run per word
  v=$((v + 1))
  echo "# single_env$v: $e" | tee -a "$out/device.log"
  STEP_ENV=$(echo "$e" | tr '+' ' ') step "single_env$v" "$@"
done

sizes=${WORKERS:-$(seq 1 "$ngpu")}
last=1
for kw in $sizes; do
  k=${kw%%:*}
  wenv=""
  [ "$kw" != "$k" ] && wenv=$(echo "${kw#*:}" | tr '+' ' ')
  last=$k
  sched=/tmp/dd/sched_$k.json
  rm -f "$sched"
  python3 -m distributed.cli.dask_scheduler --scheduler-file "$sched" --no-dashboard \
    --port 0 > "$out/scheduler_$k.log" 2>&1 &
  pids=($!)
  for _ in $(seq 1 60); do [ -s "$sched" ] && break; sleep 0.5; done
  for i in $(seq 0 $((k - 1))); do
    dev=$i
    [ "$ngpu" = 0 ] && dev=""
    env $wenv CUDA_VISIBLE_DEVICES=$dev NUMBA_NUM_THREADS=$((cpus / k)) \
      python3 -m distributed.cli.dask_worker --scheduler-file "$sched" --nthreads 1 \
      --nworkers 1 --no-dashboard --memory-limit 0 > "$out/worker_${k}_$i.log" 2>&1 &
    pids+=($!)
  done
  python3 -c "import distributed, sys
c = distributed.Client(scheduler_file='$sched', timeout=120); c.wait_for_workers($k, timeout=120)
print('$k worker(s) $wenv:', sorted(c.nthreads().items()))
def probe():   # what a fresh worker has loaded before any s2g task (CUDA, Numba)
    import os, sys
    return (sorted(m for m in sys.modules if m.split('.')[0] in ('numba', 'cuda', 's2g'))[:8],
            {k: v for k, v in os.environ.items() if 'PER_THREAD' in k or 'MALLOC' in k})
print('fresh worker:', list(c.run(probe).values())[0])" || { echo "cluster of $k did not start"; continue; }
  c=$k${wenv:+_$(echo "$wenv" | tr -c 'A-Za-z0-9_=\n' '_' | cut -c1-40)}
  step "dask${c}_warmup" --dask "$sched" "$@"
  for r in $(seq 1 "$runs"); do step "dask${c}_$r" --dask "$sched" "$@"; done
  v=0
  for knobs in ${KNOBS:-}; do
    v=$((v + 1))
    echo "# dask${c}_knobs$v: S2G_CONFIG=$knobs" | tee -a "$out/device.log"
    STEP_ENV="S2G_CONFIG=$knobs" step "dask${c}_knobs$v" --dask "$sched" "$@"
  done
  kill "${pids[@]}" 2>/dev/null
  wait 2>/dev/null
done
[ "$ngpu" -gt 0 ] && [ -z "${NO_LOCAL:-}" ] &&
  step "dask_local$last" --dask local --dask-workers "$last" "$@"
[ -n "${CACHE_OUT:-}" ] && [ -n "${S2G_DEVICE_CACHE:-}" ] &&
  tar czf "$out/cache.tgz" -C "$S2G_DEVICE_CACHE" . && ls -la "$out/cache.tgz"
exit 0
