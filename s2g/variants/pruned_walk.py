"""Walks recorded by the pruned window pass: the traceback of a long window without a
second DP over it.

:func:`s2g.variants.pruned.pruned_window` computes a window row by row over the cells its
bound keeps. With a record (:func:`new_record`) it also writes one direction byte per
computed cell, row after row (``D[roff[i] + c - rlo[i]]`` for row ``i``'s columns
``rlo[i] .. rlo[i] + rn[i] - 1``), and at entry columns (a node's first column with
in-window predecessors) which predecessor gave the diagonal and which the deletion
(``EK``: two int16 ranks an entry cell, -1 for the virtual column). From the best cell,
:func:`walk` then follows the bytes back, as :func:`s2g.trace.scalar.traceback_read`
walks its own: the same bits (:func:`s2g.trace.common.tb_cell`'s source, ``E_EXT``,
``F_EXT``) and merge choices (a real predecessor wins a tie with the virtual column, the
first in the graph's predecessor order among real ones), so the walk is the one
traceback_read makes.

**Why the cells kept are enough.** The walk follows an optimal alignment; every cell on
one is kept with its full-DP value (:mod:`s2g.variants.pruned`'s induction), and so is
every source that ties with the chosen one (it would lie on an optimal alignment too), so
each comparison the walk reads is the full DP's. A source whose cell was dropped, or
computed from a subset of its own sources, is strictly lower than the optimum it is
compared with, as in the full DP. The window's columns outside the traceback's own window
(traceback_read's backward search from the end cell) are never on an optimal alignment,
so they change no choice.

**Bits.** ``_row_direct_rec`` stores per cell ``F_EXT`` and ``INS_C`` (F above the
diagonal's value); :func:`_run_rec` (and the entry columns' merges) turn them, with the
cell's ``H0`` (without deletions), ``E`` and ``H``, into the direction byte
(:func:`dir_byte`): a deletion where ``E > H0`` (``E >= H0`` when F gave ``H0``: the
diagonal wins ties, then the deletion), an insertion where F gave ``H0`` and ``E`` does
not reach it, a start where a local cell is ``<= 0``; ``E_EXT`` where ``E > H0(c - 1) - o
- e`` (``H(c - 1)`` for ``H0(c - 1)`` gives the same answer: equal where ``H0`` wins, and
both true where ``E`` does), or at an entry column, the chosen predecessor's.
"""
from __future__ import annotations

from typing import NamedTuple

import numba
import numpy as np

from .._numba import NJIT, NJIT_NORC
from ..dp import E_EXT, F_EXT, H_DEL, H_DIAG, H_INS, H_START, LOCAL
from ..scoring import NEG_INF
from ..trace.common import OP_D, OP_EQ, OP_I, OP_X, ST_MISMATCH, ST_OK, ST_TOO_BIG

#: a cell's F is above the value of its diagonal (an insertion wins ``H0``)
INS_C = 16
#: first sizes of a record's arrays (they double as rows need)
D_START = 1 << 20
EK_START = 1 << 12


@numba.njit(**NJIT)
def new_record(m, on, keep):
    """A record for a pass over a read of ``m`` bases (``on`` False: an empty one, the
    pass records nothing): (on, D, EK, roff, rlo, rn, eoff). ``keep`` = (D, EK): a
    thread's buffers from its last window, grown as needed (fresh ones for every window
    cost ~10% of a recorded pass: page faults and copies as they doubled)."""
    if not on:
        z = np.zeros(1, np.int64)
        return (False, np.zeros(1, np.uint8), np.zeros(2, np.int16), z, z, z, z)
    return (True, keep[0], keep[1],
            np.zeros(m + 2, np.int64), np.zeros(m + 1, np.int64), np.zeros(m + 1, np.int64),
            np.zeros(m + 1, np.int64))


