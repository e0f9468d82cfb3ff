"""Windowed traceback: path + CIGAR from an end cell, without the whole DP matrix.

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

Two kernels compute this. :func:`traceback_read` takes one read per thread in int64
(the reference). :func:`traceback_batch` first runs
reads in *lanes* (:func:`_lane_worker`), the simd variant's layout
(:mod:`s2g.variants.simd`): a worker turns the windows of a super-batch of reads into
column programs (:func:`s2g.tb_common.lane_program`; per column its base, "continue the previous
column" or "merge these in-window predecessors", the window slot that keeps it, as
:mod:`s2g.gpu_traceback` does), groups them by window width into 64 int16 lanes (32
int32 beyond the int16 score bound) and runs each group in lockstep: at step k every
lane computes column k of its own window, one vector pass over the rows that also
writes each cell's direction byte (:func:`_tb_column`); a lane's merges (vectorised
down its rows, from lane-major slots) and slot stores are its own. Then each lane's end
cell is checked and the walk runs per lane (:func:`_lane_walk`). Same recurrences, tie
order and choices as traceback_read, so every output is identical (tests/
test_traceback.py).

Windows over LANE_CELLS cells (10 kbp reads; seeded long windows without a GPU) run in
lanes with row bands (:func:`_band_group`), traceback_read's checkpoints in the lane
layout: a checkpoint pass computes the group's DP band by band from the top (each band
over every column, so that the columns and slots in use are one band high) and keeps
H and F of every ``Bh``-th row of every column; then the bands are recomputed from the
bottom up, from their top checkpoints, with direction bytes and merge choices, each
only as far right as the walks that need it stand, and each lane's walk moves up
through them (:func:`_lane_walk` pauses where it would leave the band). Memory per
group: one band's direction bytes ``W x (Bh + 1) x lanes`` plus checkpoints
``2 x W x (rows / Bh + 1) x lanes`` lane-type values (W: widest window); ``Bh``
minimises their sum (~280 rows for 10 kbp reads in int32 lanes, ~7 MB a lane), and the
groups are cut so that it stays under BAND_GROUP_BYTES (256 MB). A window whose group
of one lane would pass it, or that traceback_read would refuse, goes to traceback_read.

Measured (2-core AMD EPYC VM shared with other jobs, 1 thread, 2026-11-23, best of 5-7):
5,000 seeded 150 bp reads on a 5 Mbp SNP graph 0.09 s in lanes against 0.60-0.75 s
(7-8x); 1,000 reads on the real graphs: cactus 12x, MT 11x, DRB1 3.1x (4.4 bp nodes: a
merge every ~5 columns, each a strided per-lane scatter); 300 x 1 kbp reads 7x.
Where the time goes (seeded reads, per read): windows and programs 3.3 us, merges 6,
the column loop 5.6 (~4 GCUPS), slot stores 3.9, walk 2, summary 2.4.
Row bands (same VM, 2026-11-24, best of 3; the simd variant's scores and end cells,
then traceback_batch timed alone): 20 x 10 kbp reads (5% substitutions) on a 100 kbp SNP
graph (2.34e9 window cells, int32 lanes, groups of 12 and 8 lanes, Bh ~280), local
1.83 s against 6.23 s in traceback_read (2 threads: 1.28 against 0.38 G cells/s), 2.9
against 12.7 s on 1 thread; semiglobal 1.99 against 5.26 s. Plain lanes unchanged.
"""
from __future__ import annotations

from typing import NamedTuple

import numba
import numpy as np
from numba import types
from numba.typed import Dict

from ._numba import NJIT
from .dp import E_EXT, F_EXT, GLOBAL, H_DEL, H_DIAG, H_INS, H_START, LOCAL
from .errors import S2GError
from .result import Traceback
from .scoring import NEG_INF
from .lanes import (GRAPH_N, NEG16, NEG32, PAD_CODE, cast, dealt, graph_codes, lane_type,
                    vector_op_counts)
from .tb_common import (_OPCH, K_CONT, K_VIRT, OP_D, OP_EQ, OP_I, OP_X, ST_MISMATCH, ST_OK,
                        ST_TOO_BIG, _raise_status, _summarize, _summary_arrays, _window,
                        lane_program, tb_cell)

_LANE_TYPES = (np.int16, np.int32, np.int64)
#: default bound on window cells per read (bytes of direction data); --max-traceback-cells
MAX_CELLS = 1 << 31


@numba.njit(**NJIT)
def _band_column(q, lo, hi, gb, PH, PE, PX, H, E, mode, a, b, o, e, rec, drow, ck, Bh,
                 ckH, ckE, ckF, wc):
    """Rows ``lo..hi`` of one window column (index ``t = i - lo``) from the predecessor
    vectors PH/PE over the same rows (see :mod:`s2g.dp`).

    Row ``lo`` is the mode's row 0 when ``lo == 0``, else the checkpoint row ``lo``.
    ``rec``: write the direction byte of every cell into ``drow``. ``ck``: save H, E
    and F of the rows that are multiples of ``Bh`` into the checkpoints.
    Cells and tie order: :func:`tb_cell`. ``PX[t]``: ``PE[t]`` extended an E.
    """
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
def _sweep(q, lo, hi, Bh, wn, ws, we, woff, frank, widx, base, node_start, pred_ptr,
           pred_idx, slot, n_slots, mode, a, b, o, e, rec, dirs, dpred, epred, ck,
           ckH, ckE, ckF):
    """One pass over the window columns for rows ``lo..hi``; returns H at (hi, last column).

    A column outside the window (a predecessor not in it, or the part of a node before
    its window start) acts as the virtual column (local, semiglobal) or as unreachable
    (global, except at a true source). With ``rec``, ``dpred``/``epred`` record which
    predecessor gave the diagonal and the deletion at node-first columns (-1: virtual).
    """
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
            _band_column(q, lo, hi, base[s0 + c], PH, PE, PX, H[cur], E[cur], mode, a, b, o, e,
                         rec, dirs[wc] if rec else dirs[0], ck, Bh, ckH, ckE, ckF, wc)
            cur = 1 - cur
        if slot[v] >= 0:
            last = 1 - cur
            for t in range(R + 1):
                SH[slot[v], t] = H[last, t]
                SE[slot[v], t] = E[last, t]
    return H[1 - cur, R]


