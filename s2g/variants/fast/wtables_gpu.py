"""The window form's column tables made on the GPU (issue #42).

:func:`s2g.variants.fast.windows.window_tables` makes five int32 words a window column
(colinfo, colsub, mword, mptr; mslot per merge predecessor) on the host, and uploading
them was most of the window stage: 1,000,000 150 bp reads on the MHC graph have 4.5e8
window columns, 7.2 GB of tables, 1.2-1.4 s of uploads at the ~6 GB/s this H200 host
moves (page-locked or not) beside 0.6-1.0 s of building them on 16 vCPUs, for a kernel
of 0.07 s (session 31). Here the host keeps what is per window node (liveness slots and
merge-list offsets: a window has a few nodes, most of them thousands of bases long on
MHC) and uploads those with the window graph's bases (1 byte a column); one thread a
column then writes the tables, the same words as the host's (tests: the CUDA simulator
against :func:`window_tables` on random window graphs).
"""
from __future__ import annotations

import threading

import numba
import numpy as np

from ..._numba import loaded
from .. import _devpool, _lean
from .constants import (CI_KEEP, CI_MERGE, CI_SINK, CI_SLOT_SHIFT, CI_VIRT, GRAPH_N,
                        PACKED_PREDS, SLOT_BITS, SLOT_MASK)
from .tables import window_node_parts

#: numba.cuda, once this module's kernels are compiled (:func:`s2g.variants._lean.compile_module`:
#: the lean path launches their stored cubins and never imports it)
cuda = None
#: threads a block of the table kernel (:func:`fill_body`)
BLOCK = 256


def fill_body(ns, ptr, idx, base, src, is_sink, slot, off, vslot, prmt_sub, ci, sub, mw, mp,
              ms):
    """Column ``c`` of every thread's grid-stride loop: its node ``v`` (binary search of
    ``ns``, the window graph's node starts: the last ``v`` with ``ns[v] <= c``), then the
    words :func:`s2g.variants.fast.windows._tables_fill` writes for it; a node's first
    column also writes its merge list (``ms``), its last the sink and slot bits. Column
    ``c``'s base is ``base[src[v] + c - ns[v]]``: ``base`` the parent graph's (kept on the
    device, ``src`` each window node's first column in it) or the window graph's own
    (``src`` = ``ns``). Nodes: ``ns.size - 1``; columns: ``ci.size``."""
    n = numba.int32(ns.size - 1)
    n_cols = numba.int32(ci.size)
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    if start == 0:
        mp[n_cols] = off[n]
    for c in range(start, n_cols, stride):
        lo = numba.int32(0)
        hi = numba.int32(n - 1)
        while lo < hi:
            mid = (lo + hi + 1) >> 1
            if ns[mid] <= c:
                lo = mid
            else:
                hi = mid - 1
        v = lo
        c0 = ns[v]
        g = numba.int32(base[src[v] + (c - c0)])
        if g >= 4:
            g = numba.int32(GRAPH_N)
        info = g
        word = numba.int32(0)
        p = off[v + 1]
        if c == c0:
            p = off[v]
            pa, pb = ptr[v], ptr[v + 1]
            if pb == pa:                             # a source: the virtual slot
                info |= CI_VIRT | CI_MERGE
                ms[off[v]] = vslot
                word = vslot + 1 if vslot + 1 < SLOT_MASK else numba.int32(-1)
            elif not (pb - pa == 1 and idx[pa] == v - 1):
                info |= CI_MERGE
                bad = False
                r = numba.int32(0)
                for k in range(pa, pb):
                    u = idx[k]
                    if u == v - 1:
                        info |= CI_KEEP
                        continue
                    sq = slot[u]
                    ms[off[v] + r] = sq
                    if sq + 1 < SLOT_MASK and r < PACKED_PREDS:
                        word += (sq + 1) << (SLOT_BITS * r)
                    else:
                        bad = True
                    r += 1
                if bad:
                    word = numba.int32(-1)
        if c == ns[v + 1] - 1:
            if is_sink[v] != 0:
                info |= CI_SINK
            if slot[v] >= 0:
                info |= (slot[v] + 1) << CI_SLOT_SHIFT
        ci[c] = info
        sub[c] = g * 0x1111 + 0x8880 if prmt_sub != 0 else g
        mw[c] = word
        mp[c] = p


_I32 = numba.int32[::1]
_U8 = numba.uint8[::1]
#: the kernel's signature (tests compile it to PTX with it)
SIGNATURE = (_I32, _I32, _I32, _U8, numba.int64[::1], _U8, _I32, _I32, numba.int32,
             numba.int32, _I32, _I32, _I32, _I32, _I32)