@numba.njit(inline="always", **NJIT)
def merge_diag(c, ep_ptr, ep_idx, Hp, ph):
    """The diagonal into entry column ``c``: the best of ``ph`` (the virtual column's) and
    its in-window predecessors' H one row up (``Hp``), and which one gave it (rank in the
    column's list; -1: the virtual column, which loses ties; the first real one wins)."""
    rd = -1
    for k in range(ep_ptr[c], ep_ptr[c + 1]):
        hp = np.int64(Hp[ep_idx[k]])
        if hp > ph or (hp == ph and rd == -1):
            ph, rd = hp, k - ep_ptr[c]
    return ph, rd


@numba.njit(inline="always", **NJIT)
def merge_del(c, ep_ptr, ep_idx, Hc, Ec, ev, oe, e):
    """The deletion into entry column ``c``: the best of ``ev`` (the virtual column's) and
    its predecessors' ``max(H - o - e, E - e)`` on this row, which one gave it (as
    :func:`merge_diag`), and whether that one extended its E."""
    rank, px = -1, False
    for k in range(ep_ptr[c], ep_ptr[c + 1]):
        p = ep_idx[k]
        ho = np.int64(Hc[p]) - oe
        ex = np.int64(Ec[p]) - e
        ce = max(ho, ex)
        if ce > ev or (ce == ev and rank == -1 and ce > NEG_INF):
            ev, rank, px = ce, k - ep_ptr[c], ex > ho
    return ev, rank, px


@numba.njit(**NJIT)
def recordable(lay):
    """Whether a window (:func:`s2g.variants.pruned._layout`'s ``lay``) can be recorded: no
    column with more in-window predecessors than an int16 rank holds."""
    ep_ptr = lay[1]
    for c in range(len(ep_ptr) - 1):
        if ep_ptr[c + 1] - ep_ptr[c] > 32767:
            return False
    return True


@numba.njit(**NJIT)
def grown(x, need):
    """``x`` with room for ``need`` entries (a copy twice as large, or ``x``)."""
    if need <= len(x):
        return x
    y = np.empty(max(need, 2 * len(x)), x.dtype)
    y[:len(x)] = x
    return y


@numba.njit(**NJIT_NORC)
def _row_direct_rec(q_b, base_w, Hp, Fp, H0, Fc, c0, c1, a, b, oe, e, floor, D, doff):
    """:func:`s2g.variants.pruned._row_direct` writing each cell's ``F_EXT`` and
    ``INS_C`` into ``D[doff + c]``."""
    for c in range(c0, c1):
        u = np.uintp(c)
        fo = Hp[u] - oe
        fx = Fp[u] - e
        f = max(fo, fx)
        hd = Hp[np.uintp(c - 1)] + (a if base_w[u] == q_b else -b)
        H0[u] = max(max(hd, f), floor)
        Fc[u] = f
        D[np.uintp(doff + c)] = np.uint8((F_EXT if fx > fo else 0) | (INS_C if f > hd else 0))


@numba.njit(inline="always", **NJIT)
def dir_byte(fl, h0, ev, h, loc, ext):
    """A cell's direction byte from its first pass's flags ``fl``, ``H0``, ``E``, ``H``,
    the mode (``loc``: local) and whether its E extended (module doc)."""
    ins = (fl & INS_C) != 0
    dl = (ev >= h0) if ins else (ev > h0)
    src = H_DEL if dl else (H_INS if ins else H_DIAG)
    if loc and h <= 0:
        src = H_START
    return np.uint8((fl & F_EXT) | src | (E_EXT if ext else 0))


