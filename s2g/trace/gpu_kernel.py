"""The GPU traceback's one-thread kernel: a read's window program, one CUDA thread a read.

One CUDA thread per read runs its column program (:mod:`s2g.trace.gpu_program`) over rows
``0..i_end`` (the cell is :func:`s2g.trace.common.tb_cell`, the CPU traceback's own, with its
tie order and sentinels, in int32), storing 4 bits per cell (H's source, E and F
extension) and, at merge columns, which predecessor gave the diagonal and the deletion;
checks that the end cell reproduces the score; and walks back to the start
(:func:`s2g.trace.gpu_walk.walk`), writing the reversed ops and consumed columns. Only
those come back to the host (a few hundred bytes per read, not the window). The column
scratch (H and E of the current column) is interleaved across the chunk's reads so that a
warp's loads coalesce (kernel 1.27 -> 0.99 us per read, H200;
:func:`s2g.trace.gpu_chunk.chunk` lays it out).
"""
from __future__ import annotations

import threading

from numba import types

from .._numba import loaded
from ..config import settings
from ..dp import E_EXT, GLOBAL, H_DEL, H_START, LOCAL
from ..scoring import NEG_INF
from .common import ST_MISMATCH, ST_OK, tb_cell
from .gpu_walk import K_CONT, K_VIRT, walk_dev

#: threads a block
BLOCK = 128


def _tb_body(n, mode, a, b, o, e, hs, codes, qoff, rows_a, score_a, coff, poff, hoff, soff, doff, xoff,
             oo, co, p_base, p_col, p_kind, p_store, p_mrank, p_mpa, p_mpn, mp_slot, mp_wcol,
             CH, CE, SH, SE, dirs, dpred, epred, out_ops, out_cols, out_n, out_start, out_st,
             find, out_best):
    """One thread per read: the window sweep with direction codes, then the walk.

    ``find``: the window is a seeded alignment's column range and the end cell is the
    best cell in it (local: any row, semiglobal: the last; V0's tie rule: the first in
    column order, then row order, strictly better replaces), written to ``out_best``
    (score, row, window column; score NEG_INF when the window holds no alignment);
    otherwise the end cell is the last column's row ``rows_a`` and must equal ``score_a``.
    """
    r = cuda.grid(1)
    if r >= n:
        return
    R = rows_a[r]
    R1 = R + 1
    stride = (R + 2) // 2
    c0 = coff[r]
    W = coff[r + 1] - c0
    p0 = poff[r]
    h0 = hoff[r]
    s0 = soff[r]
    d0 = doff[r]
    x0 = xoff[r]
    q0 = qoff[r]
    oe = o + e
    best = 0 if mode == LOCAL else NEG_INF
    bw = -1
    bi = -1
    for w in range(W):
        gw = c0 + w
        kind = p_kind[gw]
        gb = p_base[gw]
        st = p_store[gw]
        mr = p_mrank[gw]
        ma = p0 + p_mpa[gw]
        mn = p_mpn[gw]
        diag = NEG_INF
        hup = NEG_INF
        f = NEG_INF
        byte = 0
        for t in range(R1):
            if kind == K_CONT:
                ph = CH[h0 + t * hs]
                ho = ph - oe
                ex = CE[h0 + t * hs] - e
                pe = max(ho, ex)
                px = ex > ho
            else:
                if kind & K_VIRT:
                    ph = 0 if (mode == LOCAL or t == 0) else -(o + e * t)
                    pe = ph - oe
                else:
                    ph = NEG_INF
                    pe = NEG_INF
                px = False
                dsel = -1
                esel = -1
                for u in range(mn):
                    sp = s0 + mp_slot[ma + u] * R1 + t
                    hp = SH[sp]
                    ho = hp - oe
                    ex = SE[sp] - e
                    ce = max(ho, ex)
                    if hp > ph or (hp == ph and dsel == -1):
                        ph = hp
                        dsel = u
                    if ce > pe or (ce == pe and esel == -1 and ce > NEG_INF):
                        pe = ce
                        px = ex > ho
                        esel = u
                if mr >= 0:
                    dpred[x0 + mr * R1 + t] = dsel
                    epred[x0 + mr * R1 + t] = esel
            if t == 0:
                if mode == GLOBAL:
                    h = pe
                    ev = pe
                    d = H_DEL | (E_EXT if px else 0)
                else:
                    h = 0
                    ev = NEG_INF
                    d = H_START
                f = NEG_INF
            else:
                ev = pe
                h, f, d = tb_cell(diag, ev, hup, f, codes[q0 + t - 1], gb, mode, a, b, o, e)
                if px:
                    d |= E_EXT
            if find and t > 0 and h > best and (mode == LOCAL or t == R):
                best = h
                bw = w
                bi = t
            diag = ph
            hup = h
            CH[h0 + t * hs] = h
            CE[h0 + t * hs] = ev
            if st >= 0:
                SH[s0 + st * R1 + t] = h
                SE[s0 + st * R1 + t] = ev
            if t & 1:
                dirs[d0 + w * stride + (t >> 1)] = byte | (d << 4)
            else:
                byte = d
                if t == R:
                    dirs[d0 + w * stride + (t >> 1)] = byte
    if find:
        out_best[3 * r] = best if bw >= 0 else NEG_INF
        out_best[3 * r + 1] = bi
        out_best[3 * r + 2] = bw
        if bw < 0:
            out_n[2 * r] = 0
            out_n[2 * r + 1] = 0
            out_start[r] = 0
            out_st[r] = ST_OK
            return
        w = bw
        i = bi
    else:
        if W == 0 or CH[h0 + R * hs] != score_a[r]:
            out_st[r] = ST_MISMATCH
            return
        w = W - 1                   # walk back from the end cell (last column, row R)
        i = R
    walk_dev(r, w, i, mode, (R1, stride, c0, p0, d0, x0, q0), codes,
             (p_base, p_col, p_kind, p_mrank, p_mpa, mp_wcol),
             (dirs, dpred, epred, False, p_col, p_col),
             (oo, co, out_ops, out_cols, out_n, out_start, out_st))


