"""Traceback on the GPU: the window DP with 4-bit direction codes, walked on the device.

The host finds each read's window exactly as the CPU traceback does (:func:`s2g.traceback.
_window`: the columns whose shortest walk to the end cell is short enough to hold the
alignment) and flattens it into a *column program*, one record per window column:

* ``CONT``: the column continues the previous window column (inside a node, or the first
  column of a node whose only predecessor is the previous window node);
* ``MERGE``: the column starts from the virtual column (or from "unreachable" in global
  mode) and takes the best of its in-window predecessors, listed by the window slot that
  holds each one's last column and by that column's window index (for the walk).

Window slots are allocated per read by liveness (a node's last column is kept from when
it is computed to its last in-window successor), so the device keeps a handful of
columns per read, not the graph's. One CUDA thread per read then runs the program over
rows ``0..i_end`` (the cell is :func:`s2g.tb_common.tb_cell`, the CPU traceback's own,
with its tie order and sentinels, in int32), storing 4 bits per cell (H's source, E
and F extension) and, at merge columns, which predecessor gave the diagonal and the
deletion; checks that the end cell reproduces the score; and walks back to the start,
writing the reversed ops and consumed columns. Only those come back to the host (a few
hundred bytes per read, not the window), where :func:`s2g.tb_common._summarize` turns them
into CIGAR runs and path — the same code the CPU path uses, so both produce identical
GAF; that summary is deferred to ``FlatTracebacks.finish`` (in ``s2g align``, the
finisher thread). The column scratch (H and E of the current column) is interleaved
across the chunk's reads so that a warp's loads coalesce (kernel 1.27 -> 0.99 us per
read, H200).

Reads whose window exceeds :data:`MAX_CELLS` cells (long reads: one thread would walk
millions of cells) run on :mod:`s2g.gpu_long`'s kernel (one thread block per window,
the same program, cell and walk) up to the caller's bound and one launch's device
memory; the rest are left to the CPU traceback, which splits long windows into row
bands; :func:`run` returns them.
"""
from __future__ import annotations

import itertools
import os
import threading
import time
from concurrent.futures import Future

import numba
import numpy as np
from numba import types

from ._numba import NJIT
from .dp import E_EXT, GLOBAL, H_DEL, H_START, LOCAL
from .errors import S2GError
from .gpu_walk import K_CONT, K_MERGE, K_VIRT, cum, walk_dev
from .scoring import NEG_INF
from .tb_common import K_CONT as TB_CONT, K_VIRT as TB_VIRT
from .tb_common import (ST_MISMATCH, ST_OK, _raise_status, _summarize, _summary_arrays, _window,
                        lane_program, tb_cell)
from .variants import _devpool

#: largest window (cells) traced on the GPU; larger ones go to the CPU's banded traceback
MAX_CELLS = int(os.environ.get("S2G_GPU_TB_MAX_CELLS", 1 << 21))
#: the same bound for seeded windows (:func:`run_windows`): larger windows run on the CPU
WINDOW_MAX_CELLS = int(os.environ.get("S2G_GPU_WINDOW_MAX_CELLS", MAX_CELLS))
#: largest seeded window (cells) for the long-window kernel (:mod:`s2g.gpu_long`)
WINDOW_LONG_CELLS = int(os.environ.get("S2G_GPU_WINDOW_LONG_CELLS", 1 << 34))
#: device bytes for one chunk of reads (programs, direction codes, scratch, outputs)
CHUNK_BYTES = int(os.environ.get("S2G_GPU_TB_CHUNK_BYTES", 1 << 30))
#: merge columns with more in-window predecessors than this go to the CPU (int16 choices)
MAX_PREDS = 32767
BLOCK = 128
#: seconds per stage, summed over calls (bench/gpu_traceback_profile.py reads it)
PROFILE = {"sizes": 0.0, "fill": 0.0, "device": 0.0, "kernel": 0.0, "summary": 0.0, "store": 0.0,
           "band": 0.0, "long_launches": 0, "long_windows": 0, "long_cells": 0, "long_kernel": 0.0}
#: S2G_LONG_LOG=1: one line per long-window launch on stderr (windows, cells, ms, GCUPS)
LONG_LOG = os.environ.get("S2G_LONG_LOG", "") not in ("", "0")
#: long windows: each round of strips computes only the columns whose band (_band_rows)
#: meets its rows (``S2G_LONG_BAND=0``: every column, for comparison)
LONG_BAND = os.environ.get("S2G_LONG_BAND", "1") != "0"
#: column scratch interleaved across the reads of a chunk (coalesced) or per read
INTERLEAVE = os.environ.get("S2G_GPU_TB_INTERLEAVE", "1") != "0"

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
def _program(end_i, end_j, score, mode, a, e, base, node_start, pred_ptr, pred_idx, fill,
             c0, p0, p_base, p_col, p_kind, p_store, p_mrank, p_mpa, p_mpn, mp_slot, mp_wcol,
             sizes, lo=-1, hi=-1):
    """Window of one read as a column program (see the module doc).

    Always writes ``sizes`` (N_SIZES: window columns, merge columns with a predecessor
    list, list entries, window slots, longest list, node-first columns); with ``fill``
    also writes the program from column ``c0`` and list entry ``p0`` of the flat arrays
    (list starts ``p_mpa`` are read-local). With ``lo >= 0`` the window is the column
    range ``[lo, hi)`` (seeded alignment: the kernel finds the end cell), else the
    traceback window of the end cell.
    """
    if lo >= 0:
        wn, ws, we = _range_window(lo, hi, node_start)
    else:
        L = end_i + max(0, a * end_i - score) // e
        v_end = np.searchsorted(node_start, end_j, side="right") - 1
        wn, ws, we = _window(v_end, end_j - node_start[v_end], L, node_start, pred_ptr,
                             pred_idx)
    # the CPU lanes' program builder (tb_common.lane_program), then this kernel's base
    # column and kind bits
    lane_program(wn, ws, we, mode, node_start, pred_ptr, pred_idx, fill, c0, p0, p_col, p_kind,
                  p_mpa, p_mpn, p_mrank, p_store, mp_slot, mp_wcol, sizes)
    if fill:
        for w in range(c0, c0 + sizes[0]):
            p_base[w] = base[p_col[w]]
            k = p_kind[w]
            p_kind[w] = K_CONT if k == TB_CONT else (K_MERGE | K_VIRT if k == TB_VIRT else K_MERGE)


