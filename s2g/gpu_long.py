"""Long windows on the GPU: one thread block per window, rows split into strips (issue 15).

:mod:`s2g.gpu_traceback` runs one thread per window: right for the millions of small
windows of short reads, hopeless for a 10 kbp read's window of ~10^8 cells (one thread
at a few MCUPS). This kernel keeps that kernel's column program, cell, tie order,
direction codes, merge choices and walk (:func:`s2g.gpu_traceback._walk`), and splits
the window's rows ``0..R`` into *strips* of :data:`S` rows:

* a block of ``T`` threads takes strips ``g*T .. g*T + T - 1`` in round ``g``; thread
  ``t`` computes column ``w = step - t`` of its strip at each step (a wavefront), then
  the block meets at one barrier. Strip ``k``'s top row needs the row above at column
  ``w`` and at ``w``'s predecessors: strip ``k - 1`` writes, per window column, its
  bottom row's H, F and the diagonal it passes down (the best predecessor H, as the
  one-thread kernel's ``diag``) into a ring read by strip ``k`` one step later (and by
  the next round's first strip). The ring is laid out by diagonal, word
  ``(w + k) * (T + 1) + k % (T + 1)``: at one step the block's threads touch
  consecutive words (coalesced), and a word is reused only two rounds later;
* everything else a strip reads is its own: the current column (H, E) and the window
  slots (the liveness slots of :func:`s2g.gpu_traceback._program`) hold only the
  strip's rows, ``[thread][row]`` with an odd stride ``S + 1`` in shared memory (no bank
  conflicts whether 32 threads read one row each or one thread's 32 rows are read by
  32 lanes): the column and the first slots in dynamic shared memory (up to
  :data:`SHARED_BLOCK` bytes per block, an opt-in above 48 KB), further slots in global
  memory (``[slot][thread][row]``, coalesced for a warp's lanes on one thread's rows);
* a warp's 32 lanes sit on 32 consecutive columns, so a merge column (a bubble's first
  or closing column) would make the whole warp wait while one lane folds 32 rows. The
  warp does it together instead: a vote finds the lanes on merge columns, then for
  each of them lane ``v`` folds row ``v`` of that lane's strip (its predecessors' slots,
  the tie order of the one-thread kernel, merge choices written coalesced) into the
  column, and a second vote hands the "E extended" bits back; after the cell loop a
  third vote finds the lanes whose column is kept in a slot and the warp stores them the
  same way. The cell loop is then the same for every lane;
* direction codes (4 bits per cell) and merge choices go to the same layout as the
  one-thread kernel's, a column's codes padded to whole 32-bit words so each thread
  stores 8 rows' codes at once (a strip starts at a multiple of 8 rows); with ``find``
  every thread keeps its best cell (V0's rule: the highest score, then the lowest
  column, then the lowest row) and thread 0 reduces them; thread 0 then walks.

Every hot index is unsigned and every row counter int32: Numba gives a signed index
its negative-index wraparound (~6 instructions an access) and counts ``range()`` in
int64 (64-bit compares per cell), both seen in this kernel's SASS. The simulator has
no warp votes: there a vote is an atomic OR into a shared word between block barriers,
and a block is one warp of 1-2 threads (tests: several rounds on tiny windows).

Measured (H100, ``python3 -m bench.long_kernel --reads 300``, 10 kbp reads, 5%
substitutions, 100 kbp SNP graph; logs in bench/results/nvidia-h100/long/): the first
version (2026-11-23, a lane folding its own merges) 19.5 GCUPS on 50 bp nodes and 55.7
on 5 kbp nodes; ncu: 14.2 of 32 lanes active, 161 instructions a cell, most of them
64-bit index arithmetic. This one (2026-11-24): 91.7 GCUPS on 50 bp nodes (94.3 on
5 kbp nodes, so merges no longer cost much); ncu: 30.9 lanes active, ~100
instructions a cell, 26% of issue slots busy, 1.4 warps per scheduler (two blocks of
five warps per SM: shared memory and registers), stalls on fixed-latency dependencies
(30%) and the barrier (17%). In ``s2g align``, 1,000 x 10 kbp reads: 110 GCUPS (full
DP), 96 GCUPS (seeded, 1 Mbp graph), 154.5 with half of free memory a launch and 48 KB of
shared memory (three blocks an SM; now the defaults). 50 kbp windows (3 x 10^9 cells,
1.6 GB of codes each) fit ~8 to a launch on an H100 (6.1 GCUPS) and ~33 on an H200 (24
GCUPS, 100 x 50 kbp reads in 3 launches, 2026-11-26): the GPU mostly idle; a window's
rows over several blocks, or checkpoints instead of stored codes, would fill it. The ceiling is far: ~2 warp instructions a cell
would allow ~500 GCUPS at full issue; more warps per SM (more windows per launch) and
fewer instructions a cell are the next steps.

Device memory per window: ``W * stride`` bytes of codes (stride ``(R + 2) / 2`` rounded
up to 4: 58 MB for a 10 kbp read's 11,700-column window), 12 bytes x ``(T + 1) x (W +
strips)`` of ring, ``8 x S x T`` per global slot, 4 bytes x rows per merge column.
Windows are chunked to :data:`CHUNK_BYTES`; a window over it stays on the CPU (its
banded traceback keeps rows every ``Bh`` and needs no such memory).
"""
from __future__ import annotations

