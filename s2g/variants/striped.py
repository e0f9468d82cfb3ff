"""striped — one long read's window DP with its rows in SIMD lanes (Farrar's layout).

The ``simd`` kernel puts *reads* in lanes: right for the many short windows of short
reads, wrong for a few windows of long reads (issue #45): a batch of 10 reads of 10 kbp
has ~50 windows, one group of 128 lanes, one thread, and every lane runs the group's
widest window (0.6 GCUPS a thread measured on the MHC graph). Here each window is one
task on a thread of its own (workers take every n-th window of the costliest-first
order), and its column is vectorised down the rows instead.

Layout: row ``i`` (0..m, padded to ``B x L``) lives at ``[i % B, i // B]`` (``L = 64``
int32 lanes, four zmm registers; ``B`` rows a lane), so the loop over a column's ``s``
(0..B-1) with the lane loop inside moves 64 rows a step. V0's column recurrence
(:func:`s2g.dp.column`) splits into

* ``Hc[i] = max(PH[i-1] + sub(q[i-1], g), E[i])`` (and ``>= 0`` in local mode), ``E[i] =
  PE[i]``: elementwise; ``PH[i-1]`` is the row above: ``[s-1, l]``, or ``[B-1, l-1]`` at
  ``s = 0``;
* ``F[i] = max(Hc[i-1] - o - e, F[i-1] - e)``: the same as V0's ``max(H[i-1] - o - e,
  F[i-1] - e)`` because ``F[i-1] - o - e < F[i-1] - e``; a prefix maximum: each lane runs
  its own ``B`` rows from ``-inf`` (fused with the first pass), then the value entering
  each lane is carried down the 64 lanes (a scalar loop of 64) and a last vector pass
  takes ``F = max(F_lane, carry[l] - s e)``;
* ``H[i] = max(Hc[i], F[i])``.

Padding rows (``i > m``) score every base ``-2^28``; their cells only ever hold values
below a real cell of the same or an earlier column, so a column maximum above the best
is always a real row's (found, with V0's tie rule: the smallest row, the first column
to beat the best). Window semantics (virtual column, merges of in-window predecessors,
node slots) are :func:`s2g.window.align_window`'s, line for line; results equal
:func:`s2g.window.align_windows_ref` (tests/test_striped.py). int32 where
:func:`s2g.scoring.fits_int32` allows, else the reference.
"""
from __future__ import annotations

import numba
import numpy as np

from .._numba import NJIT
from ..dp import LOCAL
from ..scoring import NEG_INF, fits_int32
from ..window import align_windows_ref, check_mode, window_slots

#: int32 lanes of a row vector (four 512-bit registers: with 16 LLVM unrolls the lane loop
#: and leaves it scalar, with 64 it vectorises it behind one runtime alias check)
L = 64
#: the substitution score of a padding row (never a match, far below any real score)
PAD_SCORE = -(1 << 28)