@numba.njit(parallel=True, **NJIT)
def _sizes(idx, score, end_i, end_j, mode, a, e, base, node_start, pred_ptr, pred_idx,
           t_lo=None, t_hi=None):
    """Program sizes of reads ``idx`` (traceback windows of their end cells), or with
    ``t_lo``/``t_hi`` of the column ranges ``[t_lo[k], t_hi[k])`` (seeded windows)."""
    n = len(idx)
    sizes = np.zeros((n, N_SIZES), np.int64)
    u8 = np.empty(0, np.uint8)       # the program is not written in this pass
    i8 = np.empty(0, np.int8)
    i32 = np.empty(0, np.int32)
    for k in numba.prange(n):
        r = idx[k]
        # typed arguments, no literals: literal False/0/-1 here and True/int64 in _fill_into
        # compiled _program three times (~27 s of a cold start)
        lo, hi = (np.int64(-1), np.int64(-1)) if t_lo is None else (t_lo[k], t_hi[k])
        _program(end_i[r], end_j[r], score[r], mode, a, e, base, node_start, pred_ptr, pred_idx,
                 np.bool_(False), np.int64(0), np.int64(0), u8, i32, i8, i32, i32, i32, i32, i32,
                 i32, sizes[k], lo, hi)
    return sizes


#: the program's arrays (names and dtypes): one entry per window column, then two per
#: multi-predecessor edge (their sizes are coff[n] and poff[n])
PROG_COLUMN = (("p_base", np.uint8), ("p_col", np.int32), ("p_kind", np.int8),
               ("p_store", np.int32), ("p_mrank", np.int32), ("p_mpa", np.int32),
               ("p_mpn", np.int32))
PROG_EDGE = (("mp_slot", np.int32), ("mp_wcol", np.int32))
PROG_NAMES = [nm for nm, _ in PROG_COLUMN + PROG_EDGE]


@numba.njit(parallel=True, **NJIT)
def _band_rows(coff, poff, rows, score, a, e, p_kind, p_mpa, p_mpn, mp_wcol, blo, bhi):
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
    big = np.int64(1) << 40
    for k in numba.prange(len(rows)):
        c0 = coff[k]
        W = coff[k + 1] - c0
        p0 = poff[k]
        R = rows[k]
        slack = max(np.int64(0), a * R - score[k])
        D = slack // max(e, 1)
        I = slack // max(a + e, 1)
        dmin = np.full(W, big, np.int64)
        lmax = np.full(W, np.int64(-1), np.int64)
        if W > 0:
            dmin[W - 1] = 0
            lmax[W - 1] = 0
        for w in range(W - 1, -1, -1):
            if dmin[w] == big:
                continue
            if p_kind[c0 + w] == K_CONT:
                if w > 0:
                    dmin[w - 1] = min(dmin[w - 1], dmin[w] + 1)
                    lmax[w - 1] = max(lmax[w - 1], lmax[w] + 1)
            else:
                ma = p0 + p_mpa[c0 + w]
                for x in range(p_mpn[c0 + w]):
                    q = mp_wcol[ma + x]
                    dmin[q] = min(dmin[q], dmin[w] + 1)
                    lmax[q] = max(lmax[q], lmax[w] + 1)
        for w in range(W):
            if dmin[w] == big:
                blo[c0 + w] = R + 1
                bhi[c0 + w] = -1
            else:
                blo[c0 + w] = max(np.int64(0), R - lmax[w] - I - 1)
                bhi[c0 + w] = min(R, R - dmin[w] + D + 1)


def _prog_arrays(coff, poff, empty=np.empty):
    """Empty program arrays for offsets ``coff``/``poff``; ``empty(name, size, dtype)``
    (e.g. pinned host buffers) or ``np.empty``."""
    nc, ne = int(coff[-1]), max(int(poff[-1]), 1)
    if empty is np.empty:
        return [np.empty(nc, dt) for _, dt in PROG_COLUMN] + \
            [np.empty(ne, dt) for _, dt in PROG_EDGE]
    return [empty(nm, nc, dt) for nm, dt in PROG_COLUMN] + \
        [empty(nm, ne, dt) for nm, dt in PROG_EDGE]


def _fill(idx, score, end_i, end_j, mode, a, e, base, node_start, pred_ptr, pred_idx, coff, poff,
          t_lo=None, t_hi=None, empty=np.empty):
    """The programs whose sizes :func:`_sizes` gave (same arguments), flat, in arrays from
    ``empty`` (see :func:`_prog_arrays`)."""
    prog = _prog_arrays(coff, poff, empty)
    win = t_lo is not None
    if not win:
        t_lo = t_hi = np.zeros(1, np.int64)
    _fill_into(idx, score, end_i, end_j, mode, a, e, base, node_start, pred_ptr, pred_idx, coff,
               poff, win, t_lo, t_hi, *prog)
    return prog


@numba.njit(parallel=True, **NJIT)
def _fill_into(idx, score, end_i, end_j, mode, a, e, base, node_start, pred_ptr, pred_idx, coff,
               poff, win, t_lo, t_hi, p_base, p_col, p_kind, p_store, p_mrank, p_mpa, p_mpn,
               mp_slot, mp_wcol):
    n = len(idx)
    sizes = np.zeros((n, N_SIZES), np.int64)
    for k in numba.prange(n):
        r = idx[k]
        lo, hi = (t_lo[k], t_hi[k]) if win else (np.int64(-1), np.int64(-1))
        _program(end_i[r], end_j[r], score[r], mode, a, e, base, node_start, pred_ptr, pred_idx,
                 np.bool_(True), coff[k], poff[k], p_base, p_col, p_kind, p_store, p_mrank, p_mpa, p_mpn,
                 mp_slot, mp_wcol, sizes[k], lo, hi)


@numba.njit(parallel=True, **NJIT)
def _gather_codes(codes_flat, offs, idx, qoff, out):
    """The codes of reads ``idx``, packed at ``qoff`` into ``out``."""
    for t in numba.prange(len(idx)):
        r = idx[t]
        a = offs[r]
        for x in range(offs[r + 1] - a):
            out[qoff[t] + x] = codes_flat[a + x]


