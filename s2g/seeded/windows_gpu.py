"""Seeded windows' graph searches on the GPU (issue #42; docs/plans/gpu_window_build.md,
step 1, knob ``gpu_window_search``): each chain's list of node pieces, the unit
:func:`s2g.seeded.windows._chain_pieces` makes on the host, made by one GPU thread a chain.

A chain's list depends only on the chain, its read's length, ``max_del`` and the graph,
not on the read's other chains, so :func:`search_body` takes one chain slot a thread: the
deletion between the anchors (:func:`_walk_d`, the bounded Dijkstra of
:func:`s2g.seeded.search._walk_dist`), the four reach searches (:func:`_reach_d`, those of
:func:`s2g.seeded.search._reach`), then the pieces sorted by (node, lo) and a node's
touching intervals merged. The host's dense per-node scratch (16 bytes a node and worker)
cannot go with ~10^5 threads: here a search's visited set is its own piece slots (a
search adds one per new node, so a node is found by scanning them) in local memory of
:data:`C_CAP` pieces a chain and :data:`T_CAP` nodes a search (97.7% of MHC's searches
touch one node; DRB1's, 4.4 bp nodes, 39 on average). The heap holds keys ``dist << 32 |
slot``: in a DAG (the graph's nodes are in topological order) each node is pushed at most
once, pops coming in nondecreasing distance, so its capacity is a search's node cap. A
chain over a cap, or whose list finds the output buffer full, gets count -1 and the host
makes its list (:func:`s2g.seeded.windows.batch_windows`' searches); the lists go to one
buffer at offsets taken with an atomic add (their order varies; each chain's own list does
not).

Exact: a search's output, one hull a node, is a function of shortest distances, and the
sorted, merged list is the union of a chain's intervals whatever the order of ties
(docs/plans/gpu_window_build.md §2), so the lists equal the host's bit for bit (tests: the
CUDA simulator against :func:`s2g.seeded.windows.batch_chain_pieces`; the device check).
"""
from __future__ import annotations

import threading
import time

import numba
import numpy as np

from .._numba import loaded
from ..counters import Counters
from ..variants import _devpool, _lean
from ..variants._lean import device

#: numba.cuda, once this module's kernels are compiled (:func:`s2g.variants._lean.compile_module`:
#: the lean path launches their stored cubins and never imports it)
cuda = None

#: threads a block
BLOCK = 128
#: pieces a chain holds on the GPU (its four searches' nodes, before merging)
C_CAP = 256
#: nodes a search may touch on the GPU (its heap: the same)
T_CAP = 128
_HEAP = T_CAP + 1                     # (a local array's size: a constant)
#: ``--timings``' counters: launches, chains searched, chains left to the host, the kernel's
#: seconds (CUDA events) and chain_lists' wall seconds
PROFILE = Counters({"launches": 0, "chains": 0, "host": 0, "kernel": 0.0, "wall": 0.0})
_BIG = np.int32(2**31 - 1)            # a node reached, not (yet) entered
_LOW = np.int64(0xFFFFFFFF)


@device
def _node_of(node_start, n_nodes, c):
    """The last node v with ``node_start[v] <= c`` (searchsorted right, minus one)."""
    lo = numba.int32(0)
    hi = numba.int32(n_nodes)
    while lo < hi:
        mid = numba.int32((lo + hi + 1) >> 1)
        if node_start[mid] <= c:
            lo = mid
        else:
            hi = numba.int32(mid - 1)
    return lo


@device
def _push(h, n, key):
    i = n
    while i > 0:
        p = (i - 1) >> 1
        if h[p] <= key:
            break
        h[i] = h[p]
        i = p
    h[i] = key
    return n + 1


@device
def _pop(h, n):
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


@device
def _find(bn, a, b, w):
    """The slot of node ``w`` among ``bn[a:b]``, or ``b``."""
    z = a
    while z < b:
        if bn[z] == w:
            return z
        z += 1
    return b


