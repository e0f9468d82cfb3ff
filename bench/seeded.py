"""Seeded alignment against full-graph DP: sensitivity, MAPQ calibration, speed.

    python3 -m bench.seeded --graph G.gfa [--graph sim:100000000 ...] --out DIR

For each graph: load it, build the seed index (timed; saved and loaded back, timed),
sample reads with a known origin from the doubled graph (its P lines when it has them,
in either orientation, else random walks from random columns: a walk on ``s-`` nodes is
a reverse-strand read), with ``--error`` errors per base (substitutions, and
``--indel-share`` of them 1-3 bp insertions or deletions), then:

* speed: seeding + window DP (``align_batch``), traceback and GAF text timed apart on
  ``--reads`` reads after a warm-up batch; reads/s per stage and end to end (the sum);
* sensitivity: on ``--full-reads`` of them, full-graph DP (``--full-variant``; ``fast``
  on a GPU) and the share of reads whose seeded score equals it;
* MAPQ calibration: a read is *on its true walk* when its alignment's path shares an
  oriented node with the walk it was sampled from, and *correct* when it is on its true
  walk or scores at least the graph's optimum (full DP of the off-walk reads with MAPQ >=
  30); for MAPQ thresholds 0/10/20/30/40/60, how many reads reach it and the shares of
  those on their true walk and correct, with MAPQ as computed and without counting the
  chains left out by ``--max-windows`` (the rule of s2g.seeded.mapq.pick since issue #40).

Writes DIR/seeded.json and prints a table. ``sim:N`` makes an ``s2g simulate`` graph of
N bases (node length 50, 2 alleles per site) in a temporary directory; ``rep:N[:C]`` the
same with C (default N / 2,000) Alu-like 300 bp copies 2-15% diverged in its backbone.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time

import numba
import numpy as np

from s2g.gaf import gaf_text
from s2g.graph import load_graph
from s2g.index import build_index, load_index
from s2g.reads import ReadBatch
from s2g.scoring import NEG_INF, Mode, Scoring
from s2g.seeded import SeededAligner
from s2g.simulate import simulate

COMP = np.array([3, 2, 1, 0, 4], np.uint8)


def successors(g):
    order = np.argsort(g.pred_idx, kind="stable")
    src = g.pred_idx[order]
    dst = np.repeat(np.arange(g.n_nodes), np.diff(g.pred_ptr))[order]
    ptr = np.zeros(g.n_nodes + 1, np.int64)
    np.add.at(ptr, src + 1, 1)
    return np.cumsum(ptr), dst


def path_walks(g):
    """Each P/W line as FlatGraph node ids, in both orientations."""
    node = {}
    for v in range(g.n_nodes):
        node[(int(g.node_seg[v]), int(g.node_rev[v]))] = v
    walks = []
    for steps in g.paths.values():
        fw = [node.get((s, r)) for s, r in steps]
        rv = [node.get((s, 1 - r)) for s, r in reversed(steps)]
        for w in (fw, rv):
            if all(x is not None for x in w):
                walks.append(np.array(w, np.int64))
    return walks


def sample(g, n, length, err, indel_share, rng):
    """(ReadBatch, truth node sets): reads with known origin (module doc)."""
    walks = path_walks(g)
    sptr, sidx = successors(g)
    lens = np.diff(g.node_start)
    seqs, truths = [], []
    while len(seqs) < n:
        if walks:
            w = walks[int(rng.integers(len(walks)))]
            cum = np.concatenate([[0], np.cumsum(lens[w])])
            if cum[-1] < length:
                continue
            p = int(rng.integers(0, cum[-1] - length + 1))
            k0 = int(np.searchsorted(cum, p, side="right") - 1)
            k1 = int(np.searchsorted(cum, p + length - 1, side="right") - 1)
            nodes = w[k0:k1 + 1]
            bases = np.concatenate([g.base[g.node_start[v]:g.node_start[v + 1]] for v in nodes])
            off = p - int(cum[k0])
            bases = bases[off:off + length]
        else:
            j = int(rng.integers(0, g.n_bases))
            v = int(np.searchsorted(g.node_start, j, side="right") - 1)
            nodes, parts, got = [v], [g.base[j:g.node_start[v + 1]]], g.node_start[v + 1] - j
            while got < length and sptr[v + 1] > sptr[v]:
                v = int(sidx[sptr[v] + rng.integers(sptr[v + 1] - sptr[v])])
                nodes.append(v)
                parts.append(g.base[g.node_start[v]:g.node_start[v + 1]])
                got += lens[v]
            if got < length:
                continue
            bases = np.concatenate(parts)[:length]
        if (bases > 3).mean() > 0.1:
            continue
        seqs.append(mutate(bases, err, indel_share, rng))
        truths.append(set(int(x) for x in nodes))
    names = [f"r{i}" for i in range(n)]
    return ReadBatch.from_codes(names, seqs), truths


def mutate(bases, err, indel_share, rng):
    """``bases`` (codes) with ``err`` errors a base, ``indel_share`` of them 1-3 bp
    insertions or deletions (half each), the rest substitutions."""
    out = []
    for b in bases:
        x = rng.random()
        if x < err * (1 - indel_share):
            out.append((int(b) + int(rng.integers(1, 4))) % 4)
        elif x < err * (1 - indel_share / 2):
            out.append(int(b))
            out.extend(int(c) for c in rng.integers(0, 4, int(rng.integers(1, 4))))
        elif x < err:
            continue
        else:
            out.append(int(b))
    return np.array(out, np.uint8)


def on_walk(res, truths):
    ok = np.zeros(len(res), bool)
    flat = res.flat
    for r in range(len(res)):
        if flat is None or not flat.has[r]:
            continue
        p0, npth = int(flat.path_at[r]), int(flat.n_path[r])
        ok[r] = bool(truths[r].intersection(flat.path[p0:p0 + npth].tolist()))
    return ok


def full_dp(g, reads, sc, mode, variant):
    if variant == "fast":
        from s2g.variants import fast as mod
    else:
        from s2g.variants import cpu_parallel as mod
    mod.align_batch(g, reads.subset(np.arange(min(8, reads.n_reads))), sc, mode)   # warm-up
    t = time.perf_counter()
    res = mod.align_batch(g, reads, sc, mode)
    return res, time.perf_counter() - t


def log(msg):
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def run_graph(spec, args, rng):
    row = {"graph": spec}
    log(f"{spec}: start")
    if spec.startswith("sim:"):
        d = tempfile.mkdtemp(prefix="s2g-seeded-")
        t = time.perf_counter()
        path = simulate(os.path.join(d, "sim"), total_bases=int(spec[4:]),
                        node_len=args.sim_node_len, n_reads=1, seed=args.seed)[0]
        row["simulate_s"] = round(time.perf_counter() - t, 2)
    elif spec.startswith("rep:"):
        # SNP graph whose backbone holds Alu-like copies: rep:N[:COPIES] (default one 300 bp
        # copy per 2,000 bases, 2-15% diverged from their element)
        from s2g.simulate import repeat_backbone, snp_graph
        parts = spec[4:].split(":")
        total = int(parts[0])
        copies = int(parts[1]) if len(parts) > 1 else max(1, total // 2000)
        d = tempfile.mkdtemp(prefix="s2g-seeded-")
        path = os.path.join(d, "rep.gfa")
        g0, ref = snp_graph(total, args.sim_node_len, 2, args.seed,
                            backbone=repeat_backbone(total, copies, 300, seed=args.seed))
        g0.write_gfa(path, ref)
    else:
        path = spec
    log("load")
    t = time.perf_counter()
    g = load_graph(path, break_cycles=args.break_cycles, keep_paths=True)
    row["load_s"] = round(time.perf_counter() - t, 2)
    row["columns"] = g.n_bases
    log("index")
    t = time.perf_counter()
    ix = build_index(g)
    row["index_build_s"] = round(time.perf_counter() - t, 2)
    row["index"] = ix.stats
    row["index_mb"] = round(ix.nbytes / 1e6, 1)
    ipath = os.path.join(tempfile.mkdtemp(prefix="s2g-idx-"), "g.s2gi")
    t = time.perf_counter()
    ix.save(ipath)
    row["index_save_s"] = round(time.perf_counter() - t, 2)
    t = time.perf_counter()
    ix = load_index(ipath, g)
    row["index_load_s"] = round(time.perf_counter() - t, 2)
    sc = Scoring()
    mode = Mode.parse(args.mode)
    log("sample reads")
    reads, truths = sample(g, args.reads, args.read_len, args.error, args.indel_share, rng)
    log("seeded")
    row["reads"] = reads.n_reads
    kernel = None
    if args.window_kernel == "ref":
        from s2g.window import align_windows_ref as kernel
    sa = SeededAligner(g, ix, sc, mode, window_kernel=kernel, device=args.device)
    # warm-up on enough reads that every code path the timed run takes is compiled
    # (64 reads missed the big windows' paths: session 8's real-graph rows timed JIT)
    warm = reads.subset(np.arange(min(args.warm_reads, reads.n_reads)))
    sa.traceback(warm, sa.align_batch(warm))
    gaf_text(g, sa.align_batch(warm))
    sa.totals = dict.fromkeys(sa.totals, 0)
    prof = None
    if args.device == "gpu":
        from s2g.trace.gpu_chunk import PROFILE as prof
        for key in prof:
            prof[key] = 0.0
    t0 = time.perf_counter()
    cand = sa.candidates(reads)
    res = sa.align_batch(reads, cand)
    t1 = time.perf_counter()
    widths = res.wg.t_hi - res.wg.t_lo          # columns per window (the traceback drops wg)
    sa.traceback(reads, res)
    t2 = time.perf_counter()
    text = gaf_text(g, res)
    t3 = time.perf_counter()
    n_cut = int((cand.cut > 0).sum())
    cand.cut[:] = 0                          # MAPQ as before chains left out counted
    totals = dict(sa.totals)
    mapq_nocut = sa.align_batch(reads, cand).mapq
    sa.totals = totals
    n = reads.n_reads
    row["threads"] = numba.get_num_threads()
    row["device"] = args.device
    row["seconds"] = {"seed+window DP": round(t1 - t0, 3), "traceback": round(t2 - t1, 3),
                      "GAF text": round(t3 - t2, 3)}
    row["reads_per_s"] = {k: round(n / max(v, 1e-9)) for k, v in row["seconds"].items()}
    row["reads_per_s"]["all stages"] = round(n / (t3 - t0))
    row["stage_seconds"] = {k: round(v, 3) for k, v in sa.totals.items() if "seconds" in k}
    if prof is not None:
        row["gpu_window_seconds"] = {k: round(v, 3) for k, v in prof.items()}
    w = widths if len(widths) else np.array([0])
    row["window_columns_pct"] = {p: float(np.percentile(w, p)) for p in (50, 90, 99, 99.9, 100)}
    row["windows_per_read"] = round(sa.totals["windows"] / n, 3)
    row["window_cells_per_read"] = round(sa.totals["window_cells"] / n)
    row["unseeded"] = sa.totals["unseeded"]
    row["windows_left_to_cpu"] = sa.totals["windows left to the CPU"]
    row["aligned"] = int((res.score > NEG_INF).sum())
    assert text.count("\n") == n
    # sensitivity against full-graph DP
    nf = min(args.full_reads, n)
    if nf:
        log("full DP")
        sub = np.arange(nf)
        full, dt = full_dp(g, reads.subset(sub), sc, mode, args.full_variant)
        same = res.score[sub] == full.score
        row["full_dp"] = {"reads": nf, "variant": args.full_variant, "seconds": round(dt, 3),
                          "reads_per_s": round(nf / dt, 1),
                          "same_score": round(float(same.mean()), 5),
                          "seeded_lower": int((res.score[sub] < full.score).sum()),
                          "seeded_higher": int((res.score[sub] > full.score).sum())}
    # MAPQ calibration: on the true walk, or (full DP of the others with MAPQ >= 30)
    # scoring at least the graph's optimum, so at least the true walk
    ok = on_walk(res, truths)
    good = ok.copy()
    doubt = np.nonzero(~ok & (res.score > NEG_INF) & (np.maximum(res.mapq, mapq_nocut) >= 30)
                       & (res.mapq < 255))[0]
    if len(doubt):
        log(f"full DP of {len(doubt)} off-walk reads")
        fd, _ = full_dp(g, reads.subset(doubt), sc, mode, args.full_variant)
        good[doubt] = res.score[doubt] >= fd.score
    cal = {}
    for thr in (0, 10, 20, 30, 40, 60):
        entry = {}
        for key, mq in (("", res.mapq), ("without_cut_rule_", mapq_nocut)):
            sel = (res.score > NEG_INF) & (mq >= thr)
            entry[key + "reads"] = int(sel.sum())
            entry[key + "on_true_walk"] = (round(float(ok[sel].mean()), 5) if sel.any()
                                           else None)
            entry[key + "true_walk_or_optimal"] = (round(float(good[sel].mean()), 5)
                                                   if sel.any() else None)
        cal[thr] = entry
    row["mapq"] = cal
    row["reads_with_chains_left_out"] = n_cut
    if args.e2e:
        row["e2e"] = e2e(path, ipath, reads, args)
    os.unlink(ipath)
    return row


def e2e(gfa, ipath, reads, args):
    """``s2g align --seeded`` in this process on the same graph, index and reads (FASTQ
    written first), twice (the first compiles): wall seconds of both, and reads/s of the
    second without loading the graph and the index."""
    import contextlib
    import io
    import re
    from s2g.cli import main as cli
    d = tempfile.mkdtemp(prefix="s2g-e2e-")
    fq = os.path.join(d, "r.fq")
    with open(fq, "w") as fh:
        for r in range(reads.n_reads):
            s = "ACGTN"
            seq = "".join(s[c] for c in reads.codes(r).tolist())
            fh.write(f"@{reads.names[r]}\n{seq}\n+\n{'I' * len(seq)}\n")
    argv = ["align", gfa, fq, "-o", os.path.join(d, "o.gaf"), "--seeded", "--index", ipath,
            "--timings", "--mode", args.mode] + (["--break-cycles"] if args.break_cycles else [])
    if args.device == "gpu":
        argv += ["--variant", "fast"]
    cold = None
    for _ in range(args.e2e_runs):  # the first run compiles what it has not yet compiled
        err = io.StringIO()
        t = time.perf_counter()
        with contextlib.redirect_stderr(err):
            code = cli(argv)
        wall = time.perf_counter() - t
        cold = wall if cold is None else cold
    text = err.getvalue()
    spent = dict((k, float(v)) for k, v in re.findall(r"(load graph|index) ([0-9.]+)", text))
    run = wall - spent.get("load graph", 0) - spent.get("index", 0)
    n_lines = sum(1 for _ in open(os.path.join(d, "o.gaf")))
    return {"exit": code, "cold_wall_s": round(cold, 2), "wall_s": round(wall, 2), "load_s": spent, "align_s": round(run, 2),
            "reads_per_s": round(reads.n_reads / run), "gaf_lines": n_lines,
            "stderr": text.strip().splitlines()[-2:]}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    ap.add_argument("--graph", action="append", required=True,
                    help="GFA path or sim:N (repeatable)")
    ap.add_argument("--reads", type=int, default=20_000)
    ap.add_argument("--read-len", type=int, default=150)
    ap.add_argument("--error", type=float, default=0.01)
    ap.add_argument("--indel-share", type=float, default=0.2)
    ap.add_argument("--full-reads", type=int, default=500,
                    help="reads also aligned by full-graph DP (sensitivity)")
    ap.add_argument("--full-variant", default="cpu", choices=("cpu", "fast"))
    ap.add_argument("--window-kernel", default="simd", choices=("ref", "simd"),
                    help="CPU window kernel (and for windows too large for the GPU)")
    ap.add_argument("--device", default="cpu", choices=("cpu", "gpu"),
                    help="where the windows run (gpu: the GPU traceback kernel's find mode)")
    ap.add_argument("--mode", default="local", choices=("local", "semiglobal"))
    ap.add_argument("--break-cycles", action="store_true")
    ap.add_argument("--sim-node-len", type=float, default=50,
                    help="mean backbone node length of sim:N graphs")
    ap.add_argument("--e2e", action="store_true",
                    help="also run 's2g align --seeded' on the same graph, index and reads")
    ap.add_argument("--e2e-runs", type=int, default=2, help="runs of --e2e (the last is reported)")
    ap.add_argument("--warm-reads", type=int, default=2000,
                    help="reads aligned (untimed) first, so that the timed run compiles nothing")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", default=None, help="directory for seeded.json")
    args = ap.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    rows = []
    for spec in args.graph:
        row = run_graph(spec, args, rng)
        rows.append(row)
        print(json.dumps(row), flush=True)
    meta = {"date": time.strftime("%Y-%m-%d"), "host": platform.node(),
            "cpu_threads": numba.get_num_threads(), "argv": sys.argv[1:]}
    try:
        from s2g.variants.registry import cuda_available
        meta["gpu"] = cuda_available()[1] if cuda_available()[0] else None
    except Exception:
        meta["gpu"] = None
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, "seeded.json"), "w") as fh:
            json.dump({"meta": meta, "rows": rows}, fh, indent=1)
    print(f"{'graph':<28} {'columns':>11} {'index s':>8} {'reads/s':>9} {'same score':>10} "
          f"{'MAPQ>=30':>9} {'correct':>8}")
    for r in rows:
        fd = r.get("full_dp", {})
        m30 = r["mapq"][30]
        print(f"{os.path.basename(r['graph']):<28} {r['columns']:>11,} {r['index_build_s']:>8} "
              f"{r['reads_per_s']['all stages']:>9,} {fd.get('same_score', '-'):>10} "
              f"{m30['reads']:>9} {m30['true_walk_or_optimal']!s:>8}")


if __name__ == "__main__":
    main()