def _tb_body(n, mode, a, b, o, e, hs, codes, qoff, rows_a, score_a, coff, poff, hoff, soff, doff, xoff,
             oo, co, p_base, p_col, p_kind, p_store, p_mrank, p_mpa, p_mpn, mp_slot, mp_wcol,
             CH, CE, SH, SE, dirs, dpred, epred, out_ops, out_cols, out_n, out_start, out_st,
             find, out_best):
    """One thread per read: the window sweep with direction codes, then the walk.

    ``find``: the window is a seeded alignment's column range and the end cell is the
    best cell in it (local: any row, semiglobal: the last; V0's tie rule: the first in
    column order, then row order, strictly better replaces), written to ``out_best``
    (score, row, window column; score NEG_INF when the window holds no alignment);
    otherwise the end cell is the last column's row ``rows_a`` and must equal ``score_a``.
    """
    r = cuda.grid(1)
    if r >= n:
        return
    R = rows_a[r]
    R1 = R + 1
    stride = (R + 2) // 2
    c0 = coff[r]
    W = coff[r + 1] - c0
    p0 = poff[r]
    h0 = hoff[r]
    s0 = soff[r]
    d0 = doff[r]
    x0 = xoff[r]
    q0 = qoff[r]
    oe = o + e
    best = 0 if mode == LOCAL else NEG_INF
    bw = -1
    bi = -1
    for w in range(W):
        gw = c0 + w
        kind = p_kind[gw]
        gb = p_base[gw]
        st = p_store[gw]
        mr = p_mrank[gw]
        ma = p0 + p_mpa[gw]
        mn = p_mpn[gw]
        diag = NEG_INF
        hup = NEG_INF
        f = NEG_INF
        byte = 0
        for t in range(R1):
            if kind == K_CONT:
                ph = CH[h0 + t * hs]
                ho = ph - oe
                ex = CE[h0 + t * hs] - e
                pe = max(ho, ex)
                px = ex > ho
            else:
                if kind & K_VIRT:
                    ph = 0 if (mode == LOCAL or t == 0) else -(o + e * t)
                    pe = ph - oe
                else:
                    ph = NEG_INF
                    pe = NEG_INF
                px = False
                dsel = -1
                esel = -1
                for u in range(mn):
                    sp = s0 + mp_slot[ma + u] * R1 + t
                    hp = SH[sp]
                    ho = hp - oe
                    ex = SE[sp] - e
                    ce = max(ho, ex)
                    if hp > ph or (hp == ph and dsel == -1):
                        ph = hp
                        dsel = u
                    if ce > pe or (ce == pe and esel == -1 and ce > NEG_INF):
                        pe = ce
                        px = ex > ho
                        esel = u
                if mr >= 0:
                    dpred[x0 + mr * R1 + t] = dsel
                    epred[x0 + mr * R1 + t] = esel
            if t == 0:
                if mode == GLOBAL:
                    h = pe
                    ev = pe
                    d = H_DEL | (E_EXT if px else 0)
                else:
                    h = 0
                    ev = NEG_INF
                    d = H_START
                f = NEG_INF
            else:
                ev = pe
                h, f, d = tb_cell(diag, ev, hup, f, codes[q0 + t - 1], gb, mode, a, b, o, e)
                if px:
                    d |= E_EXT
            if find and t > 0 and h > best and (mode == LOCAL or t == R):
                best = h
                bw = w
                bi = t
            diag = ph
            hup = h
            CH[h0 + t * hs] = h
            CE[h0 + t * hs] = ev
            if st >= 0:
                SH[s0 + st * R1 + t] = h
                SE[s0 + st * R1 + t] = ev
            if t & 1:
                dirs[d0 + w * stride + (t >> 1)] = byte | (d << 4)
            else:
                byte = d
                if t == R:
                    dirs[d0 + w * stride + (t >> 1)] = byte
    if find:
        out_best[3 * r] = best if bw >= 0 else NEG_INF
        out_best[3 * r + 1] = bi
        out_best[3 * r + 2] = bw
        if bw < 0:
            out_n[2 * r] = 0
            out_n[2 * r + 1] = 0
            out_start[r] = 0
            out_st[r] = ST_OK
            return
        w = bw
        i = bi
    else:
        if W == 0 or CH[h0 + R * hs] != score_a[r]:
            out_st[r] = ST_MISMATCH
            return
        w = W - 1                   # walk back from the end cell (last column, row R)
        i = R
    walk_dev(r, w, i, mode, R1, stride, c0, p0, d0, x0, q0, codes, p_base, p_col, p_kind,
              p_mrank, p_mpa, mp_wcol, dirs, dpred, epred, oo, co, out_ops, out_cols, out_n,
              out_start, out_st, False, p_col, p_col)


cuda = None
_KERNEL = None
_KERNEL_LOCK = threading.Lock()


def _cuda():
    global cuda
    if cuda is None:
        from numba import cuda as _c
        cuda = _c
    return cuda


def get_kernel():
    """The kernel, compiled once per process; on a GPU compiled eagerly for the signature
    and kept in Numba's on-disk cache (a cold compile costs seconds per ``s2g align``)."""
    global _KERNEL
    with _KERNEL_LOCK:
        if _KERNEL is None:
            _KERNEL = _compile()
    return _KERNEL


def prepare(mode, scoring, read_len) -> None:
    """Load what the traceback of reads up to ``read_len`` bases will launch: this kernel
    and, for windows over the one-thread bound, :mod:`s2g.gpu_long`'s, from Numba's disk
    cache into the context (module, cubin, function handle). The aligner runs it in a
    thread while the full-graph kernel runs (its host thread waits on the GPU then), so
    the 0.1-0.3 s it takes on the GPU machine's host leave the run's critical path
    (py-spy, session 17). Errors are left for the run itself to raise."""
    try:
        kernels = [get_kernel()]
        if LONG and int(read_len) ** 2 > MAX_CELLS:
            from . import gpu_long
            from .dp import LOCAL
            a, b = scoring.as_tuple()[:2]
            kernels.append(gpu_long.get_kernel(None, int(mode) == LOCAL, gpu_long.prmt_fits(a, b)))
        from numba import config
        if not config.ENABLE_CUDASIM:
            for k in kernels:           # compiled for the signature: load into the context
                for ov in k.overloads.values():
                    ov._codelibrary.get_cufunc()
    except Exception:                   # noqa: BLE001 - an optimisation only
        pass


def _compile():
    _cuda()
    from numba import config
    if config.ENABLE_CUDASIM:
        return cuda.jit(_tb_body)
    opts = {"cache": True} if os.environ.get("S2G_NO_CACHE", "") == "" else {}
    return cuda.jit(kernel_signature(), **opts)(_tb_body)


