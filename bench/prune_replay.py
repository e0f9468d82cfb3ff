"""Capture the long-read window calls of a run, then time the pruned window pass on them.

    python -m bench.prune_replay capture OUT.pkl -- align MHC.gfa r100.fq --variant simd
    python -m bench.prune_replay replay OUT.pkl [--call 0] [--reps 3] [--config k=v,...]
    python -m bench.prune_replay shape OUT.pkl [--call 0]
    python -m bench.prune_replay xdrop OUT.pkl [--call 0] [--xdrop 50,200]

``capture`` runs ``s2g`` in this process with :func:`s2g.variants.pruned.align_windows`
wrapped: each call's window graph, reads and tasks are pickled to OUT.pkl (the first 100
MHC 10 kbp reads: ~60 MB). ``replay`` calls it again on call ``--call`` (0: the lead
windows), once to compile and then ``--reps`` times, and prints the best wall, the cells
computed, the passes after the first and the windows given up to striped
(``pruned.LAST_STATS``), with ``S2G_CONFIG``-style knobs from ``--config`` (and the
captured floors raised ``--floor-up`` points). Run it with
``NUMBA_NUM_THREADS=1`` for one core. ``shape``: where the kept cells lie, per window: the
bound's excess over the optimum (``U[0] - S``), the cells kept a row by row ranges, and
how far the kept cells reach ahead of the optimal walk (rows before it reaches a column)
and behind it. ``xdrop``: the X-drop pass alone (``pruned.XDROP``-style, at the given
drops in ``a``s) against the exact score: how often a banded heuristic finds the optimum,
and its cells. After editing a module the pass calls into, import
s2g once (it drops stale Numba caches: s2g/_numba.py) before comparing versions.
"""
from __future__ import annotations

import argparse
import pickle
import sys
import time


def capture(out, argv):
    from s2g.variants import pruned
    calls = []
    orig = pruned.align_windows

    def wrapped(graph, codes_flat, offsets, task_read, task_lo, task_hi, scoring, mode,
                floor=None, bands=None, known=False):
        import numpy as np
        calls.append(dict(graph=graph, codes=np.asarray(codes_flat).copy(),
                          offs=np.asarray(offsets).copy(), tr=np.asarray(task_read).copy(),
                          lo=np.asarray(task_lo).copy(), hi=np.asarray(task_hi).copy(),
                          scoring=scoring, mode=int(mode),
                          floor=None if floor is None else np.asarray(floor).copy(),
                          bands=bands is not None, known=known))
        return orig(graph, codes_flat, offsets, task_read, task_lo, task_hi, scoring, mode,
                    floor=floor, bands=bands, known=known)

    pruned.align_windows = wrapped
    from s2g.cli import main
    rc = main(argv)
    with open(out, "wb") as fh:
        pickle.dump(calls, fh)
    print(f"{len(calls)} calls: " + ", ".join(f"{len(c['tr'])} tasks" for c in calls),
          file=sys.stderr)
    return rc


def replay(path, call, reps, config, floor_up=0):
    import os
    if config:                        # read at the first settings() call, below
        os.environ["S2G_CONFIG"] = config
    from s2g.scoring import Mode
    from s2g.variants import pruned
    with open(path, "rb") as fh:
        c = pickle.load(fh)[call]
    args = (c["graph"], c["codes"], c["offs"], c["tr"], c["lo"], c["hi"], c["scoring"],
            Mode(c["mode"]))
    floor = c["floor"]
    if floor is not None and floor_up:     # a higher floor (e.g. a smaller DROP_MISMATCHES)
        import numpy as np
        from s2g.scoring import NEG_INF
        floor = np.where(floor > NEG_INF, floor + floor_up, floor)
    kw = dict(floor=floor, bands={} if c["bands"] else None, known=c["known"])
    pruned.align_windows(*args, **kw)
    best = float("inf")
    for _ in range(reps):
        t = time.perf_counter()
        pruned.align_windows(*args, **kw)
        best = min(best, time.perf_counter() - t)
    st = pruned.LAST_STATS
    print(f"{len(c['tr'])} windows: {best:.3f} s (best of {reps}), {st[0]:.3e} cells, "
          f"{st[1]} passes after the first, {st[2]} given up to striped")
    return 0


def _load(path, call):
    import numpy as np
    from s2g.scoring import Mode
    from s2g.variants import pruned
    with open(path, "rb") as fh:
        c = pickle.load(fh)[call]
    g = c["graph"]
    args = (g, c["codes"], c["offs"], c["tr"], c["lo"], c["hi"], c["scoring"], Mode(c["mode"]))
    gr = (g.base, g.node_start, g.pred_ptr, g.pred_idx)
    reads = [c["codes"][c["offs"][r]:c["offs"][r + 1]] for r in np.asarray(c["tr"])]
    return c, args, gr, reads, pruned