@device
def _walk_d(c0, c1, budget, node_start, n_nodes, ptr, idx, wv, wsd, heap, t_cap):
    """:func:`s2g.seeded.search._walk_dist`: bases of the shortest walk from column c0 to
    c1 within ``budget``, -1 when none, -2 when the search needs more than ``t_cap``
    nodes (visited: ``wv``/``wsd``, nodes and distances)."""
    v = _node_of(node_start, n_nodes, c0)
    w1 = _node_of(node_start, n_nodes, c1)
    if v == w1:
        if c0 <= c1 and c1 <= c0 + budget - 1:
            return c1 - c0 + 1
        return numba.int64(-1)
    tail = c1 - node_start[w1] + 1
    d0 = node_start[v + 1] - c0
    wv[0] = v
    wsd[0] = d0
    nv = 1
    heap[0] = numba.int64(d0) << 32
    nh = 1
    while nh > 0:
        key, nh = _pop(heap, nh)
        du = key >> 32
        s = numba.int32(key & _LOW)
        if wsd[s] < du:
            continue
        u = wv[s]
        for t in range(ptr[u], ptr[u + 1]):
            w = idx[t]
            if w == w1:               # popped in order: the first is the shortest
                if du + tail <= budget:
                    return du + tail
                return numba.int64(-1)
            nd = du + (node_start[w + 1] - node_start[w])
            if nd + tail <= budget:
                z = _find(wv, 0, nv, w)
                if z == nv:
                    if nv >= t_cap:
                        return numba.int64(-2)
                    wv[z] = w
                    wsd[z] = nd
                    nv += 1
                elif nd < wsd[z]:
                    wsd[z] = nd
                else:
                    continue
                if nh >= heap.shape[0]:     # (never in a DAG: a node is pushed once)
                    return numba.int64(-2)
                nh = _push(heap, nh, (nd << 32) | z)
    return numba.int64(-1)


@device
def _reach_d(c, dist, node_start, n_nodes, ptr, idx, forward, bn, bl, bh, sd, heap, nb,
             caps):
    """:func:`s2g.seeded.search._reach` into the chain's piece slots from ``nb``: returns
    the new count, or -1 past ``caps`` = (nodes a search, pieces a chain)."""
    t_cap, c_cap = caps
    if nb >= c_cap:
        return -1
    nb0 = nb
    v = _node_of(node_start, n_nodes, c)
    ns = node_start[v]
    ln_v = node_start[v + 1] - ns
    off = c - ns
    bn[nb] = v
    sd[nb] = _BIG
    if forward:
        room = ln_v - 1 - off
        bl[nb] = off
        if room + 1 >= dist:
            bh[nb] = off + dist - 1
            return nb + 1
        bh[nb] = ln_v - 1
    else:
        room = off
        bh[nb] = off
        if room + 1 >= dist:
            bl[nb] = off - dist + 1
            return nb + 1
        bl[nb] = 0
    sd[nb] = room + 1
    heap[0] = (numba.int64(room + 1) << 32) | nb
    nb += 1
    nh = 1
    while nh > 0:
        key, nh = _pop(heap, nh)
        du = key >> 32
        s = numba.int32(key & _LOW)
        if sd[s] < du:
            continue
        u = bn[s]
        for t in range(ptr[u], ptr[u + 1]):
            w = idx[t]
            ln = node_start[w + 1] - node_start[w]
            full = du + ln < dist
            lo = 0
            hi = ln - 1
            if not full:                      # the walk ends inside w
                k = dist - du                 # bases of w within reach (>= 1)
                if forward:
                    hi = k - 1
                else:
                    lo = ln - k
            z = _find(bn, nb0, nb, w)
            if z == nb:
                if nb >= c_cap or nb - nb0 >= t_cap:
                    return -1
                bn[z] = w
                bl[z] = lo
                bh[z] = hi
                sd[z] = _BIG
                nb += 1
            else:
                bl[z] = min(bl[z], lo)
                bh[z] = max(bh[z], hi)
            if full:
                nd = du + ln
                if nd < sd[z]:
                    if nh >= heap.shape[0]:     # (never in a DAG: a node is pushed once)
                        return -1
                    sd[z] = nd
                    nh = _push(heap, nh, (nd << 32) | z)
    return nb


@device
def _merged(bn, bl, bh, od, nb, on, ol, oh, at, write):
    """The pieces ``od[:nb]`` (sorted by node, lo) with a node's overlapping or touching
    intervals merged, written from ``at`` when ``write``; returns their count."""
    k = 0
    cn = numba.int32(0)
    cl = numba.int32(0)
    chh = numba.int32(0)
    for a in range(nb):
        z = od[a]
        if a > 0 and bn[z] == cn and bl[z] <= chh + 1:
            chh = max(chh, bh[z])
            continue
        if a > 0:
            if write:
                on[at + k] = cn
                ol[at + k] = cl
                oh[at + k] = chh
            k += 1
        cn = bn[z]
        cl = bl[z]
        chh = bh[z]
    if nb > 0:
        if write:
            on[at + k] = cn
            ol[at + k] = cl
            oh[at + k] = chh
        k += 1
    return k


