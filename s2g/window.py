"""Exact DP in a column window: the recurrence of :mod:`s2g.dp` on a sub-DAG of the graph.

Seeded alignment (:mod:`s2g.seeded`) turns each candidate locus of a read into a *window*:
a range ``[lo, hi)`` of graph columns (topological order). Inside it the recurrence is
V0's, exactly; a column whose predecessors all lie outside the window (a predecessor
node whose last column is below ``lo``, or column ``lo`` itself in the middle of a
node) reads the *virtual column* (``s2g.dp.virtual_column``), and a node-first column
with predecessors on both sides merges only those inside. In local and semiglobal mode
the virtual column never beats a real predecessor (local cells are >= 0; semiglobal
cells are >= the virtual column's ``-(o + e*i)``), so this is the exact optimum over
every alignment whose graph walk lies inside the window: the promise seeded alignment
makes ("the exact optimum of the region it names"). The CPU traceback
(:mod:`s2g.traceback`, ``lo`` argument) restricts its own window the same way, so it
re-derives this score.

End cell ties as V0: the smallest column, then the smallest row. Global mode has no
meaning inside a window (it needs a source-to-sink walk) and is refused.

:func:`align_windows_ref` is the scalar reference (int64, one task per thread); the
SIMD kernel (``s2g.variants.simd.align_windows``) must return the same arrays.
"""
from __future__ import annotations

import numba
import numpy as np

from ._numba import NJIT
from .dp import LOCAL, SEMIGLOBAL, column, virtual_column
from .errors import S2GError
from .scoring import NEG_INF


@numba.njit(**NJIT)
def window_slots(lo, hi, node_start, pred_ptr, pred_idx):
    """Window-local node_bound slots: (v0, slot per window node or -1, slots needed).

    Node ``v0 + x`` needs a slot when a later window node reads its last column through a
    merge (not as the previous column); the slot is free again once its last reader has
    read it, as in the graph's own liveness slots (``s2g.graph._liveness_slots``).
    """
    v0 = np.searchsorted(node_start, lo, side="right") - 1
    v1 = np.searchsorted(node_start, hi - 1, side="right") - 1
    nn = v1 - v0 + 1
    last_use = np.full(nn, -1, np.int64)
    for x in range(nn):
        v = v0 + x
        pa, pb = pred_ptr[v], pred_ptr[v + 1]
        if node_start[v] < lo or (pb - pa == 1 and pred_idx[pa] == v - 1 and node_start[v] > lo):
            continue
        for k in range(pa, pb):
            p = pred_idx[k]
            if v0 <= p < v and node_start[p + 1] - 1 >= lo:
                last_use[p - v0] = x
    slot = np.full(nn, -1, np.int64)
    free = np.empty(nn + 1, np.int64)
    n_free = 0
    n_slots = 0
    for x in range(nn):
        # readers read before the node stores: release the slots whose last reader is x
        v = v0 + x
        for k in range(pred_ptr[v], pred_ptr[v + 1]):
            p = pred_idx[k]
            if v0 <= p < v and last_use[p - v0] == x and slot[p - v0] >= 0:
                free[n_free] = slot[p - v0]
                n_free += 1
                last_use[p - v0] = -2          # released once, even with repeated preds
        if last_use[x] >= 0:
            if n_free > 0:
                n_free -= 1
                slot[x] = free[n_free]
            else:
                slot[x] = n_slots
                n_slots += 1
    return v0, slot, n_slots


