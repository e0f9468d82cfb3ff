"""The CPU traceback stage alone on long windows (issue 20: lanes with row bands).

    python -m bench.cpu_long_traceback [--bases 100000] [--reads 20] [--length 10000]
                                       [--mode local] [--threads N] [--reps 3]
                                       [--lane-cells N]

Simulates a SNP graph (50 bp nodes, 2 alleles) and reads (5% substitutions), runs the
`simd` DP once for the end cells, then times ``traceback_batch`` alone (after a warm-up
run: Numba JIT), best of ``--reps``. Prints seconds, window cells a second (window
columns x (rows + 1), as the traceback counts them) and a hash of the GAF lines, so
that two versions of the code can be compared on the same work (``--lane-cells 0``:
every window on the scalar ``traceback_read``, the path before row bands).
"""
from __future__ import annotations

import argparse
import hashlib
import os
import sys
import tempfile
import time

import numpy as np


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bases", type=int, default=100_000)
    ap.add_argument("--reads", type=int, default=20)
    ap.add_argument("--length", type=int, default=10_000)
    ap.add_argument("--mode", default="local")
    ap.add_argument("--threads", type=int, default=0, help="0: every core")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--lane-cells", type=int, default=None,
                    help="LaneLimits.cells (default: s2g.trace.batch.LANE_CELLS)")
    args = ap.parse_args(argv)
    import s2g
    from s2g import trace as tb
    from s2g.gaf import gaf_line
    from s2g.result import BatchResult
    from s2g.simulate import sample_reads, snp_graph
    from s2g.trace.common import window
    from s2g.variants import simd

    sg, ref = snp_graph(args.bases, 50, 2, 1)
    with tempfile.TemporaryDirectory() as d:
        gfa = os.path.join(d, "g.gfa")
        sg.write_gfa(gfa, ref)
        graph = s2g.load_graph(gfa)
        fq = os.path.join(d, "r.fq")
        with open(fq, "w") as fh:
            for name, s, _ in sample_reads(sg, args.reads, args.length, 0.05, 0.5, 2):
                fh.write(f"@{name}\n{s}\n+\n{'I' * len(s)}\n")
        batch = s2g.read_reads(fq)
    sc = s2g.Scoring()
    mode = s2g.Mode.parse(args.mode)
    t = time.perf_counter()
    r = simd.align_batch(graph, batch, sc, mode)
    print(f"simd DP {time.perf_counter() - t:.2f} s", file=sys.stderr)
    s, i, j = np.asarray(r.score), np.asarray(r.end_i), np.asarray(r.end_j)
    limits = tb.LaneLimits(cells=args.lane_cells)

    def run():
        out = BatchResult(batch.names, batch.lengths(), s.copy(), i.copy(), j.copy())
        t0 = time.perf_counter()
        tb.traceback_batch(graph, batch, sc, mode, out, threads=args.threads or None,
                           limits=limits)
        return time.perf_counter() - t0, out

    run()                                                   # warm-up (JIT)
    times = []
    for _ in range(args.reps):
        dt, out = run()
        times.append(dt)
    a, b, o, e = sc.as_tuple()
    L = i + np.maximum(0, a * i - s) // e
    cells = 0
    for k in range(len(j)):
        if j[k] < 0:
            continue
        v = np.searchsorted(graph.node_start, j[k], side="right") - 1
        wn, ws, we = window(v, j[k] - graph.node_start[v], L[k], graph.node_start,
                            graph.pred_ptr, graph.pred_idx, 0)
        cells += int((we - ws + 1).sum()) * (int(i[k]) + 1)
    gaf = hashlib.sha1("\n".join(gaf_line(graph, x) for x in out).encode()).hexdigest()[:12]
    best = min(times)
    print(f"{args.reads} x {args.length} bp, {args.bases} bp graph, {mode.name}, threads "
          f"{args.threads or 'all'}: traceback best {best:.2f} s of {['%.2f' % x for x in times]}, "
          f"{cells:.3e} window cells, {cells / best / 1e6:,.0f} M cells/s, GAF sha1 {gaf}")


if __name__ == "__main__":
    main()
