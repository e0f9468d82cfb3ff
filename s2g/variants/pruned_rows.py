"""The rows of :mod:`s2g.variants.pruned`'s pass: a row's direct sources, its deletions
along nodes and from merges, the drop of the cells that cannot reach the threshold, the
columns past the row's range its deletions still reach, and which column chunks of a row
have a kept source at all (:func:`live_chunk`; the others are skipped,
:func:`skip_chunk`)."""
from __future__ import annotations

import numba
import numpy as np

from .._numba import NJIT, NJIT_NORC
from ..dp import F_EXT
from ..scoring import NEG_INF
from .pruned_walk import INS_C, _run_rec, dir_byte, emax, merge_del, merge_diag

#: "no kept row" in a column's first-kept-row array
BIG_ROW = np.int32(1 << 30)


@numba.njit(**NJIT_NORC)
def _row_direct(q_b, base_w, Hp, Fp, H0, Fc, c0, c1, a, b, oe, e, floor):
    """H without deletions (``H0``: the diagonal from column ``c - 1``, the insertion,
    local mode's 0 through ``floor``) and F of columns ``c0..c1-1`` (``c0 >= 1``); entry
    columns are redone by the caller. Branch-free int32 with unsigned indices (a signed
    one's negative-index check kept LLVM from vectorising it: 0.37 against 2.9 ns a cell)."""
    for c in range(c0, c1):
        u = np.uintp(c)
        f = max(Hp[u] - oe, Fp[u] - e)
        s = a if base_w[u] == q_b else -b
        H0[u] = max(max(Hp[np.uintp(c - 1)] + s, f), floor)
        Fc[u] = f


@numba.njit(**NJIT_NORC)
def _run(Hc, Ec, H0, c0, c1, oe, e, M):
    """Columns ``c0..c1-1``, each reading the one before (inside a node): ``E(c) =
    max(E(c - 1) - e, H0(c - 1) - o - e)`` as a running maximum ``M`` of ``H0(c - 1) - o
    - e + e c`` (:func:`.pruned_walk.emax`, the one chain of the row), then E = M - e c
    and H = max(H0, E) for every column at once. Returns ``M``."""
    M = emax(Ec, H0, c0, c1, oe, e, M)
    e32 = np.int32(e)
    for c in range(c0, c1):
        u = np.uintp(c)
        ev = Ec[u] - e32 * np.int32(c)
        Hc[u] = max(H0[u], ev)
        Ec[u] = ev
    return M


@numba.njit(**NJIT_NORC)
def _row_chain(lay, Hc, Ec, H0, c0, c1, x, pev, oe, e, M, rk):
    """H and E of columns ``c0..c1-1`` (every one, kept or not): runs of columns inside
    a node by :func:`_run` (``H0`` for the H before: where ``H = E`` the term ``H - o -
    e`` is below ``E - e``, Farrar's lazy-F argument along the row), entry columns from
    their predecessors' H and E and the virtual column. ``x``: the first entry at or
    after ``c0`` (an index into ``ent``); ``M`` carried from column ``c0 - 1``. Returns
    ``M`` and ``x`` past ``c1``. ``rk`` = (recording, D, its offset, EK, the row's entry
    offset, local mode): direction bytes and an entry's deletion choice recorded
    (:mod:`.pruned_walk`)."""
    prev, ep_ptr, ep_idx, _, ent, _, _ = lay
    on, D, doff, EK, eo, loc = rk
    neg = np.int64(NEG_INF)
    c = c0
    while c < c1:
        nxt = ent[x] if x < len(ent) else c1
        if nxt > c:                           # a run up to the next entry
            end = min(nxt, c1)
            if on:
                M = _run_rec(Hc, Ec, H0, c, end, oe, e, M, D, doff, loc)
            else:
                M = _run(Hc, Ec, H0, c, end, oe, e, M)
            c = end
            continue
        ev = pev                              # c is an entry
        px = False
        if on:
            ev, rank, px = merge_del(c, ep_ptr, ep_idx, Hc, Ec, ev, oe, e)
            EK[2 * (eo + x) + 1] = rank
        else:
            for k in range(ep_ptr[c], ep_ptr[c + 1]):
                p = ep_idx[k]
                ev = max(ev, max(np.int64(Hc[p]) - oe, np.int64(Ec[p]) - e))
        ev = max(ev, neg)
        Hc[c] = max(np.int64(H0[c]), ev)
        Ec[c] = ev
        if on:
            D[doff + c] = dir_byte(np.int64(D[doff + c]), np.int64(H0[c]), ev,
                                   np.int64(Hc[c]), loc, px)
        M = ev + e * c
        x += 1
        c += 1
    return M, x


