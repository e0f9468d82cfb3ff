"""Traceback on the GPU: the window DP with 4-bit direction codes, walked on the device.

The host finds each read's window exactly as the CPU traceback does and flattens it into
a *column program* (:mod:`s2g.trace.gpu_program`); one CUDA thread per read runs it with
the CPU traceback's cell and tie order, storing 4-bit direction codes and merge choices,
checks the end cell's score and walks back to the start (:mod:`s2g.trace.gpu_kernel`,
:mod:`s2g.trace.gpu_walk`), in launches over chunks of reads (:mod:`s2g.trace.gpu_chunk`).
Only the walks come back to the host (a few hundred bytes per read, not the window),
where :func:`s2g.trace.common.summarize` turns them into CIGAR runs and path — the same code
the CPU path uses, so both produce identical GAF; that summary is deferred to
``FlatTracebacks.finish`` (in ``s2g align``, the finisher thread).

Reads whose window exceeds :func:`max_cells` cells (long reads: one thread would walk
millions of cells) run on :mod:`s2g.trace.long`'s kernel (one thread block per window,
the same program, cell and walk) up to the caller's bound and one launch's device
memory (:mod:`s2g.trace.gpu_groups`); the rest are left to the CPU traceback, which
splits long windows into row bands; :func:`run` returns them.

This module: the entry points (:func:`run`, :func:`run_windows`, :func:`prepare`) and the
bounds (knobs ``gpu_tb_max_cells``, ``gpu_window_max_cells``, ``gpu_window_long_cells``).
"""
from __future__ import annotations

import time

import numpy as np

from ..config import settings
from ..dp import LOCAL
from ..scoring import NEG_INF
from . import gpu_kernel
from .gpu_chunk import PROFILE, TraceInputs, chunk, chunk_bounds
from .gpu_groups import long_banded, long_bounds, long_prefetched, split
from .gpu_program import N_SIZES, sizes, summarize_sel
from .gpu_walk import cum
from .long import launch as long_launch
from .long import plan as long_plan
from .long import prune as long_prune

def max_cells() -> int:
    """Largest window (cells) traced on the GPU by the one-thread kernel; larger ones go to
    the long-window kernel or the CPU's banded traceback (``gpu_tb_max_cells``)."""
    return settings().gpu_tb_max_cells


def window_max_cells() -> int:
    """The same bound for seeded windows (:func:`run_windows`): larger windows run on the
    long-window kernel or the CPU (``gpu_window_max_cells``; 0: :func:`max_cells`)."""
    return settings().gpu_window_max_cells or max_cells()


def window_long_cells() -> int:
    """Largest seeded window (cells) for the long-window kernel (:mod:`s2g.trace.long`;
    ``gpu_window_long_cells``)."""
    return settings().gpu_window_long_cells


def prepare(mode, scoring, read_len) -> None:
    """Load what the traceback of reads up to ``read_len`` bases will launch: the one-thread
    kernel and, for windows over its bound, :mod:`s2g.trace.long`'s, from Numba's disk
    cache into the context (module, cubin, function handle). The aligner runs it in a
    thread while the full-graph kernel runs (its host thread waits on the GPU then), so
    the 0.1-0.3 s it takes on the GPU machine's host leave the run's critical path
    (py-spy, session 17). Errors are left for the run itself to raise."""
    try:
        kernels = [gpu_kernel.get_kernel()]
        if settings().gpu_long and int(read_len) ** 2 > max_cells():
            a, b = scoring.as_tuple()[:2]
            kernels.append(long_launch.get_kernel(None, int(mode) == LOCAL,
                                                  long_launch.prmt_fits(a, b)))
        from numba import config
        if not config.ENABLE_CUDASIM:
            for k in kernels:           # compiled for the signature: load into the context
                for ov in getattr(k, "overloads", {}).values():    # (a lean one is loaded)
                    ov._codelibrary.get_cufunc()
    except Exception:                   # noqa: BLE001 - an optimisation only
        pass


