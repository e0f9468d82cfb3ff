"""Seeds of a read: its closed syncmers looked up in the graph's index, as anchors.

The read's closed syncmers (:mod:`s2g.index`, same k and s) are looked up in the index;
k-mers with more than ``max_occ`` graph positions are skipped (repeats) and counted.
Each remaining graph position gives an *anchor* (graph column, read position of the
k-mer's last base), the input of chaining (:mod:`s2g.seeded.chains`).
"""
from __future__ import annotations

import numba
import numpy as np

from .._numba import NJIT
from ..index import hash64, lookup

#: k-mers with more graph positions than this are skipped as repeats
MAX_OCC = 200


@numba.njit(**NJIT)
def read_syncmers(q, k, s):
    """Closed syncmers of read codes ``q``: (hashes, position of each k-mer's last base).
    The test is :func:`s2g.index.is_closed_syncmer`'s (the smallest s-mer hash first or
    last, first minimum on ties) on s-mer hashes computed once per position (it hashes
    each k-mer's k - s + 1 s-mers: 9x the hashes at k=19, s=11)."""
    m = len(q)
    kmask = (np.uint64(1) << np.uint64(2 * k)) - np.uint64(1)
    smask = (np.uint64(1) << np.uint64(2 * s)) - np.uint64(1)
    hs = np.empty(max(m - k + 1, 0), np.uint64)
    ps = np.empty(max(m - k + 1, 0), np.int64)
    sh = np.empty(m, np.uint64)                  # hash of the s-mer ending at each base
    n = 0
    x = np.uint64(0)
    ln = 0
    for i in range(m):
        b = q[i]
        if b > 3:
            ln = 0
            x = np.uint64(0)
            continue
        x = ((x << np.uint64(2)) | np.uint64(b)) & kmask
        ln += 1
        if ln >= s:
            sh[i] = hash64(x & smask, smask)
        if ln >= k:
            f = i - (k - s)                      # the k-mer's first s-mer
            best = sh[f]
            at = 0
            for t in range(1, k - s + 1):
                if sh[f + t] < best:
                    best = sh[f + t]
                    at = t
            if at == 0 or at == k - s:
                hs[n] = hash64(x, kmask)
                ps[n] = i
                n += 1
    return hs[:n], ps[:n]


@numba.njit(**NJIT)
def anchors(q, keys, kcols, starts, shift, k, s, max_occ):
    """Anchors (column, read position) of read ``q``, sorted; and the count of skipped seeds."""
    hs, ps = read_syncmers(q, k, s)
    n = 0
    skipped = 0
    lo_at = np.full(len(hs), -1, np.int64)
    hi_at = np.full(len(hs), -1, np.int64)
    for t in range(len(hs)):
        x, y = lookup(keys, starts, shift, hs[t])
        if y > x:
            if y - x > max_occ:
                skipped += 1
            else:
                lo_at[t] = x
                hi_at[t] = y
                n += y - x
    ac = np.empty(n, np.int64)
    aq = np.empty(n, np.int64)
    p = 0
    for t in range(len(hs)):
        x = lo_at[t]
        if x < 0:
            continue
        for u in range(x, hi_at[t]):
            ac[p] = kcols[u]
            aq[p] = ps[t]
            p += 1
    if n < (1 << 20):         # sort the packed (column, read position) keys themselves:
        key = np.sort(ac * np.int64(1 << 24) + aq)    # equal keys are equal anchors
        return key >> np.int64(24), key & np.int64((1 << 24) - 1), skipped
    order = np.argsort(ac)
    return ac[order], aq[order], skipped
