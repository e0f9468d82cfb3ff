"""Seeded windows on the ``fast`` kernel: every window's best cell at the kernel's rate.

A batch's windows are column ranges of one *window graph* (:class:`s2g.window.WindowGraph`:
each window a component of its own). The kernel's window form (``render(..., win=True)``)
makes each unit one window: its read's codes and its own column range, so the groups of
a warp align different reads in different windows (the full-graph kernel keeps a warp's
groups on the same columns). Windows are sorted by (rows, columns) so that a warp's
groups end together; each warp runs to its longest range. The recurrence, the virtual
column before a window's sources, the slots and the end-cell order (score, then the
smallest column, then the smallest row: V0's) are the full-graph kernel's, so the result
is :func:`s2g.window.align_windows_ref`'s, field for field (tests).

One strip a window (reads of at most :data:`MAX_ROWS` bases, 32 lanes x 24 rows): a
longer read's windows are not run here (``done`` False) and go to the one-block-a-window
kernel (:mod:`s2g.trace.long`) or the CPU. The kernel keeps no direction data: the
traceback of the window a read keeps runs afterwards from its end cell
(:func:`s2g.trace.gpu.run` on the window graph), so the GPU traces one window a read
instead of walking every window it aligned (:class:`s2g.trace.gpu.WindowRun`).
"""
from __future__ import annotations

import time

import numpy as np

from ...scoring import NEG_INF
from .. import _devpool
from .constants import ST_NOT_RUN, ST_OK, WARP
from .geometry import (BLOCK, K_CHOICES, LONG_G, MAX_K, SHORT_G, _resident_groups, prmt_scores,
                       shared_slots)
from .kernel import get_kernel, shared_exchange, sim
from .tables import column_sub, column_tables, kernel_constants

#: longest read (rows) a window of which runs here: one strip of LONG_G x MAX_K rows
MAX_ROWS = LONG_G * MAX_K
#: what this process's window launches cost (``--timings``): launches, windows, cells
#: (rows x window columns), kernel seconds (CUDA events), table seconds (host), wall
PROFILE = {"launches": 0, "windows": 0, "cells": 0, "kernel": 0.0, "tables": 0.0, "wall": 0.0}