def run(graph, reads, scoring, mode, res, idx, out, max_cells=None, long_cells=0, live=None):
    """Tracebacks of reads ``idx`` (aligned) on the GPU into ``out`` (a
    :class:`~s2g.traceback.FlatTracebacks`); returns the reads left for the CPU.

    Windows of at most ``max_cells`` cells (default: :func:`max_cells`) run one thread
    each; larger ones one block each (:mod:`s2g.trace.long`) where their direction codes
    take at most ``long_cells // 2`` bytes (with bands: the band's codes,
    :func:`s2g.trace.long.plan.band_layout`; otherwise ``long_cells`` cells at 4 bits) and
    one launch's device memory; the rest, and windows with a predecessor list too long,
    are left. Bands (``long_band``, default on): each round of strips of a long window
    computes only the columns whose band (:func:`s2g.trace.gpu_program.band_rows`) meets
    its rows (``long_band=0``: every column, for comparison), narrowed where ``live`` has
    the rows a pruned scoring pass kept (:meth:`WindowRun.live_of`,
    :func:`s2g.trace.long.prune.live_bands`)."""
    kern = gpu_kernel.get_kernel()
    if max_cells is None:
        max_cells = settings().gpu_tb_max_cells
    band = settings().long_band
    mode = int(mode)
    a, b, o, e = scoring.as_tuple()
    score = np.asarray(res.score, np.int64)
    ei = np.asarray(res.end_i, np.int64)
    ej = np.asarray(res.end_j, np.int64)
    gr = (graph.base, graph.node_start, graph.pred_ptr, graph.pred_idx)
    t0 = time.perf_counter()
    sz = sizes(idx, score, ei, ej, mode, a, e, *gr)
    PROFILE.add(sizes=time.perf_counter() - t0)
    rows = ei[idx]
    L = rows + np.maximum(0, a * rows - score[idx]) // e
    short, lng = split(sz, rows, L, max_cells, long_cells, band)
    left = idx[~(short | lng)]
    offs = np.asarray(reads.offsets, np.int64)
    ti = TraceInputs(kern, graph, reads, offs, mode, a, b, o, e, score, ei, ej, out, live)
    for sel, long in ((short, False), (lng, True)):
        if not sel.any():
            continue
        ix, szx, rx, Lx = idx[sel], sz[sel], rows[sel], L[sel]
        by_rows = np.argsort(rx, kind="stable")   # chunks of similar rows: little padding
        ix, szx, rx, Lx = ix[by_rows], szx[by_rows], rx[by_rows], Lx[by_rows]
        if not long:
            for c0, c1 in chunk_bounds(szx, rx, Lx):
                chunk(ti, ix[c0:c1], szx[c0:c1], rx[c0:c1], Lx[c0:c1])
            continue
        with long_plan.trace_turn():   # one thread's long launches at a time
            if band:
                rest = long_banded(ti, ix, szx, rx, Lx, long_cells)
                left = np.sort(np.concatenate([left, rest]))
                continue
            bounds = list(long_bounds(szx, rx, Lx))
            if not (settings().long_prefetch and len(bounds) > 1):
                for c0, c1 in bounds:
                    chunk(ti, ix[c0:c1], szx[c0:c1], rx[c0:c1], Lx[c0:c1], long=True)
                continue
            # the next launch's programs, codes and bands are made while this one's kernel
            # runs
            long_prefetched(ti, ix, szx, rx, Lx, bounds)
    return left


class WindowRun:
    """Seeded windows aligned on the GPU (:func:`run_windows`): per task the best cell
    (``score``, ``end_i``, ``end_j``; NEG_INF/-1/-1: none) for tasks the GPU ran
    (``on_gpu``); for those the traceback kernel ran in find mode (``walked``) the walk
    back from it, kept until :meth:`add_tracebacks` asks for the chosen ones; the others
    (the ``fast`` kernel's windows) are traced from their end cell when chosen
    (:func:`run` on the window graph)."""

    def __init__(self, n):
        self.score = np.full(n, NEG_INF, np.int64)
        self.end_i = np.full(n, -1, np.int64)
        self.end_j = np.full(n, -1, np.int64)
        self.on_gpu = np.zeros(n, np.bool_)
        self.walked = np.zeros(n, np.bool_)
        self.where = np.full((n, 2), -1, np.int64)     # (chunk, row in chunk)
        self.chunks = []
        #: pruned windows: task -> (first graph column, columns, its strips' spans of kept
        #: cells), the traceback's band (:func:`s2g.trace.long.prune.live_bands`)
        self.live = {}

    def merge(self, other, sel):
        """Take tasks ``sel`` (a mask) from ``other``, a run over the same tasks."""
        for name in ("score", "end_i", "end_j", "on_gpu", "walked"):
            getattr(self, name)[sel] = getattr(other, name)[sel]
        w = other.where[sel]
        self.where[sel] = np.where(w >= 0, w + np.array([len(self.chunks), 0]), -1)
        self.chunks.extend(other.chunks)
        for t in [t for t in self.live if sel[t]]:
            del self.live[t]
        self.live.update({t: v for t, v in other.live.items() if sel[t]})

    def live_of(self, tasks, rows, n):
        """The kept rows of the pruned windows among ``tasks``, for the traceback of rows
        ``rows`` (of ``n``) from their end cells (:func:`run`'s ``live``), or None."""
        if not self.live:
            return None
        off = np.full(n, -1, np.int64)
        ns, col0, width = np.zeros(n, np.int64), np.zeros(n, np.int64), np.zeros(n, np.int64)
        parts = []
        pos = 0
        for t, r in zip(np.asarray(tasks).tolist(), np.asarray(rows).tolist()):
            got = self.live.get(t)
            if got is None:
                continue
            col0[r], width[r], sp = got
            off[r], ns[r] = pos, len(sp) // 2
            parts.append(sp)
            pos += len(sp)
        if not parts:
            return None
        return off, ns, col0, width, np.concatenate(parts)

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
            summary = summarize_sel(ops, cols, nn, oo, co, sel, self.end_j[tasks[m]],
                                    graph.node_start, oo2, co2)
            flat.add(reads_of[m], end_i_reads, oo2, co2, start[sel], summary)


