"""Exact DP in a column window (s2g/window.py) and the traceback restricted to it.

Oracle: tests/naive.py's dict DP over a per-column networkx graph built from the
FlatGraph's columns inside ``[lo, hi)`` (edges: inside a node, and from a predecessor's
last column to a node's first column) — the sub-DAG the window promises to align to
exactly. A window over the whole graph must equal V0 field for field.
"""
from __future__ import annotations

import networkx as nx
import numpy as np
from hypothesis import given
from hypothesis import strategies as st

import naive
import s2g
from s2g.graph import CODE_BASE
from s2g.scoring import NEG_INF, Mode
from s2g.traceback import traceback_batch
from s2g.variants import v0_cpu
from s2g.window import align_windows_ref
from test_v0 import SETTINGS, batch_of, dag_cases, scorings, write_tmp


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
