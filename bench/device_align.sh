#!/usr/bin/env bash
# `s2g align` on a given graph and reads, GPU against CPU only, on the GPU machine (device
# tool), one call:
#   bash bench/device_align.sh "$OUT" GRAPH.gfa READS.fq.gz [s2g align options...]
# Runs `s2g align GRAPH READS --timings` with the machine's default (the GPU path) twice
# (the first compiles what is not cached; the second is the one to read), then once with
# `--variant simd` (CPU only, every vCPU), and compares the GAF of the GPU and CPU runs.
# Each step's log goes to $OUT as it ends (a call cut at its limit still returns them);
# ALIGN_TIMEOUT seconds a step (default 240). Options by environment: REPEAT=N aligns the
# reads N times over (one FASTQ, each copy's names suffixed _1.._N: 200,000 carried reads
# make a 1,000,000-read run); PROFILE=1 runs a third time under py-spy (a wheel in
# .whlx/, as bench/device_profile.sh; OUT/gpu_prof.txt; PYSPY_ARGS=--gil: only where the
# GIL is held); CPU=0 skips the CPU-only run;
# WARM_PROBE=1 prints which compile-ahead tasks a further run would start
# (bench.warm_probe; reads of PROBE_LEN bases, default 150) after the warm run;
# ENVS="A=1 B=2+C=3" runs the warm run again once per word with that word's variables set ('+' between several; OUT/env_<k>.log, GAF
# compared with the warm run's), e.g. threading layers or S2G_CONFIG knobs; a word given
# several times, interleaved with others (R="X=1 A=1 B=1"; ENVS="$R $R $R"), gives
# repeated runs, summarized by `python -m bench.env_medians OUT/*.log` (median per word).
# A part `ARGS=--opt,value` of a word adds `--opt value` to that run's command line
# (ENVS="ARGS=--batch-size,100000 X=1").
# Each log ends with `# process wall S s` (the command's own wall: imports, CUDA start).
# At the end (also when a step fails) OUT/summary.md gathers what the logs say: the
# per-configuration medians (bench.env_medians) and every run's --timings lines, so that
# one file can come back where a call returns at most 8 (give OUT under /tmp and copy
# OUT/summary.md to the device's $OUT).
set -uo pipefail
. bench/device_env.sh || exit 1
out=$1 graph=$2 reads=$3
shift 3
mkdir -p "$out" /tmp/da
summary() {
  { echo "# device_align.sh summary"; cat "$out/device.log" 2>/dev/null; echo
    python3 -m bench.env_medians "$out"/*.log 2>&1; echo
    for f in "$out"/*.log; do
      [ "$(basename "$f")" = device.log ] && continue
      echo "## $(basename "$f")"
      grep -v "Warn\|warn(" "$f" | grep "^# env\|^s2g: \|^# process wall\|GAF" | cut -c1-400
    done; } > "$out/summary.md" 2>&1
}
trap summary EXIT
cp "$graph" /tmp/da/g.gfa        # the graph cache and index are written beside the GFA
if [ "${REPEAT:-1}" -gt 1 ]; then
  for k in $(seq 1 "$REPEAT"); do
    zcat -f "$reads" | awk -v k="$k" 'NR % 4 == 1 { $1 = $1 "_" k } { print }'
  done > /tmp/da/reads.fq
  reads=/tmp/da/reads.fq
fi
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null
  lscpu | grep -E "^Model name|^CPU\(s\)" | tr -s ' '; date -u +%FT%TZ
  echo "# s2g align $graph $reads --timings $*"; } | tee "$out/device.log"
t=${ALIGN_TIMEOUT:-240}
runs="gpu_cold gpu_warm"
[ -n "${PROFILE:-}" ] && runs="$runs gpu_prof"
for run in $runs; do
  spy=()
  if [ "$run" = gpu_prof ]; then
    python3 -m pip install -q --no-index --no-deps --target /tmp/pyspy .whlx/py_spy*.whl &&
      spy=(/tmp/pyspy/bin/py-spy record --threads --idle --nonblocking --format speedscope
           -r 200 ${PYSPY_ARGS:-} -o "$out/$run.json" --)
  fi
  echo "# run $run" > "$out/$run.log"      # (bench/env_medians.py reads it)
  t0=$(date +%s.%N)
  timeout "$t" "${spy[@]}" python3 -m s2g align /tmp/da/g.gfa "$reads" -o "/tmp/da/$run.gaf" \
    --timings "$@" >> "$out/$run.log" 2>&1
  echo "# process wall $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }') s" >> "$out/$run.log"
  grep -v "Warn\|warn(" "$out/$run.log" | tail -7
done
[ -f "$out/gpu_prof.json" ] && python3 -m bench.pyspy_summary "$out/gpu_prof.json" \
  > "$out/gpu_prof.txt" 2>&1
[ -n "${WARM_PROBE:-}" ] && python3 -m bench.warm_probe --seeded --read-len "${PROBE_LEN:-150}" \
  | tee "$out/warm_probe.log"
k=0
for spec in ${ENVS:-}; do
  k=$((k + 1))
  echo "# env $spec" | tee "$out/env_$k.log"
  t0=$(date +%s.%N)
  vars=$(echo "$spec" | tr '+' '\n' | grep -v '^ARGS=' | tr '\n' ' ')
  more=$(echo "$spec" | tr '+' '\n' | grep '^ARGS=' | sed 's/^ARGS=//' | tr ',' ' ')
  env $vars timeout "$t" python3 -m s2g align /tmp/da/g.gfa "$reads" \
    -o /tmp/da/env.gaf --timings "$@" $more >> "$out/env_$k.log" 2>&1
  echo "# process wall $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }') s" >> "$out/env_$k.log"
  grep -v "Warn\|warn(" "$out/env_$k.log" | grep "reads/s\|per stage\|threading"
  { cmp -s /tmp/da/env.gaf /tmp/da/gpu_warm.gaf && echo "# GAF identical to gpu_warm" ||
    echo "# GAF DIFFERS from gpu_warm"; } | tee -a "$out/env_$k.log"
done
[ "${CPU:-1}" = 0 ] && exit 0
timeout "$t" python3 -m s2g align /tmp/da/g.gfa "$reads" -o /tmp/da/cpu.gaf --timings \
  --variant simd "$@" > "$out/cpu.log" 2>&1
grep -v "Warn\|warn(" "$out/cpu.log" | tail -4
cmp /tmp/da/gpu_warm.gaf /tmp/da/cpu.gaf && echo "GAF identical (GPU, CPU)" | tee "$out/cmp.log"
