"""Exact DP in a column window (s2g/window.py) and the traceback restricted to it.

Oracle: tests/naive.py's dict DP over a per-column networkx graph built from the
FlatGraph's columns inside ``[lo, hi)`` (edges: inside a node, and from a predecessor's
last column to a node's first column) — the sub-DAG the window promises to align to
exactly. A window over the whole graph must equal V0 field for field.
"""
from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import naive
import s2g
from s2g.graph_core import CODE_BASE
from s2g.scoring import NEG_INF, Mode
from s2g.trace import traceback_batch
from s2g.variants import v0_cpu
from s2g.window import align_windows_ref
from test_v0 import SETTINGS, batch_of, column_of, dag_cases, scorings, write_tmp


def column_graph(graph, lo, hi):
    """Per-column DiGraph of the columns in [lo, hi); node (j,), attribute 'base'."""
    g = nx.DiGraph()
    for v in range(graph.n_nodes):
        s0, s1 = int(graph.node_start[v]), int(graph.node_start[v + 1])
        for j in range(max(s0, lo), min(s1, hi)):
            g.add_node((j,), base=chr(CODE_BASE[graph.base[j]]))
            if j > max(s0, lo):
                g.add_edge((j - 1,), (j,))
        if lo <= s0 < hi:
            for k in range(graph.pred_ptr[v], graph.pred_ptr[v + 1]):
                p = int(graph.pred_idx[k])
                last = int(graph.node_start[p + 1]) - 1
                if last >= lo:
                    g.add_edge((last,), (s0,))
    return g


def random_windows(data, n, k):
    """``k`` random non-empty column ranges [lo, hi) of a graph of ``n`` columns."""
    lo = np.array([data.draw(st.integers(0, n - 1)) for _ in range(k)], np.int64)
    hi = np.array([data.draw(st.integers(int(x) + 1, n)) for x in lo], np.int64)
    return lo, hi


@SETTINGS
@given(case=dag_cases(allow_empty=False), mode=st.sampled_from(["local", "semiglobal"]),
       sc=scorings, data=st.data())
def test_window_equals_naive_on_the_induced_subgraph(case, mode, sc, data):
    text, reads = case
    graph = s2g.load_graph(write_tmp(text))
    batch = batch_of(reads)
    lo, hi = random_windows(data, graph.n_bases, len(reads))
    tr = np.arange(len(reads), dtype=np.int64)
    score, ei, ej = align_windows_ref(graph, batch.codes_flat, batch.offsets, tr, lo, hi, sc,
                                      Mode.parse(mode))
    for t, read in enumerate(reads):
        want, ends = naive.graph_align(column_graph(graph, int(lo[t]), int(hi[t])), read, mode,
                                       *sc.as_tuple())
        if want is None:
            assert score[t] == NEG_INF and ej[t] == -1
            continue
        assert score[t] == want, f"window [{lo[t]}, {hi[t]}) read {read!r}: {score[t]} != {want}"
        assert (ej[t], ei[t]) == min((j, i) for j, i in ends), "end cell tie rule"


@SETTINGS
@given(case=dag_cases(allow_empty=False), mode=st.sampled_from(["local", "semiglobal"]),
       sc=scorings)
def test_whole_graph_window_equals_v0(case, mode, sc):
    text, reads = case
    graph = s2g.load_graph(write_tmp(text))
    batch = batch_of(reads)
    r0 = v0_cpu.align_batch(graph, batch, sc, Mode.parse(mode))
    k = len(reads)
    score, ei, ej = align_windows_ref(graph, batch.codes_flat, batch.offsets,
                                      np.arange(k), np.zeros(k, np.int64),
                                      np.full(k, graph.n_bases, np.int64), sc, Mode.parse(mode))
    np.testing.assert_array_equal(score, r0.score)
    np.testing.assert_array_equal(ei, r0.end_i)
    np.testing.assert_array_equal(ej, r0.end_j)


@SETTINGS
@given(case=dag_cases(allow_empty=False), mode=st.sampled_from(["local", "semiglobal"]),
       sc=scorings, data=st.data())