@numba.njit(**NJIT_NORC)
def _row_keep(reach, walk, Hc, Ec, Fc, c0, c1, lim, ends, i, lo, kept, rlo, rhi):
    """Drop the cells of columns ``c0..c1-1`` whose H plus the bound on the rest,
    ``min(U[i], a x walk[c])`` (``lim`` = (T, U[i], a, xf)), stays below ``T``, or whose H
    is below ``xf`` (an X-drop pass's floor; NEG_INF in exact passes) (-inf);
    ``kept`` = (the kept cells' range so far, their last reader, the best cell so far:
    V0's tie rule), returned updated. One branch-free pass (selects and maxima, SIMD):
    the kept cells' first and last columns as a minimum and a maximum, the best one as
    the maximum of ``H 2^32 + (2^32 - 1 - c)`` (the highest H, then the first column;
    scanning the row for them cost ~0.5 ns a cell). ``rlo``/``rhi``: each column's first
    and last kept row so far (updated)."""
    neg = np.int32(NEG_INF)
    T, ui, a, xf = lim
    nlo, nhi, ndr, best, bi, bj = kept
    rmax = np.int64(-1)
    clo = np.int64(c1)
    chi = np.int64(-1)
    kmax = np.int64(-(1 << 62))
    low = np.int64(0xFFFFFFFF)
    for c in range(c0, c1):
        u = np.uintp(c)
        h = np.int64(Hc[u])
        k = (h + min(ui, a * walk[u]) >= T) & (h >= xf)
        Hc[u] = Hc[u] if k else neg
        Ec[u] = Ec[u] if k else neg
        Fc[u] = Fc[u] if k else neg
        rmax = max(rmax, reach[u] if k else np.int64(-1))
        cc = np.int64(c)
        clo = min(clo, cc if k else np.int64(c1))
        chi = max(chi, cc if k else np.int64(-1))
        kmax = max(kmax, (h << 32) + (low - cc) if k else np.int64(-(1 << 62)))
        rlo[u] = min(rlo[u], np.int32(i) if k else np.int32(BIG_ROW))
        rhi[u] = np.int32(i) if k else rhi[u]
    if rmax < 0:
        return nlo, nhi, ndr, best, bi, bj
    ndr = max(ndr, rmax)
    if nhi < 0:
        nlo = clo
    nhi = chi
    hmax = kmax >> 32
    if ends and hmax >= best:
        c = low - (kmax & low)
        if hmax > best or c + lo < bj:
            best, bi, bj = hmax, np.int64(i), np.int64(c + lo)
    return nlo, nhi, ndr, best, bi, bj


