"""The lane traceback's vector kernels: one window column of every lane of a group
(:func:`tb_column`, with direction bytes; :func:`ck_column`, the row bands' checkpoint
pass), a lane's merge at a node-first column (:func:`lane_merge`), and a lane's walk back
(:func:`lane_walk`). :mod:`s2g.trace.lanes` and :mod:`s2g.trace.bands` run them.

The same window DP as :func:`s2g.trace.scalar.traceback_read`, for many reads at once in
the simd variant's lane layout (s2g/variants/simd.py): a group of reads runs its windows
in lockstep, every DP vector a [row][lane] array with the lane loop innermost.

Tuples (Numba passes them; the callee unpacks them at its top; the kernels here are
inlined, so LLVM sees the same code as with flat arguments): lane scoring ``ls = (a, mb,
oe, e, floor, slim, neg, z)`` in the lane type (``mb = -b``, ``oe = o + e``; ``floor``: 0
in local mode, else ``neg``; ``slim``: see :func:`_lane_cell`; ``z``: 0), a row's
scratch ``row = (hup, fp)`` (H and F one row up), a band's top checkpoints ``top = (cH,
cF)``, a merge's window slots ``slots = (SH, SX)``, virtual column ``vcol = (VH, VX)`` and
scratch ``tmp = (th, tx)``.
"""
from __future__ import annotations

import numba
import numpy as np

from .._numba import NJIT
from ..dp import E_EXT, F_EXT, GLOBAL, H_DEL, H_DIAG, H_INS, H_START, LOCAL
from ..lanes import cast, vector_op_counts
from .common import K_CONT, OP_D, OP_EQ, OP_I, OP_X

#: lane kernel direction bit 2: this cell's X = max(H - o - e, E - e) took E - e (so a
#: deletion that reaches the cell from a successor extends). traceback_read keeps the
#: same fact at the successor (E_EXT); the lane walk reads it one column later
X_EXT = E_EXT


@numba.njit(inline="always", **NJIT)
def _lane_cell(hu, fu, ev, ph, qc, gc, a, mb, oe, e, floor, slim, z):
    """One cell of every lane's column in the lane type (the simd variant's ``_column``
    arithmetic): ``(H, F, X, direction byte)`` from H and F one row up (``hu``, ``fu``),
    this column's E (``ev``) and the diagonal ``ph``. The byte: H's source in
    :func:`s2g.trace.common.tb_cell`'s tie order (diagonal, deletion, insertion; local
    start at <= 0), ``X_EXT`` (X = max(H - o - e, E - e) took E - e) and ``F_EXT``.
    ``slim``: 0 in local mode, the lane type's minimum otherwise (never reached: no
    start). A caller that drops the byte leaves its selects to dead-code elimination."""
    fo = cast(hu - oe, z)
    fx = cast(fu - e, z)
    fv = max(fo, fx)
    dg = cast(ph + (a if qc == gc else mb), z)
    h1 = max(dg, ev)
    h2 = max(h1, fv)
    h = max(h2, floor)
    ho = cast(h - oe, z)
    ex = cast(ev - e, z)
    u0 = np.uint8(0)
    d = np.uint8(H_DEL) if ev > dg else np.uint8(H_DIAG)
    d = np.uint8(H_INS) if fv > h1 else d
    d = np.uint8(H_START) if h2 <= slim else d
    d = np.uint8(d | (np.uint8(X_EXT) if ex > ho else u0))
    d = np.uint8(d | (np.uint8(F_EXT) if fx > fo else u0))
    return h, fv, max(ho, ex), d


