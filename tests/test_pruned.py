"""The pruned window kernel (s2g/variants/pruned.py) against the scalar window
reference (s2g.window.align_windows_ref): score and end cell, field for field.

Random DAGs and reads (hypothesis) with random column ranges, both modes, random
scorings; long reads with long gaps on a simulated SNP graph (whole-graph and partial
windows); seeded long reads' node-set windows (the q-gram bound in use); and the floor:
a window under it is reported as none, one at or above it exactly."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import s2g
from s2g.reads import ReadBatch
from s2g.scoring import NEG_INF, Mode, Scoring
from s2g.variants import pruned
from s2g.window import align_windows_ref
from test_v0 import SETTINGS, batch_of, dag_cases, scorings, write_tmp
from test_striped import mixed_length_windows
from test_window import random_windows


@pytest.fixture(autouse=True)
def _no_budget(monkeypatch):
    """Every window through the pruned passes (no striped fallback), but where a test
    sets a budget itself."""
    monkeypatch.setattr(pruned, "BUDGET", 0.0)


def _same(graph, batch, tr, lo, hi, sc, mode):
    want = align_windows_ref(graph, batch.codes_flat, batch.offsets, tr, lo, hi, sc, mode)
    got = pruned.align_windows(graph, batch.codes_flat, batch.offsets, tr, lo, hi, sc, mode)
    for name, w, g in zip(("score", "end_i", "end_j"), want, got):
        np.testing.assert_array_equal(g, w, err_msg=name)
    return want


@SETTINGS
@given(case=dag_cases(allow_empty=False), mode=st.sampled_from(["local", "semiglobal"]),
       sc=scorings, data=st.data())
def test_pruned_windows_equal_the_reference(case, mode, sc, data):
    text, reads = case
    graph = s2g.load_graph(write_tmp(text))
    batch = batch_of(reads)
    lo, hi = random_windows(data, graph.n_bases, len(reads))
    _same(graph, batch, np.arange(len(reads), dtype=np.int64), lo, hi, sc, Mode.parse(mode))


@SETTINGS
@given(case=dag_cases(allow_empty=False), sc=scorings, data=st.data())
def test_pruned_windows_with_the_floor_at_their_optimum(case, sc, data):
    """Local mode, each window's floor at its own optimum (the threshold is then the
    optimum itself, the tightest a pass runs at; the GPU's pruned pass lost such a window
    whose read ended at its last column, session 50): the reference's cell."""
    text, reads = case
    graph = s2g.load_graph(write_tmp(text))
    batch = batch_of(reads)
    lo, hi = random_windows(data, graph.n_bases, len(reads))
    tr = np.arange(len(reads), dtype=np.int64)
    want = align_windows_ref(graph, batch.codes_flat, batch.offsets, tr, lo, hi, sc,
                             Mode.LOCAL)
    got = pruned.align_windows(graph, batch.codes_flat, batch.offsets, tr, lo, hi, sc,
                               Mode.LOCAL, floor=np.asarray(want[0], np.int64))
    keep = np.asarray(want[0]) >= 1                # a score of 0 is no local alignment
    for name, w, g in zip(("score", "end_i", "end_j"), want, got):
        np.testing.assert_array_equal(np.asarray(g)[keep], np.asarray(w)[keep], err_msg=name)


def _snp_reads(tmp_path, n, seed):
    from s2g.simulate import sample_reads, snp_graph
    sg, ref = snp_graph(6000, 40, 2, 3)
    sg.write_gfa(str(tmp_path / "s.gfa"), ref)
    g = s2g.load_graph(str(tmp_path / "s.gfa"))
    rng = np.random.default_rng(seed)
    seqs = []
    for k, (_, s, _) in enumerate(sample_reads(sg, n, 2000, 0.05, 0.2, seed)):
        s = s[:300 + 150 * k]
        x = int(rng.integers(50, len(s) - 60))
        s = s[:x] + s[x + 40:] if k % 2 else s[:x] + "".join(rng.choice(list("ACGT"), 40)) + s[x:]
        seqs.append(s)
    return g, ReadBatch.from_sequences([f"r{i}" for i in range(len(seqs))], seqs), rng