@numba.njit(**NJIT)
def align_window(q, lo, hi, base, node_start, pred_ptr, pred_idx, mode, a, b, o, e):
    """Best (score, i, j) of read ``q`` inside columns ``[lo, hi)``; (NEG_INF, -1, -1) if
    none. Memory: (window slots + 4) x (m + 1) int64 x 2."""
    m = len(q)
    v0, wslot, n_slots = window_slots(lo, hi, node_start, pred_ptr, pred_idx)
    SH = np.empty((max(n_slots, 1), m + 1), np.int64)
    SE = np.empty((max(n_slots, 1), m + 1), np.int64)
    PH = np.empty(m + 1, np.int64)
    PE = np.empty(m + 1, np.int64)
    H = np.empty((2, m + 1), np.int64)
    E = np.empty((2, m + 1), np.int64)
    best, bi, bj = NEG_INF, -1, -1
    cur = 0
    v1 = v0 + len(wslot) - 1
    for v in range(v0, v1 + 1):
        pa, pb = pred_ptr[v], pred_ptr[v + 1]
        s0 = max(node_start[v], lo)
        s1 = min(node_start[v + 1], hi)
        for j in range(s0, s1):
            prev = 1 - cur
            if j > s0 or (j > lo and pb - pa == 1 and pred_idx[pa] == v - 1):
                for i in range(m + 1):       # previous column (same node, or simple node)
                    PH[i] = H[prev, i]
                    PE[i] = max(H[prev, i] - o - e, E[prev, i] - e)
            else:
                virtual_column(PH, PE, m, mode, o, e)
                if j == node_start[v]:
                    for k in range(pa, pb):
                        p = pred_idx[k]
                        if p < v0 or node_start[p + 1] - 1 < lo:
                            continue         # outside the window: the virtual column
                        s = wslot[p - v0]
                        for i in range(m + 1):
                            PH[i] = max(PH[i], SH[s, i])
                            PE[i] = max(PE[i], max(SH[s, i] - o - e, SE[s, i] - e))
            column(q, m, base[j], PH, PE, H[cur], E[cur], mode, a, b, o, e)
            if mode == LOCAL:
                for i in range(1, m + 1):
                    if H[cur, i] > best:
                        best, bi, bj = H[cur, i], i, j
            elif H[cur, m] > best:
                best, bi, bj = H[cur, m], m, j
            cur = 1 - cur
        s = wslot[v - v0]
        if s >= 0:
            last = 1 - cur
            for i in range(m + 1):
                SH[s, i] = H[last, i]
                SE[s, i] = E[last, i]
    if mode == LOCAL and best <= 0:
        return NEG_INF, -1, -1
    return best, bi, bj


@numba.njit(parallel=True, **NJIT)
def _align_windows(codes, offs, task_read, task_lo, task_hi, base, node_start, pred_ptr,
                   pred_idx, mode, a, b, o, e):
    n = len(task_read)
    score = np.full(n, NEG_INF, np.int64)
    end_i = np.full(n, -1, np.int64)
    end_j = np.full(n, -1, np.int64)
    for t in numba.prange(n):
        r = task_read[t]
        q = codes[offs[r]:offs[r + 1]]
        lo, hi = task_lo[t], task_hi[t]
        if len(q) == 0 or hi <= lo:
            continue
        score[t], end_i[t], end_j[t] = align_window(q, lo, hi, base, node_start, pred_ptr,
                                                    pred_idx, mode, a, b, o, e)
    return score, end_i, end_j


def check_mode(mode):
    if int(mode) not in (LOCAL, SEMIGLOBAL):
        raise S2GError("seeded alignment runs in local or semiglobal mode (a window holds no "
                       "source-to-sink walk); use --exact for global mode")


def align_windows_ref(graph, codes_flat, offsets, task_read, task_lo, task_hi, scoring, mode):
    """Score and end cell of every task (read ``task_read[t]`` in columns
    ``[task_lo[t], task_hi[t])``): int64 arrays (score, end_i, end_j), NEG_INF/-1/-1 where
    the window holds no alignment (see the module doc for the semantics)."""
    check_mode(mode)
    a, b, o, e = scoring.as_tuple()
    return _align_windows(np.asarray(codes_flat, np.uint8), np.asarray(offsets, np.int64),
                          np.asarray(task_read, np.int64), np.asarray(task_lo, np.int64),
                          np.asarray(task_hi, np.int64), graph.base, graph.node_start,
                          graph.pred_ptr, graph.pred_idx, int(mode), a, b, o, e)