@numba.njit(**NJIT)
def _row_band(W, nf, rows, max_cells):
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
def traceback_read(q, end_i, end_j, score, base, node_start, pred_ptr, pred_idx, slot,
                   n_slots, mode, a, b, o, e, max_cells, band=0, lo=0):
    """Recompute the window with direction bytes and walk back from the end cell.

    Memory: when ``window_columns x (i_end + 1)`` direction bytes (plus 16 bytes per
    cell of node-first columns) fit in ``max_cells``, one pass stores them all. Otherwise
    a first pass saves H, E and F of every ``Bh``-th row (24 bytes per window column
    each) and the walk recomputes one band of ``Bh`` rows at a time, from the band's
    checkpoint row, as it moves up (each band once: rows only decrease): about twice
    the work, and memory ``window_columns x (Bh + 24 x rows / Bh)``. ``band`` forces
    ``Bh`` (tests). Returns (status, start_i, ops reversed, consumed columns reversed,
    cells of the window). ``lo``: the window starts at column ``lo`` at the earliest (a
    seeded alignment's window, :mod:`s2g.window`).
    """
    rows = end_i
    L = end_i + max(0, a * end_i - score) // e
    v_end = np.searchsorted(node_start, end_j, side="right") - 1
    wn, ws, we = _window(v_end, end_j - node_start[v_end], L, node_start, pred_ptr, pred_idx,
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
        Bh = _row_band(W, nf, rows, max_cells)
        if Bh < 0:
            return ST_TOO_BIG, 0, empty_ops, empty_cols, cells
    dirs = np.empty((max(W, 1), Bh + 1), np.uint8)
    dpred = np.empty((max(nf, 1), Bh + 1), np.int64)
    epred = np.empty((max(nf, 1), Bh + 1), np.int64)
    n_ck = rows // Bh + 1 if Bh < rows else 1
    ckH = np.empty((n_ck, max(W, 1) if Bh < rows else 1), np.int64)
    ckE = np.empty_like(ckH)
    ckF = np.empty_like(ckH)
    args = (wn, ws, we, woff, frank, widx, base, node_start, pred_ptr, pred_idx, slot, n_slots,
            mode, a, b, o, e)
    if Bh < rows:   # checkpoint pass over all rows, no direction bytes
        endval = _sweep(q, 0, rows, Bh, *args, False, dirs, dpred, epred, True, ckH, ckE, ckF)
        blo = -1
    else:
        endval = _sweep(q, 0, rows, Bh, *args, True, dirs, dpred, epred, False, ckH, ckE, ckF)
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
            _sweep(q, need, min(need + Bh, rows), Bh, *args, True, dirs, dpred, epred, False,
                   ckH, ckE, ckF)
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
        parts = [f"{e - s}{_OPCH[ops[s]]}" for s, e in zip(starts, ends)]
    counts = np.bincount(ops, minlength=4) if len(ops) else np.zeros(4, np.int64)
    return Traceback(qstart=int(start_i), qend=int(end_i), path=tuple(int(v) for v in path),
                     path_len=path_len, path_start=int(path_start), path_end=int(path_end),
                     cigar="".join(parts), matches=int(counts[OP_EQ]), block_len=int(len(ops)),
                     edits=int(counts[OP_X] + counts[OP_I] + counts[OP_D]))


def traceback_one(graph, q, score, end_i, end_j, scoring, mode, max_cells=MAX_CELLS, name="read",
                  band=0):
    a, b, o, e = scoring.as_tuple()
    st, start_i, ops, cols, cells = traceback_read(
        q, end_i, end_j, score, graph.base, graph.node_start, graph.pred_ptr, graph.pred_idx,
        graph.slot, graph.n_slots, int(mode), a, b, o, e, max_cells, band)
    if st == ST_TOO_BIG:
        raise S2GError(f"read {name!r}: traceback window of {cells} cells does not fit in "
                       f"{max_cells} bytes even with row checkpoints (--max-traceback-cells); "
                       "raise it or use --no-traceback")
    if st == ST_MISMATCH:
        raise S2GError(f"internal error: windowed traceback of read {name!r} does not reproduce "
                       f"score {score} at ({end_i}, {end_j}); please report this")
    return _to_traceback(graph, q, end_i, end_j, start_i, ops, cols)


@numba.njit(parallel=True, **NJIT)
def _traceback_many(pos, idx, codes, offs, score, end_i, end_j, base, node_start, pred_ptr,
                    pred_idx, slot, n_slots, mode, a, b, o, e, max_cells, oo, co, col_lo, st,
                    start, cells, run_op, run_len, n_runs, path, n_path, geo, counts):
    """:func:`traceback_read` (scalar, int64, row bands when the window is large) for
    the reads ``idx[pos]`` of a chunk in parallel, each summarised by :func:`_summarize`
    into row ``k = pos[t]`` of the chunk's flat outputs, so no per-read numpy work is
    left for Python. ``oo``/``co``: prefix sums of the per-read bounds on ops
    (``i + L + 2``) and consumed columns (``L + 1``, at least one path node).
    ``col_lo[r]``: read ``r``'s window lower bound (seeded alignment; 0 = none).
    """
    for t in numba.prange(len(pos)):
        k = pos[t]
        r = idx[k]
        q = codes[offs[r]:offs[r + 1]]
        s_, si, op_r, col_r, c = traceback_read(q, end_i[r], end_j[r], score[r], base, node_start,
                                               pred_ptr, pred_idx, slot, n_slots, mode, a, b, o,
                                               e, max_cells, 0, col_lo[r])
        st[k] = s_
        start[k] = si
        cells[k] = c
        if s_ == ST_OK:
            _summarize(k, op_r, col_r, end_j[r], node_start, oo, co, run_op, run_len, n_runs,
                       path, n_path, geo, counts)


# ------------------------------------------------------------------ lanes across reads
#
# The same window DP as traceback_read, for many reads at once in the simd variant's
# lane layout (s2g/variants/simd.py): a group of reads runs its windows in lockstep,
# every DP vector a [row][lane] array with the lane loop innermost.

#: lane kernel direction bit 2: this cell's X = max(H - o - e, E - e) took E - e (so a
#: deletion that reaches the cell from a successor extends). traceback_read keeps the
#: same fact at the successor (E_EXT); the lane walk reads it one column later
X_EXT = E_EXT
#: lanes per group by lane type (two 512-bit registers per row step, as the simd variant)
LANES_TB = {np.int16: 64, np.int32: 32}
#: a read is traced in plain lanes when its window has at most LANE_CELLS cells (else
#: in row bands); a group of more than one register of lanes keeps its direction bytes
#: under GROUP_BYTES. A worker's direction bytes: at most max(GROUP_BYTES, 32 x
#: LANE_CELLS) = 64 MB (int16; 1 kbp reads), a few MB for 150 bp reads
LANE_CELLS = 1 << 21
GROUP_BYTES = 1 << 25
#: a worker builds the programs of SUPER x lanes reads at once and groups them by width
SUPER = 4
#: windows over LANE_CELLS cells run in lanes with row bands (:func:`_band_group`): a
#: group's buffers (checkpoints, one band's direction bytes, slots, walks;
#: :func:`_band_plan`) stay under BAND_GROUP_BYTES, so a worker holds at most about twice
#: this for them (its buffers grow by doubling; n threads: n x 512 MB at worst, ~110 MB a
#: worker for 10 kbp reads). A window whose group of one lane would not fit,
#: or that traceback_read would refuse (--max-traceback-cells), goes to traceback_read;
#: 0 sends every long window there
BAND_GROUP_BYTES = 1 << 28
#: predecessor choices are int16 list positions
MAX_PREDS = 32767
#: chunk status of a read the lanes left to traceback_read
ST_DEFER = -1
#: chunk status of a long window left to the row bands' pass (:func:`_band_worker`)
ST_BAND = -2


@numba.njit(inline="always", **NJIT)
def _lane_cell(hu, fu, ev, ph, qc, gc, a, mb, oe, e, floor, slim, z):
    """One cell of every lane's column in the lane type (the simd variant's ``_column``
    arithmetic): ``(H, F, X, direction byte)`` from H and F one row up (``hu``, ``fu``),
    this column's E (``ev``) and the diagonal ``ph``. The byte: H's source in
    :func:`tb_cell`'s tie order (diagonal, deletion, insertion; local start at <= 0),
    ``X_EXT`` (X = max(H - o - e, E - e) took E - e) and ``F_EXT``. ``slim``: 0 in local
    mode, the lane type's minimum otherwise (never reached: no start). A caller that
    drops the byte leaves its selects to dead-code elimination."""
    fo = cast(hu - oe, z)
    fx = cast(fu - e, z)
    fv = max(fo, fx)
    dg = cast(ph + (a if qc == gc else mb), z)
    h1 = max(dg, ev)
    h2 = max(h1, fv)
    h = max(h2, floor)
    ho = cast(h - oe, z)
    ex = cast(ev - e, z)
    u0 = np.uint8(0)
    d = np.uint8(H_DEL) if ev > dg else np.uint8(H_DIAG)
    d = np.uint8(H_INS) if fv > h1 else d
    d = np.uint8(H_START) if h2 <= slim else d
    d = np.uint8(d | (np.uint8(X_EXT) if ex > ho else u0))
    d = np.uint8(d | (np.uint8(F_EXT) if fx > fo else u0))
    return h, fv, max(ho, ex), d


@numba.njit(inline="always", **NJIT)
def _band_top(lo, L, PX, H, X, D, rec, hup, fp, cH, cF, mode, oe, e, neg, z):
    """Row ``lo`` of every lane's column (index 0): the mode's row 0 when ``lo == 0``
    (global: the deletion from the predecessors, ``PX[0]``), else the checkpoint H
    ``cH[l]`` and F ``cF[l]``; X and the direction byte of a checkpoint row are never
    read (the walk leaves a band before it reads them, :func:`_lane_walk`). Sets
    ``hup``/``fp`` (H and F one row up) for the rows below; the byte only with ``rec``."""
    if lo > 0:
        for l in range(L):
            H[0, l] = cH[l]
            X[0, l] = neg
            hup[l] = cH[l]
            fp[l] = cF[l]
            if rec:
                D[0, l] = 0
    elif mode == GLOBAL:
        for l in range(L):
            h0 = PX[0, l]
            H[0, l] = h0
            ho = cast(h0 - oe, z)
            ex = cast(h0 - e, z)
            X[0, l] = max(ho, ex)
            hup[l] = h0
            fp[l] = neg
            if rec:
                D[0, l] = np.uint8(H_DEL | X_EXT) if ex > ho else np.uint8(H_DEL)
    else:
        mo = cast(z - oe, z)
        for l in range(L):
            H[0, l] = z
            X[0, l] = mo
            hup[l] = z
            fp[l] = neg
            if rec:
                D[0, l] = H_START


@numba.njit(inline="always", **NJIT)
def _tb_column(Q, lo, hi, L, G, PH, PX, H, X, D, hup, fp, cH, cF, mode, a, mb, oe, e, floor,
               slim, neg, z):
    """:func:`_band_column` on every lane at once: rows ``lo..hi`` (index ``t = i - lo``)
    of each lane's column, each cell's direction byte into ``D`` (:func:`_lane_cell`).
    ``PH``/``PX``: predecessor vectors (``PX`` = this column's E); writes ``H`` and
    ``X = max(H - o - e, E - e)``. Row ``lo``: :func:`_band_top`.
    """
    _band_top(lo, L, PX, H, X, D, True, hup, fp, cH, cF, mode, oe, e, neg, z)
    Qb = Q[lo:]
    for t in range(1, hi - lo + 1):
        # the hot loop: lane-type operands, uint8 codes built by selects; F and H of the
        # row above run through fp[]/hup[] (a load of H[t-1] beside the store to H[t]
        # defeats LLVM's alias check)
        for l in range(L):
            h, fv, x, d = _lane_cell(hup[l], fp[l], PX[t, l], PH[t - 1, l], Qb[t - 1, l], G[l],
                                     a, mb, oe, e, floor, slim, z)
            X[t, l] = x
            H[t, l] = h
            D[t, l] = d
            hup[l] = h
            fp[l] = fv


@numba.njit(inline="always", **NJIT)
def _ck_column(Q, lo, hi, L, G, PH, PX, H, X, hup, fp, cH, cF, mode, a, mb, oe, e, floor, slim,
               neg, z, nH, nF):
    """The checkpoint pass's column (:func:`_band_group`): :func:`_tb_column` without
    direction bytes, then H and F of row ``hi`` (the next band's top row) into
    ``nH``/``nF``."""
    _band_top(lo, L, PX, H, X, H, False, hup, fp, cH, cF, mode, oe, e, neg, z)
    Qb = Q[lo:]
    for t in range(1, hi - lo + 1):
        for l in range(L):
            h, fv, x, _ = _lane_cell(hup[l], fp[l], PX[t, l], PH[t - 1, l], Qb[t - 1, l], G[l],
                                     a, mb, oe, e, floor, slim, z)
            X[t, l] = x
            H[t, l] = h
            hup[l] = h
            fp[l] = fv
    for l in range(L):
        nH[l] = hup[l]
        nF[l] = fp[l]


@numba.njit(inline="always", **NJIT)
def _lane_merge(l, Rl, virt, n, ent, SH, SX, VH, VX, neg, PH, PX, dc, ec, th, tx, local):
    """Lane ``l``'s merge at a node-first column, rows ``0..Rl-1``: from the virtual
    column (``virt``) or unreachable, then the ``n`` in-window predecessors whose last
    columns are in the lane's slots ``ent[0..n-1]`` (ascending node order). A real
    predecessor wins a tie with the virtual column, the lowest index among real ones
    (:func:`_sweep`'s rule); ``dc``/``ec`` get the list position that gave the diagonal
    and the deletion (-1: the start). The rows are contiguous in the lane-major slots
    ``SH[l, s]``, so the merge runs vectorised down the rows; the result is scattered
    into the lane's column of ``PH``/``PX``. ``local``: the first predecessor replaces the
    virtual column outright (local H >= 0 and X >= -o-e, the virtual column's values, and
    a real predecessor wins ties), which saves one pass.
    """
    t0 = 0
    if local:
        hs = SH[l, ent[0]]
        xs = SX[l, ent[0]]
        for i in range(Rl):
            th[i] = hs[i]
            tx[i] = xs[i]
            dc[i] = 0
            ec[i] = 0
        t0 = 1
    else:
        for i in range(Rl):
            th[i] = VH[i] if virt else neg
            tx[i] = VX[i] if virt else neg
            dc[i] = -1
            ec[i] = -1
    for t in range(t0, n):
        hs = SH[l, ent[t]]
        xs = SX[l, ent[t]]
        tt = np.int16(t)
        for i in range(Rl):
            hp = hs[i]
            ph = th[i]
            take = (hp > ph) | ((hp == ph) & (dc[i] < 0))
            th[i] = hp if take else ph
            dc[i] = tt if take else dc[i]
            xp = xs[i]
            px = tx[i]
            take = (xp > px) | ((xp == px) & (ec[i] < 0) & (xp > neg))
            tx[i] = xp if take else px
            ec[i] = tt if take else ec[i]
    for i in range(Rl):
        PH[i, l] = th[i]
        PX[i, l] = tx[i]


@numba.njit(inline="always", **NJIT)
def _room(buf, n):
    """``buf`` when it holds ``n`` items, else a new (uninitialised) one that does."""
    return buf if len(buf) >= n else np.empty(max(n, 2 * len(buf)), buf.dtype)


@numba.njit(inline="always", **NJIT)
def _keep(buf, n, used):
    """``buf`` grown to ``n`` items keeping its first ``used``."""
    if len(buf) >= n:
        return buf
    out = np.empty(max(n, 2 * len(buf)), buf.dtype)
    out[:used] = buf[:used]
    return out


@numba.njit(**NJIT)
def _band_sizes(W, M, S, nm, ob, c, cv, Bh):
    """Buffer items of a banded lane group (:func:`_band_group`): (lane type, direction
    bytes, int16 choices, walk ops) for ``c`` lanes run as ``cv`` (:func:`_padded`),
    widest window ``W`` columns, most rows ``M``, most window slots ``S``, ``nm`` merges
    with a list and ``ob`` walk ops (bounds) over its lanes, band height ``Bh``."""
    R = M + 1
    Rb = Bh + 1
    # read codes, checkpoints (H, F), the band's two columns (H, X) and slots, the
    # virtual column and a merge's two scratch vectors
    nt = (max(M, 1) * cv + 2 * W * (M // Bh + 1) * cv + 4 * Rb * cv + 2 * c * S * Rb + 2 * R
          + 2 * Rb)
    return nt, W * Rb * cv, 2 * max(nm * Rb, 1) + 2 * Rb, ob


@numba.njit(inline="always", **NJIT)
def _padded(c, isz):
    """Lanes a banded group of ``c`` lanes runs as: a multiple of one 16-byte register
    (4 int32 or 8 int16 lanes). The extra lanes compute padding: 10 int32 lanes, with
    their scalar remainder, took 1.7x the time of 16 (1 thread, 10 kbp reads)."""
    v = 16 // isz
    return -(-c // v) * v


@numba.njit(**NJIT)
def _band_plan(W, M, S, nm, ob, c, isz, band):
    """(bytes, band height) of a banded lane group (:func:`_band_sizes`'s arguments; lane
    type of ``isz`` bytes). Bytes: direction bytes of one band ``W x (Bh+1) x c``,
    checkpoints ``2 x W x (M // Bh + 1) x c x isz``, the band's columns and slots,
    merge choices (2 x int16 per band row), read codes and the walks (9 bytes per op).
    ``Bh`` (unless ``band`` forces it) minimises the terms that depend on it:
    ``sqrt(2 isz W c M / (W c + isz c (4 + 2 S) + 4 nm))``, about 280 rows for 10 kbp
    reads in int32 lanes (then checkpoints and direction bytes take about 290 bytes each
    per window column and lane)."""
    if band > 0:
        Bh = band
    else:
        cv = _padded(c, isz)
        den = W * cv + isz * (4 * cv + 2 * c * S) + 4 * nm
        Bh = int(np.sqrt(2.0 * isz * W * cv * M / max(den, 1)))
    Bh = max(1, min(Bh, max(M, 1)))
    nt, nd, nc, no = _band_sizes(W, M, S, nm, ob, c, _padded(c, isz), Bh)
    return isz * nt + nd + 2 * nc + 9 * no, Bh


@numba.njit(**NJIT)
def _lane_programs(ks, idx, score, end_i, end_j, col_lo, node_start, pred_ptr, pred_idx, mode,
                   a, e, max_cells, lane_cells, band_cap, band_h, isz, oo, prog, rows, wl, pw,
                   pm, nsl, nmg, bnd, st):
    """Windows and programs of the reads at chunk positions ``ks`` into the worker's
    buffers ``prog`` (grown as needed; returned). Per read x: rows, window columns
    ``wl[x]`` (0: left to traceback_read, status ST_DEFER), program offsets
    ``pw[x]``/``pm[x]`` (ends ``pw[x + 1]``/``pm[x + 1]``), window slots, merges with a
    list, and ``bnd[x]``: traced in row bands (:func:`_band_group`). A window over
    ``lane_cells`` (:class:`LaneLimits`: tests lower it) cells, or over
    ``max_cells`` bytes as traceback_read counts them, goes to the row bands; to
    traceback_read (deferred) when that would refuse it (:func:`_row_band`), when a
    group of one lane passes ``band_cap`` bytes (:func:`_band_plan`), or when a node has
    more than MAX_PREDS predecessors."""
    p_col, p_kind, p_mpa, p_mpn, p_mrank, p_store, mp_slot, mp_wcol = prog
    sizes = np.zeros(6, np.int64)
    for x in range(len(ks)):
        pw[x + 1] = pw[x]
        pm[x + 1] = pm[x]
        wl[x] = 0
        bnd[x] = False
        k = ks[x]
        r = idx[k]
        rows[x] = end_i[r]
        Lb = end_i[r] + max(0, a * end_i[r] - score[r]) // e
        v_end = np.searchsorted(node_start, end_j[r], side="right") - 1
        wn, ws, we = _window(v_end, end_j[r] - node_start[v_end], Lb, node_start, pred_ptr,
                             pred_idx, col_lo[r])
        # sizes straight from the window (list entries: at most the predecessors of
        # its node-first columns), so the program is built in one pass
        W = 0
        nf = 0
        preds = 0
        most = 0
        for y in range(len(wn)):
            W += we[y] - ws[y] + 1
            np_ = pred_ptr[wn[y] + 1] - pred_ptr[wn[y]]
            if ws[y] == 0 and np_ > 0:
                nf += 1
                preds += np_
                most = max(most, np_)
        banded = W * (rows[x] + 1) > lane_cells or (W + 16 * nf) * (rows[x] + 1) > max_cells
        if most > MAX_PREDS or (banded and (band_cap <= 0
                                            or _row_band(W, nf, rows[x], max_cells) < 0)):
            st[k] = ST_DEFER
            continue
        n1, m1 = pw[x] + W, pm[x] + preds
        if len(p_col) < n1:
            p_col = _keep(p_col, n1, pw[x])
            p_kind = _keep(p_kind, n1, pw[x])
            p_mpa = _keep(p_mpa, n1, pw[x])
            p_mpn = _keep(p_mpn, n1, pw[x])
            p_mrank = _keep(p_mrank, n1, pw[x])
            p_store = _keep(p_store, n1, pw[x])
        if len(mp_slot) < m1:
            mp_slot = _keep(mp_slot, m1, pm[x])
            mp_wcol = _keep(mp_wcol, m1, pm[x])
        lane_program(wn, ws, we, mode, node_start, pred_ptr, pred_idx, True, pw[x], pm[x], p_col,
                      p_kind, p_mpa, p_mpn, p_mrank, p_store, mp_slot, mp_wcol, sizes)
        if banded and _band_plan(W, rows[x], sizes[3], sizes[1], oo[k + 1] - oo[k], 1, isz,
                                 band_h)[0] > band_cap:
            st[k] = ST_DEFER
            continue
        bnd[x] = banded
        wl[x] = W
        pw[x + 1] = n1
        pm[x + 1] = pm[x] + sizes[2]
        nsl[x] = sizes[3]
        nmg[x] = sizes[1]
    return p_col, p_kind, p_mpa, p_mpn, p_mrank, p_store, mp_slot, mp_wcol


@numba.njit(**NJIT)
def _width_order(W, R):
    """Reads with a window (``W > 0``) sorted by width, then rows ``R`` (stable)."""
    n = len(W)
    key = np.empty(n, np.int64)
    rmax = 1
    for x in range(n):
        rmax = max(rmax, R[x] + 1)
    m = 0
    for x in range(n):
        key[x] = W[x] * rmax + R[x] if W[x] > 0 else -1
        m += W[x] > 0
    return np.argsort(key, kind="mergesort")[n - m:]


@numba.njit(**NJIT)
def _lane_groups(W, R, lanes, vec, cap):
    """Reads with ``W > 0`` (window columns; R = rows + 1) sorted by width then rows and
    cut into groups of at most ``lanes``; beyond ``vec`` lanes (one vector register),
    fewer where a group's direction bytes (widest window x most rows x lanes) would
    pass ``cap``, and then a multiple of ``vec``, so that the column loop has no
    remainder (1 kbp reads in groups of 29 lanes ran at a third of the speed of 32).
    Returns (reads in group order, group starts)."""
    order = _width_order(W, R)
    m = len(order)
    starts = np.empty(m + 1, np.int64)
    g = 0
    y = 0
    while y < m:
        c = 0
        wm = 0
        rm = 0
        while y + c < m and c < lanes:
            x = order[y + c]
            w2 = max(wm, W[x])
            r2 = max(rm, R[x])
            if c >= vec and w2 * r2 * (c + 1) > cap:
                break
            wm = w2
            rm = r2
            c += 1
        if c > vec and y + c < m:
            c -= c % vec
        starts[g] = y
        g += 1
        y += c
    starts[g] = m
    return order, starts[:g + 1]


@numba.njit(**NJIT)
def _band_groups(W, M, S, NM, OB, lanes, vec, cap, isz, band):
    """Banded reads (``W > 0``; ``M`` rows, window slots ``S``, merges with a list ``NM``,
    op bounds ``OB``) sorted by width then rows, as :func:`_lane_groups`, and cut into
    groups of at most ``lanes`` whose :func:`_band_plan` stays under ``cap`` bytes (a
    multiple of ``vec`` lanes beyond one register, except the last group). Returns
    (reads in group order, group starts, band height per group)."""
    order = _width_order(W, M)
    m = len(order)
    starts = np.empty(m + 1, np.int64)
    bh = np.empty(m + 1, np.int64)
    g = 0
    y = 0
    while y < m:
        c = 0
        wm = 0
        mm = 0
        sm = 0
        nm = 0
        ob = 0
        while y + c < m and c < lanes:
            x = order[y + c]
            w2, m2, s2 = max(wm, W[x]), max(mm, M[x]), max(sm, S[x])
            if c >= 1 and _band_plan(w2, m2, s2, nm + NM[x], ob + OB[x], c + 1, isz,
                                     band)[0] > cap:
                break
            wm, mm, sm = w2, m2, s2
            nm += NM[x]
            ob += OB[x]
            c += 1
        if c > vec and y + c < m:
            c -= c % vec
        wm = 0
        mm = 0
        sm = 0
        nm = 0
        for z in range(y, y + c):
            x = order[z]
            wm, mm, sm = max(wm, W[x]), max(mm, M[x]), max(sm, S[x])
            nm += NM[x]
        starts[g] = y
        bh[g] = _band_plan(wm, mm, sm, nm, 0, c, isz, band)[1]
        g += 1
        y += c
    starts[g] = m
    return order, starts[:g + 1], bh[:g]


@numba.njit(**NJIT)
def _band_group(L, Lv, lk, rows, wl, pw, pe, pm, me, nmg, M, W, S, Bh, tbuf, dbuf, cbuf, obuf, jbuf,
                codes, offs, idx, score, end_j, base, gcode, node_start, prog, mode, a, mb, o, e,
                neg, slim, st, start, cells, oo, co, run_op, run_len, n_runs, path, n_path, geo,
                counts):
    """One group of long windows in lanes with row bands: :func:`traceback_read`'s row
    checkpoints in the lane layout, every output identical to it.

    1. Checkpoint pass: the lockstep DP over every column and all rows, as
       :func:`_lane_worker`'s but without direction bytes (:func:`_ck_column`), saving H
       and F of every ``Bh``-th row of every column (``ckH/ckF[column, row // Bh, lane]``);
       merges and slot stores over all rows (the values only: a merge's choices come
       with its band). Then each lane's end cell is checked.
    2. Bands from the bottom up: band ``b`` (rows ``b Bh .. b Bh + Bh``) is recomputed,
       for the lanes whose walk needs it next and only up to the rightmost column those
       walks stand at, from the checkpoints at its top row (:func:`_tb_column`), with
       direction bytes, merge choices and band-high slots; then each such lane walks on
       until it leaves the band upward or ends (:func:`_lane_walk`). A walk only goes up,
       so one sweep of the bands serves every lane; a lane done, or whose walk starts in
       a band above, only rides along in the vector pass (no merges, no stores).

    The vector passes run ``Lv >= L`` lanes (:func:`_padded`); lanes ``L..Lv-1`` compute
    padding. Buffers (the worker's, grown to :func:`_band_plan`'s sizes): ``tbuf`` lane
    type, ``dbuf`` direction bytes, ``cbuf`` int16 choices, ``obuf``/``jbuf`` per-lane
    walks.
    """
    p_col, p_kind, p_mpa, p_mpn, p_mrank, p_store, mp_slot, mp_wcol = prog
    z = cast(0, a)
    oe = cast(o + e, a)
    floor = z if mode == LOCAL else neg
    gn = cast(GRAPH_N, a)
    pad = cast(PAD_CODE, a)
    R = M + 1
    Rb = Bh + 1
    nck = M // Bh + 1
    Mq = max(M, 1)
    nb = (M + Bh - 1) // Bh if M > 0 else 1
    # ---- carve the buffers (sizes as _band_plan counts them)
    x0 = 0
    Q = tbuf[x0:x0 + Mq * Lv].reshape((Mq, Lv))
    x0 += Mq * Lv
    ckH = tbuf[x0:x0 + W * nck * Lv].reshape((W, nck, Lv))
    x0 += W * nck * Lv
    ckF = tbuf[x0:x0 + W * nck * Lv].reshape((W, nck, Lv))
    x0 += W * nck * Lv
    Hb = tbuf[x0:x0 + 2 * Rb * Lv].reshape((2, Rb, Lv))
    x0 += 2 * Rb * Lv
    Xb = tbuf[x0:x0 + 2 * Rb * Lv].reshape((2, Rb, Lv))
    x0 += 2 * Rb * Lv
    SHb = tbuf[x0:x0 + L * S * Rb].reshape((L, S, Rb))
    x0 += L * S * Rb
    SXb = tbuf[x0:x0 + L * S * Rb].reshape((L, S, Rb))
    x0 += L * S * Rb
    VH = tbuf[x0:x0 + R]
    VX = tbuf[x0 + R:x0 + 2 * R]
    th = tbuf[x0 + 2 * R:x0 + 2 * R + Rb]
    tx = tbuf[x0 + 2 * R + Rb:x0 + 2 * R + 2 * Rb]
    D = dbuf[:W * Rb * Lv].reshape((W, Rb, Lv))
    coff = np.zeros(L + 1, np.int64)         # band merge choices: Rb rows per merge
    obo = np.zeros(L + 1, np.int64)          # per-lane walk buffers
    for l in range(L):
        coff[l + 1] = coff[l] + nmg[l] * Rb
        obo[l + 1] = obo[l] + oo[lk[l] + 1] - oo[lk[l]]
    nc2 = max(coff[L], 1)
    DC = cbuf[:nc2]
    EC = cbuf[nc2:2 * nc2]
    fdc = cbuf[2 * nc2:2 * nc2 + Rb]         # the checkpoint pass's merges: choices unused
    fec = cbuf[2 * nc2 + Rb:2 * nc2 + 2 * Rb]
    G = np.full(Lv, gn)                      # padding lanes keep GRAPH_N
    hup = np.empty(Lv, Q.dtype)
    fp = np.empty(Lv, Q.dtype)
    dH = np.empty(Lv, Q.dtype)               # the last band's bottom row: kept nowhere
    dF = np.empty(Lv, Q.dtype)
    endv = np.zeros(L, np.int64)
    for i in range(Mq):
        for l in range(Lv):
            Q[i, l] = pad
    for l in range(L):
        q0 = offs[idx[lk[l]]]
        for i in range(rows[l]):
            Q[i, l] = cast(codes[q0 + i], a)
    for i in range(R):
        vh = 0 if (mode == LOCAL or i == 0) else -(o + e * i)
        VH[i] = cast(vh, a)
        VX[i] = cast(vh - o - e, a)
    # ---- 1. checkpoint pass: the bands top down, each over every column from the
    # checkpoints at its top row (written by the band above), so that the two columns
    # and the slots in use are one band high (cache-resident) rather than whole columns
    for b in range(nb):
        blo = b * Bh
        bhi = min(blo + Bh, M)
        VHb = VH[blo:]
        VXb = VX[blo:]
        cur = 0
        for k in range(W):
            PH = Hb[1 - cur]
            PX = Xb[1 - cur]
            H = Hb[cur]
            X = Xb[cur]
            for l in range(L):
                if k >= wl[l]:
                    G[l] = gn
                    continue
                w = pw[l] + k
                G[l] = cast(gcode[p_col[w]], a)
                if p_kind[w] == K_CONT or (rows[l] <= blo and b > 0):
                    continue
                Rl = min(bhi, rows[l]) - blo + 1
                virt = p_kind[w] == K_VIRT
                if p_mpn[w] == 0:
                    for i in range(Rl):
                        PH[i, l] = VHb[i] if virt else neg
                        PX[i, l] = VXb[i] if virt else neg
                    continue
                e0 = pm[l] + p_mpa[w]
                _lane_merge(l, Rl, virt, p_mpn[w], mp_slot[e0:e0 + p_mpn[w]], SHb, SXb, VHb, VXb,
                            neg, PH, PX, fdc, fec, th, tx, mode == LOCAL)
            if b + 1 < nck:
                _ck_column(Q, blo, bhi, Lv, G, PH, PX, H, X, hup, fp, ckH[k, b], ckF[k, b], mode,
                           a, mb, oe, e, floor, slim, neg, z, ckH[k, b + 1], ckF[k, b + 1])
            else:
                _ck_column(Q, blo, bhi, Lv, G, PH, PX, H, X, hup, fp, ckH[k, b], ckF[k, b], mode,
                           a, mb, oe, e, floor, slim, neg, z, dH, dF)
            for l in range(L):
                if k >= wl[l] or (rows[l] <= blo and b > 0):
                    continue
                s = p_store[pw[l] + k]
                if s >= 0:
                    hs = SHb[l, s]
                    xs = SXb[l, s]
                    for i in range(min(bhi, rows[l]) - blo + 1):
                        hs[i] = H[i, l]
                        xs[i] = X[i, l]
                if k == wl[l] - 1 and rows[l] <= bhi:
                    endv[l] = H[rows[l] - blo, l]
            cur = 1 - cur
    # ---- end cells; walks start at (last column, end row) in state H
    wc = np.zeros(L, np.int64)
    ic = np.zeros(L, np.int64)
    sc = np.zeros(L, np.int64)
    nop = np.zeros(L, np.int64)
    ncl = np.zeros(L, np.int64)
    done = np.zeros(L, np.bool_)
    act = np.zeros(L, np.bool_)
    for l in range(L):
        k = lk[l]
        cells[k] = wl[l] * (rows[l] + 1)
        if endv[l] != score[idx[k]]:
            st[k] = ST_MISMATCH
            done[l] = True
        wc[l] = wl[l] - 1
        ic[l] = rows[l]
    # ---- 2. bands, bottom up
    for b in range(nb - 1, -1, -1):
        blo = b * Bh
        bhi = min(blo + Bh, M)
        kmax = -1
        for l in range(L):
            # traceback_read's band for row i: ((i - 1) // Bh) x Bh
            act[l] = not done[l] and (ic[l] - 1 if ic[l] > 0 else 0) // Bh == b
            if act[l]:
                kmax = max(kmax, wc[l])
        if kmax < 0:
            continue
        VHb = VH[blo:]
        VXb = VX[blo:]
        cur = 0
        for k in range(kmax + 1):
            PH = Hb[1 - cur]
            PX = Xb[1 - cur]
            H = Hb[cur]
            X = Xb[cur]
            for l in range(L):
                if k >= wl[l]:
                    G[l] = gn
                    continue
                w = pw[l] + k
                G[l] = cast(gcode[p_col[w]], a)
                if p_kind[w] == K_CONT or not act[l] or k > wc[l]:
                    continue
                Rl = min(bhi, rows[l]) - blo + 1
                virt = p_kind[w] == K_VIRT
                if p_mpn[w] == 0:
                    for i in range(Rl):
                        PH[i, l] = VHb[i] if virt else neg
                        PX[i, l] = VXb[i] if virt else neg
                    continue
                c0 = coff[l] + p_mrank[w] * Rb
                e0 = pm[l] + p_mpa[w]
                _lane_merge(l, Rl, virt, p_mpn[w], mp_slot[e0:e0 + p_mpn[w]], SHb, SXb, VHb, VXb,
                            neg, PH, PX, DC[c0:c0 + Rl], EC[c0:c0 + Rl], th, tx, mode == LOCAL)
            _tb_column(Q, blo, bhi, Lv, G, PH, PX, H, X, D[k], hup, fp, ckH[k, b], ckF[k, b], mode,
                       a, mb, oe, e, floor, slim, neg, z)
            for l in range(L):
                if k >= wl[l] or not act[l] or k > wc[l]:
                    continue
                s = p_store[pw[l] + k]
                if s >= 0:
                    hs = SHb[l, s]
                    xs = SXb[l, s]
                    for i in range(min(bhi, rows[l]) - blo + 1):
                        hs[i] = H[i, l]
                        xs[i] = X[i, l]
            cur = 1 - cur
        for l in range(L):
            if not act[l]:
                continue
            k = lk[l]
            r = idx[k]
            ops = obuf[obo[l]:obo[l + 1]]
            cols = jbuf[obo[l]:obo[l + 1]]
            wc[l], ic[l], sc[l], nop[l], ncl[l], fin = _lane_walk(
                l, D, blo, wc[l], ic[l], sc[l], nop[l], ncl[l], mode, codes, offs[r], base,
                p_col[pw[l]:pe[l]], p_kind[pw[l]:pe[l]], p_mrank[pw[l]:pe[l]],
                p_mpa[pw[l]:pe[l]], mp_wcol[pm[l]:me[l]], DC, EC, coff[l], Rb, ops, cols)
            if fin:
                done[l] = True
                st[k] = ST_OK
                start[k] = ic[l]
                _summarize(k, ops[:nop[l]], cols[:ncl[l]], end_j[r], node_start, oo, co, run_op,
                           run_len, n_runs, path, n_path, geo, counts)


@numba.njit(**NJIT)
def _batch_arrays(batch):
    """A worker's program buffers (grown by :func:`_lane_programs`) and per-read arrays
    of a super-batch of ``batch`` reads."""
    prog = (np.empty(4096, np.int64), np.empty(4096, np.uint8), np.empty(4096, np.int32),
            np.empty(4096, np.int32), np.empty(4096, np.int32), np.empty(4096, np.int32),
            np.empty(1024, np.int32), np.empty(1024, np.int32))
    return (prog, np.zeros(batch, np.int64), np.zeros(batch, np.int64),
            np.zeros(batch + 1, np.int64), np.zeros(batch + 1, np.int64),
            np.zeros(batch, np.int64), np.zeros(batch, np.int64), np.zeros(batch, np.bool_))


@numba.njit(**NJIT)
def _lane_arrays(lanes):
    """Per lane of a group: chunk position, rows, window columns, program and merge-list
    offsets with their ends (filled by :func:`_take_group`)."""
    return (np.zeros(lanes, np.int64), np.zeros(lanes, np.int64), np.zeros(lanes, np.int64),
            np.zeros(lanes, np.int64), np.zeros(lanes, np.int64), np.zeros(lanes, np.int64),
            np.zeros(lanes, np.int64))


@numba.njit(inline="always", **NJIT)
def _take_group(sel, ks, brows, bwl, bpw, bpm, bnsl, lk, rows, wl, pw, pe, pm, me):
    """Lanes ``0..len(sel)-1`` take the super-batch reads ``sel``; returns the group's
    most rows, widest window and most window slots (at least 1)."""
    M = 0
    W = 0
    S = 1
    for l in range(len(sel)):
        x = sel[l]
        lk[l] = ks[x]
        rows[l] = brows[x]
        wl[l] = bwl[x]
        pw[l] = bpw[x]
        pe[l] = bpw[x + 1]
        pm[l] = bpm[x]
        me[l] = bpm[x + 1]
        M = max(M, rows[l])
        W = max(W, wl[l])
        S = max(S, bnsl[x])
    return M, W, S


@numba.njit(**NJIT)
def _lane_worker(t, n_threads, order, batch, lanes, codes, offs, idx, score, end_i, end_j,
                 col_lo, base, gcode, node_start, pred_ptr, pred_idx, mode, a, mb, o, e, neg,
                 slim, max_cells, lane_cells, cap, band_cap, band_h, oo, co, st, start, cells,
                 run_op, run_len, n_runs, path, n_path, geo, counts):
    """Thread ``t``'s super-batches of ``batch`` reads of ``order`` (chunk positions;
    dealt back and forth over the threads, :func:`s2g.lanes.dealt`): their
    programs (:func:`_lane_programs`), lane groups by actual window width
    (:func:`_lane_groups`), and per group the lockstep DP (at step k lane l
    computes its own window column k, as the simd variant's lockstep windows do: a
    lane's merges and slot stores are its own, the column is one vector pass over every
    lane), each end cell's check, and the walks (:func:`_lane_walk`) summarised into
    the chunk's outputs (:func:`_summarize`). Long windows (``bnd``) get status ST_BAND
    for :func:`_band_worker`, a separate entry so that the row bands' code is compiled
    only when a run has such windows (it doubled the cold start of short-read runs).

    Memory per group: direction bytes ``widest window x (most rows + 1) x lanes``, int16
    choices (2 x 2 bytes per row of each merge with a list), and the window slots'
    columns (lane-major: ``[lane][slot][row]``, so a merge runs down contiguous rows).
    Buffers live as long as the worker (a fresh allocation per group cost page faults:
    ~20% of the time).
    """
    z = cast(0, a)
    oe = cast(o + e, a)
    floor = z if mode == LOCAL else neg
    gn = cast(GRAPH_N, a)
    pad = cast(PAD_CODE, a)
    lt = np.full(1, z)                       # the lane type, for np.empty
    prog, brows, bwl, bpw, bpm, bnsl, bnmg, bnd = _batch_arrays(batch)
    lk, rows, wl, pw, pe, pm, me = _lane_arrays(lanes)     # per lane of a group
    coff = np.zeros(lanes + 1, np.int64)
    endv = np.zeros(lanes, np.int64)
    G = np.empty(lanes, lt.dtype)
    hup = np.empty(lanes, lt.dtype)
    fp = np.empty(lanes, lt.dtype)
    qbuf = np.empty(0, lt.dtype)
    hbuf = np.empty(0, lt.dtype)
    xbuf = np.empty(0, lt.dtype)
    shbuf = np.empty(0, lt.dtype)
    sxbuf = np.empty(0, lt.dtype)
    vbuf = np.empty(0, lt.dtype)
    dbuf = np.empty(0, np.uint8)
    cbuf = np.empty(0, np.int16)
    obuf = np.empty(0, np.uint8)
    jbuf = np.empty(0, np.int64)
    isz = lt.itemsize
    vec = 64 // isz
    n_sb = (len(order) + batch - 1) // batch
    for sb in dealt(t, n_sb, n_threads):     # super-batches by size, back and forth
        ks = order[sb * batch:min(len(order), (sb + 1) * batch)]
        nb = len(ks)
        prog = _lane_programs(ks, idx, score, end_i, end_j, col_lo, node_start, pred_ptr,
                              pred_idx, mode, a, e, max_cells, lane_cells, band_cap, band_h, isz,
                              oo, prog, brows[:nb], bwl[:nb], bpw[:nb + 1], bpm[:nb + 1],
                              bnsl[:nb], bnmg[:nb], bnd[:nb], st)
        p_col, p_kind, p_mpa, p_mpn, p_mrank, p_store, mp_slot, mp_wcol = prog
        for x in range(nb):
            if bnd[x]:                   # the row bands' pass takes it
                st[ks[x]] = ST_BAND
                bwl[x] = 0
        gorder, gstart = _lane_groups(bwl[:nb], brows[:nb] + 1, lanes, vec, cap)
        for gi in range(len(gstart) - 1):
            L = gstart[gi + 1] - gstart[gi]
            sel = gorder[gstart[gi]:gstart[gi + 1]]
            M, W, S = _take_group(sel, ks, brows, bwl, bpw, bpm, bnsl, lk, rows, wl, pw, pe,
                                  pm, me)
            ob = 1
            for l in range(L):
                coff[l + 1] = coff[l] + bnmg[sel[l]] * (rows[l] + 1)
                ob = max(ob, oo[lk[l] + 1] - oo[lk[l]])
            R = M + 1
            # ---- buffers (reused; views shaped for this group)
            qbuf = _room(qbuf, max(M, 1) * L)
            hbuf = _room(hbuf, 2 * R * L)
            xbuf = _room(xbuf, 2 * R * L)
            shbuf = _room(shbuf, L * S * R)
            sxbuf = _room(sxbuf, L * S * R)
            vbuf = _room(vbuf, 4 * R)
            dbuf = _room(dbuf, W * R * L)
            cbuf = _room(cbuf, 2 * max(coff[L], 1))
            obuf = _room(obuf, ob)
            jbuf = _room(jbuf, ob)
            Q = qbuf[:max(M, 1) * L].reshape((max(M, 1), L))
            Hb = hbuf[:2 * R * L].reshape((2, R, L))
            Xb = xbuf[:2 * R * L].reshape((2, R, L))
            SH = shbuf[:L * S * R].reshape((L, S, R))
            SX = sxbuf[:L * S * R].reshape((L, S, R))
            VH = vbuf[:R]
            VX = vbuf[R:2 * R]
            th = vbuf[2 * R:3 * R]
            tx = vbuf[3 * R:4 * R]
            D = dbuf[:W * R * L].reshape((W, R, L))
            nc2 = max(coff[L], 1)
            DC = cbuf[:nc2]
            EC = cbuf[nc2:2 * nc2]
            for i in range(max(M, 1)):
                for l in range(L):
                    Q[i, l] = pad
            for l in range(L):
                q0 = offs[idx[lk[l]]]
                for i in range(rows[l]):
                    Q[i, l] = cast(codes[q0 + i], a)
            for i in range(R):
                vh = 0 if (mode == LOCAL or i == 0) else -(o + e * i)
                VH[i] = cast(vh, a)
                VX[i] = cast(vh - o - e, a)
            # ---- lockstep DP
            cur = 0
            for k in range(W):
                PH = Hb[1 - cur]
                PX = Xb[1 - cur]
                H = Hb[cur]
                X = Xb[cur]
                for l in range(L):
                    if k >= wl[l]:
                        G[l] = gn            # done: values nobody reads
                        continue
                    w = pw[l] + k
                    G[l] = cast(gcode[p_col[w]], a)
                    if p_kind[w] == K_CONT:
                        continue
                    Rl = rows[l] + 1
                    virt = p_kind[w] == K_VIRT
                    if p_mpn[w] == 0:        # no predecessor in the window
                        for i in range(Rl):
                            PH[i, l] = VH[i] if virt else neg
                            PX[i, l] = VX[i] if virt else neg
                        continue
                    c0 = coff[l] + p_mrank[w] * Rl
                    e0 = pm[l] + p_mpa[w]
                    _lane_merge(l, Rl, virt, p_mpn[w], mp_slot[e0:e0 + p_mpn[w]], SH, SX, VH, VX,
                                neg, PH, PX, DC[c0:c0 + Rl], EC[c0:c0 + Rl], th, tx,
                                mode == LOCAL)
                _tb_column(Q, 0, M, L, G, PH, PX, H, X, D[k], hup, fp, hup, fp, mode, a, mb, oe,
                           e, floor, slim, neg, z)
                for l in range(L):
                    if k >= wl[l]:
                        continue
                    s = p_store[pw[l] + k]
                    if s >= 0:
                        hs = SH[l, s]
                        xs = SX[l, s]
                        for i in range(rows[l] + 1):
                            hs[i] = H[i, l]
                            xs[i] = X[i, l]
                    if k == wl[l] - 1:
                        endv[l] = H[rows[l], l]
                cur = 1 - cur
            # ---- walk back per lane
            for l in range(L):
                k = lk[l]
                r = idx[k]
                cells[k] = wl[l] * (rows[l] + 1)
                if endv[l] != score[r]:
                    st[k] = ST_MISMATCH
                    continue
                st[k] = ST_OK
                _, si, _, no, nc, _ = _lane_walk(
                    l, D, 0, wl[l] - 1, rows[l], 0, 0, 0, mode, codes, offs[r], base,
                    p_col[pw[l]:pe[l]], p_kind[pw[l]:pe[l]], p_mrank[pw[l]:pe[l]],
                    p_mpa[pw[l]:pe[l]], mp_wcol[pm[l]:me[l]], DC, EC, coff[l], rows[l] + 1, obuf,
                    jbuf)
                start[k] = si
                _summarize(k, obuf[:no], jbuf[:nc], end_j[r], node_start, oo, co, run_op,
                           run_len, n_runs, path, n_path, geo, counts)


@numba.njit(**NJIT)
def _band_worker(t, n_threads, order, batch, lanes, codes, offs, idx, score, end_i, end_j,
                 col_lo, base, gcode, node_start, pred_ptr, pred_idx, mode, a, mb, o, e, neg,
                 slim, max_cells, lane_cells, cap, band_cap, band_h, oo, co, st, start, cells,
                 run_op, run_len, n_runs, path, n_path, geo, counts):
    """:func:`_lane_worker`'s second pass: super-batches of the reads it gave status
    ST_BAND, their programs again, groups of long windows (:func:`_band_groups`) traced
    in row bands (:func:`_band_group`). A read whose window no longer takes the bands
    (none: the same limits decide) would go to traceback_read (ST_DEFER)."""
    z = cast(0, a)
    lt = np.full(1, z)                       # the lane type, for np.empty
    prog, brows, bwl, bpw, bpm, bnsl, bnmg, bnd = _batch_arrays(batch)
    wbd = np.zeros(batch, np.int64)          # window columns of the banded reads
    bob = np.zeros(batch, np.int64)
    lk, rows, wl, pw, pe, pm, me = _lane_arrays(lanes)     # per lane of a group
    lnm = np.zeros(lanes, np.int64)
    tbuf = np.empty(0, lt.dtype)
    dbuf = np.empty(0, np.uint8)
    cbuf = np.empty(0, np.int16)
    obuf = np.empty(0, np.uint8)
    jbuf = np.empty(0, np.int64)
    isz = lt.itemsize
    vec = 64 // isz
    n_sb = (len(order) + batch - 1) // batch
    for sb in dealt(t, n_sb, n_threads):     # super-batches by size, back and forth
        ks = order[sb * batch:min(len(order), (sb + 1) * batch)]
        nb = len(ks)
        prog = _lane_programs(ks, idx, score, end_i, end_j, col_lo, node_start, pred_ptr,
                              pred_idx, mode, a, e, max_cells, lane_cells, band_cap, band_h, isz,
                              oo, prog, brows[:nb], bwl[:nb], bpw[:nb + 1], bpm[:nb + 1],
                              bnsl[:nb], bnmg[:nb], bnd[:nb], st)
        nbd = 0
        for x in range(nb):
            if bwl[x] > 0 and not bnd[x]:
                st[ks[x]] = ST_DEFER
            wbd[x] = bwl[x] if bnd[x] else 0
            bob[x] = oo[ks[x] + 1] - oo[ks[x]]
            nbd += bnd[x]
        if nbd > 0:
            border, bstart, bbh = _band_groups(wbd[:nb], brows[:nb], bnsl[:nb], bnmg[:nb],
                                               bob[:nb], lanes, vec, band_cap, isz, band_h)
            for gi in range(len(bstart) - 1):
                L = bstart[gi + 1] - bstart[gi]
                sel = border[bstart[gi]:bstart[gi + 1]]
                M, W, S = _take_group(sel, ks, brows, bwl, bpw, bpm, bnsl, lk, rows, wl, pw, pe,
                                      pm, me)
                nm = 0
                obs = 0
                for l in range(L):
                    lnm[l] = bnmg[sel[l]]
                    nm += lnm[l]
                    obs += bob[sel[l]]
                Bh = bbh[gi]
                Lv = _padded(L, isz)
                nt, nd, nc, no = _band_sizes(W, M, S, nm, obs, L, Lv, Bh)
                tbuf = _room(tbuf, nt)
                dbuf = _room(dbuf, nd)
                cbuf = _room(cbuf, nc)
                obuf = _room(obuf, no)
                jbuf = _room(jbuf, no)
                _band_group(L, Lv, lk[:L], rows[:L], wl[:L], pw[:L], pe[:L], pm[:L], me[:L],
                            lnm[:L], M, W, S, Bh, tbuf, dbuf, cbuf, obuf, jbuf, codes, offs, idx,
                            score, end_j, base, gcode, node_start, prog, mode, a, mb, o, e, neg,
                            slim, st, start, cells, oo, co, run_op, run_len, n_runs, path,
                            n_path, geo, counts)


@numba.njit(**NJIT)
def _lane_walk(l, D, blo, w, i, state, no, nc, mode, codes, q0, base, p_col, p_kind, p_mrank,
               p_mpa, mp_wcol, DC, EC, coff, Rc, ops, cols):
    """:func:`traceback_read`'s walk of lane ``l`` from window column ``w``, row ``i`` in
    ``state`` (0 H, 1 E, 2 F) with ``no``/``nc`` ops and columns already written (reversed)
    into ``ops``/``cols``, on the lane program (read-local arrays), the direction bytes
    ``D[w, i - blo, l]`` and merge choices ``DC/EC[coff + rank x Rc + i - blo]`` of rows
    ``blo..``. With ``blo > 0`` (a row band, :func:`_band_group`) the walk pauses where it
    would read row ``blo`` or above: at a step's start with ``i <= blo`` (where
    traceback_read enters the band above). Rows only decrease, and a band's top row is
    read only as a merge choice after a diagonal step, so rows ``blo + 1..`` and that
    choice suffice. Returns (w, i, state, no, nc, done); done: ``i`` is the start row. The
    deletion state reads X_EXT of the cell it moves to (where traceback_read reads E_EXT
    of the cell it leaves: the same bit)."""
    while True:
        if state == 0 and i == 0 and mode != GLOBAL:
            return w, i, state, no, nc, True
        if blo > 0 and i <= blo:
            return w, i, state, no, nc, False
        d = D[w, i - blo, l]
        if state == 2:
            ops[no] = OP_I
            no += 1
            state = 2 if (d & F_EXT) else 0
            i -= 1
            continue
        if state == 0:
            src = d & 3
            if src == H_START:
                return w, i, state, no, nc, True
            if src == H_DEL:
                state = 1
                continue
            if src == H_INS:
                state = 2
                continue
            j = p_col[w]
            qb = codes[q0 + i - 1]
            ops[no] = OP_EQ if (qb == base[j] and qb < 4) else OP_X
            no += 1
            cols[nc] = j
            nc += 1
            i -= 1
        else:
            ops[no] = OP_D
            no += 1
            cols[nc] = p_col[w]
            nc += 1
        if p_kind[w] == K_CONT:
            w -= 1
        else:
            mr = p_mrank[w]
            ch = -1
            if mr >= 0:
                x = coff + mr * Rc + i - blo
                ch = DC[x] if state == 0 else EC[x]
            if ch < 0:
                # into the virtual column: local starts here; otherwise the rest of the
                # read is inserted before the graph walk
                if mode != LOCAL:
                    for _ in range(i):
                        ops[no] = OP_I
                        no += 1
                    i = 0
                return w, i, state, no, nc, True
            w = mp_wcol[p_mpa[w] + ch]
        if state == 1:
            state = 1 if (D[w, i - blo, l] & X_EXT) else 0


@numba.njit(parallel=True, **NJIT)
def _run_lanes(order, batch, lanes, n_threads, codes, offs, idx, score, end_i, end_j, col_lo,
               base, gcode, node_start, pred_ptr, pred_idx, mode, a, mb, o, e, neg, slim,
               max_cells, lane_cells, cap, band_cap, band_h, oo, co, st, start, cells, run_op,
               run_len, n_runs, path, n_path, geo, counts):
    for t in numba.prange(n_threads):
        # an int64 index (uint64 in the loop body would compile the worker twice)
        _lane_worker(np.int64(t), n_threads, order, batch, lanes, codes, offs, idx, score,
                     end_i, end_j, col_lo, base, gcode, node_start, pred_ptr, pred_idx, mode, a,
                     mb, o, e, neg, slim, max_cells, lane_cells, cap, band_cap, band_h, oo, co,
                     st, start, cells, run_op, run_len, n_runs, path, n_path, geo, counts)


@numba.njit(parallel=True, **NJIT)
def _run_bands(order, batch, lanes, n_threads, codes, offs, idx, score, end_i, end_j, col_lo,
               base, gcode, node_start, pred_ptr, pred_idx, mode, a, mb, o, e, neg, slim,
               max_cells, lane_cells, cap, band_cap, band_h, oo, co, st, start, cells, run_op,
               run_len, n_runs, path, n_path, geo, counts):
    for t in numba.prange(n_threads):
        # an int64 index (uint64 in the loop body would compile the worker twice)
        _band_worker(np.int64(t), n_threads, order, batch, lanes, codes, offs, idx, score,
                     end_i, end_j, col_lo, base, gcode, node_start, pred_ptr, pred_idx, mode, a,
                     mb, o, e, neg, slim, max_cells, lane_cells, cap, band_cap, band_h, oo, co,
                     st, start, cells, run_op, run_len, n_runs, path, n_path, geo, counts)


class LaneLimits(NamedTuple):
    """The lane traceback's limits for one :func:`traceback_batch` call; a field left
    None takes the module constant (read at call time). Tests shrink them so that tiny
    windows take every path: plain lanes, row bands of a few rows, traceback_read."""
    #: plain lanes up to this many window cells (LANE_CELLS; 0: no lanes at all)
    cells: int | None = None
    #: direction bytes of a plain group of more than one register (GROUP_BYTES)
    group_bytes: int | None = None
    #: bytes of a banded group (BAND_GROUP_BYTES; 0: long windows to traceback_read)
    band_bytes: int | None = None
    #: band height of the row bands; 0: the one that minimises a group's memory
    band: int = 0

    def resolved(self) -> "LaneLimits":
        return LaneLimits(LANE_CELLS if self.cells is None else self.cells,
                          GROUP_BYTES if self.group_bytes is None else self.group_bytes,
                          BAND_GROUP_BYTES if self.band_bytes is None else self.band_bytes,
                          self.band)


class FlatTracebacks:
    """The tracebacks of one batch as arrays, as the walks leave them (CPU or GPU chunks,
    :func:`_summarize`'s outputs); :class:`Traceback` objects only on demand.

    Per read ``r``: ``has[r]`` (traced), ``qstart``/``qend``, CIGAR runs
    ``run_op/run_len[run_at[r]:run_at[r] + n_runs[r]]``, path nodes
    ``path[path_at[r]:path_at[r] + n_path[r]]``, ``geo[r]`` = (path length, path start,
    path end), ``counts[r]`` = ops per kind (=, X, I, D). The GAF writer
    (:func:`s2g.gaf.gaf_text`) reads these directly: building one Python object per read
    cost ~23 us, more than the GPU's traceback itself.
    """

    def __init__(self, n):
        self.n = n
        self.has = np.zeros(n, np.bool_)
        self.qstart = np.zeros(n, np.int64)
        self.qend = np.zeros(n, np.int64)
        self.run_at = np.zeros(n, np.int64)
        self.n_runs = np.zeros(n, np.int64)
        self.path_at = np.zeros(n, np.int64)
        self.n_path = np.zeros(n, np.int64)
        self.geo = np.zeros((n, 3), np.int64)
        self.counts = np.zeros((n, 4), np.int64)
        self._parts = ([], [], [])
        self._bases = [0, 0]
        self._deferred = []
        self.run_op = np.zeros(0, np.uint8)
        self.run_len = np.zeros(0, np.int32)
        self.path = np.zeros(0, np.int32)

    def add(self, idx, ei, oo, co, start, summary):
        """One chunk: reads ``idx``, flat outputs with per-read offsets ``oo``/``co``."""
        run_op, run_len, n_runs, path, n_path, geo, counts = summary
        self.has[idx] = True
        self.qstart[idx] = start
        self.qend[idx] = ei[idx]
        self.run_at[idx] = self._bases[0] + oo[:-1]
        self.n_runs[idx] = n_runs
        self.path_at[idx] = self._bases[1] + co[:-1]
        self.n_path[idx] = n_path
        self.geo[idx] = geo
        self.counts[idx] = counts
        for part, x in zip(self._parts, (run_op, run_len, path)):
            part.append(x)
        self._bases[0] += len(run_op)
        self._bases[1] += len(path)

    def defer(self, fn):
        """Run ``fn()`` (which adds a chunk) in :meth:`finish`, possibly in another thread."""
        self._deferred.append(fn)

    def finish(self):
        while self._deferred:
            self._deferred.pop(0)()
        if self._parts[0]:
            self.run_op, self.run_len, self.path = (np.concatenate(p) for p in self._parts)
        self._parts = ([], [], [])
        return self

    def merged(self, other):
        """A finished FlatTracebacks holding this one's reads and ``other``'s (both
        finished; a read traced in at most one of them)."""
        out = FlatTracebacks(self.n)
        for src in (self, other):
            idx = np.nonzero(src.has)[0]
            if len(idx) == 0:
                continue
            out.has[idx] = True
            for name in ("qstart", "qend", "n_runs", "n_path", "geo", "counts"):
                getattr(out, name)[idx] = getattr(src, name)[idx]
            out.run_at[idx] = out._bases[0] + src.run_at[idx]
            out.path_at[idx] = out._bases[1] + src.path_at[idx]
            for part, x in zip(out._parts, (src.run_op, src.run_len, src.path)):
                part.append(x)
            out._bases[0] += len(src.run_op)
            out._bases[1] += len(src.path)
        return out.finish()

    def objects(self) -> list:
        """One :class:`Traceback` (or None: not traced) per read."""
        out = [None] * self.n
        ops_l, lens_l, path_l = self.run_op.tolist(), self.run_len.tolist(), self.path.tolist()
        geo_l, cnt_l = self.geo.tolist(), self.counts.tolist()
        ra, nr, pa, npth = (x.tolist() for x in (self.run_at, self.n_runs, self.path_at,
                                                 self.n_path))
        qs, qe = self.qstart.tolist(), self.qend.tolist()
        for r in np.nonzero(self.has)[0].tolist():
            x0 = ra[r]
            cig = "".join([f"{lens_l[x]}{_OPCH[ops_l[x]]}" for x in range(x0, x0 + nr[r])])
            c = cnt_l[r]
            g3 = geo_l[r]
            out[r] = Traceback(qstart=qs[r], qend=qe[r], path=tuple(path_l[pa[r]:pa[r] + npth[r]]),
                               path_len=g3[0], path_start=g3[1], path_end=g3[2], cigar=cig,
                               matches=c[OP_EQ], block_len=c[0] + c[1] + c[2] + c[3],
                               edits=c[OP_X] + c[OP_I] + c[OP_D])
        return out


#: traceback outputs of one parallel call: at most this many ops (bounds), ~5 bytes each
CHUNK_OPS = 1 << 24


def _asm_probe(Q, M, L, G, PH, PX, H, X, D, hup, fp, mode, a, mb, oe, e, floor, slim, neg, z,
               SH, SX, VH, VX, ent, DC, EC, th, tx, cH, cF):
    """The lane traceback's vector loops alone (for :func:`asm_report`)."""
    _lane_merge(0, M + 1, True, 2, ent, SH, SX, VH, VX, neg, PH, PX, DC, EC, th, tx, False)
    _tb_column(Q, 0, M, L, G, PH, PX, H, X, D, hup, fp, hup, fp, mode, a, mb, oe, e, floor, slim,
               neg, z)
    _ck_column(Q, 0, M, L, G, PH, PX, H, X, hup, fp, hup, fp, mode, a, mb, oe, e, floor, slim,
               neg, z, cH, cF)


def asm_report(dtype=np.int16, keep=None):
    """Counts of vector instructions (mnemonic, register width) in the lane traceback's
    column loops and merge (:func:`_tb_column`, :func:`_ck_column`, :func:`_lane_merge`) for
    lane type ``dtype``, compiled alone (uncached) so that no other loop adds to the counts.
    ``keep``: a list to append the assembly text to."""
    T = dtype
    probe = numba.njit(nogil=True)(_asm_probe)
    R, L = 3, 64
    m2 = lambda *sh: np.zeros(sh, T)      # noqa: E731
    probe(m2(2, L), 2, L, m2(L), m2(R, L), m2(R, L), m2(R, L), m2(R, L),
          np.zeros((R, L), np.uint8), m2(L), m2(L), LOCAL, T(2), T(-4), T(6), T(2), T(0), T(0),
          T(-15000), T(0), m2(L, 2, R), m2(L, 2, R), m2(R), m2(R), np.arange(2, dtype=np.int32),
          np.zeros(R, np.int16), np.zeros(R, np.int16), m2(R), m2(R), m2(L), m2(L))
    asm = probe.inspect_asm(probe.signatures[0])
    if keep is not None:
        keep.append(asm)
    return vector_op_counts(asm, r"vp(?:max|min|add|sub)s?[bwdq]|vpmov[a-z0-9]+|"
                                      r"vpcmp[a-z]*[bwdq]|vpblendm[bwdq]")


def _lane_types(scoring, mode, rows, n_bases):
    """Per read: 0 (int16 lanes), 1 (int32) or 2 (neither) by the simd variant's score
    bound switch for its rows (:func:`s2g.lanes.lane_type`)."""
    ur = np.unique(rows)
    code = np.array([_LANE_TYPES.index(lane_type(scoring, mode, int(m), n_bases))
                     for m in ur], np.int64)
    return code[np.searchsorted(ur, rows)]


def _traceback_chunk(graph, reads, idx, n_ops, L, score, ei, ej, mode, scoring, max_cells,
                     flat, col_lo, lim):
    """Trace reads ``idx``: in lanes (:func:`_lane_worker`) where a lane type fits,
    the rest and whatever the lanes defer one read per thread (:func:`traceback_read`).
    ``lim``: resolved :class:`LaneLimits`."""
    a, b, o, e = scoring.as_tuple()
    n = len(idx)
    oo = np.zeros(n + 1, np.int64)
    co = np.zeros(n + 1, np.int64)
    np.cumsum(n_ops, out=oo[1:])
    np.cumsum(L + 1, out=co[1:])
    summary = _summary_arrays(n, oo, co)
    st = np.full(n, ST_DEFER, np.int64)
    start = np.zeros(n, np.int64)
    cells = np.zeros(n, np.int64)
    codes = reads.codes_flat
    offs = np.asarray(reads.offsets, np.int64)
    gr = (graph.node_start, graph.pred_ptr, graph.pred_idx)
    if lim.cells > 0:
        rows = ei[idx]
        tcode = _lane_types(scoring, mode, rows, graph.n_bases)
        gcode = graph_codes(graph)
        for c, T in enumerate(_LANE_TYPES[:2]):
            sel = np.nonzero(tcode == c)[0]
            if len(sel) == 0:
                continue
            # super-batches of similar column bound L (windows are about that wide); the
            # workers form the lane groups by actual width inside each
            order = sel[np.lexsort((rows[sel], L[sel]))]
            threads = numba.get_num_threads()
            neg = NEG16 if T is np.int16 else NEG32
            slim = 0 if mode == LOCAL else np.iinfo(T).min
            args = (codes, offs, idx, score, ei, ej, col_lo, graph.base, gcode, *gr, mode, T(a),
                    T(-b), T(o), T(e), T(neg), T(slim), int(max_cells), int(lim.cells),
                    int(lim.group_bytes), int(lim.band_bytes), int(lim.band), oo, co, st, start,
                    cells, *summary)
            lanes = LANES_TB[T]
            # up to SUPER groups per super-batch, fewer when that leaves threads idle
            per = -(-len(order) // (2 * threads))
            batch = max(lanes, min(SUPER * lanes, -(-per // lanes) * lanes))
            nt = max(1, min(threads, -(-len(order) // batch)))
            _run_lanes(order, batch, lanes, nt, *args)
            # the long windows (status ST_BAND) in row bands (seconds per group): one group
            # per super-batch, their lanes spread evenly over the threads (a banded group's
            # time grows about with its lanes, in steps of one 16-byte register:
            # :func:`_padded`), so that the round-robin of super-batches stays balanced
            part = order[st[order] == ST_BAND]
            if len(part):
                per = -(-len(part) // threads)
                v = 16 // np.dtype(T).itemsize
                lanes = batch = min(lanes, -(-per // v) * v)
                nt = max(1, min(threads, -(-len(part) // batch)))
                _run_bands(part, batch, lanes, nt, *args)
    rest = np.nonzero(st == ST_DEFER)[0]
    if len(rest):
        _traceback_many(rest, idx, codes, offs, score, ei, ej, graph.base, *gr, graph.slot,
                        graph.n_slots, mode, a, b, o, e, int(max_cells), oo, co, col_lo, st,
                        start, cells, *summary)
    _raise_status(reads, idx, st, cells, score, ei, ej, max_cells)
    flat.add(idx, ei, oo, co, start, summary)


def traceback_gpu_part(graph, reads, scoring, mode, res, max_cells=MAX_CELLS):
    """The GPU half of ``traceback_batch(..., device=True)``: traces what fits on the GPU
    and returns ``(flat, left)`` for :func:`traceback_batch` (``flat=``, ``idx=``) to
    finish on the CPU, so the two halves can run in different threads.

    ``max_cells`` is bytes of direction data (``--max-traceback-cells``); the long-window
    kernel stores 4-bit codes, so it takes windows of up to twice as many cells (and one
    launch's device memory). With the cell count as the bound, a 50 kbp read's window
    (~3.1e9 cells, 1.6 GB of codes) went to the CPU: 81 s for 4 reads on 16 H200-host
    threads, against 13 s for 100 such windows on the GPU (seeded run, same session)."""
    from . import gpu_traceback
    flat = FlatTracebacks(len(res))
    idx = np.nonzero(res.aligned())[0].astype(np.int64)
    if len(idx):
        idx = gpu_traceback.run(graph, reads, scoring, mode, res, idx, flat,
                                max_cells=min(gpu_traceback.MAX_CELLS, max_cells),
                                long_cells=2 * max_cells)   # bytes of 4-bit codes: 2 cells each
    return flat, idx


def traceback_batch(graph, reads, scoring, mode, res, max_cells=MAX_CELLS, threads=None,
                    device=False, flat=None, idx=None, col_lo=None, limits=None):
    """Trace every aligned read: parallel Numba calls over chunks of the batch
    (:func:`_traceback_many`), results kept as :class:`FlatTracebacks` in ``res`` (the
    ``res.tracebacks`` objects are built from them when first asked for).
    ``threads``: Numba threads for the calls (default: all).

    ``device``: walk on the GPU (:mod:`s2g.gpu_traceback`; long windows one block each,
    :mod:`s2g.gpu_long`) every read whose window fits ``max_cells`` and the device's
    memory; the rest here. Both give identical tracebacks.
    ``flat``/``idx``: the GPU half already done (:func:`traceback_gpu_part`): trace only
    reads ``idx`` here, into ``flat``. ``col_lo``: per read, the lowest column its
    alignment may use (seeded alignment's windows, :mod:`s2g.window`; CPU only).
    ``limits``: :class:`LaneLimits` for the CPU lanes (default: the module constants).
    """
    lim = (limits or LaneLimits()).resolved()
    if flat is None:
        if device:
            flat, idx = traceback_gpu_part(graph, reads, scoring, mode, res, max_cells)
        else:
            flat = FlatTracebacks(len(res))
            idx = np.nonzero(res.aligned())[0].astype(np.int64)
    if len(idx) == 0:
        res.set_flat(flat.finish())
        return res
    a, b, o, e = scoring.as_tuple()
    score = np.asarray(res.score, np.int64)
    ei = np.asarray(res.end_i, np.int64)
    ej = np.asarray(res.end_j, np.int64)
    col_lo = np.zeros(len(res), np.int64) if col_lo is None else np.asarray(col_lo, np.int64)
    # per-read bounds on ops (i + L + 2) and path nodes (L + 1); reads go in chunks of at
    # most CHUNK_OPS ops so the flat outputs stay bounded (5 bytes per op, 4 per node)
    L = ei[idx] + np.maximum(0, a * ei[idx] - score[idx]) // e
    n_ops = ei[idx] + L + 2
    ends = np.cumsum(n_ops)
    old = numba.get_num_threads()
    if threads:
        numba.set_num_threads(max(1, min(int(threads), numba.config.NUMBA_NUM_THREADS)))
    try:
        c0 = 0
        while c0 < len(idx):
            base_ops = ends[c0 - 1] if c0 else 0
            c1 = max(c0 + 1, int(np.searchsorted(ends, base_ops + CHUNK_OPS, side="right")))
            _traceback_chunk(graph, reads, idx[c0:c1], n_ops[c0:c1], L[c0:c1], score, ei, ej,
                             int(mode), scoring, max_cells, flat, col_lo, lim)
            c0 = c1
    finally:
        numba.set_num_threads(old)
    res.set_flat(flat.finish())
    return res
