"""The walk back over the codes the ``fast`` kernel's traceback form stored (issue #42;
:mod:`s2g.variants.fast.render_tb` has the layouts): one CUDA thread a window, the same
moves and outputs as :func:`s2g.trace.gpu_walk.walk` (reversed ops, consumed columns,
counts, start row), so :func:`s2g.trace.gpu_program.summarize_all` turns them into the
same CIGAR runs and path.

The column's kind comes from the window graph's column info word: a column that is not a
merge continues the previous one (inside a node, or a node's first column whose only
predecessor is the previous node); at a merge the row's choice mask tells whether a slot
predecessor gave the cell (its byte: the ``k``-th predecessor in ``pred_idx`` order, the
kept one, ``v - 1``, being the last) or the kept predecessor / the virtual column did.
The walk keeps its node ``v`` (a node's first column is met walking back in order).
"""
from __future__ import annotations

import threading

import numba
from numba import types

from .._numba import loaded
from ..dp import E_EXT, F_EXT, H_DEL, H_INS, H_START, LOCAL
from ..variants.fast.constants import CI_KEEP, CI_MERGE, CI_VIRT
from .common import OP_D, OP_EQ, OP_I, OP_X, ST_OK

#: threads a block
BLOCK = 128


def walk_body(n, mode, G, K, NW, dirs, dch, ech, mch, doffs, moffs, mp0s, cbs, ncs, v_ends,
              rows, roffs, colinfo, mptr, ns, ptr, idx, codes, oo, co, out_ops, out_cols, out_n,
              out_start, out_st):
    """Unit ``u``'s walk from its end cell (row ``rows[u]``, window column ``ncs[u] - 1``
    of the columns from ``cbs[u]``; node ``v_ends[u]``) to its start."""
    u = cuda.grid(1)
    if u >= n:
        return
    cb = cbs[u]
    j = ncs[u] - 1
    i = rows[u]
    v = v_ends[u]
    nsv = ns[v]
    doff = doffs[u]
    moff = moffs[u]
    mp0 = mp0s[u]
    q0 = roffs[u]
    xo = oo[u]
    xc = co[u]
    no = 0
    nc = 0
    state = 0                       # 0 H, 1 E, 2 F
    virt = False
    while True:
        if state == 0 and i == 0:
            break
        t = (i - 1) // K
        r = i - 1 - t * K
        c = cb + j
        wd = dirs[doff + numba.uint64(((j + t) * NW + (r >> 3)) * G + t)]
        d = (wd >> (4 * (r & 7))) & 15
        info = colinfo[c]
        which = 0
        if state == 0:
            src = d & 3
            if src == H_START:
                break
            if src == H_DEL:
                state = 1
                continue
            if src == H_INS:
                state = 2
                continue
            qb = codes[q0 + i - 1]
            out_ops[xo + no] = OP_EQ if (qb == (info & 7) and qb < 4) else OP_X
            no += 1
            out_cols[xc + nc] = c
            nc += 1
            i -= 1
        elif state == 1:
            out_ops[xo + no] = OP_D
            no += 1
            out_cols[xc + nc] = c
            nc += 1
            state = 1 if (d & E_EXT) else 0
            which = 1
        else:
            out_ops[xo + no] = OP_I
            no += 1
            state = 2 if (d & F_EXT) else 0
            i -= 1
            continue
        # to the predecessor column (row i: the diagonal's after the step up, E's the same)
        if (info & CI_MERGE) == 0:
            if c == nsv:
                v -= 1
                nsv = ns[v]
            j -= 1
            continue
        if info & CI_VIRT:
            virt = True
            break
        if i == 0:                  # row 0: the walk ends at the next step
            break
        t = (i - 1) // K
        r = i - 1 - t * K
        mi = numba.uint64(mptr[c] - mp0) + moff
        mask = mch[(mi * numba.uint64(G) + numba.uint64(t)) * numba.uint64(2) + numba.uint64(which)]
        if (mask >> r) & 1:
            at = mi * numba.uint64(G * K) + numba.uint64(t * K + r)
            code = dch[at] if which == 0 else ech[at]
            v = idx[ptr[v] + code - 1]
            nsv = ns[v]
            j = ns[v + 1] - 1 - cb
        elif info & CI_KEEP:
            v -= 1
            nsv = ns[v]
            j -= 1
        else:
            virt = True
            break
    if virt and mode != LOCAL:      # into the virtual column: the rest of the read inserted
        for _ in range(i):
            out_ops[xo + no] = OP_I
            no += 1
        i = 0
    out_n[2 * u] = no
    out_n[2 * u + 1] = nc
    out_start[u] = i
    out_st[u] = ST_OK


cuda = None
_KERNEL = []
_LOCK = threading.Lock()


def signature():
    """The kernel's argument types (tests compile it to PTX with them)."""
    i32, i64, u8, u64 = types.int32, types.int64, types.uint8, types.uint64
    a = lambda t: types.Array(t, 1, "C")   # noqa: E731
    return (i32, i32, i32, i32, i32, a(i32), a(u8), a(u8), a(i32), a(u64), a(u64), a(i32),
            a(i32), a(i32), a(i32), a(i32), a(i64), a(i32), a(i32), a(i32), a(i32), a(i32),
            a(u8), a(i64), a(i64), a(u8), a(i32), a(i32), a(i32), a(i32))


def kernel():
    """The walk kernel, compiled once a process (Numba's disk cache on a GPU)."""
    global cuda
    with _LOCK:
        if not _KERNEL:
            from numba import config
            if config.ENABLE_CUDASIM:
                from numba import cuda as _c
                cuda = _c
                _KERNEL.append(_c.jit(walk_body))
            else:
                from ..config import settings
                from ..variants import _lean
                opts = {} if settings().no_cache else {"cache": True}
                _KERNEL.append(_lean.kernel(f"warp_walk.walk.{bool(opts)}", lambda: _build(opts)))
    return _KERNEL[0]


def _build(opts):
    global cuda
    from numba import cuda as _c
    cuda = _c
    return loaded(_c.jit(signature(), **opts)(walk_body))


def compile_ptx(cc=(9, 0)):
    """PTX of the walk kernel (tests; no GPU needed)."""
    global cuda
    from numba import cuda as _c
    cuda = _c
    return _c.compile_ptx(walk_body, signature(), cc=cc)[0]
