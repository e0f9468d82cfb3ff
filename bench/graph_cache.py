"""Graph cache (s2g/graph_cache.py): a GFA's load parsed, and from GRAPH.s2gg.

    python bench/graph_cache.py GFA [GFA ...] [--repeat 5] [--out bench/results/cpu-dev/graph_cache.json]

For each GFA, in fresh processes (JIT cache warm, file in the page cache): ``open_graph``
without the cache (the parse), with ``cache="write"`` (parse + write), then
``cache="read"`` ``--repeat`` times (median and range); wall time of the call and peak
RSS. Also the checksums the key could use, over the GFA's bytes in 1, 4 and 8 MiB reads
(best of 3): zlib.crc32, BLAKE2b, SHA-256 (the one used). Graphs: ``s2g simulate PREFIX
--total-bases 25000000 --node-len 1000 --reads 1000 --seed 3`` (and 100000000).
"""
import argparse
import hashlib
import json
import os
import platform
import statistics
import subprocess
import sys
import time
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import cpu_name, git_commit  # noqa: E402

CHILD = r"""
import json, resource, sys, time
from s2g.graph import open_graph
t = time.perf_counter()
g = open_graph(sys.argv[1], cache=sys.argv[2])
dt = time.perf_counter() - t
print(json.dumps({"seconds": dt, "dp_bases": g.n_bases, "segments": g.n_segments,
                  "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def child(path, mode):
    out = subprocess.run([sys.executable, "-c", CHILD, path, mode], capture_output=True,
                         text=True, check=True)
    return json.loads(out.stdout)


def hash_costs(path):
    algos = {"crc32": (lambda: [0], lambda s, b: s.__setitem__(0, zlib.crc32(b, s[0]))),
             "blake2b": (lambda: hashlib.blake2b(digest_size=16), lambda s, b: s.update(b)),
             "sha256": (lambda: hashlib.sha256(), lambda s, b: s.update(b))}
    out = {}
    for mib in (1, 4, 8):
        buf = bytearray(mib << 20)
        view = memoryview(buf)
        for name, (make, update) in algos.items():
            best = None
            for _ in range(3):
                t = time.perf_counter()
                state = make()
                with open(path, "rb", buffering=0) as fh:
                    while True:
                        n = fh.readinto(buf)
                        if not n:
                            break
                        update(state, view[:n])
                dt = time.perf_counter() - t
                best = dt if best is None else min(best, dt)
            out[f"{name}_{mib}MiB_s"] = round(best, 4)
    return out


def main():
    ap = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    ap.add_argument("gfa", nargs="+")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    recs = []
    for path in args.gfa:
        cache = path + ".s2gg"
        if os.path.exists(cache):
            os.unlink(cache)
        child(path, "off")                       # warm: JIT cache, page cache
        parsed = child(path, "off")
        written = child(path, "write")
        reads = [child(path, "read") for _ in range(args.repeat)]
        secs = [r["seconds"] for r in reads]
        rec = {"gfa": os.path.basename(path), "gfa_bytes": os.path.getsize(path),
               "cache_bytes": os.path.getsize(cache), "segments": parsed["segments"],
               "dp_bases": parsed["dp_bases"], "parse_s": round(parsed["seconds"], 3),
               "parse_peak_rss_mb": round(parsed["peak_rss_mb"]),
               "parse_and_write_s": round(written["seconds"], 3),
               "cached_median_s": round(statistics.median(secs), 3),
               "cached_min_s": round(min(secs), 3), "cached_max_s": round(max(secs), 3),
               "cached_peak_rss_mb": round(max(r["peak_rss_mb"] for r in reads)),
               **hash_costs(path)}
        os.unlink(cache)
        print(json.dumps(rec), flush=True)
        recs.append(rec)
    if args.out:
        os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
        with open(args.out, "w") as fh:
            json.dump({"machine": cpu_name(), "cores": os.cpu_count(), "commit": git_commit(),
                       "python": platform.python_version(),
                       "date": time.strftime("%Y-%m-%d"), "results": recs}, fh, indent=1)


if __name__ == "__main__":
    main()
