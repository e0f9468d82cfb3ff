"""Windowed traceback of one read: path + CIGAR from an end cell, without the whole DP
matrix (the reference kernel, int64, one read per thread).

Any variant reports the optimal score ``S`` and end cell ``(i_end, j_end)``. The
alignment consumes at most ``i_end`` read bases, and each deleted graph base costs at
least ``e``, so it deletes at most ``D = (a*i_end - S) // e`` graph bases and spans at
most ``L = i_end + D`` graph bases. Only columns whose shortest walk to ``j_end``
(counting both ends) has at most ``L`` bases can hold it: that set — the *window*,
found by a backward search in decreasing topological order — and rows
``0..i_end`` are recomputed, storing one direction byte per cell and, at node-first
columns, which predecessor gave the diagonal and the deletion. Memory:
``window_columns x (i_end + 1)`` bytes (+16 bytes per cell of node-first columns); for
a 150 bp local read on a SNP graph, a few hundred columns. When that exceeds
``--max-traceback-cells`` (long reads), a first pass keeps only every ``Bh``-th row
(H, E, F) and the walk recomputes one band of ``Bh`` rows at a time from its
checkpoint: ``Bh ~ sqrt(24 x i_end)`` gives memory ``~2 x window_columns x
sqrt(24 x i_end)`` bytes for about twice the work (50 kbp: ~2 kB per window column).

A column outside the window behaves as the virtual column of :mod:`s2g.dp` (local
and semiglobal) or as unreachable (global), which leaves the end cell's value equal
to ``S`` — checked for every read; a difference is reported as an internal error.

:func:`traceback_read` is the reference of the faster lane kernels
(:mod:`s2g.trace.lanes`, :mod:`s2g.trace.bands`): same recurrences, tie order and
choices, so every output is identical (tests/test_traceback.py).

Tuples (Numba passes them; the callee unpacks them at its top): a graph
``(base, node_start, pred_ptr, pred_idx, slot, n_slots)``, a scoring ``(a, b, o, e)``.
"""
from __future__ import annotations

import numba
import numpy as np
from numba import types
from numba.typed import Dict

from .._numba import NJIT
from ..dp import E_EXT, F_EXT, GLOBAL, H_DEL, H_INS, H_START, LOCAL
from ..errors import S2GError
from ..result import Traceback
from ..scoring import NEG_INF
from .common import (OP_D, OP_EQ, OP_I, OP_X, OPCH, ST_MISMATCH, ST_OK, ST_TOO_BIG, summarize,
                     tb_cell, window)

#: default bound on window cells per read (bytes of direction data); --max-traceback-cells
MAX_CELLS = 1 << 31


@numba.njit(**NJIT)
def _band_column(q, lo, hi, gb, pred, H, E, mode, sc, rec, drow, ckp, wc):
    """Rows ``lo..hi`` of one window column (index ``t = i - lo``) from the predecessor
    vectors ``pred = (PH, PE, PX)`` over the same rows (see :mod:`s2g.dp`).

    Row ``lo`` is the mode's row 0 when ``lo == 0``, else the checkpoint row ``lo``.
    ``rec``: write the direction byte of every cell into ``drow``. ``ckp = (ck, Bh, ckH,
    ckE, ckF)``; ``ck``: save H, E and F of the rows that are multiples of ``Bh`` into the
    checkpoints. Cells and tie order: :func:`tb_cell`. ``PX[t]``: ``PE[t]`` extended an E.
    """
    PH, PE, PX = pred
    a, b, o, e = sc
    ck, Bh, ckH, ckE, ckF = ckp
    if lo == 0:
        if mode == GLOBAL:
            H[0] = PE[0]
            E[0] = PE[0]
            if rec:
                drow[0] = H_DEL | (E_EXT if PX[0] else 0)
        else:
            H[0] = 0
            E[0] = NEG_INF
            if rec:
                drow[0] = H_START
        f = NEG_INF
    else:
        m = lo // Bh
        H[0] = ckH[m, wc]
        E[0] = ckE[m, wc]
        f = ckF[m, wc]
    hup = H[0]
    for t in range(1, hi - lo + 1):
        i = lo + t
        ev = PE[t]
        h, f, d = tb_cell(PH[t - 1], ev, hup, f, q[i - 1], gb, mode, a, b, o, e)
        if rec:
            drow[t] = d | (E_EXT if PX[t] else 0)
        H[t] = h
        E[t] = ev
        hup = h
        if ck and i % Bh == 0:
            m = i // Bh
            ckH[m, wc] = h
            ckE[m, wc] = ev
            ckF[m, wc] = f