@pytest.mark.parametrize("mode", ["local", "semiglobal"])
def test_pruned_long_reads_with_gaps_equal_the_reference(tmp_path, mode):
    """Reads of 300-2,000 bases with 40-base insertions and deletions, whole-graph and
    partial windows, two scorings (a threshold pass that falls short included)."""
    g, batch, rng = _snp_reads(tmp_path, 12, 2)
    n = batch.n_reads
    tr = np.arange(n, dtype=np.int64)
    nb = g.n_bases
    lo = rng.integers(0, nb // 2, n)
    hi = np.minimum(lo + rng.integers(500, nb, n), nb)
    for sc in (Scoring(), Scoring(1, 4, 6, 1)):
        _same(g, batch, tr, np.zeros(n, np.int64), np.full(n, nb), sc, Mode.parse(mode))
        _same(g, batch, tr, lo, hi, sc, Mode.parse(mode))


def _whole_windows(tmp_path):
    """Six SNP-graph reads each in a whole-graph window, local mode, and the reference's
    (score, end_i, end_j): (graph, batch, n, tasks, lo, hi, scoring, mode, reference)."""
    g, batch, _ = _snp_reads(tmp_path, 6, 4)
    n = batch.n_reads
    tr = np.arange(n, dtype=np.int64)
    lo, hi = np.zeros(n, np.int64), np.full(n, g.n_bases)
    sc, mode = Scoring(), Mode.LOCAL
    want = align_windows_ref(g, batch.codes_flat, batch.offsets, tr, lo, hi, sc, mode)
    return g, batch, n, tr, lo, hi, sc, mode, want


def test_pruned_floor(tmp_path):
    """Under a floor a window is reported as none (score NEG_INF), at or above it as the
    reference gives it; the cells computed drop with a floor above the optimum."""
    g, batch, n, tr, lo, hi, sc, mode, want = _whole_windows(tmp_path)
    pruned.align_windows(g, batch.codes_flat, batch.offsets, tr, lo, hi, sc, mode)
    cells_all = int(pruned.LAST_STATS[0])
    floor = want[0] + np.where(np.arange(n) % 2 == 0, 0, 1)   # even: at it; odd: above
    got = pruned.align_windows(g, batch.codes_flat, batch.offsets, tr, lo, hi, sc, mode,
                               floor=floor)
    even = np.arange(n) % 2 == 0
    for w, x in zip(want, got):
        np.testing.assert_array_equal(x[even], w[even])
    assert (got[0][~even] == NEG_INF).all() and (got[1][~even] == -1).all()
    high = want[0] + 500
    pruned.align_windows(g, batch.codes_flat, batch.offsets, tr, lo, hi, sc, mode, floor=high)
    assert int(pruned.LAST_STATS[0]) < cells_all // 4


def test_pruned_seeded_long_windows(tmp_path):
    """Node-set windows of seeded long reads (a window graph's windows: whole nodes, no
    edge from outside, so the q-gram bound is made) equal the reference, and the pruned
    pass computes a small share of their cells."""
    from s2g.index import build_index
    from s2g.seeded import SeededAligner
    from s2g.simulate import sample_reads, snp_graph
    sg, ref = snp_graph(60000, 30, 3, 11)
    sg.write_gfa(str(tmp_path / "s.gfa"), ref)
    g = s2g.load_graph(str(tmp_path / "s.gfa"))
    seqs = [s for _, s, _ in sample_reads(sg, 6, 3000, 0.05, 0.2, 12)]
    batch = ReadBatch.from_sequences([f"r{i}" for i in range(len(seqs))], seqs)
    sa = SeededAligner(g, build_index(g), Scoring(), Mode.LOCAL)
    cand = sa.candidates(batch)
    wg = cand.wg
    lo, hi = pruned._whole_nodes(int(wg.t_lo[0]), int(wg.t_hi[0]), wg.graph.node_start,
                                 wg.graph.pred_ptr, wg.graph.pred_idx)
    assert lo >= 0                              # the q-gram bound applies
    want = _same(wg.graph, batch, cand.t_read, wg.t_lo, wg.t_hi, Scoring(), Mode.LOCAL)
    assert (want[0] > 0).all()
    cells = int(((wg.t_hi - wg.t_lo) * batch.lengths()[cand.t_read]).sum())
    assert pruned.LAST_STATS[0] < cells // 3


def test_simd_windows_send_long_reads_pruned(tmp_path, monkeypatch):
    """simd.align_windows runs the windows of reads >= prune_min_len bases pruned (with
    their floors), the rest as before, and returns the reference's arrays either way
    (prune_min_len 0: never pruned)."""
    from s2g.config import configure
    from s2g.variants import simd
    g, batch, seqs, tr, lo, hi = mixed_length_windows(tmp_path)
    calls = []
    real = pruned.align_windows
    monkeypatch.setattr(pruned, "align_windows",
                        lambda *a, **k: calls.append((len(a[3]), k["floor"] is None)) or
                        real(*a, **k))
    want = align_windows_ref(g, batch.codes_flat, batch.offsets, tr, lo, hi, Scoring(),
                             Mode.LOCAL)
    for min_len, n_pruned in ((1000, [(8, True)]), (0, [])):
        calls.clear()
        configure(prune_min_len=min_len)
        got = simd.align_windows(g, batch.codes_flat, batch.offsets, tr, lo, hi, Scoring(),
                                 Mode.LOCAL)
        assert calls == n_pruned
        for w, x in zip(want, got):
            np.testing.assert_array_equal(x, w)
    configure(prune_min_len=1000)
    floor = np.where(want[0] > 0, want[0] + 1, 0)      # every long window under its floor
    got = simd.align_windows(g, batch.codes_flat, batch.offsets, tr, lo, hi, Scoring(),
                             Mode.LOCAL, floor=floor)
    long_ = np.repeat(np.arange(len(seqs)) % 2 == 1, 2)
    assert (got[0][long_] == NEG_INF).all()
    np.testing.assert_array_equal(got[0][~long_], want[0][~long_])


def _bands_of(got, lo, n):
    """traceback_batch's ``bands`` from pruned.align_windows' dict (task k = read k)."""
    off = np.full(n, -1, np.int64)
    width = np.zeros(n, np.int64)
    parts, pos = [], 0
    for k, (rlo, rhi) in sorted(got.items()):
        off[k], width[k] = pos, len(rlo)
        parts += [rlo, rhi]
        pos += 2 * len(rlo)
    rows = np.concatenate(parts).astype(np.int32) if parts else np.zeros(0, np.int32)
    return off, width, rows


def _trace(graph, batch, sc, mode, score, ei, ej, lo, limits, bands=None):
    from s2g.gaf import gaf_line
    from s2g.result import BatchResult
    from s2g.trace import batch as tb
    out = BatchResult(batch.names, batch.lengths(), score, ei, ej)
    tb.traceback_batch(graph, batch, sc, mode, out, col_lo=lo, limits=limits, bands=bands)
    return out.tracebacks, [gaf_line(graph, r) for r in out]


@SETTINGS
@given(case=dag_cases(allow_empty=False), mode=st.sampled_from(["local", "semiglobal"]),
       sc=scorings, data=st.data(), band=st.sampled_from([1, 2, 3, 0]))
def test_pruned_bands_trace_as_the_reference(case, mode, sc, data, band):
    """The rows a window's pruned pass kept, given to the banded lane traceback (every
    window there: LaneLimits(cells=1), bands of 1-3 rows or the default height), trace
    every read as traceback_read does without them (LaneLimits(cells=0))."""
    from s2g.config import configure
    from s2g.trace import LaneLimits
    configure(tb_prune_walk=False)           # the bands, not the recorded walks
    text, reads = case
    graph = s2g.load_graph(write_tmp(text))
    batch = batch_of(reads)
    md = Mode.parse(mode)
    lo, hi = random_windows(data, graph.n_bases, len(reads))
    n = len(reads)
    got = {}
    s, i, j = pruned.align_windows(graph, batch.codes_flat, batch.offsets,
                                   np.arange(n, dtype=np.int64), lo, hi, sc, md, bands=got)
    want = _trace(graph, batch, sc, md, s, i, j, lo, LaneLimits(cells=0))
    have = _trace(graph, batch, sc, md, s, i, j, lo, LaneLimits(cells=1, band=band),
                  bands=_bands_of(got, lo, n))
    assert have[1] == want[1]
    assert have[0] == want[0]


def _walks_match_traceback_read(graph, batch, lo, hi, sc, md):
    """Every window the pruned pass scored has a recorded walk, and it is the walk
    traceback_read makes from the same end cell (start row, ops, columns), and the one a
    pass at the window's score records (``known``); returns how many were compared."""
    from s2g.trace.scalar import graph_tuple, traceback_read
    from s2g.variants.pruned_walk import Walked
    n = len(lo)
    got = {}
    s, i, j = pruned.align_windows(graph, batch.codes_flat, batch.offsets,
                                   np.arange(n, dtype=np.int64), lo, hi, sc, md, bands=got)
    k = 0
    for t in np.nonzero(s > NEG_INF)[0].tolist():
        q = batch.codes_flat[batch.offsets[t]:batch.offsets[t + 1]]
        st_, si, ops, cols, _ = traceback_read(q, i[t], j[t], s[t], graph_tuple(graph),
                                               int(md), sc.as_tuple(), 1 << 40, 0, lo[t])
        w = got[t]
        assert isinstance(w, Walked) and st_ == 0
        assert w.start == si
        np.testing.assert_array_equal(w.ops, ops)
        np.testing.assert_array_equal(w.cols, cols)
        k += 1
    # one pass at each window's score (the traceback of a window without a walk)
    ok = np.nonzero(s > NEG_INF)[0]
    again = {}
    s2, i2, j2 = pruned.align_windows(graph, batch.codes_flat, batch.offsets, ok, lo[ok],
                                      hi[ok], sc, md, floor=s[ok], bands=again, known=True)
    np.testing.assert_array_equal(s2, s[ok])
    np.testing.assert_array_equal(i2, i[ok])
    np.testing.assert_array_equal(j2, j[ok])
    for x, t in enumerate(ok.tolist()):
        w, v = got[t], again[x]
        assert (w.start, w.ops.tolist(), w.cols.tolist()) == (v.start, v.ops.tolist(),
                                                               v.cols.tolist())
    return k


@SETTINGS
@given(case=dag_cases(allow_empty=False), mode=st.sampled_from(["local", "semiglobal"]),
       sc=scorings, data=st.data())
def test_pruned_walks_are_traceback_reads(case, mode, sc, data):
    """The walk a pruned pass records (knob tb_prune_walk) is traceback_read's, on random
    DAGs, reads, windows and scorings (ties, merges, the virtual column)."""
    text, reads = case
    graph = s2g.load_graph(write_tmp(text))
    batch = batch_of(reads)
    lo, hi = random_windows(data, graph.n_bases, len(reads))
    _walks_match_traceback_read(graph, batch, lo, hi, sc, Mode.parse(mode))


@pytest.mark.parametrize("mode", ["local", "semiglobal"])
def test_pruned_walks_long_reads(tmp_path, mode):
    """The same on 1.2 kbp reads (8% errors) in random windows of SNP graphs, three
    scorings: long walks through many merges and several row chunks."""
    from s2g.simulate import sample_reads, snp_graph
    rng = np.random.default_rng(1)
    k = 0
    for seed in range(3):
        sg, ref = snp_graph(3000, 20, 3, seed)
        sg.write_gfa(str(tmp_path / "s.gfa"), ref)
        g = s2g.load_graph(str(tmp_path / "s.gfa"))
        seqs = [s for _, s, _ in sample_reads(sg, 5, 1200, 0.08, 0.3, seed)]
        batch = ReadBatch.from_sequences([f"r{x}" for x in range(len(seqs))], seqs)
        lo = rng.integers(0, g.n_bases // 3, len(seqs)).astype(np.int64)
        hi = np.minimum(lo + rng.integers(500, g.n_bases, len(seqs)), g.n_bases)
        for sc in (Scoring(), Scoring(1, 3, 5, 1), Scoring(2, 2, 2, 1)):
            k += _walks_match_traceback_read(g, batch, lo, hi.astype(np.int64), sc,
                                             Mode.parse(mode))
    assert k >= 30


def _allele_bubble(tmp_path, rng):
    """A 300-base flank, two alleles of 3,000 bases 1% apart side by side in the columns,
    another flank: a read on one allele keeps cells on both, far apart along each row."""
    def seq(n):
        return "".join(rng.choice(list("ACGT"), n))
    s1, s2a, s3 = seq(300), seq(3000), seq(300)
    s2b = "".join(c if rng.random() > 0.01 else "ACGT"[rng.integers(4)] for c in s2a)
    text = "H\tVN:Z:1.0\n" + "".join(f"S\t{k + 1}\t{x}\n" for k, x in
                                       enumerate((s1, s2a, s2b, s3)))
    text += "".join(f"L\t{u}\t+\t{v}\t+\t0M\n" for u, v in ((1, 2), (1, 3), (2, 4), (3, 4)))
    (tmp_path / "bubble.gfa").write_text(text)

    def mutated(s):
        out = []
        for ch in s:
            x = rng.random()
            out.append("ACGT"[rng.integers(4)] if x < 0.03 else "" if x < 0.04 else
                       ch + "ACGT"[rng.integers(4)] if x < 0.05 else ch)
        return "".join(out)
    seqs = [mutated(s1 + s2a + s3), mutated(s1[100:] + s2a + s3[:200]), mutated(s2a[500:] + s3),
            mutated(s1 + s2b + s3)]
    return (s2g.load_graph(str(tmp_path / "bubble.gfa")),
            ReadBatch.from_sequences([f"r{i}" for i in range(len(seqs))], seqs))


@pytest.mark.parametrize("mode", ["local", "semiglobal"])
def test_pruned_rows_skip_chunks_between_alleles(tmp_path, mode):
    """Reads on one of two near-identical 3 kbp alleles: each row keeps cells on both,
    ~3,000 columns apart, and skips the chunks between them that no kept cell reaches
    (pruned_rows.live_chunk): the same scores, end cells and walks as the reference and
    traceback_read, within a fifth of the windows' cells (a quarter before skipping)."""
    g, batch = _allele_bubble(tmp_path, np.random.default_rng(5))
    n = batch.n_reads
    tr = np.arange(n, dtype=np.int64)
    lo, hi = np.zeros(n, np.int64), np.full(n, g.n_bases, np.int64)
    md = Mode.parse(mode)
    _same(g, batch, tr, lo, hi, Scoring(), md)
    lens = batch.offsets[1:] - batch.offsets[:-1]
    assert pruned.LAST_STATS[0] < 0.2 * g.n_bases * int(lens.sum())
    assert _walks_match_traceback_read(g, batch, lo, hi, Scoring(), md) == n


def test_pruned_bands_seeded_long_reads(tmp_path):
    """Seeded 3 kbp reads (windows in banded lanes): the traceback with the pruned pass's
    rows (knob tb_prune_band) gives the tracebacks it gives without them."""
    from s2g.config import configure
    from s2g.index import build_index
    from s2g.seeded import SeededAligner
    from s2g.simulate import sample_reads, snp_graph
    sg, ref = snp_graph(60000, 30, 3, 11)
    sg.write_gfa(str(tmp_path / "s.gfa"), ref)
    g = s2g.load_graph(str(tmp_path / "s.gfa"))
    ix = build_index(g)
    seqs = [s for _, s, _ in sample_reads(sg, 8, 3000, 0.05, 0.2, 14)]
    batch = ReadBatch.from_sequences([f"r{i}" for i in range(len(seqs))], seqs)
    out = {}
    for on in (True, False):
        configure(tb_prune_band=on)
        sa = SeededAligner(g, ix, Scoring(), Mode.LOCAL)
        res = sa.align_batch(batch, sa.candidates(batch))
        assert bool(res.tbands) == on
        sa.traceback(batch, res)
        out[on] = [(t.cigar, tuple(t.path)) for t in res.tracebacks]
    assert out[True] == out[False]
    assert len(out[True]) == len(seqs)


def test_pruned_budget_falls_back_to_striped(tmp_path, monkeypatch):
    """A window whose passes would compute more than BUDGET of its cells is aligned
    striped instead (counted in LAST_STATS[2]), with the same results (floors kept)."""
    g, batch, n, tr, lo, hi, sc, mode, want = _whole_windows(tmp_path)
    monkeypatch.setattr(pruned, "BUDGET", 1e-6)
    got = pruned.align_windows(g, batch.codes_flat, batch.offsets, tr, lo, hi, sc, mode)
    assert pruned.LAST_STATS[2] == n
    for w, x in zip(want, got):
        np.testing.assert_array_equal(x, w)
    floor = want[0] + 1
    got = pruned.align_windows(g, batch.codes_flat, batch.offsets, tr, lo, hi, sc, mode,
                               floor=floor)
    assert (got[0] == NEG_INF).all()


def test_pruned_loose_bounds_run_at_the_xdrop_score(tmp_path):
    """Reads at 12-15% errors (the bound under HIT_MIN_RATIO of a perfect score): with knob
    prune_loose_xdrop the windows run one exact pass at their X-drop pass's score (none
    left to striped here) and record walks, traceback_read's; without it they all go
    striped. Scores and end cells are the reference's either way."""
    from s2g.config import configure, reset
    from s2g.simulate import sample_reads, snp_graph
    sg, ref = snp_graph(8000, 40, 2, 5)
    sg.write_gfa(str(tmp_path / "s.gfa"), ref)
    g = s2g.load_graph(str(tmp_path / "s.gfa"))
    seqs = [s for rate, seed in ((0.12, 1), (0.15, 2))
            for _, s, _ in sample_reads(sg, 3, 2500, rate, 0.2, seed)]
    batch = ReadBatch.from_sequences([f"r{i}" for i in range(len(seqs))], seqs)
    n = batch.n_reads
    tr = np.arange(n, dtype=np.int64)
    lo, hi = np.zeros(n, np.int64), np.full(n, g.n_bases)
    sc, mode = Scoring(), Mode.LOCAL
    want = align_windows_ref(g, batch.codes_flat, batch.offsets, tr, lo, hi, sc, mode)
    try:
        for loose_x in (False, True):
            configure(prune_loose_xdrop=loose_x)
            got = pruned.align_windows(g, batch.codes_flat, batch.offsets, tr, lo, hi, sc,
                                       mode)
            assert pruned.LAST_STATS[2] == (0 if loose_x else n)
            for w, x in zip(want, got):
                np.testing.assert_array_equal(x, w)
        assert _walks_match_traceback_read(g, batch, lo, hi, sc, mode) == n
    finally:
        reset()


def test_gpu_prune_thresholds_follow_the_cpu_schedule():
    """s2g/trace/long/prune.py, the host half of the GPU's pruned windows: a strip's
    threshold is T less the largest U of its rows (NEG_INF where the window runs unpruned);
    the first thresholds are the CPU's (margin, floor, unpruned where the bound is loose);
    a pass that falls short runs again at the margin doubled or at its own score, one
    under a floor it cannot reach comes back as none."""
    from s2g.trace.long import prune
    rng = np.random.default_rng(3)
    m = np.array([0, 7, 40, 63], np.int64)
    U = [np.sort(rng.integers(0, 500, k + 1))[::-1].astype(np.int64) for k in m]
    uoff = np.concatenate(([0], np.cumsum(m + 1))).astype(np.int64)
    T = np.array([5, NEG_INF, 300, 480], np.int64)
    sel = np.array([3, 0, 2, 1], np.int64)
    pth, pthoff = prune.strip_thresholds(np.concatenate(U), uoff, T, sel, 8)
    for x, t in enumerate(sel):
        want = [NEG_INF if T[t] <= NEG_INF else T[t] - U[t][r:r + 8].max()
                for r in range(0, m[t] + 1, 8)]
        np.testing.assert_array_equal(pth[pthoff[x]:pthoff[x + 1]], want)
    a = 1
    U0, mm = np.array([880, 700, 900]), np.array([1000, 1000, 1000])
    T0, margin, low = prune.first_thresholds(U0, mm, a, np.array([NEG_INF, NEG_INF, 850]))
    assert T0[0] == 880 - 60 and T0[1] == NEG_INF and T0[2] == 850     # r = 0.7 < MIN_RATIO
    assert list(low) == [1, 1, 850]
    T0h, margin_h, _ = prune.first_thresholds(U0, mm, a, np.array([NEG_INF, NEG_INF, 850]),
                                              hits=True)             # the hit bound's schedule
    want = max(pruned.MARGIN_MIN * a, pruned.HIT_MARGIN_PER_KB)       # 1,000 bases, r 0.88
    assert T0h[0] == 880 - want and margin_h[0] == want and T0h[1] == NEG_INF
    best = np.array([700, 500, 840])
    done, none, T1, margin1, known = prune.next_thresholds(
        best, T0, margin, low, np.full(3, NEG_INF), U0)
    assert list(done) == [False, True, True] and list(none) == [False, False, True]
    assert T1[0] == max(880 - 120, 700) and margin1[0] == 120 and known[0] == 700
    done, none, *_ = prune.next_thresholds(np.array([760]), T1[:1], margin1[:1], low[:1],
                                           known[:1], U0[:1])
    assert done[0] and not none[0]


def test_gpu_walk_bound_columns_rows_and_peak(tmp_path):
    """The pruned GPU pass's walk bound (s2g/trace/long/prune.py): per window column the
    longest walk from the window's start (``pl``, the column included) and to its end
    (``pr``, the column excluded) equal the CPU's walks (``pruned._layout``, built from the
    graph, not the GPU's programs); the rows' envelope is at least ``U``, falls with the row
    and by at most ``a`` a row; so over any rows ``ylo..yhi`` the bound ``a min(i, pl) +
    min(B[i], a pr)`` is largest at the row nearest ``pl`` (what the kernel evaluates)."""
    from s2g.trace.gpu_program import PROG_NAMES, fill, sizes
    from s2g.trace.gpu_walk import cum
    from s2g.trace.long import prune
    g, batch, _ = _snp_reads(tmp_path, 4, 4)
    rng = np.random.default_rng(5)
    nb = g.n_bases
    lo = np.concatenate([[0], rng.integers(0, nb // 2, 5)]).astype(np.int64)
    hi = np.minimum(lo + np.concatenate([[nb], rng.integers(20, nb, 5)]), nb).astype(np.int64)
    n = len(lo)
    z = np.zeros(n, np.int64)
    gr = (g.base, g.node_start, g.pred_ptr, g.pred_idx)
    sz = sizes(np.arange(n), z, z, z, int(Mode.LOCAL), 2, 2, *gr, lo, hi)
    coff, poff = cum(sz[:, 0]), cum(sz[:, 2])
    prog = fill(np.arange(n), z, z, z, int(Mode.LOCAL), 2, 2, *gr, coff, poff, lo, hi)
    pl = np.zeros(int(coff[-1]), np.int32)
    pr = np.zeros(int(coff[-1]), np.int32)
    prune.walk_bounds(coff, poff, *(prog[PROG_NAMES.index(k)]
                                    for k in ("p_kind", "p_mpa", "p_mpn", "mp_wcol")), pl, pr)
    for k in range(n):
        prev, ep_ptr, ep_idx, _, _, walk, _ = pruned._layout(lo[k], hi[k], *gr[1:])
        W = int(hi[k] - lo[k])
        fwd = np.ones(W, np.int64)
        for c in range(W):
            preds = [c - 1] if prev[c] else list(ep_idx[ep_ptr[c]:ep_ptr[c + 1]])
            fwd[c] = 1 + max([fwd[p] for p in preds], default=0)
        np.testing.assert_array_equal(pl[coff[k]:coff[k + 1]], fwd)
        np.testing.assert_array_equal(pr[coff[k]:coff[k + 1]] + 1, walk)
    assert (pl[coff[0]:coff[1]] < np.arange(1, sz[0, 0] + 1)).any(), "bubbles: walks shorter"
    a = 3
    m = np.array([0, 9, 40], np.int64)
    U = np.concatenate([rng.integers(0, 200, k + 1) for k in m]).astype(np.int64)
    uoff = cum(m + 1)
    B = prune.envelope(U, uoff, a).astype(np.int64)
    assert (B >= U).all()
    for k in range(len(m)):
        b = B[uoff[k]:uoff[k + 1]]
        assert (np.diff(b) <= 0).all() and (np.diff(b) >= -a).all()
    b = B[uoff[2]:uoff[3]]
    for _ in range(300):
        ylo = int(rng.integers(0, 41))
        yhi = int(rng.integers(ylo, 41))
        lc, sr = int(rng.integers(1, 60)), int(rng.integers(0, 60))
        val = [a * min(i, lc) + min(int(b[i]), a * sr) for i in range(ylo, yhi + 1)]
        ist = min(max(lc, ylo), yhi)
        assert max(val) == a * min(ist, lc) + min(int(b[ist]), a * sr)
    sel = np.array([2, 0], np.int64)
    got, boff = prune.gather_rows(B.astype(np.int32), uoff, sel)
    np.testing.assert_array_equal(got[:boff[-1]], np.concatenate([B[uoff[2]:], B[:1]]))


def test_seeded_reads_walked_at_their_score(tmp_path, monkeypatch):
    """Long reads whose windows ran striped (no recorded walk: every bound loose, knob
    prune_loose_xdrop off) and are fewer than AT_SCORE_MAX are walked by one pruned pass at
    their score; with the knob on their scoring pass (at the X-drop pass's score) records
    the walk. The same tracebacks as the lanes give them (knob tb_prune_walk off)."""
    from s2g.config import configure
    from s2g.index import build_index
    from s2g.seeded import SeededAligner
    from s2g.seeded import aligner as sa_mod
    from s2g.simulate import sample_reads, snp_graph
    sg, ref = snp_graph(60000, 30, 3, 11)
    sg.write_gfa(str(tmp_path / "s.gfa"), ref)
    g = s2g.load_graph(str(tmp_path / "s.gfa"))
    ix = build_index(g)
    # 12% errors: every window without a floor has a loose bound (r below HIT_MIN_RATIO)
    # and runs striped (a module constant: Numba froze it when align_window compiled)
    seqs = [s for _, s, _ in sample_reads(sg, 5, 3000, 0.12, 0.2, 15)]
    assert len(seqs) < sa_mod.AT_SCORE_MAX
    batch = ReadBatch.from_sequences([f"r{i}" for i in range(len(seqs))], seqs)
    out = {}
    for on, loose_x in ((True, False), (False, False), (True, True)):
        configure(tb_prune_walk=on, prune_loose_xdrop=loose_x)
        sa = SeededAligner(g, ix, Scoring(), Mode.LOCAL)
        res = sa.align_batch(batch, sa.candidates(batch))
        sa.traceback(batch, res)
        out[on, loose_x] = [(t.qstart, t.cigar, tuple(t.path), t.path_start)
                            for t in res.tracebacks]
        assert sa.totals["reads walked at their score"] == (
            len(seqs) if on and not loose_x else 0)
    assert out[True, False] == out[False, False] == out[True, True]


@given(n=st.integers(0, 70), c0=st.integers(1, 5), M=st.integers(-(1 << 29), 300),
       seed=st.integers(0, 2**31 - 1), rec=st.booleans())
@SETTINGS
def test_row_run_is_the_running_maximum(n, c0, M, seed, rec):
    """A row's deletion chain (pruned_rows._run, and _run_rec recording) in four
    interleaved quarters == the plain loop: E(c) = max(E(c - 1) - e, H0(c - 1) - o - e)
    as a running maximum M of H0(c - 1) - o - e + e c, H = max(H0, E), M returned; H0
    with unreachable runs and ties."""
    from s2g.variants.pruned_rows import _run
    from s2g.variants.pruned_walk import _run_rec
    rng = np.random.default_rng(seed)
    o, e = 4, 2
    W = c0 + n + 1
    H0 = rng.integers(-40, 60, W).astype(np.int32)
    H0[rng.random(W) < 0.2] = NEG_INF
    c1 = c0 + n
    want_H, want_E = np.full(W, 7, np.int32), np.full(W, 7, np.int32)
    m = M
    for c in range(c0, c1):
        m = max(m, int(H0[c - 1]) - o - e + e * c)
        want_E[c] = m - e * c
        want_H[c] = max(int(H0[c]), m - e * c)
    Hc, Ec = np.full(W, 7, np.int32), np.full(W, 7, np.int32)
    if rec:
        D = np.zeros(W, np.uint8)
        got = _run_rec(Hc, Ec, H0, c0, c1, o + e, e, np.int64(M), D, 0, True)
    else:
        got = _run(Hc, Ec, H0, c0, c1, o + e, e, np.int64(M))
    assert got == m
    np.testing.assert_array_equal(Hc, want_H)
    np.testing.assert_array_equal(Ec, want_E)


@given(n=st.integers(1, 60), seed=st.integers(0, 2**31 - 1), fresh=st.booleans(),
       xdrop=st.booleans())
@SETTINGS
def test_row_keep_reductions(n, seed, fresh, xdrop):
    """_row_keep's SIMD reductions (kept range, best cell: highest H, then the first
    column, against the best so far by V0's rule) == scanning the row; an X-drop pass's
    floor on H too."""
    from s2g.variants.pruned_rows import BIG_ROW, _row_keep
    rng = np.random.default_rng(seed)
    c0, c1, lo, i, a = 2, 2 + n, 100, 9, 2
    W = c1 + 1
    H = rng.integers(-5, 12, W).astype(np.int32)
    walk = rng.integers(0, 8, W).astype(np.int64)
    reach = np.arange(W, dtype=np.int64) + rng.integers(0, 3, W)
    T, ui = 10, int(rng.integers(0, 12))
    best, bi, bj = (NEG_INF, -1, -1) if fresh else \
        (int(rng.integers(0, 12)), 3, lo + int(rng.integers(0, W)))
    kept = (W, -1, -1, best, bi, bj) if fresh else (1, 1, 4, best, bi, bj)
    xf = int(rng.integers(-3, 10)) if xdrop else NEG_INF
    keep = [c for c in range(c0, c1)
            if int(H[c]) + min(ui, a * int(walk[c])) >= T and int(H[c]) >= xf]
    Hc, Ec, Fc = H.copy(), H.copy(), H.copy()
    rlo, rhi = np.full(W, BIG_ROW, np.int32), np.full(W, -1, np.int32)
    got = _row_keep(reach, walk, Hc, Ec, Fc, c0, c1, (T, ui, a, xf), True, i, lo,
                    tuple(np.int64(x) for x in kept), rlo, rhi)
    want = list(kept)
    if keep:
        want[2] = max(kept[2], max(int(reach[c]) for c in keep))
        if kept[1] < 0:
            want[0] = keep[0]
        want[1] = keep[-1]
        hmax = max(int(H[c]) for c in keep)
        c = next(c for c in keep if int(H[c]) == hmax)
        if hmax > best or (hmax == best and c + lo < bj):
            want[3:] = [hmax, i, c + lo]
    assert tuple(int(x) for x in got) == tuple(want)
    for c in range(c0, c1):
        assert Hc[c] == (H[c] if c in keep else NEG_INF)
        assert rhi[c] == (i if c in keep else -1)


def _anchored_best(q, g, i, c, sc):
    """The best score of an alignment of read bases ``i..t-1`` (any ``t``) to the linear
    sequence ``g`` from column ``c + 1`` on, starting right after cell ``(i, c)`` (affine
    gaps, free end): what pruned_window's bound on a cell's continuation must cover."""
    a, b, o, e = sc.as_tuple()
    neg = -(1 << 40)
    m, W = len(q), len(g)
    n, w = m - i, W - (c + 1)
    H = np.full((n + 1, w + 1), neg, np.int64)
    E = np.full((n + 1, w + 1), neg, np.int64)
    F = np.full((n + 1, w + 1), neg, np.int64)
    H[0, 0] = 0
    best = 0
    for r in range(n + 1):
        for x in range(w + 1):
            if r == 0 and x == 0:
                continue
            if x > 0:
                E[r, x] = max(E[r, x - 1] - e, H[r, x - 1] - o - e)
            if r > 0:
                F[r, x] = max(F[r - 1, x] - e, H[r - 1, x] - o - e)
            h = max(E[r, x], F[r, x])
            if r > 0 and x > 0:
                qb, gb = q[i + r - 1], g[c + x]
                h = max(h, H[r - 1, x - 1] + (a if qb == gb and qb < 4 else -b))
            H[r, x] = h
            best = max(best, h)
    return best


@given(seed=st.integers(0, 2**31 - 1), sc=scorings, err=st.sampled_from([0.0, 0.05, 0.15]),
       shift=st.integers(-30, 30))
@SETTINGS
def test_hit_bounds_hold(seed, sc, err, shift):
    """pruned.hit_bounds is an upper bound: on a linear window, no alignment continuing
    from cell (i, c) scores more than U[i], for reads with errors (a brute-force affine
    DP from each sampled cell), and it is non-increasing in i."""
    from s2g.seeded.windows import QGRAM, _qgram_set
    rng = np.random.default_rng(seed)
    W = int(rng.integers(60, 140))
    g = rng.integers(0, 4, W).astype(np.uint8)
    start = int(np.clip(20 + shift, 0, W - 40))
    src = list(g[start:start + int(rng.integers(30, 90))])
    read = []
    for x in src:                                   # substitutions, 1-3 bp indels
        u = rng.random()
        if u < err * 0.7:
            read.append(int((x + rng.integers(1, 4)) % 4))
        elif u < err * 0.85:
            read.extend(int(y) for y in rng.integers(0, 4, int(rng.integers(1, 4))))
            read.append(int(x))
        elif u >= err:
            read.append(int(x))
    q = np.array(read, np.uint8)
    node_start = np.array([0, W], np.int64)
    empty = np.zeros(1, np.int64)
    bits = np.zeros(1 << (2 * QGRAM - 6), np.uint64)
    assert _qgram_set(0, 1, node_start, np.zeros(2, np.int64), empty, g, bits)
    h = pruned.hit_cost(sc)
    U = pruned.hit_bounds(q, bits, True, sc.match, h, QGRAM)
    assert all(U[k] >= U[k + 1] for k in range(len(q)))
    for i in rng.choice(len(q) + 1, size=min(6, len(q) + 1), replace=False):
        for c in [-1] + list(rng.choice(W, size=3, replace=False)):
            assert _anchored_best(q, g, int(i), int(c), sc) <= U[i], (i, c)


def test_xdrop_pass_follows_edges_past_its_kept_columns(tmp_path):
    """A read through the second of two alleles laid out 3,000 columns apart (the first
    one 1% away): the X-drop pass alone, its rows over the columns its kept cells reach
    through the graph's edges, finds the window's exact score. Its rows used to stop 64
    columns past their kept cells, so it followed the first allele and fell short (10 kbp
    MHC reads at 10% errors: 7 of 30 lead windows short, 6 then striped)."""
    g, batch = _allele_bubble(tmp_path, np.random.default_rng(5))
    r = 3                                              # s1 + s2b + s3
    q = batch.codes_flat[batch.offsets[r]:batch.offsets[r + 1]]
    want = align_windows_ref(g, batch.codes_flat, batch.offsets, np.array([r]),
                             np.array([0]), np.array([g.n_bases]), Scoring(), Mode.LOCAL)
    s, cells = pruned.xdrop_pass(g, q, 0, g.n_bases, Scoring())
    assert s == want[0][0]
    assert cells < 0.2 * g.n_bases * len(q)


def test_windows_too_big_to_record_at_their_score_are_not_walked_again(tmp_path, monkeypatch):
    """A long window whose pass ran at its own score and outgrew the record (knob
    prune_record_bytes) comes back as an AtScoreBand: the traceback takes it in its band and
    runs no second pass at the score (it could not record either: it ran whole for
    nothing). The same tracebacks as with room for every walk."""
    from s2g.config import configure
    from s2g.index import build_index
    from s2g.seeded import SeededAligner
    from s2g.simulate import sample_reads, snp_graph
    from s2g.variants.pruned_walk import AtScoreBand, Walked
    sg, ref = snp_graph(60000, 30, 3, 11)
    sg.write_gfa(str(tmp_path / "s.gfa"), ref)
    g = s2g.load_graph(str(tmp_path / "s.gfa"))
    ix = build_index(g)
    seqs = [s for _, s, _ in sample_reads(sg, 4, 3000, 0.04, 0.2, 15)]
    batch = ReadBatch.from_sequences([f"r{i}" for i in range(len(seqs))], seqs)
    calls = []
    orig = pruned.align_windows

    def spy(*args, **kw):
        calls.append(kw.get("known", False))
        return orig(*args, **kw)

    monkeypatch.setattr(pruned, "align_windows", spy)
    out = {}
    try:
        for cap in (1 << 28, 1000):
            configure(prune_record_bytes=cap)
            calls.clear()
            sa = SeededAligner(g, ix, Scoring(), Mode.LOCAL)
            res = sa.align_batch(batch, sa.candidates(batch))
            kinds = {type(v) for v in res.tbands.values()}
            assert kinds == ({Walked} if cap > 1000 else {AtScoreBand}), kinds
            sa.traceback(batch, res)
            assert True not in calls                    # no pass at the score
            out[cap] = [(t.qstart, t.cigar, tuple(t.path), t.path_start)
                        for t in res.tracebacks]
    finally:
        configure(prune_record_bytes=1 << 28)
    assert out[1 << 28] == out[1000]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(-1, 40), st.integers(0, 12)), max_size=12),
       st.integers(1, 45), st.sampled_from([8, 16, 32]))
def test_strip_rows_are_each_columns_first_and_last_kept_strip(spans, W, S):
    """The GPU traceback's kept rows per column (s2g.trace.long.prune.strip_rows, from each
    strip's first and last column with a kept cell) == the first and last strip whose span
    holds the column, by brute force."""
    from s2g.trace.long.prune import strip_rows
    flat = np.array([x for a, n in spans for x in ((a, a + n) if a >= 0 else (-1, -1))],
                    np.int32)
    lo, hi = strip_rows(flat, W, S)
    for c in range(W):
        hold = [s for s, (a, n) in enumerate(spans) if a >= 0 and a <= c <= a + n]
        assert (lo[c], hi[c]) == ((hold[0] * S, hold[-1] * S + S - 1) if hold else (-1, -1))
