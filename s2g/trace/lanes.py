"""The lane traceback: the windows of many reads run in lanes across reads, the simd
variant's layout (:mod:`s2g.variants.simd`), every output identical to
:func:`s2g.trace.scalar.traceback_read`.

:func:`s2g.trace.batch.traceback_batch` first runs reads in *lanes*
(:func:`_lane_worker`): a worker turns the windows of a super-batch of reads into
column programs (:func:`s2g.trace.common.lane_program`; per column its base, "continue the
previous column" or "merge these in-window predecessors", the window slot that keeps it,
as :mod:`s2g.trace.gpu` does), groups them by window width into 64 int16 lanes (32
int32 beyond the int16 score bound) and runs each group in lockstep: at step k every
lane computes column k of its own window, one vector pass over the rows that also
writes each cell's direction byte (:func:`s2g.trace.columns.tb_column`); a lane's merges
(vectorised down its rows, from lane-major slots) and slot stores are its own. Then each
lane's end cell is checked and the walk runs per lane
(:func:`s2g.trace.columns.lane_walk`). Same recurrences, tie order and choices as
traceback_read, so every output is identical (tests/test_traceback.py). Windows over
``LANE_CELLS`` cells go to the row bands (:mod:`s2g.trace.bands`), whose sizes
(:func:`band_plan`) the program pass here already checks.

Measured (2-core AMD EPYC VM shared with other jobs, 1 thread, 2026-11-23, best of 5-7):
5,000 seeded 150 bp reads on a 5 Mbp SNP graph 0.09 s in lanes against 0.60-0.75 s
(7-8x); 1,000 reads on the real graphs: cactus 12x, MT 11x, DRB1 3.1x (4.4 bp nodes: a
merge every ~5 columns, each a strided per-lane scatter); 300 x 1 kbp reads 7x.
Where the time goes (seeded reads, per read): windows and programs 3.3 us, merges 6,
the column loop 5.6 (~4 GCUPS), slot stores 3.9, walk 2, summary 2.4.

Tuples (Numba passes them; the callee unpacks them at its top): a chunk's reads ``rd =
(codes, offs, idx, score, end_i, end_j, col_lo, bands)``; the lane graph ``gl = (base, gcode,
node_start, pred_ptr, pred_idx)`` (``gcode``: :func:`s2g.lanes.graph_codes`); scoring in
the lane type ``sc = (a, mb, o, e, neg, slim)`` (``mb = -b``); limits ``lim =
(max_cells, lane_cells, cap, band_cap, band_h)`` (:class:`s2g.trace.batch.LaneLimits`:
cells, group bytes, band bytes, band height); outputs ``out = (oo, co, st, start, cells,
summary)`` (``summary``: :func:`s2g.trace.common.summary_arrays`); a worker's program
buffers ``prog`` (:func:`batch_arrays`) and a super-batch's per-read arrays ``bb``
(:func:`lane_programs`).
"""
from __future__ import annotations

import numba
import numpy as np

from .._numba import NJIT
from ..dp import LOCAL
from ..lanes import GRAPH_N, PAD_CODE, cast, dealt
from .columns import lane_merge, lane_walk, tb_column
from .common import K_CONT, K_VIRT, ST_MISMATCH, ST_OK, lane_program, summarize, window
from .scalar import row_band

#: predecessor choices are int16 list positions
MAX_PREDS = 32767
#: chunk status of a read the lanes left to traceback_read
ST_DEFER = -1
#: chunk status of a long window left to the row bands' pass
#: (:func:`s2g.trace.bands._band_worker`)
ST_BAND = -2


@numba.njit(inline="always", **NJIT)
def room(buf, n):
    """``buf`` when it holds ``n`` items, else a new (uninitialised) one that does."""
    return buf if len(buf) >= n else np.empty(max(n, 2 * len(buf)), buf.dtype)


@numba.njit(inline="always", **NJIT)
def keep(buf, n, used):
    """``buf`` grown to ``n`` items keeping its first ``used``."""
    if len(buf) >= n:
        return buf
    out = np.empty(max(n, 2 * len(buf)), buf.dtype)
    out[:used] = buf[:used]
    return out