@numba.njit(**NJIT)
def _sweep(q, lo, hi, win, graph, mode, sc, rec, rc, ckp):
    """One pass over the window columns for rows ``lo..hi``; returns H at (hi, last column).

    A column outside the window (a predecessor not in it, or the part of a node before
    its window start) acts as the virtual column (local, semiglobal) or as unreachable
    (global, except at a true source). With ``rec``, ``dpred``/``epred`` record which
    predecessor gave the diagonal and the deletion at node-first columns (-1: virtual).
    ``win = (wn, ws, we, woff, frank, widx)`` (:func:`traceback_read`); ``rc = (dirs,
    dpred, epred)``; ``ckp``: the checkpoints (:func:`_band_column`).
    """
    wn, ws, we, woff, frank, widx = win
    base, node_start, pred_ptr, pred_idx, slot, n_slots = graph
    a, b, o, e = sc
    dirs, dpred, epred = rc
    R = hi - lo
    S = max(n_slots, 1)
    SH = np.empty((S, R + 1), np.int64)
    SE = np.empty((S, R + 1), np.int64)
    PH = np.empty(R + 1, np.int64)
    PE = np.empty(R + 1, np.int64)
    PX = np.zeros(R + 1, np.bool_)
    VH = np.empty(R + 1, np.int64)
    VE = np.empty(R + 1, np.int64)
    for t in range(R + 1):
        i = lo + t
        VH[t] = 0 if (mode == LOCAL or i == 0) else -(o + e * i)
        VE[t] = VH[t] - o - e
    H = np.empty((2, R + 1), np.int64)
    E = np.empty((2, R + 1), np.int64)
    cur = 0
    for k in range(len(wn)):
        v = wn[k]
        pa, pb = pred_ptr[v], pred_ptr[v + 1]
        s0 = node_start[v]
        r = frank[k]
        prev_in_window = k > 0 and wn[k - 1] == v - 1
        simple = pb - pa == 1 and pred_idx[pa] == v - 1
        for c in range(ws[k], we[k] + 1):
            prev = 1 - cur
            if c > ws[k] or (c == 0 and simple and prev_in_window):
                for t in range(R + 1):
                    PH[t] = H[prev, t]
                    ho = H[prev, t] - o - e
                    ex = E[prev, t] - e
                    PE[t] = max(ho, ex)
                    PX[t] = ex > ho
                if c == ws[k] and rec and r >= 0:
                    for t in range(R + 1):
                        dpred[r, t] = v - 1
                        epred[r, t] = v - 1
            else:
                # a source, a partial node, or the stand-in for predecessors outside the
                # window; predecessors inside it are merged below and may win
                use_virtual = not (mode == GLOBAL and (c > 0 or pb > pa))
                for t in range(R + 1):
                    PH[t] = VH[t] if use_virtual else NEG_INF
                    PE[t] = VE[t] if use_virtual else NEG_INF
                    PX[t] = False
                if rec and c == 0 and r >= 0:
                    for t in range(R + 1):
                        dpred[r, t] = -1
                        epred[r, t] = -1
                if c == 0 and pb > pa:
                    # merge predecessors inside the window, ascending: lowest index wins
                    # ties, and a real predecessor wins a tie with the virtual column
                    for u in range(pa, pb):
                        p = pred_idx[u]
                        if p not in widx:
                            continue
                        sp = slot[p]
                        for t in range(R + 1):
                            hp = SH[sp, t]
                            ho = hp - o - e
                            ex = SE[sp, t] - e
                            ce = max(ho, ex)
                            if rec:
                                if hp > PH[t] or (hp == PH[t] and dpred[r, t] == -1):
                                    PH[t] = hp
                                    dpred[r, t] = p
                                if ce > PE[t] or (ce == PE[t] and epred[r, t] == -1 and ce > NEG_INF):
                                    PE[t] = ce
                                    PX[t] = ex > ho
                                    epred[r, t] = p
                            else:
                                PH[t] = max(PH[t], hp)
                                PE[t] = max(PE[t], ce)
            wc = woff[k] + c - ws[k]
            _band_column(q, lo, hi, base[s0 + c], (PH, PE, PX), H[cur], E[cur], mode, sc, rec,
                         dirs[wc] if rec else dirs[0], ckp, wc)
            cur = 1 - cur
        if slot[v] >= 0:
            last = 1 - cur
            for t in range(R + 1):
                SH[slot[v], t] = H[last, t]
                SE[slot[v], t] = E[last, t]
    return H[1 - cur, R]


