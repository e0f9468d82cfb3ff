#!/usr/bin/env bash
# A seeded GPU change checked on the GPU machine in ~3 minutes (a short device budget):
#   bash bench/device_quick.sh "$OUT" [CONFIG ...]      (carry .whl .devcache .devdata/bac2)
# 1. tests/seeds_gpu_cudasim_check.py --gpu (the index upload and the chain kernels against
#    the CPU's chains; OUT/check.txt), beside 2. `s2g align` of the 100,000 MHC reads of
#    .devdata/bac2, three times over (300,000: `auto` takes the GPU path; check that each
#    run's --timings says "GPU busy"): a first run (compiles what the carried cache lacks),
#    then each CONFIG (an environment assignment, e.g. S2G_CONFIG=batch_ramp=3; default
#    "X=1 S2G_CONFIG=gpu_preimport=0") in turn, twice; each run's --timings and its GAF's
#    MD5 in OUT/runs.txt (compare with the CPU path's GAF of the same reads, made anywhere:
#    GPU and CPU GAF are byte-identical; EXPECT_MD5=<the CPU GAF's MD5> says OK or DIFFERS
#    for each run; the CPU path's MD5 of the 300,000 reads at session 63's code:
#    654b036552dbf1bd2db326fb4df6e124). OUT/dc.tgz: Numba's cache for .devcache/.
set -uo pipefail
out=$1
shift
mkdir -p /tmp/dc "$out"
[ -f .devcache/dc.tgz ] && [ ! -d /tmp/dc/numba ] && tar xzf .devcache/dc.tgz -C /tmp/dc
export S2G_DEVICE_CACHE=/tmp/dc
. bench/device_env.sh > /dev/null 2>&1 || exit 1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/runs.txt"
env | grep "^PYTHON" >> "$out/runs.txt"   # (PYTHONDONTWRITEBYTECODE: modules compiled every run)
cat /tmp/pyc_state.txt >> "$out/runs.txt" 2>/dev/null
for i in 1 2; do python3 -X importtime -c "import numba.cuda" 2>&1 | tail -1 >> "$out/runs.txt"; done
(timeout 200 python3 tests/seeds_gpu_cudasim_check.py 4 --gpu > "$out/check.txt" 2>&1
 echo "rc=$?" >> "$out/check.txt") &
zcat .devdata/bac2/MHC.gfa.gz > /tmp/quick.gfa
# the reads QUICK_REPEAT (3) times, names suffixed _1.._N as bench/device_align.sh's REPEAT
# does: at 100,000 reads `auto` takes the CPU path on this host (its estimate: CPU 1.2 s,
# GPU 1.7 s with start-up; session 63), at 300,000 the GPU path
for k in $(seq 1 "${QUICK_REPEAT:-3}"); do
  zcat .devdata/bac2/mhc100k.fq.gz | awk -v k="$k" 'NR % 4 == 1 { $1 = $1 "_" k } { print }'
done > /tmp/quick.fq
configs=${*:-X=1 S2G_CONFIG=gpu_preimport=0}
for c in X=first $configs $configs; do
  echo "# $c" >> "$out/runs.txt"
  env "$c" timeout 150 python3 -m s2g align /tmp/quick.gfa /tmp/quick.fq \
    -o /tmp/quick.gaf --timings 2>&1 | grep "s2g:" | grep -v "warning" >> "$out/runs.txt"
  md5sum /tmp/quick.gaf >> "$out/runs.txt"
  if [ -n "${EXPECT_MD5:-}" ]; then
    { md5sum /tmp/quick.gaf | grep -q "^$EXPECT_MD5 " && echo "# GAF OK (the CPU's)" ||
      echo "# GAF DIFFERS from the CPU's"; } >> "$out/runs.txt"
  fi
done
wait
tail -2 "$out/check.txt"
grep "^#\|wall\|start-up\|GPU busy\|quick.gaf\|bytecode\|import time\|^PYTHON" "$out/runs.txt"
tar czf "$out/dc.tgz" -C /tmp/dc .
