"""Chains: colinear chaining of a read's anchors, as in minimap2, best chains first.

Anchors (read position, column) sorted by column (:mod:`s2g.seeded.seeds`); each anchor
extends the best of the previous ``CHAIN_LOOKBACK`` anchors that precede it on both
axes; gain ``min(dq, dc, k)``; gaps cost ``0.01 k |dc - dq| + 0.5 log2 |dc - dq|`` when
the read loses bases, only the log term when the graph does: a walk that skips a
bubble's other branch advances more columns than read bases. Chains are taken best
first, each anchor once (:func:`take_chains`: a chain's end anchors joined by a jump are
trimmed off), and only chains scoring at least ``min_chain`` (default: two anchors'
worth); a read without one gets its *weak* chains (:func:`read_chains`).
"""
from __future__ import annotations

import math

import numba
import numpy as np

from .._numba import NJIT, PARALLEL
from .seeds import anchors

#: anchors considered as predecessors in chaining
CHAIN_LOOKBACK = 50
#: widest column gap between two chained anchors, for a read of m bases: max(MAX_WINDOW,
#: 8 m) (a chain may jump over a bubble's other branch, which the order puts in between)
MAX_WINDOW = 100_000


#: ``0.5 log2(d + 1)`` for gap ``d`` below 4,096, the chaining's log term (computed per
#: pair: chaining 20,000 x 150 bp reads 0.09 s -> 0.06 s, 2,000 x 1 kbp 0.16 s -> 0.05 s, one
#: thread, sim 2 Mbp); math.log2 as :func:`chain` calls it, so the scores are the same bits
_HALF_LOG2 = np.array([0.5 * math.log2(d + 1.0) for d in range(4096)])


def penalty_tables(k, max_skip, max_ins):
    """(``0.5 log2(d + 1)`` for d in 0 .. max_skip, ``0.01 k d`` for d in 0 .. max_ins):
    the chaining penalty's terms as :func:`s2g.seeded.chains.chain` computes them on the
    host (the same bits)."""
    half = np.empty(max_skip + 1, np.float64)
    t = min(len(_HALF_LOG2), max_skip + 1)
    half[:t] = _HALF_LOG2[:t]
    for d in range(t, max_skip + 1):
        half[d] = 0.5 * math.log2(d + 1.0)
    lin = np.array([0.01 * k * d for d in range(max_ins + 1)], np.float64)
    return half, lin


@numba.njit(**NJIT)
def chain(ac, aq, k, max_skip, max_ins):
    """Best colinear chaining score ending at each anchor, and the predecessor."""
    n = len(ac)
    f = np.empty(n, np.float64)
    pred = np.full(n, -1, np.int64)
    for i in range(n):
        best = float(k)
        bp = -1
        for j in range(i - 1, max(-1, i - 1 - CHAIN_LOOKBACK), -1):
            dc = ac[i] - ac[j]
            if dc - aq[i] > max_skip:   # d >= dc - aq[i] > max_skip here and further back
                break                   # (anchors ascend by column)
            if f[j] + k <= best:        # gain <= k, penalty >= 0: cannot beat best
                continue
            dq = aq[i] - aq[j]
            if dq <= 0 or dc <= 0:
                continue
            d = dc - dq
            if d > max_skip or -d > max_ins:
                continue
            gain = min(dq, dc, k)
            if f[j] + gain <= best:     # penalty >= 0: cannot beat best (skips the log)
                continue
            ad = abs(d)
            pen = 0.0
            if ad > 0:
                pen = _HALF_LOG2[ad] if ad < 4096 else 0.5 * math.log2(ad + 1.0)
                if d < 0:
                    pen += 0.01 * k * ad
            sc = f[j] + gain - pen
            if sc > best:
                best = sc
                bp = j
        f[i] = best
        pred[i] = bp
    return f, pred



