"""Bounds that let long reads skip windows (s2g/seeded/windows.py: longest_walks,
qgram_bounds; SeededAligner._windows, both devices): each is at least the window's exact score on
every task tried, and dropping windows by them leaves scores, end cells and MAPQ
identical."""
from __future__ import annotations

import numpy as np
import pytest

import s2g
from s2g.index import build_index
from s2g.reads import ReadBatch
from s2g.scoring import Mode, Scoring
from s2g.seeded import SeededAligner
from s2g.seeded.windows import longest_walks, qgram_bounds
from s2g.window import align_windows_ref


def _repeat_graph(tmp_path, rng):
    """A 40 kbp linear genome with three diverged copies (15% substitutions) of one
    3 kbp element and a 300 bp SNP bubble every 2 kbp."""
    def rnd(n):
        return "".join(rng.choice(list("ACGT"), n))

    def diverge(s, rate):
        return "".join("ACGT"[("ACGT".index(c) + int(rng.integers(1, 4))) % 4]
                       if rng.random() < rate else c for c in s)
    elem = rnd(3000)
    parts = []
    for k in range(12):
        parts.append(rnd(1700) if k % 4 else diverge(elem, 0.15))
    segs, edges = [], []
    for k, p in enumerate(parts):
        segs.append((f"m{k}", p))
        alt = diverge(p[:300], 0.05)
        segs.append((f"a{k}", alt))
        segs.append((f"r{k}", p[300:]))
        segs[-3] = (f"m{k}", p[:300])
        edges += [(f"m{k}", f"r{k}"), (f"a{k}", f"r{k}")]
        if k:
            edges += [(f"r{k - 1}", f"m{k}"), (f"r{k - 1}", f"a{k}")]
    gfa = tmp_path / "rep.gfa"
    gfa.write_text("".join(f"S\t{n}\t{s}\n" for n, s in segs)
                   + "".join(f"L\t{u}\t+\t{v}\t+\t0M\n" for u, v in edges))
    return s2g.load_graph(str(gfa)), "".join(parts)


def _reads(genome, rng, n, m, rate):
    out = []
    for _ in range(n):
        x = int(rng.integers(0, len(genome) - m))
        s = list(genome[x:x + m])
        for i in range(m):
            if rng.random() < rate:
                s[i] = "ACGTN"[int(rng.integers(0, 5))]
        out.append("".join(s))
    return out


def test_window_bounds_are_at_least_the_window_scores(tmp_path):
    """Every window of seeded 2-4 kbp reads (2-30% errors, some N) and of junk reads:
    a x longest walk and the q-gram bound are both >= the exact window score."""
    rng = np.random.default_rng(21)
    g, genome = _repeat_graph(tmp_path, rng)
    seqs = []
    for rate in (0.02, 0.1, 0.3):
        seqs += _reads(genome, rng, 6, int(rng.integers(2000, 4000)), rate)
    seqs += ["".join(rng.choice(list("ACGT"), 2500)) for _ in range(2)]
    reads = ReadBatch.from_sequences([f"r{i}" for i in range(len(seqs))], seqs)
    sc = Scoring()
    a, b, o, e = sc.as_tuple()
    sa = SeededAligner(g, build_index(g), sc, Mode.LOCAL)
    cand = sa.candidates(reads)
    wg = cand.wg
    G = wg.graph
    want = align_windows_ref(G, reads.codes_flat, reads.offsets, cand.t_read, wg.t_lo,
                             wg.t_hi, sc, Mode.LOCAL)[0]
    assert len(want) >= 15
    walk = a * longest_walks(wg.piece_at, G.node_start, G.pred_ptr, G.pred_idx)
    tasks = np.arange(len(want), dtype=np.int64)
    qb = qgram_bounds(tasks, cand.t_read, wg.piece_at, G.node_start, G.pred_ptr, G.pred_idx,
                      G.base, reads.codes_flat, np.asarray(reads.offsets, np.int64), a,
                      float(min(a + b, o + e)))
    assert (walk >= want).all() and (qb >= want).all()
    assert (qb < a * reads.lengths()[cand.t_read]).any()      # the bound is not vacuous


