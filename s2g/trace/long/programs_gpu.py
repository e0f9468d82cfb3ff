"""Seeded long windows' column programs made on the GPU (issue 45).

A long window's program (:mod:`s2g.trace.gpu_program`) is seven words a window column
(22 bytes: base, graph column, kind, slot stored into, merge rank, list start and length),
and the pruned pass adds the walk bound's two (:func:`s2g.trace.long.prune.walk_bounds`).
Made on the host and uploaded, that was the pace of a 10 kbp read's seeded pass on the
H200: ~3e8 window columns for 10,000 reads, ~6.6 GB of programs and ~2.4 GB of walk bounds
through the ~6 GB/s this host moves, and 1.5 s of filling them on its 16 vCPUs (py-spy,
session 38: the aligning thread spent 3.3 s in uploads and 2.5 s making programs against
2.7 s of kernels). Yet every column of a window node but its first and last says only
"continue the column before": the host keeps what is per window node
(:func:`s2g.trace.common.node_program`: the first column's kind and merge list, the last
column's slot; the walk bound at the node's ends) and one GPU thread a column spreads those
over the node's columns. A batch's windows live in its window graph
(:class:`s2g.window.WindowGraph`, made anew each batch), whose bases are gathered from the
whole graph's (on the device once a run, :func:`s2g.variants.fast.wtables_gpu.parent_bases`,
as the fast kernel's window tables do). The MHC graph's nodes are ~5,400 bases long: ~70
bytes a node replace ~30 a column. The words are the host's
(:func:`s2g.trace.common.lane_program` spreads the same records; the CUDA-simulator check
compares every array word for word, tests/pruned_gpu_cudasim_check.py).
"""
from __future__ import annotations

import threading

import numba
import numpy as np

from ..._numba import NJIT, loaded
from ..common import K_CONT as TB_CONT, K_VIRT as TB_VIRT, N_NODE, node_program
from ..gpu_program import PROG_COLUMN, PROG_EDGE, _range_window
from ..gpu_walk import K_CONT, K_MERGE, K_VIRT, cum
from .plan import SIM

#: threads a block of :func:`spread_body`
BLOCK = 256


@numba.njit(parallel=True, **NJIT)
def node_records(t_lo, t_hi, mode, graph, src, coff, noff, poff, rec, kind, mp_slot, mp_wcol):
    """Per window node of the windows ``[t_lo[t], t_hi[t])`` (window ``t``'s nodes from
    ``noff[t]``, its columns from ``coff[t]``, its merge entries from ``poff[t]``): ``rec``
    rows (first column, flat; graph column of it; merge rank, list start, list length of
    the first column; slot of the last column; the walk bound's ``pl`` at the first column
    and ``pr`` at the last; where its first base is in the bases the kernel reads: ``src``
    per graph node, its first base's) and ``kind`` (the first column's, the GPU's kind
    bits); the merge lists into ``mp_slot``/``mp_wcol``. ``rec[0]`` has one more entry, the
    flat end."""
    node_start = graph[0]
    n = len(t_lo)
    for t in numba.prange(n):
        wn, ws, we = _range_window(t_lo[t], t_hi[t], node_start)
        nw = len(wn)
        nodes = np.empty((N_NODE, nw), np.int64)
        sz = np.zeros(6, np.int64)
        node_program(wn, ws, we, mode, graph, True, poff[t], mp_slot, mp_wcol, nodes, sz)
        n0 = noff[t]
        for k in range(nw):
            x = n0 + k
            rec[0, x] = coff[t] + nodes[0, k]
            rec[1, x] = node_start[wn[k]] + ws[k]
            kd = nodes[1, k]
            kind[x] = K_CONT if kd == TB_CONT else (K_MERGE | K_VIRT if kd == TB_VIRT
                                                     else K_MERGE)
            rec[2, x] = nodes[2, k]
            rec[3, x] = nodes[3, k]
            rec[4, x] = nodes[4, k]
            rec[5, x] = nodes[5, k]
            rec[8, x] = src[wn[k]] + ws[k]
        # the walk bound (prune.walk_bounds, per column there): inside a node pl rises and
        # pr falls by one a column; a node's first column continues the column before it
        # (the previous node's last) or merges its list (other nodes' last columns)
        e0 = poff[t]
        for k in range(nw):
            best = 0
            if nodes[1, k] == TB_CONT:
                if nodes[0, k] > 0:
                    best = rec[6, n0 + k - 1] + we[k - 1] - ws[k - 1]
            else:
                for y in range(nodes[4, k]):
                    q = mp_wcol[e0 + nodes[3, k] + y]
                    kq = np.searchsorted(nodes[0], q, side="right") - 1
                    best = max(best, rec[6, n0 + kq] + q - nodes[0, kq])
            rec[6, n0 + k] = best + 1
            rec[7, n0 + k] = 0
        for k in range(nw - 1, -1, -1):
            nxt = rec[7, n0 + k] + we[k] - ws[k] + 1
            if nodes[1, k] == TB_CONT:
                if nodes[0, k] > 0:
                    rec[7, n0 + k - 1] = max(rec[7, n0 + k - 1], nxt)
            else:
                for y in range(nodes[4, k]):
                    q = mp_wcol[e0 + nodes[3, k] + y]
                    kq = np.searchsorted(nodes[0], q, side="right") - 1
                    rec[7, n0 + kq] = max(rec[7, n0 + kq], nxt)
    rec[0, noff[n]] = coff[n]


