"""Windows: a read's chains become sets of graph columns, where its exact DP runs.

A chain from (q0, c0) to (q1, c1) becomes the set of columns within walk distance
``q0 + 1 + pad`` upstream of ``c0`` and ``m - q1 + pad`` downstream of ``c1`` (the read's
flanks; ``pad = 16 + m / 8`` for indels), and the walks between the anchors (within
``q1 + 1 + pad + x`` upstream of ``c1`` and ``m - q0 + pad + x`` downstream of ``c0``,
``x`` = a deletion between them: :func:`read_windows`); walk distance in bases, by
bounded Dijkstra searches over the nodes (:func:`s2g.seeded.search._reach`), kept as node pieces (a node
from one in-node offset to another): every walk the read can follow through its chain
lies inside, and nothing the topological order merely puts between a bubble's branches
does (a column range [lowest, highest] held whole structural-variant branches: windows
of 10^4-10^5 columns on the real graphs). Windows sharing a node merge. At most
``max_cand`` windows per read, best chains first. A batch's windows become one *window
graph* (:class:`s2g.window.WindowGraph`) in which each window is a column range, so
every range-window kernel runs on it unchanged; end cells and paths are mapped back.
"""
from __future__ import annotations

import math

import numba
import numpy as np

from .._numba import NJIT, PARALLEL
from .mapq import CUT_RATIO, MAPQ_FAR
from .search import (_NODE_BITS, _NODE_MASK, _corridor, _grown, _pooled, _reach, _scratch,
                     _walk_dist)

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
def _chain_pieces(m, q0, c0, q1, c1, x, way, n_way, max_del, gr, sc, top, fl):
    """One chain's pieces, (node, lo) ascending, a node's touching intervals merged, into
    the window buffer ``sc[8:11]`` (node, lo, hi) from ``top``: the four searches of
    :func:`_read_windows_s` (the read's flanks beyond the anchors and the walks between
    them; ``x``: the deletion between the anchors, :func:`s2g.seeded.search._walk_dist`) or,
    for a chain of two or more waypoints (``n_way``), its corridor (``fl``: with flanks).
    Depends on the chain, the read's length ``m``, ``max_del`` and the graph ``gr`` only,
    not on the read's other chains (docs/plans/gpu_window_build.md: the unit a GPU thread
    would take). Returns (the buffer's end, the scratch ``sc`` with its grown arrays)."""
    node_start, pred_ptr, pred_idx, succ_ptr, succ_idx = gr
    stamp, slot, sd, ep, heap, bn, bl, bh, wn, wl, wh = sc
    pad = 16 + m // 8
    # each search's pieces of a node share an end (tails upstream, heads downstream),
    # so a hull is exact within one search; across searches they are kept apart
    nb = 0
    if n_way >= 2:
        heap, bn, bl, bh, nb = _corridor(m, q0, c0, q1, c1, way, n_way, max_del, gr,
                                         (stamp, slot, sd, ep, heap, bn, bl, bh), nb, fl)
    else:
        heap, bn, bl, bh, nb = _reach(c0, q0 + 1 + pad, node_start, pred_ptr, pred_idx,
                                      False, stamp, slot, sd, ep, heap, bn, bl, bh, nb)
        heap, bn, bl, bh, nb = _reach(c1, q1 + 1 + pad + x, node_start, pred_ptr,
                                      pred_idx, False, stamp, slot, sd, ep, heap, bn, bl,
                                      bh, nb)
        heap, bn, bl, bh, nb = _reach(c0, m - q0 + pad + x, node_start, succ_ptr,
                                      succ_idx, True, stamp, slot, sd, ep, heap, bn, bl,
                                      bh, nb)
        heap, bn, bl, bh, nb = _reach(c1, m - q1 + pad, node_start, succ_ptr, succ_idx,
                                      True, stamp, slot, sd, ep, heap, bn, bl, bh, nb)
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
    return k, (stamp, slot, sd, ep, heap, bn, bl, bh, wn, wl, wh)


