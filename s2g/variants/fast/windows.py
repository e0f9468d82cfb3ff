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

import numba
import numpy as np

from ..._numba import NJIT
from ...config import settings
from ...counters import Counters
from ...scoring import NEG_INF
from .. import _devpool, _lean
from .constants import (CI_KEEP, CI_MERGE, CI_SINK, CI_SLOT_SHIFT, CI_VIRT, GRAPH_N,
                        PACKED_PREDS, SLOT_BITS, SLOT_MASK, ST_NOT_RUN, ST_OK, WARP)
from .geometry import (BLOCK, K_CHOICES, LONG_G, MAX_K, SHORT_G, _resident_groups, prmt_scores,
                       shared_slots)
from .kernel import get_kernel, shared_exchange, sim
from .tables import kernel_constants, window_node_parts

#: the window form's column tables, in :func:`window_tables`' order (device buffer names)
TABLE_NAMES = ("colinfo", "colsub", "mword", "mptr", "mslot")
#: longest read (rows) a window of which runs here: one strip of LONG_G x MAX_K rows
MAX_ROWS = LONG_G * MAX_K
#: what this process's window launches cost (``--timings``): launches, windows, cells
#: (rows x window columns), kernel seconds (CUDA events), table seconds (host), uploads,
#: the wait for the kernels (the host thread's, at its stream's synchronize: the kernel's
#: own time plus any wait for SMs other threads' kernels hold), wall
PROFILE = Counters({"launches": 0, "windows": 0, "cells": 0, "kernel": 0.0, "tables": 0.0,
                    "upload": 0.0, "wall": 0.0, "sync": 0.0})