@numba.njit(**NJIT)
def band_sizes(W, M, S, nm, ob, c, cv, Bh):
    """Buffer items of a banded lane group (:func:`s2g.trace.bands._band_group`): (lane
    type, direction bytes, int16 choices, walk ops) for ``c`` lanes run as ``cv``
    (:func:`padded`), widest window ``W`` columns, most rows ``M``, most window slots
    ``S``, ``nm`` merges with a list and ``ob`` walk ops (bounds) over its lanes, band
    height ``Bh``."""
    R = M + 1
    Rb = Bh + 1
    # read codes, checkpoints (H, F), the band's two columns (H, X) and slots, the
    # virtual column and a merge's two scratch vectors
    nt = (max(M, 1) * cv + 2 * W * (M // Bh + 1) * cv + 4 * Rb * cv + 2 * c * S * Rb + 2 * R
          + 2 * Rb)
    return nt, W * Rb * cv, 2 * max(nm * Rb, 1) + 2 * Rb, ob


@numba.njit(inline="always", **NJIT)
def padded(c, isz):
    """Lanes a banded group of ``c`` lanes runs as: a multiple of one 16-byte register
    (4 int32 or 8 int16 lanes). The extra lanes compute padding: 10 int32 lanes, with
    their scalar remainder, took 1.7x the time of 16 (1 thread, 10 kbp reads)."""
    v = 16 // isz
    return -(-c // v) * v


@numba.njit(**NJIT)
def band_plan(W, M, S, nm, ob, c, isz, band):
    """(bytes, band height) of a banded lane group (:func:`band_sizes`'s arguments; lane
    type of ``isz`` bytes). Bytes: direction bytes of one band ``W x (Bh+1) x c``,
    checkpoints ``2 x W x (M // Bh + 1) x c x isz``, the band's columns and slots,
    merge choices (2 x int16 per band row), read codes and the walks (9 bytes per op).
    ``Bh`` (unless ``band`` forces it) minimises the terms that depend on it:
    ``sqrt(2 isz W c M / (W c + isz c (4 + 2 S) + 4 nm))``, about 280 rows for 10 kbp
    reads in int32 lanes (then checkpoints and direction bytes take about 290 bytes each
    per window column and lane)."""
    if band > 0:
        Bh = band
    else:
        cv = padded(c, isz)
        den = W * cv + isz * (4 * cv + 2 * c * S) + 4 * nm
        Bh = int(np.sqrt(2.0 * isz * W * cv * M / max(den, 1)))
    Bh = max(1, min(Bh, max(M, 1)))
    nt, nd, nc, no = band_sizes(W, M, S, nm, ob, c, padded(c, isz), Bh)
    return isz * nt + nd + 2 * nc + 9 * no, Bh


@numba.njit(**NJIT)
def lane_programs(ks, rd, gl, mode, sc, lim, isz, oo, st, prog, bb):
    """Windows and programs of the reads at chunk positions ``ks`` into the worker's
    buffers ``prog`` (grown as needed; returned). Per read x, into ``bb = (rows, wl, pw,
    pm, nsl, nmg, bnd)``: rows, window columns
    ``wl[x]`` (0: left to traceback_read, status ST_DEFER), program offsets
    ``pw[x]``/``pm[x]`` (ends ``pw[x + 1]``/``pm[x + 1]``), window slots, merges with a
    list, and ``bnd[x]``: traced in row bands (:func:`s2g.trace.bands._band_group`). A
    window over ``lane_cells`` (:class:`~s2g.trace.batch.LaneLimits`: tests lower it) cells, or over
    ``max_cells`` bytes as traceback_read counts them, goes to the row bands; to
    traceback_read (deferred) when that would refuse it (:func:`row_band`), when a
    group of one lane passes ``band_cap`` bytes (:func:`band_plan`), or when a node has
    more than MAX_PREDS predecessors."""
    codes, offs, idx, score, end_i, end_j, col_lo, _pb = rd
    base, gcode, node_start, pred_ptr, pred_idx = gl
    a, mb, o, e, neg, slim = sc
    max_cells, lane_cells, cap, band_cap, band_h = lim
    rows, wl, pw, pm, nsl, nmg, bnd = bb
    p_col, p_kind, p_mpa, p_mpn, p_mrank, p_store, mp_slot, mp_wcol = prog
    sizes = np.zeros(6, np.int64)
    for x in range(len(ks)):
        pw[x + 1] = pw[x]
        pm[x + 1] = pm[x]
        wl[x] = 0
        bnd[x] = False
        k = ks[x]
        r = idx[k]
        rows[x] = end_i[r]
        Lb = end_i[r] + max(0, a * end_i[r] - score[r]) // e
        v_end = np.searchsorted(node_start, end_j[r], side="right") - 1
        wn, ws, we = window(v_end, end_j[r] - node_start[v_end], Lb, node_start, pred_ptr,
                            pred_idx, col_lo[r])
        # sizes straight from the window (list entries: at most the predecessors of
        # its node-first columns), so the program is built in one pass
        W = 0
        nf = 0
        preds = 0
        most = 0
        for y in range(len(wn)):
            W += we[y] - ws[y] + 1
            np_ = pred_ptr[wn[y] + 1] - pred_ptr[wn[y]]
            if ws[y] == 0 and np_ > 0:
                nf += 1
                preds += np_
                most = max(most, np_)
        banded = W * (rows[x] + 1) > lane_cells or (W + 16 * nf) * (rows[x] + 1) > max_cells
        if most > MAX_PREDS or (banded and (band_cap <= 0
                                            or row_band(W, nf, rows[x], max_cells) < 0)):
            st[k] = ST_DEFER
            continue
        n1, m1 = pw[x] + W, pm[x] + preds
        if len(p_col) < n1:
            p_col = keep(p_col, n1, pw[x])
            p_kind = keep(p_kind, n1, pw[x])
            p_mpa = keep(p_mpa, n1, pw[x])
            p_mpn = keep(p_mpn, n1, pw[x])
            p_mrank = keep(p_mrank, n1, pw[x])
            p_store = keep(p_store, n1, pw[x])
        if len(mp_slot) < m1:
            mp_slot = keep(mp_slot, m1, pm[x])
            mp_wcol = keep(mp_wcol, m1, pm[x])
        lane_program(wn, ws, we, mode, (node_start, pred_ptr, pred_idx), True, pw[x], pm[x],
                     (p_col, p_kind, p_mpa, p_mpn, p_mrank, p_store, mp_slot, mp_wcol), sizes)
        if banded and band_plan(W, rows[x], sizes[3], sizes[1], oo[k + 1] - oo[k], 1, isz,
                                band_h)[0] > band_cap:
            st[k] = ST_DEFER
            continue
        bnd[x] = banded
        wl[x] = W
        pw[x + 1] = n1
        pm[x + 1] = pm[x] + sizes[2]
        nsl[x] = sizes[3]
        nmg[x] = sizes[1]
    return p_col, p_kind, p_mpa, p_mpn, p_mrank, p_store, mp_slot, mp_wcol



@numba.njit(**NJIT)
def width_order(W, R):
    """Reads with a window (``W > 0``) sorted by width, then rows ``R`` (stable)."""
    n = len(W)
    key = np.empty(n, np.int64)
    rmax = 1
    for x in range(n):
        rmax = max(rmax, R[x] + 1)
    m = 0
    for x in range(n):
        key[x] = W[x] * rmax + R[x] if W[x] > 0 else -1
        m += W[x] > 0
    return np.argsort(key, kind="mergesort")[n - m:]


@numba.njit(**NJIT)
def _lane_groups(W, R, lanes, vec, cap):
    """Reads with ``W > 0`` (window columns; R = rows + 1) sorted by width then rows and
    cut into groups of at most ``lanes``; beyond ``vec`` lanes (one vector register),
    fewer where a group's direction bytes (widest window x most rows x lanes) would
    pass ``cap``, and then a multiple of ``vec``, so that the column loop has no
    remainder (1 kbp reads in groups of 29 lanes ran at a third of the speed of 32).
    Returns (reads in group order, group starts)."""
    order = width_order(W, R)
    m = len(order)
    starts = np.empty(m + 1, np.int64)
    g = 0
    y = 0
    while y < m:
        c = 0
        wm = 0
        rm = 0
        while y + c < m and c < lanes:
            x = order[y + c]
            w2 = max(wm, W[x])
            r2 = max(rm, R[x])
            if c >= vec and w2 * r2 * (c + 1) > cap:
                break
            wm = w2
            rm = r2
            c += 1
        if c > vec and y + c < m:
            c -= c % vec
        starts[g] = y
        g += 1
        y += c
    starts[g] = m
    return order, starts[:g + 1]



@numba.njit(**NJIT)
def batch_arrays(batch):
    """A worker's program buffers (grown by :func:`lane_programs`) and per-read arrays
    of a super-batch of ``batch`` reads."""
    prog = (np.empty(4096, np.int64), np.empty(4096, np.uint8), np.empty(4096, np.int32),
            np.empty(4096, np.int32), np.empty(4096, np.int32), np.empty(4096, np.int32),
            np.empty(1024, np.int32), np.empty(1024, np.int32))
    return (prog, np.zeros(batch, np.int64), np.zeros(batch, np.int64),
            np.zeros(batch + 1, np.int64), np.zeros(batch + 1, np.int64),
            np.zeros(batch, np.int64), np.zeros(batch, np.int64), np.zeros(batch, np.bool_))


@numba.njit(**NJIT)
def lane_arrays(lanes):
    """Per lane of a group: chunk position, rows, window columns, program and merge-list
    offsets with their ends (filled by :func:`take_group`)."""
    return (np.zeros(lanes, np.int64), np.zeros(lanes, np.int64), np.zeros(lanes, np.int64),
            np.zeros(lanes, np.int64), np.zeros(lanes, np.int64), np.zeros(lanes, np.int64),
            np.zeros(lanes, np.int64))


@numba.njit(inline="always", **NJIT)
def take_group(sel, ks, brows, bwl, bpw, bpm, bnsl, lk, rows, wl, pw, pe, pm, me):
    """Lanes ``0..len(sel)-1`` take the super-batch reads ``sel``; returns the group's
    most rows, widest window and most window slots (at least 1)."""
    M = 0
    W = 0
    S = 1
    for l in range(len(sel)):
        x = sel[l]
        lk[l] = ks[x]
        rows[l] = brows[x]
        wl[l] = bwl[x]
        pw[l] = bpw[x]
        pe[l] = bpw[x + 1]
        pm[l] = bpm[x]
        me[l] = bpm[x + 1]
        M = max(M, rows[l])
        W = max(W, wl[l])
        S = max(S, bnsl[x])
    return M, W, S


@numba.njit(**NJIT)
def _lane_worker(t, n_threads, order, batch, lanes, rd, gl, mode, sc, lim, out):
    """Thread ``t``'s super-batches of ``batch`` reads of ``order`` (chunk positions;
    dealt back and forth over the threads, :func:`s2g.lanes.dealt`): their
    programs (:func:`lane_programs`), lane groups by actual window width
    (:func:`_lane_groups`), and per group the lockstep DP (at step k lane l
    computes its own window column k, as the simd variant's lockstep windows do: a
    lane's merges and slot stores are its own, the column is one vector pass over every
    lane), each end cell's check, and the walks (:func:`lane_walk`) summarised into
    the chunk's outputs (:func:`summarize`). Long windows (``bnd``) get status ST_BAND
    for :func:`s2g.trace.bands._band_worker`, a separate entry so that the row bands'
    code is compiled only when a run has such windows (it doubled the cold start of
    short-read runs).

    Memory per group: direction bytes ``widest window x (most rows + 1) x lanes``, int16
    choices (2 x 2 bytes per row of each merge with a list), and the window slots'
    columns (lane-major: ``[lane][slot][row]``, so a merge runs down contiguous rows).
    Buffers live as long as the worker (a fresh allocation per group cost page faults:
    ~20% of the time).
    """
    codes, offs, idx, score, end_i, end_j, col_lo, _pb = rd
    base, gcode, node_start, pred_ptr, pred_idx = gl
    a, mb, o, e, neg, slim = sc
    max_cells, lane_cells, cap, band_cap, band_h = lim
    oo, co, st, start, cells, summary = out
    run_op, run_len, n_runs, path, n_path, geo, counts = summary
    z = cast(0, a)
    oe = cast(o + e, a)
    floor = z if mode == LOCAL else neg
    ls = (a, mb, oe, e, floor, slim, neg, z)
    gn = cast(GRAPH_N, a)
    pad = cast(PAD_CODE, a)
    lt = np.full(1, z)                       # the lane type, for np.empty
    prog, brows, bwl, bpw, bpm, bnsl, bnmg, bnd = batch_arrays(batch)
    lk, rows, wl, pw, pe, pm, me = lane_arrays(lanes)     # per lane of a group
    coff = np.zeros(lanes + 1, np.int64)
    endv = np.zeros(lanes, np.int64)
    G = np.empty(lanes, lt.dtype)
    hup = np.empty(lanes, lt.dtype)
    fp = np.empty(lanes, lt.dtype)
    qbuf = np.empty(0, lt.dtype)
    hbuf = np.empty(0, lt.dtype)
    xbuf = np.empty(0, lt.dtype)
    shbuf = np.empty(0, lt.dtype)
    sxbuf = np.empty(0, lt.dtype)
    vbuf = np.empty(0, lt.dtype)
    dbuf = np.empty(0, np.uint8)
    cbuf = np.empty(0, np.int16)
    obuf = np.empty(0, np.uint8)
    jbuf = np.empty(0, np.int64)
    isz = lt.itemsize
    vec = 64 // isz
    n_sb = (len(order) + batch - 1) // batch
    for sb in dealt(t, n_sb, n_threads):     # super-batches by size, back and forth
        ks = order[sb * batch:min(len(order), (sb + 1) * batch)]
        nb = len(ks)
        prog = lane_programs(ks, rd, gl, mode, sc, lim, isz, oo, st, prog,
                             (brows[:nb], bwl[:nb], bpw[:nb + 1], bpm[:nb + 1], bnsl[:nb],
                              bnmg[:nb], bnd[:nb]))
        p_col, p_kind, p_mpa, p_mpn, p_mrank, p_store, mp_slot, mp_wcol = prog
        for x in range(nb):
            if bnd[x]:                   # the row bands' pass takes it
                st[ks[x]] = ST_BAND
                bwl[x] = 0
        gorder, gstart = _lane_groups(bwl[:nb], brows[:nb] + 1, lanes, vec, cap)
        for gi in range(len(gstart) - 1):
            L = gstart[gi + 1] - gstart[gi]
            sel = gorder[gstart[gi]:gstart[gi + 1]]
            M, W, S = take_group(sel, ks, brows, bwl, bpw, bpm, bnsl, lk, rows, wl, pw, pe,
                                 pm, me)
            ob = 1
            for l in range(L):
                coff[l + 1] = coff[l] + bnmg[sel[l]] * (rows[l] + 1)
                ob = max(ob, oo[lk[l] + 1] - oo[lk[l]])
            R = M + 1
            # ---- buffers (reused; views shaped for this group)
            qbuf = room(qbuf, max(M, 1) * L)
            hbuf = room(hbuf, 2 * R * L)
            xbuf = room(xbuf, 2 * R * L)
            shbuf = room(shbuf, L * S * R)
            sxbuf = room(sxbuf, L * S * R)
            vbuf = room(vbuf, 4 * R)
            dbuf = room(dbuf, W * R * L)
            cbuf = room(cbuf, 2 * max(coff[L], 1))
            obuf = room(obuf, ob)
            jbuf = room(jbuf, ob)
            Q = qbuf[:max(M, 1) * L].reshape((max(M, 1), L))
            Hb = hbuf[:2 * R * L].reshape((2, R, L))
            Xb = xbuf[:2 * R * L].reshape((2, R, L))
            SH = shbuf[:L * S * R].reshape((L, S, R))
            SX = sxbuf[:L * S * R].reshape((L, S, R))
            VH = vbuf[:R]
            VX = vbuf[R:2 * R]
            th = vbuf[2 * R:3 * R]
            tx = vbuf[3 * R:4 * R]
            D = dbuf[:W * R * L].reshape((W, R, L))
            nc2 = max(coff[L], 1)
            DC = cbuf[:nc2]
            EC = cbuf[nc2:2 * nc2]
            for i in range(max(M, 1)):
                for l in range(L):
                    Q[i, l] = pad
            for l in range(L):
                q0 = offs[idx[lk[l]]]
                for i in range(rows[l]):
                    Q[i, l] = cast(codes[q0 + i], a)
            for i in range(R):
                vh = 0 if (mode == LOCAL or i == 0) else -(o + e * i)
                VH[i] = cast(vh, a)
                VX[i] = cast(vh - o - e, a)
            # ---- lockstep DP
            cur = 0
            for k in range(W):
                PH = Hb[1 - cur]
                PX = Xb[1 - cur]
                H = Hb[cur]
                X = Xb[cur]
                for l in range(L):
                    if k >= wl[l]:
                        G[l] = gn            # done: values nobody reads
                        continue
                    w = pw[l] + k
                    G[l] = cast(gcode[p_col[w]], a)
                    if p_kind[w] == K_CONT:
                        continue
                    Rl = rows[l] + 1
                    virt = p_kind[w] == K_VIRT
                    if p_mpn[w] == 0:        # no predecessor in the window
                        for i in range(Rl):
                            PH[i, l] = VH[i] if virt else neg
                            PX[i, l] = VX[i] if virt else neg
                        continue
                    c0 = coff[l] + p_mrank[w] * Rl
                    e0 = pm[l] + p_mpa[w]
                    lane_merge(l, Rl, virt, p_mpn[w], mp_slot[e0:e0 + p_mpn[w]], (SH, SX),
                               (VH, VX), neg, PH, PX, DC[c0:c0 + Rl], EC[c0:c0 + Rl], (th, tx),
                               mode == LOCAL, (mp_wcol[e0:e0 + p_mpn[w]], 0))
                tb_column(Q, 0, M, L, G, PH, PX, H, X, D[k], (hup, fp), (hup, fp), mode, ls)
                for l in range(L):
                    if k >= wl[l]:
                        continue
                    s = p_store[pw[l] + k]
                    if s >= 0:
                        hs = SH[l, s]
                        xs = SX[l, s]
                        for i in range(rows[l] + 1):
                            hs[i] = H[i, l]
                            xs[i] = X[i, l]
                    if k == wl[l] - 1:
                        endv[l] = H[rows[l], l]
                cur = 1 - cur
            # ---- walk back per lane
            for l in range(L):
                k = lk[l]
                r = idx[k]
                cells[k] = wl[l] * (rows[l] + 1)
                if endv[l] != score[r]:
                    st[k] = ST_MISMATCH
                    continue
                st[k] = ST_OK
                _, si, _, no, nc, _ = lane_walk(
                    l, D, 0, (wl[l] - 1, rows[l], 0, 0, 0), mode, (codes, offs[r]), base,
                    (p_col[pw[l]:pe[l]], p_kind[pw[l]:pe[l]], p_mrank[pw[l]:pe[l]],
                     p_mpa[pw[l]:pe[l]], mp_wcol[pm[l]:me[l]]), (DC, EC, coff[l], rows[l] + 1),
                    (obuf, jbuf))
                start[k] = si
                summarize(k, obuf[:no], jbuf[:nc], end_j[r], node_start, oo, co, run_op,
                          run_len, n_runs, path, n_path, geo, counts)


@numba.njit(parallel=True, **NJIT)
def run_lanes(order, batch, lanes, n_threads, rd, gl, mode, sc, lim, out):
    """:func:`_lane_worker` on ``n_threads`` threads. The tuples are unpacked here and
    rebuilt in the loop: a parallel loop cannot take a tuple of arrays from outside it
    (Numba's gufunc arguments)."""
    codes, offs, idx, score, end_i, end_j, col_lo, _pb = rd
    base, gcode, node_start, pred_ptr, pred_idx = gl
    a, mb, o, e, neg, slim = sc
    max_cells, lane_cells, cap, band_cap, band_h = lim
    oo, co, st, start, cells, summary = out
    run_op, run_len, n_runs, path, n_path, geo, counts = summary
    for t in numba.prange(n_threads):
        # an int64 index (uint64 in the loop body would compile the worker twice)
        _lane_worker(np.int64(t), n_threads, order, batch, lanes,
                     (codes, offs, idx, score, end_i, end_j, col_lo, _pb),
                     (base, gcode, node_start, pred_ptr, pred_idx), mode,
                     (a, mb, o, e, neg, slim), (max_cells, lane_cells, cap, band_cap, band_h),
                     (oo, co, st, start, cells,
                      (run_op, run_len, n_runs, path, n_path, geo, counts)))
