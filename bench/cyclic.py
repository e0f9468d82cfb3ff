"""Exact alignment on cyclic graphs (s2g/cyclic.py): unrolled size and speed against
--break-cycles, on the real cyclic graphs LPA and MT.

    python3 -m bench.cyclic --out bench/results/<machine> [--graphs lpa,mt]
        [--read-lens 150,1000] [--reads 256] [--variants simd] [--modes local,semiglobal]

Per graph: the cyclic components, their bases, the DFS back edges, and for each read
length and mode the DP columns before and after unrolling (walk bound L, copies, time to
unroll). Workload: --reads reads of each length, half spelled by walks that cross a
back edge of a cycle (a walk backwards from its tail, then forwards from its head), half
by random walks from a uniform start; 1% substitutions; fixed seed. Each variant aligns
them to the unrolled DAG (exact) and to the --break-cycles DAG; cells = DAG columns x
read length; GCUPS = cells / seconds / 1e9 (``align_batch`` wall time, best of --reps
after an untimed warm-up, exact and --break-cycles timed in turn; for a CUDA variant this
includes the transfers). Before
timing, the variant's scores on the unrolled DAG are compared with V0's on --check-reads
reads (any difference stops the run), and the reads whose exact score beats
--break-cycles are counted (the alignments --break-cycles loses).

Writes ``cyclic.json`` (or --name) under --out: meta (host, CPU, GPU, versions, commit,
date, command) and one record per (graph, read length, mode, variant).
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
import warnings

import numba
import numpy as np

import s2g
from s2g.graph import open_graph
from s2g.graph_core import BASE_CODE
from s2g.reads import ReadBatch
from s2g.variants import registry

REAL = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests",
                    "data", "real")
GRAPHS = {"lpa": os.path.join(REAL, "lpa_odgi", "LPA.gfa.gz"),
          "mt": os.path.join(REAL, "mt_minigraph", "MT.gfa")}


def parse_args(argv=None):
    ap = argparse.ArgumentParser(prog="python3 -m bench.cyclic",
                                 description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    ap.add_argument("--out", required=True, help="directory for the JSON")
    ap.add_argument("--name", default="cyclic.json", help="file name under --out")
    ap.add_argument("--graphs", default="lpa,mt",
                    help="comma list: lpa, mt (tests/data/real) or GFA paths")
    ap.add_argument("--read-lens", default="150,1000", help="comma list of read lengths")
    ap.add_argument("--reads", type=int, default=256, help="reads per read length")
    ap.add_argument("--variants", default="simd", help="comma list ('s2g variants')")
    ap.add_argument("--modes", default="local,semiglobal")
    ap.add_argument("--reps", type=int, default=3, help="timed repetitions (best kept)")
    ap.add_argument("--check-reads", type=int, default=8, help="reads checked against V0")
    ap.add_argument("--info-lens", default="150,1000,10000",
                    help="read lengths whose unrolled size is reported (no alignment)")
    ap.add_argument("--seed", type=int, default=5)
    return ap.parse_args(argv)


def sample_reads(cyc, n, m, rng):
    """Read sequences of ``m`` bases: half across a back edge, half random walks."""
    src = np.repeat(np.arange(cyc.n), np.diff(cyc.succ_ptr))
    back = np.flatnonzero(cyc.back)
    pred = [[] for _ in range(cyc.n)]
    succ = [[] for _ in range(cyc.n)]
    for u, v in zip(src.tolist(), cyc.succ_idx.tolist()):
        succ[u].append(v)
        pred[v].append(u)
    seg_seq = cyc.rec.seg_seqs

    def seq(v):
        s = BASE_CODE[np.frombuffer(seg_seq[v >> 1], np.uint8)]
        return _revcomp(s) if v & 1 else s

    alive = np.flatnonzero(cyc.alive)
    weights = cyc.node_len[alive] / cyc.node_len[alive].sum()
    out = []
    for k in range(n):
        if k % 2 == 0 and len(back):
            e = back[rng.integers(len(back))]
            u, v = int(src[e]), int(cyc.succ_idx[e])
            half = m // 2
            left, x = seq(u), u
            while len(left) < half and pred[x]:
                x = pred[x][rng.integers(len(pred[x]))]
                left = np.concatenate([seq(x), left])
            right, x = seq(v), v
            while len(right) < m - len(left[-half:]) and succ[x]:
                x = succ[x][rng.integers(len(succ[x]))]
                right = np.concatenate([right, seq(x)])
            r = np.concatenate([left[-half:], right])[:m]
        else:
            x = int(rng.choice(alive, p=weights))
            r = seq(x)[rng.integers(cyc.node_len[x]):]
            while len(r) < m and succ[x]:
                x = succ[x][rng.integers(len(succ[x]))]
                r = np.concatenate([r, seq(x)])
            r = r[:m]
        r = r.copy()
        sub = rng.random(len(r)) < 0.01
        r[sub] = (r[sub] + rng.integers(1, 4, int(sub.sum()))) % 4
        r[r > 3] = rng.integers(0, 4, int((r > 3).sum()))
        out.append(r.astype(np.uint8))
    return ReadBatch.from_codes([f"r{k}" for k in range(n)], out)


def _revcomp(codes):
    comp = np.array([3, 2, 1, 0, 4], np.uint8)
    return comp[codes[::-1]]


def best_times(fns, reps):
    """Best wall time of each function, the functions run in turn ``reps`` times (so a
    busy spell on a shared machine hits both sides alike)."""
    best = [float("inf")] * len(fns)
    for _ in range(reps):
        for k, fn in enumerate(fns):
            t = time.perf_counter()
            fn()
            best[k] = min(best[k], time.perf_counter() - t)
    return best


def meta(argv):
    from bench.harness import cpu_name, git_commit
    commit, cpu = git_commit(), cpu_name()
    gpu = None
    try:
        gpu = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=30).stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        pass
    return {"host": platform.node(), "cpu": cpu, "gpu": gpu, "cores": os.cpu_count(),
            "numba_threads": numba.config.NUMBA_NUM_THREADS,
            "python": platform.python_version(), "numba": numba.__version__,
            "commit": commit, "date": time.strftime("%Y-%m-%d %H:%M"),
            "load_average_at_start": os.getloadavg()[0],
            "command": "python3 -m bench.cyclic " + " ".join(argv)}


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    info = meta(argv)
    rng = np.random.default_rng(args.seed)
    lens = [int(x) for x in args.read_lens.split(",") if x]
    modes = [x for x in args.modes.split(",") if x]
    variants = [x for x in args.variants.split(",") if x]
    for v in variants:
        registry.get_variant(v)
    v0 = registry.get_variant("v0")
    records, graphs = [], []
    for name in args.graphs.split(","):
        path = GRAPHS.get(name, name)
        t = time.perf_counter()
        cyc = open_graph(path)
        t_open = time.perf_counter() - t
        if isinstance(cyc, s2g.FlatGraph):
            print(f"{name}: acyclic, nothing to unroll", file=sys.stderr)
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            broken = s2g.load_graph(path, break_cycles=True)
        g_info = {"graph": name, "path": path, "columns": cyc.n_bases,
                  "cyclic_components": cyc.cyclic_components, "bases_in_cycles": cyc.scc_bases,
                  "back_edges": cyc.n_back, "open_s": round(t_open, 3), "unroll": []}
        for m in [int(x) for x in args.info_lens.split(",") if x]:
            for mode in modes:
                t = time.perf_counter()
                g = cyc.unroll(m, mode=mode)
                dt = time.perf_counter() - t
                c = cyc.cost(m, mode=mode)
                g_info["unroll"].append(dict(c, mode=mode, unroll_s=round(dt, 4),
                                             dp_nodes=g.n_nodes, node_bound_slots=g.n_slots))
                print(f"{name} m={m} {mode}: L={c['walk_bound']} columns {c['columns_before']:,}"
                      f" -> {c['columns_after']:,} (+{c['columns_after'] / c['columns_before'] - 1:.2%}"
                      f", {c['copies']} copies, {dt:.3f} s)", file=sys.stderr)
        graphs.append(g_info)
        for m in lens:
            batch = sample_reads(cyc, args.reads, m, rng)
            for mode in modes:
                g = cyc.unroll(m, mode=mode)
                sc = s2g.Scoring()
                chk = batch.subset(range(min(args.check_reads, batch.n_reads)))
                want = v0.align_batch(g, chk, sc, s2g.Mode.parse(mode))
                for var in variants:
                    mod = registry.get_variant(var)
                    got = mod.align_batch(g, chk, sc, s2g.Mode.parse(mode))   # warm-up + check
                    if list(got.score) != list(want.score):
                        raise SystemExit(f"{var} != v0 on {name} m={m} {mode}: "
                                         f"{list(got.score)} vs {list(want.score)}")
                    exact = mod.align_batch(g, batch, sc, s2g.Mode.parse(mode))
                    brk = mod.align_batch(broken, batch, sc, s2g.Mode.parse(mode))
                    gained = int(np.count_nonzero(np.asarray(exact.score) > np.asarray(brk.score)))
                    lost = int(np.count_nonzero(np.asarray(exact.score) < np.asarray(brk.score)))
                    if lost:
                        raise SystemExit(f"{var}: exact below --break-cycles on {lost} reads")
                    md = s2g.Mode.parse(mode)
                    t_ex, t_br = best_times(
                        [lambda: mod.align_batch(g, batch, sc, md),
                         lambda: mod.align_batch(broken, batch, sc, md)], args.reps)
                    cells_ex = g.n_bases * batch.total_bases
                    cells_br = broken.n_bases * batch.total_bases
                    rec = {"graph": name, "read_len": m, "mode": mode, "variant": var,
                           "reads": batch.n_reads, "columns_exact": g.n_bases,
                           "columns_broken": broken.n_bases, "walk_bound": g.walk_bound,
                           "exact_s": round(t_ex, 4), "broken_s": round(t_br, 4),
                           "exact_gcups": round(cells_ex / t_ex / 1e9, 3),
                           "broken_gcups": round(cells_br / t_br / 1e9, 3),
                           "exact_reads_per_s": round(batch.n_reads / t_ex, 1),
                           "broken_reads_per_s": round(batch.n_reads / t_br, 1),
                           "reads_better_than_broken": gained}
                    records.append(rec)
                    print(f"{name} m={m} {mode} {var}: exact {rec['exact_reads_per_s']:,} reads/s "
                          f"({rec['exact_gcups']} GCUPS, {g.n_bases:,} columns), --break-cycles "
                          f"{rec['broken_reads_per_s']:,} reads/s ({rec['broken_gcups']} GCUPS); "
                          f"{gained}/{batch.n_reads} reads score higher exact", file=sys.stderr)
    out = os.path.join(args.out, args.name)
    with open(out, "w") as fh:
        json.dump({"meta": info, "graphs": graphs, "records": records}, fh, indent=1)
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