@numba.njit(**NJIT)
def _profile(q, m, B, a, b):
    """Substitution score of row ``i`` against each graph base code 0..4, striped."""
    P = np.full((5, B, L), PAD_SCORE, np.int32)
    for g in range(5):
        for i in range(1, m + 1):
            c = q[i - 1]
            P[g, i % B, i // B] = a if (c == g and c < 4) else -b
    return P


@numba.njit(**NJIT)
def _virtual(PH, PE, m, B, mode, o, e):
    """The virtual column (:func:`s2g.dp.virtual_column`), striped; padding rows as row m."""
    for s in range(B):
        for ln in range(L):
            i = ln * B + s
            r = min(i, m)
            h = 0 if (mode == LOCAL or r == 0) else -(o + e * r)
            PH[s, ln] = h
            PE[s, ln] = h - o - e


@numba.njit(**NJIT)
def _column(Pg, PH, PX, raw, H, E, Fl, carry, loc, oe, e, neg, B):
    """One column into H, E from the predecessor column: ``raw`` True: PH, PX are its H
    and E (``PE = max(H - o - e, E - e)`` made here), else PH, PX are the merged PH, PE.
    Every value int32 (``oe``, ``e``, ``neg`` int32 scalars: no widening to int64 in the
    lane loops); returns the column's maximum (every row, padding included)."""
    zero = np.int32(0)
    f = np.empty(L, np.int32)
    # pass 1: Hc = max(row above + sub, E) (>= 0 in local mode), E, and F within each lane
    # from -inf (Fl; f runs down each lane: F of the next row)
    for ln in range(L):
        up = PH[B - 1, ln - 1] if ln > 0 else neg
        ev = max(np.int32(PX[0, ln] - e), np.int32(PH[0, ln] - oe)) if raw else PX[0, ln]
        h = max(np.int32(up + Pg[0, ln]), ev)
        H[0, ln] = max(h, zero) if loc else h
        E[0, ln] = ev
    H[0, 0] = zero                                # row 0 (local and semiglobal)
    E[0, 0] = neg
    for ln in range(L):
        Fl[0, ln] = neg
        f[ln] = max(np.int32(H[0, ln] - oe), np.int32(neg - e))
    for s in range(1, B):
        for ln in range(L):
            ev = max(np.int32(PX[s, ln] - e), np.int32(PH[s, ln] - oe)) if raw else PX[s, ln]
            h = max(np.int32(PH[s - 1, ln] + Pg[s, ln]), ev)
            h = max(h, zero) if loc else h
            H[s, ln] = h
            E[s, ln] = ev
            fv = f[ln]
            Fl[s, ln] = fv
            f[ln] = max(np.int32(h - oe), np.int32(fv - e))
    # pass 3: the value entering each lane, carried down the lanes
    carry[0] = neg
    span = np.int32((B - 1) * e)
    for ln in range(1, L):
        end = max(Fl[B - 1, ln - 1], np.int32(carry[ln - 1] - span))
        carry[ln] = max(np.int32(H[B - 1, ln - 1] - oe), np.int32(end - e))
    # pass 4: H = max(Hc, F), the column maximum
    cm = np.empty(L, np.int32)
    for ln in range(L):
        cm[ln] = neg
    for s in range(B):
        for ln in range(L):
            h = max(H[s, ln], max(Fl[s, ln], carry[ln]))
            H[s, ln] = h
            cm[ln] = max(cm[ln], h)
        for ln in range(L):
            carry[ln] = np.int32(carry[ln] - e)
    H[0, 0] = zero
    best = neg
    for ln in range(L):
        best = max(best, cm[ln])
    return best


@numba.njit(**NJIT)
def _first_row(H, v, m, B):
    """The smallest row 1..m holding ``v``."""
    for ln in range(L):
        for s in range(B):
            i = ln * B + s
            if 1 <= i <= m and H[s, ln] == v:
                return i
    return -1


@numba.njit(**NJIT)
def align_window(q, lo, hi, base, node_start, pred_ptr, pred_idx, mode, a, b, o, e):
    """:func:`s2g.window.align_window` with striped int32 columns: (score, i, j)."""
    m = len(q)
    B = (m + 1 + L - 1) // L
    oe = o + e
    v0, wslot, n_slots = window_slots(lo, hi, node_start, pred_ptr, pred_idx)
    P = _profile(q, m, B, a, b)
    SH = np.empty((max(n_slots, 1), B, L), np.int32)
    SE = np.empty((max(n_slots, 1), B, L), np.int32)
    PH = np.empty((B, L), np.int32)
    PE = np.empty((B, L), np.int32)
    H = np.empty((2, B, L), np.int32)
    E = np.empty((2, B, L), np.int32)
    Fl = np.empty((B, L), np.int32)
    carry = np.empty(L, np.int32)
    best, bi, bj = NEG_INF, -1, -1
    ms, ml = m % B, m // B
    loc = mode == LOCAL
    oe32, e32, neg = np.int32(oe), np.int32(e), np.int32(NEG_INF)
    cur = 0
    v1 = v0 + len(wslot) - 1
    for v in range(v0, v1 + 1):
        pa, pb = pred_ptr[v], pred_ptr[v + 1]
        s0 = max(node_start[v], lo)
        s1 = min(node_start[v + 1], hi)
        for j in range(s0, s1):
            prev = 1 - cur
            if j > s0 or (j > lo and pb - pa == 1 and pred_idx[pa] == v - 1):
                cm = _column(P[base[j]], H[prev], E[prev], True, H[cur], E[cur], Fl, carry,
                             loc, oe32, e32, neg, B)
            else:
                _virtual(PH, PE, m, B, mode, o, e)
                if j == node_start[v]:
                    for k in range(pa, pb):
                        p = pred_idx[k]
                        if p < v0 or node_start[p + 1] - 1 < lo:
                            continue
                        sl = wslot[p - v0]
                        for s in range(B):
                            for ln in range(L):
                                h = SH[sl, s, ln]
                                PH[s, ln] = max(PH[s, ln], h)
                                PE[s, ln] = max(PE[s, ln], max(np.int32(h - oe32),
                                                               np.int32(SE[sl, s, ln] - e32)))
                cm = _column(P[base[j]], PH, PE, False, H[cur], E[cur], Fl, carry, loc, oe32,
                             e32, neg, B)
            if loc:
                if cm > best:
                    best, bi, bj = cm, _first_row(H[cur], cm, m, B), j
            elif H[cur, ms, ml] > best:
                best, bi, bj = H[cur, ms, ml], m, j
            cur = 1 - cur
        sl = wslot[v - v0]
        if sl >= 0:
            last = 1 - cur
            SH[sl] = H[last]
            SE[sl] = E[last]
    if mode == LOCAL and best <= 0:
        return NEG_INF, -1, -1
    return np.int64(best), bi, bj


@numba.njit(parallel=True, **NJIT)
def _align_windows(codes, offs, task_read, task_lo, task_hi, order, gr, mode, a, b, o, e,
                   n_work):
    """Worker ``w`` of ``n_work`` takes tasks ``order[w::n_work]`` (the costliest first:
    prange's static chunks of a sorted order gave one thread all the large windows);
    ``gr`` = the graph's (base, node_start, pred_ptr, pred_idx)."""
    base, node_start, pred_ptr, pred_idx = gr
    n = len(task_read)
    score = np.full(n, NEG_INF, np.int64)
    end_i = np.full(n, -1, np.int64)
    end_j = np.full(n, -1, np.int64)
    for w in numba.prange(n_work):
        for x in range(w, len(order), n_work):
            t = order[x]
            r = task_read[t]
            q = codes[offs[r]:offs[r + 1]]
            lo, hi = task_lo[t], task_hi[t]
            if len(q) == 0 or hi <= lo:
                continue
            score[t], end_i[t], end_j[t] = align_window(q, lo, hi, base, node_start,
                                                        pred_ptr, pred_idx, mode, a, b, o, e)
    return score, end_i, end_j


def align_windows(graph, codes_flat, offsets, task_read, task_lo, task_hi, scoring, mode):
    """(score, end_i, end_j) of every task, as :func:`s2g.window.align_windows_ref`: one
    thread a window (the costliest first), rows in lanes; the reference where int32 could
    overflow."""
    check_mode(mode)
    offs = np.asarray(offsets, np.int64)
    task_read = np.asarray(task_read, np.int64)
    lens = (offs[1:] - offs[:-1])[task_read] if len(task_read) else np.zeros(0, np.int64)
    if len(task_read) and not fits_int32(scoring, mode, int(lens.max()), graph.n_bases):
        return align_windows_ref(graph, codes_flat, offs, task_read, task_lo, task_hi,
                                 scoring, mode)
    lo, hi = np.asarray(task_lo, np.int64), np.asarray(task_hi, np.int64)
    order = np.argsort(-(hi - lo) * lens, kind="stable").astype(np.int64)
    a, b, o, e = scoring.as_tuple()
    return _align_windows(np.asarray(codes_flat, np.uint8), offs, task_read, lo, hi, order,
                          (graph.base, graph.node_start, graph.pred_ptr, graph.pred_idx),
                          int(mode), a, b, o, e,
                          max(1, min(numba.get_num_threads(), len(order))))


def few_long(offs, tr):
    """Tasks for :mod:`s2g.variants.striped` (a bool mask), or None: those of reads of at
    least ``striped_min_len`` bases, when they are fewer than ``striped_tasks_per_thread``
    x threads (lanes across reads then leave groups and threads idle: 26 windows of 10
    kbp reads on MHC ran 2.0x faster striped on 2 threads; 379 of 3 kbp reads 1.2x
    slower, 847 of 1 kbp 1.9x slower; 2-core VM, 2026-11-28)."""
    from ..config import settings
    cfg = settings()
    if cfg.striped_min_len <= 0 or not len(tr):
        return None
    few = (offs[tr + 1] - offs[tr]) >= cfg.striped_min_len
    n = int(np.count_nonzero(few))
    return few if 0 < n < cfg.striped_tasks_per_thread * numba.get_num_threads() else None