def test_traceback_inside_a_window_reproduces_its_score(case, mode, sc, data):
    """The traceback with ``col_lo`` re-derives the window's score (it checks the end cell
    itself) and never walks below ``lo``; the CIGAR re-scores to the score."""
    text, reads = case
    graph = s2g.load_graph(write_tmp(text))
    batch = batch_of(reads)
    lo, hi = random_windows(data, graph.n_bases, len(reads))
    m = Mode.parse(mode)
    score, ei, ej = align_windows_ref(graph, batch.codes_flat, batch.offsets,
                                      np.arange(len(reads)), lo, hi, sc, m)
    res = s2g.BatchResult(batch.names, batch.lengths(), score, ei, ej)
    traceback_batch(graph, batch, sc, m, res, col_lo=lo)
    a, b, o, e = sc.as_tuple()
    for t, r in enumerate(res):
        if not r.aligned:
            continue
        tb = r.traceback
        first_node = tb.path[0]
        first_col = int(graph.node_start[first_node]) + tb.path_start
        if tb.block_len and any(c in "=XD" for c in tb.cigar):
            assert first_col >= lo[t], "traceback walked below the window"
        assert naive.rescore(tb.cigar, a, b, o, e) == r.score, (tb.cigar, r.score)


# ------------------------------------------------------------ node-set windows


def random_pieces(data, graph):
    """A random node-set window: pieces by (node, in-node start), each a node from in-node
    offset lo to hi; whole nodes half the time (joins), sometimes a node's head and tail
    apart (what a window keeps of a long node that two searches reached from both ends)."""
    nodes, lo, hi = [], [], []
    for v in range(graph.n_nodes):
        if not data.draw(st.booleans()):
            continue
        ln = int(graph.node_start[v + 1] - graph.node_start[v])
        kind = data.draw(st.integers(0, 3))
        if kind == 3 and ln >= 3:
            y = data.draw(st.integers(0, ln - 3))
            x = data.draw(st.integers(y + 2, ln - 1))
            spans = [(0, y), (x, ln - 1)]
        elif kind >= 2:
            a = data.draw(st.integers(0, ln - 1))
            spans = [(a, data.draw(st.integers(a, ln - 1)))]
        else:
            spans = [(0, ln - 1)]
        for a, b in spans:
            nodes.append(v)
            lo.append(a)
            hi.append(b)
    return nodes, lo, hi


def piece_graph(graph, nodes, lo, hi):
    """Per-column DiGraph of a node-set window (node (j,) = graph column j): edges inside a
    piece, and from a predecessor's last column (in one of its pieces) to a piece starting
    at its node's first column."""
    g = nx.DiGraph()
    ends = {v for v, b in zip(nodes, hi)
            if b == int(graph.node_start[v + 1] - graph.node_start[v]) - 1}
    for v, a, b in zip(nodes, lo, hi):
        s0 = int(graph.node_start[v])
        for j in range(s0 + a, s0 + b + 1):
            g.add_node((j,), base=chr(CODE_BASE[graph.base[j]]))
            if j > s0 + a:
                g.add_edge((j - 1,), (j,))
        if a == 0:
            for k in range(graph.pred_ptr[v], graph.pred_ptr[v + 1]):
                p = int(graph.pred_idx[k])
                if p in ends:
                    g.add_edge((int(graph.node_start[p + 1]) - 1,), (s0,))
    return g


@SETTINGS
@given(case=dag_cases(allow_empty=False), mode=st.sampled_from(["local", "semiglobal"]),
       sc=scorings, data=st.data())
