"""The bounded graph searches that seeded windows are made of (:mod:`s2g.seeded.windows`):
from a chain's anchor column, every node within a walk distance upstream or downstream
(:func:`_reach`: one piece of the node a search reaches), the shortest walk between two
columns (:func:`_walk_dist`), a long read's corridor between its waypoints
(:func:`_corridor`), on per-worker scratch over the graph's nodes (:func:`scratch_pool`).
Moved out of windows.py (session 63) unchanged, so that the per-chain search can be set
beside a GPU form of it (docs/plans/gpu_window_build.md)."""
from __future__ import annotations

import numba
import numpy as np

from .._numba import NJIT

# Window searches run on per-worker scratch instead of a typed Dict per search and a heapq
# list of tuples (SeededAligner.candidates, best of 5, 2-core VM, with the seeding and
# chaining changes: DRB1 20,000 x 150 bp reads 1.05 s -> 0.54 s, sim 2 Mbp 0.34 s -> 0.22 s;
# window building alone on DRB1 ~3x faster): arrays over the graph's nodes stamped with a
# search number (``stamp[v] == epoch``: v was reached in this search; no clearing between
# searches), each reached node's slot in the search's piece buffer, its distance, and the
# heap as one int64 array of keys ``dist << 32 | node`` (distances are bases of one read's
# flank or chain plus padding: far below 2^31). The scratch is made once per worker of
# :func:`batch_windows` (SCRATCH_NODE_BYTES per graph node; fewer workers when all of them
# would need more than SCRATCH_BYTES: 2 M nodes x 16 threads = 512 MB), kept: scratch_pool.
#: bytes of search scratch per graph node and worker (stamp, slot: int32; distance: int64)
SCRATCH_NODE_BYTES = 16
#: most bytes of search scratch for all workers of one :func:`batch_windows` call together
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


def scratch_pool(n_work, n_nodes):
    """:func:`batch_windows`' scratch, (stamp, slot, dist, epoch) one row a worker, kept
    from batch to batch: made per call, its pages were faulted in anew at every batch (1 Gbp
    graph, 6 M nodes: 96 MB a worker; windows of 50,000 reads took 0.16 s, 0.11 s on 100 Mbp)."""
    return (np.zeros((n_work, n_nodes), np.int32), np.empty((n_work, n_nodes), np.int32),
            np.empty((n_work, n_nodes), np.int64), np.zeros((n_work, 1), np.int64))


@numba.njit(**NJIT)
def _pooled(pool, wk, cap):                 # worker wk's _scratch, on its rows of the pool
    return (pool[0][wk], pool[1][wk], pool[2][wk], pool[3][wk], np.empty(cap, np.int64),
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
def _corridor(m, q0, c0, q1, c1, way, n_way, max_del, gr, sc, nb, flanks=True):
    """A long read's chain as a corridor: the flanks as in :func:`_read_windows_s` with
    padding ``16 + flank / 8`` (``flanks`` False: padding only, as if the chain covered
    the read), and between consecutive waypoints ``(qa, ca)``, ``(qb,
    cb)`` (gap ``g = qb - qa``) the columns within ``g + 1 + 16 + g / 8 + x`` bases
    downstream of ``ca`` and upstream of ``cb`` (``x``: a deletion the shortest walk
    between them has, at most ``max_del``). With ``flanks``, the second (second-to-last)
    waypoint gets the read's flank too, as if it were the chain's end, where the first (last)
    is a jump away (more than twice the read's gap and 64 columns): a stray end anchor
    (another copy, a bubble's far branch: MHC read 3 at 10% errors, its first anchor 43 kbp
    of columns before the second, 531 read bases) left the read's start outside the
    corridor, its alignment clipped by 28 bases (for every chain: 30 kbp reads 25%
    slower). Appends pieces to the scratch's buffer from ``nb``; returns (heap, bn, bl,
    bh, nb)."""
    node_start, pred_ptr, pred_idx, succ_ptr, succ_idx = gr
    stamp, slot, sd, ep, heap, bn, bl, bh = sc[:8]
    fq0 = q0 if flanks else np.int64(0)
    fq1 = m - q1 if flanks else np.int64(0)
    heap, bn, bl, bh, nb = _reach(c0, fq0 + 1 + 16 + (fq0 + 1) // 8, node_start, pred_ptr,
                                  pred_idx, False, stamp, slot, sd, ep, heap, bn, bl, bh, nb)
    heap, bn, bl, bh, nb = _reach(c1, fq1 + 16 + fq1 // 8, node_start, succ_ptr,
                                  succ_idx, True, stamp, slot, sd, ep, heap, bn, bl, bh, nb)
    if flanks and n_way > 2 and way[1, 1] - way[0, 1] > 2 * (way[1, 0] - way[0, 0]) + 64:
        f = way[1, 0]
        heap, bn, bl, bh, nb = _reach(way[1, 1], f + 1 + 16 + (f + 1) // 8, node_start,
                                      pred_ptr, pred_idx, False, stamp, slot, sd, ep, heap,
                                      bn, bl, bh, nb)
    z = n_way - 2
    if flanks and n_way > 2 and way[z + 1, 1] - way[z, 1] > 2 * (way[z + 1, 0] - way[z, 0]) + 64:
        f = m - way[z, 0]
        heap, bn, bl, bh, nb = _reach(way[z, 1], f + 16 + f // 8, node_start, succ_ptr,
                                      succ_idx, True, stamp, slot, sd, ep, heap, bn, bl, bh, nb)
    for w in range(n_way - 1):
        qa, ca, qb, cb = way[w, 0], way[w, 1], way[w + 1, 0], way[w + 1, 1]
        g = qb - qa
        x = np.int64(0)
        if cb - ca > g:
            s01, heap = _walk_dist(ca, cb, min(cb - ca + 1, g + 1 + max_del), node_start,
                                   succ_ptr, succ_idx, stamp, sd, ep, heap)
            if s01 > g + 1:
                x = s01 - (g + 1)
        d = g + 1 + 16 + g // 8 + x
        heap, bn, bl, bh, nb = _reach(ca, d, node_start, succ_ptr, succ_idx, True, stamp,
                                      slot, sd, ep, heap, bn, bl, bh, nb)
        heap, bn, bl, bh, nb = _reach(cb, d, node_start, pred_ptr, pred_idx, False, stamp,
                                      slot, sd, ep, heap, bn, bl, bh, nb)
    return heap, bn, bl, bh, nb
