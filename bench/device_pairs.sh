#!/usr/bin/env bash
# Paired-end reads on the GPU machine (device tool), one call: carried wheels on
# PYTHONPATH (../shared/device/README.md), the GPU pair test (GPU windows == CPU windows,
# field for field), then `python3 -m bench.pairs --device gpu` with this script's
# arguments after the output directory.
#   bash bench/device_pairs.sh "$OUT" --graph rep:2000000 --pairs 200000
set -uo pipefail
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=$PWD:/tmp/site PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$1/device.log"
out=$1
shift
timeout 240 python3 -m pytest -m gpu -q -p no:cacheprovider -p bench.pytest_timer \
  tests/test_pairs.py 2>&1 | grep -v "Warn\|warn(" | tail -8 | tee "$out/gpu_pairs_tests.log"
python3 -m bench.pairs --device gpu --out "$out" "$@" 2>&1 | grep -v "Warn\|warn(" | tail -8
