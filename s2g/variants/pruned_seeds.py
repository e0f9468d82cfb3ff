"""Where in a row of :mod:`s2g.variants.pruned` a fresh local start can still count.

A local alignment may start at any cell, so the pruned pass computes whole rows while
``U[i]`` (the read suffix's bound) reaches the threshold ``T``: on 100 MHC lead windows of
10 kbp reads those rows were ~40% of the cells. But an alignment from cell ``(i, c)``
aligns the bases ``i..`` to columns after ``c``, and the read's q-grams spelled nowhere
after ``c`` cannot match there. Seeds (the read's q-grams at ``i, i + q, i + 2q, ...``,
disjoint, :data:`SEEDS` of them) tile ``[i, i + K)``; each one with no walk spelling it
that ends after ``c`` holds an error position of the alignment, and no error event costs
less than ``h`` (:func:`s2g.variants.pruned.hit_cost`) a position it needs. So an
alignment from ``(i, c)`` scores at most ``V_c(i) = a K - h n_c(i) + U[i + K]`` (``n_c``
the seeds unavailable after ``c``; the bases past ``i + K`` bounded by ``U``, which
holds for any alignment inside them; one that stops within the seeds:
:func:`fresh_limits`): A*PA's seed heuristic (Groot Koerkamp and Ivanov 2024) with the
window's columns as its order.

``V_c`` falls as ``c`` passes the seeds' columns: per row, ``jm[i]`` is the last column
with ``V_c(i) >= T`` and ``u2[i] < T`` the bound past it. A row computes its fresh starts
up to ``jm[i]`` only, and keeps a cell past it where ``H + min(u2, a walk) >= T``: exact
by the same induction as the module's (a bound, never a guess).
"""
from __future__ import annotations

import math

import numba
import numpy as np

from .._numba import NJIT
from ..scoring import NEG_INF as NEG

#: seeds a row's bound looks at: its columns past the diagonal fall ``h / q`` a column,
#: so ``SEEDS q`` bounds how far past it a fresh start is still weighed (a first pass's
#: ``U[i] - T`` is a few hundred points: ~100 seeds)
SEEDS = 256
#: rows sharing one sort of their seeds (:func:`fresh_limits`)
GROUP = 8


@numba.njit(**NJIT)
def seed_columns(q, last, sid, qg, lo):
    """``L[r]``: the last window column (graph column less ``lo``) a walk spelling the read
    q-gram at ``r`` ends at, -1 where none does (or it has an N); ``last`` as
    :func:`s2g.seeded.windows._qgram_set` filled it for window ``sid``."""
    m = len(q)
    n = max(m - qg + 1, 0)
    L = np.full(n, -1, np.int64)
    mask = (np.int64(1) << (2 * qg)) - 1
    key = np.int64(0)
    good = 0
    low = (np.int64(1) << 32) - 1
    for k in range(m):
        c = q[k]
        if c < 4:
            key = ((key << 2) | c) & mask
            good += 1
        else:
            good = 0
        if k >= qg - 1 and good >= qg:
            v = last[key]
            if (v >> 32) == sid:
                L[k - qg + 1] = (v & low) - lo
    return L


@numba.njit(**NJIT)
def fresh_limits(L, U, T, a, h, qg, W, jm, u2):
    """Fill ``jm[i]``, ``u2[i]`` (module doc) for the rows ``i`` (``0..m``) where a fresh
    start could reach ``T`` (``U[i] >= T``); other rows get ``jm = W - 1``, ``u2 = U[i]``
    (no change). ``L``: :func:`seed_columns`. Rows ``g - GROUP < i <= g`` share the seeds
    from ``g`` (one sort a group): the ``g - i`` bases before them add at most ``a`` each.

    An alignment that stops inside the seeds, at base ``t``, has the seeds before ``t``
    unavailable where they are and at most ``a`` a base: where ``h <= a q`` (a seed's
    bases are worth more than its error) that is at most ``a K - h n_c + (h - a)`` (the
    last seed cut short), so ``V_c = a K + max(U[i + K], h - a) - h n_c`` covers it;
    otherwise ``V_c`` is at least ``a K`` (no limit where that reaches ``T``)."""
    m = len(U) - 1
    vals = np.empty(SEEDS, np.int64)
    for i in range(m + 1):
        jm[i] = W - 1
        u2[i] = U[i]
    for g in range(0, m + GROUP, GROUP):
        g = min(g, m)
        i0 = max(g - GROUP + 1, 0)
        if U[i0] < T:                          # U falls with i: no later row either
            break
        ns = min(SEEDS, (m - g) // qg)
        K = ns * qg
        if ns == 0:
            continue
        srt = vals[:0]
        for i in range(i0, g + 1):
            if U[i] < T:
                break
            d = g - i
            if h <= a * qg:                    # stopping inside the seeds: see the doc
                low = np.int64(NEG)
                top = a * (d + K) + max(U[g + K], np.int64(math.ceil(max(h - a, 0.0))))
            else:
                low = a * (d + K)
                if low >= T:
                    continue
                top = low + U[g + K]
            B = np.int64(math.floor((top - T) / h))    # seeds that may be unavailable
            if B >= ns:
                continue
            if B < 0:
                jm[i] = -1
                u2[i] = min(U[i], max(low, top))
                continue
            if len(srt) == 0:
                for k in range(ns):
                    vals[k] = L[g + k * qg]
                srt = np.sort(vals[:ns])
            jm[i] = max(srt[B] - 1, np.int64(-1))     # n_c <= B for c < the (B+1)th column
            u2[i] = min(U[i], max(low, np.int64(math.ceil(top - h * (B + 1) - 1e-9))))
    return jm, u2
