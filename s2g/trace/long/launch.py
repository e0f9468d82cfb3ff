"""The long-window kernel's launches: the kernel for a strip height and mode compiled once
a process (:func:`get_kernel`, its source from :mod:`s2g.trace.long.source`), the second
kernel that takes each window's best cell and walks back (:func:`walk_body`), and one
launch of a chunk of windows (:func:`launch`: uploads, the jobs of its plan,
:mod:`s2g.trace.long.plan`, the two kernels, a relaunch within 48 KB of shared memory
where the driver refuses more).
"""
from __future__ import annotations

import threading
import warnings
from typing import NamedTuple

import numpy as np
from numba import types

from ..._numba import loaded
from ...config import settings
from ...dp import LOCAL
from ...scoring import NEG_INF
from ...variants import _lean
from ..common import ST_MISMATCH, ST_OK
from ..gpu_walk import cum, walk_dev
from . import plan
from .plan import (SHARED_BYTES, SIM, STATIC_SHARED, code_stride, jobs_for, launch_threads,
                   n_strips, round_lines, shared_plan, threads_for)
from .programs_gpu import DeviceProgram
from .source import kernel_signature, kernel_source, prmt_fits

cuda = None


def _cuda():
    global cuda
    if cuda is None:
        from numba import cuda as _c
        cuda = _c
    return cuda


