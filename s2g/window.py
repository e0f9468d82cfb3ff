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

from functools import partial

import numba
import numpy as np

from ._numba import NJIT
from .config import settings
from .dp import LOCAL, SEMIGLOBAL, column, virtual_column
from .errors import S2GError
from .graph_core import FlatGraph
from .scoring import NEG_INF


@numba.njit(**NJIT)
def window_slots(lo, hi, node_start, pred_ptr, pred_idx):
    """Window-local node_bound slots: (v0, slot per window node or -1, slots needed).

    Node ``v0 + x`` needs a slot when a later window node reads its last column through a
    merge (not as the previous column); the slot is free again once its last reader has
    read it, as in the graph's own liveness slots (``s2g.graph_core._liveness_slots``).
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


# ------------------------------------------------------------------ node-set windows
#
# A seeded window is a *set of node pieces*: node v from in-node offset lo to hi (the
# columns a read's walk can reach from its chain, s2g.seeded), not a column range: a
# range would hold every column the topological order puts between a bubble's branches
# (tens of thousands on graphs with structural variants), a piece set only what a walk
# of the read's length reaches. The *window graph* of a batch lays every window's pieces
# side by side as a FlatGraph of its own (one node per piece, an edge p -> v where the
# graph has one, p's piece ends at p's last base and v's starts at v's first; windows
# share nothing), so that each window is the column range [t_lo, t_hi) of that graph and
# every range-window kernel (window DP, SIMD, GPU, tracebacks) runs on it unchanged. Its
# DP in a window is exactly the DP over the walks inside the window's pieces (a piece
# entered mid-node, or without an in-window predecessor, starts from the virtual
# column, as a range window's first column does); columns keep their graph order inside
# a window, so V0's tie rules pick the same cells. Results are mapped back to graph
# columns and nodes (:class:`WindowGraph`).


@numba.njit(**NJIT)
def _wg_edges(t, piece_at, p_node, p_lo, p_hi, node_start, pred_ptr, pred_idx, fill, cnt, ptr,
              out):
    """Window-graph predecessors of task ``t``'s pieces: count them (``fill`` False, into
    ``cnt``) or write them at ``ptr`` into ``out``."""
    a, b = piece_at[t], piece_at[t + 1]
    for k in range(a, b):
        v = p_node[k]
        c = 0
        if p_lo[k] == 0:
            for x in range(pred_ptr[v], pred_ptr[v + 1]):
                u = pred_idx[x]
                y = a + np.searchsorted(p_node[a:k], u, side="right") - 1   # u's last piece
                if y >= a and p_node[y] == u and p_hi[y] == node_start[u + 1] - node_start[u] - 1:
                    if fill:
                        out[ptr[k] + c] = y
                    c += 1
        if not fill:
            cnt[k] = c


@numba.njit(parallel=True, **NJIT)
def wg_count(piece_at, p_node, p_lo, p_hi, node_start, pred_ptr, pred_idx, cnt):
    for t in numba.prange(len(piece_at) - 1):
        _wg_edges(t, piece_at, p_node, p_lo, p_hi, node_start, pred_ptr, pred_idx, False, cnt,
                  cnt, cnt)


@numba.njit(parallel=True, **NJIT)
def _wg_fill(piece_at, p_node, p_lo, p_hi, node_start, pred_ptr, pred_idx, ptr, out):
    for t in numba.prange(len(piece_at) - 1):
        _wg_edges(t, piece_at, p_node, p_lo, p_hi, node_start, pred_ptr, pred_idx, True, ptr,
                  ptr, out)


@numba.njit(parallel=True, **NJIT)
def _wg_layout(piece_at, p_node, p_lo, p_hi, g_seg, g_rev, ws, node_seg, node_rev):
    """Window-graph node starts ``ws`` (int64, pieces laid end to end) and each piece's
    segment and strand, window by window in parallel."""
    n_t = len(piece_at) - 1
    tot = np.zeros(n_t + 1, np.int64)
    for t in numba.prange(n_t):
        c = np.int64(0)
        for k in range(piece_at[t], piece_at[t + 1]):
            c += p_hi[k] - p_lo[k] + 1
        tot[t + 1] = c
    for t in range(n_t):
        tot[t + 1] += tot[t]
    for t in numba.prange(n_t):
        c = tot[t]
        for k in range(piece_at[t], piece_at[t + 1]):
            ws[k] = c
            node_seg[k] = g_seg[p_node[k]]
            node_rev[k] = g_rev[p_node[k]]
            c += p_hi[k] - p_lo[k] + 1
    ws[len(ws) - 1] = tot[n_t]


@numba.njit(parallel=True, **NJIT)
def _wg_ends(piece_at, ptr, pred_idx, ws, pred_ptr, node_start, is_sink):
    """int32 copies of ``ptr`` and ``ws`` and the sinks (no window node reads them), window
    by window in parallel (a window's edges stay inside it)."""
    n = len(ws) - 1
    for t in numba.prange(len(piece_at) - 1):
        for v in range(piece_at[t], piece_at[t + 1]):
            pred_ptr[v] = ptr[v]
            node_start[v] = ws[v]
            is_sink[v] = 1
        for v in range(piece_at[t], piece_at[t + 1]):
            for k in range(ptr[v], ptr[v + 1]):
                is_sink[pred_idx[k]] = 0
    pred_ptr[n] = ptr[n]
    node_start[n] = ws[n]


@numba.njit(parallel=True, **NJIT)
def _wg_bases(p_node, p_lo, ws, node_start, base, out):
    for k in numba.prange(len(p_node)):
        s = node_start[p_node[k]] + p_lo[k]
        for x in range(ws[k + 1] - ws[k]):
            out[ws[k] + x] = base[s + x]


@numba.njit(parallel=True, **NJIT)
def _wg_columns(j, ws, p_node, p_lo, node_start):
    """Graph columns of window-graph columns ``j`` (-1 stays -1), in parallel."""
    out = np.empty(len(j), np.int64)
    for x in numba.prange(len(j)):
        if j[x] < 0:
            out[x] = -1
            continue
        k = np.searchsorted(ws, j[x], side="right") - 1
        out[x] = node_start[p_node[k]] + p_lo[k] + (j[x] - ws[k])
    return out


@numba.njit(parallel=True, **NJIT)
def wg_paths(has, path_at, n_path, path, geo, p_node, p_lo, node_start):
    """Tracebacks on the window graph -> on the graph, in place: path steps become graph
    nodes, path offsets move by the first piece's in-node start, path lengths count
    whole nodes (reads in parallel: each read's path entries are its own)."""
    for r in numba.prange(len(has)):
        if not has[r] or n_path[r] == 0:
            continue
        a = path_at[r]
        shift = p_lo[path[a]]
        tot = 0
        for x in range(a, a + n_path[r]):
            v = p_node[path[x]]
            path[x] = v
            tot += node_start[v + 1] - node_start[v]
        geo[r, 0] = tot
        geo[r, 1] += shift
        geo[r, 2] += shift



@numba.njit(parallel=True, **NJIT)
def window_liveness(piece_at, pred_ptr, pred_idx, keep_prev=False):
    """:func:`s2g.graph_core._liveness_slots` of a window graph whose window ``w`` owns
    nodes ``piece_at[w]:piece_at[w + 1]`` and no edge leaves a window, window by window in
    parallel: every slot is free again where a window starts (its nodes' last readers lie
    inside it), so the graph-wide rule (smallest free slot first) restarts there and
    gives the same slots. Returns (slot, n_slots)."""
    n = len(pred_ptr) - 1
    n_t = len(piece_at) - 1
    slot = np.full(n, -1, np.int32)
    most = np.zeros(max(n_t, 1), np.int64)
    for t in numba.prange(n_t):
        a, b = piece_at[t], piece_at[t + 1]
        nn = b - a
        last = np.full(nn, -1, np.int64)
        for v in range(a, b):
            pa, pb = pred_ptr[v], pred_ptr[v + 1]
            if pb - pa == 1 and pred_idx[pa] == v - 1:
                continue
            for k in range(pa, pb):
                u = pred_idx[k]
                if keep_prev and u == v - 1:
                    continue
                if v > last[u - a]:
                    last[u - a] = v
        held = np.empty(nn + 1, np.int64)      # the last reader of each slot's holder
        k_sl = 0
        for x in range(nn):
            if last[x] < 0:
                continue
            s = 0
            while s < k_sl and held[s] >= a + x:   # smallest slot whose holder is done
                s += 1
            if s == k_sl:
                k_sl += 1
            held[s] = last[x]
            slot[a + x] = s
        most[t] = k_sl
    return slot, most.max()


def _gather_bases(p_node, p_lo, ws, node_start, base):
    out = np.empty(int(ws[-1]), np.uint8)
    _wg_bases(p_node, p_lo, ws, node_start, base, out)
    return out


class WindowFlatGraph(FlatGraph):
    """A window graph's :class:`FlatGraph` whose ``base`` is gathered from its parent's, and
    whose node_bound ``slot``/``n_slots`` are made, at first use (knob
    ``lazy_window_bases``). On the GPU path the device takes the window columns' bases from
    the parent's (``parent_cols``, :mod:`s2g.variants.fast.wtables_gpu`), the q-gram bounds
    read them there (:func:`s2g.seeded.windows.dropped_by_bound`) and the tables make their
    own slots, so a batch's gather (~22 MB a 50,000 MHC reads) and liveness pass (two
    parallel regions) are never made; CPU kernels and tracebacks ask and get them. Two
    threads asking at once may both make them: the same arrays."""

    def __init__(self, gather, liveness, **kw):
        self._gather = gather
        self._base = None
        self._liveness = liveness
        self._slots = None
        super().__init__(**kw)

    @property
    def base(self):
        if self._base is None:
            self._base = self._gather()
        return self._base

    @base.setter
    def base(self, value):
        if value is not None:
            self._base = value

    def _slot_pair(self):
        if self._slots is None:
            slot, most = self._liveness()
            self._slots = (slot, int(most))
        return self._slots

    # the CPU kernels' node_bound slots, likewise made at first use (the GPU's tables
    # make their own, keep_prev: s2g.variants.fast.tables.window_node_parts)
    @property
    def slot(self):
        return self._slot_pair()[0]

    @slot.setter
    def slot(self, value):
        if value is not None:           # (n_slots: its count unless set after)
            value = np.asarray(value)
            self._slots = (value, int(value.max()) + 1 if len(value) else 0)

    @property
    def n_slots(self):
        return self._slot_pair()[1]

    @n_slots.setter
    def n_slots(self, value):
        if value is not None:
            self._slots = (self.slot, int(value))


class WindowGraph:
    """The window graph of a batch's node-set windows (see above).

    ``piece_at`` (tasks + 1): task ``t`` owns pieces ``piece_at[t]:piece_at[t+1]``, each
    node ``p_node`` from in-node offset ``p_lo`` to ``p_hi`` (inclusive), by (node, p_lo);
    a node may have several disjoint pieces (the last one is the one that can end at its
    last base, the first the one that can start at its first).
    ``graph``: the window graph (a FlatGraph; its nodes keep their segment and strand),
    ``t_lo``/``t_hi``: each task's column range in it.
    """

    def __init__(self, graph, piece_at, p_node, p_lo, p_hi):
        self.parent = graph
        self.piece_at = np.asarray(piece_at, np.int64)
        self.p_node = np.asarray(p_node, np.int32)
        self.p_lo = np.asarray(p_lo, np.int32)
        self.p_hi = np.asarray(p_hi, np.int32)
        n = len(self.p_node)
        # node layout, window by window in parallel (numpy's passes over the pieces were
        # a third of the seeding of DRB1's 4.4 bp nodes: 0.34 s a 50k-read batch, 2 threads)
        ws = np.empty(n + 1, np.int64)
        node_seg = np.empty(n, np.asarray(graph.node_seg).dtype)
        node_rev = np.empty(n, np.asarray(graph.node_rev).dtype)
        _wg_layout(self.piece_at, self.p_node, self.p_lo, self.p_hi, graph.node_seg,
                   graph.node_rev, ws, node_seg, node_rev)
        self.ws = ws
        if ws[-1] >= 2 ** 31:
            raise S2GError("a batch's windows exceed 2^31 columns; use a smaller --batch-size")
        gather = partial(_gather_bases, self.p_node, self.p_lo, ws, graph.node_start,
                         graph.base)
        lazy = settings().lazy_window_bases
        cnt = np.zeros(n, np.int64)
        args = (self.piece_at, self.p_node, self.p_lo, self.p_hi, graph.node_start,
                graph.pred_ptr, graph.pred_idx)
        wg_count(*args, cnt)
        ptr = np.zeros(n + 1, np.int64)
        np.cumsum(cnt, out=ptr[1:])
        pred_idx = np.empty(int(ptr[-1]), np.int32)
        _wg_fill(*args, ptr, pred_idx)
        pred_ptr = np.empty(n + 1, np.int32)
        node_start = np.empty(n + 1, np.int32)
        is_sink = np.empty(n, np.uint8)
        _wg_ends(self.piece_at, ptr, pred_idx, ws, pred_ptr, node_start, is_sink)
        liveness = partial(window_liveness, self.piece_at, pred_ptr, pred_idx)
        if lazy:        # bases and slots made when asked for (the GPU path never asks)
            make = partial(WindowFlatGraph, gather, liveness)
            base, slot, n_slots = None, None, None
        else:
            make = FlatGraph
            base, (slot, n_slots) = gather(), liveness()
            n_slots = int(n_slots)
        self.graph = make(
            base=base, node_start=node_start, pred_ptr=pred_ptr, pred_idx=pred_idx,
            slot=slot, n_slots=n_slots, node_seg=node_seg, node_rev=node_rev,
            is_sink=is_sink, seg_names=graph.seg_names, seg_len=graph.seg_len,
            strands=graph.strands, source=f"{graph.source} (seeded windows)")
        # where each node's bases come from: the GPU gathers them from the parent's
        # (s2g.variants.fast.wtables_gpu) instead of receiving the window graph's
        # (the pieces' starts gathered, then widened: widening node_start first cost an
        # O(graph) copy a batch, 0.1 s on a 1 Gbp graph)
        self.graph.parent_cols = (graph.base, np.asarray(graph.node_start)[self.p_node]
                                  .astype(np.int64) + self.p_lo)
        self.t_lo = ws[self.piece_at[:-1]]
        self.t_hi = ws[self.piece_at[1:]]

    @property
    def n_tasks(self) -> int:
        return len(self.piece_at) - 1

    def columns(self, j):
        """Graph columns of window-graph columns ``j`` (-1 stays -1)."""
        return _wg_columns(np.asarray(j, np.int64), self.ws, self.p_node, self.p_lo,
                           self.parent.node_start)

    def map_tracebacks(self, flat):
        """A finished FlatTracebacks of window-graph walks, moved onto the graph in place."""
        wg_paths(flat.has, flat.path_at, flat.n_path, flat.path, flat.geo, self.p_node,
                 self.p_lo, self.parent.node_start)
        return flat
