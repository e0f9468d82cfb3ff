"""Seeded alignment: syncmer seeds -> chains -> column windows -> exact DP in each window.

Full-graph DP costs (graph columns x read length) per read, whatever the graph's size;
on a 100 Mbp graph that is seconds per read even at the GPU kernel's 3,000 GCUPS. Like
every practical graph mapper (vg giraffe, GraphAligner, minigraph) s2g seeds first and
runs DP only near the seeds; unlike them, the DP inside a candidate region stays exact:
**the reported alignment is the exact optimum over every walk inside the window it
names** (:mod:`s2g.window`), and a read's answer is the best of its windows.

Per read (all compiled, in parallel over reads: :func:`_candidates`):

1. *Seeds*: the read's closed syncmers (:mod:`s2g.index`, same k and s) looked up in the
   index; k-mers with more than ``max_occ`` graph positions are skipped (repeats) and
   counted.
2. *Chains*: anchors (read position, column) sorted by column; colinear chaining as in
   minimap2 (each anchor extends the best of the previous ``CHAIN_LOOKBACK`` anchors that
   precede it on both axes; gain ``min(dq, dc, k)``; gaps cost ``0.01 k |dc - dq| +
   0.5 log2 |dc - dq|`` when the read loses bases, only the log term when the graph
   does: a walk that skips a bubble's other branch advances more columns than read
   bases). Chains are taken best first, each anchor once.
3. *Windows*: a chain from (q0, c0) to (q1, c1) becomes the set of columns within walk
   distance ``q0 + 1 + pad`` upstream of ``c0`` and ``m - q1 + pad`` downstream of ``c1``
   (the read's flanks; ``pad = 16 + m / 8`` for indels), and the walks between the
   anchors (within ``q1 + 1 + pad + x`` upstream of ``c1`` and ``m - q0 + pad + x``
   downstream of ``c0``, ``x`` = a deletion between them: :func:`_read_windows`); walk
   distance in bases, by bounded Dijkstra searches over the nodes (:func:`_reach`),
   kept as node pieces (a node from one in-node offset to another): every walk the read
   can follow through its chain lies inside, and nothing the topological order merely
   puts between a bubble's branches does (a column range [lowest, highest] held whole
   structural-variant branches: windows of 10^4-10^5 columns on the real graphs).
   Windows sharing a node merge. At most ``max_cand`` windows per read, best chains
   first, and only chains scoring at least ``min_chain``
   (default: two anchors' worth). A batch's windows become one *window graph*
   (:class:`s2g.window.WindowGraph`) in which each window is a column range, so every
   range-window kernel runs on it unchanged; end cells and paths are mapped back.

Then the exact DP runs in every window (the ``simd`` CPU kernel's ``align_windows``, the
GPU's :func:`s2g.gpu_traceback.run_windows`, or :func:`s2g.window.align_windows_ref`: one
contract), the best window is the read's alignment (ties:
the smaller end column), and the traceback recomputes it restricted to the window.

MAPQ (GAF column 12) compares the best score ``s1`` with the other windows' scores
``s2``: a score difference of one mismatch (``a + b``) is the evidence a sequencing
error gives, worth ``MAPQ_PER_MISMATCH`` phred units, so ``MAPQ = min(60, round(-10
log10(sum_i 10^(-c d_i) / (1 + sum_i ...))))`` with ``d_i = (s1 - s2_i) / (a + b)``.
Reads whose skipped (over-frequent) seeds outnumber the anchors of their best chain
(their other copies were not examined) get at most ``MAPQ_REPEAT_CAP``. Measured
calibration: README.md ("Seeded alignment").
"""
from __future__ import annotations

import math
import time

import numba
import numpy as np

from ._numba import NJIT, PARALLEL
from .index import hash64, lookup
from .result import BatchResult
from .scoring import NEG_INF
from .window import WindowGraph, check_mode

#: most windows DP'd per read
MAX_CAND = 5
#: anchors considered as predecessors in chaining
CHAIN_LOOKBACK = 50
#: k-mers with more graph positions than this are skipped as repeats
MAX_OCC = 200
#: widest column gap between two chained anchors, for a read of m bases: max(MAX_WINDOW,
#: 8 m) (a chain may jump over a bubble's other branch, which the order puts in between)
MAX_WINDOW = 100_000
MAPQ_PER_MISMATCH = 20.0
MAPQ_MAX = 60
MAPQ_REPEAT_CAP = 3
#: chains left out by ``max_cand`` count against MAPQ when they score at least this
#: fraction of the best chain (:func:`_pick`)
CUT_RATIO = 0.5
#: ... and MAPQ is at most this (a read whose candidates were cut is never MAPQ 60)
MAPQ_CUT_CAP = 30
#: reads without a usable chain (``--unseeded auto``): full-graph DP when it costs at most
#: this many cells (graph columns x read length) per read; otherwise the windows of their
#: weak chains, or a no-hit line when they have no anchor. CPU: ~0.3 s a read on one
#: thread of the simd kernel; GPU: ~20 ms of the fast kernel.
FULL_FALLBACK_CELLS = {"cpu": 500_000_000, "gpu": 50_000_000_000}


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
def _anchors(q, keys, kcols, starts, shift, k, s, max_occ):
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
    order = np.argsort(ac * np.int64(1 << 24) + aq) if n < (1 << 20) else np.argsort(ac)
    return ac[order], aq[order], skipped


#: ``0.5 log2(d + 1)`` for gap ``d`` below 4,096, the chaining's log term (computed per
#: pair: chaining 20,000 x 150 bp reads 0.09 s -> 0.06 s, 2,000 x 1 kbp 0.16 s -> 0.05 s, one
#: thread, sim 2 Mbp); math.log2 as :func:`_chain` calls it, so the scores are the same bits
_HALF_LOG2 = np.array([0.5 * math.log2(d + 1.0) for d in range(4096)])


@numba.njit(**NJIT)
def _chain(ac, aq, k, max_skip, max_ins):
    """Best colinear chaining score ending at each anchor, and the predecessor."""
    n = len(ac)
    f = np.empty(n, np.float64)
    pred = np.full(n, -1, np.int64)
    for i in range(n):
        best = float(k)
        bp = -1
        for j in range(i - 1, max(-1, i - 1 - CHAIN_LOOKBACK), -1):
            dc = ac[i] - ac[j]
            dq = aq[i] - aq[j]
            if dq <= 0 or dc <= 0:
                continue
            d = dc - dq
            if d > max_skip or -d > max_ins:
                continue
            gain = min(dq, dc, k)
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


