"""How much of a read's loss a seed bound can see: the pruned pass's hit bound against the
best a position-aware one could do, from a run's GAF.

    python -m bench.bound_excess S2G.gaf [CAPTURE.pkl] [--q 6,8,10,12,14]

For each GAF line (s2g's, one line a read, in read order) the loss is ``a m - S`` (clipped
bases lose ``a`` each). A bound that knew where the optimal walk lies (A*PA's seeds, only
the walk's own q-grams) could at best charge ``h`` (:func:`s2g.variants.pruned.hit_cost`)
for each of the fewest error positions hitting every read q-gram that holds an error of the
alignment (a mismatch, an inserted base, the base before a deletion): printed as the
median share of the loss it sees, per ``q``. With ``CAPTURE.pkl`` (``python -m
bench.prune_replay capture``; its first call: the lead windows) the share the actual hit
bound sees (``pruned.hit_bounds``, q = 10, the window's q-gram set) beside it.
"""
from __future__ import annotations

import argparse
import re
import sys

import numpy as np

_OPS = re.compile(r"(\d+)([=XID])")


def error_positions(cg: str, m: int, qs: int) -> np.ndarray:
    """Read positions holding an error of the alignment ``cg`` (=/X/I/D) starting at read
    base ``qs``: mismatches, inserted bases, the base before each deletion."""
    err = np.zeros(m, bool)
    p = qs
    for n, op in _OPS.findall(cg):
        n = int(n)
        if op in "=X":
            if op == "X":
                err[p:p + n] = True
            p += n
        elif op == "I":
            err[p:p + n] = True
            p += n
        elif op == "D":
            err[max(p - 1, 0)] = True
    return err


def hits(err: np.ndarray, qs: int, qe: int, q: int) -> int:
    """The fewest positions hitting every q-interval inside ``[qs, qe)`` that holds an
    error (greedy from the right, optimal for intervals)."""
    cs = np.concatenate(([0], np.cumsum(err)))
    n, last = 0, 1 << 62
    for s in range(qe - q, qs - 1, -1):
        if cs[s + q] - cs[s] > 0 and last > s + q - 1:
            n += 1
            last = s
    return n


def _actual(capture, a, h):
    import pickle
    from s2g.variants import pruned
    with open(capture, "rb") as fh:
        c = pickle.load(fh)[0]
    g = c["graph"]
    gr = (g.base, g.node_start, g.pred_ptr, g.pred_idx)
    out = {}
    for t, r in enumerate(c["tr"]):
        q = c["codes"][c["offs"][r]:c["offs"][r + 1]]
        U = pruned.window_bounds(q, int(c["lo"][t]), int(c["hi"][t]), gr, a, (0.0, float(h)))
        out[int(r)] = a * len(q) - int(U[0])
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    ap.add_argument("gaf")
    ap.add_argument("capture", nargs="?")
    ap.add_argument("--q", default="6,8,10,12,14")
    ap.add_argument("--scoring", default="2,4,4,2", help="a,b,o,e")
    args = ap.parse_args(argv)
    from s2g.scoring import Scoring
    from s2g.variants.pruned import hit_cost
    a, b, o, e = (int(x) for x in args.scoring.split(","))
    h = hit_cost(Scoring(a, b, o, e))
    qs_ = [int(x) for x in args.q.split(",")]
    seen = {q: [] for q in qs_}
    loss = []
    with open(args.gaf) as fh:
        lines = [ln.rstrip("\n").split("\t") for ln in fh if ln.strip()]
    for f in lines:
        m, qs, qe = int(f[1]), int(f[2]), int(f[3])
        S = int(next(x[5:] for x in f[12:] if x.startswith("AS:i:")))
        err = error_positions(next(x[5:] for x in f[12:] if x.startswith("cg:Z:")), m, qs)
        loss.append(a * m - S)
        for q in qs_:
            seen[q].append(h * hits(err, qs, qe, q))
    loss = np.maximum(np.array(loss, float), 1)
    print(f"{len(loss)} reads, loss a m - S median {np.median(loss):.0f}")
    for q in qs_:
        print(f"  position-aware, q = {q}: sees {np.median(np.array(seen[q]) / loss):.0%} "
              "of the loss (median)")
    if args.capture:
        act = _actual(args.capture, a, h)
        sh = [act[r] / loss[r] for r in sorted(act) if r < len(loss)]
        print(f"  the hit bound (q = 10, the window's q-gram set): sees {np.median(sh):.0%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