def _pruned(ti, out, tasks, szt, rows, L, t_read, t_lo, t_hi, floor, scoring):
    """Best cells of long windows ``tasks`` (scores only, local mode) on the pruned kernel
    (:mod:`s2g.trace.long.prune`), into ``out`` (a :class:`WindowRun`)."""
    def chunks(sel, th):
        pth, pthoff, B, boff, T = th
        got = np.empty((len(sel), 3), np.int64)
        live = np.empty(max(2 * int(pthoff[-1]), 1), np.int32)
        for c0, c1 in long_bounds(szt[sel], rows[sel], L[sel], store=False):
            x = sel[c0:c1]
            tk = tasks[x]
            p0, p1 = int(pthoff[c0]), int(pthoff[c1])
            b0, b1 = int(boff[c0]), int(boff[c1])
            res = chunk(ti, t_read[tk], szt[x], rows[x], L[x], win=(t_lo[tk], t_hi[tk]),
                        long=True, store=False,
                        prune=(pth[p0:max(p1, p0 + 1)], pthoff[c0:c1 + 1] - p0,
                               B[b0:max(b1, b0 + 1)], boff[c0:c1 + 1] - b0, T[c0:c1]))
            got[c0:c1] = res[0]
            live[2 * p0:2 * p1] = res[-1][:2 * (p1 - p0)]
        return got, live

    fl = (np.full(len(tasks), NEG_INF, np.int64) if floor is None
          else np.asarray(floor, np.int64)[tasks])
    best, again, (spans, soff) = long_prune.run(
        chunks, ti.graph, ti.reads, ti.offs, scoring, t_read[tasks], t_lo[tasks], t_hi[tasks],
        rows, fl, settings().gpu_prune_margin)
    PROFILE.add(long_pruned_reruns=again)
    ok = best[:, 0] > NEG_INF
    out.score[tasks] = np.where(ok, best[:, 0], NEG_INF)
    out.end_i[tasks] = np.where(ok, best[:, 1], -1)
    out.end_j[tasks] = np.where(ok, t_lo[tasks] + best[:, 2], -1)
    out.on_gpu[tasks] = True
    if settings().gpu_prune_band:
        for x in np.nonzero(ok)[0].tolist():
            t = int(tasks[x])
            out.live[t] = (int(t_lo[t]), int(t_hi[t] - t_lo[t]), spans[soff[x]:soff[x + 1]])


