"""Row bands in lanes: the lane traceback (:mod:`s2g.trace.lanes`) of long windows,
:func:`s2g.trace.scalar.traceback_read`'s row checkpoints in the lane layout, every
output identical to it.

Windows over LANE_CELLS cells (10 kbp reads; seeded long windows without a GPU) run in
lanes with row bands (:func:`_band_group`): a checkpoint pass computes the group's DP
band by band from the top (each band over every column, so that the columns and slots
in use are one band high) and keeps H and F of every ``Bh``-th row of every column;
then the bands are recomputed from the bottom up, from their top checkpoints, with
direction bytes and merge choices, each only as far right as the walks that need it
stand, and each lane's walk moves up through them (:func:`s2g.trace.columns.lane_walk`
pauses where it would leave the band). Memory per group: one band's direction bytes
``W x (Bh + 1) x lanes`` plus checkpoints ``2 x W x (rows / Bh + 1) x lanes`` lane-type
values (W: widest window); ``Bh`` minimises their sum (~280 rows for 10 kbp reads in
int32 lanes, ~7 MB a lane), and the groups are cut so that it stays under
BAND_GROUP_BYTES (256 MB, :mod:`s2g.trace.batch`). A window whose group of one lane
would pass it, or that traceback_read would refuse, goes to traceback_read.

Slack bands (knob ``tb_band``, session 30): each row band computes only the columns where
some lane's slack band meets its rows (:func:`_band_columns`; the argument in
:func:`_band_group`), the lanes right-aligned in the group (a lane's window ends at the
group's last column, where its band is anchored: left-aligned, one wider window in a group
of 12 spread the union over 55% of the columns). 20 x 10 kbp seeded reads on MHC, 2-core
VM: traceback 2.3-2.5 -> 1.0-1.2 s, identical output (docs/performance.md).

Measured (2-core AMD EPYC VM shared with other jobs, 2026-11-24, best of 3; the simd
variant's scores and end cells, then traceback_batch timed alone): 20 x 10 kbp reads
(5% substitutions) on a 100 kbp SNP graph (2.34e9 window cells, int32 lanes, groups of
12 and 8 lanes, Bh ~280), local 1.83 s against 6.23 s in traceback_read (2 threads:
1.28 against 0.38 G cells/s), 2.9 against 12.7 s on 1 thread; semiglobal 1.99 against
5.26 s. Plain lanes unchanged.

Tuples: as :mod:`s2g.trace.lanes` (``rd``, ``gl``, ``sc``, ``lim``, ``out``, ``prog``),
and a group's lane arrays ``la = (lk, rows, wl, pw, pe, pm, me)``
(:func:`s2g.trace.lanes.lane_arrays`), sizes ``dims = (M, W, S, Bh)`` and buffers
``bufs = (tbuf, dbuf, cbuf, obuf, jbuf)``.
"""
from __future__ import annotations

import numba
import numpy as np

from .._numba import NJIT
from ..dp import LOCAL
from ..lanes import GRAPH_N, PAD_CODE, cast, dealt
from .columns import ck_column, lane_merge, lane_walk, tb_column
from .common import K_CONT, K_VIRT, ST_MISMATCH, ST_OK, summarize, window_band
from .lanes import (ST_DEFER, band_plan, band_sizes, batch_arrays, lane_arrays, lane_programs,
                    padded, room, take_group, width_order)

@numba.njit(**NJIT)
def _band_groups(W, M, S, NM, OB, lanes, vec, cap, isz, band):
    """Banded reads (``W > 0``; ``M`` rows, window slots ``S``, merges with a list ``NM``,
    op bounds ``OB``) sorted by width then rows, as :func:`s2g.trace.lanes._lane_groups`,
    and cut into groups of at most ``lanes`` whose :func:`band_plan` stays under ``cap``
    bytes (a multiple of ``vec`` lanes beyond one register, except the last group).
    Returns (reads in group order, group starts, band height per group)."""
    order = width_order(W, M)
    m = len(order)
    starts = np.empty(m + 1, np.int64)
    bh = np.empty(m + 1, np.int64)
    g = 0
    y = 0
    while y < m:
        c = 0
        wm = 0
        mm = 0
        sm = 0
        nm = 0
        ob = 0
        while y + c < m and c < lanes:
            x = order[y + c]
            w2, m2, s2 = max(wm, W[x]), max(mm, M[x]), max(sm, S[x])
            if c >= 1 and band_plan(w2, m2, s2, nm + NM[x], ob + OB[x], c + 1, isz,
                                     band)[0] > cap:
                break
            wm, mm, sm = w2, m2, s2
            nm += NM[x]
            ob += OB[x]
            c += 1
        if c > vec and y + c < m:
            c -= c % vec
        wm = 0
        mm = 0
        sm = 0
        nm = 0
        for z in range(y, y + c):
            x = order[z]
            wm, mm, sm = max(wm, W[x]), max(mm, M[x]), max(sm, S[x])
            nm += NM[x]
        starts[g] = y
        bh[g] = band_plan(wm, mm, sm, nm, 0, c, isz, band)[1]
        g += 1
        y += c
    starts[g] = m
    return order, starts[:g + 1], bh[:g]


