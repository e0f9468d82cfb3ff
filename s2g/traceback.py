"""Windowed traceback: path + CIGAR from an end cell, without the whole DP matrix.

Any variant reports the optimal score ``S`` and end cell ``(i_end, j_end)``. The
alignment consumes at most ``i_end`` read bases, and each deleted graph base costs at
least ``e``, so it deletes at most ``D = (a*i_end - S) // e`` graph bases and spans at
most ``L = i_end + D`` graph bases. Only columns whose shortest walk to ``j_end``
(counting both ends) has at most ``L`` bases can hold it: that set — the *window*,
found by a backward search in decreasing topological order — and rows
``0..i_end`` are recomputed with :func:`s2g.dp.column_dirs`, storing one direction
byte per cell and, at node-first columns, which predecessor gave the diagonal and
the deletion. Memory: ``window_columns x (i_end + 1)`` bytes (+8 bytes per cell of
node-first columns); for a 150 bp local read on a SNP graph, a few hundred columns.

A column outside the window behaves as the virtual column of :mod:`s2g.dp` (local
and semiglobal) or as unreachable (global), which leaves the end cell's value equal
to ``S`` — checked for every read; a difference is reported as an internal error.
"""
from __future__ import annotations

import heapq
import os
from concurrent.futures import ThreadPoolExecutor

import numba
import numpy as np
from numba import types
from numba.typed import Dict

from ._numba import NJIT
from .dp import E_EXT, F_EXT, GLOBAL, H_DEL, H_DIAG, H_INS, H_START, LOCAL, column_dirs, virtual_column
from .errors import S2GError
from .result import Traceback
from .scoring import NEG_INF

OP_EQ, OP_X, OP_I, OP_D = 0, 1, 2, 3
_OPCH = "=XID"
#: default bound on window cells per read (bytes of direction data); --max-traceback-cells
MAX_CELLS = 1 << 31

ST_OK, ST_TOO_BIG, ST_MISMATCH = 0, 1, 2


@numba.njit(**NJIT)
def _window(v_end, joff, L, node_start, pred_ptr, pred_idx):
    """Window nodes (ascending) with the first and last in-window column offsets."""
    dlast = Dict.empty(key_type=types.int64, value_type=types.int64)
    heap = [-np.int64(v_end)]
    dlast[v_end] = 0
    nodes = []
    ws = []
    we = []
    while len(heap) > 0:
        u = -heapq.heappop(heap)
        ln = node_start[u + 1] - node_start[u]
        if u == v_end:
            last = joff
            dfirst = joff + 1
        else:
            last = ln - 1
            dfirst = dlast[u] + ln - 1
        first = max(0, dfirst - L)  # column k has distance dfirst - k; keep those <= L
        nodes.append(u)
        ws.append(first)
        we.append(last)
        if first == 0:
            cand = dfirst + 1
            if cand <= L:
                for k in range(pred_ptr[u], pred_ptr[u + 1]):
                    p = pred_idx[k]
                    if p in dlast:
                        if cand < dlast[p]:
                            dlast[p] = cand
                    else:
                        dlast[p] = cand
                        heapq.heappush(heap, -np.int64(p))
    n = len(nodes)
    wn = np.empty(n, np.int64)
    wsa = np.empty(n, np.int64)
    wea = np.empty(n, np.int64)
    for k in range(n):
        wn[k] = nodes[n - 1 - k]
        wsa[k] = ws[n - 1 - k]
        wea[k] = we[n - 1 - k]
    return wn, wsa, wea