# Window searches run on per-worker scratch instead of a typed Dict per search and a heapq
# list of tuples (SeededAligner.candidates, best of 5, 2-core VM, with the seeding and
# chaining changes: DRB1 20,000 x 150 bp reads 1.05 s -> 0.54 s, sim 2 Mbp 0.34 s -> 0.22 s;
# window building alone on DRB1 ~3x faster): arrays over the graph's nodes stamped with a
# search number (``stamp[v] == epoch``: v was reached in this search; no clearing between
# searches), each reached node's slot in the search's piece buffer, its distance, and the
# heap as one int64 array of keys ``dist << 32 | node`` (distances are bases of one read's
# flank or chain plus padding: far below 2^31). The scratch is made
# once per worker of :func:`_windows` (SCRATCH_NODE_BYTES per graph node; fewer workers
# when all of them would need more than SCRATCH_BYTES: 2 M nodes x 16 threads = 512 MB).
#: bytes of search scratch per graph node and worker (stamp, slot: int32; distance: int64)
SCRATCH_NODE_BYTES = 16
#: most bytes of search scratch for all workers of one :func:`_windows` call together
SCRATCH_BYTES = 1 << 30
#: a reached node not (yet) entered: only a part of it is within reach
_UNSEEN = np.int64(1) << 62
_NODE_BITS = np.int64(32)
_NODE_MASK = (np.int64(1) << 32) - 1


@numba.njit(**NJIT)
def _scratch(n_nodes, cap):
    """One worker's search scratch: (stamp, slot, dist, epoch, heap, piece buffer (node,
    lo, hi), window buffer (node, lo, hi)); buffers start at ``cap`` entries and grow."""
    return (np.zeros(n_nodes, np.int32), np.empty(n_nodes, np.int32),
            np.empty(n_nodes, np.int64), np.zeros(1, np.int64), np.empty(cap, np.int64),
            np.empty(cap, np.int64), np.empty(cap, np.int64), np.empty(cap, np.int64),
            np.empty(cap, np.int64), np.empty(cap, np.int64), np.empty(cap, np.int64))


@numba.njit(**NJIT)
def _grown(a, need):
    """``a`` or, when shorter than ``need``, a copy at least twice as long."""
    if len(a) >= need:
        return a
    b = np.empty(max(need, 2 * len(a)), a.dtype)
    b[:len(a)] = a
    return b


@numba.njit(**NJIT)
def _epoch(stamp, ep):
    """A new search number (stamps cleared when the int32 runs out)."""
    if ep[0] >= 2147483646:
        stamp[:] = 0
        ep[0] = 0
    ep[0] += 1
    return np.int32(ep[0])


@numba.njit(inline="always", **NJIT)
def _heap_push(h, n, key):
    i = n
    while i > 0:
        p = (i - 1) >> 1
        if h[p] <= key:
            break
        h[i] = h[p]
        i = p
    h[i] = key
    return n + 1


@numba.njit(inline="always", **NJIT)
def _heap_pop(h, n):
    top = h[0]
    n -= 1
    if n > 0:
        last = h[n]
        i = 0
        while True:
            c = 2 * i + 1
            if c >= n:
                break
            if c + 1 < n and h[c + 1] < h[c]:
                c += 1
            if h[c] >= last:
                break
            h[i] = h[c]
            i = c
        h[i] = last
    return top, n


@numba.njit(inline="always", **NJIT)
def _hull(stamp, slot, sd, bn, bl, bh, nb, e, v, lo, hi):
    """Widen node ``v``'s piece of this search (epoch ``e``) to cover [lo, hi], or add it
    at ``nb`` (the buffer has room); returns the new piece count."""
    if stamp[v] == e:
        s = slot[v]
        bl[s] = min(bl[s], lo)
        bh[s] = max(bh[s], hi)
        return nb
    stamp[v] = e
    slot[v] = nb
    sd[v] = _UNSEEN
    bn[nb] = v
    bl[nb] = lo
    bh[nb] = hi
    return nb + 1


@numba.njit(**NJIT)
def _reach(c, dist, node_start, ptr, idx, forward, stamp, slot, sd, ep, heap, bn, bl, bh, nb):
    """Append to the scratch's piece buffer (from ``nb``), one piece per node (lowest,
    highest in-node offset), every column whose walk distance from column ``c`` (both ends
    counted) is at most ``dist`` bases, walking successors (``forward``) or predecessors: a
    bounded Dijkstra over the nodes, each node entered at its first (last) base. Returns
    (heap, piece buffers, piece count): arrays that had to grow are new."""
    e = _epoch(stamp, ep)
    bn, bl, bh = _grown(bn, nb + 1), _grown(bl, nb + 1), _grown(bh, nb + 1)
    v = np.int64(np.searchsorted(node_start, c, side="right") - 1)
    ns = np.int64(node_start[v])
    ln_v = np.int64(node_start[v + 1]) - ns
    off = np.int64(c) - ns
    if forward:
        room = ln_v - 1 - off                         # bases after c inside v
        if room + 1 >= dist:
            nb = _hull(stamp, slot, sd, bn, bl, bh, nb, e, v, off, off + dist - 1)
            return heap, bn, bl, bh, nb
        nb = _hull(stamp, slot, sd, bn, bl, bh, nb, e, v, off, ln_v - 1)
    else:
        room = off
        if room + 1 >= dist:
            nb = _hull(stamp, slot, sd, bn, bl, bh, nb, e, v, off - dist + 1, off)
            return heap, bn, bl, bh, nb
        nb = _hull(stamp, slot, sd, bn, bl, bh, nb, e, v, np.int64(0), off)
    sd[v] = room + 1
    heap = _grown(heap, 1)
    heap[0] = ((room + 1) << _NODE_BITS) | v
    nh = 1
    while nh > 0:
        key, nh = _heap_pop(heap, nh)
        du = key >> _NODE_BITS
        u = key & _NODE_MASK
        if sd[u] < du:
            continue
        t0, t1 = np.int64(ptr[u]), np.int64(ptr[u + 1])
        if nb + t1 - t0 > len(bn):
            bn, bl, bh = (_grown(bn, nb + t1 - t0), _grown(bl, nb + t1 - t0),
                          _grown(bh, nb + t1 - t0))
        if nh + t1 - t0 > len(heap):
            heap = _grown(heap, nh + t1 - t0)
        for t in range(t0, t1):
            w = np.int64(idx[t])
            ln = np.int64(node_start[w + 1] - node_start[w])
            if du + ln >= dist:                       # the walk ends inside w
                k = dist - du                         # bases of w within reach (>= 1)
                if forward:
                    nb = _hull(stamp, slot, sd, bn, bl, bh, nb, e, w, np.int64(0), k - 1)
                else:
                    nb = _hull(stamp, slot, sd, bn, bl, bh, nb, e, w, ln - k, ln - 1)
            else:
                nb = _hull(stamp, slot, sd, bn, bl, bh, nb, e, w, np.int64(0), ln - 1)
                nd = du + ln
                if nd < sd[w]:
                    sd[w] = nd
                    nh = _heap_push(heap, nh, (nd << _NODE_BITS) | w)
    return heap, bn, bl, bh, nb