def spread_body(first, rec, kind, base, p_base, p_col, p_kind, p_store, p_mrank, p_mpa, p_mpn,
                pl, pr):
    """Column ``c`` of every thread's grid-stride loop: its node ``v`` (binary search of
    ``first``, the nodes' first columns: the last ``v`` with ``first[v] <= c``), then the
    program's words and the walk bound :func:`node_records` describe (``rec`` rows 1-8,
    int32; the base from ``base`` at row 8's column)."""
    n = first.size - 1
    total = first[n]
    c = numba.int64(cuda.grid(1))
    stride = numba.int64(cuda.gridsize(1))
    while c < total:
        lo = 0
        hi = n - 1
        while lo < hi:
            mid = (lo + hi + 1) >> 1
            if first[mid] <= c:
                lo = mid
            else:
                hi = mid - 1
        v = lo
        d = numba.int32(c - first[v])
        tail = numba.int32(first[v + 1] - 1 - c)
        col = rec[1, v] + d
        p_col[c] = col
        p_base[c] = base[rec[8, v] + d]
        if d == 0:
            p_kind[c] = kind[v]
            p_mrank[c] = rec[2, v]
            p_mpa[c] = rec[3, v]
            p_mpn[c] = rec[4, v]
        else:
            p_kind[c] = numba.int8(K_CONT)
            p_mrank[c] = -1
            p_mpa[c] = 0
            p_mpn[c] = 0
        p_store[c] = rec[5, v] if tail == 0 else numba.int32(-1)
        pl[c] = rec[6, v] + d
        pr[c] = rec[7, v] + tail
        c += stride


_I32 = numba.int32[::1]
#: the kernel's signature (tests compile it to PTX with it)
SIGNATURE = (numba.int64[::1], numba.int32[:, ::1], numba.int8[::1], numba.uint8[::1],
             numba.uint8[::1], _I32, numba.int8[::1], _I32, _I32, _I32, _I32, _I32, _I32)
_KERNEL = []
_LOCK = threading.Lock()
cuda = None


def kernel():
    """:func:`spread_body` compiled once per process (eagerly on a GPU, disk-cached; on the
    lean path its stored cubin, :func:`s2g.variants._lean.kernel`)."""
    from ...variants import _lean
    with _LOCK:
        if not _KERNEL:
            _KERNEL.append(_lean.kernel("long.spread", _build))
    return _KERNEL[0]


def stored() -> bool:
    """Whether the lean path's store holds :func:`kernel` (warm-up's probe on that path)."""
    from ...variants import _lean
    return _lean.load("long.spread") is not None


