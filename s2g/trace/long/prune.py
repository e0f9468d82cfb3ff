"""Pruned scores of long seeded windows on the GPU: the bound of :mod:`s2g.variants.pruned`
in the long-window kernel (issue 45).

A seeded window of a 10 kbp read has ~2e8 cells, of which the alignments that can still
be the optimum use a band of a few hundred columns around the read's path (and the top
rows, where a fresh local start could still reach the threshold). The CPU's pruned DP
(:mod:`s2g.variants.pruned`) drops a cell when its score plus an upper bound on what the
rest of the read can add, ``U[i]`` (the q-gram lemma per read suffix), stays below a
threshold ``T``; every value computed is then a real alignment's score, and every cell of
an alignment scoring at least ``T`` keeps its full-DP value (induction along it), so when
the best cell found reaches ``T`` it is the window's optimum with V0's end cell.

The long-window kernel (:mod:`s2g.trace.long.source`, ``_render(prune=True)``, scores only,
local mode) does the same per strip of ``S`` rows: a strip's threshold is ``T`` less the
largest ``U`` of its rows (a lower threshold than each row's own: more cells kept, still
exact), a cell below it is dropped (H, E and F unreachable), and a lane whose registers
and inputs are all dropped, where no fresh start survives (threshold above 0), skips its
cells: a warp whose 32 strips are all dropped at their columns steps over the column.

The walk bound (the CPU's ``a walk[j]``, and its twin for the prefix) decides, before a
round steps, which columns it steps over at all: an alignment through cell ``(i, j)``
scores at most ``a min(i, PL[j]) + min(U[i], a PR[j])`` (``PL[j]``: the most columns of a
walk from the window's start to ``j``, ``PR[j]``: after ``j`` to its end,
:func:`walk_bounds`), so a column where that stays below ``T`` for every row of the round
holds no cell that can matter. With ``U`` replaced by its :func:`envelope` (still an upper
bound) the bound over a round's rows peaks at the row nearest ``PL[j]``, one evaluation a
column; the round steps from its first column that passes to its last, the cells outside
taken as unreachable the way the traceback's bands take them (the hand-off of the round
above, merges of predecessors before its first column). Rounds far below the top skip
the columns left of where their rows can start scoring, rounds near the top the columns
too close to the window's end for a fresh start to reach ``T``.

The thresholds follow the CPU's schedule (:func:`first_thresholds`, :func:`next_thresholds`):
``U[0]`` less a margin that grows with the bound's looseness, never below the floor (a
read's later windows: its lead window's score less ``DROP_MISMATCHES``) or 1 (local mode: a
score of 0 is no alignment); a window whose best cell falls short runs again at the margin
doubled or at its own score (a lower bound), and a window whose bound sees less than
:data:`s2g.variants.pruned.MIN_RATIO` of a perfect score and has no floor runs unpruned
(threshold NEG_INF: nothing is dropped). Measured in docs/gpu.md ("Pruned scores of long
seeded windows").
"""
from __future__ import annotations

import threading

import numba
import numpy as np

from ..._numba import NJIT
from ...scoring import NEG_INF
from ...variants import pruned as _cpu

