"""pruned — a long read's window DP over the cells that can still hold the optimum.

A seeded window of a 10 kbp read is ~1.5 read lengths wide: ~1.5e8 cells, of which an
alignment uses ~1e4. Here the window runs row by row (read bases) over its columns, and
a cell whose score plus an upper bound on what the rest of the read can add stays below a
threshold ``T`` is dropped (taken as unreachable, so nothing is computed from it):

* ``U[i]``: no alignment of read bases ``i..m-1`` inside the window scores more
  (:func:`hit_bounds`: ``a`` a base less ``h`` for each of the fewest error positions the
  read's q-grams spelled nowhere in the window need; with knob ``prune_hits`` off, the
  q-gram lemma of :func:`s2g.seeded.windows.qgram_bounds` per suffix, :func:`suffix_bounds`:
  ``min(a + b, o + e) / q`` a missing q-gram; ``a`` a base where the window has no q-gram
  set);
* ``walk[j]``: the longest walk from column ``j`` to the window's end (no alignment from
  there matches more bases);
* cell ``(i, j)`` is kept when ``H(i, j) + min(U[i], a walk[j]) >= T``. Each row is
  computed over the column range its kept sources reach (the previous row's kept cells,
  their successors, this row's kept cells' successors), or the whole row where a fresh
  start (local mode's 0, the virtual column) could still reach ``T``, cut where even
  ``H = a i`` could not (the walk left is too short).

**Exactness.** Every value computed is the score of a real alignment (the DP over a subset
of the sources), so it never exceeds the full DP's. A cell on an alignment scoring ``S >=
T`` has ``H + U >= S >= T`` at the full DP's value, so by induction along that alignment
every one of its cells is kept and gets its full-DP value. Hence when the best cell found
scores ``S >= T``, every cell whose full-DP score is ``S`` is found with it and nothing
scores more: the score and V0's end cell (the first column, then the smallest row) are the
full DP's. When ``S < T`` (the threshold was above the optimum), ``S`` is still a real
score, a lower bound on the optimum: the window runs again with the margin below ``U[0]``
doubled, or at ``S`` once that is higher (:func:`align_window`), until a pass holds. The
first margin is :data:`MARGIN_PER_KB`; too high a ``T`` costs a cheap narrow pass. A
``floor`` (a read's later windows: its lead window's score less 30 mismatches,
``DROP_MISMATCHES``) is the lowest ``T``: a window with nothing above it comes back as none.

The last pass records its cells' direction bytes and walks back from the best cell
(:mod:`.pruned_walk`), or keeps each column's rows, a band for the traceback.

Window semantics (virtual column, merges of in-window predecessors) are
:func:`s2g.window.align_window`'s; results equal :func:`s2g.window.align_windows_ref`
(tests/test_pruned.py). Measured in docs/variants.md.
"""
from __future__ import annotations

import math

import numba
import numpy as np

from .._numba import NJIT
from ..scoring import NEG_INF, fits_int32
from ..seeded.windows import QGRAM, _bit, _qgram_set, _roll
from ..trace.common import ST_TOO_BIG
from ..window import align_windows_ref, check_mode
from ..dp import F_EXT, LOCAL
from .pruned_rows import (BIG_ROW, _row_chain, _row_direct, _row_keep, _row_tail, live_chunk,
                          mark_chunks, skip_chunk)
from .pruned_walk import (D_START, EK_START, INS_C, AtScoreBand, _row_direct_rec,
                          dir_byte, grown, merge_diag, new_record, recordable, too_big,
                          walk_buffers, walked, walk as walk_back)

#: the first threshold is ``U[0]`` less this many ``a``s a 1,000 read bases (and
#: :data:`MARGIN_MIN` at least): 5% errors lose ~1 a a base against ~0.6 the bound sees
MARGIN_PER_KB = 60
MARGIN_MIN = 40
#: the margin grows as the bound sees a smaller share of a perfect score, ``r = U[0] /
#: (a m)`` (more errors, and the bound looser: U[0] - optimum was 78-126 a a kbp at r
#: 0.88-0.89, 5% errors; 240-280 at r 0.81-0.82, 10% errors; MHC, 2026-12-03): per kbp
#: MARGIN_PER_KB + MARGIN_SLOPE x (RATIO_AT_MIN_MARGIN - r)
MARGIN_SLOPE = 2000
RATIO_AT_MIN_MARGIN = 0.88
#: columns a row computes at a time (its H, E, F and H0 stay in the L1 cache: whole
#: 10,000-column rows ran 3x slower per cell, memory-bound); rows skip whole chunks of
#: this grid (:func:`.pruned_rows.live_chunk`): 100 MHC lead windows, one core, 512
#: columns 5.14-5.17 s, 1,024 5.25-5.74 s, 256 6.72-6.96 s. Here, not in pruned_rows:
#: Numba's cache of a function keys on its own file and keeps another module's constant.
CHUNK = 512
#: before its exact passes a window (local mode, score unknown) runs an X-drop pass: cells
#: within XDROP ``a`` of the best so far, each row over the columns its kept cells reach
#: (graph edges, as the exact passes; chunks with no kept source skipped). Its best is a
#: real alignment's score, so at most the window's: where it is within twice the margin of
#: ``U[0]`` the first exact pass runs at it (and holds), which keeps the fewest cells. 30
#: MHC lead windows, one core: 3.35e8 -> 2.74e8 cells (the X-drop passes 2.9e7 of them),
#: 1.06-1.10 -> 0.92 s recording walks. Until 2026-12-05 its rows stopped 64 columns past
#: their kept cells: a read following a branch the topological order puts further on was
#: lost (10 kbp reads at 10% errors: 7 of 30 lead windows 126-11,962 short of the optimum,
#: 6 of them then striped; without the cap 30 of 30 at the optimum, 1.44 -> 0.98 s).
XDROP = 50
#: below this r a window without a floor runs striped at once (at 10% errors even a
#: threshold at the optimum kept 12-16% of the cells, ~0.6x striped's time, and finding
#: it took 3-4 passes: 2.4x slower than striped)
MIN_RATIO = 0.84
#: the same three for :func:`hit_bounds` (knob ``prune_hits``), which sees more of the
#: errors: r 0.85-0.87 at 5% errors, 0.81-0.82 at 7.5%, 0.77-0.78 at 10% (MHC, 10 kbp)
HIT_MARGIN_PER_KB = 30
HIT_RATIO_AT_MIN_MARGIN = 0.86
HIT_MIN_RATIO = 0.79
#: a window's passes may compute at most this share of its cells; past it the window
#: runs striped (:mod:`s2g.variants.striped`, ~0.7 ns a cell against ~3 here: where the
#: bound is loose, at 10% errors, pruning kept ~70% of the lead windows' cells and ran
#: 2.4x slower than striped); 0: no limit
BUDGET = 0.2