def shape(max_len: int):
    """(G, K) of a launch whose longest read has ``max_len`` bases: one strip of SHORT_G
    lanes up to SHORT_G x MAX_K rows, else of LONG_G lanes (None past :data:`MAX_ROWS`)."""
    for G in (SHORT_G, LONG_G):
        need = max(1, -(-int(max_len) // G))
        for K in K_CHOICES:
            if need <= K:
                return G, K
    return None


def window_tables(wgraph, piece_at, prmt_sub=True):
    """The kernel's column tables of a window graph whose task ``t`` owns nodes
    ``piece_at[t]:piece_at[t + 1]`` (host arrays): colinfo, colsub, mword, mptr, mslot and
    the slots a lane needs (keep-merge liveness slots + the virtual one, last). What
    :func:`.tables.column_tables` and :func:`.tables.column_sub` make of a graph (local
    and semiglobal), built window by window in parallel (:func:`s2g.window.window_liveness`,
    :func:`.tables.window_node_parts`, :func:`_tables_fill`); :func:`run` makes them on the GPU
    (:mod:`.wtables_gpu`) unless the ``gpu_window_tables`` knob is off."""
    ns, ptr, idx, slot, nsl, off = window_node_parts(wgraph, piece_at)
    piece_at = np.asarray(piece_at, np.int64)
    n = len(ns) - 1
    N = int(ns[n])
    ci = np.empty(N, np.int32)
    sub = np.empty(N, np.int32)
    mw = np.empty(N, np.int32)
    mp = np.empty(N + 1, np.int32)
    ms = np.zeros(max(int(off[n]), 1), np.int32)
    _tables_fill(piece_at, ns, ptr, idx, np.asarray(wgraph.base), np.asarray(wgraph.is_sink),
                 slot, off, nsl, bool(prmt_sub), ci, sub, mw, mp, ms)
    return ci, sub, mw, mp, ms, nsl + 1


@numba.njit(parallel=True, **NJIT)
def _tables_fill(piece_at, ns, ptr, idx, base, is_sink, slot, off, vslot, prmt_sub, ci, sub,
                 mw, mp, ms):
    """colinfo, colsub, mword, mptr and mslot of every window's columns (see
    :func:`window_tables`; the layout of :func:`.tables.column_tables`)."""
    n_t = len(piece_at) - 1
    N = len(ci)
    for t in numba.prange(n_t):
        for v in range(piece_at[t], piece_at[t + 1]):
            c0, c1 = ns[v], ns[v + 1]
            if c1 == c0:
                continue
            for c in range(c0, c1):
                g = base[c]
                g = GRAPH_N if g >= 4 else g
                ci[c] = g
                sub[c] = g * 0x1111 + 0x8880 if prmt_sub else g
                mw[c] = 0
                mp[c] = off[v + 1]
            mp[c0] = off[v]
            pa, pb = ptr[v], ptr[v + 1]
            f0 = 0
            if pb == pa:                             # a source: the virtual slot
                f0 = CI_VIRT | CI_MERGE
                ms[off[v]] = vslot
                mw[c0] = vslot + 1 if vslot + 1 < SLOT_MASK else -1
            elif not (pb - pa == 1 and idx[pa] == v - 1):
                f0 = CI_MERGE
                word = 0
                bad = False
                r = 0
                for k in range(pa, pb):
                    u = idx[k]
                    if u == v - 1:
                        f0 |= CI_KEEP
                        continue
                    sq = slot[u]
                    ms[off[v] + r] = sq
                    if sq + 1 < SLOT_MASK and r < PACKED_PREDS:
                        word += (sq + 1) << (SLOT_BITS * r)
                    else:
                        bad = True
                    r += 1
                mw[c0] = -1 if bad else word
            ci[c0] |= f0
            f1 = CI_SINK if is_sink[v] != 0 else 0
            if slot[v] >= 0:
                f1 |= (slot[v] + 1) << CI_SLOT_SHIFT
            ci[c1 - 1] |= f1
    if len(piece_at) > 1:
        mp[N] = off[len(ns) - 1]


def launch_shape(kern, G, K, n, n_slots):
    """(threads a block, blocks, slots in shared memory, its bytes, slots in global memory)
    of a launch of the window form ``kern`` over ``n`` windows: persistent groups (each
    strides over windows), at most the resident ones (the slot store is per lane)."""
    block = WARP if shared_exchange() else BLOCK
    groups = min(-(-n // (block // G)) * (block // G), _resident_groups(G))
    groups = max(groups, block // G)
    blocks = max(1, groups * G // block)
    n_sh, sh_bytes = shared_slots(kern, G, K, n_slots, block)
    return block, blocks, n_sh, sh_bytes, n_slots - n_sh


def run(wgraph, piece_at, codes, offsets, t_read, t_lo, t_hi, scoring, mode):
    """Best cell of every window (``t_read``, ``[t_lo, t_hi)``: the contract of
    :func:`s2g.window.align_windows_ref`) of a window graph whose window ``w`` owns nodes
    ``piece_at[w]:piece_at[w + 1]`` (:class:`s2g.window.WindowGraph`; each task's range
    is one whole window's, ``[t_lo[w], t_hi[w])``, any read in it): (score, end_i, end_j,
    done) int64 arrays and a bool mask; windows of reads over :data:`MAX_ROWS` bases are
    not run (``done`` False, score NEG_INF)."""
    cuda = _lean.api()
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
    a, b, o, e = scoring.as_tuple()
    prmt_sub = prmt_scores(a, b, o, e)
    t0 = time.perf_counter()
    dp = _devpool.pool()
    if settings().gpu_window_tables:       # made on the GPU (uploads: 1 byte a column)
        from .wtables_gpu import device_tables
        *d_tab, n_slots = device_tables(dp, wgraph, piece_at, prmt_sub)
    else:
        *tab, n_slots = window_tables(wgraph, piece_at, prmt_sub)
        d_tab = [dp.put(f"fastw.{nm}", x) for nm, x in zip(TABLE_NAMES, tab)]
    d_ci, d_sub, d_mw, d_mp, d_ms = d_tab
    PROFILE.add(tables=time.perf_counter() - t0)
    t0 = time.perf_counter()
    d_codes = dp.put("fastw.codes", codes if len(codes) else np.zeros(1, np.uint8))
    rng = np.empty(2 * n, np.int32)
    rng[0::2] = t_lo
    rng[1::2] = t_hi
    # per window: its read's codes, length, columns (knob gpu_pack_uploads: in one copy)
    small = [offsets[:-1][t_read], lens.astype(np.int32), rng]
    packed = settings().gpu_pack_uploads
    d_off, d_len, d_rng = (dp.put_packed("fastw.small", small) if packed else
                           [dp.put(f"fastw.{nm}", x) for nm, x in zip(("off", "len", "rng"),
                                                                      small)])
    d_row0 = dp.empty("fastw.row0", 1, np.int32)              # window modes: row 0 is -o-e
    consts = kernel_constants(scoring, False)
    PROFILE.add(upload=time.perf_counter() - t0)
    # short reads and long ones in two launches (8 lanes a read, then 32): a warp's groups
    # have similar rows and columns (sorted by rows, then window columns)
    width = np.asarray(t_hi, np.int64) - np.asarray(t_lo, np.int64)
    cls = lens[run_t] > SHORT_G * MAX_K
    mine = None if sim() else _devpool.events("fastw", 2)
    kernel_s = 0.0
    for c in (False, True):
        sel = run_t[cls == c]
        if len(sel) == 0:
            continue
        order = sel[np.lexsort((width[sel], lens[sel]))].astype(np.int32)
        G, K = shape(int(lens[sel].max()))
        kern = get_kernel(G, K, int(mode), prmt_sub, False, 0, True)
        block, blocks, n_sh, sh_bytes, n_gl = launch_shape(kern, G, K, len(order), n_slots)
        store = dp.empty("fastw.store", blocks * block * n_gl * (2 * K + 1), np.int32)
        bnd = dp.empty("fastw.bnd", 1, np.int32)
        outs = [(n, np.int32)] * 3
        if packed:                  # the outputs come back in one copy
            d_outs, (out_s, out_i, out_j), out_offs = dp.empty_packed("fastw.outs", outs)
            status, d_ord = dp.put_packed("fastw.launch",
                                          [np.full(n, ST_NOT_RUN, np.int32), order])
        else:
            out_s, out_i, out_j = (dp.empty(f"fastw.out_{x}", n, np.int32) for x in "sij")
            status = dp.put("fastw.status", np.full(n, ST_NOT_RUN, np.int32))
            d_ord = dp.put("fastw.order", order)
        if mine:
            mine[0].record()
        try:
            kern[blocks, block, cuda.default_stream(), sh_bytes](
                d_ci, d_sub, d_mw, d_mp, d_ms, d_row0, d_codes, d_off, d_len, d_ord, d_rng,
                len(order), 1, n_gl, n_sh, np.int32(a), np.int32(b), np.int32(o), np.int32(e),
                *consts, store, bnd, bnd, out_s, out_i, out_j, status)
        except Exception as exc:                        # noqa: BLE001 - the driver's errors
            raise RuntimeError(
                f"fast windows: launch of {blocks} blocks x {block} threads (G={G}, K={K}, "
                f"{n_slots} slots, {n_sh} in {sh_bytes} bytes of dynamic shared memory) "
                f"failed: {exc}") from exc
        if mine:
            mine[1].record()
        # this thread's stream only (with per-thread default streams, other threads'
        # kernels and copies are not waited for; cuda.synchronize() waits for them all)
        t0 = time.perf_counter()
        cuda.default_stream().synchronize()
        PROFILE.add(sync=time.perf_counter() - t0)     # the kernel, and any wait for SMs
        if mine:
            kernel_s += mine[0].elapsed_time(mine[1]) / 1e3
        st = status.copy_to_host()[sel]
        if (st != ST_OK).any():
            from ...errors import S2GError
            raise S2GError(f"fast windows: GPU kernel left {int((st != ST_OK).sum())} "
                           "window(s) unprocessed; please report this")
        if packed:
            s, i, j = (x[sel] for x in _devpool.host_views(d_outs.copy_to_host(), out_offs,
                                                           outs))
        else:
            s, i, j = (x.copy_to_host()[sel] for x in (out_s, out_i, out_j))
        ok = j >= 0
        score[sel] = np.where(ok, s, NEG_INF)
        end_i[sel] = np.where(ok, i, -1)
        end_j[sel] = np.where(ok, j, -1)
        PROFILE.add(launches=1)
    PROFILE.add(windows=len(run_t), cells=int((lens[run_t] * width[run_t]).sum()), kernel=kernel_s,
                wall=time.perf_counter() - t_start)
    return score, end_i, end_j, done
