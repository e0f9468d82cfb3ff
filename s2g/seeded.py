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
   distance in bases, by bounded Dijkstra searches over the nodes (:func:`_reach_set`),
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

import heapq
import math
import time

import numba
import numpy as np
from numba import types
from numba.typed import Dict

from ._numba import NJIT, PARALLEL
from .index import hash64, is_closed_syncmer, lookup
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


@numba.njit(**NJIT)
def read_syncmers(q, k, s):
    """Closed syncmers of read codes ``q``: (hashes, position of each k-mer's last base)."""
    m = len(q)
    kmask = (np.uint64(1) << np.uint64(2 * k)) - np.uint64(1)
    hs = np.empty(max(m - k + 1, 0), np.uint64)
    ps = np.empty(max(m - k + 1, 0), np.int64)
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
        if ln >= k and is_closed_syncmer(x, k, s):
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
                pen = 0.5 * math.log2(ad + 1.0)
                if d < 0:
                    pen += 0.01 * k * ad
            sc = f[j] + gain - pen
            if sc > best:
                best = sc
                bp = j
        f[i] = best
        pred[i] = bp
    return f, pred


#: a node's piece in a window: (lowest, highest) in-node offset
_SPAN = types.UniTuple(types.int64, 2)


@numba.njit(**NJIT)
def _hull(d, v, lo, hi):
    if v in d:
        x, y = d[v]
        d[v] = (min(x, lo), max(y, hi))
    else:
        d[v] = (lo, hi)


@numba.njit(**NJIT)
def _reach_set(c, dist, node_start, ptr, idx, forward, d):
    """Add to ``d`` (node -> (lowest, highest) in-node offset) every column whose walk
    distance from column ``c`` (both ends counted) is at most ``dist`` bases, walking
    successors (``forward``) or predecessors: a bounded Dijkstra over the nodes, each node
    entered at its first (last) base."""
    v = np.int64(np.searchsorted(node_start, c, side="right") - 1)
    ns = np.int64(node_start[v])
    ln_v = np.int64(node_start[v + 1]) - ns
    off = np.int64(c) - ns
    if forward:
        room = ln_v - 1 - off                         # bases after c inside v
        if room + 1 >= dist:
            _hull(d, v, off, off + dist - 1)
            return
        _hull(d, v, off, ln_v - 1)
    else:
        room = off
        if room + 1 >= dist:
            _hull(d, v, off - dist + 1, off)
            return
        _hull(d, v, np.int64(0), off)
    # heap of (bases used so far, node)
    heap = [(np.int64(room + 1), v)]
    seen = {v: np.int64(room + 1)}
    while len(heap) > 0:
        du, u = heapq.heappop(heap)
        if seen[u] < du:
            continue
        for t in range(ptr[u], ptr[u + 1]):
            w = np.int64(idx[t])
            ln = np.int64(node_start[w + 1] - node_start[w])
            if du + ln >= dist:                       # the walk ends inside w
                k = dist - du                         # bases of w within reach (>= 1)
                if forward:
                    _hull(d, w, np.int64(0), k - 1)
                else:
                    _hull(d, w, ln - k, ln - 1)
            else:
                _hull(d, w, np.int64(0), ln - 1)
                nd = du + ln
                if w not in seen or nd < seen[w]:
                    seen[w] = nd
                    heapq.heappush(heap, (nd, w))


@numba.njit(**NJIT)
def _walk_dist(c0, c1, budget, node_start, ptr, idx):
    """Bases of the shortest walk from column ``c0`` to column ``c1`` (both ends counted;
    ``ptr``/``idx``: successors), or -1 when none has at most ``budget`` bases."""
    v = np.int64(np.searchsorted(node_start, c0, side="right") - 1)
    w1 = np.int64(np.searchsorted(node_start, c1, side="right") - 1)
    if v == w1:
        return np.int64(c1 - c0 + 1) if c0 <= c1 <= c0 + budget - 1 else np.int64(-1)
    tail = np.int64(c1 - node_start[w1] + 1)
    d0 = np.int64(node_start[v + 1] - c0)
    heap = [(d0, v)]
    seen = {v: d0}
    while len(heap) > 0:
        du, u = heapq.heappop(heap)
        if seen[u] < du:
            continue
        for t in range(ptr[u], ptr[u + 1]):
            w = np.int64(idx[t])
            if w == w1:                       # popped in order: the first is the shortest
                return du + tail if du + tail <= budget else np.int64(-1)
            nd = du + np.int64(node_start[w + 1] - node_start[w])
            if nd + tail <= budget and (w not in seen or nd < seen[w]):
                seen[w] = nd
                heapq.heappush(heap, (nd, w))
    return np.int64(-1)


