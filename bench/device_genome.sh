#!/usr/bin/env bash
# Genome-scale graphs on the GPU machine (issue #42: ">= 1 Gbp simulated pangenome graph on
# the GPU machine ... reads/s not falling with graph size"). Two device calls on one warm
# machine (the graphs stay in .devdata/gs, ignored by git, between calls of one machine):
#   STEP=build SIZES="100000000 1000000000" bash bench/device_genome.sh "$OUT"
#   STEP=align SIZES="100000000 1000000000" bash bench/device_genome.sh "$OUT"
# build: `s2g simulate .devdata/gs/gN --total-bases N --node-len 1000 --reads $READS --seed 3`
#   (READS: 1,000,000 x 150 bp) and `s2g index gN.gfa`, each timed (/usr/bin/time -v: peak
#   memory, where the machine has it), OUT/build.log.
# align: per size, `s2g align gN.gfa gN.fq -o gN.gaf --timings` RUNS (3) times (the first
#   writes the graph cache and loads what Numba's cache lacks), then once more with
#   `--variant simd` (CPU only, every vCPU) unless CPU=0, GAF compared; OUT/align_N.log.
# Carry .whl and .devcache (Numba's cache; packed back into OUT/dc.tgz).
set -uo pipefail
out=$1
mkdir -p "$out" .devdata/gs /tmp/dc
export S2G_DEVICE_CACHE=/tmp/dc
[ -f .devcache/dc.tgz ] && [ ! -d /tmp/dc/numba ] && tar xzf .devcache/dc.tgz -C /tmp/dc
. bench/device_env.sh || exit 1
d=.devdata/gs
timed() {                       # timed LOG CMD...: wall and peak memory of CMD into LOG
  local log=$1; shift
  echo "# $*" >> "$log"
  if [ -x /usr/bin/time ]; then
    /usr/bin/time -v "$@" >> "$log" 2> "$log.err"; local rc=$?
    sed '/^\tCommand being timed/,$d' "$log.err" | grep -v "Warn\|warn(" >> "$log"
    grep -E "Elapsed|Maximum resident" "$log.err" >> "$log"
  else
    local t0; t0=$(date +%s.%N)
    "$@" >> "$log" 2>&1; local rc=$?
    echo "# wall $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s" >> "$log"
  fi
  return $rc
}
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null
  lscpu | grep -E "^Model name|^CPU\(s\)" | tr -s ' '; free -g | head -2; date -u +%FT%TZ; } \
  | tee -a "$out/device.log"
for n in ${SIZES:-100000000 1000000000}; do
  g=$d/g$n
  if [ "${STEP:-build}" = build ]; then
    [ -f "$g.fq" ] || timed "$out/build.log" python3 -m s2g simulate "$g" --total-bases "$n" \
      --node-len 1000 --reads "${READS:-1000000}" --seed 3 || exit 1
    timed "$out/build.log" python3 -m s2g index "$g.gfa" || exit 1
    ls -l "$g".* >> "$out/build.log"
    tail -12 "$out/build.log"
  else
    log=$out/align_$n.log
    for run in $(seq "${RUNS:-3}"); do
      echo "# run $run" >> "$log"
      timed "$log" timeout "${ALIGN_TIMEOUT:-240}" python3 -m s2g align "$g.gfa" "$g.fq" \
        -o "/tmp/g$n.gaf" --timings
      grep "reads/s\|start-up\|per stage\|GPU busy\|memory" "$log" | tail -5
    done
    if [ "${CPU:-1}" != 0 ]; then
      echo "# run cpu" >> "$log"
      timed "$log" timeout "${ALIGN_TIMEOUT:-240}" python3 -m s2g align "$g.gfa" "$g.fq" \
        -o "/tmp/g${n}_cpu.gaf" --timings --variant simd
      { cmp -s "/tmp/g$n.gaf" "/tmp/g${n}_cpu.gaf" && echo "# GAF identical (GPU, CPU)" ||
        echo "# GAF DIFFERS (GPU, CPU)"; } | tee -a "$log"
      grep "reads/s" "$log" | tail -1
    fi
  fi
done
tar czf "$out/dc.tgz" -C /tmp/dc .
