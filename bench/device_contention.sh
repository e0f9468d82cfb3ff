#!/usr/bin/env bash
# Do the GPU path's pipeline stages slow each other down (issue #42, session 56's question)?
# One device call (device tool), both real graphs of .devdata/bac2/ (carry it with .whl and
# .devcache):
#   bash bench/device_contention.sh "$OUT"
# For MHC and M. bovis, 1,000,000 x 150 bp reads (REPEAT=10 of the carried 100,000), warm:
# the default pipeline and `S2G_CONFIG=serial_stages=1` (a batch's align, traceback, GAF-text
# and write stages one after another in one thread), twice each, interleaved, with the GIL
# probe and the stage log on (bench/device_align.sh, CPU=0), and `gpu_pack_uploads=1` (a
# traceback chunk's small inputs in one upload, outputs in one download). Compare the
# serial runs' "seconds per stage" with the threaded runs': if a stage takes much longer
# when the others run beside it, the stages contend (the GIL, by the probe's numbers) and
# fewer GIL round trips per batch is the lever (the packed runs: a first such step). Writes OUT/<graph>_summary.md (medians and every run's
# --timings lines) and OUT/<graph>_stages.log (the first threaded run's stage log).
set -uo pipefail
out=$1
export S2G_DEVICE_CACHE=/tmp/dc
mkdir -p /tmp/dc /tmp/g "$out"
[ -f .devcache/dc.tgz ] && tar xzf .devcache/dc.tgz -C /tmp/dc
T="S2G_CONFIG=gil_probe=1,stage_log=1"
S="S2G_CONFIG=gil_probe=1,serial_stages=1"
P="S2G_CONFIG=gil_probe=1,gpu_pack_uploads=1"   # fewer driver calls a traceback chunk
for pair in MHC:mhc100k Mbovis:Mbovis100k; do
  g=${pair%%:*} r=${pair##*:}
  zcat ".devdata/bac2/$g.gfa.gz" > "/tmp/g/$g.gfa" || exit 1
  rm -rf "/tmp/ct/$g"
  CPU=0 REPEAT=10 ALIGN_TIMEOUT=120 ENVS="$T $S $P $T $S $P" bash bench/device_align.sh \
    "/tmp/ct/$g" "/tmp/g/$g.gfa" ".devdata/bac2/$r.fq.gz" > "/tmp/ct_$g.out" 2>&1
  cp "/tmp/ct/$g/summary.md" "$out/${g}_summary.md"
  grep "^s2g: stage " "/tmp/ct/$g/env_1.log" > "$out/${g}_stages.log"
  { grep -h "^# env\|GIL probe\|seconds per stage" /tmp/ct/$g/env_*.log | cut -c1-220; } \
    | tee -a "$out/contention.txt"
done