import os
import warnings

import numpy as np
from numba import config as _nb_config
from numba import int32, int64, types, uint32, uint64

from .dp import E_EXT, F_EXT, GLOBAL, H_DEL, H_DIAG, H_INS, H_START, LOCAL
from .gpu_traceback import K_CONT, K_VIRT, _cum, _walk_dev
from .scoring import NEG_INF
from .tb_common import ST_MISMATCH, ST_OK

#: rows per strip (one thread's rows of a column; a multiple of 8, so a strip owns whole
#: 32-bit words of direction codes; at most 32, a warp's lanes cover a strip's rows in the
#: warp's merges); a kernel argument, read at each launch
S = int(os.environ.get("S2G_LONG_STRIP", 32))
assert 8 <= S <= 32 and S % 8 == 0, "S2G_LONG_STRIP must be 8, 16, 24 or 32"
_SIM = bool(_nb_config.ENABLE_CUDASIM)
#: most threads per block (strips in flight per window; the shared arrays' size)
SHARED_T = 256
SHARED_WARPS = SHARED_T // 32
MAX_T = min(SHARED_T, int(os.environ.get("S2G_LONG_MAX_T", SHARED_T)))
#: shared memory a block may use without opting in: the column (8 x S x T bytes) and the
#: best-cell reduction (12 x SHARED_T)
SHARED_BYTES = 48 * 1024
#: static shared memory of the kernel: three words per thread (the warp's merge and slot
#: lists, then the best-cell reduction) and a word per warp
STATIC_SHARED = 12 * 256 + 8 * 8
#: shared memory per block (the column, then window slots; above 48 KB an opt-in): 48 KB
#: keeps the column alone there (slots in global memory, coalesced) and lets three blocks
#: share an SM instead of two: with half of free memory a launch 1,000 x 10 kbp seeded
#: windows ran at 154.5 GCUPS against 96.6 with 100 KB and a quarter (H100, 2026-11-24)
SHARED_BLOCK = int(os.environ.get("S2G_LONG_SHARED", 48 * 1024))
#: timing experiments only (bench/long_kernel.py), results wrong: 1 no direction stores,
#: 2 no read-code loads, 4 no barrier, 8 no walk
DEBUG = int(os.environ.get("S2G_LONG_DEBUG", 0))
#: device bytes for one launch of long windows (default: half of free memory)
CHUNK_BYTES = int(os.environ.get("S2G_LONG_CHUNK_BYTES", 0))

cuda = None
_KERNEL = None
_vote_dev = _wsync_dev = None


def _cuda():
    global cuda, _vote_dev, _wsync_dev
    if cuda is None:
        from numba import cuda as _c
        cuda = _c
        if _SIM:    # plain Python in the kernel's thread (a simulated device function
            _vote_dev, _wsync_dev = _vote, _wsync   # would swap `cuda` under the others)
        else:
            _vote_dev = cuda.jit(device=True)(_vote)
            _wsync_dev = cuda.jit(device=True)(_wsync)
    return cuda


