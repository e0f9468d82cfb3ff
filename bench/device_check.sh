#!/usr/bin/env bash
# The GPU machine's check after a kernel change, in one device call:
#   bash bench/device_check.sh "$OUT" [test files for pytest -m gpu; default: tests]
# Carried wheels on PYTHONPATH (../shared/device/README.md), then `pytest -m gpu`, the
# `fast` kernel's benchmark (checked against the CPU oracle before timing), and end to end
# on 100,000 simulated 150 bp reads of a 100 kbp SNP graph: two warm-up-then-timed runs
# with the traceback on the GPU, one on the CPU, their GAF compared. Seeded alignment has
# its own script (bench/device_seeded.sh). Logs in $OUT.
set -uo pipefail
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=$PWD:/tmp/site PYTHONUNBUFFERED=1
out=$1
shift
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/device.log"
timeout 300 python3 -m pytest -m gpu -q -p no:cacheprovider "${@:-tests}" 2>&1 \
  | tee "$out/gpu_tests.log" | tail -15
timeout 200 python3 -m bench.fast --out "$out" --skip-random 2>&1 | grep -v "Warn\|warn(" \
  | tee "$out/fast_bench.log" | tail -20
T=/tmp/s2g-e2e
mkdir -p $T
python3 -m s2g simulate $T/snp --total-bases 100000 --reads 100000 --seed 1 >/dev/null
for k in 1 2; do
  python3 -m s2g align $T/snp.gfa $T/snp.fq -o $T/gpu$k.gaf --variant fast --exact --timings
done 2>&1 | grep -v "Warn\|warn(" | tee "$out/e2e.log"
python3 -m s2g align $T/snp.gfa $T/snp.fq -o $T/cpu.gaf --variant fast --exact --timings \
  --traceback-on cpu 2>&1 | grep -v "Warn\|warn(" | tee -a "$out/e2e.log"
cmp $T/gpu2.gaf $T/cpu.gaf && echo "GAF identical, traceback on GPU and CPU" | tee -a "$out/e2e.log"