def test_dropping_windows_by_bound_changes_no_result(tmp_path):
    """Seeded 5 kbp reads with 3% errors on the repeat graph: the other copies' windows are
    dropped by the q-gram bound, and scores, end cells and MAPQ equal aligning them all."""
    rng = np.random.default_rng(22)
    g, genome = _repeat_graph(tmp_path, rng)
    seqs = _reads(genome, rng, 12, 5000, 0.03)
    reads = ReadBatch.from_sequences([f"r{i}" for i in range(len(seqs))], seqs)
    ix = build_index(g)
    res = {}
    for drop in (False, True):
        sa = SeededAligner(g, ix, Scoring(), Mode.LOCAL)
        sa.drop_windows = drop
        res[drop] = sa.align_batch(reads)
        dropped = sa.totals["windows dropped by bound"]
        assert (dropped > 0) == drop
    for f in ("score", "end_i", "end_j", "mapq"):
        np.testing.assert_array_equal(getattr(res[True], f), getattr(res[False], f), err_msg=f)


def test_qgram_bound_on_short_nodes_holds(tmp_path):
    """A SNP graph of 5 bp nodes (q-grams cross 2-3 nodes, tails of several walks): the
    q-gram bound is still >= every window's exact score, and tight for 1% errors."""
    from s2g.simulate import sample_reads, snp_graph
    sg, ref = snp_graph(20000, 5, 2, 7)
    sg.write_gfa(str(tmp_path / "s.gfa"), ref)
    g = s2g.load_graph(str(tmp_path / "s.gfa"))
    seqs = [s for rate in (0.01, 0.08) for _, s, _ in
            sample_reads(sg, 6, 3000, rate, 0.5, int(rate * 100))]
    reads = ReadBatch.from_sequences([f"r{i}" for i in range(len(seqs))], seqs)
    sc = Scoring()
    a, b, o, e = sc.as_tuple()
    cand = SeededAligner(g, build_index(g), sc, Mode.LOCAL).candidates(reads)
    wg = cand.wg
    G = wg.graph
    want = align_windows_ref(G, reads.codes_flat, reads.offsets, cand.t_read, wg.t_lo,
                             wg.t_hi, sc, Mode.LOCAL)[0]
    tasks = np.arange(len(want), dtype=np.int64)
    qb = qgram_bounds(tasks, cand.t_read, wg.piece_at, G.node_start, G.pred_ptr, G.pred_idx,
                      G.base, reads.codes_flat, np.asarray(reads.offsets, np.int64), a,
                      float(min(a + b, o + e)))
    assert (qb >= want).all()
    low = cand.t_read < 6                         # the 1% reads' windows
    assert (qb[low] - want[low] < 0.05 * want[low]).all()