#: the pruned kernel's own lines (:func:`s2g.trace.long.source._render` with ``prune``;
#: removed from the others): the strips' thresholds (arguments ``pth``, per strip, from
#: ``pthoff`` per window), the walk bound's columns (``pwl``, ``pwr`` per window column),
#: rows (``pb`` from ``pboff`` per window) and ``T`` (``pT``), the round's columns from
#: them, the strip dead (every register dropped) at first, and per merging lane whether
#: any merged row is reachable (a vote in the warp's fold)
KERNEL_LINES = {
    "@PRUNEARGS@": ", pth, pthoff, pwl, pwr, pb, pboff, pT, plive",
    "@PRUNEBAND@": """\
    if pT[r] > neg:
        # the walk bound (module doc): this round's columns, and the previous round's (its
        # hand-off holds those only), where a cell of their rows may still reach T
        if tid == 0:
            bnd[0] = W
            bnd[1] = -1
            bnd[2] = W
            bnd[3] = -1
        cuda.syncthreads()
        ylo = int32(g0 * S)
        yhi = int32(min(R, (g0 + T) * S - 1))
        plo_ = int32(ylo - T * S)
        tw = int32(pT[r])
        if dbg & 32 != 0:                       # tests: a bound too tight must show
            tw = int32(tw + 1000)
        bo = pboff[r]
        lo_ = W
        hi_ = int32(-1)
        lo2 = W
        hi2 = int32(-1)
        x = int32(tid)
        while x < W:
            lc = int32(pwl[uint64(c0 + x)])
            sr = int32(a32 * int32(pwr[uint64(c0 + x)]))
            ist = min(max(lc, ylo), yhi)
            if int32(a32 * min(ist, lc)) + min(int32(pb[uint64(bo + ist)]), sr) >= tw:
                lo_ = min(lo_, x)
                hi_ = max(hi_, x)
            if g0 > 0:
                ist = min(max(lc, plo_), int32(ylo - 1))
                if int32(a32 * min(ist, lc)) + min(int32(pb[uint64(bo + ist)]), sr) >= tw:
                    lo2 = min(lo2, x)
                    hi2 = max(hi2, x)
            x += T
        if hi_ >= 0:
            cuda.atomic.min(bnd, 0, lo_)
            cuda.atomic.max(bnd, 1, hi_)
        if hi2 >= 0:
            cuda.atomic.min(bnd, 2, lo2)
            cuda.atomic.max(bnd, 3, hi2)
        cuda.syncthreads()
        clo = int32(bnd[0])
        chi = int32(bnd[1])
        plo = int32(bnd[2])
        phi = int32(bnd[3])
        # and one column more: the hand-off at column w carries the diagonal of column
        # w - 1 (a tight optimum whose read ended at the window's last column was lost
        # without it: review, session 50)
        if chi >= 0 and chi < W - 1:
            chi = int32(chi + 1)
        if phi >= 0 and phi < W - 1:
            phi = int32(phi + 1)
""",
    "@PRUNEINIT@": ("        th = neg\n"
                    "        if active:\n"
                    "            th = int32(pth[uint64(pthoff[r] + k)])\n"
                    "        dead = int32(1)\n"
                    "        llo = int32(-1)\n"
                    "        lhi = int32(-1)\n"),
    # each strip's first and last column with a kept cell, per window from its first
    # strip's threshold (pthoff): the rows' band of the traceback (live_bands)
    "@PRUNEEND@": ("        if active:\n"
                   "            pa = uint64(2 * (pthoff[r] + k))\n"
                   "            plive[pa] = llo\n"
                   "            plive[pa + uint64(1)] = lhi\n"),
    "@MLV0@": "            mlv = False\n",
    "@MLV1@": "                    lv = False\n",
    "@MLV2@": "                        lv = lv or ph > neg\n",
    "@MLV3@": ("                    glv = _vote_dev(one << lane if lv else zero64, wm, wid, lane)\n"
               "                    if lane == L:\n"
               "                        mlv = glv != 0\n"),
}


#: a kernel that finds each job's columns (its round's, :data:`KERNEL_LINES` ``@PRUNEBAND@``
#: word for word, so the same as the long kernel's own) before the launch, so that each
#: round's hand-off to the next is allocated for those columns only (knob
#: ``gpu_prune_handoff``): a launch of scores-only windows otherwise holds 12 bytes a
#: window column a round (1.7 MB of a 10 kbp MHC window's ~2 MB)
_RANGES_TEXT = """\
from numba import cuda, int32, uint64


def prune_ranges(nj, a, dbg, S, jobs, rows_a, coff, pwl, pwr, pb, pboff, pT, width):
    bnd = cuda.shared.array(4, int32)
    tid = int32(cuda.threadIdx.x)
    T = int32(cuda.blockDim.x)
    job = int32(cuda.blockIdx.x)
    if job >= nj:
        return
    r = int32(jobs[3 * job])
    g0 = int32(jobs[3 * job + 1] * T)
    R = int32(rows_a[r])
    c0 = coff[r]
    W = int32(coff[r + 1] - c0)
    a32 = int32(a)
    neg = int32(%d)
    clo = int32(0)
    chi = int32(W - 1)
@PRUNEBAND@
    if tid == 0:
        width[job] = chi - clo + 1 if chi >= clo else 0
"""


def ranges_source():
    """The Python function of the ranges kernel (undecorated; tests compile it to PTX)."""
    from ...variants.codegen import load_source
    text = (_RANGES_TEXT % int(NEG_INF)).replace("@PRUNEBAND@\n", KERNEL_LINES["@PRUNEBAND@"])
    return load_source(text, "s2g_prange_", "prune_ranges", "<s2g.trace.long prune ranges>")