def test_node_set_windows_equal_naive_and_trace_inside(case, mode, sc, data):
    """Node-set windows through the window graph (s2g.window.WindowGraph): the range DP on
    it is the naive DP over the window's pieces (score; end cell mapped back to graph
    columns, V0's tie rule), and the traceback on it, mapped back, is a walk of the graph
    inside the pieces whose CIGAR re-scores to the score."""
    from s2g.window import WindowGraph
    text, reads = case
    graph = s2g.load_graph(write_tmp(text))
    batch = batch_of(reads)
    sets = [random_pieces(data, graph) for _ in reads]
    keep = [t for t, s in enumerate(sets) if s[0]]
    if not keep:
        return
    piece_at = np.cumsum([0] + [len(sets[t][0]) for t in keep])
    cat = lambda f: np.concatenate([np.asarray(sets[t][f], np.int64) for t in keep])  # noqa
    wg = WindowGraph(graph, piece_at, cat(0), cat(1), cat(2))
    m = Mode.parse(mode)
    tr = np.asarray(keep, np.int64)
    score, ei, ej = align_windows_ref(wg.graph, batch.codes_flat, batch.offsets, tr, wg.t_lo,
                                      wg.t_hi, sc, m)
    cols = wg.columns(ej)
    a, b, o, e = sc.as_tuple()
    for x, t in enumerate(keep):
        want, ends = naive.graph_align(piece_graph(graph, *sets[t]), reads[t], mode,
                                       *sc.as_tuple())
        if want is None:
            assert score[x] == NEG_INF and ej[x] == -1
            continue
        assert score[x] == want
        assert (cols[x], ei[x]) == min((j, i) for j, i in ends), "end cell tie rule"
    sub = batch.subset(tr)
    res = s2g.BatchResult(sub.names, sub.lengths(), score, ei, ej)
    traceback_batch(wg.graph, sub, sc, m, res, col_lo=wg.t_lo)
    wg.map_tracebacks(res.flat)
    res.set_flat(res.flat)
    for x, r in enumerate(res):
        if not r.aligned:
            continue
        tb = r.traceback
        nodes, lo, hi = sets[keep[x]]
        cols = {int(graph.node_start[v]) + j for v, a, b in zip(nodes, lo, hi)
                for j in range(a, b + 1)}
        for u, v in zip(tb.path, tb.path[1:]):
            assert u in graph.pred_idx[graph.pred_ptr[v]:graph.pred_ptr[v + 1]], "not a walk"
        lens = [int(graph.node_start[v + 1] - graph.node_start[v]) for v in tb.path]
        assert tb.path_len == sum(lens)
        if tb.block_len and any(c in "=XD" for c in tb.cigar):
            # every graph base the walk spans lies in the window's pieces
            walk = [int(graph.node_start[v]) + j for v in tb.path
                    for j in range(int(graph.node_start[v + 1] - graph.node_start[v]))]
            assert set(walk[tb.path_start:tb.path_end]) <= cols, "path leaves the window"
        assert naive.rescore(tb.cigar, a, b, o, e) == r.score, (tb.cigar, r.score)


def test_node_set_window_joins_pieces_only_at_node_ends():
    """A piece that stops before its node's last base has no successor in the window
    graph, and one that starts after its node's first base no predecessor: the read
    ACGTA+GGGG spells a walk A -> B only through A's last five bases."""
    from s2g.window import WindowGraph
    graph = s2g.load_graph(write_tmp("H\tVN:Z:1.0\nS\tA\tACGTACGTAC\nS\tB\tGGGG\n"
                                     "L\tA\t+\tB\t+\t0M\n"), strands="forward")
    sc = s2g.Scoring()
    a = sc.as_tuple()[0]
    batch = batch_of(["ACGTAGGGG", "CGTACGGGG"])
    A, B = (column_of(graph, s, "+", 0) for s in "AB")
    vA, vB = (graph.node_of_column(c) for c in (A, B))
    # task 0: A[0..4] + B (no join); task 1: A[5..9] + B (joined: A ends at its last base)
    wg = WindowGraph(graph, np.array([0, 2, 4]), np.array([vA, vB, vA, vB]),
                     np.array([0, 0, 5, 0]), np.array([4, 3, 9, 3]))
    assert list(wg.graph.pred_idx) == [2]
    score, ei, ej = align_windows_ref(wg.graph, batch.codes_flat, batch.offsets,
                                      np.array([0, 1]), wg.t_lo, wg.t_hi, sc, Mode.LOCAL)
    assert score[0] == 5 * a                     # ACGTA alone: no walk into B
    assert score[1] == 9 * a                     # CGTAC -> GGGG across the join
    assert list(wg.columns(ej)) == [A + 4, B + 3]


def test_fast_kernel_windows_under_the_cuda_simulator_match_the_reference():
    """The fast kernel's window form (every group its own read and column range) ==
    align_windows_ref on seeded and random (read, window) tasks, both launches (8 and 32
    lanes a read), local and semiglobal; reads over one strip are left undone."""
    import os
    import subprocess
    import sys
    from pathlib import Path
    repo = Path(__file__).resolve().parents[1]
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1", PYTHONPATH=str(repo))
    p = subprocess.run([sys.executable, str(repo / "tests" / "fast_windows_cudasim_check.py"),
                        "6"], env=env, capture_output=True, text=True, timeout=900)
    assert p.returncode == 0, p.stdout + p.stderr
    assert p.stdout.startswith("OK 6"), p.stdout


