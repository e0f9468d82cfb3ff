"""Capture the long-read window calls of a run, then time the pruned window pass on them.

    python -m bench.prune_replay capture OUT.pkl -- align MHC.gfa r100.fq --variant simd
    python -m bench.prune_replay replay OUT.pkl [--call 0] [--reps 3] [--config k=v,...]

``capture`` runs ``s2g`` in this process with :func:`s2g.variants.pruned.align_windows`
wrapped: each call's window graph, reads and tasks are pickled to OUT.pkl (the first 100
MHC 10 kbp reads: ~60 MB). ``replay`` calls it again on call ``--call`` (0: the lead
windows), once to compile and then ``--reps`` times, and prints the best wall, the cells
computed, the passes after the first and the windows given up to striped
(``pruned.LAST_STATS``), with ``S2G_CONFIG``-style knobs from ``--config`` (and the
captured floors raised ``--floor-up`` points). Run it with
``NUMBA_NUM_THREADS=1`` for one core. After editing a module the pass calls into, import
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


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    rest = []
    if "--" in argv:
        k = argv.index("--")
        argv, rest = argv[:k], argv[k + 1:]
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("what", choices=["capture", "replay"])
    ap.add_argument("file")
    ap.add_argument("--call", type=int, default=0)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--config", default="", help="knobs, name=value[,name=value]")
    ap.add_argument("--floor-up", type=int, default=0,
                    help="raise the captured floors by this many points")
    a = ap.parse_args(argv)
    if a.what == "capture":
        return capture(a.file, rest)
    return replay(a.file, a.call, a.reps, a.config, a.floor_up)


if __name__ == "__main__":
    sys.exit(main())