def walk_body(n, mode, find, rows_a, score_a, coff, poff, doff, xoff, qoff, wjoff, wjobs,
               rbest, out_best, codes, p_base, p_col, p_kind, p_mrank, p_mpa, mp_wcol, dirs,
               dpred, epred, oo, co, out_ops, out_cols, out_n, out_start, out_st, band, bcw, bxc):
    """The second kernel of a launch: a window's end cell (``find``: the best of its rounds'
    best cells, V0's rule: the highest score, then the lowest column, then the lowest row;
    otherwise the host's end cell, whose H the long kernel left in ``out_best``) and the
    walk back from it (:func:`s2g.trace.gpu_walk.walk`; none with ``find == 2``, a launch
    without codes), thread 0 of block ``r``. A kernel of its own: every round's codes,
    written by blocks on other SMs, are then visible."""
    r = cuda.blockIdx.x
    if cuda.threadIdx.x != 0 or r >= n:
        return
    R = rows_a[r]
    R1 = R + 1
    stride = ((R + 2) // 2 + 3) // 4 * 4
    c0 = coff[r]
    W = coff[r + 1] - c0
    if find:
        k0 = wjoff[r]
        j = wjobs[k0]
        best = rbest[3 * j]
        bw = rbest[3 * j + 1]
        bi = rbest[3 * j + 2]
        for k in range(k0 + 1, wjoff[r + 1]):
            j = wjobs[k]
            h = rbest[3 * j]
            xw = rbest[3 * j + 1]
            xi = rbest[3 * j + 2]
            if xw >= 0 and (h > best or (h == best and (
                    bw < 0 or xw < bw or (xw == bw and xi < bi)))):
                best = h
                bw = xw
                bi = xi
        out_best[3 * r] = best if bw >= 0 else NEG_INF
        out_best[3 * r + 1] = bi
        out_best[3 * r + 2] = bw
        if bw < 0 or find == 2:         # 2: scores only (no codes were kept)
            out_n[2 * r] = 0
            out_n[2 * r + 1] = 0
            out_start[r] = 0
            out_st[r] = ST_OK
            return
        w = bw
        i = bi
    else:
        if W == 0 or out_best[3 * r] != score_a[r]:
            out_st[r] = ST_MISMATCH
            return
        w = W - 1
        i = R
    walk_dev(r, w, i, mode, (R1, stride, c0, poff[r], doff[r], xoff[r], qoff[r]), codes,
             (p_base, p_col, p_kind, p_mrank, p_mpa, mp_wcol),
             (dirs, dpred, epred, band, bcw, bxc),
             (oo, co, out_ops, out_cols, out_n, out_start, out_st))


def walk_signature():
    """Argument types of :func:`walk_body`."""
    i32, i64 = types.int32, types.int64
    a = types.Array
    return ((i32,) * 3 + (a(i32, 1, "C"),) * 2 + (a(i64, 1, "C"),) * 6
            + (a(i32, 1, "C"),) * 3 + (a(types.uint8, 1, "C"), a(types.uint8, 1, "C"),
                                       a(i32, 1, "C"), a(types.int8, 1, "C"))
            + (a(i32, 1, "C"),) * 3 + (a(types.uint8, 1, "C"), a(types.int16, 1, "C"),
                                       a(types.int16, 1, "C"), a(i64, 1, "C"),
                                       a(i64, 1, "C"), a(types.uint8, 1, "C"))
            + (a(i32, 1, "C"),) * 4 + (i32, a(i32, 1, "C"), a(i32, 1, "C")))


_WALK = None


def get_walk_kernel():
    """:func:`walk_body` compiled once per process (on a GPU eagerly, disk-cached; on the
    lean path its stored cubin, :func:`s2g.variants._lean.kernel`)."""
    global _WALK
    with _KERNELS_LOCK:
        if _WALK is None:
            _WALK = _lean.kernel("long.walk", _build_walk)
    return _WALK


def _build_walk():
    _cuda()
    if SIM:
        return cuda.jit(walk_body)
    opts = {} if settings().no_cache else {"cache": True}
    return loaded(cuda.jit(walk_signature(), **opts)(walk_body))


_KERNELS: dict = {}
_KERNELS_LOCK = threading.Lock()


def get_kernel(S: int = None, local: bool = True, prmt_sub: bool = True, prune: bool = False):
    """The kernel for strips of ``S`` rows (default :data:`s2g.trace.long.plan.S`), local
    mode or not, pruned or not (:func:`s2g.trace.long.source._render`), compiled once per
    process (eagerly for its signature on a GPU, kept in Numba's disk cache)."""
    S = plan.S if S is None else int(S)
    key = (S, bool(local), bool(prmt_sub), bool(prune))
    with _KERNELS_LOCK:           # s2g.trace.gpu.prepare loads it from another thread
        return _KERNELS[key] if key in _KERNELS else _get_kernel(key)


def _lean_key(key) -> str:
    return f"long.kernel.{key}.{plan.MAXREG}"


def _get_kernel(key):
    if key not in _KERNELS:
        _KERNELS[key] = _lean.kernel(_lean_key(key), lambda: _build_kernel(key))
    return _KERNELS[key]


def _build_kernel(key):
    _cuda()
    S, local, prmt_sub, prune = key
    if SIM:
        return cuda.jit(kernel_source(S, local, prmt_sub, prune=prune))
    opts = {} if settings().no_cache else {"cache": True}
    if plan.MAXREG:
        opts["max_registers"] = plan.MAXREG
    # numba's on-disk cache keys on the source, not on max_registers
    fn = kernel_source(S, local, prmt_sub, note=f"max_registers={plan.MAXREG}", prune=prune)
    return loaded(cuda.jit(kernel_signature(prune), **opts)(fn))


def stored(local: bool, prmt_sub: bool, prune: bool = False) -> bool:
    """Whether the lean path's store holds :func:`get_kernel`'s kernel (default strip
    height) and the walk kernel (warm-up's probe on that path: no numba.cuda)."""
    key = (plan.S, bool(local), bool(prmt_sub), bool(prune))
    return _lean.load(_lean_key(key)) is not None and _lean.load("long.walk") is not None


def cache_probe(local: bool, prmt_sub: bool, prune: bool = False):
    """A lazy dispatcher over the kernel's source exactly as :func:`get_kernel` compiles it
    (default strip height, register cap), whose disk cache tells whether that kernel is
    compiled (:func:`s2g.warmup.cold`); compiles nothing."""
    _cuda()
    fn = kernel_source(plan.S, bool(local), bool(prmt_sub), sim=False,
                       note=f"max_registers={plan.MAXREG}", prune=prune)
    return cuda.jit(cache=True)(fn)


class LongChunk(NamedTuple):
    """One launch's windows for :func:`launch`: their count, the mode and scores, the reads'
    codes (packed, offsets ``qoff``), rows, scores (traceback windows: the end cell's),
    program offsets ``coff``/``poff`` and sizes ``sz``, output offsets ``oo``/``co``, the
    programs' arrays ``prog``, ``find`` (seeded windows: the kernel finds the end cell),
    ``band`` (see :func:`launch`), ``store`` (False: seeded windows' best cells only, no
    direction codes, merge choices or walks; device memory for the rounds alone) and
    ``prune`` (scores only, local mode: (thresholds per strip, each window's first), the
    pruned kernel, :mod:`s2g.trace.long.prune`)."""
    n: int
    mode: int
    a: int
    b: int
    o: int
    e: int
    codes: np.ndarray
    qoff: np.ndarray
    rows: np.ndarray
    score: np.ndarray
    coff: np.ndarray
    poff: np.ndarray
    sz: np.ndarray
    oo: np.ndarray
    co: np.ndarray
    prog: list
    find: bool
    band: tuple = None
    store: bool = True
    prune: tuple = None


def launch(dev, emp, chunk):
    """Upload one chunk's windows (``chunk`` a :class:`LongChunk`; ``dev(x)`` uploads,
    ``emp(size, dtype)`` allocates) and launch the kernels (the rounds, then the walks);
    returns the device outputs (ops, cols, n, start, status, best), the CUDA events
    around the launches and, pruned, each strip's first and last column with a kept cell
    (-1 where none; two int32 a strip, at twice ``prune``'s per-strip offsets; else
    None). ``band``: (lo, hi) rows per window column
    (:func:`s2g.trace.gpu_program.band_rows`), then :func:`~s2g.trace.long.plan.band_layout`'s
    arrays (bcw, bxc per column, nwd, nxr per window): each round of strips computes only
    the columns whose band meets its rows, and only the band's direction codes and merge
    choices are kept."""
    (n, mode, a, b, o, e, codes, qoff, rows, score, coff, poff, sz, oo, co, prog, find,
     band, store, prune) = chunk
    assert store or (find and band is None), "scores only: seeded windows, no band"
    assert prune is None or (not store and mode == LOCAL), "pruned: scores only, local"
    S = plan.S
    DEBUG = plan.DEBUG if store else plan.DEBUG | 16     # 16: no codes, no merge choices
    R1 = rows + 1
    ns = n_strips(rows)
    T48 = threads_for(int(ns.max()))
    T = launch_threads(int(ns.max()), int((-(-ns // T48)).sum()))
    assert T <= 32 or not SIM, "the simulator's warp votes need one-warp blocks"
    kern = get_kernel(S, mode == LOCAL, prmt_fits(a, b), prune is not None)
    pargs = () if prune is None else _prune_args(dev, prune, coff, poff, prog)
    # pruned: each strip's first and last column with a kept cell (its rows' traceback band)
    d_live = None if prune is None else emp(max(2 * len(prune[0]), 2), np.int32)
    lives = () if prune is None else (d_live,)
    walk = get_walk_kernel()
    n_sh, dyn = shared_plan(T, int(sz[:, 3].max()),
                            plan.round_shared() if plan.round_t() else plan.shared_block())
    if dyn + STATIC_SHARED > SHARED_BYTES and not _raise_shared(kern, dyn):
        n_sh, dyn = shared_plan(T, int(sz[:, 3].max()), SHARED_BYTES)
    W = sz[:, 0]
    if not store:
        doff = xoff = np.zeros(n + 1, np.int64)
    elif band is None:
        doff = cum(W * code_stride(rows))          # whole words per window
        xoff = cum(sz[:, 1] * R1)
    else:
        doff = cum(4 * band[4])                    # the band's words (band_layout)
        xoff = cum(band[5])
    d_codes, d_qoff, d_rows = (dev(np.ascontiguousarray(codes, np.uint8)), dev(qoff),
                               dev(rows.astype(np.int32)))
    d_coff, d_poff, d_doff, d_xoff = (dev(x) for x in (coff, poff, doff, xoff))
    d_prog = prog.arrays if isinstance(prog, DeviceProgram) else [dev(x) for x in prog]
    dirs32 = emp(max(int(doff[-1]) // 4, 1), np.uint32)
    dpred, epred = emp(max(int(xoff[-1]), 1), np.int16), emp(max(int(xoff[-1]), 1), np.int16)
    d_ops, d_cols = emp(max(int(oo[-1]), 1), np.uint8), emp(max(int(co[-1]), 1), np.int32)
    d_n, d_start = emp(2 * n, np.int32), emp(n, np.int32)
    d_st = dev(np.full(n, -1, np.int32))
    d_best = emp(3 * n, np.int32)
    if band is None:
        bargs = (np.int32(0),) + (d_st,) * 4
        wband = (np.int32(0), d_st, d_st)
    else:
        bargs = (np.int32(1),) + tuple(dev(x) for x in band[:4])
        wband = (np.int32(1), bargs[3], bargs[4])
    ev0, ev1 = _lean.api().event(), _lean.api().event()
    wfind = 2 if find and not store else int(find)
    walk_args = [np.int32(n), np.int32(mode), np.int32(wfind), d_rows,
                 dev(score.astype(np.int32)), d_coff, d_poff, d_doff, d_xoff, d_qoff]
    tail = [d_best, d_codes] + [d_prog[k] for k in (0, 1, 2, 4, 5, 8)] + [
        dirs32.view(np.uint8), dpred, epred, dev(oo), dev(co), d_ops, d_cols, d_n, d_start, d_st,
        *wband]

    plans = {}

    def jobs_at(T):
        """The jobs at width ``T`` (:func:`jobs_for`) and per job its hand-off's columns to
        the next round (32-column lines; banded: the round's own columns only,
        :func:`round_columns`); made once a width."""
        if T not in plans:
            jobs, G, wjobs, wjoff = jobs_for(rows, T)
            jw, jg = jobs[0::3], jobs[1::3]
            nxt = jg < G[jw] - 1
            if band is None:
                lines = (W[jw] + 31) // 32 * 32
            else:
                roff, lines = round_lines(coff, rows, band[0], band[1], T)
                lines = lines[roff[jw] + jg]
            plans[T] = (jobs, G, wjobs, wjoff, nxt, np.where(nxt, lines, 0))
        return plans[T]

    jobs_at(T)                          # host work before the timed launch (as the band's)

    def go(T, n_sh, dyn):
        jobs, G, wjobs, wjoff, nxt, hsz = jobs_at(T)
        nj = len(jobs) // 3
        jw = jobs[0::3]
        d_jobs = dev(jobs)
        if prune is not None and settings().gpu_prune_handoff:
            # each round hands on only the columns it steps over (s2g.trace.long.prune)
            from .prune import handoff_lines
            hsz = handoff_lines(dev, emp, T, d_jobs, nj, a, DEBUG, d_rows, d_coff, pargs, nxt)
        jsoff = cum(sz[jw, 3] * (S * T))           # room for every slot (none shared)
        jhoff = cum(hsz)[:-1]
        jhoff[~nxt] = -1
        ring = max(nj * 2 * T, 1)
        hand = max(int(hsz.sum()), 1)
        rbest = emp(3 * nj, np.int32)
        kern[nj, T, 0, dyn](np.int32(n), np.int32(mode), np.int32(a), np.int32(b), np.int32(o),
                            np.int32(e), np.int32(n_sh), np.int32(DEBUG), d_codes, d_qoff,
                            d_rows, d_coff, d_poff, d_doff, d_xoff, *d_prog,
                            emp(max(int(jsoff[-1]), 1), np.int32),
                            emp(max(int(jsoff[-1]), 1), np.int32),
                            emp(ring, np.int32), emp(ring, np.int32), emp(ring, np.int32),
                            emp(hand, np.int32), emp(hand, np.int32), emp(hand, np.int32),
                            dirs32, dpred, epred, np.int32(find), d_best, *bargs,
                            d_jobs, dev(jsoff), dev(jhoff), dev(np.zeros(1, np.int32)),
                            dev(np.zeros(max(nj, 1), np.int32)), rbest, *pargs, *lives)
        if not DEBUG & 8:
            walk[n, 1](*walk_args, dev(wjoff), dev(wjobs), rbest, *tail)

    ev0.record()
    try:
        go(T, n_sh, dyn)
    except Exception as exc:            # noqa: BLE001 - the driver refused the launch
        if dyn + STATIC_SHARED <= SHARED_BYTES:
            raise
        # seen on an H100 (S = 8, 96 KB) and an H200 (2026-11-26: the opt-in was then
        # remembered for one kernel and not set for the next; now per kernel): relaunch
        # within 48 KB, with fewer threads where needed (slot offsets laid out for T hold)
        T2 = threads_for(int(ns.max()), SHARED_BYTES)
        n_sh2, dyn2 = shared_plan(T2, int(sz[:, 3].max()), SHARED_BYTES)
        warnings.warn(f"long-window kernel: launch with {dyn} bytes of shared memory "
                      f"refused ({exc}); using {dyn2} and {T2} threads", RuntimeWarning,
                      stacklevel=2)
        go(T2, n_sh2, dyn2)
    ev1.record()
    return d_ops, d_cols, d_n, d_start, d_st, d_best, (ev0, ev1), d_live


def _prune_args(dev, prune, coff, poff, prog):
    """The pruned kernel's arguments (:data:`s2g.trace.long.prune.KERNEL_LINES`), uploaded:
    the strips' thresholds (each window's first), the walk bound's columns per window column
    (:func:`~s2g.trace.long.prune.walk_bounds`), the rows' bounds (each window's first) and
    each window's ``T``."""
    from ..gpu_program import PROG_NAMES
    from .prune import walk_bounds
    pth, pthoff, B, boff, T = prune
    if isinstance(prog, DeviceProgram):             # made on the GPU with the programs
        return (dev(pth), dev(pthoff), prog.pl, prog.pr, dev(B), dev(boff), dev(T))
    nc = max(int(coff[-1]), 1)
    pl, pr = np.zeros(nc, np.int32), np.zeros(nc, np.int32)
    walk_bounds(coff, poff, *(prog[PROG_NAMES.index(k)]
                              for k in ("p_kind", "p_mpa", "p_mpn", "mp_wcol")), pl, pr)
    return tuple(dev(x) for x in (pth, pthoff, pl, pr, B, boff, T))


def _raise_shared(kern, nbytes) -> bool:
    """Allow ``nbytes`` of dynamic shared memory per block (above 48 KB: an opt-in)."""
    from numba import config
    if config.ENABLE_CUDASIM:
        return True
    from ...variants.codegen import allow_shared
    return allow_shared(kern, nbytes)
