"""GPU traceback vs CPU traceback on one batch: time per stage and identical results.

    python -m bench.gpu_traceback_profile [--reads 65536] [--bases 100000]

Simulates a SNP graph (node length 50, branching 2) and 150 bp reads with 1% errors,
scores them with the `fast` kernel, then runs ``traceback_batch`` on the CPU (all
cores) and on the GPU (:mod:`s2g.gpu_traceback`), each twice (the second, warm, run is
reported), checks that both give identical tracebacks, and prints the GPU path's stages
(window sizes and programs on the CPU, the device part, the summary) per read.
"""
import argparse
import os
import tempfile
import time

import numpy as np

from s2g import gpu_traceback
from s2g.graph import load_graph
from s2g.reads import ReadBatch
from s2g.scoring import Mode, Scoring
from s2g.simulate import sample_reads, snp_graph
from s2g.traceback import traceback_batch
from s2g.variants import fast


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reads", type=int, default=65536)
    ap.add_argument("--bases", type=int, default=100000)
    args = ap.parse_args()
    tmp = tempfile.mkdtemp()
    sg, ref = snp_graph(args.bases, 50, 2, 1)
    gp = os.path.join(tmp, "g.gfa")
    sg.write_gfa(gp, ref)
    g = load_graph(gp)
    seqs = [s for _, s, _ in sample_reads(sg, args.reads, 150, 0.01, 0.5, 2)]
    reads = ReadBatch.from_sequences([f"r{k}" for k in range(len(seqs))], seqs)
    sc, mode = Scoring(), Mode.LOCAL
    res = fast.align_batch(g, reads, sc, mode)
    n = reads.n_reads
    times = {}
    for where in ("cpu", "gpu"):
        for _ in range(2):
            for k in gpu_traceback.PROFILE:
                gpu_traceback.PROFILE[k] = 0.0
            t = time.perf_counter()
            traceback_batch(g, reads, sc, mode, res, device=where == "gpu")
            times[where] = time.perf_counter() - t
        if where == "cpu":
            want = list(res.tracebacks)
    bad = sum(x != y for x, y in zip(want, res.tracebacks))
    from numba import cuda
    dev = cuda.get_current_device().name
    dev = dev.decode() if isinstance(dev, bytes) else dev
    print(f"{dev}: {n} reads x 150 bp, SNP graph {args.bases} bp, {os.cpu_count()} CPUs; "
          f"GPU vs CPU tracebacks differing: {bad}")
    for k, v in times.items():
        print(f"  traceback on {k}: {v:7.3f} s  {v * 1e6 / n:7.1f} us/read  {n / v:10,.0f} reads/s")
    for k, v in gpu_traceback.PROFILE.items():
        print(f"    gpu stage {k:8s} {v:7.3f} s  {v * 1e6 / n:7.2f} us/read")
    assert bad == 0


if __name__ == "__main__":
    main()