def search_body(ch, nch, rd, node_start, pred_ptr, pred_idx, succ_ptr, succ_idx, t_cap,
                c_cap, ca, on, ol, oh, top):
    """One thread a chain slot ``i = r * S + c`` (``ch``: reads x S chains x (q0, c0, q1,
    c1, score, anchors), ``nch[r]`` of them; ``rd[r]`` = (read length, ``max_del``)): the
    chain's list of pieces as :func:`s2g.seeded.windows.batch_chain_pieces` makes it,
    appended to (``on``, ``ol``, ``oh``) = (nodes, lo, hi) at ``ca[1, i]`` (an atomic add on
    ``top[0]``), ``ca[0, i]`` pieces; 0 past ``nch``, -1 where a cap (``t_cap`` nodes a
    search, ``c_cap`` pieces a chain) or the buffer's length was too small (the host's)."""
    i = cuda.grid(1)
    S = ch.shape[1]
    if i >= ch.shape[0] * S:
        return
    r = i // S
    c = i - r * S
    ca[0, i] = 0
    ca[1, i] = 0
    if c >= nch[r]:
        return
    n_nodes = numba.int32(node_start.shape[0] - 1)
    bn = cuda.local.array(C_CAP, numba.int32)
    bl = cuda.local.array(C_CAP, numba.int32)
    bh = cuda.local.array(C_CAP, numba.int32)
    sd = cuda.local.array(C_CAP, numba.int32)
    heap = cuda.local.array(_HEAP, numba.int64)
    t_cap = min(t_cap, T_CAP)
    c_cap = min(c_cap, C_CAP)
    q0 = numba.int64(ch[r, c, 0])
    c0 = numba.int64(ch[r, c, 1])
    q1 = numba.int64(ch[r, c, 2])
    c1 = numba.int64(ch[r, c, 3])
    m = rd[r, 0]
    x = numba.int64(0)
    if c1 - c0 > q1 - q0:           # (bn, sd: the walk's visited nodes, free till then)
        s01 = _walk_d(c0, c1, min(c1 - c0 + 1, q1 - q0 + 1 + rd[r, 1]), node_start, n_nodes,
                      succ_ptr, succ_idx, bn, sd, heap, t_cap)
        if s01 == -2:
            ca[0, i] = -1
            return
        if s01 > q1 - q0 + 1:
            x = s01 - (q1 - q0 + 1)
    pad = 16 + m // 8
    cc = (t_cap, c_cap)
    nb = 0
    for z in range(4):              # upstream of c0, c1; downstream of c0, c1 (one call:
        fwd = z >= 2                # the device functions inline)
        cz = c0 if z % 2 == 0 else c1
        if z == 0:
            dist = q0 + 1 + pad
        elif z == 1:
            dist = q1 + 1 + pad + x
        elif z == 2:
            dist = m - q0 + pad + x
        else:
            dist = m - q1 + pad
        ptr = succ_ptr if fwd else pred_ptr
        idx = succ_idx if fwd else pred_idx
        nb = _reach_d(cz, dist, node_start, n_nodes, ptr, idx, fwd, bn, bl, bh, sd, heap, nb,
                      cc)
        if nb < 0:
            break
    if nb < 0:
        ca[0, i] = -1
        return
    od = sd                          # the slots by (node, lo): insertion sort
    for a in range(nb):
        od[a] = a
    for a in range(1, nb):
        z = od[a]
        kn = bn[z]
        kl = bl[z]
        b = a - 1
        while b >= 0 and (bn[od[b]] > kn or (bn[od[b]] == kn and bl[od[b]] > kl)):
            od[b + 1] = od[b]
            b -= 1
        od[b + 1] = z
    k = _merged(bn, bl, bh, od, nb, on, ol, oh, 0, False)
    a0 = cuda.atomic.add(top, 0, k)
    if a0 + k > on.shape[0]:
        ca[0, i] = -1
        return
    _merged(bn, bl, bh, od, nb, on, ol, oh, a0, True)
    ca[0, i] = k
    ca[1, i] = a0


_I32 = numba.int32[::1]
_I64 = numba.int64[::1]
#: the kernel's signature (tests compile it to PTX with it)
SEARCH_SIGNATURE = (numba.float64[:, :, ::1], _I64, numba.int64[:, ::1], _I32, _I32, _I32,
                    _I32, _I32, numba.int32, numba.int32, numba.int32[:, ::1], _I32, _I32,
                    _I32, _I64)
_KERNEL = []
_LOCK = threading.Lock()


def kernel():
    """The search kernel, compiled once (disk cache)."""
    with _LOCK:
        if not _KERNEL:
            _KERNEL.append(_lean.kernel("windows_gpu.search", lambda: loaded(
                compile_module()(SEARCH_SIGNATURE, cache=True)(search_body))))
    return _KERNEL[0]