def ranges_signature():
    """Argument types of the ranges kernel."""
    from numba import types
    i32, i64 = types.int32, types.int64
    a = types.Array
    return ((i32,) * 4 + (a(i32, 1, "C"), a(i32, 1, "C"), a(i64, 1, "C"))
            + (a(i32, 1, "C"),) * 3 + (a(i64, 1, "C"), a(i32, 1, "C"), a(i32, 1, "C")))


_RANGES = []
_RANGES_LOCK = threading.Lock()


def ranges_probe():
    """A lazy dispatcher over the ranges kernel's source as :func:`ranges_kernel` compiles
    it, whose disk cache tells whether it is compiled (:func:`s2g.warmup.cold`)."""
    from numba import cuda
    return cuda.jit(cache=True)(ranges_source())


def ranges_kernel():
    """The ranges kernel, compiled once a process (eagerly on a GPU, disk-cached; on the
    lean path its stored cubin, :func:`s2g.variants._lean.kernel`; locked: several aligning
    threads may ask at once)."""
    from ...variants import _lean
    with _RANGES_LOCK:
        if not _RANGES:
            _RANGES.append(_lean.kernel("long.ranges", _build_ranges))
    return _RANGES[0]


def ranges_stored() -> bool:
    """Whether the lean path's store holds the ranges kernel (warm-up's probe there)."""
    from ...variants import _lean
    return _lean.load("long.ranges") is not None


def _build_ranges():
    from numba import cuda

    from ..._numba import loaded
    from ...config import settings
    from .plan import SIM
    fn = ranges_source()
    return cuda.jit(fn) if SIM else loaded(
        cuda.jit(ranges_signature(), cache=not settings().no_cache)(fn))


