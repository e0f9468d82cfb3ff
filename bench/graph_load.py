"""Graph-loading scale test: synthetic GFAs of 10k, 100k and 1M segments.

    python bench/graph_load.py [--sizes 10000 100000 1000000] [--out bench/results/cpu-<host>/graph_load.json]

Each size is timed in a fresh subprocess (so peak RSS is that load's alone): write a
bubble-chain GFA (backbone segments of ~30 bp, a 1-bp two-allele SNP site after each)
with numpy, then ``s2g.load_graph`` (both strands) and report wall time and peak RSS.
Also times DRB1 (../shared/data/real) as the issue's < 1 s reference point.
"""
import argparse
import json
import os
import platform
import subprocess
import sys
import time

import numpy as np


def write_gfa(path, n_segments, seed=0):
    rng = np.random.default_rng(seed)
    n_sites = n_segments // 3
    n_back = n_segments - 2 * n_sites
    with open(path, "w") as fh:
        fh.write("H\tVN:Z:1.0\n")
        lens = rng.integers(15, 46, n_back)
        seq = np.frombuffer(b"ACGT", np.uint8)[rng.integers(0, 4, int(lens.sum()))].tobytes().decode()
        off = 0
        lines = []
        for b in range(n_back):
            lines.append(f"S\tb{b}\t{seq[off:off + lens[b]]}\n")
            off += lens[b]
        for s in range(n_sites):
            lines.append(f"S\ts{s}a\tA\nS\ts{s}c\tC\n")
        for s in range(min(n_sites, n_back - 1)):
            lines.append(f"L\tb{s}\t+\ts{s}a\t+\t0M\nL\tb{s}\t+\ts{s}c\t+\t0M\n"
                         f"L\ts{s}a\t+\tb{s + 1}\t+\t0M\nL\ts{s}c\t+\tb{s + 1}\t+\t0M\n")
        for b in range(n_sites, n_back - 1):
            lines.append(f"L\tb{b}\t+\tb{b + 1}\t+\t0M\n")
        fh.writelines(lines)


CHILD = r"""
import resource, sys, time, json
t = time.perf_counter()
import s2g
t_imp = time.perf_counter() - t
t = time.perf_counter()
g = s2g.load_graph(sys.argv[1])
dt = time.perf_counter() - t
print(json.dumps({"load_s": dt, "import_s": t_imp, "segments": g.n_segments, "links": g.n_links,
                  "dp_nodes": g.n_nodes, "dp_bases": g.n_bases, "n_slots": g.n_slots,
                  "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def load_in_child(path):
    # warm the Numba cache once so JIT compilation is not counted
    out = subprocess.run([sys.executable, "-c", CHILD, path], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def main():
    ap = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    ap.add_argument("--tmp", default="/tmp")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    here = os.path.dirname(os.path.abspath(__file__))
    drb1 = os.path.join(here, "..", "..", "shared", "data", "real", "drb1_odgi", "DRB1-3123.gfa")
    recs = []
    load_in_child(drb1 if os.path.exists(drb1) else os.path.join(here, "..", "graphs", "example.gfa"))
    if os.path.exists(drb1):
        r = load_in_child(drb1)
        r["graph"] = "DRB1-3123.gfa"
        recs.append(r)
        print(json.dumps(r))
    for n in args.sizes:
        path = os.path.join(args.tmp, f"s2g_load_{n}.gfa")
        t = time.perf_counter()
        write_gfa(path, n)
        r = load_in_child(path)
        r.update(graph=f"synthetic-{n}", file_mb=os.path.getsize(path) / 1e6,
                 write_s=time.perf_counter() - t - r["load_s"])
        recs.append(r)
        print(json.dumps(r))
        os.remove(path)
    meta = {"machine": platform.node(), "cpu": platform.processor() or platform.machine(),
            "python": platform.python_version(), "date": time.strftime("%Y-%m-%d"),
            "command": " ".join(["python"] + sys.argv)}
    if args.out:
        os.makedirs(os.path.dirname(args.out), exist_ok=True)
        with open(args.out, "w") as fh:
            json.dump({"meta": meta, "records": recs}, fh, indent=1)


if __name__ == "__main__":
    main()