def compile_module():
    """``cuda.jit``, this module's device functions made (tests compile to PTX after it)."""
    return _lean.compile_module(globals())


def device_graph(graph):
    """(node_start, pred_ptr, pred_idx, succ_ptr, succ_idx) of ``graph`` on the device as
    int32, uploaded once per graph object (every thread reads them)."""
    with _LOCK:
        got = graph.__dict__.get("_s2g_dgraph")
        if got is None:
            from ..graph_core import successors
            sp, si = successors(graph)
            arrs = (graph.node_start, graph.pred_ptr, graph.pred_idx, sp, si)
            got = _devpool.shared(*(_lean.api().to_device(np.ascontiguousarray(a, np.int32))
                                    for a in arrs))
            graph.__dict__["_s2g_dgraph"] = got
    return got


#: list entries a chain slot gets in the first try (more: the kernel runs again, sized)
_GUESS = 8


def chain_lists(graph, ch, nch, offs, del_per_base, dp=None, caps=None, on_device=None):
    """The chains' lists (``ch``, ``nch`` as :func:`s2g.seeded.windows.batch_windows`
    takes them; reads ``offs``), made on the GPU: (count, at, nodes, lo, hi) as
    :func:`s2g.seeded.windows.batch_chain_pieces` returns them, except that count is -1
    where the host must make the list and the lists' order in the buffer varies (counts
    in :data:`PROFILE`). ``caps``: (nodes a search, pieces a chain) at most :data:`T_CAP`,
    :data:`C_CAP` (tests: smaller). ``on_device``: ``ch`` and ``nch`` on the GPU already
    (:func:`s2g.seeded.chains_gpu.batch_chains`' ``dev``), read there."""
    t0 = time.perf_counter()
    dp = _devpool.pool() if dp is None else dp
    n, S = ch.shape[0], ch.shape[1]
    cnt = np.zeros((n, S), np.int32)
    at = np.zeros((n, S), np.int32)
    e32 = np.zeros(0, np.int32)
    if n == 0 or S == 0:
        return cnt, at, e32, e32, e32
    k = kernel()
    dg = device_graph(graph)
    offs = np.asarray(offs, np.int64)
    rd = np.empty((n, 2), np.int64)
    rd[:, 0] = np.diff(offs)
    rd[:, 1] = del_per_base * rd[:, 0]        # np.int64(del_per_base * m), each
    cc = (np.int32(T_CAP), np.int32(C_CAP)) if caps is None else \
        (np.int32(caps[0]), np.int32(caps[1]))
    if on_device is not None:
        d_ch, d_nch = on_device
    else:
        d_ch = dp.put("wsearch.ch", np.ascontiguousarray(ch, np.float64).reshape(-1)).reshape(
            ch.shape)
        d_nch = dp.put("wsearch.nch", np.ascontiguousarray(nch, np.int64))
    d_rd = dp.put("wsearch.rd", rd.reshape(-1)).reshape((n, 2))
    d_ca = dp.empty("wsearch.ca", 2 * n * S, np.int32).reshape((2, n * S))
    d_top = dp.empty("wsearch.top", 1, np.int64)
    size = max(int(nch.sum()) * _GUESS, 64)
    blocks = -(-(n * S) // BLOCK)
    ev = _devpool.events("wsearch", 2)
    kernel_ms = 0.0
    for _ in range(2):
        lists = tuple(dp.empty(f"wsearch.l{j}", size, np.int32) for j in range(3))
        d_top.copy_to_device(np.zeros(1, np.int64))
        if ev:
            ev[0].record()
        k[blocks, BLOCK](d_ch, d_nch, d_rd, *dg, *cc, d_ca, *lists, d_top)
        if ev:
            ev[1].record()
        total = int(d_top.copy_to_host()[0])
        if ev:
            kernel_ms += max(ev[0].elapsed_time(ev[1]), 0.0)
        PROFILE.add(launches=1)
        if total <= size:
            break
        size = total                      # (each chain's list counted: now they fit)
    ca = d_ca.copy_to_host()
    cnt[:] = ca[0].reshape(n, S)
    at[:] = ca[1].reshape(n, S)
    out = tuple(np.empty(total, np.int32) for _ in range(3))
    if total:
        for d, h in zip(lists, out):
            d[:total].copy_to_host(h)
    PROFILE.add(chains=int(nch.sum()), host=int((cnt < 0).sum()), kernel=kernel_ms / 1e3,
                wall=time.perf_counter() - t0)
    return (cnt, at, *out)


__all__ = ["BLOCK", "C_CAP", "T_CAP", "SEARCH_SIGNATURE", "chain_lists", "device_graph",
           "kernel", "search_body"]
