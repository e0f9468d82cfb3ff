#!/usr/bin/env bash
# Seeded alignment on the GPU machine (device tool), one call: carried wheels on
# PYTHONPATH (../shared/device/README.md), then `python3 -m bench.seeded` with this
# script's arguments after the output directory.
#   bash bench/device_seeded.sh "$OUT" --device gpu --full-variant fast --graph ... [--e2e]
set -uo pipefail
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=$PWD:/tmp/site PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
lscpu | grep -E "^Model name|^CPU\(s\)" | tr -s ' '
out=$1
shift
python3 -m bench.seeded --out "$out" "$@"
