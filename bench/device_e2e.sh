#!/usr/bin/env bash
# End to end `s2g align` (FASTQ -> GAF, traceback, MAPQ) on a simulated graph, on the GPU
# machine (device tool), one call:
#   bash bench/device_e2e.sh "$OUT" TOTAL_BASES NODE_LEN READS RUNS [s2g align options...]
# e.g. bash bench/device_e2e.sh "$OUT" 100000000 1000 1000000 2 --variant fast --seeded
# Simulates the graph and reads (s2g simulate, seed 3), builds the seed index when the
# options include --seeded, then runs `s2g align ... --timings` RUNS times (the first
# compiles what is not cached yet; WARM_READS=N: an untimed run on the first N reads
# first; REPEAT=C: the reads file holds C renamed copies of the simulated reads, which
# costs less device time than simulating C times as many) and compares the GAF of the
# runs. Log: $OUT/e2e.log.
set -uo pipefail
. bench/device_env.sh || exit 1
out=$1 bases=$2 nodelen=$3 reads=$4 runs=$5
shift 5
log=$out/e2e.log
mkdir -p "$out"
{
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null
  lscpu | grep -E "^Model name|^CPU\(s\)" | tr -s ' '
  date -u +%FT%TZ
  echo "# s2g simulate /tmp/e2e/g --total-bases $bases --node-len $nodelen --reads $reads --seed 3"
} | tee "$log"
mkdir -p /tmp/e2e
key=/tmp/e2e/made.$bases.$nodelen.$reads     # a second call in the same lease reuses them
if [ ! -e "$key" ]; then
  rm -f /tmp/e2e/made.* /tmp/e2e/g.gfa.s2gi
  t=$(date +%s%N)
  python3 -m s2g simulate /tmp/e2e/g --total-bases "$bases" --node-len "$nodelen" --reads "$reads" \
    --seed 3 >/dev/null || exit 1
  echo "simulate: $(( ($(date +%s%N) - t) / 1000000 )) ms" | tee -a "$log"
  touch "$key"
fi
if [ "${REPEAT:-1}" -gt 1 ] && [ ! -e /tmp/e2e/g.fq.$REPEAT ]; then   # more reads, cheaply:
  for c in $(seq 1 "$REPEAT"); do                # REPEAT renamed copies of the simulated reads
    awk -v c="$c" 'NR % 4 == 1 {print $1 "_" c; next} {print}' /tmp/e2e/g.fq
  done > /tmp/e2e/rep.fq && mv /tmp/e2e/rep.fq /tmp/e2e/g.fq && touch /tmp/e2e/g.fq.$REPEAT
  echo "reads: $REPEAT renamed copies of the $reads simulated reads" | tee -a "$log"
fi
if [[ " $* " == *" --seeded "* ]] && [ ! -e /tmp/e2e/g.gfa.s2gi ]; then
  t=$(date +%s%N)
  python3 -m s2g index /tmp/e2e/g.gfa 2>&1 | tail -2 | tee -a "$log"
  echo "index: $(( ($(date +%s%N) - t) / 1000000 )) ms" | tee -a "$log"
fi
if [ -n "${WARM_READS:-}" ]; then       # compile (cache) on a few reads first, untimed
  head -n $((4 * WARM_READS)) /tmp/e2e/g.fq > /tmp/e2e/w.fq
  echo "# warm-up: s2g align on the first $WARM_READS reads" | tee -a "$log"
  python3 -m s2g align /tmp/e2e/g.gfa /tmp/e2e/w.fq -o /tmp/e2e/w.gaf --timings "$@" 2>&1 \
    | grep -v "Warn\|warn(" | tee -a "$log"
fi
for i in $(seq 1 "$runs"); do
  echo "# run $i: s2g align g.gfa g.fq -o o$i.gaf --timings $*" | tee -a "$log"
  python3 -m s2g align /tmp/e2e/g.gfa /tmp/e2e/g.fq -o /tmp/e2e/o$i.gaf --timings "$@" 2>&1 \
    | grep -v "Warn\|warn(" | tee -a "$log"
  if [ "$i" -gt 1 ]; then
    cmp /tmp/e2e/o1.gaf /tmp/e2e/o$i.gaf && echo "GAF of run $i == run 1" | tee -a "$log"
  fi
done
wc -l /tmp/e2e/o1.gaf | tee -a "$log"
awk -F'\t' '$12 >= 30' /tmp/e2e/o1.gaf | wc -l | sed 's/^/MAPQ>=30 lines: /' | tee -a "$log"