cuda = None
_KERNEL = None
_KERNEL_LOCK = threading.Lock()


def _cuda():
    global cuda
    if cuda is None:
        from numba import cuda as _c
        cuda = _c
    return cuda


def get_kernel():
    """The kernel, compiled once per process; on a GPU compiled eagerly for the signature
    and kept in Numba's on-disk cache (a cold compile costs seconds per ``s2g align``)."""
    global _KERNEL
    with _KERNEL_LOCK:
        if _KERNEL is None:
            _KERNEL = _compile()
    return _KERNEL


def _compile():
    from numba import config
    if config.ENABLE_CUDASIM:
        return _cuda().jit(_tb_body)
    opts = {} if settings().no_cache else {"cache": True}
    from ..variants import _lean
    return _lean.kernel(f"gpu_kernel.tb.{bool(opts)}", lambda: loaded(
        _cuda().jit(kernel_signature(), **opts)(_tb_body)))


def compile_ptx(cc=(9, 0)):
    """PTX of the kernel for compute capability ``cc`` (tests; no GPU needed)."""
    _cuda()
    return cuda.compile_ptx(_tb_body, kernel_signature(), cc=cc)[0]


def kernel_signature():
    """Argument types of the kernel, for ``cuda.compile_ptx`` (tests)."""
    i32, i64 = types.int32, types.int64
    a = types.Array
    return (i32, i32, i32, i32, i32, i32, i32, a(types.uint8, 1, "C"), a(i64, 1, "C"),
            a(i32, 1, "C"), a(i32, 1, "C")) + (a(i64, 1, "C"),) * 8 + (
            a(types.uint8, 1, "C"), a(i32, 1, "C"), a(types.int8, 1, "C")) + (a(i32, 1, "C"),) * 6 \
        + (a(i32, 1, "C"),) * 4 + (a(types.uint8, 1, "C"), a(types.int16, 1, "C"),
                                   a(types.int16, 1, "C"), a(types.uint8, 1, "C"),
                                   a(i32, 1, "C"), a(i32, 1, "C"), a(i32, 1, "C"), a(i32, 1, "C"),
                                   i32, a(i32, 1, "C"))