@numba.njit(**NJIT)
def _read_chains(q, keys, kcols, starts, shift, k, s, max_occ, max_chains, min_chain,
                 max_window, out, stats):
    """Chains of one read into ``out`` (max_chains x 6: q0, c0, q1, c1 (first and last
    anchor), score, anchors), best first, each anchor in one chain; returns how many.
    ``stats``: seeds skipped, anchors."""
    m = len(q)
    ac, aq, skipped = _anchors(q, keys, kcols, starts, shift, k, s, max_occ)
    stats[0] = skipped
    stats[1] = len(ac)
    n = len(ac)
    if n == 0:
        return 0
    f, pred = _chain(ac, aq, k, max(max_window, 8 * m), m // 4 + 16)
    order = np.argsort(-f)
    used = np.zeros(n, np.bool_)
    nc = 0
    for t in range(n):
        i = order[t]
        if used[i]:
            continue
        if f[i] < min_chain or nc == max_chains:
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
        if sc < min_chain:
            continue
        out[nc, 0], out[nc, 1], out[nc, 2], out[nc, 3] = aq[j], ac[j], aq[i], ac[i]
        out[nc, 4], out[nc, 5] = sc, cnt
        nc += 1
    return nc


@numba.njit(**PARALLEL)
def _chains(codes, offs, keys, kcols, starts, shift, k, s, max_occ, max_chains, min_chain,
            max_window):
    n = len(offs) - 1
    ch = np.zeros((n, max_chains, 6), np.float64)
    nch = np.zeros(n, np.int64)
    stats = np.zeros((n, 2), np.int64)
    for r in numba.prange(n):
        q = codes[offs[r]:offs[r + 1]]
        if len(q) == 0:
            continue
        nch[r] = _read_chains(q, keys, kcols, starts, shift, k, s, max_occ, max_chains,
                              min_chain, max_window, ch[r], stats[r])
    return ch, nch, stats


@numba.njit(**NJIT)
def _pieces(n1, l1, h1, n2, l2, h2):
    """The union of two piece lists as a piece list: nodes ascending, a node's intervals
    merged where they overlap or touch, kept apart where they do not (a long node whose
    head one search reached and whose tail the other: the bases between are no part of
    any walk the window stands for)."""
    n = np.concatenate((n1, n2))
    lo = np.concatenate((l1, l2))
    hi = np.concatenate((h1, h2))
    o = np.argsort(n * np.int64(1 << 31) + lo)
    n, lo, hi = n[o], lo[o], hi[o]
    k = 0
    for x in range(len(n)):
        if k > 0 and n[k - 1] == n[x] and lo[x] <= hi[k - 1] + 1:
            hi[k - 1] = max(hi[k - 1], hi[x])
        else:
            n[k], lo[k], hi[k] = n[x], lo[x], hi[x]
            k += 1
    return n[:k], lo[:k], hi[:k]


@numba.njit(**NJIT)
def _dict_pieces(d):
    """(nodes, lowest, highest offset) of a node -> (lo, hi) dict."""
    nodes = np.empty(len(d), np.int64)
    lo = np.empty(len(d), np.int64)
    hi = np.empty(len(d), np.int64)
    x = 0
    for v, lh in d.items():
        nodes[x] = v
        lo[x] = lh[0]
        hi[x] = lh[1]
        x += 1
    return nodes, lo, hi


@numba.njit(**NJIT)
def _shares_node(a, b):
    i = 0
    j = 0
    while i < len(a) and j < len(b):
        if a[i] == b[j]:
            return True
        if a[i] < b[j]:
            i += 1
        else:
            j += 1
    return False


@numba.njit(**NJIT)
def _search(c, dist, node_start, ptr, idx, forward):
    d = Dict.empty(key_type=types.int64, value_type=_SPAN)
    _reach_set(c, dist, node_start, ptr, idx, forward, d)
    return _dict_pieces(d)


@numba.njit(**NJIT)
def _read_windows(m, ch, nch, max_cand, max_del, node_start, pred_ptr, pred_idx, succ_ptr,
                  succ_idx, cap, p0, p_node, p_lo, p_hi, info):
    """Windows of one read from its chains (best first), as node pieces (a node may hold
    two: see :func:`_pieces`). Chain (q0, c0) .. (q1, c1) covers every column within walk
    distance ``q0 + 1 + pad`` upstream of ``c0`` and ``m - q1 + pad`` downstream of
    ``c1`` (the read's flanks; ``pad = 16 + m / 8``: indels), and the walks between: within
    ``q1 + 1 + pad + x`` upstream of ``c1`` and ``m - q0 + pad + x`` downstream of ``c0``,
    where ``x`` is what the shortest walk from c0 to c1 has beyond the read's ``q1 - q0 +
    1`` bases (a deletion in the read; at most ``max_del``, the longest deletion an
    alignment of m bases can pay for; 0 when a chain only jumps a bubble's other branch).
    A window sharing a node with earlier ones merges with them; at most ``max_cand``.
    Returns (windows, pieces); ``info[w]`` = (chain score, anchors, pieces); when there
    are at most ``cap`` pieces they go to ``p_node/p_lo/p_hi`` from ``p0``, window after
    window."""
    pad = 16 + m // 8
    info[:, :] = 0.0
    w_nodes = [np.empty(0, np.int64)]
    w_lo = [np.empty(0, np.int64)]
    w_hi = [np.empty(0, np.int64)]
    w_nodes.pop()
    w_lo.pop()
    w_hi.pop()
    nw = 0
    for c in range(nch):
        if nw == max_cand:
            break
        q0, c0, q1, c1 = np.int64(ch[c, 0]), np.int64(ch[c, 1]), np.int64(ch[c, 2]), np.int64(ch[c, 3])
        x = np.int64(0)
        if c1 - c0 > q1 - q0:
            s01 = _walk_dist(c0, c1, min(c1 - c0 + 1, q1 - q0 + 1 + max_del), node_start,
                             succ_ptr, succ_idx)
            if s01 > q1 - q0 + 1:
                x = s01 - (q1 - q0 + 1)
        # each search's pieces of a node share an end (tails upstream, heads downstream),
        # so a hull is exact within one search; across searches _pieces keeps them apart
        nodes, lo, hi = _pieces(
            *_pieces(*_search(c0, q0 + 1 + pad, node_start, pred_ptr, pred_idx, False),
                     *_search(c1, q1 + 1 + pad + x, node_start, pred_ptr, pred_idx, False)),
            *_pieces(*_search(c0, m - q0 + pad + x, node_start, succ_ptr, succ_idx, True),
                     *_search(c1, m - q1 + pad, node_start, succ_ptr, succ_idx, True)))
        into = -1
        for y in range(nw):
            if _shares_node(w_nodes[y], nodes):
                into = y
                break
        if into < 0:
            w_nodes.append(nodes)
            w_lo.append(lo)
            w_hi.append(hi)
            info[nw, 0] = ch[c, 4]
            info[nw, 1] = ch[c, 5]
            nw += 1
            continue
        w_nodes[into], w_lo[into], w_hi[into] = _pieces(w_nodes[into], w_lo[into], w_hi[into],
                                                        nodes, lo, hi)
        info[into, 1] += ch[c, 5]
        y = into + 1                # the union may now touch later windows: absorb them
        while y < nw:
            if not _shares_node(w_nodes[y], w_nodes[into]):
                y += 1
                continue
            w_nodes[into], w_lo[into], w_hi[into] = _pieces(
                w_nodes[into], w_lo[into], w_hi[into], w_nodes[y], w_lo[y], w_hi[y])
            info[into, 1] += info[y, 1]
            w_nodes.pop(y)
            w_lo.pop(y)
            w_hi.pop(y)
            for z in range(y, nw - 1):
                info[z, 0], info[z, 1] = info[z + 1, 0], info[z + 1, 1]
            info[nw - 1, 0] = 0.0
            info[nw - 1, 1] = 0.0
            nw -= 1
            y = into + 1
    total = 0
    for y in range(nw):
        total += len(w_nodes[y])
    p = 0
    for y in range(nw):
        nn = len(w_nodes[y])
        info[y, 2] = nn
        if total <= cap:
            for z in range(nn):
                p_node[p0 + p + z] = w_nodes[y][z]
                p_lo[p0 + p + z] = w_lo[y][z]
                p_hi[p0 + p + z] = w_hi[y][z]
        p += nn
    return nw, p


#: pieces per read kept from the counting pass of :func:`_windows` (more: searched again);
#: 12 bytes each, at most KEEP_BYTES per batch (DRB1, 4.4 bp nodes, ~70 pieces per read:
#: window building 1.45 s with 16 kept, 1.06 s with 128, 20,000 reads, 2-core VM)
KEEP_PIECES = 128
KEEP_BYTES = 256 << 20


@numba.njit(**PARALLEL)
def _windows(offs, ch, nch, max_cand, del_per_base, node_start, pred_ptr, pred_idx, succ_ptr,
             succ_idx, fill, p_at, p_node, p_lo, p_hi, info, nwin, keep):
    """Every read's windows (:func:`_read_windows`; ``del_per_base`` = a / e: an alignment of
    m bases pays for deletions of at most a m / e bases): pass 1 (``fill`` False) counts the
    pieces of each read into ``p_at[r + 1]`` and keeps them in ``keep`` (3 x reads x
    KEEP_PIECES) where they fit, pass 2 writes them from ``p_at[r]`` (searching again only
    for reads with more)."""
    big = np.int64(1) << 62
    for r in numba.prange(len(offs) - 1):
        if nch[r] == 0:
            continue
        m = offs[r + 1] - offs[r]
        if not fill:
            nw, npc = _read_windows(m, ch[r], nch[r], max_cand, np.int64(del_per_base * m),
                                    node_start, pred_ptr, pred_idx, succ_ptr, succ_idx,
                                    keep.shape[2], 0, keep[0, r], keep[1, r], keep[2, r],
                                    info[r])
            nwin[r] = nw
            p_at[r + 1] = npc
        elif p_at[r + 1] - p_at[r] <= keep.shape[2]:
            for z in range(p_at[r + 1] - p_at[r]):
                p_node[p_at[r] + z] = keep[0, r, z]
                p_lo[p_at[r] + z] = keep[1, r, z]
                p_hi[p_at[r] + z] = keep[2, r, z]
        else:
            _read_windows(m, ch[r], nch[r], max_cand, np.int64(del_per_base * m), node_start,
                          pred_ptr, pred_idx, succ_ptr, succ_idx, big, p_at[r], p_node, p_lo,
                          p_hi, info[r])


class Windows:
    """A batch's candidate windows (:meth:`SeededAligner.candidates`): ``ncand[r]``
    windows of read ``r`` (tasks ``first[r]:first[r] + ncand[r]``, best chain first; read
    ``t_read[t]``), ``stats[r]`` = (seeds skipped, anchors), and the
    :class:`~s2g.window.WindowGraph` ``wg`` holding every window as a column range."""

    def __init__(self, ncand, info, stats, wg):
        self.ncand = ncand
        self.stats = stats
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
          repeat_cap):
    """Best window per read (ties: smaller end column), its lower bound, and MAPQ."""
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
        if tot > 0:
            q = -10.0 * math.log10(tot / (1.0 + tot))
        else:
            q = 1e9
        q = min(float(MAPQ_MAX), q)
        if skipped[r] > 0 and skipped[r] >= anchors_best[r]:
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
    ``unseeded``: ``"unmapped"`` (a no-hit line) or ``"full"`` (full-graph DP with
    ``full_module``, MAPQ 255) for reads without a window. ``device="gpu"``: the windows
    run on the GPU (:func:`s2g.gpu_traceback.run_windows`: one thread per window finds the
    best cell and walks back from it in the same pass; windows too large for it run on the
    CPU), and the chosen windows' walks become the tracebacks.
    """

    def __init__(self, graph, index, scoring, mode, max_occ=MAX_OCC, max_cand=MAX_CAND,
                 min_chain=None, max_window=MAX_WINDOW, window_kernel=None,
                 unseeded="unmapped", full_module=None, device="cpu", n_secondary=0,
                 secondary_ratio=0.8):
        check_mode(mode)
        self.graph, self.index, self.scoring, self.mode = graph, index, scoring, mode
        self.max_occ, self.max_cand, self.max_window = int(max_occ), int(max_cand), int(max_window)
        self.min_chain = float(2 * index.k if min_chain is None else min_chain)
        if window_kernel is None:
            from .variants import simd       # the SIMD kernel's windows (exact, ~4x the ref)
            window_kernel = simd.align_windows
        self.window_kernel = window_kernel
        if unseeded not in ("unmapped", "full"):
            raise ValueError(f"unseeded must be 'unmapped' or 'full', got {unseeded!r}")
        self.unseeded = unseeded
        self.full_module = full_module
        if device not in ("cpu", "gpu"):
            raise ValueError(f"device must be 'cpu' or 'gpu', got {device!r}")
        self.device = device
        self.n_secondary, self.secondary_ratio = int(n_secondary), float(secondary_ratio)
        self.totals = {"reads": 0, "windows": 0, "window_cells": 0, "unseeded": 0,
                       "windows left to the CPU": 0,
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
        _windows(*args, False, p_at, e32, e32, e32, info, nwin, keep)
        np.cumsum(p_at, out=p_at)
        npc = int(p_at[-1])
        p_node, p_lo, p_hi = (np.empty(npc, np.int32) for _ in range(3))
        _windows(*args, True, p_at, p_node, p_lo, p_hi, info, nwin, keep)
        sel = np.arange(self.max_cand)[None, :] < nwin[:, None]
        piece_at = np.zeros(int(nwin.sum()) + 1, np.int64)
        np.cumsum(info[:, :, 2][sel].astype(np.int64), out=piece_at[1:])
        return Windows(nwin, info, stats, WindowGraph(g, piece_at, p_node, p_lo, p_hi))

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
        score, ei, ej, lo, mapq, best_t = _pick(ncand, ts, tei, tcol, t_lo, first, float(a + b),
                                                MAPQ_PER_MISMATCH, cand.stats[:, 0],
                                                cand.anchors_best, MAPQ_REPEAT_CAP)
        lens = reads.lengths()
        self.totals["reads"] += n
        self.totals["windows"] += total
        self.totals["window_cells"] += int(((t_hi - t_lo) * lens[t_read]).sum()) if total else 0
        res = BatchResult(reads.names, lens, score, ei, ej)
        res.mapq = mapq
        res.col_lo = lo                            # window-graph coordinates, as is
        res.wg_end_j = np.full(n, -1, np.int64)
        res.wg_end_j[best_t >= 0] = tej[best_t[best_t >= 0]]
        res.wg = wg
        res.n_windows = ncand
        res.best_task = best_t
        res.window_run = wr
        res.secondary = None
        if self.n_secondary > 0:
            sr, st = _secondaries(ncand, ts, first, best_t, self.secondary_ratio,
                                  self.n_secondary)
            sec = BatchResult([reads.names[r] for r in sr.tolist()], lens[sr], ts[st], tei[st],
                              tcol[st])
            sec.mapq = np.zeros(len(sr), np.int64)
            sec.col_lo = t_lo[st]
            sec.wg_end_j = tej[st]
            sec.owner = sr
            sec.task = st
            res.secondary = sec
        no_seed = np.nonzero((ncand == 0) & (lens > 0))[0]
        self.totals["unseeded"] += len(no_seed)
        if len(no_seed) and self.unseeded == "full":
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