@numba.njit(**NJIT)
def traceback_read(q, end_i, end_j, score, base, node_start, pred_ptr, pred_idx, slot,
                   n_slots, mode, a, b, o, e, max_cells):
    """Recompute the window with direction bytes and walk back from the end cell.

    Returns (status, start_i, ops reversed, consumed columns reversed, cells).
    """
    rows = end_i
    L = end_i + max(0, a * end_i - score) // e
    v_end = np.searchsorted(node_start, end_j, side="right") - 1
    wn, ws, we = _window(v_end, end_j - node_start[v_end], L, node_start, pred_ptr, pred_idx)
    nw = len(wn)
    woff = np.zeros(nw + 1, np.int64)
    frank = np.full(nw, -1, np.int64)
    nf = 0
    widx = Dict.empty(key_type=types.int64, value_type=types.int64)
    for k in range(nw):
        woff[k + 1] = woff[k] + we[k] - ws[k] + 1
        widx[wn[k]] = k
        if ws[k] == 0 and pred_ptr[wn[k] + 1] > pred_ptr[wn[k]]:
            frank[k] = nf
            nf += 1
    cells = woff[nw] * (rows + 1)
    empty_ops = np.empty(0, np.uint8)
    empty_cols = np.empty(0, np.int64)
    if cells + nf * (rows + 1) * 8 > max_cells:
        return ST_TOO_BIG, 0, empty_ops, empty_cols, cells
    dirs = np.empty((woff[nw], rows + 1), np.uint8)
    dpred = np.empty((max(nf, 1), rows + 1), np.int64)
    epred = np.empty((max(nf, 1), rows + 1), np.int64)
    SH = np.empty((max(n_slots, 1), rows + 1), np.int64)
    SE = np.empty((max(n_slots, 1), rows + 1), np.int64)
    PH = np.empty(rows + 1, np.int64)
    PE = np.empty(rows + 1, np.int64)
    PX = np.zeros(rows + 1, np.bool_)
    VH = np.empty(rows + 1, np.int64)
    VE = np.empty(rows + 1, np.int64)
    virtual_column(VH, VE, rows, mode, o, e)
    H = np.empty((2, rows + 1), np.int64)
    E = np.empty((2, rows + 1), np.int64)
    cur = 0
    for k in range(nw):
        v = wn[k]
        pa, pb = pred_ptr[v], pred_ptr[v + 1]
        s0 = node_start[v]
        for c in range(ws[k], we[k] + 1):
            prev = 1 - cur
            if c > ws[k] or (ws[k] == 0 and pb - pa == 1 and pred_idx[pa] == v - 1
                             and k > 0 and wn[k - 1] == v - 1):
                for i in range(rows + 1):
                    PH[i] = H[prev, i]
                    ho = H[prev, i] - o - e
                    ex = E[prev, i] - e
                    PE[i] = max(ho, ex)
                    PX[i] = ex > ho
                if c == ws[k] and frank[k] >= 0:
                    for i in range(rows + 1):
                        dpred[frank[k], i] = v - 1
                        epred[frank[k], i] = v - 1
            elif c > 0 or pb == pa or mode != GLOBAL:
                # virtual column: a source, a partial node, or (local/semiglobal) the
                # stand-in for predecessors outside the window; real ones below may win
                use_virtual = not (mode == GLOBAL and c > 0)
                for i in range(rows + 1):
                    PH[i] = VH[i] if use_virtual else NEG_INF
                    PE[i] = VE[i] if use_virtual else NEG_INF
                    PX[i] = False
                if c == 0 and frank[k] >= 0:
                    for i in range(rows + 1):
                        dpred[frank[k], i] = -1
                        epred[frank[k], i] = -1
            else:
                for i in range(rows + 1):
                    PH[i] = NEG_INF
                    PE[i] = NEG_INF
                    PX[i] = False
                    dpred[frank[k], i] = -1
                    epred[frank[k], i] = -1
            if c == 0 and pb > pa and not (k > 0 and wn[k - 1] == v - 1 and pb - pa == 1
                                          and pred_idx[pa] == v - 1):
                # merge predecessors inside the window, ascending: lowest index wins ties
                for t in range(pa, pb):
                    p = pred_idx[t]
                    if p not in widx:
                        continue
                    sp = slot[p]
                    r = frank[k]
                    for i in range(rows + 1):
                        hp = SH[sp, i]
                        if hp > PH[i] or (hp == PH[i] and dpred[r, i] == -1):
                            PH[i] = hp
                            dpred[r, i] = p
                        ho = hp - o - e
                        ex = SE[sp, i] - e
                        ce = max(ho, ex)
                        if ce > PE[i] or (ce == PE[i] and epred[r, i] == -1 and ce > NEG_INF):
                            PE[i] = ce
                            PX[i] = ex > ho
                            epred[r, i] = p
            wc = woff[k] + c - ws[k]
            column_dirs(q, rows, base[s0 + c], PH, PE, H[cur], E[cur], mode, a, b, o, e,
                        dirs[wc], PX)
            cur = 1 - cur
        if slot[v] >= 0:
            last = 1 - cur
            for i in range(rows + 1):
                SH[slot[v], i] = H[last, i]
                SE[slot[v], i] = E[last, i]
    if H[1 - cur, rows] != score:
        return ST_MISMATCH, 0, empty_ops, empty_cols, cells
    # ---- walk back
    ops = np.empty(rows + L + 2, np.uint8)
    cols = np.empty(L + 1, np.int64)
    no = 0
    nc = 0
    k = nw - 1
    c = we[k]
    i = rows
    state = 0  # 0 H, 1 E, 2 F
    while True:
        v = wn[k]
        wc = woff[k] + c - ws[k]
        d = dirs[wc, i]
        if state == 0:
            if i == 0 and mode != GLOBAL:
                break
            src = d & 3
            if src == H_START:
                break
            if src == H_DEL:
                state = 1
                continue
            if src == H_INS:
                state = 2
                continue
            j = node_start[v] + c
            ops[no] = OP_EQ if (q[i - 1] == base[j] and q[i - 1] < 4) else OP_X
            no += 1
            cols[nc] = j
            nc += 1
            i -= 1
            if c > ws[k]:
                c -= 1
                continue
            p = dpred[frank[k], i] if (c == 0 and frank[k] >= 0) else -1
        elif state == 1:
            ops[no] = OP_D
            no += 1
            cols[nc] = node_start[v] + c
            nc += 1
            state = 1 if (d & E_EXT) else 0
            if c > ws[k]:
                c -= 1
                continue
            p = epred[frank[k], i] if (c == 0 and frank[k] >= 0) else -1
        else:
            ops[no] = OP_I
            no += 1
            state = 2 if (d & F_EXT) else 0
            i -= 1
            continue
        if p < 0:
            # into the virtual column: local starts here; otherwise the rest of the
            # read is inserted before the graph walk
            if mode != LOCAL:
                for _ in range(i):
                    ops[no] = OP_I
                    no += 1
                i = 0
            break
        k = widx[p]
        c = we[k]
    return ST_OK, i, ops[:no], cols[:nc], cells