@numba.njit(**NJIT)
def row_band(W, nf, rows, max_cells):
    """:func:`traceback_read`'s band height for a window of ``W`` columns (``nf``
    node-first ones with predecessors) and ``rows`` rows under ``max_cells`` bytes:
    ``rows`` (one pass) when ``(W + 16 nf) x (rows + 1)`` fits, else the height that
    minimises ``per_row x Bh + 24 W x rows / Bh`` (row checkpoints); -1 when that does
    not fit either (ST_TOO_BIG)."""
    per_row = W + 16 * nf                  # direction bytes + two pred choices per row
    if per_row * (rows + 1) <= max_cells:
        return rows
    if rows < 2:
        return -1
    Bh = min(rows - 1, max(1, int(np.sqrt(24.0 * W * rows / per_row))))
    if per_row * (Bh + 1) + 24 * W * (rows // Bh + 1) > max_cells:
        return -1
    return Bh


@numba.njit(**NJIT)
def traceback_read(q, end_i, end_j, score, graph, mode, sc, max_cells, band=0, lo=0):
    """Recompute the window with direction bytes and walk back from the end cell.

    Memory: when ``window_columns x (i_end + 1)`` direction bytes (plus 16 bytes per
    cell of node-first columns) fit in ``max_cells``, one pass stores them all. Otherwise
    a first pass saves H, E and F of every ``Bh``-th row (24 bytes per window column
    each) and the walk recomputes one band of ``Bh`` rows at a time, from the band's
    checkpoint row, as it moves up (each band once: rows only decrease): about twice
    the work, and memory ``window_columns x (Bh + 24 x rows / Bh)``. ``band`` forces
    ``Bh`` (tests). Returns (status, start_i, ops reversed, consumed columns reversed,
    cells of the window). ``lo``: the window starts at column ``lo`` at the earliest (a
    seeded alignment's window, :mod:`s2g.window`). ``graph = (base, node_start, pred_ptr,
    pred_idx, slot, n_slots)``, ``sc = (a, b, o, e)``.
    """
    base, node_start, pred_ptr, pred_idx, slot, n_slots = graph
    a, b, o, e = sc
    rows = end_i
    L = end_i + max(0, a * end_i - score) // e
    v_end = np.searchsorted(node_start, end_j, side="right") - 1
    wn, ws, we = window(v_end, end_j - node_start[v_end], L, node_start, pred_ptr, pred_idx,
                         lo)
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
    W = woff[nw]
    cells = W * (rows + 1)
    empty_ops = np.empty(0, np.uint8)
    empty_cols = np.empty(0, np.int64)
    if band > 0:
        Bh = min(band, rows)
    else:
        Bh = row_band(W, nf, rows, max_cells)
        if Bh < 0:
            return ST_TOO_BIG, 0, empty_ops, empty_cols, cells
    dirs = np.empty((max(W, 1), Bh + 1), np.uint8)
    dpred = np.empty((max(nf, 1), Bh + 1), np.int64)
    epred = np.empty((max(nf, 1), Bh + 1), np.int64)
    n_ck = rows // Bh + 1 if Bh < rows else 1
    ckH = np.empty((n_ck, max(W, 1) if Bh < rows else 1), np.int64)
    ckE = np.empty_like(ckH)
    ckF = np.empty_like(ckH)
    win = (wn, ws, we, woff, frank, widx)
    rc = (dirs, dpred, epred)
    if Bh < rows:   # checkpoint pass over all rows, no direction bytes
        endval = _sweep(q, 0, rows, win, graph, mode, sc, False, rc, (True, Bh, ckH, ckE, ckF))
        blo = -1
    else:
        endval = _sweep(q, 0, rows, win, graph, mode, sc, True, rc, (False, Bh, ckH, ckE, ckF))
        blo = 0
    if endval != score:
        return ST_MISMATCH, 0, empty_ops, empty_cols, cells
    # ---- walk back (rows only decrease; a band is recomputed when the walk enters it)
    ops = np.empty(rows + L + 2, np.uint8)
    cols = np.empty(L + 1, np.int64)
    no = 0
    nc = 0
    k = nw - 1
    c = we[k]
    i = rows
    state = 0  # 0 H, 1 E, 2 F
    while True:
        if state == 0 and i == 0 and mode != GLOBAL:
            break
        need = ((i - 1) // Bh) * Bh if i > 0 else 0
        if need != blo:
            _sweep(q, need, min(need + Bh, rows), win, graph, mode, sc, True, rc,
                   (False, Bh, ckH, ckE, ckF))
            blo = need
        v = wn[k]
        wc = woff[k] + c - ws[k]
        d = dirs[wc, i - blo]
        if state == 0:
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
            p = dpred[frank[k], i - blo] if (c == 0 and frank[k] >= 0) else -1
        elif state == 1:
            ops[no] = OP_D
            no += 1
            cols[nc] = node_start[v] + c
            nc += 1
            state = 1 if (d & E_EXT) else 0
            if c > ws[k]:
                c -= 1
                continue
            p = epred[frank[k], i - blo] if (c == 0 and frank[k] >= 0) else -1
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
        parts = [f"{e - s}{OPCH[ops[s]]}" for s, e in zip(starts, ends)]
    counts = np.bincount(ops, minlength=4) if len(ops) else np.zeros(4, np.int64)
    return Traceback(qstart=int(start_i), qend=int(end_i), path=tuple(int(v) for v in path),
                     path_len=path_len, path_start=int(path_start), path_end=int(path_end),
                     cigar="".join(parts), matches=int(counts[OP_EQ]), block_len=int(len(ops)),
                     edits=int(counts[OP_X] + counts[OP_I] + counts[OP_D]))


def graph_tuple(graph):
    """The graph tuple of :func:`traceback_read` from a :class:`~s2g.graph.FlatGraph`."""
    return (graph.base, graph.node_start, graph.pred_ptr, graph.pred_idx, graph.slot,
            graph.n_slots)


def traceback_one(graph, q, score, end_i, end_j, scoring, mode, max_cells=MAX_CELLS, name="read",
                  band=0):
    st, start_i, ops, cols, cells = traceback_read(
        q, end_i, end_j, score, graph_tuple(graph), int(mode), scoring.as_tuple(), max_cells,
        band)
    if st == ST_TOO_BIG:
        raise S2GError(f"read {name!r}: traceback window of {cells} cells does not fit in "
                       f"{max_cells} bytes even with row checkpoints (--max-traceback-cells); "
                       "raise it or use --no-traceback")
    if st == ST_MISMATCH:
        raise S2GError(f"internal error: windowed traceback of read {name!r} does not reproduce "
                       f"score {score} at ({end_i}, {end_j}); please report this")
    return _to_traceback(graph, q, end_i, end_j, start_i, ops, cols)


@numba.njit(parallel=True, **NJIT)
def traceback_many(pos, rd, graph, mode, sc, max_cells, out):
    """:func:`traceback_read` (scalar, int64, row bands when the window is large) for
    the reads ``idx[pos]`` of a chunk in parallel, each summarised by :func:`summarize`
    into row ``k = pos[t]`` of the chunk's flat outputs, so no per-read numpy work is
    left for Python. ``oo``/``co``: prefix sums of the per-read bounds on ops
    (``i + L + 2``) and consumed columns (``L + 1``, at least one path node).
    ``col_lo[r]``: read ``r``'s window lower bound (seeded alignment; 0 = none).

    ``rd = (codes, offs, idx, score, end_i, end_j, col_lo, bands)``, the chunk's reads;
    ``out = (oo, co, st, start, cells, summary)`` with ``summary`` the arrays of
    :func:`s2g.trace.common.summary_arrays`. The tuples are unpacked here and the ones
    :func:`traceback_read` takes built in the loop: a parallel loop cannot take a tuple
    of arrays from outside it (Numba's gufunc arguments).
    """
    codes, offs, idx, score, end_i, end_j, col_lo, _pb = rd
    base, node_start, pred_ptr, pred_idx, slot, n_slots = graph
    a, b, o, e = sc
    oo, co, st, start, cells, summary = out
    run_op, run_len, n_runs, path, n_path, geo, counts = summary
    for t in numba.prange(len(pos)):
        k = pos[t]
        r = idx[k]
        q = codes[offs[r]:offs[r + 1]]
        s_, si, op_r, col_r, c = traceback_read(
            q, end_i[r], end_j[r], score[r], (base, node_start, pred_ptr, pred_idx, slot, n_slots),
            mode, (a, b, o, e), max_cells, 0, col_lo[r])
        st[k] = s_
        start[k] = si
        cells[k] = c
        if s_ == ST_OK:
            summarize(k, op_r, col_r, end_j[r], node_start, oo, co, run_op, run_len, n_runs,
                      path, n_path, geo, counts)