@numba.njit(**NJIT_NORC)
def emax(Ec, H0, c0, c1, oe, e, M):
    """``Ec[c]`` = the running maximum of ``H0(k - 1) - o - e + e k`` over ``k = c0..c``
    and ``M`` (what :func:`s2g.variants.pruned_rows._run` reads E from), for ``c =
    c0..c1-1``; returns its last value (``M`` where the range is empty). In int32 (the
    pass's bounds: no sum here leaves it), as four chains over the range's quarters
    interleaved, each quarter then raised to the maxima before it: one chain's max
    waits on the one before it (~1.2-2.2 ns a cell alone, ~0.6 this way, one core)."""
    oe32 = np.int32(oe)
    e32 = np.int32(e)
    for c in range(c0, c1):
        Ec[np.uintp(c)] = H0[np.uintp(c - 1)] - oe32 + e32 * np.int32(c)
    q = (c1 - c0) >> 2
    s1 = c0 + q
    s2 = s1 + q
    s3 = s2 + q
    m0 = np.int32(M)
    m1 = np.int32(-(1 << 30))
    m2 = m1
    m3 = m1
    for k in range(q):
        u0, u1, u2, u3 = np.uintp(c0 + k), np.uintp(s1 + k), np.uintp(s2 + k), np.uintp(s3 + k)
        m0 = max(m0, Ec[u0])
        Ec[u0] = m0
        m1 = max(m1, Ec[u1])
        Ec[u1] = m1
        m2 = max(m2, Ec[u2])
        Ec[u2] = m2
        m3 = max(m3, Ec[u3])
        Ec[u3] = m3
    for c in range(s3 + q, c1):              # the last quarter's tail
        m3 = max(m3, Ec[np.uintp(c)])
        Ec[np.uintp(c)] = m3
    k1 = m0
    k2 = max(k1, m1)
    k3 = max(k2, m2)
    for c in range(s1, s2):
        Ec[np.uintp(c)] = max(Ec[np.uintp(c)], k1)
    for c in range(s2, s3):
        Ec[np.uintp(c)] = max(Ec[np.uintp(c)], k2)
    for c in range(s3, c1):
        Ec[np.uintp(c)] = max(Ec[np.uintp(c)], k3)
    return np.int64(max(k3, m3)) if c1 > c0 else M


@numba.njit(**NJIT_NORC)
def _run_rec(Hc, Ec, H0, c0, c1, oe, e, M, D, doff, loc):
    """:func:`s2g.variants.pruned_rows._run` writing each cell's direction byte (its E
    extended where ``E > H0(c - 1) - o - e``)."""
    M = emax(Ec, H0, c0, c1, oe, e, M)
    for c in range(c0, c1):
        u = np.uintp(c)
        h0p = np.int64(H0[np.uintp(c - 1)]) - oe
        ev = np.int64(Ec[u]) - e * c
        h0 = np.int64(H0[u])
        h = max(h0, ev)
        Hc[u] = h
        Ec[u] = ev
        k = np.uintp(doff + c)
        D[k] = dir_byte(np.int64(D[k]), h0, ev, h, loc, ev > h0p)
    return M


@numba.njit(**NJIT)
def walk(q, lo, base, lay, rec, end_i, end_c, mode, ops, cols):
    """The walk back from window cell ``(end_i, end_c)`` through a pass's record
    ``rec`` (:func:`new_record`), as :func:`s2g.trace.scalar.traceback_read` walks:
    ``ops`` and window columns ``cols`` (reversed) filled. Returns (status, start row,
    ops, columns): ST_MISMATCH where the walk would leave the recorded cells (it cannot
    on an optimal alignment; the caller traces that window otherwise)."""
    prev, ep_ptr, ep_idx, _, ent, _, _ = lay
    _, D, EK, roff, rlo, rn, eoff = rec
    i = end_i
    c = end_c
    state = 0
    no = 0
    nc = 0
    while True:
        if state == 0 and i == 0:
            break
        x = c - rlo[i]
        if x < 0 or x >= rn[i] or no >= len(ops) or nc >= len(cols):
            return ST_MISMATCH, 0, no, nc
        d = D[roff[i] + x]
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
            qb = q[i - 1]
            ops[no] = OP_EQ if (qb == base[lo + c] and qb < 4) else OP_X
            no += 1
            cols[nc] = c
            nc += 1
            if prev[c]:
                i -= 1
                c -= 1
                continue
            r = EK[2 * (eoff[i] + np.searchsorted(ent, c))]
            i -= 1
        elif state == 1:
            ops[no] = OP_D
            no += 1
            cols[nc] = c
            nc += 1
            state = 1 if (d & E_EXT) else 0
            if prev[c]:
                c -= 1
                continue
            r = EK[2 * (eoff[i] + np.searchsorted(ent, c)) + 1]
        else:
            ops[no] = OP_I
            no += 1
            state = 2 if (d & F_EXT) else 0
            i -= 1
            continue
        if r < 0:
            # into the virtual column: local starts here; otherwise the rest of the read
            # is inserted before the graph walk
            if mode != LOCAL:
                for _ in range(i):
                    if no >= len(ops):
                        return ST_MISMATCH, 0, no, nc
                    ops[no] = OP_I
                    no += 1
                i = 0
            break
        c = ep_idx[ep_ptr[c] + r]
    return ST_OK, i, no, nc