@numba.njit(**NJIT)
def _waypoints(pred, ac, aq, i, j, k, way):
    """The chain ``j`` .. ``i``'s anchors into ``way`` (W x 2: read position, column),
    ascending: its first and last and, between them, anchors at least ``max(k, span / (W -
    2))`` read bases apart (at most W); returns how many."""
    W = way.shape[0]
    step = max(np.int64(k), (aq[i] - aq[j]) // max(W - 2, 1))
    way[0, 0], way[0, 1] = aq[i], ac[i]
    n = 1
    if i == j:
        return n
    last = aq[i]
    x = pred[i]
    while x != j and x >= 0:
        if n < W - 1 and last - aq[x] >= step and aq[x] - aq[j] >= step:
            way[n, 0], way[n, 1] = aq[x], ac[x]
            n += 1
            last = aq[x]
        x = pred[x]
    way[n, 0], way[n, 1] = aq[j], ac[j]
    n += 1
    for z in range(n // 2):
        for y in range(2):
            way[z, y], way[n - 1 - z, y] = way[n - 1 - z, y], way[z, y]
    return n


@numba.njit(**NJIT)
def take_chains(f, pred, ac, aq, thr, max_chains, jump, k, out, way, nway):
    """Chains scoring at least ``thr`` into ``out``, best first, each anchor in one chain
    (see :func:`read_chains`); returns how many. A chain's end anchors joined to it by a
    *jump* (``dc - dq > jump`` columns: beyond a bubble's other branch, or another copy of
    a repeat) are trimmed off, down to one anchor (a chain left below ``thr`` is dropped,
    as any weak chain): its window is built from its ends
    (:func:`s2g.seeded.windows.read_windows`), and a stray anchor of another copy at each
    end put the read's true place, in the middle, outside it (a read with 23 anchors on its
    true copy aligned at 48 of 288 with MAPQ 60, issue #40). The window's walk-distance reach
    from a trimmed end still covers a true jump's walk. ``way`` (max_chains x W x 2) and
    ``nway``: each chain's waypoints (:func:`_waypoints`; W = 0: none)."""
    n = len(f)
    order = np.argsort(-f, kind="mergesort")       # stable: ties by column (the GPU's order)
    used = np.zeros(n, np.bool_)
    nc = 0
    for t in range(n):
        i = order[t]
        if used[i]:
            continue
        if f[i] < thr or nc == max_chains:
            break
        # walk back to the chain's first anchor (stop at an anchor of an earlier chain)
        j = i
        cnt = 1
        used[i] = True
        while pred[j] >= 0 and not used[pred[j]]:
            j = pred[j]
            used[j] = True
            cnt += 1
        sc = f[i] - (f[pred[j]] if pred[j] >= 0 else 0.0)
        i0, j0 = i, j
        while cnt > 1 and (ac[i] - ac[pred[i]]) - (aq[i] - aq[pred[i]]) > jump:
            i = pred[i]
            cnt -= 1
        while cnt > 1:
            nx = _next_of(pred, i, j)
            if (ac[nx] - ac[j]) - (aq[nx] - aq[j]) <= jump:
                break
            j = nx
            cnt -= 1
        if i != i0 or j != j0:
            sc = f[i] - f[j] + k
        if sc < thr:
            continue
        out[nc, 0], out[nc, 1], out[nc, 2], out[nc, 3] = aq[j], ac[j], aq[i], ac[i]
        out[nc, 4], out[nc, 5] = sc, cnt
        if way.shape[1] > 1:
            nway[nc] = _waypoints(pred, ac, aq, i, j, k, way[nc])
        nc += 1
    return nc


@numba.njit(**NJIT)
def read_chains(q, keys, kcols, starts, shift, k, s, max_occ, max_chains, min_chain,
                max_window, out, stats, way, nway):
    """Chains of one read into ``out`` (max_chains x 6: q0, c0, q1, c1 (first and last
    anchor), score, anchors), best first, each anchor in one chain; returns how many.
    A read with anchors but no chain scoring ``min_chain`` gets its *weak* chains instead
    (every chain down to one anchor, score ``k``; ``stats[2]`` = 1). ``stats``: seeds
    skipped, anchors, weak. ``way``, ``nway``: the chains' waypoints (:func:`take_chains`)."""
    m = len(q)
    ac, aq, skipped = anchors(q, keys, kcols, starts, shift, k, s, max_occ)
    stats[0] = skipped
    stats[1] = len(ac)
    n = len(ac)
    if n == 0:
        return 0
    f, pred = chain(ac, aq, k, max(max_window, 8 * m), m // 4 + 16)
    jump = 16 + m // 8                  # the window's padding (_read_windows_s)
    nc = take_chains(f, pred, ac, aq, min_chain, max_chains, jump, float(k), out, way, nway)
    if nc == 0 and float(k) < min_chain:
        nc = take_chains(f, pred, ac, aq, float(k), max_chains, jump, float(k), out, way,
                         nway)
        stats[2] = 1
    return nc


@numba.njit(inline="always", **NJIT)
def _next_of(pred, i, j):
    """The anchor after ``j`` in the chain that ends at ``i`` (``j`` not ``i``)."""
    x = i
    while pred[x] != j:
        x = pred[x]
    return x


@numba.njit(**PARALLEL)
def batch_chains(codes, offs, keys, kcols, starts, shift, k, s, max_occ, max_chains,
                 min_chain, max_window, n_way=0, way_min_len=0):
    """Chains of every read (:func:`read_chains`), in parallel over reads: (chains,
    chain counts, stats, waypoints, waypoint counts); reads of at least ``way_min_len``
    bases get up to ``n_way`` waypoints a chain (``n_way`` 0: none; the windows'
    corridors, :func:`s2g.seeded.windows._read_windows_s`)."""
    n = len(offs) - 1
    ch = np.zeros((n, max_chains, 6), np.float64)
    nch = np.zeros(n, np.int64)
    stats = np.zeros((n, 3), np.int64)
    way = np.zeros((n, max_chains, n_way, 2), np.int64)
    nway = np.zeros((n, max_chains), np.int64)
    none = np.zeros((max_chains, 0, 2), np.int64)
    for r in numba.prange(n):
        q = codes[offs[r]:offs[r + 1]]
        if len(q) == 0:
            continue
        wr = way[r] if n_way > 1 and len(q) >= way_min_len else none
        nch[r] = read_chains(q, keys, kcols, starts, shift, k, s, max_occ, max_chains,
                             min_chain, max_window, ch[r], stats[r], wr, nway[r])
    return ch, nch, stats, way, nway
