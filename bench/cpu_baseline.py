"""V0 and cpu on the issue-2 workload: 100 kbp simulated SNP graph, 1,000 x 150 bp reads.

    python bench/cpu_baseline.py [--out bench/results/<machine>/cpu_baseline.json]

Kernel GCUPS = cells / kernel seconds, cells = bases in the DP (both strands) x read
length, summed over reads; JIT warm-up is outside the timing. V0 runs on a subsample
(--v0-reads). End to end = the CLI (`s2g align`, parse + align + traceback + GAF) on
all reads, timed as a subprocess (includes interpreter start and cached JIT load).
"""
import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time

import numpy as np

import s2g
from s2g.simulate import simulate


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--total-bases", type=int, default=100_000)
    ap.add_argument("--reads", type=int, default=1000)
    ap.add_argument("--v0-reads", type=int, default=50)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    tmp = tempfile.mkdtemp()
    gfa, fq, _ = simulate(os.path.join(tmp, "snp"), args.total_bases, 50, 2, args.reads, 150, 0.01, 0.5, 11)
    g = s2g.load_graph(gfa)
    reads = s2g.read_reads(fq)
    sub = reads.subset(range(args.v0_reads))
    recs = []
    for variant, batch in (("v0", sub), ("cpu", reads)):
        s2g.align(g, batch.subset(range(2)), variant=variant, traceback=False, method="exact")  # JIT warm-up
        t = time.perf_counter()
        res = s2g.align(g, batch, variant=variant, traceback=False, method="exact")
        dt = time.perf_counter() - t
        cells = g.n_bases * batch.total_bases
        recs.append({"variant": variant, "n_reads": batch.n_reads, "graph_bases": g.n_bases,
                     "cells": cells, "kernel_s": dt, "gcups": cells / dt / 1e9,
                     "reads_per_s": batch.n_reads / dt})
        if variant == "v0":
            v0 = res
        else:
            assert np.array_equal(res.score[:sub.n_reads], v0.score)
            assert np.array_equal(res.end_j[:sub.n_reads], v0.end_j)
        print(json.dumps(recs[-1]))
    out = os.path.join(tmp, "out.gaf")
    t = time.perf_counter()
    subprocess.run([sys.executable, "-m", "s2g", "align", gfa, fq, "-o", out, "--variant", "cpu", "-q"],
                   check=True)
    dt = time.perf_counter() - t
    n_lines = sum(1 for _ in open(out))
    assert n_lines == reads.n_reads
    recs.append({"variant": "cpu", "end_to_end": True, "n_reads": reads.n_reads, "e2e_s": dt,
                 "reads_per_s": reads.n_reads / dt, "gcups_e2e": g.n_bases * reads.total_bases / dt / 1e9})
    print(json.dumps(recs[-1]))
    meta = {"machine": platform.node(), "cores": os.cpu_count(), "python": platform.python_version(),
            "numba": __import__("numba").__version__, "date": time.strftime("%Y-%m-%d %H:%M"),
            "load_average_at_start": os.getloadavg()[0],
            "command": "python bench/cpu_baseline.py " + " ".join(sys.argv[1:])}
    if args.out:
        os.makedirs(os.path.dirname(args.out), exist_ok=True)
        with open(args.out, "w") as fh:
            json.dump({"meta": meta, "records": recs}, fh, indent=1)


if __name__ == "__main__":
    main()