def handoff_lines(dev, emp, T, d_jobs, nj, a, dbg, d_rows, d_coff, pargs, nxt):
    """Per job the hand-off it writes for the next round: its columns (the ranges kernel,
    ``T`` threads a block as the launch), in 32-column lines, 0 for a window's last round;
    a synchronisation (the widths come back)."""
    from .plan import S
    width = emp(max(nj, 1), np.int32)
    if nj:
        ranges_kernel()[nj, T](np.int32(nj), np.int32(a), np.int32(dbg), np.int32(S), d_jobs,
                               d_rows, d_coff, *pargs[2:], width)
    w = width.copy_to_host()[:nj].astype(np.int64)
    return np.where(nxt, (w + 31) // 32 * 32, 0)


@numba.njit(parallel=True, **NJIT)
def _bounds(codes, offs, tr, lo, hi, gr, a, pen, h, uoff, U):
    for t in numba.prange(len(tr)):
        r = tr[t]
        U[uoff[t]:uoff[t + 1]] = _cpu.window_bounds(codes[offs[r]:offs[r + 1]], lo[t], hi[t],
                                                    gr, a, (pen, h))


def suffix_bounds(graph, codes_flat, offs, t_read, t_lo, t_hi, scoring, hits=False):
    """``U`` of each task (read ``t_read[t]`` in columns ``[t_lo[t], t_hi[t])``), flat with
    offsets: task ``t``'s ``U[0..m]`` at ``U[uoff[t]:uoff[t + 1]]``
    (:func:`s2g.variants.pruned.suffix_bounds`; with ``hits``, the CPU's tighter
    :func:`s2g.variants.pruned.hit_bounds`)."""
    offs = np.asarray(offs, np.int64)
    tr = np.asarray(t_read, np.int64)
    m = offs[tr + 1] - offs[tr]
    uoff = np.concatenate(([0], np.cumsum(m + 1))).astype(np.int64)
    U = np.empty(int(uoff[-1]), np.int64)
    gr = (graph.base, graph.node_start, graph.pred_ptr, graph.pred_idx)
    _bounds(np.asarray(codes_flat, np.uint8), offs, tr, np.asarray(t_lo, np.int64),
            np.asarray(t_hi, np.int64), gr, int(scoring.as_tuple()[0]),
            _cpu.qgram_penalty(scoring), _cpu.hit_cost(scoring) if hits else 0.0, uoff, U)
    return U, uoff


def first_thresholds(U0, m, a, floor, scale=1.0, hits=False):
    """(T, margin, low) per window, as :func:`s2g.variants.pruned.align_window` begins
    (the margin times ``scale``: knob ``gpu_prune_margin``, a window that falls short costs
    the GPU another launch): ``T`` NEG_INF where the window runs unpruned (no floor and a
    loose bound). ``hits``: ``U`` is :func:`s2g.variants.pruned.hit_bounds`' (its
    constants)."""
    U0 = np.asarray(U0, np.int64)
    m = np.asarray(m, np.int64)
    floor = np.asarray(floor, np.int64)
    r = U0 / np.maximum(a * m, 1)
    per_kb0, r_least, r_loose = _cpu.schedule(bool(hits))
    per_kb = per_kb0 + _cpu.MARGIN_SLOPE * np.maximum(0.0, r_least - r)
    margin = np.maximum(_cpu.MARGIN_MIN * a,
                        (scale * per_kb * a * m / 1000).astype(np.int64))
    low = np.maximum(1, floor)
    T = np.maximum(U0 - margin, low)
    T[(floor <= NEG_INF) & (r < r_loose)] = NEG_INF
    return T, margin, low


@numba.njit(parallel=True, **NJIT)
def strip_thresholds(U, uoff, T, sel, S):
    """Per strip of ``S`` rows of windows ``sel`` (rows ``0..m``, ``ceil((m + 1) / S)``
    strips), ``T`` less the largest ``U`` of the strip's rows, clamped to int32 (NEG_INF:
    nothing dropped); returns (thresholds, each selected window's first)."""
    n = len(sel)
    pthoff = np.zeros(n + 1, np.int64)
    for x in range(n):
        t = sel[x]
        m = uoff[t + 1] - uoff[t] - 1
        pthoff[x + 1] = pthoff[x] + (m + S) // S
    pth = np.empty(max(pthoff[n], 1), np.int32)
    for x in numba.prange(n):
        t = sel[x]
        m = uoff[t + 1] - uoff[t] - 1
        for k in range(pthoff[x + 1] - pthoff[x]):
            r0 = k * S
            mx = U[uoff[t] + r0]
            for y in range(r0 + 1, min(r0 + S, m + 1)):
                mx = max(mx, U[uoff[t] + y])
            th = NEG_INF if T[t] <= NEG_INF else max(T[t] - mx, NEG_INF)
            pth[pthoff[x] + k] = np.int32(th)
    return pth, pthoff


@numba.njit(parallel=True, **NJIT)
def envelope(U, uoff, a):
    """Per window, ``B >= U`` (int32) that falls with the row and by at most ``a`` a row
    (``B[i] + a i`` rises): the largest value at or below each row, then raised to the row
    above's less ``a``. So over a round's rows ``a min(i, PL) + min(B[i], a SR)`` peaks at
    the row nearest ``PL`` (the walk bound, module doc)."""
    B = np.empty(len(U), np.int32)
    for t in numba.prange(len(uoff) - 1):
        u0, u1 = uoff[t], uoff[t + 1]
        run = NEG_INF
        for i in range(u1 - 1, u0 - 1, -1):
            run = max(run, U[i])
            B[i] = min(run, np.int64(2**31 - 1))
        for i in range(u0 + 1, u1):
            B[i] = max(B[i], B[i - 1] - a)
    return B


@numba.njit(parallel=True, **NJIT)
def gather_rows(B, uoff, sel):
    """Rows of windows ``sel`` of the flat per-window ``B`` (offsets ``uoff``), flat with
    their own offsets."""
    boff = np.zeros(len(sel) + 1, np.int64)
    for x in range(len(sel)):
        boff[x + 1] = boff[x] + uoff[sel[x] + 1] - uoff[sel[x]]
    out = np.empty(max(boff[-1], 1), np.int32)
    for x in numba.prange(len(sel)):
        out[boff[x]:boff[x + 1]] = B[uoff[sel[x]]:uoff[sel[x] + 1]]
    return out, boff


@numba.njit(parallel=True, **NJIT)
def walk_bounds(coff, poff, p_kind, p_mpa, p_mpn, mp_wcol, pl, pr):
    """Per window column ``w``: ``pl[w]`` the most columns of a walk from the window's start
    to ``w`` (``w`` included: no alignment ending there matches more bases) and ``pr[w]``
    the most after ``w`` to the window's end (the bases the rest of an alignment through
    ``w`` can match); from the window programs (``p_kind == 0``: ``w - 1`` is the one
    predecessor, else the merge's ``p_mpn`` columns ``mp_wcol``)."""
    for k in numba.prange(len(coff) - 1):
        c0, c1, e0 = coff[k], coff[k + 1], poff[k]
        for w in range(c1 - c0):
            best = np.int32(0)
            if p_kind[c0 + w] == 0:
                if w > 0:
                    best = pl[c0 + w - 1]
            else:
                ma = e0 + p_mpa[c0 + w]
                for x in range(p_mpn[c0 + w]):
                    best = max(best, pl[c0 + mp_wcol[ma + x]])
            pl[c0 + w] = best + 1
            pr[c0 + w] = 0
        for w in range(c1 - c0 - 1, -1, -1):
            nxt = pr[c0 + w] + 1
            if p_kind[c0 + w] == 0:
                if w > 0:
                    pr[c0 + w - 1] = max(pr[c0 + w - 1], nxt)
            else:
                ma = e0 + p_mpa[c0 + w]
                for x in range(p_mpn[c0 + w]):
                    q = c0 + mp_wcol[ma + x]
                    pr[q] = max(pr[q], nxt)


def next_thresholds(best, T, margin, low, known, U0):
    """After a pass at thresholds ``T``: (done, result NEG_INF, next T, margin, known) as
    :func:`s2g.variants.pruned.align_window` goes on: done where the best cell reached
    ``T`` (or nothing was pruned), none where ``T`` was already the floor."""
    held = (best >= T) | (T <= NEG_INF)
    none = ~held & (T <= low)
    known = np.where(held | none, known, np.maximum(known, best))
    margin = np.where(held | none, margin, 2 * margin)
    T2 = np.maximum(np.maximum(U0 - margin, low), known)
    return held | none, none, np.where(held | none, T, T2), margin, known


def run(chunks, graph, reads, offs, scoring, t_read, t_lo, t_hi, rows, floor, margin_pct):
    """Best cells of long windows (read ``t_read[t]`` in columns ``[t_lo[t], t_hi[t])``,
    ``rows[t]`` its bases, ``floor[t]``) in pruned passes (module doc); ``chunks(sel, th)``
    launches windows ``sel`` with ``th`` = (their strips' thresholds, each window's first;
    their rows' :func:`envelope`, each window's first; their ``T``) and returns their best
    cells ((score, row, column) rows) and their strips' spans (first and last column with
    a kept cell, two int32 a strip, from twice each window's first strip). Returns (best
    cells, passes after the first, (spans, offsets)): each window's spans from the pass
    that held (:func:`live_bands`), at ``spans[offsets[t]:offsets[t + 1]]``."""
    from .plan import S
    from ...config import settings
    a = scoring.as_tuple()[0]
    hits = settings().gpu_prune_hits
    U, uoff = suffix_bounds(graph, reads.codes_flat, offs, t_read, t_lo, t_hi, scoring, hits)
    U0 = U[uoff[:-1]]
    T, margin, low = first_thresholds(U0, rows, a, floor, margin_pct / 100.0, hits)
    B = envelope(U, uoff, a)
    known = np.full(len(T), NEG_INF, np.int64)
    best = np.zeros((len(T), 3), np.int64)
    todo = np.arange(len(T))
    again = 0
    soff = np.zeros(len(T) + 1, np.int64)
    np.cumsum(2 * ((np.diff(uoff) - 1 + S) // S), out=soff[1:])
    spans = np.full(max(int(soff[-1]), 1), -1, np.int32)
    while len(todo):
        th = strip_thresholds(U, uoff, T, todo, S)
        got, live = chunks(todo, th + gather_rows(B, uoff, todo)
                           + (np.maximum(T[todo], NEG_INF).astype(np.int32),))
        done, none, T[todo], margin[todo], known[todo] = next_thresholds(
            got[:, 0], T[todo], margin[todo], low[todo], known[todo], U0[todo])
        got[none] = (NEG_INF, -1, -1)
        best[todo[done]] = got[done]
        _keep_spans(live, th[1], todo, np.nonzero(done)[0], spans, soff)
        todo = todo[~done]
        again += len(todo)
    return best, again, (spans, soff)


@numba.njit(**NJIT)
def _keep_spans(live, pthoff, todo, sel, spans, soff):
    """The spans of windows ``todo[sel]`` from a pass's (``live``, per window from twice
    its first strip ``pthoff``) into ``spans`` (from ``soff`` per window)."""
    for x in sel:
        t = todo[x]
        spans[soff[t]:soff[t + 1]] = live[2 * pthoff[x]:2 * pthoff[x + 1]]


@numba.njit(**NJIT)
def _first_free(nxt, c):
    """The first column at or after ``c`` not yet given a strip (path halving)."""
    while nxt[c] != c:
        nxt[c] = nxt[nxt[c]]
        c = nxt[c]
    return c


@numba.njit(**NJIT)
def _cover(spans, W, s0, s1, step):
    """Per column ``0..W-1`` the first strip of ``s0, s0 + step, .. (not s1)`` whose span
    (``spans``: per strip its first and last column, -1 where none) holds it, or -1:
    every column given once (``nxt``: the next column not yet given one)."""
    got = np.full(W, np.int64(-1), np.int64)
    nxt = np.arange(W + 1)
    for s in range(s0, s1, step):
        a, b = np.int64(spans[2 * s]), min(np.int64(spans[2 * s + 1]), W - 1)
        if a < 0 or a >= W:
            continue
        c = _first_free(nxt, a)
        while c <= b:
            got[c] = s
            nxt[c] = c + 1
            c = _first_free(nxt, c + 1)
    return got


@numba.njit(**NJIT)
def strip_rows(spans, W, S):
    """Per column ``0..W-1`` of a pruned window, the first and last row of the strips with a
    kept cell there (``spans``: per strip of ``S`` rows its first and last such column, -1
    where none; :data:`KERNEL_LINES` ``@PRUNEEND@``), or (-1, -1) where no strip has one:
    each column's lowest such strip from the top, its highest from the bottom."""
    ns = len(spans) // 2
    top = _cover(spans, W, 0, ns, 1)
    bottom = _cover(spans, W, ns - 1, -1, -1)
    lo = np.where(top >= 0, top * S, -1)
    hi = np.where(bottom >= 0, bottom * S + S - 1, -1)
    return lo, hi


@numba.njit(parallel=True, **NJIT)
def live_bands(idx, coff, p_col, S, live, blo, bhi, rows_in):
    """Narrow the traceback bands ``blo``/``bhi`` (:func:`s2g.trace.gpu_program.band_rows`,
    window ``k``'s columns from ``coff[k]``, graph columns ``p_col``) of reads ``idx`` to
    the rows the pruned scoring pass kept in their chosen window: ``live`` = (off, n,
    col0, width, spans) per read (``off`` -1: none; its ``n`` strips' spans at
    ``spans[off:off + 2 n]``, :func:`strip_rows`; the window's graph columns ``col0 ..
    col0 + width - 1``), widened by one row each way (the slack band's widening: the row
    above a kept cell is where its diagonal and insertion come from, across a round's
    hand-off too). A column outside that window, or with no kept cell, gets an empty
    band. The pass kept every cell of every alignment scoring at least its threshold,
    which the window's optimum reached (:func:`run`), so every cell of every optimal
    alignment lies in the narrowed band: the argument that makes the slack band exact
    (the CPU's ``tb_prune_band`` argues the same). ``rows_in[k]`` += (band rows before,
    after) of the narrowed windows."""
    off, n, col0, width, spans = live
    for k in numba.prange(len(idx)):
        r = idx[k]
        o = off[r]
        if o < 0:
            continue
        W = width[r]
        lo, hi = strip_rows(spans[o:o + 2 * n[r]], W, S)
        for w in range(coff[k], coff[k + 1]):
            rows_in[k, 0] += max(0, bhi[w] - blo[w] + 1)
            c = np.int64(p_col[w]) - col0[r]
            if 0 <= c < W and hi[c] >= 0:
                # widened by a row each way, as band_rows widens the slack band: a round's
                # first row reads its diagonal and insertion from the row above, through
                # the previous round's hand-off, which holds only the columns whose band
                # meets that round's rows (a path crossing a strip boundary where the
                # strip above kept nothing further right lost its diagonal: review,
                # session 50)
                blo[w] = max(blo[w], lo[c] - 1)
                bhi[w] = min(bhi[w], hi[c] + 1)
            else:
                bhi[w] = -1
            rows_in[k, 1] += max(0, bhi[w] - blo[w] + 1)