def test_window_bases_are_lazy_and_the_bounds_read_the_graphs(tmp_path, monkeypatch):
    """Knob lazy_window_bases: a window graph gathers its columns' bases (and makes its
    node_bound slots) only when asked (the GPU path never asks), the same as at once; the q-gram bounds from
    the graph's own bases (``parent_cols``, as dropped_by_bound reads them) equal those from
    the window graph's, on 5 bp nodes and on the repeat graph."""
    from s2g import window
    from s2g.config import configure, settings
    from s2g.seeded.windows import dropped_by_bound, qgram_bounds_at
    from s2g.simulate import sample_reads, snp_graph
    sg, ref = snp_graph(20000, 5, 2, 7)
    sg.write_gfa(str(tmp_path / "s.gfa"), ref)
    rng = np.random.default_rng(23)
    g2, genome = _repeat_graph(tmp_path, rng)
    was = settings().lazy_window_bases
    calls = []
    gather = window._gather_bases
    monkeypatch.setattr(window, "_gather_bases", lambda *a: calls.append(1) or gather(*a))
    try:
        for g, seqs in ((s2g.load_graph(str(tmp_path / "s.gfa")),
                         [s for _, s, _ in sample_reads(sg, 8, 2000, 0.05, 0.5, 3)]),
                        (g2, _reads(genome, rng, 8, 3000, 0.05))):
            reads = ReadBatch.from_sequences([f"r{i}" for i in range(len(seqs))], seqs)
            sc = Scoring()
            a, b, o, e = sc.as_tuple()
            configure(lazy_window_bases=True)
            cand = SeededAligner(g, build_index(g), sc, Mode.LOCAL).candidates(reads)
            wg = cand.wg
            G = wg.graph
            n0 = len(calls)
            tasks = np.arange(wg.n_tasks, dtype=np.int64)
            offs = np.asarray(reads.offsets, np.int64)
            delta = float(min(a + b, o + e))
            pb, src = G.parent_cols
            by_parent = qgram_bounds_at(tasks, cand.t_read, wg.piece_at, G.node_start,
                                        G.pred_ptr, G.pred_idx, pb, src, reads.codes_flat,
                                        offs, a, delta)
            # a score of a x the read's length: no walk bound drops a window whose walks
            # are as long as the read, the q-gram bound (5% errors) does
            top = a * reads.lengths()[cand.t_read]
            drop = dropped_by_bound(wg, reads, np.ones(wg.n_tasks, np.bool_), cand.t_read,
                                    top, sc)
            assert drop.any()
            assert len(calls) == n0, "the bounds gathered the window graph's bases"
            own = qgram_bounds(tasks, cand.t_read, wg.piece_at, G.node_start, G.pred_ptr,
                               G.pred_idx, G.base, reads.codes_flat, offs, a, delta)
            assert len(calls) == n0 + 1                   # asked for: gathered once
            np.testing.assert_array_equal(by_parent, own)
            assert G._slots is None                     # the CPU kernels' slots: not yet
            configure(lazy_window_bases=False)
            eager = window.WindowGraph(g, wg.piece_at, wg.p_node, wg.p_lo, wg.p_hi)
            np.testing.assert_array_equal(eager.graph.base, G.base)
            np.testing.assert_array_equal(eager.graph.slot, G.slot)
            assert eager.graph.n_slots == G.n_slots and type(G.n_slots) is int
            assert type(eager.graph) is s2g.graph_core.FlatGraph
    finally:
        configure(lazy_window_bases=was)


@pytest.mark.gpu
def test_gpu_drops_the_same_windows(tmp_path):
    """On a real GPU: long reads' lead windows first, the rest after the bound (two GPU
    runs merged, s2g/trace/gpu.py WindowRun.merge), beside short reads on the ``fast``
    kernel: scores, end cells, MAPQ and tracebacks equal the CPU path, which drops the
    same windows."""
    rng = np.random.default_rng(22)
    g, genome = _repeat_graph(tmp_path, rng)
    seqs = _reads(genome, rng, 12, 5000, 0.03) + _reads(genome, rng, 200, 150, 0.01)
    reads = ReadBatch.from_sequences([f"r{i}" for i in range(len(seqs))], seqs)
    ix = build_index(g)
    res, dropped = {}, {}
    for device in ("cpu", "gpu"):
        sa = SeededAligner(g, ix, Scoring(), Mode.LOCAL, device=device)
        res[device] = sa.align_batch(reads)
        sa.traceback(reads, res[device])
        dropped[device] = sa.totals["windows dropped by bound"]
    assert dropped["gpu"] == dropped["cpu"] > 0
    for f in ("score", "end_i", "end_j", "mapq"):
        np.testing.assert_array_equal(getattr(res["gpu"], f), getattr(res["cpu"], f), err_msg=f)
    assert list(res["gpu"].tracebacks) == list(res["cpu"].tracebacks)