@numba.njit(**NJIT)
def _chain_x(q0, c0, q1, c1, max_del, gr, stamp, sd, ep, heap):
    """(x, heap): the deletion between a chain's anchors, what the shortest walk from c0 to
    c1 has beyond the read's ``q1 - q0 + 1`` bases (at most ``max_del``; 0 when none is
    that short), for a chain with ``c1 - c0 > q1 - q0``."""
    s01, heap = _walk_dist(c0, c1, min(c1 - c0 + 1, q1 - q0 + 1 + max_del), gr[0], gr[3],
                           gr[4], stamp, sd, ep, heap)
    x = np.int64(0)
    if s01 > q1 - q0 + 1:
        x = s01 - (q1 - q0 + 1)
    return x, heap


@numba.njit(**NJIT)
def batch_chain_pieces(offs, ch, nch, del_per_base, gr):
    """Every chain's list as :func:`_read_windows_s` makes it (:func:`_chain_x`, then
    :func:`_chain_pieces` with flanks), for chains without waypoints, one thread: (count,
    at) int32 (reads x chain slots; count 0 past ``nch``) and the lists' (nodes, lo, hi)
    int32, chain ``(r, c)``'s at ``[at, at + count)``. The oracle of the GPU's
    (:func:`s2g.seeded.windows_gpu.chain_lists`), and ``made`` for :func:`batch_windows`."""
    n, S = ch.shape[0], ch.shape[1]
    cnt = np.zeros((n, S), np.int32)
    at = np.zeros((n, S), np.int32)
    sc = _scratch(len(gr[0]) - 1, 64)
    stamp, slot, sd, ep, heap, bn, bl, bh, wn, wl, wh = sc
    ln, ll, lh = np.empty(64, np.int32), np.empty(64, np.int32), np.empty(64, np.int32)
    top = 0
    way = np.zeros((0, 2), np.int64)
    for r in range(n):
        m = offs[r + 1] - offs[r]
        max_del = np.int64(del_per_base * m)
        for c in range(nch[r]):
            q0, c0 = np.int64(ch[r, c, 0]), np.int64(ch[r, c, 1])
            q1, c1 = np.int64(ch[r, c, 2]), np.int64(ch[r, c, 3])
            x = np.int64(0)
            if c1 - c0 > q1 - q0:
                x, heap = _chain_x(q0, c0, q1, c1, max_del, gr, stamp, sd, ep, heap)
            k, (stamp, slot, sd, ep, heap, bn, bl, bh, wn, wl, wh) = _chain_pieces(
                m, q0, c0, q1, c1, x, way, 0, max_del, gr,
                (stamp, slot, sd, ep, heap, bn, bl, bh, wn, wl, wh), 0, True)
            ln, ll, lh = _grown(ln, top + k), _grown(ll, top + k), _grown(lh, top + k)
            for z in range(k):
                ln[top + z], ll[top + z], lh[top + z] = wn[z], wl[z], wh[z]
            cnt[r, c], at[r, c] = k, top
            top += k
    return cnt, at, ln[:top].copy(), ll[:top].copy(), lh[:top].copy()


