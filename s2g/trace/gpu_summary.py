"""What a GAF line needs from the GPU traceback form's walks, made on the device (issue
#42; knob ``gpu_tb_summary``): each walk's CIGAR runs in read order, its path (the window
graph's nodes of its consumed columns, repeats collapsed), the path's length and the
offsets of its first and last column, and its op counts — what
:func:`s2g.trace.common.summarize` makes of a walk on the host, move for move.

The walk kernel (:mod:`s2g.trace.warp_walk`) leaves each window's reversed ops and
columns in buffers sized for its longest possible walk (~1 KB a 150 bp window: ~48 MB a
50,000-read batch). Without this module the traceback thread copies all of it to the host
and the GAF thread summarises it (``summarize_all``, then
:meth:`~s2g.trace.batch.FlatTracebacks.add` packs it). Here one thread a window
summarises into the same padded slots (:func:`summary_body`), the host reads the counts
(36 bytes a window), takes their prefix sums, and a second kernel (:func:`pack_body`)
packs runs and paths into compact buffers, the only ones copied back (~50 bytes a
window), window after window as the host's packing leaves them
(:meth:`~s2g.trace.batch.FlatTracebacks.add_packed`).
"""
from __future__ import annotations

import threading

from numba import types

from .._numba import loaded
from ..variants import _lean
from ..variants._lean import device
from .common import OP_EQ, OP_I, OP_X, ST_OK

#: numba.cuda, once this module's kernels are compiled (:func:`s2g.variants._lean.compile_module`:
#: the lean path launches their stored cubins and never imports it)
cuda = None

#: threads a block
BLOCK = 128
#: int32 values a window's counts take (:func:`summary_body`'s ``meta``): runs, path
#: nodes, path length, path start, path end, then the counts of =, X, I, D
META = 9


@device
def _node_of(ns, j):
    """The node whose columns hold column ``j`` (``np.searchsorted(ns, j, "right") - 1``)."""
    lo = 0
    hi = ns.shape[0]
    while lo < hi:
        mid = (lo + hi) // 2
        if ns[mid] <= j:
            lo = mid + 1
        else:
            hi = mid
    return lo - 1


def summary_body(n, ops, cols, nn, wst, oo, co, end_j, ns, run_op, run_len, path, meta):
    """Window ``u``'s walk (``ops[oo[u]:oo[u] + nn[2u]]``, ``cols[co[u]:co[u] + nn[2u+1]]``,
    both reversed) summarised into ``run_op``/``run_len`` from ``oo[u]``, ``path`` from
    ``co[u]`` and ``meta[u * META:]``; a walk that did not finish (``wst[u]`` not ST_OK,
    which the host reports) or overran its slots gets zeros."""
    u = cuda.grid(1)
    if u >= n:
        return
    no = nn[2 * u]
    nc = nn[2 * u + 1]
    if wst[u] != ST_OK or no < 0 or nc < 0 or no > oo[u + 1] - oo[u] or \
            nc > co[u + 1] - co[u] or co[u + 1] == co[u]:
        for t in range(META):
            meta[u * META + t] = 0
        return
    x0 = oo[u]
    p0 = co[u]
    c_eq = 0
    c_x = 0
    c_i = 0
    c_d = 0
    nr = 0
    cur = -1
    ln = 0
    for t in range(no + 1):
        op = -2 if t == no else int(ops[x0 + no - 1 - t])
        if op == cur:
            ln += 1
            continue
        if ln > 0:
            run_op[x0 + nr] = cur
            run_len[x0 + nr] = ln
            if cur == OP_EQ:
                c_eq += ln
            elif cur == OP_X:
                c_x += ln
            elif cur == OP_I:
                c_i += ln
            else:
                c_d += ln
            nr += 1
        cur = op
        ln = 1
    npth = 0
    if nc > 0:
        first_col = cols[p0 + nc - 1]
        last_col = cols[p0]
        lo = 1
        hi = 0                              # the last node's columns (none yet)
        for t in range(nc):
            j = cols[p0 + nc - 1 - t]
            if lo <= j < hi:
                continue                    # still in the last node (most columns)
            v = _node_of(ns, j)
            lo = ns[v]
            hi = ns[v + 1]
            if npth == 0 or path[p0 + npth - 1] != v:
                path[p0 + npth] = v
                npth += 1
    else:                                   # only insertions: an empty interval at the end
        first_col = end_j[u] + 1
        last_col = end_j[u]
        path[p0] = _node_of(ns, end_j[u])
        npth = 1
    plen = 0
    for t in range(npth):
        v = path[p0 + t]
        plen += ns[v + 1] - ns[v]
    v0 = path[p0]
    vl = path[p0 + npth - 1]
    m = u * META
    meta[m] = nr
    meta[m + 1] = npth
    meta[m + 2] = plen
    meta[m + 3] = first_col - ns[v0]
    meta[m + 4] = plen - (ns[vl + 1] - ns[vl]) + (last_col - ns[vl]) + 1
    meta[m + 5] = c_eq
    meta[m + 6] = c_x
    meta[m + 7] = c_i
    meta[m + 8] = c_d


def pack_body(n, oo, co, meta, run_at, path_at, run_op, run_len, path, p_op, p_len, p_path):
    """Window ``u``'s runs and path nodes from its padded slots to ``run_at[u]`` and
    ``path_at[u]`` of the compact ``p_op``/``p_len``/``p_path``."""
    u = cuda.grid(1)
    if u >= n:
        return
    x0 = oo[u]
    a = run_at[u]
    for t in range(meta[u * META]):
        p_op[a + t] = run_op[x0 + t]
        p_len[a + t] = run_len[x0 + t]
    p0 = co[u]
    b = path_at[u]
    for t in range(meta[u * META + 1]):
        p_path[b + t] = path[p0 + t]


def signatures():
    """(summary, pack) argument types (tests compile them to PTX with them)."""
    i32, i64, u8 = types.int32, types.int64, types.uint8
    a = lambda t: types.Array(t, 1, "C")   # noqa: E731
    summary = (i32, a(u8), a(i32), a(i32), a(i32), a(i64), a(i64), a(i32), a(i32), a(u8),
               a(i32), a(i32), a(i32))
    pack = (i32, a(i64), a(i64), a(i32), a(i64), a(i64), a(u8), a(i32), a(i32), a(u8),
            a(i32), a(i32))
    return summary, pack


_KERNELS = []
_LOCK = threading.Lock()


def kernels():
    """(summary, pack) kernels, compiled once a process (Numba's disk cache on a GPU)."""
    with _LOCK:
        if not _KERNELS:
            from numba import config
            if config.ENABLE_CUDASIM:
                jit = _lean.compile_module(globals())
                _KERNELS.extend([jit(summary_body), jit(pack_body)])
            else:
                from ..config import settings
                opts = {} if settings().no_cache else {"cache": True}
                s_sig, p_sig = signatures()
                for name, sig, body in (("summary", s_sig, summary_body),
                                        ("pack", p_sig, pack_body)):
                    _KERNELS.append(_lean.kernel(
                        f"gpu_summary.{name}.{bool(opts)}", lambda sig=sig, body=body: loaded(
                            _lean.compile_module(globals())(sig, **opts)(body))))
    return tuple(_KERNELS)


def compile_ptx(cc=(9, 0)):
    """PTX of (summary, pack) (tests; no GPU needed)."""
    _lean.compile_module(globals())
    s_sig, p_sig = signatures()
    return (cuda.compile_ptx(summary_body, s_sig, cc=cc)[0],
            cuda.compile_ptx(pack_body, p_sig, cc=cc)[0])
