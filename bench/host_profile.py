"""Where the host time of `s2g align` goes, per stage, for one batch (no GPU needed).

    python bench/host_profile.py [--reads 20000] [--bases 10000]

Simulates a SNP graph and 150 bp reads (`s2g simulate`'s generators), computes exact end
cells with the `cpu` variant, then times the host stages that `s2g align` runs around
the kernel on each batch: FASTQ parsing + encoding (dnaio, `iter_read_batches`), the
batch traceback (`traceback_batch`: window DP, walk, CIGAR; parallel Numba), and the
GAF text (`gaf_text`: one Numba pass over the flat tracebacks, what `s2g align` uses);
then, for comparison, what the Python API adds: `Traceback` objects and `gaf_line` per
read. Each stage is timed twice, the second (warm) time is
printed, in microseconds per read. The graph's size barely matters to these stages
(the traceback works in a window around the end cell), so a small graph keeps the CPU
alignment quick.
"""
import argparse
import os
import tempfile
import time

import numpy as np

from s2g.gaf import gaf_line, gaf_text
from s2g.graph import load_graph
from s2g.reads import iter_read_batches
from s2g.scoring import Mode, Scoring
from s2g.simulate import sample_reads, snp_graph
from s2g.trace import traceback_batch
from s2g.variants import cpu_parallel


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reads", type=int, default=20000)
    ap.add_argument("--bases", type=int, default=10000)
    args = ap.parse_args()
    tmp = tempfile.mkdtemp()
    sg, ref = snp_graph(args.bases, 50, 2, 1)
    gp = os.path.join(tmp, "g.gfa")
    sg.write_gfa(gp, ref)
    fq = os.path.join(tmp, "r.fq")
    with open(fq, "w") as fh:
        for k, (_, s, _) in enumerate(sample_reads(sg, args.reads, 150, 0.01, 0.5, 2)):
            fh.write(f"@r{k}\n{s}\n+\n{'I' * len(s)}\n")
    g = load_graph(gp)
    sc, mode = Scoring(), Mode.LOCAL
    times = {}

    def timed(name, fn):
        for _ in range(2):
            t = time.perf_counter()
            out = fn()
            times[name] = time.perf_counter() - t
        return out

    batch = timed("parse+encode", lambda: next(iter(iter_read_batches(fq, args.reads))))
    res = cpu_parallel.align_batch(g, batch, sc, mode)     # end cells (not timed)
    timed("traceback", lambda: traceback_batch(g, batch, sc, mode, res))
    text = timed("gaf text", lambda: gaf_text(g, res))           # Numba, from the arrays
    timed("Traceback objs", lambda: res.flat.objects())            # what the API builds
    slow = timed("gaf_line", lambda: "".join(gaf_line(g, r) + "\n" for r in res))
    assert slow == text
    n = batch.n_reads
    print(f"{n} reads x 150 bp, graph {args.bases} bp (both strands), {os.cpu_count()} CPUs, "
          f"{len(text) / n:.0f} GAF bytes per read")
    for k, v in times.items():
        print(f"  {k:14s} {v * 1e6 / n:8.1f} us/read   {n / v:10,.0f} reads/s")
    assert np.all(res.aligned())


if __name__ == "__main__":
    main()