@numba.njit(**NJIT_NORC)
def _row_tail(lay, base_w, bufs, c, lim, W, row, sc, carry, rows, rk):
    """Columns ``c..`` of a row past ``lim0`` (what :func:`_row_direct` covered) that a
    kept cell's deletions still reach (up to ``lim``, which grows with them), one at a
    time. ``row`` = (read base, virtual PH and PE, U[i], T, ends here, i, lo),
    ``sc`` = (a, b, o + e, e, floor), ``carry`` = (E and H0 of column ``c - 1``, kept
    range and reach, best); ``rk``: :func:`_row_chain`'s. Returns (end column, kept range
    and reach, best)."""
    prev, ep_ptr, ep_idx, reach, ent, walk, _ = lay
    Hp, Fp, Hc, Ec, Fc, H0 = bufs
    q32, phv, pev, ui, T, ends, i, lo = row
    a, b, oe, e, floor = sc
    el, h0l, nlo, nhi, ndr, best, bi, bj = carry
    rlo, rhi = rows
    on, D, doff, EK, eo, loc = rk
    neg = np.int64(NEG_INF)
    while c <= lim and c < W:
        fo = np.int64(Hp[c]) - oe
        fx = np.int64(Fp[c]) - e
        f = max(fo, fx)
        Fc[c] = max(f, neg)
        s = a if base_w[c] == q32 else -b
        rd = -1
        if prev[c]:
            hd = np.int64(Hp[c - 1]) + s
        else:
            ph, rd = merge_diag(c, ep_ptr, ep_idx, Hp, phv)
            hd = ph + s
        h0 = max(hd, f)
        h0c = max(h0, floor)
        H0[c] = h0c
        re = -1
        if prev[c]:
            ev = max(el - e, h0l - oe)
            px = el - e > h0l - oe
        else:
            ev, re, px = merge_del(c, ep_ptr, ep_idx, Hc, Ec, pev, oe, e)
        ev = max(ev, neg)
        h = max(h0c, ev)
        if on:
            D[doff + c] = dir_byte((F_EXT if fx > fo else 0) | (INS_C if f > hd else 0), h0c,
                                   ev, h, loc, px)
            if not prev[c]:
                x = eo + np.searchsorted(ent, c)
                EK[2 * x] = rd
                EK[2 * x + 1] = re
        el = ev
        h0l = h0c
        if h + min(ui, a * walk[c]) >= T:
            Hc[c] = h
            Ec[c] = ev
            rlo[c] = min(rlo[c], np.int32(i))
            rhi[c] = np.int32(i)
            if c < nlo:
                nlo = c
            nhi = c
            r = reach[c]
            if r > ndr:
                ndr = r
            if r > lim:
                lim = r                       # a deletion from here may stay kept
            if ends:
                if h > best or (h == best and c + lo < bj):
                    best, bi, bj = h, np.int64(i), np.int64(c + lo)
        else:
            Hc[c] = neg
            Ec[c] = neg
            Fc[c] = neg
        c += 1
    return c, nlo, nhi, ndr, best, bi, bj


@numba.njit(**NJIT_NORC)
def live_chunk(g, cs, ce, i, lk, rhi, ent, ep_ptr, ep_idx):
    """Whether columns ``cs..ce-1`` (of grid chunk ``g``) of row ``i`` have a kept source,
    in a row where no fresh start can be kept: a kept cell of row ``i - 1`` in the chunk
    (``lk[g]``: the last row the chunk kept a cell in), column ``cs - 1`` kept in row ``i -
    1`` (the diagonal) or ``i`` (a deletion), or an entry column's predecessor kept in
    either (``rhi``: each column's last kept row). Else nothing there is kept: a value is
    kept only through kept sources (a cell's H is at most its source's less what the step
    costs, and its bound at most its source's), so the chunk is skipped
    (:func:`skip_chunk`) and the kept cells, their values and their direction bytes are
    those of the whole row's."""
    if lk[g] >= i - 1:
        return True
    if cs >= 1 and rhi[cs - 1] >= i - 1:
        return True
    for x in range(np.searchsorted(ent, cs), len(ent)):
        c = ent[x]
        if c >= ce:
            break
        for k in range(ep_ptr[c], ep_ptr[c + 1]):
            if rhi[ep_idx[k]] >= i - 1:
                return True
    return False


@numba.njit(**NJIT_NORC)
def skip_chunk(g, g0, g1, ce, par, flags, Hc, Fc, Ec, H0):
    """Row state of a skipped chunk ``g`` (columns ``g0..g1-1``, :func:`live_chunk`): its
    H and F (this row's buffers, parity ``par``) and E -inf where ``flags`` says they may
    hold a kept cell of an earlier row (``flags`` = (lk, lkp, lke): per chunk the last row
    it kept a cell in, and per buffer the row whose kept cells it may still hold, -1:
    none), and ``H0`` of its last computed column ``ce - 1``, which the next chunk's
    deletions read."""
    _, lkp, lke = flags
    neg = np.int32(NEG_INF)
    if lkp[par, g] >= 0:
        for c in range(g0, g1):
            Hc[c] = neg
            Fc[c] = neg
        lkp[par, g] = -1
    if lke[g] >= 0:
        for c in range(g0, g1):
            Ec[c] = neg
        lke[g] = -1
    H0[ce - 1] = neg


@numba.njit(**NJIT_NORC)
def mark_chunks(g0, g1, i, par, kept, flags):
    """After row ``i`` computed chunks ``g0..g1-1``: ``kept`` whether they kept a cell
    (:func:`skip_chunk`'s ``flags`` updated; a chunk that kept none holds -inf only)."""
    lk, lkp, lke = flags
    for g in range(g0, g1):
        if kept:
            lk[g] = i
            lkp[par, g] = i
            lke[g] = i
        else:
            lkp[par, g] = -1
            lke[g] = -1