@numba.njit(inline="always", **NJIT)
def _band_top(lo, L, PX, H, X, D, rec, row, top, mode, ls):
    """Row ``lo`` of every lane's column (index 0): the mode's row 0 when ``lo == 0``
    (global: the deletion from the predecessors, ``PX[0]``), else the checkpoint H
    ``cH[l]`` and F ``cF[l]`` (``top``); X and the direction byte of a checkpoint row are
    never read (the walk leaves a band before it reads them, :func:`lane_walk`). Sets
    ``hup``/``fp`` (H and F one row up) for the rows below; the byte only with ``rec``."""
    hup, fp = row
    cH, cF = top
    a, mb, oe, e, floor, slim, neg, z = ls
    if lo > 0:
        for l in range(L):
            H[0, l] = cH[l]
            X[0, l] = neg
            hup[l] = cH[l]
            fp[l] = cF[l]
            if rec:
                D[0, l] = 0
    elif mode == GLOBAL:
        for l in range(L):
            h0 = PX[0, l]
            H[0, l] = h0
            ho = cast(h0 - oe, z)
            ex = cast(h0 - e, z)
            X[0, l] = max(ho, ex)
            hup[l] = h0
            fp[l] = neg
            if rec:
                D[0, l] = np.uint8(H_DEL | X_EXT) if ex > ho else np.uint8(H_DEL)
    else:
        mo = cast(z - oe, z)
        for l in range(L):
            H[0, l] = z
            X[0, l] = mo
            hup[l] = z
            fp[l] = neg
            if rec:
                D[0, l] = H_START


@numba.njit(inline="always", **NJIT)
def tb_column(Q, lo, hi, L, G, PH, PX, H, X, D, row, top, mode, ls):
    """:func:`s2g.trace.scalar._band_column` on every lane at once: rows ``lo..hi`` (index
    ``t = i - lo``) of each lane's column, each cell's direction byte into ``D``
    (:func:`_lane_cell`). ``PH``/``PX``: predecessor vectors (``PX`` = this column's E);
    writes ``H`` and ``X = max(H - o - e, E - e)``. Row ``lo``: :func:`_band_top`.
    """
    hup, fp = row
    a, mb, oe, e, floor, slim, neg, z = ls
    _band_top(lo, L, PX, H, X, D, True, row, top, mode, ls)
    Qb = Q[lo:]
    for t in range(1, hi - lo + 1):
        # the hot loop: lane-type operands, uint8 codes built by selects; F and H of the
        # row above run through fp[]/hup[] (a load of H[t-1] beside the store to H[t]
        # defeats LLVM's alias check)
        for l in range(L):
            h, fv, x, d = _lane_cell(hup[l], fp[l], PX[t, l], PH[t - 1, l], Qb[t - 1, l], G[l],
                                     a, mb, oe, e, floor, slim, z)
            X[t, l] = x
            H[t, l] = h
            D[t, l] = d
            hup[l] = h
            fp[l] = fv


@numba.njit(inline="always", **NJIT)
def ck_column(Q, lo, hi, L, G, PH, PX, H, X, row, top, mode, ls, nxt):
    """The checkpoint pass's column (:func:`s2g.trace.bands._band_group`): :func:`tb_column`
    without direction bytes, then H and F of row ``hi`` (the next band's top row) into
    ``nxt = (nH, nF)``."""
    hup, fp = row
    a, mb, oe, e, floor, slim, neg, z = ls
    nH, nF = nxt
    _band_top(lo, L, PX, H, X, H, False, row, top, mode, ls)
    Qb = Q[lo:]
    for t in range(1, hi - lo + 1):
        for l in range(L):
            h, fv, x, _ = _lane_cell(hup[l], fp[l], PX[t, l], PH[t - 1, l], Qb[t - 1, l], G[l],
                                     a, mb, oe, e, floor, slim, z)
            X[t, l] = x
            H[t, l] = h
            hup[l] = h
            fp[l] = fv
    for l in range(L):
        nH[l] = hup[l]
        nF[l] = fp[l]