@numba.njit(**NJIT)
def _read_windows_s(m, ch, nch, max_cand, max_del, gr, cap, p0, out, info, cut, sc, wp,
                    wbuf):
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
    (competitors never aligned: :func:`s2g.seeded.mapq.pick`; 0 when none).
    ``gr``: the graph's (node_start, pred_ptr, pred_idx, succ_ptr, succ_idx).
    Returns (windows, pieces, scratch); ``info[w]`` = (chain score, anchors, pieces, chains
    scoring ``CUT_RATIO`` x the best or more merged into it: :mod:`s2g.seeded.copies`); when
    there are at most ``cap`` pieces they go to ``out`` = (p_node, p_lo, p_hi) from ``p0``,
    window after window. ``sc``: the worker's scratch (:func:`s2g.seeded.search._scratch`); windows live in its
    window buffer (``w_at[y]``, ``w_n[y]``: where and how many), a merged window written
    anew after the others (the buffer is reused from the start by the next read). No
    list of arrays: numba 0.68.1's ``list.pop(i)`` (i not the last) on one corrupts the
    heap (a window absorbing a later one did it: aborts on LPA and cactus 1-5 kbp reads).
    ``wp`` = (waypoints, counts, merge_flanks, made) of the read's chains
    (:func:`s2g.seeded.chains.batch_chains`; ``merge_flanks``: knob ``corridor_merge_flanks``):
    a chain with two or more is a corridor instead (:func:`s2g.seeded.search._corridor`: long
    reads). Each chain's pieces: :func:`_chain_pieces`, or where ``made`` = (count, at,
    nodes, lo, hi) has its list (``count[c] >= 0``: :func:`s2g.seeded.windows_gpu.chain_lists`,
    which searched on the GPU), ``[at[c], at[c] + count[c])`` of nodes, lo, hi."""
    node_start = gr[0]                              # (the searches: _chain_pieces)
    pre = wp[3]
    p_node, p_lo, p_hi = out
    info[:, :] = 0.0
    stamp, slot, sd, ep, heap, bn, bl, bh, wn, wl, wh = sc
    w_at = wbuf[0]                  # (the worker's: no allocation a read)
    w_n = wbuf[1]
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
        made = len(pre[0]) > c and pre[0][c] >= 0 and wp[1][c] < 2     # its list, made
        x = np.int64(0)
        if c1 - c0 > q1 - q0 and wp[1][c] < 2 and not made:
            x, heap = _chain_x(q0, c0, q1, c1, max_del, gr, stamp, sd, ep, heap)
        # a later chain's corridor first without its flank searches (the read's ends
        # beyond its anchors): merged into a window it adds only that (a partial chain's
        # flank reached every branch within kbp of it: most of the width of long reads'
        # lead windows on MHC, session 30); a window of its own is made again with them.
        # Not a chain scoring CUT_RATIO of the best or more: another copy the read may fit
        # as well, whose ends must be in the window (C4, 5 kbp reads at 10% errors: three
        # copies chained alike, merged into one window without the true copy's flanks, the
        # read clipped there and placed on another copy, MAPQ 60, 2 of 20 reads)
        for attempt in range(2):
            fl = not (attempt == 0 and c > 0 and wp[1][c] >= 2 and not wp[2]
                      and ch[c, 4] < CUT_RATIO * ch[0, 4])
            if made:                # (fl: no waypoints)
                k = top + pre[0][c]
                wn, wl, wh = _grown(wn, k), _grown(wl, k), _grown(wh, k)
                a = pre[1][c] - top
                for z in range(top, k):
                    wn[z], wl[z], wh[z] = pre[2][a + z], pre[3][a + z], pre[4][a + z]
            else:
                k, (stamp, slot, sd, ep, heap, bn, bl, bh, wn, wl, wh) = _chain_pieces(
                    m, q0, c0, q1, c1, x, wp[0][c], wp[1][c], max_del, gr,
                    (stamp, slot, sd, ep, heap, bn, bl, bh, wn, wl, wh), top, fl)
            c_at, cn = top, k - top
            into = -1
            for y in range(nw):
                if _shares_node(wn, w_at[y], w_n[y], c_at, cn):
                    into = y
                    break
            if fl or into >= 0:
                break
        top = k
        if into < 0:
            w_at[nw], w_n[nw] = c_at, cn
            info[nw, 0] = ch[c, 4]
            info[nw, 1] = ch[c, 5]
            info[nw, 3] = 1.0 if ch[c, 4] >= CUT_RATIO * ch[0, 4] else 0.0
            nw += 1
        else:
            need = top + w_n[into] + cn
            wn, wl, wh = _grown(wn, need), _grown(wl, need), _grown(wh, need)
            nn = _merge(wn, wl, wh, w_at[into], w_n[into], c_at, cn, top)
            w_at[into], w_n[into] = top, nn
            top += nn
            info[into, 1] += ch[c, 5]
            if ch[c, 4] >= CUT_RATIO * ch[0, 4]:
                info[into, 3] += 1.0
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
                info[into, 3] += info[y, 3]
                for z in range(y, nw - 1):
                    w_at[z], w_n[z] = w_at[z + 1], w_n[z + 1]
                    info[z, 0], info[z, 1] = info[z + 1, 0], info[z + 1, 1]
                    info[z, 3] = info[z + 1, 3]
                info[nw - 1, 0] = 0.0
                info[nw - 1, 1] = 0.0
                info[nw - 1, 3] = 0.0
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
def read_windows(m, ch, nch, max_cand, max_del, node_start, pred_ptr, pred_idx, succ_ptr,
                 succ_idx, cap, p0, p_node, p_lo, p_hi, info):
    """:func:`_read_windows_s` with scratch of its own: (windows, pieces)."""
    sc = _scratch(len(node_start) - 1, 64)
    cut = np.zeros(1, np.float64)
    e32 = np.zeros(0, np.int32)
    wp = (np.zeros((len(ch), 0, 2), np.int64), np.zeros(len(ch), np.int64), True,
          (e32, e32, e32, e32, e32))
    nw, p, sc = _read_windows_s(m, ch, nch, max_cand, max_del,
                                (node_start, pred_ptr, pred_idx, succ_ptr, succ_idx), cap, p0,
                                (p_node, p_lo, p_hi), info, cut, sc, wp,
                                np.empty((2, max_cand), np.int64))
    return nw, p


#: pieces per read kept from the counting pass of :func:`batch_windows` (more: searched
#: again); 12 bytes each, at most KEEP_BYTES per batch (DRB1, 4.4 bp nodes, ~70 pieces per
#: read: window building 1.45 s with 16 kept, 1.06 s with 128, 20,000 reads, 2-core VM)
KEEP_PIECES = 128
KEEP_BYTES = 256 << 20
#: KEEP_PIECES where the chains' lists are made already (a second assembly is cheap and the
#: kept pieces' pages cost more: 50,000 reads, one thread, 2-core VM, count + fill passes:
#: MHC 50 ms with 128, 41 with 8; M. bovis 64 ms with 128, 45 with 32, 66 with 8)
KEEP_MADE = 32


@numba.njit(**PARALLEL)
def batch_windows(offs, ch, nch, max_cand, del_per_base, gr, fill, p_at, pieces, info, nwin,
                  cut, keep, pool, wp):
    """Every read's windows (:func:`_read_windows_s`; ``gr``: the graph's (node_start,
    pred_ptr, pred_idx, succ_ptr, succ_idx); ``del_per_base`` = a / e: an alignment of m
    bases pays for deletions of at most a m / e bases): pass 1 (``fill`` False) counts
    the pieces of each read into ``p_at[r + 1]`` and keeps them in ``keep`` (3 x reads x
    KEEP_PIECES) where they fit, pass 2 writes them from ``p_at[r]`` into ``pieces`` =
    (p_node, p_lo, p_hi) (searching again only for reads with more). ``pool`` = (stamp,
    slot, dist, epoch), one row a worker (:func:`s2g.seeded.search.scratch_pool`): worker ``wk`` of its
    ``n_work`` rows takes every ``n_work``-th read from read ``wk``, searching on row ``wk``.
    ``wp`` = (waypoints, counts, merge_flanks, made) of every read's chains
    (:func:`s2g.seeded.chains.batch_chains`; ``made`` = (count, at, nodes, lo, hi): chain
    lists made already, count and at (reads x chains, or reads x 0: none) as
    :func:`batch_chain_pieces` returns them)."""
    node_start = gr[0]
    p_node, p_lo, p_hi = pieces
    big = np.int64(1) << 62
    n = len(offs) - 1
    n_nodes = len(node_start) - 1
    n_work = pool[0].shape[0]
    way, nway, flanks = wp[0], wp[1], wp[2]
    m_cnt, m_at, m_n, m_l, m_h = wp[3]      # (parfors take no tuple of arrays)
    for wk in numba.prange(n_work):
        sc = _scratch(0, 1)
        wbuf = np.empty((2, max_cand), np.int64)
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
                sc = _pooled(pool, wk, 1024)
            wr = (way[r], nway[r], flanks, (m_cnt[r], m_at[r], m_n, m_l, m_h))
            if not fill:
                nw, npc, sc = _read_windows_s(m, ch[r], nch[r], max_cand,
                                              np.int64(del_per_base * m), gr, keep.shape[2], 0,
                                              (keep[0, r], keep[1, r], keep[2, r]), info[r],
                                              cut[r:r + 1], sc, wr, wbuf)
                nwin[r] = nw
                p_at[r + 1] = npc
            else:
                nw, npc, sc = _read_windows_s(m, ch[r], nch[r], max_cand,
                                              np.int64(del_per_base * m), gr, big, p_at[r],
                                              pieces, info[r], cut[r:r + 1], sc,
                                              wr, wbuf)


def window_pieces(offs, ch, nch, max_cand, del_per_base, gr, pool, wp):
    """Every read's windows (:func:`batch_windows`, counting then filling): (p_node, p_lo,
    p_hi) int32 of all pieces, window after window, read after read; ``info``, ``nwin``,
    ``cut`` as :func:`_read_windows_s` leaves them. ``wp`` = (waypoints, counts,
    merge_flanks, made): ``made``, chain lists made already
    (:func:`s2g.seeded.windows_gpu.chain_lists`), or None."""
    n = len(offs) - 1
    p_at = np.zeros(n + 1, np.int64)
    info = np.zeros((n, max_cand, 4), np.float64)
    nwin = np.zeros(n, np.int64)
    cut = np.zeros(n, np.float64)
    e32 = np.zeros(0, np.int32)
    made = wp[3]
    kp = KEEP_MADE if made is not None else KEEP_PIECES
    if made is None:
        made = (np.zeros((n, 0), np.int32), np.zeros((n, 0), np.int32), e32, e32, e32)
    wp = (wp[0], wp[1], wp[2], made)
    kp = max(1, min(kp, KEEP_BYTES // (12 * max(n, 1))))
    keep = np.empty((3, n, kp), np.int32)
    args = (offs, ch, nch, max_cand, del_per_base, gr)
    batch_windows(*args, False, p_at, (e32, e32, e32), info, nwin, cut, keep, pool, wp)
    np.cumsum(p_at, out=p_at)
    npc = int(p_at[-1])
    pieces = tuple(np.empty(npc, np.int32) for _ in range(3))
    batch_windows(*args, True, p_at, pieces, info, nwin, cut, keep, pool, wp)
    return (*pieces, info, nwin, cut)


class Windows:
    """A batch's candidate windows (:meth:`s2g.seeded.aligner.SeededAligner.candidates`):
    ``ncand[r]`` windows of read ``r`` (tasks ``first[r]:first[r] + ncand[r]``, best chain
    first; read ``t_read[t]``), ``stats[r]`` = (seeds skipped, anchors, weak: windows of
    chains below ``min_chain``), ``cut[r]`` = the best strong chain left out by ``max_cand``
    (:func:`s2g.seeded.mapq.pick`; 0: none), ``t_chain[t]`` = the chain score that made
    window ``t``, and the :class:`~s2g.window.WindowGraph` ``wg`` holding every window as a column
    range."""

    def __init__(self, ncand, info, stats, wg, cut=None):
        self.ncand = ncand
        self.stats = stats
        self.cut = np.zeros(len(ncand), np.float64) if cut is None else cut
        sel = np.arange(info.shape[1])[None, :] < ncand[:, None]
        self.t_chain = np.ascontiguousarray(info[:, :, 0][sel])
        #: strong chains merged into each window (:mod:`s2g.seeded.copies`)
        self.t_strong = (np.ascontiguousarray(info[:, :, 3][sel]).astype(np.int64)
                         if info.shape[2] > 3 else np.ones(len(self.t_chain), np.int64))
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


@numba.njit(parallel=True, **NJIT)
def longest_walks(piece_at, node_start, pred_ptr, pred_idx):
    """Bases of the longest walk inside each window of a window graph (its pieces,
    ``piece_at[t]:piece_at[t + 1]``, are nodes in topological order; edges only inside a
    window): what no alignment in the window can match more of, so ``a`` x this bounds
    its score (:meth:`s2g.seeded.SeededAligner.align_batch` drops windows by it)."""
    n_t = len(piece_at) - 1
    out = np.zeros(n_t, np.int64)
    walk = np.zeros(len(node_start) - 1, np.int64)
    for t in numba.prange(n_t):
        best = np.int64(0)
        for v in range(piece_at[t], piece_at[t + 1]):
            w = np.int64(0)
            for k in range(pred_ptr[v], pred_ptr[v + 1]):
                w = max(w, walk[pred_idx[k]])
            w += node_start[v + 1] - node_start[v]
            walk[v] = w
            best = max(best, w)
        out[t] = best
    return out


#: q-gram length of :func:`qgram_bounds` (a 2^20-bit set a window: 128 kB)
QGRAM = 10
#: most distinct (q-1)-base tails a window node may end with (more: no bound)
QGRAM_TAILS = 16


@numba.njit(inline="always", **NJIT)
def _roll(key, good, c, mask):
    """The q-gram key after base code ``c`` and the count of ACGT bases ending there (an N,
    code 4, restarts it)."""
    if c < 4:
        return ((key << 2) | c) & mask, good + 1
    return key, 0


@numba.njit(inline="always", **NJIT)
def _bit(bits, key):
    return (bits[key >> 6] >> np.uint64(key & 63)) & np.uint64(1)


@numba.njit(**NJIT)
def _qgram_set(v0, v1, node_start, pred_ptr, pred_idx, base, bits):
    """Set ``bits`` of every q-gram (2 bits a base) spelled along a walk of window graph
    nodes ``v0..v1-1`` (topological; edges inside the window only); False when a node
    ends more than QGRAM_TAILS distinct ways (no set made)."""
    return _qgram_set_at(v0, v1, node_start, pred_ptr, pred_idx, base, node_start, bits)


@numba.njit(**NJIT)
def _qgram_set_at(v0, v1, node_start, pred_ptr, pred_idx, base, boff, bits):
    """:func:`_qgram_set` where node ``v``'s bases are ``base[boff[v]:]`` (a window graph's
    from its parent's: ``boff`` = its ``parent_cols[1]``; a graph's own: ``node_start``)."""
    q = QGRAM
    T = QGRAM_TAILS
    nn = v1 - v0
    tails = np.full((nn, T, q - 1), 4, np.uint8)      # last q-1 bases of walks ending at v
    tlen = np.zeros((nn, T), np.int64)
    ntail = np.zeros(nn, np.int64)
    mask = (np.int64(1) << (2 * q)) - 1
    buf = np.empty(2 * q, np.uint8)
    for v in range(v0, v1):
        s0, s1 = node_start[v], node_start[v + 1]
        ln = s1 - s0
        key = np.int64(0)
        good = 0                                 # consecutive ACGT bases ending here
        b0 = boff[v]
        for j in range(s0, s1):                  # q-grams inside v
            key, good = _roll(key, good, base[b0 + j - s0], mask)
            if good >= q:
                bits[key >> 6] |= np.uint64(1) << np.uint64(key & 63)
        x = v - v0
        head = min(ln, q - 1)
        for k in range(pred_ptr[v], pred_ptr[v + 1]):     # q-grams entering from a pred
            p = pred_idx[k] - v0
            for y in range(ntail[p]):
                L = tlen[p, y]
                for z in range(L):
                    buf[z] = tails[p, y, q - 1 - L + z]
                for z in range(head):
                    buf[L + z] = base[b0 + z]
                for end in range(max(q - 1, L), L + head):   # q-grams ending in v
                    st = end - q + 1
                    kk = np.int64(0)
                    ok = True
                    for z in range(st, end + 1):
                        if buf[z] >= 4:
                            ok = False
                            break
                        kk = (kk << 2) | buf[z]
                    if ok:
                        bits[kk >> 6] |= np.uint64(1) << np.uint64(kk & 63)
        # tails of v
        if ln >= q - 1 or pred_ptr[v + 1] == pred_ptr[v]:
            L = min(ln, q - 1)
            for z in range(L):
                tails[x, 0, q - 1 - L + z] = base[b0 + ln - L + z]
            tlen[x, 0] = L
            ntail[x] = 1
            continue
        n = 0
        for k in range(pred_ptr[v], pred_ptr[v + 1]):
            p = pred_idx[k] - v0
            for y in range(ntail[p]):
                L = min(q - 1, tlen[p, y] + ln)
                keep = L - ln                      # bases kept from the pred's tail
                for z in range(keep):
                    buf[z] = tails[p, y, q - 1 - keep + z]
                for z in range(ln):
                    buf[keep + z] = base[b0 + z]
                dup = False
                for w in range(n):
                    if tlen[x, w] == L:
                        same = True
                        for z in range(L):
                            if tails[x, w, q - 1 - L + z] != buf[z]:
                                same = False
                                break
                        if same:
                            dup = True
                            break
                if dup:
                    continue
                if n == T:
                    return False
                for z in range(L):
                    tails[x, n, q - 1 - L + z] = buf[z]
                tlen[x, n] = L
                n += 1
        ntail[x] = n
    return True


def qgram_bounds(tasks, t_read, piece_at, node_start, pred_ptr, pred_idx, base, codes, offs,
                 a, delta):
    """:func:`qgram_bounds_at` of a graph's own bases."""
    return qgram_bounds_at(tasks, t_read, piece_at, node_start, pred_ptr, pred_idx, base,
                           node_start, codes, offs, a, delta)


