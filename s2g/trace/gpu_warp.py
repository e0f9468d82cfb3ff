"""Traceback of the ``fast`` kernel's chosen seeded windows at the score kernel's rate
(issue #42; knob ``gpu_tb_warp``; the plan and its proof: ``docs/plans/warp_traceback.md``).

A chosen window is run again, from its first column to its end cell's, on the window
form of the ``fast`` kernel (8 lanes a window, the same tables, made on the GPU) in its
traceback form (:mod:`s2g.variants.fast.render_tb`): the same cells plus every cell's
4-bit direction code and each merge row's predecessor choices. One thread a window then
walks back from the end cell (:mod:`s2g.trace.warp_walk`). No column program is made on
the host, and a launch's inputs are a few words a window.

Exact: the kernel's best cell over the rerun (V0's order) must be the end cell the score
pass found, with its score (else the one-line internal error of the other tracebacks);
the walk's choices are the CPU traceback's (same tie order), and the values it compares
are those of the traceback window wherever they matter (the plan's section 4; tests
compare the GAF with the CPU's on tie-rich scorings).
"""
from __future__ import annotations

import time

import numpy as np

from ..config import settings
from ..counters import Counters
from ..dp import LOCAL, SEMIGLOBAL
from ..errors import S2GError
from ..variants import _devpool, _lean
from .common import ST_MISMATCH, ST_OK, raise_status
from .gpu_program import summarize_all
from .gpu_walk import cum

#: seconds and counts, summed over calls (``--timings``)
PROFILE = Counters({"windows": 0, "launches": 0, "cells": 0, "kernel": 0.0, "walk": 0.0,
                    "host": 0.0, "wall": 0.0, "summaries": 0})
#: the most predecessors of a merge whose choice a byte can name
MAX_LIST = 254


def fits(end_i, mode) -> np.ndarray:
    """The rows (end rows ``end_i``) this path can trace: local or semiglobal, 1 to
    8 x 24 rows (one strip of the 8-lane window form)."""
    from ..variants.fast.geometry import MAX_K, SHORT_G
    end_i = np.asarray(end_i, np.int64)
    if int(mode) not in (LOCAL, SEMIGLOBAL):
        return np.zeros(len(end_i), np.bool_)
    return (end_i >= 1) & (end_i <= SHORT_G * MAX_K)


def form_shape():
    """(G, K) of every launch of the traceback form: one strip of SHORT_G lanes x MAX_K
    rows whatever the windows' end rows, so that a run compiles one form (its first
    compile took 47-80 s on the H100 host; by end row, 150 bp reads needed K = 19 and
    24, two compiles, and warm-up compiled the first only, session 59). Shorter windows
    pay rows they do not use: the form is ~0.1 s of a 1,000,000-read run."""
    from ..variants.fast.geometry import MAX_K, SHORT_G
    return SHORT_G, MAX_K


def unit_bytes(nc, nm, rows, L, G, K):
    """Device bytes a window takes: codes (its steps x words x lanes), choices and masks
    (per merge-list entry), walk outputs."""
    nw = (K + 7) // 8
    return ((nc + G - 1) * nw * G * 4 + nm * G * (2 * K + 8) + (rows + L + 2) + 4 * (L + 1)
            + 96)


def run(wg, reads, scoring, mode, tres, tasks, rows, out):
    """Tracebacks of rows ``rows`` of ``tres`` (end cells in window-graph columns, the
    ``fast`` kernel's) whose windows are tasks ``tasks`` of the
    :class:`~s2g.window.WindowGraph` ``wg``, into ``out`` (a
    :class:`~s2g.traceback.FlatTracebacks`; summaries deferred as the other GPU tracebacks'
    are); returns the rows it did not trace (:func:`fits`, or a merge of more than
    :data:`MAX_LIST` predecessors)."""
    t_start = time.perf_counter()
    rows = np.asarray(rows, np.int64)
    tasks = np.asarray(tasks, np.int64)
    ei_all = np.asarray(tres.end_i, np.int64)
    ej_all = np.asarray(tres.end_j, np.int64)
    sc_all = np.asarray(tres.score, np.int64)
    ok = fits(ei_all[rows], mode)
    from ..variants.fast.tables import window_node_parts
    ns, ptr, idx, slot, nsl, off = window_node_parts(wg.graph, wg.piece_at)
    if len(ns) > 1 and int(np.diff(ptr).max(initial=0)) > MAX_LIST:
        ok[:] = False
    left = rows[~ok]
    rows, tasks = rows[ok], tasks[ok]
    if len(rows) == 0:
        return left
    a, b, o, e = scoring.as_tuple()
    ei, ej, sc = ei_all[rows], ej_all[rows], sc_all[rows]
    cb = np.asarray(wg.t_lo, np.int64)[tasks]
    nc = ej + 1 - cb
    v_end = np.searchsorted(ns, ej, side="right") - 1
    mp0 = off[np.asarray(wg.piece_at, np.int64)[tasks]]
    nm = off[v_end + 1] - mp0
    L = ei + np.maximum(0, a * ei - sc) // e
    order = np.lexsort((nc, ei))              # a warp's groups end together
    nbytes = np.cumsum(unit_bytes(nc, nm, ei, L, *form_shape())[order])
    budget = settings().gpu_tbw_chunk_bytes
    dp = _devpool.pool()
    from ..variants.fast.geometry import prmt_scores
    from ..variants.fast.wtables_gpu import device_tables
    t0 = time.perf_counter()
    prmt = prmt_scores(a, b, o, e)
    *tab, n_slots, csr = device_tables(dp, wg.graph, wg.piece_at, prmt, tag="tbw", csr=True)
    d_codes = dp.put("tbw.codes", reads.codes_flat if len(reads.codes_flat)
                     else np.zeros(1, np.uint8))
    PROFILE.add(host=time.perf_counter() - t0)
    offs = np.asarray(reads.offsets, np.int64)
    c0 = 0
    while c0 < len(order):
        base = nbytes[c0 - 1] if c0 else 0
        c1 = max(c0 + 1, int(np.searchsorted(nbytes, base + budget, side="right")))
        sel = order[c0:c1]
        _launch(dp, tab, n_slots, csr, d_codes, scoring, prmt, int(mode),
                (rows[sel], cb[sel], nc[sel], ei[sel], ej[sel], sc[sel], v_end[sel], mp0[sel],
                 nm[sel], L[sel], offs[rows[sel]]), reads, tres, out, wg.graph.node_start)
        c0 = c1
    PROFILE.add(windows=len(rows), wall=time.perf_counter() - t_start)
    return left