@numba.njit(**NJIT)
def _layout(lo, hi, node_start, pred_ptr, pred_idx):
    """Window columns ``0..W-1`` (graph columns ``lo..hi-1``): ``prev[c]`` True when
    column ``c`` reads column ``c - 1`` (inside a node, or a node whose one predecessor
    is the node before it), else its in-window predecessors' last columns
    ``ep_idx[ep_ptr[c]:ep_ptr[c + 1]]`` and the virtual column; ``reach[c]`` the last
    column that reads ``c`` (``c`` where none does); ``ent`` the entry columns;
    ``walk[c]`` the longest walk from ``c`` to the window's end (bases), ``wmax`` its
    suffix maximum."""
    W = hi - lo
    prev = np.zeros(W, np.bool_)
    ep_ptr = np.zeros(W + 1, np.int64)
    v0 = np.searchsorted(node_start, lo, side="right") - 1
    v1 = np.searchsorted(node_start, hi - 1, side="right") - 1
    n_e = 0
    for v in range(v0, v1 + 1):
        n_e += pred_ptr[v + 1] - pred_ptr[v]
    ep_idx = np.empty(max(n_e, 1), np.int64)
    reach = np.arange(W).astype(np.int64)
    k_e = 0
    for v in range(v0, v1 + 1):
        pa, pb = pred_ptr[v], pred_ptr[v + 1]
        s0 = max(node_start[v], lo)
        s1 = min(node_start[v + 1], hi)
        for j in range(s0, s1):
            c = j - lo
            if j > s0 or (j > lo and pb - pa == 1 and pred_idx[pa] == v - 1):
                prev[c] = True
                reach[c - 1] = c
            elif j == node_start[v]:
                for k in range(pa, pb):
                    p = pred_idx[k]
                    if p < v0 or node_start[p + 1] - 1 < lo:
                        continue
                    pc = node_start[p + 1] - 1 - lo
                    ep_idx[k_e] = pc
                    k_e += 1
                    reach[pc] = max(reach[pc], c)
            ep_ptr[c + 1] = k_e
    ent = np.nonzero(~prev)[0].astype(np.int64)
    # the longest walk from each column to the window's end (bases, the column's own
    # included), and its suffix maximum (non-increasing: a column cut-off per row)
    walk = np.ones(W, np.int64)
    for c in range(W - 1, 0, -1):
        if prev[c]:
            walk[c - 1] = max(walk[c - 1], walk[c] + 1)
        else:
            for k in range(ep_ptr[c], ep_ptr[c + 1]):
                p = ep_idx[k]
                walk[p] = max(walk[p], walk[c] + 1)
    wmax = walk.copy()
    for c in range(W - 2, -1, -1):
        wmax[c] = max(wmax[c], wmax[c + 1])
    return prev, ep_ptr, ep_idx, reach, ent, walk, wmax


def qgram_penalty(scoring) -> float:
    """What a read q-gram spelled nowhere in the window costs per base of it in
    :func:`suffix_bounds` (``min(a + b, o + e, q (a + e)) / q``: the least an error costs,
    spread over the q-grams it touches)."""
    a, b, o, e = scoring.as_tuple()
    return min(a + b, o + e, QGRAM * (a + e)) / QGRAM


def bound_costs(scoring):
    """``pen`` of :func:`align_window`: (:func:`qgram_penalty`, :func:`hit_cost`), the
    second 0.0 where knob ``prune_hits`` is off (the q-gram count bound)."""
    from ..config import settings
    return (qgram_penalty(scoring), hit_cost(scoring) if settings().prune_hits else 0.0)


@numba.njit(**NJIT)
def missing_qgrams(q, bits, qg):
    """``out[k]``: the read q-gram ending at base ``k`` is spelled nowhere in the window
    (``bits``, its q-gram set), or holds an N; False for ``k < qg - 1``."""
    m = len(q)
    out = np.zeros(m, np.bool_)
    mask = (np.int64(1) << (2 * qg)) - 1
    key = np.int64(0)
    good = 0
    for k in range(m):
        key, good = _roll(key, good, q[k], mask)
        if k >= qg - 1:
            out[k] = good < qg or not _bit(bits, key)
    return out


