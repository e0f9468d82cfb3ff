"""Seeded alignment's window stage, A/B/C: the ``fast`` kernel's window form (best cells
of every window, then the chosen window traced from its end cell), the traceback kernel's
find mode (every window aligned and walked by one GPU thread), and the CPU alone (the
``simd`` window kernel and the CPU traceback, every Numba thread), on the same graph,
index and reads, in one process; results compared (scores, end cells, MAPQ, tracebacks).

    python3 -m bench.gpu_windows --graph G.gfa [--graph rep:2000000] --reads 200000 --out DIR

For each graph and each way of ``--ways`` (default ``find,fast,cpu``): after a warm-up
batch, ``align_batch`` (seeding, chaining, windows, window DP) and ``traceback`` timed
apart over batches of ``--batch`` reads; the window DP's own seconds (SeededAligner's
``seconds windows``), the fast window kernel's counters (cells, kernel seconds, GCUPS,
table seconds), the traceback part's (s2g.trace.gpu_chunk.PROFILE). ``find`` and ``fast``
need a GPU (or the CUDA simulator with tiny inputs); ``--ways cpu`` runs anywhere.
Writes DIR/gpu_windows.json and prints a table.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time

import numpy as np

from bench.seeded import log, sample


def _graph(spec, seed):
    from s2g.graph import load_graph
    if spec.startswith("rep:"):
        import tempfile
        from s2g.simulate import repeat_backbone, snp_graph
        total = int(spec[4:])
        path = os.path.join(tempfile.mkdtemp(prefix="s2g-gw-"), "rep.gfa")
        g0, ref = snp_graph(total, 50, 2, seed,
                            backbone=repeat_backbone(total, max(1, total // 2000), 300, seed=seed))
        g0.write_gfa(path, ref)
        spec = path
    return load_graph(spec, keep_paths=True)


def _run(al, reads, batch):
    """(align seconds, traceback seconds, results) over batches of ``batch`` reads."""
    t_al = t_tb = 0.0
    out = []
    for c in range(0, reads.n_reads, batch):
        sub = reads.subset(np.arange(c, min(c + batch, reads.n_reads)))
        t = time.perf_counter()
        res = al.align_batch(sub)
        t_al += time.perf_counter() - t
        t = time.perf_counter()
        al.traceback(sub, res)
        t_tb += time.perf_counter() - t
        out.append(res)
    return t_al, t_tb, out


def _same(x, y):
    """Whether two runs' results agree field for field (scores, end cells, MAPQ, walks)."""
    for a, b in zip(x, y):
        for f in ("score", "end_i", "end_j", "mapq"):
            if not np.array_equal(getattr(a, f), getattr(b, f)):
                return f
        if list(a.tracebacks) != list(b.tracebacks):
            return "tracebacks"
    return ""