@numba.njit(inline="always", **NJIT)
def _unreachable(H, F, neg):
    """Every entry of the lane-type rows ``H`` and ``F`` unreachable."""
    h = H.reshape(H.size)
    f = F.reshape(F.size)
    for x in range(h.size):
        h[x] = neg
        f[x] = neg


@numba.njit(**NJIT)
def _band_columns(L, la, prog, rd, sc, W, Bh, nb, slack, sh):
    """Per row band ``b`` (rows ``b Bh + 1 .. b Bh + Bh``, its top row from band ``b - 1``)
    the group columns ``clo[b]..chi[b]`` it computes (lane ``l``'s window column ``w`` is
    group column ``w + sh[l]``): with ``slack``, the first and last where some lane's band
    (:func:`s2g.trace.common.window_band`, from the lane's slack ``a`` x rows - score,
    narrowed to the rows the pruned scoring pass kept where the read has them: ``rd``'s
    bands, :func:`s2g.variants.pruned.align_windows`; they hold every optimal alignment
    of the window, the same argument) meets those rows or band 0's top row; otherwise
    every column."""
    lk, rows, wl, pw, pe, pm, me = la
    p_col, p_kind, p_mpa, p_mpn, p_mrank, p_store, mp_slot, mp_wcol = prog
    codes, offs, idx, score, end_i, end_j, col_lo, pb = rd
    pb_off, pb_w, pb_rows = pb
    a = np.int64(sc[0])
    e = np.int64(sc[3])
    clo = np.zeros(nb, np.int64)
    chi = np.full(nb, np.int64(W - 1))
    if not slack:
        return clo, chi
    clo[:] = W
    chi[:] = -1
    for l in range(L):
        R = np.int64(rows[l])
        sl = max(np.int64(0), a * R - np.int64(score[idx[lk[l]]]))
        n = wl[l]
        bl = np.empty(n, np.int64)
        bh = np.empty(n, np.int64)
        window_band(p_kind[pw[l]:pe[l]], p_mpa[pw[l]:pe[l]], p_mpn[pw[l]:pe[l]],
                    mp_wcol[pm[l]:me[l]], R, sl // max(e, 1), sl // max(a + e, 1), bl, bh)
        r = idx[lk[l]]
        if pb_off[r] >= 0:                   # the scoring pass's kept rows: tighter
            x0 = pb_off[r]
            wr = pb_w[r]
            for w in range(n):
                c = np.int64(p_col[pw[l] + w]) - col_lo[r]
                if 0 <= c < wr:
                    bl[w] = max(bl[w], np.int64(pb_rows[x0 + c]))
                    bh[w] = min(bh[w], np.int64(pb_rows[x0 + wr + c]))
                else:
                    bh[w] = -1
        for w in range(n):
            if bh[w] < bl[w]:
                continue
            for b in range(max(np.int64(0), (bl[w] - 1) // Bh), min(nb - 1, bh[w] // Bh) + 1):
                clo[b] = min(clo[b], w + sh[l])
                chi[b] = max(chi[b], w + sh[l])
    return clo, chi


@numba.njit(**NJIT)
def _band_group(L, Lv, la, nmg, dims, bufs, rd, gl, prog, mode, sc, out, slack):
    """One group of long windows in lanes with row bands:
    :func:`s2g.trace.scalar.traceback_read`'s row checkpoints in the lane layout, every
    output identical to it.

    1. Checkpoint pass: the lockstep DP over every column and all rows, as
       :func:`s2g.trace.lanes._lane_worker`'s but without direction bytes
       (:func:`ck_column`), saving H and F of every ``Bh``-th row of every column
       (``ckH/ckF[column, row // Bh, lane]``);
       merges and slot stores over all rows (the values only: a merge's choices come
       with its band). Then each lane's end cell is checked.
    2. Bands from the bottom up: band ``b`` (rows ``b Bh .. b Bh + Bh``) is recomputed,
       for the lanes whose walk needs it next and only up to the rightmost column those
       walks stand at, from the checkpoints at its top row (:func:`tb_column`), with
       direction bytes, merge choices and band-high slots; then each such lane walks on
       until it leaves the band upward or ends (:func:`lane_walk`). A walk only goes up,
       so one sweep of the bands serves every lane; a lane done, or whose walk starts in
       a band above, only rides along in the vector pass (no merges, no stores).

    The vector passes run ``Lv >= L`` lanes (:func:`padded`); lanes ``L..Lv-1`` compute
    padding. Buffers (the worker's, grown to :func:`band_plan`'s sizes): ``tbuf`` lane
    type, ``dbuf`` direction bytes, ``cbuf`` int16 choices, ``obuf``/``jbuf`` per-lane
    walks. ``la``: the group's lane arrays (``L`` lanes), ``nmg``: merges with a list per
    lane.

    ``slack`` (knob ``tb_band``): each row band, in both passes, computes only the columns
    ``clo[b]..chi[b]`` where some lane's slack band (:func:`s2g.trace.common.window_band`:
    the rows a cell of an optimal alignment ending at its end cell can take) meets its
    rows; the rest are unreachable (checkpoints below them, the column before the first,
    predecessors before it in merges). Every cell of every optimal alignment ending at the
    end cell is inside, and so is every best prefix of such a cell (it ends an optimal
    alignment too), so every value the walk compares, and every choice, is the whole
    window's (the GPU's bands, :func:`s2g.trace.gpu_program.band_rows`, argue the same).
    """
    lk, rows, wl, pw, pe, pm, me = la
    M, W, S, Bh = dims
    tbuf, dbuf, cbuf, obuf, jbuf = bufs
    codes, offs, idx, score, end_i, end_j, col_lo, _pb = rd
    base, gcode, node_start, pred_ptr, pred_idx = gl
    a, mb, o, e, neg, slim = sc
    oo, co, st, start, cells, summary = out
    run_op, run_len, n_runs, path, n_path, geo, counts = summary
    p_col, p_kind, p_mpa, p_mpn, p_mrank, p_store, mp_slot, mp_wcol = prog
    z = cast(0, a)
    oe = cast(o + e, a)
    floor = z if mode == LOCAL else neg
    ls = (a, mb, oe, e, floor, slim, neg, z)
    gn = cast(GRAPH_N, a)
    pad = cast(PAD_CODE, a)
    R = M + 1
    Rb = Bh + 1
    nck = M // Bh + 1
    Mq = max(M, 1)
    nb = (M + Bh - 1) // Bh if M > 0 else 1
    # ---- carve the buffers (sizes as band_plan counts them)
    x0 = 0
    Q = tbuf[x0:x0 + Mq * Lv].reshape((Mq, Lv))
    x0 += Mq * Lv
    ckH = tbuf[x0:x0 + W * nck * Lv].reshape((W, nck, Lv))
    x0 += W * nck * Lv
    ckF = tbuf[x0:x0 + W * nck * Lv].reshape((W, nck, Lv))
    x0 += W * nck * Lv
    Hb = tbuf[x0:x0 + 2 * Rb * Lv].reshape((2, Rb, Lv))
    x0 += 2 * Rb * Lv
    Xb = tbuf[x0:x0 + 2 * Rb * Lv].reshape((2, Rb, Lv))
    x0 += 2 * Rb * Lv
    SHb = tbuf[x0:x0 + L * S * Rb].reshape((L, S, Rb))
    x0 += L * S * Rb
    SXb = tbuf[x0:x0 + L * S * Rb].reshape((L, S, Rb))
    x0 += L * S * Rb
    VH = tbuf[x0:x0 + R]
    VX = tbuf[x0 + R:x0 + 2 * R]
    th = tbuf[x0 + 2 * R:x0 + 2 * R + Rb]
    tx = tbuf[x0 + 2 * R + Rb:x0 + 2 * R + 2 * Rb]
    D = dbuf[:W * Rb * Lv].reshape((W, Rb, Lv))
    coff = np.zeros(L + 1, np.int64)         # band merge choices: Rb rows per merge
    obo = np.zeros(L + 1, np.int64)          # per-lane walk buffers
    for l in range(L):
        coff[l + 1] = coff[l] + nmg[l] * Rb
        obo[l + 1] = obo[l] + oo[lk[l] + 1] - oo[lk[l]]
    nc2 = max(coff[L], 1)
    DC = cbuf[:nc2]
    EC = cbuf[nc2:2 * nc2]
    fdc = cbuf[2 * nc2:2 * nc2 + Rb]         # the checkpoint pass's merges: choices unused
    fec = cbuf[2 * nc2 + Rb:2 * nc2 + 2 * Rb]
    G = np.full(Lv, gn)                      # padding lanes keep GRAPH_N
    hup = np.empty(Lv, Q.dtype)
    fp = np.empty(Lv, Q.dtype)
    dH = np.empty(Lv, Q.dtype)               # the last band's bottom row: kept nowhere
    dF = np.empty(Lv, Q.dtype)
    endv = np.zeros(L, np.int64)
    for i in range(Mq):
        for l in range(Lv):
            Q[i, l] = pad
    for l in range(L):
        q0 = offs[idx[lk[l]]]
        for i in range(rows[l]):
            Q[i, l] = cast(codes[q0 + i], a)
    for i in range(R):
        vh = 0 if (mode == LOCAL or i == 0) else -(o + e * i)
        VH[i] = cast(vh, a)
        VX[i] = cast(vh - o - e, a)
    # lanes right-aligned: lane l's window column w is group column w + sh[l], so that
    # every lane's window ends at the group's last column, where the bands below (each
    # anchored at its lane's end cell) line up across lanes of different widths
    sh = np.empty(L, np.int64)
    for l in range(L):
        sh[l] = W - wl[l]
    clo, chi = _band_columns(L, la, prog, rd, sc, W, Bh, nb, slack, sh)
    # ---- 1. checkpoint pass: the bands top down, each over its columns from the
    # checkpoints at its top row (written by the band above), so that the two columns
    # and the slots in use are one band high (cache-resident) rather than whole columns
    for b in range(nb):
        blo = b * Bh
        bhi = min(blo + Bh, M)
        VHb = VH[blo:]
        VXb = VX[blo:]
        _unreachable(Hb[1], Xb[1], neg)          # before the band's first column
        if b + 1 < nck:                          # the next band's top row outside its columns
            for k in range(W):
                if k < clo[b] or k > chi[b]:
                    _unreachable(ckH[k, b + 1], ckF[k, b + 1], neg)
        cur = 0
        for k in range(clo[b], chi[b] + 1):
            PH = Hb[1 - cur]
            PX = Xb[1 - cur]
            H = Hb[cur]
            X = Xb[cur]
            for l in range(L):
                if k < sh[l]:
                    G[l] = gn
                    continue
                w = pw[l] + k - sh[l]
                G[l] = cast(gcode[p_col[w]], a)
                if p_kind[w] == K_CONT or (rows[l] <= blo and b > 0):
                    continue
                Rl = min(bhi, rows[l]) - blo + 1
                virt = p_kind[w] == K_VIRT
                if p_mpn[w] == 0:
                    for i in range(Rl):
                        PH[i, l] = VHb[i] if virt else neg
                        PX[i, l] = VXb[i] if virt else neg
                    continue
                e0 = pm[l] + p_mpa[w]
                lane_merge(l, Rl, virt, p_mpn[w], mp_slot[e0:e0 + p_mpn[w]], (SHb, SXb),
                           (VHb, VXb), neg, PH, PX, fdc, fec, (th, tx), mode == LOCAL,
                           (mp_wcol[e0:e0 + p_mpn[w]], clo[b] - sh[l]))
            if b + 1 < nck:
                ck_column(Q, blo, bhi, Lv, G, PH, PX, H, X, (hup, fp), (ckH[k, b], ckF[k, b]),
                          mode, ls, (ckH[k, b + 1], ckF[k, b + 1]))
            else:
                ck_column(Q, blo, bhi, Lv, G, PH, PX, H, X, (hup, fp), (ckH[k, b], ckF[k, b]),
                          mode, ls, (dH, dF))
            for l in range(L):
                if k < sh[l] or (rows[l] <= blo and b > 0):
                    continue
                s = p_store[pw[l] + k - sh[l]]
                if s >= 0:
                    hs = SHb[l, s]
                    xs = SXb[l, s]
                    for i in range(min(bhi, rows[l]) - blo + 1):
                        hs[i] = H[i, l]
                        xs[i] = X[i, l]
                if k == W - 1 and rows[l] <= bhi:
                    endv[l] = H[rows[l] - blo, l]
            cur = 1 - cur
    # ---- end cells; walks start at (last column, end row) in state H
    wc = np.zeros(L, np.int64)
    ic = np.zeros(L, np.int64)
    sw = np.zeros(L, np.int64)              # walk states
    nop = np.zeros(L, np.int64)
    ncl = np.zeros(L, np.int64)
    done = np.zeros(L, np.bool_)
    act = np.zeros(L, np.bool_)
    for l in range(L):
        k = lk[l]
        cells[k] = wl[l] * (rows[l] + 1)
        if endv[l] != score[idx[k]]:
            st[k] = ST_MISMATCH
            done[l] = True
        wc[l] = wl[l] - 1
        ic[l] = rows[l]
    # ---- 2. bands, bottom up
    for b in range(nb - 1, -1, -1):
        blo = b * Bh
        bhi = min(blo + Bh, M)
        kmax = -1
        for l in range(L):
            # traceback_read's band for row i: ((i - 1) // Bh) x Bh
            act[l] = not done[l] and (ic[l] - 1 if ic[l] > 0 else 0) // Bh == b
            if act[l]:
                kmax = max(kmax, wc[l] + sh[l])
        if kmax < 0:
            continue
        VHb = VH[blo:]
        VXb = VX[blo:]
        _unreachable(Hb[1], Xb[1], neg)
        cur = 0
        for k in range(clo[b], min(kmax, chi[b]) + 1):
            PH = Hb[1 - cur]
            PX = Xb[1 - cur]
            H = Hb[cur]
            X = Xb[cur]
            for l in range(L):
                if k < sh[l]:
                    G[l] = gn
                    continue
                w = pw[l] + k - sh[l]
                G[l] = cast(gcode[p_col[w]], a)
                if p_kind[w] == K_CONT or not act[l] or k - sh[l] > wc[l]:
                    continue
                Rl = min(bhi, rows[l]) - blo + 1
                virt = p_kind[w] == K_VIRT
                if p_mpn[w] == 0:
                    for i in range(Rl):
                        PH[i, l] = VHb[i] if virt else neg
                        PX[i, l] = VXb[i] if virt else neg
                    continue
                c0 = coff[l] + p_mrank[w] * Rb
                e0 = pm[l] + p_mpa[w]
                lane_merge(l, Rl, virt, p_mpn[w], mp_slot[e0:e0 + p_mpn[w]], (SHb, SXb),
                           (VHb, VXb), neg, PH, PX, DC[c0:c0 + Rl], EC[c0:c0 + Rl], (th, tx),
                           mode == LOCAL, (mp_wcol[e0:e0 + p_mpn[w]], clo[b] - sh[l]))
            tb_column(Q, blo, bhi, Lv, G, PH, PX, H, X, D[k], (hup, fp), (ckH[k, b], ckF[k, b]),
                      mode, ls)
            for l in range(L):
                if k < sh[l] or not act[l] or k - sh[l] > wc[l]:
                    continue
                s = p_store[pw[l] + k - sh[l]]
                if s >= 0:
                    hs = SHb[l, s]
                    xs = SXb[l, s]
                    for i in range(min(bhi, rows[l]) - blo + 1):
                        hs[i] = H[i, l]
                        xs[i] = X[i, l]
            cur = 1 - cur
        for l in range(L):
            if not act[l]:
                continue
            k = lk[l]
            r = idx[k]
            ops = obuf[obo[l]:obo[l + 1]]
            cols = jbuf[obo[l]:obo[l + 1]]
            wc[l], ic[l], sw[l], nop[l], ncl[l], fin = lane_walk(
                l, D[sh[l]:], blo, (wc[l], ic[l], sw[l], nop[l], ncl[l]), mode,
                (codes, offs[r]), base,
                (p_col[pw[l]:pe[l]], p_kind[pw[l]:pe[l]], p_mrank[pw[l]:pe[l]],
                 p_mpa[pw[l]:pe[l]], mp_wcol[pm[l]:me[l]]), (DC, EC, coff[l], Rb), (ops, cols))
            if fin:
                done[l] = True
                st[k] = ST_OK
                start[k] = ic[l]
                summarize(k, ops[:nop[l]], cols[:ncl[l]], end_j[r], node_start, oo, co, run_op,
                          run_len, n_runs, path, n_path, geo, counts)



@numba.njit(**NJIT)
def _band_worker(t, n_threads, order, batch, lanes, rd, gl, mode, sc, lim, out, slack):
    """:func:`s2g.trace.lanes._lane_worker`'s second pass (same arguments): super-batches
    of the reads it gave status ST_BAND, their programs again, groups of long windows
    (:func:`_band_groups`) traced in row bands (:func:`_band_group`). A read whose window
    no longer takes the bands (none: the same limits decide) would go to traceback_read
    (ST_DEFER)."""
    a, mb, o, e, neg, slim = sc
    max_cells, lane_cells, cap, band_cap, band_h = lim
    oo, co, st, start, cells, summary = out
    z = cast(0, a)
    lt = np.full(1, z)                       # the lane type, for np.empty
    prog, brows, bwl, bpw, bpm, bnsl, bnmg, bnd = batch_arrays(batch)
    wbd = np.zeros(batch, np.int64)          # window columns of the banded reads
    bob = np.zeros(batch, np.int64)
    lk, rows, wl, pw, pe, pm, me = lane_arrays(lanes)     # per lane of a group
    lnm = np.zeros(lanes, np.int64)
    tbuf = np.empty(0, lt.dtype)
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
        nbd = 0
        for x in range(nb):
            if bwl[x] > 0 and not bnd[x]:
                st[ks[x]] = ST_DEFER
            wbd[x] = bwl[x] if bnd[x] else 0
            bob[x] = oo[ks[x] + 1] - oo[ks[x]]
            nbd += bnd[x]
        if nbd > 0:
            border, bstart, bbh = _band_groups(wbd[:nb], brows[:nb], bnsl[:nb], bnmg[:nb],
                                               bob[:nb], lanes, vec, band_cap, isz, band_h)
            for gi in range(len(bstart) - 1):
                L = bstart[gi + 1] - bstart[gi]
                sel = border[bstart[gi]:bstart[gi + 1]]
                M, W, S = take_group(sel, ks, brows, bwl, bpw, bpm, bnsl, lk, rows, wl, pw, pe,
                                     pm, me)
                nm = 0
                obs = 0
                for l in range(L):
                    lnm[l] = bnmg[sel[l]]
                    nm += lnm[l]
                    obs += bob[sel[l]]
                Bh = bbh[gi]
                Lv = padded(L, isz)
                nt, nd, nc, no = band_sizes(W, M, S, nm, obs, L, Lv, Bh)
                tbuf = room(tbuf, nt)
                dbuf = room(dbuf, nd)
                cbuf = room(cbuf, nc)
                obuf = room(obuf, no)
                jbuf = room(jbuf, no)
                _band_group(L, Lv, (lk[:L], rows[:L], wl[:L], pw[:L], pe[:L], pm[:L], me[:L]),
                            lnm[:L], (M, W, S, Bh), (tbuf, dbuf, cbuf, obuf, jbuf), rd, gl, prog,
                            mode, sc, out, slack)


@numba.njit(parallel=True, **NJIT)
def run_bands(order, batch, lanes, n_threads, rd, gl, mode, sc, lim, out, slack):
    """:func:`_band_worker` on ``n_threads`` threads (tuples unpacked and rebuilt in the
    loop, as :func:`s2g.trace.lanes.run_lanes`)."""
    codes, offs, idx, score, end_i, end_j, col_lo, _pb = rd
    base, gcode, node_start, pred_ptr, pred_idx = gl
    a, mb, o, e, neg, slim = sc
    max_cells, lane_cells, cap, band_cap, band_h = lim
    oo, co, st, start, cells, summary = out
    run_op, run_len, n_runs, path, n_path, geo, counts = summary
    for t in numba.prange(n_threads):
        # an int64 index (uint64 in the loop body would compile the worker twice)
        _band_worker(np.int64(t), n_threads, order, batch, lanes,
                     (codes, offs, idx, score, end_i, end_j, col_lo, _pb),
                     (base, gcode, node_start, pred_ptr, pred_idx), mode,
                     (a, mb, o, e, neg, slim), (max_cells, lane_cells, cap, band_cap, band_h),
                     (oo, co, st, start, cells,
                      (run_op, run_len, n_runs, path, n_path, geo, counts)), slack)
