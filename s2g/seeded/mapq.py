"""MAPQ of a read's best window, its secondary alignments, and the caps on MAPQ.

MAPQ (GAF column 12) compares the best score ``s1`` with the other windows' scores
``s2``: a score difference of one mismatch (``a + b``) is the evidence a sequencing
error gives, worth ``MAPQ_PER_MISMATCH`` phred units, so ``MAPQ = min(60, round(-10
log10(sum_i 10^(-c d_i) / (1 + sum_i ...))))`` with ``d_i = (s1 - s2_i) / (a + b)``,
over the windows with ``d_i < MAPQ_FAR`` (a window further below adds at most
``10^(-2 MAPQ_FAR)``, nothing an integer MAPQ shows, and is left out: so a window proven to
score that far below need not be aligned, :meth:`SeededAligner._windows`).
Reads whose skipped (over-frequent) seeds outnumber the anchors of their best chain
(their other copies were not examined) get at most ``MAPQ_REPEAT_CAP``. Measured
calibration: README.md ("Seeded alignment").
"""
from __future__ import annotations

import math

import numba
import numpy as np

from .._numba import NJIT
from ..scoring import NEG_INF

MAPQ_PER_MISMATCH = 20.0
MAPQ_MAX = 60
MAPQ_REPEAT_CAP = 3
#: windows at least this many mismatches below the best add nothing to the MAPQ sum (each
#: would add at most 10^-60 to a sum that decides MAPQ only when it is above 10^-6)
MAPQ_FAR = 30
#: chains left out by ``max_cand`` count against MAPQ when they score at least this
#: fraction of the best chain (:func:`pick`)
CUT_RATIO = 0.5
#: ... and MAPQ is at most this (a read whose candidates were cut is never MAPQ 60)
MAPQ_CUT_CAP = 30


@numba.njit(**NJIT)
def secondaries(ncand, t_score, first, best_t, ratio, most):
    """(read, task) of each read's secondary alignments: its other windows scoring at
    least ``ratio`` x the best, best first, at most ``most`` per read."""
    rr = []
    tt = []
    for r in range(len(ncand)):
        bt = best_t[r]
        if bt < 0:
            continue
        cand = []
        for t in range(first[r], first[r] + ncand[r]):
            if t != bt and t_score[t] > NEG_INF and t_score[t] >= ratio * t_score[bt]:
                cand.append((-t_score[t], t))
        cand.sort()
        for x in range(min(most, len(cand))):
            rr.append(r)
            tt.append(cand[x][1])
    out_r = np.empty(len(rr), np.int64)
    out_t = np.empty(len(tt), np.int64)
    for x in range(len(rr)):
        out_r[x] = rr[x]
        out_t[x] = tt[x]
    return out_r, out_t


@numba.njit(**NJIT)
def pick(ncand, t_score, t_ei, t_ej, t_lo, first, match_mis, per_mm, skipped, anchors_best,
         repeat_cap, cut, weak, t_chain, cut_cap):
    """Best window per read (ties: smaller end column), its lower bound, and MAPQ from the
    other windows' scores (those less than ``MAPQ_FAR`` mismatches below it). A chain left
    out by ``max_cand`` was never aligned, so nothing bounds its score: where it chained at
    least as well as the best window's chain (``cut[r] >= t_chain[best]``) it counts as a
    competitor scoring as well as the best (MAPQ <= 3); where it chained less well, MAPQ
    is at most ``cut_cap``. At most
    ``repeat_cap`` where skipped repeat seeds outnumber the best chain's anchors or the
    read had only weak chains (``weak``). Also returns each read's sum of competitor terms
    ``tot`` and its cap, for :func:`add_competitor`."""
    n = len(ncand)
    score = np.full(n, NEG_INF, np.int64)
    ei = np.full(n, -1, np.int64)
    ej = np.full(n, -1, np.int64)
    lo = np.zeros(n, np.int64)
    mapq = np.zeros(n, np.int64)
    best_t = np.full(n, -1, np.int64)
    tots = np.zeros(n, np.float64)
    caps = np.full(n, float(MAPQ_MAX), np.float64)
    for r in range(n):
        bt = -1
        for t in range(first[r], first[r] + ncand[r]):
            if t_score[t] <= NEG_INF:
                continue
            if bt < 0 or t_score[t] > t_score[bt] or (t_score[t] == t_score[bt]
                                                       and t_ej[t] < t_ej[bt]):
                bt = t
        if bt < 0:
            continue
        best_t[r] = bt
        score[r], ei[r], ej[r], lo[r] = t_score[bt], t_ei[bt], t_ej[bt], t_lo[bt]
        s1 = t_score[bt]
        tot = 0.0
        for t in range(first[r], first[r] + ncand[r]):
            if t == bt or t_score[t] <= NEG_INF or s1 - t_score[t] >= MAPQ_FAR * match_mis:
                continue
            d = (s1 - t_score[t]) / match_mis
            tot += 10.0 ** (-per_mm * d / 10.0)
        if cut[r] > 0 and cut[r] >= t_chain[bt]:
            tot += 1.0
        cap = float(MAPQ_MAX)
        if cut[r] > 0:
            cap = min(cap, float(cut_cap))
        if (skipped[r] > 0 and skipped[r] >= anchors_best[r]) or weak[r]:
            cap = min(cap, float(repeat_cap))
        tots[r], caps[r] = tot, cap
        mapq[r] = _mapq(tot, cap)
    return score, ei, ej, lo, mapq, best_t, tots, caps


@numba.njit(**NJIT)
def _mapq(tot, cap):
    """MAPQ of competitor terms summing to ``tot`` (module doc), at most ``cap``."""
    q = -10.0 * math.log10(tot / (1.0 + tot)) if tot > 0 else 1e9
    return int(min(cap, q) + 0.5)


@numba.njit(**NJIT)
def add_competitor(reads, s2, s1, tots, caps, mapq, match_mis, per_mm):
    """MAPQ of ``reads`` again with one more competitor each, scoring ``s2[x]`` against
    the best ``s1[reads[x]]`` (a copy inside the best window: :mod:`s2g.seeded.copies`;
    NEG_INF or ``MAPQ_FAR`` mismatches below: none), ``tots``/``caps`` as :func:`pick`
    left them (updated in place, as ``mapq``)."""
    for x in range(len(reads)):
        r = reads[x]
        if s2[x] <= NEG_INF or s1[r] - s2[x] >= MAPQ_FAR * match_mis:
            continue
        d = (s1[r] - s2[x]) / match_mis
        tots[r] += 10.0 ** (-per_mm * d / 10.0)
        mapq[r] = _mapq(tots[r], caps[r])