def run_graph(spec, args, rng):
    from s2g.config import configure
    from s2g.index import build_index
    from s2g.scoring import Mode, Scoring
    from s2g.seeded import SeededAligner
    from s2g.trace import gpu_chunk
    from s2g.variants.fast import windows as fw
    log(f"{spec}: load, index")
    g = _graph(spec, args.seed)
    ix = build_index(g)
    reads, _ = sample(g, args.reads, args.read_len, args.error, args.indel_share, rng)
    warm, _ = sample(g, min(args.batch, 5000), args.read_len, args.error, args.indel_share, rng)
    row = {"graph": spec, "columns": int(g.n_bases), "reads": reads.n_reads}
    results = {}
    ways = args.ways.split(",")
    for way in ways:
        configure(gpu_window_fast=way == "fast")
        al = SeededAligner(g, ix, Scoring(), Mode.parse(args.mode),
                           device="cpu" if way == "cpu" else "gpu")
        _run(al, warm, args.batch)                      # compiles, loads the kernels
        for k in al.totals:
            al.totals[k] = 0 if isinstance(al.totals[k], int) else 0.0
        for k in fw.PROFILE:
            fw.PROFILE[k] = 0 if isinstance(fw.PROFILE[k], int) else 0.0
        for k in gpu_chunk.PROFILE:
            gpu_chunk.PROFILE[k] = 0 if isinstance(gpu_chunk.PROFILE[k], int) else 0.0
        log(f"{spec}: {way}")
        t_al, t_tb, res = _run(al, reads, args.batch)
        results[way] = res
        n = reads.n_reads
        p = dict(fw.PROFILE)
        row[way] = {
            "align_s": round(t_al, 3), "traceback_s": round(t_tb, 3),
            "reads_per_s": round(n / (t_al + t_tb)),
            "seeds_chains_s": round(al.totals["seconds seeds+chains"], 3),
            "window_dp_s": round(al.totals["seconds windows"], 3),
            "windows": al.totals["windows"], "window_cells": al.totals["window_cells"],
            "windows_left_to_cpu": al.totals["windows left to the CPU"],
            "fast_windows": {k: (round(v, 3) if isinstance(v, float) else v)
                             for k, v in p.items()},
            "fast_gcups": round(p["cells"] / p["kernel"] / 1e9, 1) if p["kernel"] > 0 else None,
            "gpu_traceback": {k: round(v, 3) for k, v in gpu_chunk.PROFILE.items()
                              if isinstance(v, float) and v},
        }
        log(f"{spec}: {way}: {row[way]}")
    diff = [f"{w}: {d}" for w in ways[1:] for d in [_same(results[ways[0]], results[w])] if d]
    row["same_results"] = "; ".join(diff) or ("identical" if len(ways) > 1 else "-")
    return row


def main(argv=None):
    ap = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()),
                                 formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    ap.add_argument("--graph", action="append", required=True,
                    help="GFA path or rep:N (repeatable)")
    ap.add_argument("--reads", type=int, default=200_000)
    ap.add_argument("--batch", type=int, default=50_000, help="reads a batch")
    ap.add_argument("--read-len", type=int, default=150)
    ap.add_argument("--error", type=float, default=0.01)
    ap.add_argument("--indel-share", type=float, default=0.1)
    ap.add_argument("--mode", default="local", choices=["local", "semiglobal"])
    ap.add_argument("--ways", default="find,fast,cpu",
                    help="comma-separated: find (GPU, one thread a window), fast (GPU, the "
                         "fast kernel's windows), cpu (simd windows, CPU traceback)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", default=None, help="directory for gpu_windows.json")
    args = ap.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    rows = []
    meta = {"host": platform.node(), "date": time.strftime("%Y-%m-%d"),
            "command": "python3 -m bench.gpu_windows " + " ".join(argv or sys.argv[1:])}
    try:
        from numba import cuda
        meta["device"] = cuda.get_current_device().name.decode() \
            if isinstance(cuda.get_current_device().name, bytes) else cuda.get_current_device().name
    except Exception as exc:  # noqa: BLE001
        meta["device"] = f"none ({type(exc).__name__})"
    bad = set(args.ways.split(",")) - {"find", "fast", "cpu"}
    if bad or not args.ways:
        ap.error(f"--ways: unknown {sorted(bad)}; use find, fast, cpu")
    for spec in args.graph:
        rows.append(run_graph(spec, args, rng))
        if args.out:
            os.makedirs(args.out, exist_ok=True)
            with open(os.path.join(args.out, "gpu_windows.json"), "w") as fh:
                json.dump({"meta": meta, "rows": rows}, fh, indent=1)
    print(f"{'graph':28s} {'way':5s} {'reads/s':>9s} {'align s':>8s} {'tb s':>6s} "
          f"{'win DP s':>8s} {'kernel s':>8s} {'GCUPS':>7s} same")
    for r in rows:
        for way in args.ways.split(","):
            x = r[way]
            print(f"{os.path.basename(r['graph'])[:28]:28s} {way:5s} {x['reads_per_s']:9,d} "
                  f"{x['align_s']:8.2f} {x['traceback_s']:6.2f} {x['window_dp_s']:8.2f} "
                  f"{x['fast_windows']['kernel']:8.3f} {str(x['fast_gcups']):>7s} "
                  f"{r['same_results']}")


if __name__ == "__main__":
    main()
