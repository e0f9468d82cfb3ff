"""The GPU traceback's column programs, bands and summaries (host code, Numba CPU).

The host finds each read's window exactly as the CPU traceback does (:func:`s2g.trace.common.
window`: the columns whose shortest walk to the end cell is short enough to hold the
alignment) and flattens it into a *column program*, one record per window column:

* ``CONT``: the column continues the previous window column (inside a node, or the first
  column of a node whose only predecessor is the previous window node);
* ``MERGE``: the column starts from the virtual column (or from "unreachable" in global
  mode) and takes the best of its in-window predecessors, listed by the window slot that
  holds each one's last column and by that column's window index (for the walk).

Window slots are allocated per read by liveness (a node's last column is kept from when
it is computed to its last in-window successor), so the device keeps a handful of
columns per read, not the graph's. The kernels (:mod:`s2g.trace.gpu_kernel`,
:mod:`s2g.trace.long`) run the programs; the walks they write come back here to be
summarized (:func:`summarize_all`, :func:`summarize_sel`: :func:`s2g.trace.common.summarize`,
the CPU path's own code, so both produce identical GAF).
"""
from __future__ import annotations

import numba
import numpy as np

from .._numba import NJIT
from .common import K_CONT as TB_CONT, K_VIRT as TB_VIRT
from .common import lane_program, summarize, summary_arrays, window, window_band
from .gpu_walk import K_CONT, K_MERGE, K_VIRT

#: W, merge columns with a list, list entries, slots, longest list, node-first columns with
#: predecessors (tb_common.lane_program's sizes)
N_SIZES = 6


@numba.njit(**NJIT)
def _range_window(lo, hi, node_start):
    """Window nodes and in-node column offsets of the column range ``[lo, hi)`` (a seeded
    alignment's window, :mod:`s2g.window`)."""
    v0 = np.searchsorted(node_start, lo, side="right") - 1
    v1 = np.searchsorted(node_start, hi - 1, side="right") - 1
    wn = np.arange(v0, v1 + 1)
    ws = np.maximum(0, lo - node_start[wn]).astype(np.int64)
    we = (np.minimum(node_start[wn + 1], hi) - 1 - node_start[wn]).astype(np.int64)
    return wn, ws, we


@numba.njit(**NJIT)
def _program(end_i, end_j, score, mode, a, e, graph, fill, c0, p0, prog, sizes, lo=-1, hi=-1):
    """Window of one read as a column program (see the module doc).

    Always writes ``sizes`` (N_SIZES: window columns, merge columns with a predecessor
    list, list entries, window slots, longest list, node-first columns); with ``fill``
    also writes the program from column ``c0`` and list entry ``p0`` of the flat arrays
    (list starts ``p_mpa`` are read-local). With ``lo >= 0`` the window is the column
    range ``[lo, hi)`` (seeded alignment: the kernel finds the end cell), else the
    traceback window of the end cell. ``graph`` = (base, node_start, pred_ptr, pred_idx);
    ``prog`` = the program's arrays, in :data:`PROG_NAMES` order.
    """
    base, node_start, pred_ptr, pred_idx = graph
    p_base, p_col, p_kind, p_store, p_mrank, p_mpa, p_mpn, mp_slot, mp_wcol = prog
    if lo >= 0:
        wn, ws, we = _range_window(lo, hi, node_start)
    else:
        L = end_i + max(0, a * end_i - score) // e
        v_end = np.searchsorted(node_start, end_j, side="right") - 1
        wn, ws, we = window(v_end, end_j - node_start[v_end], L, node_start, pred_ptr,
                             pred_idx)
    # the CPU lanes' program builder (tb_common.lane_program), then this kernel's base
    # column and kind bits
    lane_program(wn, ws, we, mode, (node_start, pred_ptr, pred_idx), fill, c0, p0,
                 (p_col, p_kind, p_mpa, p_mpn, p_mrank, p_store, mp_slot, mp_wcol), sizes)
    if fill:
        for w in range(c0, c0 + sizes[0]):
            p_base[w] = base[p_col[w]]
            k = p_kind[w]
            p_kind[w] = K_CONT if k == TB_CONT else (K_MERGE | K_VIRT if k == TB_VIRT else K_MERGE)


