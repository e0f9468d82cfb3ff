"""Long windows of the GPU traceback in groups and launches: which windows go to which
kernel (:func:`split`), launches cut by device bytes into even runs (:func:`long_bounds`,
:func:`even_bounds`: the fewest waves of blocks), banded traceback windows in groups of
host bytes (:func:`long_banded`), and the next launch's or group's host half made in a
worker thread while the current one runs (:func:`prep_pool`, :func:`long_prefetched`).
"""
from __future__ import annotations

from concurrent.futures import Future

import numpy as np

from ..config import settings
from .gpu_chunk import chunk, prep_slice, prepare_chunk
from .long import plan as long_plan

#: merge columns with more in-window predecessors than this go to the CPU (int16 choices)
MAX_PREDS = 32767

#: long windows: the next launch's host half (:func:`s2g.trace.gpu_chunk.prepare_chunk`)
#: runs in a worker thread while the current launch's kernel runs (``long_prefetch=0``:
#: one after the other)
_PREP_POOL = None


def prep_pool():
    """One worker for ever (its page-locked buffers are reused from launch to launch)."""
    global _PREP_POOL
    if _PREP_POOL is None:
        from concurrent.futures import ThreadPoolExecutor
        _PREP_POOL = ThreadPoolExecutor(1, thread_name_prefix="s2g-tb-prep")
    return _PREP_POOL


def long_prefetched(ti, ix, szx, rx, Lx, bounds):
    """The launches ``bounds`` of long windows ``ix`` (whole windows' codes, no bands), the
    next launch's programs, codes and bands made while this one's kernel runs (after its
    uploads: the worker's page-locked buffers are then free again)."""
    pool = prep_pool()

    def prep(c0, c1):
        return pool.submit(prepare_chunk, ti, ix[c0:c1], szx[c0:c1], rx[c0:c1], None, True)

    fut = [prep(*bounds[0])]
    for k, (c0, c1) in enumerate(bounds):
        ready = fut[0].result()
        nxt = bounds[k + 1] if k + 1 < len(bounds) else None

        def queued(nxt=nxt):
            if nxt is not None:
                fut[0] = prep(*nxt)
        try:
            chunk(ti, ix[c0:c1], szx[c0:c1], rx[c0:c1], Lx[c0:c1], long=True, prep=ready,
                  on_launch=queued)
        except BaseException:
            fut[0].cancel()
            raise


def long_banded(ti, ix, szx, rx, Lx, long_cells):
    """Long traceback windows ``ix`` (sorted by rows) with band-only codes: in groups of at
    most ``long_group_bytes`` of host programs (:func:`group_bytes`), each group's programs
    and bands made first (the next group's in the worker thread while this one's launches
    run), then its launches cut by the bands' bytes
    (:func:`s2g.trace.long.plan.band_layout`: a fifth of the whole windows' on the SNP
    graph, about half on DRB1). Returns the windows left to the CPU: codes over
    ``long_cells // 2`` bytes, or more than one launch's device memory."""
    per = szx[:, 0] * 40 + szx[:, 2] * 8          # host bytes of a window's programs, bands
    groups = even_bounds(per, group_bytes())
    pool = prep_pool() if settings().long_prefetch and len(groups) > 1 else None
    left = []

    def prep(g):
        g0, g1 = groups[g]
        args = (ti, ix[g0:g1], szx[g0:g1], rx[g0:g1], None, True)
        if pool is not None:
            return pool.submit(prepare_chunk, *args, pinned=False)
        done = Future()                         # no worker thread: made here
        done.set_result(prepare_chunk(*args, pinned=False))
        return done

    fut = prep(0)
    try:
        for g, (g0, g1) in enumerate(groups):
            ready = fut.result()
            if g + 1 < len(groups):
                fut = prep(g + 1)
            if settings().long_log:
                import sys
                print(f"s2g: long-window group {g + 1} of {len(groups)}: {g1 - g0} windows"
                      + (", made in the worker thread" if pool is not None and g else ""),
                      file=sys.stderr)
            left += long_group(ti, ix[g0:g1], szx[g0:g1], rx[g0:g1], Lx[g0:g1], long_cells,
                               ready)
    except BaseException:
        fut.cancel()
        raise
    return np.concatenate(left) if left else np.zeros(0, np.int64)


