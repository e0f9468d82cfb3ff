#!/usr/bin/env bash
# Paired-end reads on the GPU machine (device tool), one call: carried wheels
# (bench/device_env.sh), the GPU pair test (GPU windows == CPU windows, field for field;
# PAIRS_TESTS=0 skips it), then `python3 -m bench.pairs --device gpu` with this script's
# arguments after the output directory; logs written as each step goes (a call cut at
# its time limit still returns them), PAIRS_TIMEOUT seconds for the bench (default 400).
#   bash bench/device_pairs.sh "$OUT" --graph rep:2000000 --pairs 200000
set -uo pipefail
. bench/device_env.sh || exit 1
out=$1
shift
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/device.log"
if [ "${PAIRS_TESTS:-1}" != 0 ]; then
  timeout 240 python3 -m pytest -m gpu -q -p no:cacheprovider -p bench.pytest_timer \
    tests/test_pairs.py > "$out/gpu_pairs_tests.log" 2>&1
  tail -4 "$out/gpu_pairs_tests.log"
fi
timeout "${PAIRS_TIMEOUT:-400}" python3 -m bench.pairs --device gpu --out "$out" "$@" \
  > "$out/pairs.log" 2>&1
grep -v "Warn\|warn(" "$out/pairs.log" | tail -4