@numba.njit(parallel=True, **NJIT)
def sizes(idx, score, end_i, end_j, mode, a, e, base, node_start, pred_ptr, pred_idx,
          t_lo=None, t_hi=None):
    """Program sizes of reads ``idx`` (traceback windows of their end cells), or with
    ``t_lo``/``t_hi`` of the column ranges ``[t_lo[k], t_hi[k])`` (seeded windows)."""
    n = len(idx)
    out = np.zeros((n, N_SIZES), np.int64)
    u8 = np.empty(0, np.uint8)       # the program is not written in this pass
    i8 = np.empty(0, np.int8)
    i32 = np.empty(0, np.int32)
    for k in numba.prange(n):
        r = idx[k]
        # typed arguments, no literals: literal False/0/-1 here and True/int64 in fill_into
        # compiled _program three times (~27 s of a cold start)
        lo, hi = (np.int64(-1), np.int64(-1)) if t_lo is None else (t_lo[k], t_hi[k])
        _program(end_i[r], end_j[r], score[r], mode, a, e, (base, node_start, pred_ptr, pred_idx),
                 np.bool_(False), np.int64(0), np.int64(0),
                 (u8, i32, i8, i32, i32, i32, i32, i32, i32), out[k], lo, hi)
    return out


#: the program's arrays (names and dtypes): one entry per window column, then two per
#: multi-predecessor edge (their sizes are coff[n] and poff[n])
PROG_COLUMN = (("p_base", np.uint8), ("p_col", np.int32), ("p_kind", np.int8),
               ("p_store", np.int32), ("p_mrank", np.int32), ("p_mpa", np.int32),
               ("p_mpn", np.int32))
PROG_EDGE = (("mp_slot", np.int32), ("mp_wcol", np.int32))
PROG_NAMES = [nm for nm, _ in PROG_COLUMN + PROG_EDGE]