def test_fast_kernel_windows_with_packed_uploads_under_the_cuda_simulator():
    """Knob gpu_pack_uploads: a window launch's small inputs in one upload and its outputs
    in one download (typed views of one buffer): the same scores and end cells."""
    import os
    import subprocess
    import sys
    from pathlib import Path
    repo = Path(__file__).resolve().parents[1]
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1", PYTHONPATH=str(repo),
               S2G_CONFIG="gpu_pack_uploads=1")
    p = subprocess.run([sys.executable, str(repo / "tests" / "fast_windows_cudasim_check.py"),
                        "2"], env=env, capture_output=True, text=True, timeout=900)
    assert p.returncode == 0, p.stdout + p.stderr
    assert p.stdout.startswith("OK 2"), p.stdout


@pytest.mark.gpu
def test_gpu_fast_kernel_windows_equal_the_reference():
    """On a real GPU: the fast kernel's window form == align_windows_ref on every seeded
    window of 3,000 reads of 150 bp and 300 of 250 bp (both launches) on a 60 kbp SNP graph,
    both strands, local and semiglobal; warps hold windows of different widths."""
    import os
    import tempfile
    from s2g.graph import load_graph
    from s2g.index import build_index
    from s2g.reads import ReadBatch
    from s2g.scoring import Scoring
    from s2g.seeded import SeededAligner
    from s2g.simulate import sample_reads, snp_graph
    from s2g.variants.fast import windows as fw
    sg, ref = snp_graph(60_000, 40, 2, 3)
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "g.gfa")
        sg.write_gfa(path, ref)
        g = load_graph(path, strands="both")
    ix = build_index(g)
    seqs = [s for _, s, _ in sample_reads(sg, 3000, 150, 0.02, 0.5, 5)]
    seqs += [s for _, s, _ in sample_reads(sg, 300, 250, 0.02, 0.5, 6)]
    reads = ReadBatch.from_sequences([f"r{k}" for k in range(len(seqs))], seqs)
    sc = Scoring()
    for mode in (Mode.LOCAL, Mode.SEMIGLOBAL):
        cand = SeededAligner(g, ix, sc, mode).candidates(reads)
        wg, tr = cand.wg, cand.t_read
        want = align_windows_ref(wg.graph, reads.codes_flat, reads.offsets, tr, wg.t_lo,
                                 wg.t_hi, sc, mode)
        s, i, j, done = fw.run(wg.graph, wg.piece_at, reads.codes_flat, reads.offsets, tr,
                               wg.t_lo, wg.t_hi, sc, mode)
        assert done.all() and len(tr) > 3000
        for x, y in zip(want, (s, i, j)):
            assert np.array_equal(np.asarray(x, np.int64), y)


def _snp_window_graph(tmp_path, node_len, seed, n_reads, read_seed):
    """(graph, WindowGraph): a 20 kbp SNP graph (3 alleles a site, both strands) and the
    seeded windows of ``n_reads`` simulated 150 bp reads (2% errors) on it."""
    from s2g.graph import load_graph
    from s2g.index import build_index
    from s2g.reads import ReadBatch
    from s2g.scoring import Scoring
    from s2g.seeded import SeededAligner
    from s2g.simulate import sample_reads, snp_graph
    sg, ref = snp_graph(20_000, node_len, 3, seed)
    path = str(tmp_path / "g.gfa")
    sg.write_gfa(path, ref)
    g = load_graph(path, strands="both")
    seqs = [s for _, s, _ in sample_reads(sg, n_reads, 150, 0.02, 0.5, read_seed)]
    reads = ReadBatch.from_sequences([f"r{k}" for k in range(len(seqs))], seqs)
    return g, SeededAligner(g, build_index(g), Scoring(), Mode.LOCAL).candidates(reads).wg