def shape(max_len: int):
    """(G, K) of a launch whose longest read has ``max_len`` bases: one strip of SHORT_G
    lanes up to SHORT_G x MAX_K rows, else of LONG_G lanes (None past :data:`MAX_ROWS`)."""
    for G in (SHORT_G, LONG_G):
        need = max(1, -(-int(max_len) // G))
        for K in K_CHOICES:
            if need <= K:
                return G, K
    return None


def window_tables(wgraph, mode, scoring):
    """The kernel's column tables of a window graph (host arrays): colinfo, mword, mptr,
    mslot, the slots a lane needs (the graph's keep-merge liveness slots + the virtual
    one)."""
    from ...graph_core import _liveness_slots, _small
    slot, n = _small(_liveness_slots, wgraph.n_nodes)(wgraph.n_nodes, wgraph.pred_ptr,
                                                      wgraph.pred_idx, True)
    a, b, o, e = scoring.as_tuple()
    ci, mw, mp, ms, _ = column_tables(wgraph.base, wgraph.node_start, wgraph.pred_ptr,
                                      wgraph.pred_idx, slot, wgraph.is_sink, int(mode), o, e,
                                      int(n))
    return ci, mw, mp, ms, int(n) + 1


def run(wgraph, codes, offsets, t_read, t_lo, t_hi, scoring, mode, events=None):
    """Best cell of every window (``t_read``, ``[t_lo, t_hi)``: the contract of
    :func:`s2g.window.align_windows_ref`): (score, end_i, end_j, done) int64 arrays and a
    bool mask; windows of reads over :data:`MAX_ROWS` bases are not run (``done`` False,
    score NEG_INF)."""
    from numba import cuda
    t_start = time.perf_counter()
    n = len(t_read)
    score = np.full(n, NEG_INF, np.int64)
    end_i = np.full(n, -1, np.int64)
    end_j = np.full(n, -1, np.int64)
    offsets = np.asarray(offsets, np.int64)
    t_read = np.asarray(t_read, np.int64)
    lens = offsets[t_read + 1] - offsets[t_read]
    done = lens <= MAX_ROWS
    run_t = np.nonzero(done & (lens > 0) & (np.asarray(t_hi) > np.asarray(t_lo)))[0]
    if len(run_t) == 0:
        return score, end_i, end_j, done
    t0 = time.perf_counter()
    ci, mw, mp, ms, n_slots = window_tables(wgraph, mode, scoring)
    PROFILE["tables"] += time.perf_counter() - t0
    a, b, o, e = scoring.as_tuple()
    prmt_sub = prmt_scores(a, b, o, e)
    dp = _devpool.pool()
    d_ci = dp.put("fastw.colinfo", ci)
    d_sub = dp.put("fastw.colsub", column_sub(ci, scoring, False, prmt_sub))
    d_mw = dp.put("fastw.mword", mw)
    d_mp = dp.put("fastw.mptr", mp)
    d_ms = dp.put("fastw.mslot", ms)
    d_codes = dp.put("fastw.codes", codes if len(codes) else np.zeros(1, np.uint8))
    d_off = dp.put("fastw.off", offsets[:-1][t_read])        # per window: its read's codes
    d_len = dp.put("fastw.len", lens.astype(np.int32))
    rng = np.empty(2 * n, np.int32)
    rng[0::2] = t_lo
    rng[1::2] = t_hi
    d_rng = dp.put("fastw.rng", rng)
    d_row0 = dp.empty("fastw.row0", 1, np.int32)              # window modes: row 0 is -o-e
    consts = kernel_constants(scoring, False)
    # short reads and long ones in two launches (8 lanes a read, then 32): a warp's groups
    # have similar rows and columns (sorted by rows, then window columns)
    width = np.asarray(t_hi, np.int64) - np.asarray(t_lo, np.int64)
    cls = lens[run_t] > SHORT_G * MAX_K
    mine = None if sim() else (cuda.event(), cuda.event())
    kernel_s = 0.0
    for c in (False, True):
        sel = run_t[cls == c]
        if len(sel) == 0:
            continue
        order = sel[np.lexsort((width[sel], lens[sel]))].astype(np.int32)
        G, K = shape(int(lens[sel].max()))
        kern = get_kernel(G, K, int(mode), prmt_sub, False, 0, True)
        block = WARP if shared_exchange() else BLOCK
        # persistent groups (each strides over windows), at most the resident ones: the
        # slot store is per lane
        groups = min(-(-len(order) // (block // G)) * (block // G), _resident_groups(G))
        groups = max(groups, block // G)
        blocks = max(1, groups * G // block)
        n_sh, sh_bytes = shared_slots(kern, G, K, n_slots, block)
        n_gl = n_slots - n_sh
        store = dp.empty("fastw.store", blocks * block * n_gl * (2 * K + 1), np.int32)
        bnd = dp.empty("fastw.bnd", 1, np.int32)
        out_s = dp.empty("fastw.out_s", n, np.int32)
        out_i = dp.empty("fastw.out_i", n, np.int32)
        out_j = dp.empty("fastw.out_j", n, np.int32)
        status = dp.put("fastw.status", np.full(n, ST_NOT_RUN, np.int32))
        d_ord = dp.put("fastw.order", order)
        if mine:
            mine[0].record()
        kern[blocks, block, cuda.default_stream(), sh_bytes](
            d_ci, d_sub, d_mw, d_mp, d_ms, d_row0, d_codes, d_off, d_len, d_ord, d_rng,
            len(order), 1, n_gl, n_sh, np.int32(a), np.int32(b), np.int32(o), np.int32(e), *consts,
            store, bnd, bnd, out_s, out_i, out_j, status)
        if mine:
            mine[1].record()
        cuda.synchronize()
        if mine:
            kernel_s += mine[0].elapsed_time(mine[1]) / 1e3
        st = status.copy_to_host()[sel]
        if (st != ST_OK).any():
            from ...errors import S2GError
            raise S2GError(f"fast windows: GPU kernel left {int((st != ST_OK).sum())} "
                           "window(s) unprocessed; please report this")
        s, i, j = (x.copy_to_host()[sel] for x in (out_s, out_i, out_j))
        ok = j >= 0
        score[sel] = np.where(ok, s, NEG_INF)
        end_i[sel] = np.where(ok, i, -1)
        end_j[sel] = np.where(ok, j, -1)
        PROFILE["launches"] += 1
    PROFILE["windows"] += len(run_t)
    PROFILE["cells"] += int((lens[run_t] * width[run_t]).sum())
    PROFILE["kernel"] += kernel_s
    PROFILE["wall"] += time.perf_counter() - t_start
    return score, end_i, end_j, done