def compile_ptx(cc=(9, 0)):
    """PTX of the kernel for compute capability ``cc`` (tests; no GPU needed)."""
    _cuda()
    return cuda.compile_ptx(_tb_body, kernel_signature(), cc=cc)[0]


def kernel_signature():
    """Argument types of the kernel, for ``cuda.compile_ptx`` (tests)."""
    i32, i64 = types.int32, types.int64
    a = types.Array
    return (i32, i32, i32, i32, i32, i32, i32, a(types.uint8, 1, "C"), a(i64, 1, "C"),
            a(i32, 1, "C"), a(i32, 1, "C")) + (a(i64, 1, "C"),) * 8 + (
            a(types.uint8, 1, "C"), a(i32, 1, "C"), a(types.int8, 1, "C")) + (a(i32, 1, "C"),) * 6 \
        + (a(i32, 1, "C"),) * 4 + (a(types.uint8, 1, "C"), a(types.int16, 1, "C"),
                                   a(types.int16, 1, "C"), a(types.uint8, 1, "C"),
                                   a(i32, 1, "C"), a(i32, 1, "C"), a(i32, 1, "C"), a(i32, 1, "C"),
                                   i32, a(i32, 1, "C"))


def _device_bytes(sz, rows, L):
    """Device bytes per read: program, direction codes, choices, scratch, outputs."""
    W, nm, nmp, nsl = sz[:, 0], sz[:, 1], sz[:, 2], sz[:, 3]
    R1 = rows + 1
    return (W * 20 + nmp * 8 + W * ((rows + 2) // 2) + nm * R1 * 4 + R1 * 8 + nsl * R1 * 8
            + (rows + L + 2) + 4 * (L + 1) + 64)


def _chunk_bounds(sz, rows, L):
    """(first, end) of consecutive entries per launch: at most CHUNK_BYTES of device memory
    each, counting the interleaved scratch, which pads every entry to the chunk's longest
    read (entries sorted by rows ascending)."""
    nbytes = np.cumsum(_device_bytes(sz, rows, L))
    c0 = 0
    while c0 < len(nbytes):
        base_b = nbytes[c0 - 1] if c0 else 0
        c1 = max(c0 + 1, int(np.searchsorted(nbytes, base_b + CHUNK_BYTES, side="right")))
        while INTERLEAVE and c1 - c0 > 1 and \
                (c1 - c0) * (int(rows[c1 - 1]) + 1) * 8 + nbytes[c1 - 1] - base_b > CHUNK_BYTES:
            c1 = c0 + (c1 - c0) // 2
        yield c0, c1
        c0 = c1


def run(graph, reads, scoring, mode, res, idx, out, max_cells=MAX_CELLS, long_cells=0):
    """Tracebacks of reads ``idx`` (aligned) on the GPU into ``out`` (a
    :class:`~s2g.traceback.FlatTracebacks`); returns the reads left for the CPU.

    Windows of at most ``max_cells`` cells run one thread each; larger ones one block each
    (:mod:`s2g.gpu_long`) where their direction codes take at most ``long_cells // 2``
    bytes (with bands, :data:`LONG_BAND`: the band's codes, :func:`s2g.gpu_long.band_layout`;
    otherwise ``long_cells`` cells at 4 bits) and one launch's device memory; the rest, and
    windows with a predecessor list too long, are left."""
    _cuda()
    kern = get_kernel()
    mode = int(mode)
    a, b, o, e = scoring.as_tuple()
    score = np.asarray(res.score, np.int64)
    ei = np.asarray(res.end_i, np.int64)
    ej = np.asarray(res.end_j, np.int64)
    gr = (graph.base, graph.node_start, graph.pred_ptr, graph.pred_idx)
    t0 = time.perf_counter()
    sz = _sizes(idx, score, ei, ej, mode, a, e, *gr)
    PROFILE["sizes"] += time.perf_counter() - t0
    rows = ei[idx]
    L = rows + np.maximum(0, a * rows - score[idx]) // e
    short, lng = _split(sz, rows, L, max_cells, long_cells, LONG_BAND)
    left = idx[~(short | lng)]
    offs = np.asarray(reads.offsets, np.int64)
    for sel, long in ((short, False), (lng, True)):
        if not sel.any():
            continue
        ix, szx, rx, Lx = idx[sel], sz[sel], rows[sel], L[sel]
        by_rows = np.argsort(rx, kind="stable")   # chunks of similar rows: little padding
        ix, szx, rx, Lx = ix[by_rows], szx[by_rows], rx[by_rows], Lx[by_rows]
        if long and LONG_BAND:
            rest = _long_banded(kern, graph, reads, offs, mode, a, b, o, e, score, ei, ej, ix,
                                szx, rx, Lx, out, long_cells)
            left = np.sort(np.concatenate([left, rest]))
            continue
        bounds = list(_long_bounds(szx, rx, Lx) if long else _chunk_bounds(szx, rx, Lx))
        if not (long and PREFETCH and len(bounds) > 1):
            for c0, c1 in bounds:
                _chunk(kern, graph, reads, offs, mode, a, b, o, e, score, ei, ej, ix[c0:c1],
                       szx[c0:c1], rx[c0:c1], Lx[c0:c1], out, long=long)
            continue
        # the next launch's programs, codes and bands are made while this one's kernel runs
        # (after its uploads: the worker's page-locked buffers are then free again)
        pool = _prep_pool()

        def prep(c0, c1):
            return pool.submit(_prepare, graph, reads, offs, mode, a, e, score, ei, ej,
                               ix[c0:c1], szx[c0:c1], rx[c0:c1], None, True)

        fut = [prep(*bounds[0])]
        for k, (c0, c1) in enumerate(bounds):
            ready = fut[0].result()
            nxt = bounds[k + 1] if k + 1 < len(bounds) else None

            def queued(nxt=nxt):
                if nxt is not None:
                    fut[0] = prep(*nxt)
            try:
                _chunk(kern, graph, reads, offs, mode, a, b, o, e, score, ei, ej, ix[c0:c1],
                       szx[c0:c1], rx[c0:c1], Lx[c0:c1], out, long=True, prep=ready,
                       on_launch=queued)
            except BaseException:
                fut[0].cancel()
                raise
    return left


def _long_banded(kern, graph, reads, offs, mode, a, b, o, e, score, ei, ej, ix, szx, rx, Lx,
                 out, long_cells):
    """Long traceback windows ``ix`` (sorted by rows) with band-only codes: in groups of at
    most :data:`GROUP_BYTES` of host programs, each group's programs and bands made first
    (the next group's in the worker thread while this one's launches run), then its
    launches cut by the bands' bytes (:func:`s2g.gpu_long.band_layout`: a fifth of the whole
    windows' on the SNP graph, about half on DRB1). Returns the windows left to the CPU:
    codes over ``long_cells // 2`` bytes, or more than one launch's device memory."""
    per = szx[:, 0] * 40 + szx[:, 2] * 8          # host bytes of a window's programs, bands
    groups = _even_bounds(per, GROUP_BYTES)
    pool = _prep_pool() if PREFETCH and len(groups) > 1 else None
    left = []

    def prep(g):
        g0, g1 = groups[g]
        args = (graph, reads, offs, mode, a, e, score, ei, ej, ix[g0:g1], szx[g0:g1],
                rx[g0:g1], None, True)
        if pool is not None:
            return pool.submit(_prepare, *args, pinned=False)
        done = Future()                         # no worker thread: made here
        done.set_result(_prepare(*args, pinned=False))
        return done

    fut = prep(0)
    try:
        for g, (g0, g1) in enumerate(groups):
            ready = fut.result()
            if g + 1 < len(groups):
                fut = prep(g + 1)
            if LONG_LOG:
                import sys
                print(f"s2g: long-window group {g + 1} of {len(groups)}: {g1 - g0} windows"
                      + (", made in the worker thread" if pool is not None and g else ""),
                      file=sys.stderr)
            left += _long_group(kern, graph, reads, offs, mode, a, b, o, e, score, ei, ej,
                                ix[g0:g1], szx[g0:g1], rx[g0:g1], Lx[g0:g1], out, long_cells,
                                ready)
    except BaseException:
        fut.cancel()
        raise
    return np.concatenate(left) if left else np.zeros(0, np.int64)


def _long_group(kern, graph, reads, offs, mode, a, b, o, e, score, ei, ej, gx, gs, gr, gL, out,
                long_cells, ready):
    """One group of :func:`_long_banded` (``ready``: its :func:`_prepare`); returns the
    windows it leaves to the CPU (a list of arrays)."""
    from . import gpu_long
    lay = ready[5][4:]
    fit = ((4 * lay[0] <= long_cells // 2)
           & (gpu_long.window_bytes(gs, gr, gL, lay) <= gpu_long.chunk_budget()))
    left = []
    if not fit.all():             # left to the CPU; the rest made again without them
        left.append(gx[~fit])
        gx, gs, gr, gL = gx[fit], gs[fit], gr[fit], gL[fit]
        if len(gx) == 0:
            return left
        ready = _prepare(graph, reads, offs, mode, a, e, score, ei, ej, gx, gs, gr, None, True,
                         pinned=False)
    for k, (c0, c1) in enumerate(_long_bounds(gs, gr, gL, ready[5][4:])):
        _chunk(kern, graph, reads, offs, mode, a, b, o, e, score, ei, ej, gx[c0:c1], gs[c0:c1],
               gr[c0:c1], gL[c0:c1], out, long=True, prep=_prep_slice(ready, c0, c1, k == 0))
    return left


#: long traceback windows (band-only codes) are made in groups of at most these bytes of
#: host programs and bands (~40 bytes a window column: 10 kbp reads' ~12,000-column windows
#: 2 GB per ~4,000 reads; a group's launches are cut from it, so a group holds more than a
#: launch of windows on an 80 GB GPU)
GROUP_BYTES = int(os.environ.get("S2G_LONG_GROUP_BYTES", 2 << 30))

#: S2G_GPU_LONG=0: no long-window kernel (windows over MAX_CELLS stay on the CPU)
LONG = os.environ.get("S2G_GPU_LONG", "1") != "0"


def _split(sz, rows, L, max_cells, long_cells, band=False):
    """Masks of the windows for the one-thread kernel and for the long kernel (at most
    ``long_cells`` cells and one launch's device memory, :func:`s2g.gpu_long.chunk_budget`;
    with ``band``, every window over ``max_cells`` while ``long_cells > 0``: :func:`run`
    bounds them by their bands' bytes once it has made them)."""
    cells = sz[:, 0] * (rows + 1)
    ok = (sz[:, 4] <= MAX_PREDS) & (sz[:, 0] > 0)
    short = ok & (cells <= max_cells)
    lng = ok & ~short & ((long_cells > 0) if band else (cells <= long_cells))
    if not LONG:
        lng[:] = False
    elif not band and lng.any():
        from . import gpu_long
        lng[lng] = gpu_long.window_bytes(sz[lng], rows[lng], L[lng]) <= gpu_long.chunk_budget()
    return short, lng


def _long_bounds(sz, rows, L, layout=None):
    """(first, end) of consecutive long windows per launch (sorted by rows ascending): at
    most one launch's device memory each (:func:`s2g.gpu_long.chunk_budget`), cut evenly
    into the number of launches that costs the fewest waves of blocks
    (:func:`_even_bounds`): 1,000 windows of 10 kbp cut greedily as 414 + 414 + 172 took
    0.74 s on an H100 (a second wave for 18 windows), as 360 + 360 + 280 0.53 s; 4,000 as
    10 x 400 windows (396 run at once) 2.76 s (bench.long_kernel, session 17). ``layout``:
    the windows' band-only code words and choice rows (:func:`s2g.gpu_long.band_layout`)."""
    from . import gpu_long
    ns = int(gpu_long.n_strips(rows).max())
    T = gpu_long.threads_for(ns)
    # windows run at once: blocks at once over a window's rounds (one block each); with
    # one-warp rounds (ROUND_T) a launch is a stream of many small jobs, no waves: the
    # fewest launches (the wave model cut 100 x 50 kbp windows into 3 launches, 1.30 s,
    # against 0.50 s in one, H100 2026-11-27)
    cap = (0 if gpu_long.ROUND_T else
           gpu_long.resident_windows(T, int(sz[:, 3].max())) // -(-ns // T))
    return _even_bounds(gpu_long.window_bytes(sz, rows, L, layout), gpu_long.chunk_budget(),
                        cap)


def _wave_cost(m, cap):
    """A launch of ``m`` windows, in full waves of ``cap`` blocks: a last partial wave with
    a fraction p of the SMs' blocks costs 0.72 + 0.28 p of a full one (its blocks share SMs
    with fewer others; H100 session 17: 172 / 280 / 360 / 396 windows of 10 kbp in 0.148 /
    0.170 / 0.176 / ~0.18 s)."""
    full, rest = divmod(int(m), int(cap))
    return full + (0.72 + 0.28 * rest / cap if rest else 0.0)


def _even_bounds(per, budget, cap=0):
    """Cuts of consecutive items of ``per`` bytes into runs of at most ``budget`` bytes (an
    item larger than that alone), each run as equal as the items allow (run k of n ends
    where the running total passes k / n of the whole). The number of runs: the greedy
    cut's (the fewest), or up to 4 more where ``cap`` (windows a GPU runs at once; 0:
    unknown) says fewer waves of blocks in all (:func:`_wave_cost`); else the greedy cut."""
    nbytes = np.cumsum(np.asarray(per, np.int64))
    n = len(nbytes)
    greedy, c0 = [], 0
    while c0 < n:
        base = nbytes[c0 - 1] if c0 else 0
        c1 = max(c0 + 1, int(np.searchsorted(nbytes, base + budget, side="right")))
        greedy.append((c0, c1))
        c0 = c1
    if n < 2:
        return greedy
    total = int(nbytes[-1])
    best, best_cost = greedy, None
    for k in range(len(greedy), min(n, len(greedy) + (4 if cap else 0)) + 1):
        if k < 2:
            cuts = np.array([0, n])
        else:
            cuts = np.concatenate([[0], np.searchsorted(nbytes, total * np.arange(1, k) / k,
                                                        side="right"), [n]])
        lo, hi = cuts[:-1], cuts[1:]
        if np.any(hi <= lo):
            continue
        size = nbytes[hi - 1] - np.where(lo > 0, nbytes[np.maximum(lo - 1, 0)], 0)
        if not np.all((size <= budget) | (hi - lo == 1)):
            continue
        cost = sum(_wave_cost(m, cap) for m in hi - lo) if cap else float(k)
        if best_cost is None or cost < best_cost - 1e-9:
            best, best_cost = [(int(a), int(b)) for a, b in zip(lo, hi)], cost
    return best


def _prepare(graph, reads, offs, mode, a, e, score, ei, ej, idx, sz, rows, win, long,
             pinned=True):
    """The host half of a launch over reads ``idx`` (:func:`_chunk`'s arguments): the
    programs, the reads' codes packed in chunk order and, for traceback windows on the
    long kernel, their bands (rows per column, then :func:`s2g.gpu_long.band_layout`'s
    arrays); in this thread's page-locked buffers (valid until this thread prepares the
    next chunk), or with ``pinned=False`` in new pageable arrays (every long window's at
    once: page-locking ~0.5 GB took longer than the driver's staged uploads of it).
    Returns (coff, poff, prog, codes, qoff, band, seconds)."""
    n = len(idx)
    coff = cum(sz[:, 0])
    poff = cum(sz[:, 2])
    dp = _devpool.pool()
    host = dp.host_empty if pinned else _pageable
    t0 = time.perf_counter()
    if win is None:
        prog = _fill(idx, score, ei, ej, mode, a, e, graph.base, graph.node_start,
                     graph.pred_ptr, graph.pred_idx, coff, poff, empty=host)
    else:
        z = np.zeros(n, np.int64)
        prog = _fill(np.arange(n), z, z, z, mode, a, e, graph.base, graph.node_start,
                     graph.pred_ptr, graph.pred_idx, coff, poff, win[0], win[1],
                     empty=host)
    # the reads' codes, packed in chunk order
    lens = offs[idx + 1] - offs[idx]
    qoff = cum(lens)
    codes = host("codes", max(int(qoff[-1]), 1), np.uint8)
    _gather_codes(reads.codes_flat, offs, np.asarray(idx, np.int64), qoff, codes)
    band = None
    if long and win is None and LONG_BAND:
        t3 = time.perf_counter()
        band = (host("band_lo", max(int(coff[-1]), 1), np.int32),
                host("band_hi", max(int(coff[-1]), 1), np.int32))
        _band_rows(coff, poff, rows.astype(np.int64), score[idx].astype(np.int64), a, e,
                   prog[PROG_NAMES.index("p_kind")], prog[PROG_NAMES.index("p_mpa")],
                   prog[PROG_NAMES.index("p_mpn")], prog[PROG_NAMES.index("mp_wcol")],
                   band[0], band[1])
        from . import gpu_long
        nc = max(int(coff[-1]), 1)
        lay = [host(f"band_{nm}", nc, np.int32) for nm in ("cw", "xc")]
        nwd, nxr = np.zeros(n, np.int64), np.zeros(n, np.int64)
        gpu_long.band_layout(coff, rows.astype(np.int64), prog[PROG_NAMES.index("p_mrank")],
                             band[0], band[1], *lay, nwd, nxr)
        hc = (gpu_long.handoff_columns(coff, rows, band[0], band[1], gpu_long.memory_threads(1))
              if gpu_long.ROUND_T else np.zeros(n, np.int64))
        band = (band[0], band[1], *lay, nwd, nxr, hc)
        PROFILE["band"] += time.perf_counter() - t3
    return coff, poff, prog, codes, qoff, band, time.perf_counter() - t0


def _pageable(name, size, dtype):
    """:meth:`DevicePool.host_empty`'s signature, a new pageable array."""
    return np.empty(size, dtype)


def _prep_slice(prep, c0, c1, first):
    """Windows ``c0..c1 - 1`` of :func:`_prepare`'s result, as :func:`_prepare` of those
    alone would give them (views; the seconds on the first slice only)."""
    coff, poff, prog, codes, qoff, band, t = prep
    a0, a1, e0, e1 = int(coff[c0]), int(coff[c1]), int(poff[c0]), int(poff[c1])
    nc = len(PROG_COLUMN)
    prog = [x[a0:a1] for x in prog[:nc]] + [x[e0:max(e1, e0 + 1)] for x in prog[nc:]]
    if band is not None:
        band = tuple(x[a0:a1] for x in band[:4]) + tuple(x[c0:c1] for x in band[4:])
    return (coff[c0:c1 + 1] - coff[c0], poff[c0:c1 + 1] - poff[c0], prog,
            codes[int(qoff[c0]):int(qoff[c1])], qoff[c0:c1 + 1] - qoff[c0], band,
            t if first else 0.0)


#: long windows: the next launch's host half (:func:`_prepare`) runs in a worker thread
#: while the current launch's kernel runs (``S2G_LONG_PREFETCH=0``: one after the other)
PREFETCH = os.environ.get("S2G_LONG_PREFETCH", "1") != "0"
_PREP_POOL = None


def _prep_pool():
    """One worker for ever (its page-locked buffers are reused from launch to launch)."""
    global _PREP_POOL
    if _PREP_POOL is None:
        from concurrent.futures import ThreadPoolExecutor
        _PREP_POOL = ThreadPoolExecutor(1, thread_name_prefix="s2g-tb-prep")
    return _PREP_POOL


def _chunk(kern, graph, reads, offs, mode, a, b, o, e, score, ei, ej, idx, sz, rows, L, out,
           win=None, long=False, prep=None, on_launch=None):
    """One kernel launch over reads ``idx``. ``win`` = (lo, hi) per entry: seeded windows
    (the kernel finds each end cell); returns the raw outputs (best cells, walks) instead
    of adding tracebacks to ``out``. ``long``: :mod:`s2g.gpu_long`'s kernel (one block
    per window) instead of this module's (one thread per window). ``prep``: this launch's
    :func:`_prepare` (else made here); ``on_launch``: called once the kernel is queued."""
    n = len(idx)
    R1 = rows + 1
    if prep is None:
        prep = _prepare(graph, reads, offs, mode, a, e, score, ei, ej, idx, sz, rows, win, long)
    coff, poff, prog, codes, qoff, band, t_prep = prep
    if INTERLEAVE:          # column scratch as [row][read]: a warp's loads coalesce
        hoff = np.arange(n + 1, dtype=np.int64)
        hs = n
        h_size = (int(rows.max()) + 1) * n
    else:                   # one contiguous column per read
        hoff = cum(R1)
        hs = 1
        h_size = hoff[-1]
    soff = cum(sz[:, 3] * R1)
    doff = cum(sz[:, 0] * ((rows + 2) // 2))
    xoff = cum(sz[:, 1] * R1)
    oo = cum(rows + L + 2)
    co = cum(L + 1)
    # device buffers allocated once per thread and reused by every chunk and batch; the
    # host side of the uploads in page-locked buffers, also reused (a pageable upload is
    # staged by the driver at a few GB/s: ~300 MB per 50,000 seeded windows)
    dp = _devpool.pool()
    t1 = time.perf_counter()
    names = itertools.count()
    pre = "long" if long else "tb"        # the long kernel's (large) buffers apart

    def d(x):
        return dp.put(f"{pre}.{next(names)}", x)

    def emp(size, dtype):
        return dp.empty(f"{pre}.{next(names)}", size, dtype)

    score_c = score[idx] if win is None else np.zeros(n, np.int64)
    if long:
        from . import gpu_long
        d_ops, d_cols, d_n, d_start, d_st, d_best, (ev0, ev1) = gpu_long.launch(
            d, emp, n, mode, a, b, o, e, codes, qoff, rows, score_c, coff, poff, sz, oo, co,
            prog, win is not None, band)
    else:
        args = [d(np.ascontiguousarray(codes, np.uint8)), d(qoff), d(rows.astype(np.int32)),
                d(score_c.astype(np.int32))]
        args += [d(x) for x in (coff, poff, hoff, soff, doff, xoff, oo, co)]
        args += [d(x) for x in prog]
        args += [emp(h_size, np.int32), emp(h_size, np.int32), emp(soff[-1], np.int32),
                 emp(soff[-1], np.int32), emp(doff[-1], np.uint8), emp(xoff[-1], np.int16),
                 emp(xoff[-1], np.int16)]
        d_ops, d_cols = emp(oo[-1], np.uint8), emp(co[-1], np.int32)
        d_n, d_start = emp(2 * n, np.int32), emp(n, np.int32)
        d_st = d(np.full(n, -1, np.int32))
        d_best = emp(3 * n, np.int32) if win is not None else d_st
        ev0, ev1 = cuda.event(), cuda.event()
        ev0.record()
        kern[-(-n // BLOCK), BLOCK](np.int32(n), np.int32(mode), np.int32(a), np.int32(b),
                                    np.int32(o), np.int32(e), np.int32(hs), *args, d_ops,
                                    d_cols, d_n, d_start, d_st, np.int32(win is not None),
                                    d_best)
        ev1.record()
    if on_launch is not None:
        on_launch()
    st = d_st.copy_to_host()
    ms = max(ev0.elapsed_time(ev1), 0.0)      # the simulator says -1
    PROFILE["kernel"] += ms / 1e3
    if long:
        cells = int((sz[:, 0] * R1).sum())
        PROFILE["long_launches"] += 1
        PROFILE["long_windows"] += n
        PROFILE["long_cells"] += cells
        PROFILE["long_kernel"] += ms / 1e3
        if LONG_LOG:
            import sys
            print(f"s2g: long-window launch: {n} windows, {cells:,} cells, rows "
                  f"{int(rows.min())}-{int(rows.max())}, columns {int(sz[:, 0].min())}-"
                  f"{int(sz[:, 0].max())}, {ms:.1f} ms, {cells / max(ms, 1e-9) / 1e6:.1f} GCUPS"
                  + (", its host half made in the worker thread" if on_launch else ""),
                  file=sys.stderr)
    ops, cols = d_ops.copy_to_host(), d_cols.copy_to_host()
    nn, start = d_n.copy_to_host(), d_start.copy_to_host()
    t2 = time.perf_counter()
    if win is not None:
        PROFILE["fill"] += t_prep
        PROFILE["device"] += t2 - t1
        if (st != ST_OK).any():
            raise S2GError("internal error: the GPU window kernel did not finish a window; "
                           "please report this")
        return d_best.copy_to_host().reshape(n, 3), ops, cols, nn, start, oo, co
    _raise_status(reads, idx, st.astype(np.int64), sz[:, 0] * R1, score, ei, ej, 0)
    PROFILE["fill"] += t_prep
    PROFILE["device"] += t2 - t1

    def summarize():        # CIGAR runs and paths: when the tracebacks are finished, which
        t3 = time.perf_counter()    # `s2g align` does in its finisher thread, not here
        summary = _summarize_all(ops, cols, nn, ej[idx], graph.node_start, oo, co)
        t4 = time.perf_counter()
        out.add(idx, ei, oo, co, start, summary)
        PROFILE["summary"] += t4 - t3
        PROFILE["store"] += time.perf_counter() - t4

    out.defer(summarize)


@numba.njit(parallel=True, **NJIT)
def _summarize_all(ops, cols, nn, end_j, node_start, oo, co):
    n = len(end_j)
    run_op, run_len, n_runs, path, n_path, geo, counts = _summary_arrays(n, oo, co)
    for k in numba.prange(n):
        op_r = ops[oo[k]:oo[k] + nn[2 * k]]
        col_r = cols[co[k]:co[k] + nn[2 * k + 1]].astype(np.int64)
        _summarize(k, op_r, col_r, end_j[k], node_start, oo, co, run_op, run_len, n_runs,
                   path, n_path, geo, counts)
    return run_op, run_len, n_runs, path, n_path, geo, counts


# ------------------------------------------------------------------ seeded windows

@numba.njit(parallel=True, **NJIT)
def _summarize_sel(ops, cols, nn, oo, co, sel, end_j, node_start, oo2, co2):
    """:func:`_summarize` of the walks ``sel`` of one chunk's outputs, into rows 0.. of
    fresh flat arrays with offsets ``oo2``/``co2``."""
    n = len(sel)
    run_op, run_len, n_runs, path, n_path, geo, counts = _summary_arrays(n, oo2, co2)
    for k in numba.prange(n):
        t = sel[k]
        op_r = ops[oo[t]:oo[t] + nn[2 * t]]
        col_r = cols[co[t]:co[t] + nn[2 * t + 1]].astype(np.int64)
        _summarize(k, op_r, col_r, end_j[k], node_start, oo2, co2, run_op, run_len, n_runs,
                   path, n_path, geo, counts)
    return run_op, run_len, n_runs, path, n_path, geo, counts


class WindowRun:
    """Seeded windows aligned on the GPU (:func:`run_windows`): per task the best cell
    (``score``, ``end_i``, ``end_j``; NEG_INF/-1/-1: none) and, for tasks the GPU ran
    (``on_gpu``), the walk back from it, kept until :meth:`add_tracebacks` asks for the
    chosen ones."""

    def __init__(self, n):
        self.score = np.full(n, NEG_INF, np.int64)
        self.end_i = np.full(n, -1, np.int64)
        self.end_j = np.full(n, -1, np.int64)
        self.on_gpu = np.zeros(n, np.bool_)
        self.where = np.full((n, 2), -1, np.int64)     # (chunk, row in chunk)
        self.chunks = []

    def add_tracebacks(self, graph, tasks, reads_of, flat, end_i_reads):
        """Tracebacks of GPU tasks ``tasks`` (walks already done) as reads ``reads_of``."""
        for c, (ops, cols, nn, start, oo, co) in enumerate(self.chunks):
            m = self.where[tasks, 0] == c
            if not m.any():
                continue
            sel = self.where[tasks[m], 1]
            ln_o = (oo[sel + 1] - oo[sel])
            ln_c = (co[sel + 1] - co[sel])
            oo2, co2 = cum(ln_o), cum(ln_c)
            summary = _summarize_sel(ops, cols, nn, oo, co, sel, self.end_j[tasks[m]],
                                     graph.node_start, oo2, co2)
            flat.add(reads_of[m], end_i_reads, oo2, co2, start[sel], summary)


def run_windows(graph, reads, scoring, mode, t_read, t_lo, t_hi, max_cells=None,
                long_cells=None):
    """Seeded windows on the GPU: task ``t`` aligns read ``t_read[t]`` inside columns
    ``[t_lo[t], t_hi[t])`` (the semantics of :func:`s2g.window.align_windows_ref`): the
    kernel finds the best cell (V0's tie rule) and walks back from it in the same pass.
    Tasks over ``max_cells`` cells run one block each (:mod:`s2g.gpu_long`) up to
    ``long_cells``; larger ones (or with a predecessor list too long) are left to the
    caller: ``on_gpu`` is False there. Returns a :class:`WindowRun`."""
    _cuda()
    kern = get_kernel()
    mode = int(mode)
    a, b, o, e = scoring.as_tuple()
    max_cells = WINDOW_MAX_CELLS if max_cells is None else max_cells
    n = len(t_read)
    out = WindowRun(n)
    if n == 0:
        return out
    t0 = time.perf_counter()
    z = np.zeros(n, np.int64)
    sz = _sizes(np.arange(n), z, z, z, mode, a, e, graph.base, graph.node_start,
                graph.pred_ptr, graph.pred_idx, t_lo, t_hi)
    PROFILE["sizes"] += time.perf_counter() - t0
    offs = np.asarray(reads.offsets, np.int64)
    rows_all = (offs[t_read + 1] - offs[t_read]).astype(np.int64)
    L_all = sz[:, 0] - 1                  # a walk consumes each window column at most once
    long_cells = WINDOW_LONG_CELLS if long_cells is None else long_cells
    short, lng = _split(sz, rows_all, L_all, max_cells, long_cells)
    has = rows_all > 0
    short &= has
    lng &= has
    dummy = np.zeros(1, np.int64)
    for sel, long in ((short, False), (lng, True)):
        tasks = np.nonzero(sel)[0]
        if len(tasks) == 0:
            continue
        # rows, then window columns: the threads of a warp get windows of similar size
        # (one thread per window: a warp runs as long as its largest)
        tasks = tasks[np.lexsort((sz[tasks, 0], rows_all[tasks]))]
        szt, rows, L = sz[tasks], rows_all[tasks], L_all[tasks]
        bounds = _long_bounds(szt, rows, L) if long else _chunk_bounds(szt, rows, L)
        for c0, c1 in bounds:
            tk = tasks[c0:c1]
            best, ops, cols, nn, start, oo, co = _chunk(
                kern, graph, reads, offs, mode, a, b, o, e, dummy, dummy, dummy, t_read[tk],
                szt[c0:c1], rows[c0:c1], L[c0:c1], None, win=(t_lo[tk], t_hi[tk]), long=long)
            ok = best[:, 0] > NEG_INF
            out.score[tk] = np.where(ok, best[:, 0], NEG_INF)
            out.end_i[tk] = np.where(ok, best[:, 1], -1)
            out.end_j[tk] = np.where(ok, t_lo[tk] + best[:, 2], -1)
            out.where[tk, 0] = len(out.chunks)
            out.where[tk, 1] = np.arange(len(tk))
            out.chunks.append((ops, cols, nn, start, oo, co))
        out.on_gpu[tasks] = True
    return out