def hit_cost(scoring) -> float:
    """The least an error event costs against a perfect score per read position it must
    be given in :func:`hit_bounds`: a substitution ``a + b`` (one position), a deletion
    ``o + e L`` (one point between two positions, taken as the one before it), an
    insertion of ``L`` bases ``o + (a + e) L`` (``min(L, ceil((L - 1) / q) + 1)``
    positions hit every q-gram it touches: the least per position is at ``L = 1``, ``2``
    or per ``q`` bases)."""
    a, b, o, e = scoring.as_tuple()
    return float(min(a + b, o + e, o + a + e, (o + 2 * (a + e)) / 2, QGRAM * (a + e)))


@numba.njit(**NJIT)
def hit_bounds(q, bits, have_bits, a, h, qg):
    """``U[i]`` as :func:`suffix_bounds`, tighter: the read q-grams spelled nowhere in the
    window are intervals of ``qg`` read positions, and an alignment of read bases ``i..``
    matches none of them exactly, so each holds a position of one of its error events
    (a mismatch, an inserted base, the base before a deletion). The fewest positions that
    hit every such interval inside ``[i, m)`` (intervals: greedy from the right, taking the
    start of the latest interval not yet hit, is optimal) times ``h`` (:func:`hit_cost`:
    no event costs less a position it needs) is what the bases ``i..m-1`` lose against
    ``a`` each. Errors closer than ``qg`` (counted twice here, ~once by the q-gram count)
    and q-gram shares (an error touching q of them costs its whole price once) make it
    tighter than :func:`suffix_bounds`; 100 MHC 10 kbp reads: docs/variants.md.

    Local mode (an alignment may stop at read base ``t``): the hits ``HS(i, m)`` are at
    most ``HS(i, t) + HS(t - qg + 1, m)`` (the intervals not inside ``[i, t)`` start at
    ``t - qg + 1`` or later), so ``a (t - i) - h HS(i, t) <= a t - a i - h HS(i, m) + h
    HS(t - qg + 1, m)``; ``U[i]`` takes the largest over ``t`` (a suffix maximum), which
    holds for semiglobal and global alignments (``t = m``) too."""
    m = len(q)
    U = np.empty(m + 1, np.int64)
    if not have_bits:
        for i in range(m + 1):
            U[i] = a * (m - i)
        return U
    miss = missing_qgrams(q, bits, qg)   # by the q-gram's last base
    hs = np.zeros(m + 1, np.int64)       # HS(i, m): the greedy's hits over starts >= i
    last = np.int64(m + qg)
    n = np.int64(0)
    for i in range(m - 1, -1, -1):
        if i + qg - 1 < m and miss[i + qg - 1] and last > i + qg - 1:
            n += 1
            last = i
        hs[i] = n
    # SM[x] = max over t in [x, m] of a t + h HS(t - qg + 1, m)
    sm = np.empty(m + 1, np.float64)
    run = -np.inf
    for t in range(m, -1, -1):
        run = max(run, a * t + h * hs[max(t - qg + 1, 0)])
        sm[t] = run
    U[m] = 0
    for i in range(m - 1, -1, -1):
        u = np.int64(a * min(qg - 1, m - i))          # stopping before any whole q-gram
        if i + qg - 1 <= m:
            u = max(u, np.int64(math.ceil(sm[i + qg - 1] - a * i - h * hs[i] - 1e-9)))
        # non-increasing in i, as suffix_bounds (an alignment may start past base i)
        U[i] = max(min(np.int64(a * (m - i)), u), U[i + 1])
    return U


@numba.njit(**NJIT)
def suffix_bounds(q, bits, have_bits, a, pen, qg):
    """``U[i]`` (``i = 0..m``): an upper bound on the score the read's bases ``i..m-1``
    can add inside the window (module doc); ``bits`` the window's q-gram set (length
    ``qg``) when ``have_bits``."""
    m = len(q)
    U = np.empty(m + 1, np.int64)
    if not have_bits:
        for i in range(m + 1):
            U[i] = a * (m - i)
        return U
    miss = np.where(missing_qgrams(q, bits, qg), pen, 0.0)   # of the q-gram ending at k
    s = 0.0
    U[m] = 0
    for i in range(m - 1, -1, -1):
        s += a - miss[i]
        # the q-grams ending in bases i..i+q-2 start before i: not charged to the suffix
        back = 0.0
        for k in range(i, min(i + qg - 1, m)):
            back += miss[k]
        U[i] = min(np.int64(a * (m - i)), np.int64(math.ceil(s + back)))
    return U