def shape(path, call):
    import numpy as np
    from s2g.config import configure
    from s2g.trace.common import OP_D, OP_EQ, OP_X
    c, args, gr, reads, pruned = _load(path, call)
    a = c["scoring"].as_tuple()[0]
    pen = pruned.bound_costs(c["scoring"])
    walks = {}
    sc, ei, _ = pruned.align_windows(*args, bands=walks)          # walks (tb_prune_walk)
    try:
        configure(tb_prune_walk=False)
        bands = {}
        pruned.align_windows(*args, bands=bands)                  # kept rows per column
    finally:
        configure(tb_prune_walk=True)
    edges = [0, 100, 300, 1000, 3000, 10000, 20000, 40000, 1 << 40]
    for t, q in enumerate(reads):
        if t not in walks or t not in bands or not hasattr(walks[t], "ops"):
            continue
        m = len(q)
        U = pruned.window_bounds(q, int(c["lo"][t]), int(c["hi"][t]), gr, a, pen)
        rlo, rhi = bands[t]
        ok = rlo < pruned.BIG_ROW
        d = np.zeros(m + 2, np.int64)
        np.add.at(d, rlo[ok], 1)
        np.add.at(d, np.minimum(rhi[ok] + 1, m + 1), -1)
        per = np.cumsum(d)[:int(ei[t]) + 1]
        w = walks[t]
        i, ci, rowat = w.start, 0, {}
        cols = w.cols[::-1] - int(c["lo"][t])
        for op in w.ops[::-1]:
            if op in (OP_EQ, OP_X, OP_D):
                rowat[int(cols[ci])] = i if op != OP_D else i - 1
                ci += 1
            i += op != OP_D
        cs = np.array(sorted(rowat))
        rs = np.array([rowat[x] for x in cs])
        k = rlo[cs] < pruned.BIG_ROW
        ahead, behind = rs[k] - rlo[cs][k], rhi[cs][k] - rs[k]
        rng = [(edges[x], min(edges[x + 1], len(per))) for x in range(len(edges) - 1)
               if edges[x] < len(per)]
        print(f"window {t}: {m} bases, {len(rlo)} columns, U0 - S = {U[0] - sc[t]} "
              f"({(U[0] - sc[t]) / a / m * 1000:.1f} a a kbp), {per.sum():.3e} cells; "
              f"kept a row: " + " ".join(f"[{x},{y}) {per[x:y].mean():.0f}" for x, y in rng)
              + f"; ahead of the walk p50/p90 {np.percentile(ahead, 50):.0f}/"
              f"{np.percentile(ahead, 90):.0f} rows, behind {np.percentile(behind, 50):.0f}/"
              f"{np.percentile(behind, 90):.0f}")
    return 0


def xdrop(path, call, drops):
    c, args, _, reads, pruned = _load(path, call)
    sc, _, _ = pruned.align_windows(*args)
    st = pruned.LAST_STATS.copy()
    for x in drops:
        same, cells, short = 0, 0, []
        for t, q in enumerate(reads):
            s, n = pruned.xdrop_pass(c["graph"], q, int(c["lo"][t]), int(c["hi"][t]),
                                     c["scoring"], x)
            cells += n
            same += int(s == sc[t])
            short.append(int(sc[t] - s))
        print(f"X-drop {x} a: {same} of {len(reads)} windows at the exact score (short by "
              f"{sorted(v for v in short if v)}), {cells:.3e} cells against the exact "
              f"passes' {st[0]:.3e} ({st[2]} windows striped)")
    return 0


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    rest = []
    if "--" in argv:
        k = argv.index("--")
        argv, rest = argv[:k], argv[k + 1:]
    ap = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    ap.add_argument("what", choices=["capture", "replay", "shape", "xdrop"])
    ap.add_argument("file")
    ap.add_argument("--call", type=int, default=0)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--config", default="", help="knobs, name=value[,name=value]")
    ap.add_argument("--floor-up", type=int, default=0,
                    help="raise the captured floors by this many points")
    ap.add_argument("--xdrop", default="50,200", help="X-drops to try, in a's")
    a = ap.parse_args(argv)
    if a.what == "shape":
        return shape(a.file, a.call)
    if a.what == "xdrop":
        return xdrop(a.file, a.call, [int(x) for x in a.xdrop.split(",")])
    if a.what == "capture":
        return capture(a.file, rest)
    return replay(a.file, a.call, a.reps, a.config, a.floor_up)


if __name__ == "__main__":
    sys.exit(main())
