"""Seeded windows of long reads: how wide, how many, what they cost, and whether they
still hold the full-graph optimum (issue #45's window targets).

    python -m bench.long_windows --graph ../shared/data/real/lpa_odgi/LPA.gfa \
        --read-len 10000 --reads 40 [--full] [--out DIR]

Reads with a known origin are sampled from the graph's P/W paths as :mod:`bench.seeded`
samples them (``--error`` errors per base, ``--indel-share`` of them indels; a cyclic
graph is loaded with its back edges dropped). Reported: windows per read, window width in
read lengths (median over windows, and over each read's first window), DP cells of the
windows, the windows dropped by bound, the window DP's wall seconds and reads/s
(``SeededAligner.align_batch`` after the candidates, warm: run twice, the second timed),
MAPQ counts; ``--same-as-all``: whether aligning every window gives the same scores, ends
and MAPQ; ``--kernels``: GCUPS of the two CPU window kernels on every window of the batch
(``simd``'s lanes across reads, ``striped``'s rows in lanes), results compared; with
``--full`` every read's
seeded score against full-graph DP (the ``simd`` variant; affordable on graphs up to ~1 Mbp):
how many are equal (the exactness target: >= 99.5%).

Measured 2026-11-28 on the 2-core VM (issue #45 note): LPA (206 kbp, cycles broken),
40 reads of 10 kbp: 2.45 windows a read, median window 2.53 read lengths (a read's first:
4.33), 3.3e10 cells, 2.2 reads/s; DRB1, 40 reads of 5 kbp: 1.35 windows a read, median
2.94 read lengths, 6.5 reads/s, all 40 scores equal to full DP (LPA, 16 of 5 kbp: 16).
"""
from __future__ import annotations

import argparse
import json
import os
import time
import warnings

import numpy as np

from bench.seeded import sample


def main(argv=None):
    ap = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    ap.add_argument("--graph", required=True)
    ap.add_argument("--read-len", type=int, default=10_000)
    ap.add_argument("--reads", type=int, default=40)
    ap.add_argument("--error", type=float, default=0.05)
    ap.add_argument("--indel-share", type=float, default=0.2)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--full", action="store_true", help="check every score against full DP")
    ap.add_argument("--kernels", action="store_true",
                    help="time simd (lanes across reads) and striped (rows in lanes) on every "
                         "window of the batch, results compared (after a warm align_batch)")
    ap.add_argument("--same-as-all", action="store_true",
                    help="check scores, ends and MAPQ against aligning every window "
                         "(windows dropped by bound: S2G_CONFIG=window_bounds=0 times that)")
    ap.add_argument("--out", default=None, help="directory for long_windows.json")
    a = ap.parse_args(argv)
    import s2g
    from s2g.index import build_index
    from s2g.scoring import Mode, Scoring
    from s2g.seeded import SeededAligner
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        g = s2g.load_graph(a.graph, keep_paths=True, break_cycles=True)
    ix = build_index(g)
    reads, _ = sample(g, a.reads, a.read_len, a.error, a.indel_share,
                      np.random.default_rng(a.seed))
    sa = SeededAligner(g, ix, Scoring(), Mode.LOCAL)
    cand = sa.candidates(reads)
    sa.align_batch(reads, cand)                          # warm-up (compiles)
    sa = SeededAligner(g, ix, Scoring(), Mode.LOCAL)
    t = time.perf_counter()
    cand = sa.candidates(reads)
    t_cand = time.perf_counter() - t
    t = time.perf_counter()
    res = sa.align_batch(reads, cand)
    t_align = time.perf_counter() - t
    w = cand.wg.t_hi - cand.wg.t_lo
    first = cand.first[cand.ncand > 0]
    row = {"graph": os.path.basename(a.graph), "read_len": a.read_len, "reads": a.reads,
           "error": a.error, "windows_per_read": round(float(cand.ncand.mean()), 3),
           "window_x_read_median": round(float(np.median(w)) / a.read_len, 3) if len(w) else None,
           "first_window_x_read_median": (round(float(np.median(w[first])) / a.read_len, 3)
                                          if len(first) else None),
           "cells": int(sa.totals["window_cells"]),
           "windows_dropped_by_bound": int(sa.totals["windows dropped by bound"]),
           "seconds_candidates": round(t_cand, 3),
           "seconds_align": round(t_align, 3), "reads_per_s": round(a.reads / t_align, 3),
           "mapq": {str(q): int(np.sum(res.mapq == q)) for q in (0, 3, 30, 60, 255)},
           "date": time.strftime("%Y-%m-%d")}
    if a.kernels:                         # the CPU window kernels on the same tasks
        from s2g.variants import pruned, simd, striped
        wg = cand.wg
        args = (wg.graph, reads.codes_flat, np.asarray(reads.offsets, np.int64),
                cand.t_read, wg.t_lo, wg.t_hi, Scoring(), Mode.LOCAL)
        cells = int(((wg.t_hi - wg.t_lo) * reads.lengths()[cand.t_read]).sum())
        row["kernels"] = {"windows": len(cand.t_read), "cells": cells}
        got = {}
        for name, fn in (("simd", lambda *x: simd.run_tasks(*x, window=True)),
                         ("striped", striped.align_windows),
                         ("pruned", pruned.align_windows)):
            t = time.perf_counter()
            got[name] = fn(*args)
            dt = time.perf_counter() - t
            row["kernels"][name] = {"seconds": round(dt, 3), "gcups": round(cells / dt / 1e9, 3)}
        row["kernels"]["pruned"]["cells_computed"] = int(pruned.LAST_STATS[0])
        row["kernels"]["equal"] = all(np.array_equal(x, y) and np.array_equal(x, z)
                                      for x, y, z in zip(got["simd"], got["striped"],
                                                         got["pruned"]))
    if a.same_as_all:                     # every window aligned (window_bounds off)
        from s2g.config import configure
        configure(window_bounds=False)
        ref = SeededAligner(g, ix, Scoring(), Mode.LOCAL).align_batch(reads, cand)
        row["same_as_every_window"] = all(np.array_equal(getattr(ref, f), getattr(res, f))
                                          for f in ("score", "end_i", "end_j", "mapq"))
    if a.full:
        from s2g.variants import simd
        full = simd.align_batch(g, reads, Scoring(), Mode.LOCAL)
        eq = full.score == res.score
        row["equal_full_dp"] = int(eq.sum())
        row["lower_than_full_dp"] = [(int(r), int(res.score[r]), int(full.score[r]))
                                     for r in np.nonzero(~eq)[0]]
    print(json.dumps(row))
    if a.out:
        os.makedirs(a.out, exist_ok=True)
        with open(os.path.join(a.out, "long_windows.json"), "w") as fh:
            json.dump(row, fh, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