@numba.njit(parallel=True, **NJIT)
def qgram_bounds_at(tasks, t_read, piece_at, node_start, pred_ptr, pred_idx, base, boff,
                    codes, offs, a, delta):
    """An upper bound on the score of any alignment of its read inside each window
    ``tasks[x]`` (q-gram lemma, QGRAM): an alignment of read bases ``[s, t)`` loses at
    least ``delta = min(a + b, o + e)`` an edit against ``a`` a base, and each edit
    destroys at most q of the read's q-grams, so every q-gram of ``[s, t)`` spelled
    nowhere in the window costs ``delta / q``: the bound is the best ``[s, t)`` of ``a``
    a base minus ``delta / q`` a missing q-gram (Kadane, a q-gram counted at its last
    base), plus ``(q - 1) delta / q`` for the q-grams across ``s``. ``2^62`` where the
    window has no q-gram set (:func:`_qgram_set`)."""
    q = QGRAM
    out = np.full(len(tasks), np.int64(1) << 62)
    pen = delta / q
    mask = (np.int64(1) << (2 * q)) - 1
    for x in numba.prange(len(tasks)):
        t = tasks[x]
        bits = np.zeros(1 << (2 * q - 6), np.uint64)
        if not _qgram_set_at(piece_at[t], piece_at[t + 1], node_start, pred_ptr, pred_idx,
                             base, boff, bits):
            continue
        r = t_read[t]
        key = np.int64(0)
        good = 0
        cur = 0.0
        best = 0.0
        for i in range(offs[r], offs[r + 1]):
            key, good = _roll(key, good, codes[i], mask)
            w = float(a)
            if good >= q:
                if not _bit(bits, key):
                    w -= pen
            else:
                if i - offs[r] >= q - 1:       # a q-gram with an N: never spelled
                    w -= pen
            cur = max(0.0, cur) + w
            best = max(best, cur)
        out[x] = np.int64(math.ceil(best + (q - 1) * pen))
    return out