def _launch(dp, tab, n_slots, csr, d_codes, scoring, prmt, mode, units, reads, tres, out,
            node_start):
    """One launch of the traceback form and one of the walk over ``units`` (rows, first
    column, columns, end row, end column, score, end node, first merge-list offset, merge
    entries, walk bound L, read offset: arrays, a window each); ``prmt``: the tables'
    substitution form (:func:`~s2g.variants.fast.geometry.prmt_scores`)."""
    from ..variants.fast.constants import ST_NOT_RUN
    from ..variants.fast.kernel import get_kernel, sim
    from ..variants.fast.tables import kernel_constants
    from ..variants.fast.windows import launch_shape
    from . import warp_walk
    cuda = _lean.api()
    t0 = time.perf_counter()
    rws, cb, nc, ei, ej, sc, v_end, mp0, nm, L, roff = units
    n = len(rws)
    a, b, o, e = scoring.as_tuple()
    G, K = form_shape()
    nw = (K + 7) // 8
    doffs = cum((nc + G - 1) * nw * G).astype(np.uint64)
    moffs = cum(nm).astype(np.uint64)
    oo = cum(ei + L + 2)
    co = cum(L + 1)
    rng = np.empty(2 * n, np.int32)
    rng[0::2] = cb
    rng[1::2] = cb + nc
    put = dp.put
    d_roff, d_len, d_rng = put("tbw.roff", roff), put("tbw.len", ei.astype(np.int32)), put(
        "tbw.rng", rng)
    d_ord = put("tbw.order", np.arange(n, dtype=np.int32))
    d_doff, d_moff = put("tbw.doff", doffs[:-1].copy()), put("tbw.moff", moffs[:-1].copy())
    dirs = dp.empty("tbw.dirs", max(int(doffs[-1]), 1), np.int32)
    n_m = max(int(moffs[-1]), 1)
    dch = dp.empty("tbw.dch", n_m * G * K, np.uint8)
    ech = dp.empty("tbw.ech", n_m * G * K, np.uint8)
    mch = dp.empty("tbw.mch", n_m * G * 2, np.int32)
    out_s, out_i, out_j = (dp.empty(f"tbw.out_{x}", n, np.int32) for x in "sij")
    status = put("tbw.status", np.full(n, ST_NOT_RUN, np.int32))
    kern = get_kernel(G, K, mode, prmt, False, 0, True, True)
    block, blocks, n_sh, sh_bytes, n_gl = launch_shape(kern, G, K, n, n_slots)
    store = dp.empty("tbw.store", blocks * block * n_gl * (2 * K + 1), np.int32)
    bnd = dp.empty("tbw.bnd", 1, np.int32)
    row0 = dp.empty("tbw.row0", 1, np.int32)
    d_ci, d_sub, d_mw, d_mp, d_ms = tab
    consts = kernel_constants(scoring, False)
    wargs = [put("tbw.mp0", mp0.astype(np.int32)), put("tbw.cb", cb.astype(np.int32)),
             put("tbw.nc", nc.astype(np.int32)), put("tbw.vend", v_end.astype(np.int32)),
             d_len, d_roff, d_ci, d_mp, *csr, d_codes, put("tbw.oo", oo), put("tbw.co", co)]
    ops = dp.empty("tbw.ops", max(int(oo[-1]), 1), np.uint8)
    cols = dp.empty("tbw.cols", max(int(co[-1]), 1), np.int32)
    nn = dp.empty("tbw.nn", 2 * n, np.int32)
    start = dp.empty("tbw.start", n, np.int32)
    wst = put("tbw.wst", np.full(n, -1, np.int32))
    on_device = settings().gpu_tb_summary
    if on_device:               # CIGAR runs and paths made on the GPU (gpu_summary)
        from . import gpu_summary
        d_ej = put("tbw.ej", ej.astype(np.int32))
        meta = dp.empty("tbw.meta", gpu_summary.META * n, np.int32)
        padded = (dp.empty("tbw.s_op", max(int(oo[-1]), 1), np.uint8),
                  dp.empty("tbw.s_len", max(int(oo[-1]), 1), np.int32),
                  dp.empty("tbw.s_path", max(int(co[-1]), 1), np.int32))
    PROFILE.add(host=time.perf_counter() - t0)
    ev = None if sim() else _devpool.events("tbw", 3)
    if ev:
        ev[0].record()
    try:
        kern[blocks, block, cuda.default_stream(), sh_bytes](
            d_ci, d_sub, d_mw, d_mp, d_ms, row0, d_codes, d_roff, d_len, d_ord, d_rng, n, 1,
            n_gl, n_sh, np.int32(a), np.int32(b), np.int32(o), np.int32(e), *consts, store,
            bnd, bnd, out_s, out_i, out_j, status, dirs, dch, ech, mch, d_doff, d_moff)
        if ev:
            ev[1].record()
        warp_walk.kernel()[-(-n // warp_walk.BLOCK), warp_walk.BLOCK](
            np.int32(n), np.int32(mode), np.int32(G), np.int32(K), np.int32(nw), dirs, dch,
            ech, mch, d_doff, d_moff, *wargs, ops, cols, nn, start, wst)
        if on_device:           # (the walk's time includes the summaries')
            summary = gpu_summary.kernels()[0]
            summary[-(-n // gpu_summary.BLOCK), gpu_summary.BLOCK](
                np.int32(n), ops, cols, nn, wst, wargs[-2], wargs[-1], d_ej, csr[0], *padded,
                meta)
    except Exception as exc:                        # noqa: BLE001 - the driver's errors
        raise RuntimeError(f"traceback form: launch of {n} windows (G={G}, K={K}, "
                           f"{n_slots} slots) failed: {exc}") from exc
    if ev:
        ev[2].record()
    st = status.copy_to_host()
    if ev:
        PROFILE.add(kernel=ev[0].elapsed_time(ev[1]) / 1e3, walk=ev[1].elapsed_time(ev[2]) / 1e3)
    got = [x.copy_to_host() for x in (out_s, out_i, out_j, wst)]
    if on_device:
        h_start = start.copy_to_host()
        packed = _packed(dp, n, wargs[-2], wargs[-1], meta, padded)
    else:
        h_ops, h_cols, h_nn, h_start = (x.copy_to_host() for x in (ops, cols, nn, start))
    PROFILE.add(launches=1, cells=int((ei * nc).sum()))
    if (st != ST_OK).any() or (got[3] != ST_OK).any():
        raise S2GError("internal error: the GPU traceback form did not finish a window; "
                       "please report this")
    bad = (got[0] != sc) | (got[1] != ei) | (got[2] != ej)
    if bad.any():
        raise_status(reads, rws, np.where(bad, ST_MISMATCH, ST_OK), nc * ei, tres.score,
                     tres.end_i, tres.end_j, 0)
    ei_full = np.asarray(tres.end_i, np.int64)
    if on_device:
        out.add_packed(rws, ei_full, h_start, *packed)
        return

    def summarize():        # CIGAR runs and paths, when the tracebacks are finished
        summary = summarize_all(h_ops, h_cols, h_nn, ej, node_start, oo, co)
        out.add(rws, ei_full, oo, co, h_start, summary)

    if settings().late_summary:
        out.defer(summarize)
    else:                   # the traceback threads (finish_workers) have time to spare
        summarize()


def _packed(dp, n, d_oo, d_co, meta, padded):
    """The GPU summaries of a launch's ``n`` walks, packed and copied back: (run offsets,
    path offsets, counts (n x META), run ops, run lengths, path nodes)."""
    from . import gpu_summary
    h_meta = meta.copy_to_host().reshape(n, gpu_summary.META)
    run_at = cum(h_meta[:, 0])
    path_at = cum(h_meta[:, 1])
    n_r, n_p = int(run_at[-1]), int(path_at[-1])
    p_op = dp.empty("tbw.p_op", max(n_r, 1), np.uint8)
    p_len = dp.empty("tbw.p_len", max(n_r, 1), np.int32)
    p_path = dp.empty("tbw.p_path", max(n_p, 1), np.int32)
    gpu_summary.kernels()[1][-(-n // gpu_summary.BLOCK), gpu_summary.BLOCK](
        np.int32(n), d_oo, d_co, meta, dp.put("tbw.run_at", run_at[:-1].copy()),
        dp.put("tbw.path_at", path_at[:-1].copy()), *padded, p_op, p_len, p_path)
    PROFILE.add(summaries=n)
    return (run_at[:-1], path_at[:-1], h_meta, p_op.copy_to_host()[:n_r],
            p_len.copy_to_host()[:n_r], p_path.copy_to_host()[:n_p])