@numba.njit(parallel=True, **NJIT)
def band_rows(coff, poff, rows, score, a, e, p_kind, p_mpa, p_mpn, mp_wcol, blo, bhi):
    """Rows ``blo[w]..bhi[w]`` of window column ``w`` that a cell of an optimal alignment
    ending at the window's end cell (row ``rows[k]``, its last column) can take.

    From column ``j`` such an alignment walks ``s`` column steps to the end, with ``dmin(j)
    <= s <= lmax(j)`` (the shortest and longest walks to the end inside the window, which
    holds every optimal alignment), each step a diagonal or a deletion, and each row it
    moves down a diagonal or an insertion: ``i_end - i = s - deletions + insertions``. A
    deleted base costs at least ``e`` and an inserted one ``e`` and a match not made, so
    with ``slack = a * i_end - score``, deletions <= slack // e and insertions <= slack //
    (a + e) (the window's own bound, :mod:`s2g.traceback`): ``i_end - lmax(j) - I <= i <=
    i_end - dmin(j) + D``, widened by one row each way. Every cell of every optimal
    alignment lies in the band, so every value the traceback compares there, and so every
    choice it makes, is the same whether the cells outside are computed or taken as
    unreachable (the argument that makes the window exact); columns no walk to the end
    leaves get an empty band."""
    for k in numba.prange(len(rows)):
        c0 = coff[k]
        c1 = coff[k + 1]
        R = rows[k]
        slack = max(np.int64(0), a * R - score[k])
        window_band(p_kind[c0:c1], p_mpa[c0:c1], p_mpn[c0:c1], mp_wcol[poff[k]:], R,
                    slack // max(e, 1), slack // max(a + e, 1), blo[c0:c1], bhi[c0:c1])


def _prog_arrays(coff, poff, empty=np.empty):
    """Empty program arrays for offsets ``coff``/``poff``; ``empty(name, size, dtype)``
    (e.g. pinned host buffers) or ``np.empty``."""
    nc, ne = int(coff[-1]), max(int(poff[-1]), 1)
    if empty is np.empty:
        return [np.empty(nc, dt) for _, dt in PROG_COLUMN] + \
            [np.empty(ne, dt) for _, dt in PROG_EDGE]
    return [empty(nm, nc, dt) for nm, dt in PROG_COLUMN] + \
        [empty(nm, ne, dt) for nm, dt in PROG_EDGE]


def fill(idx, score, end_i, end_j, mode, a, e, base, node_start, pred_ptr, pred_idx, coff, poff,
         t_lo=None, t_hi=None, empty=np.empty):
    """The programs whose sizes :func:`sizes` gave (same arguments), flat, in arrays from
    ``empty`` (see :func:`_prog_arrays`)."""
    prog = _prog_arrays(coff, poff, empty)
    win = t_lo is not None
    if not win:
        t_lo = t_hi = np.zeros(1, np.int64)
    fill_into(idx, score, end_i, end_j, mode, a, e, (base, node_start, pred_ptr, pred_idx), coff,
              poff, win, t_lo, t_hi, tuple(prog))
    return prog


@numba.njit(parallel=True, **NJIT)
def fill_into(idx, score, end_i, end_j, mode, a, e, graph, coff, poff, win, t_lo, t_hi, prog):
    """:func:`fill`'s work: the programs into the arrays ``prog`` (:data:`PROG_NAMES` order);
    ``graph`` = (base, node_start, pred_ptr, pred_idx)."""
    n = len(idx)
    sizes = np.zeros((n, N_SIZES), np.int64)
    for k in numba.prange(n):
        r = idx[k]
        lo, hi = (t_lo[k], t_hi[k]) if win else (np.int64(-1), np.int64(-1))
        _program(end_i[r], end_j[r], score[r], mode, a, e, graph, np.bool_(True), coff[k],
                 poff[k], prog, sizes[k], lo, hi)


@numba.njit(parallel=True, **NJIT)
def gather_codes(codes_flat, offs, idx, qoff, out):
    """The codes of reads ``idx``, packed at ``qoff`` into ``out``."""
    for t in numba.prange(len(idx)):
        r = idx[t]
        a = offs[r]
        for x in range(offs[r + 1] - a):
            out[qoff[t] + x] = codes_flat[a + x]



@numba.njit(parallel=True, **NJIT)
def summarize_all(ops, cols, nn, end_j, node_start, oo, co):
    n = len(end_j)
    run_op, run_len, n_runs, path, n_path, geo, counts = summary_arrays(n, oo, co)
    for k in numba.prange(n):
        op_r = ops[oo[k]:oo[k] + nn[2 * k]]
        col_r = cols[co[k]:co[k] + nn[2 * k + 1]].astype(np.int64)
        summarize(k, op_r, col_r, end_j[k], node_start, oo, co, run_op, run_len, n_runs,
                   path, n_path, geo, counts)
    return run_op, run_len, n_runs, path, n_path, geo, counts



@numba.njit(parallel=True, **NJIT)
def summarize_sel(ops, cols, nn, oo, co, sel, end_j, node_start, oo2, co2):
    """:func:`~s2g.trace.common.summarize` of the walks ``sel`` of one chunk's outputs, into rows 0.. of
    fresh flat arrays with offsets ``oo2``/``co2``."""
    n = len(sel)
    run_op, run_len, n_runs, path, n_path, geo, counts = summary_arrays(n, oo2, co2)
    for k in numba.prange(n):
        t = sel[k]
        op_r = ops[oo[t]:oo[t] + nn[2 * t]]
        col_r = cols[co[t]:co[t] + nn[2 * t + 1]].astype(np.int64)
        summarize(k, op_r, col_r, end_j[k], node_start, oo2, co2, run_op, run_len, n_runs,
                   path, n_path, geo, counts)
    return run_op, run_len, n_runs, path, n_path, geo, counts