def threads_for(n_strips_max: int) -> int:
    """Threads per block for windows of at most ``n_strips_max`` strips: as few rounds
    as MAX_T threads allow, then as few threads as those rounds need (multiples of 32;
    S2G_LONG_MAX_T below 32 is for tests: several rounds on tiny windows)."""
    most = min(MAX_T, max(32, (SHARED_BYTES - STATIC_SHARED) // (8 * (S + 1)) // 32 * 32))
    rounds = max(1, -(-n_strips_max // most))
    per = -(-n_strips_max // rounds)
    return int(min(most, max(32, -(-per // 32) * 32)))


def n_strips(rows):
    """Strips of a window over rows ``0..rows``."""
    return (np.asarray(rows, np.int64) + S) // S


def device_bytes(sz, rows, L, T):
    """Device bytes per window (program, codes, choices, slots, column, ring, outputs)."""
    W, nm, nmp, nsl = sz[:, 0], sz[:, 1], sz[:, 2], sz[:, 3]
    R1 = rows + 1
    return (W * 20 + nmp * 8 + W * code_stride(rows) + nm * R1 * 4 + nsl * (S * T * 8)
            + 12 * (T + 1) * (W + n_strips(rows)) + (rows + L + 2) + 4 * (L + 1) + 64)


def code_stride(rows):
    """Bytes of direction codes per window column: rows ``0..rows`` at 4 bits, padded to
    whole 32-bit words (a thread stores 8 rows' codes at once)."""
    return (np.asarray(rows, np.int64) + 2) // 2 + 3 & ~np.int64(3)


def chunk_budget() -> int:
    """Bytes one launch may use: S2G_LONG_CHUNK_BYTES, else half of free memory (more
    windows a launch: more blocks per SM, the kernel's limit)."""
    if CHUNK_BYTES > 0:
        return CHUNK_BYTES
    _cuda()
    try:
        free = float(cuda.current_context().get_memory_info()[0])
    except Exception:
        free = float("inf")
    if not np.isfinite(free):          # the simulator reports no memory
        free = 4 << 30
    return max(1 << 28, int(free) // 2)


def _vote(bits, wm, wid, lane):
    """OR of the warp's lanes' ``bits``, where lane ``v`` sets at most bit ``v`` on a GPU (a
    vote). The simulator has no warp votes, and its blocks are one warp of fewer lanes
    than rows (:func:`launch`): there a lane sets bits ``v``, ``v + lanes``, ..., ORed into a
    shared word between block barriers."""
    if _SIM:
        if lane == 0:
            wm[wid] = 0
        cuda.syncthreads()
        if bits != 0:
            cuda.atomic.or_(wm, wid, bits)
        cuda.syncthreads()
        m = int64(wm[wid])
        cuda.syncthreads()
        return m
    return int64(cuda.ballot_sync(0xFFFFFFFF, bits != 0)) & 0xFFFFFFFF


def _wsync():
    """Orders a warp's shared-memory writes before its lanes read them."""
    if _SIM:
        cuda.syncthreads()
    else:
        cuda.syncwarp()


def _long_body(n, mode, a, b, o, e, S, n_sh, dbg, codes, qoff, rows_a, score_a, coff, poff, soff,
               doff, xoff, roff, oo, co, p_base, p_col, p_kind, p_store, p_mrank, p_mpa, p_mpn,
               mp_slot, mp_wcol, SH, SE, BH, BF, BD, dirs, dirs32, dpred, epred, out_ops,
               out_cols, out_n, out_start, out_st, find, out_best):
    """One block per window: strips of ``S`` rows in a wavefront (module doc), then the walk.
    ``find``, ``out_best`` and the outputs as :func:`s2g.gpu_traceback._tb_body`'s.

    The cell is :func:`s2g.tb_common.tb_cell` written out with every intermediate cast to
    int32 (Numba types int32 arithmetic as int64: 64-bit PTX); every hot index is unsigned
    (a signed index costs Numba's negative-index wraparound, ~6 instructions an access:
    measured in this kernel's SASS). Merge columns and slot stores are done by the whole
    warp, one lane per row of the lane that needs them (module doc)."""
    r = cuda.blockIdx.x
    tid = cuda.threadIdx.x
    T = cuda.blockDim.x
    lane = tid & 31
    wb = tid - lane
    wid = tid >> 5
    i_a = cuda.shared.array(SHARED_T, types.int32)     # merge: list start; slots: slot
    i_n = cuda.shared.array(SHARED_T, types.int32)     # merge: list length | kind << 24
    i_r = cuda.shared.array(SHARED_T, types.int32)     # merge: merge rank
    wm = cuda.shared.array(SHARED_WARPS, types.int64)
    col = cuda.shared.array(0, types.int32)
    neg = int32(NEG_INF)
    zero = int32(0)
    R = int32(rows_a[r])
    R1 = R + int32(1)
    stride = ((R + 2) // 2 + 3) // 4 * 4
    c0 = coff[r]
    W = int32(coff[r + 1] - c0)
    p0 = poff[r]
    s0 = soff[r]
    d0 = doff[r]
    x0 = xoff[r]
    b0 = roff[r]
    q0 = qoff[r]
    dw0 = d0 >> 2
    sw = stride >> 2
    oe = int32(o + e)
    e32 = int32(e)
    a32 = int32(a)
    nb = int32(-b)
    SP = S + 1
    TSP = T * SP
    T1 = T + 1
    S2 = int32(S)
    best = zero if mode == LOCAL else neg
    bw = int32(-1)
    bi = int32(-1)
    NS = (R1 + S2 - 1) // S2
    pxm = int64(0)
    one = int64(1)
    zero64 = int64(0)
    nl = min(32, T)                             # lanes of a warp (fewer in the simulator)
    for g0 in range(0, NS, T):
        k = g0 + tid
        active = k < NS
        r0 = int32(k * S2)
        nr = int32(min(S2, R1 - r0))
        myc = tid * SP                          # this thread's rows of a shared column
        for stp in range(W + min(T, NS - g0) - 1):
            w = int32(stp - tid)
            act = active and w >= 0 and w < W
            kind = int32(K_CONT)
            st = int32(-1)
            gb = int32(0)
            diag = neg
            hup = neg
            f = neg
            if act:
                gw = uint64(c0 + w)
                kind = int32(p_kind[gw])
                gb = int32(p_base[gw])
                st = int32(p_store[gw])
                if r0 > 0:
                    ra = uint64(b0 + (w + k - 1) * T1 + (k - 1) % T1)
                    diag = BD[ra]
                    hup = BH[ra]
                    f = BF[ra]
            # merge columns, by the warp: lane v folds row v of each merging lane's strip
            mc = act and kind != K_CONT
            mm = _vote_dev(one << lane if mc else zero64, wm, wid, lane)
            if mm != 0:
                if mc:
                    i_a[tid] = int32(p0 + p_mpa[gw])
                    i_n[tid] = int32(p_mpn[gw]) | (kind << 24)
                    i_r[tid] = int32(p_mrank[gw])
                _wsync_dev()
                while mm != 0:
                    L = int32(cuda.popc((mm & -mm) - 1))
                    mm &= mm - 1
                    tl = wb + L
                    kl = i_n[tl]
                    mn = kl & 0xFFFFFF
                    ma = i_a[tl]
                    mr = i_r[tl]
                    rl = int32((g0 + tl) * S2)
                    nrl = min(S2, R1 - rl)
                    pxb = zero64
                    v = int32(lane)
                    while v < nrl:
                        t = rl + v
                        if (kl >> 24) & K_VIRT:
                            ph = zero if (mode == LOCAL or t == 0) else int32(-(o + e * t))
                            pe = int32(ph - oe)
                        else:
                            ph = neg
                            pe = neg
                        dch = False
                        ech = False
                        dsel = int32(-1)
                        esel = int32(-1)
                        ex_win = False
                        for x in range(mn):
                            sl = mp_slot[uint64(ma + x)]
                            if sl < n_sh:
                                sa = uint64((2 + 2 * sl) * TSP + tl * SP + v)
                                hp = col[sa]
                                ep = col[sa + uint64(TSP)]
                            else:
                                ga = uint64(s0 + ((sl - n_sh) * T + tl) * S + v)
                                hp = SH[ga]
                                ep = SE[ga]
                            ho = int32(hp - oe)
                            ex = int32(ep - e32)
                            ce = max(ho, ex)
                            if hp > ph or (hp == ph and not dch):
                                ph = hp
                                dch = True
                                dsel = int32(x)
                            if ce > pe or (ce == pe and not ech and ce > neg):
                                pe = ce
                                ech = True
                                ex_win = ex > ho
                                esel = int32(x)
                        ca = uint64(tl * SP + v)
                        col[ca] = ph
                        col[ca + uint64(TSP)] = pe
                        if mr >= 0:
                            xa = uint64(x0 + mr * R1 + t)
                            dpred[xa] = dsel
                            epred[xa] = esel
                        if ex_win:
                            pxb |= one << v
                        v += nl
                    got = _vote_dev(pxb, wm, wid, lane)
                    if lane == L:
                        pxm = got
                _wsync_dev()
            if act:
                ci = uint64(myc)
                nh = col[ci]                    # row r0's column values, read one row ahead
                ne = col[ci + uint64(TSP)]
                nq = int32(codes[uint64(q0 + r0 - 1)]) if r0 > 0 else int32(0)
                wd = uint32(0)
                da = uint64(dw0 + w * sw + (r0 >> 3))
                mflag = kind != K_CONT
                pxw = uint32(pxm)
                gm = gb if gb < 4 else int32(-1)    # a graph N matches nothing
                # int32 counters (Numba's range() counts in int64: 64-bit compares per cell)
                u = int32(0)
                t = r0
                while u < nr:
                    ph = nh
                    ce = ne
                    qb = nq
                    u1 = int32(u + 1)
                    if u1 < nr:
                        nh = col[ci + uint64(1)]
                        ne = col[ci + uint64(TSP + 1)]
                        if dbg & 2 == 0:
                            nq = int32(codes[uint64(q0 + t)])
                    ho = int32(ph - oe)
                    ex = int32(ce - e32)
                    # a merge column's E and "E extended" come from the warp's merge
                    pe = ce if mflag else max(ho, ex)
                    px = ((pxw >> uint32(u)) & uint32(1)) != uint32(0) if mflag else ex > ho
                    ev = pe
                    if t == 0:
                        if mode == GLOBAL:
                            h = pe
                            d = int32(H_DEL | E_EXT) if px else int32(H_DEL)
                        else:
                            h = zero
                            ev = neg
                            d = int32(H_START)
                        f = neg
                    else:
                        # tb_cell, in int32: F (open or extend), then diagonal, E, F
                        fo = int32(hup - oe)
                        fx = int32(f - e32)
                        if fx > fo:
                            f = fx
                            d = int32(F_EXT | H_DIAG)
                        else:
                            f = fo
                            d = int32(H_DIAG)
                        h = int32(diag + (a32 if qb == gm else nb))
                        if ev > h:
                            h = ev
                            d = int32(d ^ H_DIAG ^ H_DEL)
                        if f > h:
                            h = f
                            d = int32((d & ~3) | H_INS)
                        if mode == LOCAL and h <= zero:
                            h = zero
                            d = int32((d & ~3) | H_START)
                        if px:
                            d = int32(d | E_EXT)
                        if h >= best and find and (mode == LOCAL or t == R) and (
                                h > best or (bw >= 0 and (w < bw or (w == bw and t < bi)))):
                            best = h
                            bw = w
                            bi = t
                    diag = ph
                    hup = h
                    col[ci] = h
                    col[ci + uint64(TSP)] = ev
                    ci += uint64(1)
                    wd |= uint32(d) << uint32((u & 7) * 4)
                    if u & 7 == 7 or u1 == nr:
                        if dbg & 1 == 0:
                            dirs32[da] = wd
                        da += uint64(1)
                        wd = uint32(0)
                    u = u1
                    t = int32(t + 1)
                wa = uint64(b0 + (w + k) * T1 + k % T1)
                BD[wa] = diag
                BH[wa] = hup
                BF[wa] = f
            # slot stores, by the warp: lane v stores row v of each storing lane's strip
            sc = act and st >= 0
            mm = _vote_dev(one << lane if sc else zero64, wm, wid, lane)
            if mm != 0:
                if sc:
                    i_a[tid] = st
                _wsync_dev()
                while mm != 0:
                    L = int32(cuda.popc((mm & -mm) - 1))
                    mm &= mm - 1
                    tl = wb + L
                    sl = i_a[tl]
                    rl = int32((g0 + tl) * S2)
                    nrl = min(S2, R1 - rl)
                    v = int32(lane)
                    while v < nrl:
                        ca = uint64(tl * SP + v)
                        h = col[ca]
                        ev = col[ca + uint64(TSP)]
                        if sl < n_sh:
                            sa = uint64((2 + 2 * sl) * TSP + tl * SP + v)
                            col[sa] = h
                            col[sa + uint64(TSP)] = ev
                        else:
                            ga = uint64(s0 + ((sl - n_sh) * T + tl) * S + v)
                            SH[ga] = h
                            SE[ga] = ev
                        v += nl
            if dbg & 4 == 0:
                cuda.syncthreads()
    cuda.syncthreads()
    i_a[tid] = best
    i_n[tid] = bw
    i_r[tid] = bi
    cuda.syncthreads()
    if tid != 0:
        return
    if find:
        for x in range(1, T):
            h = i_a[x]
            xw = i_n[x]
            if xw >= 0 and (h > best or (h == best and (
                    bw < 0 or xw < bw or (xw == bw and i_r[x] < bi)))):
                best = h
                bw = xw
                bi = i_r[x]
        out_best[3 * r] = best if bw >= 0 else neg
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
        NL = NS - 1
        if W == 0 or BH[uint64(b0 + (W - 1 + NL) * T1 + NL % T1)] != score_a[r]:
            out_st[r] = ST_MISMATCH
            return
        w = W - 1
        i = R
    if dbg & 8:
        return
    _walk_dev(r, w, i, mode, R1, stride, c0, p0, d0, x0, q0, codes, p_base, p_col, p_kind,
              p_mrank, p_mpa, mp_wcol, dirs, dpred, epred, oo, co, out_ops, out_cols, out_n,
              out_start, out_st)


def kernel_signature():
    """Argument types of the kernel (``cuda.compile_ptx``, eager compilation)."""
    i32, i64 = types.int32, types.int64
    a = types.Array
    return ((i32,) * 9 + (a(types.uint8, 1, "C"), a(i64, 1, "C"), a(i32, 1, "C"),
                          a(i32, 1, "C")) + (a(i64, 1, "C"),) * 8
            + (a(types.uint8, 1, "C"), a(i32, 1, "C"), a(types.int8, 1, "C"))
            + (a(i32, 1, "C"),) * 6
            + (a(i32, 1, "C"),) * 5
            + (a(types.uint8, 1, "C"), a(types.uint32, 1, "C"), a(types.int16, 1, "C"),
               a(types.int16, 1, "C"), a(types.uint8, 1, "C"), a(i32, 1, "C"),
               a(i32, 1, "C"), a(i32, 1, "C"), a(i32, 1, "C"), i32, a(i32, 1, "C")))


def get_kernel():
    """The kernel, compiled once per process (eagerly for its signature on a GPU, kept in
    Numba's disk cache)."""
    global _KERNEL
    if _KERNEL is None:
        _cuda()
        from numba import config
        if config.ENABLE_CUDASIM:
            _KERNEL = cuda.jit(_long_body)
        else:
            opts = {"cache": True} if os.environ.get("S2G_NO_CACHE", "") == "" else {}
            _KERNEL = cuda.jit(kernel_signature(), **opts)(_long_body)
    return _KERNEL


def compile_ptx(cc=(9, 0)):
    """PTX of the kernel for compute capability ``cc`` (tests; no GPU needed)."""
    _cuda()
    return cuda.compile_ptx(_long_body, kernel_signature(), cc=cc)[0]


def shared_plan(T: int, n_slots: int, budget: int):
    """Window slots kept in shared memory (the rest in global memory) and the block's
    dynamic shared bytes: the column (H and E of (S + 1) rows a thread, the odd stride
    that keeps both access patterns free of bank conflicts) and as many slots (the same
    size each) as ``budget`` holds beside the static arrays."""
    per = 8 * (S + 1) * T
    n_sh = int(max(0, min(n_slots, (budget - STATIC_SHARED - per) // per)))
    return n_sh, per * (1 + n_sh)


def launch(dev, emp, n, mode, a, b, o, e, codes, qoff, rows, score, coff, poff, sz, oo, co,
           prog, find):
    """Upload one chunk's windows (``dev(x)`` uploads, ``emp(size, dtype)`` allocates) and
    launch the kernel; returns the device outputs (ops, cols, n, start, status, best) and
    the CUDA events around the launch."""
    R1 = rows + 1
    T = threads_for(int(n_strips(rows).max()))
    assert T <= 32 or not _SIM, "the simulator's warp votes need one-warp blocks"
    kern = get_kernel()
    n_sh, dyn = shared_plan(T, int(sz[:, 3].max()), SHARED_BLOCK)
    if dyn > SHARED_BYTES and not _raise_shared(kern, dyn):
        n_sh, dyn = shared_plan(T, int(sz[:, 3].max()), SHARED_BYTES)
    W = sz[:, 0]
    soff = _cum(sz[:, 3] * (S * T))     # room for every slot: a relaunch may keep none shared
    doff = _cum(W * code_stride(rows))              # whole words per window
    xoff = _cum(sz[:, 1] * R1)
    roff = _cum((T + 1) * (W + n_strips(rows)))     # the ring, by diagonal (module doc)
    args = [dev(np.ascontiguousarray(codes, np.uint8)), dev(qoff), dev(rows.astype(np.int32)),
            dev(score.astype(np.int32))]
    args += [dev(x) for x in (coff, poff, soff, doff, xoff, roff, oo, co)]
    args += [dev(x) for x in prog]
    dirs32 = emp(max(int(doff[-1]) // 4, 1), np.uint32)
    args += [emp(soff[-1], np.int32), emp(soff[-1], np.int32), emp(roff[-1], np.int32),
             emp(roff[-1], np.int32), emp(roff[-1], np.int32), dirs32.view(np.uint8), dirs32,
             emp(xoff[-1], np.int16), emp(xoff[-1], np.int16)]
    d_ops, d_cols = emp(oo[-1], np.uint8), emp(co[-1], np.int32)
    d_n, d_start = emp(2 * n, np.int32), emp(n, np.int32)
    d_st = dev(np.full(n, -1, np.int32))
    d_best = emp(3 * n, np.int32) if find else d_st
    ev0, ev1 = cuda.event(), cuda.event()

    def go(n_sh, dyn):
        kern[n, T, 0, dyn](np.int32(n), np.int32(mode), np.int32(a), np.int32(b), np.int32(o),
                           np.int32(e), np.int32(S), np.int32(n_sh), np.int32(DEBUG), *args,
                           d_ops, d_cols, d_n, d_start, d_st, np.int32(find), d_best)

    ev0.record()
    try:
        go(n_sh, dyn)
    except Exception as exc:            # noqa: BLE001 - the driver refused the launch
        if dyn <= SHARED_BYTES:
            raise
        # seen once on an H100 (S = 8, 96 KB): CUDA_ERROR_INVALID_VALUE at launch although
        # the opt-in had been set; relaunch with the column alone in shared memory
        warnings.warn(f"long-window kernel: launch with {dyn} bytes of shared memory "
                      f"refused ({exc}); using {8 * (S + 1) * T}", RuntimeWarning,
                      stacklevel=2)
        go(0, 8 * (S + 1) * T)
    ev1.record()
    return d_ops, d_cols, d_n, d_start, d_st, d_best, (ev0, ev1)


_RAISED = [0]


def _raise_shared(kern, nbytes) -> bool:
    """Allow ``nbytes`` of dynamic shared memory per block (above 48 KB: an opt-in)."""
    from numba import config
    if config.ENABLE_CUDASIM:
        return True
    if _RAISED[0] >= nbytes:
        return True
    from .variants.fast import _allow_shared
    ok = _allow_shared(kern, nbytes)
    if ok:
        _RAISED[0] = nbytes
    return ok