@numba.njit(**NJIT)
def _walk_dist(c0, c1, budget, node_start, ptr, idx, stamp, sd, ep, heap):
    """Bases of the shortest walk from column ``c0`` to column ``c1`` (both ends counted;
    ``ptr``/``idx``: successors), or -1 when none has at most ``budget`` bases; and the
    scratch's heap (a new array when it grew)."""
    v = np.int64(np.searchsorted(node_start, c0, side="right") - 1)
    w1 = np.int64(np.searchsorted(node_start, c1, side="right") - 1)
    if v == w1:
        return (np.int64(c1 - c0 + 1) if c0 <= c1 <= c0 + budget - 1 else np.int64(-1)), heap
    e = _epoch(stamp, ep)
    tail = np.int64(c1 - node_start[w1] + 1)
    d0 = np.int64(node_start[v + 1] - c0)
    stamp[v] = e
    sd[v] = d0
    heap = _grown(heap, 1)
    heap[0] = (d0 << _NODE_BITS) | v
    nh = 1
    while nh > 0:
        key, nh = _heap_pop(heap, nh)
        du = key >> _NODE_BITS
        u = key & _NODE_MASK
        if sd[u] < du:
            continue
        t0, t1 = np.int64(ptr[u]), np.int64(ptr[u + 1])
        if nh + t1 - t0 > len(heap):
            heap = _grown(heap, nh + t1 - t0)
        for t in range(t0, t1):
            w = np.int64(idx[t])
            if w == w1:                       # popped in order: the first is the shortest
                return (du + tail if du + tail <= budget else np.int64(-1)), heap
            nd = du + np.int64(node_start[w + 1] - node_start[w])
            if nd + tail <= budget and (stamp[w] != e or nd < sd[w]):
                stamp[w] = e
                sd[w] = nd
                nh = _heap_push(heap, nh, (nd << _NODE_BITS) | w)
    return np.int64(-1), heap


@numba.njit(**NJIT)
def _take_chains(f, pred, ac, aq, thr, max_chains, jump, k, out):
    """Chains scoring at least ``thr`` into ``out``, best first, each anchor in one chain
    (see :func:`_read_chains`); returns how many. A chain's end anchors joined to it by a
    *jump* (``dc - dq > jump`` columns: beyond a bubble's other branch, or another copy of
    a repeat) are trimmed off, down to one anchor (a chain left below ``thr`` is dropped,
    as any weak chain): its window is built from its
    ends (:func:`_read_windows_s`), and a stray anchor of another copy at each end put
    the read's true place, in the middle, outside it (a read with 23 anchors on its true
    copy aligned at 48 of 288 with MAPQ 60, issue #40). The window's walk-distance reach
    from a trimmed end still covers a true jump's walk."""
    n = len(f)
    order = np.argsort(-f)
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
        nc += 1
    return nc


