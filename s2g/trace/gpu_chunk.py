"""One launch of the GPU traceback over a chunk of windows: its host half (programs, codes,
bands: :func:`prepare_chunk`), its device buffers and kernel (the one-thread kernel,
:mod:`s2g.trace.gpu_kernel`, or the long-window kernel, :mod:`s2g.trace.long`), its
outputs, and the stage times (:data:`PROFILE`).
"""
from __future__ import annotations

import itertools
import time
from typing import NamedTuple

import numpy as np

from ..config import settings
from ..counters import Counters
from ..errors import S2GError
from .common import ST_OK, raise_status
from ..variants import _devpool
from .gpu_kernel import BLOCK
from .gpu_program import (PROG_COLUMN, PROG_NAMES, band_rows, fill, gather_codes,
                          summarize_all)
from .gpu_walk import cum
from .long import launch as long_launch
from .long import plan as long_plan
from .long import prune as long_prune

#: seconds per stage, summed over calls (bench/gpu_traceback_profile.py reads it)
PROFILE = Counters({
    "sizes": 0.0, "fill": 0.0, "device": 0.0, "kernel": 0.0, "summary": 0.0, "store": 0.0,
    "band": 0.0, "long_launches": 0, "long_windows": 0, "long_cells": 0, "long_kernel": 0.0,
    "long_score_windows": 0, "long_score_cells": 0, "long_score_kernel": 0.0,
    "long_pruned_launches": 0, "long_pruned_reruns": 0,
    # traceback windows narrowed to their pruned pass's kept rows, and their bands'
    # cells (slack band, narrowed)
    "long_live_windows": 0, "long_live_cells_slack": 0, "long_live_cells": 0})


class TraceInputs(NamedTuple):
    """What the launches of one call share: the one-thread kernel, the graph, the reads
    and their offsets, the mode and scores, and per read its score and end cell (V0's;
    zeros for seeded windows, whose kernel finds the end cell) and the tracebacks'
    store (``out``, a :class:`~s2g.traceback.FlatTracebacks`; None for seeded windows), and
    the rows pruned scoring passes kept (``live``, :func:`s2g.trace.gpu.run`'s)."""
    kern: object
    graph: object
    reads: object
    offs: np.ndarray
    mode: int
    a: int
    b: int
    o: int
    e: int
    score: np.ndarray
    ei: np.ndarray
    ej: np.ndarray
    out: object
    live: tuple = None