def dropped_by_bound(wg, reads, sel, t_read, top, scoring):
    """Tasks of ``sel`` (a mask over ``wg``'s tasks, reads ``t_read``) whose window cannot
    score within ``MAPQ_FAR`` mismatches of ``top[t]``: its bound, ``a`` x its longest
    walk (:func:`longest_walks`) or where that is not enough the q-gram lemma's
    (:func:`qgram_bounds`), lies that far below (never picked; nothing in MAPQ)."""
    a, b, o, e = scoring.as_tuple()
    g = wg.graph
    lens = reads.lengths()
    bound = a * np.minimum(longest_walks(wg.piece_at, g.node_start, g.pred_ptr, g.pred_idx),
                           lens[t_read])
    gap = MAPQ_FAR * (a + b)
    tq = np.nonzero(sel & (top - bound < gap) & (top > gap))[0]
    if len(tq):
        delta = min(a + b, o + e, QGRAM * (a + e))
        # the parent's bases where the window graph says where its nodes' come from: its
        # own are then never gathered on the GPU path (WindowGraph: lazy_window_bases)
        src = getattr(g, "parent_cols", None)
        base, boff = src if src is not None else (g.base, g.node_start)
        bound[tq] = np.minimum(bound[tq], qgram_bounds_at(
            tq, t_read, wg.piece_at, g.node_start, g.pred_ptr, g.pred_idx, base, boff,
            reads.codes_flat, np.asarray(reads.offsets, np.int64), a, float(delta)))
    return sel & (top - bound >= gap)