@numba.njit(**NJIT)
def _read_chains(q, keys, kcols, starts, shift, k, s, max_occ, max_chains, min_chain,
                 max_window, out, stats):
    """Chains of one read into ``out`` (max_chains x 6: q0, c0, q1, c1 (first and last
    anchor), score, anchors), best first, each anchor in one chain; returns how many.
    A read with anchors but no chain scoring ``min_chain`` gets its *weak* chains instead
    (every chain down to one anchor, score ``k``; ``stats[2]`` = 1). ``stats``: seeds
    skipped, anchors, weak."""
    m = len(q)
    ac, aq, skipped = _anchors(q, keys, kcols, starts, shift, k, s, max_occ)
    stats[0] = skipped
    stats[1] = len(ac)
    n = len(ac)
    if n == 0:
        return 0
    f, pred = _chain(ac, aq, k, max(max_window, 8 * m), m // 4 + 16)
    jump = 16 + m // 8                  # the window's padding (_read_windows_s)
    nc = _take_chains(f, pred, ac, aq, min_chain, max_chains, jump, float(k), out)
    if nc == 0 and float(k) < min_chain:
        nc = _take_chains(f, pred, ac, aq, float(k), max_chains, jump, float(k), out)
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
def _chains(codes, offs, keys, kcols, starts, shift, k, s, max_occ, max_chains, min_chain,
            max_window):
    n = len(offs) - 1
    ch = np.zeros((n, max_chains, 6), np.float64)
    nch = np.zeros(n, np.int64)
    stats = np.zeros((n, 3), np.int64)
    for r in numba.prange(n):
        q = codes[offs[r]:offs[r + 1]]
        if len(q) == 0:
            continue
        nch[r] = _read_chains(q, keys, kcols, starts, shift, k, s, max_occ, max_chains,
                              min_chain, max_window, ch[r], stats[r])
    return ch, nch, stats


@numba.njit(**NJIT)
def _shares_node(wn, a0, na, b0, nb):
    """Whether piece lists ``wn[a0:a0+na]`` and ``wn[b0:b0+nb]`` (nodes ascending) share a
    node."""
    i, j = a0, b0
    ea, eb = a0 + na, b0 + nb
    while i < ea and j < eb:
        if wn[i] == wn[j]:
            return True
        if wn[i] < wn[j]:
            i += 1
        else:
            j += 1
    return False


@numba.njit(**NJIT)
def _in_windows(col, node_start, wn, wl, wh, w_at, w_n, nw):
    """Whether graph column ``col`` lies in a piece of one of the ``nw`` windows."""
    v = np.int64(np.searchsorted(node_start, col, side="right") - 1)
    off = col - np.int64(node_start[v])
    for y in range(nw):
        for z in range(w_at[y], w_at[y] + w_n[y]):
            if wn[z] == v and wl[z] <= off <= wh[z]:
                return True
    return False


@numba.njit(**NJIT)
def _merge(wn, wl, wh, a0, na, b0, nb, out):
    """The union of piece lists ``[a0, a0 + na)`` and ``[b0, b0 + nb)`` of ``wn/wl/wh``
    written from ``out`` (beyond both; room checked by the caller), returns its length: nodes
    ascending, a node's intervals merged where they overlap or touch, kept apart where they
    do not (a long node whose head one search reached and whose tail another: the bases
    between are no part of any walk the window stands for)."""
    i, j, k = a0, b0, out
    ea, eb = a0 + na, b0 + nb
    while i < ea or j < eb:
        if j >= eb or (i < ea and (wn[i] < wn[j] or (wn[i] == wn[j] and wl[i] <= wl[j]))):
            x = i
            i += 1
        else:
            x = j
            j += 1
        if k > out and wn[k - 1] == wn[x] and wl[x] <= wh[k - 1] + 1:
            wh[k - 1] = max(wh[k - 1], wh[x])
        else:
            wn[k], wl[k], wh[k] = wn[x], wl[x], wh[x]
            k += 1
    return k - out


@numba.njit(**NJIT)
def _read_windows_s(m, ch, nch, max_cand, max_del, node_start, pred_ptr, pred_idx, succ_ptr,
                    succ_idx, cap, p0, p_node, p_lo, p_hi, info, cut, sc):
    """Windows of one read from its chains (best first), as node pieces (a node may hold
    two: see :func:`_merge`). Chain (q0, c0) .. (q1, c1) covers every column within walk
    distance ``q0 + 1 + pad`` upstream of ``c0`` and ``m - q1 + pad`` downstream of ``c1``
    (the read's flanks; ``pad = 16 + m / 8``: indels), and the walks between: within
    ``q1 + 1 + pad + x`` upstream of ``c1`` and ``m - q0 + pad + x`` downstream of ``c0``,
    where ``x`` is what the shortest walk from c0 to c1 has beyond the read's ``q1 - q0 +
    1`` bases (a deletion in the read; at most ``max_del``, the longest deletion an
    alignment of m bases can pay for; 0 when a chain only jumps a bubble's other branch).
    A window sharing a node with earlier ones merges with them; at most ``max_cand``;
    ``cut[0]`` = the best score of the chains left out once ``max_cand`` windows were made
    that score at least ``CUT_RATIO`` x the best chain and do not lie inside those windows
    (competitors never aligned: :func:`_pick`; 0 when none).
    Returns (windows, pieces, scratch); ``info[w]`` = (chain score, anchors, pieces); when
    there are at most ``cap`` pieces they go to ``p_node/p_lo/p_hi`` from ``p0``, window
    after window. ``sc``: the worker's scratch (:func:`_scratch`); windows live in its
    window buffer (``w_at[y]``, ``w_n[y]``: where and how many), a merged window written
    anew after the others (the buffer is reused from the start by the next read). No
    list of arrays: numba 0.68.1's ``list.pop(i)`` (i not the last) on one corrupts the
    heap (a window absorbing a later one did it: aborts on LPA and cactus 1-5 kbp reads)."""
    pad = 16 + m // 8
    info[:, :] = 0.0
    stamp, slot, sd, ep, heap, bn, bl, bh, wn, wl, wh = sc
    w_at = np.empty(max_cand, np.int64)
    w_n = np.empty(max_cand, np.int64)
    nw = 0
    top = 0
    cut[0] = 0.0
    for c in range(nch):
        if nw == max_cand:
            for z in range(c, nch):
                if ch[z, 4] >= CUT_RATIO * ch[0, 4] and not (
                        _in_windows(np.int64(ch[z, 1]), node_start, wn, wl, wh, w_at, w_n, nw)
                        and _in_windows(np.int64(ch[z, 3]), node_start, wn, wl, wh, w_at,
                                        w_n, nw)):
                    cut[0] = max(cut[0], ch[z, 4])
            break
        q0, c0, q1, c1 = np.int64(ch[c, 0]), np.int64(ch[c, 1]), np.int64(ch[c, 2]), np.int64(ch[c, 3])
        x = np.int64(0)
        if c1 - c0 > q1 - q0:
            s01, heap = _walk_dist(c0, c1, min(c1 - c0 + 1, q1 - q0 + 1 + max_del), node_start,
                                   succ_ptr, succ_idx, stamp, sd, ep, heap)
            if s01 > q1 - q0 + 1:
                x = s01 - (q1 - q0 + 1)
        # each search's pieces of a node share an end (tails upstream, heads downstream),
        # so a hull is exact within one search; across searches they are kept apart
        nb = 0
        heap, bn, bl, bh, nb = _reach(c0, q0 + 1 + pad, node_start, pred_ptr, pred_idx, False,
                                      stamp, slot, sd, ep, heap, bn, bl, bh, nb)
        heap, bn, bl, bh, nb = _reach(c1, q1 + 1 + pad + x, node_start, pred_ptr, pred_idx,
                                      False, stamp, slot, sd, ep, heap, bn, bl, bh, nb)
        heap, bn, bl, bh, nb = _reach(c0, m - q0 + pad + x, node_start, succ_ptr, succ_idx,
                                      True, stamp, slot, sd, ep, heap, bn, bl, bh, nb)
        heap, bn, bl, bh, nb = _reach(c1, m - q1 + pad, node_start, succ_ptr, succ_idx, True,
                                      stamp, slot, sd, ep, heap, bn, bl, bh, nb)
        # the chain's pieces, (node, lo) ascending, into the window buffer: sort keys
        # node << 32 | piece (in the heap's array, free between searches), then a node's
        # few pieces (one per search) by lo (np.argsort of node << 31 | lo instead: DRB1
        # window pass 0.31 s, not 0.24 s, 20,000 reads, one thread)
        heap = _grown(heap, nb)
        for t in range(nb):
            heap[t] = (bn[t] << _NODE_BITS) | t
        heap[:nb].sort()
        wn, wl, wh = _grown(wn, top + nb), _grown(wl, top + nb), _grown(wh, top + nb)
        k = top
        t = 0
        while t < nb:
            v = heap[t] >> _NODE_BITS
            u = t + 1
            while u < nb and heap[u] >> _NODE_BITS == v:
                u += 1
            for a in range(t + 1, u):
                z = heap[a]
                b = a - 1
                while b >= t and bl[heap[b] & _NODE_MASK] > bl[z & _NODE_MASK]:
                    heap[b + 1] = heap[b]
                    b -= 1
                heap[b + 1] = z
            for a in range(t, u):
                z = heap[a] & _NODE_MASK
                if a > t and bl[z] <= wh[k - 1] + 1:
                    wh[k - 1] = max(wh[k - 1], bh[z])
                else:
                    wn[k], wl[k], wh[k] = v, bl[z], bh[z]
                    k += 1
            t = u
        c_at, cn = top, k - top
        top = k
        into = -1
        for y in range(nw):
            if _shares_node(wn, w_at[y], w_n[y], c_at, cn):
                into = y
                break
        if into < 0:
            w_at[nw], w_n[nw] = c_at, cn
            info[nw, 0] = ch[c, 4]
            info[nw, 1] = ch[c, 5]
            nw += 1
        else:
            need = top + w_n[into] + cn
            wn, wl, wh = _grown(wn, need), _grown(wl, need), _grown(wh, need)
            nn = _merge(wn, wl, wh, w_at[into], w_n[into], c_at, cn, top)
            w_at[into], w_n[into] = top, nn
            top += nn
            info[into, 1] += ch[c, 5]
            y = into + 1            # the union may now touch later windows: absorb them
            while y < nw:
                if not _shares_node(wn, w_at[y], w_n[y], w_at[into], w_n[into]):
                    y += 1
                    continue
                need = top + w_n[into] + w_n[y]
                wn, wl, wh = _grown(wn, need), _grown(wl, need), _grown(wh, need)
                nn = _merge(wn, wl, wh, w_at[into], w_n[into], w_at[y], w_n[y], top)
                w_at[into], w_n[into] = top, nn
                top += nn
                info[into, 1] += info[y, 1]
                for z in range(y, nw - 1):
                    w_at[z], w_n[z] = w_at[z + 1], w_n[z + 1]
                    info[z, 0], info[z, 1] = info[z + 1, 0], info[z + 1, 1]
                info[nw - 1, 0] = 0.0
                info[nw - 1, 1] = 0.0
                nw -= 1
                y = into + 1
    total = 0
    for y in range(nw):
        total += w_n[y]
    p = 0
    for y in range(nw):
        nn = w_n[y]
        info[y, 2] = nn
        if total <= cap:
            a = w_at[y]
            for z in range(nn):
                p_node[p0 + p + z] = wn[a + z]
                p_lo[p0 + p + z] = wl[a + z]
                p_hi[p0 + p + z] = wh[a + z]
        p += nn
    return nw, p, (stamp, slot, sd, ep, heap, bn, bl, bh, wn, wl, wh)


@numba.njit(**NJIT)
def _read_windows(m, ch, nch, max_cand, max_del, node_start, pred_ptr, pred_idx, succ_ptr,
                  succ_idx, cap, p0, p_node, p_lo, p_hi, info):
    """:func:`_read_windows_s` with scratch of its own: (windows, pieces)."""
    sc = _scratch(len(node_start) - 1, 64)
    cut = np.zeros(1, np.float64)
    nw, p, sc = _read_windows_s(m, ch, nch, max_cand, max_del, node_start, pred_ptr, pred_idx,
                                succ_ptr, succ_idx, cap, p0, p_node, p_lo, p_hi, info, cut, sc)
    return nw, p


#: pieces per read kept from the counting pass of :func:`_windows` (more: searched again);
#: 12 bytes each, at most KEEP_BYTES per batch (DRB1, 4.4 bp nodes, ~70 pieces per read:
#: window building 1.45 s with 16 kept, 1.06 s with 128, 20,000 reads, 2-core VM)
KEEP_PIECES = 128
KEEP_BYTES = 256 << 20


@numba.njit(**PARALLEL)
def _windows(offs, ch, nch, max_cand, del_per_base, node_start, pred_ptr, pred_idx, succ_ptr,
             succ_idx, fill, p_at, p_node, p_lo, p_hi, info, nwin, cut, keep, n_work):
    """Every read's windows (:func:`_read_windows_s`; ``del_per_base`` = a / e: an alignment
    of m bases pays for deletions of at most a m / e bases): pass 1 (``fill`` False) counts
    the pieces of each read into ``p_at[r + 1]`` and keeps them in ``keep`` (3 x reads x
    KEEP_PIECES) where they fit, pass 2 writes them from ``p_at[r]`` (searching again only
    for reads with more). ``n_work`` workers, each with its scratch (made when it first
    searches), take every ``n_work``-th read."""
    big = np.int64(1) << 62
    n = len(offs) - 1
    n_nodes = len(node_start) - 1
    for wk in numba.prange(n_work):
        sc = _scratch(0, 1)
        for r in range(wk, n, n_work):
            if nch[r] == 0:
                continue
            m = offs[r + 1] - offs[r]
            if fill and p_at[r + 1] - p_at[r] <= keep.shape[2]:
                for z in range(p_at[r + 1] - p_at[r]):
                    p_node[p_at[r] + z] = keep[0, r, z]
                    p_lo[p_at[r] + z] = keep[1, r, z]
                    p_hi[p_at[r] + z] = keep[2, r, z]
                continue
            if len(sc[0]) < n_nodes:
                sc = _scratch(n_nodes, 1024)
            if not fill:
                nw, npc, sc = _read_windows_s(m, ch[r], nch[r], max_cand,
                                              np.int64(del_per_base * m), node_start, pred_ptr,
                                              pred_idx, succ_ptr, succ_idx, keep.shape[2], 0,
                                              keep[0, r], keep[1, r], keep[2, r], info[r],
                                              cut[r:r + 1], sc)
                nwin[r] = nw
                p_at[r + 1] = npc
            else:
                nw, npc, sc = _read_windows_s(m, ch[r], nch[r], max_cand,
                                              np.int64(del_per_base * m), node_start, pred_ptr,
                                              pred_idx, succ_ptr, succ_idx, big, p_at[r], p_node,
                                              p_lo, p_hi, info[r], cut[r:r + 1], sc)


class Windows:
    """A batch's candidate windows (:meth:`SeededAligner.candidates`): ``ncand[r]``
    windows of read ``r`` (tasks ``first[r]:first[r] + ncand[r]``, best chain first; read
    ``t_read[t]``), ``stats[r]`` = (seeds skipped, anchors, weak: windows of chains below
    ``min_chain``), ``cut[r]`` = the best strong chain left out by ``max_cand``
    (:func:`_pick`; 0: none), ``t_chain[t]`` = the chain score that made window ``t``,
    and the :class:`~s2g.window.WindowGraph` ``wg`` holding every window as a column
    range."""

    def __init__(self, ncand, info, stats, wg, cut=None):
        self.ncand = ncand
        self.stats = stats
        self.cut = np.zeros(len(ncand), np.float64) if cut is None else cut
        sel = np.arange(info.shape[1])[None, :] < ncand[:, None]
        self.t_chain = np.ascontiguousarray(info[:, :, 0][sel])
        self.weak = stats[:, 2] > 0 if stats.shape[1] > 2 else np.zeros(len(ncand), np.bool_)
        n = len(ncand)
        self.first = np.zeros(n, np.int64)
        np.cumsum(ncand[:-1], out=self.first[1:])
        self.t_read = np.repeat(np.arange(n, dtype=np.int64), ncand)
        self.anchors_best = np.where(ncand > 0, info[:, 0, 1], 0).astype(np.int64)
        self.wg = wg

    @property
    def n_tasks(self) -> int:
        return len(self.t_read)


@numba.njit(**NJIT)
def _secondaries(ncand, t_score, first, best_t, ratio, most):
    """(read, task) of each read's secondary alignments: its other windows scoring at
    least ``ratio`` x the best, best first, at most ``most`` per read."""
    rr = []
    tt = []
    for r in range(len(ncand)):
        bt = best_t[r]
        if bt < 0:
            continue
        cand = []
        for t in range(first[r], first[r] + ncand[r]):
            if t != bt and t_score[t] > NEG_INF and t_score[t] >= ratio * t_score[bt]:
                cand.append((-t_score[t], t))
        cand.sort()
        for x in range(min(most, len(cand))):
            rr.append(r)
            tt.append(cand[x][1])
    out_r = np.empty(len(rr), np.int64)
    out_t = np.empty(len(tt), np.int64)
    for x in range(len(rr)):
        out_r[x] = rr[x]
        out_t[x] = tt[x]
    return out_r, out_t


@numba.njit(**NJIT)
def _pick(ncand, t_score, t_ei, t_ej, t_lo, first, match_mis, per_mm, skipped, anchors_best,
          repeat_cap, cut, weak, t_chain, cut_cap):
    """Best window per read (ties: smaller end column), its lower bound, and MAPQ from the
    other windows' scores. A chain left out by ``max_cand`` was never aligned, so nothing
    bounds its score: where it chained at least as well as the best window's chain
    (``cut[r] >= t_chain[best]``) it counts as a competitor scoring as well as the best
    (MAPQ <= 3); where it chained less well, MAPQ is at most ``cut_cap``. At most
    ``repeat_cap`` where skipped repeat seeds outnumber the best chain's anchors or the
    read had only weak chains (``weak``)."""
    n = len(ncand)
    score = np.full(n, NEG_INF, np.int64)
    ei = np.full(n, -1, np.int64)
    ej = np.full(n, -1, np.int64)
    lo = np.zeros(n, np.int64)
    mapq = np.zeros(n, np.int64)
    best_t = np.full(n, -1, np.int64)
    for r in range(n):
        bt = -1
        for t in range(first[r], first[r] + ncand[r]):
            if t_score[t] <= NEG_INF:
                continue
            if bt < 0 or t_score[t] > t_score[bt] or (t_score[t] == t_score[bt]
                                                       and t_ej[t] < t_ej[bt]):
                bt = t
        if bt < 0:
            continue
        best_t[r] = bt
        score[r], ei[r], ej[r], lo[r] = t_score[bt], t_ei[bt], t_ej[bt], t_lo[bt]
        s1 = t_score[bt]
        tot = 0.0
        for t in range(first[r], first[r] + ncand[r]):
            if t == bt or t_score[t] <= NEG_INF:
                continue
            d = (s1 - t_score[t]) / match_mis
            tot += 10.0 ** (-per_mm * d / 10.0)
        if cut[r] > 0 and cut[r] >= t_chain[bt]:
            tot += 1.0
        if tot > 0:
            q = -10.0 * math.log10(tot / (1.0 + tot))
        else:
            q = 1e9
        q = min(float(MAPQ_MAX), q)
        if cut[r] > 0:
            q = min(q, float(cut_cap))
        if (skipped[r] > 0 and skipped[r] >= anchors_best[r]) or weak[r]:
            q = min(q, float(repeat_cap))
        mapq[r] = int(q + 0.5)
    return score, ei, ej, lo, mapq, best_t


class SeededAligner:
    """Seeded alignment of read batches against one graph and its index.

    ``window_kernel(graph, codes, offsets, task_read, task_lo, task_hi, scoring, mode)``
    returns (score, end_i, end_j) per window (default: ``s2g.variants.simd.align_windows``;
    :func:`s2g.window.align_windows_ref` is the scalar reference).
    ``n_secondary``: up to this many secondary alignments per read (its other windows
    scoring at least ``secondary_ratio`` x the best; MAPQ 0, GAF tag ``tp:A:S``, as
    minimap2's ``-N``/``-p``), in ``res.secondary`` (a BatchResult whose ``owner`` gives
    each row's read).
    ``unseeded``: what reads without a usable chain (none scoring ``min_chain``) get:
    ``"auto"`` full-graph DP with ``full_module`` (MAPQ 255) where it costs at most
    ``full_cells`` cells a read (default ``FULL_FALLBACK_CELLS[device]``), else the windows
    of their weak chains (one anchor and up; MAPQ <= 3) or, without any anchor, a no-hit
    line (counted in ``totals``); ``"full"``: full-graph DP always; ``"unmapped"``: weak
    windows or a no-hit line, never full-graph DP. ``device="gpu"``: the windows
    run on the GPU (:func:`s2g.gpu_traceback.run_windows`: one thread per window finds the
    best cell and walks back from it in the same pass; windows too large for it run on the
    CPU), and the chosen windows' walks become the tracebacks.
    """

    def __init__(self, graph, index, scoring, mode, max_occ=MAX_OCC, max_cand=MAX_CAND,
                 min_chain=None, max_window=MAX_WINDOW, window_kernel=None,
                 unseeded="auto", full_module=None, device="cpu", n_secondary=0,
                 secondary_ratio=0.8, full_cells=None):
        check_mode(mode)
        self.graph, self.index, self.scoring, self.mode = graph, index, scoring, mode
        self.max_occ, self.max_cand, self.max_window = int(max_occ), int(max_cand), int(max_window)
        self.min_chain = float(2 * index.k if min_chain is None else min_chain)
        if window_kernel is None:
            from .variants import simd       # the SIMD kernel's windows (exact, ~4x the ref)
            window_kernel = simd.align_windows
        self.window_kernel = window_kernel
        if unseeded not in ("auto", "unmapped", "full"):
            raise ValueError(f"unseeded must be 'auto', 'unmapped' or 'full', got {unseeded!r}")
        if unseeded != "unmapped" and full_module is None:
            from .variants import simd as full_module
        self.unseeded = unseeded
        self.full_module = full_module
        if device not in ("cpu", "gpu"):
            raise ValueError(f"device must be 'cpu' or 'gpu', got {device!r}")
        self.device = device
        self.full_cells = (FULL_FALLBACK_CELLS[device] if full_cells is None
                           else int(full_cells))
        self.n_secondary, self.secondary_ratio = int(n_secondary), float(secondary_ratio)
        self.totals = {"reads": 0, "windows": 0, "window_cells": 0, "unseeded": 0,
                       "unseeded full DP": 0, "unseeded weak windows": 0,
                       "unseeded unaligned": 0, "windows left to the CPU": 0,
                       "seconds seeds+chains": 0.0, "seconds windows": 0.0}
        self._succ = None

    def candidates(self, reads) -> Windows:
        """The :class:`Windows` of a ReadBatch: seeds, chains, node-set windows and their
        window graph."""
        ix, g = self.index, self.graph
        if self._succ is None:
            order = np.argsort(g.pred_idx, kind="stable")
            ptr = np.zeros(g.n_nodes + 1, np.int64)
            np.cumsum(np.bincount(g.pred_idx, minlength=g.n_nodes), out=ptr[1:])
            dst = np.repeat(np.arange(g.n_nodes, dtype=np.int32), np.diff(g.pred_ptr))
            self._succ = (ptr, dst[order])
        starts, shift = ix.buckets
        offs = np.asarray(reads.offsets, np.int64)
        ch, nch, stats = _chains(reads.codes_flat, offs, ix.keys, ix.cols, starts, shift, ix.k,
                                 ix.s, self.max_occ, 2 * self.max_cand, self.min_chain,
                                 self.max_window)
        n = reads.n_reads
        p_at = np.zeros(n + 1, np.int64)
        info = np.zeros((n, self.max_cand, 3), np.float64)
        nwin = np.zeros(n, np.int64)
        e32 = np.zeros(0, np.int32)
        kp = max(1, min(KEEP_PIECES, KEEP_BYTES // (12 * max(n, 1))))
        keep = np.empty((3, n, kp), np.int32)
        a, _, _, e = self.scoring.as_tuple()
        args = (offs, ch, nch, self.max_cand, a / e, g.node_start, g.pred_ptr, g.pred_idx,
                self._succ[0], self._succ[1])
        n_work = max(1, min(numba.get_num_threads(), n,
                            SCRATCH_BYTES // (SCRATCH_NODE_BYTES * max(g.n_nodes, 1))))
        cut = np.zeros(n, np.float64)
        _windows(*args, False, p_at, e32, e32, e32, info, nwin, cut, keep, n_work)
        np.cumsum(p_at, out=p_at)
        npc = int(p_at[-1])
        p_node, p_lo, p_hi = (np.empty(npc, np.int32) for _ in range(3))
        _windows(*args, True, p_at, p_node, p_lo, p_hi, info, nwin, cut, keep, n_work)
        sel = np.arange(self.max_cand)[None, :] < nwin[:, None]
        piece_at = np.zeros(int(nwin.sum()) + 1, np.int64)
        np.cumsum(info[:, :, 2][sel].astype(np.int64), out=piece_at[1:])
        return Windows(nwin, info, stats, WindowGraph(g, piece_at, p_node, p_lo, p_hi), cut)

    def _fallback(self, ncand, weak, lens):
        """(lost, full): reads without a usable chain (no window, or only weak ones), and
        those of them that full-graph DP aligns instead (``unseeded``: all of them with
        "full", none with "unmapped", with "auto" those whose full DP costs at most
        ``full_cells`` cells)."""
        lost = ((ncand == 0) | weak) & (lens > 0)
        if self.unseeded == "full":
            return lost, lost
        if self.unseeded == "unmapped":
            return lost, np.zeros_like(lost)
        cells = np.asarray(lens, np.int64) * np.int64(self.graph.n_bases)
        return lost, lost & (cells <= self.full_cells)

    def seed_batches(self, batches):
        """The batches of ``batches``, each with its :meth:`candidates` attached (``_seeds``):
        run in a reader thread (s2g align does), the seeding of the next batches overlaps
        the windows of this one, and :meth:`align_batch` takes them from there."""
        for reads in batches:
            t0 = time.perf_counter()
            reads._seeds = self.candidates(reads)
            self.totals["seconds seeds+chains"] += time.perf_counter() - t0
            yield reads

    def align_batch(self, reads, cand=None) -> BatchResult:
        """Scores, end cells, MAPQ (``res.mapq``) and window bounds (``res.col_lo``);
        ``cand``: the batch's :meth:`candidates`, when already computed (default: those
        :meth:`seed_batches` attached, taken off the batch)."""
        if cand is None:
            cand = reads.__dict__.pop("_seeds", None)
        if cand is None:
            t0 = time.perf_counter()
            cand = self.candidates(reads)
            self.totals["seconds seeds+chains"] += time.perf_counter() - t0
        wg = cand.wg
        wgraph = wg.graph
        ncand = cand.ncand
        t1 = time.perf_counter()
        n = reads.n_reads
        first = cand.first
        total = cand.n_tasks
        t_read, t_lo, t_hi = cand.t_read, wg.t_lo, wg.t_hi
        wr = None
        if self.device == "gpu":
            from . import gpu_traceback
            wr = gpu_traceback.run_windows(wgraph, reads, self.scoring, self.mode, t_read,
                                           t_lo, t_hi)
            ts, tei, tej = wr.score.copy(), wr.end_i.copy(), wr.end_j.copy()
            left = np.nonzero(~wr.on_gpu)[0]
            self.totals["windows left to the CPU"] += len(left)
            if len(left):
                ts[left], tei[left], tej[left] = self.window_kernel(
                    wgraph, reads.codes_flat, reads.offsets, t_read[left], t_lo[left],
                    t_hi[left], self.scoring, self.mode)
        else:
            ts, tei, tej = self.window_kernel(wgraph, reads.codes_flat, reads.offsets,
                                              t_read, t_lo, t_hi, self.scoring, self.mode)
        self.totals["seconds windows"] += time.perf_counter() - t1
        a, b, _, _ = self.scoring.as_tuple()
        tcol = wg.columns(tej)                     # end cells in graph columns (ties, GAF)
        lens = reads.lengths()
        lost, full_r = self._fallback(ncand, cand.weak, lens)
        ncand_w = np.where(full_r, 0, ncand)       # full-graph DP replaces their windows
        score, ei, ej, lo, mapq, best_t = _pick(ncand_w, ts, tei, tcol, t_lo, first, float(a + b),
                                                MAPQ_PER_MISMATCH, cand.stats[:, 0],
                                                cand.anchors_best, MAPQ_REPEAT_CAP, cand.cut,
                                                cand.weak, cand.t_chain, MAPQ_CUT_CAP)
        self.totals["reads"] += n
        self.totals["windows"] += total
        self.totals["window_cells"] += int(((t_hi - t_lo) * lens[t_read]).sum()) if total else 0
        res = BatchResult(reads.names, lens, score, ei, ej)
        res.mapq = mapq
        res.col_lo = lo                            # window-graph coordinates, as is
        res.wg_end_j = np.full(n, -1, np.int64)
        res.wg_end_j[best_t >= 0] = tej[best_t[best_t >= 0]]
        res.wg = wg
        res.n_windows = ncand_w
        res.best_task = best_t
        res.window_run = wr
        res.secondary = None
        if self.n_secondary > 0:
            sr, st = _secondaries(ncand_w, ts, first, best_t, self.secondary_ratio,
                                  self.n_secondary)
            sec = BatchResult([reads.names[r] for r in sr.tolist()], lens[sr], ts[st], tei[st],
                              tcol[st])
            sec.mapq = np.zeros(len(sr), np.int64)
            sec.col_lo = t_lo[st]
            sec.wg_end_j = tej[st]
            sec.owner = sr
            sec.task = st
            res.secondary = sec
        no_seed = np.nonzero(full_r)[0]
        t = self.totals
        t["unseeded"] += int(np.count_nonzero(lost))
        t["unseeded full DP"] += len(no_seed)
        t["unseeded weak windows"] += int(np.count_nonzero(lost & ~full_r & (ncand > 0)))
        t["unseeded unaligned"] += int(np.count_nonzero(lost & ~full_r & (ncand == 0)))
        if len(no_seed):
            sub = reads.subset(no_seed)
            full = self.full_module.align_batch(self.graph, sub, self.scoring, self.mode,
                                                traceback=False)
            res.score[no_seed] = full.score
            res.end_i[no_seed] = full.end_i
            res.end_j[no_seed] = full.end_j
            res.mapq[no_seed] = 255
            res.col_lo[no_seed] = 0
        return res

    def traceback(self, reads, res, max_cells=None, threads=None):
        """Path and CIGAR of every aligned read, restricted to its window (traced on the
        window graph, then moved onto the graph); GPU windows reuse the walk the kernel
        already made. Reads aligned by full-graph DP (``unseeded="full"``) trace on the
        graph."""
        from .traceback import MAX_CELLS, FlatTracebacks, traceback_batch
        max_cells = max_cells or MAX_CELLS
        wg = res.wg
        wr = getattr(res, "window_run", None)
        sec = getattr(res, "secondary", None)
        if sec is not None and len(sec):
            sub = reads.subset(sec.owner)
            sres = BatchResult(sec.names, sec.lengths, sec.score, sec.end_i, sec.wg_end_j)
            sflat = FlatTracebacks(len(sec))
            sidx = np.arange(len(sec), dtype=np.int64)
            if wr is not None:
                g = wr.on_gpu[sec.task]
                if g.any():
                    wr.add_tracebacks(wg.graph, sec.task[g], np.nonzero(g)[0], sflat,
                                      np.asarray(sec.end_i, np.int64))
                sidx = np.nonzero(~g)[0].astype(np.int64)
            traceback_batch(wg.graph, sub, self.scoring, self.mode, sres, max_cells=max_cells,
                            threads=threads, col_lo=sec.col_lo, flat=sflat, idx=sidx)
            sec.set_flat(wg.map_tracebacks(sres.flat))
        aligned = np.nonzero(res.aligned())[0]
        bt = res.best_task[aligned]
        win = aligned[bt >= 0]                    # aligned in a window
        tres = BatchResult(res.names, res.lengths, res.score, res.end_i, res.wg_end_j)
        flat = FlatTracebacks(len(res))
        idx = win.astype(np.int64)
        if wr is not None:
            gpu = wr.on_gpu[res.best_task[win]]
            if gpu.any():
                wr.add_tracebacks(wg.graph, res.best_task[win[gpu]], win[gpu], flat,
                                  np.asarray(res.end_i, np.int64))
            idx = win[~gpu].astype(np.int64)
            res.window_run = None                  # the walks are no longer needed
        traceback_batch(wg.graph, reads, self.scoring, self.mode, tres, max_cells=max_cells,
                        threads=threads, col_lo=res.col_lo, flat=flat, idx=idx)
        flat = wg.map_tracebacks(tres.flat)
        full = aligned[bt < 0]                     # full-graph DP (unseeded="full")
        if len(full):
            fres = BatchResult(res.names, res.lengths, res.score, res.end_i, res.end_j)
            traceback_batch(self.graph, reads, self.scoring, self.mode, fres,
                            max_cells=max_cells, threads=threads, flat=FlatTracebacks(len(res)),
                            idx=full.astype(np.int64))
            flat = flat.merged(fres.flat)
        res.set_flat(flat)
        res.wg = None
        return res
