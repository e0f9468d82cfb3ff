"""What the GPU tracebacks' two kernels share (:mod:`s2g.trace.gpu_kernel`'s, one thread a
read, and :mod:`s2g.trace.long`'s, one block a long window): the program's column kind
bits, the walk back over the stored direction codes and merge choices (a device
function of both), and the offsets helper. Both import it; neither imports the other
for these.
"""
from __future__ import annotations

import numba
import numpy as np

from .._numba import NJIT
from ..dp import E_EXT, F_EXT, GLOBAL, H_DEL, H_INS, H_START, LOCAL
from .common import OP_D, OP_EQ, OP_I, OP_X, ST_OK

K_CONT, K_MERGE, K_VIRT = 0, 1, 2     # kind bits: MERGE, and VIRT = start from the virtual column


def cum(x):
    out = np.zeros(len(x) + 1, np.int64)
    np.cumsum(x, out=out[1:])
    return out


@numba.njit(**NJIT)
def walk(r, w, i, mode, at, codes, prog, store, out):
    """Walk of read ``r`` back from cell (row ``i``, window column ``w``) over the stored
    direction codes and merge choices, writing reversed ops and consumed columns; a device
    function of both kernels (:mod:`s2g.trace.gpu_kernel`'s and :mod:`s2g.trace.long`'s,
    same layouts; with ``band``, the long kernel's band-only layout,
    :func:`s2g.trace.long.plan.band_layout`).

    Its arguments in tuples (unpacked here; the kernels' PTX is the same as with them
    flat): ``at`` = (R1, stride, c0, p0, d0, x0, q0), the read's row count and offsets;
    ``prog`` = (p_base, p_col, p_kind, p_mrank, p_mpa, mp_wcol), the column program;
    ``store`` = (dirs, dpred, epred, band, bcw, bxc), the stored codes and choices and
    their band-only layout; ``out`` = (oo, co, out_ops, out_cols, out_n, out_start,
    out_st), the outputs and their offsets."""
    R1, stride, c0, p0, d0, x0, q0 = at
    p_base, p_col, p_kind, p_mrank, p_mpa, mp_wcol = prog
    dirs, dpred, epred, band, bcw, bxc = store
    oo, co, out_ops, out_cols, out_n, out_start, out_st = out
    no = 0
    nc = 0
    state = 0                       # 0 H, 1 E, 2 F
    xo = oo[r]
    xc = co[r]
    while True:
        if state == 0 and i == 0 and mode != GLOBAL:
            break
        gw = c0 + w
        if band:
            d = (dirs[d0 + 4 * np.int64(bcw[gw]) + (i >> 1)] >> ((i & 1) * 4)) & 15
        else:
            d = (dirs[d0 + w * stride + (i >> 1)] >> ((i & 1) * 4)) & 15
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
            out_ops[xo + no] = OP_EQ if (qb == p_base[gw] and qb < 4) else OP_X
            no += 1
            out_cols[xc + nc] = p_col[gw]
            nc += 1
            i -= 1
            if p_kind[gw] == K_CONT:
                w -= 1
                continue
            mr = p_mrank[gw]
            sel = dpred[x0 + (bxc[gw] if band else mr * R1) + i] if mr >= 0 else -1
        elif state == 1:
            out_ops[xo + no] = OP_D
            no += 1
            out_cols[xc + nc] = p_col[gw]
            nc += 1
            state = 1 if (d & E_EXT) else 0
            if p_kind[gw] == K_CONT:
                w -= 1
                continue
            mr = p_mrank[gw]
            sel = epred[x0 + (bxc[gw] if band else mr * R1) + i] if mr >= 0 else -1
        else:
            out_ops[xo + no] = OP_I
            no += 1
            state = 2 if (d & F_EXT) else 0
            i -= 1
            continue
        if sel < 0:
            # into the virtual column: local starts here; otherwise the rest of the read
            # is inserted before the graph walk
            if mode != LOCAL:
                for _ in range(i):
                    out_ops[xo + no] = OP_I
                    no += 1
                i = 0
            break
        w = mp_wcol[p0 + p_mpa[gw] + sel]
    out_n[2 * r] = no
    out_n[2 * r + 1] = nc
    out_start[r] = i
    out_st[r] = ST_OK


#: what the kernels call: the simulator passes its own array objects, which an njit function
#: cannot take, so under NUMBA_ENABLE_CUDASIM the walk runs as Python
walk_dev = walk.py_func if numba.config.ENABLE_CUDASIM else walk
