#!/usr/bin/env bash
# Seeded long reads on one graph under several configurations (issue 45), one device call:
#   bash bench/device_long_configs.sh OUT GRAPH READS CONFIG [CONFIG...]
# e.g. bash bench/device_long_configs.sh "$OUT" .devdata/MHC.gfa .devdata/long1000.fq.gz \
#        - long_score_first=0 long_chunk_bytes=6000000000
# CONFIG is an S2G_CONFIG string ("-": the defaults), optionally "@OTHER_READS" after it
# (that run aligns OTHER_READS instead; GAFs are compared among runs of the same reads),
# e.g. long_log=1@.devdata/long300_30k.fq.gz. The graph (with its .s2gg/.s2gi where
# carried; the index is built there otherwise, timed) is copied to /tmp/s2g-long-configs,
# a 100-read warm-up runs first (kernels compiled, caches loaded), then
# `S2G_CONFIG=CONFIG s2g align GRAPH READS --seeded --timings` per config, its stderr in
# $OUT/<k>.log (k = 1, 2, ...), every GAF compared with the first config's (md5 in
# $OUT/summary.log, which also gets each run's summary lines and the device's name), then
# python -m bench.warm_probe (which compile-ahead tasks a further run would start).
set -uo pipefail
if [ $# -lt 4 ]; then
  echo "usage: bash bench/device_long_configs.sh OUT GRAPH READS CONFIG [CONFIG...]" >&2
  exit 2
fi
. bench/device_env.sh || exit 1
out=$(realpath -m "$1"); graph=$2; reads=$3; shift 3
mkdir -p "$out"
tmp=/tmp/s2g-long-configs
mkdir -p "$tmp"
g=$tmp/$(basename "$graph")
for ext in "" .s2gg .s2gi; do
  [ -f "$graph$ext" ] && [ ! -f "$g$ext" ] && cp "$graph$ext" "$g$ext"
done
sum=$out/summary.log
{
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null || echo "no nvidia-smi"
  lscpu | grep -E "^Model name|^CPU\(s\)" | tr -s ' '
  date -u +%FT%TZ
  git log -1 --format='commit %H' 2>/dev/null || true
  echo "graph $graph, reads $reads; configs: $*"
} | tee "$sum"
if [ ! -f "$g.s2gi" ]; then
  /usr/bin/time -f "index built in %e s, %M KB" python3 -m s2g index "$g" 2>&1 | tail -2 | tee -a "$sum"
fi
(zcat -f "$reads" | head -400) > "$tmp/warm.fq"
t0=$(date +%s)
python3 -m s2g align "$g" "$tmp/warm.fq" --seeded --timings -o "$tmp/warm.gaf" > "$out/warmup.log" 2>&1
echo "warm-up (100 reads): exit $?, $(( $(date +%s) - t0 )) s" | tee -a "$sum"
k=0
declare -A refs
for cfg in "$@"; do
  k=$((k + 1))
  c=${cfg%%@*}; [ "$c" = "-" ] && c=
  r=$reads; [ "$cfg" != "${cfg#*@}" ] && r=${cfg#*@}
  S2G_CONFIG=$c python3 -m s2g align "$g" "$r" --seeded --timings -o "$tmp/$k.gaf" \
    > "$out/$k.log" 2>&1
  rc=$?
  md=$(md5sum < "$tmp/$k.gaf" | cut -c1-12)
  key=$(echo "$r" | md5sum | cut -c1-8)
  ref=${refs[$key]:-}
  [ -z "$ref" ] && { ref=$md; refs[$key]=$md; }
  same=identical; [ "$md" != "$ref" ] && same=DIFFERENT
  {
    echo "== $k: S2G_CONFIG=${c} reads $r: exit $rc, GAF $md ($same to the first run of these reads)"
    grep -E "reads/s|seconds per stage|align stage|GPU buffers|long-window kernel|GPU busy|compiled ahead" "$out/$k.log"
  } | tee -a "$sum"
done
python3 -m bench.warm_probe --variant fast --seeded --read-len 10000 2>&1 | tee -a "$sum"
