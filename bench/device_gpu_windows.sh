#!/usr/bin/env bash
# Seeded GPU windows A/B on the GPU machine (device tool), one call: carried wheels
# (bench/device_env.sh), the GPU window test, then `python3 -m bench.gpu_windows` with this
# script's arguments after the output directory; every step's log written as it goes.
#   bash bench/device_gpu_windows.sh "$OUT" --graph .devdata/MHC.gfa --reads 100000
set -uo pipefail
. bench/device_env.sh || exit 1
out=$1
shift
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; git log -1 --format=%h 2>/dev/null; } | tee "$out/device.log"
timeout 200 python3 -m pytest -m gpu -q -p no:cacheprovider -p bench.pytest_timer \
  tests/test_window.py > "$out/gpu_tests.log" 2>&1
tail -4 "$out/gpu_tests.log"
timeout "${GW_TIMEOUT:-330}" python3 -m bench.gpu_windows --out "$out" "$@" > "$out/bench.log" 2>&1
tail -14 "$out/bench.log"