def test_weak_chain_windows_skipped_leave_results_unchanged(tmp_path):
    """Knob ``long_cand_ratio``: 5 kbp reads at 12% errors on a genome of 500 bp nodes with
    24 copies of a 300 bp element (an Alu-like family, 3% apart) chain into the other
    copies with a few anchors, and at that error rate the q-gram bound of those windows is
    not below the read's best score (so the bound drops few); those windows (chains under
    half the best) are not aligned, and scores, end cells and MAPQ equal aligning them."""
    from s2g import config
    rng = np.random.default_rng(5)
    elem = "".join(rng.choice(list("ACGT"), 300))
    parts = []
    for k in range(24):
        parts.append("".join(rng.choice(list("ACGT"), 2500)))
        parts.append("".join("ACGT"[("ACGT".index(c) + int(rng.integers(1, 4))) % 4]
                             if rng.random() < 0.03 else c for c in elem))
    genome = "".join(parts)
    segs = [genome[i:i + 500] for i in range(0, len(genome), 500)]
    gfa = tmp_path / "alu.gfa"
    gfa.write_text("".join(f"S\ts{i}\t{x}\n" for i, x in enumerate(segs))
                   + "".join(f"L\ts{i}\t+\ts{i + 1}\t+\t0M\n" for i in range(len(segs) - 1)))
    g = s2g.load_graph(str(gfa))
    seqs = _reads(genome, rng, 16, 5000, 0.12)
    reads = ReadBatch.from_sequences([f"r{i}" for i in range(len(seqs))], seqs)
    ix = build_index(g)
    res, dropped = {}, {}
    try:
        for ratio in (0.0, 0.5):
            config.configure(long_cand_ratio=ratio)
            sa = SeededAligner(g, ix, Scoring(), Mode.LOCAL)
            res[ratio] = sa.align_batch(reads)
            dropped[ratio] = sa.totals["windows dropped by chain"]
    finally:
        config.reset()
    assert dropped[0.0] == 0 and dropped[0.5] >= 16
    for f in ("score", "end_i", "end_j", "mapq"):
        np.testing.assert_array_equal(getattr(res[0.5], f), getattr(res[0.0], f), err_msg=f)


def test_closing_line_counts_the_windows_aligned():
    """The CLI's closing line gives the candidate windows per read and, where some were
    skipped (by bound or by chain), how many per read were aligned."""
    from types import SimpleNamespace
    from s2g.aligner import Aligner
    t = {"reads": 30, "windows": 127, "windows dropped by bound": 14,
         "windows dropped by chain": 83, "unseeded": 0}
    d = Aligner.describe(SimpleNamespace(seeded=SimpleNamespace(totals=t)))
    assert d.startswith("seeded (4.23 windows per read (1.00 aligned), 14 windows dropped by "
                        "bound, 83 windows dropped by chain, 0 reads without a seed chain")
    t.update({"windows dropped by bound": 0, "windows dropped by chain": 0})
    d = Aligner.describe(SimpleNamespace(seeded=SimpleNamespace(totals=t)))
    assert d.startswith("seeded (4.23 windows per read, 0 reads without")


def test_corridors_keep_the_copies_and_ends_whole_windows_find(real_data):
    """C4 (three near-identical copies), 5 kbp reads at 10% errors (bench.seeded.sample,
    seed 3): long reads' corridor windows give every read the score of whole-span windows
    (corridor_min_len=0; full-graph DP agreed on all 20, 2026-12-05). Before: a later chain
    as strong as the best merged into its window without its flanks, so the true copy's
    alignment was clipped and the read placed on another copy with MAPQ 60 (reads 10, 15)."""
    import warnings
    from bench.seeded import sample
    from s2g import config
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        g = s2g.load_graph(str(real_data / "c4_gwfa" / "C4-90.gfa"), keep_paths=True,
                           break_cycles=True)
    reads, _ = sample(g, 16, 5000, 0.10, 0.2, np.random.default_rng(3))
    ix = build_index(g)
    got = {}
    try:
        for cmin in (1000, 0):
            config.configure(corridor_min_len=cmin)
            got[cmin] = SeededAligner(g, ix, Scoring(), Mode.LOCAL).align_batch(reads)
    finally:
        config.reset()
    np.testing.assert_array_equal(got[1000].score, got[0].score)