def run_windows(graph, reads, scoring, mode, t_read, t_lo, t_hi, max_cells=None,
                long_cells=None, fast=None, piece_at=None, only=None, floor=None):
    """Seeded windows on the GPU: task ``t`` aligns read ``t_read[t]`` inside columns
    ``[t_lo[t], t_hi[t])`` (the semantics of :func:`s2g.window.align_windows_ref`).

    ``fast`` (default: the ``gpu_window_fast`` knob), for the tasks of a window graph
    (``piece_at``: :class:`s2g.window.WindowGraph`'s, each task one window): windows of
    reads of at most :data:`s2g.variants.fast.windows.MAX_ROWS` bases run on the ``fast``
    kernel's window form (best cells only, no walk: the chosen window is traced later
    from its end cell). The others, or all without ``fast``, on the traceback kernel in
    find mode: it finds the best cell (V0's tie rule) and walks back from it in the same
    pass. There,
    tasks over ``max_cells`` cells (default :func:`window_max_cells`) run one block each
    (:mod:`s2g.trace.long`) up to ``long_cells`` (default :func:`window_long_cells`),
    best cells only (``long_score_first``, default: no direction codes, so device memory
    for the rounds alone; the chosen windows are traced later from their end cells, in
    their bands, as the ``fast`` kernel's are);
    larger ones (or with a predecessor list too long) are left to the caller: ``on_gpu`` is
    False there. ``only``: a task mask; the other tasks are not run (``on_gpu`` False).
    Long windows scored first in local mode run pruned (knob ``gpu_prune``,
    :mod:`s2g.trace.long.prune`), down to ``floor`` (per task, optional: a window whose
    best alignment scores below it gets NEG_INF, as :mod:`s2g.variants.pruned` gives).
    Returns a :class:`WindowRun`."""
    kern = gpu_kernel.get_kernel()
    mode = int(mode)
    a, b, o, e = scoring.as_tuple()
    max_cells = window_max_cells() if max_cells is None else max_cells
    n = len(t_read)
    out = WindowRun(n)
    if n == 0:
        return out
    only = np.ones(n, np.bool_) if only is None else np.asarray(only, np.bool_)
    skip = np.zeros(n, np.bool_)
    from ..variants.fast import windows as fast_windows
    offs = np.asarray(reads.offsets, np.int64)
    rows_all = np.diff(offs)[t_read]
    if (piece_at is not None and (settings().gpu_window_fast if fast is None else fast)
            and (rows_all[only] <= fast_windows.MAX_ROWS).any()):   # not for long reads only
        s, i, j, skip = fast_windows.run(graph, piece_at, reads.codes_flat, reads.offsets,
                                         t_read, t_lo, t_hi, scoring, mode)
        skip &= only
        out.score[skip], out.end_i[skip], out.end_j[skip] = s[skip], i[skip], j[skip]
        out.on_gpu[skip] = True
        if (skip | ~only).all():
            return out
    t0 = time.perf_counter()
    rest = np.nonzero(~skip & only)[0]
    z = np.zeros(len(rest), np.int64)
    sz = np.zeros((n, N_SIZES), np.int64)
    sz[rest] = sizes(np.arange(len(rest)), z, z, z, mode, a, e, graph.base,
                     graph.node_start, graph.pred_ptr, graph.pred_idx,
                     np.ascontiguousarray(t_lo[rest]), np.ascontiguousarray(t_hi[rest]))
    PROFILE.add(sizes=time.perf_counter() - t0)
    L_all = sz[:, 0] - 1                  # a walk consumes each window column at most once
    long_cells = window_long_cells() if long_cells is None else long_cells
    first = settings().long_score_first
    short, lng = split(sz, rows_all, L_all, max_cells, long_cells, store=not first)
    has = (rows_all > 0) & ~skip & only
    short &= has
    lng &= has
    dummy = np.zeros(1, np.int64)
    ti = TraceInputs(kern, graph, reads, offs, mode, a, b, o, e, dummy, dummy, dummy, None)
    for sel, long in ((short, False), (lng, True)):
        tasks = np.nonzero(sel)[0]
        if len(tasks) == 0:
            continue
        # rows, then window columns: the threads of a warp get windows of similar size
        # (one thread per window: a warp runs as long as its largest)
        tasks = tasks[np.lexsort((sz[tasks, 0], rows_all[tasks]))]
        szt, rows, L = sz[tasks], rows_all[tasks], L_all[tasks]
        store = not (long and first)
        if long and not store and mode == LOCAL and settings().gpu_prune:
            _pruned(ti, out, tasks, szt, rows, L, t_read, t_lo, t_hi, floor, scoring)
            continue
        bounds = (long_bounds(szt, rows, L, store=store) if long
                  else chunk_bounds(szt, rows, L))
        for c0, c1 in bounds:
            tk = tasks[c0:c1]
            best, ops, cols, nn, start, oo, co, _ = chunk(
                ti, t_read[tk], szt[c0:c1], rows[c0:c1], L[c0:c1], win=(t_lo[tk], t_hi[tk]),
                long=long, store=store)
            ok = best[:, 0] > NEG_INF
            out.score[tk] = np.where(ok, best[:, 0], NEG_INF)
            out.end_i[tk] = np.where(ok, best[:, 1], -1)
            out.end_j[tk] = np.where(ok, t_lo[tk] + best[:, 2], -1)
            if store:
                out.where[tk, 0] = len(out.chunks)
                out.where[tk, 1] = np.arange(len(tk))
                out.chunks.append((ops, cols, nn, start, oo, co))
        out.on_gpu[tasks] = True
        out.walked[tasks] = store
    return out
