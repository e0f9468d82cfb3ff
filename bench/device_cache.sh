#!/usr/bin/env bash
# The compiled-kernel caches of a GPU machine, kept across its fresh starts (device tool):
#   bash bench/device_cache.sh save OUT/kernels.tgz      # at the end of a call
#   bash bench/device_cache.sh restore .devcache/kernels.tgz   # at the start of the next
# Each call may get a fresh machine, which compiles the fast and long-window kernels
# again (1-2 minutes of device time in its warm-up run). `save` packs the generated
# kernel modules with Numba's cubins (~/.cache/s2g, mtimes kept to the nanosecond: Numba
# keys its cache on the source file's stamp, a float mtime, so a ustar archive's whole
# seconds missed every entry (session 17); the module file is named by its text's hash,
# so a changed kernel misses, never a stale hit) and s2g's __pycache__ folders (used only
# where the tree's sources keep their stamps); copy the file to .devcache/ here and carry it. `restore` of
# a missing file is a no-op.
set -uo pipefail
what=${1:-} file=${2:-}
case "$what" in
  save)
    mkdir -p "$(dirname "$file")"
    tar --format=posix -czpf "$file" -C "$HOME" .cache/s2g 2>/dev/null
    # every package's (s2g/trace/, s2g/trace/long/, s2g/seeded/, s2g/variants/fast/, ...)
    tar --format=posix -czpf "${file%.tgz}_pycache.tgz" $(find s2g -type d -name __pycache__) 2>/dev/null
    ls -la "$file" "${file%.tgz}_pycache.tgz" ;;
  restore)
    [ -f "$file" ] && tar -xzpf "$file" -C "$HOME" && echo "restored $file"
    [ -f "${file%.tgz}_pycache.tgz" ] && tar -xzpf "${file%.tgz}_pycache.tgz" && echo "restored pycache"
    true ;;
  *) echo "usage: bash bench/device_cache.sh save|restore FILE" >&2; exit 2 ;;
esac