def test_fast_window_tables_equal_the_graph_tables(tmp_path):
    """The fast kernel's window tables, built window by window in parallel
    (s2g.variants.fast.windows.window_tables), == the full-graph builder's
    (tables.column_tables, column_sub, fast_slots) on a window graph: colinfo, colsub,
    mword, mptr, mslot and the slot count; bubbles of short nodes, both strands."""
    from s2g.scoring import Scoring
    from s2g.variants.fast import tables as ft
    from s2g.variants.fast import windows as fw
    g, wg = _snp_window_graph(tmp_path, 6, 11, 300, 2)
    w = wg.graph
    assert wg.n_tasks >= 300 and w.n_nodes > 10 * wg.n_tasks
    for prmt in (True, False):
        ci, sub, mw, mp, ms, nsl = fw.window_tables(w, wg.piece_at, prmt)
        slot, n = ft.fast_slots(w)
        want = ft.column_tables(w.base, w.node_start, w.pred_ptr, w.pred_idx, slot, w.is_sink,
                                int(Mode.LOCAL), 4, 2, n)
        assert nsl == n + 1
        for got, exp in zip((ci, mw, mp), want[:3]):
            assert np.array_equal(got, exp)
        used = int(mp[-1])                    # column_tables' mslot has room to spare
        assert np.array_equal(ms[:used], want[3][:used]) and used == len(ms)
        assert np.array_equal(sub, ft.column_sub(want[0], Scoring(), False, prmt))


def test_window_node_parts_kept_by_the_seeding_thread_are_the_ones_made_later(tmp_path):
    """window_node_parts keeps what it makes on the window graph (the seeding thread makes
    it first) and hands it back for that piece_at only (another array: made afresh)."""
    from s2g.variants.fast import tables as ft
    g, wg = _snp_window_graph(tmp_path, 6, 11, 60, 3)
    w = wg.graph
    fresh = ft.window_node_parts(w, wg.piece_at.copy())
    ft.window_node_parts(w, wg.piece_at)        # (the seeding thread's call)
    kept = ft.window_node_parts(w, wg.piece_at)
    assert kept is w.__dict__["_s2g_node_parts"][1]
    for x, y in zip(kept, fresh):
        assert np.array_equal(np.asarray(x), np.asarray(y))
    other = wg.piece_at[:2].copy()             # the first window alone: not the kept parts
    assert ft.window_node_parts(w, other) is not kept
    assert ft.window_node_parts(w, other)[4] <= kept[4]


def test_window_liveness_equals_the_graph_wide_slots(tmp_path):
    """WindowGraph's slots, assigned window by window in parallel (window_liveness), ==
    the graph-wide liveness rule (graph_core._liveness_slots) on the same window graph,
    with and without keep-merges; bubbles of short nodes, both strands."""
    from s2g.graph_core import _liveness_slots
    from s2g.window import window_liveness
    g, wg = _snp_window_graph(tmp_path, 5, 12, 200, 3)
    w = wg.graph
    assert wg.n_tasks >= 200 and w.n_slots > 1
    for keep in (False, True):
        want = _liveness_slots(w.n_nodes, w.pred_ptr, w.pred_idx, keep)
        got = window_liveness(wg.piece_at, w.pred_ptr, w.pred_idx, keep)
        assert np.array_equal(got[0], want[0]) and int(got[1]) == int(want[1])


def test_window_graph_layout_equals_numpy(tmp_path):
    """WindowGraph's node layout, built window by window in parallel (_wg_layout,
    _wg_ends), == the plain numpy construction: node starts, predecessor pointers, sinks,
    segments and strands of the pieces."""
    g, wg = _snp_window_graph(tmp_path, 5, 13, 200, 4)
    w = wg.graph
    ws = np.zeros(len(wg.p_node) + 1, np.int64)
    np.cumsum(wg.p_hi.astype(np.int64) - wg.p_lo + 1, out=ws[1:])
    has_succ = np.zeros(w.n_nodes, np.bool_)
    has_succ[w.pred_idx] = True
    assert wg.n_tasks >= 200
    assert np.array_equal(wg.ws, ws) and np.array_equal(w.node_start, ws.astype(np.int32))
    assert np.array_equal(w.is_sink, (~has_succ).astype(np.uint8))
    assert np.array_equal(w.node_seg, g.node_seg[wg.p_node])
    assert np.array_equal(w.node_rev, g.node_rev[wg.p_node])
    assert w.pred_ptr.dtype == np.int32 and w.pred_ptr[-1] == len(w.pred_idx)
    assert np.array_equal(wg.t_lo, ws[wg.piece_at[:-1]])
    # the GPU gathers the window graph's bases from the graph's (gpu_window_bases)
    pbase, src = w.parent_cols
    assert pbase is g.base and src.dtype == np.int64 and len(src) == w.n_nodes
    col = np.arange(int(ws[-1]))
    v = np.searchsorted(ws, col, side="right") - 1
    assert np.array_equal(pbase[src[v] + col - ws[v]], w.base)


