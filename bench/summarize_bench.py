"""What a batch's walk summaries cost on the host: `s2g.trace.gpu_program.summarize_all`
(CIGAR runs and path of every walk, the GAF thread's work after the GPU traceback) and
`FlatTracebacks.add`, on synthetic walks shaped like 150 bp reads' (one mismatch, 151
columns in nodes of 1 kbp).

    python -m bench.summarize_bench [--reads 50000] [--repeat 5]

Prints the fastest of ``--repeat`` calls on one thread and on all of Numba's threads.
Session 59 (2-core AMD EPYC VM, idle, `--repeat 7`, 349fe79 in a worktree beside 95ec230):
`summarize` keeping the run being read in registers took summarize_all from 50.4 to
43.8-44.9 ms a 50,000 walks on one thread, 28.6 to 23.9-27.0 ms on two.
"""
from __future__ import annotations

import argparse
import time

import numba
import numpy as np


def walks(n, seed=1):
    """(ops, cols, nn, end_j, node_start, oo, co) of ``n`` walks as the GPU walk leaves
    them (reversed, in buffers padded to each read's longest possible walk)."""
    rng = np.random.default_rng(seed)
    ei = np.full(n, 150, np.int64)
    L = ei + 10
    oo = np.zeros(n + 1, np.int64)
    np.cumsum(ei + L + 2, out=oo[1:])
    co = np.zeros(n + 1, np.int64)
    np.cumsum(L + 1, out=co[1:])
    ops = np.zeros(oo[-1], np.uint8)
    cols = np.zeros(co[-1], np.int32)
    nn = np.zeros(2 * n, np.int32)
    node_start = np.arange(0, 2_000_001, 1000, dtype=np.int64)
    for k in range(n):
        ops[oo[k] + 70] = 1                                  # one mismatch
        nn[2 * k], nn[2 * k + 1] = 150, 151
        c0 = int(rng.integers(0, 1_900_000))
        cols[co[k]:co[k] + 151] = np.arange(c0, c0 + 151)[::-1]
    end_j = cols[co[:-1]].astype(np.int64)
    return ops, cols, nn, end_j, node_start, oo, co, ei


def main(argv=None) -> int:
    from s2g.trace.batch import FlatTracebacks
    from s2g.trace.gpu_program import summarize_all
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reads", type=int, default=50_000)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args(argv)
    ops, cols, nn, end_j, ns, oo, co, ei = walks(args.reads)
    summarize_all(ops, cols, nn, end_j, ns, oo, co)              # compile / load
    top = numba.get_num_threads()
    for threads in sorted({1, top}):
        numba.set_num_threads(threads)
        best = add = float("inf")
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            s = summarize_all(ops, cols, nn, end_j, ns, oo, co)
            t1 = time.perf_counter()
            FlatTracebacks(args.reads).add(np.arange(args.reads), ei, oo, co,
                                          np.zeros(args.reads, np.int64), s)
            add = min(add, time.perf_counter() - t1)
            best = min(best, t1 - t0)
        print(f"{args.reads:,} walks, {threads} thread(s): summarize_all {1e3 * best:.1f} ms, "
              f"FlatTracebacks.add {1e3 * add:.1f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