_KERNEL = []
_LOCK = threading.Lock()
#: parent graphs' bases on the device: id(host array) -> (host array, device array)
_PARENT = {}


def kernel():
    with _LOCK:
        if not _KERNEL:
            _KERNEL.append(_lean.kernel("wtables_gpu.fill", lambda: loaded(
                compile_module()(SIGNATURE, cache=True)(fill_body))))
    return _KERNEL[0]


def compile_module():
    """``cuda.jit``, this module ready for Numba (tests compile to PTX after it)."""
    return _lean.compile_module(globals())


def parent_bases(base):
    """The parent graph's bases ``base`` on the device, uploaded once per graph (every
    thread reads them: :func:`s2g.variants._devpool.shared`); the last graph's only are
    kept (a process that aligns to another graph frees the first's)."""
    with _LOCK:
        hit = _PARENT.get(id(base))
        if hit is None or hit[0] is not base:
            _PARENT.clear()
            hit = _PARENT[id(base)] = (base, _devpool.shared(_lean.api().to_device(base)))
        return hit[1]


def device_tables(dp, wgraph, piece_at, prmt_sub, tag="fastw", csr=False):
    """:func:`s2g.variants.fast.windows.window_tables` of ``wgraph`` as device arrays in
    the :class:`~s2g.variants._devpool.DevicePool` ``dp`` (buffers ``tag``.*): (colinfo,
    colsub, mword, mptr, mslot, slots a lane needs). The per-node parts (liveness slots,
    merge-list offsets) are the host builder's (:func:`.tables.window_node_parts`).
    ``csr``: also the window graph's node starts, predecessor pointers and list on the
    device (a 7th element: the traceback form's walk, :mod:`s2g.trace.gpu_warp`)."""
    ns, ptr, idx, slot, nsl, off = window_node_parts(wgraph, piece_at)
    off = off.astype(np.int32)
    src = getattr(wgraph, "parent_cols", None)   # its bases gathered from the parent's
    n = len(ns) - 1
    N = int(ns[n]) if n else 0
    d_ci = dp.empty(f"{tag}.colinfo", N, np.int32)
    d_sub = dp.empty(f"{tag}.colsub", N, np.int32)
    d_mw = dp.empty(f"{tag}.mword", N, np.int32)
    d_mp = dp.empty(f"{tag}.mptr", N + 1, np.int32)
    d_ms = dp.put(f"{tag}.mslot", np.zeros(1, np.int32)) if int(off[n]) == 0 else \
        dp.empty(f"{tag}.mslot", int(off[n]), np.int32)
    d_csr = (dp.put(f"{tag}.t_ns", ns), dp.put(f"{tag}.t_ptr", ptr),
             dp.put(f"{tag}.t_idx", idx if len(idx) else np.zeros(1, np.int32)))
    if n == 0 or N == 0:
        if n:
            d_mp[N:N + 1].copy_to_device(off[n:n + 1])
        return (d_ci, d_sub, d_mw, d_mp, d_ms, nsl + 1) + ((d_csr,) if csr else ())
    args = [*d_csr, *_bases(dp, tag, wgraph, ns, src),
            dp.put(f"{tag}.t_sink", np.asarray(wgraph.is_sink, np.uint8)),
            dp.put(f"{tag}.t_slot", np.asarray(slot, np.int32)), dp.put(f"{tag}.t_off", off),
            np.int32(nsl), np.int32(bool(prmt_sub)), d_ci, d_sub, d_mw, d_mp, d_ms]
    blocks = min(-(-N // BLOCK), 65536)
    kernel()[blocks, BLOCK](*args)
    return (d_ci, d_sub, d_mw, d_mp, d_ms, nsl + 1) + ((d_csr,) if csr else ())


def _bases(dp, tag, wgraph, ns, src):
    """(bases, each node's first column in them) for :func:`fill_body`: the parent graph's
    bases (on the device once) and ``src`` where the window graph says where its nodes
    come from (``parent_cols``, :class:`s2g.window.WindowGraph`) and the
    ``gpu_window_bases`` knob is on: 8 bytes a window node uploaded instead of a byte a
    window column; else the window graph's own bases."""
    from ...config import settings
    if src is not None and settings().gpu_window_bases:
        return parent_bases(src[0]), dp.put(f"{tag}.t_src", src[1])
    return (dp.put(f"{tag}.t_base", np.asarray(wgraph.base, np.uint8)),
            dp.put(f"{tag}.t_src", np.asarray(ns, np.int64)))
