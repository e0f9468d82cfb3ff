#!/usr/bin/env bash
# `python -m bench.device_choice` on the GPU machine (device tool; issue 42's "auto never
# picks the slower device"): the GPU path, the CPU path and auto on the first N reads of
# each case, N over a range, one table:
#   bash bench/device_choice.sh "$OUT" --case NAME:GRAPH:READS:N1,N2,... [...] [--runs R]
#   (carry: .whl, the graphs, the reads, and .devcache/dc.tgz where there is one)
# Compiled kernels as bench/device_scale_out.sh: .devcache/dc.tgz unpacked first, the cache
# packed into $OUT/cache.tgz at the end (copy it back to .devcache/dc.tgz).
set -uo pipefail
export S2G_DEVICE_CACHE=${S2G_DEVICE_CACHE:-/tmp/devcache}
mkdir -p "$S2G_DEVICE_CACHE"
[ -f .devcache/dc.tgz ] && tar xzf .devcache/dc.tgz -C "$S2G_DEVICE_CACHE"
. bench/device_env.sh || exit 1
out=$1
shift
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
python3 -m bench.device_choice --out "$out/device_choice" "$@" 2>&1 | grep -v "^INFO\|Warn"
tar czf "$out/cache.tgz" -C "$S2G_DEVICE_CACHE" . && ls -la "$out/cache.tgz"
