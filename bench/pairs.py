"""Paired-end seeded alignment against single-end on the same reads: pairing, rescue,
MAPQ calibration, speed.

    python3 -m bench.pairs --graph G.gfa [--graph rep:2000000 ...] --pairs N --out DIR

For each graph (a GFA path, ``sim:N`` or ``rep:N[:C]`` as in :mod:`bench.seeded`; a cyclic
GFA is loaded with its DFS back edges dropped, ``break_cycles``, as ``bench.seeded
--break-cycles`` does): build the seed index, then sample ``--pairs`` pairs with a known
origin. A fragment of ``max(--read-len, round(Normal(--frag-mean, --frag-sd)))`` bases is
cut from a P/W path of the doubled graph in either orientation (:func:`bench.seeded.
path_walks`; random walks from random columns when there are none); mate 1 is its first
``--read-len`` bases, mate 2 the reverse complement of its last ``--read-len``: the same
stretch of the opposite-orientation walk (each node swapped for its other-strand copy,
in reverse order). A mate's truth is the set of oriented nodes it was cut from, on its
own strand. Errors: ``--error`` per base, ``--indel-share`` of them 1-3 bp insertions or
deletions (as :func:`bench.seeded.sample`); in ``--hard-share`` of the pairs mate 2
instead gets ``--hard-error`` substitutions per base and no indels (a mate that loses its
seeds: what rescue is for). Batches hold the pairs interleaved (mate 1 of pair k at read
2k, mate 2 at 2k+1).

Both runs see the same batch after an untimed warm-up on ``--warm-pairs`` pairs (every
code path compiled, rescue included): single-end (``SeededAligner.align_batch`` +
``.traceback``) and paired (``PairedAligner(SeededAligner(...), model=None)``: the
fragment model is learned from the timed batch itself, rescue on), each stage timed
apart; reads/s per stage and end to end and the ratio paired / single (target <= 1.3).
Each is timed once: on a shared 2-core VM the same run varies up to ~2x between calls
(``totals["seconds pairing"]``, the pairing and rescue step alone, is the stable part).

Measured per graph and mode: a mate is *on its true walk* when its traced path shares an
oriented node with its truth (:func:`bench.seeded.on_walk`); aligned and on-walk shares;
MAPQ calibration: for thresholds 0/10/20/30/40/60 the mates with MAPQ >= t (MAPQ 255,
full-graph DP of an unseeded read, counted apart) and the share of them on their true walk
(target >= 99% at 30); the properly paired share of normal and hard pairs (target >= 99%
on normal pairs); rescue: among mates the single-end run leaves unaligned or off their
walk, the share the paired run puts on it (target >= 90%), for hard and normal pairs apart,
and how many the paired run moved off their walk (on a graph of many near-identical
haplotypes the normal share counts ties, not misses: on MHC's 60 every normal mate the
single-end run left off its walk scored its true walk's optimum elsewhere, MAPQ <= 3
mostly, and pairing sends such a pair, both mates together, to one of the equally good
places: about as many move off as on); the ``rescued mates`` counter. Mates off
their walk with MAPQ >= 30 are listed (up to ``--show``), and up to ``--doubt-full`` of
them get full-graph DP: ``at_optimum`` says whether the mate alone scores the graph's best
there (an ambiguous read rather than a wrong placement).

Writes DIR/pairs.json (meta: host, date, numba threads, command line; one row per graph)
and prints a compact table.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
import warnings

import numba
import numpy as np

from bench.seeded import COMP, full_dp, log, on_walk, path_walks, successors
from s2g.errors import S2GError
from s2g.graph import load_graph
from s2g.index import build_index
from s2g.reads import ReadBatch
from s2g.scoring import NEG_INF, Mode, Scoring
from s2g.seeded import SeededAligner
from s2g.seeded.pairs import FragmentModel, PairedAligner

THRESHOLDS = (0, 10, 20, 30, 40, 60)


# ------------------------------------------------------------------ graphs

def graph_path(spec, args):
    """A GFA path for ``spec`` (sim:/rep: written to a temporary directory, as bench.seeded)."""
    if spec.startswith("sim:"):
        from s2g.simulate import simulate
        d = tempfile.mkdtemp(prefix="s2g-pairs-")
        return simulate(os.path.join(d, "sim"), total_bases=int(spec[4:]),
                        node_len=args.sim_node_len, n_reads=1, seed=args.seed)[0]
    if spec.startswith("rep:"):
        from s2g.simulate import repeat_backbone, snp_graph
        parts = spec[4:].split(":")
        total = int(parts[0])
        copies = int(parts[1]) if len(parts) > 1 else max(1, total // 2000)
        d = tempfile.mkdtemp(prefix="s2g-pairs-")
        path = os.path.join(d, "rep.gfa")
        g0, ref = snp_graph(total, args.sim_node_len, 2, args.seed,
                            backbone=repeat_backbone(total, copies, 300, seed=args.seed))
        g0.write_gfa(path, ref)
        return path
    return spec


def open_any(path):
    """(graph, cycles broken?): acyclic graphs as they are, cyclic ones with their DFS back
    edges dropped (the warning that counts them kept)."""
    try:
        return load_graph(path, keep_paths=True), None
    except S2GError as e:
        if "cyclic" not in str(e):
            raise
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        g = load_graph(path, break_cycles=True, keep_paths=True)
    return g, "; ".join(str(x.message) for x in w) or "break_cycles"


def opposite(g):
    """Per node, its copy on the other strand (-1: none)."""
    node = {(int(s), int(r)): v for v, (s, r) in enumerate(zip(g.node_seg, g.node_rev))}
    return np.array([node.get((int(s), 1 - int(r)), -1)
                     for s, r in zip(g.node_seg, g.node_rev)], np.int64)


# ------------------------------------------------------------------ reads

def mutate(b, err, indel_share, rng):
    """``b`` with ``err`` errors per base: substitutions, ``indel_share`` of them 1-3 bp
    insertions (after the base) or deletions, half each (bench.seeded.sample's rule)."""
    x = rng.random(len(b))
    sub = x < err * (1 - indel_share)
    ins = (x >= err * (1 - indel_share)) & (x < err * (1 - indel_share / 2))
    dele = (x >= err * (1 - indel_share / 2)) & (x < err)
    out = b.astype(np.uint8).copy()
    ns = int(sub.sum())
    if ns:
        out[sub] = (out[sub].astype(np.int64) + rng.integers(1, 4, ns)) % 4
    if not (ins.any() or dele.any()):
        return out
    parts, at = [], 0
    for i in np.nonzero(ins | dele)[0].tolist():
        if ins[i]:
            parts.append(out[at:i + 1])
            parts.append(rng.integers(0, 4, int(rng.integers(1, 4))).astype(np.uint8))
        else:
            parts.append(out[at:i])
        at = i + 1
    parts.append(out[at:])
    return np.concatenate(parts)


def sample_pairs(g, n, args, rng):
    """(interleaved ReadBatch, truth node set per read, fragment lengths, hard flags)."""
    L = args.read_len
    walks = path_walks(g)
    opp = opposite(g)
    sptr, sidx = successors(g)
    lens = np.diff(g.node_start)
    cums = [np.concatenate([[0], np.cumsum(lens[w])]) for w in walks]
    seqs, truths, frags, hard = [], [], [], []
    while len(frags) < n:
        flen = max(L, int(round(rng.normal(args.frag_mean, args.frag_sd))))
        if walks:
            k = int(rng.integers(len(walks)))
            w, cum = walks[k], cums[k]
            if cum[-1] < flen:
                continue
            p = int(rng.integers(0, cum[-1] - flen + 1))
            k0 = int(np.searchsorted(cum, p, side="right") - 1)
            k1 = int(np.searchsorted(cum, p + flen - 1, side="right") - 1)
            nodes = w[k0:k1 + 1]
            off = p - int(cum[k0])
        else:
            j = int(rng.integers(0, g.n_bases))
            v = int(np.searchsorted(g.node_start, j, side="right") - 1)
            nodes, got = [v], int(g.node_start[v + 1] - j)
            off = int(j - g.node_start[v])
            while got < flen and sptr[v + 1] > sptr[v]:
                v = int(sidx[sptr[v] + rng.integers(sptr[v + 1] - sptr[v])])
                nodes.append(v)
                got += int(lens[v])
            if got < flen:
                continue
            nodes = np.array(nodes, np.int64)
        bases = np.concatenate([g.base[g.node_start[v]:g.node_start[v + 1]] for v in nodes])
        per = np.repeat(nodes, lens[nodes])
        bases, per = bases[off:off + flen], per[off:off + flen]
        if (bases > 3).mean() > 0.1 or (opp[per[-L:]] < 0).any():
            continue
        m1, t1 = bases[:L], set(per[:L].tolist())
        m2, t2 = COMP[bases[-L:][::-1]], set(opp[per[-L:]].tolist())
        h = bool(rng.random() < args.hard_share)
        seqs.append(mutate(m1, args.error, args.indel_share, rng))
        seqs.append(mutate(m2, args.hard_error, 0.0, rng) if h
                    else mutate(m2, args.error, args.indel_share, rng))
        truths += [t1, t2]
        frags.append(flen)
        hard.append(h)
    names = [f"p{k}/{m}" for k in range(n) for m in (1, 2)]
    return (ReadBatch.from_codes(names, seqs), truths, np.array(frags, np.int64),
            np.array(hard, bool))


# ------------------------------------------------------------------ measures

def share(x):
    return round(float(np.mean(x)), 5) if len(x) else None


def calibration(res, ok):
    aligned = res.score > NEG_INF
    mq = np.asarray(res.mapq, np.int64)
    full = aligned & (mq == 255)
    cal = {}
    for t in THRESHOLDS:
        sel = aligned & (mq >= t) & (mq != 255)
        cal[t] = {"mates": int(sel.sum()), "on_true_walk": share(ok[sel]),
                  "off_walk": int((sel & ~ok).sum())}
    cal["255 (full DP)"] = {"mates": int(full.sum()), "on_true_walk": share(ok[full]),
                            "off_walk": int((full & ~ok).sum())}
    return cal


def mode_row(res, ok, n_reads, secs):
    return {"aligned": share(res.score > NEG_INF), "on_true_walk": share(ok),
            "seconds": {k: round(v, 3) for k, v in secs.items()},
            "reads_per_s": {**{k: round(n_reads / max(v, 1e-9)) for k, v in secs.items()},
                            "all stages": round(n_reads / max(sum(secs.values()), 1e-9))},
            "mapq": calibration(res, ok)}


def path_of(res, r):
    f = res.flat
    if f is None or not f.has[r]:
        return []
    p0, n = int(f.path_at[r]), int(f.n_path[r])
    return f.path[p0:p0 + n].tolist()


# ------------------------------------------------------------------ one graph

def run_graph(spec, args, rng):
    row = {"graph": spec}
    log(f"{spec}: start")
    path = graph_path(spec, args)
    t = time.perf_counter()
    g, broke = open_any(path)
    row["load_s"] = round(time.perf_counter() - t, 2)
    row["columns"] = int(g.n_bases)
    row["paths"] = len(g.paths)
    if broke:
        row["cycles"] = broke
    log("index")
    t = time.perf_counter()
    ix = build_index(g)
    row["index_build_s"] = round(time.perf_counter() - t, 2)
    log("sample pairs")
    reads, truths, frags, hard = sample_pairs(g, args.pairs, args, rng)
    n_pairs, n = len(frags), reads.n_reads
    row.update(pairs=n_pairs, mates=n, hard_pairs=int(hard.sum()),
               fragment_sampled={"mean": round(float(frags.mean()), 1),
                                 "sd": round(float(frags.std()), 1)})
    sc, mode = Scoring(), Mode.parse(args.mode)

    log("warm-up")
    warm = reads.subset(np.arange(min(2 * args.warm_pairs, n)))
    se = SeededAligner(g, ix, sc, mode, device=args.device)
    se.traceback(warm, se.align_batch(warm))
    pw = PairedAligner(SeededAligner(g, ix, sc, mode, device=args.device), model=None, rescue=not args.no_rescue)
    pw.traceback(warm, pw.align_batch(warm))
    if pw.model is None:                # not enough confident pairs: compile with a model
        pw = PairedAligner(SeededAligner(g, ix, sc, mode, device=args.device),
                           model=FragmentModel(args.frag_mean, args.frag_sd),
                           rescue=not args.no_rescue)
        pw.traceback(warm, pw.align_batch(warm))
    row["warm_up"] = {"pairs": warm.n_reads // 2, "model": pw.model.describe(),
                      "rescued mates": pw.totals["rescued mates"]}
    se.totals = dict.fromkeys(se.totals, 0)

    log("single-end")
    prof = None
    if args.profile:                     # where align_batch's seconds go (cProfile)
        import cProfile
        prof = cProfile.Profile()
        prof.enable()
    t0 = time.perf_counter()
    rs = se.align_batch(reads)
    t1 = time.perf_counter()
    if prof is not None:
        prof.disable()
        import io
        import pstats
        buf = io.StringIO()
        pstats.Stats(prof, stream=buf).sort_stats("cumulative").print_stats(40)
        with open(os.path.join(args.out, f"profile_{os.path.basename(spec)}.txt"), "w") as fh:
            fh.write(buf.getvalue())
    se.traceback(reads, rs)
    t2 = time.perf_counter()
    log("paired")
    pe = PairedAligner(SeededAligner(g, ix, sc, mode, device=args.device), model=None, rescue=not args.no_rescue)
    t3 = time.perf_counter()
    rp = pe.align_batch(reads)
    t4 = time.perf_counter()
    pe.traceback(reads, rp)
    t5 = time.perf_counter()
    best_p = rp.best_task.copy()

    ok_s, ok_p = on_walk(rs, truths), on_walk(rp, truths)
    row["threads"] = numba.get_num_threads()
    row["single"] = mode_row(rs, ok_s, n, {"align_batch": t1 - t0, "traceback": t2 - t1})
    row["paired"] = mode_row(rp, ok_p, n, {"align_batch": t4 - t3, "traceback": t5 - t4})
    row["paired"]["pairing_s"] = round(pe.totals["seconds pairing"], 3)
    row["ratio_paired_single"] = {
        "align_batch": round((t4 - t3) / (t1 - t0), 3),
        "traceback": round((t5 - t4) / (t2 - t1), 3),
        "all stages": round((t5 - t3) / (t2 - t0), 3)}
    m = pe.model
    row["model"] = None if m is None else {"mean": round(m.mean, 1), "sd": round(m.sd, 1),
                                           "source": m.source}
    prop = np.asarray(rp.pair_proper, bool)
    row["proper"] = {"normal": share(prop[~hard]), "hard": share(prop[hard]),
                     "all": share(prop)}
    both_ok = ok_p[0::2] & ok_p[1::2]
    row["proper_both_on_walk"] = {"normal": share((prop & both_ok)[~hard]),
                                  "hard": share((prop & both_ok)[hard])}
    # improper pairs: the fragment their mates' placements imply (s2g.seeded.pairs: walk
    # distance; -1 where the mates are not FR or not within 10 kbp of each other)
    from s2g.seeded.pairs import AXIS_SPAN, SWEEP_NODES, end_columns, pair_fragment, strand_maps
    st, fc = end_columns(np.asarray(rp.end_j, np.int64), g.node_start, g.node_seg, g.node_rev,
                         strand_maps(g)[0])
    st = np.where(rp.score > NEG_INF, st, -1)
    rows = np.asarray(rp.end_i, np.int64)
    imp = np.nonzero(~prop)[0]
    fr_ok = imp[(st[2 * imp] >= 0) & (st[2 * imp + 1] >= 0) & (st[2 * imp] != st[2 * imp + 1])]
    maps = strand_maps(g)
    axis = np.array([pair_fragment(st[2 * k], fc[2 * k], rows[2 * k], st[2 * k + 1],
                                   fc[2 * k + 1], rows[2 * k + 1],
                                   (g.node_start, g.pred_ptr, g.pred_idx, g.node_seg), maps[2],
                                   10_000, SWEEP_NODES, AXIS_SPAN)
                     for k in fr_ok.tolist()], np.int64)
    row["improper"] = {
        "normal": int((~prop & ~hard).sum()), "hard": int((~prop & hard).sum()),
        "both_mates_on_walk": int((~prop & both_ok).sum()),
        "opposite_strands": int(len(fr_ok)),
        "walk_fragment_pct": ({q: int(np.percentile(axis, q)) for q in (0, 10, 50, 90, 100)}
                              if len(axis) else None),
        "true_fragment_mean": round(float(frags[imp].mean()), 1) if len(imp) else None}
    hard_m = np.repeat(hard, 2)
    full_s = (rs.score > NEG_INF) & (np.asarray(rs.mapq) == 255)
    bad_s = ~ok_s
    resc = {}
    for name, grp in (("hard", hard_m), ("normal", ~hard_m)):
        sel = bad_s & grp
        resc[name] = {"single_missed": int(sel.sum()),
                      "single_unaligned": int((sel & (rs.score <= NEG_INF)).sum()),
                      "paired_on_walk": int((sel & ok_p).sum()),
                      "share": share(ok_p[sel]),
                      "paired_lost": int((ok_s & ~ok_p & grp).sum()),
                      "single_full_dp": int((full_s & grp).sum()),
                      "single_full_dp_paired_on_walk": share(ok_p[full_s & grp])}
    row["rescue"] = resc
    rescued = best_p == -2
    row["rescued_mates"] = int(pe.totals["rescued mates"])
    row["rescued_on_walk"] = share(ok_p[rescued])
    row["rescue_attempts"] = int(pe.totals["rescue attempts"])
    row["single_totals"] = {k: round(v, 3) if isinstance(v, float) else v
                            for k, v in se.totals.items()}

    # off-walk mates with MAPQ >= 30 (either mode)
    mq_s, mq_p = np.asarray(rs.mapq, np.int64), np.asarray(rp.mapq, np.int64)
    off = {}
    for name, res, ok, mq in (("single", rs, ok_s, mq_s), ("paired", rp, ok_p, mq_p)):
        off[name] = np.nonzero((res.score > NEG_INF) & ~ok & (mq >= 30) & (mq != 255))[0]
    doubt = np.union1d(off["single"], off["paired"])
    opt = {}
    if len(doubt) and args.doubt_full:
        d = doubt[:args.doubt_full]
        log(f"full DP of {len(d)} off-walk MAPQ >= 30 mates")
        fd, _ = full_dp(g, reads.subset(d), sc, mode, "cpu")
        opt = {int(r): int(s) for r, s in zip(d, fd.score)}
    shown = []
    for name in ("paired", "single"):
        for r in off[name][:args.show].tolist():
            k, mate = r // 2, r % 2 + 1
            pth = path_of(rp if name == "paired" else rs, r)
            e = {"mode": name, "pair": k, "mate": mate, "hard": bool(hard[k]),
                 "fragment": int(frags[k]), "mapq_single": int(mq_s[r]),
                 "mapq_paired": int(mq_p[r]), "score_single": int(rs.score[r]),
                 "score_paired": int(rp.score[r]), "single_on_walk": bool(ok_s[r]),
                 "paired_on_walk": bool(ok_p[r]), "proper": bool(prop[k]),
                 "pair_frag": int(rp.pair_frag[k]), "rescued": bool(rescued[r]),
                 "mate_on_walk_paired": bool(ok_p[r ^ 1]),
                 "truth_nodes": [min(truths[r]), max(truths[r])],
                 "path_nodes": [min(pth), max(pth)] if pth else None}
            if r in opt:
                e["full_dp_score"] = opt[r]
                e["at_optimum"] = bool((rp if name == "paired" else rs).score[r] >= opt[r])
            shown.append(e)
    row["off_walk_mapq30"] = {"single": int(len(off["single"])),
                              "paired": int(len(off["paired"])),
                              "full_dp_checked": len(opt),
                              "at_optimum": {nm: int(sum(1 for r in off[nm].tolist()
                                                         if r in opt and
                                                         (rs if nm == "single" else rp
                                                          ).score[r] >= opt[r]))
                                             for nm in ("single", "paired")},
                              "examples": shown}
    row["targets"] = {
        "ratio<=1.3": row["ratio_paired_single"]["all stages"] <= 1.3,
        "proper_normal>=0.99": (row["proper"]["normal"] or 0) >= 0.99,
        "paired_mapq30_on_walk>=0.99": (row["paired"]["mapq"][30]["on_true_walk"] or 0) >= 0.99,
        "rescue_hard>=0.90": resc["hard"]["share"] is None or resc["hard"]["share"] >= 0.9,
        "rescue_normal>=0.90": resc["normal"]["share"] is None or resc["normal"]["share"] >= 0.9}
    return row


def fmt(x, pct=True):
    if x is None:
        return "-"
    return f"{100 * x:.1f}" if pct else str(x)


def table(rows):
    print(f"{'graph':<16} {'pairs':>6} {'model':>10} {'prop%':>6} {'walk% s/p':>11} "
          f"{'Q30 n s/p':>13} {'Q30% s/p':>11} {'resc% h/n':>11} {'rescued':>7} "
          f"{'reads/s s/p':>13} {'ratio':>5}")
    for r in rows:
        m = r["model"]
        ms = f"{m['mean']:.0f}+-{m['sd']:.0f}" if m else "-"
        s, p = r["single"], r["paired"]
        print(f"{os.path.basename(r['graph'])[:16]:<16} {r['pairs']:>6} {ms:>10} "
              f"{fmt(r['proper']['normal']):>6} "
              f"{fmt(s['on_true_walk']) + '/' + fmt(p['on_true_walk']):>11} "
              f"{str(s['mapq'][30]['mates']) + '/' + str(p['mapq'][30]['mates']):>13} "
              f"{fmt(s['mapq'][30]['on_true_walk'], True) + '/' + fmt(p['mapq'][30]['on_true_walk']):>11} "
              f"{fmt(r['rescue']['hard']['share']) + '/' + fmt(r['rescue']['normal']['share']):>11} "
              f"{r['rescued_mates']:>7} "
              f"{str(s['reads_per_s']['all stages']) + '/' + str(p['reads_per_s']['all stages']):>13} "
              f"{r['ratio_paired_single']['all stages']:>5}")


def _gpu_name():
    try:
        from numba import cuda
        name = cuda.get_current_device().name
        return name.decode() if isinstance(name, bytes) else str(name)
    except Exception as exc:  # noqa: BLE001 - a record, not a check
        return f"unknown ({type(exc).__name__})"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    ap.add_argument("--graph", action="append", required=True,
                    help="GFA path, sim:N or rep:N[:C] (repeatable)")
    ap.add_argument("--pairs", type=int, default=20_000)
    ap.add_argument("--read-len", type=int, default=150)
    ap.add_argument("--frag-mean", type=float, default=400)
    ap.add_argument("--frag-sd", type=float, default=50)
    ap.add_argument("--error", type=float, default=0.01)
    ap.add_argument("--indel-share", type=float, default=0.2)
    ap.add_argument("--hard-share", type=float, default=0.1,
                    help="share of pairs whose mate 2 gets --hard-error substitutions")
    ap.add_argument("--hard-error", type=float, default=0.10)
    ap.add_argument("--no-rescue", action="store_true")
    ap.add_argument("--device", choices=("cpu", "gpu"), default="cpu",
                    help="where the windows' DP runs (gpu: the GPU window kernel; rescues "
                         "run on the CPU window kernel either way)")
    ap.add_argument("--mode", default="local", choices=("local", "semiglobal"))
    ap.add_argument("--sim-node-len", type=float, default=50)
    ap.add_argument("--warm-pairs", type=int, default=1000,
                    help="pairs aligned (untimed) first, so that the timed runs compile nothing")
    ap.add_argument("--doubt-full", type=int, default=40,
                    help="off-walk MAPQ >= 30 mates given full-graph DP (at most)")
    ap.add_argument("--show", type=int, default=8, help="off-walk MAPQ >= 30 mates listed per mode")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", default="bench/results/cpu-dev", help="directory for pairs.json")
    ap.add_argument("--profile", action="store_true",
                    help="cProfile the single-end align_batch (OUT/profile_GRAPH.txt)")
    args = ap.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    t_all = time.perf_counter()
    rows = []
    for spec in args.graph:
        t = time.perf_counter()
        row = run_graph(spec, args, rng)
        row["wall_s"] = round(time.perf_counter() - t, 1)
        rows.append(row)
        print(json.dumps(row), flush=True)
    meta = {"date": time.strftime("%Y-%m-%d"), "host": platform.node(),
            "numba_threads": numba.get_num_threads(), "argv": sys.argv[1:],
            "device": args.device, "gpu": _gpu_name() if args.device == "gpu" else None,
            "wall_s": round(time.perf_counter() - t_all, 1)}
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, "pairs.json"), "w") as fh:
            json.dump({"meta": meta, "rows": rows}, fh, indent=1)
    table(rows)


if __name__ == "__main__":
    main()