@numba.njit(**NJIT)
def pruned_window(q, lo, hi, base, lay, U, T, mode, sc, bufs, rows, budget, rec, xdrop, cap):
    """Best (score, i, j) of read ``q`` in columns ``[lo, hi)`` over the cells kept at
    threshold ``T`` (module doc), ``sc`` = (a, b, o, e), and the number of cells computed.
    ``bufs``: six int32 arrays (H and F of two rows, E, H0) of at least ``hi - lo``
    columns, every one NEG_INF (left so). ``rows`` = (rlo, rhi), int32 of ``hi - lo``: set to each column's first and
    last kept row (row 0 where a kept row-1 cell reads the column; ``BIG_ROW``/-1 where
    none): every cell of every alignment scoring at least ``T`` lies in them. Past
    ``budget`` cells computed the pass stops (cells returned: ``budget`` passed; the
    result means nothing).

    A row runs in two passes: :func:`_row_direct` (every source but the deletion, in
    SIMD), then the deletions left to right, ``E(c) = max(E(c - 1) - e, H0(c - 1) - o -
    e)`` inside a node: ``H0`` for ``H`` because where ``H = E`` the term ``H - o - e`` is
    below ``E - e`` (Farrar's lazy-F argument, along the row); merges take their
    predecessors' final ``H`` and ``E``. ``rec``: a record (:func:`.pruned_walk.new_record`)
    the pass writes every computed cell's direction byte into when it is on; returned
    (its arrays may have grown), up to ``cap`` bytes (knob ``prune_record_bytes``: past it
    the pass records no more). ``xdrop > 0``: an X-drop pass (:data:`XDROP`), not
    exact: its best is a real alignment's score, a lower bound on the window's."""
    prev, ep_ptr, ep_idx, reach, ent, walk, wmax = lay
    a, b, o, e = sc
    Ha, Hb, Fa, Fb, Ec, H0 = bufs
    on, D, EK, roff, rclo, rcn, eoff = rec
    dpos = np.int64(0)
    epos = np.int64(0)
    m = len(q)
    W = hi - lo
    rlo, rhi = rows
    for x in range(W):
        rlo[x] = BIG_ROW
        rhi[x] = -1
    loc = mode == LOCAL
    neg = np.int32(NEG_INF)
    oe = o + e
    oe32, e32, a32, b32 = np.int32(oe), np.int32(e), np.int32(a), np.int32(b)
    floor = np.int32(0) if loc else neg
    base_w = base[lo:hi].copy()        # C-contiguous (a slice is typed "A": no SIMD)
    best, bi, bj = np.int64(NEG_INF), np.int64(-1), np.int64(-1)
    cells = np.int64(0)
    if U[0] < T:
        return best, bi, bj, cells, rec
    negw = -wmax
    # row 0: H = 0 everywhere (local and semiglobal), E = F = -inf; kept: all
    for c in range(W):
        Ha[c] = 0
    plo, phi, pdr = np.int64(0), np.int64(W - 1), np.int64(W - 1)
    # per CHUNK-column chunk: the last row it kept a cell in (row 0: all), and the row
    # whose kept cells each buffer (Ha/Fa, Hb/Fb; Ec) may hold (-1: -inf only)
    nG = (W + CHUNK - 1) // CHUNK
    lkp = np.full((2, nG), -1, np.int64)
    lkp[0, :] = 0                                # Ha: row 0's zeros
    flags = (np.zeros(nG, np.int64), lkp, np.full(nG, -1, np.int64))
    r1lo, r1hi = np.int64(0), np.int64(W - 1)    # row i - 1's range (Hp, Fp, Ec hold it)
    r2lo, r2hi = np.int64(0), np.int64(-1)       # row i - 2's (Hc, Fc hold it)
    for i in range(1, m + 1):
        if i & 1:                             # (views of one 2-row array: no SIMD)
            Hp, Hc, Fp, Fc = Ha, Hb, Fa, Fb
        else:
            Hp, Hc, Fp, Fc = Hb, Ha, Fb, Fa
        if loc:
            phv = np.int64(0)
            pev = np.int64(-oe)
        else:
            phv = np.int64(0) if i == 1 else np.int64(-(o + e * (i - 1)))
            pev = np.int64(-(o + e * i)) - oe
        ui = U[i]
        xf = best - xdrop if xdrop > 0 and best > NEG_INF else np.int64(NEG_INF)
        if loc:
            full = max(U[i - 1], ui) >= T and xf <= 0
        else:
            full = max(phv + a, pev) + ui >= T
        if full:
            jlo, lim0 = np.int64(0), np.int64(W - 1)
        elif phi < plo:
            break                             # nothing kept above, no fresh start
        else:
            jlo, lim0 = plo, min(max(phi, pdr), W - 1)
        # H <= a i, so a kept cell needs a walk of (T - a i) / a bases to the end
        need = -((a * i - T) // a)            # ceil((T - a i) / a)
        wend = np.int64(np.searchsorted(negw, -need, side="right"))   # columns that have it
        lim0 = min(lim0, wend - 1)
        if lim0 < jlo:
            if not full:
                break                         # and no later row has a source either
            lim0 = jlo - 1                    # an empty row: fresh starts may come later
        # left of this row's range: -inf (entries read predecessors there)
        for c in range(r2lo, min(r2hi + 1, jlo)):
            Hc[c] = neg
            Fc[c] = neg
        for c in range(r1lo, min(r1hi + 1, jlo)):
            Ec[c] = neg
        qb = q[i - 1]
        q32 = np.int32(qb) if qb < 4 else np.int32(-1)      # N never matches
        ends = loc or i == m
        kept = (np.int64(W), np.int64(-1), np.int64(-1), best, bi, bj)
        M = np.int64(NEG_INF)
        if jlo >= 1:
            H0[jlo - 1] = neg                 # left of the row: no source
        x = np.searchsorted(ent, jlo)
        xc = x
        doff = dpos - jlo                     # row i's byte of column c: D[doff + c]
        eo = epos - x                         # its entry ent[y]'s choices: EK[2 (eo + y)]
        on = on and dpos + wend - jlo <= cap    # else the pass records no more
        if on:
            roff[i], rclo[i] = dpos, jlo
            eoff[i] = eo
            D = grown(D, dpos + max(wend - jlo, 0))
            EK = grown(EK, 2 * (epos + np.searchsorted(ent, wend) - x))
        rk = (on, D, doff, EK, eo, loc)
        par = i & 1
        skipped = np.int64(0)
        for g in range(jlo // CHUNK, lim0 // CHUNK + 1):   # a chunk's columns stay in L1
            cs = max(g * CHUNK, jlo)
            ce = min((g + 1) * CHUNK, lim0 + 1)
            if ce <= cs:
                continue
            # rows with no fresh start: chunks with no kept source are skipped (a window
            # of parallel paths has its kept cells far apart along each row)
            if not full and not live_chunk(g, cs, ce, i, flags[0], rhi, ent, ep_ptr, ep_idx):
                skip_chunk(g, g * CHUNK, min((g + 1) * CHUNK, W), ce, par, flags, Hc, Fc,
                           Ec, H0)
                x = np.searchsorted(ent, ce)
                xc = x
                M = np.int64(NEG_INF)
                skipped += ce - cs
                continue
            if on:
                _row_direct_rec(q32, base_w, Hp, Fp, H0, Fc, max(cs, 1), ce, a32, b32, oe32,
                                e32, floor, D, doff)
            else:
                _row_direct(q32, base_w, Hp, Fp, H0, Fc, max(cs, 1), ce, a32, b32, oe32,
                            e32, floor)
            # entry columns: the virtual column and in-window predecessors, not c - 1
            while x < len(ent) and ent[x] < ce:
                c = ent[x]
                ph = phv
                if on:
                    ph, rd = merge_diag(c, ep_ptr, ep_idx, Hp, ph)
                    EK[2 * (eo + x)] = rd
                else:
                    for k in range(ep_ptr[c], ep_ptr[c + 1]):
                        ph = max(ph, np.int64(Hp[ep_idx[k]]))
                x += 1
                fo = np.int64(Hp[c]) - oe
                fx = np.int64(Fp[c]) - e
                f = max(fo, fx)
                hd = ph + (a if base_w[c] == q32 else -b)
                H0[c] = max(max(hd, f), np.int64(floor))
                Fc[c] = max(f, np.int64(neg))
                if on:
                    D[doff + c] = np.uint8((F_EXT if fx > fo else 0) | (INS_C if f > hd else 0))
            M, xc = _row_chain(lay, Hc, Ec, H0, cs, ce, xc, pev, oe, e, M, rk)
            kept = _row_keep(reach, walk, Hc, Ec, Fc, cs, ce, (T, ui, np.int64(a), xf), ends,
                             i, lo, kept, rlo, rhi)
            mark_chunks(g, g + 1, i, par, kept[1] >= cs, flags)
        nlo, nhi, ndr, best, bi, bj = kept
        c = lim0 + 1
        if lim0 >= jlo:
            el, h0l = np.int64(Ec[lim0]), np.int64(H0[lim0])
        else:
            el, h0l = np.int64(NEG_INF), np.int64(NEG_INF)
        if ndr > lim0 and c < wend and xf <= 0:
            c, nlo, nhi, ndr, best, bi, bj = _row_tail(
                lay, base_w, (Hp, Fp, Hc, Ec, Fc, H0), c, ndr, wend,
                (q32, phv, pev, ui, T, ends, np.int64(i), lo),
                (np.int64(a), np.int64(b), np.int64(oe), np.int64(e), np.int64(floor)),
                (el, h0l, nlo, nhi, ndr, best, bi, bj), rows, rk)
            if nhi > lim0:                    # the tail kept cells (its chunks: as kept)
                mark_chunks((lim0 + 1) // CHUNK, (c - 1) // CHUNK + 1, i, par, True, flags)
        cells += c - jlo - skipped
        if on:
            rcn[i] = c - jlo
            dpos += c - jlo
            epos = eo + np.searchsorted(ent, c)       # past the row's entries
        if cells > budget:
            break
        if i == 1:                            # row 0 of the columns kept row-1 cells read
            for x in range(jlo, c):
                if Hc[x] == neg:
                    continue
                rlo[x] = 0                    # (an insertion from row 0: semiglobal)
                if prev[x]:
                    rlo[x - 1] = 0
                    rhi[x - 1] = max(rhi[x - 1], 0)
                else:
                    for k in range(ep_ptr[x], ep_ptr[x + 1]):
                        p = ep_idx[k]
                        rlo[p] = 0
                        rhi[p] = max(rhi[p], 0)
        # right of it: -inf
        for x in range(max(r2lo, c), r2hi + 1):
            Hc[x] = neg
            Fc[x] = neg
        for x in range(max(r1lo, c), r1hi + 1):
            Ec[x] = neg
        r2lo, r2hi = r1lo, r1hi
        r1lo, r1hi = jlo, c - 1
        plo, phi, pdr = nlo, nhi, ndr
    # leave every buffer -inf for the next window
    for x in range(W):
        Ha[x] = neg
        Hb[x] = neg
        Fa[x] = neg
        Fb[x] = neg
        Ec[x] = neg
        H0[x] = neg
    rec = (on, D, EK, roff, rclo, rcn, eoff)
    if loc and best <= 0:
        return np.int64(NEG_INF), np.int64(-1), np.int64(-1), cells, rec
    return best, bi, bj, cells, rec


@numba.njit(**NJIT)
def _whole_nodes(lo, hi, node_start, pred_ptr, pred_idx):
    """(v0, v1) when columns ``[lo, hi)`` are whole nodes ``v0..v1-1`` with no edge from
    outside (a window graph's window): then its q-gram set can be made; else (-1, -1)."""
    v0 = np.searchsorted(node_start, lo, side="right") - 1
    v1 = np.searchsorted(node_start, hi - 1, side="right")
    if node_start[v0] != lo or node_start[v1] != hi:
        return -1, -1
    for v in range(v0, v1):
        for k in range(pred_ptr[v], pred_ptr[v + 1]):
            if pred_idx[k] < v0:
                return -1, -1
    return v0, v1


@numba.njit(**NJIT)
def window_bounds(q, lo, hi, gr, a, pen):
    """``U`` of read ``q`` in columns ``[lo, hi)`` (module doc) from the window's q-gram
    set: :func:`hit_bounds` where ``pen`` = (q-gram penalty, hit cost) has a hit cost,
    else :func:`suffix_bounds` (:func:`bound_costs`); ``a`` a base where no set is made."""
    base, node_start, pred_ptr, pred_idx = gr
    bits = np.zeros(1 << (2 * QGRAM - 6), np.uint64)
    v0, v1 = _whole_nodes(lo, hi, node_start, pred_ptr, pred_idx)
    have = v0 >= 0 and _qgram_set(v0, v1, node_start, pred_ptr, pred_idx, base, bits)
    pq, h = pen
    if h > 0:
        return hit_bounds(q, bits, have, a, h, QGRAM)
    return suffix_bounds(q, bits, have, a, pq, QGRAM)


@numba.njit(**NJIT)
def schedule(hits):
    """(margin a kbp, the bound's share of a perfect score where the margin is least, the
    share below which the bound is loose) of :func:`hit_bounds` (``hits``) or
    :func:`suffix_bounds`: the thresholds' constants, the GPU's too (s2g/trace/long/prune.py)."""
    if hits:
        return HIT_MARGIN_PER_KB, HIT_RATIO_AT_MIN_MARGIN, HIT_MIN_RATIO
    return MARGIN_PER_KB, RATIO_AT_MIN_MARGIN, MIN_RATIO


@numba.njit(**NJIT)
def align_window(q, lo, hi, gr, mode, sc, pen, floor, stats, rows, budget, wk, at_score,
                 keep, loose_x):
    """Best (score, i, j) of read ``q`` in columns ``[lo, hi)`` (module doc), exact, or
    (NEG_INF, -1, -1) where no alignment there reaches ``floor``. Passes at thresholds
    ``U[0]`` less a margin that doubles while a pass falls short (each such pass's score
    is a lower bound: once the margin passes it, the last pass runs at it), never below
    ``floor``. ``sc`` = (a, b, o, e); ``stats`` += (cells computed, passes after the
    first); ``rows``: the last pass's kept rows per column (:func:`pruned_window`), a band
    holding every optimal alignment of the window. Returns (score, i, j, done, keep): not
    done where the passes together computed more than ``budget`` cells (the caller
    aligns that window otherwise); ``keep`` the thread's record buffers, given and
    returned (:func:`.pruned_walk.new_record`). ``wk`` = (record, ops, window columns,
    out, cap): with ``record`` on, the passes record their direction bytes (at most
    ``cap``) and the walk back from the best cell (:func:`.pruned_walk.walk`) fills ``ops``
    and ``cols``; ``out`` gets (status, start row, ops, columns), status -1 where no walk
    was made, ST_TOO_BIG where the last pass ran at the window's score and outgrew
    ``cap`` (a pass at the score would not record it either).
    ``at_score``: ``floor`` is the window's score (a traceback's pass): one pass, at it, for
    its walk, so not done (and cut short) where the walk cannot be recorded (a wide window
    at 10% errors: more than ``cap`` bytes of direction codes; its first pass could not
    record either, and the pass at the score ran whole for nothing).
    ``loose_x`` (knob ``prune_loose_xdrop``): a window whose bound is loose (``U[0]`` under
    :data:`HIT_MIN_RATIO` of a perfect score, no floor) runs its X-drop pass and then one
    exact pass at that score (a real alignment's: at most the optimum, so the pass holds)
    within ``budget``, instead of being left to striped at once."""
    base, node_start, pred_ptr, pred_idx = gr
    a, b, o, e = sc
    m = len(q)
    W = hi - lo
    lay = _layout(lo, hi, node_start, pred_ptr, pred_idx)
    U = window_bounds(q, lo, hi, gr, a, pen)
    per_kb0, r_least, r_loose = schedule(pen[1] > 0)
    neg = np.int32(NEG_INF)
    bufs = (np.full(W, neg, np.int32), np.full(W, neg, np.int32), np.full(W, neg, np.int32),
            np.full(W, neg, np.int32), np.full(W, neg, np.int32), np.full(W, neg, np.int32))
    low = np.int64(1) if mode == LOCAL else np.int64(NEG_INF)   # the least score kept
    r = U[0] / max(a * m, 1)                  # the bound's share of a perfect score
    loose = floor <= NEG_INF and r < r_loose
    if loose and not (loose_x and XDROP > 0 and mode == LOCAL and not at_score):
        return np.int64(NEG_INF), np.int64(-1), np.int64(-1), False, keep   # loose: striped
    low = max(low, floor)
    known = np.int64(NEG_INF)                 # the best score a pass has found so far
    per_kb = per_kb0 + MARGIN_SLOPE * max(0.0, r_least - r)
    margin = max(np.int64(MARGIN_MIN * a), np.int64(per_kb * a * m / 1000))
    if at_score:
        margin = max(U[0] - floor, np.int64(0))
    first = True
    on, ops, cols, wout, cap = wk
    wout[0] = -1
    if XDROP > 0 and mode == LOCAL and not at_score:   # a lower bound first (XDROP)
        s, _, _, c, _ = pruned_window(q, lo, hi, base, lay, U, max(U[0] - 2 * margin, low),
                                      mode, sc, bufs, rows, budget,
                                      new_record(m, False, keep), np.int64(XDROP * a), cap)
        stats[0] += c
        budget -= c
        known = max(known, s)
        if loose and s <= low:
            return np.int64(NEG_INF), np.int64(-1), np.int64(-1), False, keep
        if s >= U[0] - 2 * margin or loose:   # close to U[0]: the first pass runs at it
            margin = max(U[0] - s, np.int64(0))
    rec = new_record(m, on and recordable(lay), keep)
    want = rec[0]
    if at_score:                              # a pass only for its walk: stop where none fits
        if not rec[0]:
            return np.int64(NEG_INF), np.int64(-1), np.int64(-1), False, keep
        budget = min(budget, cap)             # a cell records a byte at least
    while True:
        T = max(U[0] - margin, low, known)
        s, i, j, c, rec = pruned_window(q, lo, hi, base, lay, U, T, mode, sc, bufs, rows,
                                        budget, rec, np.int64(0), cap)
        stats[0] += c
        budget -= c
        if rec[0]:
            keep = (rec[1], rec[2])
        if budget < 0:
            return np.int64(NEG_INF), np.int64(-1), np.int64(-1), False, keep
        if not first:
            stats[1] += 1
        first = False
        if s >= T:
            if rec[0] and s > NEG_INF:
                wout[0], wout[1], wout[2], wout[3] = walk_back(q, lo, base, lay, rec, i,
                                                               j - lo, mode, ops, cols)
            elif want and s > NEG_INF and s == T:   # at its score: no pass records it
                wout[0] = ST_TOO_BIG
            return s, i, j, True, keep
        if T <= low:                          # nothing reaches the floor
            return np.int64(NEG_INF), np.int64(-1), np.int64(-1), True, keep
        known = max(known, s)
        margin *= 2


@numba.njit(parallel=True, **NJIT)
def _align_windows(codes, offs, task_read, task_lo, task_hi, task_floor, order, gr, mode, sc,
                   pen, n_work, band, lim, walks):
    """Worker ``w`` of ``n_work`` takes tasks ``order[w::n_work]`` (costliest first, as
    :mod:`s2g.variants.striped`). ``band`` = (offsets, flat int32): task ``t``'s kept rows
    per column at ``flat[off[t]:off[t] + 2 W]`` (first rows, then last rows) where
    ``off[t] >= 0``. ``lim``: (a window's cell budget, :data:`BUDGET`, 0: none; ``at_score``;
    ``loose_x``, :func:`align_window`; ``cap``, the most bytes a record holds).
    ``walks`` = (on, ops offsets, column offsets, ops, columns, results): with ``on``,
    each task's walk back from its best cell (:func:`align_window`'s ``wk``) in its
    slices of the flat arrays, (status, start row, ops, columns) in ``results[t]``."""
    b_off, b_rows = band
    share, at_score, loose_x, cap = lim
    w_on, w_oo, w_co, w_ops, w_cols, w_res = walks
    n = len(task_read)
    score = np.full(n, NEG_INF, np.int64)
    end_i = np.full(n, -1, np.int64)
    end_j = np.full(n, -1, np.int64)
    done = np.ones(n, np.bool_)
    stats = np.zeros((n_work, 2), np.int64)
    for w in numba.prange(n_work):
        keep = (np.empty(D_START, np.uint8), np.empty(EK_START, np.int16))   # (new_record)
        for x in range(w, len(order), n_work):
            t = order[x]
            r = task_read[t]
            q = codes[offs[r]:offs[r + 1]]
            lo, hi = task_lo[t], task_hi[t]
            if len(q) == 0 or hi <= lo:
                continue
            W = hi - lo
            if b_off[t] >= 0:
                x0 = b_off[t]
                rows = (b_rows[x0:x0 + W], b_rows[x0 + W:x0 + 2 * W])
            else:
                rows = (np.empty(W, np.int32), np.empty(W, np.int32))
            budget = np.int64(share * W * len(q)) if share > 0 else np.int64(1) << 62
            if w_on and (at_score or task_floor[t] <= NEG_INF):   # later windows: rarely
                wk = (True, w_ops[w_oo[t]:w_oo[t + 1]], w_cols[w_co[t]:w_co[t + 1]], w_res[t],
                      cap)
            else:
                wk = (False, w_ops[:0], w_cols[:0], w_res[len(w_res) - 1], cap)   # scratch
            s, i, j, d, keep = align_window(q, lo, hi, gr, mode, sc, pen, task_floor[t],
                                            stats[w], rows, budget, wk, at_score, keep,
                                            loose_x)
            score[t], end_i[t], end_j[t], done[t] = s, i, j, d
    return score, end_i, end_j, done, stats.sum(axis=0)


#: cells computed, passes after the first, windows given up (BUDGET): last call
LAST_STATS = np.zeros(3, np.int64)


def align_windows(graph, codes_flat, offsets, task_read, task_lo, task_hi, scoring, mode,
                  floor=None, bands=None, known=False):
    """(score, end_i, end_j) of every task, as :func:`s2g.window.align_windows_ref`: one
    thread a window (the costliest first), the cells kept by the bound only; the
    reference where int32 could overflow. ``floor`` (per task, optional): a window
    whose best alignment scores below it gets (NEG_INF, -1, -1) instead. ``bands`` (a
    dict, optional): filled with ``task -> (rlo, rhi)``, per window column the first and
    last row of its kept cells, which hold every optimal alignment of the window (a
    traceback's band, :mod:`s2g.trace.bands`), for every task aligned here with a
    score; where knob ``tb_prune_walk`` is on, a task whose walk back from its best cell
    the pass recorded gets that walk instead (a :class:`.pruned_walk.Walked`).
    ``known``: ``floor`` is each window's score (from a scoring pass): one pass at it, the
    fewest cells, to record the walks."""
    from ..config import settings
    check_mode(mode)
    offs = np.asarray(offsets, np.int64)
    task_read = np.asarray(task_read, np.int64)
    lens = (offs[1:] - offs[:-1])[task_read] if len(task_read) else np.zeros(0, np.int64)
    if len(task_read) and not fits_int32(scoring, mode, int(lens.max()), graph.n_bases):
        out = align_windows_ref(graph, codes_flat, offs, task_read, task_lo, task_hi,
                                scoring, mode)
        if floor is not None:
            below = out[0] < np.asarray(floor, np.int64)
            out[0][below], out[1][below], out[2][below] = NEG_INF, -1, -1
        return out
    lo = np.clip(np.asarray(task_lo, np.int64), 0, graph.n_bases)
    hi = np.clip(np.asarray(task_hi, np.int64), 0, graph.n_bases)
    order = np.argsort(-(hi - lo) * lens, kind="stable").astype(np.int64)
    a, b, o, e = scoring.as_tuple()
    gr = (graph.base, graph.node_start, graph.pred_ptr, graph.pred_idx)
    n_work = max(1, min(numba.get_num_threads(), len(order)))
    fl = np.full(len(task_read), NEG_INF, np.int64) if floor is None else \
        np.asarray(floor, np.int64)
    b_off = np.full(len(task_read), -1, np.int64)
    if bands is not None and len(task_read):
        b_off[:] = np.concatenate(([0], np.cumsum(2 * (hi - lo))[:-1]))
    b_rows = np.empty(int(2 * (hi - lo).sum()) if bands is not None else 0, np.int32)
    w_on = bands is not None and settings().tb_prune_walk and len(task_read) > 0
    walks = walk_buffers(lens, hi - lo, w_on)
    score, end_i, end_j, done, st = _align_windows(
        np.asarray(codes_flat, np.uint8), offs, task_read, lo, hi, fl, order, gr, int(mode),
        (a, b, o, e), bound_costs(scoring), n_work, (b_off, b_rows),
        (1.0 if known else float(BUDGET), bool(known), bool(settings().prune_loose_xdrop),
         np.int64(settings().prune_record_bytes)),
        walks)
    LAST_STATS[:2] = st
    LAST_STATS[2] = int(np.count_nonzero(~done))
    if not done.all() and not known:          # loose bounds (high error rates): striped
        from . import striped
        x = np.nonzero(~done)[0]
        got = striped.align_windows(graph, codes_flat, offs, task_read[x], lo[x], hi[x],
                                    scoring, mode)
        for r, y in zip((score, end_i, end_j), got):
            r[x] = y
        below = score[x] < fl[x]
        score[x[below]], end_i[x[below]], end_j[x[below]] = NEG_INF, -1, -1
    if bands is not None:
        for t in np.nonzero((score > NEG_INF) & done)[0].tolist():
            got = walked(walks, t, lo[t])
            if got is not None:
                bands[t] = got
                continue
            W = int(hi[t] - lo[t])
            x0 = int(b_off[t])
            band = (b_rows[x0:x0 + W], b_rows[x0 + W:x0 + 2 * W])
            bands[t] = AtScoreBand(band) if too_big(walks, t) else band
    return score, end_i, end_j


def long_tasks(offs, tr):
    """Tasks for :mod:`s2g.variants.pruned` (a bool mask), or None: those of reads of at
    least ``prune_min_len`` bases."""
    from ..config import settings
    m = settings().prune_min_len
    if m <= 0 or not len(tr):
        return None
    sel = (offs[tr + 1] - offs[tr]) >= m
    return sel if sel.any() else None


def align_selected(graph, codes, offs, tr, lo, hi, scoring, mode, sel, floor, bands):
    """:func:`align_windows` of the tasks ``sel`` (a mask) into full-length result arrays
    (the other tasks' entries left for the caller), ``floor`` and ``bands`` in the
    caller's task numbering (either None)."""
    res = tuple(np.empty(len(tr), np.int64) for _ in range(3))
    fl = None if floor is None else np.asarray(floor, np.int64)[sel]
    sub = None if bands is None else {}
    got = align_windows(graph, codes, offs, tr[sel], lo[sel], hi[sel], scoring, mode,
                        floor=fl, bands=sub)
    at = np.nonzero(sel)[0]
    for k, v in (sub or {}).items():
        bands[int(at[k])] = v
    for r, y in zip(res, got):
        r[sel] = y
    return res


def xdrop_pass(graph, q, lo, hi, scoring, xdrop=XDROP):
    """(score, cells) of the X-drop pass alone (local mode, down to score 1) of read codes
    ``q`` over graph columns ``[lo, hi)``: the lower bound :func:`align_window` starts its
    exact passes at. For measurements and tests (``bench.prune_replay xdrop``)."""
    a, b, o, e = scoring.as_tuple()
    gr = (graph.base, graph.node_start, graph.pred_ptr, graph.pred_idx)
    lay = _layout(lo, hi, graph.node_start, graph.pred_ptr, graph.pred_idx)
    U = window_bounds(q, lo, hi, gr, a, bound_costs(scoring))
    bufs = tuple(np.full(hi - lo, np.int32(NEG_INF), np.int32) for _ in range(6))
    rows = (np.empty(hi - lo, np.int32), np.empty(hi - lo, np.int32))
    keep = (np.zeros(1, np.uint8), np.zeros(2, np.int16))
    s, _, _, n, _ = pruned_window(q, lo, hi, graph.base, lay, U, np.int64(1), LOCAL,
                                  (a, b, o, e), bufs, rows, np.int64(1 << 62),
                                  new_record(len(q), False, keep), np.int64(xdrop * a),
                                  np.int64(0))
    return int(s), int(n)