def _build():
    global cuda
    from numba import cuda as _c
    cuda = _c
    return cuda.jit(spread_body) if SIM else loaded(cuda.jit(SIGNATURE, cache=True)(spread_body))


def cache_probe():
    """A lazy dispatcher of :func:`spread_body` whose disk cache tells whether the kernel is
    compiled (:func:`s2g.warmup.cold`); compiles nothing."""
    global cuda
    from numba import cuda as _c
    cuda = _c
    return cuda.jit(cache=True)(spread_body)


class DeviceProgram:
    """Programs of a launch's windows on the device (:func:`device_programs`): ``arrays``
    in :data:`s2g.trace.gpu_program.PROG_NAMES` order, and the walk bound ``pl``, ``pr``
    per window column (:func:`s2g.trace.long.prune.walk_bounds`'s)."""

    def __init__(self, arrays, pl, pr):
        self.arrays, self.pl, self.pr = arrays, pl, pr


def device_programs(dp, graph, t_lo, t_hi, mode, coff, poff, tag="longprog"):
    """The programs of seeded windows ``[t_lo[t], t_hi[t])`` (column offsets ``coff``,
    merge entries ``poff``: :func:`s2g.trace.gpu_program.sizes`'s) made on the GPU into the
    :class:`~s2g.variants._devpool.DevicePool` ``dp``'s buffers ``tag``.*: a
    :class:`DeviceProgram`, queued on this thread's stream (the launch that reads them
    follows there)."""
    from ...config import settings
    from ...variants.fast.wtables_gpu import parent_bases
    t_lo = np.ascontiguousarray(t_lo, np.int64)
    t_hi = np.ascontiguousarray(t_hi, np.int64)
    ns = graph.node_start
    nw = np.searchsorted(ns, t_hi - 1, side="right") - np.searchsorted(ns, t_lo, side="right") + 1
    noff = cum(nw)
    nn = int(noff[-1])
    rec = np.zeros((9, nn + 1), np.int64)
    kind = np.zeros(max(nn, 1), np.int8)
    ne = max(int(poff[-1]), 1)
    mp_slot, mp_wcol = np.zeros(ne, np.int32), np.zeros(ne, np.int32)
    # the bases: a window graph's (s2g.window.WindowGraph, one a batch) from its parent's,
    # on the device once a run (as the fast kernel's window tables gather them, knob
    # gpu_window_bases); else the graph's own, uploaded into this thread's pool
    parent = getattr(graph, "parent_cols", None)
    if parent is not None and settings().gpu_window_bases:
        src = np.asarray(parent[1], np.int64)
    else:
        parent, src = None, np.asarray(ns, np.int64)
    node_records(t_lo, t_hi, mode, (ns, graph.pred_ptr, graph.pred_idx), src, coff, noff, poff,
                 rec, kind, mp_slot, mp_wcol)
    nc = int(coff[-1])
    out = [dp.empty(f"{tag}.{nm}", nc, dt) for nm, dt in PROG_COLUMN]
    pl, pr = dp.empty(f"{tag}.pl", nc, np.int32), dp.empty(f"{tag}.pr", nc, np.int32)
    out += [dp.put(f"{tag}.{nm}", x) for (nm, _), x in zip(PROG_EDGE, (mp_slot, mp_wcol))]
    if nc:
        d_first = dp.put(f"{tag}.first", rec[0])
        d_rec = dp.empty(f"{tag}.rec", 9 * (nn + 1), np.int32).reshape((9, nn + 1))
        d_rec.copy_to_device(np.ascontiguousarray(rec, np.int32))
        blocks = min(-(-nc // BLOCK), 65536)
        kernel()[blocks, BLOCK](d_first, d_rec, dp.put(f"{tag}.kind", kind),
                                parent_bases(parent[0]) if parent is not None else
                                dp.put(f"{tag}.base", graph.base), *out[:len(PROG_COLUMN)], pl, pr)
    return DeviceProgram(out, pl, pr)
