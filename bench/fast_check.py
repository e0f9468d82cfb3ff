"""The `fast` kernel against V0 on random graphs, one forced configuration per run.

    python -m bench.fast_check --config 8x2:pipe [--modes local,semiglobal,global]
                               [--graphs 25] [--seed 11] [--max-len 300]

A device-side diagnostic (one configuration a process: an illegal address ends the
CUDA context, and ``compute-sanitizer python -m bench.fast_check ...`` names the access).
CONFIG: ``GxK`` with optional ``:pipe`` (the pipelined long-read kernel, as many stages
as allowed), ``:pipeN`` (N groups a stage: simulator only), ``:nopipe``, ``:32bit``.
Prints one line per mode and exits 1 on a mismatch.
"""
from __future__ import annotations

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "tests"))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--config", required=True)
    ap.add_argument("--modes", default="local,semiglobal,global")
    ap.add_argument("--graphs", type=int, default=25)
    ap.add_argument("--reads", type=int, default=40)
    ap.add_argument("--max-len", type=int, default=300)
    ap.add_argument("--seed", type=int, default=11)
    args = ap.parse_args(argv)
    import gpu_cases as gc

    from s2g.scoring import Mode
    from s2g.variants import fast, v0_cpu
    parts = args.config.split(":")
    G, K = map(int, parts[0].split("x"))
    kw = {"G": G, "K": K}
    for p in parts[1:]:
        if p == "pipe":
            kw["pipe"] = True
        elif p.startswith("pipe"):
            kw["pipe"] = int(p[4:])
        elif p == "nopipe":
            kw["pipe"] = False
        elif p == "32bit":
            kw["pair"] = False
    bad_total = 0
    for name in args.modes.split(","):
        mode = Mode[name.upper()]
        rng = np.random.default_rng(args.seed + int(mode))
        bad = cells = 0
        for _ in range(args.graphs):
            g = gc.random_graph(rng, n_seg=int(rng.integers(1, 12)),
                                max_seg_len=int(rng.integers(1, 30)))
            reads = gc.random_reads(rng, args.reads, int(rng.integers(1, args.max_len)))
            sc = gc.random_scoring(rng)
            ref = v0_cpu.align_batch(g, reads, sc, mode)
            lens = reads.lengths()
            idx = np.nonzero(lens > 0)[0]
            if len(idx) == 0:
                continue
            offs = np.zeros(len(idx) + 1, np.int64)
            np.cumsum(lens[idx], out=offs[1:])
            codes = np.concatenate([reads.codes(int(r)) for r in idx])
            s, i, j = fast.run_kernel(g, codes, offs, lens[idx], sc, mode, **kw)
            ok = j >= 0
            got_s = np.where(ok, s, ref.score[idx])       # no end: V0's "no alignment" score
            bad += int(((got_s != ref.score[idx]) | (np.where(ok, i, -1) != ref.end_i[idx])
                        | (j != ref.end_j[idx])).sum())
            cells += int(g.n_bases) * int(lens.sum())
        print(f"{args.config} {mode.name}: {bad} mismatched reads ({cells:,} cells)", flush=True)
        bad_total += bad
    return 1 if bad_total else 0


if __name__ == "__main__":
    sys.exit(main())