def _to_traceback(graph, q, end_i, end_j, start_i, ops_rev, cols_rev) -> Traceback:
    ops = ops_rev[::-1]
    cols = cols_rev[::-1]
    if len(cols):
        nodes_of = np.searchsorted(graph.node_start, cols, side="right") - 1
        keep = np.ones(len(nodes_of), bool)
        keep[1:] = nodes_of[1:] != nodes_of[:-1]
        path = nodes_of[keep]
        first_col, last_col = int(cols[0]), int(cols[-1])
    else:  # only insertions: an empty interval at the end column
        path = np.array([graph.node_of_column(end_j)])
        first_col, last_col = end_j + 1, end_j
    lens = np.diff(graph.node_start)[path]
    path_len = int(lens.sum())
    path_start = first_col - int(graph.node_start[path[0]])
    path_end = path_len - lens[-1] + (last_col - int(graph.node_start[path[-1]])) + 1
    # CIGAR runs
    parts = []
    if len(ops):
        change = np.nonzero(np.diff(ops))[0] + 1
        starts = np.concatenate([[0], change])
        ends = np.concatenate([change, [len(ops)]])
        parts = [f"{e - s}{_OPCH[ops[s]]}" for s, e in zip(starts, ends)]
    counts = np.bincount(ops, minlength=4) if len(ops) else np.zeros(4, np.int64)
    return Traceback(qstart=int(start_i), qend=int(end_i), path=tuple(int(v) for v in path),
                     path_len=path_len, path_start=int(path_start), path_end=int(path_end),
                     cigar="".join(parts), matches=int(counts[OP_EQ]), block_len=int(len(ops)),
                     edits=int(counts[OP_X] + counts[OP_I] + counts[OP_D]))


def traceback_one(graph, q, score, end_i, end_j, scoring, mode, max_cells=MAX_CELLS, name="read"):
    a, b, o, e = scoring.as_tuple()
    st, start_i, ops, cols, cells = traceback_read(
        q, end_i, end_j, score, graph.base, graph.node_start, graph.pred_ptr, graph.pred_idx,
        graph.slot, graph.n_slots, int(mode), a, b, o, e, max_cells)
    if st == ST_TOO_BIG:
        raise S2GError(f"read {name!r}: traceback window of {cells} cells exceeds the limit of "
                       f"{max_cells} (--max-traceback-cells); raise it or use --no-traceback")
    if st == ST_MISMATCH:
        raise S2GError(f"internal error: windowed traceback of read {name!r} does not reproduce "
                       f"score {score} at ({end_i}, {end_j}); please report this")
    return _to_traceback(graph, q, end_i, end_j, start_i, ops, cols)


def traceback_batch(graph, reads, scoring, mode, res, max_cells=MAX_CELLS, threads=None):
    """Fill ``res.tracebacks`` for every aligned read (threads share the nogil kernel)."""
    ok = res.aligned()
    out = [None] * len(res)

    def work(r):
        out[r] = traceback_one(graph, reads.codes(r), int(res.score[r]), int(res.end_i[r]),
                               int(res.end_j[r]), scoring, mode, max_cells, reads.names[r])

    idx = np.nonzero(ok)[0].tolist()
    threads = threads or min(len(idx), os.cpu_count() or 1)
    if threads <= 1 or len(idx) < 4:
        for r in idx:
            work(r)
    else:
        with ThreadPoolExecutor(threads) as ex:
            list(ex.map(work, idx, chunksize=max(1, len(idx) // (threads * 8))))
    res.tracebacks = out
    return res
