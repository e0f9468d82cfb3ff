"""GCUPS of the design's GPU variants V1-V4 (and V0 for the speedup) on one GPU.

Usage (repository root, on a machine with a CUDA GPU)::

    python bench/gpu_variants.py --out bench/results/<device>/      # ~2-3 minutes

Workload: ``s2g.simulate.snp_graph(20000, 50, 2, seed=1)`` loaded with both strands
(so the DP has ~2 x 20 kbp columns), ``sample_reads(..., 150 bp, seed=2)``; batches of
256 and 1,024 reads. cells = DP columns x read length, summed over the reads timed.

* kernel GCUPS: CUDA events around the variant's launches (``last_kernel_ms`` of
  ``s2g.variants._cuda_common``), after a warm-up call that compiles. V1 and V2 launch
  once per anti-diagonal, so their "kernel" time includes the gaps between launches.
* end-to-end GCUPS: wall time of ``align_batch`` (uploads, launches, copies, decode;
  no traceback).
* V1 is timed on a few reads (one launch per anti-diagonal per read) and V0 on a
  subsample: GCUPS is a rate, so it is comparable; ``n_reads`` says what was timed.
* Every timed result is checked against V0 on the reads both ran.
* The V4 cliff: V4 with blocks capped at 128 threads on reads of 64..384 bp: a read
  of 129 bp needs two passes over the graph.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import platform
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from s2g.graph import load_graph  # noqa: E402
from s2g.reads import ReadBatch  # noqa: E402
from s2g.scoring import Mode, Scoring  # noqa: E402
from s2g.simulate import sample_reads, snp_graph  # noqa: E402

VARIANTS = ["v1_antidiag", "v2_rolling", "v3_coop", "v4_interread"]


def workload(total=20000, node_len=50, branching=2, seed=1, n_reads=1024, read_len=150, rseed=2):
    sg, _ = snp_graph(total, node_len, branching, seed)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "g.gfa")
        sg.write_gfa(path)
        g = load_graph(path)
    rd = sample_reads(sg, n_reads, read_len, seed=rseed)
    reads = ReadBatch.from_sequences([r[0] for r in rd], [r[1] for r in rd])
    return g, reads


def same(a, b):
    return (np.array_equal(a.score, b.score) and np.array_equal(a.end_i, b.end_i)
            and np.array_equal(a.end_j, b.end_j))


def time_variant(mod, g, reads, sc, mode, reps=3):
    from s2g.variants import _cuda_common as cc
    res = None
    kern, wall = [], []
    for _ in range(reps):
        t0 = time.perf_counter()
        res = mod.align_batch(g, reads, sc, mode)
        wall.append(time.perf_counter() - t0)
        kern.append(cc.last_kernel_ms / 1e3)
    return res, float(np.median(kern)), float(np.median(wall))


def main(argv=None):
    ap = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    ap.add_argument("--out", default=None, help="folder for gpu_variants.json and .md")
    ap.add_argument("--mode", default="local")
    ap.add_argument("--v1-reads", type=int, default=2)
    ap.add_argument("--v0-reads", type=int, default=32)
    ap.add_argument("--skip-cliff", action="store_true")
    ap.add_argument("--sizes", type=int, nargs="+", default=[256, 1024], help="read batch sizes")
    args = ap.parse_args(argv)
    import importlib

    from numba import cuda

    from s2g.variants import _cuda_common as cc
    from s2g.variants import v0_cpu
    dev = cuda.get_current_device()
    name = dev.name.decode() if isinstance(dev.name, bytes) else str(dev.name)
    mode = Mode.parse(args.mode)
    sc = Scoring()
    g, reads_all = workload()
    N = g.n_bases
    rec = {"device": name, "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
           "command": "python bench/gpu_variants.py " + " ".join(argv if argv is not None else sys.argv[1:]),
           "python": platform.python_version(), "numpy": np.__version__,
           "numba": __import__("numba").__version__,
           "graph": {"generator": "snp_graph(20000, 50, 2, seed=1)", "dp_columns": N,
                     "nodes": g.n_nodes, "gpu_slots": cc.tables(g).n_slots},
           "reads": {"generator": "sample_reads(150 bp, seed=2)"}, "mode": mode.name.lower(),
           "scoring": list(sc.as_tuple()), "points": []}
    # V0 reference on a prefix (also its speed)
    nv0 = args.v0_reads
    sub0 = reads_all.subset(np.arange(nv0))
    v0_cpu.align_batch(g, reads_all.subset([0]), sc, mode)
    t0 = time.perf_counter()
    ref0 = v0_cpu.align_batch(g, sub0, sc, mode)
    t_v0 = time.perf_counter() - t0
    cells0 = N * int(sub0.lengths().sum())
    rec["points"].append({"variant": "v0", "n_reads": nv0, "cells": cells0, "kernel_s": t_v0,
                          "e2e_s": t_v0, "kernel_gcups": cells0 / t_v0 / 1e9,
                          "e2e_gcups": cells0 / t_v0 / 1e9, "exact": True})
    print(f"v0 {nv0} reads {cells0 / t_v0 / 1e9:.3f} GCUPS", flush=True)
    for vname in VARIANTS:
        mod = importlib.import_module(f"s2g.variants.{vname}")
        mod.align_batch(g, reads_all.subset([0, 1]), sc, mode)      # JIT warm-up
        sizes = [args.v1_reads] if vname == "v1_antidiag" else args.sizes
        for n in sizes:
            rb = reads_all.subset(np.arange(n))
            res, ks, ws = time_variant(mod, g, rb, sc, mode, reps=1 if vname == "v1_antidiag" else 3)
            k = min(n, nv0)
            exact = bool(np.array_equal(res.score[:k], ref0.score[:k]) and
                         np.array_equal(res.end_i[:k], ref0.end_i[:k]) and
                         np.array_equal(res.end_j[:k], ref0.end_j[:k]))
            cells = N * int(rb.lengths().sum())
            pt = {"variant": vname.split("_")[0], "n_reads": n, "cells": cells, "kernel_s": ks,
                  "e2e_s": ws, "kernel_gcups": cells / ks / 1e9 if ks > 0 else None,
                  "e2e_gcups": cells / ws / 1e9, "exact": exact}
            rec["points"].append(pt)
            print(json.dumps(pt), flush=True)
    if not args.skip_cliff:
        v4 = importlib.import_module("s2g.variants.v4_interread")
        saved = cc.V4_MAX_BLOCK
        cc.V4_MAX_BLOCK = 128
        rec["cliff"] = {"block": 128, "points": []}
        try:
            for rl in [64, 96, 128, 129, 160, 192, 256, 257, 384]:
                sg, _ = snp_graph(20000, 50, 2, 1)
                rd = sample_reads(sg, 1024, rl, seed=3)
                rb = ReadBatch.from_sequences([r[0] for r in rd], [r[1] for r in rd])
                v4.align_batch(g, rb.subset([0]), sc, mode)
                _, ks, ws = time_variant(v4, g, rb, sc, mode, reps=3)
                cells = N * int(rb.lengths().sum())
                pt = {"read_len": rl, "passes": -(-rl // 128), "kernel_s": ks,
                      "kernel_gcups": cells / ks / 1e9, "e2e_gcups": cells / ws / 1e9}
                rec["cliff"]["points"].append(pt)
                print("cliff", json.dumps(pt), flush=True)
        finally:
            cc.V4_MAX_BLOCK = saved
    out = args.out or os.path.join("bench", "results", re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-"))
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "gpu_variants.json"), "w") as fh:
        json.dump(rec, fh, indent=1)
    with open(os.path.join(out, "gpu_variants.md"), "w") as fh:
        fh.write(markdown(rec))
    print(markdown(rec))


def markdown(rec):
    v0 = next(p for p in rec["points"] if p["variant"] == "v0")
    lines = [f"# GPU variants V1-V4 on {rec['device']} ({rec['date']})", "",
             f"`{rec['command']}`; graph {rec['graph']['generator']}, both strands, "
             f"{rec['graph']['dp_columns']} DP columns; 150 bp reads; {rec['mode']} mode, scoring "
             f"{rec['scoring']}.", "",
             "| variant | reads | kernel GCUPS | end-to-end GCUPS | speedup vs V0 (kernel) | exact vs V0 |",
             "|---|---:|---:|---:|---:|---|"]
    for p in rec["points"]:
        kg = p["kernel_gcups"] or 0.0
        lines.append(f"| {p['variant']} | {p['n_reads']} | {kg:.3f} | {p['e2e_gcups']:.3f} | "
                     f"{kg / v0['kernel_gcups']:.1f}x | {'yes' if p['exact'] else 'NO'} |")
    if rec.get("cliff"):
        lines += ["", f"V4 with blocks capped at {rec['cliff']['block']} threads (1,024 reads):", "",
                  "| read length | passes | kernel GCUPS |", "|---:|---:|---:|"]
        for p in rec["cliff"]["points"]:
            lines.append(f"| {p['read_len']} | {p['passes']} | {p['kernel_gcups']:.1f} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