@numba.njit(inline="always", **NJIT)
def lane_merge(l, Rl, virt, n, ent, slots, vcol, neg, PH, PX, dc, ec, tmp, local, skip):
    """Lane ``l``'s merge at a node-first column, rows ``0..Rl-1``: from the virtual
    column (``virt``; ``vcol = (VH, VX)``) or unreachable, then the ``n`` in-window
    predecessors whose last columns are in the lane's slots ``ent[0..n-1]`` (ascending node
    order; ``slots = (SH, SX)``). A real predecessor wins a tie with the virtual column, the
    lowest index among real ones (:func:`s2g.trace.scalar._sweep`'s rule); ``dc``/``ec``
    get the list position that gave the diagonal and the deletion (-1: the start). The
    rows are contiguous in the lane-major slots ``SH[l, s]``, so the merge runs vectorised
    down the rows; the result is scattered into the lane's column of ``PH``/``PX``.
    ``local``: the first predecessor replaces the virtual column outright (local H >= 0
    and X >= -o-e, the virtual column's values, and a real predecessor wins ties), which
    saves one pass. ``tmp = (th, tx)``: scratch. ``skip = (wcol, cut)``: predecessors whose
    last window column ``wcol[t]`` is before ``cut`` are unreachable (not computed in this row band,
    :func:`s2g.trace.bands._band_group`'s slack band; their slots hold other rows): left
    out of the fold, their list positions kept.
    """
    SH, SX = slots
    VH, VX = vcol
    th, tx = tmp
    wcol, cut = skip
    t0 = 0
    while t0 < n and wcol[t0] < cut:
        t0 += 1
    if local and t0 < n:
        hs = SH[l, ent[t0]]
        xs = SX[l, ent[t0]]
        tt = np.int16(t0)
        for i in range(Rl):
            th[i] = hs[i]
            tx[i] = xs[i]
            dc[i] = tt
            ec[i] = tt
        t0 += 1
    else:
        for i in range(Rl):
            th[i] = VH[i] if virt else neg
            tx[i] = VX[i] if virt else neg
            dc[i] = -1
            ec[i] = -1
    for t in range(t0, n):
        if wcol[t] < cut:
            continue
        hs = SH[l, ent[t]]
        xs = SX[l, ent[t]]
        tt = np.int16(t)
        for i in range(Rl):
            hp = hs[i]
            ph = th[i]
            take = (hp > ph) | ((hp == ph) & (dc[i] < 0))
            th[i] = hp if take else ph
            dc[i] = tt if take else dc[i]
            xp = xs[i]
            px = tx[i]
            take = (xp > px) | ((xp == px) & (ec[i] < 0) & (xp > neg))
            tx[i] = xp if take else px
            ec[i] = tt if take else ec[i]
    for i in range(Rl):
        PH[i, l] = th[i]
        PX[i, l] = tx[i]