def long_group(ti, gx, gs, gr, gL, long_cells, ready):
    """One group of :func:`long_banded` (``ready``: its
    :func:`s2g.trace.gpu_chunk.prepare_chunk`); returns the windows it leaves to the CPU (a
    list of arrays)."""
    lay = ready[5][4:]
    fit = ((4 * lay[0] <= long_cells // 2)
           & (long_plan.window_bytes(gs, gr, gL, lay) <= long_plan.chunk_budget()))
    left = []
    if not fit.all():             # left to the CPU; the rest made again without them
        left.append(gx[~fit])
        gx, gs, gr, gL = gx[fit], gs[fit], gr[fit], gL[fit]
        if len(gx) == 0:
            return left
        ready = prepare_chunk(ti, gx, gs, gr, None, True, pinned=False)
    for k, (c0, c1) in enumerate(long_bounds(gs, gr, gL, ready[5][4:])):
        chunk(ti, gx[c0:c1], gs[c0:c1], gr[c0:c1], gL[c0:c1], long=True,
              prep=prep_slice(ready, c0, c1, k == 0))
    return left


#: long traceback windows (band-only codes) are made in groups of at most these bytes of
#: host programs and bands (~40 bytes a window column: 10 kbp reads' ~12,000-column windows
#: 2 GB per ~4,000 reads; a group's launches are cut from it, so a group holds more than a
#: launch of windows on an 80 GB GPU): the knob ``long_group_bytes``
def group_bytes() -> int:
    """Host bytes of programs and bands a group of long traceback windows (the note above)."""
    return settings().long_group_bytes


def split(sz, rows, L, max_cells, long_cells, band=False, store=True):
    """Masks of the windows for the one-thread kernel and for the long kernel (at most
    ``long_cells`` cells and one launch's device memory,
    :func:`s2g.trace.long.plan.chunk_budget`; with ``band``, every window over
    ``max_cells`` while ``long_cells > 0``: :func:`s2g.trace.gpu.run` bounds them by their
    bands' bytes once it has made them). ``gpu_long=0``: no long-window kernel (windows
    over the one-thread bound stay on the CPU). ``store=False``: launches of best cells only
    (no codes; :func:`s2g.trace.gpu.run_windows`)."""
    cells = sz[:, 0] * (rows + 1)
    ok = (sz[:, 4] <= MAX_PREDS) & (sz[:, 0] > 0)
    short = ok & (cells <= max_cells)
    lng = ok & ~short & ((long_cells > 0) if band else (cells <= long_cells))
    if not settings().gpu_long:
        lng[:] = False
    elif not band and lng.any():
        lng[lng] = (long_plan.window_bytes(sz[lng], rows[lng], L[lng], store=store)
                    <= long_plan.chunk_budget())
    return short, lng


def long_bounds(sz, rows, L, layout=None, store=True):
    """(first, end) of consecutive long windows per launch (sorted by rows ascending): at
    most one launch's device memory each (:func:`s2g.trace.long.plan.chunk_budget`), cut
    evenly into the number of launches that costs the fewest waves of blocks
    (:func:`even_bounds`): 1,000 windows of 10 kbp cut greedily as 414 + 414 + 172 took
    0.74 s on an H100 (a second wave for 18 windows), as 360 + 360 + 280 0.53 s; 4,000 as
    10 x 400 windows (396 run at once) 2.76 s (bench.long_kernel, session 17). ``layout``:
    the windows' band-only code words and choice rows
    (:func:`s2g.trace.long.plan.band_layout`); ``store=False``: launches of best cells
    only."""
    ns = int(long_plan.n_strips(rows).max())
    T = long_plan.threads_for(ns)
    # windows run at once: blocks at once over a window's rounds (one block each); with
    # one-warp rounds (long_round_t) a launch is a stream of many small jobs, no waves: the
    # fewest launches (the wave model cut 100 x 50 kbp windows into 3 launches, 1.30 s,
    # against 0.50 s in one, H100 2026-11-27)
    cap = (0 if long_plan.round_t() else
           long_plan.resident_windows(T, int(sz[:, 3].max())) // -(-ns // T))
    return even_bounds(long_plan.window_bytes(sz, rows, L, layout, store),
                       long_plan.chunk_budget(), cap)


def wave_cost(m, cap):
    """A launch of ``m`` windows, in full waves of ``cap`` blocks: a last partial wave with
    a fraction p of the SMs' blocks costs 0.72 + 0.28 p of a full one (its blocks share SMs
    with fewer others; H100 session 17: 172 / 280 / 360 / 396 windows of 10 kbp in 0.148 /
    0.170 / 0.176 / ~0.18 s)."""
    full, rest = divmod(int(m), int(cap))
    return full + (0.72 + 0.28 * rest / cap if rest else 0.0)


def even_bounds(per, budget, cap=0):
    """Cuts of consecutive items of ``per`` bytes into runs of at most ``budget`` bytes (an
    item larger than that alone), each run as equal as the items allow (run k of n ends
    where the running total passes k / n of the whole). The number of runs: the greedy
    cut's (the fewest), or up to 4 more where ``cap`` (windows a GPU runs at once; 0:
    unknown) says fewer waves of blocks in all (:func:`wave_cost`); else the greedy cut."""
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
        cost = sum(wave_cost(m, cap) for m in hi - lo) if cap else float(k)
        if best_cost is None or cost < best_cost - 1e-9:
            best, best_cost = [(int(a), int(b)) for a, b in zip(lo, hi)], cost
    return best