def device_bytes(sz, rows, L):
    """Device bytes per read: program, direction codes, choices, scratch, outputs."""
    W, nm, nmp, nsl = sz[:, 0], sz[:, 1], sz[:, 2], sz[:, 3]
    R1 = rows + 1
    return (W * 20 + nmp * 8 + W * ((rows + 2) // 2) + nm * R1 * 4 + R1 * 8 + nsl * R1 * 8
            + (rows + L + 2) + 4 * (L + 1) + 64)


def chunk_bounds(sz, rows, L):
    """(first, end) of consecutive entries per launch: at most ``gpu_tb_chunk_bytes`` of
    device memory each (programs, direction codes, scratch, outputs), counting the
    interleaved scratch, which pads every entry to the chunk's longest read (entries sorted
    by rows ascending)."""
    budget = settings().gpu_tb_chunk_bytes
    interleave = settings().gpu_tb_interleave
    nbytes = np.cumsum(device_bytes(sz, rows, L))
    c0 = 0
    while c0 < len(nbytes):
        base_b = nbytes[c0 - 1] if c0 else 0
        c1 = max(c0 + 1, int(np.searchsorted(nbytes, base_b + budget, side="right")))
        while interleave and c1 - c0 > 1 and \
                (c1 - c0) * (int(rows[c1 - 1]) + 1) * 8 + nbytes[c1 - 1] - base_b > budget:
            c1 = c0 + (c1 - c0) // 2
        yield c0, c1
        c0 = c1


def prepare_chunk(ti, idx, sz, rows, win, long, pinned=True):
    """The host half of a launch over reads ``idx`` (:func:`chunk`'s arguments; ``ti`` a
    :class:`TraceInputs`): the programs, the reads' codes packed in chunk order and, for
    traceback windows on the long kernel, their bands (rows per column, then
    :func:`s2g.trace.long.plan.band_layout`'s arrays); in this thread's page-locked
    buffers (valid until this thread prepares the next chunk), or with ``pinned=False`` in
    new pageable arrays (every long window's at once: page-locking ~0.5 GB took longer
    than the driver's staged uploads of it). Returns (coff, poff, prog, codes, qoff, band,
    seconds)."""
    graph, reads, offs, mode, a, e = ti.graph, ti.reads, ti.offs, ti.mode, ti.a, ti.e
    score, ei, ej = ti.score, ti.ei, ti.ej
    n = len(idx)
    coff = cum(sz[:, 0])
    poff = cum(sz[:, 2])
    dp = _devpool.pool()
    host = dp.host_empty if pinned else _pageable
    t0 = time.perf_counter()
    if win is None:
        prog = fill(idx, score, ei, ej, mode, a, e, graph.base, graph.node_start,
                    graph.pred_ptr, graph.pred_idx, coff, poff, empty=host)
    else:
        z = np.zeros(n, np.int64)
        prog = fill(np.arange(n), z, z, z, mode, a, e, graph.base, graph.node_start,
                    graph.pred_ptr, graph.pred_idx, coff, poff, win[0], win[1],
                    empty=host)
    codes, qoff = _packed_codes(reads, offs, idx, host)
    band = None
    if long and win is None and settings().long_band:
        t3 = time.perf_counter()
        band = (host("band_lo", max(int(coff[-1]), 1), np.int32),
                host("band_hi", max(int(coff[-1]), 1), np.int32))
        band_rows(coff, poff, rows.astype(np.int64), score[idx].astype(np.int64), a, e,
                  prog[PROG_NAMES.index("p_kind")], prog[PROG_NAMES.index("p_mpa")],
                  prog[PROG_NAMES.index("p_mpn")], prog[PROG_NAMES.index("mp_wcol")],
                  band[0], band[1])
        if ti.live is not None:         # the rows the pruned scoring pass kept
            nr = np.zeros((n, 2), np.int64)
            long_prune.live_bands(np.asarray(idx, np.int64), coff,
                                  prog[PROG_NAMES.index("p_col")], long_plan.S, ti.live,
                                  band[0], band[1], nr)
            PROFILE.add(long_live_windows=int(np.count_nonzero(ti.live[0][idx] >= 0)),
                        long_live_cells_slack=int(nr[:, 0].sum()),
                        long_live_cells=int(nr[:, 1].sum()))
        nc = max(int(coff[-1]), 1)
        lay = [host(f"band_{nm}", nc, np.int32) for nm in ("cw", "xc")]
        nwd, nxr = np.zeros(n, np.int64), np.zeros(n, np.int64)
        long_plan.band_layout(coff, rows.astype(np.int64), prog[PROG_NAMES.index("p_mrank")],
                              band[0], band[1], *lay, nwd, nxr)
        hc = (long_plan.handoff_columns(coff, rows, band[0], band[1],
                                        long_plan.memory_threads(1))
              if long_plan.round_t() else np.zeros(n, np.int64))
        band = (band[0], band[1], *lay, nwd, nxr, hc)
        PROFILE.add(band=time.perf_counter() - t3)
    return coff, poff, prog, codes, qoff, band, time.perf_counter() - t0


def _device_prepared(ti, idx, sz, win):
    """:func:`prepare_chunk`'s result for seeded long windows scored only, their programs
    made on the GPU (:mod:`s2g.trace.long.programs_gpu`, knob ``gpu_long_programs``)."""
    from .long.programs_gpu import device_programs
    t0 = time.perf_counter()
    coff, poff = cum(sz[:, 0]), cum(sz[:, 2])
    dp = _devpool.pool()
    prog = device_programs(dp, ti.graph, win[0], win[1], ti.mode, coff, poff)
    codes, qoff = _packed_codes(ti.reads, ti.offs, idx, dp.host_empty)
    return coff, poff, prog, codes, qoff, None, time.perf_counter() - t0


def _packed_codes(reads, offs, idx, host):
    """The codes of reads ``idx``, packed in chunk order into ``host("codes", size,
    dtype)``'s array, and their offsets."""
    qoff = cum(offs[idx + 1] - offs[idx])
    codes = host("codes", max(int(qoff[-1]), 1), np.uint8)
    gather_codes(reads.codes_flat, offs, np.asarray(idx, np.int64), qoff, codes)
    return codes, qoff


def _pageable(name, size, dtype):
    """:meth:`DevicePool.host_empty`'s signature, a new pageable array."""
    return np.empty(size, dtype)


def prep_slice(prep, c0, c1, first):
    """Windows ``c0..c1 - 1`` of :func:`prepare_chunk`'s result, as :func:`prepare_chunk` of
    those alone would give them (views; the seconds on the first slice only)."""
    coff, poff, prog, codes, qoff, band, t = prep
    a0, a1, e0, e1 = int(coff[c0]), int(coff[c1]), int(poff[c0]), int(poff[c1])
    nc = len(PROG_COLUMN)
    prog = [x[a0:a1] for x in prog[:nc]] + [x[e0:max(e1, e0 + 1)] for x in prog[nc:]]
    if band is not None:
        band = tuple(x[a0:a1] for x in band[:4]) + tuple(x[c0:c1] for x in band[4:])
    return (coff[c0:c1 + 1] - coff[c0], poff[c0:c1 + 1] - poff[c0], prog,
            codes[int(qoff[c0]):int(qoff[c1])], qoff[c0:c1 + 1] - qoff[c0], band,
            t if first else 0.0)


def chunk(ti, idx, sz, rows, L, win=None, long=False, prep=None, on_launch=None, store=True,
          prune=None):
    """One kernel launch over reads ``idx`` (``ti`` a :class:`TraceInputs`). ``win`` = (lo,
    hi) per entry: seeded windows (the kernel finds each end cell); returns the raw outputs
    (best cells, walks) instead of adding tracebacks to ``ti.out``. ``long``:
    :mod:`s2g.trace.long`'s kernel (one block per window) instead of
    :mod:`s2g.trace.gpu_kernel`'s (one thread per window). ``prep``: this launch's
    :func:`prepare_chunk` (else made here); ``on_launch``: called once the kernel is
    queued. ``store=False`` (seeded long windows): best cells only, no walks (the outputs
    other than the best cells are empty); ``prune``: their strips' thresholds, the pruned
    kernel (:mod:`s2g.trace.long.prune`), whose strips' first and last columns with a kept
    cell come back as ``live`` (the last output; None otherwise)."""
    kern, graph, reads, mode, a, b, o, e = (ti.kern, ti.graph, ti.reads, ti.mode, ti.a, ti.b,
                                            ti.o, ti.e)
    score, ei, ej, out = ti.score, ti.ei, ti.ej, ti.out
    n = len(idx)
    R1 = rows + 1
    if long:              # this thread's long buffers within its share (long_device_bytes)
        _devpool.pool().limit(long_plan.LONG_BUFFERS, long_plan.thread_share())
    if prep is None and long and win is not None and not store and settings().gpu_long_programs:
        prep = _device_prepared(ti, idx, sz, win)
    if prep is None:
        prep = prepare_chunk(ti, idx, sz, rows, win, long)
    coff, poff, prog, codes, qoff, band, t_prep = prep
    # column scratch interleaved across the reads of a chunk (coalesced) or per read
    if settings().gpu_tb_interleave:    # column scratch as [row][read]: a warp's loads coalesce
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
    oo = cum(rows + L + 2) if store else np.zeros(n + 1, np.int64)
    co = cum(L + 1) if store else np.zeros(n + 1, np.int64)
    # device buffers allocated once per thread and reused by every chunk and batch; the
    # host side of the uploads in page-locked buffers, also reused (a pageable upload is
    # staged by the driver at a few GB/s: ~300 MB per 50,000 seeded windows)
    dp = _devpool.pool()
    packed = settings().gpu_pack_uploads
    t1 = time.perf_counter()
    names = itertools.count()
    pre = "long" if long else "tb"        # the long kernel's (large) buffers apart

    def d(x):
        return dp.put(f"{pre}.{next(names)}", x)

    def emp(size, dtype):
        return dp.empty(f"{pre}.{next(names)}", size, dtype)

    score_c = score[idx] if win is None else np.zeros(n, np.int64)
    if long:
        d_ops, d_cols, d_n, d_start, d_st, d_best, (ev0, ev1), d_live = long_launch.launch(
            d, emp, long_launch.LongChunk(n, mode, a, b, o, e, codes, qoff, rows, score_c, coff,
                                          poff, sz, oo, co, prog, win is not None, band,
                                          store, prune))
    else:
        d_live = None
        small = [qoff, rows.astype(np.int32), score_c.astype(np.int32), coff, poff, hoff, soff,
                 doff, xoff, oo, co, np.full(n, -1, np.int32)]
        if packed:      # the small inputs in one upload, the outputs in one download
            *small_d, d_st = dp.put_packed(f"{pre}.small", small)
        else:
            *small_d, d_st = [d(x) for x in small]
        args = [d(np.ascontiguousarray(codes, np.uint8))] + small_d
        args += [d(x) for x in prog]
        args += [emp(h_size, np.int32), emp(h_size, np.int32), emp(soff[-1], np.int32),
                 emp(soff[-1], np.int32), emp(doff[-1], np.uint8), emp(xoff[-1], np.int16),
                 emp(xoff[-1], np.int16)]
        outs = [(oo[-1], np.uint8), (co[-1], np.int32), (2 * n, np.int32), (n, np.int32)]
        if win is not None:
            outs.append((3 * n, np.int32))
        if packed:
            d_out, views, out_offs = dp.empty_packed(f"{pre}.out", outs)
        else:
            views = [emp(size, dt) for size, dt in outs]
        d_ops, d_cols, d_n, d_start = views[:4]
        d_best = views[4] if win is not None else d_st
        ev0, ev1 = _devpool.events("tb", 2)
        ev0.record()
        kern[-(-n // BLOCK), BLOCK](np.int32(n), np.int32(mode), np.int32(a), np.int32(b),
                                    np.int32(o), np.int32(e), np.int32(hs), *args, d_ops,
                                    d_cols, d_n, d_start, d_st, np.int32(win is not None),
                                    d_best)
        ev1.record()
    if on_launch is not None:
        on_launch()
    _devpool.sync_first()
    st = d_st.copy_to_host()
    ms = max(ev0.elapsed_time(ev1), 0.0)      # the simulator says -1
    PROFILE.add(kernel=ms / 1e3)
    if long:
        cells = int((sz[:, 0] * R1).sum())
        PROFILE.add(long_launches=1, long_windows=n, long_cells=cells, long_kernel=ms / 1e3)
        if prune is not None:
            PROFILE.add(long_pruned_launches=1)
        if not store:
            PROFILE.add(long_score_windows=n, long_score_cells=cells, long_score_kernel=ms / 1e3)
        if settings().long_log:     # one line per launch on stderr (windows, cells, ms, GCUPS)
            import sys
            print(f"s2g: long-window launch: {n} windows, {cells:,} cells, rows "
                  f"{int(rows.min())}-{int(rows.max())}, columns {int(sz[:, 0].min())}-"
                  f"{int(sz[:, 0].max())}, {ms:.1f} ms, {cells / max(ms, 1e-9) / 1e6:.1f} GCUPS"
                  + ("" if store else ", scores only")
                  + (", its host half made in the worker thread" if on_launch else ""),
                  file=sys.stderr)
    if packed and not long:         # (a new host array: summarize may run after the next
        got = _devpool.host_views(d_out.copy_to_host(), out_offs, outs)    # chunk)
        ops, cols, nn, start = got[:4]
        best = got[4].reshape(n, 3) if win is not None else None
    else:
        ops, cols = d_ops.copy_to_host(), d_cols.copy_to_host()
        nn, start = d_n.copy_to_host(), d_start.copy_to_host()
        best = d_best.copy_to_host().reshape(n, 3) if win is not None else None
    live = None if d_live is None else d_live.copy_to_host()[:2 * len(prune[0])]
    t2 = time.perf_counter()
    if long:                    # the outputs are on the host: the buffers may go
        dp.trim()
    if win is not None:
        PROFILE.add(fill=t_prep, device=t2 - t1)
        if (st != ST_OK).any():
            raise S2GError("internal error: the GPU window kernel did not finish a window; "
                           "please report this")
        return best, ops, cols, nn, start, oo, co, live
    raise_status(reads, idx, st.astype(np.int64), sz[:, 0] * R1, score, ei, ej, 0)
    PROFILE.add(fill=t_prep, device=t2 - t1)

    def summarize():        # CIGAR runs and paths: when the tracebacks are finished, which
        t3 = time.perf_counter()    # `s2g align` does in its finisher thread, not here
        summary = summarize_all(ops, cols, nn, ej[idx], graph.node_start, oo, co)
        t4 = time.perf_counter()
        out.add(idx, ei, oo, co, start, summary)
        PROFILE.add(summary=t4 - t3, store=time.perf_counter() - t4)

    out.defer(summarize)