@numba.njit(**NJIT)
def lane_walk(l, D, blo, pos, mode, read, base, prg, ch, out):
    """:func:`s2g.trace.scalar.traceback_read`'s walk of lane ``l`` from ``pos = (w, i,
    state, no, nc)``: window column ``w``, row ``i`` in ``state`` (0 H, 1 E, 2 F) with
    ``no``/``nc`` ops and columns already written (reversed) into ``out = (ops, cols)``,
    on the lane program ``prg = (p_col, p_kind, p_mrank, p_mpa, mp_wcol)`` (read-local
    arrays), the read's codes ``read = (codes, q0)`` (its first base at ``codes[q0]``),
    the direction bytes ``D[w, i - blo, l]`` and merge choices ``ch = (DC, EC, coff,
    Rc)``: ``DC/EC[coff + rank x Rc + i - blo]`` of rows ``blo..``. With ``blo > 0`` (a row
    band, :func:`s2g.trace.bands._band_group`) the walk pauses where it would read row
    ``blo`` or above: at a step's start with ``i <= blo`` (where traceback_read enters the
    band above). Rows only decrease, and a band's top row is read only as a merge choice
    after a diagonal step, so rows ``blo + 1..`` and that choice suffice. Returns (w, i,
    state, no, nc, done); done: ``i`` is the start row. The deletion state reads X_EXT of
    the cell it moves to (where traceback_read reads E_EXT of the cell it leaves: the same
    bit)."""
    w, i, state, no, nc = pos
    codes, q0 = read
    p_col, p_kind, p_mrank, p_mpa, mp_wcol = prg
    DC, EC, coff, Rc = ch
    ops, cols = out
    while True:
        if state == 0 and i == 0 and mode != GLOBAL:
            return w, i, state, no, nc, True
        if blo > 0 and i <= blo:
            return w, i, state, no, nc, False
        d = D[w, i - blo, l]
        if state == 2:
            ops[no] = OP_I
            no += 1
            state = 2 if (d & F_EXT) else 0
            i -= 1
            continue
        if state == 0:
            src = d & 3
            if src == H_START:
                return w, i, state, no, nc, True
            if src == H_DEL:
                state = 1
                continue
            if src == H_INS:
                state = 2
                continue
            j = p_col[w]
            qb = codes[q0 + i - 1]
            ops[no] = OP_EQ if (qb == base[j] and qb < 4) else OP_X
            no += 1
            cols[nc] = j
            nc += 1
            i -= 1
        else:
            ops[no] = OP_D
            no += 1
            cols[nc] = p_col[w]
            nc += 1
        if p_kind[w] == K_CONT:
            w -= 1
        else:
            mr = p_mrank[w]
            ch = -1
            if mr >= 0:
                x = coff + mr * Rc + i - blo
                ch = DC[x] if state == 0 else EC[x]
            if ch < 0:
                # into the virtual column: local starts here; otherwise the rest of the
                # read is inserted before the graph walk
                if mode != LOCAL:
                    for _ in range(i):
                        ops[no] = OP_I
                        no += 1
                    i = 0
                return w, i, state, no, nc, True
            w = mp_wcol[p_mpa[w] + ch]
        if state == 1:
            state = 1 if (D[w, i - blo, l] & X_EXT) else 0


def _asm_probe(Q, M, L, G, cols, D, row, mode, ls, merge, nxt):
    """The lane traceback's vector loops alone (for :func:`asm_report`): ``cols = (PH, PX,
    H, X)``, ``merge = (slots, vcol, ent, DC, EC, tmp)``."""
    PH, PX, H, X = cols
    a, mb, oe, e, floor, slim, neg, z = ls
    slots, vcol, ent, DC, EC, tmp = merge
    lane_merge(0, M + 1, True, 2, ent, slots, vcol, neg, PH, PX, DC, EC, tmp, False, (ent, 0))
    tb_column(Q, 0, M, L, G, PH, PX, H, X, D, row, row, mode, ls)
    ck_column(Q, 0, M, L, G, PH, PX, H, X, row, row, mode, ls, nxt)


def asm_report(dtype=np.int16, keep=None):
    """Counts of vector instructions (mnemonic, register width) in the lane traceback's
    column loops and merge (:func:`tb_column`, :func:`ck_column`, :func:`lane_merge`) for
    lane type ``dtype``, compiled alone (uncached) so that no other loop adds to the counts.
    ``keep``: a list to append the assembly text to."""
    T = dtype
    probe = numba.njit(nogil=True)(_asm_probe)
    R, L = 3, 64
    m2 = lambda *sh: np.zeros(sh, T)      # noqa: E731
    ls = (T(2), T(-4), T(6), T(2), T(0), T(0), T(-15000), T(0))
    merge = ((m2(L, 2, R), m2(L, 2, R)), (m2(R), m2(R)), np.arange(2, dtype=np.int32),
             np.zeros(R, np.int16), np.zeros(R, np.int16), (m2(R), m2(R)))
    probe(m2(2, L), 2, L, m2(L), (m2(R, L), m2(R, L), m2(R, L), m2(R, L)),
          np.zeros((R, L), np.uint8), (m2(L), m2(L)), LOCAL, ls, merge, (m2(L), m2(L)))
    asm = probe.inspect_asm(probe.signatures[0])
    if keep is not None:
        keep.append(asm)
    return vector_op_counts(asm, r"vp(?:max|min|add|sub)s?[bwdq]|vpmov[a-z0-9]+|"
                                      r"vpcmp[a-z]*[bwdq]|vpblendm[bwdq]")