class Walked(NamedTuple):
    """A window's walk back from its best cell, recorded by its pruned pass: the start row,
    ops and window-graph columns, reversed (:func:`s2g.trace.scalar.traceback_read`'s)."""
    start: int
    ops: np.ndarray
    cols: np.ndarray


class AtScoreBand(tuple):
    """A window's kept rows per column (first rows, last rows) from a pass at the window's
    own score whose direction bytes outgrew knob ``prune_record_bytes``: a pass at the score would
    not record its walk either, so it is traced in this band."""


def walk_buffers(lens, widths, on):
    """The ``walks`` argument of :func:`s2g.variants.pruned._align_windows` for tasks of
    reads ``lens`` long in windows ``widths`` wide (``on`` False: empty ones). A walk
    consumes each window column at most once (they fall in topological order), so it
    has at most ``W`` columns and ``m + W`` ops."""
    n = len(lens) if on else 0
    w_oo = np.zeros(n + 1, np.int64)
    w_co = np.zeros(n + 1, np.int64)
    if n:
        w_oo[1:] = np.cumsum(np.asarray(lens, np.int64) + widths + 2)
        w_co[1:] = np.cumsum(np.asarray(widths, np.int64) + 1)
    res = np.full((n + 1, 4), -1, np.int64)     # (the last row: scratch for tasks not walked)
    return (bool(on), w_oo, w_co, np.empty(int(w_oo[-1]), np.uint8),
            np.empty(int(w_co[-1]), np.int32), res)


def too_big(walks, t):
    """Whether task ``t``'s pass ran at its score and could not record its walk
    (knob ``prune_record_bytes``)."""
    return bool(walks[0]) and walks[5][t, 0] == ST_TOO_BIG


def walked(walks, t, lo):
    """Task ``t``'s :class:`Walked` from :func:`walk_buffers` after the pass (columns
    moved by the window's first column ``lo``), or None where it has none."""
    on, w_oo, w_co, ops, cols, res = walks
    if not on or res[t, 0] != ST_OK:
        return None
    st, start, no, nc = (int(v) for v in res[t])
    return Walked(start, ops[w_oo[t]:w_oo[t] + no].copy(),
                  cols[w_co[t]:w_co[t] + nc].astype(np.int64) + int(lo))


def add_walks(flat, rows, got, end_i, end_j, node_start):
    """Reads ``rows`` traced by their :class:`Walked` walks ``got`` (same order; end cells
    ``end_i``/``end_j`` per read of the batch, window-graph columns) into ``flat`` (a
    :class:`~s2g.trace.batch.FlatTracebacks`)."""
    from ..trace.gpu_program import summarize_sel
    from ..trace.gpu_walk import cum
    if not len(rows):
        return
    ln_o = np.array([len(w.ops) for w in got], np.int64)
    ln_c = np.array([len(w.cols) for w in got], np.int64)
    oo, co = cum(ln_o), cum(ln_c)
    nn = np.stack([ln_o, ln_c], axis=1).reshape(-1)
    ops = np.concatenate([w.ops for w in got]).astype(np.uint8)
    cols = np.concatenate([w.cols for w in got]).astype(np.int64)
    rows = np.asarray(rows, np.int64)
    oo2, co2 = cum(ln_o), cum(ln_c + 1)         # (a walk of insertions only: one node)
    summary = summarize_sel(ops, cols, nn, oo, co, np.arange(len(got), dtype=np.int64),
                            np.asarray(end_j, np.int64)[rows], node_start, oo2, co2)
    flat.add(rows, np.asarray(end_i, np.int64), oo2, co2,
             np.array([w.start for w in got], np.int64), summary)