@SETTINGS
@given(case=dag_cases(allow_empty=False), data=st.data())
def test_window_graph_tables_on_random_pieces(case, data):
    """On window graphs of random pieces of random DAGs (random_pieces, as the node-set
    window test): the parallel, window-by-window builders == the graph-wide ones: slots
    (window_liveness == graph_core._liveness_slots, with and without keep-merges), the
    fast kernel's column tables (windows.window_tables == tables.column_tables /
    column_sub), and the node layout (node starts, sinks) == numpy's."""
    from s2g.graph_core import _liveness_slots
    from s2g.variants.fast import tables as ft
    from s2g.variants.fast import windows as fw
    from s2g.window import WindowGraph, window_liveness
    text, reads = case
    graph = s2g.load_graph(write_tmp(text))
    sets = [random_pieces(data, graph) for _ in range(data.draw(st.integers(1, 5)))]
    sets = [s for s in sets if s[0]]
    if not sets:
        return
    piece_at = np.cumsum([0] + [len(s[0]) for s in sets])
    cat = lambda f: np.concatenate([np.asarray(s[f], np.int64) for s in sets])  # noqa
    wg = WindowGraph(graph, piece_at, cat(0), cat(1), cat(2))
    w = wg.graph
    for keep in (False, True):
        want = _liveness_slots(w.n_nodes, w.pred_ptr, w.pred_idx, keep)
        got = window_liveness(wg.piece_at, w.pred_ptr, w.pred_idx, keep)
        assert np.array_equal(got[0], want[0]) and int(got[1]) == int(want[1])
    slot, n = ft.fast_slots(w)
    exp = ft.column_tables(w.base, w.node_start, w.pred_ptr, w.pred_idx, slot, w.is_sink,
                           int(Mode.LOCAL), 4, 2, n)
    for prmt in (True, False):
        ci, sub, mw, mp, ms, nsl = fw.window_tables(w, wg.piece_at, prmt)
        assert nsl == n + 1
        for x, y in zip((ci, mw, mp), exp[:3]):
            assert np.array_equal(x, y)
        assert np.array_equal(ms[:int(mp[-1])], exp[3][:int(mp[-1])])
        assert np.array_equal(sub, ft.column_sub(exp[0], s2g.Scoring(), False, prmt))
    ws = np.zeros(len(wg.p_node) + 1, np.int64)
    np.cumsum(wg.p_hi.astype(np.int64) - wg.p_lo + 1, out=ws[1:])
    has_succ = np.zeros(w.n_nodes, np.bool_)
    has_succ[w.pred_idx] = True
    assert np.array_equal(w.node_start, ws) and np.array_equal(w.is_sink, ~has_succ)


def test_window_tables_kernel_compiles_to_sm90():
    """The kernel that makes the window form's column tables on the GPU
    (s2g.variants.fast.wtables_gpu), compiled to sm_90 PTX with its real signature (the
    CUDA simulator, which checks its words against the host's, checks no types)."""
    cuda = pytest.importorskip("numba.cuda", reason="numba-cuda is not installed")
    from s2g.variants.fast import wtables_gpu
    try:
        wtables_gpu.compile_module()
        ptx = cuda.compile_ptx(wtables_gpu.fill_body, wtables_gpu.SIGNATURE, cc=(9, 0))[0]
    except Exception as exc:  # no NVVM: the toolchain is a test dependency (pyproject)
        pytest.skip(f"compile_ptx unavailable: {type(exc).__name__}: {exc}")
    assert ".target sm_90" in ptx
    assert "st.global.u32" in ptx or "st.global.b32" in ptx
    assert "ld.local" not in ptx and "st.local" not in ptx
