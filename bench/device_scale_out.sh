#!/usr/bin/env bash
# `s2g bench scale_out` on the GPU machine (device tool; issue 44): one process against
# Dask clusters of 1 .. all GPUs, same reads, one table (bench/scale_out.py), e.g. on
# nvidia-h200-x2 / -x4:
#   bash bench/device_scale_out.sh "$OUT" GRAPH.gfa READS.fq.gz [scale_out options...]
#   (carry: .whl, .whld, the graph, the reads, and .devcache/dc.tgz where there is one)
# Wheels: .whl/ (../shared/device/wheels.sh) and, where the machine's Python has no
# `distributed`, .whld/ (distributed, dask and their dependencies for Python 3.12:
# `pip download --only-binary=:all: --python-version 3.12 ... -d .whld distributed==2026.8.0
# dask==2026.8.0 cloudpickle toolz msgpack tornado sortedcontainers tblib zict psutil partd
# locket fsspec importlib_metadata zipp click jinja2 markupsafe pyyaml packaging`).
# Compiled kernels: .devcache/dc.tgz (a tar of a previous call's cache, $OUT/cache.tgz,
# copied back here) is unpacked into S2G_DEVICE_CACHE first, and the cache is packed into
# $OUT/cache.tgz at the end (a cold first run compiles for ~100 s; from the cache ~25 s).
# Options after READS go to scale_out (default: --repeat 10 --runs 2).
set -uo pipefail
export S2G_DEVICE_CACHE=${S2G_DEVICE_CACHE:-/tmp/devcache}
mkdir -p "$S2G_DEVICE_CACHE"
[ -f .devcache/dc.tgz ] && tar xzf .devcache/dc.tgz -C "$S2G_DEVICE_CACHE"
. bench/device_env.sh || exit 1
out=$1 graph=$2 reads=$3
shift 3
[ $# -gt 0 ] || set -- --repeat 10 --runs 2
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
python3 -m bench.scale_out --graph "$graph" --reads "$reads" --out "$out/scale_out" "$@" \
  2>&1 | grep -v "^INFO\|Warn"
tar czf "$out/logs.tgz" -C "$out/scale_out" logs && rm -rf "$out/scale_out/logs"
tar czf "$out/cache.tgz" -C "$S2G_DEVICE_CACHE" . && ls -la "$out/cache.tgz"
